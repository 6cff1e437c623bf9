"""Runtime functions of the native library: bounds checks, queues, flags.

Each is ``i64 asc_rt_<name>(ptr ctx, i64 args…, i64 site)``, returns 0 or an error code (having
stored the code, the site and details in ctx), and is defined once in the runtime library
(``runtime_lib.py``) so kernel modules stay small. Results (buffer address, bytes, tag) are
returned in ctx slots ``RES0..RES2``.
"""
from __future__ import annotations

from typing import Callable

from llvmlite import ir as L

from ...dsl.types import EVENT_IDS_PER_EVENT, PipeID
from ...simulator import abi
from .core import FnBuilder, counted_loop
from .types import I1, I64, I8, PTR, intrinsic

E = abi.ErrorCode
ALIGN = 32

#: name → (parameter names after ctx and before site, builder)
RT_FUNCTIONS: dict[str, tuple[tuple[str, ...], Callable]] = {}
#: runtime functions inlined into their callers in the library: the operand checks that every
#: vector instruction and copy makes, whose callers pass constants for most arguments
RT_INLINE = {"check_local"}


def cold(func: L.Function) -> L.Function:
    """Compile ``func`` without optimisation (``optnone``): for large generated per-op wrappers
    (the masked vector op forms), so their shards build quickly; the element loops they call
    stay O3-vectorised."""
    func.attributes.add("noinline")
    func.attributes.add("optnone")
    return func


def rt(*params: str):
    def deco(fn):
        RT_FUNCTIONS[fn.__name__] = (params, fn)
        return fn
    return deco


def rt_signature(name: str) -> L.FunctionType:
    params, _ = RT_FUNCTIONS[name]
    return L.FunctionType(I64, [PTR] + [I64] * (len(params) + 1))


def define_all(module: L.Module, names=None) -> None:
    """Define the runtime functions ``names`` (default: all) in ``module``."""
    for name in RT_FUNCTIONS if names is None else names:
        params, body = RT_FUNCTIONS[name]
        func = module.globals.get(f"asc_rt_{name}")  # possibly declared by an earlier caller
        if func is None:
            func = L.Function(module, rt_signature(name), name=f"asc_rt_{name}")
        func.attributes.add("nounwind")
        if name in RT_INLINE:
            func.attributes.add("alwaysinline")
        fb = FnBuilder(module, func)
        args = dict(zip(params + ("site",), func.args[1:]))
        body(fb, **args)
        if not fb.b.block.is_terminated:
            fb.b.ret(fb.i64(0))
        fb.finish()


WARN_FIELDS = 5  # kind, site, a, b, c
WARN_GM_SLACK, WARN_TRUNCATED, WARN_LATE_SET, WARN_FLAG_LEFT_SET = 0, 1, 2, 3
WARN_TENSOR_SLACK, WARN_LENIENT_ASSERT = 4, 5   # lenient mode: past a LocalTensor; a growth


def warn(fb: FnBuilder, kind: int, site, a, b_=None, c=None) -> None:
    """Record a warning (the runtime turns each into a KernelWarning naming the line)."""
    b = fb.b
    n = fb.ld(abi.WARN_LEN)
    with b.if_then(b.icmp_signed("<", n, fb.ld(abi.WARN_CAP))):
        buf = fb.ctx_ptr(abi.WARN_PTR)
        for k, v in enumerate((fb.i64(kind), site, a, b_ or fb.i64(0), c or fb.i64(0))):
            b.store(fb._as_i64(v), b.gep(buf, [b.add(b.mul(n, fb.i64(WARN_FIELDS)), fb.i64(k))],
                                         source_etype=I64))
        fb.st(abi.WARN_LEN, b.add(n, fb.i64(1)))


def _res(fb: FnBuilder, *values) -> None:
    for k, v in enumerate(values):
        fb.st(abi.RES0 + k, v)


