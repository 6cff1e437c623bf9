"""Elementwise fusion across inlined kernel functions and unrolled ``static_range`` loops.

A run may span ``Block`` statements (an inlined call, an unrolled loop body) and the
assignments between its instructions (a call binding its parameters), as in samples/sepia.py,
whose three ``mix`` calls become one fused loop. Operands are compared by their *canonical*
address (variables the run assigns replaced by the values assigned), so a parameter name that
means a different tensor in each call is told apart, and one that means the same tensor is
recognised. As in test_fusion.py, every case runs fused and unfused and requires bit-identical
outputs (every UB tensor is copied out) and identical report figures or errors; here also the
same trace (each instruction's start cycle: the scalar clock advances where it did).
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler import jit
from ascendc_py.compiler.codegen import fusion

REGION_BYTES = 4096   # each of the four UB tensors a, b, c, t


@asc.kernel
def mixh(dst: asc.LocalTensor, r: asc.LocalTensor, g: asc.LocalTensor, b: asc.LocalTensor,
         tmp: asc.LocalTensor, cr: float, cg: float, cb: float, n: int):
    """samples/sepia.py's mix."""
    asc.muls(dst, r, cr, n)
    asc.muls(tmp, g, cg, n)
    asc.add(dst, dst, tmp, n)
    asc.muls(tmp, b, cb, n)
    asc.add(dst, dst, tmp, n)


@asc.kernel
def early(dst: asc.LocalTensor, src: asc.LocalTensor, n: int):
    """Returns early for a large n: its inlined body may not join a run."""
    asc.muls(dst, src, 0.5, n)
    if n > 200:
        return
    asc.adds(dst, dst, 1.0, n)


