"""The CMPMASK register (``ops/cmpmask.py``): set_cmp_mask/get_cmp_mask, compare without dst and
select's register forms against compare's and select's NumPy references, over the dtypes;
alignment and form errors; sanitize mode."""
from __future__ import annotations

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler.ops.cmpmask import get_cmp_mask_reference, set_cmp_mask_reference
from ascendc_py.compiler.ops.convert import compare_reference, select_reference
from ascendc_py.dsl.types import CMPMODE, SELMODE

N = 256          # elements per operand (two 256-byte repeats of half, four of float)


@asc.kernel
def roundtrip(x: asc.GlobalAddress, z: asc.GlobalAddress, OFF: asc.ConstExpr[int]):
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)
    zg.set_global_buffer(z, 64)
    src = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, 64)
    dst = asc.LocalTensor(x.dtype, asc.TPosition.VECOUT, 1024, 64)
    asc.data_copy(src, xg, 64)
    asc.data_copy(dst, zg, 64)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.set_cmp_mask(src)
    asc.get_cmp_mask(dst[OFF:])
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, dst, 64)


@pytest.mark.parametrize("dtype", [np.uint8, np.float16, np.int32, np.float32])
def test_set_then_get_moves_16_bytes(dtype):
    rng = np.random.default_rng(1)
    x = rng.integers(0, 255, 64 * np.dtype(dtype).itemsize, dtype=np.uint8).view(dtype)
    z0 = np.full(64, 7, dtype)
    z = z0.copy()
    roundtrip[1](x, z, 0, sanitize=True)
    assert z.tobytes() == get_cmp_mask_reference(set_cmp_mask_reference(x), z0).tobytes()


def test_a_misaligned_operand_stops_at_the_line():
    with pytest.raises(asc.KernelAssertionError, match="16-byte boundary"):
        roundtrip[1](np.zeros(64, np.uint8), np.zeros(64, np.uint8), 8)
    x = np.arange(64, dtype=np.uint8)
    z = np.zeros(64, np.uint8)
    roundtrip[1](x, z, 16)                  # 16-byte aligned is enough (the current docs)
    assert list(z[16:32]) == list(range(16)) and not z[:16].any() and not z[32:].any()


@asc.kernel
def cmp_to_register(a: asc.GlobalAddress, b: asc.GlobalAddress, z: asc.GlobalAddress,
                    MODE: asc.ConstExpr[int]):
    n = 512 // a.dtype.sizeof()
    ag = asc.GlobalTensor()
    bg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    ag.set_global_buffer(a, n)
    bg.set_global_buffer(b, n)
    zg.set_global_buffer(z, 32)
    al = asc.LocalTensor(a.dtype, asc.TPosition.VECIN, 0, n)
    bl = asc.LocalTensor(a.dtype, asc.TPosition.VECIN, 1024, n)
    zl = asc.LocalTensor(asc.uint8, asc.TPosition.VECOUT, 2048, 32)
    asc.data_copy(al, ag, n)
    asc.data_copy(bl, bg, n)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.duplicate(zl.reinterpret_cast(asc.uint16), 0xABAB, 16)
    params = asc.BinaryRepeatParams(1, 1, 1, 8, 8, 8)
    if MODE == 0:
        asc.compare(al, bl, asc.CMPMODE.LT, 256 // a.dtype.sizeof(), params)
    else:
        asc.compare(al, bl, cmp_mode=asc.CMPMODE.EQ, mask=[2**64 - 1, 2**64 - 1],
                    repeat_params=params)
    asc.get_cmp_mask(zl)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, zl, 32)


@pytest.mark.parametrize("dtype,mode", [(np.float16, 0), (np.float16, 1), (np.float32, 0),
                                        (np.float32, 1), (np.int32, 1)])
def test_compare_without_dst_fills_the_register(dtype, mode):
    rng = np.random.default_rng(2)
    n = 512 // np.dtype(dtype).itemsize
    a = rng.integers(-3, 3, n).astype(dtype)
    b = rng.integers(-3, 3, n).astype(dtype)
    z = np.zeros(32, np.uint8)
    cmp_to_register[1](a, b, z, mode, sanitize=True)
    epr = 256 // np.dtype(dtype).itemsize
    bits = compare_reference(a[:epr], b[:epr], CMPMODE.LT if mode == 0 else CMPMODE.EQ)
    want = np.zeros(16, np.uint8)
    want[:len(bits)] = bits                      # one repeat; the rest of CMPMASK cleared
    assert list(z[:16]) == list(want)
    assert list(z[16:]) == [0xAB] * 16           # get_cmp_mask wrote 16 bytes only