# ----------------------------------------------------------------------------- bounds checks
@rt("mem", "addr", "nbytes", "aligned", "which")
def check_local(fb: FnBuilder, mem, addr, nbytes, aligned, which, site):
    """[addr, addr+nbytes) must lie in local memory ``mem`` and, when the instruction gave
    operand ``which`` a tensor window (``abi.TWIN``), inside that LocalTensor; addr 32-B
    aligned if asked. ``mem`` must exist on this sub-core (base address not 0), except for
    ``aligned`` == 2: placing a static LocalTensor is bookkeeping, as on hardware (each core
    type compiles the kernel separately). Overflow-safe: the end saturates."""
    b = fb.b
    absent = b.and_(b.icmp_signed("==", fb.ld(b.add(fb.i64(abi.MEM_BASE), mem)), fb.i64(0)),
                    b.icmp_signed("!=", aligned, fb.i64(2)))
    fb.st(abi.ERR_D, b.add(which, b.mul(mem, fb.i64(256))))
    fb.fail_with(absent, E.MEMORY_NOT_ON_CORE, site, mem, fb.ld(abi.CORE_TYPE))
    limit = fb.ld(b.add(fb.i64(abi.MEM_SIZE), mem))
    end = fb.sat_add(addr, nbytes)
    fb.fail_with(b.icmp_signed("<", nbytes, fb.i64(0)), E.LOCAL_OUT_OF_RANGE, site, addr, end,
                 limit)
    # the tensor the instruction was given (before the memory: it names the real mistake)
    w = b.and_(which, fb.i64(abi.MAX_WINDOWS - 1))
    has = b.and_(b.and_(b.icmp_signed("<", which, fb.i64(abi.MAX_WINDOWS)),
                        b.icmp_signed("!=", aligned, fb.i64(2))),
                 b.icmp_signed("!=", b.and_(b.ashr(fb.ld(abi.TWIN_MASK), w), fb.i64(1)),
                               fb.i64(0)))
    with b.if_then(has):
        lo = fb.ld(b.add(fb.i64(abi.TWIN), b.mul(w, fb.i64(2))))
        hi = fb.ld(b.add(fb.i64(abi.TWIN + 1), b.mul(w, fb.i64(2))))
        outside = b.and_(b.icmp_signed(">", nbytes, fb.i64(0)),
                         b.or_(b.icmp_signed("<", addr, lo), b.icmp_signed(">", end, hi)))
        # lenient mode: past the tensor but inside the memory (checked next) is a warning, as
        # the device uses whatever buffer follows (a: operand + 256·memory + 65536·tensor
        # bytes; b, c: the bytes used, relative to the tensor)
        lenient = b.icmp_signed("!=", fb.ld(abi.LENIENT), fb.i64(0))
        with b.if_then(b.and_(outside, lenient)):
            packed = b.add(b.add(b.and_(which, fb.i64(255)), b.mul(mem, fb.i64(256))),
                           b.shl(b.sub(hi, lo), fb.i64(16)))
            warn(fb, WARN_TENSOR_SLACK, site, packed, b.sub(addr, lo),
                 fb.sat_add(b.sub(addr, lo), nbytes))
        fb.fail_with(b.and_(outside, b.xor(lenient, L.Constant(I1, 1))), E.TENSOR_EXTENT, site,
                     b.sub(addr, lo), fb.sat_add(b.sub(addr, lo), nbytes), b.sub(hi, lo))
    fb.fail_with(b.or_(b.icmp_signed("<", addr, fb.i64(0)), b.icmp_signed(">", end, limit)),
                 E.LOCAL_OUT_OF_RANGE, site, addr, end, limit)
    mis = b.and_(b.icmp_signed("!=", aligned, fb.i64(0)),
                 b.icmp_signed("!=", b.and_(addr, fb.i64(ALIGN - 1)), fb.i64(0)))
    fb.fail_with(mis, E.LOCAL_MISALIGNED, site, addr, aligned)
    # every local byte an instruction touches passed here: the native block loop refills
    # fresh memory only below the furthest end (abi.LOCAL_REACH, block_loop.py)
    fb.st(abi.LOCAL_REACH, fb.smax(fb.ld(abi.LOCAL_REACH), end))


@rt("arg", "start", "nbytes", "elem_size", "which")
def check_gm(fb: FnBuilder, arg, start, nbytes, elem_size, which, site):
    """Bytes [start, start+nbytes) of GM argument ``arg`` must lie inside its buffer."""
    b = fb.b
    fb.st(abi.ERR_D, which)
    fb.fail_with(b.icmp_signed("<", arg, fb.i64(0)), E.GM_UNSET, site)
    # the source of a DMA: its bytes count as reads of this argument (timing_gm.py)
    fb.st(abi.GM_READ_ARG, b.select(b.icmp_signed("==", which, fb.i64(1)), arg,
                                    fb.ld(abi.GM_READ_ARG)))
    sizes = fb.ctx_ptr(abi.GM_SIZES)
    limit = b.load(b.gep(sizes, [arg], source_etype=I64), typ=I64)
    end = fb.sat_add(start, nbytes)
    bad = b.or_(b.or_(b.icmp_signed("<", start, fb.i64(0)), b.icmp_signed("<", nbytes,
                                                                            fb.i64(0))),
                b.icmp_signed(">", end, limit))
    with b.if_then(bad, likely=False):   # (the element range is divided out only here)
        first = b.sdiv(start, elem_size)
        last = b.sdiv(fb.sat_add(end, b.sub(elem_size, fb.i64(1))), elem_size)
        # lenient mode: an overrun into the device-like slack is recorded as a warning
        slack_ok = b.and_(b.icmp_signed("!=", fb.ld(abi.LENIENT), fb.i64(0)),
                          b.and_(b.icmp_signed(">=", start, fb.i64(0)),
                                 b.icmp_signed("<=", end,
                                               fb.sat_add(limit, fb.ld(abi.GM_SLACK)))))
        with b.if_then(slack_ok):
            warn(fb, WARN_GM_SLACK, site, arg, first, last)
        fb.st(abi.ERR_D, which)
        fb.fail_with(b.xor(slack_ok, L.Constant(I1, 1)), E.GM_OUT_OF_BOUNDS, site, arg,
                     first, last)
    fb.st(abi.ERR_D, which)


