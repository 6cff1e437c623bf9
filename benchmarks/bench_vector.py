"""Vector-kernel speed against torch eager and numpy: sepia (4,3,224,224) and vadd.

Cases (issue 2, item 12), all timed in one process by ``_harness.time_each``:

- **sepia** float32 / float16 on (4,3,224,224) NCHW: ours is ``samples/sepia.py``'s ``sepia()``
  launcher as it ships (8 blocks, 2048-pixel tiles, double-buffered TQue pipeline); torch eager
  and numpy compute the same weighted sums in the same order, ``(R*cr + G*cg) + B*cb`` per
  output channel, then ``stack`` along the channel axis; numba (float32) is the same loop
  natively (``numba_refs``, the faster of ``@njit`` and ``@njit(parallel=True)``). Target
  ours/numba <= 3 (float32, issue 14).
- **vadd** 2**24 float32 and 2**20 float16: ours is ``vadd_kernel`` below, the add sample's
  TPipe/TQue structure (copy-in / compute / copy-out over 3 double-buffered queues) but with
  the block count and tile length chosen for host speed (``VADD_CONFIG``, measured with
  ``python benchmarks/bench_vector.py --sweep``) and any length handled (the last tile may be
  short). Torch eager is ``x + y``, numpy ``x + y``, numba (float32) a native loop. Targets
  ours/numba <= 1.3 (float32) and ours/torch <= 1.5 (float16) (issue 14).
- **launch overhead**: an empty kernel with 1 and 8 blocks; targets 15 and 40 µs (issue 14).

Every "ours" time is one call of a launcher that, like ``x + y`` in torch and numpy, allocates
its output (``np.empty_like``) and returns it; the kernel is compiled before timing starts.
Inputs are numpy arrays for ours and numpy, and ``torch.from_numpy`` views of the same memory
for torch. Each case checks once, before timing, that the outputs agree.

torch.compile (``compiled_refs``, no target) is the same torch eager function compiled with
``torch.compile(fn, dynamic=False)``; its compile and first call are warm-up, not timed, and its
first output is checked against torch eager's. Where it cannot run the table says n/a and a note
says why.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for p in (str(ROOT), str(ROOT / "samples"), str(HERE)):
    if p not in sys.path:
        sys.path.insert(0, p)

import ascendc_py as asc  # noqa: E402

import _harness as H  # noqa: E402
import compiled_refs  # noqa: E402
import numba_refs  # noqa: E402

SEPIA_SHAPE = (4, 3, 224, 224)
# (target ratio, the implementation it is measured against) per dtype (issue 14)
SEPIA_TARGET = {np.float32: (3.0, "numba"), np.float16: (None, "torch")}
VADD_SIZES = {np.float32: 2 ** 24, np.float16: 2 ** 20}
VADD_TARGET = {np.float32: (1.3, "numba"), np.float16: (1.5, "torch")}
LAUNCH_TARGET_US = {1: 15.0, 8: 40.0}   # empty kernel, timing on (issue 14)
TIMING_OVERHEAD_TARGET = 1.1       # issues 13, 14: timing model on vs off, sepia float32 wall time
CHECK_COST_TARGET = 1.05           # issue 11: per-instruction extent/queue checks on vs off

# (block_dim, tile length in elements) per dtype, from `--sweep` on a 2-CPU host (the simulator
# runs blocks on min(cpu_count, 8) host threads). Float32 2**24 (64 MB per operand) is memory
# bound: 16 blocks of 8192-element tiles (3 queues x 2 buffers x 32 KB = 192 KB, the whole UB)
# was fastest. Float16 2**20 (2 MB) is dominated by the fixed cost of a launch and by the
# GM <-> UB copies (memmove, ~40 % of its host samples): 2 blocks (one per host CPU) with
# 8192-element tiles, whose 3 x 16 KB of UB per step stay in the host's L1 data cache, ran
# 6-9 % faster than 16384-element tiles (interleaved calls, medians 0.309 vs 0.328 ms, minima
# 0.238 vs 0.266 ms over 800 rounds; 4096 was within noise of 8192).
VADD_CONFIG = {np.float32: (16, 8192), np.float16: (2, 8192)}


@asc.kernel
def vadd_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, n: int,
                tile: asc.ConstExpr[int]):
    """z = x + y over n elements; block i owns a contiguous share, processed tile by tile."""
    share = asc.ceildiv(asc.ceildiv(n, asc.get_block_num()), 16) * 16
    start = min(asc.get_block_idx() * share, n)
    end = min(start + share, n)
    x_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x)
    y_gm.set_global_buffer(y)
    z_gm.set_global_buffer(z)
    pipe = asc.TPipe()
    in_x = asc.TQue(asc.TPosition.VECIN, 2)
    in_y = asc.TQue(asc.TPosition.VECIN, 2)
    out_z = asc.TQue(asc.TPosition.VECOUT, 2)
    pipe.init_buffer(in_x, 2, tile * x.dtype.sizeof())
    pipe.init_buffer(in_y, 2, tile * x.dtype.sizeof())
    pipe.init_buffer(out_z, 2, tile * x.dtype.sizeof())
    p = start
    while p < end:
        count = min(tile, end - p)
        x_local = in_x.alloc_tensor(x.dtype)
        y_local = in_y.alloc_tensor(x.dtype)
        asc.data_copy(x_local, x_gm[p:], count)
        asc.data_copy(y_local, y_gm[p:], count)
        in_x.enque(x_local)
        in_y.enque(y_local)
        x_local = in_x.deque(x.dtype)
        y_local = in_y.deque(x.dtype)
        z_local = out_z.alloc_tensor(x.dtype)
        asc.add(z_local, x_local, y_local, count)
        out_z.enque(z_local)
        in_x.free_tensor(x_local)
        in_y.free_tensor(y_local)
        z_local = out_z.deque(x.dtype)
        asc.data_copy(z_gm[p:], z_local, count)
        out_z.free_tensor(z_local)
        p += count


@asc.kernel
def empty_kernel(x: asc.GlobalAddress, n: int):
    """Does nothing: its launch time is the fixed cost of a launch."""
    x_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)


def launch_overhead(block_counts=(1, 8)) -> list:
    """Median wall time of launching ``empty_kernel`` with each block count, as metrics (µs)."""
    x = np.zeros(64, np.float32)
    fns = {}
    for b in block_counts:
        empty_kernel[b](x, x.size)                      # compile (not timed)
        fns[b] = (lambda b=b: empty_kernel[b](x, x.size))
    timings = H.time_each(fns, case_seconds=1.0)
    return [H.MetricResult(f"launch overhead, empty kernel, {b} block{'s' if b > 1 else ''}",
                           t.median_ms * 1e3, LAUNCH_TARGET_US.get(b),
                           f"min {t.min_ms * 1e3:.1f} µs", unit="µs")
            for b, t in timings.items()]


def vadd(x: np.ndarray, y: np.ndarray, blocks: int = None, tile: int = None):
    """Launch ``vadd_kernel`` on 1-D arrays; returns (z, report). Defaults from VADD_CONFIG."""
    cfg_blocks, cfg_tile = VADD_CONFIG.get(x.dtype.type, (8, 4096))
    z = np.empty_like(x)
    report = vadd_kernel[blocks or cfg_blocks](x, y, z, x.size, tile or cfg_tile)
    return z, report


# ----------------------------------------------------------------------------- formulas
def sepia_coefficients(dtype) -> list:
    """The sample's coefficients rounded to ``dtype`` (as the kernel's scalars are), as floats."""
    from sepia import SEPIA
    return [tuple(float(np.dtype(dtype).type(c)) for c in row) for row in SEPIA]


def sepia_torch(t, coefs):
    """Torch eager sepia: per output channel (R*cr + G*cg) + B*cb, stacked on dim 1."""
    import torch
    r, g, b = t[:, 0], t[:, 1], t[:, 2]
    return torch.stack([r * cr + g * cg + b * cb for cr, cg, cb in coefs], dim=1)


def sepia_numpy(a, coefs):
    """Numpy sepia with the same arithmetic (coefficients as scalars of the image dtype)."""
    dt = a.dtype.type
    r, g, b = a[:, 0], a[:, 1], a[:, 2]
    return np.stack([r * dt(cr) + g * dt(cg) + b * dt(cb) for cr, cg, cb in coefs], axis=1)


def _torch():
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(2)
    return torch


def _check(name: str, ours, others: dict) -> str:
    """Compare ours with each baseline under asc.testing's dtype rules; one summary line."""
    parts = []
    for label, value in others.items():
        cmp = asc.testing.compare(ours, value)
        parts.append(f"{label} {'ok' if cmp.passed else 'MISMATCH'} "
                     f"(max abs err {cmp.max_abs_err:.2g})")
    return f"check {name}: ours vs " + ", ".join(parts)


