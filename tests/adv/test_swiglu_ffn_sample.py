"""samples/swiglu_ffn.py on asc.adv.swiglu gives the bits of the hand-written vector stage
(torch_bridge's swiglu_ffn_kernel: the same float32 steps) for float16 and float32, odd shapes."""
from __future__ import annotations

import importlib.util
import pathlib

import numpy as np
import pytest

from ascendc_py.torch_bridge.cube_kernels import swiglu_ffn_kernel as hand_written

SAMPLE = pathlib.Path(__file__).resolve().parents[2] / "samples" / "swiglu_ffn.py"


def _sample():
    spec = importlib.util.spec_from_file_location("swiglu_ffn_sample", SAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("dtype,shape", [(np.float16, (37, 24, 90)), (np.float32, (20, 40, 33))])
def test_sample_matches_the_hand_written_stage(dtype, shape):
    S = _sample()
    m, k, n = shape
    rng = np.random.default_rng(m)
    x = rng.uniform(-1, 1, (m, k)).astype(dtype)
    wg = rng.uniform(-1, 1, (k, n)).astype(dtype)
    wu = rng.uniform(-1, 1, (k, n)).astype(dtype)
    y, report = S.swiglu_ffn(x, wg, wu)
    tiling = S.make_tiling(m, n, k, dtype)
    y0 = np.zeros((m, n), dtype)
    hand_written[-(-tiling.used_core_num // 2)](x, wg, wu, y0, np.zeros(2 * m * n, np.float32),
                                                tiling)
    np.testing.assert_array_equal(y.view(np.uint8), y0.view(np.uint8))
    np.testing.assert_allclose(y.astype(np.float64), S.golden(x, wg, wu).astype(np.float64),
                               rtol=2e-3 if dtype == np.float16 else 1e-5, atol=1e-3)
    assert report.instructions["exp"] > 0
