"""Type conversion, comparison and selection: cast, compare, compare_scalar, select (declarations).

Semantics (Ascend C on A2/A3, `Memory矢量计算/类型转换/Cast.md` and `比较与选择/{Compare,Compares,
Select}.md` of the Ascend C docs):

**cast** ``(dst, src, round_mode, count)`` / ``(dst, src, round_mode, mask, repeat_times,
UnaryRepeatParams)``: the allowed (src, dst, RoundMode) triples are ``CAST_TABLE``; everything else
is a compile-time error. Rounding modes: RINT = nearest, ties to even; ROUND = nearest, ties away
from zero; FLOOR, CEIL, TRUNC = toward -inf, +inf, 0; ODD = round to odd (von Neumann: truncate,
then set the last bit if anything was lost); NONE = exact for conversions that cannot lose
precision (half/bf16/int16 -> float, int8/uint8 -> half, int32 -> int64) and RINT for the others
(float -> half, int16 -> half, int32 -> float, half -> int8/uint8), as Cast.md says ("CAST_NONE:
CAST_RINT when the conversion loses precision"). Float -> float (float32 -> float32) rounds to an
integral value. Results are IEEE exact for every input including subnormals: float -> half/bf16
overflow gives +-inf for RINT/ROUND and for rounding away from zero (CEIL of a positive, FLOOR of
a negative), the largest finite value toward zero (TRUNC, ODD, FLOOR of a positive, CEIL of a
negative); +-inf stays +-inf, NaN stays NaN. Conversions to an integer type saturate to the
target's range and map NaN to 0; int32 -> int16 and int64 -> int32 saturate too. In the masked
form the per-repeat element count is that of the wider type (256 / max(sizeof)), and each operand
has its own 32-byte blocks (a half source of a half -> float cast reads 4 blocks per repeat, so a
contiguous layout is dst_rep_stride 8, src_rep_stride 4).

**compare / compare_scalar** ``(dst, src0, src1 | src1_scalar, cmp_mode, count)``: bit i of the
uint8 ``dst`` (little-endian bit order within a byte: bit 0 = element 8k) is ``src0[i] <cmp>
src1[i]``. half and float take every CMPMODE, int32 only EQ. NaN compares unequal (NE true, the
others false). ``count * sizeof(T)`` must be a multiple of 256 bytes (Ascend C computes only whole
repeats). In the masked form the mask is a reserved parameter on A2/A3 ("保留参数，设置无效"): every
lane of each repeat is compared; repeat r writes its 256/sizeof(T) bits to dst bytes
[r * 32/sizeof(T), (r+1) * 32/sizeof(T)) (packed like the count form; dst strides are not used).

**select** ``(dst, sel_mask, src0, src1 | scalar, sel_mode, count)``: dst[i] = src0[i] where the
selection bit is 1, else src1[i] (or the scalar). VSEL_CMPMASK_SPR (mode 0): tensor/tensor, every
repeat uses the first 256/sizeof(T) bits of sel_mask again (bit i % (256/sizeof T));
VSEL_TENSOR_SCALAR_MODE (mode 1): tensor/scalar, and VSEL_TENSOR_TENSOR_MODE (mode 2):
tensor/tensor, the repeats consume sel_mask continuously (bit i). T: half, float; sel_mask:
uint8/16/32/64 (read as bits). Masked-off lanes of the masked form keep dst.
"""
from __future__ import annotations

import numpy as np

from ...dsl.types import (CMPMODE, SELMODE, DataType, PipeID, RoundMode, bfloat16, float16,
                          float32, int8, int16, int32, int64, uint8, uint16, uint32, uint64)
from . import CostClass, Family, OpSpec, register

R = RoundMode
DIRECTED = (R.CAST_RINT, R.CAST_FLOOR, R.CAST_CEIL, R.CAST_ROUND, R.CAST_TRUNC)
NONE_ONLY = (R.CAST_NONE,)

