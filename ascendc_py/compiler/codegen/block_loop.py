"""The runtime library's block loop: a launch's blocks run without Python between them.

``asc_run_blocks(job, thread)`` is what a host thread calls (through ctypes, which releases the
GIL) to run blocks of one launch until none is left: it takes the next block with an atomic add,
copies the thread's ctx template into its ctx and writes the launch's slots (``abi.JOB_GM_PTRS``
…), points the ctx at the block's own counters and GM demand record (started as ``prepare``
starts it), makes the thread's local memories fresh, calls the kernel, and keeps the block's
ctx header and return code. It is exactly what the Python loop of ``simulator/runtime.py`` does
per block (that loop still serves sanitize mode, tracing, printing kernels and lenient mode),
so a block computes the same bits and cycles on either path.

Fresh memory: every byte of every local memory holds ``runtime.FRESH_MEMORY_BYTE`` when a block
starts, as after the Python loop's fill of the whole memory. Only the bytes an earlier block on
this core may have changed are written again: per memory, those below the furthest end any of
its instructions passed ``check_local`` with (``abi.LOCAL_REACH``; every local byte an
instruction reads or writes is checked there first, which is what keeps kernels inside their
memories), kept in the core's dirty counts (``abi.THREAD_DIRTY``; a new core's memories are allocated
fresh and count nothing, the Python loop counts the whole memory).

After a block that recorded warnings it returns (``abi.THREAD_WARNED`` names the block), so
that the caller collects them from the ctx's buffer before calling it again. It stops taking
blocks when a block fails (that thread's ctx keeps the failing state, the thread record names
the block; other threads stop before their next block) or when the SIGINT handler fired since
the launch began (the caller raises KeyboardInterrupt, or calls it again). A stop of the launch
(``abi.JOB_STOP_BUDGET``: the watchdog, Ctrl-C seen in Python) goes into the loop budget of
every block that starts after it, as the Python loop does; ``abi.JOB_STOP`` ends the loop.
``asc_cancel_thread(thread)`` lets the launching thread withdraw a helper thread's share before
that thread started (it returns the record's previous state): a launch whose blocks the
launching thread already ran does not wait for a pool thread to wake up. Record layouts:
``simulator/abi.py`` (JOB_*, THREAD_*); the job record's arrays are byte offsets from it.

The host pool (Linux on x86-64 and AArch64: futexes through ``syscall``): worker threads wait
in ``asc_pool_serve`` and a launch is one call of ``asc_pool_launch``, which offers the
workers their thread records (a per-worker slot in the pool record, ``abi.POOL_*``), wakes
them with one futex wake, runs the launching thread's share, withdraws every offer still
untaken (so it never waits for a worker that is not running) and sleeps on the slots of the
workers that took one, writing a Ctrl-C or watchdog stop into their ctx again every
STOP_REPEAT_NS meanwhile. Both spin POOL_SPIN ns before they sleep.
"""
from __future__ import annotations

from llvmlite import ir as L

from ...simulator import abi
from . import runtime_lib
from .types import F64, I1, I8, I64, PTR, counted_loop, intrinsic

RUN_BLOCKS = "asc_run_blocks"
CANCEL_THREAD = "asc_cancel_thread"
POOL_SERVE = "asc_pool_serve"
POOL_LAUNCH = "asc_pool_launch"
#: the byte fresh local memory holds (simulator/runtime.py's FRESH_MEMORY_BYTE)
FRESH_MEMORY_BYTE = 0xFF


def _i(value: int) -> L.Constant:
    return L.Constant(I64, value)


class _Record:
    """Loads and stores of one int64 record's slots."""

    def __init__(self, b: L.IRBuilder, base):
        self.b, self.base = b, base

    def ptr(self, slot, index=None):
        b = self.base if index is None else self.b.gep(self.base, [index], source_etype=I64)
        return self.b.gep(b, [_i(slot) if isinstance(slot, int) else slot], source_etype=I64)

    def load(self, slot) -> L.Value:
        return self.b.load(self.ptr(slot), typ=I64)

    def load_atomic(self, slot) -> L.Value:
        return self.b.load_atomic(self.ptr(slot), "monotonic", 8, typ=I64)

    def store(self, slot, value) -> None:
        self.b.store(value, self.ptr(slot))


