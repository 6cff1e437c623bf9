"""Codegen: the LLVM module's shape, and the scalar semantics of the lowering checked against
NumPy/torch (integer wrap-around, shifts, conversions, float16/bfloat16 rounding, unsigned
comparisons, NaN), plus native speed (no Python per element or per iteration)."""
from __future__ import annotations

import re
import time

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler import jit


def specs_for(kernel, *args):
    return kernel.bind(args, {})[0]


# ----------------------------------------------------------------------------- module shape
@asc.kernel
def half_math(z: asc.GlobalAddress, a: float):
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 16)
    t = asc.LocalTensor(asc.float16, asc.TPosition.VECCALC, 0, 16)
    asc.duplicate(t, a, 16)
    asc.add(t, t, t, 16)
    asc.data_copy(zg, t, 16)


def test_entry_point_signature_and_verifiable_module():
    import llvmlite.binding as llvm
    text = jit.llvm_ir_text(half_math, specs_for(half_math, np.zeros(16, np.float16), 1.0))
    m = re.search(r"define i64 @\"?(asc_kernel_half_math)\"?\(ptr[^)]*\)", text)
    assert m, text[:2000]
    mod = llvm.parse_assembly(text)
    mod.verify()
    assert mod.get_function(m.group(1)) is not None


def test_float16_scalar_conversion_uses_half():
    text = jit.llvm_ir_text(half_math, specs_for(half_math, np.zeros(16, np.float16), 1.0))
    assert "half" in text   # the float32 scalar is rounded to half before duplicate


def test_optimized_ir_is_available_and_smaller():
    specs = specs_for(half_math, np.zeros(16, np.float16), 1.0)
    raw = jit.llvm_ir_text(half_math, specs)
    opt = jit.llvm_ir_text(half_math, specs, optimized=True)
    assert "alloca" in raw and "alloca" not in opt.split("define i64")[1].split("\n}")[0]


# ----------------------------------------------------------------------------- integer semantics
@asc.kernel
def int_ops(z: asc.GlobalAddress, a: int, b: int, s: int):
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 16)
    zg.set_value(0, a * b)          # int32 wraps
    zg.set_value(1, a + b)
    zg.set_value(2, a << s)
    zg.set_value(3, a >> s)
    zg.set_value(4, -a)
    zg.set_value(5, ~a)
    zg.set_value(6, a & b | s)
    zg.set_value(7, abs(a))


def _i32(v):
    return int(np.array(v, np.int64).astype(np.int32))


@pytest.mark.parametrize("a,b,s", [(123456, 654321, 3), (-2**31, -1, 31), (2**31 - 1, 2, 1),
                                   (-5, 7, 0), (-1, 1, 5), (7, -9, 2)])
def test_int32_semantics(a, b, s):
    z = np.zeros(16, np.int32)
    int_ops[1](z, a, b, s)
    want = [_i32(a * b), _i32(a + b), _i32(a << s), a >> s, _i32(-a), ~a, _i32(a & b | s),
            _i32(abs(a))]
    assert z[:8].tolist() == want


@pytest.mark.parametrize("s", [32, 40, 100, -1])
def test_shift_counts_out_of_range_are_defined(s):
    """LLVM leaves these undefined; the lowering defines them (<<: 0, >>: the sign)."""
    z = np.zeros(16, np.int32)
    int_ops[1](z, -12345, 1, s)
    assert z[2] == 0 and z[3] == -1
    int_ops[1](z, 12345, 1, s)
    assert z[2] == 0 and z[3] == 0


@asc.kernel
def unsigned_ops(x: asc.GlobalAddress, z: asc.GlobalAddress):
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, 8)
    zg.set_global_buffer(z, 8)
    v = xg.get_value(0)            # uint32 4e9: arithmetic in int64, not negative
    zg.set_value(0, v + 1)
    zg.set_value(1, 1 if v > 1 else 0)
    zg.set_value(2, v // 3)
    zg.set_value(3, xg.get_value(1) - 1)   # 0 - 1 wraps when stored back to uint32


def test_unsigned_values_are_not_negative():
    x = np.array([4_000_000_000, 0, 0, 0, 0, 0, 0, 0], np.uint32)
    z = np.zeros(8, np.uint32)
    unsigned_ops[1](x, z)
    assert z[:4].tolist() == [4_000_000_001, 1, 4_000_000_000 // 3, 2**32 - 1]


@asc.kernel
def narrow_ints(x: asc.GlobalAddress, z: asc.GlobalAddress):
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, 32)
    zg.set_global_buffer(z, 32)
    for i in range(32):
        zg.set_value(i, xg.get_value(i) * 3 + 1)   # int8 widened to int32, stored back wrapped


def test_int8_widening_and_wrapping_store():
    x = np.arange(-16, 16, dtype=np.int8) * 7
    z = np.zeros(32, np.int8)
    narrow_ints[1](x, z)
    np.testing.assert_array_equal(z, (x.astype(np.int64) * 3 + 1).astype(np.int8))


# ----------------------------------------------------------------------------- conversions
@asc.kernel
def to_int(z: asc.GlobalAddress, x: float):
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 8)
    zg.set_value(0, int(x))
    zg.set_value(1, x)               # float32 stored into int32: truncation, saturating


@pytest.mark.parametrize("x,want", [(2.9, 2), (-2.9, -2),
                                    (1e10, 2**31 - 1),
                                    (-1e10, -(2**31)), (float("nan"), 0),
                                    (float("inf"), 2**31 - 1)])
def test_float_to_int_truncates_and_saturates(x, want):
    z = np.zeros(8, np.int32)
    to_int[1](z, x)
    assert z[0] == want and z[1] == want


