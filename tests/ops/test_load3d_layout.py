"""Host layouts for convolution (asc.host): NCHW/NHWC <-> NC1HWC0 and FracZ, round trips and
element placement, on numpy arrays and torch tensors (bfloat16 included)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from ascendc_py import host


@pytest.mark.parametrize("c,dtype,c0", [(3, np.float16, 16), (20, np.float32, 8),
                                        (33, np.int8, 32), (16, np.float16, 16)])
def test_nc1hwc0_round_trip_and_placement(c, dtype, c0):
    rng = np.random.default_rng(c)
    x = (rng.standard_normal((2, c, 5, 7)) * 50).astype(dtype)
    y = host.nchw_to_nc1hwc0(x)
    c1 = -(-c // c0)
    assert y.shape == (2, c1, 5, 7, c0) and y.dtype == x.dtype
    n, ch, h, w = 1, c - 1, 4, 6
    assert y[n, ch // c0, h, w, ch % c0] == x[n, ch, h, w]
    assert not y[:, -1, :, :, c - (c1 - 1) * c0:].any()          # padded channels are zero
    np.testing.assert_array_equal(host.nc1hwc0_to_nchw(y, c), x)
    nhwc = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    np.testing.assert_array_equal(host.nhwc_to_nc1hwc0(nhwc), y)
    np.testing.assert_array_equal(host.nc1hwc0_to_nhwc(y, c), nhwc)


def test_torch_bfloat16_and_channels_last():
    x = torch.randn(2, 19, 4, 3).to(torch.bfloat16)
    y = host.nchw_to_nc1hwc0(x)
    assert y.shape == (2, 2, 4, 3, 16) and y.dtype == torch.bfloat16 and y.is_contiguous()
    assert torch.equal(host.nc1hwc0_to_nchw(y, 19), x)
    assert torch.equal(host.nchw_to_nc1hwc0(x.to(memory_format=torch.channels_last)), y)


@pytest.mark.parametrize("shape,dtype", [((20, 3, 3, 3), np.float16), ((16, 16, 1, 1), np.float16),
                                         ((5, 9, 2, 3), np.float32)])
def test_fracz(shape, dtype):
    cout, cin, kh, kw = shape
    w = np.random.default_rng(1).standard_normal(shape).astype(dtype)
    f = host.oihw_to_fracz(w)
    c0 = 32 // w.itemsize
    c1, n1 = -(-cin // c0), -(-cout // 16)
    assert f.shape == (c1 * kh * kw, n1, 16, c0)
    o, i, a, b = cout - 1, cin - 1, kh - 1, 0
    assert f[(i // c0 * kh + a) * kw + b, o // 16, o % 16, i % c0] == w[o, i, a, b]
    np.testing.assert_array_equal(host.fracz_to_oihw(f, cout, cin, kh, kw), w)
    # flattened, it is the ZN (L0B) layout of the K x Cout matrix in img2col's K order
    from ascendc_py.compiler.ops.cube import zn_to_matrix
    from ascendc_py.dsl.types import float16, float32
    k = c1 * kh * kw * c0
    b_mat = zn_to_matrix(f.reshape(-1), k, n1 * 16, float16 if dtype == np.float16 else float32)
    kk = ((i // c0 * kh + a) * kw + b) * c0 + i % c0
    assert b_mat[kk, o] == w[o, i, a, b]


def test_wrong_rank_is_an_error():
    with pytest.raises(ValueError, match="4-dimensional"):
        host.nchw_to_nc1hwc0(np.zeros((3, 4, 5)))
