"""Semantic analysis of the fused casts ``add_relu_cast``, ``sub_relu_cast`` and ``mul_cast``
(semantics: ``ops/fused.py``; the other fused ops are element-wise registry entries checked by
``builtins.vector_op``)."""
from __future__ import annotations

from ...dsl.types import bool_, int64
from .. import ir
from ..errors import KernelTypeError
from ..ops import REGISTRY
from . import scalars as S
from .builtins import bind_args, function, mask_operand, repeat_strides, want_int, want_local
from .values import ConstV, NoneV


def _fused_cast(op: str):
    spec = REGISTRY[op]
    count_form, masked_form = spec.forms

    def handler(an, args, kwargs, loc):
        masked = bool({"mask", "repeat_times", "repeat_params"} & set(kwargs)) or \
            len(args) >= len(masked_form) - 1
        form = masked_form if masked else count_form
        b = bind_args(f"asc.{op}()", form, args, kwargs, loc,
                      {"is_set_mask": ConstV(True, bool_)})
        dst = want_local(b["dst"], f"asc.{op} dst", loc)
        src0 = want_local(b["src0"], f"asc.{op} src0", loc)
        src1 = want_local(b["src1"], f"asc.{op} src1", loc)
        if src1.dtype != src0.dtype:
            raise KernelTypeError(f"asc.{op}: src1 is {src1.dtype.name} but src0 is "
                                  f"{src0.dtype.name}; the sources must have one dtype", loc)
        if (dst.dtype, src0.dtype) not in spec.mixed:
            allowed = ", ".join(f"{s.name}->{d.name}" for d, s in spec.mixed)
            raise KernelTypeError(f"asc.{op} does not convert {src0.dtype.name} to "
                                  f"{dst.dtype.name} on Ascend 910B (A2/A3); supported: "
                                  f"{allowed}", loc)
        attrs = (("dtype", dst.dtype), ("src_dtype", src0.dtype))
        refs = (dst.ref(), src0.ref(), src1.ref())
        if not masked:
            count = want_int(b["count"], f"asc.{op} count", loc)
            an.emit(ir.Intrinsic(op, refs + (count,), (), loc, attrs))
            return NoneV()
        # the mask selects lanes of the wider (source) type, as Ascend C's SetMask<U> does
        kind, lo, hi = mask_operand(b["mask"], src0.dtype, op, loc)
        repeat = want_int(b["repeat_times"], f"asc.{op} repeat_times", loc, int64)
        strides = repeat_strides(b["repeat_params"], True, loc)
        is_set = S.to_expr(S.truth(b["is_set_mask"], loc), int64)
        an.emit(ir.Intrinsic(op, refs + (is_set, kind, lo, hi, repeat) + strides, (), loc,
                             attrs + (("form", "masked"),)))
        return NoneV()
    return handler


for _op in ("add_relu_cast", "sub_relu_cast", "mul_cast"):
    function(_op)(_fused_cast(_op))
