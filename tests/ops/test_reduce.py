"""Reductions (reduce_*, whole_reduce_*, block_reduce_*, pair_reduce_sum) against the registry's
NumPy references, bit for bit.

Precision: every result must equal the reference exactly (NaN matches NaN). The references
implement the documented orders (ops/reduce.py): binary trees over lane positions (inactive lanes
+0.0) rounding to the dtype after every add, repeat results added in order for the count form of
reduce_sum and by further trees for its masked form; max/min give the first extreme (first NaN).
Independent checks: sums against a float64 sum within the documented first-order bound, and
max/min values/indices against np.argmax/np.argmin.

Kernels and the harness live in helpers_reduce.py (one compilation per dtype and mask form).
"""
from __future__ import annotations

import inspect

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import ascendc_py as asc
from ascendc_py.simulator.config import ASCEND910B2
from ascendc_py.compiler.ops import REGISTRY, CostClass
from ascendc_py.compiler.ops.reduce import REDUCE_OPS, whole_layout
from helpers_reduce import (DST_BYTES, FULL_SEL, REPEAT_SEL, SRC_BYTES, assert_same_bits,
                            geometry, make_dst, make_src, run_full, run_repeat)

DTYPES = [np.float16, np.float32]
SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 65504.0, -65504.0, 1e-7]


def _examples(n: int) -> int:
    return max(n, settings().max_examples) if settings().max_examples > 200 else n


# ----------------------------------------------------------------------------- registry
def test_registry_declares_every_reduction_like_pyasc():
    assert set(REDUCE_OPS) == {"reduce_sum", "reduce_max", "reduce_min", "whole_reduce_sum",
                               "whole_reduce_max", "whole_reduce_min", "block_reduce_sum",
                               "block_reduce_max", "block_reduce_min", "pair_reduce_sum"}
    for name in REDUCE_OPS:
        spec = REGISTRY[name]
        assert {d.name for d in spec.dtypes} == {"float16", "float32"}, name
        assert spec.cost in (CostClass.REDUCE, CostClass.REDUCE_MAX, CostClass.BLOCK_REDUCE,
                             CostClass.PAIR_REDUCE), name
        assert spec.reference is not None, name
        assert callable(getattr(asc, name)), name
    assert REGISTRY["whole_reduce_max"].forms[0][:7] == (
        "dst", "src", "mask", "repeat_time", "dst_rep_stride", "src_blk_stride",
        "src_rep_stride")
    assert REGISTRY["block_reduce_sum"].forms[0][2:4] == ("repeat", "mask")
    assert REGISTRY["pair_reduce_sum"].forms[0][2:4] == ("repeat_time", "mask")
    assert REGISTRY["reduce_max"].forms == (
        ("dst", "src", "shared_tmp_buffer", "count", "cal_index"),
        ("dst", "src", "shared_tmp_buffer", "mask", "repeat_time", "src_rep_stride",
         "cal_index"))
    assert [m.name for m in asc.ReduceOrder] == ["ORDER_VALUE_INDEX", "ORDER_INDEX_VALUE",
                                                 "ORDER_ONLY_VALUE", "ORDER_ONLY_INDEX"]


# ----------------------------------------------------------------------------- fixed cases
def masks_for(dtype):
    esize, epr, _ = geometry(dtype)
    bits = ([0xF0F0F0F0F0F0F0F1, 0x8000000000001234] if epr == 128 else [0xF0F0F0F0F0F0F0F1])
    return [epr, 1, 37, bits]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,order", REPEAT_SEL, ids=[f"{n}-{o.name if o is not None else ''}"
                                                        for n, o in REPEAT_SEL])
def test_repeat_ops_fixed(name, order, dtype):
    rng = np.random.default_rng(len(name) + 7 * (order or 0))
    x = make_src(rng, dtype, specials=[(0.01, -0.0), (0.02, 0.0)])
    z0 = make_dst(rng, dtype)
    for mask in masks_for(dtype):
        for repeat, dst_rep, src_blk, src_rep in ((1, 1, 1, 8), (5, 1, 1, 8), (255, 1, 1, 8),
                                                  (7, 3, 2, 17), (4, 0, 0, 0), (3, 2, 1, 1)):
            got, want, _ = run_repeat(name, order, x, z0, mask, repeat, dst_rep, src_blk, src_rep)
            assert_same_bits(got, want, f"{name} {order} {dtype.__name__} mask={mask} "
                                        f"r={repeat} strides={dst_rep, src_blk, src_rep}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", FULL_SEL)
