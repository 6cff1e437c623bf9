"""Elementwise fusion (``compiler/codegen/fusion.py``): a run of count-form vector instructions
runs as one native loop, and nothing a user can see changes.

Every case runs the same kernel with fusion on and off (``fusion.set_enabled``; the two are
separate cache entries) and requires bit-identical outputs (every operand is copied out, so
intermediate tensors count too) and identical report figures (cycles, per-pipe busy cycles,
stalls, instruction counts, bytes moved, per-core cycles), over float16, float32, int16 and
int32, counts that are not a multiple of any vector width, in-place operands, operands that are
the same tensor at run time under different names, operands that partly overlap (the fused
path must fall back to the instructions' own loops), masked instructions (never fused) and an
instruction that fails in the middle of a run.
"""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler import jit
from ascendc_py.compiler.codegen import fusion

REGION_BYTES = 4096   # each of the four UB tensors: a (x), b (y), c, t


@asc.kernel
def chain_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, n: int,
                 shift: int, CHAIN: asc.ConstExpr[str]):
    """Four UB tensors a, b, c, t (a, c from x; b, t from y), one chain of vector instructions
    over n elements, all four copied out. ``bs`` is b from element ``shift`` (a view the IR
    names differently from b: shift 0 is b itself at run time); ``as_`` likewise of a."""
    cap = REGION_BYTES // x.dtype.sizeof()
    xg = asc.GlobalTensor()
    yg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, cap)
    yg.set_global_buffer(y, cap)
    zg.set_global_buffer(z, 4 * cap)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECCALC, 0, cap)
    b = asc.LocalTensor(x.dtype, asc.TPosition.VECCALC, REGION_BYTES, cap)
    c = asc.LocalTensor(x.dtype, asc.TPosition.VECCALC, 2 * REGION_BYTES, cap)
    t = asc.LocalTensor(x.dtype, asc.TPosition.VECCALC, 3 * REGION_BYTES, cap)
    asc.data_copy(a, xg, cap)
    asc.data_copy(b, yg, cap)
    asc.data_copy(c, xg, cap)
    asc.data_copy(t, yg, cap)
    bs = b[shift:]
    as_ = a[shift:]
    if CHAIN == "mix":          # samples/sepia.py's mix
        asc.muls(c, a, 0.393, n)
        asc.muls(t, bs, 0.769, n)
        asc.add(c, c, t, n)
        asc.muls(t, a, 0.189, n)
        asc.add(c, c, t, n)
    elif CHAIN == "float":      # every float op family, each reading earlier results
        asc.add(c, a, bs, n)
        asc.mul(t, c, a, n)
        asc.sub(c, t, bs, n)
        asc.max(t, c, a, n)
        asc.min(c, t, bs, n)
        asc.abs(t, c, n)
        asc.adds(t, t, 0.5, n)
        asc.div(c, t, bs, n)
        asc.sqrt(t, t, n)
        asc.ln(c, t, n)
        asc.exp(t, c, n)
        asc.reciprocal(c, t, n)
        asc.rsqrt(t, t, n)
        asc.leaky_relu(c, c, 0.1, n)
        asc.relu(t, c, n)
        asc.axpy(c, t, 0.75, n)
        asc.maxs(c, c, 0.25, n)
        asc.mins(t, c, 3.0, n)
        asc.muls(c, t, 1.5, n)
        asc.duplicate(t, 1.25, n)
        asc.add(c, c, t, n)
    elif CHAIN == "int":        # integer ops (int16 wraps)
        asc.add(c, a, bs, n)
        asc.mul(t, c, a, n)
        asc.sub(c, t, bs, n)
        asc.max(t, c, a, n)
        asc.min(c, t, bs, n)
        asc.adds(t, c, 3, n)
        asc.muls(c, t, 5, n)
        asc.maxs(t, c, -7, n)
        asc.mins(c, t, 1000, n)
        asc.duplicate(t, 9, n)
        asc.mul(c, c, t, n)
    elif CHAIN == "inplace":    # in place, and operands that may overlap
        asc.add(as_, as_, a, n)  # dst a[shift:] reads a: its own results when shift < n
        asc.muls(a, a, 2, n)
        asc.add(c, a, b, n)
        asc.add(t, c[shift:], b, n)  # reads c ahead of where the previous add wrote it
        asc.sub(b, b, c, n)
    elif CHAIN == "masked":     # a masked instruction splits the run
        asc.add(c, a, bs, n)
        asc.muls(t, c, 3, n)
        asc.add(c, c, t, 64, 1, asc.BinaryRepeatParams(1, 1, 1, 8, 8, 8))
        asc.sub(t, c, a, n)
        asc.muls(c, t, 2, n)
    else:
        asc.static_assert(False, "unknown chain")
    asc.data_copy(zg, c, cap)
    asc.data_copy(zg[cap:], t, cap)
    asc.data_copy(zg[2 * cap:], a, cap)
    asc.data_copy(zg[3 * cap:], b, cap)


