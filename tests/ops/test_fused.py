"""Fused vector ops (add_relu, sub_relu, fused_mul_add, fused_mul_add_relu, mul_add_dst) against
their registry references and an independent float64 formula rounded step by step, over every
dtype (mul_add_dst also half sources with a float dst), odd sizes, masks and strides; the
rounding rule (after the product and after the sum, see ``ops/fused.py``); compile errors at
the line; the sanitizer sees the ops that read dst read it; the FMA timing class."""
from __future__ import annotations

import inspect
import zlib

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler.ops import REGISTRY
from ascendc_py.compiler.ops.vcopy import mask_lanes, strided_offsets

TERNARY = ("fused_mul_add", "fused_mul_add_relu", "mul_add_dst")
UB = 65536


@asc.kernel
def fused_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress,
                 n: asc.ConstExpr[int], OP: asc.ConstExpr[str], MASKED: asc.ConstExpr[bool],
                 mask: int, repeat: int, d_blk: int, s0_blk: int, s1_blk: int, d_rep: int,
                 s0_rep: int, s1_rep: int):
    xg = asc.GlobalTensor()
    yg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    yg.set_global_buffer(y, n)
    zg.set_global_buffer(z, n)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    b = asc.LocalTensor(y.dtype, asc.TPosition.VECIN, UB // 2, n)
    c = asc.LocalTensor(z.dtype, asc.TPosition.VECOUT, UB, n)
    asc.data_copy(a, xg, n)
    asc.data_copy(b, yg, n)
    asc.data_copy(c, zg, n)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    p = asc.BinaryRepeatParams(d_blk, s0_blk, s1_blk, d_rep, s0_rep, s1_rep)
    if OP == "fused_mul_add":
        if MASKED:
            asc.fused_mul_add(c, a, b, mask, repeat, p)
        else:
            asc.fused_mul_add(c, a, b, n)
    elif OP == "fused_mul_add_relu":
        if MASKED:
            asc.fused_mul_add_relu(c, a, b, mask, repeat, p)
        else:
            asc.fused_mul_add_relu(c, a, b, n)
    elif OP == "mul_add_dst":
        if MASKED:
            asc.mul_add_dst(c, a, b, mask, repeat, p)
        else:
            asc.mul_add_dst(c, a, b, n)
    elif OP == "add_relu":
        if MASKED:
            asc.add_relu(c, a, b, mask, repeat, p)
        else:
            asc.add_relu(c, a, b, n)
    elif OP == "sub_relu":
        if MASKED:
            asc.sub_relu(c, a, b, mask, repeat, p)
        else:
            asc.sub_relu(c, a, b, n)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, c, n)


def _apply(op, z, x, y):
    ref = REGISTRY[op].reference
    return ref(z, x, y) if op in TERNARY else ref(x, y)


def independent(op, z, x, y):
    """float64 arithmetic rounded to the dtype after the product and after the sum."""
    if op in ("add_relu", "sub_relu"):
        f = np.add if op == "add_relu" else np.subtract
        r = f(x.astype(np.float64), y.astype(np.float64)).astype(z.dtype)
        return np.maximum(r, z.dtype.type(0))
    x64, y64, z64 = (v.astype(np.float64) for v in (x, y, z))
    if op == "mul_add_dst":
        prod = (x64 * y64).astype(z.dtype).astype(np.float64)   # exact when widened
        return (prod + z64).astype(z.dtype)
    prod = (x64 * z64).astype(z.dtype).astype(np.float64)
    out = (prod + y64).astype(z.dtype)
    return np.maximum(out, z.dtype.type(0)) if op == "fused_mul_add_relu" else out


