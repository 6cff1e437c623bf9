"""Run a compiled kernel over its blocks on the simulated cores.

GM is the caller's buffers (numpy arrays or torch CPU tensors, zero-copy). Each simulated core
gets its own local memories and ctx array; blocks run natively on up to ``os.cpu_count()``
host threads (ctypes releases the GIL). The first failing block (lowest index) raises.
"""
from __future__ import annotations

import ctypes
import itertools
import os
import _signal as signal  # (the C module: signal.py builds enums, 0.4 ms of a first launch)
import struct
import sys
import threading
import time
from dataclasses import field

import numpy as np

from ..dsl.kernel_types import needs_subcores
from ..dsl.types import Memory
from collections import namedtuple
from typing import Callable, Optional

from ..compiler.ops.debug import PRINT_BUFFER_BYTES
from .. import envvars
from ..fieldwise import Fieldwise, fieldwise_dataclass
from ..forksafe import ForkSafeLock
from . import abi, gm_access, interrupts, sanitizer, timing_params
# the simulated cores live in cores.py; their names stay reachable here, where the launch
# path, tools and tests have always found them
from .cores import (  # noqa: F401
    _CORES, FRESH_MEMORY_BYTE, GUARD_BYTE, GUARD_BYTES, _Core, _core_for_thread, _thread_cores,
    core_key, local_guard_damage, ready_core)

_pool = None
_pool_lock = ForkSafeLock()
WORKERS = max(1, min(os.cpu_count() or 1, 8))


class Task:
    """One call handed to a pool thread; ``result(timeout)`` waits for it (``TimeoutError``
    when it has not finished by then) and re-raises what it raised."""

    __slots__ = ("fn", "args", "_done", "_error")

    def __init__(self, fn: Callable, args: tuple):
        self.fn, self.args, self._error = fn, args, None
        self._done = threading.Lock()
        self._done.acquire()

    def run(self) -> None:
        try:
            self.fn(*self.args)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the waiting thread
            self._error = exc
        finally:
            self._done.release()

    def result(self, timeout: Optional[float] = None) -> None:
        if not self._done.acquire(timeout=-1 if timeout is None else timeout):
            raise TimeoutError
        self._done.release()
        if self._error is not None:
            raise self._error


class _Pool:
    """The host threads that run blocks besides the launching thread: up to WORKERS daemon
    threads taking Tasks from one queue, started as launches first need them. (A minimal
    ``ThreadPoolExecutor``: importing ``concurrent.futures`` costs a cached first launch 5 ms.)"""

    def __init__(self, size: int):
        from _queue import SimpleQueue   # (a dlopen: only launches that use this pool pay it)
        self.size, self.threads, self.idle = size, 0, 0
        self.tasks = SimpleQueue()
        self.lock = threading.Lock()

    def submit(self, fn: Callable, *args) -> Task:
        task = Task(fn, args)
        with self.lock:
            if self.idle == 0 and self.threads < self.size:
                self.threads += 1
                threading.Thread(target=self._work, name=f"asc-core-{self.threads}",
                                 daemon=True).start()
            else:
                self.idle -= 1
        self.tasks.put(task)
        return task

    def _work(self) -> None:
        block_interrupts()
        while True:
            task = self.tasks.get()
            task.run()
            del task
            with self.lock:
                self.idle += 1


def _executor() -> _Pool:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = _Pool(WORKERS)
        return _pool


def block_interrupts() -> None:
    """Run in each of our host threads: Ctrl-C (SIGINT) is then delivered to a thread that
    can act on it (the launching thread waits in Python), never to a thread busy in a block."""
    try:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    except (AttributeError, OSError, ValueError):  # no pthread_sigmask on this platform
        pass


GmArg = namedtuple("GmArg", ("name", "address", "nbytes", "owner", "read_only",
                             "requires_grad"), defaults=("", False))
GmArg.__doc__ = """One GM kernel argument: ``name`` (str), ``address`` and ``nbytes`` (int) of its
data, its ``owner`` (the array, kept referenced). ``read_only``: why the kernel may not write
it ('' if it may); ``requires_grad``: a torch tensor autograd tracks, which a launch may not
write either (``gm_access.py``). Immutable (a named tuple: made on every launch, a frozen
dataclass costs 10x more; ``collections.namedtuple``, not a ``typing.NamedTuple`` class, whose
string annotations a first launch would compile)."""


