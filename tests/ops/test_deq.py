"""cast_deq and set_deq_scale against the NumPy reference (``ops/deq.py``): int16 -> int8/uint8
with the register's parameters or 16 vdeq groups, both half blocks, count and masked forms,
counter mode; int32 -> half; the unset-register errors; compile errors; sanitize; timing."""
from __future__ import annotations

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler.ops.deq import cast_deq_ref, pack_vdeq, s9
from ascendc_py.simulator.config import ASCEND910B2

SCALES = [0.25, 0.5, 1.0, 2.0, -0.75, 3.0, 0.1, 1.5] * 2
OFFSETS = [0, 1, -1, 300, 255, -256, 7, -100] * 2
SIGNS = [True, False, True, True, False, False, True, False] * 2
VDEQ = list(zip(SCALES, OFFSETS, SIGNS))


@asc.kernel
def deq16(x: asc.GlobalAddress, z: asc.GlobalAddress, p: asc.GlobalAddress,
          VEC: asc.ConstExpr[bool], HALF: asc.ConstExpr[bool], FORM: asc.ConstExpr[int]):
    """FORM 0: count form; 1: contiguous mask; 2: bit mask; 3: counter mode."""
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    pg = asc.GlobalTensor()
    xg.set_global_buffer(x, 4096)
    zg.set_global_buffer(z, 8192)
    pg.set_global_buffer(p, 16)
    src = asc.LocalTensor(asc.int16, asc.TPosition.VECIN, 0, 4096)
    dst = asc.LocalTensor(asc.int8, asc.TPosition.VECOUT, 8192, 8192)
    vd = asc.LocalTensor(asc.uint64, asc.TPosition.VECCALC, 16384, 16)
    asc.data_copy(src, xg, 4096)
    asc.data_copy(dst, zg, 8192)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.set_deq_scale(0.5, 3, pg.get_value(8) != 0)
    asc.set_deq_scale(vd, asc.VdeqInfo([0.25, 0.5, 1.0, 2.0, -0.75, 3.0, 0.1, 1.5] * 2,
                                       [0, 1, -1, 300, 255, -256, 7, -100] * 2,
                                       [True, False, True, True, False, False, True, False] * 2))
    n = pg.get_value(0)
    params = asc.UnaryRepeatParams(pg.get_value(1), pg.get_value(2), pg.get_value(3),
                                   pg.get_value(4))
    if FORM == 0:
        asc.cast_deq(dst, src, n, VEC, HALF)
    elif FORM == 1:
        asc.cast_deq(dst, src, n, pg.get_value(5), params, is_vec_deq=VEC, half_block=HALF)
    elif FORM == 2:
        asc.cast_deq(dst, src, [pg.get_value(6), pg.get_value(7)], pg.get_value(5), params,
                     True, VEC, HALF)
    else:
        asc.set_mask_count()
        asc.cast_deq(dst, src, n, 1, params, True, VEC, HALF)
        asc.set_mask_norm()
    asc.reset_mask()
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, dst, 8192)


def _run(vec, half, form, n=0, repeat=0, dst_blk=1, src_blk=1, dst_rep=8, src_rep=8,
         bits=(0, 0), sign=True, seed=0, **launch):
    rng = np.random.default_rng(seed)
    x = rng.integers(-2000, 2000, 4096).astype(np.int16)
    x[:8] = [0, 1, -1, 127, -128, 32767, -32768, 255]
    z0 = rng.integers(-128, 128, 8192).astype(np.int8)
    p = np.zeros(16, np.int64)
    p[:9] = [n, dst_blk, src_blk, dst_rep, src_rep, repeat,
             np.array([bits[0]], np.uint64).view(np.int64)[0],
             np.array([bits[1]], np.uint64).view(np.int64)[0], int(sign)]
    z = z0.copy()
    report = deq16[1](x, z, p, vec, half, form, **launch)
    kw = dict(half_block=half, scale=0.5, offset=3, sign=sign, vdeq=VDEQ if vec else None)
    if form == 0:
        want = cast_deq_ref(z0, x, count=n, **kw)
    elif form == 3:   # counter mode: the count form's lanes, the given strides
        want = None
    else:
        mask = n if form == 1 else list(bits)
        want = cast_deq_ref(z0, x, mask=mask, repeat_times=repeat, dst_blk=dst_blk,
                            src_blk=src_blk, dst_rep=dst_rep, src_rep=src_rep, **kw)
    return z, want, report