def _as_ptr(b: L.IRBuilder, address) -> L.Value:
    return b.inttoptr(address, PTR)


@runtime_lib.library_definer
def define(module: L.Module) -> list[str]:
    """``asc_run_blocks`` and ``asc_cancel_thread`` (see the module docstring), and where the
    host has futexes the pool's ``asc_pool_serve`` and ``asc_pool_launch``."""
    _define_cancel(module)
    run = _define_run(module)
    futex = _futex_target()
    if futex is None:
        return [RUN_BLOCKS, CANCEL_THREAD]
    _define_pool(module, run, *futex)
    return [RUN_BLOCKS, CANCEL_THREAD, POOL_SERVE, POOL_LAUNCH]


def _define_cancel(module: L.Module) -> None:
    fn = L.Function(module, L.FunctionType(I64, [PTR]), name=CANCEL_THREAD)
    fn.attributes.add("nounwind")
    b = L.IRBuilder(fn.append_basic_block("entry"))
    thread = _Record(b, fn.args[0])
    pair = b.cmpxchg(thread.ptr(abi.THREAD_STATE), _i(abi.THREAD_WAITING),
                     _i(abi.THREAD_CANCELLED), "acq_rel", "monotonic")
    b.ret(b.extract_value(pair, 0))


def _define_run(module: L.Module) -> None:
    fn = L.Function(module, L.FunctionType(I64, [PTR, PTR]), name=RUN_BLOCKS)
    memcpy = intrinsic(module, "llvm.memcpy.p0.p0.i64", L.VoidType(), [PTR, PTR, I64, I1])
    memset = intrinsic(module, "llvm.memset.p0.i64", L.VoidType(), [PTR, I8, I64, I1])
    kernel_type = L.FunctionType(I64, [PTR]).as_pointer()
    entry, start, head, take, run, failed, check_warnings, warned, next_, leave = (
        fn.append_basic_block(n) for n in ("entry", "start", "head", "take", "run", "failed",
                                           "check_warnings", "warned", "next", "leave"))
    b = L.IRBuilder(entry)
    job, thread = _Record(b, fn.args[0]), _Record(b, fn.args[1])
    pair = b.cmpxchg(thread.ptr(abi.THREAD_STATE), _i(abi.THREAD_WAITING),
                     _i(abi.THREAD_RUNNING), "acq_rel", "monotonic")
    b.cbranch(b.icmp_signed("==", b.extract_value(pair, 0), _i(abi.THREAD_CANCELLED)),
              leave, start)

    b.position_at_end(start)
    kernel = b.inttoptr(job.load(abi.JOB_KERNEL), kernel_type)
    block_dim = job.load(abi.JOB_BLOCK_DIM)
    ctx = _as_ptr(b, thread.load(abi.THREAD_CTX))
    template = _as_ptr(b, thread.load(abi.THREAD_TEMPLATE))
    ctx_bytes = b.mul(thread.load(abi.THREAD_CTX_SLOTS), _i(8))
    memories = thread.load(abi.THREAD_MEMORIES)
    fired = job.load(abi.JOB_FIRED)
    fired_at = job.load(abi.JOB_FIRED_AT)
    job_base = b.ptrtoint(fn.args[0], I64)

    def in_job(field) -> L.Value:
        """The address of a part of the launch's buffer (the record holds its byte offset)."""
        return b.add(job_base, job.load(field))

    headers = _as_ptr(b, in_job(abi.JOB_HEADERS))
    counters = in_job(abi.JOB_COUNTERS)
    counter_bytes = b.mul(job.load(abi.JOB_COUNTER_SLOTS), _i(8))
    demand = in_job(abi.JOB_DEMAND)
    demand_bytes = b.mul(job.load(abi.JOB_DEMAND_SLOTS), _i(8))
    rcs = _as_ptr(b, in_job(abi.JOB_RC))
    launch_slots = [(abi.GM_PTRS, in_job(abi.JOB_GM_PTRS)),
                    (abi.GM_SIZES, in_job(abi.JOB_GM_SIZES)),
                    (abi.SCALARS, in_job(abi.JOB_SCALARS))] + [
        (slot, job.load(field)) for slot, field in (
            (abi.LOOP_BUDGET, abi.JOB_LOOP_BUDGET), (abi.TIMING_ON, abi.JOB_TIMING_ON),
            (abi.GM_ACCESS, abi.JOB_GM_ACCESS))]
    gm_sizes = _as_ptr(b, launch_slots[1][1])
    gm_count = job.load(abi.JOB_GM_COUNT)
    b.branch(head)

    def interrupted() -> L.Value:
        """True once the SIGINT handler has fired since the launch began."""
        with b.if_else(b.icmp_signed("!=", fired, _i(0))) as (then, otherwise):
            with then:
                now = b.load_atomic(_as_ptr(b, fired), "monotonic", 8, typ=I64)
                differs = b.icmp_signed("!=", now, fired_at)
                then_block = b.block
            with otherwise:
                else_block = b.block
        changed = b.phi(I1)
        changed.add_incoming(differs, then_block)
        changed.add_incoming(L.Constant(I1, 0), else_block)
        return changed

    # head: no further block once a block failed or Ctrl-C fired (after a stop of the watchdog
    # blocks still start, with the stop's loop budget, as in runtime.py's Python loop)
    b.position_at_end(head)
    count = b.phi(I64)
    count.add_incoming(_i(0), start)
    stopping = b.or_(b.icmp_signed("!=", job.load_atomic(abi.JOB_STOP), _i(0)), interrupted())
    head_exit = b.block
    b.cbranch(stopping, leave, take)

    b.position_at_end(take)
    block = b.atomic_rmw("add", job.ptr(abi.JOB_NEXT), _i(1), "monotonic")
    b.cbranch(b.icmp_signed(">=", block, block_dim), leave, run)

    # run: the block's ctx, fresh memories, the kernel, its header and return code kept
    b.position_at_end(run)
    b.call(memcpy, [ctx, template, ctx_bytes, L.Constant(I1, 0)])
    ctx_rec = _Record(b, ctx)
    ctx_rec.store(abi.BLOCK_IDX, block)
    ctx_rec.store(abi.BLOCK_NUM, block_dim)
    for slot, value in launch_slots:
        ctx_rec.store(slot, value)
    ctx_rec.store(abi.COUNTERS, b.add(counters, b.mul(block, counter_bytes)))
    row = b.add(demand, b.mul(block, demand_bytes))
    ctx_rec.store(abi.GM_DEMAND, row)
    _start_demand_record(b, _as_ptr(b, row), gm_sizes, gm_count)
    _fill_memories(b, thread, memories, memset)
    stop_budget = job.load_atomic(abi.JOB_STOP_BUDGET)
    with b.if_then(b.icmp_signed("!=", stop_budget, _i(0))):
        ctx_rec.store(abi.LOOP_BUDGET, stop_budget)
    with b.if_then(interrupted()):
        ctx_rec.store(abi.LOOP_BUDGET, _i(abi.INTERRUPT_BUDGET))
    rc = b.call(kernel, [ctx])
    _note_dirty(b, thread, memories, ctx_rec.load(abi.LOCAL_REACH))
    header_bytes = abi.HEADER_SLOTS * 8
    row = b.gep(headers, [b.mul(block, _i(abi.HEADER_SLOTS))], source_etype=I64)
    b.call(memcpy, [row, ctx, _i(header_bytes), L.Constant(I1, 0)])
    b.store(rc, b.gep(rcs, [block], source_etype=I64))
    b.cbranch(b.icmp_signed("!=", rc, _i(0)), failed, check_warnings)

    b.position_at_end(check_warnings)   # warnings: back to Python, which collects them
    b.cbranch(b.icmp_signed("!=", ctx_rec.load(abi.WARN_LEN), _i(0)), warned, next_)

    b.position_at_end(warned)
    thread.store(abi.THREAD_WARNED, b.add(block, _i(1)))
    ran_warned = b.add(count, _i(1))
    b.branch(leave)

    b.position_at_end(failed)    # this thread stops here; the others before their next block
    thread.store(abi.THREAD_FAULT, b.add(block, _i(1)))
    b.cmpxchg(job.ptr(abi.JOB_STOP), _i(0), _i(1), "acq_rel", "monotonic")
    ran = b.add(count, _i(1))
    b.branch(leave)

    b.position_at_end(next_)
    count.add_incoming(b.add(count, _i(1)), next_)
    b.branch(head)

    b.position_at_end(leave)
    result = b.phi(I64)
    result.add_incoming(_i(0), entry)
    for block_from in (head_exit, take):
        result.add_incoming(count, block_from)
    result.add_incoming(ran, failed)
    result.add_incoming(ran_warned, warned)
    b.ret(result)
    return fn