def address_of(array: np.ndarray) -> int:
    """The address of a writable, non-empty array's data (``array.ctypes.data`` costs 3x
    more: the launch path takes it for every argument)."""
    return ctypes.addressof(ctypes.c_char.from_buffer(array))


_MAIN_THREAD = threading.main_thread()
_MAIN_IDENT = _MAIN_THREAD.ident


@fieldwise_dataclass    # (repr, eq: Fieldwise's; __init__ compiled when first used)
class LaunchResult(Fieldwise):
    """Host wall time plus the timing model's per-block records."""

    block_dim: int
    wall_seconds: float
    blocks: list = field(default_factory=list)
    output: str = ""           # printf/dump_tensor text of every block, in block order


def __getattr__(name: str):
    # the blocks' timing records are made when a report is read, not by the launch: their
    # dataclass is created then (block_timing.py; creating a dataclass costs ~0.3 ms)
    if name in ("BlockTiming", "_block_timing"):
        from . import block_timing
        value = globals()[name] = getattr(block_timing, name)
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def pack_scalars(values) -> np.ndarray:
    out = np.zeros(max(len(values), 1), np.int64)
    for i, (v, dtype) in enumerate(values):
        if dtype.is_float:
            out[i] = struct.unpack("<q", struct.pack("<d", float(v)))[0]
        else:
            out[i] = int(v)
    return out


LENIENT_SLACK = 256 * 1024  # bytes after each GM buffer in lenient mode (a whole UB of tiles)


def run_blocks(compiled, platform, block_dim: int, gm_args: list[GmArg], scalar_values,
               trace: bool = False, trace_capacity: int = 100_000,
               timing: bool = True, lenient: bool = False,
               sanitize: bool = False, plan=None, budget: Optional[int] = None,
               time_limit: Optional[float] = None) -> LaunchResult:
    """Run every block; raise the first block's fault (if any) as a KernelRuntimeError.

    ``lenient``: every GM buffer is staged in a copy with ``LENIENT_SLACK`` bytes of slack
    after it (as device allocations have); accesses that run into the slack become
    ``GMOutOfBoundsWarning``s naming the line, and only the bytes inside each buffer are copied
    back, so results inside the buffers are unaffected. ``plan``: what the launcher kept of an
    earlier launch of the same specialisation (``block_runner.NativePlan``), or None;
    ``budget`` and ``time_limit``: ``abi.loop_budget()`` and ``abi.launch_timeout()`` when
    the caller has just read them (a planned launch reads every mode at once), else None.
    """
    if plan is not None and plan.direct and not (trace or lenient or sanitize) and \
            _native_loop().ENABLED and not _writes_tracked_tensor(plan, gm_args):
        # the launcher's plan of a kernel the native loop runs, with writable arrays or
        # tensors bound by launcher.plan_key, none the kernel may write requiring grad:
        # nothing for gm_access to refuse; torch tensors the kernel writes get their version
        # bumped after it, whether it ran to the end or faulted
        try:
            return _block_runner.run(compiled, platform, block_dim, gm_args, scalar_values,
                                     timing, None, plan, budget, time_limit)
        finally:   # (gm_access.after_launch for the plan's bindings: ndarray or Tensor)
            written = [o for i in plan.written if type(o := gm_args[i].owner) is not np.ndarray]
            if written:
                _increment_version(written)
    access = gm_access.before_launch(compiled, gm_args)
    if not (lenient or access is not None) and _numpy_only(gm_args):
        # nothing to stage, no torch tensor whose version a write must bump (after_launch)
        return _run(compiled, platform, block_dim, gm_args, scalar_values, trace,
                    trace_capacity, timing, lenient, sanitize, access, plan)
    originals, staged = gm_args, []
    if lenient:
        gm_args, staged = _stage_with_slack(gm_args)
    try:
        return _run(compiled, platform, block_dim, gm_args, scalar_values, trace,
                    trace_capacity, timing, lenient, sanitize, access, plan)
    finally:
        for original, copy in staged:
            if not original.read_only:
                ctypes.memmove(original.address, copy.ctypes.data, original.nbytes)
        gm_access.after_launch(compiled, originals, access)



