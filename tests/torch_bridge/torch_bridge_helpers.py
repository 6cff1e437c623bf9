"""References and tolerances shared by the torch_bridge tests (imported by name: pytest puts this
folder on sys.path)."""
import torch

import ascendc_py.torch_bridge.ops as ops

DTYPES = (torch.float32, torch.float16, torch.bfloat16)

#: (rtol, atol) against a float32 reference computed from the same (rounded) inputs: float16
#: kernels round after every vector op; bfloat16 is computed in float32 and rounded once
TOL = {torch.float32: (1e-5, 1e-6), torch.float16: (4e-3, 2e-3), torch.bfloat16: (8e-3, 1e-2)}
#: gradients chain a few more roundings
GRAD_TOL = {torch.float32: (1e-5, 1e-5), torch.float16: (8e-3, 8e-3),
            torch.bfloat16: (1.6e-2, 2e-2)}


def close(actual, expected, dtype, tol=TOL):
    rtol, atol = tol[dtype]
    assert actual.dtype == dtype, (actual.dtype, dtype)
    torch.testing.assert_close(actual.float(), expected.float(), rtol=rtol, atol=atol)


def sepia_ref(x):
    m = torch.tensor(ops.SEPIA, dtype=torch.float32)
    return torch.einsum("ij,njhw->nihw", m, x.float())


def swiglu_ref(a, b):
    return torch.nn.functional.silu(a.float()) * b.float()


def leaky_relu_ref(x, slope=0.01):
    return torch.nn.functional.leaky_relu(x.float(), slope)


def add_ref(x, y):
    return x.float() + y.float()


def rand(shape, dtype, seed=0, low=-3.0, high=3.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(shape, generator=g) * (high - low) + low).to(dtype)
