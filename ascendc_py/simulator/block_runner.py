"""Vector launches whose blocks run in the runtime library's native block loop.

``runtime.run_blocks`` sends a vector launch here unless it needs Python between blocks
(sanitize mode, tracing, a kernel that prints, lenient mode). Each host thread of the launch
calls ``asc_run_blocks`` (``compiler/codegen/block_loop.py``) once: it runs blocks until none is
left, so a launch returns to Python once per thread, not once per block. Every block does what
the Python loop of ``runtime.py`` does for it (a fresh ctx from the core's template, fresh local
memories, its own counters and GM demand record), so results and cycles are the same bits.

Host threads (``host_threads``): a launch whose blocks took little host time when it last ran
(under ``SERIAL_SECONDS`` in all) runs them on the launching thread alone; otherwise the host
pool's workers join it (``_HostPool``): one ctypes call, ``asc_pool_launch``, offers them
their thread records, wakes them (they wait in native code, ``asc_pool_serve``), runs the
launching thread's share, withdraws the offers no worker took by then and waits on a futex
for the rest. Python runs again only when a block failed or left warnings, or Ctrl-C's
handler did not raise (``_pool_rounds``). One launch uses the pool at a time; a launch that
finds it taken runs alone. Where the library has no pool, or on the main thread when Ctrl-C
cannot stop blocks it runs, Python pool threads (``runtime._executor``) run the shares, and
one that has not started by the time the launching thread ran out of blocks is withdrawn
(``asc_cancel_thread``). Which thread runs a block never changes what it computes.

The blocks' timing records (``runtime.BlockTiming``) are made from the kept ctx headers only
when a report reads them (``NativeLaunch.blocks``).
"""
from __future__ import annotations

import ctypes
import operator
import os
import struct
import threading
import time
from typing import Optional

import numpy as np

from . import abi, runtime, timing_params
from . import cores as sim_cores
from ..compiler.ops.atomic import runs_blocks_in_order
from ..forksafe import ForkSafeLock

#: a launch runs on the launching thread alone when its blocks last took under this host time
SERIAL_SECONDS = 100e-6
#: a launch buffer up to this size is copied whole from its template (_Layout.whole)
WHOLE_TEMPLATE_BYTES = 256 * 1024
#: False: every launch takes the Python loop of runtime.py (tests compare the two paths)
ENABLED = True
_UNRESOLVED = object()
_native = _UNRESOLVED


def _functions():
    """(run_blocks, cancel_thread, address of the SIGINT handler's counter, that counter as a
    ctypes int or None, pool_launch, pool_serve) or None when the runtime library has no block
    loop (then launches take the Python loop). pool_launch and pool_serve are None where the
    library has no host-thread pool (then helper threads are Python pool threads)."""
    global _native
    if _native is _UNRESOLVED:
        from ..compiler.codegen import runtime_loader as rl
        run, cancel = rl.symbol_address("asc_run_blocks"), rl.symbol_address("asc_cancel_thread")
        if run and cancel:
            c_int64, c_void_p = ctypes.c_int64, ctypes.c_void_p
            proto = ctypes.CFUNCTYPE(c_int64, c_void_p, c_void_p)
            fired = rl.symbol_address(rl.INT_FIRED) or 0
            launch, serve = (rl.symbol_address(n) for n in ("asc_pool_launch", "asc_pool_serve"))
            _native = (proto(run), ctypes.CFUNCTYPE(c_int64, c_void_p)(cancel),
                       fired, c_int64.from_address(fired) if fired else None,
                       ctypes.CFUNCTYPE(c_int64, c_void_p, c_void_p, c_void_p, c_int64,
                                        c_int64)(launch) if launch and serve else None,
                       ctypes.CFUNCTYPE(None, c_void_p, c_int64)(serve)
                       if launch and serve else None)
        else:
            _native = None
    return _native


def available() -> bool:
    """Whether launches can use the native block loop."""
    return _functions() is not None


