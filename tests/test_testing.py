"""asc.testing: golden comparisons under dtype-aware rules."""
from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ascendc_py.testing import (DEFAULT_TOLERANCES, Comparison, assert_close, check_kernel,
                                compare)


def _ramp(n, dtype):
    return (np.arange(n, dtype=np.float64) / n + 0.5).astype(dtype)


# ---------------------------------------------------------------- float32 / float64

def test_identical_float32_passes():
    x = _ramp(1000, np.float32)
    c = compare(x, x.copy())
    assert c.passed and bool(c)
    assert (c.max_abs_err, c.max_rel_err, c.mismatch_fraction, c.mismatches) == (0, 0, 0, 0)
    assert c.dtype == "float32" and c.shape == (1000,) and c.size == 1000
    assert "every element" in c.rule


def test_float32_single_element_off_fails_with_worst_index():
    g = _ramp(24, np.float32).reshape(2, 3, 4)
    a = g.copy()
    a[1, 2, 3] *= 1.001   # rel err 1e-3 > rtol 1e-5
    a[0, 0, 1] *= 1.00002  # rel err 2e-5: also out, but less so
    c = compare(a, g)
    assert not c.passed
    assert c.worst_index == (1, 2, 3)
    assert c.mismatches == 2 and c.mismatch_fraction == pytest.approx(2 / 24)
    assert c.max_rel_err == pytest.approx(1e-3, rel=1e-3)
    assert c.max_abs_err == pytest.approx(float(g[1, 2, 3]) * 1e-3, rel=1e-3)
    assert c.actual_at_worst == pytest.approx(float(a[1, 2, 3]))
    assert c.golden_at_worst == pytest.approx(float(g[1, 2, 3]))


def test_float32_within_rtol_passes():
    g = _ramp(100, np.float32)
    a = (g.astype(np.float64) * (1 + 5e-6)).astype(np.float32)
    assert compare(a, g).passed


def test_atol_protects_near_zero_golden():
    g = np.array([0.0, 1e-9, 1.0], np.float32)
    a = np.array([5e-6, -5e-6, 1.0], np.float32)  # huge relative error, tiny absolute error
    c = compare(a, g)
    assert c.passed and c.max_rel_err > 1e3
    assert not compare(a, g, atol=1e-7).passed


def test_explicit_tolerances_override():
    g = _ramp(10, np.float32)
    a = g * np.float32(1.01)
    assert not compare(a, g).passed
    assert compare(a, g, rtol=0.02).passed
    assert "rtol=0.02" in compare(a, g, rtol=0.02).rule


def test_float64_defaults_are_tight():
    g = np.linspace(1, 2, 50)
    assert compare(g * (1 + 5e-8), g).passed
    assert not compare(g * (1 + 5e-7), g).passed


def test_relative_error_definition():
    # rel = |a-g| / max(|g|, tiny): for golden 4 and actual 5 it is 0.25
    c = compare(np.array([5.0], np.float32), np.array([4.0], np.float32))
    assert c.max_abs_err == 1.0 and c.max_rel_err == 0.25
    # golden exactly 0: denominator is float32's smallest normal
    c = compare(np.array([1e-30], np.float32), np.array([0.0], np.float32))
    assert c.max_rel_err == pytest.approx(1e-30 / np.finfo(np.float32).tiny, rel=1e-6)


# ---------------------------------------------------------------- float16: Ascend's rule

def test_float16_fraction_rule_boundary():
    n = 10000
    g = _ramp(n, np.float16)
    a = g.copy()
    a[:9] = a[:9] * np.float16(1.01)  # 9 elements with rel err ~1e-2: 0.09 % < 0.1 %
    c = compare(a, g)
    assert c.passed, str(c)
    assert c.mismatches == 9 and c.mismatch_fraction == pytest.approx(9e-4)
    assert "Ascend float16 precision rule" in c.rule
    a[:10] = g[:10] * np.float16(1.01)  # 10 of 10000 = 1e-3: not below 1e-3
    c = compare(a, g)
    assert not c.passed and c.mismatch_fraction == pytest.approx(1e-3)


def test_float16_rounding_error_is_within_rule():
    x = np.random.default_rng(0).uniform(-4, 4, 5000)
    assert compare(x.astype(np.float16), x).passed  # golden float64, rounding only
    c = compare(x.astype(np.float16), x, dtype="float32")  # rule chosen explicitly
    assert not c.passed and c.dtype == "float32"


def test_float16_many_small_errors_fail():
    g = _ramp(1000, np.float16)
    a = (g.astype(np.float32) * 1.003).astype(np.float16)
    c = compare(a, g)
    assert not c.passed and c.mismatch_fraction > 0.5