@asc.kernel
def sel_register(s0: asc.GlobalAddress, s1: asc.GlobalAddress, sel: asc.GlobalAddress,
                 z: asc.GlobalAddress, MODE: asc.ConstExpr[int], lanes: int, rep: int):
    n = 256
    g0 = asc.GlobalTensor()
    g1 = asc.GlobalTensor()
    gs = asc.GlobalTensor()
    gz = asc.GlobalTensor()
    g0.set_global_buffer(s0, n)
    g1.set_global_buffer(s1, n)
    gs.set_global_buffer(sel, 64)
    gz.set_global_buffer(z, n)
    l0 = asc.LocalTensor(s0.dtype, asc.TPosition.VECIN, 0, n)
    l1 = asc.LocalTensor(s0.dtype, asc.TPosition.VECIN, 2048, n)
    ls = asc.LocalTensor(asc.uint8, asc.TPosition.VECIN, 4096, 64)
    lz = asc.LocalTensor(s0.dtype, asc.TPosition.VECOUT, 8192, n)
    la = asc.LocalTensor(asc.uint32, asc.TPosition.VECCALC, 12288, 8)
    asc.data_copy(l0, g0, n)
    asc.data_copy(l1, g1, n)
    asc.data_copy(ls, gs, 64)
    asc.data_copy(lz, gz, n)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    params = asc.BinaryRepeatParams(1, 1, 1, 8, 8, 8)
    asc.set_vector_mask(lanes, dtype=s0.dtype, mode=asc.MaskMode.NORMAL)
    if MODE == 0:
        asc.set_cmp_mask(ls)
        asc.select(lz, l0, l1, repeat_times=rep, repeat_params=params,
                   sel_mode=asc.SelMode.VSEL_CMPMASK_SPR)
    elif MODE == 1:
        asc.set_cmp_mask(l1)                     # the scalar: l1[0]
        asc.select(lz, ls, l0, repeat_times=rep, repeat_params=params)
    else:
        la.set_value(0, ls.get_phy_addr())
        asc.set_flag(asc.HardEvent.S_V, 0)
        asc.wait_flag(asc.HardEvent.S_V, 0)
        asc.set_cmp_mask(la)
        asc.select(lz, l0, l1, repeat_times=rep, repeat_params=params,
                   sel_mode=asc.SelMode.VSEL_TENSOR_TENSOR_MODE)
    asc.reset_mask()
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(gz, lz, n)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("lanes,rep", [(None, 2), (40, 1)])
def test_select_register_forms(dtype, mode, lanes, rep):
    rng = np.random.default_rng(3 + mode)
    epr = 256 // np.dtype(dtype).itemsize
    lanes = epr if lanes is None else lanes
    s0 = rng.standard_normal(256).astype(dtype)
    s1 = rng.standard_normal(256).astype(dtype)
    sel = rng.integers(0, 256, 64, dtype=np.uint8)
    z0 = np.full(256, -9, dtype)
    z = z0.copy()
    sel_register[1](s0, s1, sel, z, mode, lanes, rep, sanitize=(mode != 2))
    n = rep * epr
    if mode == 1:
        full = select_reference(sel, s0[:n], s1[0], SELMODE.VSEL_TENSOR_SCALAR_MODE)
    else:
        bits = sel[:16] if mode == 0 else sel
        full = select_reference(bits, s0[:n], s1[:n], SELMODE.VSEL_CMPMASK_SPR if mode == 0
                                else SELMODE.VSEL_TENSOR_TENSOR_MODE)
    want = z0.copy()
    active = (np.arange(n) % epr) < lanes
    want[:n][active] = full[active]
    np.testing.assert_array_equal(z, want)


def _compile_error(body: str, cls):
    import linecache
    src = ("def k(x: asc.GlobalAddress):\n    a = asc.LocalTensor(asc.float16, "
           "asc.TPosition.VECIN, 0, 256)\n" + f"    {body}\n")
    name = f"<cmpmask-test-{abs(hash(body))}>"
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)
    ns = {"asc": asc}
    exec(compile(src, name, "exec"), ns)
    with pytest.raises(cls) as info:
        asc.kernel(ns["k"])[1](np.zeros(8, np.float16))
    assert ":3:" in str(info.value), str(info.value)
    return str(info.value)


P = "asc.BinaryRepeatParams(1, 1, 1, 8, 8, 8)"


@pytest.mark.parametrize("body,message", [
    (f"asc.select(a, a, a, repeat_times=1, repeat_params={P}, "
     f"sel_mode=asc.SelMode.VSEL_TENSOR_SCALAR_MODE)", "(the scalar is in CMPMASK)"),
    (f"asc.compare(a, a.reinterpret_cast(asc.int16), asc.CMPMODE.LT, 128, {P})",
     "both sources must have one dtype"),
    (f"asc.compare(a.reinterpret_cast(asc.int16), a.reinterpret_cast(asc.int16), "
     f"asc.CMPMODE.LT, 128, {P})", "does not support int16"),
    ("asc.set_cmp_mask(x)", "must be a LocalTensor"),
    (f"asc.select(a, a.reinterpret_cast(asc.int16), a, repeat_times=1, repeat_params={P})",
     "sel_mask must be a"),
])
def test_errors_name_the_line(body, message):
    assert message in _compile_error(body, asc.KernelTypeError)
