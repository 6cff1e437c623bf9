"""torch.ops.ascendc.conv2d and conv_bn_relu (torch_bridge/ops_conv.py): against
torch.nn.functional.conv2d over a fixed sample of the shape grid (kernel 1/3/5/7, stride 1/2,
padding 0/1/3, dilation 1/2, odd H/W, C not a multiple of C0) in each dtype under Ascend's
precision rules; NCHW and channels_last; groups; opcheck; torch.compile without graph breaks;
backward on the cube; the fused module; fused vs the three-launch chain from the reports."""
from __future__ import annotations

import pathlib
import sys

import pytest
import torch
import torch.nn.functional as F

import ascendc_py as asc
from ascendc_py.torch_bridge import FusedConvBNReLU
from ascendc_py.torch_bridge import ops  # noqa: F401
from ascendc_py.torch_bridge.custom_op import OpDtypeError, OpInputError
from ascendc_py.torch_bridge.ops_conv import LAST_REPORTS, conv2d, conv_bn_relu_unfused

#: (N, C, H, W, Cout, kernel, stride, padding, dilation): every value of the grid appears;
#: C is never a multiple of C0 (16 for 16-bit types, 8 for float32) but once
GRID = [
    (1, 3, 9, 11, 20, 1, 1, 0, 1),
    (2, 5, 13, 7, 7, 3, 2, 1, 1),
    (1, 20, 11, 9, 33, 5, 1, 3, 2),
    (1, 7, 15, 13, 5, 7, 2, 3, 1),
    (2, 16, 7, 9, 16, 3, 1, 0, 2),
    (1, 9, 17, 5, 12, 5, 2, 0, 1),
    (1, 6, 9, 9, 140, 3, 1, 1, 2),
    (1, 33, 5, 7, 24, 1, 2, 3, 1),
]
DTYPES = [torch.float16, torch.bfloat16, torch.float32]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("case", GRID, ids=lambda c: "x".join(map(str, c)))
def test_conv2d_matches_torch_on_the_grid(case, dtype):
    n, c, h, w, cout, k, s, p, d = case
    g = torch.Generator().manual_seed(sum(case))
    x = torch.randn(n, c, h, w, generator=g).to(dtype)
    wt = (torch.randn(cout, c, k, k, generator=g) / (c * k * k) ** 0.5).to(dtype)
    b = torch.randn(cout, generator=g)
    y = conv2d(x, wt, b, s, p, d)
    golden = F.conv2d(x.double(), wt.double(), b.double(), s, p, d)
    assert y.dtype == dtype and y.shape == golden.shape
    asc.testing.assert_close(y, golden, dtype=str(dtype).split(".")[1])


def test_channels_last_in_gives_channels_last_out_and_nchw_gives_nchw():
    x = torch.randn(2, 5, 9, 8, dtype=torch.float16)
    w = torch.randn(6, 5, 3, 3, dtype=torch.float16) / 4
    y = conv2d(x, w, None, 2, 1, 1)
    ycl = conv2d(x.contiguous(memory_format=torch.channels_last), w, None, 2, 1, 1)
    assert y.is_contiguous() and ycl.is_contiguous(memory_format=torch.channels_last)
    assert torch.equal(y, ycl)
    assert torch.equal(conv2d(x[:, :, 1:, :-1], w, None, 1, 0, 1),       # a strided view
                       conv2d(x[:, :, 1:, :-1].contiguous(), w, None, 1, 0, 1))


def test_groups_and_no_bias():
    x = torch.randn(1, 6, 7, 7)
    w = torch.randn(4, 3, 3, 3) / 5
    y = torch.ops.ascendc.conv2d(x, w, None, [1, 1], [1, 1], [1, 1], 2)
    asc.testing.assert_close(y, F.conv2d(x.double(), w.double(), None, 1, 1, 1, 2),
                             rtol=1e-5, atol=1e-5)


def test_input_errors():
    x = torch.randn(1, 4, 5, 5)
    with pytest.raises(OpDtypeError, match="share one of"):
        conv2d(x, torch.randn(2, 4, 3, 3, dtype=torch.float16))
    with pytest.raises(OpInputError, match="does not fit"):
        conv2d(x, torch.randn(2, 4, 7, 7))
    with pytest.raises(OpInputError, match="groups"):
        torch.ops.ascendc.conv2d(x, torch.randn(2, 3, 3, 3), None, [1, 1], [0, 0], [1, 1], 1)
    with pytest.raises(OpInputError, match="stride <= 63"):
        conv2d(x, torch.randn(2, 4, 1, 1), None, 64)
    with pytest.raises(OpInputError, match="do not fit the kernel's L1 chunk"):
        conv2d(torch.zeros(1, 4, 90, 90, dtype=torch.float16),    # 90x90 weights: 4 MB
               torch.zeros(2, 4, 90, 90, dtype=torch.float16), None, 1, 3)


def test_opcheck_both_ops():
    x = torch.randn(1, 5, 6, 7)
    w = torch.randn(4, 5, 3, 3)
    b = torch.randn(4)
    torch.library.opcheck(torch.ops.ascendc.conv2d.default,
                          (x.requires_grad_(), w.requires_grad_(), b.requires_grad_(),
                           [2, 1], [0, 1], [1, 2], 1))
    bn = (torch.rand(4) + 0.5, torch.randn(4), torch.randn(4), torch.rand(4) + 0.5)
    torch.library.opcheck(torch.ops.ascendc.conv_bn_relu.default,
                          (x.detach().contiguous(memory_format=torch.channels_last),
                           w.detach(), b.detach(), *bn, 1e-5, [1, 1], [1, 1], [1, 1]))


