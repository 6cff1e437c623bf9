"""Mistakes with the cube instructions: each is an error naming the kernel line, at compile
time when the operands or constant fields are wrong, at run time when runtime values are."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import ascendc_py as asc


def _line(kernel, marker: str) -> int:
    lines, first = inspect.getsourcelines(kernel.fn)
    hits = [i for i, t in enumerate(lines) if marker in t]
    assert len(hits) == 1, (marker, hits)
    return first + hits[0]


@asc.kernel
def bad_cube(x: asc.GlobalAddress, y: asc.GlobalAddress, v: int, CASE: asc.ConstExpr[int]):
    xg = asc.GlobalTensor(); xg.set_global_buffer(x)
    yg = asc.GlobalTensor(); yg.set_global_buffer(y)
    a1 = asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, 4096)
    ub = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, 4096)
    a2 = asc.LocalTensor(asc.float16, asc.TPosition.A2, 0, 4096)
    b2 = asc.LocalTensor(asc.float16, asc.TPosition.B2, 0, 4096)
    f2 = asc.LocalTensor(asc.float32, asc.TPosition.B2, 0, 4096)
    i2 = asc.LocalTensor(asc.int8, asc.TPosition.A2, 0, 4096)
    c = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, 4096)
    h = asc.LocalTensor(asc.float16, asc.TPosition.CO1, 0, 4096)
    i1 = asc.LocalTensor(asc.int8, asc.TPosition.A1, 0, 4096)
    end = asc.LocalTensor(asc.float16, asc.TPosition.A2, 65536 - 512)  # no tile_size
    if CASE == 0:
        asc.mmad(a2, a2, b2, asc.MmadParams(16, 16, 16))  # case0
    elif CASE == 1:
        asc.load_data(a2, ub, asc.LoadData2DParams(0, 1, 0, 0, 0, False, 0))  # case1
    elif CASE == 2:
        asc.mmad(c, a2, f2, asc.MmadParams(16, 16, 16))  # case2
    elif CASE == 3:
        _ = asc.MmadParams(5000, 16, 16)  # case3
    elif CASE == 4:
        _ = asc.LoadData2DParams(0, 300, 0, 0, 0, False, 0)  # case4
    elif CASE == 5:
        asc.load_data(i2, i1, asc.LoadData2DParams(0, 1, 0, 0, 0, True, 0))  # case5
    elif CASE == 6:
        asc.fixpipe(yg, c, asc.FixpipeParamsV220(16, 16, 16, 16))  # case6
    elif CASE == 7:
        asc.data_copy(ub, xg, asc.Nd2NzParams(1, 16, 16, 0, 16, 16, 1, 0))  # case7
    elif CASE == 8:
        asc.mmad(h, a2, b2, asc.MmadParams(16, 16, 16))  # case8
    elif CASE == 9:
        asc.fixpipe(yg, c, asc.FixpipeParamsV220(20, 16, 16, 16, asc.QuantModes.F322F16),  # case9
                    asc.FixpipeConfig.cfg_nz)
    elif CASE == 10:
        asc.mmad(c, a2, b2, asc.MmadParams(v, 16, 16))  # case10
    elif CASE == 11:
        asc.mmad(c, end, b2, asc.MmadParams(16, 16, 64))  # case11
    elif CASE == 12:
        asc.load_data(a2[16:], a1, asc.LoadData2DParams(0, 1, 0, 0, 0, False, 0))  # case12
    elif CASE == 13:
        asc.data_copy(a1, xg, asc.Nd2NzParams(1, 16, 16, 0, 16, v, 1, 0))  # case13
    elif CASE == 14:
        asc.load_data(a2, a1, asc.LoadData2DParams(0, v, 1, 0, 0, False, 0))  # case14
    elif CASE == 15:
        asc.data_copy(a1, xg, asc.Nd2NzParams(1, 64, 64, 0, 64, 64, 1, 0))  # case15
    elif CASE == 16:
        asc.fixpipe(yg, c, asc.FixpipeParamsV220(16, 16, 16, 16, asc.QuantModes.F322F16,  # case16
                                                 0, 1, 0, 0, False, 0, True))
    elif CASE == 18:
        _ = asc.FixpipeParamsV220(16, 16, 16, 0)  # case18
    elif CASE == 19:
        asc.fixpipe(yg, c, asc.FixpipeParamsV220(16, 16, 16, v))  # case19
    elif CASE == 20:
        asc.data_copy(a2, xg, 256)  # case20
    elif CASE == 17:
        asc.mmad(c, a2, b2, asc.MmadParams(16, 16, 16, 0, True, False))  # case17


COMPILE_CASES = [
    (0, asc.KernelTypeError, ["asc.mmad dst must be at CO1 (L0C)", "A2"]),
    (1, asc.KernelTypeError, ["asc.load_data src must be at A1/B1 (L1) or GM", "VECIN"]),
    (2, asc.KernelTypeError, ["does not support float16 × float32", "float16×float16→float32",
                              "int8×int8→int32"]),
    (3, asc.KernelValueError, ["MmadParams.m = 5000 is out of range 0..4095"]),
    (4, asc.KernelValueError, ["LoadData2DParams.repeat_times = 300 is out of range 0..255"]),
    (5, asc.KernelTypeError, ["16-bit types only", "int8"]),
    (6, asc.KernelValueError, ["float32 → float16 needs quant_pre=QuantModes.F322F16",
                               "QuantModes.NoQuant"]),
    (7, asc.KernelTypeError, ["must be at A1/B1/C1 (L1)", "VECIN"]),
    (8, asc.KernelTypeError, ["accumulate into float32", "dst is float16"]),
    (9, asc.KernelValueError, ["n_size = 20 must be a multiple of 16 for NZ output"]),
    (16, asc.KernelValueError, ["is_channel_split is not modelled"]),
    (17, asc.KernelValueError, ["cmatrix_source=True", "bias overload"]),
    (18, asc.KernelValueError, ["FixpipeParamsV220.dst_stride = 0 is out of range 1.."]),
    (20, asc.KernelTypeError, ["asc.data_copy dst is at A2 (L0A)", "asc.load_data"]),
]


@pytest.mark.parametrize("case,cls,words", COMPILE_CASES)
def test_compile_errors(case, cls, words):
    x = np.zeros(8192, np.float16)
    y = np.zeros(8192, np.float16)
    with pytest.raises(cls) as info:
        bad_cube[1](x, y, 1, case)
    err = info.value
    assert err.loc is not None and err.loc.line == _line(bad_cube, f"# case{case}\n"), str(err)
    for w in words:
        assert w in str(err), str(err)


RUNTIME_CASES = [
    (10, 5000, asc.CubeParamError, ["MmadParams.m = 5000 is out of range 0..4095"]),
    (11, 0, asc.LocalOutOfRangeError, ["mmad fm covers bytes [65024, 67072) of L0A",
                                       "65536 bytes"]),
    (12, 0, asc.MisalignedAddressError, ["load_data dst starts at L0A byte address 32",
                                         "not 512-byte aligned"]),
    (13, 0, asc.CubeParamError, ["Nd2NzParams.dst_nz_c0_stride = 0 is out of range 1..16384"]),
    (14, 256, asc.CubeParamError, ["LoadData2DParams.repeat_times = 256 is out of range 0..255"]),
    (15, 0, asc.GMOutOfBoundsError, ["data_copy src touches elements", "'x'"]),
    (19, 0, asc.CubeParamError, ["FixpipeParamsV220.dst_stride = 0 is out of range 1.."]),
]


@pytest.mark.parametrize("case,v,cls,words", RUNTIME_CASES)
def test_runtime_errors(case, v, cls, words):
    x = np.zeros(256, np.float16)
    y = np.zeros(8192, np.float32)
    with pytest.raises(cls) as info:
        bad_cube[1](x, y, v, case)
    err = info.value
    assert err.loc is not None and err.loc.line == _line(bad_cube, f"# case{case}\n"), str(err)
    for w in words:
        assert w in str(err), str(err)


@asc.kernel
def too_big_l0a(x: asc.GlobalAddress, n: int):
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.A2, 2)
    pipe.init_buffer(q, 2, n)  # capacity


def test_l0a_capacity():
    too_big_l0a[1](np.zeros(4, np.float16), 32768)          # two 32 KB buffers fit in 64 KB
    with pytest.raises(asc.BufferCapacityError) as info:
        too_big_l0a[1](np.zeros(4, np.float16), 32769)      # rounded up to 33280 B each
    assert info.value.loc.line == _line(too_big_l0a, "# capacity")
    assert "init_buffer asks for 66560 bytes of L0A but only 65536" in str(info.value)