#: ``run_blocks`` as defined here: fast_launch.py serves launches only while nothing replaced it
_RUN_BLOCKS = run_blocks

def _writes_tracked_tensor(plan, gm_args) -> bool:
    """Whether the plan's kernel may write a GM argument that is a torch tensor autograd
    tracks (``GmArg.requires_grad``): such a launch goes through ``gm_access.before_launch``,
    which refuses it (the launcher's plan binds tensors that require grad for reading)."""
    for i in plan.written:
        if gm_args[i].requires_grad:
            return True
    return False


def _increment_version(tensors: list) -> None:
    """Bump the autograd version counter of each torch tensor in ``tensors`` (what
    ``torch.autograd.graph.increment_version`` does, without its Python frame; a tensor
    exists, so torch is imported)."""
    sys.modules["torch"]._C._increment_version(tensors)


def _numpy_only(gm_args) -> bool:
    """Every GM argument is a numpy array (``gm_access.after_launch`` has nothing to do)."""
    for a in gm_args:
        if type(a.owner) is not np.ndarray:
            return False
    return True


def _stage_with_slack(gm_args):
    staged, out = [], []
    for a in gm_args:
        copy = np.zeros(a.nbytes + LENIENT_SLACK, np.uint8)
        ctypes.memmove(copy.ctypes.data, a.address, a.nbytes)
        staged.append((a, copy))
        out.append(GmArg(a.name, copy.ctypes.data, a.nbytes, copy, a.read_only,
                         a.requires_grad))
    return out, staged


class Flag:
    """A one-way flag threads poll (``threading.Event`` without waiting, which costs a
    Condition and a lock to create: ~3.5 us a launch). Setting and reading one attribute is
    atomic in CPython."""

    __slots__ = ("_set",)

    def __init__(self):
        self._set = False

    def set(self) -> None:
        self._set = True

    def is_set(self) -> bool:
        return self._set


#: the lock of every LaunchStop (registering a core and stopping are rare and short: one lock
#: shared by all launches costs a launch nothing to create)
_STOP_LOCK = threading.Lock()


class LaunchStop(Flag):
    """Stops every block of one launch early: the watchdog when the launch runs out of time
    (``abi.WATCHDOG_BUDGET``), Ctrl-C (``abi.INTERRUPT_BUDGET``). Each running block's loop
    budget gets the value, so it leaves at its next loop iteration, cross-core wait or
    long-instruction check (a matmul row chunk); blocks not started yet do not start. Set (a
    Flag) once stopped."""

    __slots__ = ("ctxs", "budget", "job")

    def __init__(self, job=None):
        self._set = False
        self.ctxs: list[np.ndarray] = []
        self.budget = abi.WATCHDOG_BUDGET
        self.job = job      # the native block loop's job record (block_runner.py), if any

    @property
    def stopped(self) -> Flag:
        """Whether the launch is stopping (this object)."""
        return self

    def register(self, ctx: np.ndarray) -> None:
        """A block is about to run with ``ctx``: stop it at once if the launch is stopping."""
        with _STOP_LOCK:
            for c in self.ctxs:    # a thread's core serves many blocks
                if c is ctx:
                    break
            else:
                self.ctxs.append(ctx)
            if self._set:
                ctx[abi.LOOP_BUDGET] = self.budget

    def stop(self, budget: int = abi.WATCHDOG_BUDGET) -> None:
        with _STOP_LOCK:
            if not self._set:
                self.budget = budget
            self._set = True
            if self.job is not None:     # blocks that start from now on get the budget too
                self.job[abi.JOB_STOP_BUDGET] = self.budget
            for ctx in self.ctxs:
                ctx[abi.LOOP_BUDGET] = self.budget


