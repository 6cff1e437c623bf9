"""asc.adv.layernorm ([B, S, H]: output, mean, variance) and its host tiling
(LayerNormTiling, get_layer_norm_nd_tiling_info, get_layer_norm_max_min_tmp_size): bit-exact
against the NumPy replay of the documented steps (norm_ref.layernorm), close to a float64
layer norm, over rows with tails of a repeat, padded rows, one/several/minimum passes,
float16 and float32, the framework buffer and sanitize mode."""
from __future__ import annotations

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py import host_adv

import norm_ref as REF
from kernels_norm import layernorm_kernel


def run(x, g, be, eps, b, s, oh, size="min", framework=False, sanitize=False):
    h = x.shape[1]
    ts = x.itemsize
    hi, lo = host_adv.get_layer_norm_max_min_tmp_size((b, s, h), ts)
    nbytes = {"min": lo, "max": hi, "some": lo + (3 if ts == 2 else 2) * h * 4 + 40}[size]
    t = host_adv.get_layer_norm_nd_tiling_info((b, s, h), nbytes, ts,
                                               origin_src_shape=(b, s, oh))
    z = np.zeros_like(x)
    mu = np.zeros(64, x.dtype)
    var = np.zeros(64, x.dtype)
    layernorm_kernel(with_tmp=not framework)[1](x, g, be, z, mu, var, eps, t, nbytes,
                                                sanitize=sanitize)
    return z, mu[:b * s], var[:b * s], t


def data(rows, h, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return ((rng.standard_normal((rows, h)) * 2 + 0.5).astype(dtype),
            rng.uniform(0.5, 1.5, h).astype(dtype), rng.uniform(-1, 1, h).astype(dtype))


@pytest.mark.parametrize("dtype,bsh,oh", [(np.float32, (2, 3, 72), 72),
                                          (np.float32, (1, 4, 200), 193),
                                          (np.float32, (1, 1, 8), 5),
                                          (np.float16, (1, 5, 80), 80),
                                          (np.float16, (2, 2, 48), 41),
                                          (np.float16, (1, 3, 400), 400)])
@pytest.mark.parametrize("size", ["min", "max", "some"])
def test_layernorm_bit_exact(dtype, bsh, oh, size):
    b, s, h = bsh
    x, g, be = data(b * s, h, dtype)
    z, mu, var, t = run(x, g, be, 1e-5, b, s, oh, size)
    if size == "min":
        assert t.one_tmp_size == h
    if size == "max":
        assert t.one_tmp_size == b * s * h
    ro, rm, rv = REF.layernorm(x, g, be, 1e-5, oh)
    np.testing.assert_array_equal(z, ro)
    np.testing.assert_array_equal(mu, rm)
    np.testing.assert_array_equal(var, rv)
    xf = x[:, :oh].astype(np.float64)
    m64 = xf.mean(1, keepdims=True)
    v64 = ((xf - m64) ** 2).mean(1, keepdims=True)
    exact = (xf - m64) / np.sqrt(v64 + 1e-5) * g[:oh].astype(np.float64) + be[:oh]
    tol = 2e-5 if dtype == np.float32 else 4e-3
    np.testing.assert_allclose(z[:, :oh].astype(np.float64), exact, rtol=tol, atol=tol)
    np.testing.assert_allclose(var.astype(np.float64), v64[:, 0], rtol=tol)


def test_framework_buffer_and_sanitize():
    x, g, be = data(6, 64, np.float16, seed=4)
    z, mu, var, _ = run(x, g, be, 1e-3, 2, 3, 64, "some", framework=True)
    ro, rm, rv = REF.layernorm(x, g, be, 1e-3)
    np.testing.assert_array_equal(z, ro)
    np.testing.assert_array_equal(mu, rm)
    x, g, be = data(5, 72, np.float32, seed=5)
    z, mu, var, t = run(x, g, be, 1e-6, 1, 5, 70, "some", sanitize=True)
    assert t.one_tmp_size == 2 * 72
    ro, rm, rv = REF.layernorm(x, g, be, 1e-6, 70)
    np.testing.assert_array_equal(z, ro)
    np.testing.assert_array_equal(var, rv)


def test_too_small_buffer_stops_at_the_call():
    x, g, be = data(4, 64, np.float32)
    hi, lo = host_adv.get_layer_norm_max_min_tmp_size((1, 4, 64), 4)
    t = host_adv.get_layer_norm_nd_tiling_info((1, 4, 64), hi, 4)
    z = np.zeros_like(x)
    with pytest.raises(asc.KernelAssertionError) as info:
        layernorm_kernel()[1](x, g, be, z, np.zeros(64, np.float32), np.zeros(64, np.float32),
                              1e-5, t, lo)
    assert "asc.adv.layernorm: temp_buffer must be a uint8 LocalTensor large enough" in \
        str(info.value)
    assert info.value.loc.file.endswith("kernels_norm.py")


def test_host_tiling_and_queries():
    hi, lo = host_adv.get_layer_norm_max_min_tmp_size((2, 5, 128), 2)
    assert (hi, lo) == ((16 + 32 + 256 + 3 * 10 * 128) * 4, (16 + 32 + 256 + 3 * 128) * 4)
    assert host_adv.get_layer_norm_max_min_tmp_size((2, 5, 128), 4) == \
        ((16 + 2 * 10 * 128) * 4, (16 + 2 * 128) * 4)
    t = host_adv.get_layer_norm_nd_tiling_info((2, 5, 128), lo + 3 * 3 * 128 * 4, 2,
                                               origin_src_shape=(2, 5, 100))
    assert (t.one_tmp_size, t.number_of_tmp_buf, t.original_h_length) == (4 * 128, 3, 100)
    assert (t.mean_tmp_tensor_pos, t.variance_tmp_tensor_pos, t.mean_var_size) == (16, 32, 10)
    with pytest.raises(ValueError, match="below the minimum"):
        host_adv.get_layer_norm_nd_tiling_info((2, 5, 128), lo - 1, 2)
    with pytest.raises(ValueError, match="32-byte aligned"):
        host_adv.get_layer_norm_nd_tiling_info((2, 5, 100), hi, 2)
