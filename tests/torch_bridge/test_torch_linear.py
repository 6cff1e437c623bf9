"""torch.ops.ascendc.linear: values and gradients against torch.nn.functional.linear."""
import pytest

torch = pytest.importorskip("torch")

import ascendc_py.torch_bridge.ops as ops  # noqa: E402,F401  (registers the ops)
from ascendc_py.torch_bridge import OpInputError  # noqa: E402

#: max |error| relative to the largest |reference| value, per dtype (one rounding at the end,
#: float32 accumulation; bfloat16 keeps 8 significant bits)
TOL = {torch.float16: 2e-3, torch.bfloat16: 1e-2, torch.float32: 1e-5}


def _check(got, want, dtype):
    scale = max(1.0, want.abs().max().item())
    assert (got.double() - want).abs().max().item() <= TOL[dtype] * scale


@pytest.mark.parametrize("dtype", list(TOL), ids=str)
@pytest.mark.parametrize("shape", [(1, 5, 3), (37, 70, 300), (200, 300, 150), (129, 16, 257),
                                   (2, 3, 17, 40, 9)], ids=str)
def test_linear_matches_torch(dtype, shape):
    *lead, k, n = shape
    g = torch.Generator().manual_seed(sum(shape))
    x = torch.randn(*lead, k, generator=g).to(dtype)
    w = (torch.randn(n, k, generator=g) / k ** 0.5).to(dtype)
    b = torch.randn(n, generator=g).to(dtype)
    y = torch.ops.ascendc.linear(x, w, b)
    assert y.dtype == dtype and y.shape == (*lead, n)
    _check(y, torch.nn.functional.linear(x.double(), w.double(), b.double()), dtype)


@pytest.mark.parametrize("dtype", list(TOL), ids=str)
def test_linear_gradients(dtype):
    g = torch.Generator().manual_seed(7)
    x = torch.randn(3, 19, 40, generator=g).to(dtype).requires_grad_()
    w = (torch.randn(21, 40, generator=g) / 7).to(dtype).requires_grad_()
    b = torch.randn(21, generator=g).to(dtype).requires_grad_()
    gy = torch.randn(3, 19, 21, generator=g).to(dtype)
    torch.ops.ascendc.linear(x, w, b).backward(gy)
    ref = [t.detach().double().requires_grad_() for t in (x, w, b)]
    torch.nn.functional.linear(*ref).backward(gy.double())
    for got, want in zip((x.grad, w.grad, b.grad), (r.grad for r in ref)):
        assert got.dtype == dtype
        _check(got, want, dtype)


def test_linear_rejects_mismatched_shapes():
    with pytest.raises(OpInputError, match="x's last dimension"):
        torch.ops.ascendc.linear(torch.ones(4, 5), torch.ones(3, 6), torch.ones(3))


def test_linear_is_a_cube_kernel_with_a_report():
    x, w, b = torch.ones(33, 64), torch.ones(20, 64), torch.zeros(20)
    y = ops.linear(x, w, b)
    assert torch.all(y == 64)
    report = ops.linear.last_reports[-1]
    assert report.cube_flops > 0


# ----------------------------------------------------------------------------- swiglu_ffn
def _ffn_reference(x, wg, wu):
    return torch.nn.functional.silu(x @ wg) * (x @ wu)


@pytest.mark.parametrize("dtype", list(TOL), ids=str)
@pytest.mark.parametrize("shape", [(1, 5, 3), (37, 70, 50), (2, 9, 40, 33), (130, 64, 300)],
                         ids=str)
def test_swiglu_ffn_matches_torch(dtype, shape):
    *lead, k, n = shape
    g = torch.Generator().manual_seed(sum(shape))
    x = torch.randn(*lead, k, generator=g).to(dtype)
    wg = (torch.randn(k, n, generator=g) / k ** 0.5).to(dtype)
    wu = (torch.randn(k, n, generator=g) / k ** 0.5).to(dtype)
    y = torch.ops.ascendc.swiglu_ffn(x, wg, wu)
    assert y.dtype == dtype and y.shape == (*lead, n)
    _check(y, _ffn_reference(x.double(), wg.double(), wu.double()), dtype)


@pytest.mark.parametrize("dtype", list(TOL), ids=str)
def test_swiglu_ffn_gradients(dtype):
    g = torch.Generator().manual_seed(11)
    x = torch.randn(2, 19, 40, generator=g).to(dtype).requires_grad_()
    wg = (torch.randn(40, 33, generator=g) / 6).to(dtype).requires_grad_()
    wu = (torch.randn(40, 33, generator=g) / 6).to(dtype).requires_grad_()
    gy = torch.randn(2, 19, 33, generator=g).to(dtype)
    torch.ops.ascendc.swiglu_ffn(x, wg, wu).backward(gy)
    ref = [t.detach().double().requires_grad_() for t in (x, wg, wu)]
    _ffn_reference(*ref).backward(gy.double())
    # the gradients go through the projections rounded to the input dtype: a looser bound
    for got, want in zip((x.grad, wg.grad, wu.grad), (r.grad for r in ref)):
        assert got.dtype == dtype
        scale = max(1.0, want.abs().max().item())
        assert (got.double() - want).abs().max().item() <= 8 * TOL[dtype] * scale


def test_swiglu_ffn_is_one_mix_launch():
    x, w = torch.ones(64, 32) / 32, torch.ones(32, 48)
    y = ops.swiglu_ffn(x, w, w)
    assert torch.allclose(y, torch.nn.functional.silu(torch.ones(64, 48)))
    report = ops.swiglu_ffn.last_reports[-1]
    assert report.kernel_type == "MIX_AIC_1_2"
    assert report.cube_flops == 2 * 2 * 64 * 48 * 32
    assert report.pipe_busy["V"] > 0 and report.pipe_busy["M"] > 0


def test_swiglu_ffn_rejects_mismatched_shapes():
    with pytest.raises(OpInputError, match="one shape"):
        torch.ops.ascendc.swiglu_ffn(torch.ones(4, 5), torch.ones(5, 3), torch.ones(5, 4))
