"""asc.adv.softmax and its host tiling (SoftmaxTiling, softmax_tiling_func, the tmp-size
queries): bit-exact against the NumPy replay of the algorithm (norm_ref.softmax), close to a
float64 softmax, over rows with tails of a 64-element repeat, several passes (split_m smaller
than m, with a tail pass), padded rows (ori_src_k < src_k), float16 with float32 max/sum, and
the framework's temporary buffer."""
from __future__ import annotations

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py import host_adv

import norm_ref as REF
from kernels_norm import softmax_kernel


def run(x, stat_dtype=None, tmp_bytes=None, ori_k=None, framework=False):
    m, k = x.shape
    st = np.dtype(stat_dtype or x.dtype)
    lws = tmp_bytes or host_adv.get_softmax_max_tmp_size((m, k), st.itemsize)
    tiling = host_adv.softmax_tiling_func((m, k), st.itemsize, lws)
    kern = softmax_kernel(None if stat_dtype is None else asc.float32,
                          with_tmp=not framework, with_ori=ori_k is not None)
    z = np.zeros_like(x)
    blk = 32 // st.itemsize
    mx = np.zeros((m, blk), st)
    sm = np.zeros((m, blk), st)
    kern[1](x, z, mx, sm, tiling, ori_k or k, max(lws, 32))
    return z, mx, sm, tiling


def data(shape, dtype, seed=0):
    return (np.random.default_rng(seed).standard_normal(shape) * 3).astype(dtype)


@pytest.mark.parametrize("dtype,shape", [(np.float32, (5, 72)), (np.float32, (3, 200)),
                                         (np.float32, (1, 8)), (np.float16, (4, 80)),
                                         (np.float16, (6, 16)), (np.float16, (2, 400))])
@pytest.mark.parametrize("passes", ["one", "min", "some"])
def test_softmax_bit_exact(dtype, shape, passes):
    m, k = shape
    x = data(shape, dtype)
    st = np.dtype(dtype).itemsize
    lo = host_adv.get_softmax_min_tmp_size(shape, st)
    hi = host_adv.get_softmax_max_tmp_size(shape, st)
    size = {"one": hi, "min": lo, "some": lo + 2 * 4 * k + 100}[passes]
    z, mx, sm, tiling = run(x, tmp_bytes=size)
    if passes == "min":
        assert tiling.split_m == 1 and tiling.range_m == m
    d, rm, rs = REF.softmax(x)
    np.testing.assert_array_equal(z, d)
    np.testing.assert_array_equal(mx, rm)
    np.testing.assert_array_equal(sm, rs)
    xf = x.astype(np.float64)
    e = np.exp(xf - xf.max(1, keepdims=True))
    tol = 1e-6 if dtype == np.float32 else 1e-3
    np.testing.assert_allclose(z.astype(np.float64), e / e.sum(1, keepdims=True), rtol=tol * 4,
                               atol=tol / 10)


def test_float16_with_float32_stats_and_padded_rows():
    x = data((3, 48), np.float16, seed=3)
    z, mx, sm, _ = run(x, stat_dtype=np.float32, ori_k=37)
    d, rm, rs = REF.softmax(x, kv=37, stat_dtype=np.float32)
    np.testing.assert_array_equal(z, d)
    np.testing.assert_array_equal(mx, rm)
    np.testing.assert_array_equal(sm, rs)
    np.testing.assert_allclose(z[:, :37].astype(np.float32).sum(1), 1.0, rtol=5e-3)


def test_framework_buffer():
    x = data((4, 64), np.float32, seed=1)
    z, mx, sm, _ = run(x, tmp_bytes=4096, framework=True)
    d, rm, rs = REF.softmax(x)
    np.testing.assert_array_equal(z, d)
    np.testing.assert_array_equal(sm, rs)


def test_too_small_buffer_stops_at_the_call():
    x = data((4, 64), np.float32)
    m, k = x.shape
    tiling = host_adv.softmax_tiling_func((m, k), 4, host_adv.get_softmax_max_tmp_size((m, k), 4))
    z = np.zeros_like(x)
    s = np.zeros((m, 8), np.float32)
    with pytest.raises(asc.KernelAssertionError) as info:
        softmax_kernel()[1](x, z, s, s.copy(), tiling, k, 1024)
    assert "temp_buffer must be a uint8 LocalTensor large enough" in str(info.value)
    assert info.value.loc.file.endswith("kernels_norm.py")


