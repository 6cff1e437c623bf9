"""The torch bridge wraps a C++ kernel as a torch op exactly like a Python one: eager calls,
opcheck, torch.compile(fullgraph=True), a backward, the Report."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ascendc_py as asc  # noqa: E402
from ascendc_py import cpp, torch_bridge as tb  # noqa: E402

from .conftest import CPP  # noqa: E402

MODULES = {torch.float16: cpp.load(CPP / "leaky_relu_custom.cpp", defines={"DTYPE_X": "half"}),
           torch.float32: cpp.load(CPP / "leaky_relu_custom.cpp", defines={"DTYPE_X": "float"})}


def launch_leaky_relu(x: torch.Tensor, slope: float = 0.01, *, out: torch.Tensor):
    m = MODULES[x.dtype]
    blocks = max(1, min(8, x.numel() // 1024))
    return m.leaky_relu_custom[blocks](x, out, {"totalLength": x.numel(), "slope": slope})


def _setup(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])
    ctx.slope = inputs[1]


def _backward(ctx, grad):
    (x,) = ctx.saved_tensors
    return grad * torch.where(x >= 0, 1.0, ctx.slope).to(grad.dtype), None


leaky = tb.custom_op("cpptest::leaky_relu", launch_leaky_relu, shape_rule=tb.same_shape(),
                     kernel=MODULES[torch.float32].leaky_relu_custom,
                     dtypes=(torch.float32, torch.float16), backward=_backward,
                     setup_context=_setup)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_eager_matches_torch(dtype):
    x = torch.randn(8 * 1040, dtype=torch.float32).to(dtype)   # 32-byte block shares
    y = torch.ops.cpptest.leaky_relu(x, 0.1)
    expected = torch.nn.functional.leaky_relu(x.float(), 0.1).to(dtype)
    torch.testing.assert_close(y, expected, rtol=1e-3, atol=1e-3)
    assert leaky.last_reports[0].cycles > 0


def test_opcheck_and_compile():
    x = torch.randn(2048)
    torch.library.opcheck(torch.ops.cpptest.leaky_relu.default, (x, 0.2))
    f = torch.compile(lambda t: torch.ops.cpptest.leaky_relu(t, 0.2) * 2, fullgraph=True)
    torch.testing.assert_close(f(x), torch.nn.functional.leaky_relu(x, 0.2) * 2)


def test_backward():
    x = torch.randn(2048, requires_grad=True)
    torch.ops.cpptest.leaky_relu(x, 0.3).sum().backward()
    torch.testing.assert_close(x.grad, torch.where(x >= 0, 1.0, 0.3))


def test_repr_names_the_cpp_kernel():
    assert "leaky_relu_custom" in repr(leaky)
    assert np.dtype(np.float16)   # keep numpy import used
    assert isinstance(MODULES[torch.float16].leaky_relu_custom, asc.Kernel)
