"""Element-wise vector ops (count form ``op(dst, src…, count)`` and the masked form)."""
from __future__ import annotations

import numpy as np

from ...dsl.types import PipeID, bfloat16, float16, float32, int16, int32, uint16, uint32
from . import (ARITH_TYPES, FLOAT_TYPES, CostClass, Family, OpSpec, _in_dtype, _wrap_int,
               register)

# ----------------------------------------------------------------------------- element functions
# Each ``elem`` receives an ``ElemBuilder`` (codegen) and LLVM values of the op's dtype and
# returns the result value; ``eb`` hides float/int and float16 details.


BINARY_FORMS = (("dst", "src0", "src1", "count", "is_set_mask"),
                ("dst", "src0", "src1", "mask", "repeat_times", "repeat_params", "is_set_mask"))
UNARY_FORMS = (("dst", "src", "count", "is_set_mask"),
               ("dst", "src", "mask", "repeat_times", "repeat_params", "is_set_mask"))
SCALAR_FORMS = (("dst", "src", "scalar", "count", "is_set_mask"),
                ("dst", "src", "scalar", "mask", "repeat_times", "repeat_params", "is_set_mask"))
DUPLICATE_FORMS = (("dst", "scalar", "count", "is_set_mask"),
                   ("dst", "scalar", "mask", "repeat_times", "dst_block_stride",
                    "dst_repeat_stride", "is_set_mask"))
INT16_TYPES = (int16, uint16)
SHIFT_TYPES = (int16, uint16, int32, uint32)


def _binary(name, elem, ref, dtypes=ARITH_TYPES, cost=CostClass.SIMPLE, doc=""):
    register(OpSpec(name, Family.BINARY, PipeID.PIPE_V, cost, dtypes, BINARY_FORMS, ref, elem,
                    doc))


def _unary(name, elem, ref, dtypes=FLOAT_TYPES, cost=CostClass.SIMPLE, doc="", flops=1):
    register(OpSpec(name, Family.UNARY, PipeID.PIPE_V, cost, dtypes, UNARY_FORMS, ref, elem, doc,
                    flops))


def _scalar(name, elem, ref, dtypes=ARITH_TYPES, cost=CostClass.SIMPLE, doc=""):
    register(OpSpec(name, Family.SCALAR, PipeID.PIPE_V, cost, dtypes, SCALAR_FORMS, ref, elem,
                    doc))


_binary("add", lambda eb, a, b: eb.add(a, b), _wrap_int(lambda a, b: a + b),
        doc="dst[i] = src0[i] + src1[i]")
_binary("sub", lambda eb, a, b: eb.sub(a, b), _wrap_int(lambda a, b: a - b),
        doc="dst[i] = src0[i] - src1[i]")
_binary("mul", lambda eb, a, b: eb.mul(a, b), _wrap_int(lambda a, b: a * b), cost=CostClass.MUL,
        doc="dst[i] = src0[i] * src1[i]")
_binary("div", lambda eb, a, b: eb.div(a, b), _in_dtype(lambda a, b: a / b), dtypes=FLOAT_TYPES,
        cost=CostClass.DIV, doc="dst[i] = src0[i] / src1[i]")
_binary("max", lambda eb, a, b: eb.max(a, b), _wrap_int(np.maximum),
        doc="dst[i] = max(src0[i], src1[i])")
_binary("min", lambda eb, a, b: eb.min(a, b), _wrap_int(np.minimum),
        doc="dst[i] = min(src0[i], src1[i])")

_binary("bitwise_and", lambda eb, a, b: eb.b.and_(a, b), _wrap_int(lambda a, b: a & b),
        dtypes=INT16_TYPES, doc="dst[i] = src0[i] & src1[i] (Ascend C And)")
_binary("bitwise_or", lambda eb, a, b: eb.b.or_(a, b), _wrap_int(lambda a, b: a | b),
        dtypes=INT16_TYPES, doc="dst[i] = src0[i] | src1[i] (Ascend C Or)")

_scalar("adds", lambda eb, a, s: eb.add(a, s), _wrap_int(lambda a, s: a + s),
        doc="dst[i] = src[i] + scalar")
