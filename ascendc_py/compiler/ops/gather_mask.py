"""gather_mask (declaration and NumPy reference): Ascend C's GatherMask, pyasc's
``gather_mask(dst, src0, src1_pattern, reduce_mode, mask, params, gather_mask_mode)``.

Elements of ``src0`` whose pattern bit is 1 are written one after another from ``dst[0]``; the
call returns how many (``rsvdCnt``), which ``get_gather_mask_remain_count()`` also gives until
the next gather_mask. Repeat ``r`` covers ``epr`` = 256 B / sizeof(T) lanes; lane ``l`` reads
``src0 + (r * src0_repeat_stride + (l // epb) * src0_block_stride) * 32 B + (l % epb) *
sizeof(T)`` (``GatherMaskParams(src0_block_stride=1, repeat_times=1, src0_repeat_stride=0,
src1_repeat_stride=0)``, strides in 32-byte blocks).

* The pattern: an int 1..7 is a built-in one, the same in every repeat (1: even lanes, 2: odd
  lanes, 3..6: lane 4k, 4k+1, 4k+2, 4k+3, 7: every lane); a uint16 (16-bit T) / uint32 (32-bit
  T) LocalTensor is a bit string, lane ``l`` of repeat ``r`` taking bit ``l`` (least significant
  bit of the first byte first) of the ``epr / 8`` bytes at ``src1 + r * src1_repeat_stride *
  32 B`` (the documentation says the pattern is consumed contiguously within a repeat and
  strided by src1_repeat_stride between repeats without naming the stride's unit: 32-byte
  blocks, as every other repeat stride, is our choice).
* ``reduce_mode`` False (normal mode): ``repeat_times`` repeats of every lane; ``mask`` has no
  effect. True (counter mode): the documentation gives two readings that differ between
  products without saying which is A2/A3's; we take the one every counter-mode instruction of
  this simulator follows: ``mask`` is the total element count (lanes ``0 .. mask - 1`` in
  repeats of ``epr``) and ``repeat_times`` has no effect.

Dtypes (A2/A3): half, bfloat16, uint16, int16, float, uint32, int32. Timing: VREDUCEV2, msKPP
18.3 B/c (≈14 cycles per 256-B repeat): cost class GATHER_MASK.
"""
from __future__ import annotations

import enum

import numpy as np

from ...dsl.types import (PipeID, bfloat16, float16, float32, int16, int32, uint16, uint32)
from . import CostClass, Family, OpSpec, register


class GatherMaskMode(enum.IntEnum):
    """pyasc ``asc.GatherMaskMode`` (reserved by Ascend C: DEFAULT only)."""

    DEFAULT = 0


MASK_DTYPES = (float16, bfloat16, uint16, int16, float32, uint32, int32)
FORM = ("dst", "src0", "src1_pattern", "reduce_mode", "mask", "params", "gather_mask_mode")
PARAMS = (("src0_block_stride", 1), ("repeat_times", 1), ("src0_repeat_stride", 0),
          ("src1_repeat_stride", 0))


def builtin_bit(pattern: int, lane: int) -> bool:
    return {1: lane % 2 == 0, 2: lane % 2 == 1, 3: lane % 4 == 0, 4: lane % 4 == 1,
            5: lane % 4 == 2, 6: lane % 4 == 3, 7: True}[int(pattern)]


def gather_mask_ref(dst, src0, src1_pattern, reduce_mode, mask, src0_block_stride=1,
                    repeat_times=1, src0_repeat_stride=0, src1_repeat_stride=0):
    """(result dst, rsvd_cnt). ``src1_pattern``: an int 1..7 or the pattern array."""
    out = np.array(dst, copy=True)
    es = out.itemsize
    epr, epb = 256 // es, 32 // es
    raw = np.ascontiguousarray(src0).view(np.uint8)
    pat = None if isinstance(src1_pattern, (int, np.integer)) else \
        np.ascontiguousarray(src1_pattern).view(np.uint8)
    if reduce_mode:
        lanes = [(i // epr, i % epr) for i in range(int(mask))]
    else:
        lanes = [(r, l) for r in range(int(repeat_times)) for l in range(epr)]
    k = 0
    for r, l in lanes:
        if pat is None:
            take = builtin_bit(src1_pattern, l)
        else:
            byte = pat[r * src1_repeat_stride * 32 + l // 8]
            take = bool((byte >> (l % 8)) & 1)
        if take:
            at = (r * src0_repeat_stride + (l // epb) * src0_block_stride) * 32 + (l % epb) * es
            out.view(np.uint8)[k * es:(k + 1) * es] = raw[at:at + es]
            k += 1
    return out, k


register(OpSpec("gather_mask", Family.SYSTEM, PipeID.PIPE_V, CostClass.GATHER_MASK,
                MASK_DTYPES, (FORM,), gather_mask_ref, None,
                "gather_mask(dst, src0, src1_pattern, reduce_mode, mask, GatherMaskParams(...), "
                "gather_mask_mode): the elements whose pattern bit is 1, packed from dst[0]; "
                "returns their count"))
register(OpSpec("gather_mask_count", Family.SYSTEM, PipeID.PIPE_S, CostClass.SCALAR, (), ((),),
                None, None, "get_gather_mask_remain_count(): the count the latest gather_mask "
                            "returned", flops_per_elem=0))