def _data(op, sdt, ddt, n, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * 8).astype(sdt)
    y = (rng.standard_normal(n) * 8).astype(sdt)
    z = (rng.standard_normal(n) * 8).astype(ddt)
    if np.dtype(sdt).kind == "i":
        info = np.iinfo(sdt)
        x = rng.integers(info.min, info.max, n, endpoint=True).astype(sdt)
        y = rng.integers(info.min, info.max, n, endpoint=True).astype(sdt)
        z = np.zeros(n, ddt)
    return x, y, z


CASES = [("add_relu", np.int16, np.int16), ("sub_relu", np.int16, np.int16)] + [
    (op, dt, dt) for op in ("add_relu", "sub_relu") + TERNARY
    for dt in (np.float16, np.float32)] + [("mul_add_dst", np.float16, np.float32)]


def _id(c):
    return f"{c[0]}-{np.dtype(c[1]).name}" + (f"-{np.dtype(c[2]).name}" if c[1] != c[2] else "")


@pytest.mark.parametrize("op,sdt,ddt", CASES, ids=[_id(c) for c in CASES])
def test_count_form(op, sdt, ddt):
    seed = zlib.crc32(_id((op, sdt, ddt)).encode())
    per32 = 32 // np.dtype(sdt).itemsize
    for n in (per32, 3 * per32, 5 * per32, 4096 + per32 * 2):
        x, y, z = _data(op, sdt, ddt, n, seed)
        want, exact = _apply(op, z, x, y), independent(op, z, x, y)
        fused_kernel[1](x, y, z, n, op, False, 0, 0, 1, 1, 1, 8, 8, 8)
        np.testing.assert_array_equal(z, want)
        np.testing.assert_array_equal(z, exact)


def _masked_reference(op, z, x, y, mask, repeat, strides):
    """The masked form lane by lane: offsets of dst/src0/src1 from their block/repeat strides;
    a repeat covers the lanes of the wider (dst) type, as the hardware does."""
    lanes = 256 // z.itemsize
    on = mask_lanes(mask, lanes)
    (db, sb0, sb1, dr, sr0, sr1) = strides
    out = z.copy()
    d = strided_offsets(z.itemsize, repeat, db, dr)[:, :lanes]
    s0 = strided_offsets(x.itemsize, repeat, sb0, sr0)[:, :lanes]
    s1 = strided_offsets(y.itemsize, repeat, sb1, sr1)[:, :lanes]
    for r in range(repeat):
        i, j, k = d[r][on], s0[r][on], s1[r][on]
        out[i] = _apply(op, out[i], x[j], y[k])
    return out


