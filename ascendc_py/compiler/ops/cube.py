"""The cube unit (A2/A3, Ascend 910B): ND2NZ copies into L1, load_data, mmad, fixpipe.

Declarations, parameter limits and the NumPy references of each instruction, written on the byte
layouts the hardware uses (Ascend C docs, "矩阵计算（ISASI）"), so that a kernel that moves
GM ND → L1 NZ → L0A ZZ / L0B ZN → mmad → L0C NZ → fixpipe → GM ND computes A @ B as on an NPU.

Layouts (``c0`` = 32 bytes / element size columns per fractal row; a fractal is 512 bytes):

* **L1 NZ** (``data_copy(l1, gm, Nd2NzParams(...))``): row ``j`` of ND matrix ``i`` goes to
  element ``i*dst_nz_matrix_stride + j*dst_nz_n_stride*c0``, its columns in ``c0``-wide blocks
  ``kb`` at ``+ kb*dst_nz_c0_stride*c0``; a partial last block is zero-padded to 32 bytes. With
  ``dst_nz_c0_stride`` = rows rounded to 16 and ``dst_nz_n_stride`` = 1 the fractals (16 rows ×
  c0) lie column-major.
* **load_data** (``LoadData2DParams``): repeat ``r`` copies the 512-byte fractal number
  ``start_index + r*src_stride`` of src to dst fractal ``r*(dst_gap+1)``; ``if_transpose``
  transposes each 16×16 fractal (16-bit types only).
* **L0A "ZZ"**: the m×k left matrix in fractals of 16 rows × k0 columns (k0 = c0), row-major
  fractal order (fractal (mb, kb) at ``(mb*K1 + kb)*512`` bytes, K1 = ceil(k/k0)), each fractal
  row-major. When m == 1 the cube runs in GEMV mode and reads the k elements contiguously.
* **L0B "ZN"**: the k×n right matrix in fractals of k0 × 16, fractal (kb, nb) at
  ``(kb*N1 + nb)*512`` bytes, each stored column-major (16 rows of n, each k0 contiguous k):
  element (p, j) at ``(j % 16)*k0 + p % k0``.
* **L0C "NZ"**: the m×n result (float32 or int32) in 16×16 fractals, fractal (mb, nb) at
  ``(nb*M1 + mb)*256`` elements, row-major inside. fixpipe's ``src_stride`` is the distance of
  column blocks in 16-element rows (usually m rounded up to 16).
* **fixpipe NZ2ND** (the default ``FixpipeConfig.cfg_row_major``): L0C element (row, col) goes
  to GM ``row*dst_stride + col`` (elements) of ND matrix ``i`` at ``i*dst_nd_stride``; source
  matrix ``i`` at ``i*src_nd_stride*256`` elements. NZ2NZ (``cfg_nz``): column block kb goes to
  ``kb*dst_stride*32`` bytes, each row of 16 at ``row*16`` elements.

Numerics: products of float16/bfloat16 are exact in float32; the simulator sums them in float32
with the host BLAS (numpy's OpenBLAS), so the result can differ from the hardware's summation
order by float32 rounding. int8 × int8 is exact (int32). The padded rows/columns of the last
fractals count as zero. fixpipe converts float32 → float16/bfloat16 with round-to-nearest-even
(CAST_RINT; overflow gives inf, the non-saturating mode).
"""
from __future__ import annotations

import dataclasses
import enum

import numpy as np

from ...dsl.types import (Memory, PipeID, bfloat16, float16, float32, int8, int16, int32, uint8,
                          uint16, uint32)
from . import REGISTRY, CostClass, Family, OpSpec, register

FRACTAL = 512            # bytes of one L0A/L0B fractal
C0_BYTES = 32            # one fractal row
M0 = N0 = 16
MAX_MNK = 4095


class QuantModes(enum.IntEnum):
    """fixpipe's conversion of L0C values (pyasc ``QuantModes``)."""

    NoQuant = 0
    F322F16 = 1
    F322BF16 = 2
    DEQF16 = 3
    VDEQF16 = 4
    QF322B8_PRE = 5
    VQF322B8_PRE = 6
    REQ8 = 7
    VREQ8 = 8


class CO2Layout(enum.IntEnum):
    """fixpipe output layout (pyasc ``CO2Layout``)."""

    NZ = 0
    ROW_MAJOR = 1
    COLUMN_MAJOR = 2


