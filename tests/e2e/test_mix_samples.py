"""The mix samples (swiglu_ffn.py, matmul_leaky_relu.py): other shapes and dtypes, and clean
runs in sanitize mode."""
from __future__ import annotations

import importlib
import pathlib
import sys

import numpy as np
import pytest

import ascendc_py as asc

SAMPLES_DIR = pathlib.Path(__file__).resolve().parents[2] / "samples"


@pytest.fixture(scope="module")
def samples():
    sys.path.insert(0, str(SAMPLES_DIR))
    yield importlib.import_module("swiglu_ffn"), importlib.import_module("matmul_leaky_relu")
    sys.path.remove(str(SAMPLES_DIR))


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("shape", [(1, 16, 16), (17, 5, 3), (33, 100, 257), (130, 64, 48)])
def test_swiglu_ffn_shapes(samples, shape, dtype):
    ffn, _ = samples
    m, k, n = shape
    rng = np.random.default_rng(m + k + n)
    x = rng.uniform(-1, 1, (m, k)).astype(dtype)
    wg = rng.uniform(-1, 1, (k, n)).astype(dtype)
    wu = rng.uniform(-1, 1, (k, n)).astype(dtype)
    y, report = ffn.swiglu_ffn(x, wg, wu)
    tol = dict(rtol=1e-3, atol=1e-3) if dtype == np.float16 else dict(rtol=1e-5, atol=1e-5)
    asc.testing.assert_close(y, ffn.golden(x, wg, wu), **tol)
    assert report.kernel_type == "MIX_AIC_1_2"


def test_swiglu_ffn_sanitize_clean(samples):
    ffn, _ = samples
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, (40, 48)).astype(np.float16)
    w = rng.uniform(-1, 1, (48, 70)).astype(np.float16)
    tiling = ffn.make_tiling(40, 70, 48, np.float16)
    y = np.zeros((40, 70), np.float16)
    ws = np.zeros(2 * 40 * 70, np.float32)
    ffn.swiglu_ffn_kernel[-(-tiling.used_core_num // 2)](x, w, w, y, ws, tiling, sanitize=True)
    asc.testing.assert_close(y, ffn.golden(x, w, w))


def test_matmul_leaky_relu_sanitize_clean(samples):
    _, mlr = samples
    rng = np.random.default_rng(2)
    m, k, n = 256, 64, 256
    a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float16)
    bias = rng.uniform(-1, 1, n).astype(np.float32)
    tiling = mlr.make_tiling(m, n, k, cores=4)
    c = np.zeros((m, n), np.float32)
    mlr.matmul_leaky_relu_kernel[tiling.used_core_num // 2](a, b, c, bias, mlr.ALPHA, tiling,
                                                            sanitize=True)
    asc.testing.assert_close(c, mlr.golden(a, b, bias), rtol=1e-4, atol=1e-4)
