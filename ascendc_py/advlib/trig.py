"""sin, cos, tan, asin, acos, atan (pyasc's ``asc.adv``), float32 bodies for ``_core.unary``.

Our algorithms (Ascend C's documentation shows the functions, not how they are computed):
Cody-Waite reduction by pi/2 with a three-part constant, then Cephes' single-precision
minimax polynomials (sinf/cosf, tan as their quotient, asinf, acosf, atanf), each step one
vector instruction rounded to float32.
"""
import math as _m

import ascendc_py as asc

from ._core import (GT, LT, TT, TS, horner, mask_region, messages, negate_where_negative,
                    region, unary)

__asc_library__ = True

R = asc.RoundMode
REGIONS = {"sin": 8, "cos": 8, "tan": 8, "asin": 7, "acos": 7, "atan": 9}
M_ACOS = messages("acos", REGIONS["acos"] + 2)
M_ASIN = messages("asin", REGIONS["asin"] + 2)
M_ATAN = messages("atan", REGIONS["atan"] + 2)
M_COS = messages("cos", REGIONS["cos"] + 2)
M_SIN = messages("sin", REGIONS["sin"] + 2)
M_TAN = messages("tan", REGIONS["tan"] + 2)

TWO_OVER_PI = 2.0 / _m.pi
#: pi/2 = PIO2_1 + PIO2_2 + PIO2_3; PIO2_1 and PIO2_2 have few significant bits, so k * PIO2_1
#: is exact for |k| < 2**15 (Cephes' DP1..DP3, doubled)
PIO2_1, PIO2_2, PIO2_3 = 1.5703125, 4.837512969970703125e-4, 7.54978995489188216e-8
SIN_P = (-1.9515295891e-4, 8.3321608736e-3, -1.6666654611e-1)
COS_P = (2.443315711809948e-5, -1.388731625493765e-3, 4.166664568298827e-2)
ASIN_P = (4.2163199048e-2, 2.4181311049e-2, 4.5470025998e-2, 7.4953002686e-2,
          1.6666752422e-1)
ATAN_P = (8.05374449538e-2, -1.38776856032e-1, 1.99777106478e-1, -3.33329491539e-1)
PI, PIO2, PIO4 = _m.pi, _m.pi / 2, _m.pi / 4
TAN3PIO8, TANPIO8 = 2.414213562373095, 0.4142135623730950


@asc.kernel
def sincos_parts(s, c, k, x, r, z, w, m):
    """k = rint(x * 2/pi); r = x - k*pi/2; s ~ sin(r), c ~ cos(r) for |r| <= pi/4."""
    asc.muls(k, x, TWO_OVER_PI, m)
    asc.cast(k, k, R.CAST_RINT, m)
    asc.muls(w, k, -PIO2_1, m)
    asc.add(r, x, w, m)
    asc.muls(w, k, -PIO2_2, m)
    asc.add(r, r, w, m)
    asc.muls(w, k, -PIO2_3, m)
    asc.add(r, r, w, m)
    asc.mul(z, r, r, m)
    horner(s, z, SIN_P, m)                    # r + r z (S1 + z (S2 + z S3))
    asc.mul(s, s, z, m)
    asc.mul(s, s, r, m)
    asc.add(s, s, r, m)
    horner(c, z, COS_P, m)                    # 1 - z/2 + z^2 (C1 + z (C2 + z C3))
    asc.mul(c, c, z, m)
    asc.mul(c, c, z, m)
    asc.muls(w, z, -0.5, m)
    asc.add(c, c, w, m)
    asc.adds(c, c, 1.0, m)


@asc.kernel
def quadrant_bits(h, q, mk, m, mc, period):
    """mk = bit set where (q mod period) >= period / 2, for q integral (period 2 or 4)."""
    asc.muls(h, q, 1.0 / period, m)
    asc.cast(h, h, R.CAST_FLOOR, m)
    asc.muls(h, h, -period, m)
    asc.add(h, h, q, m)
    asc.compare_scalar(mk, h, period / 2 - 0.5, GT, mc)


