"""Meta-device tensors through every shipped op and a user custom_op (shape inference, nothing
runs); float64 is refused with how to check gradients instead; float32 gradcheck passes with
the documented settings."""
from __future__ import annotations

import warnings

import pytest

torch = pytest.importorskip("torch")

import ascendc_py as asc  # noqa: E402
from ascendc_py import torch_bridge as tb  # noqa: E402
from ascendc_py.torch_bridge import SepiaFilter, SwiGLU, ops, ops_cube  # noqa: E402,F401
from ascendc_py.torch_bridge.custom_op import AscendOp  # noqa: E402

A = torch.ops.ascendc

#: arguments of every shipped op (shapes), and the shapes its outputs must have
SHIPPED = {
    "add": ([(4, 5), (4, 5)], [(4, 5)]),
    "leaky_relu": ([(4, 5), 0.1], [(4, 5)]),
    "leaky_relu_backward": ([(4, 5), (4, 5), 0.1], [(4, 5)]),
    "sepia": ([(2, 3, 4, 6)], [(2, 3, 4, 6)]),
    "sepia_backward": ([(2, 3, 4, 6)], [(2, 3, 4, 6)]),
    "swiglu": ([(4, 5), (4, 5)], [(4, 5)]),
    "swiglu_backward": ([(4, 5), (4, 5), (4, 5)], [(4, 5), (4, 5)]),
    "linear": ([(2, 8, 32), (16, 32), (16,)], [(2, 8, 16)]),
    "swiglu_ffn": ([(8, 32), (32, 16), (32, 16)], [(8, 16)]),
}


def _shipped_names() -> set:
    names = set()
    for module in (ops, ops_cube):
        for value in vars(module).values():
            if isinstance(value, AscendOp) and value.name.startswith("ascendc::"):
                names.add(value.name.split("::")[1])
    return names


def test_the_table_covers_every_shipped_op():
    assert _shipped_names() == set(SHIPPED)


@pytest.mark.parametrize("name", sorted(SHIPPED))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_meta_tensors_infer_shapes(name, dtype):
    args, outs = SHIPPED[name]
    with torch.device("meta"):
        call = [torch.empty(a, dtype=dtype) if isinstance(a, tuple) else a for a in args]
        got = getattr(A, name)(*call)
    got = got if isinstance(got, tuple) else (got,)
    assert [tuple(t.shape) for t in got] == outs
    assert all(t.device.type == "meta" and t.dtype == dtype for t in got)


def test_meta_modules_and_backward():
    with torch.device("meta"):
        mlp = SwiGLU(hidden=32, intermediate=16)
        y = mlp(torch.randn(8, 32))
        assert y.shape == (8, 16) and y.device.type == "meta"
        img = SepiaFilter()(torch.randn(1, 3, 4, 4, requires_grad=True))
        img.sum().backward()        # the backward ops infer shapes on meta too
    assert mlp.gate_weight.grad is None or mlp.gate_weight.grad.device.type == "meta"


def test_meta_shape_errors_still_name_the_op():
    with torch.device("meta"), pytest.raises(tb.OpInputError, match="ascendc::sepia: expects"):
        A.sepia(torch.empty(2, 4, 4, 4))


def test_user_custom_op_on_meta():
    def launch(x: torch.Tensor, *, out: torch.Tensor):
        raise AssertionError("a meta call must not launch")
    op = tb.custom_op("asc_meta_test::twice", launch, shape_rule=tb.same_shape())
    with torch.device("meta"):
        y = op(torch.empty(3, 7))
    assert y.shape == (3, 7) and y.device.type == "meta"


def test_float64_is_refused_with_how_to_check_gradients():
    x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    with pytest.raises(tb.OpDtypeError) as e:
        torch.autograd.gradcheck(lambda x: A.leaky_relu(x, 0.1), (x,))
    text = str(e.value)
    assert "has dtype float64" in text and "gradcheck on float32 inputs with eps=1e-3" in text
    assert "float16" in str(pytest.raises(tb.OpDtypeError, A.add, torch.ones(2, dtype=torch.int32),
                                          torch.ones(2, dtype=torch.int32)).value)


@pytest.mark.parametrize("name,shapes", [
    ("leaky_relu", [(4, 5)]), ("add", [(4, 5), (4, 5)]), ("swiglu", [(4, 5), (4, 5)]),
    ("sepia", [(1, 3, 2, 2)]), ("linear", [(4, 16), (8, 16), (8,)]),
    ("swiglu_ffn", [(4, 16), (16, 8), (16, 8)])])
def test_float32_gradcheck_with_the_documented_settings(name, shapes):
    torch.manual_seed(0)
    xs = [torch.randn(*s, requires_grad=True) for s in shapes]
    fn = (lambda x: A.leaky_relu(x, 0.1)) if name == "leaky_relu" else getattr(A, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # gradcheck warns that the inputs are not float64
        assert torch.autograd.gradcheck(fn, xs, eps=1e-3, atol=1e-2, rtol=1e-2)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_meta_tensors_infer_conv_shapes(dtype):
    """The convolution ops (torch.library ops of ops_conv.py, not AscendOps) on meta tensors:
    aten::conv2d's shapes, channels_last kept, nothing launched."""
    with torch.device("meta"):
        x = torch.empty(2, 3, 9, 11, dtype=dtype)
        w = torch.empty(8, 3, 3, 3, dtype=dtype)
        b = torch.empty(8, dtype=dtype)
        y = A.conv2d(x, w, b, [2, 2], [1, 1], [1, 1], 1)
        assert y.shape == (2, 8, 5, 6) and y.device.type == "meta" and y.dtype == dtype
        cl = A.conv2d(x.to(memory_format=torch.channels_last), w, b, [1, 1], [0, 0], [1, 1], 1)
        assert cl.shape == (2, 8, 7, 9)
        assert cl.is_contiguous(memory_format=torch.channels_last)
        stats = [torch.empty(8, dtype=dtype) for _ in range(4)]
        z = A.conv_bn_relu(x, w, b, *stats)
        assert z.shape == (2, 8, 7, 9) and z.device.type == "meta"
