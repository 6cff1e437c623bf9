"""The 2:4 sparse cube pair (load_data_with_sparse + mmad_with_sparse), load_data with
LoadData2DParamsV2, and the cube registers set_fix_pipe_pre_quant_flag and
set_load_data_padding_value (ops/cube_sparse.py): results against the NumPy references and
plain matrix products, errors at the kernel line, timing and the sanitizer."""
from __future__ import annotations

import re

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler.errors import CubeParamError, KernelCompileError
from ascendc_py.compiler.ops.cube import nz_index
from ascendc_py.compiler.ops.cube_sparse import (densify_2to4, load2d_v2_reference,
                                                 mmad_sparse_reference, pack_index,
                                                 unpack_index)

AIC = asc.KernelType.AIC_ONLY


@asc.kernel(kernel_type=AIC)
def sparse_kernel(a: asc.GlobalAddress, bw: asc.GlobalAddress, bi: asc.GlobalAddress,
                  c: asc.GlobalAddress, M: int, N: int, K: int, NA: int, NB: int, NC: int,
                  FB: int, INIT: bool, SYNC: asc.ConstExpr[bool]):
    """C (ND int32) = fixpipe(mmad_with_sparse(A in ZZ, dense B in ZN + its packed index))."""
    ag = asc.GlobalTensor(); ag.set_global_buffer(a)
    bg = asc.GlobalTensor(); bg.set_global_buffer(bw)
    ig = asc.GlobalTensor(); ig.set_global_buffer(bi)
    cg = asc.GlobalTensor(); cg.set_global_buffer(c)
    pipe = asc.TPipe()
    ta1 = asc.TBuf(asc.TPosition.A1)
    tb1 = asc.TBuf(asc.TPosition.B1)
    ti1 = asc.TBuf(asc.TPosition.B1)
    ta2 = asc.TBuf(asc.TPosition.A2)
    tb2 = asc.TBuf(asc.TPosition.B2)
    tc = asc.TBuf(asc.TPosition.CO1)
    pipe.init_buffer(ta1, NA); pipe.init_buffer(tb1, NB); pipe.init_buffer(ti1, NB // 4)
    pipe.init_buffer(ta2, NA); pipe.init_buffer(tb2, NB); pipe.init_buffer(tc, NC * 4)
    a1 = ta1.get(asc.int8)
    b1 = tb1.get(asc.int8)
    i1 = ti1.get(bi.dtype)
    a2 = ta2.get(asc.int8)
    b2 = tb2.get(asc.int8)
    cl = tc.get(asc.int32)
    for i in range(NC):
        cl.set_value(i, 7)
    asc.data_copy(a1, ag, NA)
    asc.data_copy(b1, bg, NB)
    asc.data_copy(i1, ig, NB // 4)
    asc.set_flag(asc.HardEvent.MTE2_MTE1, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE1, 0)
    asc.load_data(a2, a1, asc.LoadData2DParams(0, NA // 512, 1, 0, 0, False, 0))
    asc.set_flag(asc.HardEvent.MTE1_M, 1)
    asc.wait_flag(asc.HardEvent.MTE1_M, 1)
    asc.load_data_with_sparse(b2, b1, i1, asc.LoadData2DParams(0, FB, 1, 0, 0, False, 0))  # ld
    if SYNC:
        asc.set_flag(asc.HardEvent.MTE1_M, 0)
        asc.wait_flag(asc.HardEvent.MTE1_M, 0)
    asc.mmad_with_sparse(cl, a2, b2, asc.MmadParams(M, N, K, 0, False, INIT))  # mm
    asc.set_flag(asc.HardEvent.M_FIX, 0)
    asc.wait_flag(asc.HardEvent.M_FIX, 0)
    asc.fixpipe(cg, cl, asc.FixpipeParamsV220(N, M, asc.ceildiv(M, 16) * 16, N))


def _sparse_b(rng, k, n, nonzeros=2):
    b = rng.integers(-128, 128, (k, n)).astype(np.int8)
    b[b == 0] = 1
    for g in range(k // 4):
        for j in range(n):
            b[4 * g + rng.choice(4, 4 - nonzeros, replace=False), j] = 0
    return b


def _images(a, dense, idx):
    m, k = a.shape
    kd, n = dense.shape
    m1, k1, n1, kd1 = -(-m // 16), -(-k // 32), -(-n // 16), -(-kd // 32)
    aimg = np.zeros(m1 * k1 * 512, np.int8)
    if m == 1:
        aimg[:k] = a[0]
    else:
        i, p = np.meshgrid(np.arange(m), np.arange(k), indexing="ij")
        aimg[((i // 16) * k1 + p // 32) * 512 + (i % 16) * 32 + p % 32] = a
    bimg = np.zeros(kd1 * n1 * 512, np.int8)
    iimg = np.zeros(kd1 * n1 * 512, np.uint8)
    p, j = np.meshgrid(np.arange(kd), np.arange(n), indexing="ij")
    at = ((p // 32) * n1 + j // 16) * 512 + (j % 16) * 32 + p % 32
    bimg[at] = dense
    iimg[at] = idx
    return aimg, bimg, iimg, m1 * n1 * 256, kd1 * n1


def _run_sparse(a, b, init=True, idx_dtype=np.uint8, sync=True, **launch):
    dense, idx = densify_2to4(b)
    aimg, bimg, iimg, nc, fb = _images(a, dense, idx)
    m, k = a.shape
    n = b.shape[1]
    c = np.zeros((m, n), np.int32)
    rep = sparse_kernel[1](aimg, bimg, pack_index(iimg).view(idx_dtype), c, m, n, k,
                           aimg.size, bimg.size, nc, fb, init, sync, **launch)
    return c, rep, (aimg, bimg, iimg)


@pytest.mark.parametrize("m,n,k", [(20, 24, 64), (1, 16, 32), (33, 17, 100), (16, 40, 128)])
def test_sparse_matmul_equals_dense_product(m, n, k):
    rng = np.random.default_rng(m * 1000 + n + k)
    a = rng.integers(-128, 128, (m, k)).astype(np.int8)
    b = _sparse_b(rng, k, n)
    c, rep, (aimg, bimg, iimg) = _run_sparse(a, b)
    np.testing.assert_array_equal(c, a.astype(np.int64) @ b.astype(np.int64))
    m1 = -(-m // 16)
    ref = mmad_sparse_reference(np.zeros(m1 * -(-n // 16) * 256, np.int32), aimg, bimg, iimg,
                                m, n, k)
    np.testing.assert_array_equal(ref[nz_index(m, n, m1)], c)
    assert rep.instructions["mmad_with_sparse"] == 1
    assert rep.instructions["load_data_with_sparse"] == 1


def test_fewer_nonzeros_int8_index_and_accumulate():
    rng = np.random.default_rng(5)
    a = rng.integers(-10, 10, (18, 64)).astype(np.int8)
    b = _sparse_b(rng, 64, 20, nonzeros=1)
    c, _, _ = _run_sparse(a, b, idx_dtype=np.int8)
    np.testing.assert_array_equal(c, a.astype(np.int64) @ b.astype(np.int64))
    c2, _, _ = _run_sparse(a, b, init=False)       # L0C held 7 everywhere: C = 7 + A @ B
    np.testing.assert_array_equal(c2, 7 + a.astype(np.int64) @ b.astype(np.int64))


def test_more_than_two_nonzeros_keeps_the_first_two():
    b = np.array([[1], [2], [3], [0]] * 8, np.int8)        # every group: 1, 2, 3, 0
    dense, idx = densify_2to4(b)
    assert dense[:2, 0].tolist() == [1, 2] and idx[:2, 0].tolist() == [0, 1]


def test_index_packing_follows_the_docs_example():
    # the docs: indices 1 2 0 1 0 2 1 0 lie as 1 0 2 1 | 0 1 2 0 (each byte read MSB first)
    packed = pack_index(np.array([1, 2, 0, 1, 0, 2, 1, 0]))
    assert [format(int(v), "08b") for v in packed] == ["01001001", "00011000"]
    assert unpack_index(packed).tolist() == [1, 2, 0, 1, 0, 2, 1, 0]


def test_timing_is_an_int8_mmad_over_the_dense_k():
    rng = np.random.default_rng(1)
    a = rng.integers(-5, 5, (64, 256)).astype(np.int8)
    b = _sparse_b(rng, 256, 64)
    _, rep, _ = _run_sparse(a, b)

    @asc.kernel(kernel_type=AIC)
    def dense_mmad(K: int):
        c = asc.LocalTensor(asc.int32, asc.TPosition.CO1, 0, 4096)
        x = asc.LocalTensor(asc.int8, asc.TPosition.A2, 0, 16384)
        y = asc.LocalTensor(asc.int8, asc.TPosition.B2, 0, 16384)
        asc.mmad(c, x, y, asc.MmadParams(64, 64, K))

    half = dense_mmad[1](128)
    full = dense_mmad[1](256)
    assert rep.pipe_busy["M"] == half.pipe_busy["M"] < full.pipe_busy["M"]
    assert rep.bytes_moved["L1->L0B"] == 640 * 16      # 16 fractals + their index


def test_sanitizer_sees_the_sparse_pair():
    from ascendc_py.compiler.errors import DataRaceError
    rng = np.random.default_rng(2)
    a = rng.integers(-5, 5, (16, 64)).astype(np.int8)
    b = _sparse_b(rng, 64, 16)
    _run_sparse(a, b, sanitize=True)
    with pytest.raises(DataRaceError) as e:
        _run_sparse(a, b, sync=False, sanitize=True)
    msg = str(e.value)
    assert "mmad_with_sparse on pipe M reads data written by pipe MTE1" in msg
    assert "L0B" in msg and "# mm" in msg and "other access: asc.load_data_with_sparse" in msg


@asc.kernel(kernel_type=AIC)
def sparse_bad(WHICH: asc.ConstExpr[int], rep: int):
    b1 = asc.LocalTensor(asc.int8, asc.TPosition.B1, 0, 4096)
    i1 = asc.LocalTensor(asc.uint8, asc.TPosition.B1, 4096, 1024)
    b2 = asc.LocalTensor(asc.int8, asc.TPosition.B2, 0, 4096)
    a2 = asc.LocalTensor(asc.int8, asc.TPosition.A2, 0, 4096)
    f2 = asc.LocalTensor(asc.float16, asc.TPosition.B2, 0, 2048)
    c = asc.LocalTensor(asc.int32, asc.TPosition.CO1, 0, 1024)
    if WHICH == 0:
        asc.load_data_with_sparse(b2, b1, i1, asc.LoadData2DParams(0, 1, 0, 0, 0, True, 0))  # tr
    elif WHICH == 1:
        asc.load_data_with_sparse(a2, b1, i1, asc.LoadData2DParams(0, 1))  # pos
    elif WHICH == 2:
        asc.mmad_with_sparse(c, a2, f2, asc.MmadParams(16, 16, 64))  # dt
    elif WHICH == 3:
        asc.load_data_with_sparse(b2, b1, i1, asc.LoadData2DParams(0, rep))  # rrep
    elif WHICH == 4:
        asc.mmad_with_sparse(c, a2, b2, asc.MmadParams(16, 16, rep))  # rk
    elif WHICH == 5:
        asc.load_data_with_sparse(b2, b1, i1, asc.LoadData2DParams(0, 9))  # past


@pytest.mark.parametrize("which,marker,text", [
    (0, "tr", "does not transpose"), (1, "pos", "dst must be at B2"),
    (2, "dt", "int8 × int8 → int32 only")])
def test_sparse_compile_errors_name_the_line(which, marker, text):
    with pytest.raises(KernelCompileError, match=text) as e:
        sparse_bad[1](which, 1)
    assert f"# {marker}" in str(e.value)


@pytest.mark.parametrize("which,rep,marker,text", [
    (3, 256, "rrep", "repeat_times = 256 is out of range"),
    (4, 4096, "rk", "k = 4096 is out of range"),
    (5, 1, "past", "would use elements [0, 4608)")])
def test_sparse_run_time_errors_name_the_line(which, rep, marker, text):
    with pytest.raises(asc.KernelError, match=re.escape(text)) as e:
        sparse_bad[1](which, rep)
    assert f"# {marker}" in str(e.value)


# ----------------------------------------------------------------------------- LoadData2DParamsV2
@asc.kernel(kernel_type=AIC)
def v2_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, n_l1: int, n_l0: int, ms: int,
              ks: int, mstep: int, kstep: int, ss: int, ds: int, tr: bool,
              TO_B: asc.ConstExpr[bool], FROM_GM: asc.ConstExpr[bool]):
    """z = L0A/L0B (zeroed) after load_data(l0, l1 or GM (holding x), LoadData2DParamsV2)."""
    xg = asc.GlobalTensor(); xg.set_global_buffer(x)
    zg = asc.GlobalTensor(); zg.set_global_buffer(z)
    pipe = asc.TPipe()
    b1 = asc.TBuf(asc.TPosition.A1)
    b2 = asc.TBuf(asc.TPosition.B2 if TO_B else asc.TPosition.A2)
    pipe.init_buffer(b1, n_l1 * x.dtype.sizeof())
    pipe.init_buffer(b2, n_l0 * x.dtype.sizeof())
    l1 = b1.get(x.dtype)
    l0 = b2.get(x.dtype)
    for i in range(n_l0):
        l0.set_value(i, 0)
    asc.data_copy(l1, xg, n_l1)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    p = asc.LoadData2DParamsV2(ms, ks, mstep, kstep, ss, ds, tr, 0)
    if FROM_GM:
        asc.load_data(l0, xg, p)
    else:
        asc.load_data(l0, l1, p)  # v2
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    for i in range(n_l0):
        zg.set_value(i, l0.get_value(i))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.int8, np.uint8, np.int32])
@pytest.mark.parametrize("to_b,from_gm", [(False, False), (True, False), (False, True)])
@pytest.mark.parametrize("params", [(0, 0, 2, 3, 4, 3, 0), (1, 2, 3, 2, 5, 4, 0),
                                    (0, 0, 1, 1, 0, 0, 0)])
def test_load2d_v2_matches_reference(dtype, to_b, from_gm, params):
    esize = np.dtype(dtype).itemsize
    n_l1 = 20 * 512 // esize
    rng = np.random.default_rng(3)
    x = (rng.integers(-100, 100, n_l1) if dtype != np.uint8 else
         rng.integers(0, 200, n_l1)).astype(dtype)
    ms, ks, mstep, kstep, ss, ds, tr = params
    n_l0 = ((mstep - 1) * ds + kstep) * 512 // esize + 512 // esize
    z = np.zeros(n_l0, dtype)
    rep = v2_kernel[1](x, z, n_l1, n_l0, ms, ks, mstep, kstep, ss, ds, bool(tr), to_b, from_gm)
    ref = load2d_v2_reference(np.zeros(n_l0, dtype), x, (ms, ks, mstep, kstep, ss, ds, tr, 0))
    np.testing.assert_array_equal(z, ref)
    assert rep.instructions["load_data_2d_v2"] == 1
    path = ("GM" if from_gm else "L1") + "->" + ("L0B" if to_b else "L0A")
    assert rep.bytes_moved[path] == mstep * kstep * 512      # priced as a DMA on its path


def test_load2d_v2_transposes_16_bit_fractals():
    x = np.arange(4 * 256, dtype=np.float16)
    z = np.zeros(4 * 256, np.float16)
    v2_kernel[1](x, z, x.size, z.size, 0, 0, 2, 2, 2, 2, True, True, False)
    ref = load2d_v2_reference(np.zeros_like(z), x, (0, 0, 2, 2, 2, 2, 1, 0))
    np.testing.assert_array_equal(z, ref)
    np.testing.assert_array_equal(z[:256].reshape(16, 16), x[:256].reshape(16, 16).T)


def test_load2d_v2_errors_name_the_line():
    x = np.zeros(512, np.float32)
    z = np.zeros(512, np.float32)
    with pytest.raises(CubeParamError, match="if_transpose") as e:   # 32-bit transpose
        v2_kernel[1](x, z, 512, 512, 0, 0, 1, 1, 0, 0, True, False, False)
    assert "# v2" in str(e.value)
    with pytest.raises(asc.KernelError) as e:                        # past the source
        v2_kernel[1](x, z, 512, 512, 0, 0, 1, 2, 9, 0, False, False, False)
    assert "# v2" in str(e.value)
    with pytest.raises(CubeParamError, match="m_step = 70000 is out of range"):
        v2_kernel[1](x, z, 512, 512, 0, 0, 70000, 1, 0, 0, False, False, False)

    @asc.kernel(kernel_type=AIC)
    def bad():
        asc.LoadData2DParamsV2(0, 0, 1, 1, 0, 65536)  # ds

    with pytest.raises(KernelCompileError, match="dst_stride = 65536 is out of range") as e:
        bad[1]()
    assert "# ds" in str(e.value)


# ----------------------------------------------------------------------------- registers
@asc.kernel(kernel_type=AIC)
def prequant_kernel(a: asc.GlobalAddress, c: asc.GlobalAddress, FLAG: int, DEQ: int,
                    SET: asc.ConstExpr[bool]):
    """16×16 int32 in L0C (written by set_value) → fixpipe DEQF16 to float16."""
    ag = asc.GlobalTensor(); ag.set_global_buffer(a)
    cg = asc.GlobalTensor(); cg.set_global_buffer(c)
    cl = asc.LocalTensor(asc.int32, asc.TPosition.CO1, 0, 256)
    for i in range(256):
        cl.set_value(i, ag.get_value(i))
    if SET:
        asc.set_fix_pipe_pre_quant_flag(FLAG)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.fixpipe(cg, cl, asc.FixpipeParamsV220(16, 16, 16, 16, asc.QuantModes.DEQF16, DEQ))


def _deq_word(scale: float) -> int:
    return int(np.array([scale], np.float32).view(np.uint32)[0]) & 0xFFFFE000


def test_pre_quant_flag_is_the_scale_of_a_fixpipe_without_deq_scalar():
    x = np.arange(-128, 128, dtype=np.int32)
    want = (x.astype(np.float32) * np.float32(0.5)).astype(np.float16).reshape(16, 16)
    out = np.zeros(256, np.float16)
    prequant_kernel[1](x, out, _deq_word(0.5), 0, True)
    np.testing.assert_array_equal(out.reshape(16, 16), want)
    prequant_kernel[1](x, out, _deq_word(4.0), _deq_word(0.5), True)   # params win when given
    np.testing.assert_array_equal(out.reshape(16, 16), want)
    prequant_kernel[1](x, out, 0, 0, False)                            # never set: scale 0
    assert not out.any()


def test_register_calls_are_compile_errors_with_bad_arguments():
    @asc.kernel(kernel_type=AIC)
    def bad():
        asc.set_fix_pipe_pre_quant_flag(-1)  # neg

    with pytest.raises(KernelCompileError, match="uint64") as e:
        bad[1]()
    assert "# neg" in str(e.value)


def test_void_is_pyasc_return_type_only():
    @asc.kernel
    def ok(x: asc.GlobalAddress) -> asc.void:
        g = asc.GlobalTensor(); g.set_global_buffer(x)
        g.set_value(0, 3.0)

    a = np.zeros(8, np.float32)
    ok[1](a)
    assert a[0] == 3.0 and asc.void.is_void() and not asc.float32.is_void()

    @asc.kernel
    def bad():
        asc.LocalTensor(dtype=asc.void, pos=asc.TPosition.VECIN, addr=0, tile_size=16)  # vt

    with pytest.raises(KernelCompileError, match="cannot be asc.void") as e:
        bad[1]()
    assert "# vt" in str(e.value)


def _gm_v2_then_mmad(x: asc.GlobalAddress, y: asc.GlobalAddress):
    """A and B straight from GM into L0A/L0B with LoadData2DParamsV2 (MTE2), then mmad: no
    flags written, the insert_sync pass adds them."""
    xg = asc.GlobalTensor(); xg.set_global_buffer(x)
    yg = asc.GlobalTensor(); yg.set_global_buffer(y)
    a2 = asc.LocalTensor(asc.float16, asc.TPosition.A2, 0, 256)
    b2 = asc.LocalTensor(asc.float16, asc.TPosition.B2, 0, 256)
    c = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, 256)
    asc.load_data(a2, xg, asc.LoadData2DParamsV2(0, 0, 1, 1, 1, 1))
    asc.load_data(b2, xg, asc.LoadData2DParamsV2(0, 0, 1, 1, 1, 1))
    asc.mmad(c, a2, b2, asc.MmadParams(16, 16, 16))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.fixpipe(yg, c, asc.FixpipeParamsV220(16, 16, 16, 16))


gm_v2_auto = asc.kernel(kernel_type=AIC, auto_sync=True)(_gm_v2_then_mmad)


def test_load2d_v2_from_gm_is_an_mte2_access_for_insert_sync():
    """Regression: the pass took a GM-sourced Load2Dv2 for MTE1 (its registry pipe) and
    inserted MTE1->M, leaving the MTE2 write unsynchronised."""
    x = (np.arange(256) % 7).astype(np.float16)
    y = np.zeros(256, np.float32)
    rep = gm_v2_auto[1](x, y, sanitize=True)
    assert any(s.startswith("MTE2->M") for s in rep.inserted_sync), rep.inserted_sync
    xm = x.reshape(16, 16).astype(np.float32)
    np.testing.assert_array_equal(y.reshape(16, 16), xm @ xm.T)
