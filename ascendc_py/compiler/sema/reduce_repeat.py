"""Semantic analysis of repeat_reduce_sum (``ops/reduce_repeat.py``).

Emits ``ir.Intrinsic("repeat_reduce_sum", ...)`` with whole_reduce_sum's operands (``dst, src,
is_set, mask_kind, mask_lo, mask_hi, repeat, dst_rep_stride, src_blk_stride, src_rep_stride``;
attr ``dtype``): the instruction is the same, only the call differs.
"""
from __future__ import annotations

from ...dsl.types import bool_
from .. import ir
from ..errors import KernelTypeError
from ..ops.reduce_repeat import FORM
from .builtins import bind_args, function
from .reduce import MAX_REPEAT, _count, _flag, _tensors
from .builtins import mask_operand
from .values import ConstV, NoneV, TupleV


@function("repeat_reduce_sum")
def _repeat_reduce_sum(an, args, kwargs, loc):
    b = bind_args("asc.repeat_reduce_sum()", FORM, args, kwargs, loc,
                  {"is_set_mask": ConstV(True, bool_)})
    dst, src = _tensors("repeat_reduce_sum", b, ("dst", "src"), loc)
    if isinstance(b["mask"], TupleV):
        raise KernelTypeError("asc.repeat_reduce_sum takes a contiguous mask (a lane count), "
                              "not a bit mask", loc,
                              hint="use asc.whole_reduce_sum for a bit mask")
    kind, lo, hi = mask_operand(b["mask"], dst.dtype, "repeat_reduce_sum", loc)
    repeat = _count(b["repeat_time"], "asc.repeat_reduce_sum repeat_time", loc, MAX_REPEAT)
    _count(b["dst_blk_stride"], "asc.repeat_reduce_sum dst_blk_stride", loc)  # no effect
    strides = tuple(_count(b[k], f"asc.repeat_reduce_sum {k}", loc, 65535)
                    for k in ("dst_rep_stride", "src_blk_stride", "src_rep_stride"))
    an.emit(ir.Intrinsic("repeat_reduce_sum", (dst.ref(), src.ref(),
                                               _flag(b["is_set_mask"], loc), kind, lo, hi,
                                               repeat) + strides, (), loc,
                         (("dtype", dst.dtype),)))
    return NoneV()
