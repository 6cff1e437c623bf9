"""Gradients of the shipped ops and modules against torch autograd on the reference formulas,
within dtype tolerances."""
import pytest

torch = pytest.importorskip("torch")

import ascendc_py.torch_bridge as tb  # noqa: E402
import ascendc_py.torch_bridge.ops as ops  # noqa: E402
from torch_bridge_helpers import (DTYPES, GRAD_TOL, close, leaky_relu_ref, rand,  # noqa: E402
                                  sepia_ref, swiglu_ref)


def grads(fn, *inputs, seed=20):
    """Gradients of sum(fn(*inputs) * w) with respect to the tensor inputs, w fixed random."""
    leaves = [t.detach().clone().requires_grad_() if isinstance(t, torch.Tensor) else t
              for t in inputs]
    out = fn(*leaves)
    w = rand(out.shape, out.dtype, seed)
    out.backward(w)
    return [t.grad for t in leaves if isinstance(t, torch.Tensor)]


def check_grads(op, ref, inputs, dtype):
    got = grads(op, *inputs)
    # the reference runs in float32 on the same inputs (the weights: the same values)
    expected = grads(ref, *[t.float() if isinstance(t, torch.Tensor) else t for t in inputs])
    for g, e in zip(got, expected):
        assert g.dtype == dtype
        close(g, e, dtype, GRAD_TOL)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(1,), (37,), (3, 1000)], ids=str)
def test_elementwise_grads(shape, dtype):
    a, b = rand(shape, dtype, 1), rand(shape, dtype, 2)
    check_grads(ops.swiglu, swiglu_ref, (a, b), dtype)
    check_grads(ops.add, lambda x, y: x + y, (a, b), dtype)
    check_grads(lambda x: ops.leaky_relu(x, 0.05), lambda x: leaky_relu_ref(x, 0.05), (a,), dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_sepia_grad(dtype):
    x = rand((2, 3, 9, 11), dtype, 3, 0.0, 1.0)
    check_grads(ops.sepia, sepia_ref, (x,), dtype)


def test_grads_match_finite_differences_float32():
    """A gradcheck-like test in float32 (the ops have no float64): central differences."""
    torch.manual_seed(0)
    for op, args in ((ops.swiglu, (torch.randn(6), torch.randn(6))),
                     (ops.sepia, (torch.rand(1, 3, 2, 2),)),
                     (lambda x: ops.leaky_relu(x, 0.3), (torch.randn(6) + 0.5,))):
        analytic = grads(op, *args, seed=0)
        w = rand(op(*args).shape, torch.float32, 0)
        for i, x in enumerate(args):
            numeric = torch.zeros_like(x)
            flat = x.reshape(-1)
            for j in range(flat.numel()):
                e = torch.zeros_like(flat)
                e[j] = 1e-2
                hi = [a if k != i else (flat + e).reshape(x.shape) for k, a in enumerate(args)]
                lo = [a if k != i else (flat - e).reshape(x.shape) for k, a in enumerate(args)]
                numeric.reshape(-1)[j] = ((op(*hi) - op(*lo)) * w).sum() / 2e-2
            torch.testing.assert_close(analytic[i], numeric, rtol=2e-2, atol=2e-3)


def test_double_use_and_accumulation():
    a = rand((50,), torch.float32, 4).requires_grad_()
    out = ops.add(ops.swiglu(a, a), a)
    out.sum().backward()
    a_ = a.detach().clone().requires_grad_()
    (swiglu_ref(a_, a_) + a_).sum().backward()
    torch.testing.assert_close(a.grad, a_.grad, rtol=1e-5, atol=1e-5)


def test_modules_grads():
    torch.manual_seed(0)
    mod = tb.SwiGLU(8, 24)
    x = torch.randn(5, 8, requires_grad=True)
    mod(x).square().sum().backward()
    got = [x.grad, mod.gate_weight.grad, mod.up_weight.grad]
    x.grad = None
    mod.zero_grad()
    mod.reference(x).square().sum().backward()
    for g, e in zip(got, [x.grad, mod.gate_weight.grad, mod.up_weight.grad]):
        torch.testing.assert_close(g, e, rtol=1e-5, atol=1e-5)
    img = torch.rand(2, 3, 4, 4, requires_grad=True)
    tb.SepiaFilter()(img).sum().backward()
    expected = torch.tensor(ops.SEPIA).sum(0).view(1, 3, 1, 1).expand(2, 3, 4, 4)
    torch.testing.assert_close(img.grad, expected)
