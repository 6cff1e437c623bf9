"""``bilinear_interpolation`` (Ascend C BilinearInterpolation, half on A2), UB -> UB on PIPE_V.

``bilinear_interpolation(dst, src0, src0_offset, src1, mask, h_repeat, repeat_mode,
dst_blk_stride, v_r_offset, v_repeat, shared_tmp_buffer)``: ``v_repeat`` vertical iterations of
``h_repeat`` horizontal ones; horizontal iteration ``it`` (counted over all of them) reads the
8 uint32 values ``src0_offset[8 it .. 8 it + 7]``, each the start of a 32-byte block of src0,
multiplies block k by ``src1[it]`` (``repeat_mode`` False) or by ``src1[8 it + k]`` (True), and
accumulates the 8 products into the 8 dst blocks of the vertical iteration: block k at
``v * v_r_offset`` elements + ``k * dst_blk_stride`` blocks from dst. The mask chooses the lanes
(128 of half: a count or the two-word bit mask); masked-off lanes of dst are untouched.

What the documentation leaves open, chosen here and stated in the README:
* the offsets are byte offsets from src0's start and must be multiples of 32 (a block start);
* ``v_r_offset`` counts elements, ``dst_blk_stride`` 32-byte blocks (what pyasc's kernel test
  uses: v_r_offset 128 for the second vertical iteration's 8 blocks);
* the first horizontal iteration of a vertical iteration writes its products (the "previous
  result" it accumulates with does not exist yet; pyasc's test leaves dst uninitialised);
* products and sums are rounded to half after each operation, as a vmul and a vadd would;
* ``shared_tmp_buffer`` (uint8) is scratch, no size is documented: not read or written here;
* ``h_repeat`` and ``v_repeat`` are 8-bit (0..255; 0 computes nothing), ``dst_blk_stride`` and
  ``v_r_offset`` 16-bit.

Timing (uncalibrated estimate): each horizontal iteration is one repeat of the multiply-add
(axpy) class, the closest measured instruction (a block-gathered multiply and an accumulate).
"""
from __future__ import annotations

import numpy as np

from ...dsl.types import PipeID, float16
from . import CostClass, Family, OpSpec, register

BILINEAR_TYPES = (float16,)


def bilinear_reference(src0: np.ndarray, offsets: np.ndarray, src1: np.ndarray, dst: np.ndarray,
                       h_repeat: int, v_repeat: int, repeat_mode: bool, dst_blk_stride: int = 1,
                       v_r_offset: int = 128, lanes=None) -> np.ndarray:
    """``dst`` (half, flat) after the instruction; ``lanes``: 128 booleans (default all)."""
    out = dst.copy()
    lanes = np.ones(128, bool) if lanes is None else np.asarray(lanes, bool)
    it = 0
    for v in range(v_repeat):
        for h in range(h_repeat):
            for k in range(8):
                start = int(offsets[8 * it + k]) // 2
                blk = src0[start:start + 16]
                scale = src1[8 * it + k] if repeat_mode else src1[it]
                prod = (blk.astype(np.float32) * np.float32(scale)).astype(np.float16)
                at = v * v_r_offset + k * dst_blk_stride * 16
                sel = lanes[16 * k:16 * k + 16]
                cur = out[at:at + 16]
                new = prod if h == 0 else (cur.astype(np.float32) + prod.astype(
                    np.float32)).astype(np.float16)
                out[at:at + 16] = np.where(sel, new, cur)
            it += 1
    return out


register(OpSpec("bilinear_interpolation", Family.SYSTEM, PipeID.PIPE_V, CostClass.MADD,
                BILINEAR_TYPES, (("dst", "src0", "src0_offset", "src1", "mask", "h_repeat",
                                  "repeat_mode", "dst_blk_stride", "v_r_offset", "v_repeat",
                                  "shared_tmp_buffer"),),
                bilinear_reference, None,
                "bilinear_interpolation(dst, src0, src0_offset, src1, mask, h_repeat, "
                "repeat_mode, dst_blk_stride, v_r_offset, v_repeat, shared_tmp_buffer): blocks "
                "of src0 named by offsets, scaled by src1, accumulated per vertical iteration",
                2))
