"""repeat_reduce_sum (declaration): Ascend C's RepeatReduceSum, the older form of
WholeReduceSum.

``repeat_reduce_sum(dst, src, repeat_time, mask, dst_blk_stride, src_blk_stride, dst_rep_stride,
src_rep_stride, is_set_mask=True)`` (pyasc's names and order): one sum per repeat of the first
``mask`` lanes (a contiguous count only: the bit-mask form is a compile error, as the docs say),
written at ``dst + r * dst_rep_stride * sizeof(T)``. ``dst_blk_stride`` has no effect (the docs:
"any value"). The sum is the same instruction (CADD) as whole_reduce_sum's, with the same
summation tree, mask rules (0 lanes or 0 repeats: nothing written; counter mode after
``set_mask_count``) and checks; float16/float32. Timing: cost class REDUCE, as whole_reduce_sum.
"""
from __future__ import annotations

from ...dsl.types import PipeID
from . import CostClass, Family, OpSpec, register
from .reduce import REDUCE_DTYPES, _whole_ref

FORM = ("dst", "src", "repeat_time", "mask", "dst_blk_stride", "src_blk_stride",
        "dst_rep_stride", "src_rep_stride", "is_set_mask")


def repeat_reduce_sum_ref(dst, src, repeat_time, mask, dst_blk_stride, src_blk_stride,
                          dst_rep_stride, src_rep_stride, counter=False):
    """whole_reduce_sum's reference with pyasc's argument order (dst_blk_stride unused)."""
    del dst_blk_stride
    return _whole_ref("sum")(dst, src, mask, repeat_time, dst_rep_stride, src_blk_stride,
                             src_rep_stride, counter=counter)


register(OpSpec("repeat_reduce_sum", Family.SYSTEM, PipeID.PIPE_V, CostClass.REDUCE,
                REDUCE_DTYPES, (FORM,), repeat_reduce_sum_ref, None,
                "repeat_reduce_sum(dst, src, repeat_time, mask, dst_blk_stride, src_blk_stride, "
                "dst_rep_stride, src_rep_stride): one sum per repeat of the first mask lanes "
                "(Ascend C RepeatReduceSum; dst_blk_stride has no effect)"))
