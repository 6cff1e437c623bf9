"""Codegen of TPipe/TQue/TBuf and flag intrinsics: calls into the runtime library.

Queue records and flags live in the ctx array (``simulator/abi.py``); the logic is in
``rtfuncs.py``; here each intrinsic passes its operands and reads results from ``RES0..2``.
"""
from __future__ import annotations

from ...simulator import abi
from .. import ir
from .core import Codegen, lowering
from .intrinsics import notify_timing
from .types import I32, I64


def _qbase(cg: Codegen, s: ir.Intrinsic) -> int:
    return abi.queue_slot(cg.nq, s.attr("queue"), 0)


def _tensor_results(cg: Codegen, s: ir.Intrinsic) -> None:
    for k, var in enumerate(s.results):
        cg.b.store(cg.b.trunc(cg.ld(abi.RES0 + k), I32), cg.var(var))


@lowering("init_buffer")
def lower_init_buffer(cg: Codegen, s: ir.Intrinsic) -> None:
    num, length = (cg.expr(a) for a in s.args)
    cg.call_rt("init_buffer", [_qbase(cg, s), int(s.attr("memory")), num, length],
               "init_buffer", (s.attr("queue"), int(s.attr("memory"))))
    notify_timing(cg, s)


@lowering("alloc_tensor", "deque")
def lower_take(cg: Codegen, s: ir.Intrinsic) -> None:
    cg.call_rt(s.op, [_qbase(cg, s), s.attr("queue")], s.op)
    _tensor_results(cg, s)
    notify_timing(cg, s, buffer=cg.b.srem(cg.ld(abi.RES2), cg.i64(256)))


@lowering("enque", "free_tensor")
def lower_give(cg: Codegen, s: ir.Intrinsic) -> None:
    tag = cg.expr(s.args[0].tag)
    args = [_qbase(cg, s), s.attr("queue")]
    if s.op == "enque":
        args.append(max(s.attr("depth"), 1))
    cg.call_rt(s.op, args + [tag], s.op)
    notify_timing(cg, s, buffer=cg.ld(abi.RES0))


@lowering("tbuf_get")
def lower_tbuf_get(cg: Codegen, s: ir.Intrinsic) -> None:
    cg.call_rt("tbuf_get", [_qbase(cg, s)], "get")
    _tensor_results(cg, s)


@lowering("set_flag", "wait_flag")
def lower_flag(cg: Codegen, s: ir.Intrinsic) -> None:
    event, eid = s.args
    cg.call_rt(s.op, [abi.flag_base(cg.nq), event, cg.expr(eid)], s.op)
    notify_timing(cg, s, flag=cg.ld(abi.RES0))


@lowering("pipe_barrier")
def lower_pipe_barrier(cg: Codegen, s: ir.Intrinsic) -> None:
    notify_timing(cg, s)


@lowering("__kernel_end__")
def lower_kernel_end(cg: Codegen, s) -> None:
    cg.call_rt("kernel_end", [abi.flag_base(cg.nq)], "kernel end")
    if cg.timing is not None:
        cg.timing.on_kernel_end(cg)


__all__ = ["I64"]
