"""asc.adv.quant (+ QuantConfig) and its tmp-size query: bit-exact against the NumPy replay of
the documented steps (float32 -> half, Muls, Adds in half, Cast to int8 round-half-even) over
counts with tails, the smallest buffer (many chunks), the largest and the framework's;
pyasc's test formula (round(x * 2 + 0.9)); errors for a too-small buffer and a bad config."""
from __future__ import annotations

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py import host_adv
from ascendc_py.compiler.errors import StaticAssertionError

from kernels_quant import quant_kernel

N = 2048


def ref(x, scale, offset):
    """The documented steps in NumPy: half(x), * half(scale), + half(offset) (each rounded to
    half), rint, saturate to int8."""
    h = x.astype(np.float16)
    t = (h * np.float16(scale)).astype(np.float16)
    t = (t + np.float16(offset)).astype(np.float16)
    return np.clip(np.rint(t.astype(np.float32)), -128, 127).astype(np.int8)


def inputs(dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(N) * 30
    x[:8] = [0.25, 0.75, -0.25, -1.25, 1000.0, -1000.0, 63.25, -64.75]   # ties, saturation
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("cnt", [2048, 1000, 37])
@pytest.mark.parametrize("buf", ["min", "max", "framework"])
def test_bit_exact(dtype, cnt, buf):
    x = inputs(dtype)
    mx, mn = host_adv.get_ascend_quant_max_min_tmp_size(cnt, np.dtype(dtype).itemsize)
    z = np.zeros(N, np.int8)
    quant_kernel("framework" if buf == "framework" else "tmp")[1](
        x, z, N, cnt, 2.0, 0.5, mn if buf == "min" else mx)
    np.testing.assert_array_equal(z[:cnt], ref(x[:cnt], 2.0, 0.5))
    assert not z[cnt:].any()


def test_pyasc_formula_and_config():
    """pyasc's quant test: round(x * 2 + 0.9) for x in [-4, 4], with QuantConfig(32, 0, 0,
    512) and without a count (calc_count)."""
    x = (np.random.default_rng(2025).random(N) * 8 - 4).astype(np.float16)
    for mode in ("tmp", "nocount"):
        z = np.zeros(N, np.int8)
        quant_kernel(mode, (32, 0, 0, 512))[1](x, z, N, 32, 2.0, 0.9, 512)
        np.testing.assert_array_equal(z[:32], np.round(x[:32] * 2.0 + 0.9).astype(np.int8))
        assert not z[32:].any()


def test_work_local_size_limits_chunks():
    x = inputs(np.float32, 3)
    z = np.zeros(N, np.int8)
    quant_kernel("tmp", (0, 0, 0, 512))[1](x, z, N, 1500, 0.5, -3.0, 4096)
    np.testing.assert_array_equal(z[:1500], ref(x[:1500], 0.5, -3.0))


def test_sanitize_mode_finds_nothing():
    x = inputs(np.float16, 5)
    z = np.zeros(N, np.int8)
    quant_kernel()[1](x, z, N, 999, 1.5, 0.25, 512, sanitize=True)
    np.testing.assert_array_equal(z[:999], ref(x[:999], 1.5, 0.25))


def test_too_small_buffer_stops_at_the_call():
    x = inputs(np.float16)
    with pytest.raises(asc.KernelAssertionError) as info:
        quant_kernel()[1](x, np.zeros(N, np.int8), N, N, 1.0, 0.0, 256)
    assert "asc.adv.quant: temp_buffer must be a uint8 LocalTensor of at least 512 bytes" in \
        str(info.value)
    assert info.value.loc.file.endswith("kernels_quant.py")


def test_bad_config_stops_at_the_call():
    x = inputs(np.float16)
    with pytest.raises(asc.KernelAssertionError) as info:
        quant_kernel("tmp", (0, 0, 0, 8192))[1](x, np.zeros(N, np.int8), N, N, 1.0, 0.0, 1024)
    assert "work_local_size" in str(info.value)
    with pytest.raises(StaticAssertionError) as info:     # known when compiling
        quant_kernel("tmp", (0, 0, 4, 0))[1](x, np.zeros(N, np.int8), N, N, 1.0, 0.0, 1024)
    assert "scale_count and offset_count must be 0 or 1" in str(info.value)
    assert info.value.loc.file.endswith("kernels_quant.py")


def test_count_beyond_the_tensors_stops():
    x = inputs(np.float32)
    with pytest.raises(asc.KernelAssertionError) as info:
        quant_kernel()[1](x, np.zeros(N, np.int8), N, 5000, 1.0, 0.0, 1024)
    assert "count must be between 0" in str(info.value)


def test_tmp_size_query():
    assert host_adv.get_ascend_quant_max_min_tmp_size(32, 2) == (512, 512)
    assert host_adv.get_ascend_quant_max_min_tmp_size([4, 300], 4) == (2 * 1216, 512)
    with pytest.raises(ValueError):
        host_adv.get_ascend_quant_max_min_tmp_size(32, 1)


def test_quant_config_host_record():
    c = asc.adv.QuantConfig(32, 0, 0, 512)
    assert (c.calc_count, c.work_local_size) == (32, 512)
    with pytest.raises(ValueError):
        asc.adv.QuantConfig(-1)