def test_fraction_override():
    g = _ramp(100, np.float32)
    a = g.copy()
    a[5] = 0
    assert not compare(a, g).passed
    assert compare(a, g, fraction=0.02).passed
    assert not compare(_ramp(100, np.float16) * 0, _ramp(100, np.float16), fraction=0).passed


def test_default_tolerance_table():
    assert DEFAULT_TOLERANCES["float16"] == (1e-3, 1e-5, 1e-3)
    assert DEFAULT_TOLERANCES["float32"][2] == 0.0
    assert DEFAULT_TOLERANCES["bfloat16"][0] > DEFAULT_TOLERANCES["float16"][0]


# ---------------------------------------------------------------- integers and bool

def test_integers_exact():
    g = np.arange(12, dtype=np.int32).reshape(3, 4)
    assert compare(g.copy(), g).passed
    a = g.copy()
    a[2, 1] += 1
    c = compare(a, g)
    assert not c.passed and c.worst_index == (2, 1) and c.max_abs_err == 1
    assert "exact" in c.rule
    assert compare(a, g, atol=1).passed  # explicit tolerances apply to integers too
    assert compare(a, g, rtol=0.2).passed and not compare(a, g, rtol=0.1).passed


def test_int64_exact_beyond_float64_precision():
    g = np.array([2**62, 2**62 + 1], np.int64)
    a = np.array([2**62, 2**62], np.int64)  # equal after float64 rounding, but not equal
    c = compare(a, g)
    assert not c.passed and c.worst_index == (1,)


def test_bool_exact():
    g = np.array([True, False, True])
    assert compare(g.copy(), g).passed
    assert not compare(~g, g).passed


# ---------------------------------------------------------------- NaN and inf

def test_nan_positions_must_match():
    g = np.array([1.0, np.nan, 3.0], np.float32)
    assert compare(g.copy(), g).passed  # NaN == NaN
    c = compare(np.array([1.0, 2.0, 3.0], np.float32), g)
    assert not c.passed and c.worst_index == (1,) and math.isinf(c.max_abs_err)
    c = compare(np.array([np.nan, np.nan, 3.0], np.float32), g)
    assert not c.passed and c.worst_index == (0,)


def test_infinities_must_match_exactly():
    g = np.array([np.inf, -np.inf, 1.0], np.float32)
    assert compare(g.copy(), g).passed
    assert not compare(np.array([-np.inf, -np.inf, 1.0], np.float32), g).passed
    assert not compare(np.array([np.inf, -3e38, 1.0], np.float32), g).passed
    assert not compare(np.array([np.inf, -np.inf, np.inf], np.float32), g).passed


def test_nan_mismatch_fails_even_under_fraction_rule():
    g = _ramp(10000, np.float16)
    a = g.copy()
    a[7] = np.nan  # 1 of 10000 is below the 1e-3 fraction ...
    c = compare(a, g)
    assert c.worst_index == (7,) and math.isinf(c.max_abs_err)
    # ... the fraction rule counts it as one mismatching element, like any other
    assert c.mismatches == 1


# ---------------------------------------------------------------- shapes and inputs

def test_shape_mismatch_is_a_clear_failure():
    c = compare(np.zeros((2, 3)), np.zeros((3, 2)))
    assert not c.passed and c.worst_index is None
    assert "shapes differ: actual (2, 3) vs golden (3, 2)" in c.rule
    assert "shapes differ" in str(c)
    with pytest.raises(AssertionError, match="shapes differ"):
        assert_close(np.zeros(4), np.zeros((4, 1)))


def test_empty_and_scalar_inputs():
    c = compare(np.zeros(0, np.float32), np.zeros(0, np.float32))
    assert c.passed and c.worst_index is None
    c = compare(np.float32(2.0), 2.5, rtol=0.0, atol=0.0)
    assert not c.passed and c.worst_index == ()
    assert compare([1.0, 2.0], [1.0, 2.0]).passed  # lists: float64 rule


def test_unsupported_inputs():
    with pytest.raises(TypeError):
        compare(np.array(["a"]), np.array(["a"]))
    with pytest.raises(ValueError, match="unsupported dtype"):
        compare(np.zeros(2), np.zeros(2), dtype="complex64")
    with pytest.raises(ValueError):
        compare(np.zeros(2), np.zeros(2), rtol=-1)


def test_dtype_spellings():
    x = _ramp(8, np.float32)
    for spelling, name in [("half", "float16"), ("fp16", "float16"), (np.float16, "float16"),
                           (np.dtype("float32"), "float32"), ("bf16", "bfloat16"),
                           ("float", "float32")]:
        assert compare(x, x, dtype=spelling).dtype == name


