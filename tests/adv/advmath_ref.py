"""NumPy replays of the asc.adv math algorithms, instruction by instruction, rounding as the
vector unit does (each float32 op rounded to float32; float16 widened exactly, the result
narrowed with round-to-nearest-even). The Exp and Ln instructions are taken from the vector
unit itself (a one-instruction kernel), which tests/ops checks bit for bit against glibc.

The constants come from the library modules, so a replay follows the algorithm, not a copy of
its numbers."""
from __future__ import annotations


import numpy as np

import ascendc_py as asc
from ascendc_py.advlib import elementary as EL
from ascendc_py.advlib import hyperbolic as HY
from ascendc_py.advlib import special as SP
from ascendc_py.advlib import trig as TR

F = np.float32
N_MAX = 8192


@asc.kernel
def _one_op(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int, which: asc.ConstExpr[int]):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, n)
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe = asc.TPipe()
    pipe.init_buffer(buf, N_MAX * 8)
    a = buf.get(asc.float32)
    asc.data_copy(a, xg, n)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    if which == 0:
        asc.exp(a[N_MAX:], a, n)
    else:
        asc.ln(a[N_MAX:], a, n)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, a[N_MAX:], n)


def _vector_op(x, which):
    x = np.ascontiguousarray(x, F).ravel()
    parts = []
    for off in range(0, x.size, N_MAX):
        part = x[off:off + N_MAX]
        k = max(8, -(-part.size // 8) * 8)          # whole 32-byte blocks
        src = np.zeros(k, F)
        src[:part.size] = part
        dst = np.zeros(k, F)
        _one_op[1](src, dst, k, which)
        parts.append(dst[:part.size])
    return np.concatenate(parts) if parts else np.empty(0, F)


def vexp(x):
    """The vector unit's float32 Exp."""
    with np.errstate(all="ignore"):
        return _vector_op(x, 0)


def vln(x):
    """The vector unit's float32 Ln."""
    with np.errstate(all="ignore"):
        return _vector_op(x, 1)


def horner(z, coeffs):
    p = z * F(coeffs[0]) + F(coeffs[1])
    for c in coeffs[2:]:
        p = p * z + F(c)
    return p


def neg_where_negative(v, x):
    return np.where(x < 0, v * F(-1), v)


# ----------------------------------------------------------------------------- bodies (float32)
def floor(x): return np.floor(x)
def ceil(x): return np.ceil(x)
def trunc(x): return np.trunc(x)
def round(x): return np.rint(x)  # noqa: A001
def frac(x): return x - np.trunc(x)


def sign(x):
    q = np.where(x > 0, F(1), F(0))
    q = np.where(x < 0, F(-1), q)
    return np.where(x == x, q, x)


def log(x):
    return vln(x)


def exp_taylor(x, level):
    k = np.floor(x)
    r = x - k
    p = horner(r, EL.TAYLOR[level])
    return vexp(k) * p


def _sincos_parts(x):
    k = np.rint(x * F(TR.TWO_OVER_PI))
    r = x + k * F(-TR.PIO2_1)
    r = r + k * F(-TR.PIO2_2)
    r = r + k * F(-TR.PIO2_3)
    z = r * r
    s = horner(z, TR.SIN_P) * z * r + r
    c = horner(z, TR.COS_P) * z * z
    c = (c + z * F(-0.5)) + F(1)
    return s, c, k


def _quadrant(q, period):
    h = np.floor(q * F(1.0 / period)) * F(-period) + q
    return h > F(period / 2 - 0.5)


def _sincos(x, shift):
    s, c, k = _sincos_parts(x)
    if shift:
        k = k + F(1)
    r = np.where(_quadrant(k, 2.0), c, s)
    return np.where(_quadrant(k, 4.0), r * F(-1), r)


def sin(x): return _sincos(x, 0)
def cos(x): return _sincos(x, 1)


def tan(x):
    s, c, k = _sincos_parts(x)
    return np.where(_quadrant(k, 2.0), (c / s) * F(-1), s / c)


def _asin_poly(z, w):
    return horner(z, TR.ASIN_P) * z * w + w


def asin(x):
    a = np.abs(x)
    z = a * F(-0.5) + F(0.5)
    w = np.sqrt(z)
    big = a > F(0.5)
    p = _asin_poly(np.where(big, z, a * a), np.where(big, w, a))
    p = np.where(big, p * F(-2) + F(TR.PIO2), p)
    return neg_where_negative(p, x)


def acos(x):
    a = np.abs(x)
    z = a * F(-0.5) + F(0.5)
    w = np.sqrt(z)
    big = a > F(0.5)
    p = _asin_poly(np.where(big, z, x * x), np.where(big, w, x))
    q = np.where(x < 0, p * F(-2) + F(TR.PI), p * F(2))
    return np.where(big, q, p * F(-1) + F(TR.PIO2))


def atan(x):
    a = np.abs(x)
    u = (a + F(-1)) / (a + F(1))
    mid = a > F(TR.TANPIO8)
    xr = np.where(mid, u, a)
    y0 = np.where(mid, F(TR.PIO4), F(0))
    big = a > F(TR.TAN3PIO8)
    xr = np.where(big, (F(1) / a) * F(-1), xr)
    y0 = np.where(big, F(TR.PIO2), y0)
    z = xr * xr
    p = horner(z, TR.ATAN_P) * z * xr + xr + y0
    return neg_where_negative(p, x)


def _odd_poly(x, coeffs):
    z = x * x
    return horner(z, coeffs) * z * x + x


def sinh(x):
    a = np.abs(x)
    e = vexp(a)
    e = e * F(0.5) + (F(1) / e) * F(-0.5)
    e = neg_where_negative(e, x)
    return np.where(a > F(1), e, _odd_poly(x, HY.SINH_P))


def cosh(x):
    e = vexp(np.abs(x))
    return e * F(0.5) + (F(1) / e) * F(0.5)


def tanh(x):
    a = np.abs(x)
    e = F(1) / (vexp(a * F(2)) + F(1))
    e = e * F(-2) + F(1)
    e = neg_where_negative(e, x)
    return np.where(a > F(0.625), e, _odd_poly(x, HY.TANH_P))


def asinh(x):
    a = np.abs(x)
    e = vln(np.sqrt(a * a + F(1)) + a)
    w = vln(a) + F(HY.LN2)
    e = np.where(a > F(1500), w, e)
    e = neg_where_negative(e, x)
    return np.where(a < F(0.5), _odd_poly(x, HY.ASINH_P), e)


def acosh(x):
    z = x + F(-1)
    e = vln(np.sqrt((x + F(1)) * z) + x)
    w = vln(x) + F(HY.LN2)
    e = np.where(x > F(1500), w, e)
    p = horner(z, HY.ACOSH_P) * np.sqrt(z)
    return np.where(z < F(0.5), p, e)


def atanh(x):
    e = vln((x + F(1)) / (x * F(-1) + F(1))) * F(0.5)
    return np.where(np.abs(x) < F(0.5), _odd_poly(x, HY.ATANH_P), e)


def _erfc_abs(a):
    a = np.minimum(a, F(20))        # Mins propagates NaN
    t = F(1) / (a * F(0.5) + F(1))
    r = horner(t, SP.ERFC_P)
    h = np.floor(a * F(16)) * F(0.0625)
    d = (a - h) * (a + h)
    r = vexp(r - d)
    return r * vexp((h * h) * F(-1)) * t


def erfc(x):
    r = _erfc_abs(np.abs(x))
    r = np.where(x < 0, r * F(-1) + F(2), r)
    return np.where(x == x, r, x)


def erf(x):
    a = np.abs(x)
    small = a < F(0.5)
    r = _erfc_abs(a) * F(-1) + F(1)
    r = neg_where_negative(r, x)
    d = horner(x * x, SP.ERF_T) * x
    return np.where(small, d, r)


def _pi_frac(x):
    return (x - np.rint(x)) * F(SP.PI)


def digamma(x):
    u = np.where(x < 0, x * F(-1) + F(1), x)
    s = F(1) / u
    for i in range(1, 6):
        s = s + F(1) / (u + F(i))
    y = u + F(6)
    v = F(1) / y
    w = v * v
    p = horner(w, SP.PSI_A) * w + v * F(-0.5)
    p = (p + vln(y)) - s
    t = tan(_pi_frac(x))
    y = p - F(SP.PI) / t
    return np.where(x < 0, y, p)


def lgamma(x):
    neg = x < 0
    u = np.where(neg, x * F(-1) + F(1), x)
    q = u * F(1)
    for i in range(1, 8):
        q = q * (u + F(i))
    small = u < F(8)
    y = np.where(small, u + F(8), u)
    q = vln(np.abs(np.where(small, q, F(1))))
    v = F(1) / y
    p = horner(v * v, SP.STIRLING) * v
    s = vln(y) * (y + F(-0.5))
    s = ((s - y) + F(SP.HALF_LN_2PI) + p) - q
    s = np.where(u > F(3.0e38), F(np.inf), s)
    sn, cs, k = _sincos_parts(_pi_frac(x))
    p = np.abs(np.where(_quadrant(k, 2.0), cs, sn))
    p = (vln(p) * F(-1) + F(SP.LN_PI)) - s
    return np.where(neg, p, s)


def power(x, e):
    r = vexp(vln(np.abs(x)) * e)
    h = e * F(0.5)
    w = np.where(np.trunc(h) != h, r * F(-1), r)     # odd integer exponent: negative
    w = np.where(F(1) / x + x < 0, w, r)              # sign bit set (also -0, -inf)
    h = np.where(np.trunc(e) == e, w, F(np.nan))      # negative base, non-integer: NaN
    h = np.where(x < 0, h, w)
    r = np.where(x == -np.inf, w, h)
    r = np.where(e != 0, r, F(1))
    return np.where(x != 1, r, F(1))


UNARY = {name: globals()[name] for name in (
    "acos", "acosh", "asin", "asinh", "atan", "atanh", "ceil", "cos", "cosh", "digamma", "erf",
    "erfc", "floor", "frac", "lgamma", "log", "round", "sign", "sin", "sinh", "tan", "tanh",
    "trunc")}


def reference(api, x, dtype, *extra):
    """asc.adv.<api> of the array ``x`` (float16 or float32) as the vector unit computes it."""
    wide = np.asarray(x).astype(F)
    with np.errstate(all="ignore"):
        if api == "exp":
            y = exp_taylor(wide, extra[0]) if extra[0] else vexp(wide)
        elif api == "power":
            y = power(wide, np.asarray(extra[0]).astype(F))
        else:
            y = UNARY[api](wide)
        return np.asarray(y, F).astype(dtype)
