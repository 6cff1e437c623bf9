"""Accuracy of the asc.adv math functions against float64 (torch/numpy), the numbers the
README's table states: the maximum error in units of the last place of the result's dtype
over 4096 uniform samples of each domain (advmath_accuracy.ACC_DOMAIN), whole chunks and a
tail. lgamma and digamma have roots where float32 cancellation is unavoidable for these
algorithms: their bound is in ulps where |f| >= 0.5 and absolute below."""
from __future__ import annotations

import numpy as np
import pytest

from ascendc_py import host_adv

from advmath_accuracy import TRUTH, errors, sample, ulp
from kernels_advmath import exp_kernel, unary_kernel

#: api -> (max ulp float32, max ulp float16), measured (README table) with a little room;
#: float16 results are float32 results rounded once more, so just over half an ulp
ULP_BOUNDS = {
    "acos": (1.5, 0.51), "acosh": (1.5, 0.51), "asin": (2.5, 0.51), "asinh": (1.5, 0.51),
    "atan": (2.5, 0.51), "atanh": (1.5, 0.51), "cos": (1.5, 0.51), "cosh": (1.5, 0.51),
    "erf": (2.5, 0.51), "erfc": (6.5, 0.51), "log": (0.51, 0.51), "sin": (1.5, 0.51),
    "sinh": (1.5, 0.51), "tan": (3.0, 0.51), "tanh": (1.5, 0.51), "exp": (0.51, 0.51),
    "floor": (0, 0), "ceil": (0, 0), "round": (0, 0), "trunc": (0, 0), "frac": (0, 0),
    "sign": (0, 0)}
#: api -> domain -> (ulp where |f| >= 0.5, abs where |f| < 0.5) for float32, float16
ROOT_BOUNDS = {
    "lgamma": {(0.01, 50): ((60, 4e-6), (0.51, 2e-4)), (-10, -0.01): ((80, 7e-6), (0.51, 2e-4))},
    "digamma": {(0.01, 50): ((7, 5e-7), (0.51, 2e-4)), (-10, -0.01): ((12, 1e-6), (0.51, 2e-4))},
}
N = 4096


def run(api, x):
    z = np.zeros_like(x)
    if api == "exp":
        exp_kernel[1](x, z, N, N - 5, 5 * 256, 0)
    else:
        mx, mn = host_adv.math_tmp_size(api, N, x.itemsize)
        unary_kernel(api)[1](x, z, N, N - 5, min(mx, 60 * 1024))
    return z[:N - 5], x[:N - 5]


@pytest.mark.parametrize("api", sorted(ULP_BOUNDS))
@pytest.mark.parametrize("di,dtype", [(0, np.float32), (1, np.float16)],
                         ids=["float32", "float16"])
def test_max_ulp_error(api, di, dtype):
    z, x = run(api, sample(api, dtype, N))
    u, a, r = errors(z, x, api, dtype)
    assert u <= ULP_BOUNDS[api][di], (api, dtype, u, a, r)


@pytest.mark.parametrize("api,domain", [(a, d) for a in ROOT_BOUNDS for d in ROOT_BOUNDS[a]])
@pytest.mark.parametrize("di,dtype", [(0, np.float32), (1, np.float16)],
                         ids=["float32", "float16"])
def test_gamma_family_error(api, domain, di, dtype):
    rng = np.random.default_rng(5)
    x = rng.uniform(*domain, N).astype(dtype)
    z, x = run(api, x)
    t = np.asarray(TRUTH[api](x.astype(np.float64)))
    fin = np.isfinite(t)
    with np.errstate(invalid="ignore"):
        d = np.abs(z.astype(np.float64) - t)[fin]
    t = t[fin]
    far = np.abs(t) >= 0.5
    max_ulp, max_abs = ROOT_BOUNDS[api][domain][di]
    assert np.max(d[far] / ulp(t[far], dtype)) <= max_ulp
    assert np.max(d[~far], initial=0.0) <= max_abs


def test_erfc_tail_keeps_relative_accuracy():
    x = np.linspace(4, 9, N).astype(np.float32)     # erfc(9) = 4e-37: normal
    z, x = run("erfc", x)
    t = TRUTH["erfc"](x.astype(np.float64))
    assert np.max(np.abs(z - t) / t) < 1e-6


def test_sin_on_a_wide_range():
    x = np.random.default_rng(9).uniform(-1e4, 1e4, N).astype(np.float32)
    z, x = run("sin", x)
    u, _, _ = errors(z, x, "sin", np.float32)
    assert u <= 1.5


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["float32", "float16"])
def test_power_error_grows_with_the_exponent_product(dtype):
    from kernels_advmath import binary_kernel
    rng = np.random.default_rng(3)
    x = rng.uniform(0.01, 10, N).astype(dtype)
    y = rng.uniform(-8, 8, N).astype(dtype)
    y[::4] = np.round(y[::4])
    x[1::4] *= -1
    y[1::4] = np.round(y[1::4])                       # negative bases: integer exponents
    z = np.zeros_like(x)
    binary_kernel("power")[1](x, y, z, N, N, 60 * 1024)
    t = np.power(x.astype(np.float64), y.astype(np.float64))
    fin = np.isfinite(t) & (np.abs(t) < np.finfo(dtype).max) & (np.abs(t) > np.finfo(dtype).tiny)
    d = np.abs(z.astype(np.float64) - t)[fin] / ulp(t[fin], dtype)
    ly = np.abs(y.astype(np.float64) * np.log(np.abs(x.astype(np.float64))))[fin]
    if dtype == np.float32:
        assert np.all(d <= 1.7 * np.maximum(ly, 1.0))
    else:
        assert d.max() <= 0.51