class NativeLaunch(runtime.LaunchResult):
    """A launch's result whose ``blocks`` (BlockTiming per block, in block order) are made from
    the kept ctx headers, counters and GM demand records when first read."""

    def __init__(self, block_dim: int, wall_seconds: float, buf, layout: "_Layout",
                 timing: bool, output: str = ""):
        self.block_dim, self.wall_seconds, self.output = block_dim, wall_seconds, output
        self._records = (buf, layout, timing)
        self._blocks = None

    @property
    def blocks(self) -> list:
        if self._blocks is None:
            buf, lay, timing = self._records
            buf = np.frombuffer(buf, np.int64)
            headers = buf[lay.headers:lay.counters].reshape(self.block_dim, abi.HEADER_SLOTS)
            counters = buf[lay.counters:lay.demand].reshape(self.block_dim, -1)
            demand = buf[lay.demand:].view(np.float64).reshape(self.block_dim, -1) \
                if timing else None
            self._blocks = [runtime._block_timing(
                b, headers[b], counters[b], None, demand[b] if demand is not None else None)
                for b in range(self.block_dim)]
        return self._blocks

    @blocks.setter
    def blocks(self, value: list) -> None:
        self._blocks = value


class _Layout:
    """Where each part of a launch's one int64 buffer lives (offsets in int64 slots): the job
    record, the GM pointers and sizes and the scalars, the thread records, the blocks' return
    codes, then per block the ctx header, the counters and the float64 GM demand record. The
    job record's pointers to them are byte offsets from the buffer's start (``abi.JOB_*``), so
    the words that do not depend on a launch's arguments are computed here once (``head``,
    ``tail``)."""

    def __init__(self, compiled, block_dim: int, threads: int, n_gm: int, n_scalars: int):
        record = abi.thread_record_size(len(compiled.memories))
        at = abi.JOB_RECORD
        self.gm_ptrs, at = at, at + n_gm
        self.gm_sizes, at = at, at + n_gm
        self.scalars, at = at, at + n_scalars
        self.records, self.record, at = at, record, at + threads * record
        self.rcs, at = at, at + block_dim
        self.headers, at = at, at + block_dim * abi.HEADER_SLOTS
        self.counters, at = at, at + block_dim * timing_params.COUNTER_SLOTS
        self.demand_slots = abi.demand_size(n_gm)
        self.demand, self.size = at, at + block_dim * self.demand_slots
        self.threads, self.block_dim = threads, block_dim
        self.records_made = None    # (thread_records) the last thread records' template
        #: the template holds the whole buffer (copied as the buffer in one call) up to
        #: WHOLE_TEMPLATE_BYTES, else the front up to the thread records (copied into a
        #: zeroed buffer: a launch of many blocks keeps no second buffer's worth of zeros)
        self.whole = 8 * self.size <= WHOLE_TEMPLATE_BYTES
        #: a zeroed buffer of the launch (ctypes zeroes it; its address costs no numpy call)
        self.buffer = ctypes.c_int64 * self.size
        #: the job record and its arguments (up to the thread records) in one pack
        self.job = struct.Struct(f"<{self.records}q")
        fired = _functions()[2] if _functions() is not None else 0
        # JOB_KERNEL .. JOB_FIRED (then JOB_FIRED_AT, read at each launch)
        self.head = (compiled.address, block_dim, 0, 0, fired)
        # JOB_HEADERS .. JOB_SCALARS (byte offsets)
        self.mid = (8 * self.headers, 8 * self.counters, timing_params.COUNTER_SLOTS,
                    8 * self.demand, self.demand_slots, 8 * self.rcs, 8 * self.gm_ptrs,
                    8 * self.gm_sizes, 8 * self.scalars)
        # JOB_GM_COUNT, JOB_STOP_BUDGET (after JOB_LOOP_BUDGET, JOB_TIMING_ON, JOB_GM_ACCESS)
        self.tail = (n_gm, 0)
        self.thread_words = struct.Struct(f"<{record - 1}q")   # a record but its state

    def pack_job(self, buf, fired_at: int, budget: int, timing: bool, access: int,
                 arguments) -> None:
        """Write the job record into ``buf``: the words computed here, the SIGINT counter's
        value at the launch's start, the loop budget, the timing switch, the GM access
        record's address (0: none) and ``arguments`` (the GM pointers, the GM sizes and the
        scalars' words, in that order)."""
        self.job.pack_into(buf, 0, *self.head, fired_at, *self.mid, budget, int(timing), access,
                           *self.tail, *arguments)

    def fresh(self, template: bytes):
        """A launch buffer from ``thread_records``' template: a copy of it when it is the
        whole buffer (``whole``), else a zeroed buffer that starts with it."""
        if self.whole:
            return self.buffer.from_buffer_copy(template)
        buf = self.buffer()
        ctypes.memmove(buf, template, len(template))
        return buf


