"""repeat_reduce_sum against its NumPy reference (whole_reduce_sum's, pyasc's argument order),
bit for bit, over dtypes, masks, strides and counter mode; its compile errors; its timing (the
CADD class, as whole_reduce_sum)."""
from __future__ import annotations

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler.ops import REGISTRY, CostClass
from ascendc_py.simulator.config import ASCEND910B2
from helpers_reduce import DST_BYTES, SRC_BYTES, assert_same_bits, make_dst, make_src


@asc.kernel
def rrs_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, p: asc.GlobalAddress):
    n_src = SRC_BYTES // x.dtype.sizeof()
    n_dst = DST_BYTES // x.dtype.sizeof()
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    pg = asc.GlobalTensor()
    xg.set_global_buffer(x, n_src)
    zg.set_global_buffer(z, n_dst)
    pg.set_global_buffer(p, 8)
    src = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n_src)
    dst = asc.LocalTensor(x.dtype, asc.TPosition.VECOUT, SRC_BYTES, n_dst)
    asc.data_copy(src, xg, n_src)
    asc.data_copy(dst, zg, n_dst)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    if pg.get_value(6) != 0:
        asc.set_mask_count()
    asc.repeat_reduce_sum(dst, src, pg.get_value(0), pg.get_value(1), pg.get_value(2),
                          src_blk_stride=pg.get_value(3), dst_rep_stride=pg.get_value(4),
                          src_rep_stride=pg.get_value(5))
    asc.set_mask_norm()
    asc.reset_mask()
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, dst, n_dst)


def run(x, z0, repeat, mask, dst_blk, src_blk, dst_rep, src_rep, counter=False, **launch):
    p = np.array([repeat, mask, dst_blk, src_blk, dst_rep, src_rep, int(counter), 0], np.int64)
    z = z0.copy()
    report = rrs_kernel[1](x, z, p, **launch)
    want = REGISTRY["repeat_reduce_sum"].reference(z0, x, repeat, mask, dst_blk, src_blk,
                                                   dst_rep, src_rep, counter=counter)
    return z, want, report


def test_registry():
    spec = REGISTRY["repeat_reduce_sum"]
    assert spec.forms == (("dst", "src", "repeat_time", "mask", "dst_blk_stride",
                           "src_blk_stride", "dst_rep_stride", "src_rep_stride",
                           "is_set_mask"),)
    assert spec.cost == CostClass.REDUCE
    assert {d.name for d in spec.dtypes} == {"float16", "float32"}
    assert callable(asc.repeat_reduce_sum)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_against_reference(dtype):
    rng = np.random.default_rng(3)
    x, z0 = make_src(rng, dtype), make_dst(rng, dtype)
    epr = 256 // np.dtype(dtype).itemsize
    for mask in (epr, 1, 37, epr - 1):
        for repeat, dst_blk, src_blk, dst_rep, src_rep in (
                (1, 1, 1, 1, 8), (5, 0, 1, 1, 8), (255, 7, 1, 1, 8), (7, 1, 2, 3, 17),
                (4, 1, 0, 0, 0), (0, 1, 1, 1, 8)):
            got, want, _ = run(x, z0, repeat, mask, dst_blk, src_blk, dst_rep, src_rep)
            assert_same_bits(got, want, f"{dtype.__name__} mask={mask} r={repeat}")


def test_dst_blk_stride_has_no_effect_and_matches_whole_reduce_sum():
    rng = np.random.default_rng(4)
    x, z0 = make_src(rng, np.float32), make_dst(rng, np.float32)
    a, _, _ = run(x, z0, 9, 50, 0, 1, 2, 8)
    b, _, _ = run(x, z0, 9, 50, 200, 1, 2, 8)
    assert_same_bits(a, b, "dst_blk_stride")
    whole = REGISTRY["whole_reduce_sum"].reference(z0, x, 50, 9, 2, 1, 8)
    assert_same_bits(a, whole, "whole_reduce_sum")


def test_counter_mode():
    rng = np.random.default_rng(5)
    x, z0 = make_src(rng, np.float16), make_dst(rng, np.float16)
    for total in (1, 128, 300):
        got, want, _ = run(x, z0, 1, total, 1, 1, 1, 8, counter=True)
        assert_same_bits(got, want, f"counter {total}")


def test_timing_is_one_cadd_instruction():
    rng = np.random.default_rng(6)
    cost = ASCEND910B2.vector.reduce
    for dtype, rate in ((np.float16, cost.cycles_per_repeat_f16),
                        (np.float32, cost.cycles_per_repeat_f32)):
        x, z0 = make_src(rng, dtype), make_dst(rng, dtype)
        _, _, rep = run(x, z0, 20, 256 // np.dtype(dtype).itemsize, 1, 1, 1, 8)
        assert rep.pipe_busy["V"] == 20 * rate


def test_sanitize_and_extent():
    rng = np.random.default_rng(7)
    x, z0 = make_src(rng, np.float32), make_dst(rng, np.float32)
    got, want, _ = run(x, z0, 3, 64, 1, 1, 1, 8, sanitize=True)
    assert_same_bits(got, want, "sanitize")
    with pytest.raises(asc.TensorExtentError):      # repeats reach past src
        run(x, z0, 255, 64, 1, 1, 1, 255)


def _compile_error(body, cls):
    import linecache
    src = ("def k(x: asc.GlobalAddress):\n"
           "    a = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, 1024)\n"
           "    i = asc.LocalTensor(asc.int16, asc.TPosition.VECIN, 4096, 1024)\n"
           f"    {body}\n")
    name = f"<rrs-test-{abs(hash(body))}>"
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)
    ns = {"asc": asc}
    exec(compile(src, name, "exec"), ns)
    with pytest.raises(cls) as info:
        asc.kernel(ns["k"])[1](np.zeros(8, np.float16))
    assert ":4:" in str(info.value)
    return str(info.value)


@pytest.mark.parametrize("body,cls,message", [
    ("asc.repeat_reduce_sum(a, a, 1, [1, 2], 1, 1, 1, 8)", asc.KernelTypeError,
     "contiguous mask"),
    ("asc.repeat_reduce_sum(i, i, 1, 128, 1, 1, 1, 8)", asc.KernelTypeError,
     "does not support int16"),
    ("asc.repeat_reduce_sum(a, a, 256, 128, 1, 1, 1, 8)", asc.KernelValueError,
     "repeat_time is 256"),
])
def test_compile_errors(body, cls, message):
    assert message in _compile_error(body, cls)


def test_fresh_memory_bookkeeping(monkeypatch):
    from ascendc_py.simulator import block_runner
    from test_gather import assert_fresh_beyond_dirty
    monkeypatch.setattr(block_runner, "SERIAL_SECONDS", 1e9)
    rng = np.random.default_rng(8)
    x, z0 = make_src(rng, np.float16), make_dst(rng, np.float16)
    run(x, z0, 200, 128, 1, 1, 30, 8)
    assert_fresh_beyond_dirty()
