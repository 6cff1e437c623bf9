"""The cube's 2:4 structured-sparse pair and the cube registers pyasc sets by name:
``load_data_with_sparse``, ``mmad_with_sparse``, ``load_data`` with ``LoadData2DParamsV2`` and
``set_fix_pipe_pre_quant_flag`` (``set_load_data_padding_value``: ops/load3d.py).

**2:4 sparsity** (Ascend C docs, MmadWithSparse / LoadDataWithSparse, "4:2稀疏矩阵乘"; A2/A3,
int8 only). The right matrix B (K × N) has at most 2 non-zeros in every group of 4 consecutive
elements along K. Before the kernel it is *densified* (:func:`densify_2to4`): each group of 4
keeps 2 values (K/2 × N) and, per kept value, a 2-bit index (0..3) of its position in the
group; the indices are packed 4 per byte, the first in the lowest bits (the docs' "reverse
order": index row 1 2 0 1 is the byte read MSB first as 1 0 2 1).

* ``load_data_with_sparse(dst_B2, src_B1, idx_B1, LoadData2DParams)``: as ``load_data``, repeat
  r copies the 512-byte dense fractal ``f = start_index + r·src_stride`` of src to dst fractal
  ``r·(dst_gap+1)`` and reads the 128 bytes of index at ``idx + f·128`` (one 2-bit index per
  byte of the fractal, in the fractal's element order) into the cube's index store beside that
  L0B fractal. if_transpose is refused (the docs: no transpose). *Chosen here* (the docs do not
  say where the index of repeat r lies): the index advances with the weight fractal.
* ``mmad_with_sparse(dst_CO1 int32, fm_A2 int8, filter_B2 int8, MmadParams(m, n, k))``: ``k`` is
  the width of A (the original K); B in L0B holds the ``ceil(k/2)`` dense rows in the ZN layout
  with their indices. ``C[i, j] (+)= Σ_p A[i, 4·(p//2) + idx[p, j]] · Bd[p, j]``; A's columns at
  or past k count as zero; the rest as ``mmad`` (NZ L0C, cmatrix_init_val, GEMV for m == 1).
  Timing: an int8 mmad over the dense K (the sparse cube skips the zero half).

**LoadData2DParamsV2** (m_start_position, k_start_position, m_step, k_step, src_stride,
dst_stride, if_transpose, sid): the Load2Dv2 form of ``load_data`` (L1/GM → L0A/L0B). The docs
give the fields and ranges but not their units; *chosen here*: the source is a grid of 512-byte
fractals stored column after column (the NZ layout ``data_copy`` with Nd2NzParams makes),
fractal (m, k) at ``(k·src_stride + m)·512`` bytes; the load copies the m_step × k_step
fractals from (m_start_position, k_start_position) to the destination fractal
``(i·dst_stride + j)`` (row-major: the ZZ order of L0A, the ZN order of L0B), transposing each
16×16 fractal with if_transpose (16-bit types, from L1 only).

**set_fix_pipe_pre_quant_flag(config)** (SetFixpipePreQuantFlag): the FIX pipe's scalar
quantization register (uint64, the DEQF16 scale word of ``FixpipeParamsV220.deq_scalar``). Every
block starts with it 0. *Chosen here* (like set_pad_value for data_copy_pad): a fixpipe with a
scalar quant mode whose params' ``deq_scalar`` is 0 (the default; a zero scale gives only zeros)
takes the register's value.
"""
from __future__ import annotations

import numpy as np

from ...dsl.types import PipeID, int8, uint8
from . import CostClass, Family, OpSpec, register
from .cube import CUBE_COPY_TYPES, FRACTAL, LOAD2D_FIELDS, _ceil, nz_index

#: bytes of index per 512-byte dense fractal (one 2-bit index per int8 element)
INDEX_BYTES = FRACTAL // 4
#: LoadData2DParamsV2 in pyasc's order: (field, default, lowest, highest) (pyasc's docs' ranges)
LOAD2D_V2_FIELDS = (("m_start_position", 0, 0, 65535), ("k_start_position", 0, 0, 65535),
                    ("m_step", 0, 0, 65535), ("k_step", 0, 0, 65535),
                    ("src_stride", 0, -2 ** 31, 2 ** 31 - 1), ("dst_stride", 0, 0, 65535),
                    ("if_transpose", False, 0, 1), ("sid", 0, 0, 255))
