"""asc.adv.gelu, faster_gelu, silu, swiglu, geglu and their tmp-size queries: bit-exact against
the NumPy replay of the instruction order (norm_ref.activation) over counts with a tail, the
smallest buffer (many chunks), the largest and the framework's; close to the float64 formulas;
sanitize mode; a too-small buffer stops at the call."""
from __future__ import annotations

import math

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py import host_adv

import norm_ref as REF
from kernels_norm import activation_kernel

APIS = ("gelu", "faster_gelu", "silu", "swiglu", "geglu")
TWO = ("swiglu", "geglu")
N = 1024


def inputs(dtype, seed=1):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(N) * 4
    y = rng.standard_normal(N) * 4
    x[:6] = [0.0, -0.0, 30.0, -30.0, 100.0, -100.0]
    y[:6] = [0.0, 30.0, -30.0, 100.0, -100.0, 1e-3]
    return x.astype(dtype), y.astype(dtype)


def exact(api, x, y, beta):
    x = x.astype(np.float64)
    y = y.astype(np.float64)
    gelu = lambda v: 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3)))
    with np.errstate(over="ignore"):
        return {"gelu": lambda: gelu(x),
                "faster_gelu": lambda: x / (1 + np.exp(-1.702 * np.abs(x)))
                * np.exp(0.851 * (x - np.abs(x))),
                "silu": lambda: x / (1 + np.exp(-x)),
                "swiglu": lambda: x * y / (1 + np.exp(-beta * y)),
                "geglu": lambda: x * gelu(y)}[api]()


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("buf", ["min", "max", "framework"])
def test_bit_exact_and_accurate(api, dtype, buf):
    x, y = inputs(dtype)
    cnt = 1000                               # a tail of 40 in the last repeat
    mx, mn = host_adv.activation_tmp_size(api, cnt, np.dtype(dtype).itemsize)
    z = np.zeros_like(x)
    activation_kernel(api, api in TWO, with_tmp=buf != "framework")[1](
        x, y, z, N, cnt, 0.7, mn if buf == "min" else mx)
    np.testing.assert_array_equal(z[:cnt], REF.activation(api, x[:cnt], y[:cnt], 0.7))
    assert not z[cnt:].any()
    tol = 2e-6 if dtype == np.float32 else 2e-3
    np.testing.assert_allclose(z[:cnt].astype(np.float64),
                               exact(api, x[:cnt], y[:cnt], np.float32(0.7)),
                               rtol=tol, atol=tol * 1e-2)


@pytest.mark.parametrize("api", ["gelu", "geglu"])
def test_sanitize_mode_finds_nothing(api):
    x, y = inputs(np.float16, seed=3)
    mx, mn = host_adv.activation_tmp_size(api, 700, 2)
    z = np.zeros_like(x)
    activation_kernel(api, api in TWO)[1](x, y, z, N, 700, 1.0, mn, sanitize=True)
    np.testing.assert_array_equal(z[:700], REF.activation(api, x[:700], y[:700], 1.0))


def test_too_small_buffer_stops_at_the_call():
    x, y = inputs(np.float32)
    with pytest.raises(asc.KernelAssertionError) as info:
        activation_kernel("swiglu")[1](x, y, np.zeros_like(x), N, N, 1.0, 512)
    assert "asc.adv.swiglu: temp_buffer must be a uint8 LocalTensor of at least 1024 bytes" in \
        str(info.value)
    assert info.value.loc.file.endswith("kernels_norm.py")


def test_queries():
    assert host_adv.get_gelu_max_min_tmp_size([4, 100], 2) == (2 * 4 * 448, 512)
    assert host_adv.get_swiglu_max_min_tmp_size(1000, 4) == (4 * 4 * 1024, 1024)
    assert host_adv.get_geglu_max_min_tmp_size(64, 2) == (1024, 1024)
    with pytest.raises(ValueError, match="unknown activation"):
        host_adv.activation_tmp_size("relu", 64, 4)
