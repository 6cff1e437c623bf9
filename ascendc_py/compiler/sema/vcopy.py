"""Semantic analysis of ``copy`` (Ascend C Copy, UB -> UB on the vector unit) and of its
parameter record ``CopyRepeatParams`` (semantics: ``ops/vcopy.py``).

Compile-time field values are range-checked here (the error names the line); run-time values
are checked by the runtime library with the instruction's other operands.
"""
from __future__ import annotations

from ...dsl.types import bool_, int32, int64
from .. import ir
from ..errors import ConstantRangeError, KernelTypeError
from ..ops import REGISTRY
from ..ops.vcopy import COPY_FORM, COPY_PARAMS
from . import scalars as S
from .builtins import bind_args, function, mask_operand, want_int, want_local
from .values import ConstV, NoneV, StructV

_NAMES = tuple(n for n, _, _ in COPY_PARAMS)


@function("CopyRepeatParams")
def _copy_repeat_params(an, args, kwargs, loc):
    """CopyRepeatParams(dst_stride=1, src_stride=1, dst_repeat_size=8, src_repeat_size=8)."""
    defaults = {n: ConstV(d, int32) for n, d, _ in COPY_PARAMS}
    b = bind_args("asc.CopyRepeatParams()", _NAMES, args, kwargs, loc, defaults)
    for name, _, limit in COPY_PARAMS:
        want_int(b[name], f"CopyRepeatParams.{name}", loc, int64)
        v = b[name]
        if isinstance(v, ConstV) and not 0 <= int(v.value) <= limit:
            raise ConstantRangeError(f"CopyRepeatParams.{name} is {v.value}; the hardware field "
                                     f"holds 0..{limit}", loc)
    return StructV("CopyRepeatParams", tuple((n, b[n]) for n in _NAMES))


@function("copy")
def _copy(an, args, kwargs, loc):
    """copy(dst, src, mask, repeat_time, repeat_params, is_set_mask=True)."""
    spec = REGISTRY["copy"]
    kwargs = dict(kwargs)
    if "repeat_times" in kwargs and "repeat_time" not in kwargs:   # the other ops' spelling
        kwargs["repeat_time"] = kwargs.pop("repeat_times")
    b = bind_args("asc.copy()", COPY_FORM, args, kwargs, loc,
                  {"is_set_mask": ConstV(True, bool_)})
    dst = want_local(b["dst"], "asc.copy dst", loc)
    src = want_local(b["src"], "asc.copy src", loc)
    if src.dtype != dst.dtype:
        raise KernelTypeError(f"asc.copy: src is {src.dtype.name} but dst is {dst.dtype.name}; "
                              f"copy moves elements of one dtype", loc,
                              hint="reinterpret_cast one of them, or convert with asc.cast")
    if dst.dtype not in spec.dtypes:
        allowed = ", ".join(d.name for d in spec.dtypes)
        raise KernelTypeError(f"asc.copy does not support {dst.dtype.name} on Ascend 910B "
                              f"(A2/A3); supported: {allowed}", loc)
    params = b["repeat_params"]
    if not isinstance(params, StructV) or params.kind != "CopyRepeatParams":
        raise KernelTypeError(f"asc.copy: repeat_params must be asc.CopyRepeatParams(...), got "
                              f"{params.describe()}", loc)
    f = {k: want_int(v, k, loc, int64) for k, v in params.fields}
    kind, lo, hi = mask_operand(b["mask"], dst.dtype, "copy", loc)
    repeat = want_int(b["repeat_time"], "asc.copy repeat_time", loc, int64)
    is_set = S.to_expr(S.truth(b["is_set_mask"], loc), int64)
    one, eight = ir.Const(1, int64), ir.Const(8, int64)
    strides = (f["dst_stride"], f["src_stride"], one, f["dst_repeat_size"],
               f["src_repeat_size"], eight)
    an.emit(ir.Intrinsic("copy", (dst.ref(), src.ref(), None, None, is_set, kind, lo, hi, repeat)
                         + strides, (), loc, (("dtype", dst.dtype), ("form", "masked"))))
    return NoneV()
