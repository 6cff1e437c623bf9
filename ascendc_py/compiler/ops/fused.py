"""Fused vector ops: ``add_relu``, ``sub_relu`` (VADDRELU/VSUBRELU), ``fused_mul_add`` (VMADD:
dst = src0 * dst + src1), ``fused_mul_add_relu`` (VMADDRELU), ``mul_add_dst`` (VMLA: dst =
src0 * src1 + dst), in the count form and the masked form with ``BinaryRepeatParams`` (pyasc's
names and forms; dtypes as Ascend C allows them on A2/A3).

Rounding: the result is rounded after each step, in the operands' dtype — the product, then the
sum (relu is exact). Ascend C's documentation does not say, but its FusedMulAdd and
MulAddRelu examples (256 float16 results each, ``docs/zh/api/SIMD-API/基础API/Memory矢量计算/
复合计算/`` of cann/asc-devkit) match two roundings on 256 of 256 elements and one rounding on
only 186 and 218. For MulAddDst the documentation's example is the mixed form (float16
sources, float32 dst): the float16 product is exact in float32, then one float32 rounding,
which the example matches on 256 of 256; its float16/float16 form has no example and is taken
to round like VMADD. Integers (add_relu/sub_relu on int16) wrap, then relu.

Timing: add_relu/sub_relu are priced like add (SIMPLE class with the UB bank rule);
fused_mul_add, fused_mul_add_relu and mul_add_dst by the FMA class (msKPP's VMADD/VMLA, 6 cycles
per repeat).
"""
from __future__ import annotations

import numpy as np

from ...dsl.types import PipeID, float16, float32, int8, int16, uint8
from . import CostClass, Family, OpSpec, register
from .vector import BINARY_FORMS

RELU_TYPES = (int16, float16, float32)
FMA_TYPES = (float16, float32)


def _relu_ref(op):
    def ref(a, b):
        dtype = a.dtype
        with np.errstate(all="ignore"):
            if np.issubdtype(dtype, np.integer):
                r = op(a.astype(np.int64), b.astype(np.int64)).astype(dtype)   # wraps
            else:
                r = op(a, b).astype(dtype)    # numpy float16 arithmetic rounds once per op
            return np.maximum(r, dtype.type(0))
    return ref


def _two_step(first, second):
    """(x, y, z) -> second(round(first(x, y)), z), each rounded to the dtype."""
    def ref(x, y, z):
        with np.errstate(all="ignore"):
            return second(first(x, y).astype(x.dtype), z).astype(x.dtype)
    return ref


def _fma_ref(dst, src0, src1):
    """fused_mul_add: dst = src0 * dst + src1 (two roundings)."""
    return _two_step(np.multiply, np.add)(src0, dst, src1)


def _fma_relu_ref(dst, src0, src1):
    r = _fma_ref(dst, src0, src1)
    return np.maximum(r, r.dtype.type(0))


def _mla_ref(dst, src0, src1):
    """mul_add_dst: dst = src0 * src1 + dst; float16 sources with a float32 dst are widened
    (their product is exact in float32) and rounded once."""
    if dst.dtype != src0.dtype:
        return (src0.astype(np.float32) * src1.astype(np.float32) + dst).astype(dst.dtype)
    return _two_step(np.multiply, np.add)(src0, src1, dst)


register(OpSpec("add_relu", Family.BINARY, PipeID.PIPE_V, CostClass.SIMPLE, RELU_TYPES,
                BINARY_FORMS, _relu_ref(np.add), lambda eb, a, b: eb.max(eb.add(a, b), eb.zero(a)),
                "dst[i] = max(src0[i] + src1[i], 0) (Ascend C AddRelu)", 2))
register(OpSpec("sub_relu", Family.BINARY, PipeID.PIPE_V, CostClass.SIMPLE, RELU_TYPES,
                BINARY_FORMS, _relu_ref(np.subtract),
                lambda eb, a, b: eb.max(eb.sub(a, b), eb.zero(a)),
                "dst[i] = max(src0[i] - src1[i], 0) (Ascend C SubRelu)", 2))
