"""Codegen of repeat_reduce_sum: the library function of whole_reduce_sum (``asc_rgrp_<dtype>``
of ``lower_reduce.py``, whose checks, sanitize accesses and timing it shares) with the
whole-sum destination layout; the op index is its own, so reports count it by name."""
from __future__ import annotations

from ...simulator import timing_params as TP
from .. import ir
from ..ops.reduce import KINDS, ReduceOrder, whole_layout
from .core import Codegen, lowering
from .intrinsics import call_checked
from .lower_reduce import GROUP_PARAMS, _addr, _declare


@lowering("repeat_reduce_sum")
def lower_repeat_reduce_sum(cg: Codegen, s: ir.Intrinsic) -> None:
    dtype = s.attr("dtype")
    esize = dtype.sizeof()
    unit, voff, _, _ = whole_layout("sum", ReduceOrder.ORDER_VALUE_INDEX, esize)
    consts = [KINDS["sum"], 256 // esize, unit, 0, esize, voff, -1, 0, 0]
    rest = [cg._as_i64(cg.expr(e)) for e in s.args[2:]]
    fn = _declare(cg.module, f"asc_rgrp_{dtype.name}", GROUP_PARAMS)
    args = ([_addr(cg, s.args[0]), _addr(cg, s.args[1])] + [cg.i64(c) for c in consts] + rest
            + [cg.i64(TP.OP_INDEX[s.op])])
    call_checked(cg, fn, args, s.op, ("dst", "src"), operands=s.args[:2])
