"""Issue 5's benchmark: the shipped torch ops against their eager torch formulas, same run.

* ``torch.ops.ascendc.swiglu(a, b)`` on (2048, 4096) float32 vs ``F.silu(a) * b``
* ``torch.ops.ascendc.sepia(x)`` on (4, 3, 224, 224) float32 vs the colour-matrix formula

Targets: swiglu ours / numba <= 1.3 (the same ``a / (1 + exp(-a)) * b`` as a native loop,
issue 14); sepia ours / torch eager <= 0.5. numpy's column is the same formula in numpy (for
reference). Skipped (with a note) when torch is absent.

* ``torch.ops.ascendc.swiglu_ffn(x, wg, wu)`` (issue 7): x (2048, 1024), Wg/Wu (1024, 2816) in
  float16 (one mix kernel: both projections on the cube, the gate on the vector cores) vs torch
  eager float32 ``F.silu(x @ wg) * (x @ wu)`` on the same values; target ours / torch <= 3.

Each case also times ``torch.compile`` of its eager formula (``compiled_refs``; no target; n/a
with a note where it cannot run).
"""
from __future__ import annotations

import numpy as np

import _harness as H
import compiled_refs
import numba_refs
from bench_vector import _check, _measure, _torch, with_compiled, with_numba

TARGET = 0.5
SWIGLU_NUMBA_TARGET = 1.3
SWIGLU_SHAPE = (2048, 4096)
SEPIA_SHAPE = (4, 3, 224, 224)
FFN_TARGET = 3.0
FFN_SHAPE = (2048, 1024, 2816)       # M, K (hidden), N (intermediate)
SEPIA = ((0.393, 0.769, 0.189), (0.349, 0.686, 0.168), (0.272, 0.534, 0.131))


def _silu_np(a):
    return a / (1.0 + np.exp(-a))


def swiglu_case(torch, rng):
    import torch.nn.functional as F
    a = torch.from_numpy(rng.standard_normal(SWIGLU_SHAPE, dtype=np.float32))
    b = torch.from_numpy(rng.standard_normal(SWIGLU_SHAPE, dtype=np.float32))
    op = torch.ops.ascendc.swiglu
    op(a, b)                                             # compile (not timed)
    name = f"torch.ops.ascendc.swiglu float32 {SWIGLU_SHAPE}"
    an, bn = a.numpy(), b.numpy()
    def eager(u, v):
        return F.silu(u) * v

    fns = {"ours": lambda: op(a, b), "torch": lambda: F.silu(a) * b}
    compiled = with_compiled(fns, name, eager, a, b)
    fns["numpy"] = lambda: _silu_np(an) * bn
    outs = {"torch": F.silu(a) * b}
    note = with_numba(fns, outs, numba_refs.silu_mul_call(an, bn))
    check = _check(name, op(a, b), outs) + compiled
    if not note:    # numba absent: no target to measure against
        return _measure(name, fns, None), check
    return _measure(name, fns, SWIGLU_NUMBA_TARGET, against="numba", note=note), check


def sepia_case(torch, rng):
    x = torch.from_numpy(rng.random(SEPIA_SHAPE, dtype=np.float32))
    m = torch.tensor(SEPIA, dtype=torch.float32)
    op = torch.ops.ascendc.sepia
    op(x)                                                # compile (not timed)

    def eager(t):
        return torch.einsum("oc,nchw->nohw", m, t)

    xn, mn = x.numpy(), np.array(SEPIA, np.float32)
    name = f"torch.ops.ascendc.sepia float32 {SEPIA_SHAPE}"
    fns = {"ours": lambda: op(x), "torch": lambda: eager(x)}
    compiled = with_compiled(fns, name, eager, x)
    fns["numpy"] = lambda: np.einsum("oc,nchw->nohw", mn, xn)
    check = _check(name, op(x), {"torch": eager(x)}).replace("MISMATCH", "differs (rounding "
                                                               "order)") + compiled
    return _measure(name, fns, TARGET), check


