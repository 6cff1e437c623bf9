"""asc.adv.concat and asc.adv.extract (A2/A3 meaning) around asc.sort: concat is a bit move of
16 * repeat_time scores; concat -> sort -> extract gives NumPy's stable descending order
(full sort) or per-32 order; errors at the call; the vector instructions are priced."""
from __future__ import annotations

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py import host_adv

from kernels_quant import concat_kernel, sort_pipeline_kernel

N = 1024


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("rep", [1, 7, 8, 9, 40])       # 16 * rep: tails of a repeat
def test_concat_is_a_bit_move(dtype, rep):
    rng = np.random.default_rng(rep)
    x = rng.standard_normal(N).astype(dtype)
    x[0] = -0.0
    z = np.full(N, 7.0, dtype)
    r = concat_kernel[1](x, z, N, rep)
    k = 16 * rep
    np.testing.assert_array_equal(z[:k].view(np.uint8), x[:k].view(np.uint8))
    np.testing.assert_array_equal(z[k:], 7.0)
    assert r.pipe_busy["V"] > 0


def _per32(x, idx, rep, full):
    k = 32 * rep
    if full:
        order = np.argsort(-x[:k].astype(np.float64), kind="stable")
    else:
        order = np.concatenate([32 * g + np.argsort(-x[32 * g:32 * g + 32].astype(np.float64),
                                                    kind="stable") for g in range(rep)])
    return x[order], idx[order]


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("rep", [1, 3, 8])
@pytest.mark.parametrize("full", [True, False])
def test_concat_sort_extract(dtype, rep, full):
    rng = np.random.default_rng(10 * rep + full)
    x = np.round(rng.standard_normal(N) * 8).astype(dtype)     # many equal scores
    idx = rng.permutation(N).astype(np.uint32)
    zv = np.full(N, 5.0, dtype)
    zi = np.full(N, 99999, np.uint32)
    sort_pipeline_kernel[1](x, idx, zv, zi, 512, rep, full)
    k = 32 * rep
    wv, wi = _per32(x, idx, rep, full)
    np.testing.assert_array_equal(zv[:k], wv)
    np.testing.assert_array_equal(zi[:k], wi)
    np.testing.assert_array_equal(zv[k:512], 5.0)
    np.testing.assert_array_equal(zi[k:512], 99999)


def test_sanitize_mode_finds_nothing():
    x = np.arange(N, dtype=np.float32)[::-1].copy()
    idx = np.arange(N, dtype=np.uint32)
    zv = np.zeros(N, np.float32)
    zi = np.zeros(N, np.uint32)
    sort_pipeline_kernel[1](x, idx, zv, zi, 256, 8, True, sanitize=True)
    np.testing.assert_array_equal(zv[:256], x[:256][np.argsort(-x[:256], kind="stable")])


def test_errors_name_the_call():
    x = np.zeros(N, np.float32)
    with pytest.raises(asc.KernelAssertionError) as info:
        concat_kernel[1](x, np.zeros(N, np.float32), N, 100)       # 1600 > 1024 elements
    assert "asc.adv.concat: repeat_time must be 0..255" in str(info.value)
    assert info.value.loc.file.endswith("kernels_quant.py")
    with pytest.raises(asc.KernelAssertionError) as info:
        sort_pipeline_kernel[1](x, np.zeros(N, np.uint32), x.copy(), np.zeros(N, np.uint32),
                                128, 8, False)                      # 256 structures > 128
    assert "asc.adv" in str(info.value)


def test_concat_tmp_size():
    assert host_adv.get_concat_tmp_size(128, 2) == 0
    with pytest.raises(ValueError):
        host_adv.get_concat_tmp_size(128, 3)
