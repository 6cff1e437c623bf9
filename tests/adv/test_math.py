"""asc.adv math functions: bit-exact against a NumPy replay of each algorithm
(advmath_ref.py), accurate against float64, over counts with tails and chunked temporary
buffers (the smallest buffer, the largest, the framework's)."""
from __future__ import annotations

import numpy as np
import pytest

from ascendc_py import host_adv

import advmath_ref as REF
from kernels_advmath import axpy_kernel, binary_kernel, exp_kernel, unary_kernel

UNARY = sorted(REF.UNARY)
DTYPES = (np.float32, np.float16)
N = 1024                       # elements in GM (whole 32-byte blocks)
SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, np.inf, -np.inf, np.nan, 1e-6, -1e-6,
           1e-30, 3.0, -3.0, 10.0, -10.0, 100.0, -100.0, 1e4, -1e4, 1e30, -1e30]
#: where each function is interesting (finite outputs mostly); specials are added on top
DOMAIN = {"acos": (-1, 1), "asin": (-1, 1), "atanh": (-1, 1), "acosh": (1, 30),
          "log": (0, 50), "erf": (-5, 5), "erfc": (-5, 12), "lgamma": (-10, 40),
          "digamma": (-10, 40), "sinh": (-12, 12), "cosh": (-12, 12), "tanh": (-10, 10),
          "sin": (-50, 50), "cos": (-50, 50), "tan": (-20, 20)}


def inputs(api, dtype, n=N, seed=0):
    rng = np.random.default_rng(seed)
    lo, hi = DOMAIN.get(api, (-20, 20))
    x = rng.uniform(lo, hi, n)
    x[:len(SPECIAL)] = SPECIAL
    with np.errstate(over="ignore"):
        return x.astype(dtype)


def same_bits(a, b):
    """Equal values, NaN where NaN (any payload), zeros with their sign."""
    a, b = np.asarray(a), np.asarray(b)
    nan = np.isnan(a)
    if not np.array_equal(nan, np.isnan(b)):
        return False
    return np.array_equal(a[~nan].view(f"u{a.itemsize}"), b[~nan].view(f"u{b.itemsize}"))


def run_unary(api, x, count, tmp_bytes, with_tmp=True):
    z = np.zeros_like(x)
    unary_kernel(api, with_tmp)[1](x, z, x.size, count, tmp_bytes)
    return z


_KERNELS = {}


def _kernel(api, with_tmp):
    key = (api, with_tmp)
    if key not in _KERNELS:
        _KERNELS[key] = unary_kernel(api, with_tmp)
    return _KERNELS[key]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("api", UNARY)
def test_unary_bit_exact_with_tail_and_chunks(api, dtype):
    x = inputs(api, dtype)
    count = 1000                                    # a tail: not a multiple of 64
    mx, mn = host_adv.math_tmp_size(api, count, x.itemsize)
    ref = REF.reference(api, x[:count], dtype)
    k = _kernel(api, True)
    for tmp in (mn, mx):                            # 16 chunks, then one
        z = np.zeros_like(x)
        k[1](x, z, N, count, max(tmp, 32))
        assert same_bits(z[:count], ref), (api, tmp, np.flatnonzero(
            ~((z[:count] == ref) | (np.isnan(z[:count]) & np.isnan(ref))))[:8])
        assert not z[count:].any()                  # dst past count is not written


@pytest.mark.parametrize("api", ["tanh", "sin", "erf", "floor", "lgamma", "log"])
def test_framework_tmp_buffer_gives_the_same_bits(api):
    x = inputs(api, np.float32)
    z = np.zeros_like(x)
    _kernel(api, False)[1](x, z, N, 777, 0)         # no temp_buffer: the reserved one
    assert same_bits(z[:777], REF.reference(api, x[:777], np.float32))
    assert not z[777:].any()


