"""Input row tiling of conv2d (torch_bridge/ops_conv.py ``_l1_plan``, conv_kernels.py
``tile_rows``): images whose channel block does not fit the kernel's L1 chunk load, per tile,
only the input rows its output pixels' windows touch, with the rows above and below the image
given to load3d as padding."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import ascendc_py as asc
from ascendc_py.torch_bridge import conv_kernels as CK
from ascendc_py.torch_bridge import ops  # noqa: F401
from ascendc_py.torch_bridge import ops_conv
from ascendc_py.torch_bridge.custom_op import OpInputError
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


def test_resnet_stem_224_7x7_stride2_pad3_is_row_tiled():
    # one channel block of 224x224 (1.6 MB) is far over the 250 KB chunk: before row tiling
    # this raised OpInputError
    case = (1, 3, 224, 224, 64, 7, 2, 3, 1)
    tm, tn, cb, slab, mode = ops_conv._l1_plan(224, 224, 1, 64, 7, 7, 2, 1, 112, 256, 128)
    assert mode == 1 and slab < 224 * 224 and cb == 1
    _check(case, torch.float16)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32], ids=str)
def test_tall_odd_image(dtype):
    case = (1, 5, 301, 23, 20, 3, 1, 1, 1)    # 301·23·32 B + weights > 250 KB
    assert ops_conv._l1_plan(301, 23, 1, 20, 3, 3, 1, 1, 23, 256, 128)[4] == 1
    _check(case, dtype)


#: small shapes forced through row tiling by a small L1 chunk: tiles that read only padding
#: rows (1x1 with padding 3: above and below the image), stride larger than the kernel,
#: dilation, odd sizes
FORCED = [
    ((1, 3, 60, 61, 20, 3, 2, 2, 2), 0.3),
    ((1, 3, 40, 9, 16, 1, 1, 3, 1), 0.3),
    ((1, 20, 40, 9, 16, 1, 1, 3, 1), 0.3),
    ((1, 20, 40, 9, 16, 2, 5, 6, 1), 0.7),
    ((2, 5, 13, 7, 7, 3, 2, 1, 1), 0.9),
    ((1, 7, 15, 13, 5, 7, 2, 3, 1), 0.9),
]


@pytest.mark.parametrize("case,frac", FORCED, ids=lambda c: "x".join(map(str, c))
                         if isinstance(c, tuple) else str(c))
def test_forced_row_tiling_matches_torch(case, frac, monkeypatch):
    n, c, h, w, cout, k, s, p, d = case
    whole = _check(case, torch.float16)
    monkeypatch.setattr(CK, "CONV_L1_BUFFER",
                        k * k * 32 * min(128, -(-cout // 16) * 16) + int(h * w * 32 * frac))
    wo = (w + 2 * p - d * (k - 1) - 1) // s + 1
    c1 = -(-c // 16)
    assert ops_conv._l1_plan(h, w, c1, cout, k, k, s, d, wo, 128, 128, s, d)[4] == 1
    tiled = _check(case, torch.float16)
    if c1 == 1:     # one channel block: the same K order, so the same bits as whole images
        assert torch.equal(tiled, whole)


def test_wide_7x7_with_many_output_channels_halves_the_channel_tile():
    # 8 rows of 600 pixels (153,600 B) and 7x7 weights of 128 channels (200,704 B) do not fit
    # 250 KB: TN halves
    tm, tn, cb, slab, mode = ops_conv._l1_plan(20, 600, 1, 160, 7, 7, 1, 1, 600, 256, 128)
    assert tn < 128 and mode == 1 and slab < 20 * 600
    _check((1, 3, 20, 600, 160, 7, 1, 3, 1), torch.float16)


def test_one_pixel_last_tile_with_large_padding(monkeypatch):
    # 63x63 outputs of a 1x1 stride-9 padding-250 conv: the last tile has one pixel (the cube
    # computes two rows); sizing its input rows by two pixels asked load3d for 256 padding
    # rows below the image (CubeParamError: pad_bottom out of range 0..255)
    monkeypatch.setattr(CK, "CONV_L1_BUFFER", 62016)
    assert ops_conv._l1_plan(62, 62, 1, 16, 1, 1, 9, 1, 63, 128, 128, 9, 1)[4] == 1
    _check((1, 3, 62, 62, 16, 1, 9, 250, 1), torch.float16)
