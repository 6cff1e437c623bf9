"""load_data with LoadData3DParamsV2 (img2col, ops/load3d.py): bit-exact against the NumPy
reference and an independent img2col, at L0A and L0B, every dtype it moves; the checks (compile
time and run time, at the line); MTE1 timing; sanitize mode."""
from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import ascendc_py as asc
from ascendc_py.compiler.errors import CubeParamError, KernelCompileError
from ascendc_py.compiler.ops.load3d import img2col_matrix, load3d_reference, output_size


@asc.kernel
def load3d_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, n_l1: int, n_l0: int,
                  pl: int, pr: int, pt: int, pb: int, l1h: int, l1w: int, ch: int, kext: int,
                  mext: int, kst: int, mst: int, sw: int, sh: int, fw: int, fh: int, dw: int,
                  dh: int, pad: float, TO_B: asc.ConstExpr[bool]):
    """z = L0A/L0B (zeroed) after load_data(l0, l1 (holding x), LoadData3DParamsV2(...))."""
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
    asc.load_data(l0, l1, asc.LoadData3DParamsV2([pl, pr, pt, pb], l1h, l1w, ch, kext, mext,
                                                 kst, mst, sw, sh, fw, fh, dw, dh, False, pad,
                                                 False, False, False))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    for i in range(n_l0):
        zg.set_value(i, l0.get_value(i))


def _params(c1, c0, h, w, pads, filt, stride, dil, k_start=0, k_ext=None, m_start=0,
            m_ext=None, pad_value=0.0):
    ho = output_size(h, pads[2], pads[3], filt[0], dil[0], stride[0])
    wo = output_size(w, pads[0], pads[1], filt[1], dil[1], stride[1])
    k_ext = filt[0] * filt[1] * c1 * c0 - k_start if k_ext is None else k_ext
    m_ext = ho * wo - m_start if m_ext is None else m_ext
    return (*pads, h, w, c1 * c0, k_ext, m_ext, k_start, m_start, stride[1], stride[0],
            filt[1], filt[0], dil[1], dil[0], 0, 0, 0, 0, pad_value), ho, wo