def _inputs(dtype, seed: int):
    rng = np.random.default_rng(seed)
    cap = REGION_BYTES // np.dtype(dtype).itemsize
    if np.dtype(dtype).kind == "f":
        x = rng.uniform(-4, 4, cap).astype(dtype)
        y = rng.uniform(0.5, 4, cap).astype(dtype)     # divisors away from 0
    else:
        x = rng.integers(-300, 300, cap).astype(dtype)
        y = rng.integers(-300, 300, cap).astype(dtype)
    return x, y


def _figures(report) -> dict:
    return {"cycles": int(report.cycles), "pipe_busy": dict(report.pipe_busy),
            "stalls": dict(report.stalls), "instructions": dict(report.instructions),
            "bytes_moved": dict(report.bytes_moved),
            "core_cycles": [int(c) for c in report.core_cycles]}


def _run(chain: str, dtype, n: int, shift: int, fused: bool, seed: int = 0, **launch):
    x, y = _inputs(dtype, seed)
    z = np.zeros(4 * x.size, dtype)
    fusion.set_enabled(fused)
    try:
        report = chain_kernel[1](x, y, z, n, shift, chain, **launch)
    except asc.KernelError as exc:      # an error is a result too: the same one either way
        return z, f"{type(exc).__name__}: {exc}"
    finally:
        fusion.set_enabled(True)
    return z, _figures(report)


def _same(chain, dtype, n, shift, **launch):
    z_on, fig_on = _run(chain, dtype, n, shift, fused=True, **launch)
    z_off, fig_off = _run(chain, dtype, n, shift, fused=False, **launch)
    assert z_on.view(np.uint8).tobytes() == z_off.view(np.uint8).tobytes(), \
        f"{chain} {np.dtype(dtype).name} n={n} shift={shift}: outputs differ"
    assert fig_on == fig_off
    return z_on, fig_on


FLOATS = (np.float16, np.float32)
INTS = (np.int16, np.int32)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", [1, 7, 100, 333, 1000])
def test_mix_chain_fused_equals_unfused(dtype, n):
    _same("mix", dtype, n, 0)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n,shift", [(16, 0), (129, 0), (1000, 0), (129, 16), (1000, 16)])
def test_every_float_op_fused_equals_unfused(dtype, n, shift):
    _same("float", dtype, n, shift)


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("n,shift", [(5, 0), (77, 0), (1000, 0), (77, 16)])
def test_integer_ops_fused_equal_unfused(dtype, n, shift):
    _same("int", dtype, n, shift)