def test_full_reductions_fixed(name, dtype):
    esize, epr, epb = geometry(dtype)
    rng = np.random.default_rng(3)
    x = make_src(rng, dtype)
    z0 = make_dst(rng, dtype)
    for count in (1, 7, epb, epr - 1, epr, epr + 1, 3 * epr + 5, 1000, SRC_BYTES // esize):
        for cal in (False, True):
            got, want, _ = run_full(name, x, z0, count=count, cal_index=cal)
            assert_same_bits(got, want, f"{name} count={count} cal_index={cal}")
    for mask in masks_for(dtype):
        for repeat, src_rep in ((1, 8), (2, 8), (65, 8), (300, 4), (129, 1), (3, 0)):
            got, want, _ = run_full(name, x, z0, mask=mask, repeat=repeat, src_rep=src_rep,
                                    cal_index=True)
            assert_same_bits(got, want, f"{name} mask={mask} repeat={repeat} stride={src_rep}")


# ----------------------------------------------------------------------------- hypothesis
def _mask(draw, dtype):
    _, epr, _ = geometry(dtype)
    if draw(st.booleans()):
        return draw(st.integers(1, epr))
    words = [draw(st.integers(0, 2**64 - 1)) for _ in range(2 if epr == 128 else 1)]
    assume(any(words))
    return words


@st.composite
def repeat_cases(draw):
    name, order = draw(st.sampled_from(REPEAT_SEL))
    dtype = draw(st.sampled_from(DTYPES))
    esize, epr, epb = geometry(dtype)
    counter = draw(st.integers(0, 4)) == 0
    mask = draw(st.integers(0, 40 * epr)) if counter else _mask(draw, dtype)
    repeat = draw(st.integers(0, 255))
    src_blk, src_rep = draw(st.integers(0, 12)), draw(st.integers(0, 24))
    dst_rep = draw(st.integers(0, 4))
    reps = -(-mask // epr) if counter else repeat
    src_ext = ((reps - 1) * src_rep + 7 * src_blk + 1) * 32
    if name.startswith("whole"):
        unit = whole_layout(name[-3:], order if order is not None else 0, esize)[0]
        dst_ext = ((reps - 1) * dst_rep + 1) * unit
    elif name.startswith("block"):
        dst_ext = ((reps - 1) * dst_rep + 1) * 8 * esize
    else:
        dst_ext = ((reps - 1) * dst_rep + 1) * 128
    assume(src_ext <= SRC_BYTES and dst_ext <= DST_BYTES)
    return name, order, dtype, mask, repeat, dst_rep, src_blk, src_rep, counter


@pytest.mark.fuzz
@settings(deadline=None, max_examples=_examples(120), suppress_health_check=list(HealthCheck))
@given(case=repeat_cases(), seed=st.integers(0, 2**32 - 1),
       scale=st.sampled_from([1.0, 1e-3, 300.0, 3e4]),
       specials=st.lists(st.tuples(st.floats(0, 1), st.sampled_from(SPECIALS)), max_size=5))
def test_repeat_ops_random(case, seed, scale, specials):
    """Masks (contiguous, bit, counter mode), repeats 0..255, block/repeat strides, data with
    infinities, NaNs, signed zeros and float16 overflow."""
    name, order, dtype, mask, repeat, dst_rep, src_blk, src_rep, counter = case
    rng = np.random.default_rng(seed)
    x = make_src(rng, dtype, scale, specials)
    z0 = make_dst(rng, dtype)
    got, want, _ = run_repeat(name, order, x, z0, mask, repeat, dst_rep, src_blk, src_rep,
                              counter)
    assert_same_bits(got, want, f"{case}")


@st.composite
def full_cases(draw):
    name = draw(st.sampled_from(FULL_SEL))
    dtype = draw(st.sampled_from(DTYPES))
    esize, epr, epb = geometry(dtype)
    cal = draw(st.booleans())
    if draw(st.booleans()):
        return name, dtype, dict(count=draw(st.integers(0, SRC_BYTES // esize)), cal_index=cal)
    mask = _mask(draw, dtype)
    repeat, src_rep = draw(st.integers(0, 600)), draw(st.integers(0, 16))
    assume(((repeat - 1) * src_rep + 8) * 32 <= SRC_BYTES)
    return name, dtype, dict(mask=mask, repeat=repeat, src_rep=src_rep, cal_index=cal)


@pytest.mark.fuzz
@settings(deadline=None, max_examples=_examples(80), suppress_health_check=list(HealthCheck))
@given(case=full_cases(), seed=st.integers(0, 2**32 - 1),
       scale=st.sampled_from([1.0, 1e-3, 300.0]),
       specials=st.lists(st.tuples(st.floats(0, 1), st.sampled_from(SPECIALS)), max_size=3))
def test_full_reductions_random(case, seed, scale, specials):
    name, dtype, kw = case
    rng = np.random.default_rng(seed)
    x = make_src(rng, dtype, scale, specials)
    z0 = make_dst(rng, dtype)
    got, want, _ = run_full(name, x, z0, **kw)
    assert_same_bits(got, want, f"{name} {dtype.__name__} {kw}")
    if kw.get("count") and name != "reduce_sum" and not specials:   # independent check
        n = kw["count"]
        k = int(np.argmax(x[:n]) if name == "reduce_max" else np.argmin(x[:n]))
        assert got[0] == x[k]
        if kw["cal_index"]:
            assert int(got.view(np.uint16 if dtype == np.float16 else np.uint32)[1]) == \
                k & (0xFFFF if dtype == np.float16 else 0xFFFFFFFF)


@pytest.mark.parametrize("dtype", DTYPES)
def test_sums_within_the_documented_bound_of_the_exact_sum(dtype):
    esize, epr, _ = geometry(dtype)
    u = 2.0 ** -11 if dtype == np.float16 else 2.0 ** -24
    rng = np.random.default_rng(8)
    x = make_src(rng, dtype)
    z0 = make_dst(rng, dtype)
    for n in (100, 1000, 20000):
        got, _, _ = run_full("reduce_sum", x, z0, count=n)
        xs = x[:n].astype(np.float64)
        depth = np.log2(epr) + -(-n // epr)
        assert abs(float(got[0]) - xs.sum()) <= 1.01 * depth * u * np.abs(xs).sum()


# ----------------------------------------------------------------------------- documented semantics
def test_whole_reduce_max_index_is_stored_in_the_value_bits():
    """The ReduceRepeat doc example: 11 at lane 52 of a half repeat reads back as 3.09944e-06."""
    x = np.ones(SRC_BYTES // 2, np.float16)
    x[52], x[128 + 100], x[256 + 19] = 11, 12, 13
    z0 = np.zeros(DST_BYTES // 2, np.float16)
    for order, want in ((asc.ReduceOrder.ORDER_VALUE_INDEX, [11, 52, 12, 100, 13, 19]),
                        (asc.ReduceOrder.ORDER_INDEX_VALUE, [52, 11, 100, 12, 19, 13])):
        got, ref, _ = run_repeat("whole_reduce_max", order, x, z0, 128, 3, 1, 1, 8)
        assert_same_bits(got, ref)
        vals = [float(v) if k % 2 == (order == 1) else int(got.view(np.uint16)[k])
                for k, v in enumerate(got[:6])]
        assert vals == want
    assert np.float16(got[0]) == np.array([52], np.uint16).view(np.float16)[0]
    assert abs(float(np.array([52], np.uint16).view(np.float16)[0]) - 3.09944e-06) < 1e-10
    got, _, _ = run_repeat("whole_reduce_max", asc.ReduceOrder.ORDER_ONLY_INDEX, x, z0, 128, 3,
                           1, 1, 8)
    assert list(got.view(np.uint32)[:3]) == [52, 100, 19]


def test_float16_sum_is_a_pairwise_tree_rounding_after_every_add():
    """[2048, 1, 1, 1]: the tree gives (2048+1) + (1+1) = 2048 + 2 = 2050; a left-to-right sum
    would stay at 2048 (ulp(2048) = 2). Docs' overflow example: 60000+60000 overflows to inf in
    the default non-saturating mode."""
    x = np.zeros(SRC_BYTES // 2, np.float16)
    x[:4] = [2048, 1, 1, 1]
    x[128:132] = [60000, 60000, -30000, 100]
    z0 = np.zeros(DST_BYTES // 2, np.float16)
    got, want, _ = run_repeat("whole_reduce_sum", None, x, z0, 4, 2, 1, 1, 8)
    assert_same_bits(got, want)
    assert got[0] == 2050 and got[1] == np.inf
    got, _, _ = run_repeat("block_reduce_sum", None, x, z0, 128, 1, 1, 1, 8)
    assert got[0] == 2050


def test_reduce_sum_count_form_adds_repeats_in_order_masked_form_by_tree():
    """Repeat sums [2048, 1, 1, 1]: in order (count form) 2048; as a tree (masked form) 2050."""
    x = np.zeros(SRC_BYTES // 2, np.float16)
    x[[0, 128, 256, 384]] = [2048, 1, 1, 1]
    z0 = np.zeros(DST_BYTES // 2, np.float16)
    got, want, _ = run_full("reduce_sum", x, z0, count=512)
    assert_same_bits(got, want)
    assert got[0] == 2048
    got, want, _ = run_full("reduce_sum", x, z0, mask=128, repeat=4, src_rep=8)
    assert_same_bits(got, want)
    assert got[0] == 2050
    ones = np.ones(SRC_BYTES // 2, np.float16)          # the ReduceSum doc examples
    assert run_full("reduce_sum", ones, z0, mask=128, repeat=65, src_rep=8)[0][0] == 8320
    assert run_full("reduce_sum", ones, z0, count=288)[0][0] == 288


@pytest.mark.parametrize("dtype", DTYPES)
def test_max_min_ties_signed_zeros_and_nan(dtype):
    x = np.zeros(SRC_BYTES // np.dtype(dtype).itemsize, dtype)
    z0 = make_dst(np.random.default_rng(0), dtype)
    x[:6] = [-0.0, 0.0, 3, 5, 5, -7]
    x[6:8] = [-7, 3]
    as_int = np.uint16 if dtype == np.float16 else np.uint32
    got, want, _ = run_full("reduce_max", x, z0, count=8, cal_index=True)
    assert_same_bits(got, want)
    assert got[0] == 5 and got.view(as_int)[1] == 3        # the first of the two maxima
    got, _, _ = run_full("reduce_min", x, z0, count=8, cal_index=True)
    assert got[0] == -7 and got.view(as_int)[1] == 5
    got, _, _ = run_full("reduce_max", x, z0, count=2, cal_index=True)
    assert np.signbit(got[0]) and got.view(as_int)[1] == 0  # -0.0 == +0.0: the first wins
    x[4] = np.nan
    for name in ("reduce_max", "reduce_min"):
        got, _, _ = run_full(name, x, z0, count=8, cal_index=True)
        assert np.isnan(got[0]) and got.view(as_int)[1] == 4


@pytest.mark.parametrize("dtype", DTYPES)
def test_masked_off_groups_and_nops_leave_dst_untouched(dtype):
    esize, epr, epb = geometry(dtype)
    rng = np.random.default_rng(4)
    x = make_src(rng, dtype)
    z0 = make_dst(rng, dtype)
    # block 1 of every repeat has no active lane: its result keeps the old value
    bits = (2**epb - 1) | ((2**64 - 1) << (2 * epb) & (2**64 - 1))
    mask = [bits, 2**64 - 1] if epr == 128 else [bits]
    got, want, _ = run_repeat("block_reduce_sum", None, x, z0, mask, 3, 1, 1, 8)
    assert_same_bits(got, want)
    assert got[1] == z0[1] and got[9] == z0[9] and got[0] != z0[0]
    # pairs whose two lanes are inactive are skipped; a half-active pair gives the active lane
    got, want, _ = run_repeat("pair_reduce_sum", None, x, z0, 3, 2, 1, 1, 8)
    assert_same_bits(got, want)
    assert got[0] == x[0] + x[1] and got[1] == x[2] + 0 and got[2] == z0[2]
    for name, order in REPEAT_SEL:   # repeat 0, and counter mode with 0 elements: NOPs
        assert_same_bits(run_repeat(name, order, x, z0, epr, 0, 1, 1, 8)[0], z0)
        assert_same_bits(run_repeat(name, order, x, z0, 0, 9, 1, 1, 8, counter=True)[0], z0)
    for name in FULL_SEL:            # count 0, repeat 0 and mask 0: NOPs
        assert_same_bits(run_full(name, x, z0, count=0)[0], z0)
        assert_same_bits(run_full(name, x, z0, mask=epr, repeat=0)[0], z0)
        assert_same_bits(run_full(name, x, z0, mask=0, repeat=3)[0], z0)


def test_is_set_mask_false_uses_the_mask_register():
    @asc.kernel
    def k(x: asc.GlobalAddress, z: asc.GlobalAddress):
        xg = asc.GlobalTensor()
        zg = asc.GlobalTensor()
        xg.set_global_buffer(x, 256)
        zg.set_global_buffer(z, 16)
        a = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 256)
        c = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, 1024, 16)
        asc.data_copy(a, xg, 256)
        asc.duplicate(c, 0.0, 16)
        asc.set_vector_mask(3, dtype=asc.float32)
        asc.whole_reduce_sum(c, a, 64, 2, 1, 1, 8, is_set_mask=False)
        asc.pair_reduce_sum(c[8:], a, 1, 64, 1, 1, 8, False)
        asc.reset_mask()
        asc.data_copy(zg, c, 16)

    x = np.arange(256, dtype=np.float32)
    z = np.zeros(16, np.float32)
    k[1](x, z)
    assert list(z[:2]) == [0 + 1 + 2, 64 + 65 + 66]
    assert list(z[8:11]) == [1, 2, 0]


# ----------------------------------------------------------------------------- timing
@pytest.mark.parametrize("dtype", DTYPES)
def test_timing_repeat_ops_cost_one_reduce_instruction(dtype):
    _, epr, _ = geometry(dtype)
    rng = np.random.default_rng(1)
    x, z0 = make_src(rng, dtype), make_dst(rng, dtype)
    for name, order in (REPEAT_SEL[0], REPEAT_SEL[1], REPEAT_SEL[9], REPEAT_SEL[-1]):
        for repeat in (1, 10, 255):
            _, _, rep = run_repeat(name, order, x, z0, epr, repeat, 1, 1, 8)
            # msKPP: CADD 7 (fp16) / 3 (fp32), CMAX/CMIN 7, CGADD/CGMAX 7 / 1, CPADD 1 cycles
            # per repeat; at least 3 cycles an instruction
            vec = ASCEND910B2.vector
            cost = (vec.pair_reduce if name.startswith("pair") else
                    vec.block_reduce if name.startswith("block") else
                    vec.reduce_max if name.endswith(("max", "min")) else vec.reduce)
            rate = int(cost.cycles_per_repeat(np.dtype(dtype).name))
            assert rep.pipe_busy["V"] == max(rate * repeat, vec.min_instruction_cycles)
            assert rep.instructions[name] == 1


def test_timing_reduce_sum_and_max_follow_the_hardware_sequence():
    rng = np.random.default_rng(1)
    x, z0 = make_src(rng, np.float16), make_dst(rng, np.float16)
    _, _, rep = run_full("reduce_sum", x, z0, count=1000)    # one counter-mode vcadd, 8 repeats
    assert rep.pipe_busy["V"] == 7 * 8
    assert rep.instructions["reduce_sum"] == 8    # vcadd, V→S, SetValue, S→V, S→MTE3 flags
    _, _, rep = run_full("reduce_sum", x, z0, mask=128, repeat=200, src_rep=8)
    assert rep.pipe_busy["V"] == 7 * (200 + 2 + 1)   # 200 repeats, 2 over the sums, 1 final
    _, _, rep = run_full("reduce_max", x, z0, mask=128, repeat=200, src_rep=8, cal_index=True)
    assert rep.pipe_busy["V"] == 7 * (200 + 4 + 1)   # 200, ceil(400/128) pairs, 1 final
    # the scalar unit waits for the vector result: the launch outlasts the vector work
    assert rep.cycles > rep.pipe_busy["V"] and rep.stalls.get("flag wait", 0) > 0


# ----------------------------------------------------------------------------- errors
@asc.kernel
def bad_kernel(x: asc.GlobalAddress, CASE: asc.ConstExpr[str]):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 512)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, 512)
    c = asc.LocalTensor(x.dtype, asc.TPosition.VECOUT, 4096, 64)
    h = asc.LocalTensor(asc.float16, asc.TPosition.VECCALC, 8192, 512)
    f = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 16384, 256)
    if CASE == "dtype_whole":
        asc.whole_reduce_sum(c, a, 64, 1, 1, 1, 8)  # whole-dtype
    elif CASE == "dtype_block":
        asc.block_reduce_max(c, a, 1, 64, 1, 1, 8)  # block-dtype
    elif CASE == "dtype_pair":
        asc.pair_reduce_sum(c, a, 1, 64, 1, 1, 8)  # pair-dtype
    elif CASE == "dtype_full":
        asc.reduce_min(c, a, a, 64, True)  # full-dtype
    elif CASE == "mixed":
        asc.reduce_sum(h, f, h, 64)  # mixed-line
    elif CASE == "repeat":
        asc.whole_reduce_min(f, f, 64, 300, 1, 1, 8)  # repeat-line
    elif CASE == "bits":
        asc.block_reduce_sum(f, f, 1, [1, 2, 3], 1, 1, 8)  # bits-line
    elif CASE == "order":
        asc.whole_reduce_max(h, h, 128, 1, 1, 1, 8, 1)  # order-line
    elif CASE == "cal_index":
        asc.reduce_sum(h, h, h, 64, cal_index=True)  # kwarg-line
    elif CASE == "gm":
        asc.reduce_max(h, xg, h, 64)  # gm-line
    elif CASE == "mask_range":
        asc.whole_reduce_sum(h, h, 200, 1, 1, 1, 8)  # mask-line
    elif CASE == "ub_range":
        asc.pair_reduce_sum(f[49000:], f, 2, 64, 1, 1, 8)  # ub-line
    else:
        asc.block_reduce_sum(f, f[2:], 1, 64, 1, 1, 8)  # align-line


def _line(marker: str) -> int:
    lines, first = inspect.getsourcelines(bad_kernel.fn)
    return first + next(i for i, t in enumerate(lines) if marker in t)


ERRORS = [
    ("dtype_whole", np.int16, asc.KernelTypeError, "whole-dtype",
     ["asc.whole_reduce_sum does not support int16", "supported: float16, float32"]),
    ("dtype_block", np.int32, asc.KernelTypeError, "block-dtype",
     ["asc.block_reduce_max does not support int32"]),
    ("dtype_pair", np.uint16, asc.KernelTypeError, "pair-dtype",
     ["asc.pair_reduce_sum does not support uint16"]),
    ("dtype_full", np.int32, asc.KernelTypeError, "full-dtype",
     ["asc.reduce_min does not support int32"]),
    ("mixed", np.float32, asc.KernelTypeError, "mixed-line", ["src is float32 but dst is float16"]),
    ("repeat", np.float32, asc.KernelValueError, "repeat-line", ["repeat_time is 300", "0..255"]),
    ("bits", np.float32, asc.KernelTypeError, "bits-line", ["bit mask for float32", "1 or 2 uint64", "got 3"]),
    ("order", np.float32, asc.KernelTypeError, "order-line", ["ReduceOrder"]),
    ("cal_index", np.float32, asc.KernelTypeError, "kwarg-line",
     ["unexpected keyword argument 'cal_index'"]),
    ("gm", np.float32, asc.KernelTypeError, "gm-line", ["src must be a LocalTensor"]),
    ("mask_range", np.float32, asc.KernelRuntimeError, "mask-line", ["whole_reduce_sum", "200"]),
    ("ub_range", np.float32, asc.TensorExtentError, "ub-line",
     ["pair_reduce_sum dst 'f[49000:]'", "the tensor has 0 elements", "in UB"]),
    ("align", np.float32, asc.LocalMemoryError, "align-line",
     ["block_reduce_sum src", "not 32-byte aligned"]),
]


@pytest.mark.parametrize("case,dtype,cls,marker,words", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_name_the_problem_and_the_line(case, dtype, cls, marker, words):
    x = np.zeros(512, dtype)
    with pytest.raises(cls) as info:
        bad_kernel[1](x, case)
    text = str(info.value)
    assert f":{_line(marker)}:" in text.splitlines()[0], text
    assert marker in text, text   # the source line is shown
    for w in words:
        assert w in text, text