register(OpSpec("fused_mul_add", Family.TERNARY, PipeID.PIPE_V, CostClass.FMA, FMA_TYPES,
                BINARY_FORMS, _fma_ref, lambda eb, d, a, b: eb.add(eb.mul(a, d), b),
                "dst[i] = src0[i] * dst[i] + src1[i], rounded after the product and the sum "
                "(Ascend C FusedMulAdd)", 2))
register(OpSpec("fused_mul_add_relu", Family.TERNARY, PipeID.PIPE_V, CostClass.FMA, FMA_TYPES,
                BINARY_FORMS, _fma_relu_ref,
                lambda eb, d, a, b: eb.max(eb.add(eb.mul(a, d), b), eb.zero(a)),
                "dst[i] = max(src0[i] * dst[i] + src1[i], 0) (Ascend C FusedMulAddRelu)", 3))
register(OpSpec("mul_add_dst", Family.TERNARY, PipeID.PIPE_V, CostClass.FMA, FMA_TYPES,
                BINARY_FORMS, _mla_ref, lambda eb, d, a, b: eb.add(eb.mul(a, b), d),
                "dst[i] = src0[i] * src1[i] + dst[i] (Ascend C MulAddDst): half/half, "
                "float/float, and half sources with a float dst", 2,
                mixed=((float32, float16),)))


# ----------------------------------------------------------------------------- fused casts
#: (src, dst) pairs of add_relu_cast / sub_relu_cast and of mul_cast (Ascend C on A2/A3)
RELU_CAST_PAIRS = ((float16, int8), (float32, float16), (int16, int8))
MUL_CAST_PAIRS = ((float16, int8), (float16, uint8))
CAST_BINARY_FORMS = (("dst", "src0", "src1", "count"),
                     ("dst", "src0", "src1", "mask", "repeat_times", "repeat_params",
                      "is_set_mask"))


def narrow(values: np.ndarray, dst) -> np.ndarray:
    """The conversion the fused casts end with (CAST_NONE, i.e. round to nearest even where
    precision is lost): to a float type as IEEE rounding does (overflow: inf, as asc.cast's
    RINT), to an integer type rounded and saturated (NaN: 0)."""
    target = np.dtype(dst)
    if target.kind == "f":
        with np.errstate(over="ignore"):
            return values.astype(target)
    info = np.iinfo(target)
    with np.errstate(invalid="ignore"):
        r = np.rint(values.astype(np.float64)) if values.dtype.kind == "f" else \
            values.astype(np.float64)
        r = np.where(np.isnan(r), 0, np.clip(r, info.min, info.max))
    return r.astype(target)


def _cast_ref(op, relu: bool):
    def ref(src0, src1, dst_dtype):
        """``op`` in the sources' dtype (rounded; integers wrap), relu, then ``narrow``."""
        with np.errstate(all="ignore"):
            if src0.dtype.kind == "i":
                r = op(src0.astype(np.int64), src1.astype(np.int64)).astype(src0.dtype)
            else:
                r = op(src0, src1).astype(src0.dtype)
        if relu:
            r = np.maximum(r, r.dtype.type(0))
        return narrow(r, dst_dtype)
    return ref


def _cast_spec(name, ref, pairs, cost, doc):
    register(OpSpec(name, Family.BINARY, PipeID.PIPE_V, cost, tuple(dict.fromkeys(
        s for s, _ in pairs)), CAST_BINARY_FORMS, ref, None, doc, 2,
        mixed=tuple((d, s) for s, d in pairs)))


_cast_spec("add_relu_cast", _cast_ref(np.add, True), RELU_CAST_PAIRS, CostClass.SIMPLE,
           "dst[i] = cast(max(src0[i] + src1[i], 0)) (Ascend C AddReluCast): float->half, "
           "half->int8, int16->int8")
_cast_spec("sub_relu_cast", _cast_ref(np.subtract, True), RELU_CAST_PAIRS, CostClass.SIMPLE,
           "dst[i] = cast(max(src0[i] - src1[i], 0)) (Ascend C SubReluCast)")
_cast_spec("mul_cast", _cast_ref(np.multiply, False), MUL_CAST_PAIRS, CostClass.MUL,
           "dst[i] = cast(src0[i] * src1[i]) (Ascend C MulCast): half->int8, half->uint8")