def call_rt(fb: FnBuilder, name: str, *args) -> None:
    """From inside the library: call another runtime function and pass its failure on."""
    fn = fb.module.globals.get(f"asc_rt_{name}") or L.Function(
        fb.module, rt_signature(name), name=f"asc_rt_{name}")
    fb.leave_on_error(fb.b.call(fn, [fb.ctx] + [fb._as_i64(a) for a in args]))


def call_tm(fb: FnBuilder, name: str, *args) -> None:
    """Call a timing function (they keep books only when ctx[TIMING_ON] is set)."""
    from .timing import declare_tm
    fb.b.call(declare_tm(fb.module, name), [fb.ctx] + [fb._as_i64(a) for a in args])


def operand_pointer(fb: FnBuilder, mem, a, off_bytes, nbytes, esize, which, aligned, site):
    """Check an operand (GM: mem 0, a = argument; local: a = byte address) and return a pointer
    to ``off_bytes`` into it."""
    b = fb.b
    is_gm = b.icmp_signed("==", mem, fb.i64(0))
    result = fb.alloca_builder.alloca(I64, name="operand")
    with b.if_else(is_gm) as (gm, local):
        with gm:
            call_rt(fb, "check_gm", a, off_bytes, nbytes, esize, which, site)
            base = b.load(b.gep(fb.ctx_ptr(abi.GM_PTRS), [a], source_etype=I64), typ=I64)
            b.store(b.add(base, off_bytes), result)
        with local:
            addr = fb.sat_add(a, off_bytes)
            call_rt(fb, "check_local", mem, addr, nbytes, aligned, which, site)
            base = fb.ld(b.add(fb.i64(abi.MEM_BASE), mem))
            b.store(b.add(base, addr), result)
    return b.inttoptr(b.load(result, typ=I64), PTR)


@rt("kind", "lo", "hi", "lanes")
def set_vector_mask(fb: FnBuilder, kind, lo, hi, lanes, site):
    """Normal mode: a contiguous length (kind 0) or (high, low) bit words; counter mode: the
    element count (the length, or mask_low)."""
    b = fb.b
    counter = b.icmp_signed("!=", fb.ld(abi.MASK_MODE), fb.i64(0))
    contiguous = b.icmp_signed("==", kind, fb.i64(0))
    bad = b.and_(b.and_(contiguous, b.xor(counter, L.Constant(I1, 1))),
                 b.or_(b.icmp_signed("<", lo, fb.i64(1)), b.icmp_signed(">", lo, lanes)))
    fb.fail_with(bad, E.MASK_RANGE, site, lo, lanes)
    c_lo, c_hi = lanes_mask(fb, lo)
    normal_contig = b.and_(contiguous, b.xor(counter, L.Constant(I1, 1)))
    fb.st(abi.MASK_LO, b.select(normal_contig, c_lo, lo))
    fb.st(abi.MASK_HI, b.select(normal_contig, c_hi, b.select(counter, fb.i64(0), hi)))


# ----------------------------------------------------------------------------- scalar access
@rt("mem", "a", "index", "esize", "store", "op")
def scalar_access(fb: FnBuilder, mem, a, index, esize, store, op, site):
    """Check one element for get_value/set_value and return its address in RES0."""
    b = fb.b
    ptr = operand_pointer(fb, mem, a, fb.sat_mul(index, esize), esize, esize, fb.i64(0),
                          fb.i64(0), site)
    fb.st(abi.RES0, b.ptrtoint(ptr, I64))
    call_tm(fb, "scalar_access", store, op)
    s_pipe = fb.i64(int(PipeID.PIPE_S))
    call_rt(fb, "san_issue", s_pipe, site)
    addr = fb.sat_add(a, fb.sat_mul(index, esize))
    with b.if_else(b.icmp_signed("==", mem, fb.i64(0))) as (gm, local):
        with gm:
            with b.if_then(b.icmp_signed("!=", store, fb.i64(0))):
                call_rt(fb, "san_gm_write", a, fb.sat_mul(index, esize), esize, site)
        with local:
            call_rt(fb, "san_access", s_pipe, mem, addr, esize, store, site)


