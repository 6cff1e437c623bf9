"""conv2d against torch.nn.functional.conv2d over the whole check grid of issue 19: kernel
1/3/5/7 × stride 1/2 × padding 0/1/3 × dilation 1/2 (48 geometries) × float16, bfloat16,
float32, each with odd H and W and a channel count that is not a multiple of C0 (16 for the
16-bit types, 8 for float32; one of them over two channel blocks), one launch per case,
compared in float64 under Ascend's precision rule (``asc.testing.assert_close`` with the
dtype: float16/bfloat16 inputs, float32 accumulation, one rounding)."""
from __future__ import annotations

import itertools

import pytest
import torch
import torch.nn.functional as F

import ascendc_py as asc
from ascendc_py.torch_bridge import ops  # noqa: F401
from ascendc_py.torch_bridge.ops_conv import conv2d

KERNELS, STRIDES, PADDINGS, DILATIONS = (1, 3, 5, 7), (1, 2), (0, 1, 3), (1, 2)
DTYPES = (torch.float16, torch.bfloat16, torch.float32)
#: input channels cycled over the cases: none a multiple of 8 or 16; 20 spans two blocks
CHANNELS = (3, 5, 7, 20, 9, 13)


def _cases():
    out = []
    for i, (k, s, p, d) in enumerate(itertools.product(KERNELS, STRIDES, PADDINGS, DILATIONS)):
        span = d * (k - 1) + 1                       # the smallest odd H, W the kernel fits
        h = span + 2 + (i % 3) * 2 - (1 if span % 2 == 0 else 0)
        w = span + 4 + (i % 2) * 2 - (1 if span % 2 == 0 else 0)
        out.append((1 + i % 2, CHANNELS[i % len(CHANNELS)], h | 1, w | 1, 5 + i % 4, k, s,
                    p, d))
    return out


GRID = _cases()


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda t: str(t).split(".")[1])
@pytest.mark.parametrize("case", GRID, ids=lambda c: "x".join(map(str, c)))
def test_conv2d_full_grid(case, dtype):
    n, c, h, w, cout, k, s, p, d = case
    assert h % 2 == 1 and w % 2 == 1 and c % 8
    g = torch.Generator().manual_seed(sum(case))
    x = torch.randn(n, c, h, w, generator=g).to(dtype)
    wt = (torch.randn(cout, c, k, k, generator=g) / (c * k * k) ** 0.5).to(dtype)
    b = torch.randn(cout, generator=g)
    y = conv2d(x, wt, b, s, p, d)
    golden = F.conv2d(x.double(), wt.double(), b.double(), s, p, d)
    assert y.dtype == dtype and y.shape == golden.shape
    asc.testing.assert_close(y, golden, dtype=str(dtype).split(".")[1])


def test_the_grid_covers_every_combination():
    geoms = {case[5:] for case in GRID}
    assert geoms == set(itertools.product(KERNELS, STRIDES, PADDINGS, DILATIONS))
