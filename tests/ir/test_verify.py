"""ir.verify: hand-built malformed kernel IR is rejected with a located message; what sema
emits for the samples (and the test kernels) passes."""
from __future__ import annotations

import pathlib
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from ascendc_py.compiler import ir
from ascendc_py.compiler.errors import InternalCompilerError, SourceLoc
from ascendc_py.compiler.sema.analyzer import analyze
from ascendc_py.dsl.types import Memory, bool_, float32, int32, int64

LOC = SourceLoc(__file__, 7, 5)
SAMPLES = pathlib.Path(__file__).resolve().parents[2] / "samples"


def fn(*body, gm=(), scalars=()):
    return ir.Function("k", tuple(body), LOC, gm, scalars)


def c(v, t=int32):
    return ir.Const(v, t)


def x(t=int32, name="x"):
    return ir.Var(name, t)


def local(addr=c(0), size=c(8), tag=c(-1)):
    return ir.LocalRef(Memory.UB, float32, addr, size, tag)


# ----------------------------------------------------------------------------- well formed
def test_well_formed_function_passes():
    i, acc = x(name="i"), x(name="acc")
    body = (
        ir.Assign(acc, c(0), LOC),
        ir.ForRange(i, c(0), ir.ScalarArg(0, int32), c(1), (
            ir.If(ir.Cmp("gt", ir.Load(i), c(3)), (ir.Break(LOC),), (ir.Continue(LOC),), LOC),
            ir.Assign(acc, ir.Bin("add", ir.Load(acc), ir.Load(i), int32), LOC),
        ), LOC),
        ir.Block("ret0", (ir.Exit("ret0", LOC),), LOC),
        ir.While((), ir.Cmp("lt", ir.Load(acc), c(0)), (ir.Break(LOC),), LOC),
        ir.Intrinsic("add", (local(), local(c(32)), local(c(64)), c(8)), (), LOC,
                     (("dtype", float32),)),
        ir.Intrinsic("set_value", (ir.GlobalRef(float32, c(0), c(0, int64), c(-1, int64)),
                                   c(0, int64), ir.Cast(ir.Load(acc), float32)), (), LOC),
    )
    ir.verify(fn(*body, gm=(("z", float32),), scalars=(("n", int32),)))


# ----------------------------------------------------------------------------- malformed
def _bad(*body):
    with pytest.raises(InternalCompilerError) as info:
        ir.verify(fn(*body))
    return str(info.value)


def test_assign_type_mismatch():
    msg = _bad(ir.Assign(x(int32), c(1.5, float32), LOC))
    assert "IR verification failed" in msg and "assign float32" in msg
    assert msg.startswith(f"{LOC.file}:{LOC.line}:{LOC.col}:")


def test_break_outside_loop():
    assert "outside a loop" in _bad(ir.Break(LOC))
    assert "outside a loop" in _bad(ir.If(c(True, bool_), (ir.Continue(LOC),), (), LOC))


def test_break_inside_block_inside_loop_is_fine():
    i = x(name="i")
    ir.verify(fn(ir.ForRange(i, c(0), c(4), c(1), (ir.Block("b", (ir.Break(LOC),), LOC),),
                             LOC)))


def test_unknown_intrinsic():
    assert "unknown intrinsic frobnicate" in _bad(ir.Intrinsic("frobnicate", (), (), LOC))


def test_exit_to_unknown_label():
    assert "unknown label nowhere" in _bad(ir.Exit("nowhere", LOC))
    # a label is only visible inside its own block
    assert "unknown label b" in _bad(ir.Block("b", (), LOC), ir.Exit("b", LOC))


