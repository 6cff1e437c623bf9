"""erf, erfc, digamma, lgamma (pyasc's ``asc.adv``), float32 bodies for ``_core.unary``.

Our algorithms (Ascend C's documentation names the functions only):

- erfc: the Chebyshev fit of Numerical Recipes (``erfcc``: erfc(a) = t exp(-a^2 + P(t)),
  t = 1 / (1 + a/2), fractional error < 1.2e-7), with exp(-a^2) split as
  exp(-h^2) exp(-(a - h)(a + h)), h = floor(16 a) / 16 (h^2 exact), so the tail keeps float32
  relative accuracy; erfc(-a) = 2 - erfc(a).
- erf: the Taylor series to degree 13 for |x| < 0.5, 1 - erfc(|x|) with the sign elsewhere.
- digamma: psi(x) = psi(x + 6) - sum 1/(x + i), i < 6, with the asymptotic series of psi(y)
  to 1/y^10; x < 0 by reflection psi(x) = psi(1 - x) - pi / tan(pi x).
- lgamma: Stirling's series to 1/y^7 at y = x + 8 for x < 8 (minus ln of the product
  x (x + 1) ... (x + 7)), at y = x for x >= 8; x < 0 by reflection
  lgamma(x) = ln(pi / |sin(pi x)|) - lgamma(1 - x).
"""
import math as _m

import ascendc_py as asc

from ._core import (GT, LT, TS, TT, horner, mask_region, messages, negate_where_negative,
                    region, unary, EQ)
from .trig import quadrant_bits, sincos_parts, tan_core

__asc_library__ = True

R = asc.RoundMode
REGIONS = {"erf": 6, "erfc": 6, "digamma": 12, "lgamma": 13}
M_DIGAMMA = messages("digamma", REGIONS["digamma"] + 2)
M_ERF = messages("erf", REGIONS["erf"] + 2)
M_ERFC = messages("erfc", REGIONS["erfc"] + 2)
M_LGAMMA = messages("lgamma", REGIONS["lgamma"] + 2)

ERFC_P = (0.17087277, -0.82215223, 1.48851587, -1.13520398, 0.27886807, -0.18628806,
          0.09678418, 0.37409196, 1.00002368, -1.26551223)
#: 2/sqrt(pi) (-1)^n / (n! (2n + 1)), n = 6 .. 0
ERF_T = tuple(2.0 / _m.sqrt(_m.pi) * (-1) ** n / (_m.factorial(n) * (2 * n + 1))
              for n in range(6, -1, -1))
#: psi(y) ~ ln y - 1/(2y) - sum B_2k / (2k y^2k), k = 1..5: coefficients of w = 1/y^2,
#: highest first (the sum is w * (this polynomial))
PSI_A = (-1.0 / 132, 1.0 / 240, -1.0 / 252, 1.0 / 120, -1.0 / 12)
#: lgamma(y) ~ (y - 1/2) ln y - y + ln(2 pi)/2 + (1/y) * (this polynomial in w = 1/y^2)
STIRLING = (-1.0 / 1680, 1.0 / 1260, -1.0 / 360, 1.0 / 12)
HALF_LN_2PI = 0.5 * _m.log(2 * _m.pi)
LN_PI = _m.log(_m.pi)
PI = _m.pi
INF = float("inf")


@asc.kernel
def erfc_abs(r, a, t, h, d, m):
    """r = erfc(a) for a = |x| (clamped to 20 first: erfc is 0 there), t, h, d scratch."""
    asc.mins(a, a, 20.0, m)
    asc.muls(t, a, 0.5, m)
    asc.adds(t, t, 1.0, m)
    asc.reciprocal(t, t, m)                   # t = 1 / (1 + a/2)
    horner(r, t, ERFC_P, m)                   # P(t)
    asc.muls(h, a, 16.0, m)
    asc.cast(h, h, R.CAST_FLOOR, m)
    asc.muls(h, h, 0.0625, m)                 # h = floor(16 a) / 16
    asc.sub(d, a, h, m)
    asc.add(a, a, h, m)
    asc.mul(d, d, a, m)                       # (a - h)(a + h)
    asc.sub(r, r, d, m)
    asc.exp(r, r, m)                          # exp(P(t) - (a - h)(a + h))
    asc.mul(h, h, h, m)
    asc.muls(h, h, -1.0, m)
    asc.exp(h, h, m)                          # exp(-h^2)
    asc.mul(r, r, h, m)
    asc.mul(r, r, t, m)


