"""Launches on the sub-cores of the AI Cores: cube kernels, mix kernels, and vector kernels that
use cross-core synchronisation (``sync_all``, ``cross_core_*_flag``).

A block of a launch runs on the sub-cores its kernel type names (``dsl/kernel_types.py``): one
AIV (vector), one AIC (cube), or one AIC and one or two AIVs (mix). Each sub-core is a host
thread running the kernel's native code with its own ctx, local memories and timing model
(``ctx[CORE_TYPE]`` says which it is; an AIC has L1/L0A/L0B/L0C/BT/FB, an AIV has UB; a memory
the sub-core lacks has base address 0 and faults when an instruction touches it). Sub-cores that
may signal each other run at the same time: the sub-cores of one block, or every sub-core of the
launch when the kernel synchronises across blocks (then ``block_dim`` may not exceed the chip's
cores, as on hardware). They share a *group state* array (``xcore_layout.py``) through
``ctx[XC_STATE]``; waits block natively (``codegen/lower_crosscore.py``).

In a mix kernel using the Matmul API, the AIC becomes its block's Matmul server at
``register_matmul``: the AIVs' Matmul calls are timed on its pipes, in a deterministic order
(``compiler/codegen/lower_mmserver.py``), through the same group state.

Vector kernels without cross-core operations never come here: ``runtime._run`` keeps its own
fast path for them.
"""
from __future__ import annotations

import ctypes
import functools
import itertools
import os
import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from ..compiler.ops.debug import PRINT_BUFFER_BYTES
from ..dsl.kernel_types import (AIC_MEMORIES, AIV_MEMORIES, IB_SYNC_OPS, SUBCORE_SYNC_OPS,
                                 SubcoreLayout, layout as layout_of, needs_subcores)
from ..dsl.types import Memory
from . import abi, sanitizer, timing_params
from . import xcore_layout as X
from .cores import _Core, local_memory_sizes
from .runtime import (LENIENT_SLACK, WORKERS, BlockTiming, LaunchResult, LaunchStop,
                      _WATCHDOG, _block_timing, block_interrupts, pack_scalars, run_and_wait,
                      runs_blocks_itself)

XCORE_OPS = SUBCORE_SYNC_OPS + IB_SYNC_OPS
E = abi.ErrorCode


# ----------------------------------------------------------------------------- the plan
@dataclass(frozen=True)
class Plan:
    """How a compiled kernel runs: its sub-core layout and whether its sub-cores synchronise
    across blocks (``sync_all`` or a mode-0 cross-core set)."""

    layout: SubcoreLayout
    uses_xcore: bool
    global_sync: bool
    first_global_site: int = -1


def plan_for(compiled) -> Optional[Plan]:
    """The sub-core plan of ``compiled``, or None for a plain vector kernel (the fast path).
    Cached on the compiled kernel."""
    try:
        return compiled._subcore_plan
    except AttributeError:
        pass
    kernel_type = getattr(compiled, "kernel_type", "AIV_ONLY")
    sites = list(compiled.sites)
    uses = any(s.op in XCORE_OPS for s in sites)
    glob = [i for i, s in enumerate(sites)
            if s.op == "sync_all" or s.op in IB_SYNC_OPS
            or (s.op == "cross_core_set_flag" and s.detail
                                      and s.detail[0] == 0)]
    plan = None
    # (an explicit vector kernel using cube memories or Matmul runs here too: it faults)
    if needs_subcores(kernel_type, compiled.memories, (s.op for s in sites)):
        plan = Plan(layout_of(kernel_type), uses, bool(glob), glob[0] if glob else -1)
    compiled._subcore_plan = plan
    return plan


def cores_for(lay: SubcoreLayout, platform) -> int:
    """How many blocks the chip runs at once: AI Cores for cube and mix kernels, AIVs for
    vector kernels."""
    return platform.aiv_cores if lay.kind == "vector" else platform.aic_cores


