"""asc.transpose: the 16 x 16 transpose of 2-byte elements (also in place) and the
[N,C,H,W] <-> [N,H,W,C] permutations of TransposeParamsExt, against ``ops/transpose.
transpose_reference`` and numpy's transpose, over dtypes and odd shapes; the size rules and the
temporary buffer's minimum checked at the line; the sanitizer sees the V pipe's accesses."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler.ops.transpose import TransposeType as TT
from ascendc_py.compiler.ops.transpose import tmp_bytes, transpose_reference

ASC = {np.float16: asc.float16, np.int16: asc.int16, np.uint16: asc.uint16, np.int8: asc.int8,
       np.uint8: asc.uint8, np.int32: asc.int32, np.uint32: asc.uint32,
       np.float32: asc.float32}


@asc.kernel
def tr_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, n: asc.ConstExpr[int],
              KIND: asc.ConstExpr[int], N: int, C: int, H: int, W: int, tmp_len: int,
              IN_PLACE: asc.ConstExpr[bool]):
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    zg.set_global_buffer(z, n)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    c = asc.LocalTensor(z.dtype, asc.TPosition.VECOUT, 65536, n)
    t = asc.LocalTensor(asc.uint8, asc.TPosition.VECCALC, 131072, tmp_len)
    asc.data_copy(a, xg, n)
    asc.data_copy(c, zg, n)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    if KIND == 0:
        if IN_PLACE:
            asc.transpose(a, a)
            asc.copy(c, a, 128, 2, asc.CopyRepeatParams())
        else:
            asc.transpose(c, a)
    elif KIND == 10:
        asc.transpose(c, a, t, asc.TransposeParamsExt(0, 0, 16, 16,
                                                      asc.TransposeType.TRANSPOSE_ND2ND_B16))
    elif KIND == 11:
        asc.transpose(c, a, t, asc.TransposeParamsExt(N, C, H, W,
                                                      asc.TransposeType.TRANSPOSE_NCHW2NHWC))
    else:
        asc.transpose(c, a, t, asc.TransposeParamsExt(n_size=N, c_size=C, h_size=H, w_size=W,
                                                      transpose_type=TT.TRANSPOSE_NHWC2NCHW))
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, c, n)


def _bits(npd, count, seed):
    rng = np.random.default_rng(seed)
    size = np.dtype(npd).itemsize
    u = {1: np.uint8, 2: np.uint16, 4: np.uint32}[size]
    return rng.integers(0, 2 ** (8 * size), count, dtype=np.uint64).astype(u).view(npd)


@pytest.mark.parametrize("npd", [np.float16, np.int16, np.uint16], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("in_place", [False, True])
def test_16x16(npd, in_place):
    x = _bits(npd, 256, 1)
    z = np.zeros(256, npd)
    tr_kernel[1](x, z, 256, 0, 0, 0, 16, 16, 32, in_place)
    np.testing.assert_array_equal(z.view(np.uint16), x.reshape(16, 16).T.reshape(-1).view(
        np.uint16))


def test_ext_nd2nd_b16_is_the_16x16_transpose():
    x = _bits(np.uint16, 256, 2)
    z = np.zeros(256, np.uint16)
    tr_kernel[1](x, z, 256, 10, 0, 0, 16, 16, 32, False)
    np.testing.assert_array_equal(z, transpose_reference(x))


@pytest.mark.parametrize("npd", list(ASC), ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("kind", [TT.TRANSPOSE_NCHW2NHWC, TT.TRANSPOSE_NHWC2NCHW],
                         ids=["NCHW2NHWC", "NHWC2NCHW"])
def test_layouts(npd, kind):
    es = np.dtype(npd).itemsize
    for n, c, h, w in ((1, 16, 2, 16 // es), (2, 3, 1, 32 // es), (3, 7, 2, 16 // es * 3)):
        count = n * c * h * w
        x = _bits(npd, count, count)
        z = np.zeros(count, npd)
        tr_kernel[1](x, z, count, int(kind), n, c, h, w, tmp_bytes(kind, c, es), False)
        shape = (n, c, h, w) if kind == TT.TRANSPOSE_NCHW2NHWC else (n, h, w, c)
        axes = (0, 2, 3, 1) if kind == TT.TRANSPOSE_NCHW2NHWC else (0, 3, 1, 2)
        want = x.reshape(shape).transpose(axes).reshape(-1)
        np.testing.assert_array_equal(z.view(np.uint8), want.view(np.uint8))
        np.testing.assert_array_equal(want, transpose_reference(x, kind, n, c, h, w))


def test_zero_sizes_compute_nothing():
    x = np.arange(64, dtype=np.float32)
    z = np.full(64, -1, np.float32)
    tr_kernel[1](x, z, 64, 11, 0, 16, 2, 4, 64, False)    # no temporary buffer needed either
    np.testing.assert_array_equal(z, np.full(64, -1, np.float32))


# ----------------------------------------------------------------------------- errors
def _line(fn, marker: str) -> int:
    src, first = inspect.getsourcelines(fn.fn)
    return first + next(i for i, s in enumerate(src) if marker in s)


@asc.kernel
def bad_tr(CASE: asc.ConstExpr[int], h: int, tmp_len: int):
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 4096)
    c = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, 32768, 4096)
    hh = asc.LocalTensor(asc.float16, asc.TPosition.VECOUT, 65536, 4096)
    t = asc.LocalTensor(asc.uint8, asc.TPosition.VECCALC, 98304, tmp_len)
    NCHW = asc.TransposeType.TRANSPOSE_NCHW2NHWC
    if CASE == 0:
        asc.transpose(c, a)  # case-float32
    elif CASE == 1:
        asc.transpose(hh, a)  # case-mixed
    elif CASE == 2:
        asc.transpose(c, a, t, asc.TransposeParamsExt(1, 4, 3, 3, NCHW))  # case-hw
    elif CASE == 3:
        nz = asc.TransposeType.TRANSPOSE_NZ2ND_0213
        asc.transpose(c, a, t, asc.TransposeParamsExt(1, 4, 2, 4, nz))  # case-type
    elif CASE == 4:
        asc.transpose(c, a, t, asc.TransposeParamsExt(1, 4, h, 8, NCHW))  # case-runtime
    elif CASE == 5:
        asc.transpose(c, c, t, asc.TransposeParamsExt(1, 4, 2, 8, NCHW))  # case-overlap
    elif CASE == 6:
        asc.transpose(c, a, t, asc.TransposeParamsExt(1, 4096, 2, 8, NCHW))  # case-c


@pytest.mark.parametrize("case,marker,exc,text", [
    (0, "case-float32", asc.KernelTypeError, "does not support float32"),
    (1, "case-mixed", asc.KernelTypeError, "src is float32 but dst is float16"),
    (2, "case-hw", asc.KernelValueError, "h_size \\* w_size is 9"),
    (3, "case-type", asc.KernelValueError, "TRANSPOSE_NZ2ND_0213 is not supported"),
    (6, "case-c", asc.KernelValueError, "c_size is 4096"),
])
def test_compile_errors_name_the_line(case, marker, exc, text):
    with pytest.raises(exc, match=text) as info:
        bad_tr[1](case, 2, 8192)
    assert f":{_line(bad_tr, marker)}:" in str(info.value).splitlines()[0]


@pytest.mark.parametrize("case,marker,h,tmp_len,text", [
    (4, "case-runtime", 600, 8192, "h_size \\* w_size <= 4095"),   # 600 * 8 > 4095
    (4, "case-runtime", 2, 100, "shared_tmp_buffer is smaller"),
    (5, "case-overlap", 2, 8192, "src and dst overlap"),
])
def test_runtime_checks_name_the_line(case, marker, h, tmp_len, text):
    with pytest.raises(asc.KernelRuntimeError, match=text) as info:
        bad_tr[1](case, h, tmp_len)
    assert f":{_line(bad_tr, marker)}:" in str(info.value)
    bad_tr[1](4, 2, 8192)      # the same call with valid sizes runs


# ----------------------------------------------------------------------------- sanitizer
@asc.kernel
def racy_tr(x: asc.GlobalAddress, z: asc.GlobalAddress, SYNC: asc.ConstExpr[bool]):
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, 256)
    zg.set_global_buffer(z, 256)
    a = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, 256)
    c = asc.LocalTensor(asc.float16, asc.TPosition.VECOUT, 1024, 256)
    asc.data_copy(a, xg, 256)  # load
    if SYNC:
        asc.set_flag(asc.HardEvent.MTE2_V, 0)
        asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.transpose(c, a)  # the-transpose
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, c, 256)


def test_sanitizer_sees_transpose():
    x = np.arange(256, dtype=np.float16)
    z = np.zeros(256, np.float16)
    racy_tr[1](x, z, True, sanitize=True)
    np.testing.assert_array_equal(z, x.reshape(16, 16).T.reshape(-1))
    with pytest.raises(asc.DataRaceError) as info:
        racy_tr[1](x, z, False, sanitize=True)
    assert f":{_line(racy_tr, '# the-transpose')}:" in str(info.value).splitlines()[0]


# ----------------------------------------------------------------------------- trans_data_to_5hd
from ascendc_py.compiler.ops.transpose import trans5hd_reference  # noqa: E402

UBN = 32768


@asc.kernel
def t5hd(x: asc.GlobalAddress, z: asc.GlobalAddress, dt: asc.ConstExpr, d0: int, dstep: int,
         s0: int, sstep: int, rep: int, drs: int, srs: int, DH: asc.ConstExpr[bool],
         SH: asc.ConstExpr[bool]):
    """The address-list form over one uint8 view of UB (data in, UB out)."""
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, UBN)
    zg.set_global_buffer(z, UBN)
    ub = asc.LocalTensor(asc.uint8, asc.TPosition.VECIN, 0, UBN)
    asc.data_copy(ub, xg, UBN)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    p = asc.TransDataTo5HDParams(DH, SH, rep, drs, srs)
    asc.trans_data_to_5hd(
        [d0, d0 + dstep, d0 + 2 * dstep, d0 + 3 * dstep, d0 + 4 * dstep, d0 + 5 * dstep,
         d0 + 6 * dstep, d0 + 7 * dstep, d0 + 8 * dstep, d0 + 9 * dstep, d0 + 10 * dstep,
         d0 + 11 * dstep, d0 + 12 * dstep, d0 + 13 * dstep, d0 + 14 * dstep, d0 + 15 * dstep],
        [s0, s0 + sstep, s0 + 2 * sstep, s0 + 3 * sstep, s0 + 4 * sstep, s0 + 5 * sstep,
         s0 + 6 * sstep, s0 + 7 * sstep, s0 + 8 * sstep, s0 + 9 * sstep, s0 + 10 * sstep,
         s0 + 11 * sstep, s0 + 12 * sstep, s0 + 13 * sstep, s0 + 14 * sstep, s0 + 15 * sstep],
        p, dtype=dt)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, ub, UBN)


@pytest.mark.parametrize("dt,es", [(asc.int8, 1), (asc.float16, 2), (asc.float32, 4)],
                         ids=["b8", "b16", "b32"])
@pytest.mark.parametrize("rep,drs,srs,dstep,sstep,dh,sh", [
    (1, 0, 0, 32, 32, False, False),        # one 16-block transpose
    (1, 2, 3, 32, 64, True, False),          # a single repeat is moved by one stride
    (4, 16, 1, 32, 1024, False, True),       # NCHW -> NC1HWC0 shape: planes 1 KiB apart
    (3, 20, 2, 64, 96, True, True),          # scattered blocks
])
def test_trans_data_to_5hd_against_reference(dt, es, rep, drs, srs, dstep, sstep, dh, sh):
    rng = np.random.default_rng(rep * 31 + es)
    ub = rng.integers(0, 256, UBN).astype(np.uint8)
    d0, s0 = 16384, 0
    want = trans5hd_reference(ub, [d0 + k * dstep for k in range(16)],
                              [s0 + k * sstep for k in range(16)], es, rep, drs, srs, dh, sh)
    z = np.zeros(UBN, np.uint8)
    t5hd[1](ub, z, dt, d0, dstep, s0, sstep, rep, drs, srs, dh, sh)
    np.testing.assert_array_equal(z, want)


def test_nchw_to_nc1hwc0_example():
    """Ascend C's documented use: C = 16 planes of H*W half values -> [H*W, 16] (C0 = 16)."""
    hw = 64
    x = np.arange(16 * hw, dtype=np.float16)
    ub = np.zeros(UBN, np.uint8)
    ub[:x.nbytes] = x.view(np.uint8)
    z = np.zeros(UBN, np.uint8)
    # srcList: plane starts (hw elements apart); dstList: consecutive blocks; repeats cover HW
    t5hd[1](ub, z, asc.float16, 16384, 32, 0, hw * 2, hw // 16, 16, 1, False, False)
    out = z[16384:16384 + x.nbytes].view(np.float16).reshape(hw, 16)
    np.testing.assert_array_equal(out, x.reshape(16, hw).T)


@asc.kernel
def t5hd_tables(x: asc.GlobalAddress, z: asc.GlobalAddress):
    """The uint64 address-tensor form, addresses from get_phy_addr (dtype inferred)."""
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, 256)
    zg.set_global_buffer(z, 256)
    a = asc.LocalTensor(asc.int16, asc.TPosition.VECIN, 0, 256)
    c = asc.LocalTensor(asc.int16, asc.TPosition.VECOUT, 1024, 256)
    dt = asc.LocalTensor(asc.uint64, asc.TPosition.VECCALC, 2048, 16)
    st = asc.LocalTensor(asc.uint64, asc.TPosition.VECCALC, 2176, 16)
    asc.data_copy(a, xg, 256)
    for i in range(16):
        dt.set_value(i, c[i * 16].get_phy_addr())
        st.set_value(i, a[i * 16].get_phy_addr())
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.set_flag(asc.HardEvent.S_V, 0)
    asc.wait_flag(asc.HardEvent.S_V, 0)
    asc.trans_data_to_5hd(dt, st, asc.TransDataTo5HDParams(repeat_times=1))
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, c, 256)