def _fill_memories(b: L.IRBuilder, thread: _Record, memories, memset) -> None:
    """Make the thread's local memories fresh: every byte FRESH_MEMORY_BYTE. Only the bytes
    earlier blocks may have changed are written (``abi.THREAD_DIRTY``); the rest hold it."""
    dirty = _as_ptr(b, thread.load(abi.THREAD_DIRTY))

    def fill(m):
        base = _as_ptr(b, thread.load(b.add(_i(abi.THREAD_MEMORY), b.mul(m, _i(2)))))
        count = b.gep(dirty, [m], source_etype=I64)
        b.call(memset, [base, L.Constant(I8, FRESH_MEMORY_BYTE), b.load(count, typ=I64),
                        L.Constant(I1, 0)])
        b.store(_i(0), count)
    counted_loop(b, memories, fill, "fill")


def _note_dirty(b: L.IRBuilder, thread: _Record, memories, reach) -> None:
    """After a block (failed or not): the bytes it may have changed in each local memory are
    those below ``reach`` (``abi.LOCAL_REACH``: no instruction passed check_local past it)."""
    dirty = _as_ptr(b, thread.load(abi.THREAD_DIRTY))
    reach = b.select(b.icmp_signed("<", reach, _i(0)), _i(0), reach)

    def note(m):
        size = thread.load(b.add(_i(abi.THREAD_MEMORY + 1), b.mul(m, _i(2))))
        within = b.select(b.icmp_signed("<", reach, size), reach, size)
        b.store(within, b.gep(dirty, [m], source_etype=I64))
    counted_loop(b, memories, note, "dirty")