def active_cores(lay: SubcoreLayout, block_dim: int, platform) -> tuple[int, int]:
    """(AICs, AIVs) running at once (the report's vector peak counts the AIVs)."""
    resident = min(block_dim, cores_for(lay, platform))
    if lay.kind == "vector":
        return 0, resident
    return resident, min(resident * lay.n_aiv, platform.aiv_cores)


# ----------------------------------------------------------------------------- host threads
class _Worker:
    """A persistent host thread that runs one task at a time (its thread-local cores stay)."""

    def __init__(self):
        self.inbox: queue.SimpleQueue = queue.SimpleQueue()
        self.done = threading.Event()
        self.exc: Optional[BaseException] = None
        threading.Thread(target=self._loop, name="asc-subcore", daemon=True).start()

    def _loop(self) -> None:
        block_interrupts()
        while True:
            task = self.inbox.get()
            try:
                task()
            except BaseException as exc:  # noqa: BLE001 - handed to the launching thread
                self.exc = exc
            self.done.set()

    def submit(self, task: Callable) -> None:
        self.exc = None
        self.done.clear()
        self.inbox.put(task)


class _Gang:
    """Runs a list of tasks each on its own thread, all at the same time (sub-cores that wait
    on each other must), reusing idle threads."""

    def __init__(self):
        self.lock = threading.Lock()
        self.idle: list[_Worker] = []

    def run(self, tasks: list[Callable], stop: LaunchStop, on_interrupt=None) -> None:
        """The tasks on worker threads, the first on the calling thread itself when Ctrl-C can
        stop it there (``runtime.runs_blocks_itself``); on an interrupt ``stop`` stops them
        all, all finish, then KeyboardInterrupt is raised (``runtime.run_and_wait``)."""
        own = tasks[0] if runs_blocks_itself() else None
        rest = tasks[1:] if own is not None else tasks
        with self.lock:
            workers = [self.idle.pop() if self.idle else _Worker() for _ in rest]
        for w, task in zip(workers, rest):
            w.submit(task)
        first = []

        def own_task():
            try:
                own()
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # noqa: BLE001 - raised once the others are done
                first.append(exc)
        try:
            run_and_wait(own_task if own is not None else None,
                         [w.done.wait for w in workers], stop, on_interrupt)
        finally:
            with self.lock:
                self.idle.extend(workers)
        for exc in first + [w.exc for w in workers if w.exc is not None]:
            raise exc


_GANG = _Gang()    # the sub-cores of the groups being run
_SLOTS = _Gang()   # the threads that pick the next block (each runs groups on _GANG)
_local = threading.local()



def _after_fork_in_child() -> None:
    """Forget the worker threads, which a forked child does not have (see runtime.py)."""
    _GANG.__init__()
    _SLOTS.__init__()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _core_for(platform, ctx_slots: int, memories, core_type: int) -> _Core:
    """This thread's core of ``core_type`` (its local memories), reused across launches."""
    key = (ctx_slots, tuple(memories), core_type,
           tuple(sorted(local_memory_sizes(platform).items())))
    cores = getattr(_local, "cores", None)
    if cores is None:
        cores = _local.cores = {}
    core = cores.get(key)
    if core is None:
        if len(cores) > 4:
            cores.clear()
        core = cores[key] = _Core(platform, ctx_slots, memories)
    return core


@functools.lru_cache(maxsize=1)
def _libc_functions() -> tuple[int, int]:
    """Addresses of sched_yield and usleep (0 when unavailable: waits then spin)."""
    try:
        libc = ctypes.CDLL(None)
        return (ctypes.cast(libc.sched_yield, ctypes.c_void_p).value or 0,
                ctypes.cast(libc.usleep, ctypes.c_void_p).value or 0)
    except (OSError, AttributeError):
        return 0, 0