# ----------------------------------------------------------------------------- queues
def _q(fb: FnBuilder, qbase, field, index=None):
    slot = fb.b.add(qbase, fb.i64(field))
    return slot if index is None else fb.b.add(slot, index)


def _require_init(fb: FnBuilder, qbase, site):
    inited = fb.ld(_q(fb, qbase, abi.Q_INITED))
    fb.fail_with(fb.b.icmp_signed("==", inited, fb.i64(0)), E.QUEUE_NOT_INITIALISED, site)


@rt("qbase", "mem", "num", "length")
def init_buffer(fb: FnBuilder, qbase, mem, num, length, site):
    ptr_slot = fb.b.add(fb.i64(abi.ALLOC_PTR), mem)
    limit = fb.ld(fb.b.add(fb.i64(abi.MEM_SIZE), mem))
    fb.st(ptr_slot, place_queue(fb, qbase, mem, num, length, fb.ld(ptr_slot), limit, site))


def mem_alignment(fb: FnBuilder, mem):
    """Each memory's own granule (L0A/L0B 512 B, L0C/BT 64 B, UB/L1 32 B), at run time."""
    b = fb.b
    align = fb.i64(ALIGN)
    from ..ops.cube import local_alignment
    for m_, a_ in local_alignment().items():
        align = b.select(b.icmp_signed("==", mem, fb.i64(int(m_))), fb.i64(max(a_, ALIGN)), align)
    return align


def place_queue(fb: FnBuilder, qbase, mem, num, length, ptr, limit, site):
    """Give queue ``qbase`` its ``num`` buffers of ``length`` bytes from address ``ptr`` (rounded
    up to the memory's alignment) below ``limit``; returns the end of what it took (the pipe's
    allocation pointer, or a TBufPool's cursor)."""
    b = fb.b
    fb.fail_with(b.icmp_signed("!=", fb.ld(_q(fb, qbase, abi.Q_INITED)), fb.i64(0)),
                 E.QUEUE_REINIT, site)
    bad_num = b.or_(b.icmp_signed("<", num, fb.i64(1)),
                    b.icmp_signed(">", num, fb.i64(abi.Q_MAX_BUFFERS)))
    fb.fail_with(bad_num, E.BAD_BUFFER_COUNT, site, num)
    fb.fail_with(b.icmp_signed("<", length, fb.i64(0)), E.NEGATIVE_COUNT, site, length)
    align = mem_alignment(fb, mem)
    stride = b.and_(b.add(length, b.sub(align, fb.i64(1))), b.sub(fb.i64(0), align))
    need = b.mul(stride, num)
    ptr = b.and_(b.add(ptr, b.sub(align, fb.i64(1))), b.sub(fb.i64(0), align))
    fb.fail_with(b.icmp_signed(">", b.add(ptr, need), limit), E.CAPACITY, site,
                 need, b.sub(limit, ptr), limit)
    end = b.add(ptr, need)
    for field, value in ((abi.Q_BASE, ptr), (abi.Q_BUF_LEN, length), (abi.Q_STRIDE, stride),
                         (abi.Q_NUM, num), (abi.Q_INITED, fb.i64(1)), (abi.Q_CURSOR, fb.i64(0)),
                         (abi.Q_HEAD, fb.i64(0)), (abi.Q_COUNT, fb.i64(0)), (abi.Q_MEM, mem)):
        fb.st(_q(fb, qbase, field), value)
    for k in range(abi.Q_MAX_BUFFERS):
        fb.st(_q(fb, qbase, abi.Q_STATE + k), fb.i64(abi.BUF_FREE))
    return end


def _buffer_result(fb: FnBuilder, qbase, qid, index) -> None:
    b = fb.b
    addr = b.add(fb.ld(_q(fb, qbase, abi.Q_BASE)), b.mul(index, fb.ld(_q(fb, qbase, abi.Q_STRIDE))))
    gen = fb.ld(_q(fb, qbase, abi.Q_GEN, index))
    tag = b.add(b.shl(gen, fb.i64(abi.TAG_GEN_SHIFT)), b.add(b.mul(qid, fb.i64(256)), index))
    _res(fb, addr, fb.ld(_q(fb, qbase, abi.Q_BUF_LEN)), tag)


