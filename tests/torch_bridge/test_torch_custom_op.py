"""The declaration API: a user's kernel becomes torch.ops.<ns>.<name> with a fake impl from its
shape rule, optional autograd, opcheck; argument checks; declaration errors; tiling helper."""
import math

import pytest

torch = pytest.importorskip("torch")
from torch import Tensor  # noqa: E402

import ascendc_py as asc  # noqa: E402
from ascendc_py import torch_bridge as tb  # noqa: E402
from ascendc_py.torch_bridge.kernels import block_range, gm, load_tile, store_tile  # noqa: E402


@asc.kernel
def axpy_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, alpha: float,
                total: int, share: int, TILE: asc.ConstExpr[int]):
    """z = alpha * x + y, single-buffered, reusing the shipped kernels' tile helpers."""
    start, end = block_range(total, share)
    xg = gm(x)
    yg = gm(y)
    zg = gm(z)
    ALIGN = 32 // x.dtype.sizeof()
    pipe = asc.TPipe()
    q_in = asc.TQue(asc.TPosition.VECIN, 1)
    q_out = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(q_in, 1, 2 * TILE * x.dtype.sizeof())
    pipe.init_buffer(q_out, 1, TILE * x.dtype.sizeof())
    p = start
    while p < end:
        n = min(TILE, end - p)
        t = q_in.alloc_tensor(x.dtype)
        load_tile(t, xg[p:], n, ALIGN)
        load_tile(t[TILE:], yg[p:], n, ALIGN)
        q_in.enque(t)
        t = q_in.deque(x.dtype)
        o = q_out.alloc_tensor(x.dtype)
        asc.muls(o, t, alpha, n)
        asc.add(o, o, t[TILE:], n)
        q_in.free_tensor(t)
        q_out.enque(o)
        o = q_out.deque(x.dtype)
        store_tile(zg[p:], o, n, ALIGN)
        q_out.free_tensor(o)
        p += n


def launch_axpy(x: Tensor, y: Tensor, alpha: float = 2.0, *, out: Tensor):
    """alpha * x + y."""
    t = tb.elementwise_tiling(x.numel(), x.dtype, ub_tiles=3, min_per_block=1024)
    return axpy_kernel[t.block_dim](x, y, out, alpha, x.numel(), t.share, t.tile)


def _axpy_setup(ctx, inputs, output):
    ctx.alpha = inputs[2]


axpy = tb.custom_op("asc_test::axpy", launch_axpy, shape_rule=tb.same_shape(),
                    kernel=axpy_kernel, dtypes=(torch.float32, torch.float16),
                    backward=lambda ctx, g: (axpy(g, torch.zeros_like(g), ctx.alpha), g, None),
                    setup_context=_axpy_setup)


@tb.custom_op("asc_test::axpy_pair", shape_rule=tb.same_shape(outputs=2), kernel=axpy_kernel)
def axpy_pair(x: Tensor, y: Tensor, *, out: tuple[Tensor, Tensor]):
    """(x + y, 3 x + y): two launches, two outputs (decorator form)."""
    return launch_axpy(x, y, 1.0, out=out[0]), launch_axpy(x, y, 3.0, out=out[1])


def test_registered_as_torch_op():
    assert isinstance(axpy, tb.AscendOp)
    assert torch.ops.asc_test.axpy is axpy.op
    assert str(axpy.op.default._schema) == \
        "asc_test::axpy(Tensor x, Tensor y, float alpha=2.) -> Tensor"
    assert "asc_test::axpy" in repr(axpy) and "axpy_kernel" in repr(axpy)
    assert axpy.kernels == (axpy_kernel,) and axpy.__doc__ == "alpha * x + y."


@pytest.mark.parametrize("n", [0, 1, 13, 1000, 5000])
def test_results_and_reports(n):
    x, y = torch.randn(n), torch.randn(n)
    torch.testing.assert_close(torch.ops.asc_test.axpy(x, y), 2 * x + y)
    torch.testing.assert_close(axpy(x, y, alpha=-0.5), -0.5 * x + y)
    s, t = axpy_pair(x, y)
    torch.testing.assert_close(s, x + y)
    torch.testing.assert_close(t, 3 * x + y)
    if n:
        assert len(axpy_pair.last_reports) == 2
        assert axpy.last_reports[0].kernel == "axpy_kernel"
        assert axpy.last_reports[0].block_dim == math.ceil(n / 1024)


