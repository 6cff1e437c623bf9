"""Codegen of TPipe/TQue/TBuf and flag intrinsics: calls into the runtime library.

Queue records and flags live in the ctx array (``simulator/abi.py``); the logic and the flags
each queue operation implies for the timing model are in ``rtfuncs.py``; here each intrinsic
passes its operands and reads results (address, bytes, tag) from ``RES0..2``.
"""
from __future__ import annotations

from ...dsl.types import HardEvent, PipeID, TPosition
from ...simulator import abi
from ...simulator import timing_params as TP
from .. import ir
from .core import Codegen, lowering
from .intrinsics import call_checked
from .runtime_lib import declare_rt
from .timing import POSITION_PIPES
from .types import I32


def _qbase(cg: Codegen, s: ir.Intrinsic):
    return cg.i64(abi.queue_slot(cg.nq, s.attr("queue"), 0))


def _pipes(s: ir.Intrinsic) -> tuple[PipeID, PipeID]:
    if s.attr("bind") is not None:   # a TQueBind's path (sema/queue_bind.py)
        return bind_pipes(*(TPosition(p) for p in s.attr("bind")))
    return POSITION_PIPES.get(s.attr("position"), (PipeID.PIPE_V, PipeID.PIPE_V))


def bind_pipes(src: TPosition, dst: TPosition) -> tuple[PipeID, PipeID]:
    """(producer, consumer) pipes of a TQueBind path: those of the TQue it acts as, and for
    VECIN -> VECOUT (a copy through UB) MTE2 -> MTE3."""
    if (src, dst) == (TPosition.VECIN, TPosition.VECOUT):
        return PipeID.PIPE_MTE2, PipeID.PIPE_MTE3
    from ..sema.queue_bind import PATHS
    pos = PATHS.get((src, dst), dst if src == TPosition.GM else src)
    return POSITION_PIPES.get(pos, (PipeID.PIPE_V, PipeID.PIPE_V))


def _call(cg: Codegen, name: str, args: list, op: str, detail: tuple = ()) -> None:
    call_checked(cg, declare_rt(cg.module, name), [cg._as_i64(a) for a in args], op, detail)


def _inserted(s: ir.Intrinsic) -> tuple:
    """The site detail of a statement the insert_sync pass added (the report lists them)."""
    pair = s.attr("insert_sync")
    return ("insert_sync", pair) if pair else ()


def _tensor_results(cg: Codegen, s: ir.Intrinsic) -> None:
    for k, var in enumerate(s.results):
        cg.b.store(cg.b.trunc(cg.ld(abi.RES0 + k), I32), cg.var(var))


@lowering("init_buffer")
def lower_init_buffer(cg: Codegen, s: ir.Intrinsic) -> None:
    num, length = (cg.expr(a) for a in s.args)
    call_checked(cg, declare_rt(cg.module, "init_buffer"),
                 [_qbase(cg, s), cg.i64(int(s.attr("memory"))), cg._as_i64(num),
                  cg._as_i64(length)], "init_buffer", (s.attr("queue"), int(s.attr("memory"))))
    cg.scalar_cost(4)


@lowering("alloc_tensor", "deque")
def lower_take(cg: Codegen, s: ir.Intrinsic) -> None:
    producer, consumer = _pipes(s)
    pipe = producer if s.op == "alloc_tensor" else consumer
    args = [_qbase(cg, s), cg.i64(s.attr("queue")), cg.i64(int(pipe)), cg.i64(TP.OP_INDEX[s.op])]
    if s.op == "alloc_tensor":
        args.append(cg.i64(int(s.attr("position"))))
    else:
        args.append(cg.i64(int(producer)))   # deque hands the producer's writes over
    _call(cg, s.op, args, s.op)
    _tensor_results(cg, s)


@lowering("enque", "free_tensor")
def lower_give(cg: Codegen, s: ir.Intrinsic) -> None:
    producer, consumer = _pipes(s)
    tag = cg.expr(s.args[0].tag)
    args = [_qbase(cg, s), cg.i64(s.attr("queue"))]
    if s.op == "enque":
        args.append(cg.i64(max(s.attr("depth"), 1)))
    pipe = producer if s.op == "enque" else consumer
    extra = [cg.i64(int(s.attr("position")))] if s.op == "free_tensor" else []
    _call(cg, s.op, args + [tag, cg.i64(int(pipe)), cg.i64(TP.OP_INDEX[s.op])] + extra, s.op)


@lowering("tbuf_get")
def lower_tbuf_get(cg: Codegen, s: ir.Intrinsic) -> None:
    _call(cg, "tbuf_get", [_qbase(cg, s)], "get")
    _tensor_results(cg, s)