def _costs(platform, cube_rate: float) -> np.ndarray:
    """The cost table with ``cube_rate``, this sub-core's share of the cube (``CUBE_RATE``)."""
    table = timing_params.cost_table(platform)
    if cube_rate != table[timing_params.CUBE_RATE]:
        table = table.copy()
        table[timing_params.CUBE_RATE] = cube_rate
        table.setflags(write=False)
    return table


# ----------------------------------------------------------------------------- results
@dataclass
class SubcoreTiming(BlockTiming):
    """A sub-core's timing record: a BlockTiming plus which sub-core it was."""

    core_type: int = 0         # 0 AIV, 1 AIC
    sub: int = 0               # sub-block index of an AIV
    label: str = "AIV"         # 'AIC', 'AIV', 'AIV0', 'AIV1'
    cross_wait: int = 0        # cycles its scalar unit waited at cross-core waits
    cross_waits: int = 0       # cross-core waits executed
    mm_wait: int = 0           # cycles its scalar unit waited for Matmul results (mix AIV)
    mm_waits: int = 0          # Matmul requests it sent to its AIC


@dataclass
class SubcoreLaunch(LaunchResult):
    """A launch on sub-cores: ``blocks`` holds one SubcoreTiming per sub-core, in (block,
    sub-core) order."""

    kernel_type: str = "AIV_ONLY"
    layout: Optional[SubcoreLayout] = None
    cores: int = 0             # blocks the chip runs at once (AI Cores, or AIVs)
    active_aic: int = 0
    active_aiv: int = 0
    subcores: bool = True


@dataclass
class _Group:
    """Sub-cores that run together and share one cross-core state array."""

    blocks: list
    state: np.ndarray = field(repr=False, default=None)
    units: list = field(default_factory=list)   # (block, slot, core_type, sub)


