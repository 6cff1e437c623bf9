"""asc.adv.softmax with a zero SoftmaxTiling() takes its shape from src's ShapeInfo (pyasc's
insert_sync softmax test's use): bit-exact against norm_ref.softmax over rows with tails,
padded rows (original k < k), several passes (a small buffer), in place (dst is src), float16
and float32; no ShapeInfo is still an error at the call."""
from __future__ import annotations

import numpy as np
import pytest

import ascendc_py as asc

import norm_ref as REF


def shape_kernel(in_place=False, with_tmp=True):
    @asc.kernel
    def k(x: asc.GlobalAddress, z: asc.GlobalAddress, s: asc.GlobalAddress,
          rows: asc.ConstExpr[int], cols: asc.ConstExpr[int], ori: asc.ConstExpr[int],
          tmp_bytes: asc.ConstExpr[int]):
        n = rows * cols
        blk = 32 // x.dtype.sizeof()
        xg = asc.GlobalTensor()
        xg.set_global_buffer(x, n)
        zg = asc.GlobalTensor()
        zg.set_global_buffer(z, n)
        sg = asc.GlobalTensor()
        sg.set_global_buffer(s, 2 * rows * blk)
        a = asc.LocalTensorAuto(x.dtype, n)
        c = asc.LocalTensorAuto(x.dtype, n)
        st = asc.LocalTensorAuto(x.dtype, 2 * rows * blk)
        asc.data_copy(a, xg, n)
        shape = asc.ShapeInfo(asc.array(asc.int32, (rows, cols)),
                              asc.array(asc.int32, (rows, ori)))
        a.set_shape_info(shape)
        tiling = asc.adv.SoftmaxTiling()
        if with_tmp:
            tmp = asc.LocalTensorAuto(asc.uint8, tmp_bytes)
            if in_place:
                asc.adv.softmax(a, st, st[rows * blk:], a, tiling, tmp)
            else:
                asc.adv.softmax(c, st, st[rows * blk:], a, tiling, tmp)
        else:
            asc.adv.softmax(c, st, st[rows * blk:], a, tiling)
        if in_place:
            asc.data_copy(zg, a, n)
        else:
            asc.data_copy(zg, c, n)
        asc.data_copy(sg, st, 2 * rows * blk)
    return k


def data(shape, dtype, seed=0):
    return (np.random.default_rng(seed).standard_normal(shape) * 3).astype(dtype)


@pytest.mark.parametrize("dtype,shape,ori", [(np.float32, (5, 72), 72), (np.float32, (3, 200), 193),
                                             (np.float16, (4, 80), 80), (np.float16, (6, 32), 27)])
@pytest.mark.parametrize("tmp", ["large", "small", "framework"])
def test_zero_tiling_takes_the_shape_info(dtype, shape, ori, tmp):
    m, k = shape
    x = data(shape, dtype, seed=k)
    z = np.zeros_like(x)
    blk = 32 // np.dtype(dtype).itemsize
    s = np.zeros((2, m, blk), dtype)
    wk = (2 * -(-k // 64) + 7) // 8 * 8
    small = (8 + wk + 2 * 2 * k) * 4               # two rows a pass: several passes, a tail
    shape_kernel(with_tmp=tmp != "framework")[1](x, z, s, m, k, ori,
                                                 small if tmp == "small" else 65536)
    d, rm, rs = REF.softmax(x, kv=ori)
    np.testing.assert_array_equal(z, d)
    np.testing.assert_array_equal(s[0], rs)
    np.testing.assert_array_equal(s[1], rm)


def test_in_place_as_pyasc_calls_it():
    x = data((4, 64), np.float32, seed=4)
    z = np.zeros_like(x)
    s = np.zeros((2, 4, 8), np.float32)
    shape_kernel(in_place=True)[1](x, z, s, 4, 64, 64, 8192)
    np.testing.assert_array_equal(z, REF.softmax(x)[0])
    ref = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(z, ref / ref.sum(1, keepdims=True), rtol=1e-6)


def test_too_small_buffer_for_one_row_stops():
    x = data((2, 64), np.float32)
    with pytest.raises(asc.KernelAssertionError) as info:
        shape_kernel()[1](x, np.zeros_like(x), np.zeros((2, 2, 8), np.float32), 2, 64, 64, 256)
    assert "asc.adv.softmax: temp_buffer must be a uint8 LocalTensor large enough" in \
        str(info.value)
    assert info.value.loc.file.endswith("test_softmax_shape_info.py")