@pytest.mark.parametrize("dtype", (np.float16, np.float32, np.int32))
@pytest.mark.parametrize("shift", [0, 8, 16, 64])
def test_in_place_and_overlapping_operands(dtype, shift):
    """shift 0: a and a[0:] are one tensor at run time (names differ in the IR); other shifts:
    ``add(a, a, a[shift:])`` overlaps its own destination, so the fused loop must not run.
    Both paths must equal the instructions run one after the other, computed in NumPy too."""
    n = 200
    z, figures = _same("inplace", dtype, n, shift)
    if (shift * np.dtype(dtype).itemsize) % 32:
        assert "not 32-byte aligned" in figures   # a misaligned view: the same error
        return
    wide = np.float64 if np.dtype(dtype).kind == "f" else np.int64
    x, y = (v.astype(wide) for v in _inputs(dtype, 0))
    rnd = (lambda v: np.asarray(v).astype(dtype).astype(wide))   # round (or wrap) to dtype
    a, b, c, t = x.copy(), y.copy(), x.copy(), y.copy()
    for i in range(n):          # the instruction's own element order (sequential)
        a[shift + i] = rnd(a[shift + i] + a[i])
    a[:n] = rnd(a[:n] * 2)
    c[:n] = rnd(a[:n] + b[:n])
    t[:n] = rnd(c[shift:shift + n] + b[:n])
    b[:n] = rnd(b[:n] - c[:n])
    got = z.reshape(4, x.size)
    for name, k, want in (("c", 0, c), ("t", 1, t), ("a", 2, a), ("b", 3, b)):
        np.testing.assert_array_equal(got[k], want.astype(dtype), err_msg=name)


@pytest.mark.parametrize("chain,shift", [("mix", 0), ("float", 16), ("inplace", 8)])
def test_sanitize_mode_sees_the_same_instructions(chain, shift):
    """sanitize=True: the loop-less instructions make the sanitizer's records; the same
    results, report figures and warnings fused or not."""
    with warnings.catch_warnings(record=True) as fused_warnings:
        warnings.simplefilter("always")
        z_on, fig_on = _run(chain, np.float32, 300, shift, fused=True, sanitize=True)
    with warnings.catch_warnings(record=True) as plain_warnings:
        warnings.simplefilter("always")
        z_off, fig_off = _run(chain, np.float32, 300, shift, fused=False, sanitize=True)
    assert z_on.tobytes() == z_off.tobytes() and fig_on == fig_off
    assert [str(w.message) for w in fused_warnings] == [str(w.message) for w in plain_warnings]


@pytest.mark.parametrize("dtype", FLOATS)
def test_masked_instruction_splits_the_run(dtype):
    _, figures = _same("masked", dtype, 300, 0)
    assert isinstance(figures, dict)


@pytest.mark.parametrize("fused", [True, False])
def test_error_inside_a_run_is_reported_at_the_same_instruction(fused):
    """n past the tensors: the first instruction of the run fails, naming its line, either
    way; nothing of the run's later instructions runs."""
    x, y = _inputs(np.float32, 1)
    z = np.zeros(4 * x.size, np.float32)
    fusion.set_enabled(fused)
    try:
        with pytest.raises(asc.KernelError) as info:
            chain_kernel[1](x, y, z, x.size + 8, 0, "mix")
    finally:
        fusion.set_enabled(True)
    assert "asc.muls(c, a, 0.393, n)" in str(info.value)


def test_runs_are_fused_in_the_generated_code():
    """The mix chain becomes one fused loop (the loop-less instructions and asc_fused_*);
    with fusion off the instructions call their own library functions."""
    x, y = _inputs(np.float32, 0)
    specs = chain_kernel.bind((x, y, np.zeros(4 * x.size, np.float32), 8, 0, "mix"), {})[0]
    text = jit.llvm_ir_text(chain_kernel, specs)
    assert re.search(r"define internal void @\"?asc_fused_", text)
    assert len(re.findall(r"call i64 @\"?asc_opd_(muls|add)_float32", text)) == 5
    fusion.set_enabled(False)
    try:
        plain = jit.llvm_ir_text(chain_kernel, specs)
    finally:
        fusion.set_enabled(True)
    assert "asc_fused_" not in plain and "asc_opd_" not in plain
    assert len(re.findall(r"call i64 @\"?asc_op_(muls|add)_float32", plain)) == 5


def test_fused_and_unfused_kernels_are_separate_cache_entries():
    variant = jit.codegen_variant()
    fusion.set_enabled(False)
    try:
        assert jit.codegen_variant() != variant
    finally:
        fusion.set_enabled(True)
    assert jit.codegen_variant() == variant