def _first_free(fb: FnBuilder, qbase, num, cursor):
    """The first free buffer of a queue's ``num`` in cyclic order from ``cursor`` (< num), or
    -1 when none is: a loop that stops at the first free one, usually the cursor's own."""
    b, func = fb.b, fb.func
    head, test, step, done = (func.append_basic_block(n) for n in
                              ("free_scan", "free_test", "free_next", "free_done"))
    start = b.block
    b.branch(head)
    b.position_at_end(head)
    k = b.phi(I64, name="k")
    k.add_incoming(fb.i64(0), start)
    b.cbranch(b.icmp_signed("<", k, num), test, done)
    b.position_at_end(test)
    j = b.add(cursor, k)                         # (cursor + k) mod num: cursor < num, k < num
    j = b.select(b.icmp_signed(">=", j, num), b.sub(j, num), j)
    free = b.icmp_signed("==", fb.ld(_q(fb, qbase, abi.Q_STATE, j)), fb.i64(abi.BUF_FREE))
    b.cbranch(free, done, step)
    b.position_at_end(step)
    k.add_incoming(b.add(k, fb.i64(1)), step)
    b.branch(head)
    b.position_at_end(done)
    found = b.phi(I64, name="found")
    found.add_incoming(fb.i64(-1), head)
    found.add_incoming(j, test)
    return found


@rt("qbase", "qid", "pipe", "op", "pos")
def alloc_tensor(fb: FnBuilder, qbase, qid, pipe, op, pos, site):
    _require_init(fb, qbase, site)
    b = fb.b
    live_slot = b.add(fb.i64(abi.POS_LIVE), pos)
    live = fb.ld(live_slot)
    fb.fail_with(b.icmp_signed(">=", live, fb.i64(abi.MAX_LIVE_PER_POSITION)),
                 E.TOO_MANY_LIVE_TENSORS, site, b.add(live, fb.i64(1)))
    num = fb.ld(_q(fb, qbase, abi.Q_NUM))
    cursor = fb.ld(_q(fb, qbase, abi.Q_CURSOR))
    idx = _first_free(fb, qbase, num, cursor)
    fb.fail_with(b.icmp_signed("<", idx, fb.i64(0)), E.QUEUE_NO_FREE_BUFFER, site, num)
    fb.st(_q(fb, qbase, abi.Q_STATE, idx), fb.i64(abi.BUF_ALLOCATED))
    fb.st(_q(fb, qbase, abi.Q_WRITER, idx), fb.i64(0))   # a fresh tensor: no pending writes
    following = b.add(idx, fb.i64(1))           # (idx + 1) mod num, idx < num
    fb.st(_q(fb, qbase, abi.Q_CURSOR), b.select(b.icmp_signed(">=", following, num),
                                                fb.i64(0), following))
    fb.st(live_slot, b.add(live, fb.i64(1)))
    _buffer_result(fb, qbase, qid, idx)
    call_tm(fb, "wait_time", pipe, _q(fb, qbase, abi.Q_FREED, idx), fb.i64(0), op)
    call_rt(fb, "san_wait", pipe, _q(fb, qbase, abi.Q_FREED, idx), site)


def _tensor_index(fb: FnBuilder, qbase, qid, tag, site):
    """The buffer index of a tensor handed back to queue ``qid``: it must be this queue's,
    and not one whose buffer was freed since (a stale generation)."""
    b = fb.b
    foreign = b.or_(b.icmp_signed("<", tag, fb.i64(0)),
                    b.icmp_signed("!=", b.and_(b.ashr(tag, fb.i64(8)), fb.i64(255)), qid))
    fb.fail_with(foreign, E.QUEUE_FOREIGN_TENSOR, site, tag)
    idx = b.and_(tag, fb.i64(255))
    stale = b.icmp_signed("!=", b.ashr(tag, fb.i64(abi.TAG_GEN_SHIFT)),
                          fb.ld(_q(fb, qbase, abi.Q_GEN, idx)))
    fb.st(abi.ERR_D, fb.i64(0))
    fb.fail_with(stale, E.USE_AFTER_FREE, site, fb.ld(_q(fb, qbase, abi.Q_FREE_SITE, idx)))
    return idx


@rt("qbase", "qid", "depth", "tag", "pipe", "op")
def enque(fb: FnBuilder, qbase, qid, depth, tag, pipe, op, site):
    _require_init(fb, qbase, site)
    b = fb.b
    idx = _tensor_index(fb, qbase, qid, tag, site)
    state = fb.ld(_q(fb, qbase, abi.Q_STATE, idx))
    fb.fail_with(b.icmp_signed("!=", state, fb.i64(abi.BUF_ALLOCATED)), E.QUEUE_BAD_STATE, site,
                 state)
    count = fb.ld(_q(fb, qbase, abi.Q_COUNT))
    fb.fail_with(b.icmp_signed(">=", count, depth), E.QUEUE_FULL, site, depth)
    head = fb.ld(_q(fb, qbase, abi.Q_HEAD))
    pos = b.urem(b.add(head, count), fb.i64(abi.Q_MAX_BUFFERS))
    fb.st(_q(fb, qbase, abi.Q_FIFO, pos), idx)
    fb.st(_q(fb, qbase, abi.Q_COUNT), b.add(count, fb.i64(1)))
    fb.st(_q(fb, qbase, abi.Q_STATE, idx), fb.i64(abi.BUF_ENQUEUED))
    call_tm(fb, "set_time", pipe, _q(fb, qbase, abi.Q_READY, idx), op)
    call_rt(fb, "san_set", pipe, _q(fb, qbase, abi.Q_READY, idx), site)


