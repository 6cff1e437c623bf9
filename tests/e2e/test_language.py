"""The scalar kernel language end to end, checked against Python itself.

Most scalar logic lives in device functions (``@asc.kernel`` functions called from a kernel,
inlined). ``f.fn`` is the undecorated Python function, so the reference for each device
function is Python running the very same source: floor ``//`` and ``%``, chained comparisons,
loops with break/continue, early returns. Values stay small enough that int32 never overflows.
"""
from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ascendc_py as asc

SCALE = 3                      # module-level constants are compile-time values
OFFSETS = (10, -20, 30, -40)   # a module-level tuple, indexed with static_range
NEG = -7


# ----------------------------------------------------------------------------- device functions
@asc.kernel
def f_floor(a, b):
    return a // b * 100000 + a % b


@asc.kernel
def f_mixed(a, b, c):
    return (a + b) * c - a // 3 + b % 7 - (-a) // 4 + (c % -5) * SCALE


@asc.kernel
def f_bits(a, b):
    return ((a & b) | (a ^ 0x55)) + (a << 3) - (a >> 2) + (~b)


@asc.kernel
def f_minmax(a, b, c):
    return min(a, b, c) + 2 * max(a, b) - abs(c) + min(a, 5)


@asc.kernel
def f_compare(a, b, c):
    r = 0
    if a < b <= c:
        r += 1
    if a == b or not b > c:
        r += 2
    if a != c and b >= a:
        r += 4
    if 0 < a < 100 and not (b < 0 or c < 0):
        r += 8
    r += 16 if a > b else 32
    return r


@asc.kernel
def f_elif(x):
    if x < -10:
        r = 1
    elif x < 0:
        r = 2
    elif x == 0:
        r = 3
    else:
        r = 4
    return r


@asc.kernel
def f_loops(n):
    total = 0
    for i in range(n):
        if i % 3 == 0:
            continue
        for j in range(i, n, 2):
            if j > i + 6:
                break
            total += i * j
    return total


@asc.kernel
def f_collatz(n):
    steps = 0
    while n != 1 and steps < 500:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


@asc.kernel
def f_first_square_above(n):
    for i in range(n + 2):
        if i * i > n:
            return i
    return -1


@asc.kernel
def f_negative_step(a):
    total = 0
    for i in range(a, -a - 3, -3):
        total = (total * 3 + i) % 10007
    k = a
    while True:
        k -= 1
        if k % 5 == 0:
            continue
        if k < -a:
            break
        total += k
    return total


@asc.kernel
def f_keywords(a, b, c=5):
    return a * 100 + b * 10 + c


INT_FUNCS = (f_floor, f_mixed, f_bits, f_minmax, f_compare, f_elif, f_loops, f_collatz,
             f_first_square_above, f_negative_step)


@asc.kernel
def int_suite(out: asc.GlobalAddress, a: int, b: int, c: int, n: int):
    og = asc.GlobalTensor()
    og.set_global_buffer(out, 32)
    og.set_value(0, f_floor(a, b))
    og.set_value(1, f_mixed(a, b, c))
    og.set_value(2, f_bits(a, b))
    og.set_value(3, f_minmax(a, b, c))
    og.set_value(4, f_compare(a, b, c))
    og.set_value(5, f_elif(a))
    og.set_value(6, f_loops(n))
    og.set_value(7, f_collatz(n + 1))
    og.set_value(8, f_first_square_above(n))
    og.set_value(9, f_negative_step(n))
    og.set_value(10, f_keywords(c=a, a=b, b=c))
    og.set_value(11, f_keywords(b, c))
    og.set_value(12, asc.ceildiv(n + 1, 4))
    og.set_value(13, int(a > b) + int(True))


def int_reference(a, b, c, n):
    out = [f.fn(*args) for f, args in zip(INT_FUNCS, [(a, b), (a, b, c), (a, b), (a, b, c),
                                                     (a, b, c), (a,), (n,), (n + 1,), (n,),
                                                     (n,)])]
    out += [f_keywords.fn(c=a, a=b, b=c), f_keywords.fn(b, c), asc.ceildiv(n + 1, 4),
            int(a > b) + 1]
    return out


small = st.integers(-1000, 1000)


@settings(deadline=None, max_examples=40)
@given(a=small, b=small.filter(lambda v: v != 0), c=small, n=st.integers(0, 40))
def test_int_semantics_match_python(a, b, c, n):
    out = np.zeros(32, np.int32)
    int_suite[1](out, a, b, c, n)
    assert out[:14].tolist() == int_reference(a, b, c, n)


