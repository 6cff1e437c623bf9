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

from ...dsl.types import PipeID, float16, float32, int16
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