def test_str_is_readable():
    g = _ramp(6, np.float32).reshape(2, 3)
    a = g.copy()
    a[1, 0] += 1
    text = str(compare(a, g))
    assert text.startswith("FAILED: float32 comparison, shape (2, 3)")
    for needle in ("rule:", "mismatched elements: 1 of 6", "max abs error: 1",
                   "worst element (1, 0)"):
        assert needle in text, text
    assert str(compare(g, g)).startswith("PASSED")


def test_comparison_is_frozen():
    c = compare(np.ones(3), np.ones(3))
    assert isinstance(c, Comparison)
    with pytest.raises(Exception):
        c.passed = False


# ---------------------------------------------------------------- assert_close, check_kernel

def test_assert_close():
    g = _ramp(10, np.float32)
    assert assert_close(g, g.copy()).passed
    a = g.copy()
    a[3] = 100
    with pytest.raises(AssertionError) as info:
        assert_close(a, g, msg="my kernel")
    text = str(info.value)
    assert text.startswith("my kernel\nFAILED") and "worst element (3,)" in text


def test_check_kernel_single_and_multiple_outputs():
    x = _ramp(64, np.float32)
    y = _ramp(64, np.float32)[::-1].copy()
    c = check_kernel(lambda a, b: a + b, lambda a, b: a + b, x, y)
    assert c.passed

    def wrong(a, b):
        return a - b
    with pytest.raises(AssertionError, match="wrong vs golden"):
        check_kernel(wrong, lambda a, b: a + b, x, y)

    cs = check_kernel(lambda a, b: (a + b, a * b), lambda a, b: (a + b, a * b), x, y)
    assert len(cs) == 2 and all(c.passed for c in cs)
    with pytest.raises(AssertionError, match="output 1"):
        check_kernel(lambda a, b: (a + b, a), lambda a, b: (a + b, a * b), x, y)


def test_check_kernel_runs_golden_before_run_mutates_inputs():
    x = _ramp(16, np.float32)
    out = np.zeros(16, np.float32)

    def run(a, o):
        o[:] = a * 2
        a[:] = -1  # a kernel that clobbers its input
        return o

    check_kernel(run, lambda a, o: a * 2, x, out)


# ---------------------------------------------------------------- torch tensors

def test_torch_tensors():
    torch = pytest.importorskip("torch")
    g = torch.linspace(0.5, 1.5, 100)
    assert compare(g.clone(), g).passed
    assert compare(g.clone().requires_grad_(), g.numpy()).passed
    a = g.clone()
    a[42] += 1
    c = compare(a, g)
    assert not c.passed and c.worst_index == (42,) and c.dtype == "float32"
    assert compare(g[::2], g.numpy()[::2]).passed  # non-contiguous views


def test_torch_float16_and_bfloat16():
    torch = pytest.importorskip("torch")
    x = torch.linspace(-3, 3, 1000, dtype=torch.float64)
    c = compare(x.to(torch.float16), x)
    assert c.passed and c.dtype == "float16"
    b = x.to(torch.bfloat16)
    c = compare(b, x)
    assert c.passed and c.dtype == "bfloat16"
    assert c.max_rel_err > 1e-3  # bf16 rounding is coarse, within its wider tolerance
    bad = b.clone()
    bad[500:] = 0
    c = compare(bad, x)
    assert not c.passed and c.worst_index[0] >= 500
    assert compare(b, b).passed  # bfloat16 golden too


def test_module_does_not_import_torch():
    code = ("import sys, numpy as np\n"
            "import ascendc_py.testing as t\n"
            "assert t.compare(np.ones(3), np.ones(3)).passed\n"
            "assert 'torch' not in sys.modules, 'torch was imported'\n")
    subprocess.run([sys.executable, "-c", code], check=True)


# ---------------------------------------------------------------- properties

finite_f32 = hnp.arrays(np.float32, hnp.array_shapes(max_dims=3, max_side=16),
                        elements=st.floats(-1e6, 1e6, width=32))


@pytest.mark.fuzz
@given(finite_f32)
def test_property_self_comparison_passes(x):
    c = compare(x, x.copy())
    assert c.passed and c.max_abs_err == 0 and c.mismatch_fraction == 0


@pytest.mark.fuzz
@given(finite_f32, st.floats(0.0, 0.9e-5))
def test_property_small_relative_perturbation_passes(x, eps):
    g = x.astype(np.float64)
    assert compare(g * (1 + eps), g, dtype="float32").passed


@pytest.mark.fuzz
@given(finite_f32)
def test_property_worst_index_points_at_max_abs_error_for_exact_rule(x):
    if x.size == 0:
        return
    a = x.astype(np.float64)
    g = a.copy()
    idx = tuple(s - 1 for s in a.shape)
    g[idx] += 1e7  # larger than any other difference
    c = compare(a, g, rtol=0, atol=0)
    assert not c.passed and c.worst_index == idx