class NativePlan:
    """What a vector launch on the native loop needs that does not depend on its argument
    values, computed once per (compiled kernel, platform, block count, argument counts): the
    cost table, the core shape, the layouts of its buffer (per host thread count) and which
    scalars are floats (``plan_for``)."""

    __slots__ = ("compiled", "platform", "block_dim", "costs", "core_key", "layouts",
                 "float_scalars", "n_gm", "direct", "written", "__weakref__")

    def __init__(self, compiled, platform, block_dim: int, n_gm: int, scalar_dtypes):
        self.compiled, self.platform, self.block_dim = compiled, platform, block_dim
        #: the launcher may hand launches straight to ``run`` (runtime.run_blocks): a kernel
        #: the native loop runs whose GM writes need no run-time access record
        self.direct = runtime.native_loop_runs(compiled) and available() and \
            not getattr(compiled.gm_writes, "checks_at_run_time", True)
        #: the GM arguments the kernel writes (for a direct launch: all it may write), whose
        #: torch tensors get their version bumped (``gm_access.after_launch``)
        self.written = tuple(sorted({arg for arg, _, _ in compiled.gm_writes.static})) \
            if self.direct else ()
        self.costs = timing_params.cost_table(platform)
        self.core_key = runtime.core_key(platform, abi.ctx_slots(compiled.num_queues),
                                         compiled.memories)
        self.n_gm = max(1, n_gm)
        self.float_scalars = tuple(i for i, d in enumerate(scalar_dtypes) if d.is_float)
        self.layouts: dict = {}

    def layout(self, threads: int, n_scalars: int) -> _Layout:
        lay = self.layouts.get(threads)
        if lay is None:
            lay = self.layouts[threads] = _Layout(self.compiled, self.block_dim, threads,
                                                  self.n_gm, max(1, n_scalars))
        return lay


def plan_for(compiled, platform, block_dim: int, scalar_values, n_gm: int) -> NativePlan:
    """The NativePlan of a launch (kept on the compiled kernel)."""
    dtypes = tuple(d for _, d in scalar_values)
    key = (block_dim, id(platform), n_gm, dtypes)
    plans = compiled.__dict__.setdefault("_native_plans", {})
    plan = plans.get(key)
    if plan is None or plan.platform is not platform:
        if len(plans) > 64:
            plans.clear()
        plan = plans[key] = NativePlan(compiled, platform, block_dim, n_gm, dtypes)
    return plan


