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