def _start_demand_record(b: L.IRBuilder, row, gm_sizes, gm_count) -> None:
    """A block's (zeroed) GM demand record gets its window width and the GM arguments' sizes,
    as ``runtime._Core.prepare`` writes them."""
    b.store(L.Constant(F64, abi.DEMAND_BASE_WIDTH),
            b.gep(row, [_i(abi.DEMAND_WIDTH)], source_etype=F64))

    def size_of(a):
        size = b.load(b.gep(gm_sizes, [a], source_etype=I64), typ=I64)
        slot = b.add(_i(abi.DEMAND_ARGS), b.add(gm_count, a))
        b.store(b.sitofp(size, F64), b.gep(row, [slot], source_etype=F64))
    counted_loop(b, gm_count, size_of, "sizes")


# ----------------------------------------------------------------------------- host-thread pool
FUTEX_WAIT_PRIVATE, FUTEX_WAKE_PRIVATE = 128, 129
CLOCK_MONOTONIC = 1


def _futex_target():
    """(futex syscall number, spin-wait hint intrinsic, its arguments) on a little-endian Linux
    host the pool supports (a futex is the low 32 bits of an int64 slot), else None."""
    import platform
    import sys
    if not sys.platform.startswith("linux") or sys.byteorder != "little":
        return None
    machine = platform.machine().lower()
    if machine in ("x86_64", "amd64"):
        return 202, "llvm.x86.sse2.pause", ()
    if machine in ("aarch64", "arm64"):
        return 98, "llvm.aarch64.hint", (1,)      # hint #1: yield
    return None