def run_and_wait(own: Optional[Callable], waits: list, stop: LaunchStop,
                 on_interrupt=None) -> None:
    """Run ``own`` (the launching thread's share of the blocks, or None) and call every
    ``wait()`` (each returns when its host thread finished its blocks). On KeyboardInterrupt
    (Ctrl-C reaches the launching thread: in Python between native calls, and through the
    runtime library's SIGINT handler while ``own`` runs native code): stop the launch, wait
    for every thread anyway (a further Ctrl-C only repeats the stop), then re-raise — when a
    launch returns or raises, no block of it is still running or writing the arrays."""
    try:
        if own is not None:
            own()
        for wait in waits:
            # short timed waits: a SIGINT that another thread of the process received is
            # acted on (KeyboardInterrupt raised here) within STOP_POLL_SECONDS
            while True:
                try:
                    if wait(STOP_POLL_SECONDS) is not False:
                        break
                except TimeoutError:
                    pass
    except KeyboardInterrupt:
        for wait in waits:
            while True:   # the stop is repeated: a block may overwrite it once (core.py)
                stop.stop(abi.INTERRUPT_BUDGET)
                if on_interrupt is not None:
                    on_interrupt()
                try:
                    if wait(STOP_POLL_SECONDS) is not False:
                        break
                except KeyboardInterrupt:
                    pass
                except TimeoutError:
                    pass
                except Exception:  # noqa: BLE001 - the interrupt is what the user sees
                    break
        raise


def runs_blocks_itself() -> bool:
    """Whether the launching thread runs blocks itself (no hand-off to a pool thread): the
    main thread, where Ctrl-C arrives, once the runtime library's SIGINT handler is in place
    (``interrupts.py``); other threads hand every block to the pool."""
    return threading.get_ident() == _MAIN_IDENT and interrupts.install()


STOP_POLL_SECONDS = 0.05


class _Watchdog:
    """Stops launches that run past ``abi.launch_timeout()`` seconds: one daemon thread writes
    ``abi.WATCHDOG_BUDGET`` into the loop budget of every block of an expired launch, so its
    next loop iteration faults (LoopLimitError, saying the time ran out). Straight-line code
    always ends; loops that issue instructions re-read the budget on every iteration.

    A launch registers and unregisters without the lock (a dict store and pop, atomic under
    the GIL); the thread scans under the lock with ``scanning`` set, and ``forget`` waits for
    the lock only while a scan runs, so that once it returns no write can follow."""

    def __init__(self):
        self.lock = threading.Lock()
        self.launches: dict[int, tuple[float, LaunchStop]] = {}   # id(stop) -> deadline, stop
        self.limits: dict[str, float] = {}    # ASCENDC_PY_LAUNCH_TIMEOUT's text -> seconds
        self.thread: Optional[threading.Thread] = None
        self.scanning = False

    def watch(self, stop: "LaunchStop", limit: Optional[float] = None) -> Optional[int]:
        """Stop ``stop``'s launch once it has run ``limit`` seconds (None: read
        ``abi.launch_timeout()``); the key to ``forget`` it by (None: no limit)."""
        if limit is None:
            raw = envvars.get(abi.LAUNCH_TIMEOUT_ENV)
            limit = self.limits.get(raw)
            if limit is None:     # (parsed once per text of the variable)
                if len(self.limits) > 64:
                    self.limits.clear()
                limit = self.limits[raw] = abi.launch_timeout()
        if limit <= 0:
            return None
        key = id(stop)     # (the launch keeps its stop alive until it calls forget)
        self.launches[key] = (time.monotonic() + limit, stop)
        if self.thread is None:
            with self.lock:
                if self.thread is None:
                    self.thread = threading.Thread(target=self._loop,
                                                   name="ascendc-py-watchdog", daemon=True)
                    self.thread.start()
        return key

    def forget(self, key: Optional[int]) -> None:
        if key is not None:
            self.launches.pop(key, None)
            if self.scanning:   # a scan that began before the pop may still stop this launch
                with self.lock:
                    pass

    def _expired(self, now: float) -> list:
        while True:
            try:
                return [stop for deadline, stop in list(self.launches.values())
                        if now >= deadline]
            except RuntimeError:    # a launch came or went during the copy: copy again
                continue

    def _loop(self) -> None:
        block_interrupts()
        while True:
            time.sleep(0.1)
            now = time.monotonic()
            with self.lock:   # under the lock: once forget() returns, no write can follow
                self.scanning = True
                try:
                    for stop in self._expired(now):   # repeated every 0.1 s
                        stop.stop()
                finally:
                    self.scanning = False


