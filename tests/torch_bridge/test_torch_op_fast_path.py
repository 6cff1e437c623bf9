"""The per-call path of a shipped op (issue 14: an op adds <= 20 us over its kernel launch):
the op and a direct launch of its kernel give the same bits and report figures; the common
call goes straight from the dispatcher's autograd kernel to the CPU kernel, while anything
that needs more (gradients, dispatch modes, fake tensors, bfloat16, non-contiguous inputs)
still takes the full path; cached tilings follow the platform."""
import sys

import pytest

torch = pytest.importorskip("torch")
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

import ascendc_py.torch_bridge.ops as ops  # noqa: E402
from ascendc_py import torch_bridge as tb  # noqa: E402
from ascendc_py.simulator import config  # noqa: E402
from ascendc_py.torch_bridge import kernels as K  # noqa: E402
from ascendc_py.torch_bridge import autotiling  # noqa: E402
from ascendc_py.torch_bridge.custom_op import elementwise_tiling  # noqa: E402
from torch_bridge_helpers import rand  # noqa: E402

REPORT_FIGURES = ("kernel", "block_dim", "platform", "cycles", "time_us", "bottleneck")


def functions_called(fn) -> set:
    """The names of the Python functions that run during ``fn()``."""
    names = set()

    def hook(frame, event, arg):
        if event == "call":
            names.add(frame.f_code.co_name)

    sys.setprofile(hook)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return names


def launch_sepia_directly(x):
    n, _, h, w = x.shape
    out = torch.empty_like(x)
    t = autotiling.elementwise(K.color_matrix_kernel, n * h * w, x.dtype, K.COLOR_UB_TILES,
                               min_per_block=16384)      # the op's tiling (its shipped tile)
    coefs = [c for row in ops.SEPIA for c in row]
    report = K.color_matrix_kernel[t.block_dim](x, out, h * w, n * h * w, t.share, *coefs,
                                                t.tile)
    return out, report


@pytest.mark.parametrize("dtype", (torch.float32, torch.float16), ids=str)
@pytest.mark.parametrize("shape", ((1, 3, 16, 16), (2, 3, 96, 100)))
def test_op_and_direct_launch_agree_bit_for_bit_and_in_report(shape, dtype):
    x = rand(shape, dtype, seed=3, low=0.0, high=1.0)
    expected, direct = launch_sepia_directly(x)
    got = torch.ops.ascendc.sepia(x)
    assert torch.equal(got, expected)
    (report,) = ops.sepia.last_reports
    for name in REPORT_FIGURES:
        assert getattr(report, name) == getattr(direct, name), name


def test_the_common_call_skips_the_autograd_wrappers():
    x = rand((1, 3, 8, 8), torch.float32, low=0.0, high=1.0)
    called = functions_called(lambda: torch.ops.ascendc.sepia(x))
    assert "_run_plain" in called
    assert not called & {"autograd_impl", "forward_no_grad", "backend_impl", "_check"}


def test_an_input_that_requires_grad_takes_the_autograd_path():
    x = rand((1, 3, 8, 8), torch.float32, low=0.0, high=1.0).requires_grad_()
    called = functions_called(lambda: torch.ops.ascendc.sepia(x).sum().backward())
    assert "autograd_impl" in called
    torch.testing.assert_close(x.grad, ops.sepia_backward(torch.ones_like(x)), rtol=0, atol=0)
    with torch.no_grad():         # no gradient wanted: the plain path again
        called = functions_called(lambda: torch.ops.ascendc.sepia(x))
    assert "autograd_impl" not in called and "_run_plain" in called


def test_a_dispatch_mode_still_sees_the_op():
    seen = []

    class Record(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    x = rand((5, 7), torch.float32, seed=1)
    with Record():
        y = torch.ops.ascendc.add(x, x)
    assert "ascendc.add.default" in seen
    torch.testing.assert_close(y, x + x)


@pytest.mark.parametrize("make", [
    lambda x: x.to(torch.bfloat16),                  # host cast
    lambda x: x.transpose(2, 3),                     # non-contiguous
    lambda x: torch.nn.Parameter(x, requires_grad=False),   # a Tensor subclass
], ids=("bfloat16", "non_contiguous", "parameter"))
def test_other_calls_take_the_full_path_with_the_same_results(make):
    x = make(rand((1, 3, 6, 6), torch.float32, seed=2, low=0.0, high=1.0))
    called = functions_called(lambda: torch.ops.ascendc.sepia(x))
    assert "_check" in called
    expected = torch.ops.ascendc.sepia(x.detach().float().contiguous()).to(x.dtype)
    torch.testing.assert_close(torch.ops.ascendc.sepia(x), expected, rtol=0, atol=0)


def test_defaults_left_out_by_the_dispatcher_are_filled_in():
    x = rand((4, 33), torch.float32, seed=4)
    torch.testing.assert_close(torch.ops.ascendc.leaky_relu(x),
                               torch.ops.ascendc.leaky_relu(x, 0.01), rtol=0, atol=0)
    torch.testing.assert_close(torch.ops.ascendc.leaky_relu(x, negative_slope=0.3),
                               torch.where(x >= 0, x, 0.3 * x))


def test_errors_are_the_same_on_the_plain_path():
    with pytest.raises(tb.OpInputError, match=r"^ascendc::sepia: expects a batch"):
        torch.ops.ascendc.sepia(torch.rand(2, 4, 4, 4))
    with pytest.raises(tb.OpInputError, match=r"^ascendc::add: shapes must be equal"):
        torch.ops.ascendc.add(torch.rand(4, 5), torch.rand(5, 4))
    with pytest.raises(tb.OpDtypeError, match="all tensor arguments must have one"):
        torch.ops.ascendc.add(torch.rand(4), torch.rand(4, dtype=torch.float16))


def test_cached_tilings_follow_the_platform():
    n = 48 * 16384
    assert elementwise_tiling(n, torch.float32, 6).block_dim == 48
    with config.using_platform("Ascend910B4") as chip:
        assert chip.aiv_cores == 40
        assert elementwise_tiling(n, torch.float32, 6).block_dim == 40
    assert elementwise_tiling(n, torch.float32, 6).block_dim == 48


def test_what_the_plain_path_keeps_per_call_follows_every_argument():
    """``_run_plain`` keeps the shape rule's answer per (dtype, shapes, other arguments): a
    different shape, integer or float (-0.0 is not 0.0) gets the rule's answer for it."""
    import math

    def rule(x, k: int, s: float):
        return (x.shape[0] * k + (1 if math.copysign(1.0, s) < 0 else 0), x.shape[1])

    def launch(x: torch.Tensor, k: int, s: float, *, out: torch.Tensor):
        out.fill_(s)

    op = tb.custom_op("perflaunch14_test::rows", launch, shape_rule=rule)
    x = torch.zeros(2, 3)
    assert op(x, 2, 0.0).shape == (4, 3)
    assert op(x, 3, 0.0).shape == (6, 3)
    assert op(x, 2, -0.0).shape == (5, 3)
    assert op(torch.zeros(1, 3), 2, 0.0).shape == (2, 3)
    assert op(x, 2, 0.0).shape == (4, 3)
    assert op(x.half(), 2, 1.5).dtype == torch.float16
    assert bool((op(x, 2, 2.5) == 2.5).all())
