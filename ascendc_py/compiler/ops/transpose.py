"""``transpose``: Ascend C's Transpose on the vector unit (PIPE_V), UB -> UB.

* ``transpose(dst, src)``: a 16 x 16 matrix of 2-byte elements (int16, uint16, half) is
  transposed: ``dst[i][j] = src[j][i]``; dst may be src (in place).
* ``transpose(dst, src, shared_tmp_buffer, TransposeParamsExt(n_size, c_size, h_size, w_size,
  transpose_type))``: ``TRANSPOSE_ND2ND_B16`` is the 16 x 16 transpose (uint16 on A2/A3);
  ``TRANSPOSE_NCHW2NHWC`` / ``TRANSPOSE_NHWC2NCHW`` permute an [N, C, H, W] tensor to
  [N, H, W, C] or back (int8, uint8, int16, uint16, half, int32, uint32, float), with
  c_size <= 4095, h_size * w_size <= 4095 and h_size * w_size * sizeof(T) a multiple of 32;
  src and dst must not overlap, and the temporary buffer must hold at least ``(c + 2) * h0 *
  w0 * sizeof(T)`` bytes (NCHW2NHWC) or ``(2c + 1) * h0 * w0 * sizeof(T)`` (NHWC2NCHW), h0 = 32
  for 8-bit types and 16 otherwise, w0 = 32 / sizeof(T) (Ascend C's table for A2/A3); it is
  scratch, its contents afterwards are unspecified (here: untouched). A size of 0 computes
  nothing. ``TRANSPOSE_TYPE_NONE`` does nothing; the other types are "not supported" in
  Ascend C and a compile error here.

Timing (no measured figure exists): the 16 x 16 transpose is one vector instruction over its
512 bytes; the NCHW/NHWC permutations are priced as two passes of MOV UB->UB over the tensor
(Ascend C builds them from TransDataTo5HD and copies through the temporary buffer).
"""
from __future__ import annotations

import enum

import numpy as np

from ...dsl.types import (PipeID, float16, float32, int8, int16, int32, uint8, uint16,
                          uint32)
from . import CostClass, Family, OpSpec, register


class TransposeType(enum.IntEnum):
    """pyasc's ``asc.TransposeType`` (Ascend C's enum, same values)."""

    TRANSPOSE_TYPE_NONE = 0
    TRANSPOSE_NZ2ND_0213 = 1
    TRANSPOSE_NZ2NZ_0213 = 2
    TRANSPOSE_NZ2NZ_012_WITH_N = 3
    TRANSPOSE_NZ2ND_012_WITH_N = 4
    TRANSPOSE_NZ2ND_012_WITHOUT_N = 5
    TRANSPOSE_NZ2NZ_012_WITHOUT_N = 6
    TRANSPOSE_ND2ND_ONLY = 7
    TRANSPOSE_ND_UB_GM = 8
    TRANSPOSE_GRAD_ND_UB_GM = 9
    TRANSPOSE_ND2ND_B16 = 10
    TRANSPOSE_NCHW2NHWC = 11
    TRANSPOSE_NHWC2NCHW = 12


BASIC_TYPES = (int16, uint16, float16)
EXT_B16_TYPES = (uint16,)
LAYOUT_TYPES = (int8, uint8, int16, uint16, float16, int32, uint32, float32)
#: TransposeParamsExt fields (pyasc's names) and defaults
PARAMS = (("n_size", 0), ("c_size", 0), ("h_size", 0), ("w_size", 0),
          ("transpose_type", TransposeType.TRANSPOSE_ND2ND_B16))
MAX_C, MAX_HW = 4095, 4095


def tmp_bytes(kind: TransposeType, c: int, esize: int) -> int:
    """The smallest shared_tmp_buffer Ascend C allows for an NCHW<->NHWC transpose."""
    h0, w0 = (32 if esize == 1 else 16), 32 // esize
    rows = c + 2 if kind == TransposeType.TRANSPOSE_NCHW2NHWC else 2 * c + 1
    return rows * h0 * w0 * esize


def transpose_reference(src: np.ndarray, kind=TransposeType.TRANSPOSE_ND2ND_B16, n=0, c=0,
                        h=16, w=16) -> np.ndarray:
    """The elements transpose writes, flat, in dst order."""
    if kind == TransposeType.TRANSPOSE_ND2ND_B16:
        return src[:256].reshape(16, 16).T.reshape(-1).copy()
    count = n * c * h * w
    if kind == TransposeType.TRANSPOSE_NCHW2NHWC:
        return src[:count].reshape(n, c, h, w).transpose(0, 2, 3, 1).reshape(-1).copy()
    return src[:count].reshape(n, h, w, c).transpose(0, 3, 1, 2).reshape(-1).copy()


register(OpSpec("transpose", Family.UNARY, PipeID.PIPE_V, CostClass.DMA, LAYOUT_TYPES,
                (("dst", "src"), ("dst", "src", "shared_tmp_buffer", "params")),
                transpose_reference, None,
                "transpose(dst, src): 16 x 16 transpose of 2-byte elements; transpose(dst, src, "
                "tmp, TransposeParamsExt(...)): also [N,C,H,W] <-> [N,H,W,C]", 0))
