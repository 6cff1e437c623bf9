"""grad_weight of conv2d over many output positions (torch_bridge/ops_conv.py
``_weight_grad_tiled``): the gradient is the kernel of that convolution, and its FracZ rows
must fit L1 beside the input window, so a gradient of more than ``GRAD_TAPS`` positions
(before: Ho·Wo of about 500 already raised OpInputError, the README said Ho, Wo <= 255) is
split into pieces, one launch each writing float32, summed in float32 and rounded once."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import ascendc_py as asc
from ascendc_py.torch_bridge import ops  # noqa: F401
from ascendc_py.torch_bridge import ops_conv
from ascendc_py.torch_bridge.ops_conv import LAST_REPORTS, conv2d

#: (N, C, H, W, Cout, kernel, stride, padding, dilation, groups, dtype, pieces)
CASES = [
    ((1, 3, 40, 40, 4, 3, 1, 1, 1, 1), torch.float32, 7),       # 40x40: 7 pieces of 255
    ((2, 3, 300, 7, 4, 3, 2, 1, 2, 1), torch.float16, 2),       # Ho = 149 x Wo = 3
    ((1, 4, 13, 290, 6, 5, 1, 3, 1, 2), torch.bfloat16, 30),    # Wo = 292 > 255, 2 groups
    ((1, 2, 600, 3, 3, 1, 1, 0, 1, 1), torch.float16, 8),       # Ho = 600 > 255, Wo = 3
]


@pytest.mark.parametrize("case,dtype,pieces", CASES, ids=lambda c: "x".join(map(str, c))
                         if isinstance(c, tuple) else str(c).split(".")[-1])
def test_weight_grad_over_many_positions_matches_autograd(case, dtype, pieces):
    n, c, h, w, cout, k, s, p, d, groups = case
    gen = torch.Generator().manual_seed(sum(case))
    x = torch.randn(n, c, h, w, generator=gen).to(dtype)
    wt = (torch.randn(cout, c // groups, k, k, generator=gen) / k).to(dtype)
    out = conv2d(x, wt.requires_grad_(), None, s, p, d, groups)
    assert out.shape[2] * out.shape[3] > ops_conv.GRAD_TAPS
    g = torch.randn(out.shape, generator=gen).to(dtype)
    gw, = torch.autograd.grad(out, (wt,), g)
    assert len(LAST_REPORTS["ascendc::conv2d"]) == pieces * groups
    w64 = wt.detach().double().requires_grad_()
    ref, = torch.autograd.grad(F.conv2d(x.double(), w64, None, s, p, d, groups), (w64,),
                               g.double())
    assert gw.dtype == dtype
    if dtype == torch.float32:
        asc.testing.assert_close(gw, ref, rtol=1e-4, atol=1e-4)
    else:   # float32 sums over every position, rounded once: Ascend's rule for the dtype
        asc.testing.assert_close(gw, ref, dtype=str(dtype).split(".")[1])


def test_tiled_and_whole_weight_grad_agree(monkeypatch):
    # the same gradient as one launch (GRAD_TAPS large enough) and as pieces: float32 sums in
    # another order, within float32 rounding
    x = torch.randn(2, 3, 12, 11)
    w = torch.randn(5, 3, 3, 3, requires_grad=True)
    out = conv2d(x, w, None, 1, 1, 1)
    g = torch.randn_like(out)
    whole, = torch.autograd.grad(out, (w,), g, retain_graph=True)
    assert len(LAST_REPORTS["ascendc::conv2d"]) == 1
    monkeypatch.setattr(ops_conv, "GRAD_TAPS", 20)
    tiled, = torch.autograd.grad(out, (w,), g)
    assert len(LAST_REPORTS["ascendc::conv2d"]) == 12      # a piece per row of 11 columns
    asc.testing.assert_close(tiled, whole, rtol=1e-5, atol=1e-5)