# ----------------------------------------------------------------------------- cases
def _measure(name: str, fns: dict, target, attempts: int = 2, against: str = "torch",
             note: str = "") -> H.CaseResult:
    """Time ``fns``; also torch's formula on 1 thread as a check. Re-measure once if flagged.

    A measurement is flagged when an implementation's median is over twice its minimum, or
    when torch on 2 threads was over twice as slow as on 1 (see ``CaseResult.torch_starved``).
    The last measurement is kept; the table says when a case was measured more than once.
    No re-measuring once the bench has run ``_harness.RETRY_BUDGET_SECONDS``.
    """
    torch = _torch() if "torch" in fns else None
    for attempt in range(1, attempts + 1):
        result = H.CaseResult(name, H.time_each(fns), target, attempts=attempt,
                              against=against, note=note)
        if torch is not None:
            torch.set_num_threads(1)
            try:
                one = H.time_each({"torch": fns["torch"]}, reps=7, case_seconds=0.5)
            finally:
                torch.set_num_threads(2)
            result.torch_1thread_ms = one["torch"].median_ms
        if result.reliable or not H.may_retry():
            break
    return result


def with_numba(fns: dict, outs: dict, ref) -> str:
    """Add a numba reference ``(variant, call)`` (or None: none for this case, or numba absent)
    to the timed calls and the checked outputs; returns the table note naming the variant."""
    if ref is None:
        return ""
    variant, fns["numba"] = ref
    outs["numba"] = fns["numba"]()
    return f"numba: {variant} was the faster"