@rt("qbase", "qid", "pipe", "op", "producer")
def deque(fb: FnBuilder, qbase, qid, pipe, op, producer, site):
    _require_init(fb, qbase, site)
    b = fb.b
    count = fb.ld(_q(fb, qbase, abi.Q_COUNT))
    fb.fail_with(b.icmp_signed("==", count, fb.i64(0)), E.QUEUE_EMPTY, site)
    head = fb.ld(_q(fb, qbase, abi.Q_HEAD))
    idx = fb.ld(_q(fb, qbase, abi.Q_FIFO, head))
    fb.st(_q(fb, qbase, abi.Q_HEAD), b.urem(b.add(head, fb.i64(1)), fb.i64(abi.Q_MAX_BUFFERS)))
    fb.st(_q(fb, qbase, abi.Q_COUNT), b.sub(count, fb.i64(1)))
    fb.st(_q(fb, qbase, abi.Q_STATE, idx), fb.i64(abi.BUF_ALLOCATED))
    # the queue's flags order its producer pipe's writes before the consumer (another pipe's
    # write, e.g. a copy-in through a VECOUT queue, stays unordered)
    writers = _q(fb, qbase, abi.Q_WRITER, idx)
    fb.st(writers, b.and_(fb.ld(writers), b.xor(b.shl(fb.i64(1), producer), fb.i64(-1))))
    _buffer_result(fb, qbase, qid, idx)
    call_tm(fb, "wait_time", pipe, _q(fb, qbase, abi.Q_READY, idx), fb.i64(0), op)
    call_rt(fb, "san_wait", pipe, _q(fb, qbase, abi.Q_READY, idx), site)


@rt("qbase", "qid", "tag", "pipe", "op", "pos")
def free_tensor(fb: FnBuilder, qbase, qid, tag, pipe, op, pos, site):
    _require_init(fb, qbase, site)
    b = fb.b
    idx = _tensor_index(fb, qbase, qid, tag, site)
    state = fb.ld(_q(fb, qbase, abi.Q_STATE, idx))
    fb.fail_with(b.icmp_signed("!=", state, fb.i64(abi.BUF_ALLOCATED)), E.QUEUE_BAD_STATE,
                 site, state)
    fb.st(_q(fb, qbase, abi.Q_STATE, idx), fb.i64(abi.BUF_FREE))
    gen = _q(fb, qbase, abi.Q_GEN, idx)   # tensors of this allocation are stale from now on
    fb.st(gen, b.and_(b.add(fb.ld(gen), fb.i64(1)), fb.i64(abi.TAG_GEN_MASK)))
    fb.st(_q(fb, qbase, abi.Q_FREE_SITE, idx), site)
    live_slot = fb.b.add(fb.i64(abi.POS_LIVE), pos)
    fb.st(live_slot, fb.b.sub(fb.ld(live_slot), fb.i64(1)))
    call_tm(fb, "set_time", pipe, _q(fb, qbase, abi.Q_FREED, idx), op)
    call_rt(fb, "san_set", pipe, _q(fb, qbase, abi.Q_FREED, idx), site)


