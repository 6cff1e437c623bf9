"""``copy``: Ascend C's Copy, a UB -> UB move on the vector unit (PIPE_V) with a mask and
repeat/DataBlock strides given by ``CopyRepeatParams(dst_stride, src_stride, dst_repeat_size,
src_repeat_size)``.

Only the masked forms exist (as in Ascend C and pyasc): ``copy(dst, src, mask, repeat_times,
repeat_params[, is_set_mask])`` with a contiguous mask (an int) or a bit mask (a list). Block
``i`` of repeat ``r`` of an operand starts ``(r * repeat_size + i * stride) * 32`` bytes after
its address; masked-off lanes leave dst untouched. Block strides are 16-bit fields (0..65535),
repeat sizes 12-bit (0..4095), unlike the 8-bit repeat strides of the arithmetic ops. The move
is a bit copy, so every 16- and 32-bit dtype Ascend C lists for A2/A3 is accepted.

Timing: one vector instruction priced by the ``copy`` row of the vector costs (cost class DMA):
Huawei's CA table's MOV UB->UB, 1 cycle per 256-byte repeat and a delay of 12.
"""
from __future__ import annotations

import numpy as np

from ...dsl.types import PipeID, bfloat16, float16, float32, int16, int32, uint16, uint32
from . import CostClass, Family, OpSpec, register

COPY_FORM = ("dst", "src", "mask", "repeat_time", "repeat_params", "is_set_mask")
COPY_TYPES = (uint16, int16, float16, bfloat16, uint32, int32, float32)
#: CopyRepeatParams fields with their defaults and hardware limits (Ascend C's Copy table)
COPY_PARAMS = (("dst_stride", 1, 65535), ("src_stride", 1, 65535),
               ("dst_repeat_size", 8, 4095), ("src_repeat_size", 8, 4095))
MAX_REPEAT_SIZE = 4095


def mask_lanes(mask, lanes: int) -> np.ndarray:
    """The lanes (bool[lanes]) a mask enables: an int is a contiguous count, a sequence of
    one or two uint64 words ``[low, high]`` is a bit mask (lane i = bit i)."""
    if isinstance(mask, (list, tuple)):
        bits = int(mask[0]) | (int(mask[1]) << 64 if len(mask) > 1 and lanes > 64 else 0)
        return np.array([(bits >> i) & 1 for i in range(lanes)], bool)
    return np.arange(lanes) < int(mask)


def strided_offsets(esize: int, repeat_times: int, blk: int, rep: int) -> np.ndarray:
    """Element offsets ``[repeat, lane]`` of an operand read or written by a masked vector
    instruction: block ``i`` of repeat ``r`` at ``(r * rep + i * blk) * 32`` bytes."""
    per_block = 32 // esize
    r = np.arange(repeat_times)[:, None]
    lane = np.arange(8 * per_block)[None, :]
    return (r * rep + (lane // per_block) * blk) * per_block + lane % per_block


def copy_reference(dst: np.ndarray, src: np.ndarray, mask, repeat_times: int,
                   dst_stride: int = 1, src_stride: int = 1, dst_repeat_size: int = 8,
                   src_repeat_size: int = 8) -> np.ndarray:
    """What ``copy`` leaves in ``dst`` (flat arrays of one dtype): repeats in order, so when
    dst and src blocks overlap a later repeat sees what an earlier one wrote."""
    out = dst.copy()
    lanes = 256 // dst.itemsize
    on = mask_lanes(mask, lanes)
    d = strided_offsets(dst.itemsize, repeat_times, dst_stride, dst_repeat_size)
    s = strided_offsets(dst.itemsize, repeat_times, src_stride, src_repeat_size)
    for r in range(repeat_times):
        out[d[r][on]] = src[s[r][on]]
    return out


register(OpSpec("copy", Family.UNARY, PipeID.PIPE_V, CostClass.DMA, COPY_TYPES, (COPY_FORM,),
                copy_reference, lambda eb, a: a,
                "copy(dst, src, mask, repeat_times, CopyRepeatParams(...)): UB -> UB vector copy "
                "(Ascend C Copy), masked, with DataBlock strides and repeat sizes", 0,
                max_repeat_stride=MAX_REPEAT_SIZE))
