"""load_data with LoadData3DParamsV2Pro and the Load3D registers (ops/load3d.py): the window
packed in ext_config / filter_config, the feature map (fmatrix) from the last V2 load, the pad
value from the padding register (set_load_data_padding_value, or the last V2 load's
pad_value); bit-exact against the NumPy reference and an independent img2col; errors at the
line."""
from __future__ import annotations

import re

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler.errors import CubeParamError, KernelCompileError
from ascendc_py.compiler.ops.load3d import (img2col_matrix, load3d_reference, output_size,
                                            v2pro_fields, v2pro_words)
from ascendc_py.dsl.types import bfloat16

AIC = asc.KernelType.AIC_ONLY


@asc.kernel(kernel_type=AIC)
def pro_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, n_l1: int, n_l0: int, pl: int,
               pr: int, pt: int, pb: int, l1h: int, l1w: int, ch: int, v2_pad: float,
               ext: asc.uint64, flt: asc.uint64, reg: float, SET: asc.ConstExpr[bool],
               FMATRIX: asc.ConstExpr[bool], TO_B: asc.ConstExpr[bool]):
    """z = L0A/L0B (zeroed) after a V2 load (sets the fmatrix and padding registers, into a
    scratch tensor), [set_load_data_padding_value(reg),] a V2Pro load."""
    xg = asc.GlobalTensor(); xg.set_global_buffer(x)
    zg = asc.GlobalTensor(); zg.set_global_buffer(z)
    pipe = asc.TPipe()
    b1 = asc.TBuf(asc.TPosition.A1)
    b2 = asc.TBuf(asc.TPosition.B2 if TO_B else asc.TPosition.A2)
    sc = asc.TBuf(asc.TPosition.A2)
    pipe.init_buffer(b1, n_l1 * x.dtype.sizeof())
    pipe.init_buffer(b2, n_l0 * x.dtype.sizeof())
    pipe.init_buffer(sc, 512 * 16)
    l1 = b1.get(x.dtype)
    l0 = b2.get(x.dtype)
    scratch = sc.get(x.dtype)
    for i in range(n_l0):
        l0.set_value(i, 0)
    asc.data_copy(l1, xg, n_l1)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if FMATRIX:
        asc.load_data(scratch, l1, asc.LoadData3DParamsV2([pl, pr, pt, pb], l1h, l1w, ch,
                                                          32 // x.dtype.sizeof(), 16, 0, 0, 1,
                                                          1, 1, 1, 1, 1, False, v2_pad))
    if SET:
        asc.set_load_data_padding_value(reg)
    asc.load_data(l0, l1, asc.LoadData3DParamsV2Pro(  # pro
        ch, False, False, False, False, False, ext, flt))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    for i in range(n_l0):
        zg.set_value(i, l0.get_value(i))


GEOMETRIES = [  # (c1, h, w, pads (l, r, t, b), filter (h, w), stride (h, w), dilation (h, w))
    (1, 5, 7, (0, 0, 0, 0), (3, 3), (1, 1), (1, 1)),
    (2, 6, 5, (1, 1, 1, 1), (3, 3), (2, 2), (1, 1)),
    (1, 9, 8, (3, 2, 1, 3), (5, 3), (1, 2), (2, 1)),
    (1, 11, 9, (3, 3, 3, 3), (7, 7), (2, 1), (1, 2)),
]