@asc.kernel
def _sincos_body(out, x, t, m, mc, chunk, shift):
    s = region(t, 2, chunk)
    c = region(t, 3, chunk)
    k = region(t, 4, chunk)
    r = region(t, 5, chunk)
    z = region(t, 6, chunk)
    w = region(t, 7, chunk)
    h = region(t, 8, chunk)
    mk = mask_region(t, 9, chunk)
    sincos_parts(s, c, k, x, r, z, w, m)
    if shift != 0:
        asc.adds(k, k, 1.0, m)                # cos(x) = sin(x + pi/2)
    quadrant_bits(h, k, mk, m, mc, 2.0)
    asc.select(r, mk, c, s, TT, m)            # odd quadrant: cos(r)
    quadrant_bits(h, k, mk, m, mc, 4.0)
    asc.muls(w, r, -1.0, m)
    asc.select(out, mk, w, r, TT, m)          # quadrants 2, 3: negative


@asc.kernel
def sin(dst, src, count=None, temp_buffer=None, is_reuse_source=False):
    """Ascend C Sin (float16, float32; float16 computed in float32)."""
    unary(dst, src, count, temp_buffer, _sincos_body, M_SIN, 0)


@asc.kernel
def cos(dst, src, count=None, temp_buffer=None, is_reuse_source=False):
    """Ascend C Cos: sin's reduction with the quadrant shifted by one."""
    unary(dst, src, count, temp_buffer, _sincos_body, M_COS, 1)


@asc.kernel
def tan_core(out, x, s, c, k, r, z, w, h, mk, m, mc):
    """out = tan(x): sin(r)/cos(r), or -cos(r)/sin(r) in odd quadrants."""
    sincos_parts(s, c, k, x, r, z, w, m)
    asc.div(r, s, c, m)
    asc.div(w, c, s, m)
    asc.muls(w, w, -1.0, m)
    quadrant_bits(h, k, mk, m, mc, 2.0)
    asc.select(out, mk, w, r, TT, m)


@asc.kernel
def _tan_body(out, x, t, m, mc, chunk, arg):
    tan_core(out, x, region(t, 2, chunk), region(t, 3, chunk), region(t, 4, chunk),
             region(t, 5, chunk), region(t, 6, chunk), region(t, 7, chunk), region(t, 8, chunk),
             mask_region(t, 9, chunk), m, mc)


@asc.kernel
def tan(dst, src, count=None, temp_buffer=None, is_reuse_source=False):
    """Ascend C Tan: sin(r)/cos(r) of the reduced argument (the quotient rounds once more)."""
    unary(dst, src, count, temp_buffer, _tan_body, M_TAN)


# ----------------------------------------------------------------------------- inverse
@asc.kernel
def asin_poly(p, z, w, m):
    """p = w + w z P(z) (Cephes asinf), for z = w*w, |w| <= 0.5."""
    horner(p, z, ASIN_P, m)
    asc.mul(p, p, z, m)
    asc.mul(p, p, w, m)
    asc.add(p, p, w, m)


@asc.kernel
def _asin_body(out, x, t, m, mc, chunk, arg):
    a = region(t, 2, chunk)
    z = region(t, 3, chunk)
    w = region(t, 4, chunk)
    p = region(t, 5, chunk)
    q = region(t, 6, chunk)
    v = region(t, 7, chunk)
    mk = mask_region(t, 8, chunk)
    asc.abs(a, x, m)
    asc.muls(z, a, -0.5, m)
    asc.adds(z, z, 0.5, m)                    # (1 - a) / 2
    asc.sqrt(w, z, m)
    asc.mul(q, a, a, m)
    asc.compare_scalar(mk, a, 0.5, GT, mc)
    asc.select(z, mk, z, q, TT, m)
    asc.select(w, mk, w, a, TT, m)
    asin_poly(p, z, w, m)
    asc.muls(q, p, -2.0, m)
    asc.adds(q, q, PIO2, m)                   # a > 0.5: pi/2 - 2 asin(sqrt((1 - a) / 2))
    asc.select(p, mk, q, p, TT, m)
    negate_where_negative(out, p, x, v, mk, m, mc)


