"""samples/swiglu_ffn.py and ``torch.ops.ascendc.swiglu_ffn`` launch ONE kernel (the torch
bridge's ``swiglu_ffn_kernel``, its vector stage on ``asc.adv.swiglu``): the same bits for the
same inputs, float16 and float32, odd shapes, within tolerance of the float64 golden."""
from __future__ import annotations

import importlib.util
import pathlib

import numpy as np
import pytest

from ascendc_py.torch_bridge import cube_kernels

SAMPLE = pathlib.Path(__file__).resolve().parents[2] / "samples" / "swiglu_ffn.py"


def _sample():
    spec = importlib.util.spec_from_file_location("swiglu_ffn_sample", SAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_one_kernel_on_the_adv_api():
    assert _sample().swiglu_ffn_kernel is cube_kernels.swiglu_ffn_kernel
    import inspect
    source = inspect.getsource(cube_kernels.swiglu_ffn_kernel.fn)
    assert "asc.adv.swiglu(" in source and "asc.exp(" not in source


@pytest.mark.parametrize("dtype,shape", [(np.float16, (37, 24, 90)), (np.float32, (20, 40, 33))])
def test_sample_and_torch_op_agree_bit_for_bit(dtype, shape):
    torch = pytest.importorskip("torch")
    from ascendc_py.torch_bridge import ops
    S = _sample()
    m, k, n = shape
    rng = np.random.default_rng(m)
    x = rng.uniform(-1, 1, (m, k)).astype(dtype)
    wg = rng.uniform(-1, 1, (k, n)).astype(dtype)
    wu = rng.uniform(-1, 1, (k, n)).astype(dtype)
    y, report = S.swiglu_ffn(x, wg, wu)
    y0 = ops.swiglu_ffn(torch.from_numpy(x), torch.from_numpy(wg), torch.from_numpy(wu)).numpy()
    np.testing.assert_array_equal(y.view(np.uint8), y0.view(np.uint8))
    np.testing.assert_allclose(y.astype(np.float64), S.golden(x, wg, wu).astype(np.float64),
                               rtol=2e-3 if dtype == np.float16 else 1e-5, atol=1e-3)
    assert report.instructions["exp"] > 0
