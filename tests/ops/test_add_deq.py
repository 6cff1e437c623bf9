"""add_deq_relu against its NumPy reference (``ops/add_deq.py``): count and masked forms, lane
masks and strides, wrapping sums, overflow to inf, the unset DEQSCALE register, dtype errors,
sanitize mode."""
from __future__ import annotations

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler.ops.add_deq import add_deq_relu_reference


@asc.kernel
def adr(a: asc.GlobalAddress, b: asc.GlobalAddress, z: asc.GlobalAddress, scale: float,
        FORM: asc.ConstExpr[int], n: int, m: int, rep: int, d_rep: int, s_rep: int,
        SET: asc.ConstExpr[int]):
    ag = asc.GlobalTensor()
    bg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    ag.set_global_buffer(a, 1024)
    bg.set_global_buffer(b, 1024)
    zg.set_global_buffer(z, 1024)
    al = asc.LocalTensor(asc.int32, asc.TPosition.VECIN, 0, 1024)
    bl = asc.LocalTensor(asc.int32, asc.TPosition.VECIN, 4096, 1024)
    zl = asc.LocalTensor(asc.float16, asc.TPosition.VECOUT, 8192, 1024)
    asc.data_copy(al, ag, 1024)
    asc.data_copy(bl, bg, 1024)
    asc.data_copy(zl, zg, 1024)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    if SET:
        asc.set_deq_scale(scale)
    if FORM == 0:
        asc.add_deq_relu(zl, al, bl, count=n)
    elif FORM == 1:
        asc.add_deq_relu(zl, al, bl, m, rep, asc.BinaryRepeatParams(1, 1, 1, d_rep, s_rep, s_rep))
    else:
        asc.add_deq_relu(zl, al, bl, mask=[2**64 - 1, 0xF0F0], repeat_times=rep,
                         repeat_params=asc.BinaryRepeatParams(1, 1, 1, d_rep, s_rep, s_rep))
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, zl, 1024)


def _inputs(seed, big=False):
    rng = np.random.default_rng(seed)
    hi = 2**31 - 1 if big else 3000
    a = rng.integers(-hi, hi, 1024, dtype=np.int64).astype(np.int32)
    b = rng.integers(-hi, hi, 1024, dtype=np.int64).astype(np.int32)
    return a, b


def _masked_want(z0, a, b, scale, lanes, rep, d_rep, s_rep):
    """Lane l of repeat r: sources at r * s_rep * 8 + l, dst at r * d_rep * 16 + l."""
    want = z0.copy()
    for r in range(rep):
        for lane in lanes:
            s = r * s_rep * 8 + lane
            want[r * d_rep * 16 + lane] = add_deq_relu_reference(a[s:s + 1], b[s:s + 1],
                                                                 scale)[0]
    return want


@pytest.mark.parametrize("n,scale,big", [(1024, 0.01, False), (300, 0.5, False),
                                         (64, 1.0, True), (1000, 100.0, False), (0, 1.0, False)])
def test_count_form(n, scale, big):
    a, b = _inputs(n, big)
    z0 = np.full(1024, 7, np.float16)
    z = z0.copy()
    adr[1](a, b, z, scale, 0, n, 0, 0, 8, 8, 1, sanitize=True)
    want = z0.copy()
    want[:n] = add_deq_relu_reference(a[:n], b[:n], scale)
    np.testing.assert_array_equal(z, want)


@pytest.mark.parametrize("m,rep,d_rep,s_rep", [(64, 4, 4, 8), (33, 3, 4, 8), (64, 2, 8, 8),
                                               (17, 2, 6, 16)])
def test_masked_form(m, rep, d_rep, s_rep):
    a, b = _inputs(m + rep)
    z0 = np.full(1024, -1, np.float16)
    z = z0.copy()
    adr[1](a, b, z, 0.25, 1, 0, m, rep, d_rep, s_rep, 1)
    np.testing.assert_array_equal(z, _masked_want(z0, a, b, 0.25, range(m), rep, d_rep, s_rep))


def test_bit_mask_form():
    a, b = _inputs(5)
    z0 = np.full(1024, -1, np.float16)
    z = z0.copy()
    adr[1](a, b, z, 0.125, 2, 0, 0, 2, 4, 8, 1)
    # 64 lanes of int32: only the low word selects lanes (the high word covers none)
    np.testing.assert_array_equal(z, _masked_want(z0, a, b, 0.125, range(64), 2, 4, 8))


def test_reference_edges():
    r = add_deq_relu_reference([2**31 - 1, -5, 70000], [1, 2, 0], 1.0)
    assert r[0] == 0 and r[1] == 0 and np.isinf(r[2])       # wrap to negative; relu; overflow


def test_an_unset_scale_stops_the_kernel():
    a, b = _inputs(1)
    with pytest.raises(asc.ValueRangeError, match="add_deq_relu before set_deq_scale"):
        adr[1](a, b, np.zeros(1024, np.float16), 1.0, 0, 64, 0, 0, 8, 8, 0)


@asc.kernel
def wrong(DT: asc.ConstExpr[int]):
    x = asc.LocalTensor(asc.int32, asc.TPosition.VECIN, 0, 256)
    h = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 1024, 256)
    if DT == 0:
        asc.add_deq_relu(x, x, x, count=64)
    else:
        asc.add_deq_relu(h, h, h, count=64)


@pytest.mark.parametrize("dt", [0, 1])
def test_dtype_errors(dt):
    with pytest.raises(asc.KernelTypeError, match="int32 sources and a half dst"):
        wrong[1](dt)