@pytest.mark.parametrize("op,sdt,ddt", CASES, ids=[_id(c) for c in CASES])
@pytest.mark.parametrize("mask,repeat,strides", [
    ("full", 3, (1, 1, 1, 8, 8, 8)),
    (17, 4, (1, 2, 1, 8, 16, 8)),
    (40, 2, (2, 1, 1, 16, 8, 8)),
    ("full", 5, (1, 1, 0, 8, 8, 0)),       # src1 block 0 read by every block of every repeat
])
def test_masked_form(op, sdt, ddt, mask, repeat, strides):
    n = 8192 // np.dtype(ddt).itemsize * 2
    x, y, z = _data(op, sdt, ddt, n, 11)
    lanes = 256 // np.dtype(ddt).itemsize
    m = lanes if mask == "full" else mask
    if np.dtype(sdt).itemsize < np.dtype(ddt).itemsize:    # half sources: 4 blocks a repeat
        strides = strides[:4] + tuple(s // 2 for s in strides[4:])
    want = _masked_reference(op, z, x, y, m, repeat, strides)
    fused_kernel[1](x, y, z, n, op, True, m, repeat, *strides)
    np.testing.assert_array_equal(z, want)


def test_rounds_after_the_product_and_after_the_sum():
    """float16: 1.0009765625 * 1.0009765625 = 1.0019541... rounds to 1.001953125 (the 2**-20
    term is lost); adding -1.001953125 then gives 0 with two roundings, 2**-20 with one."""
    n = 16
    e = np.float16(1.0009765625)
    x = np.full(n, e, np.float16)                     # src0
    y = np.full(n, -np.float16(1.001953125), np.float16)   # src1
    z = np.full(n, e, np.float16)                     # dst (fused_mul_add multiplies it)
    fused_kernel[1](x, y, z, n, "fused_mul_add", False, 0, 0, 1, 1, 1, 8, 8, 8)
    np.testing.assert_array_equal(z, np.zeros(n, np.float16))
    z = np.full(n, -np.float16(1.001953125), np.float16)
    y = x.copy()
    fused_kernel[1](x, y, z, n, "mul_add_dst", False, 0, 0, 1, 1, 1, 8, 8, 8)
    np.testing.assert_array_equal(z, np.zeros(n, np.float16))
    # the mixed form widens the half sources: their product is exact in float32
    z32 = np.full(n, -1.001953125, np.float32)
    fused_kernel[1](x, y, z32, n, "mul_add_dst", False, 0, 0, 1, 1, 1, 8, 8, 8)
    np.testing.assert_array_equal(z32, np.full(n, 2.0 ** -20, np.float32))


def test_int16_add_relu_wraps_then_relus():
    x = np.full(16, 30000, np.int16)
    z = np.zeros(16, np.int16)
    fused_kernel[1](x, x.copy(), z, 16, "add_relu", False, 0, 0, 1, 1, 1, 8, 8, 8)
    np.testing.assert_array_equal(z, np.zeros(16, np.int16))     # 60000 wraps to -5536


def test_fma_class_prices_vmadd():
    """msKPP: VMADD/VMLA 6 cycles per repeat; add_relu is priced like add."""
    n = 128 * 32
    x, y, z = _data("fused_mul_add", np.float16, np.float16, n, 1)
    r = fused_kernel[1](x, y, z, n, "fused_mul_add", False, 0, 0, 1, 1, 1, 8, 8, 8)
    assert r.pipe_busy["V"] == 32 * 6
    r = fused_kernel[1](x, y, z, n, "add_relu", False, 0, 0, 1, 1, 1, 8, 8, 8)
    assert r.pipe_busy["V"] == 32 * 2    # SIMPLE with the UB bank rule, as add


# ----------------------------------------------------------------------------- errors
def _line(fn, marker: str) -> int:
    src, first = inspect.getsourcelines(fn.fn)
    return first + next(i for i, s in enumerate(src) if marker in s)


@asc.kernel
def bad_fused(CASE: asc.ConstExpr[int]):
    h = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, 256)
    f = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 1024, 256)
    i32 = asc.LocalTensor(asc.int32, asc.TPosition.VECIN, 2048, 256)
    i16 = asc.LocalTensor(asc.int16, asc.TPosition.VECIN, 4096, 256)
    if CASE == 0:
        asc.add_relu(i32, i32, i32, 64)  # case-int32
    elif CASE == 1:
        asc.fused_mul_add(i16, i16, i16, 64)  # case-int16
    elif CASE == 2:
        asc.mul_add_dst(f, h, f, 64)  # case-mixed-sources
    elif CASE == 3:
        asc.mul_add_dst(h, f, f, 64)  # case-narrow-dst
    elif CASE == 4:
        asc.fused_mul_add(f, f, f, 64, 1, asc.UnaryRepeatParams())  # case-params
    elif CASE == 5:
        asc.fused_mul_add(h, h, h, 64, 1, asc.BinaryRepeatParams())


@pytest.mark.parametrize("case,marker,text", [
    (0, "case-int32", "add_relu does not support int32"),
    (1, "case-int16", "fused_mul_add does not support int16"),
    (2, "case-mixed-sources", "src1 is float32 but the other source is float16"),
    (3, "case-narrow-dst", "src0 is float32 but dst is float16"),
    (4, "case-params", "must be asc.BinaryRepeatParams"),
])
def test_errors_name_the_line(case, marker, text):
    with pytest.raises(asc.KernelTypeError, match=text) as info:
        bad_fused[1](case)
    assert f":{_line(bad_fused, marker)}:" in str(info.value).splitlines()[0]