#: (src, dst) -> the RoundModes Ascend C allows on A2/A3 (Cast.md, Atlas A2 table; int4b_t has
#: no kernel dtype here and int32 -> half needs SetDeqScale, which is not modeled)
CAST_TABLE: dict[tuple[DataType, DataType], tuple[RoundMode, ...]] = {
    (int8, float16): NONE_ONLY,
    (uint8, float16): NONE_ONLY,
    (int16, float16): DIRECTED + (R.CAST_NONE,),
    (int16, float32): NONE_ONLY,
    (float16, int8): DIRECTED + (R.CAST_NONE,),
    (float16, uint8): DIRECTED + (R.CAST_NONE,),
    (float16, int16): DIRECTED,
    (float16, int32): DIRECTED,
    (float16, float32): NONE_ONLY,
    (bfloat16, int32): DIRECTED,
    (bfloat16, float32): NONE_ONLY,
    (int32, int16): NONE_ONLY,
    (int32, float32): DIRECTED + (R.CAST_NONE,),
    (int32, int64): NONE_ONLY,
    (float32, int16): DIRECTED,
    (float32, float16): DIRECTED + (R.CAST_ODD, R.CAST_NONE),
    (float32, bfloat16): DIRECTED,
    (float32, int32): DIRECTED,
    (float32, float32): DIRECTED,
    (float32, int64): DIRECTED,
    (int64, int32): NONE_ONLY,
    (int64, float32): DIRECTED,
}

COMPARE_TYPES = (float16, float32, int32)
COMPARE_DST_TYPES = (uint8, int8)
SELECT_TYPES = (float16, float32)
SELECT_MASK_TYPES = (uint8, uint16, uint32, uint64)

CAST_FORMS = (("dst", "src", "round_mode", "count"),
              ("dst", "src", "round_mode", "mask", "repeat_times", "repeat_params", "is_set_mask"))
COMPARE_FORMS = (("dst", "src0", "src1", "cmp_mode", "count"),
                 ("dst", "src0", "src1", "cmp_mode", "mask", "repeat_times", "repeat_params",
                  "is_set_mask"))
COMPARE_SCALAR_FORMS = (("dst", "src0", "src1_scalar", "cmp_mode", "count"),
                        ("dst", "src0", "src1_scalar", "cmp_mode", "mask", "repeat_times",
                         "repeat_params", "is_set_mask"))
SELECT_FORMS = (("dst", "sel_mask", "src0", "src1", "sel_mode", "count"),
                ("dst", "sel_mask", "src0", "src1", "sel_mode", "mask", "repeat_times",
                 "repeat_params", "is_set_mask"))


def allowed_modes(src: DataType, dst: DataType) -> tuple[RoundMode, ...]:
    return CAST_TABLE.get((src, dst), ())


def none_is_exact(src: DataType, dst: DataType) -> bool:
    """CAST_NONE converts exactly (no rounding possible) for these pairs."""
    return (src, dst) in ((int8, float16), (uint8, float16), (int16, float32), (float16, float32),
                          (bfloat16, float32), (int32, int64))


def compare_modes(dtype: DataType) -> tuple[CMPMODE, ...]:
    return (CMPMODE.EQ,) if dtype == int32 else tuple(CMPMODE)


# ----------------------------------------------------------------------------- NumPy references
# float formats: (precision bits incl. the implicit one, exponent of the smallest subnormal ulp,
# largest finite value)
_FORMATS = {"float16": (11, -24, 65504.0),
            "bfloat16": (8, -133, float(np.uint32(0x7F7F0000).view(np.float32))),
            "float32": (24, -149, float(np.finfo(np.float32).max))}