def _define_pool(module: L.Module, run_blocks, sys_futex: int, hint: str, hint_args) -> None:
    """``asc_pool_serve(pool, k)``: worker ``k``'s loop, which never returns: it sleeps on the
    pool record's POOL_GEN until a launch offers it work (its slot POOL_OFFERED), claims it
    (POOL_RUNNING), runs ``asc_run_blocks`` on the offered job and thread record, and sets
    its slot POOL_IDLE again (waking the launching thread if it sleeps on it). After a launch
    it spins POOL_SPIN ns (pause instructions) before it sleeps, for the next launch.

    ``asc_pool_launch(pool, job, first_record, record_bytes, workers)``: offer the thread
    records after ``first_record`` to ``workers`` workers, wake them (one futex wake), run the
    first record's share on the calling thread, then withdraw every offer not claimed yet and
    wait for the workers that claimed one. When it returns no worker touches the job; it
    returns nonzero when a thread record has THREAD_FAULT or THREAD_WARNED set."""
    syscall = module.globals.get("syscall") or L.Function(
        module, L.FunctionType(I64, [I64], var_arg=True), name="syscall")
    hint_fn = intrinsic(module, hint, L.VoidType(), [L.IntType(32)] * len(hint_args))
    null = L.Constant(PTR, None)

    def futex(b, address, op, value, timeout=null):
        b.call(syscall, [_i(sys_futex), address, _i(op), value, timeout, null, _i(0)])

    def pause(b):
        b.call(hint_fn, [L.Constant(L.IntType(32), a) for a in hint_args])

    clock_gettime = module.globals.get("clock_gettime") or L.Function(
        module, L.FunctionType(L.IntType(32), [L.IntType(32), PTR]), name="clock_gettime")

    def clock(b):
        """A ``now(b)`` reading CLOCK_MONOTONIC in ns (its timespec on the caller's stack)."""
        ts = b.alloca(L.ArrayType(I64, 2))

        def now(b):
            b.call(clock_gettime, [L.Constant(L.IntType(32), CLOCK_MONOTONIC), ts])
            sec = b.load(b.gep(ts, [_i(0), L.Constant(L.IntType(32), 0)]), typ=I64)
            nsec = b.load(b.gep(ts, [_i(0), L.Constant(L.IntType(32), 1)]), typ=I64)
            return b.add(b.mul(sec, _i(1_000_000_000)), nsec)
        return now

    def slot_ptr(b, pool, k, field):
        return pool.ptr(b.add(_i(abi.POOL_SLOTS + field), b.mul(k, _i(abi.POOL_SLOT))))

    # --- the worker
    fn = L.Function(module, L.FunctionType(L.VoidType(), [PTR, I64]), name=POOL_SERVE)
    fn.attributes.add("nounwind")
    entry, offer, claimed, finished, wake_launcher, wait, spin, sleep = (
        fn.append_basic_block(n) for n in ("entry", "offer", "claimed", "finished",
                                           "wake_launcher", "wait", "spin", "sleep"))
    b = L.IRBuilder(entry)
    pool = _Record(b, fn.args[0])
    k = fn.args[1]
    seen = b.alloca(I64)
    deadline = b.alloca(I64)
    now = clock(b)
    gen = pool.ptr(abi.POOL_GEN)
    b.store(b.and_(b.load_atomic(gen, "seq_cst", 8, typ=I64), _i(0xFFFFFFFF)), seen)
    b.branch(offer)

    b.position_at_end(offer)        # claim the slot if a launch offered it
    state = slot_ptr(b, pool, k, abi.SLOT_STATE)
    pair = b.cmpxchg(state, _i(abi.POOL_OFFERED), _i(abi.POOL_RUNNING), "seq_cst", "seq_cst")
    b.store(b.add(now(b), pool.load(abi.POOL_SPIN)), deadline)
    b.cbranch(b.extract_value(pair, 1), claimed, wait)

    b.position_at_end(claimed)
    job = b.load(slot_ptr(b, pool, k, abi.SLOT_JOB), typ=I64)
    record = b.load(slot_ptr(b, pool, k, abi.SLOT_RECORD), typ=I64)
    b.call(run_blocks, [_as_ptr(b, job), _as_ptr(b, record)])
    b.branch(finished)

    b.position_at_end(finished)
    was = b.atomic_rmw("xchg", state, _i(abi.POOL_IDLE), "seq_cst")
    # the spin for the next launch counts from the end of this one's share (from the claim,
    # a share longer than POOL_SPIN left none, and the next launch had to wake it)
    b.store(b.add(now(b), pool.load(abi.POOL_SPIN)), deadline)
    b.cbranch(b.icmp_signed("==", was, _i(abi.POOL_SLEEPING)), wake_launcher, wait)

    b.position_at_end(wake_launcher)
    futex(b, state, FUTEX_WAKE_PRIVATE, _i(1))
    b.branch(wait)

    b.position_at_end(wait)         # a new launch since the last look: see whether it offers
    current = b.and_(b.load_atomic(gen, "seq_cst", 8, typ=I64), _i(0xFFFFFFFF))
    old = b.load(seen, typ=I64)
    b.store(current, seen)
    b.cbranch(b.icmp_signed("!=", current, old), offer, spin)

    b.position_at_end(spin)
    with b.if_then(b.icmp_signed("<", now(b), b.load(deadline, typ=I64))):
        pause(b)
        b.branch(wait)
    b.branch(sleep)

    b.position_at_end(sleep)        # (returns at once if POOL_GEN moved on since `seen`)
    futex(b, gen, FUTEX_WAIT_PRIVATE, b.load(seen, typ=I64))
    b.branch(wait)

    # --- the launching thread
    fn = L.Function(module, L.FunctionType(I64, [PTR, PTR, PTR, I64, I64]), name=POOL_LAUNCH)
    fn.attributes.add("nounwind")
    pool_arg, job_arg, first, record_bytes, workers = fn.args
    b = L.IRBuilder(fn.append_basic_block("entry"))
    pool = _Record(b, pool_arg)
    timeout = b.alloca(L.ArrayType(I64, 2))       # struct timespec: STOP_REPEAT_NS
    flags = b.alloca(I64)
    b.store(_i(0), b.gep(timeout, [_i(0), L.Constant(L.IntType(32), 0)]))
    b.store(_i(STOP_REPEAT_NS), b.gep(timeout, [_i(0), L.Constant(L.IntType(32), 1)]))
    now = clock(b)
    first_address = b.ptrtoint(first, I64)
    job_address = b.ptrtoint(job_arg, I64)

    def offer_to(w):
        b.store(job_address, slot_ptr(b, pool, w, abi.SLOT_JOB))
        b.store(b.add(first_address, b.mul(b.add(w, _i(1)), record_bytes)),
                slot_ptr(b, pool, w, abi.SLOT_RECORD))
        b.atomic_rmw("xchg", slot_ptr(b, pool, w, abi.SLOT_STATE), _i(abi.POOL_OFFERED),
                     "seq_cst")
    counted_loop(b, workers, offer_to, "offer")
    gen = pool.ptr(abi.POOL_GEN)
    b.atomic_rmw("add", gen, _i(1), "seq_cst")
    futex(b, gen, FUTEX_WAKE_PRIVATE, workers)
    b.call(run_blocks, [job_arg, first])

    job = _Record(b, job_arg)

    def gather(w):
        state = slot_ptr(b, pool, w, abi.SLOT_STATE)
        pair = b.cmpxchg(state, _i(abi.POOL_OFFERED), _i(abi.POOL_IDLE), "seq_cst", "seq_cst")
        with b.if_then(b.icmp_signed("!=", b.extract_value(pair, 0), _i(abi.POOL_OFFERED))):
            record = _Record(b, _as_ptr(b, b.load(slot_ptr(b, pool, w, abi.SLOT_RECORD),
                                                  typ=I64)))
            _await_idle(b, state, now, pool.load(abi.POOL_SPIN), pause,
                        lambda b: futex(b, state, FUTEX_WAIT_PRIVATE, _i(abi.POOL_SLEEPING),
                                        timeout),
                        lambda b: _repeat_stop(b, job, record))
    counted_loop(b, workers, gather, "gather")
    b.store(_i(0), flags)        # any thread record's FAULT or WARNED set: Python looks

    def look(t):
        record = _Record(b, b.inttoptr(b.add(first_address, b.mul(t, record_bytes)), PTR))
        b.store(b.or_(b.load(flags, typ=I64), b.or_(record.load(abi.THREAD_FAULT),
                                                     record.load(abi.THREAD_WARNED))), flags)
    counted_loop(b, b.add(workers, _i(1)), look, "look")
    b.ret(b.load(flags, typ=I64))


