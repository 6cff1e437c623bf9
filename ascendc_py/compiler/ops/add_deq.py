"""add_deq_relu (declaration and NumPy reference): Ascend C's AddDeqRelu.

``add_deq_relu(dst, src0, src1, count | mask, repeat_times, BinaryRepeatParams, is_set_mask)``:
int32 sources, half dst: ``dst[i] = half(max(deq(src0[i] + src1[i]), 0))`` with ``deq(x) =
x / 2**17 * DeqScale * 2**17`` (the docs' formula; the power-of-two factors only keep the
product in range, so in float32 it is ``float32(x) * scale``). DeqScale is the half scale
``set_deq_scale(scale)`` sets (``ops/deq.py``; a kernel that never set it stops at the line).
The int32 sum wraps (our choice: the docs do not say); the conversions round to nearest, ties to
even (float32 product, then half; overflow gives inf). The masked form's repeats are 64 int32
lanes (256 bytes of each source); dst uses 4 of the 8 blocks of its repeat stride. Timing: one
VCONV-class vector instruction (cost class CONVERT, shared/reference/aicore_params.md, the
measured VCONV rate), as cast_deq.
"""
from __future__ import annotations

import numpy as np

from ...dsl.types import PipeID, float16, int32
from . import CostClass, Family, OpSpec, register

COUNT_FORM = ("dst", "src0", "src1", "count")
MASKED_FORM = ("dst", "src0", "src1", "mask", "repeat_times", "repeat_params", "is_set_mask")


def add_deq_relu_reference(src0, src1, scale) -> np.ndarray:
    """Element-wise result (half) of add_deq_relu over the arrays."""
    s = (np.asarray(src0, np.int64) + np.asarray(src1, np.int64)).astype(np.int64)
    s = ((s + 2**31) % 2**32 - 2**31).astype(np.int32)             # int32 wrap
    with np.errstate(over="ignore"):
        v = s.astype(np.float32) * np.float32(np.float16(scale))
        v = np.maximum(v, np.float32(0))
        return v.astype(np.float16)


register(OpSpec("add_deq_relu", Family.SYSTEM, PipeID.PIPE_V, CostClass.CONVERT, (int32,),
                (COUNT_FORM, MASKED_FORM), add_deq_relu_reference, None,
                "add_deq_relu(dst, src0, src1, count | mask, repeat_times, repeat_params): "
                "half(max((src0 + src1) * DeqScale, 0)) for int32 sources, the half scale of "
                "set_deq_scale(scale)", 3, mixed=((float16, int32),)))
