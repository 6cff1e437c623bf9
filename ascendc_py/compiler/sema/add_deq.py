"""Semantic analysis of add_deq_relu (``ops/add_deq.py``): int32 sources, a half dst, the count
form or the masked form (lanes of the int32 sources), IR ``(dst, src0, src1, count)`` or
``(dst, src0, src1, is_set, kind, lo, hi, repeat, 6 strides)`` with ``("form", "masked")``."""
from __future__ import annotations

from ...dsl.types import bool_, float16, int32, int64
from .. import ir
from ..errors import KernelTypeError, KernelValueError
from ..ops.add_deq import COUNT_FORM, MASKED_FORM
from . import scalars as S
from .builtins import bind_args, function, mask_operand, repeat_strides, want_int, want_local
from .values import ConstV, NoneV

_MASK_KEYS = {"mask", "repeat_times", "repeat_params", "is_set_mask"}


@function("add_deq_relu")
def _add_deq_relu(an, args, kwargs, loc):
    masked = bool(_MASK_KEYS & set(kwargs)) or len(args) >= 5
    b = bind_args("asc.add_deq_relu()", MASKED_FORM if masked else COUNT_FORM, args, kwargs,
                  loc, {"is_set_mask": ConstV(True, bool_)})
    dst = want_local(b["dst"], "asc.add_deq_relu dst", loc)
    srcs = [want_local(b[n], f"asc.add_deq_relu {n}", loc) for n in ("src0", "src1")]
    if dst.dtype != float16 or any(s.dtype != int32 for s in srcs):
        raise KernelTypeError(f"asc.add_deq_relu takes int32 sources and a half dst, got "
                              f"{srcs[0].dtype.name} + {srcs[1].dtype.name} -> "
                              f"{dst.dtype.name}", loc)
    refs = (dst.ref(), srcs[0].ref(), srcs[1].ref())
    if not masked:
        c = b["count"]
        if isinstance(c, ConstV) and not c.dtype.is_float and int(c.value) < 0:
            raise KernelValueError(f"asc.add_deq_relu: count {c.value} is negative", loc)
        an.emit(ir.Intrinsic("add_deq_relu", refs + (want_int(c, "count", loc, int64),), (),
                             loc, (("dtype", float16), ("src_dtype", int32))))
        return NoneV()
    kind, lo, hi = mask_operand(b["mask"], int32, "add_deq_relu", loc)
    rt = b["repeat_times"]
    if isinstance(rt, ConstV) and not rt.dtype.is_float and not 0 <= int(rt.value) <= 255:
        raise KernelValueError(f"asc.add_deq_relu: repeat_times {rt.value} is outside 0..255",
                               loc)
    repeat = want_int(rt, "asc.add_deq_relu repeat_times", loc, int64)
    is_set = S.to_expr(S.truth(b["is_set_mask"], loc), int64)
    strides = repeat_strides(b["repeat_params"], True, loc)
    an.emit(ir.Intrinsic("add_deq_relu", refs + (is_set, kind, lo, hi, repeat) + strides, (),
                         loc, (("dtype", float16), ("src_dtype", int32), ("form", "masked"))))
    return NoneV()