#: while the launching thread sleeps on a worker, it wakes this often to repeat a stop
STOP_REPEAT_NS = 10_000_000


def _repeat_stop(b: L.IRBuilder, job: _Record, record: _Record) -> None:
    """Write the launch's stop into a worker's ctx again (a stop of the watchdog or Ctrl-C
    since the launch began): a block may overwrite one stop with its own loop budget store
    (``spend_iteration`` loads, decrements and stores it), as ``runtime.run_and_wait``
    repeats it for Python's pool threads."""
    budget = job.load_atomic(abi.JOB_STOP_BUDGET)
    fired = job.load(abi.JOB_FIRED)
    slot = b.gep(_as_ptr(b, record.load(abi.THREAD_CTX)), [_i(abi.LOOP_BUDGET)],
                 source_etype=I64)
    with b.if_then(b.icmp_signed("!=", budget, _i(0))):
        b.store(budget, slot)
    with b.if_then(b.icmp_signed("!=", fired, _i(0))):
        now = b.load_atomic(_as_ptr(b, fired), "monotonic", 8, typ=I64)
        with b.if_then(b.and_(b.icmp_signed("!=", now, job.load(abi.JOB_FIRED_AT)),
                              b.icmp_signed("==", budget, _i(0)))):
            b.store(_i(abi.INTERRUPT_BUDGET), slot)