#: field name, lowest, highest value (Ascend C docs for A2/A3)
ND2NZ_FIELDS = (("nd_num", 0, 4095), ("n_value", 0, 16384), ("d_value", 0, 65535),
                ("src_nd_matrix_stride", 0, 65535), ("src_d_value", 1, 65535),
                ("dst_nz_c0_stride", 1, 16384), ("dst_nz_n_stride", 1, 16384),
                ("dst_nz_matrix_stride", 0, 16384))
LOAD2D_FIELDS = (("start_index", 0, 65535), ("repeat_times", 0, 255), ("src_stride", 0, 65535),
                 ("sid", 0, 65535), ("dst_gap", 0, 65535), ("if_transpose", 0, 1),
                 ("addr_mode", 0, 1))
MMAD_FIELDS = (("m", 0, MAX_MNK), ("n", 0, MAX_MNK), ("k", 0, MAX_MNK), ("unit_flag", 0, 3),
               ("cmatrix_source", 0, 1), ("cmatrix_init_val", 0, 1))
LOAD2D_T_FIELDS = (("start_index", 0, 65535), ("repeat_times", 0, 255), ("src_stride", 0, 65535),
                   ("dst_gap", 0, 65535), ("dst_frac_gap", 0, 65535), ("addr_mode", 0, 1))
#: LoadData2dTransposeParamsV2 (its load_data_with_transpose overload exists only on Ascend
#: 950PR/950DT per the Ascend C documentation: refused on A2/A3, the record is checked)
LOAD2D_T_V2_FIELDS = LOAD2D_T_FIELDS[:5] + (("src_frac_gap", 0, 65535), ("addr_mode", 0, 1))
FIXPIPE_FIELDS = (("n_size", 0, 4095), ("m_size", 0, 65535), ("src_stride", 0, 65535),
                  ("dst_stride", 1, 2 ** 32 - 1), ("nd_num", 0, 65535),
                  ("src_nd_stride", 0, 512), ("dst_nd_stride", 0, 65535))
FIXPIPE_ND_MAX_M = 8192   # m_size with NZ2ND

#: dtypes the ND2NZ copy and load_data move on A2/A3 (int4 is not modelled)
CUBE_COPY_TYPES = (int8, uint8, int16, uint16, float16, bfloat16, int32, uint32, float32)
#: dtypes of load_data_with_transpose on A2/A3 (b8, b16 floats, b32)
TRANSPOSE_TYPES = (int8, uint8, float16, bfloat16, int32, uint32, float32)
#: (A/B dtype, L0C dtype, bias dtype) of mmad on A2/A3
MMAD_TYPES = {float16: (float32, float32), bfloat16: (float32, float32),
              float32: (float32, float32), int8: (int32, int32)}
#: (L0C dtype, GM dtype) → the quant modes that produce it, implemented here
FIXPIPE_TYPES = {(float32, float32): (QuantModes.NoQuant,),
                 (float32, float16): (QuantModes.F322F16,),
                 (float32, bfloat16): (QuantModes.F322BF16,),
                 (int32, int32): (QuantModes.NoQuant,),
                 (int32, float16): (QuantModes.DEQF16,)}
#: combinations 910B supports that the simulator does not model yet
FIXPIPE_UNMODELLED = {(float32, int8): "QF322B8_PRE", (float32, uint8): "QF322B8_PRE",
                      (int32, int8): "REQ8", (int32, uint8): "REQ8"}


def c0_of(dtype) -> int:
    """Columns of one 32-byte fractal row for ``dtype`` (16 for 16-bit types)."""
    return C0_BYTES // dtype.sizeof()


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


# ----------------------------------------------------------------------------- NumPy references
def nd2nz_reference(dst: np.ndarray, src: np.ndarray, params) -> np.ndarray:
    """``dst`` (flat L1 elements) after ``data_copy(dst, src, Nd2NzParams(*params))`` from the
    flat GM array ``src`` (both start at the operands' first element)."""
    nd, n, d, s_mat, s_d, c0_stride, n_stride, d_mat = (int(v) for v in params)
    out = dst.copy()
    c0 = C0_BYTES // src.itemsize
    if not (nd and n and d):
        return out
    for i in range(nd):
        for j in range(n):
            row = src[i * s_mat + j * s_d:i * s_mat + j * s_d + d]
            for kb in range(_ceil(d, c0)):
                block = np.zeros(c0, src.dtype)
                part = row[kb * c0:(kb + 1) * c0]
                block[:len(part)] = part
                at = i * d_mat + j * n_stride * c0 + kb * c0_stride * c0
                out[at:at + c0] = block
    return out


