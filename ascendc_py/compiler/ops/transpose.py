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


# ----------------------------------------------------------------------------- trans_data_to_5hd
# Ascend C's TransDataTo5HD (VNCHWCONV): 16 source and 16 destination 32-byte blocks given by
# address (a list of LocalTensors, a list of UB addresses, or a uint64 LocalTensor holding the
# addresses, as get_phy_addr gives them). One repeat reads the 16 source blocks and writes:
#   16-bit: dst block k = (src_0[k], src_1[k], ..., src_15[k])                (k < 16)
#   32-bit: dst block 2k + h = (src_8h[k], ..., src_8h+7[k])                   (k < 8, h < 2)
#   8-bit:  half ``dst_high_half`` of dst block k = (src_0[k + s], ..., src_15[k + s]) with
#           s = 16 if ``src_high_half`` (the other half of each dst block is kept)   (k < 16)
# Repeat r moves every source address by r * src_rep_stride blocks and every destination by
# r * dst_rep_stride blocks, except that a single repeat (repeat_times 1) is moved by one stride
# (Ascend C's documentation: "when repeatTimes is 1 the effective start is the list's address
# plus the stride; set it to 0"). repeat_times 0..255 (0: nothing). Timing (no measured figure):
# one vector instruction, 512 bytes a repeat at the MOV UB->UB rate.
TRANS5HD_TYPES = (int8, uint8, int16, uint16, float16, int32, uint32, float32)
TRANS5HD_PARAMS = (("dst_high_half", False), ("src_high_half", False), ("repeat_times", 1),
                   ("dst_rep_stride", 0), ("src_rep_stride", 0))


def trans5hd_reference(ub: np.ndarray, dst_addrs, src_addrs, esize: int, repeat: int,
                       dst_rep: int = 0, src_rep: int = 0, dst_high=False,
                       src_high=False) -> np.ndarray:
    """``ub`` (a uint8 array standing for the Unified Buffer) after the instruction; the
    addresses are byte offsets into it."""
    out = ub.copy()
    dt = {1: np.uint8, 2: np.uint16, 4: np.uint32}[esize]
    for r in range(repeat):
        step = 1 if repeat == 1 else r
        srcs = [out[a + step * src_rep * 32: a + step * src_rep * 32 + 32].view(dt).copy()
                for a in src_addrs]
        dsts = [a + step * dst_rep * 32 for a in dst_addrs]
        for k in range(16 if esize < 4 else 8):
            if esize == 4:
                for h in range(2):
                    vals = np.array([srcs[8 * h + j][k] for j in range(8)], dt)
                    out[dsts[2 * k + h]:dsts[2 * k + h] + 32] = vals.view(np.uint8)
            elif esize == 2:
                vals = np.array([srcs[j][k] for j in range(16)], dt)
                out[dsts[k]:dsts[k] + 32] = vals.view(np.uint8)
            else:
                vals = np.array([srcs[j][k + (16 if src_high else 0)] for j in range(16)], dt)
                at = dsts[k] + (16 if dst_high else 0)
                out[at:at + 16] = vals
    return out


register(OpSpec("trans_data_to_5hd", Family.UNARY, PipeID.PIPE_V, CostClass.DMA,
                TRANS5HD_TYPES, (("dst_list", "src_list", "params"),), trans5hd_reference, None,
                "trans_data_to_5hd(dst_list, src_list, TransDataTo5HDParams(...)): NCHW -> "
                "NC1HWC0 building block (Ascend C TransDataTo5HD)", 0))