@rt("tag", "pipe", "write", "which")
def tensor_use(fb: FnBuilder, tag, pipe, write, which, site):
    """An instruction on ``pipe`` uses queue tensor ``tag`` (operand ``which``; ``write``: it
    writes it): the tensor's buffer must not have been freed since it was handed out, and a
    write of another pipe must have been handed over (enque/deque through the queue, a
    matching wait_flag, pipe_barrier(PIPE_ALL)) — else the hardware would race. Tensors not
    from a TQue (tag -1) are not tracked."""
    b = fb.b
    with b.if_then(b.icmp_signed("<", tag, fb.i64(0))):
        b.ret(fb.i64(0))
    qid = b.and_(b.ashr(tag, fb.i64(8)), fb.i64(255))
    idx = b.and_(tag, fb.i64(255))
    qbase = b.add(fb.i64(abi.HEADER_SLOTS), b.mul(qid, fb.i64(abi.QUEUE_SLOTS)))
    stale = b.or_(b.icmp_signed("==", fb.ld(_q(fb, qbase, abi.Q_STATE, idx)),
                                fb.i64(abi.BUF_FREE)),
                  b.icmp_signed("!=", b.ashr(tag, fb.i64(abi.TAG_GEN_SHIFT)),
                                fb.ld(_q(fb, qbase, abi.Q_GEN, idx))))
    fb.st(abi.ERR_D, which)
    fb.fail_with(stale, E.USE_AFTER_FREE, site, fb.ld(_q(fb, qbase, abi.Q_FREE_SITE, idx)))
    # reads only: writes of different pipes into one tensor are often to different bytes (a
    # DMA body and a scalar tail); sanitize mode checks those byte by byte
    writers = _q(fb, qbase, abi.Q_WRITER, idx)
    seen = b.or_(b.shl(fb.i64(1), pipe), fb.i64(1 << int(PipeID.PIPE_S)))  # S: seen by all
    pending = b.and_(fb.ld(writers), b.xor(seen, fb.i64(-1)))
    lowest = b.call(intrinsic(fb.module, "llvm.cttz.i64", I64, [I64, I1]),
                    [pending, L.Constant(I1, 1)])
    check = b.and_(b.icmp_signed("==", write, fb.i64(0)),   # sanitize mode: byte by byte
                   b.icmp_signed("==", fb.ld(abi.SANITIZE), fb.i64(0)))
    fb.fail_with(b.and_(check, b.icmp_signed("!=", pending, fb.i64(0))),
                 E.NO_HANDOVER, site, lowest, pipe, fb.ld(_q(fb, qbase, abi.Q_WSITE, idx)))
    with b.if_then(b.icmp_signed("!=", write, fb.i64(0))):
        fb.st(writers, b.or_(fb.ld(writers), b.shl(fb.i64(1), pipe)))
        with b.if_then(b.icmp_signed("!=", pipe, fb.i64(int(PipeID.PIPE_S)))):
            fb.st(_q(fb, qbase, abi.Q_WSITE, idx), site)


def clear_writers(fb: FnBuilder, flag_base, src_pipe) -> None:
    """Writes of ``src_pipe`` (of every pipe, when it is -1) to queue buffers count as handed
    over: a wait_flag of an event from that pipe, or pipe_barrier(PIPE_ALL), orders them."""
    b = fb.b
    nq = b.sdiv(b.sub(flag_base, fb.i64(abi.HEADER_SLOTS)), fb.i64(abi.QUEUE_SLOTS))
    keep = b.select(b.icmp_signed("<", src_pipe, fb.i64(0)), fb.i64(0),
                    b.xor(b.shl(fb.i64(1), b.and_(src_pipe, fb.i64(63))), fb.i64(-1)))

    def per_queue(q):
        qbase = b.add(fb.i64(abi.HEADER_SLOTS), b.mul(q, fb.i64(abi.QUEUE_SLOTS)))
        for k in range(abi.Q_MAX_BUFFERS):
            slot = _q(fb, qbase, abi.Q_WRITER, fb.i64(k))
            fb.st(slot, b.and_(fb.ld(slot), keep))
    counted(fb, nq, per_queue)


@rt("flag_base")
def barrier_handover(fb: FnBuilder, flag_base, site):
    """pipe_barrier(PIPE_ALL): every pipe's work is done, every queue tensor handed over."""
    clear_writers(fb, flag_base, fb.i64(-1))


@rt("qbase")
def tbuf_get(fb: FnBuilder, qbase, site):
    _require_init(fb, qbase, site)
    _res(fb, fb.ld(_q(fb, qbase, abi.Q_BASE)), fb.ld(_q(fb, qbase, abi.Q_BUF_LEN)), fb.i64(-1))


# ----------------------------------------------------------------------------- flags
def _flag(fb: FnBuilder, event, eid, site):
    b = fb.b
    bad = b.or_(b.icmp_signed("<", eid, fb.i64(0)),
                b.icmp_signed(">=", eid, fb.i64(EVENT_IDS_PER_EVENT)))
    fb.fail_with(bad, E.FLAG_ID_RANGE, site, eid)
    return b.add(b.mul(event, fb.i64(EVENT_IDS_PER_EVENT)), eid)


@rt("flag_base", "event", "eid", "pipe", "op")
def set_flag(fb: FnBuilder, flag_base, event, eid, pipe, op, site):
    flag = _flag(fb, event, eid, site)
    slot = fb.b.add(flag_base, flag)
    v = fb.ld(slot)
    fb.fail_with(fb.b.icmp_signed(">", v, fb.i64(0)), E.FLAG_DOUBLE_SET, site, flag)
    fb.st(slot, fb.b.add(v, fb.i64(1)))
    time_slot = fb.b.add(fb.ld(abi.FLAG_TIME_BASE), flag)
    call_tm(fb, "set_time", pipe, time_slot, op)
    call_rt(fb, "san_set", pipe, time_slot, site)
    # a wait_flag earlier in program order was pending on this flag: its pipe sees this set
    with fb.b.if_then(fb.b.icmp_signed("<", v, fb.i64(0))):
        waiter = fb.ld(fb.b.add(slot, fb.i64(3 * abi.FLAG_SLOTS)))
        call_rt(fb, "san_wait", waiter, time_slot, site)


