"""The shipped ops against torch reference formulas: every dtype; shapes from empty to several
blocks with tiles and tails that are not whole 32-byte blocks; non-contiguous inputs; inputs are
never modified."""
import pytest

torch = pytest.importorskip("torch")

import ascendc_py.torch_bridge.ops as ops  # noqa: E402
from torch_bridge_helpers import (DTYPES, add_ref, close, leaky_relu_ref, rand,  # noqa: E402
                                  sepia_ref, swiglu_ref)

# 40955 elements = 3 blocks of 13664 (float32 add: tiles of 6656, 3 tiles per block); the last
# block's last tile ends in a tail of 3 (float32) / 11 (float16) elements after the DMA body
SHAPES = [(0,), (3, 0, 5), (1,), (7,), (37,), (3, 333), (2, 3, 4, 5), (5, 8191)]
# (2, 3, 130, 131): 34060 pixels, 3 blocks; the middle one's range crosses the image boundary
IMAGES = [(0, 3, 4, 4), (2, 3, 0, 5), (1, 3, 1, 1), (2, 3, 5, 7), (3, 3, 17, 3), (2, 3, 130, 131)]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_elementwise_ops(shape, dtype):
    x, y = rand(shape, dtype, 1), rand(shape, dtype, 2)
    keep = (x.clone(), y.clone())
    close(ops.add(x, y), add_ref(x, y), dtype)
    close(torch.ops.ascendc.swiglu(x, y), swiglu_ref(x, y), dtype)
    close(torch.ops.ascendc.leaky_relu(x, 0.2), leaky_relu_ref(x, 0.2), dtype)
    close(torch.ops.ascendc.leaky_relu(x), leaky_relu_ref(x), dtype)
    assert torch.equal(x, keep[0]) and torch.equal(y, keep[1])


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", IMAGES, ids=str)
def test_sepia(shape, dtype):
    x = rand(shape, dtype, 3, 0.0, 1.0)
    keep = x.clone()
    out = torch.ops.ascendc.sepia(x)
    assert out.shape == x.shape and out.is_contiguous()
    close(out, sepia_ref(x), dtype)
    assert torch.equal(x, keep)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
def test_add_is_exact(dtype):
    """One vector add rounds once, as torch does."""
    x, y = rand((4099,), dtype, 4), rand((4099,), dtype, 5)
    assert torch.equal(ops.add(x, y), x + y)


def test_leaky_relu_float32_matches_torch_exactly():
    x = rand((1000,), torch.float32, 6)
    x[:4] = torch.tensor([0.0, -0.0, float("inf"), -float("inf")])
    assert torch.equal(ops.leaky_relu(x, 0.1), torch.nn.functional.leaky_relu(x, 0.1))


def test_swiglu_extreme_values():
    """exp(-a) overflows for very negative a: silu(a) must go to 0, not NaN."""
    a = torch.tensor([-200.0, -90.0, -20.0, 0.0, 20.0, 90.0, 200.0] * 3)
    b = torch.ones_like(a)
    for dtype in (torch.float32, torch.float16):
        got = ops.swiglu(a.to(dtype), b.to(dtype)).float()
        assert torch.isfinite(got).all()
        torch.testing.assert_close(got, swiglu_ref(a.to(dtype), b.to(dtype)), rtol=4e-3,
                                   atol=1e-3)


def _non_contiguous(dtype):
    base = rand((64, 90), dtype, 7)
    return {"transposed": base.t(), "strided": base[:, ::3], "offset": base[5:40, 7:50],
            "expanded": rand((1, 90), dtype, 8).expand(30, 90)}


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_non_contiguous_inputs(dtype):
    for name, x in _non_contiguous(dtype).items():
        assert not x.is_contiguous(), name
        y = rand(x.shape, dtype, 9)
        keep = x.clone()
        for op, args in ((ops.add, (x, y)), (ops.add, (y, x)), (ops.swiglu, (x, y)),
                         (ops.leaky_relu, (x, 0.3))):
            expected = op(*(a.contiguous() if isinstance(a, torch.Tensor) else a for a in args))
            assert torch.equal(op(*args), expected), (name, op.name)
        assert torch.equal(x, keep)
    img = rand((2, 5, 6, 3), dtype, 10, 0.0, 1.0).permute(0, 3, 1, 2)   # NHWC memory
    assert not img.is_contiguous()
    assert torch.equal(ops.sepia(img), ops.sepia(img.contiguous()))


def test_outputs_are_fresh_tensors():
    x = rand((16,), torch.float32, 11)
    out = ops.add(x, torch.zeros_like(x))
    assert out.data_ptr() != x.data_ptr() and torch.equal(out, x)


def test_backward_ops_directly():
    g, a, b = (rand((3, 77), torch.float32, s) for s in (12, 13, 14))
    ga, gb = torch.ops.ascendc.swiglu_backward(g, a, b)
    a_, b_ = a.clone().requires_grad_(), b.clone().requires_grad_()
    (swiglu_ref(a_, b_) * g).sum().backward()
    torch.testing.assert_close(ga, a_.grad, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(gb, b_.grad, rtol=1e-5, atol=1e-5)
    img = rand((2, 3, 4, 5), torch.float32, 15)
    m_t = torch.tensor(ops.SEPIA).t()
    torch.testing.assert_close(torch.ops.ascendc.sepia_backward(img),
                               torch.einsum("ij,njhw->nihw", m_t, img))
    x = torch.tensor([-2.0, -1e-40, -0.0, 0.0, 1e-45, 1e-38, 3.0, 1e38, float("inf")])
    gx = torch.ones_like(x) * 2
    expected = torch.ops.aten.leaky_relu_backward(gx, x, 0.25, False)
    assert torch.equal(torch.ops.ascendc.leaky_relu_backward(gx, x, 0.25), expected)
    xh = x.half()
    assert torch.equal(torch.ops.ascendc.leaky_relu_backward(gx.half(), xh, 0.25),
                       torch.ops.aten.leaky_relu_backward(gx.half(), xh, 0.25, False))


def test_last_reports_and_launch_choices():
    x = rand((2048, 1024), torch.float32, 16)
    ops.swiglu(x, x)
    (report,) = ops.swiglu.last_reports
    assert report.kernel == "swiglu_kernel" and report.block_dim == 48 and report.time_us > 0
    ops.add(x[:1, :5], x[:1, :5])
    assert ops.add.last_reports[0].block_dim == 1
    before = ops.add.last_reports
    ops.add(x[:0], x[:0])          # empty: nothing is launched
    assert ops.add.last_reports is before
