"""sinh, cosh, tanh, asinh, acosh, atanh (pyasc's ``asc.adv``), float32 bodies for
``_core.unary``.

Our algorithms: Cephes' single-precision functions (sinhf, coshf, tanhf, asinhf, acoshf,
atanhf): a minimax polynomial near 0, where the exponential/logarithm formula would cancel,
and the formula elsewhere, each step one vector instruction rounded to float32.
"""
import math as _m

import ascendc_py as asc

from ._core import GT, LT, TT, horner, mask_region, messages, negate_where_negative, region, unary

__asc_library__ = True

REGIONS = {"sinh": 5, "cosh": 2, "tanh": 5, "asinh": 6, "acosh": 6, "atanh": 5}
M_ACOSH = messages("acosh", REGIONS["acosh"] + 2)
M_ASINH = messages("asinh", REGIONS["asinh"] + 2)
M_ATANH = messages("atanh", REGIONS["atanh"] + 2)
M_COSH = messages("cosh", REGIONS["cosh"] + 2)
M_SINH = messages("sinh", REGIONS["sinh"] + 2)
M_TANH = messages("tanh", REGIONS["tanh"] + 2)

SINH_P = (2.03721912945e-4, 8.33028376239e-3, 1.66667160211e-1)
TANH_P = (-5.70498872745e-3, 2.06390887954e-2, -5.37397155531e-2, 1.33314422036e-1,
          -3.33332819422e-1)
ASINH_P = (2.0122003309e-2, -4.2699340972e-2, 7.4847586088e-2, -1.6666288134e-1)
ACOSH_P = (1.7596881071e-3, -7.5272886713e-3, 2.6454905019e-2, -1.1784741703e-1,
           1.4142135263e0)
ATANH_P = (1.81740078349e-1, 8.24370301058e-2, 1.46691431730e-1, 1.99782164500e-1,
           3.33337300303e-1)
LN2 = _m.log(2.0)


@asc.kernel
def odd_poly(p, x, z, coeffs, m):
    """p = x + x z P(z), z = x*x."""
    asc.mul(z, x, x, m)
    horner(p, z, coeffs, m)
    asc.mul(p, p, z, m)
    asc.mul(p, p, x, m)
    asc.add(p, p, x, m)


@asc.kernel
def _sinh_body(out, x, t, m, mc, chunk, arg):
    a = region(t, 2, chunk)
    e = region(t, 3, chunk)
    p = region(t, 4, chunk)
    z = region(t, 5, chunk)
    mk = mask_region(t, 6, chunk)
    asc.abs(a, x, m)
    asc.exp(e, a, m)
    asc.reciprocal(z, e, m)
    asc.muls(z, z, -0.5, m)
    asc.muls(e, e, 0.5, m)
    asc.add(e, e, z, m)                       # (e^a - e^-a) / 2
    negate_where_negative(e, e, x, z, mk, m, mc)
    odd_poly(p, x, z, SINH_P, m)              # |x| <= 1
    asc.compare_scalar(mk, a, 1.0, GT, mc)
    asc.select(out, mk, e, p, TT, m)


@asc.kernel
def sinh(dst, src, count=None, temp_buffer=None, is_reuse_source=False):
    """Ascend C Sinh (overflows to inf where e^|x| does, |x| > 88.72)."""
    unary(dst, src, count, temp_buffer, _sinh_body, M_SINH)


@asc.kernel
def _cosh_body(out, x, t, m, mc, chunk, arg):
    e = region(t, 2, chunk)
    z = region(t, 3, chunk)
    asc.abs(e, x, m)
    asc.exp(e, e, m)
    asc.reciprocal(z, e, m)
    asc.muls(z, z, 0.5, m)
    asc.muls(e, e, 0.5, m)
    asc.add(out, e, z, m)                     # (e^a + e^-a) / 2


@asc.kernel
def cosh(dst, src, count=None, temp_buffer=None, is_reuse_source=False):
    """Ascend C Cosh (overflows to inf where e^|x| does, |x| > 88.72)."""
    unary(dst, src, count, temp_buffer, _cosh_body, M_COSH)


@asc.kernel
def _tanh_body(out, x, t, m, mc, chunk, arg):
    a = region(t, 2, chunk)
    e = region(t, 3, chunk)
    p = region(t, 4, chunk)
    z = region(t, 5, chunk)
    mk = mask_region(t, 6, chunk)
    asc.abs(a, x, m)
    asc.muls(e, a, 2.0, m)
    asc.exp(e, e, m)
    asc.adds(e, e, 1.0, m)
    asc.reciprocal(e, e, m)
    asc.muls(e, e, -2.0, m)
    asc.adds(e, e, 1.0, m)                    # 1 - 2 / (e^2a + 1)
    negate_where_negative(e, e, x, z, mk, m, mc)
    odd_poly(p, x, z, TANH_P, m)              # |x| <= 0.625
    asc.compare_scalar(mk, a, 0.625, GT, mc)
    asc.select(out, mk, e, p, TT, m)