def test_host_tiling_and_queries():
    shape = (10, 128)
    lo = host_adv.get_softmax_min_tmp_size(shape, 4)
    hi = host_adv.get_softmax_max_tmp_size(shape, 2)
    assert lo == (8 + 8 + 2 * 128) * 4 and hi == (8 + 8 + 2 * 10 * 128) * 4
    t = host_adv.softmax_tiling_func(shape, 2, lo + 3 * 2 * 128 * 4)
    assert (t.src_m, t.src_k, t.split_m, t.range_m, t.tail_m) == (10, 128, 4, 2, 2)
    assert (t.out_max_k, t.reduce_k, t.tail_split_size) == (16, 16, 256)
    assert t == host_adv.softmax_tiling_func((2, 5, 128), 2, lo + 3 * 2 * 128 * 4,
                                             asc.adv.SoftmaxTiling())
    with pytest.raises(ValueError, match="below the minimum"):
        host_adv.softmax_tiling_func(shape, 4, lo - 1)
    with pytest.raises(AttributeError, match="no field"):
        asc.adv.SoftmaxTiling(srcM=3)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_sanitize_mode_finds_nothing(dtype):
    """Every instruction reads bytes written before, and nothing races (several passes with a
    tail pass, a padded row)."""
    x = data((5, 80 if dtype == np.float16 else 72), dtype, seed=2)
    m, k = x.shape
    lws = host_adv.get_softmax_min_tmp_size((m, k), np.dtype(dtype).itemsize) + 2 * 4 * k
    tiling = host_adv.softmax_tiling_func((m, k), np.dtype(dtype).itemsize, lws)
    assert tiling.split_m == 2 and tiling.tail_m == 1
    blk = 32 // np.dtype(dtype).itemsize
    z = np.zeros_like(x)
    mx = np.zeros((m, blk), dtype)
    sm = np.zeros((m, blk), dtype)
    softmax_kernel(with_ori=True)[1](x, z, mx, sm, tiling, k - 7, lws, sanitize=True)
    d, rm, rs = REF.softmax(x, kv=k - 7)
    np.testing.assert_array_equal(z, d)
    np.testing.assert_array_equal(sm, rs)


@asc.kernel
def _tiling_in_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, rows: int, cols: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, rows * cols)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, rows * cols)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, 16384)
    a = buf.get(asc.float32)
    c = a[1024:]
    st = a[2048:]
    tmp = a[2112:].reinterpret_cast(asc.uint8)
    asc.data_copy(a, xg, rows * cols)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    tiling = asc.adv.SoftmaxTiling(src_m=rows, src_k=cols, split_m=2)
    asc.adv.softmax(c, st, st[32:], a, tiling, tmp)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, c, rows * cols)


@asc.kernel
def _tiling_bad_field(x: asc.GlobalAddress):
    t = asc.adv.SoftmaxTiling(srcM=1)  # <-


def test_tiling_built_in_the_kernel():
    x = data((3, 64), np.float32, seed=7)
    z = np.zeros_like(x)
    _tiling_in_kernel[1](x, z, 3, 64)
    np.testing.assert_array_equal(z, REF.softmax(x)[0])
    with pytest.raises(asc.KernelNameError) as info:
        _tiling_bad_field[1](x)
    assert "SoftmaxTiling has no field 'srcM'" in str(info.value)
    assert info.value.loc.line == _tiling_bad_field.fn.__code__.co_firstlineno + 2


def test_zero_tiling_is_an_error_at_the_call():
    """A tiling of zeros (pyasc's insert_sync test passes one and expects the shape from the
    tensors' ShapeInfo, which we do not read) stops at the call instead of silently computing
    nothing (it once also called the max tensor: the API's parameter max hides the builtin)."""
    x = data((2, 64), np.float32)
    z = np.ones_like(x)
    s = np.ones((2, 8), np.float32)
    with pytest.raises(asc.KernelAssertionError) as info:
        softmax_kernel()[1](x, z, s, s.copy(), asc.adv.SoftmaxTiling(), 64, 4096)
    assert "asc.adv.softmax: tiling.src_k is 0" in str(info.value)
    assert info.value.loc.file.endswith("kernels_norm.py")