def test_fake_impl_from_shape_rule():
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        x = torch.empty(7, 3, dtype=torch.float16)
        out = axpy(x, x)
        s, t = axpy_pair(x, x)
    assert out.shape == (7, 3) and out.dtype == torch.float16
    assert s.shape == t.shape == (7, 3)
    with pytest.raises(tb.OpInputError, match="asc_test::axpy: shapes must be equal"):
        with FakeTensorMode():
            axpy(torch.empty(2), torch.empty(3))


def test_autograd_and_opcheck():
    x = torch.randn(40, requires_grad=True)
    y = torch.randn(40, requires_grad=True)
    axpy(x, y, 1.5).sum().backward()
    torch.testing.assert_close(x.grad, torch.full((40,), 1.5))
    torch.testing.assert_close(y.grad, torch.ones(40))
    torch.library.opcheck(axpy.op, (x, y, 0.5))
    torch.library.opcheck(axpy_pair.op, (x.detach(), y.detach()))


def test_declared_dtypes_are_enforced():
    with pytest.raises(tb.OpDtypeError, match=r"asc_test::axpy accepts float32, float16$"):
        axpy(torch.ones(2, dtype=torch.bfloat16), torch.ones(2, dtype=torch.bfloat16))


def test_custom_op_is_callable_as_module_attribute():
    import ascendc_py.torch_bridge.custom_op as module    # the submodule shares the name
    assert callable(module) and callable(tb.custom_op)


@pytest.mark.parametrize("bad", ["noname", "a::", "::b", "a::b::c"])
def test_declaration_errors_name(bad):
    with pytest.raises(ValueError, match="namespace::name"):
        tb.custom_op(bad, launch_axpy, shape_rule=tb.same_shape())


def test_declaration_errors_launcher():
    def no_out(x: Tensor):
        pass

    def positional_out(x: Tensor, out: Tensor):
        pass

    def unannotated(x, *, out: Tensor):
        pass

    def bad_out(x: Tensor, *, out: int):
        pass

    for fn, msg in ((no_out, "keyword-only parameter 'out'"),
                    (positional_out, "keyword-only parameter 'out'"),
                    (unannotated, "parameter 'x' needs a type annotation"),
                    (bad_out, "annotate 'out' as torch.Tensor")):
        with pytest.raises(TypeError, match=msg):
            tb.custom_op("asc_test::never", fn, shape_rule=tb.same_shape())
    with pytest.raises(ValueError, match="setup_context is only used together with backward"):
        tb.custom_op("asc_test::never", launch_axpy, shape_rule=tb.same_shape(),
                     setup_context=_axpy_setup)
    assert not hasattr(torch.ops.asc_test, "never")


def test_elementwise_tiling():
    for n in (0, 1, 15, 16, 17, 8191, 8193, 10 ** 6, 2048 * 4096, 10 ** 9):
        for dtype, tiles in ((torch.float32, 6), (torch.float16, 13), (torch.float32, 13)):
            t = tb.elementwise_tiling(n, dtype, tiles)
            assert 1 <= t.block_dim <= 48
            assert t.share % 16 == 0 and t.block_dim * t.share >= n
            assert (t.block_dim - 1) * t.share < max(n, 1)          # no idle block
            assert t.tile % 256 == 0 and t.tile * tiles * dtype.itemsize <= 160 * 1024
    assert tb.elementwise_tiling(2048 * 4096, torch.float32, 7).block_dim == 48
    assert tb.elementwise_tiling(100, torch.float32, 7).block_dim == 1
    assert tb.elementwise_tiling(10 ** 6, torch.float32, 7, max_blocks=8).block_dim == 8
    with pytest.raises(ValueError, match="do not fit"):
        tb.elementwise_tiling(10, torch.float32, 1000)