@asc.kernel
def blocks_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, n: int,
                  shift: int, CASE: asc.ConstExpr[str]):
    cap = REGION_BYTES // x.dtype.sizeof()
    q = cap // 4
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
    if CASE == "sepia":         # three calls, dst c[k*q:]: disjoint while n <= q
        for k in asc.static_range(3):
            mixh(c[k * q:], a, a[q:], a[2 * q:], t, 0.393 + k, 0.769 - k, 0.189 * k, n)
    elif CASE == "chained":     # each call reads what the one before wrote (the same tensor
        mixh(c, a, b, a, t, 0.5, 0.25, 2.0, n)       # under another parameter name)
        mixh(b, c, a, c, t, 1.5, -0.5, 0.75, n)
        mixh(a, b, c, b, t, 0.125, 3.0, -1.0, n)
    elif CASE == "rebind":      # one variable, a different tensor in each call
        u = a[shift:]
        mixh(c, u, b, a, t, 0.5, 0.25, 2.0, n)
        u = c[shift:]           # c was just written: overlaps it unless shift == 0
        mixh(b, u, a, u, t, 1.5, -0.5, 0.75, n)
    elif CASE == "reassign":    # the same variable, reassigned between two instructions
        u = a
        asc.muls(c, u, 0.5, n)
        u = c                   # the tensor the instruction before wrote
        asc.muls(b, u, 2.0, n)
        asc.add(t, u, b, n)
    elif CASE == "reassign_view":   # likewise with views at constant offsets
        u = a[16:]
        asc.muls(c, u, 0.5, n)
        u = c[8:]               # overlaps what the instruction before wrote
        asc.muls(b, u, 2.0, n)
        asc.add(t, u, b, n)
    elif CASE == "scalar":      # scalar work between the instructions: the scalar clock
        asc.muls(c, a, 0.5, n)  # must be advanced before each instruction issues
        k = ((n * 3 + shift) * 5 - 1) * (n + 7) + n * n - shift * 3
        asc.adds(b, c, 1.0, n)
        k = k * k - ((k + 3) * (k - 5) + n) * 2 + (k // 3) * (n + 1)
        mixh(t, b, c, a, c, 0.5, 0.25, 2.0, n)
        asc.duplicate(c, k * 1.0, n)
    elif CASE == "counts":      # a count variable that changes between the calls
        m = n
        mixh(c, a, b, a, t, 0.5, 0.25, 2.0, m)
        m = n - 8
        mixh(b, c, a, c, t, 1.5, -0.5, 0.75, m)
    elif CASE == "early":       # an inlined body that may return early
        asc.muls(t, a, 2.0, n)
        early(c, t, n)
        asc.add(b, c, t, n)
    else:
        asc.static_assert(False, "unknown case")
    asc.data_copy(zg, c, cap)
    asc.data_copy(zg[cap:], t, cap)
    asc.data_copy(zg[2 * cap:], a, cap)
    asc.data_copy(zg[3 * cap:], b, cap)


def _run(case: str, dtype, n: int, shift: int, fused: bool):
    rng = np.random.default_rng(7)
    cap = REGION_BYTES // np.dtype(dtype).itemsize
    x = rng.uniform(-4, 4, cap).astype(dtype)
    y = rng.uniform(-4, 4, cap).astype(dtype)
    z = np.zeros(4 * cap, dtype)
    fusion.set_enabled(fused)
    try:
        report = blocks_kernel[1](x, y, z, n, shift, case, trace=True)
    except asc.KernelError as exc:      # an error is a result too: the same one either way
        return z, f"{type(exc).__name__}: {exc}"
    finally:
        fusion.set_enabled(True)
    return z, {"cycles": int(report.cycles), "pipe_busy": dict(report.pipe_busy),
               "stalls": dict(report.stalls), "instructions": dict(report.instructions),
               "bytes_moved": dict(report.bytes_moved),
               # every instruction's start, occupancy, latency, pipe, site and op
               "trace": report._blocks[0].trace.tolist()}


def _same(case, dtype, n, shift=0):
    z_on, fig_on = _run(case, dtype, n, shift, fused=True)
    z_off, fig_off = _run(case, dtype, n, shift, fused=False)
    assert z_on.view(np.uint8).tobytes() == z_off.view(np.uint8).tobytes(), \
        f"{case} {np.dtype(dtype).name} n={n} shift={shift}: outputs differ"
    assert fig_on == fig_off
    return fig_on


@pytest.mark.parametrize("dtype", (np.float16, np.float32))
@pytest.mark.parametrize("case,n,shift", [
    ("sepia", 1, 0), ("sepia", 100, 0), ("sepia", 200, 0),
    ("sepia", 300, 0),           # float32: q = 256, the calls' dst overlap; float16: disjoint
    ("sepia", 520, 0),           # float32: past c[2q:]: an error, the same either way
    ("chained", 333, 0), ("rebind", 300, 0), ("rebind", 300, 16), ("rebind", 300, 8),
    ("reassign", 300, 0), ("reassign_view", 300, 0), ("counts", 300, 0),
    ("scalar", 1, 3), ("scalar", 16, 3), ("early", 100, 0), ("early", 300, 0)])
def test_runs_across_calls_fused_equal_unfused(dtype, case, n, shift):
    _same(case, dtype, n, shift)


def _fused_loops(text: str) -> int:
    """How many fused loops the kernel runs (calls: runs of one shape share a function)."""
    return len(re.findall(r"call void @\"?asc_fused_[0-9a-f]+\"?\(", text))


def test_the_three_calls_of_sepia_are_one_fused_loop():
    """samples/sepia.py: its 15 vector instructions per tile (three inlined ``mix`` calls in a
    ``static_range``) run as one loop over the 7 tensors, not three loops of 5."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "samples"))
    try:
        from sepia import sepia_kernel
    finally:
        sys.path.pop(0)
    img = np.zeros((1, 3, 8, 16), np.float32)
    specs = sepia_kernel.bind((img, img.copy(), 1, 128), {})[0]
    text = jit.llvm_ir_text(sepia_kernel, specs)
    assert _fused_loops(text) == 1
    assert len(re.findall(r"call i64 @\"?asc_opd_(muls|add)_float32", text)) == 15


def test_an_early_return_ends_the_run():
    """``early``'s inlined body holds an ``if``: the runs stop before it."""
    x = np.zeros(REGION_BYTES // 4, np.float32)
    specs = blocks_kernel.bind((x, x, np.zeros(4 * x.size, np.float32), 8, 0, "early"), {})[0]
    text = jit.llvm_ir_text(blocks_kernel, specs)
    assert _fused_loops(text) == 0


def test_calls_that_bind_their_parameters_before_the_block_are_one_run():
    """Three ``mixh`` calls in the kernel body (each call's parameter assignments stand before
    its inlined block, so the run starts with them): one fused loop of 15 instructions; and
    the torch sepia op's kernel, whose three ``mix_channel`` calls are alike."""
    x = np.zeros(REGION_BYTES // 4, np.float32)
    specs = blocks_kernel.bind((x, x, np.zeros(4 * x.size, np.float32), 8, 0, "chained"),
                               {})[0]
    text = jit.llvm_ir_text(blocks_kernel, specs)
    assert _fused_loops(text) == 1
    assert len(re.findall(r"call i64 @\"?asc_opd_(muls|add)_float32", text)) == 15
    from ascendc_py.torch_bridge import kernels as K
    img = np.zeros((1, 3, 16, 16), np.float32)
    specs = K.color_matrix_kernel.bind((img, img.copy(), 256, 256, 256, *[0.5] * 9, 256),
                                       {})[0]
    assert _fused_loops(jit.llvm_ir_text(K.color_matrix_kernel, specs)) == 1