@asc.kernel
def asin(dst, src, count=None, temp_buffer=None, is_reuse_source=False):
    """Ascend C Asin (|x| > 1 gives NaN)."""
    unary(dst, src, count, temp_buffer, _asin_body, M_ASIN)


@asc.kernel
def _acos_body(out, x, t, m, mc, chunk, arg):
    a = region(t, 2, chunk)
    z = region(t, 3, chunk)
    w = region(t, 4, chunk)
    p = region(t, 5, chunk)
    q = region(t, 6, chunk)
    v = region(t, 7, chunk)
    mk = mask_region(t, 8, chunk)
    asc.abs(a, x, m)
    asc.muls(z, a, -0.5, m)
    asc.adds(z, z, 0.5, m)
    asc.sqrt(w, z, m)
    asc.mul(q, x, x, m)
    asc.compare_scalar(mk, a, 0.5, GT, mc)
    asc.select(z, mk, z, q, TT, m)
    asc.select(w, mk, w, x, TT, m)
    asin_poly(p, z, w, m)
    asc.muls(q, p, 2.0, m)                    # x > 0.5: 2 asin(sqrt((1 - x) / 2))
    asc.muls(v, p, -2.0, m)
    asc.adds(v, v, PI, m)                     # x < -0.5: pi - 2 asin(sqrt((1 + x) / 2))
    asc.compare_scalar(mk, x, 0.0, LT, mc)
    asc.select(q, mk, v, q, TT, m)
    asc.muls(v, p, -1.0, m)
    asc.adds(v, v, PIO2, m)                   # |x| <= 0.5: pi/2 - asin(x)
    asc.compare_scalar(mk, a, 0.5, GT, mc)
    asc.select(out, mk, q, v, TT, m)


@asc.kernel
def acos(dst, src, count=None, temp_buffer=None, is_reuse_source=False):
    """Ascend C Acos (|x| > 1 gives NaN)."""
    unary(dst, src, count, temp_buffer, _acos_body, M_ACOS)


@asc.kernel
def _atan_body(out, x, t, m, mc, chunk, arg):
    a = region(t, 2, chunk)
    u = region(t, 3, chunk)
    v = region(t, 4, chunk)
    xr = region(t, 5, chunk)
    y0 = region(t, 6, chunk)
    w = region(t, 7, chunk)
    z = region(t, 8, chunk)
    p = region(t, 9, chunk)
    mk = mask_region(t, 10, chunk)
    asc.abs(a, x, m)
    asc.adds(u, a, -1.0, m)
    asc.adds(v, a, 1.0, m)
    asc.div(u, u, v, m)                       # (a - 1) / (a + 1)
    asc.duplicate(w, PIO4, m)
    asc.compare_scalar(mk, a, TANPIO8, GT, mc)
    asc.select(xr, mk, u, a, TT, m)
    asc.select(y0, mk, w, 0.0, TS, m)
    asc.reciprocal(u, a, m)
    asc.muls(u, u, -1.0, m)                   # -1 / a
    asc.duplicate(w, PIO2, m)
    asc.compare_scalar(mk, a, TAN3PIO8, GT, mc)
    asc.select(xr, mk, u, xr, TT, m)
    asc.select(y0, mk, w, y0, TT, m)
    asc.mul(z, xr, xr, m)
    horner(p, z, ATAN_P, m)
    asc.mul(p, p, z, m)
    asc.mul(p, p, xr, m)
    asc.add(p, p, xr, m)
    asc.add(p, p, y0, m)
    negate_where_negative(out, p, x, w, mk, m, mc)


@asc.kernel
def atan(dst, src, count=None, temp_buffer=None, is_reuse_source=False):
    """Ascend C Atan."""
    unary(dst, src, count, temp_buffer, _atan_body, M_ATAN)