@lowering("tque_query")
def lower_tque_query(cg: Codegen, s: ir.Intrinsic) -> None:
    """The queue's counters, read from its record: an uninitialised queue has none (count 0,
    no idle buffer, not vacant)."""
    from llvmlite import ir as L
    b, q, nq = cg.b, s.attr("queue"), cg.nq
    inited = b.icmp_signed("!=", cg.ld(abi.queue_slot(nq, q, abi.Q_INITED)), cg.i64(0))
    count = cg.ld(abi.queue_slot(nq, q, abi.Q_COUNT))
    query = s.attr("query")
    if query == "get_tensor_count_in_que":
        value = count
    elif query == "has_tensor_in_que":
        value = b.icmp_signed(">", count, cg.i64(0))
    elif query == "vacant_in_que":
        value = b.and_(inited, b.icmp_signed("<", count, cg.i64(max(s.attr("depth"), 1))))
    else:   # has_idle_buffer
        num = cg.ld(abi.queue_slot(nq, q, abi.Q_NUM))
        value = L.Constant(L.IntType(1), 0)
        for k in range(abi.Q_MAX_BUFFERS):
            free = b.icmp_signed("==", cg.ld(abi.queue_slot(nq, q, abi.Q_STATE + k)),
                                 cg.i64(abi.BUF_FREE))
            value = b.or_(value, b.and_(free, b.icmp_signed("<", cg.i64(k), num)))
        value = b.and_(value, inited)
    (var,) = s.results      # int32 for the count, bool (i1) for the others
    if query == "get_tensor_count_in_que":
        value = b.trunc(value, I32)
    b.store(value, cg.var(var))
    cg.scalar_cost(2)


@lowering("tpipe_release")
def lower_tpipe_release(cg: Codegen, s: ir.Intrinsic) -> None:
    """TPipe.destroy / reset: every queue and TBuf uninitialised and empty, every buffer's
    generation bumped (a tensor handed out before is stale: using or freeing it is an error),
    the allocation pointers of the memories and the live-tensor counts back to zero."""
    from ...dsl.types import Memory, TPosition
    zero = cg.i64(0)
    site = cg.i64(cg.site(s.attr("what") or "destroy", ()))   # a stale tensor's error names it
    for q in range(cg.nq):
        for field in (abi.Q_INITED, abi.Q_COUNT, abi.Q_HEAD, abi.Q_CURSOR):
            cg.st(abi.queue_slot(cg.nq, q, field), zero)
        for k in range(abi.Q_MAX_BUFFERS):
            cg.st(abi.queue_slot(cg.nq, q, abi.Q_STATE + k), cg.i64(abi.BUF_FREE))
            gen = abi.queue_slot(cg.nq, q, abi.Q_GEN + k)
            cg.st(gen, cg.b.and_(cg.b.add(cg.ld(gen), cg.i64(1)), cg.i64(abi.TAG_GEN_MASK)))
            cg.st(abi.queue_slot(cg.nq, q, abi.Q_FREE_SITE + k), site)
    for mem in Memory:
        if mem != Memory.GM:
            cg.st(abi.ALLOC_PTR + int(mem), zero)
    for pos in TPosition:
        cg.st(abi.POS_LIVE + int(pos), zero)
    cg.scalar_cost(4)


@lowering("set_flag", "wait_flag")
def lower_flag(cg: Codegen, s: ir.Intrinsic) -> None:
    event, eid = s.args
    ev = HardEvent(event)
    pipe = ev.src_pipe if s.op == "set_flag" else ev.dst_pipe
    extra = [cg.i64(int(ev.src_pipe))] if s.op == "wait_flag" else []
    _call(cg, s.op, [cg.i64(abi.flag_base(cg.nq)), cg.i64(event), cg.expr(eid),
                     cg.i64(int(pipe)), cg.i64(TP.OP_INDEX[s.op])] + extra, s.op, _inserted(s))


@lowering("pipe_barrier")
def lower_pipe_barrier(cg: Codegen, s: ir.Intrinsic) -> None:
    if cg.timing is not None:
        cg.timing.barrier(cg, s.args[0])
    _call(cg, "san_barrier", [cg.i64(s.args[0])], "pipe_barrier", _inserted(s))  # sanitize
    if s.args[0] == int(PipeID.PIPE_ALL):   # every queue tensor's writes are handed over
        _call(cg, "barrier_handover", [cg.i64(abi.flag_base(cg.nq))], "pipe_barrier")


@lowering("__kernel_end__")
def lower_kernel_end(cg: Codegen, s) -> None:
    _call(cg, "kernel_end", [cg.i64(abi.flag_base(cg.nq))], "kernel end")
