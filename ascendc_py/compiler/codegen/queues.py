"""Codegen of TPipe/TQue/TBuf and flag intrinsics: their state lives in the ctx array."""
from __future__ import annotations

from llvmlite import ir as L

from ...dsl.types import EVENT_IDS_PER_EVENT
from ...simulator import abi
from .. import ir
from .core import Codegen, lowering
from .intrinsics import ALIGN, Local, notify_timing
from .types import I1, I32, I64

E = abi.ErrorCode


def qslot(cg: Codegen, s: ir.Intrinsic, field, index: L.Value | None = None):
    """Slot number (int or LLVM value) of a field of this intrinsic's queue record."""
    base = abi.queue_slot(cg.nq, s.attr("queue"), field)
    return base if index is None else cg.b.add(cg.i64(base), index)


def _require_init(cg: Codegen, s: ir.Intrinsic, op: str) -> None:
    inited = cg.ld(qslot(cg, s, abi.Q_INITED))
    cg.fail_if(cg.b.icmp_signed("==", inited, cg.i64(0)), E.QUEUE_NOT_INITIALISED, op)


@lowering("init_buffer")
def lower_init_buffer(cg: Codegen, s: ir.Intrinsic) -> None:
    num = cg.b.sext(cg.expr(s.args[0]), I64)
    length = cg.b.sext(cg.expr(s.args[1]), I64)
    mem = int(s.attr("memory"))
    cg.fail_if(cg.b.icmp_signed("!=", cg.ld(qslot(cg, s, abi.Q_INITED)), cg.i64(0)),
               E.QUEUE_REINIT, "init_buffer")
    bad_num = cg.b.or_(cg.b.icmp_signed("<", num, cg.i64(1)),
                       cg.b.icmp_signed(">", num, cg.i64(abi.Q_MAX_BUFFERS)))
    cg.fail_if(bad_num, E.BAD_BUFFER_COUNT, "init_buffer", num)
    cg.fail_if(cg.b.icmp_signed("<", length, cg.i64(0)), E.NEGATIVE_COUNT, "init_buffer", length)
    stride = cg.b.and_(cg.b.add(length, cg.i64(ALIGN - 1)), cg.i64(~(ALIGN - 1)))
    need = cg.b.mul(stride, num)
    ptr = cg.ld(abi.ALLOC_PTR + mem)
    limit = cg.ld(abi.MEM_SIZE + mem)
    cg.fail_if(cg.b.icmp_signed(">", cg.b.add(ptr, need), limit), E.CAPACITY, "init_buffer",
               need, cg.b.sub(limit, ptr), limit, (s.attr("queue"), mem))
    cg.st(abi.ALLOC_PTR + mem, cg.b.add(ptr, need))
    for field, value in ((abi.Q_BASE, ptr), (abi.Q_BUF_LEN, length), (abi.Q_STRIDE, stride),
                         (abi.Q_NUM, num), (abi.Q_INITED, cg.i64(1)), (abi.Q_CURSOR, cg.i64(0)),
                         (abi.Q_HEAD, cg.i64(0)), (abi.Q_COUNT, cg.i64(0))):
        cg.st(qslot(cg, s, field), value)
    for k in range(abi.Q_MAX_BUFFERS):
        cg.st(qslot(cg, s, abi.Q_STATE + k), cg.i64(abi.BUF_FREE))
    notify_timing(cg, s)


def _buffer_result(cg: Codegen, s: ir.Intrinsic, index: L.Value) -> None:
    base = cg.ld(qslot(cg, s, abi.Q_BASE))
    stride = cg.ld(qslot(cg, s, abi.Q_STRIDE))
    addr = cg.b.add(base, cg.b.mul(index, stride))
    nbytes = cg.ld(qslot(cg, s, abi.Q_BUF_LEN))
    tag = cg.b.add(cg.b.mul(cg.i64(s.attr("queue")), cg.i64(256)), index)
    for var, value in zip(s.results, (addr, nbytes, tag)):
        cg.b.store(cg.b.trunc(value, I32), cg.var(var))