def with_compiled(fns: dict, case: str, eager, *args) -> str:
    """Add ``torch.compile(eager)`` applied to ``args`` (``compiled_refs``; compiled and called
    once here, untimed) to the timed calls as "torch.compile"; returns the check of its first
    output against ``eager(*args)`` for the case's check line (empty when it is n/a)."""
    call, first = compiled_refs.compiled_call(case, eager, *args)
    if call is None:
        return ""
    fns["torch.compile"] = call
    import torch
    want = eager(*args)
    if torch.equal(first, want):    # identical: no need for compare()'s float64 pass (3 s on 2^24)
        return "; torch.compile vs torch eager ok (identical)"
    cmp = asc.testing.compare(first, want)
    return (f"; torch.compile vs torch eager {'ok' if cmp.passed else 'MISMATCH'} "
            f"(max abs err {cmp.max_abs_err:.2g})")


def _torch_add(a, b):
    """vadd's torch formula as a function of its inputs (what torch.compile compiles)."""
    return a + b


def sepia_case(dtype, rng) -> tuple:
    """Time sepia for one dtype; returns (CaseResult, check line)."""
    from sepia import sepia
    torch = _torch()
    img = rng.random(SEPIA_SHAPE, dtype=np.float32).astype(dtype)
    sepia(img)                                          # compile (not timed)
    name = f"sepia {np.dtype(dtype).name} {SEPIA_SHAPE}"
    coefs = sepia_coefficients(dtype)
    fns = {"ours": lambda: sepia(img)}
    outs = {"numpy": sepia_numpy(img, coefs)}
    compiled = ""
    if torch is not None:
        timg = torch.from_numpy(img)
        fns["torch"] = lambda: sepia_torch(timg, coefs)
        outs["torch"] = sepia_torch(timg, coefs)
        compiled = with_compiled(fns, name, lambda t: sepia_torch(t, coefs), timg)
    fns["numpy"] = lambda: sepia_numpy(img, coefs)
    note = with_numba(fns, outs, numba_refs.sepia_call(img, coefs)
                      if dtype == np.float32 else None)
    check = _check(name, sepia(img)[0], outs) + compiled
    target, against = SEPIA_TARGET[dtype]
    return _measure(name, fns, target, against=against, note=note), check


