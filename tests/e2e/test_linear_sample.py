"""samples/linear.py (x @ W^T + b on the cube unit): main() and other shapes, including an
M tail of one row (handled without GEMV) and shapes smaller than one tile."""
from __future__ import annotations

import importlib
import pathlib
import sys

import numpy as np
import pytest

SAMPLES_DIR = pathlib.Path(__file__).resolve().parents[2] / "samples"


@pytest.fixture(scope="module")
def linear():
    sys.path.insert(0, str(SAMPLES_DIR))
    yield importlib.import_module("linear")
    sys.path.remove(str(SAMPLES_DIR))


def test_main(linear, capsys):
    report = linear.main()
    assert report.pipe_busy["M"] > 0 and report.instructions["mmad"] > 0
    assert report.cube_flops > 0
    assert "matches golden" in capsys.readouterr().out


@pytest.mark.parametrize("shape", [(1, 16, 16), (65, 17, 3), (129, 40, 70), (5, 300, 130)])
@pytest.mark.parametrize("out", [np.float32, np.float16])
def test_shapes(linear, shape, out):
    M, K, N = shape
    rng = np.random.default_rng(M + K + N)
    x = rng.standard_normal((M, K)).astype(np.float16)
    w = rng.standard_normal((N, K)).astype(np.float16)
    b = rng.standard_normal(N).astype(np.float32)
    y, _ = linear.linear(x, w, b, out)
    ref = linear.golden(x, w, b)
    if out == np.float32:
        np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5 * K)
    else:
        np.testing.assert_allclose(y.astype(np.float32), ref, rtol=2e-3, atol=2e-3)