@lowering("alloc_tensor")
def lower_alloc(cg: Codegen, s: ir.Intrinsic) -> None:
    _require_init(cg, s, "alloc_tensor")
    b = cg.b
    num = cg.ld(qslot(cg, s, abi.Q_NUM))
    cursor = cg.ld(qslot(cg, s, abi.Q_CURSOR))
    found = cg.alloca_builder.alloca(I64, name="found")
    b.store(cg.i64(-1), found)
    # scan the (at most 8) buffers from the cursor for a free one
    for k in range(abi.Q_MAX_BUFFERS):
        j = b.urem(b.add(cursor, cg.i64(k)), num)
        state = cg.ld(qslot(cg, s, abi.Q_STATE, j))
        ok = b.and_(b.icmp_signed("<", cg.i64(k), num),
                    b.and_(b.icmp_signed("==", state, cg.i64(abi.BUF_FREE)),
                           b.icmp_signed("<", b.load(found, typ=I64), cg.i64(0))))
        b.store(b.select(ok, j, b.load(found, typ=I64)), found)
    idx = b.load(found, typ=I64)
    cg.fail_if(b.icmp_signed("<", idx, cg.i64(0)), E.QUEUE_NO_FREE_BUFFER, "alloc_tensor", num)
    cg.st(qslot(cg, s, abi.Q_STATE, idx), cg.i64(abi.BUF_ALLOCATED))
    cg.st(qslot(cg, s, abi.Q_CURSOR), b.urem(b.add(idx, cg.i64(1)), num))
    _buffer_result(cg, s, idx)
    notify_timing(cg, s, buffer=idx)


def _tensor_index(cg: Codegen, s: ir.Intrinsic, op: str) -> L.Value:
    """The buffer index of the tensor operand, failing if it is not from this queue."""
    t = Local(cg, s.args[0])
    tag = cg.b.sext(t.tag, I64)
    qid = cg.b.sdiv(tag, cg.i64(256))
    foreign = cg.b.or_(cg.b.icmp_signed("<", tag, cg.i64(0)),
                       cg.b.icmp_signed("!=", qid, cg.i64(s.attr("queue"))))
    cg.fail_if(foreign, E.QUEUE_FOREIGN_TENSOR, op, tag)
    return cg.b.srem(tag, cg.i64(256))


@lowering("enque")
def lower_enque(cg: Codegen, s: ir.Intrinsic) -> None:
    _require_init(cg, s, "enque")
    b = cg.b
    idx = _tensor_index(cg, s, "enque")
    state = cg.ld(qslot(cg, s, abi.Q_STATE, idx))
    cg.fail_if(b.icmp_signed("!=", state, cg.i64(abi.BUF_ALLOCATED)), E.QUEUE_BAD_STATE,
               "enque", state)
    count = cg.ld(qslot(cg, s, abi.Q_COUNT))
    depth = cg.i64(max(s.attr("depth"), 1))
    cg.fail_if(b.icmp_signed(">=", count, depth), E.QUEUE_FULL, "enque", depth)
    head = cg.ld(qslot(cg, s, abi.Q_HEAD))
    pos = b.urem(b.add(head, count), cg.i64(abi.Q_MAX_BUFFERS))
    cg.st(qslot(cg, s, abi.Q_FIFO, pos), idx)
    cg.st(qslot(cg, s, abi.Q_COUNT), b.add(count, cg.i64(1)))
    cg.st(qslot(cg, s, abi.Q_STATE, idx), cg.i64(abi.BUF_ENQUEUED))
    notify_timing(cg, s, buffer=idx)


@lowering("deque")
def lower_deque(cg: Codegen, s: ir.Intrinsic) -> None:
    _require_init(cg, s, "deque")
    b = cg.b
    count = cg.ld(qslot(cg, s, abi.Q_COUNT))
    cg.fail_if(b.icmp_signed("==", count, cg.i64(0)), E.QUEUE_EMPTY, "deque")
    head = cg.ld(qslot(cg, s, abi.Q_HEAD))
    idx = cg.ld(qslot(cg, s, abi.Q_FIFO, head))
    cg.st(qslot(cg, s, abi.Q_HEAD), b.urem(b.add(head, cg.i64(1)), cg.i64(abi.Q_MAX_BUFFERS)))
    cg.st(qslot(cg, s, abi.Q_COUNT), b.sub(count, cg.i64(1)))
    cg.st(qslot(cg, s, abi.Q_STATE, idx), cg.i64(abi.BUF_ALLOCATED))
    _buffer_result(cg, s, idx)
    notify_timing(cg, s, buffer=idx)