@pytest.mark.parametrize("vec", [False, True])
@pytest.mark.parametrize("half", [True, False])
def test_count_form(vec, half):
    for n in (1, 15, 16, 17, 300, 4096):
        for sign in (True, False):
            got, want, _ = _run(vec, half, 0, n=n, sign=sign, seed=n)
            np.testing.assert_array_equal(got, want, f"n={n} sign={sign}")


@pytest.mark.parametrize("vec", [False, True])
@pytest.mark.parametrize("half", [True, False])
def test_masked_forms(vec, half):
    for n, repeat, dst_blk, src_blk, dst_rep, src_rep in (
            (128, 1, 1, 1, 8, 8), (37, 3, 1, 1, 8, 8), (128, 4, 2, 1, 17, 8),
            (100, 2, 1, 2, 8, 16), (128, 3, 1, 1, 0, 8)):
        got, want, _ = _run(vec, half, 1, n=n, repeat=repeat, dst_blk=dst_blk,
                            src_blk=src_blk, dst_rep=dst_rep, src_rep=src_rep)
        np.testing.assert_array_equal(got, want, f"mask={n} repeat={repeat}")
    bits = (0xF0F0F0F0F0F0F0F1, 0x8000000000001234)
    got, want, _ = _run(vec, half, 2, repeat=3, bits=bits)
    np.testing.assert_array_equal(got, want)


def test_counter_mode_is_the_count_form():
    for n in (100, 128, 300):
        got, _, _ = _run(False, True, 3, n=n)
        want, _, _ = _run(False, True, 0, n=n)
        np.testing.assert_array_equal(got, want)


def test_reference_formula():
    x = np.array([10, -10, 1000, -1000, 3, 5], np.int16)
    z = np.zeros(32, np.int8)
    r = cast_deq_ref(z, x, count=6, scale=0.5, offset=3, sign=True)
    assert list(r[:6]) == [8, -2, 127, -128, 4, 6]     # 1.5 + 3 -> 4.5 -> 4 (ties to even)
    assert s9(300) == -212 and s9(255) == 255 and s9(-1) == -1
    assert pack_vdeq(1.0, -1, True) == 0x3F800000 | (0xFFFF << 32) | (1 << 48)


@asc.kernel
def deq32(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int, SCALE: asc.ConstExpr[float]):
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, 1024)
    zg.set_global_buffer(z, 1024)
    src = asc.LocalTensor(asc.int32, asc.TPosition.VECIN, 0, 1024)
    dst = asc.LocalTensor(asc.float16, asc.TPosition.VECOUT, 8192, 1024)
    asc.data_copy(src, xg, 1024)
    asc.data_copy(dst, zg, 1024)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.set_deq_scale(SCALE)
    asc.cast_deq(dst, src, n)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, dst, 1024)


@pytest.mark.parametrize("scale", [0.5, 0.1, 3.0])
def test_int32_to_half(scale):
    rng = np.random.default_rng(1)
    x = rng.integers(-200000, 200000, 1024).astype(np.int32)
    z0 = np.zeros(1024, np.float16)
    for n in (1, 64, 333, 1024):
        z = z0.copy()
        deq32[1](x, z, n, scale)
        want = cast_deq_ref(z0, x, count=n, half_scale=scale)
        np.testing.assert_array_equal(z.view(np.uint16), want.view(np.uint16))