def vadd_case(dtype, rng) -> tuple:
    """Time vadd for one dtype; returns (CaseResult, check line)."""
    torch = _torch()
    n = VADD_SIZES[dtype]
    x = rng.random(n, dtype=np.float32).astype(dtype)
    y = rng.random(n, dtype=np.float32).astype(dtype)
    blocks, tile = VADD_CONFIG[dtype]
    vadd(x, y)                                          # compile (not timed)
    name = f"vadd {np.dtype(dtype).name} 2^{n.bit_length() - 1} [{blocks} blk, tile {tile}]"
    fns = {"ours": lambda: vadd(x, y)}
    outs = {"numpy": x + y}
    compiled = ""
    if torch is not None:
        tx, ty = torch.from_numpy(x), torch.from_numpy(y)
        fns["torch"] = lambda: tx + ty
        outs["torch"] = tx + ty
        compiled = with_compiled(fns, name, _torch_add, tx, ty)
    fns["numpy"] = lambda: x + y
    note = with_numba(fns, outs, numba_refs.vadd_call(x, y) if dtype == np.float32 else None)
    check = _check(name, vadd(x, y)[0], outs) + compiled
    target, against = VADD_TARGET[dtype]
    return _measure(name, fns, target, against=against, note=note), check


def run_cases() -> tuple:
    """All vector cases, in a fixed order; returns (list of CaseResult, list of note lines).

    The notes are the output checks of each case (and a note when numba is missing).
    """
    rng = np.random.default_rng(2024)
    results, checks = [], []
    for fn, dtype in ((sepia_case, np.float32), (sepia_case, np.float16),
                      (vadd_case, np.float32), (vadd_case, np.float16)):
        r, c = fn(dtype, rng)
        H.flush_print(f"  measured {r.name}")
        results.append(r)
        checks.append(c)
    if not numba_refs.available():
        checks.append(numba_refs.missing_note())
    if _torch() is None:
        checks.append("torch eager and torch.compile: skipped, torch is not installed")
    checks += compiled_refs.notes()
    return results, checks


def timing_overhead():
    """Sepia float32 wall time with the timing model on / off (target <= 1.1, issues 13 and 14),
    timed in alternating calls: both are our launches, and timed one after the other a burst of
    host load during either moved the ratio (1.37 in one run where alternating calls gave
    1.07-1.08).

    Returns a ``MetricResult`` (unit 'x'), or None when the compiler has no timing switch
    (``ascendc_py.compiler.jit.set_timing``) yet.
    """
    try:
        from ascendc_py.compiler.jit import set_timing
    except ImportError:
        return None
    from sepia import sepia
    img = np.random.default_rng(5).random(SEPIA_SHAPE, dtype=np.float32)

    def run(flag):
        set_timing(flag)
        try:
            sepia(img)
        finally:
            set_timing(None)

    sepia(img)                                          # compile (not timed)
    t = H.time_alternating({"on": lambda: run(True), "off": lambda: run(False)})
    on, off = t["on"].median_ms, t["off"].median_ms
    return H.MetricResult("timing model on/off, sepia f32 wall", on / off, TIMING_OVERHEAD_TARGET,
                          f"on {on:.3f} ms, off {off:.3f} ms (medians, alternating calls)",
                          unit="x")