@asc.kernel
def store_rounded(z: asc.GlobalAddress, x: asc.GlobalAddress, n: int):
    zg = asc.GlobalTensor()
    xg = asc.GlobalTensor()
    zg.set_global_buffer(z, n)
    xg.set_global_buffer(x, n)
    for i in range(n):
        zg.set_value(i, xg.get_value(i))


def _round_cases():
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.standard_normal(200) * 1000, rng.standard_normal(200) * 1e-3,
                        [0.0, -0.0, 65504.0, 65520.0, 1e6, -1e6, 1 + 2**-11, 1 + 3 * 2**-11,
                         np.inf, -np.inf, np.nan, 2**-24, 3e38]])
    return x.astype(np.float32)


def test_float32_to_float16_rounds_to_nearest_even():
    x = _round_cases()
    z = np.zeros(x.size, np.float16)
    store_rounded[1](z, x, x.size)
    with np.errstate(over="ignore"):
        want = x.astype(np.float16)   # 1e6 and 3e38 overflow to inf, as they should
    np.testing.assert_array_equal(z, want)


def test_float32_to_bfloat16_matches_torch():
    torch = pytest.importorskip("torch")
    x = torch.from_numpy(_round_cases())
    z = torch.zeros(x.numel(), dtype=torch.bfloat16)
    store_rounded[1](z, x, x.numel())
    assert torch.equal(z.isnan(), x.to(torch.bfloat16).isnan())
    ok = ~x.isnan()
    assert torch.equal(z[ok], x.to(torch.bfloat16)[ok])
    back = torch.zeros(x.numel(), dtype=torch.float32)
    store_rounded[1](back, z, x.numel())               # bfloat16 → float32 is exact
    assert torch.equal(back[ok], z[ok].float())


# ----------------------------------------------------------------------------- float comparisons
@asc.kernel
def nan_compare(z: asc.GlobalAddress, x: float, y: float):
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 8)
    zg.set_value(0, 1 if x != y else 0)
    zg.set_value(1, 1 if x == y else 0)
    zg.set_value(2, 1 if x < y else 0)
    zg.set_value(3, 1 if x >= y else 0)
    zg.set_value(4, 1 if not x < y else 0)


@pytest.mark.parametrize("x,y", [(float("nan"), 1.0), (1.0, float("nan")), (1.0, 1.0),
                                 (-0.0, 0.0), (2.0, 1.0)])
def test_float_comparisons_follow_ieee(x, y):
    z = np.zeros(8, np.int32)
    nan_compare[1](z, x, y)
    assert z[:5].tolist() == [int(x != y), int(x == y), int(x < y), int(x >= y),
                              int(not x < y)]


@asc.kernel
def float_minmax(z: asc.GlobalAddress, x: float, y: float):
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 8)
    zg.set_value(0, min(x, y))
    zg.set_value(1, max(x, y))


@pytest.mark.parametrize("x,y", [(1.0, 2.0), (-3.0, -4.0), (5.0, 5.0)])
def test_float_min_max(x, y):
    z = np.zeros(8, np.float32)
    float_minmax[1](z, x, y)
    assert z[:2].tolist() == [min(x, y), max(x, y)]


def test_float_min_max_with_nan_follow_python():
    z = np.zeros(8, np.float32)
    nan = float("nan")
    float_minmax[1](z, nan, 1.0)
    assert np.isnan(z[0]) and np.isnan(z[1])   # Python: min(nan, 1.0) is nan, max too


# ----------------------------------------------------------------------------- native speed
@asc.kernel
def scalar_loop(z: asc.GlobalAddress, n: int):
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 8)
    acc = 0
    for i in range(n):
        acc = (acc * 31 + i) % 1000003
    zg.set_value(0, acc)


def test_scalar_loop_runs_natively():
    """10 million iterations: a Python interpreter would take seconds."""
    z = np.zeros(8, np.int32)
    scalar_loop[1](z, 1000)
    acc = 0
    for i in range(1000):
        acc = (acc * 31 + i) % 1000003
    assert z[0] == acc
    t0 = time.perf_counter()
    scalar_loop[1](z, 10_000_000)
    assert time.perf_counter() - t0 < 2.0


def test_vector_add_runs_natively():
    from kernels_for_tests import vadd_kernel
    n = 1 << 22
    x = np.ones(n, np.float32)
    y = np.full(n, 2.0, np.float32)
    z = np.zeros(n, np.float32)
    vadd_kernel[8](x, y, z, n // 8)   # compile (or load) first
    t0 = time.perf_counter()
    vadd_kernel[8](x, y, z, n // 8)
    assert time.perf_counter() - t0 < 2.0
    assert (z == 3.0).all()


@asc.kernel
def ub_isolation(z: asc.GlobalAddress):
    """Blocks run concurrently on host threads; each must see only its own UB."""
    zg = asc.GlobalTensor()
    idx = asc.get_block_idx()
    zg.set_global_buffer(z + idx * 1024, 1024)
    t = asc.LocalTensor(asc.int32, asc.TPosition.VECCALC, 0, 1024)
    for rep in range(20):
        asc.duplicate(t, idx * 100 + rep, 1024)
        asc.adds(t, t, 1, 1024)
    asc.data_copy(zg, t, 1024)


def test_blocks_have_private_local_memory():
    blocks = 16
    z = np.zeros(blocks * 1024, np.int32)
    ub_isolation[blocks](z)
    want = np.repeat(np.arange(blocks) * 100 + 19 + 1, 1024)
    np.testing.assert_array_equal(z, want)