def load2d_reference(dst: np.ndarray, src: np.ndarray, params) -> np.ndarray:
    """``dst`` (flat L0A/L0B elements) after ``load_data(dst, src, LoadData2DParams(*params))``
    (start_index, repeat_times, src_stride, sid, dst_gap, if_transpose, addr_mode)."""
    start, repeat, stride, _sid, gap, transpose, mode = (int(v) for v in params)
    out = dst.copy()
    f = FRACTAL // src.itemsize
    for r in range(repeat):
        s = (start + (-r if mode else r) * stride) * f
        frac = src[s:s + f]
        if transpose:
            frac = frac.reshape(16, 16).T.reshape(-1)
        out[r * (gap + 1) * f:r * (gap + 1) * f + f] = frac
    return out


def transpose_square(src: np.ndarray, at: int) -> list:
    """The destination fractals (flat) of one load_data_with_transpose repeat whose square
    starts at element ``at`` of ``src``: b16 transposes one 16×16 fractal; b8 stacks two
    16×32 fractals into a 32×32 square (rows), transposes it and splits it into two 16×32
    fractals; b32 puts two 16×8 fractals side by side (16×16), transposes and splits it into two
    16×8 fractals (Ascend C's LoadDataWithTranspose)."""
    es = src.itemsize
    if es == 2:
        return [src[at:at + 256].reshape(16, 16).T.reshape(-1)]
    if es == 1:
        t = src[at:at + 1024].reshape(32, 32).T
        return [t[:16].reshape(-1), t[16:].reshape(-1)]
    sq = np.hstack([src[at:at + 128].reshape(16, 8), src[at + 128:at + 256].reshape(16, 8)])
    t = sq.T
    return [np.ascontiguousarray(t[:, :8]).reshape(-1), np.ascontiguousarray(t[:, 8:]).reshape(-1)]


def load2d_transpose_reference(dst: np.ndarray, src: np.ndarray, params) -> np.ndarray:
    """``dst`` after ``load_data_with_transpose(dst, src, LoadData2dTransposeParams(start_index,
    repeat_times, src_stride, dst_gap, dst_frac_gap, addr_mode))``: start_index and src_stride
    count squares (512 bytes for 16-bit types, 1024 otherwise); repeat r's first fractal goes to
    fractal ``r·(dst_gap+1)``, its second ``dst_frac_gap+1`` fractals further."""
    start, repeat, stride, gap, frac_gap, mode = (int(v) for v in params)
    out = dst.copy()
    f = FRACTAL // src.itemsize
    square = f if src.itemsize == 2 else 2 * f
    for r in range(repeat):
        at = (start + (-r if mode else r) * stride) * square
        for j, frac in enumerate(transpose_square(src, at)):
            d = (r * (gap + 1) + j * (frac_gap + 1)) * f
            out[d:d + f] = frac
    return out