def _run(x, params, to_b=False, **launch):
    (pl, pr, pt, pb, h, w, ch, kext, mext, kst, mst, sw, sh, fw, fh, dw, dh, *_rest,
     pad) = params
    n_l0 = -(-mext // 16) * 16 * kext
    z = torch.zeros(n_l0, dtype=x.dtype) if isinstance(x, torch.Tensor) else \
        np.zeros(n_l0, x.dtype)
    rep = load3d_kernel[1](x, z, x.shape[0], n_l0, pl, pr, pt, pb, h, w, ch, kext, mext, kst,
                           mst, sw, sh, fw, fh, dw, dh, float(pad), to_b, **launch)
    return z, rep


CASES = [  # (c1, h, w, pads (l, r, t, b), filter (h, w), stride (h, w), dilation (h, w))
    (1, 5, 7, (0, 0, 0, 0), (3, 3), (1, 1), (1, 1)),
    (2, 6, 5, (1, 1, 1, 1), (3, 3), (2, 2), (1, 1)),
    (1, 9, 8, (3, 2, 1, 3), (5, 3), (1, 2), (2, 1)),
    (3, 4, 4, (0, 0, 0, 0), (1, 1), (1, 1), (1, 1)),
    (1, 11, 9, (3, 3, 3, 3), (7, 7), (2, 1), (1, 2)),
]


@pytest.mark.parametrize("case", CASES)
def test_l0a_float16_matches_reference_and_img2col(case):
    c1, h, w, pads, filt, stride, dil = case
    c0 = 16
    rng = np.random.default_rng(sum(map(hash, map(str, case))) % 2 ** 32)
    x = rng.standard_normal(c1 * h * w * c0).astype(np.float16)
    params, ho, wo = _params(c1, c0, h, w, pads, filt, stride, dil, pad_value=-2.5)
    z, _ = _run(x, params)
    ref = load3d_reference(np.zeros_like(z), x, params)
    np.testing.assert_array_equal(z.view(np.uint16), ref.view(np.uint16))
    # independently: the ZZ fractals hold the img2col matrix
    mat = img2col_matrix(x, c1, h, w, pads, filt, stride, dil, np.float16(-2.5))
    k = mat.shape[1]
    rows = -(-ho * wo // 16) * 16
    frac = z.reshape(rows // 16, k // c0, 16, c0).transpose(0, 2, 1, 3).reshape(rows, k)
    np.testing.assert_array_equal(frac[:ho * wo], mat)


@pytest.mark.parametrize("to_b", [False, True])
def test_partial_m_and_k_windows_l0a_l0b(to_b):
    c1, h, w, pads, filt, stride, dil = 2, 7, 6, (1, 2, 2, 1), (3, 2), (1, 1), (1, 2)
    rng = np.random.default_rng(7)
    x = rng.standard_normal(c1 * h * w * 16).astype(np.float16)
    params, ho, wo = _params(c1, 16, h, w, pads, filt, stride, dil, k_start=32, k_ext=48,
                             m_start=5, m_ext=19, pad_value=1.0)
    z, _ = _run(x, params, to_b)
    ref = load3d_reference(np.zeros_like(z), x, params, to_l0b=to_b)
    np.testing.assert_array_equal(z.view(np.uint16), ref.view(np.uint16))
    mat = img2col_matrix(x, c1, h, w, pads, filt, stride, dil, np.float16(1.0))
    rows, groups = 32, 3
    if to_b:   # ZN: fractal (g, i//16), element (i%16, c0)
        got = z.reshape(groups, rows // 16, 16, 16).transpose(1, 2, 0, 3).reshape(rows, 48)
    else:
        got = z.reshape(rows // 16, groups, 16, 16).transpose(0, 2, 1, 3).reshape(rows, 48)
    np.testing.assert_array_equal(got[:19], mat[5:24, 32:80])


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int8", "int32"])
def test_other_dtypes(dtype):
    c1, h, w, pads, filt, stride, dil = 2, 5, 6, (1, 0, 2, 1), (3, 2), (2, 1), (1, 1)
    esize = {"float32": 4, "bfloat16": 2, "int8": 1, "int32": 4}[dtype]
    c0 = 32 // esize
    n = c1 * h * w * c0
    rng = np.random.default_rng(3)
    if dtype == "bfloat16":
        x = torch.randn(n).to(torch.bfloat16)
        xn = x.view(torch.int16).numpy().view(np.uint16)
    elif dtype == "int8":
        x = xn = rng.integers(-100, 100, n).astype(np.int8)
    else:
        x = xn = (rng.standard_normal(n) * 100).astype(dtype)
    pad = 3.0
    params, ho, wo = _params(c1, c0, h, w, pads, filt, stride, dil, pad_value=pad)
    z, _ = _run(x, params)
    zn = z.view(torch.int16).numpy().view(np.uint16) if dtype == "bfloat16" else z
    pad_bits = np.uint16(0x4040) if dtype == "bfloat16" else np.array(pad).astype(xn.dtype)
    ref = load3d_reference(np.zeros_like(zn), xn, params[:-1] + (pad_bits,))
    np.testing.assert_array_equal(zn, ref)


def test_float16_run_time_field_errors_name_the_line():
    x = np.zeros(2 * 4 * 4 * 16, np.float16)
    good, _, _ = _params(2, 16, 4, 4, (1, 1, 1, 1), (3, 3), (1, 1), (1, 1))
    cases = [(6, 24, "channel_size = 24 must be a multiple of C0"),
             (7, 40, "k_extension = 40 must be a multiple of C0"),
             (9, 8, "k_start_pt = 8 must be a multiple of C0"),
             (7, 304, "k_start_pt + k_extension = 304 must be at most K"),
             (8, 40, "m_start_pt + m_extension = 40 must be at most"),
             (11, 0, "stride_w = 0 is out of range 1..63"),
             (14, 300, "filter_h = 300 is out of range 1..255"),
             (0, 256, "pad_left = 256 is out of range 0..255"),
             (13, 9, "output size")]
    for idx, value, text in cases:
        p = list(good)
        p[idx] = value
        with pytest.raises(CubeParamError, match=re.escape(text)) as e:
            _run(x, tuple(p))
        assert "test_load3d.py" in str(e.value) and "asc.load_data(l0, l1" in str(e.value)


@asc.kernel
def const_bad(x: asc.GlobalAddress, WHICH: asc.ConstExpr[int]):
    l1 = asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, 4096)
    a2 = asc.LocalTensor(asc.float16, asc.TPosition.A2, 0, 4096)
    f32 = asc.LocalTensor(asc.float32, asc.TPosition.A1, 0, 1024)
    if WHICH == 0:
        asc.load_data(a2, l1, asc.LoadData3DParamsV2([0, 0, 0, 0], 4, 4, 20, 16, 16))  # ch20
    elif WHICH == 1:
        asc.load_data(a2, l1, asc.LoadData3DParamsV1([0, 0, 0, 0], 4, 4))  # v1
    elif WHICH == 2:
        asc.load_data(a2, l1, asc.LoadData3DParamsV2Pro(16, False, True))  # v2pro
    elif WHICH == 3:
        asc.load_data(a2, l1, asc.LoadData3DParamsV2(  # transpose
            [0, 0, 0, 0], 4, 4, 16, 16, 16, 0, 0, 1, 1, 3, 3, 1, 1, True))
    elif WHICH == 4:
        asc.load_data(a2, f32, asc.LoadData3DParamsV2([0, 0, 0, 0], 4, 4, 16, 16, 16))  # dt
    elif WHICH == 5:
        asc.load_data(a2, l1, asc.LoadData3DParamsV2([0, 0, 0, 0], 4, 4, 16, 160, 16, 0, 0,  # kspan
                                                     1, 1, 3, 3))
    elif WHICH == 6:
        asc.load_data(a2, l1, asc.LoadData3DParamsV2([0, 0, 0], 4, 4, 16, 16, 16))  # pads3
    elif WHICH == 7:
        asc.load_data(a2, l1, asc.LoadData3DParamsV2([0, 0, 0, 0], 2, 2, 16, 16, 16, 0, 0,  # nowin
                                                     1, 1, 3, 3))
    elif WHICH == 8:
        asc.load_data(a2, l1, asc.LoadData3DParamsV2(  # stride64
            [0, 0, 0, 0], 4, 4, 16, 16, 16, 0, 0, 64, 1, 3, 3))


@pytest.mark.parametrize("which,marker,text", [
    (0, "ch20", "channel_size = 20 must be a multiple of C0 = 16"),
    (1, "v1", "does not exist on Ascend 910B"),
    (2, "v2pro", "LoadData3DParamsV2Pro.en_small_k \\(small-K mode\\) is not modelled"),
    (3, "transpose", "en_transpose is not modelled"),
    (4, "dt", "dst is float16 but src is float32"),
    (5, "kspan", "k_start_pt \\+ k_extension = 160 is more than K"),
    (6, "pads3", "pad_list must be a list or tuple of 4"),
    (7, "nowin", "does not fit"),
    (8, "stride64", "stride_w = 64 is out of range 1..63"),
])
def test_compile_time_errors_name_the_line(which, marker, text):
    with pytest.raises(KernelCompileError, match=text) as e:
        const_bad[1](np.zeros(16, np.float16), which)
    assert f"# {marker}" in str(e.value)
    assert "sema" not in str(e.value).split("\n")[0]


def test_timing_mte1_at_path_width_plus_latency():
    c1, h, w = 4, 16, 16
    x = np.zeros(c1 * h * w * 16, np.float16)
    params, ho, wo = _params(c1, 16, h, w, (1, 1, 1, 1), (3, 3), (1, 1), (1, 1),
                             k_ext=64, m_ext=128)
    _, rep = _run(x, params)
    nbytes = 128 * 64 * 2
    assert rep.instructions["load_data_3d"] == 1
    assert rep.bytes_moved["L1->L0A"] == nbytes
    assert rep.pipe_busy["MTE1"] == pytest.approx(nbytes / 256, abs=1)   # 256 B/cycle
    _, rep_b = _run(x, params, to_b=True)
    assert rep_b.pipe_busy["MTE1"] == pytest.approx(nbytes / 128, abs=1)  # L1->L0B 128 B/cycle


@asc.kernel
def race_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, SYNC: asc.ConstExpr[bool]):
    """GM → L1 (MTE2), then img2col (MTE1) without or with the MTE2_MTE1 flag."""
    xg = asc.GlobalTensor(); xg.set_global_buffer(x)
    l1 = asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, 1024)
    a2 = asc.LocalTensor(asc.float16, asc.TPosition.A2, 0, 1024)
    asc.data_copy(l1, xg, 256)                                    # copy-in
    if SYNC:
        asc.set_flag(asc.HardEvent.MTE2_MTE1, 0)
        asc.wait_flag(asc.HardEvent.MTE2_MTE1, 0)
    asc.load_data(a2, l1, asc.LoadData3DParamsV2([0, 0, 0, 0], 4, 4, 16, 16, 16))  # img2col
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)


def test_sanitizer_sees_the_load():
    from ascendc_py.compiler.errors import DataRaceError
    x = np.ones(256, np.float16)
    race_kernel[1](x, x, True, sanitize=True)
    with pytest.raises(DataRaceError) as e:
        race_kernel[1](x, x, False, sanitize=True)
    assert "img2col" in str(e.value) and "copy-in" in str(e.value)


from hypothesis import given, settings, strategies as st  # noqa: E402


@st.composite
def _geometry(draw):
    c1 = draw(st.integers(1, 3))
    fh, fw = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    dh, dw = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    sh, sw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    pads = tuple(draw(st.integers(0, 3)) for _ in range(4))
    h = draw(st.integers(max(1, dh * (fh - 1) + 1 - pads[2] - pads[3]), 9))
    w = draw(st.integers(max(1, dw * (fw - 1) + 1 - pads[0] - pads[1]), 9))
    ho = output_size(h, pads[2], pads[3], fh, dh, sh)
    wo = output_size(w, pads[0], pads[1], fw, dw, sw)
    k = fh * fw * c1
    g0 = draw(st.integers(0, k - 1))
    g1 = draw(st.integers(1, min(k - g0, 8)))
    m0 = draw(st.integers(0, ho * wo - 1))
    m1 = draw(st.integers(1, min(ho * wo - m0, 40)))
    return c1, h, w, pads, (fh, fw), (sh, sw), (dh, dw), g0 * 16, g1 * 16, m0, m1


@settings(max_examples=12, deadline=None)
@given(geo=_geometry(), to_b=st.booleans())
def test_random_geometries_bit_exact(geo, to_b):
    c1, h, w, pads, filt, stride, dil, k0, k_ext, m0, m_ext = geo
    x = np.random.default_rng(c1 * 1000 + h * 10 + w).standard_normal(
        c1 * h * w * 16).astype(np.float16)
    params, _, _ = _params(c1, 16, h, w, pads, filt, stride, dil, k_start=k0, k_ext=k_ext,
                           m_start=m0, m_ext=m_ext, pad_value=0.5)
    z, _ = _run(x, params, to_b)
    ref = load3d_reference(np.zeros_like(z), x, params, to_l0b=to_b)
    np.testing.assert_array_equal(z.view(np.uint16), ref.view(np.uint16))