@rt("flag_base", "event", "eid", "pipe", "op", "src_pipe")
def wait_flag(fb: FnBuilder, flag_base, event, eid, pipe, op, src_pipe, site):
    """A wait issued before its set stays pending; a later set_flag satisfies it."""
    flag = _flag(fb, event, eid, site)
    slot = fb.b.add(flag_base, flag)
    v = fb.ld(slot)
    pending = fb.b.icmp_signed("<=", v, fb.i64(0))
    with fb.b.if_then(pending):
        fb.st(fb.b.add(slot, fb.i64(abi.FLAG_SLOTS)), site)  # remember the pending wait
        with fb.b.if_then(fb.b.icmp_signed("!=", fb.ld(abi.SANITIZE), fb.i64(0))):
            warn(fb, WARN_LATE_SET, site, flag)
    fb.st(slot, fb.b.sub(v, fb.i64(1)))
    clear_writers(fb, flag_base, src_pipe)
    time_slot = fb.b.add(fb.ld(abi.FLAG_TIME_BASE), flag)
    call_tm(fb, "wait_time", pipe, time_slot, pending, op)
    with fb.b.if_else(pending) as (later, now):
        with later:  # remember who waits (the sanitizer joins its clock when the set comes)
            fb.st(fb.b.add(slot, fb.i64(3 * abi.FLAG_SLOTS)), pipe)
        with now:
            call_rt(fb, "san_wait", pipe, time_slot, site)


@rt("flag_base")
def kernel_end(fb: FnBuilder, flag_base, site):
    """A wait_flag still pending at the end is the hang it would be on hardware. Two loops over
    the flags, not an unrolled check per flag: unrolled, this once-per-block function took 2 s
    of the runtime library's build, which every kernel waits for on a fresh cache."""
    b = fb.b
    # the usual end: every flag is 0 (one vectorised pass, instead of the 2 x FLAG_SLOTS
    # tests below)
    seen = fb.alloca_builder.alloca(I64, name="flags_or")
    b.store(fb.i64(0), seen)
    counted(fb, fb.i64(abi.FLAG_SLOTS), lambda k: b.store(
        b.or_(b.load(seen, typ=I64), fb.ld(b.add(flag_base, k))), seen))
    with b.if_then(b.icmp_signed("==", b.load(seen, typ=I64), fb.i64(0)), likely=True):
        b.ret(fb.i64(0))

    def never_set(k):          # the first pending wait (in flag order) is the error
        slot = b.add(flag_base, k)
        pending = b.icmp_signed("<", fb.ld(slot), fb.i64(0))
        wait_site = fb.ld(b.add(slot, fb.i64(abi.FLAG_SLOTS)))
        fb.fail_with(pending, E.FLAG_NEVER_SET, wait_site, k)

    def left_set(k):           # set flags nobody waited for: hardware runs on, but the next
        slot = b.add(flag_base, k)          # kernel's waits would see them
        with b.if_then(b.icmp_signed(">", fb.ld(slot), fb.i64(0))):
            warn(fb, WARN_FLAG_LEFT_SET, site, k)
    counted(fb, fb.i64(abi.FLAG_SLOTS), never_set)
    counted(fb, fb.i64(abi.FLAG_SLOTS), left_set)


# ----------------------------------------------------------------------------- loops, lanes
def counted(fb: FnBuilder, n, body) -> None:
    """``for i in range(n): body(i)`` (i64), in the library's IR."""
    counted_loop(fb.b, fb.func, n, body)


def lanes_mask(fb: FnBuilder, m):
    """(lo, hi) bit masks of the first ``m`` lanes (m in 0..128)."""
    b = fb.b

    def ones(k):  # k in 0..64 -> k low bits set
        full = b.icmp_signed(">=", k, fb.i64(64))
        part = b.sub(b.shl(fb.i64(1), b.select(full, fb.i64(0), k)), fb.i64(1))
        neg = b.icmp_signed("<=", k, fb.i64(0))
        return b.select(full, fb.i64(-1), b.select(neg, fb.i64(0), part))

    return ones(m), ones(b.sub(m, fb.i64(64)))


__all__ = ["RT_FUNCTIONS", "define_all", "rt_signature", "I8", "call_rt", "call_tm", "counted",
           "lanes_mask", "cold"]
