"""Output-width tiling of conv2d (torch_bridge/ops_conv.py ``_l1_plan`` MODE 2,
conv_kernels.py ``tile_window``): when not even the input rows of one output row fit the
kernel's L1 chunk, a tile is up to TM columns of one output row and loads only the rows ×
columns its windows touch (halo, stride, dilation), the image edges given to load3d as
padding on all four sides. Very wide and very tall images against F.conv2d, and small shapes
forced through width tiling by a small L1 chunk."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import ascendc_py as asc
from ascendc_py.torch_bridge import conv_kernels as CK
from ascendc_py.torch_bridge import ops  # noqa: F401
from ascendc_py.torch_bridge import ops_conv
from ascendc_py.torch_bridge.ops_conv import conv2d


def _case(case, dtype):
    n, c, h, w, cout, k, s, p, d = case
    g = torch.Generator().manual_seed(sum(case))
    x = torch.randn(n, c, h, w, generator=g).to(dtype)
    wt = (torch.randn(cout, c, k, k, generator=g) / (c * k * k) ** 0.5).to(dtype)
    return x, wt, torch.randn(cout, generator=g), s, p, d


def _check(case, dtype):
    x, wt, b, s, p, d = _case(case, dtype)
    y = conv2d(x, wt, b, s, p, d)
    golden = F.conv2d(x.double(), wt.double(), b.double(), s, p, d)
    assert y.shape == golden.shape
    asc.testing.assert_close(y, golden, dtype=str(dtype).split(".")[1])
    return y


def _plan(case, tm=128, tn=128):
    n, c, h, w, cout, k, s, p, d = case
    wo = (w + 2 * p - d * (k - 1) - 1) // s + 1
    c1 = -(-c // 16)
    return ops_conv._l1_plan(h, w, c1, cout, k, k, s, d, wo, tm, tn, s, d)


#: wide images whose one-output-row band of input rows does not fit L1 (before width tiling
#: an OpInputError "the input is tiled by rows, not by columns")
WIDE = [
    ((1, 3, 9, 2000, 5, 7, 1, 3, 1), torch.float16),
    ((1, 3, 7, 2001, 4, 7, 2, 3, 2), torch.bfloat16),
    ((1, 2, 11, 1901, 6, 5, 1, 0, 2), torch.float32),
    ((1, 4, 9, 40000, 2, 7, 1, 3, 1), torch.float16),
    ((1, 2, 3, 70001, 3, 3, 1, 1, 1), torch.float16),  # rows > 65535 blocks apart
]


@pytest.mark.parametrize("case,dtype", WIDE, ids=lambda c: "x".join(map(str, c))
                         if isinstance(c, tuple) else str(c).split(".")[1])
def test_very_wide_images_are_width_tiled(case, dtype):
    assert _plan(case)[4] == 2
    _check(case, dtype)


#: tall images are row tiled; 20001 rows of 5 pixels put a tile's channel blocks more than a
#: copy's stride apart (before: DataCopyParamError, src_stride 99730 out of range)
TALL = [(1, 2, 20001, 5, 3, 7, 1, 3, 1), (1, 20, 20001, 4, 3, 3, 1, 1, 1),
        (1, 3, 9001, 3, 4, 3, 2, 1, 2)]


@pytest.mark.parametrize("case", TALL, ids=lambda c: "x".join(map(str, c)))
def test_very_tall_images(case):
    assert _plan(case)[4] == 1
    _check(case, torch.float16)


#: (case, channel blocks per chunk, TM the chunk is sized for): small shapes forced through
#: width tiling; windows that read only padding (1x1 with padding 3 beside and above/below the
#: image; stride 9 with padding 250), stride larger than the kernel, dilation, odd sizes, a
#: one-pixel last column tile (Wo = 33, TM = 16), three channel blocks in chunks of two
FORCED = [
    ((1, 3, 60, 61, 20, 3, 2, 2, 2), 1, 16),
    ((1, 3, 40, 9, 16, 1, 1, 3, 1), 1, 16),
    ((1, 20, 40, 9, 16, 2, 5, 6, 1), 1, 16),
    ((2, 5, 13, 7, 7, 3, 2, 1, 1), 1, 16),
    ((1, 7, 15, 13, 5, 7, 2, 3, 1), 1, 16),
    ((1, 3, 5, 70, 9, 5, 1, 3, 2), 1, 16),
    ((1, 3, 1, 40, 4, 1, 2, 3, 1), 1, 16),
    ((1, 3, 4, 33, 4, 1, 1, 0, 1), 1, 16),
    ((1, 3, 62, 62, 16, 1, 9, 250, 1), 1, 16),
    ((1, 40, 9, 400, 18, 3, 1, 1, 1), 2, 128),
]


@pytest.mark.parametrize("case,cb,tm", FORCED, ids=lambda c: "x".join(map(str, c))
                         if isinstance(c, tuple) else str(c))
def test_forced_width_tiling_matches_torch(case, cb, tm, monkeypatch):
    n, c, h, w, cout, k, s, p, d = case
    whole = _check(case, torch.float16)
    rows = min(h, max(d * (k - 1) + 1, s))
    cols = min(w, max((tm - 1) * s + d * (k - 1) + 1, s))    # TM output columns
    block = k * k * 32 * min(128, -(-cout // 16) * 16) + rows * cols * 32
    monkeypatch.setattr(CK, "CONV_L1_BUFFER", cb * block)
    plan = _plan(case)
    assert plan[4] == 2 and plan[2] == min(cb, -(-c // 16))
    tiled = _check(case, torch.float16)
    if c <= 16:     # one channel block: the same K order, so the same bits as whole images
        assert torch.equal(tiled, whole)