# ----------------------------------------------------------------------------- the launch
def run(compiled, plan: Plan, platform, block_dim, gm_args, scalar_values, trace,
        trace_capacity, timing, lenient, sanitize, access=None) -> SubcoreLaunch:
    """Run every block of ``compiled`` on its sub-cores; raise the first fault. ``access``:
    the launch's GM access array (``gm_access.before_launch``) or None."""
    from . import subcore_faults
    lay = plan.layout
    cores = cores_for(lay, platform)
    if plan.global_sync and block_dim > cores:
        raise subcore_faults.too_many_blocks(compiled, plan, lay, block_dim, cores, platform)
    ctx_slots = abi.ctx_slots(compiled.num_queues)
    gm_ptrs = np.array([a.address for a in gm_args] or [0], np.int64)
    gm_sizes = np.array([a.nbytes for a in gm_args] or [0], np.int64)
    scalars = pack_scalars(scalar_values)
    active_aic, active_aiv = active_cores(lay, block_dim, platform)
    cost_aiv = _costs(platform, 0.5 if lay.n_aiv == 2 else 1.0)
    cost_aic = _costs(platform, 1.0)
    sizes = local_memory_sizes(platform)
    mem_aic = [m for m in compiled.memories if m in AIC_MEMORIES]
    mem_aiv = [m for m in compiled.memories if m in AIV_MEMORIES]
    prints = any(s.op in ("printf", "dump_tensor") for s in compiled.sites)
    yield_fn, sleep_fn = _libc_functions()
    units = lay.units()

    lock = threading.Lock()
    abort = threading.Event()
    errors: dict[tuple, tuple] = {}
    timings: dict[tuple, SubcoreTiming] = {}
    found: list[np.ndarray] = []
    gm_logs: dict[int, list] = {}
    printed: dict[tuple, np.ndarray] = {}
    stop = LaunchStop()
    groups: list = []

    def new_group(blocks: list) -> _Group:
        g = _Group(blocks)
        g.units = [(blk, slot, ct, sub) for blk in blocks for slot, (ct, sub) in enumerate(units)]
        g.state = np.zeros(X.state_size(len(g.units)), np.int64)
        s = g.state
        s[X.NUNITS], s[X.NAIV], s[X.HAS_AIC] = len(g.units), lay.n_aiv, int(lay.has_aic)
        s[X.PER_BLOCK], s[X.NBLOCKS] = lay.per_block, len(blocks)
        s[X.YIELD_FN], s[X.SLEEP_FN], s[X.LATENCY] = yield_fn, sleep_fn, X.CROSS_CORE_LATENCY
        for u, (blk, slot, ct, sub) in enumerate(g.units):
            base = X.unit_base(u)
            s[base + X.U_TYPE], s[base + X.U_BLOCK], s[base + X.U_SUB] = ct, blocks.index(blk), sub
        return g

    def run_unit(g: _Group, u: int) -> None:
        try:
            run_unit_inner(g, u)
        except BaseException:
            g.state[X.ABORT] = 1                  # a host-side failure: nobody waits for it
            raise
        finally:
            g.state[X.unit_base(u) + X.U_DONE] = 1

    def run_unit_inner(g: _Group, u: int) -> None:
        block, slot, core_type, sub = g.units[u]
        aic = core_type == 1
        core = _core_for(platform, ctx_slots, mem_aic if aic else mem_aiv, core_type)
        trace_buf = np.empty((trace_capacity, abi.TRACE_FIELDS), np.int64) if trace else None
        ctx = core.prepare(block, block_dim, gm_ptrs, gm_sizes, scalars,
                           cost_aic if aic else cost_aiv, compiled.num_queues, trace_buf)
        if not aic and lay.kind == "mix":
            ctx[abi.BLOCK_IDX] = block * lay.n_aiv + sub   # Ascend C GetBlockIdx on an AIV
        ctx[abi.SUB_BLOCK_IDX] = 0 if aic else sub
        ctx[abi.SUB_BLOCK_NUM] = 1 if aic else lay.n_aiv
        ctx[abi.CORE_TYPE] = core_type
        ctx[abi.KERNEL_MODE] = lay.mode
        for mem in compiled.memories:             # capacity bookkeeping for every memory
            if mem != Memory.GM:
                ctx[abi.MEM_SIZE + int(mem)] = sizes[mem]
        ctx[abi.XC_STATE] = g.state.ctypes.data
        ctx[abi.XC_UNIT] = u
        stop.register(ctx)
        ctx[abi.TIMING_ON] = int(timing)
        if access is not None:
            ctx[abi.GM_ACCESS] = access.ctypes.data
        ctx[abi.WARN_PTR] = core.warnings.ctypes.data
        ctx[abi.WARN_CAP] = sanitizer.WARNINGS_CAP
        if lenient:
            ctx[abi.LENIENT] = 1
            ctx[abi.GM_SLACK] = LENIENT_SLACK
        san = core.sanitizer(ctx_slots, platform) if sanitize else None
        if san is not None:
            san.attach(ctx, ctx_slots)
        print_buf = None
        if prints:
            print_buf = np.empty(PRINT_BUFFER_BYTES // 8, np.int64)
            print_buf[:3] = (PRINT_BUFFER_BYTES - 24, 0, 0)
            ctx[abi.PRINT_PTR] = print_buf.ctypes.data
        rc = compiled.cfunc(ctx.ctypes.data)
        if rc not in (0, int(E.XCORE_ABORTED)):
            g.state[X.ABORT] = 1                  # waiters stop (before this one counts as done)
        g.state[X.unit_base(u) + X.U_DONE] = 1
        key = (block, slot)
        label = SubcoreLayout.label(core_type, sub, lay.n_aiv)
        with lock:
            if prints and (print_buf[1] or print_buf[2]):
                printed[key] = print_buf[:3 + (int(print_buf[1]) + 7) // 8].copy()
            if ctx[abi.WARN_LEN]:
                found.append(core.warnings[:int(ctx[abi.WARN_LEN])].copy())
            if san is not None:
                gm_logs.setdefault((block, slot), []).append(san.gm_writes())
            if rc != 0:
                errors[key] = (int(rc), int(ctx[abi.ERR_SITE]), int(ctx[abi.ERR_A]),
                               int(ctx[abi.ERR_B]), int(ctx[abi.ERR_C]), ctx.copy(), g, label)
                if rc != int(E.XCORE_ABORTED):
                    abort.set()
                return
            bt = _block_timing(block, ctx, core.counters, trace_buf,
                               core.demand if timing else None)
            bt.scalar_busy = max(0, bt.scalar_busy - int(ctx[abi.XC_STALL]))  # waiting, not busy
            timings[key] = SubcoreTiming(**vars(bt), core_type=core_type, sub=sub, label=label,
                                         cross_wait=int(ctx[abi.XC_STALL]),
                                         cross_waits=int(ctx[abi.XC_WAITS]),
                                         mm_wait=int(ctx[abi.MM_STALL]),
                                         mm_waits=int(ctx[abi.MM_WAITS]))

    def run_group(blocks: list) -> None:
        g = new_group(blocks)
        with lock:
            groups.append(g)
        _GANG.run([functools.partial(run_unit, g, u) for u in range(len(g.units))], stop,
                  interrupted)

    def interrupted() -> None:
        abort.set()
        with lock:
            for g in groups:
                g.state[X.ABORT] = 1   # cross-core waiters leave too

    t0 = time.perf_counter()
    watch = _WATCHDOG.watch(stop)
    try:
        if plan.global_sync:
            run_group(list(range(block_dim)))
        else:
            counter = itertools.count()

            def slot_loop() -> None:
                while not abort.is_set() and not stop.stopped.is_set():
                    block = next(counter)
                    if block >= block_dim:
                        return
                    run_group([block])
            nslots = max(1, min(block_dim, WORKERS // lay.per_block))
            _SLOTS.run([slot_loop] * nslots, stop, interrupted)
    finally:
        _WATCHDOG.forget(watch)
    wall = time.perf_counter() - t0
    if errors:
        raise subcore_faults.first_fault(compiled, errors, lay, _output(compiled, printed))
    if found:
        sanitizer.emit_warnings(compiled, np.concatenate(found))
    if gm_logs and not plan.global_sync:
        _check_gm_overlaps(compiled, plan, gm_logs)
    return SubcoreLaunch(block_dim, wall, [timings[k] for k in sorted(timings)],
                         _output(compiled, printed), kernel_type=lay.kernel_type, layout=lay,
                         cores=cores, active_aic=active_aic, active_aiv=active_aiv)


def _check_gm_overlaps(compiled, plan: Plan, logs: dict) -> None:
    """Sanitize mode: GM bytes written by two sub-cores. Writes between the sub-cores of one
    block are checked only when the kernel has no cross-core flags (which may order them; the
    checker does not follow flags); kernels that synchronise across blocks are not checked."""
    lay = plan.layout
    per_unit = not plan.uses_xcore and lay.per_block > 1
    merged: dict[int, list] = {}
    names: dict[int, str] = {}
    for (block, slot), parts in logs.items():
        key = block * lay.per_block + slot if per_unit else block
        merged.setdefault(key, []).extend(parts)
        if per_unit:
            ct, sub = lay.units()[slot]
            names[key] = f"block {block} ({SubcoreLayout.label(ct, sub, lay.n_aiv)})"
        else:
            names[key] = f"block {block}"
    sanitizer.check_block_overlaps(compiled, {k: np.concatenate(v) for k, v in merged.items()},
                                   names)


def _output(compiled, printed: dict) -> str:
    """printf/dump_tensor text of every sub-core, in (block, sub-core) order."""
    if not printed:
        return ""
    from ..compiler.ops.debug import format_block_output
    return "".join(format_block_output(printed[k], compiled.sites, k[0]) for k in sorted(printed))


__all__ = ["Plan", "plan_for", "run", "SubcoreTiming", "SubcoreLaunch", "cores_for"]
