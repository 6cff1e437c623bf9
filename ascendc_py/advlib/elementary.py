"""exp, log, floor, ceil, round, trunc, frac, sign, power, xor, axpy (pyasc's ``asc.adv``).

Each is an ``@asc.kernel`` device function built from vector instructions; the algorithms are
described in the README ("High-level math APIs") with their source (Ascend C's documentation
or our choice) and measured accuracy.
"""
import math as _m

import ascendc_py as asc

from ._core import (EQ, GT, LT, NE, REPEAT, TS, TT, element_count, float_operands, horner,
                    mask_region, messages, region, scratch, unary)

__asc_library__ = True

R = asc.RoundMode
#: float32 scratch regions per API (besides the input and result regions): the tmp-size rule
REGIONS = {"floor": 0, "ceil": 0, "round": 0, "trunc": 0, "frac": 1, "sign": 3, "exp": 3,
           "power": 7}
M_CEIL = messages("ceil", REGIONS["ceil"] + 2)
M_EXP = messages("exp", REGIONS["exp"] + 2)
M_FLOOR = messages("floor", REGIONS["floor"] + 2)
M_FRAC = messages("frac", REGIONS["frac"] + 2)
M_POWER = messages("power", REGIONS["power"] + 2)
M_ROUND = messages("round", REGIONS["round"] + 2)
M_SIGN = messages("sign", REGIONS["sign"] + 2)
M_TRUNC = messages("trunc", REGIONS["trunc"] + 2)
M_LOG = messages("log", 0)
M_XOR = (f"asc.adv.xor: dst, src0 and src1 must all be int16 or all uint16",
            "asc.adv.xor: count must be between 0 and the sizes of src0, src1 and dst",
            f"asc.adv.xor: temp_buffer must be a uint8 LocalTensor of at least {4 * REPEAT} "
            f"bytes (ascendc_py.host_adv.get_xor_max_min_tmp_size gives the range)")
M_AXPY = ("asc.adv.axpy: dst and src must be float16/float16, float32/float32 or "
             "float32/float16",
             "asc.adv.axpy: count must be between 0 and the sizes of src and dst",
             f"asc.adv.axpy: temp_buffer must be a uint8 LocalTensor of at least {4 * REPEAT} "
             f"bytes (ascendc_py.host_adv.get_axpy_max_min_tmp_size gives the range)")
NAN = float("nan")
NEG_INF = float("-inf")
#: Taylor coefficients of e^r for each taylor_expand_level L: 1/L!, ..., 1/1!, 1/0!
TAYLOR = tuple(tuple(1.0 / _m.factorial(i) for i in range(L, -1, -1)) for L in range(0, 32))


# ----------------------------------------------------------------------------- rounding family
@asc.kernel
def _round_body(out, x, t, m, mc, chunk, mode):
    asc.cast(out, x, mode, m)


@asc.kernel
def floor(dst, src, count=None, temp_buffer=None, is_reuse_source=False):
    """Ascend C Floor: dst[i] = the largest integral value <= src[i] (float16, float32).
    One float32->float32 Cast with CAST_FLOOR (float16 is widened exactly and narrowed back
    exactly: integral float16 values are float16 values)."""
    unary(dst, src, count, temp_buffer, _round_body, M_FLOOR, R.CAST_FLOOR)


@asc.kernel
def ceil(dst, src, count=None, temp_buffer=None, is_reuse_source=False):
    """Ascend C Ceil: dst[i] = the smallest integral value >= src[i] (Cast CAST_CEIL)."""
    unary(dst, src, count, temp_buffer, _round_body, M_CEIL, R.CAST_CEIL)


@asc.kernel
def trunc(dst, src, count=None, temp_buffer=None, is_reuse_source=False):
    """Ascend C Trunc: dst[i] = src[i] rounded toward zero (Cast CAST_TRUNC)."""
    unary(dst, src, count, temp_buffer, _round_body, M_TRUNC, R.CAST_TRUNC)


@asc.kernel
def round(dst, src, count=None, temp_buffer=None, is_reuse_source=False):  # noqa: A001
    """Ascend C Round: dst[i] = src[i] rounded to the nearest integral value, ties to even
    (Cast CAST_RINT; the documented examples Round(3.5) = 4, Round(-3.4) = -3 hold)."""
    unary(dst, src, count, temp_buffer, _round_body, M_ROUND, R.CAST_RINT)


@asc.kernel
def _frac_body(out, x, t, m, mc, chunk, arg):
    w = region(t, 2, chunk)
    asc.cast(w, x, R.CAST_TRUNC, m)
    asc.sub(out, x, w, m)


@asc.kernel
def frac(dst, src, count=None, temp_buffer=None, is_reuse_source=False):
    """Ascend C Frac: dst[i] = src[i] - trunc(src[i]) (the sign of src; inf gives NaN)."""
    unary(dst, src, count, temp_buffer, _frac_body, M_FRAC)