@asc.kernel
def tanh(dst, src, count=None, temp_buffer=None, is_reuse_source=False):
    """Ascend C Tanh."""
    unary(dst, src, count, temp_buffer, _tanh_body, M_TANH)


@asc.kernel
def _asinh_body(out, x, t, m, mc, chunk, arg):
    a = region(t, 2, chunk)
    e = region(t, 3, chunk)
    p = region(t, 4, chunk)
    z = region(t, 5, chunk)
    w = region(t, 6, chunk)
    mk = mask_region(t, 7, chunk)
    asc.abs(a, x, m)
    asc.mul(e, a, a, m)
    asc.adds(e, e, 1.0, m)
    asc.sqrt(e, e, m)
    asc.add(e, e, a, m)
    asc.ln(e, e, m)                           # ln(a + sqrt(a^2 + 1))
    asc.ln(w, a, m)
    asc.adds(w, w, LN2, m)                    # a > 1500: ln(a) + ln 2
    asc.compare_scalar(mk, a, 1500.0, GT, mc)
    asc.select(e, mk, w, e, TT, m)
    negate_where_negative(e, e, x, w, mk, m, mc)
    odd_poly(p, x, z, ASINH_P, m)             # |x| < 0.5
    asc.compare_scalar(mk, a, 0.5, LT, mc)
    asc.select(out, mk, p, e, TT, m)


@asc.kernel
def asinh(dst, src, count=None, temp_buffer=None, is_reuse_source=False):
    """Ascend C Asinh."""
    unary(dst, src, count, temp_buffer, _asinh_body, M_ASINH)


@asc.kernel
def _acosh_body(out, x, t, m, mc, chunk, arg):
    z = region(t, 2, chunk)
    e = region(t, 3, chunk)
    p = region(t, 4, chunk)
    w = region(t, 5, chunk)
    s = region(t, 6, chunk)
    mk = mask_region(t, 7, chunk)
    asc.adds(z, x, -1.0, m)                   # z = x - 1
    asc.adds(e, x, 1.0, m)
    asc.mul(e, e, z, m)
    asc.sqrt(e, e, m)
    asc.add(e, e, x, m)
    asc.ln(e, e, m)                           # ln(x + sqrt((x - 1)(x + 1)))
    asc.ln(w, x, m)
    asc.adds(w, w, LN2, m)                    # x > 1500: ln(x) + ln 2
    asc.compare_scalar(mk, x, 1500.0, GT, mc)
    asc.select(e, mk, w, e, TT, m)
    horner(p, z, ACOSH_P, m)
    asc.sqrt(s, z, m)
    asc.mul(p, p, s, m)                       # z < 0.5: sqrt(z) P(z) (NaN for x < 1)
    asc.compare_scalar(mk, z, 0.5, LT, mc)
    asc.select(out, mk, p, e, TT, m)


@asc.kernel
def acosh(dst, src, count=None, temp_buffer=None, is_reuse_source=False):
    """Ascend C Acosh (x < 1 gives NaN)."""
    unary(dst, src, count, temp_buffer, _acosh_body, M_ACOSH)


@asc.kernel
def _atanh_body(out, x, t, m, mc, chunk, arg):
    a = region(t, 2, chunk)
    e = region(t, 3, chunk)
    p = region(t, 4, chunk)
    z = region(t, 5, chunk)
    mk = mask_region(t, 6, chunk)
    asc.muls(e, x, -1.0, m)
    asc.adds(e, e, 1.0, m)                    # 1 - x
    asc.adds(z, x, 1.0, m)
    asc.div(e, z, e, m)
    asc.ln(e, e, m)
    asc.muls(e, e, 0.5, m)                    # ln((1 + x) / (1 - x)) / 2
    odd_poly(p, x, z, ATANH_P, m)             # |x| < 0.5
    asc.abs(a, x, m)
    asc.compare_scalar(mk, a, 0.5, LT, mc)
    asc.select(out, mk, p, e, TT, m)


@asc.kernel
def atanh(dst, src, count=None, temp_buffer=None, is_reuse_source=False):
    """Ascend C Atanh (|x| = 1 gives inf, |x| > 1 NaN)."""
    unary(dst, src, count, temp_buffer, _atanh_body, M_ATANH)