def test_torch_compile_fullgraph():
    bn = (torch.rand(4) + 0.5, torch.randn(4), torch.randn(4), torch.rand(4) + 0.5)

    def f(x, w, w2, b):
        y = torch.ops.ascendc.conv2d(x, w, b, [1, 1], [1, 1], [1, 1], 1)
        return torch.ops.ascendc.conv_bn_relu(y, w2, b, *bn, 1e-5, [1, 1], [1, 1], [1, 1]) * 2

    args = (torch.randn(1, 3, 6, 6), torch.randn(4, 3, 3, 3), torch.randn(4, 4, 3, 3),
            torch.randn(4))
    torch._dynamo.reset()
    compiled = torch.compile(f, fullgraph=True, backend="aot_eager")
    assert torch.equal(compiled(*args), f(*args))


@pytest.mark.parametrize("s,p,d", [(1, 1, 1), (2, 0, 1), (2, 3, 2)])
def test_backward_on_the_cube_matches_torch(s, p, d):
    x = torch.randn(2, 3, 7, 8, requires_grad=True)
    w = torch.randn(4, 3, 3, 3, requires_grad=True)
    b = torch.randn(4, requires_grad=True)
    out = conv2d(x, w, b, s, p, d)
    g = torch.randn_like(out)
    ours = torch.autograd.grad(out, (x, w, b), g)
    ref = torch.autograd.grad(F.conv2d(x, w, b, s, p, d), (x, w, b), g)
    for a, r in zip(ours, ref):
        asc.testing.assert_close(a, r, rtol=1e-4, atol=1e-4)


def test_conv_bn_relu_is_inference_only():
    x = torch.randn(1, 3, 5, 5)
    w = torch.randn(4, 3, 3, 3, requires_grad=True)
    bn = (torch.ones(4), torch.zeros(4), torch.zeros(4), torch.ones(4))
    y = torch.ops.ascendc.conv_bn_relu(x, w, None, *bn, 1e-5, [1, 1], [1, 1], [1, 1])
    with pytest.raises(RuntimeError, match="inference-only"):
        y.sum().backward()


def _trained_pair(cin=5, cout=7, k=3, stride=1, padding=1):
    conv = torch.nn.Conv2d(cin, cout, k, stride=stride, padding=padding)
    bn = torch.nn.BatchNorm2d(cout)
    bn.running_mean.uniform_(-1, 1)
    bn.running_var.uniform_(0.5, 2)
    bn.weight.data.uniform_(0.5, 1.5)
    bn.bias.data.uniform_(-1, 1)
    return conv.eval(), bn.eval()


def test_fused_module_matches_torch_modules():
    torch.manual_seed(0)
    conv, bn = _trained_pair(stride=2)
    m = FusedConvBNReLU.from_modules(conv, bn)
    x = torch.randn(2, 5, 9, 11)
    with torch.no_grad():
        ref = torch.relu(bn(conv(x)))
        y = m(x)
    assert y.dtype == torch.float32 and y.shape == ref.shape
    asc.testing.assert_close(y, ref, rtol=1e-2, atol=1e-2)   # float16 on the cube inside
    m32 = FusedConvBNReLU.from_modules(conv, bn, compute_dtype=torch.float32)
    with torch.no_grad():
        asc.testing.assert_close(m32(x), ref, rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="groups=1"):
        FusedConvBNReLU.from_modules(torch.nn.Conv2d(4, 4, 3, groups=2), bn)


def _gm_bytes(report):
    return sum(v for k, v in report.bytes_moved.items() if "GM" in k)


def test_fused_moves_fewer_gm_bytes_and_cycles_than_the_chain():
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "samples"))
    try:
        import resnet_block
    finally:
        sys.path.pop(0)
    conv1, bn1, _, _ = resnet_block.make_block(resnet_block.SHAPE[1])
    x = torch.randn(resnet_block.SHAPE).half().contiguous(memory_format=torch.channels_last)
    fused, chain, diff = resnet_block.compare_stage1(x, conv1, bn1)
    assert len(chain) == 3 and diff < 1e-2
    assert fused.cycles < sum(r.cycles for r in chain)
    assert _gm_bytes(fused) < sum(_gm_bytes(r) for r in chain)
    # the fused launch is the conv launch with the BN folded in: same GM traffic as conv alone
    assert _gm_bytes(fused) == _gm_bytes(chain[0])
    assert LAST_REPORTS["ascendc::conv_bn_relu"][0] is fused


def test_unfused_chain_matches_fused_result():
    torch.manual_seed(1)
    conv, bn = _trained_pair()
    x = torch.randn(1, 5, 8, 8).half()
    w = conv.weight.detach().half()
    args = (bn.weight.detach(), bn.bias.detach(), bn.running_mean, bn.running_var, bn.eps)
    fused = torch.ops.ascendc.conv_bn_relu(x, w, conv.bias.detach(), *args, [1, 1], [1, 1],
                                           [1, 1])
    chain, reports = conv_bn_relu_unfused(x, w, conv.bias.detach(), *args, 1, 1, 1)
    with torch.no_grad():
        ref = torch.relu(bn(conv(x.float())))
    asc.testing.assert_close(chain.float(), ref, rtol=1e-2, atol=1e-2)
    asc.testing.assert_close(fused.float(), ref, rtol=1e-2, atol=1e-2)
    assert [r.kernel for r in reports] == ["conv2d_kernel", "affine_kernel", "relu_kernel"]