# ----------------------------------------------------------------------------- sign
@asc.kernel
def _sign_body(out, x, t, m, mc, chunk, arg):
    p = region(t, 2, chunk)
    q = region(t, 3, chunk)
    mk = mask_region(t, 4, chunk)
    asc.duplicate(p, 1.0, m)
    asc.compare_scalar(mk, x, 0.0, GT, mc)
    asc.select(q, mk, p, 0.0, TS, m)          # 1 where x > 0, else 0
    asc.duplicate(p, -1.0, m)
    asc.compare_scalar(mk, x, 0.0, LT, mc)
    asc.select(q, mk, p, q, TT, m)            # -1 where x < 0
    asc.compare(mk, x, x, EQ, mc)
    asc.select(out, mk, q, x, TT, m)          # NaN stays NaN


@asc.kernel
def sign(dst, src, count=None, temp_buffer=None, is_reuse_source=False):
    """Ascend C Sign: 1 for positive, -1 for negative, 0 for zero (+0 for -0), NaN for NaN."""
    unary(dst, src, count, temp_buffer, _sign_body, M_SIGN)


# ----------------------------------------------------------------------------- exp / log
@asc.kernel
def _exp_taylor_body(out, x, t, m, mc, chunk, level):
    k = region(t, 2, chunk)
    r = region(t, 3, chunk)
    p = region(t, 4, chunk)
    asc.cast(k, x, R.CAST_FLOOR, m)           # x = k + r, 0 <= r < 1
    asc.sub(r, x, k, m)
    horner(p, r, TAYLOR[level], m)            # sum_{i<=level} r^i / i!
    asc.exp(k, k, m)                          # e^k
    asc.mul(out, k, p, m)


@asc.kernel
def exp(dst, src, count, taylor_expand_level: asc.ConstExpr[int], temp_buffer=None,
        is_reuse_source=False):
    """Ascend C Exp with taylor_expand_level: 0 is the Exp instruction; L > 0 splits
    x = floor(x) + r and computes e^floor(x) * (the Taylor polynomial of e^r to degree L)."""
    assert taylor_expand_level >= 0 and taylor_expand_level < len(TAYLOR), \
        "asc.adv.exp: taylor_expand_level must be 0..31"
    if taylor_expand_level == 0:
        float_operands(dst, src, M_EXP[0])
        n = element_count(dst, src, count, M_EXP[1])
        asc.exp(dst, src, n)
    else:
        unary(dst, src, count, temp_buffer, _exp_taylor_body, M_EXP,
              taylor_expand_level)


@asc.kernel
def log(dst, src, count=None, temp_buffer=None, is_reuse_source=False):
    """Ascend C Log (base e): the Ln instruction (float16 computes in float32, rounds once)."""
    float_operands(dst, src, M_LOG[0])
    n = element_count(dst, src, count, M_LOG[1])
    asc.ln(dst, src, n)