@pytest.mark.parametrize("count", [0, 1, 63, 64, 65, 200])
def test_small_counts(count):
    x = inputs("atan", np.float16)
    z = np.zeros_like(x)
    _kernel("atan", True)[1](x, z, N, count, 2816)
    assert same_bits(z[:count], REF.reference("atan", x[:count], np.float16))
    assert not z[count:].any()


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("level", [0, 1, 3, 10])
def test_exp_taylor_levels(level, dtype):
    x = inputs("exp", dtype)
    count = 999
    z = np.zeros_like(x)
    mx, mn = host_adv.get_exp_max_min_tmp_size([count], x.itemsize)
    exp_kernel[1](x, z, N, count, mn, level)
    assert same_bits(z[:count], REF.reference("exp", x[:count], dtype, level))
    assert not z[count:].any()


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_power(dtype):
    rng = np.random.default_rng(1)
    x = rng.uniform(-4, 4, N).astype(dtype)
    y = rng.uniform(-4, 4, N).astype(dtype)
    y[::3] = np.round(y[::3])                       # integer exponents, odd and even
    pairs = [(0, 2), (0, -1), (0, 0), (-0.0, 3), (-2, 3), (-2, 2), (-2, 0.5), (1, np.nan),
             (np.nan, 0), (np.inf, 2), (-np.inf, 3), (2, np.inf), (0.5, -np.inf), (-8, 1 / 3),
             (1, np.inf), (np.nan, 1), (3, 0.0)]
    for i, (a, b) in enumerate(pairs):
        x[i], y[i] = a, b
    count = 1001
    z = np.zeros_like(x)
    mx, mn = host_adv.get_power_max_min_tmp_size([count], x.itemsize)
    binary_kernel("power")[1](x, y, z, N, count, mn)
    ref = REF.reference("power", x[:count], dtype, y[:count])
    assert same_bits(z[:count], ref)
    with np.errstate(all="ignore"):
        want = np.power(x[:count].astype(np.float64), y[:count].astype(np.float64))
    # C's pow for the special pairs (numpy follows it)
    assert same_bits(z[:len(pairs)], want[:len(pairs)].astype(dtype))


@pytest.mark.parametrize("dtype", [np.int16, np.uint16], ids=lambda d: d.__name__)
def test_xor(dtype):
    rng = np.random.default_rng(2)
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, N, endpoint=True).astype(dtype)
    y = rng.integers(info.min, info.max, N, endpoint=True).astype(dtype)
    z = np.zeros_like(x)
    binary_kernel("xor")[1](x, y, z, N, 1000, 256)
    assert np.array_equal(z[:1000], x[:1000] ^ y[:1000])
    assert not z[1000:].any()


@pytest.mark.parametrize("src,dst", [(np.float16, np.float16), (np.float32, np.float32),
                                     (np.float16, np.float32)])
def test_axpy_is_muls_then_add(src, dst):
    rng = np.random.default_rng(3)
    x = rng.uniform(-3, 3, N).astype(src)
    z0 = rng.uniform(-3, 3, N).astype(dst)
    z = z0.copy()
    axpy_kernel[1](x, z, N, 999, 256, 1.7)
    s = np.dtype(src).type(1.7) if src == dst else np.float32(1.7)
    prod = (x[:999].astype(dst) * s).astype(dst) if src != dst else x[:999] * s
    assert same_bits(z[:999], (z0[:999] + prod).astype(dst))
    assert np.array_equal(z[999:], z0[999:])


def test_tmp_size_queries():
    assert host_adv.get_tanh_max_min_tmp_size([1024], 2) == (7 * 4 * 1024, 7 * 256)
    assert host_adv.get_tanh_max_min_tmp_size([1000], 4) == (7 * 4 * 1024, 7 * 256)
    assert host_adv.get_log_max_min_tmp_size([1024], 4, False) == (0, 0)
    assert host_adv.get_floor_max_min_tmp_size([3], 4) == (2 * 256, 2 * 256)
    assert host_adv.get_xor_max_min_tmp_size([1000], 2) == (2 * 1024, 256)
    with pytest.raises(ValueError, match="type_size"):
        host_adv.get_sin_max_min_tmp_size([16], 8)
    with pytest.raises(ValueError, match="unknown math API"):
        host_adv.math_tmp_size("softmax", [16], 4)


@pytest.mark.parametrize("api", UNARY)
def test_sanitize_mode_finds_nothing(api):
    """Every instruction reads only bytes written before (the last repeat's tail is zeroed)
    and nothing races: sanitize mode runs the APIs clean, with a tail and several chunks."""
    x = inputs(api, np.float16)
    z = np.zeros_like(x)
    mx, mn = host_adv.math_tmp_size(api, 1000, 2)
    _kernel(api, True)[1](x, z, N, 1000, mn, sanitize=True)
    z2 = np.zeros_like(x)
    _kernel(api, False)[1](x, z2, N, 1000, 0, sanitize=True)
    assert same_bits(z, z2)


def test_sanitize_power_and_exp():
    x = inputs("exp", np.float32)
    z = np.zeros_like(x)
    binary_kernel("power")[1](x, x, z, N, 999, 9 * 256, sanitize=True)
    binary_kernel("power", False)[1](x, x, z, N, 999, 0, sanitize=True)
    exp_kernel[1](x, z, N, 999, 5 * 256, 4, sanitize=True)