#: fields of load_data_with_sparse's LoadData2DParams (if_transpose must be 0)
SPARSE_LOAD_FIELDS = LOAD2D_FIELDS[:5] + (("if_transpose", 0, 0),) + LOAD2D_FIELDS[6:]
SPARSE_INDEX_TYPES = (uint8, int8)


# ----------------------------------------------------------------------------- host helpers
def densify_2to4(b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(dense K/2 × N values, K/2 × N indices 0..3) of a K × N matrix with at most 2 non-zeros
    per group of 4 along K (K a multiple of 4): each group keeps its first two non-zeros (a
    group with more keeps the first two, as the hardware does); a group with fewer fills the
    rest with zeros at its lowest unused positions."""
    k, n = b.shape
    if k % 4:
        raise ValueError(f"densify_2to4: K = {k} must be a multiple of 4")
    dense = np.zeros((k // 2, n), b.dtype)
    idx = np.zeros((k // 2, n), np.uint8)
    for g in range(k // 4):
        for j in range(n):
            grp = b[4 * g:4 * g + 4, j]
            keep = [t for t in range(4) if grp[t] != 0][:2]
            keep += [t for t in range(4) if t not in keep][:2 - len(keep)]
            for s, t in enumerate(sorted(keep)):
                dense[2 * g + s, j] = grp[t]
                idx[2 * g + s, j] = t
    return dense, idx


def pack_index(idx: np.ndarray) -> np.ndarray:
    """2-bit indices (flat, a multiple of 4 long) packed 4 per byte, the first lowest."""
    q = np.asarray(idx, np.uint8).reshape(-1, 4) & 3
    return (q[:, 0] | (q[:, 1] << 2) | (q[:, 2] << 4) | (q[:, 3] << 6)).astype(np.uint8)


def unpack_index(packed: np.ndarray) -> np.ndarray:
    """Inverse of :func:`pack_index`."""
    p = np.asarray(packed, np.uint8)
    return np.stack([(p >> s) & 3 for s in (0, 2, 4, 6)], axis=1).reshape(-1)


# ----------------------------------------------------------------------------- NumPy references
def load_sparse_reference(dst: np.ndarray, store: np.ndarray, src: np.ndarray, idx: np.ndarray,
                          params, dst_byte: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(L0B bytes, index store) after ``load_data_with_sparse``; ``store`` holds one 2-bit
    index per L0B byte (unpacked), ``dst`` starts at L0B byte ``dst_byte``."""
    start, repeat, stride, _sid, gap, _tr, mode = (int(v) for v in params)
    out, st = dst.copy(), store.copy()
    for r in range(repeat):
        f = start + (-r if mode else r) * stride
        d = r * (gap + 1) * FRACTAL
        out[d:d + FRACTAL] = src[f * FRACTAL:(f + 1) * FRACTAL]
        st[dst_byte + d:dst_byte + d + FRACTAL] = unpack_index(
            idx[f * INDEX_BYTES:(f + 1) * INDEX_BYTES])
    return out, st


def mmad_sparse_reference(c: np.ndarray, a: np.ndarray, b: np.ndarray, b_index: np.ndarray,
                          m: int, n: int, k: int, init: bool = True) -> np.ndarray:
    """L0C (flat int32) after ``mmad_with_sparse``: A (L0A ZZ int8, m × k), dense B (L0B ZN
    int8, ceil(k/2) × n) with ``b_index`` (one index per byte of ``b``)."""
    out = c.copy()
    if not (m and n and k):
        return out
    kd = _ceil(k, 2)
    k1, kd1, n1 = _ceil(k, 32), _ceil(kd, 32), _ceil(n, 16)
    mp, np_ = _ceil(m, 16) * 16, n1 * 16
    if m == 1:
        amat = np.zeros((1, k1 * 32), np.int64)
        amat[0, :k] = a[:k]
    else:
        i, p = np.meshgrid(np.arange(mp), np.arange(k1 * 32), indexing="ij")
        amat = a[((i // 16) * k1 + p // 32) * 512 + (i % 16) * 32 + p % 32].astype(np.int64)
    amat[:, k:] = 0
    amat = np.pad(amat, ((0, 0), (0, 4 * kd1 * 16 + 4 - amat.shape[1])))
    p, j = np.meshgrid(np.arange(kd), np.arange(np_), indexing="ij")
    at = ((p // 32) * n1 + j // 16) * 512 + (j % 16) * 32 + p % 32
    bd = b[at].astype(np.int64)
    bd[:, n:] = 0
    col = 4 * (p // 2) + b_index[at].astype(np.int64)        # kd × np original columns
    prod = np.einsum("ipj,pj->ij", amat[:, col], bd)[:mp] if m > 1 else \
        np.einsum("pj,pj->j", amat[0][col], bd)[None, :]
    full = np.zeros((mp, np_), np.int64)
    full[:prod.shape[0]] = prod
    idx = nz_index(mp, np_, mp // 16)
    if not init:
        full = full + out[idx]
    out[idx] = np.clip(full, -2 ** 31, 2 ** 31 - 1).astype(np.int32)
    return out


def load2d_v2_reference(dst: np.ndarray, src: np.ndarray, params) -> np.ndarray:
    """``dst`` (flat L0A/L0B elements) after ``load_data(dst, src, LoadData2DParamsV2(...))``."""
    ms, ks, mstep, kstep, sstride, dstride, transpose, _sid = (int(v) for v in params)
    out = dst.copy()
    f = FRACTAL // src.itemsize
    for i in range(mstep):
        for j in range(kstep):
            s = ((ks + j) * sstride + ms + i) * f
            frac = src[s:s + f]
            if transpose:
                frac = frac.reshape(16, 16).T.reshape(-1)
            d = (i * dstride + j) * f
            out[d:d + f] = frac
    return out


# ----------------------------------------------------------------------------- declarations
register(OpSpec(
    "load_data_with_sparse", Family.DATA_COPY, PipeID.PIPE_MTE1, CostClass.DMA, (int8,),
    (("dst", "src", "idx", "params"),), load_sparse_reference,
    doc="load_data_with_sparse(dst_B2, src_B1, idx_B1, LoadData2DParams): 2:4-densified int8 "
        "weight fractals (512 B each) L1 → L0B with their 2-bit indices (128 B per fractal) "
        "for mmad_with_sparse", flops_per_elem=0))
register(OpSpec(
    "mmad_with_sparse", Family.SYSTEM, PipeID.PIPE_M, CostClass.NONE, (int8,),
    (("dst", "fm", "filter", "params"),), mmad_sparse_reference,
    doc="mmad_with_sparse(dst_CO1, fm_A2, filter_B2, MmadParams(m, n, k)): int8 × 2:4-sparse "
        "int8 → int32; k is A's width, B2 holds ceil(k/2) dense rows loaded by "
        "load_data_with_sparse", flops_per_elem=2))
register(OpSpec(
    "load_data_2d_v2", Family.DATA_COPY, PipeID.PIPE_MTE1, CostClass.DMA, CUBE_COPY_TYPES,
    (("dst", "src", "params"),), load2d_v2_reference,
    doc="load_data(dst_A2_or_B2, src_L1_or_GM, LoadData2DParamsV2(m_start_position, "
        "k_start_position, m_step, k_step, src_stride, dst_stride, if_transpose, sid)): an "
        "m_step × k_step block of 512-byte fractals", flops_per_elem=0))
register(OpSpec(
    "set_fix_pipe_pre_quant_flag", Family.SYSTEM, PipeID.PIPE_S, CostClass.SCALAR, (),
    (("config",),), None,
    doc="set_fix_pipe_pre_quant_flag(config): fixpipe's scalar quant register (uint64), used "
        "by a fixpipe with a scalar quant mode whose deq_scalar is 0", flops_per_elem=0))
