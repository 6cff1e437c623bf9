"""The softmax and layernorm samples: main() (golden-checked, returns its last Report) and their
launchers on other shapes, block counts and torch tensors."""
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
    yield {n: importlib.import_module(n) for n in ("softmax", "layernorm")}
    sys.path.remove(str(SAMPLES_DIR))


@pytest.mark.parametrize("name", ["softmax", "layernorm"])
def test_main_checks_golden_and_returns_a_report(samples, name, capsys):
    report = samples[name].main()
    assert report.cycles > 0 and report.instructions.get("reduce_sum", 0) > 0
    assert "matches golden" in capsys.readouterr().out


@pytest.mark.parametrize("dtype,shape,cores", [
    (np.float32, (1, 8), 1), (np.float32, (13, 64), 4), (np.float16, (7, 16), 3),
    (np.float16, (5, 4096), 2), (np.float32, (3, 200), 8)])   # rows < cores: idle blocks
def test_softmax_other_shapes(samples, dtype, shape, cores):
    sm = samples["softmax"]
    x = (np.random.default_rng(sum(shape)).standard_normal(shape) * 4).astype(dtype)
    y, _ = sm.softmax(x, cores=cores)
    asc.testing.assert_close(y, sm.golden(x))
    np.testing.assert_allclose(y.astype(np.float64).sum(axis=1), 1.0,
                               rtol=1e-5 if dtype == np.float32 else 2e-2)


@pytest.mark.parametrize("dtype,shape,cores", [
    (np.float32, (1, 8), 1), (np.float32, (9, 256), 4), (np.float16, (6, 32), 5),
    (np.float16, (4, 4096), 2)])
def test_layernorm_other_shapes(samples, dtype, shape, cores):
    ln = samples["layernorm"]
    rng = np.random.default_rng(sum(shape))
    x = (rng.standard_normal(shape) * 3 - 1).astype(dtype)
    gamma = rng.standard_normal(shape[1]).astype(dtype)
    beta = rng.standard_normal(shape[1]).astype(dtype)
    y, _ = ln.layernorm(x, gamma, beta, 1e-3, cores=cores)
    asc.testing.assert_close(y, ln.golden(x, gamma, beta, 1e-3))


def test_samples_accept_torch_and_match_torch(samples):
    torch = pytest.importorskip("torch")
    x = torch.randn(16, 512)
    y, _ = samples["softmax"].softmax(x.numpy())
    torch.testing.assert_close(torch.from_numpy(y), torch.softmax(x, dim=1), rtol=1e-5,
                               atol=1e-6)
    g, b = torch.randn(512), torch.randn(512)
    y, _ = samples["layernorm"].layernorm(x.numpy(), g.numpy(), b.numpy())
    ref = torch.nn.functional.layer_norm(x, (512,), g, b, eps=1e-5)
    torch.testing.assert_close(torch.from_numpy(y), ref, rtol=1e-4, atol=1e-4)
