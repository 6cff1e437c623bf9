"""asc.adv.rmsnorm and its host tiling (RmsNormTiling, get_rms_norm_tiling_info,
get_rms_norm_max_min_tmp_size): bit-exact against the NumPy replay (norm_ref.rmsnorm), close to
a float64 RMSNorm, over rows with tails of a repeat, padded rows (original H < H), one or
several passes with a tail pass, float16 and float32, the framework buffer and sanitize mode."""
from __future__ import annotations

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py import host_adv

import norm_ref as REF
from kernels_norm import rmsnorm_kernel


def run(x, g, eps, b, s, oh, size="min", framework=False, sanitize=False):
    h = x.shape[1]
    ts = x.itemsize
    hi, lo = host_adv.get_rms_norm_max_min_tmp_size((b, s, h), ts)
    nbytes = {"min": lo, "max": hi, "some": lo + 2 * h * 4 * (2 if ts == 2 else 1) + 40}[size]
    t = host_adv.get_rms_norm_tiling_info((b, s, h), (b, s, oh), nbytes, ts)
    z = np.zeros_like(x)
    rmsnorm_kernel(with_tmp=not framework)[1](x, g, z, eps, t, nbytes, sanitize=sanitize)
    return z, t


def data(rows, h, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return ((rng.standard_normal((rows, h)) * 2).astype(dtype),
            rng.uniform(0.5, 1.5, h).astype(dtype))


@pytest.mark.parametrize("dtype,bsh,oh", [(np.float32, (2, 3, 72), 72), (np.float32, (1, 4, 200), 193),
                                          (np.float32, (1, 1, 8), 5), (np.float16, (1, 5, 80), 80),
                                          (np.float16, (2, 2, 48), 41), (np.float16, (1, 3, 400), 400)])
@pytest.mark.parametrize("size", ["min", "max", "some"])
def test_rmsnorm_bit_exact(dtype, bsh, oh, size):
    b, s, h = bsh
    x, g = data(b * s, h, dtype)
    z, t = run(x, g, 1e-5, b, s, oh, size)
    if size == "min":
        assert t.main_bs_length == 1 and t.loop_round == b * s
    if size == "max":
        assert t.main_bs_length == b * s and t.tail_bs_length == 0
    np.testing.assert_array_equal(z, REF.rmsnorm(x, g, 1e-5, oh))
    xf = x[:, :oh].astype(np.float64)
    exact = xf / np.sqrt((xf * xf).mean(1, keepdims=True) + 1e-5) * g[:oh].astype(np.float64)
    tol = 2e-6 if dtype == np.float32 else 1e-3
    np.testing.assert_allclose(z[:, :oh].astype(np.float64), exact, rtol=tol, atol=tol)


def test_framework_buffer_and_sanitize():
    x, g = data(6, 64, np.float16, seed=4)
    z, _ = run(x, g, 1e-3, 2, 3, 64, "some", framework=True)
    np.testing.assert_array_equal(z, REF.rmsnorm(x, g, 1e-3))
    x, g = data(5, 72, np.float32, seed=5)
    z, t = run(x, g, 1e-6, 1, 5, 70, "some", sanitize=True)
    assert t.main_bs_length == 3 and t.tail_bs_length == 2
    np.testing.assert_array_equal(z, REF.rmsnorm(x, g, 1e-6, 70))


def test_too_small_buffer_stops_at_the_call():
    x, g = data(4, 64, np.float32)
    hi, lo = host_adv.get_rms_norm_max_min_tmp_size((1, 4, 64), 4)
    t = host_adv.get_rms_norm_tiling_info((1, 4, 64), (1, 4, 64), hi, 4)
    with pytest.raises(asc.KernelAssertionError) as info:
        rmsnorm_kernel()[1](x, g, np.zeros_like(x), 1e-5, t, lo)
    assert "asc.adv.rmsnorm: temp_buffer must be a uint8 LocalTensor large enough" in \
        str(info.value)
    assert info.value.loc.file.endswith("kernels_norm.py")


def test_host_tiling_and_queries():
    hi, lo = host_adv.get_rms_norm_max_min_tmp_size((2, 5, 128), 2)
    assert (hi, lo) == ((16 + 128 + 2 * 10 * 128) * 4, (16 + 128 + 2 * 128) * 4)
    assert host_adv.get_rms_norm_max_min_tmp_size((2, 5, 128), 4) == \
        ((16 + 10 * 128) * 4, (16 + 128) * 4)
    t = host_adv.get_rms_norm_tiling_info((2, 5, 128), (2, 5, 100), lo + 3 * 2 * 128 * 4, 2)
    assert (t.main_bs_length, t.loop_round, t.tail_bs_length, t.input_tail_pos) == (4, 2, 2, 1024)
    assert t.reciprocal_of_h_length == float(np.float32(1) / np.float32(100))
    assert (t.original_h_length, t.main_bs_length_align, t.tail_bsh_length) == (100, 8, 256)
    with pytest.raises(ValueError, match="below the minimum"):
        host_adv.get_rms_norm_tiling_info((2, 5, 128), (2, 5, 128), lo - 1, 2)
    with pytest.raises(ValueError, match="32-byte aligned"):
        host_adv.get_rms_norm_tiling_info((2, 5, 100), (2, 5, 100), hi, 2)
    with pytest.raises(AttributeError, match="no field"):
        asc.adv.RmsNormTiling(hLength=3)


@asc.kernel
def _zero_tiling(z: asc.GlobalAddress):
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 64)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, 4096)
    a = buf.get(asc.float16)
    asc.duplicate(a, 1.0, 64)
    asc.adv.rmsnorm(a[64:], a, a[128:], 1.0, asc.adv.RmsNormTiling())
    asc.adv.layernorm(a[64:], a[192:], a[208:], a, a[128:], a[224:], 1.0,
                      asc.adv.LayerNormTiling())
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, a, 64)


def test_zero_tiling_is_a_no_op():
    """A tiling of zeros (pyasc's unit test builds RmsNormTiling() in the kernel) means no rows:
    nothing is computed (it once stopped the compile with a zero range step)."""
    z = np.zeros(64, np.float16)
    _zero_tiling[1](z)
    assert (z == 1).all()