_scalar("muls", lambda eb, a, s: eb.mul(a, s), _wrap_int(lambda a, s: a * s), cost=CostClass.MUL,
        doc="dst[i] = src[i] * scalar")
_scalar("maxs", lambda eb, a, s: eb.max(a, s), _wrap_int(np.maximum),
        doc="dst[i] = max(src[i], scalar)")
_scalar("mins", lambda eb, a, s: eb.min(a, s), _wrap_int(np.minimum),
        doc="dst[i] = min(src[i], scalar)")
_scalar("leaky_relu", lambda eb, a, s: eb.select(eb.ge_zero(a), a, eb.mul(a, s)),
        _in_dtype(lambda a, s: np.where(a >= 0, a, a * s)), dtypes=FLOAT_TYPES,
        doc="dst[i] = src[i] if src[i] >= 0 else src[i] * scalar")

_scalar("shift_left", lambda eb, a, s: eb.shift(a, s, left=True),
        _wrap_int(lambda a, s: a << s), dtypes=SHIFT_TYPES,
        doc="dst[i] = src[i] << scalar (counts >= the bit width give 0)")
_scalar("shift_right", lambda eb, a, s: eb.shift(a, s, left=False),
        _wrap_int(lambda a, s: a >> s), dtypes=SHIFT_TYPES,
        doc="dst[i] = src[i] >> scalar (arithmetic for signed types, logical for unsigned)")

_unary("exp", lambda eb, a: eb.call_math("exp", a), _in_dtype(np.exp),
       cost=CostClass.TRANSCENDENTAL, doc="dst[i] = e ** src[i]")
_unary("ln", lambda eb, a: eb.call_math("log", a), _in_dtype(np.log),
       cost=CostClass.LN, doc="dst[i] = natural log of src[i]")
_unary("abs", lambda eb, a: eb.abs(a), _in_dtype(np.abs), doc="dst[i] = |src[i]|")
_unary("sqrt", lambda eb, a: eb.call_math("sqrt", a), _in_dtype(np.sqrt),
       cost=CostClass.DIV_SQRT, doc="dst[i] = sqrt(src[i])")
_unary("relu", lambda eb, a: eb.max(a, eb.zero(a)), _wrap_int(lambda a: np.maximum(a, 0)),
       dtypes=(float16, int32, float32), doc="dst[i] = max(src[i], 0)")

_unary("reciprocal", lambda eb, a: eb.div(eb.one(a), a), _in_dtype(lambda a: 1 / a),
       cost=CostClass.RECIP, doc="dst[i] = 1 / src[i]")
_unary("rsqrt", lambda eb, a: eb.rsqrt(a), _in_dtype(lambda a: 1 / np.sqrt(a)),
       cost=CostClass.RECIP, doc="dst[i] = 1 / sqrt(src[i])")
_unary("bitwise_not", lambda eb, a: eb.b.not_(a), _wrap_int(lambda a: ~a), dtypes=INT16_TYPES,
       doc="dst[i] = ~src[i] (Ascend C Not)")

register(OpSpec("duplicate", Family.DUPLICATE, PipeID.PIPE_V, CostClass.DUP,
                (int16, uint16, float16, bfloat16, int32, uint32, float32), DUPLICATE_FORMS,
                lambda dst, s: np.full_like(dst, s), lambda eb, s: s,
                "dst[i] = scalar", 0))

def _axpy_ref(dst, src, s):
    """dst + src * s in dst's dtype; a float16 src with a float32 dst is widened exactly."""
    if dst.dtype != src.dtype:
        return (dst + src.astype(np.float32) * np.float32(np.float16(s))).astype(dst.dtype)
    return _in_dtype(lambda d, a: d + a * s)(dst, src)


register(OpSpec("axpy", Family.AXPY, PipeID.PIPE_V, CostClass.MADD, FLOAT_TYPES, SCALAR_FORMS,
                _axpy_ref, lambda eb, d, a, s: eb.axpy(d, a, s),
                "dst[i] = dst[i] + src[i] * scalar (Ascend C Axpy): half/half, float/float, and "
                "half src with float dst (the scalar has the src dtype)", 2,
                mixed=((float32, float16),)))
