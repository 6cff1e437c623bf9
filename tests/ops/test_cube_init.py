"""init_const_value (Ascend C InitConstValue): fills L1 (A1/B1, 32-byte blocks) and L0A/L0B
(A2/B2, 512-byte fractals) against the NumPy reference over every allowed dtype, repeat /
block_num / dst_gap combinations, runtime and constant values; its pipes (MTE2 for L1, MTE1 for
L0) in the timing model and in sanitize mode; and the user's mistakes, with message and line."""
from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch

import ascendc_py as asc
from ascendc_py.compiler.ops.cube_init import init_const_value_reference

RNG = np.random.default_rng(11)


def _line(kernel, marker: str) -> int:
    lines, first = inspect.getsourcelines(kernel.fn)
    hits = [i for i, t in enumerate(lines) if marker in t]
    assert len(hits) == 1, (marker, hits)
    return first + hits[0]


@asc.kernel
def fill_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int, rep: int, bn: int, gap: int,
                v: float, POS: asc.ConstExpr[int], CONST: asc.ConstExpr[bool]):
    """dst (holding x) at A1 / B1 / A2 / B2 (POS 0..3) after init_const_value; z = dst."""
    xg = asc.GlobalTensor(); xg.set_global_buffer(x)
    zg = asc.GlobalTensor(); zg.set_global_buffer(z)
    pipe = asc.TPipe()
    if POS == 0:
        buf = asc.TBuf(asc.TPosition.A1)
    elif POS == 1:
        buf = asc.TBuf(asc.TPosition.B1)
    elif POS == 2:
        buf = asc.TBuf(asc.TPosition.A2)
    else:
        buf = asc.TBuf(asc.TPosition.B2)
    pipe.init_buffer(buf, n * x.dtype.sizeof())
    t = buf.get(x.dtype)
    if POS < 2:
        asc.data_copy(t, xg, n)
    else:
        asc.load_data(t, xg, asc.LoadData2DParams(0, n * x.dtype.sizeof() // 512, 1, 0, 0,
                                                  False, 0))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if CONST:
        asc.init_const_value(t, asc.InitConstValueParams(2, 3, 1, 7))
    else:
        asc.init_const_value(t, asc.InitConstValueParams(repeat_times=rep, block_num=bn,
                                                         dst_gap=gap, init_value=v))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if POS < 2:
        asc.data_copy(zg, t, n)
    else:
        for i in range(n):
            zg.set_value(i, t.get_value(i))


DTYPES = ["float16", "bfloat16", "float32", "int16", "uint16", "int32", "uint32"]


def _arrays(dtype: str, n: int):
    """(kernel input, kernel output, numpy view for the reference and comparison)."""
    if dtype == "bfloat16":
        x = torch.randn(n).to(torch.bfloat16)
        z = torch.zeros(n, dtype=torch.bfloat16)
        return x, z, lambda t: t.view(torch.int16).numpy().view(np.uint16)
    npd = np.dtype(dtype)
    if npd.kind == "f":
        x = RNG.standard_normal(n).astype(npd)
    else:
        info = np.iinfo(npd)
        x = RNG.integers(max(info.min, -1000), min(info.max, 1000), n).astype(npd)
    return x, np.zeros(n, npd), lambda a: a


def _value_as(dtype: str, v: float):
    if dtype == "bfloat16":
        return torch.tensor([v], dtype=torch.float32).to(torch.bfloat16).view(torch.int16) \
            .numpy().view(np.uint16)[0]
    npd = np.dtype(dtype)
    return npd.type(v) if npd.kind == "f" else npd.type(int(v))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("pos", [0, 1, 2, 3])
