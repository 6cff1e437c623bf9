"""The scalar-unit functions against their references (``ops/scalar_bits.py``; scalar_cast
against ``asc.cast``'s reference), at run time and folded at compile time; their errors."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ascendc_py as asc
from ascendc_py.compiler.ops.convert import cast_reference
from ascendc_py.compiler.ops.scalar_bits import (clz_ref, count_of_value_ref, same_as_sign_ref,
                                                 sff_ref)
from ascendc_py.dsl.types import float16, float32, int32

R = asc.RoundMode


@asc.kernel
def bits(o: asc.GlobalAddress, v: asc.int64):
    og = asc.GlobalTensor()
    og.set_global_buffer(o, 8)
    og.set_value(0, asc.scalar_get_sff_value(v, 1))
    og.set_value(1, asc.scalar_get_sff_value(v, 0))
    og.set_value(2, asc.scalar_get_count_of_value(v, 1))
    og.set_value(3, asc.scalar_get_count_of_value(value_in=v, count_value=0))
    og.set_value(4, asc.scalar_count_leading_zero(v))
    og.set_value(5, asc.count_bits_cnt_same_as_sign_bit(v))


def _want(v):
    return [sff_ref(v, 1), sff_ref(v, 0), count_of_value_ref(v, 1), count_of_value_ref(v, 0),
            clz_ref(v), same_as_sign_ref(v)]


EDGES = [0, -1, 1, 28, 16, 0x0f00000000000000, 0x0fffffffffffffff, -2**63, 2**63 - 1,
         -0x0f00000000000000, 1 << 40]


@pytest.mark.parametrize("v", EDGES)
def test_bits_at_run_time(v):
    o = np.zeros(8, np.int64)
    bits[1](o, v)
    assert list(o[:6]) == _want(v)


@settings(max_examples=40, deadline=None)
@given(st.integers(-2**63, 2**63 - 1))
def test_bits_random(v):
    o = np.zeros(8, np.int64)
    bits[1](o, v)
    assert list(o[:6]) == _want(v)


def test_documented_examples_and_folding():
    assert sff_ref(28, 1) == 2 and same_as_sign_ref(0x0f00000000000000) == 3
    assert same_as_sign_ref(0) == -1 and same_as_sign_ref(-1) == -1

    @asc.kernel
    def folded(o: asc.GlobalAddress):
        og = asc.GlobalTensor()
        og.set_global_buffer(o, 8)
        og.set_value(0, asc.scalar_get_sff_value(28, 1))
        og.set_value(1, asc.count_bits_cnt_same_as_sign_bit(0x0f00000000000000))
        og.set_value(2, asc.scalar_count_leading_zero(2**64 - 1))
        og.set_value(3, asc.scalar_get_count_of_value(16, 0))
    o = np.zeros(8, np.int64)
    folded[1](o)
    assert list(o[:4]) == [2, 3, 0, 63]


@asc.kernel
def casts(f: asc.GlobalAddress, h: asc.GlobalAddress, x: float):
    fg = asc.GlobalTensor()
    hg = asc.GlobalTensor()
    fg.set_global_buffer(f, 8)
    hg.set_global_buffer(h, 8)
    fg.set_value(0, asc.scalar_cast(x, asc.int32, asc.RoundMode.CAST_RINT))
    fg.set_value(1, asc.scalar_cast(x, asc.int32, asc.RoundMode.CAST_FLOOR))
    fg.set_value(2, asc.scalar_cast(x, asc.int32, asc.RoundMode.CAST_CEIL))
    fg.set_value(3, asc.scalar_cast(x, asc.int32, asc.RoundMode.CAST_ROUND))
    hg.set_value(0, asc.scalar_cast(x, asc.float16, asc.RoundMode.CAST_ODD))


def _cast_want(x):
    a = np.array([x], np.float32)
    ints = [int(cast_reference(a, float32, int32, m)[0])
            for m in (R.CAST_RINT, R.CAST_FLOOR, R.CAST_CEIL, R.CAST_ROUND)]
    return ints, cast_reference(a, float32, float16, R.CAST_ODD)[0]


FLOATS = [2.5, -2.5, 3.5, 0.49999997, -0.0, 1e10, -1e10, float("inf"), float("-inf"),
          float("nan"), 65519.0, 70000.0, 1e-8, -3.0000002, 2049.3]


@pytest.mark.parametrize("x", FLOATS)
def test_scalar_cast(x):
    f = np.zeros(8, np.int32)
    h = np.zeros(8, np.float16)
    casts[1](f, h, x)
    ints, half = _cast_want(x)
    assert list(f[:4]) == ints
    assert h[:1].view(np.uint16)[0] == np.array([half], np.float16).view(np.uint16)[0] or (
        np.isnan(h[0]) and np.isnan(half))


@settings(max_examples=40, deadline=None)
@given(st.floats(width=32))
def test_scalar_cast_random(x):
    test_scalar_cast(x)


def _compile_error(body: str, cls):
    import linecache
    src = "def k(x: asc.GlobalAddress, v: int):\n" + f"    {body}\n"
    name = f"<sb-test-{abs(hash(body))}>"
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)
    ns = {"asc": asc}
    exec(compile(src, name, "exec"), ns)
    with pytest.raises(cls) as info:
        asc.kernel(ns["k"])[1](np.zeros(8, np.float32), 3)
    assert ":2:" in str(info.value), str(info.value)
    return str(info.value)


@pytest.mark.parametrize("body,cls,message", [
    ("r = asc.scalar_get_sff_value(v, v)", asc.KernelTypeError, "compile-time constant"),
    ("r = asc.scalar_get_count_of_value(v, 2)", asc.KernelValueError, "must be 0 or 1"),
    ("r = asc.scalar_cast(1.5, asc.float32, asc.RoundMode.CAST_RINT)", asc.KernelTypeError,
     "not to float32"),
    ("r = asc.scalar_cast(1.5, asc.int32, asc.RoundMode.CAST_TRUNC)", asc.KernelValueError,
     "takes round_mode CAST_RINT"),
    ("r = asc.scalar_cast(1.5, asc.float16, asc.RoundMode.CAST_RINT)", asc.KernelValueError,
     "CAST_ODD"),
])
def test_errors(body, cls, message):
    assert message in _compile_error(body, cls)
