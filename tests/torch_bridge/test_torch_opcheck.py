"""torch.library.opcheck (schema, fake tensor, autograd registration, AOT dispatch static and
dynamic) for every shipped op, every dtype, empty and odd-sized inputs."""
import pytest

torch = pytest.importorskip("torch")

import ascendc_py.torch_bridge.ops as ops  # noqa: E402
from torch_bridge_helpers import DTYPES, rand  # noqa: E402


def samples(dtype):
    """(op name, args, kwargs) for every op; forward ops get inputs that require grad."""
    def t(shape, seed, grad=False, low=-3.0):
        return rand(shape, dtype, seed, low).requires_grad_(grad)

    out = []
    empty = dtype == torch.float32          # empty inputs once: they launch nothing
    for shape in ((5, 33), (0, 4))[:2 if empty else 1]:
        out += [("add", (t(shape, 1, True), t(shape, 2, True)), {}),
                ("swiglu", (t(shape, 3, True), t(shape, 4, True)), {}),
                ("leaky_relu", (t(shape, 5, True),), {}),
                ("leaky_relu", (t(shape, 6, True),), {"negative_slope": 0.3}),
                ("swiglu_backward", (t(shape, 7), t(shape, 8), t(shape, 9)), {}),
                ("leaky_relu_backward", (t(shape, 10), t(shape, 11), 0.2), {})]
    for shape in ((2, 3, 5, 7), (0, 3, 2, 2))[:2 if empty else 1]:
        out += [("sepia", (t(shape, 12, True, 0.0),), {}),
                ("sepia_backward", (t(shape, 13),), {})]
    for m, k, n in ((5, 33, 7), (0, 4, 3), (2, 0, 3))[:3 if empty else 1]:
        out += [("linear", (t((m, k), 14, True), t((n, k), 15, True), t((n,), 16, True)), {}),
                ("swiglu_ffn", (t((m, k), 17, True), t((k, n), 18, True), t((k, n), 19, True)),
                 {})]
    return out


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_opcheck_every_op(dtype):
    seen = set()
    for name, args, kwargs in samples(dtype):
        torch.library.opcheck(getattr(torch.ops.ascendc, name), args, kwargs)
        seen.add(name)
    assert seen == {n.split("::")[1] for n in ops.OPS}
