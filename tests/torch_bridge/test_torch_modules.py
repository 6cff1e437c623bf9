"""SepiaFilter and SwiGLU behave like the plain-torch modules they replace and train end to end;
samples/torch_model.py runs."""
import importlib.util
import pathlib

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

import ascendc_py.torch_bridge as tb  # noqa: E402
from torch_bridge_helpers import sepia_ref  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_sepia_filter_module():
    m = tb.SepiaFilter()
    assert list(m.parameters()) == []
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        x = torch.rand(2, 3, 7, 9).to(dtype)
        out = m(x)
        assert out.dtype == dtype and out.shape == x.shape
        torch.testing.assert_close(out.float(), sepia_ref(x), rtol=1e-2, atol=1e-2)


def test_swiglu_module_shapes_dtypes_and_state():
    torch.manual_seed(0)
    m = tb.SwiGLU(16, 40)
    assert m.gate_weight.shape == m.up_weight.shape == (16, 40)
    assert {n for n, _ in m.named_parameters()} == {"gate_weight", "up_weight"}
    assert abs(m.gate_weight).max() <= 0.25 and "hidden=16, intermediate=40" in repr(m)
    x = torch.randn(2, 5, 16)
    torch.testing.assert_close(m(x), m.reference(x), rtol=1e-5, atol=1e-6)
    assert m(x).shape == (2, 5, 40)
    m2 = tb.SwiGLU(16, 40)
    m2.load_state_dict(m.state_dict())
    torch.testing.assert_close(m2(x), m(x))
    h = tb.SwiGLU(16, 40, dtype=torch.float16)
    assert h(x.half()).dtype == torch.float16
    b = tb.SwiGLU(16, 40, dtype=torch.bfloat16)
    assert b(x.bfloat16()).dtype == torch.bfloat16


def test_trains_like_the_reference():
    """The same SGD steps with our module and with the plain formula give the same weights."""
    torch.manual_seed(0)
    ours = nn.Sequential(tb.SwiGLU(8, 16), nn.Linear(16, 1))
    ref = nn.Sequential(tb.SwiGLU(8, 16), nn.Linear(16, 1))
    ref.load_state_dict(ours.state_dict())
    ref[0].forward = ref[0].reference
    x, y = torch.randn(32, 8), torch.randn(32, 1)
    losses = []
    for model in (ours, ref):
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(5):
            loss = nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        losses.append(loss.item())
    for p, q in zip(ours.parameters(), ref.parameters()):
        torch.testing.assert_close(p, q, rtol=1e-4, atol=1e-5)
    assert losses[0] == pytest.approx(losses[1], rel=1e-4)


def test_sample_torch_model(capsys):
    spec = importlib.util.spec_from_file_location("torch_model_sample",
                                                  ROOT / "samples" / "torch_model.py")
    sample = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sample)
    report = sample.main(steps=4)
    assert report.kernel == "color_matrix_kernel" and report.time_us > 0
    out = capsys.readouterr().out
    assert "step 3: loss" in out and "simulated NPU time" in out
    assert "ascendc::swiglu_backward" in out and "ascendc::sepia" in out