def test_fill_matches_reference(dtype, pos):
    n = 4096 // np.dtype("int16" if dtype == "bfloat16" else dtype).itemsize  # 4 KB: 8 fractals
    block = 32 if pos < 2 else 512
    x, z, view = _arrays(dtype, n)
    for rep, bn, gap, v in [(3, 2, 1, 2.5), (1, 4096 // block, 0, -3.0), (2, 1, 3, 9.0),
                            (0, 5, 0, 1.0), (4, 0, 1, 1.0)]:
        if dtype.startswith("uint"):
            v = abs(v)
        z[:] = 0
        fill_kernel[1](x, z, n, rep, bn, gap, v, pos, False)
        ref = init_const_value_reference(view(x), rep, bn, gap, _value_as(dtype, v), block)
        np.testing.assert_array_equal(view(z), ref, err_msg=f"{rep, bn, gap, v}")


@pytest.mark.parametrize("pos", [0, 2])
def test_constant_params_and_int_value_for_float_tensor(pos):
    n = 2048
    x = RNG.standard_normal(n).astype(np.float32)
    z = np.zeros(n, np.float32)
    fill_kernel[1](x, z, n, 0, 0, 0, 0.0, pos, True)
    block = 32 if pos < 2 else 512
    np.testing.assert_array_equal(z, init_const_value_reference(x, 2, 3, 1, 7.0, block))


def test_pipes_in_the_timing_model_and_sanitize_mode():
    n = 1024
    x = np.ones(n, np.float16)
    z = np.zeros(n, np.float16)
    r1 = fill_kernel[1](x, z, n, 1, n * 2 // 32, 0, 1.0, 0, False, sanitize=True)
    r2 = fill_kernel[1](x, z, n, 1, n * 2 // 512, 0, 1.0, 2, False, sanitize=True)
    assert r1.instructions["init_const_value"] == 1
    assert r1.pipe_busy["MTE1"] == 0            # L1: MTE2 (the copy-in also runs there)
    assert r2.pipe_busy["MTE1"] > 0             # L0A: MTE1 (with the load_data)


@asc.kernel
def fill_then_load(x: asc.GlobalAddress, y: asc.GlobalAddress, WAIT: asc.ConstExpr[bool],
                   L0: asc.ConstExpr[bool]):
    """Zero A1 and B1, load them into L0A/L0B (or fill L0A/L0B directly), mmad, fixpipe."""
    yg = asc.GlobalTensor(); yg.set_global_buffer(y)
    a1 = asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, 256)
    a2 = asc.LocalTensor(asc.float16, asc.TPosition.A2, 0, 256)
    b2 = asc.LocalTensor(asc.float16, asc.TPosition.B2, 0, 256)
    c = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, 256)
    if L0:
        asc.init_const_value(a2, asc.InitConstValueParams(1, 1, 0, 1.0))  # fill-a2
        asc.init_const_value(b2, asc.InitConstValueParams(1, 1, 0, 2.0))
    else:
        asc.init_const_value(a1, asc.InitConstValueParams(1, 16, 0, 1.0))  # fill-l1
        if WAIT:
            asc.set_flag(asc.HardEvent.MTE2_MTE1, 0)
            asc.wait_flag(asc.HardEvent.MTE2_MTE1, 0)
        asc.load_data(a2, a1, asc.LoadData2DParams(0, 1, 1, 0, 0, False, 0))  # load-a
        asc.load_data(b2, a1, asc.LoadData2DParams(0, 1, 1, 0, 0, False, 0))
    if WAIT or not L0:
        asc.set_flag(asc.HardEvent.MTE1_M, 0)
        asc.wait_flag(asc.HardEvent.MTE1_M, 0)
    asc.mmad(c, a2, b2, asc.MmadParams(16, 16, 16, 0, False, True))  # mmad
    asc.set_flag(asc.HardEvent.M_FIX, 0)
    asc.wait_flag(asc.HardEvent.M_FIX, 0)
    asc.fixpipe(yg, c, asc.FixpipeParamsV220(16, 16, 16, 16))


@pytest.mark.parametrize("l0", [False, True])
def test_filled_operands_feed_mmad_clean_under_sanitize(l0):
    y = np.zeros(256, np.float32)
    fill_then_load[1](np.zeros(1, np.float16), y, True, l0, sanitize=True)
    np.testing.assert_array_equal(y, np.full(256, 32.0 if l0 else 16.0, np.float32))


@pytest.mark.parametrize("l0,this,other,event", [
    (False, "load-a", "fill-l1", "MTE2_MTE1"), (True, "mmad", "fill-a2", "MTE1_M")])
def test_fill_without_its_flag_is_a_race(l0, this, other, event):
    y = np.zeros(256, np.float32)
    with pytest.raises(asc.DataRaceError) as info:
        fill_then_load[1](np.zeros(1, np.float16), y, False, l0, sanitize=True)
    first = str(info.value).splitlines()[0]
    assert f":{_line(fill_then_load, '# ' + this)}:" in first
    assert f":{_line(fill_then_load, '# ' + other)}:" in first
    assert f"HardEvent.{event}" in str(info.value)


# ----------------------------------------------------------------------------- errors
@asc.kernel
def bad_fill(x: asc.GlobalAddress, n: int, off: int, rep: int, CASE: asc.ConstExpr[int]):
    pipe = asc.TPipe()
    b1 = asc.TBuf(asc.TPosition.A1)
    b2 = asc.TBuf(asc.TPosition.A2)
    pipe.init_buffer(b1, 1024)
    pipe.init_buffer(b2, 1024)
    l1 = b1.get(asc.float16)
    l0 = b2.get(asc.float16)
    if CASE == 0:
        asc.init_const_value(l0[off:], asc.InitConstValueParams(1, 1, 0, 1.0))  # misaligned
    if CASE == 1:
        asc.init_const_value(l1, asc.InitConstValueParams(rep, 8, 0, 1.0))  # too long
    if CASE == 2:
        asc.init_const_value(l1, asc.InitConstValueParams(rep, 1, 0, 1.0))  # rep range
    if CASE == 3:
        asc.init_const_value(l1, asc.InitConstValueParams(40000, 1, 0, 1.0))  # const range


@pytest.mark.parametrize("case,args,exc,words", [
    (0, (16, 1), asc.MisalignedAddressError, ["L0A byte address 32", "512-byte aligned"]),
    (1, (0, 3000), asc.TensorExtentError, ["init_const_value dst 'l1'", "512 elements",
                                           "TBuf.get", "in L1"]),   # 3000 × 256 B > 1 KB
    (2, (0, 40000), asc.CubeParamError, ["InitConstValueParams.repeat_times = 40000",
                                         "0..32767"]),
    (3, (0, 1), asc.KernelValueError, ["InitConstValueParams.repeat_times = 40000"]),
])
def test_errors_name_the_line(case, args, exc, words):
    marker = {0: "# misaligned", 1: "# too long", 2: "# rep range", 3: "# const range"}[case]
    with pytest.raises(exc) as info:
        bad_fill[1](np.zeros(16, np.float16), 16, *args, case)
    text = str(info.value)
    assert f":{_line(bad_fill, marker)}:" in text.splitlines()[0]
    for w in words:
        assert w in text, text


@asc.kernel
def wrong_position(x: asc.GlobalAddress):
    pipe = asc.TPipe()
    b = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(b, 1024)
    t = b.get(asc.float32)
    asc.init_const_value(t, asc.InitConstValueParams(1, 1, 0, 1.0))  # ub


@asc.kernel
def wrong_dtype(x: asc.GlobalAddress):
    pipe = asc.TPipe()
    b = asc.TBuf(asc.TPosition.A1)
    pipe.init_buffer(b, 1024)
    t = b.get(asc.int8)
    asc.init_const_value(t, asc.InitConstValueParams(1, 1, 0, 1))  # int8


@asc.kernel
def wrong_params(x: asc.GlobalAddress):
    pipe = asc.TPipe()
    b = asc.TBuf(asc.TPosition.A1)
    pipe.init_buffer(b, 1024)
    t = b.get(asc.float16)
    asc.init_const_value(t, asc.LoadData2DParams(0, 1))  # record


@pytest.mark.parametrize("kernel,marker,exc,words", [
    (wrong_position, "# ub", asc.KernelTypeError, ["A1, B1, A2 or B2", "VECCALC", "duplicate"]),
    (wrong_dtype, "# int8", asc.DtypeError, ["int8", "float16", "uint32"]),
    (wrong_params, "# record", asc.KernelTypeError, ["InitConstValueParams"]),
])
def test_compile_errors_name_the_line(kernel, marker, exc, words):
    with pytest.raises(exc) as info:
        kernel[1](np.zeros(16, np.float32))
    text = str(info.value)
    assert f":{_line(kernel, marker)}:" in text.splitlines()[0]
    for w in words:
        assert w in text, text