def round_integral(x: np.ndarray, mode: RoundMode) -> np.ndarray:
    """Round float64 values to integral values with ``mode`` (NONE = RINT)."""
    with np.errstate(invalid="ignore"):
        if mode in (R.CAST_RINT, R.CAST_NONE):
            return np.rint(x)
        if mode == R.CAST_FLOOR:
            return np.floor(x)
        if mode == R.CAST_CEIL:
            return np.ceil(x)
        t = np.trunc(x)
        if mode == R.CAST_TRUNC:
            return t
        frac = x - t
        if mode == R.CAST_ROUND:  # ties away from zero
            return t + np.where(np.abs(frac) >= 0.5, np.sign(x), 0.0)
        if mode == R.CAST_ODD:   # inexact: the odd one of the two neighbours
            return t + np.where((frac != 0) & (np.fmod(t, 2) == 0), np.sign(x), 0.0)
    raise ValueError(mode)


def round_to_format(x: np.ndarray, fmt: str, mode: RoundMode) -> np.ndarray:
    """float64 values rounded to the float format ``fmt`` with ``mode``, as float64 (exact)."""
    p, qmin, big = _FORMATS[fmt]
    x = np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        _, e = np.frexp(np.abs(x))                   # |x| = m * 2**e, 0.5 <= m < 1
        q = np.maximum(e - p, qmin)                   # exponent of one ulp at x
        r = np.copysign(np.ldexp(round_integral(np.ldexp(x, -q), mode), q), x)
        over = np.isfinite(x) & (np.abs(r) > big)
        if mode in (R.CAST_RINT, R.CAST_NONE, R.CAST_ROUND):
            sat = np.copysign(np.inf, x)
        elif mode in (R.CAST_TRUNC, R.CAST_ODD):
            sat = np.copysign(big, x)
        elif mode == R.CAST_FLOOR:
            sat = np.where(x > 0, big, -np.inf)
        else:
            sat = np.where(x > 0, np.inf, -big)
        r = np.where(over, sat, r)
        return np.where(np.isfinite(x), r, x)


def _int_to_float_exact(values, fmt: str, mode: RoundMode) -> np.ndarray:
    """Python-integer rounding (for int64 sources, which float64 does not hold exactly)."""
    p = _FORMATS[fmt][0]
    out = []
    for v in (int(a) for a in np.asarray(values).ravel()):
        u = abs(v)
        shift = max(u.bit_length() - p, 0)
        t, rem = divmod(u, 1 << shift)
        half = (1 << shift) // 2
        if rem:
            up = {R.CAST_RINT: rem > half or (rem == half and t & 1),
                  R.CAST_NONE: rem > half or (rem == half and t & 1),
                  R.CAST_ROUND: rem >= half, R.CAST_TRUNC: False,
                  R.CAST_FLOOR: v < 0, R.CAST_CEIL: v > 0}[mode]
            t += int(up)
        out.append(float(t << shift) * (-1 if v < 0 else 1))
    return np.array(out, np.float64).reshape(np.shape(values))


def _bf16_bits_to_f32(bits: np.ndarray) -> np.ndarray:
    return (np.asarray(bits, np.uint16).astype(np.uint32) << 16).view(np.float32)