_WATCHDOG = _Watchdog()
_UNPLANNED = object()


_block_runner = None


def _native_loop():
    """The block_runner module (imported on the first vector launch; an import statement per
    launch costs more than a microsecond)."""
    global _block_runner
    if _block_runner is None:
        from . import block_runner
        _block_runner = block_runner
    return _block_runner


def _after_fork_in_child() -> None:
    """A forked child has only the forking thread: the pool's threads, the watchdog's thread
    and any lock another thread held are gone. Start them afresh (torch DataLoader workers,
    multiprocessing with fork), or the child's first launch would wait forever."""
    global _pool, _MAIN_THREAD, _MAIN_IDENT
    _MAIN_THREAD = threading.main_thread()
    _MAIN_IDENT = _MAIN_THREAD.ident
    _pool = None
    _WATCHDOG.__init__()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _subcore_plan(compiled):
    """How a cube or mix kernel, or one with cross-core sync, maps to sub-cores
    (``subcores.plan_for``); None for a vector kernel (computed once per compiled kernel)."""
    plan = compiled.__dict__.get("_subcore_plan", _UNPLANNED)
    if plan is _UNPLANNED:
        if not needs_subcores(getattr(compiled, "kernel_type", "AIV_ONLY"), compiled.memories,
                              (site.op for site in compiled.sites)):
            plan = compiled._subcore_plan = None      # the fast path: subcores not imported
        else:
            from .subcores import plan_for
            plan = plan_for(compiled)
    return plan


def _prints(compiled) -> bool:
    """Whether the kernel prints (printf/dump_tensor: its blocks run in the Python loop)."""
    prints = compiled.__dict__.get("_prints")
    if prints is None:
        prints = compiled._prints = any(s.op in ("printf", "dump_tensor") for s in compiled.sites)
    return prints


def native_loop_runs(compiled) -> bool:
    """Whether launches of ``compiled`` without trace, lenient or sanitize mode run in the
    native block loop (``block_runner.py``), as ``_run`` routes them."""
    return _subcore_plan(compiled) is None and not _prints(compiled)