class _HostPool:
    """The process's host threads besides the launching one: ``workers`` threads that wait in
    the runtime library's ``asc_pool_serve`` (native code, without the GIL) for a launch to
    offer them a share of its blocks (``asc_pool_launch``), each with its own simulated core
    (``core``). One launch uses it at a time (``lock``, taken without waiting: a launch that
    finds it taken runs on its own thread). Made on the first launch that needs it, and again
    in a forked child (whose copy has no threads). A worker that never started is no
    hazard: the launching thread withdraws the offers no worker took once it ran out of
    blocks itself."""

    __slots__ = ("record", "address", "lock", "cores", "threads", "cpu", "allowed", "ready",
                 "launches", "readies")

    def __init__(self, workers: int, serve):
        self.record = np.zeros(abi.pool_record_size(workers), np.int64)
        self.record[abi.POOL_SPIN] = POOL_SPIN
        self.address = self.record.ctypes.data
        self.lock = threading.Lock()
        #: per worker, its simulated cores by core shape (cores.kept_core)
        self.cores: list = [{} for _ in range(workers)]
        self.cpu = -1             # the launching thread's CPU the workers were kept off
        #: (costs, key, cores, their thread records, ctxs, their templates): prepare
        self.ready = None
        self.readies: dict = {}   # key -> a ready tuple made before (kernels in turn)
        self.launches = -1        # launches so far (the first checks the launching CPU)
        try:
            self.allowed = frozenset(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            self.allowed = frozenset()
        self.threads = []
        for k in range(workers):
            thread = threading.Thread(target=_serve, args=(serve, self.address, k),
                                      name=f"asc-core-{k + 1}", daemon=True)
            try:
                thread.start()
            except RuntimeError:    # no further thread can start: its offers are withdrawn
                break
            self.threads.append(thread)

    def keep_off(self, cpu: int) -> None:
        """Let the workers run on every CPU the process may use but ``cpu`` (the launching
        thread's): a woken worker is otherwise often queued on the waker's CPU, where it runs
        only once the launching thread waits, after the blocks are gone (measured on 2 vCPUs:
        the worker then ran almost no block)."""
        self.cpu = cpu
        others = self.allowed - {cpu}
        if cpu < 0 or not others:
            return
        for thread in self.threads:
            try:
                os.sched_setaffinity(thread.native_id, others)
            except (OSError, TypeError):
                pass

    def prepare(self, plan: NativePlan, platform, num_queues: int, budget: int, threads: int,
                record: int, key: tuple) -> tuple:
        """Ready the first ``threads - 1`` workers' cores for launches of ``key`` (core shape,
        costs, queues, loop budget, threads) and pack their thread records (``record`` words
        each, state zero) once; kept per key (``readies``), so that kernels launched in turn
        find theirs: the same tuple, whose cores and templates the records name."""
        slot = tuple(id(k) if type(k) is np.ndarray else k for k in key)   # (costs by id)
        ready = self.readies.get(slot)
        if ready is None or ready[0] is not plan.costs:
            cores = [self.core(k, plan, platform, num_queues, budget)
                     for k in range(threads - 1)]
            words = struct.Struct(f"<{record}q")
            records = b"".join(words.pack(0, *core.native_words) for core in cores)
            ready = (plan.costs, key, cores, records, [core.ctx for core in cores],
                     [core.current_template() for core in cores])
            if len(self.readies) >= sim_cores.CORES_PER_THREAD:
                self.readies.clear()
            self.readies[slot] = ready
        self.ready = ready
        return ready

    def core(self, k: int, plan: NativePlan, platform, num_queues: int, budget: int):
        """Worker ``k``'s simulated core, ready for a launch of ``plan`` (as
        ``runtime.ready_core`` readies a thread's own; kept per core shape)."""
        core = sim_cores.kept_core(self.cores[k], plan.core_key, platform)
        if core._template_costs is not plan.costs or \
                core._template_key != (num_queues, budget):
            core._template(plan.costs, num_queues, budget)
        return core


def _serve(serve, pool_address: int, k: int) -> None:
    """A pool worker's thread: SIGINT blocked, then native code for good (``asc_pool_serve``)."""
    runtime.block_interrupts()
    serve(pool_address, k)


def _sched_getcpu():
    """libc's ``sched_getcpu`` (the calling thread's CPU) or None where there is none."""
    try:
        fn = ctypes.CDLL(None).sched_getcpu
    except (OSError, AttributeError):
        return None
    fn.restype, fn.argtypes = ctypes.c_int, []
    return fn if hasattr(os, "sched_setaffinity") else None


_getcpu = _sched_getcpu()
#: a pool launch asks which CPU the launching thread is on (keep_off) once every this many
#: launches, the first included (a power of two): the answer rarely changes between
#: launches, and the call costs 2-3 us of a launch's Python when the blocks have just pushed
#: its code out of the CPU's caches
CPU_CHECK_EVERY = 16
#: ns a pool thread spins before it sleeps (abi.POOL_SPIN): a worker after its share of a
#: launch (the next launch finds it awake), the launching thread waiting for a worker's last
#: block. On the 2-vCPU bench machine sepia float32 back to back took 0.35 / 0.33 / 0.31 ms
#: with 0 / 20 / 100 us (CPU per call 0.54 / 0.57 / 0.61 ms) while a worker's spin counted
#: from its claim. Counted from the end of its share, in one process alternating the value
#: (load average 9-10, 80 rounds of 25 launches): medians 0.34 / 0.24 / 0.26 / 0.24 ms with
#: 50 / 100 / 150 / 250 us (CPU per call 0.48 / 0.40 / 0.44 / 0.42 ms): the Python between
#: two launches (its code cold after 5 MB went through the caches) outlasts 50 us.
POOL_SPIN = 150_000
_pool: Optional[_HostPool] = None
_pool_making = ForkSafeLock()


def _host_pool(serve) -> _HostPool:
    """The process's host pool (made on first use: ``runtime.WORKERS - 1`` workers)."""
    global _pool
    with _pool_making:
        if _pool is None:
            _pool = _HostPool(runtime.WORKERS - 1, serve)
        return _pool


def _forget_pool() -> None:
    """In a forked child: the parent's pool has no threads here; the next launch makes one."""
    global _pool
    _pool = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


_F64 = struct.Struct("<d")
_I64 = struct.Struct("<q")
_FIRST = operator.itemgetter(0)                    # a scalar's value
_ADDRESS = operator.attrgetter("address")          # a GmArg's
_NBYTES = operator.attrgetter("nbytes")


def host_threads(compiled, block_dim: int) -> int:
    """How many host threads run a launch's blocks (the policy, in one place): the launching
    thread alone for one block or when the kernel's blocks last took under SERIAL_SECONDS of
    host time in all; else up to ``runtime.WORKERS``. A kernel that sets an atomic mode runs
    its blocks one after another in block order (``ops/atomic.py``)."""
    if block_dim == 1 or runs_blocks_in_order(compiled) or \
            compiled.__dict__.get("_block_seconds", 1.0) * block_dim < SERIAL_SECONDS:
        return 1
    return min(runtime.WORKERS, block_dim)


def run(compiled, platform, block_dim: int, gm_args, scalar_values, timing: bool,
        access, plan: Optional[NativePlan] = None, budget: Optional[int] = None,
        time_limit: Optional[float] = None) -> runtime.LaunchResult:
    """Run every block of a vector launch natively; raise the first failing block's fault.
    ``plan``: the launch's NativePlan when the caller kept it (else found here); ``budget``
    and ``time_limit``: the loop budget and the launch's time limit when the caller has read
    them (else read here)."""
    native = _native if _native is not _UNRESOLVED else _functions()
    if plan is None or plan.compiled is not compiled or plan.block_dim != block_dim or \
            plan.platform is not platform:
        plan = plan_for(compiled, platform, block_dim, scalar_values, len(gm_args))
    if budget is None:
        budget = abi.loop_budget()
    # (runtime.runs_blocks_itself, inline) the launching thread runs blocks itself on the
    # main thread once the SIGINT handler is in place; a thread other than the main one runs
    # blocks too (Ctrl-C reaches the main thread only)
    main = threading.get_ident() == runtime._MAIN_IDENT
    own_thread = main and runtime.interrupts.install()
    here = own_thread or not main
    threads = 1 if block_dim == 1 else host_threads(compiled, block_dim)
    pool = None
    if threads > 1 and here and native[4] is not None:
        pool = _pool or _host_pool(native[5])
        if not pool.lock.acquire(False):
            pool, threads = None, 1   # another thread's launch has the pool: this one runs alone
        else:
            threads = min(threads, len(pool.cores) + 1)   # (WORKERS may have grown since)
    try:
        lay = plan.layouts.get(threads) or plan.layout(threads, len(scalar_values))
        if pool is not None or (here and threads == 1):
            # the thread records of the launching thread's core (and of the pool's workers)
            # come with the buffer, from a template of them (thread_records)
            own, ready, records = thread_records(compiled, platform, plan, lay, pool, budget)
            buf = lay.fresh(records)
        else:
            buf = lay.buffer()
        base = ctypes.addressof(buf)
        scalars = list(map(_FIRST, scalar_values)) or [0]
        for i in plan.float_scalars:   # a float's word: its float64 bits (runtime.pack_scalars)
            scalars[i] = _I64.unpack(_F64.pack(float(scalars[i])))[0]
        fired = native[3]
        lay.pack_job(buf, fired.value if fired is not None else 0, budget, timing,
                     runtime.address_of(access) if access is not None else 0,
                     (*map(_ADDRESS, gm_args), *map(_NBYTES, gm_args), *scalars) if gm_args
                     else (0, 0, *scalars))
        stop = runtime.LaunchStop(buf)
        t0 = time.perf_counter()
        if pool is not None:
            # the launching thread and the pool's workers, woken and awaited in native code
            faults, warnings = _run_pool(plan, lay, buf, base, threads, stop, native, pool,
                                         own, ready, time_limit)
        elif here and threads == 1:
            # the launching thread runs every block (Ctrl-C: the SIGINT handler stops them)
            faults, warnings = _run_alone(plan, lay, buf, base, stop, native, own, time_limit)
        else:
            faults, warnings = _run_threads(compiled, platform, plan, lay, buf, base, threads,
                                            own_thread, budget, stop, native)
        wall = time.perf_counter() - t0
    finally:
        if pool is not None:
            pool.lock.release()
    return finish(compiled, buf, lay, faults, warnings, wall, timing)


#: ``run`` as defined here: fast_launch.py serves launches only while nothing replaced it
_RUN = run


def finish(compiled, buf, lay: _Layout, faults, warnings, wall: float,
           timing: bool) -> NativeLaunch:
    """After a launch's blocks ran: raise the lowest failing block's fault, emit the
    warnings they left, note their host time (``host_threads``) and return the result."""
    if faults:
        _raise_fault(compiled, buf, lay, faults)
    if warnings:
        from . import sanitizer
        sanitizer.emit_warnings(compiled, np.concatenate(warnings))
    block_dim = lay.block_dim
    compiled._block_seconds = wall * lay.threads / block_dim     # (host_threads reads it)
    return NativeLaunch(block_dim, wall, buf, lay, timing)


def thread_records(compiled, platform, plan: NativePlan, lay: _Layout, pool, budget: int):
    """(the launching thread's core, the pool's ready workers or None, a launch buffer's
    template): zero but the thread records of ``lay``, each in state zero, the launching
    thread's core first (ready for the launch, ``runtime.ready_core``), then those of the
    pool's workers (``_HostPool.prepare``) when ``pool``; the whole buffer, or its front up to
    the records' end (``_Layout.whole``). A launch copies it into its buffer and packs its job
    record over the front; kept on ``lay`` while the cores' words and the workers stay the
    same objects."""
    own = _own_core(compiled, platform, plan, budget)
    ready = None
    if pool is not None:
        key = (plan.core_key, plan.costs, compiled.num_queues, budget, lay.threads)
        ready = pool.ready
        if ready is None or ready[0] is not plan.costs or ready[1] != key:
            ready = pool.prepare(plan, platform, compiled.num_queues, budget, lay.threads,
                                 lay.record, key)
    made = lay.records_made
    if made is None or made[0] is not own.native_words or made[1] is not ready:
        records = bytes(8 * (lay.records + 1)) + lay.thread_words.pack(*own.native_words)
        if ready is not None:
            records += ready[3]
        if lay.whole:
            records += bytes(8 * lay.size - len(records))
        made = lay.records_made = (own.native_words, ready, records)
    return own, ready, made[2]


def _own_core(compiled, platform, plan: NativePlan, budget: int):
    """The launching thread's core, ready for the launch (``runtime.ready_core``)."""
    core = getattr(runtime._thread_cores, "core", None)
    if core is None or (core.key is not plan.core_key and core.key != plan.core_key) or \
            core._template_costs is not plan.costs or \
            core._template_key != (compiled.num_queues, budget):
        core = runtime.ready_core(plan.core_key, platform, plan.costs, compiled.num_queues,
                                  budget)
    return core


def _run_alone(plan: NativePlan, lay: _Layout, buf, base: int, stop, native, own,
               time_limit: Optional[float] = None):
    """Every block on the launching thread (its core ``own``, whose thread record is in
    ``buf`` already, ``thread_records``): ({block: failing ctx}, warnings)."""
    run_blocks, block_dim = native[0], plan.block_dim
    core, at = own, lay.records
    # (the watchdog's stop writes the job record, which every block that starts reads,
    # and the ctx of a running block: listed without the lock, a list append is atomic)
    stop.ctxs.append(core.ctx)
    watch = runtime._WATCHDOG.watch(stop, time_limit)
    try:
        run_blocks(base, base + 8 * at)
        if buf[abi.JOB_NEXT] < block_dim or buf[at + abi.THREAD_WARNED]:
            # not every block ran in one call: warnings to collect, or Ctrl-C's handler
            # did not raise (_run_share goes on)
            warnings = _run_share(run_blocks, native[2], buf, base, at, block_dim, core,
                                  again=False)
        else:
            warnings = None
    finally:
        runtime._WATCHDOG.forget(watch)
    fault = buf[at + abi.THREAD_FAULT]
    return ({fault - 1: core.ctx.copy()} if fault else None), warnings


def _run_pool(plan, lay, buf, base: int, threads: int, stop, native, pool: "_HostPool", own,
              ready: tuple, time_limit: Optional[float] = None):
    """The launching thread (its core ``own``) and ``threads - 1`` workers of the host pool
    (its lock held; ``ready``: the workers' cores and records; every thread record already
    in ``buf``, ``thread_records``): one native call offers the workers their thread
    records, runs the launching thread's share and waits for the workers that took theirs.
    ({block: failing ctx}, warnings)."""
    launch, block_dim = native[4], plan.block_dim
    at, size = lay.records, lay.record
    stop.ctxs.append(own.ctx)
    stop.ctxs.extend(ready[4])
    args = (pool.address, base, base + 8 * at, 8 * size, threads - 1)
    pool.launches += 1
    if _getcpu is not None and not pool.launches & (CPU_CHECK_EVERY - 1):
        cpu = _getcpu()
        if cpu != pool.cpu:
            pool.keep_off(cpu)
    watch = runtime._WATCHDOG.watch(stop, time_limit)
    try:
        # (nonzero: a thread's block failed or left warnings)
        if not launch(*args) and buf[abi.JOB_NEXT] >= block_dim:
            return None, None
        cores = [own] + ready[2]
        warnings = _pool_rounds(launch, args, native[2], buf, lay, threads, block_dim, cores)
    finally:
        runtime._WATCHDOG.forget(watch)
    faults = {}
    for i, core in enumerate(cores):     # (copied while the pool's cores are this launch's)
        fault = buf[at + i * size + abi.THREAD_FAULT]
        if fault:
            faults[fault - 1] = core.ctx.copy()
    return faults, warnings


def _pool_rounds(launch, args, fired_address: int, buf, lay, threads: int, block_dim: int,
                 cores) -> list:
    """After a pool launch returned before every block ran: collect the warnings the threads'
    blocks left and launch the rest again, until every block ran, one failed or the launch
    stopped (Ctrl-C whose handler did not raise goes on, as ``_run_share`` does)."""
    warnings = []
    while True:
        warned = False
        for i, core in enumerate(cores):
            at = lay.records + i * lay.record
            if buf[at + abi.THREAD_WARNED]:
                warnings.append(core.warnings[:int(core.ctx[abi.WARN_LEN])].copy())
                buf[at + abi.THREAD_WARNED] = 0
                warned = True
        if buf[abi.JOB_STOP] or buf[abi.JOB_NEXT] >= block_dim or any(
                buf[lay.records + i * lay.record + abi.THREAD_FAULT] for i in range(threads)):
            return warnings
        if not warned:
            if not fired_address:
                return warnings
            buf[abi.JOB_FIRED_AT] = ctypes.c_int64.from_address(fired_address).value
        launch(*args)


def _run_share(run_blocks, fired_address: int, buf, base: int, at: int, block_dim: int, core,
               again: bool = True) -> list:
    """One host thread's part of a launch: blocks until none is left (its thread record at
    slot ``at`` of ``buf``, its core ``core``); the warnings its blocks recorded. ``again``
    False: the thread has called the block loop once already, look at what it left first."""
    warnings = []
    while True:
        if again:
            run_blocks(base, base + 8 * at)
        again = True
        if buf[at + abi.THREAD_WARNED]:
            warnings.append(core.warnings[:int(core.ctx[abi.WARN_LEN])].copy())
            buf[at + abi.THREAD_WARNED] = 0
        elif buf[at + abi.THREAD_FAULT] or buf[abi.JOB_STOP] or buf[abi.JOB_NEXT] >= block_dim:
            return warnings
        elif fired_address:  # Ctrl-C: Python's handler has run by now; if it did not raise, go on
            buf[abi.JOB_FIRED_AT] = ctypes.c_int64.from_address(fired_address).value
        else:
            return warnings


def _run_threads(compiled, platform, plan, lay, buf, base: int, threads: int, own_thread: bool,
                 budget: int, stop, native):
    """Run a launch's blocks on ``threads`` Python pool threads (``runtime._executor``; the
    launching thread one of them when ``own_thread``): where the runtime library has no host
    pool, or on the main thread when Ctrl-C cannot stop blocks it runs. ({block: failing
    ctx}, warnings)."""
    run_blocks, cancel_thread, fired_address = native[:3]
    faults: dict[int, np.ndarray] = {}    # block -> the ctx it failed with
    warnings: list[np.ndarray] = []
    block_dim = plan.block_dim

    def share(i: int) -> None:
        """This host thread's part of the launch: blocks until none is left."""
        core = runtime.ready_core(plan.core_key, platform, plan.costs, compiled.num_queues,
                                  budget)
        at = lay.records + i * lay.record
        lay.thread_words.pack_into(buf, 8 * (at + 1), *core.native_words)   # all but the state
        stop.register(core.ctx)
        warnings.extend(_run_share(run_blocks, fired_address, buf, base, at, block_dim, core))
        if buf[at + abi.THREAD_FAULT]:
            faults[buf[at + abi.THREAD_FAULT] - 1] = core.ctx.copy()

    watch = runtime._WATCHDOG.watch(stop)
    try:
        own = (lambda: share(0)) if own_thread else None
        futures = [(i, runtime._executor().submit(share, i))
                   for i in range(1 if own_thread else 0, threads)]

        def no_further_block():
            buf[abi.JOB_STOP] = 1

        runtime.run_and_wait(own, [_waiter(cancel_thread, base + 8 * (
            lay.records + i * lay.record), f, own is not None) for i, f in futures], stop,
            no_further_block)
    finally:
        runtime._WATCHDOG.forget(watch)
    return faults, warnings


def _raise_fault(compiled, buf, lay: _Layout, faults: dict) -> None:
    """Raise the fault of the lowest failing block (``faults``: block -> its ctx)."""
    block = min(faults)
    ctx = faults[block]
    site = int(ctx[abi.ERR_SITE])
    site_info = compiled.sites[site] if 0 <= site < len(compiled.sites) else None
    from .faults import build_fault   # (only a failing launch imports it)
    fault = build_fault(int(buf[lay.rcs + block]), site_info, int(ctx[abi.ERR_A]),
                        int(ctx[abi.ERR_B]), int(ctx[abi.ERR_C]), compiled, block, ctx)
    fault.output = ""
    raise fault


def _waiter(cancel_thread, record_address: int, future, withdraw: bool):
    """``wait(timeout)`` for ``runtime.run_and_wait``: True at once for a helper thread that is
    withdrawn before it began (only once the launching thread ran out of blocks: ``withdraw``),
    else the helper's result."""
    def wait(timeout):
        if withdraw and cancel_thread(record_address) != abi.THREAD_RUNNING:
            return True
        return future.result(timeout)
    return wait