@asc.kernel
def _erfc_body(out, x, t, m, mc, chunk, arg):
    a = region(t, 2, chunk)
    r = region(t, 3, chunk)
    u = region(t, 4, chunk)
    h = region(t, 5, chunk)
    d = region(t, 6, chunk)
    mk = mask_region(t, 7, chunk)
    asc.abs(a, x, m)
    erfc_abs(r, a, u, h, d, m)
    asc.muls(u, r, -1.0, m)
    asc.adds(u, u, 2.0, m)                    # erfc(-a) = 2 - erfc(a)
    asc.compare_scalar(mk, x, 0.0, LT, mc)
    asc.select(r, mk, u, r, TT, m)
    asc.compare(mk, x, x, EQ, mc)
    asc.select(out, mk, r, x, TT, m)          # NaN stays NaN


@asc.kernel
def erfc(dst, src, count=None, temp_buffer=None, is_reuse_source=False):
    """Ascend C Erfc: 1 - erf(x), accurate in the tail."""
    unary(dst, src, count, temp_buffer, _erfc_body, M_ERFC)


@asc.kernel
def _erf_body(out, x, t, m, mc, chunk, arg):
    a = region(t, 2, chunk)
    r = region(t, 3, chunk)
    u = region(t, 4, chunk)
    h = region(t, 5, chunk)
    d = region(t, 6, chunk)
    mk = mask_region(t, 7, chunk)
    asc.abs(a, x, m)
    asc.compare_scalar(mk, a, 0.5, LT, mc)    # before erfc_abs clamps a
    erfc_abs(r, a, u, h, d, m)
    asc.muls(r, r, -1.0, m)
    asc.adds(r, r, 1.0, m)                    # 1 - erfc(|x|)
    negate_where_negative(r, r, x, u, mk[chunk // 2:], m, mc)
    asc.mul(h, x, x, m)
    horner(d, h, ERF_T, m)
    asc.mul(d, d, x, m)                       # |x| < 0.5: x * T(x^2)
    asc.select(out, mk, d, r, TT, m)


@asc.kernel
def erf(dst, src, count=None, temp_buffer=None, is_reuse_source=False):
    """Ascend C Erf."""
    unary(dst, src, count, temp_buffer, _erf_body, M_ERF)


# ----------------------------------------------------------------------------- digamma
@asc.kernel
def reflect_arg(u, x, m):
    """u = 1 - x."""
    asc.muls(u, x, -1.0, m)
    asc.adds(u, u, 1.0, m)


@asc.kernel
def pi_frac(r, x, m):
    """r = pi * (x - rint(x)), |r| <= pi/2."""
    asc.cast(r, x, R.CAST_RINT, m)
    asc.sub(r, x, r, m)
    asc.muls(r, r, PI, m)


@asc.kernel
def _digamma_body(out, x, t, m, mc, chunk, arg):
    u = region(t, 2, chunk)
    s = region(t, 3, chunk)
    v = region(t, 4, chunk)
    y = region(t, 5, chunk)
    p = region(t, 6, chunk)
    c = region(t, 7, chunk)
    k = region(t, 8, chunk)
    r = region(t, 9, chunk)
    z = region(t, 10, chunk)
    w = region(t, 11, chunk)
    h = region(t, 12, chunk)
    mk = mask_region(t, 13, chunk)
    reflect_arg(u, x, m)
    asc.compare_scalar(mk, x, 0.0, LT, mc)
    asc.select(u, mk, u, x, TT, m)            # u = 1 - x for x < 0, else x
    asc.reciprocal(s, u, m)
    for i in asc.static_range(1, 6):
        asc.adds(v, u, float(i), m)
        asc.reciprocal(v, v, m)
        asc.add(s, s, v, m)                   # s = sum 1/(u + i), i < 6
    asc.adds(y, u, 6.0, m)
    asc.reciprocal(v, y, m)                   # 1/y
    asc.mul(w, v, v, m)                       # 1/y^2
    horner(p, w, PSI_A, m)
    asc.mul(p, p, w, m)
    asc.muls(v, v, -0.5, m)
    asc.add(p, p, v, m)
    asc.ln(y, y, m)
    asc.add(p, p, y, m)
    asc.sub(p, p, s, m)                       # psi(u)
    pi_frac(z, x, m)
    tan_core(y, z, s, c, k, r, v, w, h, mk[chunk // 2:], m, mc)
    asc.duplicate(v, PI, m)
    asc.div(y, v, y, m)                       # pi / tan(pi x)
    asc.sub(y, p, y, m)
    asc.select(out, mk, y, p, TT, m)


@asc.kernel
def digamma(dst, src, count=None, temp_buffer=None, is_reuse_source=False):
    """Ascend C Digamma: the logarithmic derivative of the gamma function."""
    unary(dst, src, count, temp_buffer, _digamma_body, M_DIGAMMA)


# ----------------------------------------------------------------------------- lgamma
@asc.kernel
def _lgamma_body(out, x, t, m, mc, chunk, arg):
    u = region(t, 2, chunk)
    q = region(t, 3, chunk)
    v = region(t, 4, chunk)
    y = region(t, 5, chunk)
    p = region(t, 6, chunk)
    c = region(t, 7, chunk)
    k = region(t, 8, chunk)
    r = region(t, 9, chunk)
    z = region(t, 10, chunk)
    w = region(t, 11, chunk)
    s = region(t, 12, chunk)
    h = region(t, 13, chunk)
    mk = mask_region(t, 14, chunk)
    m2 = mk[chunk // 2:]
    reflect_arg(u, x, m)
    asc.compare_scalar(mk, x, 0.0, LT, mc)
    asc.select(u, mk, u, x, TT, m)            # u = 1 - x for x < 0, else x
    asc.muls(q, u, 1.0, m)
    for i in asc.static_range(1, 8):
        asc.adds(v, u, float(i), m)
        asc.mul(q, q, v, m)                   # q = u (u + 1) ... (u + 7)
    asc.adds(y, u, 8.0, m)
    asc.compare_scalar(m2, u, 8.0, LT, mc)
    asc.select(y, m2, y, u, TT, m)            # y = u + 8 for u < 8, else u
    asc.select(q, m2, q, 1.0, TS, m)
    asc.abs(q, q, m)
    asc.ln(q, q, m)
    asc.reciprocal(v, y, m)
    asc.mul(w, v, v, m)
    horner(p, w, STIRLING, m)
    asc.mul(p, p, v, m)                       # series / y
    asc.ln(s, y, m)
    asc.adds(v, y, -0.5, m)
    asc.mul(s, s, v, m)
    asc.sub(s, s, y, m)
    asc.adds(s, s, HALF_LN_2PI, m)
    asc.add(s, s, p, m)                       # Stirling at y
    asc.sub(s, s, q, m)                       # lgamma(u)
    asc.duplicate(v, INF, m)
    asc.compare_scalar(m2, u, 3.0e38, GT, mc)
    asc.select(s, m2, v, s, TT, m)            # lgamma(inf) = inf
    pi_frac(z, x, m)
    sincos_parts(p, c, k, z, r, y, w, m)      # sin and cos of the reduced pi * frac(x)
    quadrant_bits(h, k, m2, m, mc, 2.0)
    asc.select(p, m2, c, p, TT, m)            # |sin(pi x)| up to its sign
    asc.abs(p, p, m)
    asc.ln(p, p, m)
    asc.muls(p, p, -1.0, m)
    asc.adds(p, p, LN_PI, m)                  # ln(pi / |sin(pi x)|)
    asc.sub(p, p, s, m)
    asc.select(out, mk, p, s, TT, m)


@asc.kernel
def lgamma(dst, src, count=None, temp_buffer=None, is_reuse_source=False):
    """Ascend C Lgamma: ln |gamma(x)|."""
    unary(dst, src, count, temp_buffer, _lgamma_body, M_LGAMMA)