@asc.kernel
def deq_unset(VEC: asc.ConstExpr[bool]):
    src = asc.LocalTensor(asc.int16, asc.TPosition.VECIN, 0, 128)
    dst = asc.LocalTensor(asc.int8, asc.TPosition.VECOUT, 4096, 256)
    asc.duplicate(src, 1, 128)
    asc.cast_deq(dst, src, 128, VEC)


@pytest.mark.parametrize("vec,message", [(True, "set_deq_scale(vdeq"),
                                         (False, "set_deq_scale(scale, offset")])
def test_unset_register_stops_at_the_line(vec, message):
    with pytest.raises(asc.ValueRangeError, match=message.replace("(", r"\(")):
        deq_unset[1](vec)


def test_sanitize_and_timing():
    got, want, rep = _run(True, True, 0, n=1024, sanitize=True)
    np.testing.assert_array_equal(got, want)
    _, _, rep = _run(False, True, 0, n=128 * 32)
    cost = ASCEND910B2.vector.convert
    assert rep.pipe_busy["V"] == 32 * cost.cycles_per_repeat_int


def _compile_error(body: str, cls):
    import linecache
    src = ("def k(x: asc.GlobalAddress):\n"
           "    a = asc.LocalTensor(asc.int16, asc.TPosition.VECIN, 0, 256)\n"
           "    b = asc.LocalTensor(asc.int8, asc.TPosition.VECOUT, 4096, 256)\n"
           "    f = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, 8192, 256)\n"
           f"    {body}\n")
    name = f"<deq-test-{abs(hash(body))}>"
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)
    ns = {"asc": asc}
    exec(compile(src, name, "exec"), ns)
    with pytest.raises(cls) as info:
        asc.kernel(ns["k"])[1](np.zeros(8, np.float32))
    assert ":5:" in str(info.value), str(info.value)
    return str(info.value)


@pytest.mark.parametrize("body,cls,message", [
    ("asc.cast_deq(f, a, 64)", asc.KernelTypeError, "not int16 -> float32"),
    ("asc.cast_deq(b, a, 64, b.get_size() > 0)", asc.KernelTypeError, "compile-time"),
    ("asc.set_deq_scale(b, asc.VdeqInfo([1.0] * 16, [0] * 16, [True] * 16))",
     asc.KernelTypeError, "uint64"),
    ("asc.VdeqInfo([1.0] * 15, [0] * 16, [True] * 16)", asc.KernelTypeError, "16 values"),
])
def test_compile_errors(body, cls, message):
    assert message in _compile_error(body, cls)


@asc.kernel
def deq_far(N: asc.ConstExpr[int], AT: asc.ConstExpr[int]):
    src = asc.LocalTensor(asc.int16, asc.TPosition.VECIN, 0, 64)
    dst = asc.LocalTensor(asc.int8, asc.TPosition.VECOUT, AT, N)
    vd = asc.LocalTensor(asc.uint64, asc.TPosition.VECCALC, 1024, 16)
    asc.duplicate(src, 7, 64)
    asc.set_deq_scale(vd, asc.VdeqInfo([1.0] * 16, [0] * 16, [True] * 16))
    asc.cast_deq(dst, src, 64, True, False)     # high halves: bytes 16..31 of 4 blocks


def test_fresh_memory_reach_and_extent(monkeypatch):
    """cast_deq's writes lie inside what check_local saw: dst exactly as long as the last byte
    written runs; one element shorter stops before writing."""
    from ascendc_py.simulator import block_runner, runtime
    from test_gather import assert_fresh_beyond_dirty
    monkeypatch.setattr(block_runner, "SERIAL_SECONDS", 1e9)
    at = 160 * 1024
    deq_far[1](4 * 32, at)
    core = runtime._thread_cores.core
    assert max(int(d) for d in core.dirty) >= at + 4 * 32
    assert_fresh_beyond_dirty()
    with pytest.raises(asc.TensorExtentError):
        deq_far[1](4 * 32 - 1, at)