def check_cost() -> list:
    """Issue 11's target: the per-instruction tensor-extent and queue-tensor checks cost at most
    5 % of the vector benchmarks' wall time (sepia float32 and float16, vadd float32 and
    float16, shipped configurations). Each kernel is compiled twice (the checks off with
    ``compiler.jit.set_extent_checks(False)``, a separate cache entry; the first calls compile
    them) and the two variants are timed in alternating calls for a second
    (``_harness.time_alternating``: thousands of calls of sepia; 31 rounds, as before, were
    12 ms of sepia and moved its ratio by several per cent between runs). Returns
    ``MetricResult``s (unit 'x', checked / unchecked medians)."""
    try:
        from ascendc_py.compiler.jit import set_extent_checks
    except ImportError:
        return []
    from sepia import sepia
    rng = np.random.default_rng(11)
    img = rng.random(SEPIA_SHAPE, dtype=np.float32)
    cases = {f"sepia {np.dtype(t).name}": (lambda a=img.astype(t): sepia(a))
             for t in SEPIA_TARGET}
    for dtype, n in VADD_SIZES.items():
        x, y = (rng.random(n, dtype=np.float32).astype(dtype) for _ in range(2))
        cases[f"vadd {np.dtype(dtype).name}"] = lambda x=x, y=y: vadd(x, y)
    metrics = []
    for name, fn in cases.items():
        def variant(flag, fn=fn):
            set_extent_checks(flag)
            try:
                fn()
            finally:
                set_extent_checks(None)
        t = H.time_alternating({"on": lambda: variant(True), "off": lambda: variant(False)},
                               seconds=1.0)
        on, off = t["on"].median_ms, t["off"].median_ms
        metrics.append(H.MetricResult(f"extent checks on/off, {name} wall", on / off,
                                      CHECK_COST_TARGET,
                                      f"on {on:.3f} ms, off {off:.3f} ms (medians of "
                                      f"{len(t['on'].samples)} alternating calls)", unit="x"))
    return metrics


def _interleaved(a, b, rounds: int = 31) -> tuple[float, float]:
    """Median wall times (ms) of ``a`` and ``b`` timed in alternating calls (after 3 warm-up
    calls each), so that a change in the machine's load affects both alike."""
    import statistics
    import time
    for _ in range(3):
        a(), b()
    times: tuple[list, list] = ([], [])
    for i in range(rounds):
        order = ((0, a), (1, b)) if i % 2 == 0 else ((1, b), (0, a))
        for which, fn in order:
            t0 = time.perf_counter()
            fn()
            times[which].append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times[0]), statistics.median(times[1])


def fusion_gain(rounds: int = 201) -> list:
    """Elementwise fusion (``compiler/codegen/fusion.py``) on / off: sepia (its ``mix`` is a
    run of 5 vector instructions) and vadd (no run: a control), each with the shipped launch
    and with one block, timed in alternating calls; the one-block sepia isolates the in-kernel
    time best (no thread-pool dispatch). Results, checks and report figures are the same
    either way (tests/codegen/test_fusion.py). Returns ``MetricResult``s (unit 'x', fused /
    unfused medians; no target). ``python benchmarks/bench_vector.py --fusion`` prints them."""
    from ascendc_py.compiler.codegen import fusion
    from sepia import sepia
    rng = np.random.default_rng(13)
    img = rng.random(SEPIA_SHAPE, dtype=np.float32)
    x, y = (rng.random(VADD_SIZES[np.float16], dtype=np.float32).astype(np.float16)
            for _ in range(2))
    cases = {"sepia float32": lambda: sepia(img),
             "sepia float32, 1 block": lambda: sepia(img, 1),
             "vadd float16 (no run)": lambda: vadd(x, y)}
    metrics = []
    for name, fn in cases.items():
        def variant(flag, fn=fn):
            fusion.set_enabled(flag)
            try:
                fn()
            finally:
                fusion.set_enabled(True)
        on, off = _interleaved(lambda: variant(True), lambda: variant(False), rounds)
        metrics.append(H.MetricResult(f"fusion on/off, {name} wall", on / off, None,
                                      f"on {on:.3f} ms, off {off:.3f} ms (medians)", unit="x"))
    return metrics