def swiglu_ffn_case(torch, rng):
    import torch.nn.functional as F
    m, k, n = FFN_SHAPE
    x = torch.from_numpy(rng.uniform(-1, 1, (m, k)).astype(np.float16))
    wg = torch.from_numpy((rng.uniform(-1, 1, (k, n)) / np.sqrt(k)).astype(np.float16))
    wu = torch.from_numpy((rng.uniform(-1, 1, (k, n)) / np.sqrt(k)).astype(np.float16))
    xf, wgf, wuf = x.float(), wg.float(), wu.float()
    xn, wgn, wun = xf.numpy(), wgf.numpy(), wuf.numpy()
    op = torch.ops.ascendc.swiglu_ffn
    op(x, wg, wu)                                        # compile (not timed)

    def ffn(u, g, w):
        return F.silu(u @ g) * (u @ w)

    def eager():
        return ffn(xf, wgf, wuf)

    name = f"torch.ops.ascendc.swiglu_ffn float16 x {(m, k)} W {(k, n)} (torch: float32)"
    fns = {"ours": lambda: op(x, wg, wu), "torch": eager}
    compiled = with_compiled(fns, name, ffn, xf, wgf, wuf)
    fns["numpy"] = lambda: _silu_np(xn @ wgn) * (xn @ wun)
    check = _check(name, op(x, wg, wu), {"torch": eager().half()}) + compiled
    return _measure(name, fns, FFN_TARGET), check


OP_OVERHEAD_TARGET_US = 20.0
OP_OVERHEAD_SHAPE = (1, 3, 16, 16)


def op_overhead(seconds: float = 2.0) -> list:
    """What a shipped op adds to its kernel's launch (issue 14: <= 20 us): the median of
    ``torch.ops.ascendc.sepia`` on a small image minus the median of launching its kernel
    directly with the same arguments (block count, tiling and output allocated beforehand).

    The two are timed in alternating calls (after a warm-up of each), with the collector off:
    both run on the calling thread only (one block, no library thread pool), so alternating
    measures no switch between libraries, and a change of the machine's load during the
    measurement affects both alike. (Timed one after the other, as the vector cases are,
    the difference moved by +-15 us between runs on a loaded 2-vCPU host: op 67.8/46.2/57.0
    against launch 31.5/31.2/46.5 us in three runs of one process; alternating, it stayed
    within 2 us.) Empty when torch is not installed."""
    torch = _torch()
    if torch is None:
        return []
    import ascendc_py.torch_bridge.ops  # noqa: F401  (registers torch.ops.ascendc.*)
    from ascendc_py.torch_bridge import kernels as K
    from ascendc_py.torch_bridge.custom_op import elementwise_tiling
    from ascendc_py.torch_bridge.ops import SEPIA
    x = torch.rand(OP_OVERHEAD_SHAPE)
    out = torch.empty_like(x)
    n, _, h, w = x.shape
    t = elementwise_tiling(n * h * w, x.dtype, K.COLOR_UB_TILES, min_per_block=16384)
    coefs = [c for row in SEPIA for c in row]
    launch = K.color_matrix_kernel[t.block_dim]
    op = torch.ops.ascendc.sepia

    def direct():
        return launch(x, out, h * w, n * h * w, t.share, *coefs, t.tile)

    direct()
    torch.testing.assert_close(op(x), out, rtol=0, atol=0)
    timings = H.time_alternating({"op": lambda: op(x), "launch": direct}, seconds)
    added = (timings["op"].median_ms - timings["launch"].median_ms) * 1e3
    return [H.MetricResult(f"torch op overhead: torch.ops.ascendc.sepia {OP_OVERHEAD_SHAPE} "
                           f"minus its kernel launch", added, OP_OVERHEAD_TARGET_US,
                           f"op {timings['op'].median_ms * 1e3:.1f} µs, launch "
                           f"{timings['launch'].median_ms * 1e3:.1f} µs, alternating calls",
                           unit="µs")]


def run_cases() -> tuple:
    """(list of CaseResult, note lines); empty with a note when torch is not installed."""
    torch = _torch()
    if torch is None:
        return [], ["torch ops (and their torch.compile column): skipped, torch is not "
                    "installed"]
    import ascendc_py.torch_bridge.ops  # noqa: F401  (registers torch.ops.ascendc.*)
    rng = np.random.default_rng(5)
    results, notes = [], []
    for case in (swiglu_case, sepia_case, swiglu_ffn_case):
        r, c = case(torch, rng)
        H.flush_print(f"  measured {r.name}")
        results.append(r)
        notes.append(c)
    return results, notes + compiled_refs.notes()