def test_address_tensor_form():
    x = np.arange(256, dtype=np.int16)
    z = np.zeros(256, np.int16)
    t5hd_tables[1](x, z)
    np.testing.assert_array_equal(z, x.reshape(16, 16).T.reshape(-1))
    z[:] = 0
    t5hd_tables[1](x, z, sanitize=True)      # the tables and blocks it touches are synchronised
    np.testing.assert_array_equal(z, x.reshape(16, 16).T.reshape(-1))


@asc.kernel
def bad_5hd(CASE: asc.ConstExpr[int], rep: int):
    a = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, 256)
    b = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 1024, 256)
    p = asc.TransDataTo5HDParams(repeat_times=rep)
    if CASE == 0:
        asc.trans_data_to_5hd([a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a],
                              [a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, b], p)  # case-mix
    elif CASE == 1:
        asc.trans_data_to_5hd([0, 32], [64, 96], p, dtype=asc.float16)  # case-count
    elif CASE == 2:
        asc.trans_data_to_5hd([0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384,
                               416, 448, 480], [0, 32, 64, 96, 128, 160, 192, 224, 256, 288,
                                                320, 352, 384, 416, 448, 480], p)  # case-dtype
    elif CASE == 3:
        asc.trans_data_to_5hd([0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384,
                               416, 448, 480], [0, 32, 64, 96, 128, 160, 192, 224, 256, 288,
                                                320, 352, 384, 416, 448, 480], p,
                              dtype=asc.float16)  # case-repeat


@pytest.mark.parametrize("case,marker,text", [
    (0, "case-mix", "the tensors of src_list must have one dtype"),
    (1, "case-count", "must list 16 addresses or tensors, got 2"),
    (2, "case-dtype", "cannot tell the data dtype"),
])
def test_5hd_compile_errors(case, marker, text):
    with pytest.raises(asc.KernelTypeError, match=text):
        bad_5hd[1](case, 1)


def test_5hd_repeat_range_is_checked_at_run_time():
    with pytest.raises(asc.KernelRuntimeError, match="repeat_times 300 is outside 0..255") as e:
        bad_5hd[1](3, 300)
    assert f":{_line(bad_5hd, 'CASE == 3') + 1}:" in str(e.value).splitlines()[0]
    bad_5hd[1](3, 2)
