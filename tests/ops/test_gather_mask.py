"""gather_mask against its NumPy reference (``ops/gather_mask.py``): built-in and tensor
patterns, normal and counter mode, strides, both widths; the count and
get_gather_mask_remain_count; errors; sanitize; timing; dst reach."""
from __future__ import annotations

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler.ops.gather_mask import gather_mask_ref
from ascendc_py.simulator.config import ASCEND910B2


@asc.kernel
def gm(x: asc.GlobalAddress, p: asc.GlobalAddress, z: asc.GlobalAddress, c: asc.GlobalAddress,
       PAT: asc.ConstExpr[int], RED: asc.ConstExpr[bool], m: int, rep: int, blk: int, srep: int,
       prep: int):
    n_x = 8192 // x.dtype.sizeof()
    xg = asc.GlobalTensor()
    pg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    cg = asc.GlobalTensor()
    xg.set_global_buffer(x, n_x)
    pg.set_global_buffer(p, 2048 // p.dtype.sizeof())
    zg.set_global_buffer(z, n_x)
    cg.set_global_buffer(c, 8)
    src = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n_x)
    pat = asc.LocalTensor(p.dtype, asc.TPosition.VECIN, 8192, 2048 // p.dtype.sizeof())
    dst = asc.LocalTensor(x.dtype, asc.TPosition.VECOUT, 16384, n_x)
    asc.data_copy(src, xg, n_x)
    asc.data_copy(pat, pg, 2048 // p.dtype.sizeof())
    asc.data_copy(dst, zg, n_x)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    params = asc.GatherMaskParams(blk, rep, srep, prep)
    if PAT == 0:
        n = asc.gather_mask(dst, src, pat, RED, m, params)
    else:
        n = asc.gather_mask(dst, src, PAT, reduce_mode=RED, mask=m, params=params,
                            gather_mask_mode=asc.GatherMaskMode.DEFAULT)
    cg.set_value(0, n)
    cg.set_value(1, asc.get_gather_mask_remain_count())
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, dst, n_x)


def _run(dtype, pat, red, m, rep, blk, srep, prep, seed=0, **launch):
    rng = np.random.default_rng(seed)
    es = np.dtype(dtype).itemsize
    x = rng.integers(0, 2**16, 8192 // 2).astype(np.uint16).view(dtype)
    ptype = np.uint16 if es == 2 else np.uint32
    p = rng.integers(0, 2**16, 2048 // 2).astype(np.uint16).view(ptype)
    z0 = np.zeros(8192 // es, dtype)
    z = z0.copy()
    c = np.zeros(8, np.int64)
    rep_ = gm[1](x, p, z, c, pat, red, m, rep, blk, srep, prep, **launch)
    want, n = gather_mask_ref(z0, x, pat if pat else p, red, m, blk, rep, srep, prep)
    return z, want, c, n, rep_


CASES = [(False, 0, 3, 1, 8, 1), (True, 300, 0, 1, 8, 1), (False, 0, 2, 2, 17, 0),
         (True, 1, 9, 1, 8, 1), (False, 0, 0, 1, 8, 1), (False, 0, 7, 0, 0, 2)]


@pytest.mark.parametrize("dtype", [np.float16, np.int16, np.float32, np.uint32])
@pytest.mark.parametrize("pat", range(8))
def test_against_reference(dtype, pat):
    for red, m, rep, blk, srep, prep in CASES:
        z, want, c, n, _ = _run(dtype, pat, red, m, rep, blk, srep, prep, seed=pat)
        view = np.uint16 if np.dtype(dtype).itemsize == 2 else np.uint32
        np.testing.assert_array_equal(z.view(view), want.view(view), f"{(red, m, rep)}")
        assert c[0] == n == c[1]


def test_builtin_patterns_select_their_lanes():
    x = np.arange(128, dtype=np.float16)
    for pat, want in ((1, x[0::2]), (2, x[1::2]), (3, x[0::4]), (4, x[1::4]), (5, x[2::4]),
                      (6, x[3::4]), (7, x)):
        out, n = gather_mask_ref(np.zeros(128, np.float16), x, pat, False, 0, 1, 1, 8, 0)
        np.testing.assert_array_equal(out[:n], want)


def test_sanitize_timing_and_reach():
    z, want, c, n, rep = _run(np.float32, 3, False, 0, 20, 1, 8, 0, sanitize=True)
    np.testing.assert_array_equal(z, want)
    _, _, _, _, rep = _run(np.float16, 7, False, 0, 20, 1, 8, 0)
    assert rep.pipe_busy["V"] == 20 * ASCEND910B2.vector.gather_mask.cycles_per_repeat_f16


@asc.kernel
def gm_small(N: asc.ConstExpr[int]):
    src = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 64)
    dst = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, 4096, N)
    asc.duplicate(src, 1.0, 64)
    asc.gather_mask(dst, src, 1, False, 0, asc.GatherMaskParams(1, 1, 8, 0))   # 32 elements


def test_dst_must_hold_the_gathered_elements():
    gm_small[1](32)
    with pytest.raises(asc.TensorExtentError):
        gm_small[1](31)


def _compile_error(body: str, cls):
    import linecache
    src = ("def k(x: asc.GlobalAddress):\n"
           "    a = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, 256)\n"
           "    f = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 4096, 256)\n"
           "    u = asc.LocalTensor(asc.uint32, asc.TPosition.VECIN, 8192, 256)\n"
           "    p = asc.GatherMaskParams()\n"
           f"    {body}\n")
    name = f"<gm-test-{abs(hash(body))}>"
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)
    ns = {"asc": asc}
    exec(compile(src, name, "exec"), ns)
    with pytest.raises(cls) as info:
        asc.kernel(ns["k"])[1](np.zeros(8, np.float32))
    assert ":6:" in str(info.value), str(info.value)
    return str(info.value)


@pytest.mark.parametrize("body,cls,message", [
    ("n = asc.gather_mask(a, a, 8, False, 0, p)", asc.KernelValueError, "outside 1..7"),
    ("n = asc.gather_mask(a, a, u, False, 0, p)", asc.KernelTypeError, "must be uint16"),
    ("n = asc.gather_mask(a, f, 1, False, 0, p)", asc.KernelTypeError, "one dtype"),
    ("n = asc.gather_mask(a, a, 1, False, 0, 3)", asc.KernelTypeError, "GatherMaskParams"),
    ("n = asc.gather_mask(a, a, 1, False, 0, asc.GatherMaskParams(1, 256))",
     asc.KernelValueError, "repeat_times is 256"),
])
def test_compile_errors(body, cls, message):
    assert message in _compile_error(body, cls)