@pytest.mark.parametrize("stmt,words", [
    (ir.If(c(1), (), (), LOC), "If condition is not bool"),
    (ir.While((), c(1), (), LOC), "While condition is not bool"),
    (ir.Assign(x(), ir.Bin("add", c(1), c(1, int64), int32), LOC), "operand types of add"),
    (ir.Assign(x(), ir.Bin("frob", c(1), c(1), int32), LOC), "unknown binary op"),
    (ir.Assign(x(bool_), ir.Cmp("lt", c(1), c(1.0, float32)), LOC), "comparison of"),
    (ir.Assign(x(bool_), ir.Cmp("approx", c(1), c(1)), LOC), "unknown comparison"),
    (ir.Assign(x(), ir.Un("sqrt", c(1), int32), LOC), "unknown unary op"),
    (ir.Assign(x(), ir.Select(c(1), c(1), c(2), int32), LOC), "Select condition"),
    (ir.Assign(x(), ir.Select(c(True, bool_), c(1), c(2, int64), int32), LOC), "arm types"),
    (ir.Assign(x(int64), ir.Special("warp_id"), LOC), "unknown special"),
    (ir.ForRange(x(int32), c(0), c(4, int64), c(1), (), LOC), "range bound type"),
    (ir.Intrinsic("add", (local(size=c(8, int64)),), (), LOC), "LocalRef field"),
    (ir.Intrinsic("set_value", (ir.GlobalRef(float32, c(0), c(0), c(-1, int64)),), (), LOC),
     "GlobalRef field types"),
    (ir.Intrinsic("add", (object(),), (), LOC), "not an expression"),
    (ir.Assign(x(), c(1), None), "without location"),
    (SimpleNamespace(loc=LOC), "unknown statement"),
])
def test_malformed_statements(stmt, words):
    assert words in _bad(stmt)


def test_errors_inside_nested_bodies_are_found():
    deep = ir.ForRange(x(name="i"), c(0), c(2), c(1), (
        ir.If(ir.Cmp("eq", c(1), c(1)), (ir.Block("l", (ir.Exit("other", LOC),), LOC),), (),
              LOC),), LOC)
    assert "unknown label other" in _bad(deep)


# ----------------------------------------------------------------------------- sema output
def _sample(name):
    sys.path.insert(0, str(SAMPLES))
    try:
        return __import__(name)
    finally:
        sys.path.remove(str(SAMPLES))


SAMPLE_CASES = [
    ("add_tque", "add_kernel", lambda a: (a, a.copy(), a.copy(), a.size // 8, 16)),
    ("add_flags", "add_flags_kernel", lambda a: (a, a.copy(), a.copy(), a.size // 8)),
    ("leaky_relu", "leaky_relu_kernel", lambda a: (a, a.copy(), a.size, 0.1, 64)),
    ("sepia", "sepia_kernel", lambda a: (np.zeros((2, 3, 8, 8), a.dtype),
                                         np.zeros((2, 3, 8, 8), a.dtype), 2, 64)),
]


@pytest.mark.parametrize("module,kernel,make", SAMPLE_CASES, ids=[c[0] for c in SAMPLE_CASES])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_sema_output_of_samples_verifies(module, kernel, make, dtype):
    k = getattr(_sample(module), kernel)
    args = make(np.zeros(8 * 64, dtype))
    specs, _, _ = k.bind(args, {})
    result = analyze(k, specs)
    ir.verify(result.function)
    assert result.function.body and all(isinstance(s.loc, SourceLoc) for s in
                                        result.function.body)


def test_sema_output_of_test_kernels_verifies():
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "ops"))
    try:
        import test_vector_ops as tv
    finally:
        sys.path.pop(0)
    a = np.zeros(64, np.float32)
    for k, args in ((tv.binary_kernel, (a, a, a, 64, "div")),
                    (tv.unary_kernel, (a, a, 64, "ln")),
                    (tv.scalar_kernel, (a, a, 64, 0.5, "leaky_relu")),
                    (tv.duplicate_kernel, (a, 64, 1.0))):
        specs, _, _ = k.bind(args, {})
        ir.verify(analyze(k, specs).function)