def _run(compiled, platform, block_dim, gm_args, scalar_values, trace, trace_capacity, timing,
         lenient, sanitize=False, access=None, native_plan=None) -> LaunchResult:
    plan = _subcore_plan(compiled)
    if plan is not None:  # cube and mix kernels, cross-core sync: simulator/subcores.py
        from . import subcores
        return subcores.run(compiled, plan, platform, block_dim, gm_args, scalar_values, trace,
                            trace_capacity, timing, lenient, sanitize, access)
    prints = _prints(compiled)
    if not (trace or lenient or sanitize or prints):
        block_runner = _native_loop()   # blocks run in the runtime library's native loop
        if block_runner.ENABLED and block_runner.available():
            return block_runner.run(compiled, platform, block_dim, gm_args, scalar_values,
                                    timing, access, native_plan)
    from .block_timing import BlockTiming, _block_timing
    ctx_slots = abi.ctx_slots(compiled.num_queues)
    gm_ptrs = np.array([a.address for a in gm_args] or [0], np.int64)
    gm_sizes = np.array([a.nbytes for a in gm_args] or [0], np.int64)
    scalars = pack_scalars(scalar_values)
    costs = timing_params.cost_table(platform)
    counter = itertools.count()
    abort = Flag()
    errors: dict[int, tuple] = {}
    timings: dict[int, BlockTiming] = {}

    found: list[np.ndarray] = []
    gm_logs: dict[int, np.ndarray] = {}
    printed: dict[int, np.ndarray] = {}   # block -> its print buffer (used part)
    stop = LaunchStop()

    def worker():
        core = _core_for_thread(core_key(platform, ctx_slots, compiled.memories), platform)
        warn_buf = core.warnings
        san = core.sanitizer(ctx_slots, platform) if sanitize else None
        print_buf = np.empty(PRINT_BUFFER_BYTES // 8, np.int64) if prints else None
        while not abort.is_set():
            block = next(counter)
            if block >= block_dim:
                return
            trace_buf = np.empty((trace_capacity, abi.TRACE_FIELDS), np.int64) if trace else None
            ctx = core.prepare(block, block_dim, gm_ptrs, gm_sizes, scalars, costs,
                               compiled.num_queues, trace_buf)
            stop.register(ctx)
            ctx[abi.TIMING_ON] = int(timing)
            if access is not None:
                ctx[abi.GM_ACCESS] = access.ctypes.data
            ctx[abi.WARN_PTR] = warn_buf.ctypes.data
            ctx[abi.WARN_CAP] = sanitizer.WARNINGS_CAP
            if lenient:
                ctx[abi.LENIENT] = 1
                ctx[abi.GM_SLACK] = LENIENT_SLACK
            if san is not None:
                san.attach(ctx, ctx_slots)
            if prints:
                print_buf[:3] = (PRINT_BUFFER_BYTES - 24, 0, 0)  # capacity, used, dropped
                ctx[abi.PRINT_PTR] = print_buf.ctypes.data
            rc = compiled.cfunc(ctx.ctypes.data)
            if prints and (print_buf[1] or print_buf[2]):
                printed[block] = print_buf[:3 + (int(print_buf[1]) + 7) // 8].copy()
            if ctx[abi.WARN_LEN]:
                found.append(warn_buf[:int(ctx[abi.WARN_LEN])].copy())
            if san is not None:
                gm_logs[block] = san.gm_writes()
            if rc != 0:
                errors[block] = (int(rc), int(ctx[abi.ERR_SITE]), int(ctx[abi.ERR_A]),
                                 int(ctx[abi.ERR_B]), int(ctx[abi.ERR_C]), ctx.copy())
                # note: ctx[ERR_D] (which operand) travels inside the ctx copy
                abort.set()
                return
            timings[block] = _block_timing(block, ctx, core.counters, trace_buf,
                                           core.demand if timing else None)

    t0 = time.perf_counter()
    from ..compiler.ops.atomic import runs_blocks_in_order
    nworkers = 1 if runs_blocks_in_order(compiled) else min(WORKERS, block_dim)
    # the launching thread is one of the workers when Ctrl-C can still stop its blocks
    # (runs_blocks_itself); otherwise every block runs on a pool thread while it waits
    watch = _WATCHDOG.watch(stop)
    try:
        own = worker if runs_blocks_itself() else None
        futures = [_executor().submit(worker) for _ in range(nworkers - (own is not None))]
        run_and_wait(own, [f.result for f in futures], stop, abort.set)
    finally:
        _WATCHDOG.forget(watch)
    wall = time.perf_counter() - t0
    if errors:
        block = min(errors)
        code, site, a, b, c, ctx = errors[block]
        site_info = compiled.sites[site] if 0 <= site < len(compiled.sites) else None
        from .faults import build_fault   # (only a failing launch imports it)
        fault = build_fault(code, site_info, a, b, c, compiled, block, ctx)
        fault.output = _output(compiled, printed, upto=block)  # printed before the fault
        raise fault
    if found:
        sanitizer.emit_warnings(compiled, np.concatenate(found))
    if gm_logs:
        sanitizer.check_block_overlaps(compiled, gm_logs)
    # (the cores' sharing of HBM and L2 is settled when the report is built: contention.py)
    return LaunchResult(block_dim, wall, [timings[k] for k in sorted(timings)],
                        _output(compiled, printed))


def _output(compiled, printed: dict, upto: Optional[int] = None) -> str:
    """The blocks' printf/dump_tensor text in block order (formatted here, after the run)."""
    if not printed:
        return ""
    from ..compiler.ops.debug import format_block_output
    return "".join(format_block_output(printed[b], compiled.sites, b) for b in sorted(printed)
                   if upto is None or b <= upto)


__all__ = ["GmArg", "LaunchResult", "run_blocks", "Memory"]