# ----------------------------------------------------------------------------- power
@asc.kernel
def power(dst, src0, src1, count=None, temp_buffer=None, is_reuse_source=False):
    """Ascend C Power: dst[i] = src0[i] ** src1[i] (float16, float32), as C's pow:
    exp(y * ln|x|) with the sign of an odd integer power of a negative base, NaN for a
    negative base with a non-integer exponent, 1 for y == 0 or x == 1."""
    float_operands(dst, src0, M_POWER[0])
    float_operands(dst, src1, M_POWER[0])
    n = element_count(dst, src0, count, M_POWER[1])
    n = element_count(dst, src1, n, M_POWER[1])
    t = scratch(temp_buffer, 9, M_POWER[2])
    chunk = t.get_size() // 9 // REPEAT * REPEAT
    x = region(t, 0, chunk)
    y = region(t, 1, chunk)
    e = region(t, 2, chunk)
    r = region(t, 3, chunk)
    w = region(t, 4, chunk)
    v = region(t, 5, chunk)
    h = region(t, 6, chunk)
    mi = mask_region(t, 7, chunk)
    mo = mask_region(t, 8, chunk)
    for off in range(0, n, chunk):
        m = min(chunk, n - off)
        mc = (m + REPEAT - 1) // REPEAT * REPEAT
        if m < mc:
            asc.duplicate(x, 0.0, mc)
            asc.duplicate(e, 0.0, mc)
        if dst.dtype == asc.float16:
            asc.cast(x, src0[off:], R.CAST_NONE, m)
            asc.cast(e, src1[off:], R.CAST_NONE, m)
        else:
            asc.muls(x, src0[off:], 1.0, m)
            asc.muls(e, src1[off:], 1.0, m)
        asc.abs(r, x, mc)
        asc.ln(r, r, mc)
        asc.mul(r, r, e, mc)
        asc.exp(r, r, mc)                      # |x| ** y
        asc.muls(w, r, -1.0, mc)
        asc.muls(h, e, 0.5, mc)
        asc.cast(v, h, R.CAST_TRUNC, mc)
        asc.compare(mo, v, h, NE, mc)         # y / 2 not integral: y odd (if integral)
        asc.select(w, mo, w, r, TT, mc)
        asc.reciprocal(v, x, mc)
        asc.add(v, v, x, mc)
        asc.compare_scalar(mi, v, 0.0, LT, mc)    # x + 1/x < 0: the sign bit of x is set
        asc.select(w, mi, w, r, TT, mc)        # (-0, -inf included)
        asc.cast(v, e, R.CAST_TRUNC, mc)
        asc.compare(mi, v, e, EQ, mc)         # y integral
        asc.select(h, mi, w, NAN, TS, mc)      # a negative base needs it, else NaN
        asc.compare_scalar(mi, x, 0.0, LT, mc)
        asc.select(h, mi, h, w, TT, mc)
        asc.compare_scalar(mi, x, NEG_INF, EQ, mc)
        asc.select(r, mi, w, h, TT, mc)        # -inf ** y: +-inf or 0, never NaN
        asc.compare_scalar(mi, e, 0.0, NE, mc)
        asc.select(r, mi, r, 1.0, TS, mc)      # x ** 0 = 1
        asc.compare_scalar(mi, x, 1.0, NE, mc)
        asc.select(y, mi, r, 1.0, TS, mc)     # 1 ** y = 1
        if dst.dtype == asc.float16:
            asc.cast(dst[off:], y, R.CAST_RINT, m)
        else:
            asc.muls(dst[off:], y, 1.0, m)


# ----------------------------------------------------------------------------- xor / axpy
@asc.kernel
def xor(dst, src0, src1, count=None, temp_buffer=None, is_reuse_source=False):
    """Ascend C Xor (int16, uint16): dst = (src0 | src1) & ~(src0 & src1), four bitwise
    instructions per chunk (our composition: the vector unit has And, Or and Not)."""
    assert src0.dtype == dst.dtype and src1.dtype == dst.dtype, M_XOR[0]
    assert dst.dtype == asc.int16 or dst.dtype == asc.uint16, M_XOR[0]
    n = element_count(dst, src0, count, M_XOR[1])
    n = element_count(dst, src1, n, M_XOR[1])
    if temp_buffer is None:
        tb = asc.LocalTensorAuto(asc.uint8, 2048)
    else:
        assert temp_buffer.dtype == asc.uint8, M_XOR[2]
        assert temp_buffer.get_size() >= 4 * REPEAT, M_XOR[2]
        tb = temp_buffer
    w = tb.reinterpret_cast(dst.dtype)
    chunk = w.get_size() // (2 * REPEAT) * (2 * REPEAT)
    for off in range(0, n, chunk):
        m = min(chunk, n - off)
        asc.bitwise_and(w, src0[off:], src1[off:], m)
        asc.bitwise_not(w, w, m)
        asc.bitwise_or(dst[off:], src0[off:], src1[off:], m)
        asc.bitwise_and(dst[off:], dst[off:], w, m)


@asc.kernel
def axpy(dst, src, scalar, count=None, temp_buffer=None, is_reuse_source=False):
    """Ascend C's high-level Axpy: dst[i] = dst[i] + src[i] * scalar computed as Muls then Add
    (as documented: two roundings, not the fused basic Axpy). half/half, float/float, and half
    src with float dst (src widened exactly to float32 first, then Muls and Add in float32)."""
    assert (src.dtype == dst.dtype and (dst.dtype == asc.float16 or dst.dtype == asc.float32)) \
        or (src.dtype == asc.float16 and dst.dtype == asc.float32), M_AXPY[0]
    n = element_count(dst, src, count, M_AXPY[1])
    if temp_buffer is None:
        tb = asc.LocalTensorAuto(asc.uint8, 4 * 1024)
    else:
        assert temp_buffer.dtype == asc.uint8, M_AXPY[2]
        assert temp_buffer.get_size() >= 4 * REPEAT, M_AXPY[2]
        tb = temp_buffer
    w = tb.reinterpret_cast(dst.dtype)
    chunk = tb.get_size() // 4 // REPEAT * REPEAT
    for off in range(0, n, chunk):
        m = min(chunk, n - off)
        if src.dtype == dst.dtype:
            asc.muls(w, src[off:], scalar, m)
        else:
            asc.cast(w, src[off:], R.CAST_NONE, m)
            asc.muls(w, w, scalar, m)
        asc.add(dst[off:], dst[off:], w, m)