# ----------------------------------------------------------------------------- sanitizer
@asc.kernel
def racy_dst(x: asc.GlobalAddress, z: asc.GlobalAddress, SYNC: asc.ConstExpr[bool]):
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, 128)
    zg.set_global_buffer(z, 128)
    a = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, 128)
    c = asc.LocalTensor(asc.float16, asc.TPosition.VECOUT, 1024, 128)
    asc.data_copy(a, xg, 128)
    asc.data_copy(c, zg, 128)  # dst-load
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    if SYNC:
        asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.fused_mul_add(c, a, a, 128)  # the-fma
    if not SYNC:
        asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, c, 128)


def test_sanitizer_sees_the_dst_read():
    x = np.ones(128, np.float16)
    z = np.full(128, 2, np.float16)
    racy_dst[1](x, z, True, sanitize=True)
    np.testing.assert_array_equal(z, np.full(128, 3, np.float16))
    with pytest.raises(asc.DataRaceError) as info:
        racy_dst[1](x, z, False, sanitize=True)
    first = str(info.value).splitlines()[0]
    assert f":{_line(racy_dst, '# the-fma')}:" in first


# ----------------------------------------------------------------------------- fused casts
@asc.kernel
def cast_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress,
                n: asc.ConstExpr[int], OP: asc.ConstExpr[str], MASKED: asc.ConstExpr[bool],
                mask: int, repeat: int, d_blk: int, s0_blk: int, s1_blk: int, d_rep: int,
                s0_rep: int, s1_rep: int):
    xg = asc.GlobalTensor()
    yg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    yg.set_global_buffer(y, n)
    zg.set_global_buffer(z, n)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    b = asc.LocalTensor(y.dtype, asc.TPosition.VECIN, UB // 2, n)
    c = asc.LocalTensor(z.dtype, asc.TPosition.VECOUT, UB, n)
    asc.data_copy(a, xg, n)
    asc.data_copy(b, yg, n)
    asc.data_copy(c, zg, n)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    p = asc.BinaryRepeatParams(d_blk, s0_blk, s1_blk, d_rep, s0_rep, s1_rep)
    if OP == "add_relu_cast":
        if MASKED:
            asc.add_relu_cast(c, a, b, mask, repeat, p)
        else:
            asc.add_relu_cast(c, a, b, n)
    elif OP == "sub_relu_cast":
        if MASKED:
            asc.sub_relu_cast(c, a, b, mask, repeat, p)
        else:
            asc.sub_relu_cast(c, a, b, n)
    elif OP == "mul_cast":
        if MASKED:
            asc.mul_cast(c, a, b, mask, repeat, p)
        else:
            asc.mul_cast(c, a, b, n)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, c, n)


CAST_CASES = [(op, s.numpy, d.numpy) for op in ("add_relu_cast", "sub_relu_cast", "mul_cast")
              for d, s in REGISTRY[op].mixed]


def _cast_inputs(sdt, n, seed):
    rng = np.random.default_rng(seed)
    if np.dtype(sdt).kind == "i":    # int16: sums that wrap and that saturate int8
        return (rng.integers(-32768, 32767, n, endpoint=True).astype(sdt),
                rng.integers(-400, 400, n).astype(sdt))
    x = (rng.standard_normal(n) * 40).astype(sdt)
    y = (rng.standard_normal(n) * 40).astype(sdt)
    specials = [np.nan, np.inf, -np.inf, 0.5, 1.5, 2.5, -0.5, 127.5, 300.0]
    x[:len(specials)] = specials
    y[:len(specials)] = 1
    if np.dtype(sdt) == np.float32:
        x[len(specials)] = 70000.0        # past half's range: inf, as asc.cast RINT gives
    return x, y