def host_threads_gain(rounds: int = 201) -> list:
    """What the second host thread buys (diagnostic, no target): sepia float32 and float16 and
    vadd float16 as shipped, timed in alternating calls against the same launch kept on the
    launching thread alone (``simulator.block_runner.SERIAL_SECONDS`` raised for that call;
    which thread runs a block never changes what it computes), plus process CPU time per call.
    Returns ``MetricResult``s (unit 'x': shipped / one-thread wall medians). ``python
    benchmarks/bench_vector.py --threads`` prints them."""
    import statistics
    import time
    from ascendc_py.simulator import block_runner
    from sepia import sepia
    if not hasattr(block_runner, "SERIAL_SECONDS"):
        return []
    rng = np.random.default_rng(17)
    img = rng.random(SEPIA_SHAPE, dtype=np.float32)
    img16 = img.astype(np.float16)
    x, y = (rng.random(VADD_SIZES[np.float16], dtype=np.float32).astype(np.float16)
            for _ in range(2))
    cases = {"sepia float32": lambda: sepia(img), "sepia float16": lambda: sepia(img16),
             "vadd float16": lambda: vadd(x, y)}
    metrics = []
    for name, fn in cases.items():
        cpu: tuple[list, list] = ([], [])

        def variant(serial, fn=fn):
            saved = block_runner.SERIAL_SECONDS
            if serial:
                block_runner.SERIAL_SECONDS = float("inf")
            c0 = time.process_time()
            try:
                fn()
            finally:
                block_runner.SERIAL_SECONDS = saved
            cpu[serial].append(time.process_time() - c0)
        both, one = _interleaved(lambda: variant(False), lambda: variant(True), rounds)
        metrics.append(H.MetricResult(
            f"2 host threads / 1, {name} wall", both / one, None,
            f"2: {both:.3f} ms, 1: {one:.3f} ms; CPU {statistics.mean(cpu[0]) * 1e3:.3f} / "
            f"{statistics.mean(cpu[1]) * 1e3:.3f} ms", unit="x"))
    return metrics


# ----------------------------------------------------------------------------- tuning sweep
def sweep(blocks=(1, 2, 4, 8, 16, 32), tiles=(2048, 4096, 8192, 16384)) -> None:
    """Print vadd times over block counts and tile lengths (re-derive VADD_CONFIG with this)."""
    rng = np.random.default_rng(0)
    torch = _torch()
    ub = asc.current_platform().memories.ub.size
    for dtype, n in VADD_SIZES.items():
        x = rng.random(n, dtype=np.float32).astype(dtype)
        y = rng.random(n, dtype=np.float32).astype(dtype)
        fns = {}
        if torch is not None:
            tx, ty = torch.from_numpy(x), torch.from_numpy(y)
            fns["torch x+y"] = lambda: tx + ty
        for b in blocks:
            for t in tiles:
                if 6 * t * x.itemsize > ub:
                    continue
                vadd(x, y, b, t)
                fns[f"{b} blocks, tile {t}"] = (lambda b=b, t=t: vadd(x, y, b, t))
        timings = H.time_each(fns, reps=15, case_seconds=15)
        print(f"vadd {np.dtype(dtype).name} n={n}: median (min) ms")
        for label, tm in sorted(timings.items(), key=lambda kv: kv[1].median_ms):
            print(f"  {label:24s} {tm.median_ms:9.3f} ({tm.min_ms:.3f})")


if __name__ == "__main__":
    if "--sweep" in sys.argv[1:]:
        sweep()
    elif "--fusion" in sys.argv[1:]:
        print(H.metric_table(fusion_gain()))
    elif "--threads" in sys.argv[1:]:
        print(H.metric_table(host_threads_gain()))
    else:
        res, chk = run_cases()
        print(H.case_table(res))
        print("\n".join(chk))