def _await_idle(b: L.IRBuilder, state, now, spin_ns, pause, sleep_on, on_wake) -> None:
    """Wait until a worker's slot is POOL_IDLE: spin up to ``spin_ns`` (``now``: the clock in
    ns), then mark it POOL_SLEEPING (the worker wakes us when it finishes) and sleep on it
    (``sleep_on``: a futex wait with a timeout), calling ``on_wake`` whenever the wait ends
    before it is idle."""
    fn = b.block.function
    spin, check, wait, sleep, done = (fn.append_basic_block(n) for n in (
        "await.spin", "await.check", "await.pause", "await.sleep", "await.done"))
    deadline = b.add(now(b), spin_ns)
    b.branch(spin)
    b.position_at_end(spin)
    idle = b.icmp_signed("==", b.load_atomic(state, "seq_cst", 8, typ=I64), _i(abi.POOL_IDLE))
    b.cbranch(idle, done, check)
    b.position_at_end(check)
    b.cbranch(b.icmp_signed("<", now(b), deadline), wait, sleep)
    b.position_at_end(wait)
    pause(b)
    b.branch(spin)
    b.position_at_end(sleep)
    # RUNNING -> SLEEPING (the worker's xchg to IDLE then sees it and wakes us); if it went
    # IDLE meanwhile the exchange fails and the wait below returns at once
    b.cmpxchg(state, _i(abi.POOL_RUNNING), _i(abi.POOL_SLEEPING), "seq_cst", "seq_cst")
    sleep_on(b)
    woken = fn.append_basic_block("await.woken")
    b.cbranch(b.icmp_signed("==", b.load_atomic(state, "seq_cst", 8, typ=I64),
                            _i(abi.POOL_IDLE)), done, woken)
    b.position_at_end(woken)
    on_wake(b)
    b.branch(sleep)
    b.position_at_end(done)
