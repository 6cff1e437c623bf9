"""Semantic analysis of the scalar-unit functions (``ops/scalar_bits.py``): constant arguments
fold here with the references; run-time ones become an ``scalar_bits`` / ``scalar_cast``
intrinsic with one result (lowered by ``codegen/lower_scalar_bits.py``)."""
from __future__ import annotations

import numpy as np

from ...dsl.types import RoundMode, float16, float32, int32, int64
from .. import ir
from ..errors import KernelTypeError, KernelValueError
from ..ops.convert import cast_reference
from ..ops.scalar_bits import KINDS
from . import scalars as S
from .builtins import bind_args, function, want_dtype, want_enum, want_int
from .values import ConstV, RtV

#: the modes the docs allow per target dtype
CAST_MODES = {int32: (RoundMode.CAST_RINT, RoundMode.CAST_FLOOR, RoundMode.CAST_CEIL,
                      RoundMode.CAST_ROUND),
              float16: (RoundMode.CAST_ODD,)}


def _count_value(v, name, loc) -> int:
    if not isinstance(v, ConstV) or v.dtype.is_float:
        raise KernelTypeError(f"asc.{name}: count_value must be a compile-time constant 0 or 1 "
                              f"(an Ascend C template argument), got {v.describe()}", loc)
    c = int(v.value)
    if c not in (0, 1):
        raise KernelValueError(f"asc.{name}: count_value must be 0 or 1, got {c}", loc)
    return c


def _bits(name: str, with_count: bool):
    params = ("value_in", "count_value") if with_count else ("value_in",)

    def handler(an, args, kwargs, loc):
        b = bind_args(f"asc.{name}()", params, args, kwargs, loc)
        extra = (_count_value(b["count_value"], name, loc),) if with_count else ()
        v = S.numeric(b["value_in"])
        expr = want_int(v, f"asc.{name} value_in", loc, int64)
        if isinstance(expr, ir.Const):
            return ConstV(KINDS[name](int(expr.value), *extra), int64)
        res = ir.Var(name, int64)
        an.emit(ir.Intrinsic("scalar_bits", (expr,), (res,), loc,
                             (("kind", name),) + ((("count_value", extra[0]),) if extra else ())))
        return RtV(ir.Load(res))
    return handler


for _name in KINDS:
    function(_name)(_bits(_name, _name in ("scalar_get_sff_value",
                                            "scalar_get_count_of_value")))


@function("scalar_cast")
def _scalar_cast(an, args, kwargs, loc):
    b = bind_args("asc.scalar_cast()", ("value_in", "dtype", "round_mode"), args, kwargs, loc)
    dtype = want_dtype(b["dtype"], "dtype", loc)
    mode = want_enum(b["round_mode"], RoundMode, "round_mode", loc)
    if dtype not in CAST_MODES:
        raise KernelTypeError(f"asc.scalar_cast converts float32 to int32 or float16, not to "
                              f"{dtype.name}", loc)
    if mode not in CAST_MODES[dtype]:
        allowed = ", ".join(m.name for m in CAST_MODES[dtype])
        raise KernelValueError(f"asc.scalar_cast to {dtype.name} takes round_mode {allowed} "
                               f"(Ascend C), got {mode.name}", loc)
    v = S.numeric(b["value_in"])
    if isinstance(v, ConstV):
        out = cast_reference(np.array([float(v.value)], np.float32), float32, dtype, mode)[0]
        return ConstV(int(out) if dtype == int32 else float(out), dtype)
    x = S.to_expr(v, float32)
    res = ir.Var("scalar_cast", dtype)
    an.emit(ir.Intrinsic("scalar_cast", (x,), (res,), loc, (("dtype", dtype),
                                                            ("mode", int(mode)))))
    return RtV(ir.Load(res))