def _f32_to_bf16_bits(x: np.ndarray) -> np.ndarray:
    """float64 values that are exact bfloat16 values -> bfloat16 bit patterns (uint16)."""
    bits = (np.asarray(x, np.float64).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return np.where(np.isnan(x), np.uint16(0x7FC0), bits)


def cast_reference(src: np.ndarray, src_dtype: DataType, dst: DataType,
                   round_mode: RoundMode) -> np.ndarray:
    """``asc.cast(dst, src, round_mode, n)`` in NumPy (bfloat16 arrays hold uint16 bits)."""
    mode = RoundMode(round_mode)
    if mode not in allowed_modes(src_dtype, dst):
        raise ValueError(f"cast {src_dtype.name} -> {dst.name} does not allow {mode.name}")
    src = np.asarray(src)
    with np.errstate(all="ignore"):
        return _cast(src, src_dtype, dst, mode)


def _cast(src: np.ndarray, src_dtype: DataType, dst: DataType, mode: RoundMode) -> np.ndarray:
    if src_dtype == bfloat16:
        x = _bf16_bits_to_f32(src).astype(np.float64)
    elif src_dtype == int64:
        x = None
    else:
        x = src.astype(np.float64)
    if dst.is_float:
        fmt = dst.name
        if src_dtype == int64:
            r = _int_to_float_exact(src, fmt, mode)
        elif src_dtype == float32 and dst == float32:
            with np.errstate(invalid="ignore"):
                r = np.where(np.isfinite(x), np.copysign(round_integral(x, mode), x), x)
        else:
            r = round_to_format(x, fmt, mode)
        return _f32_to_bf16_bits(r) if dst == bfloat16 else r.astype(dst.numpy)
    info = np.iinfo(dst.numpy)
    if src_dtype.is_int:  # integer narrowing/widening (NONE): saturate
        return np.clip(src.astype(np.int64), info.min, info.max).astype(dst.numpy)
    with np.errstate(invalid="ignore"):
        r = round_integral(x, mode)
        r = np.clip(np.where(np.isnan(r), 0.0, r), info.min, info.max)
    if dst == int64:  # float64 cannot hold 2**63 - 1: saturate in integers
        out = np.where(r >= 2.0 ** 63, 0, r).astype(np.int64)
        return np.where(r >= 2.0 ** 63, np.int64(info.max), out)
    return r.astype(dst.numpy)


_CMP = {CMPMODE.LT: np.less, CMPMODE.GT: np.greater, CMPMODE.EQ: np.equal,
        CMPMODE.LE: np.less_equal, CMPMODE.GE: np.greater_equal, CMPMODE.NE: np.not_equal}


def compare_reference(src0: np.ndarray, src1, cmp_mode: CMPMODE) -> np.ndarray:
    """``asc.compare`` / ``compare_scalar`` in NumPy: the packed uint8 bit mask."""
    with np.errstate(invalid="ignore"):
        bits = _CMP[CMPMODE(cmp_mode)](np.asarray(src0), src1)
    return np.packbits(bits, bitorder="little")


def select_reference(sel_mask: np.ndarray, src0: np.ndarray, src1, sel_mode: SELMODE
                     ) -> np.ndarray:
    """``asc.select`` over len(src0) elements in NumPy (sel_mask: any unsigned array, as bits)."""
    src0 = np.asarray(src0)
    n = src0.size
    bits = np.unpackbits(np.ascontiguousarray(sel_mask).view(np.uint8), bitorder="little")
    idx = np.arange(n)
    if SELMODE(sel_mode) == SELMODE.VSEL_CMPMASK_SPR:
        idx = idx % (256 // src0.dtype.itemsize)
    other = np.asarray(src1, src0.dtype) if np.ndim(src1) else src0.dtype.type(src1)
    return np.where(bits[idx] != 0, src0, other).astype(src0.dtype)


# ----------------------------------------------------------------------------- declarations
register(OpSpec("cast", Family.UNARY, PipeID.PIPE_V, CostClass.CONVERT,
                tuple(dict.fromkeys(s for s, _ in CAST_TABLE)), CAST_FORMS, cast_reference,
                None, "dst[i] = src[i] converted to dst's dtype with round_mode (Ascend C Cast)"))
register(OpSpec("compare", Family.BINARY, PipeID.PIPE_V, CostClass.SIMPLE, COMPARE_TYPES,
                COMPARE_FORMS, compare_reference, None,
                "bit i of dst (uint8) = src0[i] <cmp_mode> src1[i] (Ascend C Compare)"))
register(OpSpec("compare_scalar", Family.SCALAR, PipeID.PIPE_V, CostClass.SIMPLE, COMPARE_TYPES,
                COMPARE_SCALAR_FORMS, compare_reference, None,
                "bit i of dst (uint8) = src0[i] <cmp_mode> scalar (Ascend C CompareScalar)"))
register(OpSpec("select", Family.BINARY, PipeID.PIPE_V, CostClass.SIMPLE, SELECT_TYPES,
                SELECT_FORMS, select_reference, None,
                "dst[i] = src0[i] if bit i of sel_mask else src1[i] (or a scalar) (Ascend C "
                "Select)"))