def _widen(a: np.ndarray, dtype) -> np.ndarray:
    if dtype == bfloat16:
        return (a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return a.astype(np.float64 if dtype.is_float else np.int64)


def zz_to_matrix(a: np.ndarray, m: int, k: int, dtype) -> np.ndarray:
    """The m×k matrix stored in L0A layout (flat array of ``dtype`` elements); GEMV for m == 1."""
    k0 = c0_of(dtype)
    if m == 1:
        return a[:k].reshape(1, k)
    k1 = _ceil(k, k0)
    i, p = np.meshgrid(np.arange(m), np.arange(k), indexing="ij")
    return a[((i // 16) * k1 + p // k0) * 16 * k0 + (i % 16) * k0 + p % k0]


def zn_to_matrix(b: np.ndarray, k: int, n: int, dtype) -> np.ndarray:
    """The k×n matrix stored in L0B layout."""
    k0 = c0_of(dtype)
    n1 = _ceil(n, 16)
    p, j = np.meshgrid(np.arange(k), np.arange(n), indexing="ij")
    return b[((p // k0) * n1 + j // 16) * 16 * k0 + (j % 16) * k0 + p % k0]


def nz_index(m: int, n: int, m_blocks: int) -> np.ndarray:
    """Flat L0C element index of each (row, col) of an m×n NZ matrix with ``m_blocks`` row
    fractals (the column-block stride in 16-element rows is 16 * m_blocks)."""
    i, j = np.meshgrid(np.arange(m), np.arange(n), indexing="ij")
    return ((j // 16) * m_blocks + i // 16) * 256 + (i % 16) * 16 + j % 16


def mmad_reference(c: np.ndarray, a: np.ndarray, b: np.ndarray, m: int, n: int, k: int,
                   in_dtype, init: bool = True, bias=None) -> np.ndarray:
    """L0C (flat float32/int32) after ``mmad``: the valid m×n part of the padded NZ result is
    ``A @ B`` (+ the old values unless ``init``, + ``bias[j]`` with the bias overload, which
    replaces the old values); padded rows/columns of the last fractals get the same rule with
    zero products. m, n or k = 0 is a no-op."""
    out = c.copy()
    if not (m and n and k):
        return out
    mp, np_ = _ceil(m, 16) * 16, _ceil(n, 16) * 16
    prod = np.zeros((mp, np_), np.float64 if in_dtype.is_float else np.int64)
    prod[:m, :n] = _widen(zz_to_matrix(a, m, k, in_dtype), in_dtype) @ \
        _widen(zn_to_matrix(b, k, n, in_dtype), in_dtype)
    idx = nz_index(mp, np_, mp // 16)
    if bias is not None:
        wide = np.zeros(np_, prod.dtype)
        wide[:n] = bias[:n]
        prod = prod + wide[None, :]
    elif not init:
        prod = prod + out[idx]
    out[idx] = prod.astype(out.dtype) if in_dtype.is_float else \
        prod.astype(np.int64).astype(np.int32)
    return out


def f32_to_bf16_bits(x: np.ndarray) -> np.ndarray:
    """float32 → bfloat16 bits (uint16), round to nearest even; NaN becomes 0x7FC0."""
    bits = np.ascontiguousarray(x, np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    out = rounded.astype(np.uint16)
    out[np.isnan(x)] = 0x7FC0
    return out


def deq_scale(deq_scalar: int) -> tuple[float, int, int]:
    """(M1 as float32 with 10 mantissa bits, shift N, mode-control bit) of a DEQF16 deq_scalar."""
    word = np.array([int(deq_scalar) & 0xFFFFE000], np.uint32).view(np.float32)[0]
    return float(word), ((int(deq_scalar) >> 32) & 0xF) + 1, (int(deq_scalar) >> 36) & 1


def convert_l0c(values: np.ndarray, quant: int, relu: bool, deq_scalar: int, out_dtype):
    """fixpipe's element conversion of L0C values (float32 or int32) to ``out_dtype``."""
    q = QuantModes(int(quant))
    if q == QuantModes.DEQF16:
        v = values.astype(np.int64)
        scale, shift, mcb = deq_scale(deq_scalar)
        if mcb:
            v = np.clip(v >> shift, -32768, 32767)
        f = v.astype(np.float32)
        f = np.where(f >= 0, f * np.float32(scale), f * np.float32(0.0 if relu else scale))
        f = np.clip(f.astype(np.float32), -65504.0, 65504.0)
        return f.astype(np.float16)
    v = values
    if relu:
        v = np.where(v < 0, np.zeros_like(v), v)
    if q == QuantModes.F322F16:
        with np.errstate(over="ignore"):
            return v.astype(np.float32).astype(np.float16)
    if q == QuantModes.F322BF16:
        return f32_to_bf16_bits(v.astype(np.float32))
    return v.astype(out_dtype.numpy)


def fixpipe_reference(dst: np.ndarray, src: np.ndarray, n_size: int, m_size: int,
                      src_stride: int, dst_stride: int, quant=0, deq_scalar: int = 0,
                      nd_num: int = 1, src_nd_stride: int = 0, dst_nd_stride: int = 0,
                      relu: bool = False, layout: int = CO2Layout.ROW_MAJOR,
                      out_dtype=None) -> np.ndarray:
    """``dst`` (flat GM elements; bfloat16 as uint16) after ``fixpipe`` from the flat L0C
    array ``src`` (see the module docstring for the layouts)."""
    out = dst.copy()
    out_dtype = out_dtype or {np.dtype(np.float16): float16, np.dtype(np.float32): float32,
                              np.dtype(np.int32): int32, np.dtype(np.uint16): bfloat16}[dst.dtype]
    if not (n_size and m_size and nd_num):
        return out
    if int(layout) == CO2Layout.NZ:
        es = out.itemsize
        for j in range(m_size):
            for kb in range(_ceil(n_size, 16)):
                s = kb * src_stride * 16 + j * 16
                d = (kb * dst_stride * 32) // es + j * 16
                out[d:d + 16] = convert_l0c(src[s:s + 16], quant, relu, deq_scalar, out_dtype)
        return out
    i, j = np.meshgrid(np.arange(m_size), np.arange(n_size), indexing="ij")
    for t in range(nd_num):
        s = t * src_nd_stride * 256 + (j // 16) * src_stride * 16 + i * 16 + j % 16
        d = t * dst_nd_stride + i * dst_stride + j
        out[d] = convert_l0c(src[s], quant, relu, deq_scalar, out_dtype)
    return out


# ----------------------------------------------------------------------------- declarations
#: byte alignment of buffers in each core-local memory (TQue/TBuf buffers start and stride on it)
def local_alignment() -> dict:
    from ...simulator.config import ASCEND910B2
    m = ASCEND910B2.memories
    return {Memory.UB: m.ub.alignment, Memory.L1: m.l1.alignment, Memory.L0A: m.l0a.alignment,
            Memory.L0B: m.l0b.alignment, Memory.L0C: m.l0c.alignment,
            Memory.BT: m.bias_table.alignment, Memory.FB: m.fixpipe_buffer.alignment}


REGISTRY["data_copy"] = dataclasses.replace(
    REGISTRY["data_copy"],
    forms=REGISTRY["data_copy"].forms + (("dst", "src", "intri_params"),),
    doc=REGISTRY["data_copy"].doc + " GM→L1 (A1/B1/C1) with Nd2NzParams(nd_num, n_value, "
        "d_value, src_nd_matrix_stride, src_d_value, dst_nz_c0_stride, dst_nz_n_stride, "
        "dst_nz_matrix_stride) converts ND to the cube's NZ layout (MTE2). L0C→GM with "
        "DataCopyCO12DstParams(n_size, m_size, dst_stride, src_stride, quant_pre, relu_pre, "
        "channel_split, nz2nd_en) is fixpipe's instruction on the FIX pipe, its scalar quant "
        "scale from set_fix_pipe_pre_quant_flag.")

register(OpSpec(
    "load_data", Family.DATA_COPY, PipeID.PIPE_MTE1, CostClass.DMA, CUBE_COPY_TYPES,
    (("dst", "src", "params"),), load2d_reference,
    doc="L1 (A1/B1) → L0A (A2) / L0B (B2) in 512-byte fractals: LoadData2DParams(start_index, "
        "repeat_times, src_stride, sid, dst_gap, if_transpose, addr_mode); if_transpose "
        "transposes each 16×16 fractal (16-bit types).", flops_per_elem=0))
register(OpSpec(
    "load_data_with_transpose", Family.DATA_COPY, PipeID.PIPE_MTE1, CostClass.DMA,
    TRANSPOSE_TYPES, (("dst", "src", "params"),), load2d_transpose_reference,
    doc="L1 (A1/B1) → L0A/L0B with a transpose of each square (16×16 for 16-bit types; two "
        "fractals forming 32×32 int8 or 16×16 int32/float32 squares): "
        "LoadData2dTransposeParams(start_index, repeat_times, src_stride, dst_gap, "
        "dst_frac_gap, addr_mode).", flops_per_elem=0))
register(OpSpec(
    "mmad", Family.SYSTEM, PipeID.PIPE_M, CostClass.NONE, tuple(MMAD_TYPES),
    (("dst", "fm", "filter", "params"), ("dst", "fm", "filter", "bias", "params")),
    mmad_reference,
    doc="Cube matrix multiply-accumulate: L0C (CO1, NZ) = L0A (A2, ZZ) @ L0B (B2, ZN) "
        "[+ L0C or + bias from the BiasTable (C2)]; MmadParams(m, n, k, unit_flag, "
        "cmatrix_source, cmatrix_init_val); float16/bfloat16/float32 → float32, int8 → int32.",
    flops_per_elem=2))
register(OpSpec(
    "fixpipe", Family.DATA_COPY, PipeID.PIPE_FIX, CostClass.DMA, (float32, int32),
    (("dst", "src", "params"), ("dst", "src", "params", "config")), fixpipe_reference,
    doc="L0C (CO1, NZ) → GM on the FIX pipe: FixpipeParamsV220(n_size, m_size, src_stride, "
        "dst_stride, quant_pre, deq_scalar, nd_num, src_nd_stride, dst_nd_stride, relu_en, "
        "unit_flag, is_channel_split), NZ→ND by default (FixpipeConfig.cfg_row_major) or NZ "
        "(cfg_nz); QuantModes NoQuant, F322F16, F322BF16 (round to nearest even), DEQF16.",
    flops_per_elem=0))
