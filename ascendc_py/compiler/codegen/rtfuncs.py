"""Runtime functions of the native library: bounds checks, queues, flags.

Each is ``i64 asc_rt_<name>(ptr ctx, i64 args…, i64 site)``, returns 0 or an error code (having
stored the code, the site and details in ctx), and is defined once in the runtime library
(``runtime_lib.py``) so kernel modules stay small. Results (buffer address, bytes, tag) are
returned in ctx slots ``RES0..RES2``.
"""
from __future__ import annotations

from typing import Callable

from llvmlite import ir as L

from ...dsl.types import EVENT_IDS_PER_EVENT
from ...simulator import abi
from .core import FnBuilder
from .types import I64, I8, PTR

E = abi.ErrorCode
ALIGN = 32

#: name → (parameter names after ctx and before site, builder)
RT_FUNCTIONS: dict[str, tuple[tuple[str, ...], Callable]] = {}


def rt(*params: str):
    def deco(fn):
        RT_FUNCTIONS[fn.__name__] = (params, fn)
        return fn
    return deco


def rt_signature(name: str) -> L.FunctionType:
    params, _ = RT_FUNCTIONS[name]
    return L.FunctionType(I64, [PTR] + [I64] * (len(params) + 1))


def define_all(module: L.Module) -> None:
    for name, (params, body) in RT_FUNCTIONS.items():
        func = L.Function(module, rt_signature(name), name=f"asc_rt_{name}")
        func.attributes.add("nounwind")
        fb = FnBuilder(module, func)
        args = dict(zip(params + ("site",), func.args[1:]))
        body(fb, **args)
        if not fb.b.block.is_terminated:
            fb.b.ret(fb.i64(0))
        fb.finish()


def _res(fb: FnBuilder, *values) -> None:
    for k, v in enumerate(values):
        fb.st(abi.RES0 + k, v)


# ----------------------------------------------------------------------------- bounds checks
@rt("mem", "addr", "nbytes", "aligned")
def check_local(fb: FnBuilder, mem, addr, nbytes, aligned, site):
    """[addr, addr+nbytes) must lie in local memory ``mem``; addr 32-B aligned if asked."""
    b = fb.b
    limit = fb.ld(b.add(fb.i64(abi.MEM_SIZE), mem))
    end = b.add(addr, nbytes)
    bad = b.or_(b.or_(b.icmp_signed("<", addr, fb.i64(0)), b.icmp_signed("<", nbytes, fb.i64(0))),
                b.icmp_signed(">", end, limit))
    fb.fail_with(bad, E.LOCAL_OUT_OF_RANGE, site, addr, end, limit)
    mis = b.and_(b.icmp_signed("!=", aligned, fb.i64(0)),
                 b.icmp_signed("!=", b.and_(addr, fb.i64(ALIGN - 1)), fb.i64(0)))
    fb.fail_with(mis, E.LOCAL_MISALIGNED, site, addr)


@rt("arg", "start", "nbytes", "elem_size")
def check_gm(fb: FnBuilder, arg, start, nbytes, elem_size, site):
    """Bytes [start, start+nbytes) of GM argument ``arg`` must lie inside its buffer."""
    b = fb.b
    sizes = fb.ctx_ptr(abi.GM_SIZES)
    limit = b.load(b.gep(sizes, [arg], source_etype=I64), typ=I64)
    end = b.add(start, nbytes)
    bad = b.or_(b.icmp_signed("<", start, fb.i64(0)), b.icmp_signed(">", end, limit))
    first = b.sdiv(start, elem_size)
    last = b.sdiv(b.add(end, b.sub(elem_size, fb.i64(1))), elem_size)
    fb.fail_with(bad, E.GM_OUT_OF_BOUNDS, site, arg, first, last)


# ----------------------------------------------------------------------------- queues
def _q(fb: FnBuilder, qbase, field, index=None):
    slot = fb.b.add(qbase, fb.i64(field))
    return slot if index is None else fb.b.add(slot, index)


def _require_init(fb: FnBuilder, qbase, site):
    inited = fb.ld(_q(fb, qbase, abi.Q_INITED))
    fb.fail_with(fb.b.icmp_signed("==", inited, fb.i64(0)), E.QUEUE_NOT_INITIALISED, site)