def _cid(c):
    return f"{c[0]}-{np.dtype(c[1]).name}-{np.dtype(c[2]).name}"


@pytest.mark.parametrize("op,sdt,ddt", CAST_CASES, ids=[_cid(c) for c in CAST_CASES])
def test_fused_cast_count_form(op, sdt, ddt):
    for n in (64, 3 * 64, 4096 + 64):
        x, y = _cast_inputs(sdt, n, n)
        if op == "mul_cast":
            y = (y / 8).astype(sdt)
        z = np.zeros(n, ddt)
        cast_kernel[1](x, y, z, n, op, False, 0, 0, 1, 1, 1, 8, 8, 8)
        np.testing.assert_array_equal(z, REGISTRY[op].reference(x, y, ddt))


def test_fused_cast_rounds_to_nearest_even_and_saturates():
    x = np.array([0.5, 1.5, 2.5, -3.0, 126.5, 127.5, 1000.0, np.nan] * 8, np.float16)
    y = np.zeros(64, np.float16)
    z = np.zeros(64, np.int8)
    cast_kernel[1](x, y, z, 64, "add_relu_cast", False, 0, 0, 1, 1, 1, 8, 8, 8)
    np.testing.assert_array_equal(z[:8], np.array([0, 2, 2, 0, 126, 127, 127, 0], np.int8))


@pytest.mark.parametrize("op,sdt,ddt", CAST_CASES, ids=[_cid(c) for c in CAST_CASES])
@pytest.mark.parametrize("mask,repeat,layout", [("full", 3, "contiguous"),
                                                (23, 4, "strided")])
def test_fused_cast_masked_form(op, sdt, ddt, mask, repeat, layout):
    es, ed = np.dtype(sdt).itemsize, np.dtype(ddt).itemsize
    lanes = 256 // es
    n = 8192 // es
    x, y = _cast_inputs(sdt, n, 5)
    z = np.full(n, 3, ddt)
    m = lanes if mask == "full" else mask
    dst_blocks = 8 * ed // es             # the dst part of a repeat, in 32-byte blocks
    if layout == "contiguous":
        strides = (1, 1, 1, dst_blocks, 8, 8)
    else:
        strides = (2, 1, 2, 2 * dst_blocks, 8, 16)
    want = z.copy()
    on = mask_lanes(m, lanes)
    s0 = strided_offsets(es, repeat, strides[1], strides[4])
    s1 = strided_offsets(es, repeat, strides[2], strides[5])
    per, lane = 32 // ed, np.arange(lanes)   # dst lane j: element j of the repeat's dst part
    for r in range(repeat):
        doff = (r * strides[3] + (lane // per) * strides[0]) * per + lane % per
        want[doff[on]] = REGISTRY[op].reference(x[s0[r][on]], y[s1[r][on]], ddt)
    cast_kernel[1](x, y, z, n, op, True, m, repeat, *strides)
    np.testing.assert_array_equal(z, want)


@asc.kernel
def bad_cast(CASE: asc.ConstExpr[int]):
    f = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 256)
    h = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 1024, 256)
    i8 = asc.LocalTensor(asc.int8, asc.TPosition.VECOUT, 2048, 256)
    if CASE == 0:
        asc.add_relu_cast(i8, f, f, 64)  # case-pair
    elif CASE == 1:
        asc.mul_cast(i8, h, f, 64)  # case-sources


@pytest.mark.parametrize("case,marker,text", [
    (0, "case-pair", "add_relu_cast does not convert float32 to int8"),
    (1, "case-sources", "src1 is float32 but src0 is float16"),
])
def test_fused_cast_errors_name_the_line(case, marker, text):
    with pytest.raises(asc.KernelTypeError, match=text) as info:
        bad_cast[1](case)
    assert f":{_line(bad_cast, marker)}:" in str(info.value).splitlines()[0]