@asc.kernel
def divmod_kernel(out: asc.GlobalAddress, a: int, b: int):
    og = asc.GlobalTensor()
    og.set_global_buffer(out, 8)
    og.set_value(0, a // b)
    og.set_value(1, a % b)


@pytest.mark.parametrize("a,b", [(-7, 2), (7, -2), (-7, -2), (-1, 3), (0, -5), (-6, 3),
                                 (2**31 - 1, -1), (-(2**31) + 1, 7), (-(2**31), 1),
                                 (-(2**31), -3), (5, 2**31 - 1)])
def test_floor_division_and_modulo_at_the_edges(a, b):
    out = np.zeros(8, np.int32)
    divmod_kernel[1](out, a, b)
    assert out[:2].tolist() == [a // b, a % b]


# ----------------------------------------------------------------------------- float scalars
@asc.kernel
def float_suite(out: asc.GlobalAddress, x: float, y: float, a: int):
    og = asc.GlobalTensor()
    og.set_global_buffer(out, 16)
    og.set_value(0, x / y)
    og.set_value(1, x // y)
    og.set_value(2, x % y)
    og.set_value(3, abs(x) + min(x, y) * max(x, 1.5))
    og.set_value(4, float(a) / 4)
    og.set_value(5, int(x))           # truncation toward zero
    og.set_value(6, x * x - y if x < y else -x)
    og.set_value(7, a + x)            # int + float is float
    og.set_value(8, x ** 2)
    og.set_value(9, 1.0 if x <= y < 2 * x else 0.0)


def float_reference(x, y, a):
    return [x / y, x // y, x % y, abs(x) + min(x, y) * max(x, 1.5), float(a) / 4, int(x),
            x * x - y if x < y else -x, a + x, x ** 2, 1.0 if x <= y < 2 * x else 0.0]


quarters = st.integers(-400, 400).map(lambda k: k / 4)


@settings(deadline=None, max_examples=40)
@given(x=quarters, y=quarters.filter(lambda v: v != 0), a=st.integers(-10**6, 10**6))
def test_float_semantics_match_python(x, y, a):
    out = np.zeros(16, np.float32)
    float_suite[1](out, x, y, a)
    want = np.array(float_reference(x, y, a), np.float64).astype(np.float32)
    np.testing.assert_allclose(out[:10], want, rtol=2e-7, atol=0)  # float32 vs float64: 1 ulp
    assert out[1] == math.floor(x / y) and out[5] == int(x)


# ----------------------------------------------------------------------------- compile time
@asc.kernel
def const_kernel(out: asc.GlobalAddress, K: asc.ConstExpr[int], FLAG: asc.ConstExpr[bool]):
    og = asc.GlobalTensor()
    og.set_global_buffer(out, 16)
    og.set_value(0, K * SCALE)
    og.set_value(1, NEG // 2)
    og.set_value(2, NEG % 3)
    og.set_value(3, K // -4)
    og.set_value(4, K % -4)
    if FLAG:
        og.set_value(5, 1)
    else:
        og.set_value(5, 2)
    total = 0
    for i in asc.static_range(4):
        total += OFFSETS[i] * (i + 1)
    og.set_value(6, total)
    acc = 0
    for i in asc.static_range(1, 20, 3):
        if i == 7:
            continue
        if i > 14:
            break
        acc = acc * 10 + i
    og.set_value(7, acc)
    og.set_value(8, asc.ceildiv(K, 8))
    asc.static_assert(SCALE == 3, "SCALE changed")


def test_constexpr_values_and_specialisation():
    out = np.zeros(16, np.int32)
    r1 = const_kernel[1](out, 13, True)
    expect = [13 * SCALE, NEG // 2, NEG % 3, 13 // -4, 13 % -4, 1,
              sum(o * (i + 1) for i, o in enumerate(OFFSETS)), 1 * 1000 + 4 * 100 + 10 * 10 + 13,
              asc.ceildiv(13, 8)]
    assert out[:9].tolist() == expect
    assert r1.code_origin in ("compiled", "disk")
    r2 = const_kernel[1](out, 13, True)
    assert r2.code_origin == "memory"
    r3 = const_kernel[1](out, -9, False)      # a new ConstExpr value is a new compilation
    assert r3.code_origin in ("compiled", "disk")
    assert out[:9].tolist() == [-27, -4, 2, -9 // -4, -9 % -4, 2, expect[6], expect[7],
                                asc.ceildiv(-9, 8)]
    assert len(const_kernel._compiled) >= 2


# ----------------------------------------------------------------------------- blocks
@asc.kernel
def block_info(out: asc.GlobalAddress):
    og = asc.GlobalTensor()
    idx = asc.get_block_idx()
    og.set_global_buffer(out + idx * 8, 8)
    og.set_value(0, idx)
    og.set_value(1, asc.get_block_num())
    og.set_value(2, idx * idx)


@pytest.mark.parametrize("blocks", [1, 2, 7, 40])
def test_every_block_runs_and_sees_its_index(blocks):
    out = np.full(blocks * 8, -1, np.int32)
    block_info[blocks](out)
    view = out.reshape(blocks, 8)
    np.testing.assert_array_equal(view[:, 0], np.arange(blocks))
    np.testing.assert_array_equal(view[:, 1], blocks)
    np.testing.assert_array_equal(view[:, 2], np.arange(blocks) ** 2)
    np.testing.assert_array_equal(view[:, 3:], -1)


def test_pyasc_launch_form_with_stream():
    out = np.zeros(3 * 8, np.int32)
    block_info[3, None](out)
    np.testing.assert_array_equal(out.reshape(3, 8)[:, 1], 3)


# ----------------------------------------------------------------------------- assert
@asc.kernel
def checked(out: asc.GlobalAddress, n: int):
    og = asc.GlobalTensor()
    og.set_global_buffer(out, 8)
    assert n >= 0, "n must be non-negative"
    og.set_value(0, n * 2)


def test_assert_in_kernel():
    out = np.zeros(8, np.int32)
    checked[1](out, 21)
    assert out[0] == 42
    with pytest.raises(asc.KernelRuntimeError, match="n must be non-negative") as info:
        checked[1](out, -1)
    line = checked.fn.__code__.co_firstlineno + 4
    assert f"{__file__}:{line}:" in str(info.value)


# ----------------------------------------------------------------------------- torch tensors
torch = pytest.importorskip("torch")


def test_torch_tensors_zero_copy():
    from kernels_for_tests import TILE, vadd_kernel
    for dtype in (torch.float32, torch.float16):
        x = torch.randn(4 * TILE, dtype=torch.float32).to(dtype)
        y = torch.randn(4 * TILE, dtype=torch.float32).to(dtype)
        z = torch.zeros(4 * TILE, dtype=dtype)
        ptr = z.data_ptr()
        vadd_kernel[4](x, y, z, TILE)
        assert z.data_ptr() == ptr
        assert torch.equal(z, (x.float() + y.float()).to(dtype))
    # a view into a bigger tensor: results land in the base tensor
    base = torch.zeros(3 * TILE)
    vadd_kernel[1](torch.ones(TILE), torch.ones(TILE), base[TILE:2 * TILE], TILE)
    assert torch.equal(base[TILE:2 * TILE], torch.full((TILE,), 2.0))
    assert base[:TILE].abs().sum() == 0 and base[2 * TILE:].abs().sum() == 0


@asc.kernel
def fill_kernel(z: asc.GlobalAddress, n: int, value: float):
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, n)
    t = asc.LocalTensor(z.dtype, asc.TPosition.VECOUT, 0, n)
    asc.duplicate(t, value, n)
    asc.data_copy(zg, t, n)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_torch_duplicate_dtypes(dtype):
    tdtype = getattr(torch, dtype)
    z = torch.zeros(64, dtype=tdtype)
    value = 3.14159
    fill_kernel[1](z, 64, value)
    # the scalar is a float32 kernel argument, converted to the tensor dtype (round to nearest)
    want = torch.tensor(value, dtype=torch.float32).to(tdtype)
    assert torch.equal(z, torch.full((64,), want.item(), dtype=tdtype))


def test_torch_non_contiguous_is_rejected():
    z = torch.zeros(128)[::2]
    with pytest.raises(asc.KernelLaunchError, match="contiguous"):
        fill_kernel[1](z, 64, 1.0)


# ----------------------------------------------------------------------------- launching
@asc.kernel
def with_defaults(out: asc.GlobalAddress, a: int, b: int = 10, C: asc.ConstExpr[int] = 100):
    og = asc.GlobalTensor()
    og.set_global_buffer(out, 8)
    og.set_value(0, a + b + C)


def test_launch_with_keywords_and_defaults():
    out = np.zeros(8, np.int32)
    with_defaults[1](out, 1)
    assert out[0] == 111
    with_defaults[1](out=out, a=2, C=300)
    assert out[0] == 312
    with_defaults[1](out, 3, C=0, b=-3)
    assert out[0] == 0


def test_closure_values_are_compile_time_constants():
    for scale in (2, 5):
        @asc.kernel
        def scaled(out: asc.GlobalAddress, v: int):
            og = asc.GlobalTensor()
            og.set_global_buffer(out, 8)
            og.set_value(0, v * scale)

        out = np.zeros(8, np.int32)
        scaled[1](out, 7)
        assert out[0] == 7 * scale


@pytest.mark.parametrize("call,words", [
    (lambda: with_defaults[0](np.zeros(8, np.int32), 1), "block_dim"),
    (lambda: with_defaults["2"](np.zeros(8, np.int32), 1), "block_dim"),
    (lambda: with_defaults[1](np.zeros(8, np.int32)), "missing argument 'a'"),
    (lambda: with_defaults[1](np.zeros(8, np.int32), 1, 2, 3, 4), "takes 4 arguments"),
    (lambda: with_defaults[1](np.zeros(8, np.int32), 1, d=3), "unexpected argument 'd'"),
    (lambda: with_defaults[1](np.zeros(8, np.int32), 1.5), "declared int"),
    (lambda: with_defaults[1](np.zeros(8, np.complex64), 1), "unsupported dtype"),
    (lambda: with_defaults[1](np.zeros((8, 2), np.int32)[:, 0], 1), "not contiguous"),
    (lambda: with_defaults[1]([0] * 8, 1), "numpy array or torch tensor"),
    (lambda: with_defaults(np.zeros(8, np.int32), 1), "with_defaults[block_dim]"),
])
def test_launch_errors(call, words):
    with pytest.raises(asc.KernelLaunchError, match=re.escape(words)):
        call()