@rt("qbase", "mem", "num", "length")
def init_buffer(fb: FnBuilder, qbase, mem, num, length, site):
    b = fb.b
    fb.fail_with(b.icmp_signed("!=", fb.ld(_q(fb, qbase, abi.Q_INITED)), fb.i64(0)),
                 E.QUEUE_REINIT, site)
    bad_num = b.or_(b.icmp_signed("<", num, fb.i64(1)),
                    b.icmp_signed(">", num, fb.i64(abi.Q_MAX_BUFFERS)))
    fb.fail_with(bad_num, E.BAD_BUFFER_COUNT, site, num)
    fb.fail_with(b.icmp_signed("<", length, fb.i64(0)), E.NEGATIVE_COUNT, site, length)
    stride = b.and_(b.add(length, fb.i64(ALIGN - 1)), fb.i64(~(ALIGN - 1)))
    need = b.mul(stride, num)
    ptr_slot = b.add(fb.i64(abi.ALLOC_PTR), mem)
    ptr = fb.ld(ptr_slot)
    limit = fb.ld(b.add(fb.i64(abi.MEM_SIZE), mem))
    fb.fail_with(b.icmp_signed(">", b.add(ptr, need), limit), E.CAPACITY, site,
                 need, b.sub(limit, ptr), limit)
    fb.st(ptr_slot, b.add(ptr, need))
    for field, value in ((abi.Q_BASE, ptr), (abi.Q_BUF_LEN, length), (abi.Q_STRIDE, stride),
                         (abi.Q_NUM, num), (abi.Q_INITED, fb.i64(1)), (abi.Q_CURSOR, fb.i64(0)),
                         (abi.Q_HEAD, fb.i64(0)), (abi.Q_COUNT, fb.i64(0)), (abi.Q_MEM, mem)):
        fb.st(_q(fb, qbase, field), value)
    for k in range(abi.Q_MAX_BUFFERS):
        fb.st(_q(fb, qbase, abi.Q_STATE + k), fb.i64(abi.BUF_FREE))


def _buffer_result(fb: FnBuilder, qbase, qid, index) -> None:
    b = fb.b
    addr = b.add(fb.ld(_q(fb, qbase, abi.Q_BASE)), b.mul(index, fb.ld(_q(fb, qbase, abi.Q_STRIDE))))
    tag = b.add(b.mul(qid, fb.i64(256)), index)
    _res(fb, addr, fb.ld(_q(fb, qbase, abi.Q_BUF_LEN)), tag)


@rt("qbase", "qid")
def alloc_tensor(fb: FnBuilder, qbase, qid, site):
    _require_init(fb, qbase, site)
    b = fb.b
    num = fb.ld(_q(fb, qbase, abi.Q_NUM))
    cursor = fb.ld(_q(fb, qbase, abi.Q_CURSOR))
    found = fb.alloca_builder.alloca(I64, name="found")
    b.store(fb.i64(-1), found)
    for k in range(abi.Q_MAX_BUFFERS):  # scan from the cursor for a free buffer
        j = b.urem(b.add(cursor, fb.i64(k)), num)
        state = fb.ld(_q(fb, qbase, abi.Q_STATE, j))
        cur = b.load(found, typ=I64)
        ok = b.and_(b.icmp_signed("<", fb.i64(k), num),
                    b.and_(b.icmp_signed("==", state, fb.i64(abi.BUF_FREE)),
                           b.icmp_signed("<", cur, fb.i64(0))))
        b.store(b.select(ok, j, cur), found)
    idx = b.load(found, typ=I64)
    fb.fail_with(b.icmp_signed("<", idx, fb.i64(0)), E.QUEUE_NO_FREE_BUFFER, site, num)
    fb.st(_q(fb, qbase, abi.Q_STATE, idx), fb.i64(abi.BUF_ALLOCATED))
    fb.st(_q(fb, qbase, abi.Q_CURSOR), b.urem(b.add(idx, fb.i64(1)), num))
    _buffer_result(fb, qbase, qid, idx)