@lowering("free_tensor")
def lower_free(cg: Codegen, s: ir.Intrinsic) -> None:
    _require_init(cg, s, "free_tensor")
    idx = _tensor_index(cg, s, "free_tensor")
    state = cg.ld(qslot(cg, s, abi.Q_STATE, idx))
    cg.fail_if(cg.b.icmp_signed("!=", state, cg.i64(abi.BUF_ALLOCATED)), E.QUEUE_BAD_STATE,
               "free_tensor", state)
    cg.st(qslot(cg, s, abi.Q_STATE, idx), cg.i64(abi.BUF_FREE))
    notify_timing(cg, s, buffer=idx)


@lowering("tbuf_get")
def lower_tbuf_get(cg: Codegen, s: ir.Intrinsic) -> None:
    _require_init(cg, s, "get")
    base = cg.ld(qslot(cg, s, abi.Q_BASE))
    nbytes = cg.ld(qslot(cg, s, abi.Q_BUF_LEN))
    for var, value in zip(s.results, (base, nbytes, cg.i64(-1))):
        cg.b.store(cg.b.trunc(value, I32), cg.var(var))


# ----------------------------------------------------------------------------- flags
def _flag_slot(cg: Codegen, s: ir.Intrinsic, op: str) -> L.Value:
    event = s.args[0]
    eid = cg.b.sext(cg.expr(s.args[1]), I64)
    bad = cg.b.or_(cg.b.icmp_signed("<", eid, cg.i64(0)),
                   cg.b.icmp_signed(">=", eid, cg.i64(EVENT_IDS_PER_EVENT)))
    cg.fail_if(bad, E.FLAG_ID_RANGE, op, eid)
    return cg.b.add(cg.i64(event * EVENT_IDS_PER_EVENT), eid)


@lowering("set_flag")
def lower_set_flag(cg: Codegen, s: ir.Intrinsic) -> None:
    flag = _flag_slot(cg, s, "set_flag")
    slot = cg.b.add(cg.i64(abi.flag_base(cg.nq)), flag)
    v = cg.ld(slot)
    cg.fail_if(cg.b.icmp_signed(">", v, cg.i64(0)), E.FLAG_DOUBLE_SET, "set_flag", flag)
    cg.st(slot, cg.b.add(v, cg.i64(1)))
    notify_timing(cg, s, flag=flag)


@lowering("wait_flag")
def lower_wait_flag(cg: Codegen, s: ir.Intrinsic) -> None:
    flag = _flag_slot(cg, s, "wait_flag")
    slot = cg.b.add(cg.i64(abi.flag_base(cg.nq)), flag)
    v = cg.ld(slot)
    # a wait issued before its set stays pending; a later set_flag satisfies it
    site = cg.site("wait_flag")
    with cg.b.if_then(cg.b.icmp_signed("<=", v, cg.i64(0))):
        cg.st(cg.b.add(cg.i64(abi.flag_site_base(cg.nq)), flag), cg.i64(site))
    cg.st(slot, cg.b.sub(v, cg.i64(1)))
    notify_timing(cg, s, flag=flag)


@lowering("pipe_barrier")
def lower_pipe_barrier(cg: Codegen, s: ir.Intrinsic) -> None:
    notify_timing(cg, s)


@lowering("__kernel_end__")
def lower_kernel_end(cg: Codegen, s) -> None:
    """At the end of the kernel a still-pending wait_flag is the hang it would be on hardware."""
    b = cg.b
    base = abi.flag_base(cg.nq)
    pending = cg.alloca_builder.alloca(I64, name="pending")
    b.store(cg.i64(-1), pending)

    def body(i):
        v = cg.ld(b.add(cg.i64(base), i))
        cur = b.load(pending, typ=I64)
        take = b.and_(b.icmp_signed("<", v, cg.i64(0)), b.icmp_signed("<", cur, cg.i64(0)))
        b.store(b.select(take, i, cur), pending)

    from .intrinsics import counted_loop
    counted_loop(cg, cg.i64(abi.FLAG_SLOTS), body)
    flag = b.load(pending, typ=I64)
    has = b.icmp_signed(">=", flag, cg.i64(0))
    with b.if_then(has, likely=False):
        safe = b.select(has, flag, cg.i64(0))
        site = cg.ld(b.add(cg.i64(abi.flag_site_base(cg.nq)), safe))
        cg.st(abi.ERR_CODE, cg.i64(int(E.FLAG_NEVER_SET)))
        cg.st(abi.ERR_SITE, site)
        cg.st(abi.ERR_A, flag)
        b.branch(cg.fail_block)
        b.position_at_end(cg.func.append_basic_block("dead"))
    if cg.timing is not None:
        cg.timing.on_kernel_end(cg)