def _run(dtype, geo, to_b=False, set_reg=True, reg=2.5, v2_pad=-1.0, m_start=0, k_start=0,
         k_groups=None, fmatrix=True):
    c1, h, w, pads, filt, stride, dil = geo
    esize = np.dtype(dtype).itemsize if dtype is not bfloat16 else 2
    c0 = 32 // esize
    ho = output_size(h, pads[2], pads[3], filt[0], dil[0], stride[0])
    wo = output_size(w, pads[0], pads[1], filt[1], dil[1], stride[1])
    k_ext = (filt[0] * filt[1] * c1 if k_groups is None else k_groups) * c0
    m_ext = ho * wo - m_start
    ext, flt = v2pro_words(k_extension=k_ext, m_extension=m_ext, k_start_pt=k_start * c0,
                           m_start_pt=m_start, stride_w=stride[1], stride_h=stride[0],
                           filter_w=filt[1], filter_h=filt[0], dilation_filter_w=dil[1],
                           dilation_filter_h=dil[0])
    n_l1 = c1 * h * w * c0
    rng = np.random.default_rng(c1 * 100 + h * 10 + w)
    np_dtype = np.uint16 if dtype is bfloat16 else dtype
    x = rng.integers(1, 100, n_l1).astype(np_dtype)
    n_l0 = -(-m_ext // 16) * 16 * k_ext
    z = np.zeros(n_l0, np_dtype)
    if dtype is bfloat16:
        import torch
        xt = torch.from_numpy(x.astype(np.float32)).to(torch.bfloat16)
        zt = torch.zeros(n_l0, dtype=torch.bfloat16)
        pro_kernel[1](xt, zt, n_l1, n_l0, *pads, h, w, c1 * c0, v2_pad, ext, flt, reg, set_reg,
                      fmatrix, to_b)
        x = xt.view(torch.int16).numpy().view(np.uint16)
        z = zt.view(torch.int16).numpy().view(np.uint16)
        pad_bits = torch.tensor([reg if set_reg else v2_pad], dtype=torch.bfloat16)
        pad = pad_bits.view(torch.int16).numpy().view(np.uint16)[0]
    else:
        pro_kernel[1](x, z, n_l1, n_l0, *pads, h, w, c1 * c0, v2_pad, ext, flt, reg, set_reg,
                      fmatrix, to_b)
        pad = np.array(reg if set_reg else v2_pad).astype(np_dtype)
    params = (*pads, h, w, c1 * c0, k_ext, m_ext, k_start * c0, m_start, stride[1], stride[0],
              filt[1], filt[0], dil[1], dil[0], 0, 0, 0, 0, pad)
    return x, z, load3d_reference(np.zeros_like(z), x, params, to_l0b=to_b), (ho, wo, pad)


@pytest.mark.parametrize("geo", GEOMETRIES)
def test_v2pro_float16_matches_reference_and_img2col(geo):
    x, z, ref, (ho, wo, pad) = _run(np.float16, geo)
    np.testing.assert_array_equal(z, ref)
    c1, h, w, pads, filt, stride, dil = geo
    mat = img2col_matrix(x, c1, h, w, pads, filt, stride, dil, pad)
    k = mat.shape[1]
    rows = -(-ho * wo // 16) * 16
    zz = z.reshape(rows // 16, k // 16, 16, 16).transpose(0, 2, 1, 3).reshape(rows, k)
    np.testing.assert_array_equal(zz[:ho * wo], mat)


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.int32, bfloat16])
def test_v2pro_other_dtypes(dtype):
    _, z, ref, _ = _run(dtype, GEOMETRIES[1])
    np.testing.assert_array_equal(z, ref)


def test_v2pro_to_l0b_and_partial_windows():
    _, z, ref, _ = _run(np.float16, GEOMETRIES[2], to_b=True, m_start=16, k_start=2, k_groups=5)
    np.testing.assert_array_equal(z, ref)


def test_pad_value_comes_from_the_register_or_the_last_v2_load():
    _, z, ref, (_, _, pad) = _run(np.float16, GEOMETRIES[1], set_reg=True, reg=7.0)
    np.testing.assert_array_equal(z, ref)
    assert pad == 7.0 and (z == np.float16(7.0)).any()
    _, z, ref, (_, _, pad) = _run(np.float16, GEOMETRIES[1], set_reg=False, v2_pad=-3.0)
    np.testing.assert_array_equal(z, ref)      # the V2 load's pad_value reset the register
    assert pad == -3.0 and (z == np.float16(-3.0)).any()


def test_packing_round_trips_and_the_default_filter_config_is_all_ones():
    ext, flt = v2pro_words(k_extension=48, m_extension=32, k_start_pt=16, m_start_pt=5,
                           stride_w=2, stride_h=3, filter_w=4, filter_h=5,
                           dilation_filter_w=6, dilation_filter_h=7)
    f = v2pro_fields(ext, flt)
    assert (f["k_extension"], f["m_extension"], f["k_start_pt"], f["m_start_pt"]) == \
        (48, 32, 16, 5)
    assert [f[n] for n in ("stride_w", "stride_h", "filter_w", "filter_h", "dilation_filter_w",
                           "dilation_filter_h")] == [2, 3, 4, 5, 6, 7]
    assert set(v2pro_fields(0, 0x10101010101).values()) == {0, 1}
    assert all(v == 1 for n, v in v2pro_fields(0, 0x10101010101).items() if "_" in n and
               n.split("_")[0] in ("stride", "filter", "dilation"))


def test_without_a_v2_load_the_fmatrix_is_empty_an_error_at_the_line():
    with pytest.raises(CubeParamError, match=re.escape("l1_h = 0 is out of range 1..32767")) \
            as e:
        _run(np.float16, GEOMETRIES[0], fmatrix=False)
    assert "# pro" in str(e.value) and "LoadData3DParamsV2Pro" in str(e.value)


def test_packed_field_out_of_range_at_run_time_names_the_line():
    geo = GEOMETRIES[0]
    with pytest.raises(CubeParamError, match=re.escape("stride_w = 0 is out of range 1..63")) \
            as e:
        c1, h, w, pads, *_ = geo
        x = np.zeros(c1 * h * w * 16, np.float16)
        ext, _ = v2pro_words(k_extension=16, m_extension=16)
        pro_kernel[1](x, np.zeros(4096, np.float16), x.size, 4096, *pads, h, w, 16, 0.0, ext,
                      0, 0.0, False, True, False)
    assert "# pro" in str(e.value)


@asc.kernel(kernel_type=AIC)
def pro_bad(WHICH: asc.ConstExpr[int]):
    l1 = asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, 4096)
    a2 = asc.LocalTensor(asc.float16, asc.TPosition.A2, 0, 4096)
    if WHICH == 0:
        asc.load_data(a2, l1, asc.LoadData3DParamsV2Pro(  # kext
            16, False, False, False, False, False, 0x10))
    elif WHICH == 1:
        asc.LoadData3DParamsV2Pro(16, False, False, False, False, True)  # fmc
    elif WHICH == 2:
        asc.load_data(a2, l1, asc.LoadData3DParamsV2Pro(  # ch
            20, False, False, False, False, False, 0x100010))
    elif WHICH == 3:
        asc.load_data(a2, l1, asc.LoadData3DParamsV2Pro(  # dil
            16, False, False, False, False, False, 0x100010, 0x1010101))
    elif WHICH == 4:
        asc.set_load_data_padding_value("a")  # str


@pytest.mark.parametrize("which,marker,text", [
    (0, "kext", "ext_config packs m_extension = 0, out of range 1..65535"),
    (1, "fmc", "f_matrix_ctrl \\(the right matrix's fmatrix\\) is not modelled"),
    (2, "ch", "channel_size = 20 must be a multiple of C0 = 16"),
    (3, "dil", "filter_config packs dilation_filter_w = 0, out of range 1..255"),
    (4, "str", "cannot convert string to float64"),
])
def test_compile_time_errors_name_the_line(which, marker, text):
    with pytest.raises(KernelCompileError, match=text) as e:
        pro_bad[1](which)
    assert f"# {marker}" in str(e.value)