def _tensor_index(fb: FnBuilder, qid, tag, site):
    b = fb.b
    foreign = b.or_(b.icmp_signed("<", tag, fb.i64(0)),
                    b.icmp_signed("!=", b.sdiv(tag, fb.i64(256)), qid))
    fb.fail_with(foreign, E.QUEUE_FOREIGN_TENSOR, site, tag)
    return b.srem(tag, fb.i64(256))


@rt("qbase", "qid", "depth", "tag")
def enque(fb: FnBuilder, qbase, qid, depth, tag, site):
    _require_init(fb, qbase, site)
    b = fb.b
    idx = _tensor_index(fb, qid, tag, site)
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
    _res(fb, idx)


@rt("qbase", "qid")
def deque(fb: FnBuilder, qbase, qid, site):
    _require_init(fb, qbase, site)
    b = fb.b
    count = fb.ld(_q(fb, qbase, abi.Q_COUNT))
    fb.fail_with(b.icmp_signed("==", count, fb.i64(0)), E.QUEUE_EMPTY, site)
    head = fb.ld(_q(fb, qbase, abi.Q_HEAD))
    idx = fb.ld(_q(fb, qbase, abi.Q_FIFO, head))
    fb.st(_q(fb, qbase, abi.Q_HEAD), b.urem(b.add(head, fb.i64(1)), fb.i64(abi.Q_MAX_BUFFERS)))
    fb.st(_q(fb, qbase, abi.Q_COUNT), b.sub(count, fb.i64(1)))
    fb.st(_q(fb, qbase, abi.Q_STATE, idx), fb.i64(abi.BUF_ALLOCATED))
    _buffer_result(fb, qbase, qid, idx)


@rt("qbase", "qid", "tag")
def free_tensor(fb: FnBuilder, qbase, qid, tag, site):
    _require_init(fb, qbase, site)
    idx = _tensor_index(fb, qid, tag, site)
    state = fb.ld(_q(fb, qbase, abi.Q_STATE, idx))
    fb.fail_with(fb.b.icmp_signed("!=", state, fb.i64(abi.BUF_ALLOCATED)), E.QUEUE_BAD_STATE,
                 site, state)
    fb.st(_q(fb, qbase, abi.Q_STATE, idx), fb.i64(abi.BUF_FREE))
    _res(fb, idx)


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


@rt("flag_base", "event", "eid")
def set_flag(fb: FnBuilder, flag_base, event, eid, site):
    flag = _flag(fb, event, eid, site)
    slot = fb.b.add(flag_base, flag)
    v = fb.ld(slot)
    fb.fail_with(fb.b.icmp_signed(">", v, fb.i64(0)), E.FLAG_DOUBLE_SET, site, flag)
    fb.st(slot, fb.b.add(v, fb.i64(1)))
    _res(fb, flag)


@rt("flag_base", "event", "eid")
def wait_flag(fb: FnBuilder, flag_base, event, eid, site):
    """A wait issued before its set stays pending; a later set_flag satisfies it."""
    flag = _flag(fb, event, eid, site)
    slot = fb.b.add(flag_base, flag)
    v = fb.ld(slot)
    with fb.b.if_then(fb.b.icmp_signed("<=", v, fb.i64(0))):
        fb.st(fb.b.add(slot, fb.i64(abi.FLAG_SLOTS)), site)  # remember the pending wait
    fb.st(slot, fb.b.sub(v, fb.i64(1)))
    _res(fb, flag)


@rt("flag_base")
def kernel_end(fb: FnBuilder, flag_base, site):
    """A wait_flag still pending at the end is the hang it would be on hardware."""
    b = fb.b
    for k in range(abi.FLAG_SLOTS):
        slot = b.add(flag_base, fb.i64(k))
        pending = b.icmp_signed("<", fb.ld(slot), fb.i64(0))
        wait_site = fb.ld(b.add(slot, fb.i64(abi.FLAG_SLOTS)))
        fb.fail_with(pending, E.FLAG_NEVER_SET, wait_site, fb.i64(k))


__all__ = ["RT_FUNCTIONS", "define_all", "rt_signature", "I8"]
