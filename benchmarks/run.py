"""`make bench`: ascendc_py against numba, torch eager, torch.compile and numpy, and compile /
first-launch times.

Prints the machine (and its load average), then one table of vector cases (median and, in
brackets, min wall time per implementation, ratios of medians, target on ours/torch eager,
PASS/MISS), the timing model's overhead (sepia with the timing model on vs off), then the
compile metrics, then one ``MISSED: ...`` line per target missed. A missed target does not
change the exit code (0); a benchmark that fails to run prints ``ERROR: ...`` and makes the
exit code 1.

Options:
  --quick          fewer rounds (smoke test of the benchmark itself; numbers are noisier)
  --reps N         timed calls per implementation (default 25; fewer once a case took ~3 s)
  --only WHAT      'vector', 'matmul', 'compile' or 'sweep'
  --json PATH      also write all results as JSON
  --no-torch-compile  skip the torch.compile column (n/a; saves its compile time)

Details of each case are in the docstrings of bench_vector.py and bench_compile.py.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for _p in (str(ROOT), str(HERE)):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import _harness as H  # noqa: E402


def _parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--quick", action="store_true", help="fewer rounds; noisier numbers")
    ap.add_argument("--reps", type=int, default=None, help="timed rounds per vector case")
    ap.add_argument("--only", choices=("vector", "compile", "matmul", "sweep"), default=None)
    ap.add_argument("--json", type=Path, default=None, help="write results as JSON here")
    ap.add_argument("--no-torch-compile", action="store_true",
                    help="skip timing torch.compile of the torch eager formulas")
    return ap.parse_args(argv)


def _short(exc: Exception) -> str:
    """An exception in one line: its type and the first line of its message."""
    lines = [ln.strip() for ln in str(exc).strip().splitlines() if ln.strip()] or [""]
    return f"{type(exc).__name__}: {lines[0]}"


def _to_json(cases, metrics, machine, errors) -> dict:
    return dict(
        machine=machine, errors=errors,
        cases=[dict(name=c.name, target=c.target, verdict=c.verdict,
                    ratio_torch=c.ratio("torch"), ratio_numpy=c.ratio("numpy"),
                    ratio_numba=c.ratio("numba"),
                    ratio_torch_compile=c.ratio("torch.compile"),
                    median_ms={k: t.median_ms for k, t in c.timings.items()},
                    min_ms={k: t.min_ms for k, t in c.timings.items()},
                    rounds=len(c.timings["ours"].samples)) for c in cases],
        metrics=[dict(name=m.name.strip(), value_ms=m.value_ms, target_ms=m.target_ms,
                      verdict=m.verdict, detail=m.detail) for m in metrics])


def main(argv=None) -> int:
    """Run the benchmarks, print the report; returns the process exit code."""
    args = _parse(sys.argv[1:] if argv is None else argv)
    if args.quick:
        H.REPS, H.MIN_REPS, H.CASE_SECONDS = 7, 3, 1.0
        H.WARMUP_CALLS, H.WARMUP_SECONDS, H.WARMUP_MAX_SECONDS = 2, 0.05, 0.2
    if args.no_torch_compile:
        import compiled_refs
        compiled_refs.set_enabled(False)
    if args.reps:
        H.REPS = max(1, args.reps)
        H.MIN_REPS = min(H.MIN_REPS, H.REPS)
    t_start = time.perf_counter()
    machine = H.machine_info()
    H.flush_print("ascendc_py benchmarks (make bench)")
    for line in machine:
        H.flush_print(line)
    H.flush_print("torch eager runs with torch.set_num_threads(2); times are wall-clock ms per "
                  "call, median (min) after warm-up")

    cases, metrics, notes, errors = [], [], [], []
    if args.only in (None, "vector"):
        H.flush_print(H.section("vector kernels vs numba, torch eager, torch.compile and numpy"))
        try:
            import bench_vector
            cases, notes = bench_vector.run_cases()
        except Exception as exc:  # noqa: BLE001 - report it, still run the rest
            errors.append(f"vector benchmarks: {_short(exc)}")
            traceback.print_exc()
        if cases:
            H.flush_print(H.case_table(cases))
            for line in notes:
                H.flush_print(line)
        try:
            launch = bench_vector.launch_overhead()
            metrics += launch
            H.flush_print(H.metric_table(launch))
        except Exception as exc:  # noqa: BLE001
            errors.append(f"launch overhead: {_short(exc)}")
            traceback.print_exc()
        H.flush_print(H.section("torch ops vs their torch formulas (eager and torch.compile)"))
        try:
            import bench_torch_ops
            op_cases, op_notes = bench_torch_ops.run_cases()
            if op_cases:
                H.flush_print(H.case_table(op_cases))
            for line in op_notes:
                H.flush_print(line)
            cases = cases + op_cases
        except Exception as exc:  # noqa: BLE001 - report it, still run the rest
            errors.append(f"torch op benchmarks: {_short(exc)}")
            traceback.print_exc()
        try:
            added = bench_torch_ops.op_overhead()
            metrics += added
            if added:
                H.flush_print(H.metric_table(added))
        except Exception as exc:  # noqa: BLE001
            errors.append(f"torch op overhead: {_short(exc)}")
            traceback.print_exc()
        try:
            overhead = bench_vector.timing_overhead() if cases else None
        except Exception as exc:  # noqa: BLE001
            overhead = None
            errors.append(f"timing-model overhead: {_short(exc)}")
            traceback.print_exc()
        if overhead is not None:
            metrics.append(overhead)
            H.flush_print(H.metric_table([overhead]))
        try:
            costs = bench_vector.check_cost() if cases else []
        except Exception as exc:  # noqa: BLE001
            costs = []
            errors.append(f"extent-check cost: {_short(exc)}")
            traceback.print_exc()
        if costs:
            metrics += costs
            H.flush_print(H.metric_table(costs))
    if args.only in (None, "matmul"):
        H.flush_print(H.section("matmul efficiency (modeled cycles vs cube peak)"))
        try:
            import bench_matmul
            mm_metrics, lines = bench_matmul.run_metrics()
            metrics += mm_metrics
            H.flush_print(H.metric_table(mm_metrics))
            for line in lines:
                H.flush_print(line)
        except Exception as exc:  # noqa: BLE001
            errors.append(f"matmul benchmark: {_short(exc)}")
            traceback.print_exc()
    if args.only in (None, "sweep"):
        H.flush_print(H.section("a 200-config sweep: in-process vs process pool"))
        try:
            import bench_sweep
            sweep_metrics, lines = bench_sweep.run_metrics(1 if args.quick else
                                                           bench_sweep.ROUNDS)
            metrics += sweep_metrics
            H.flush_print(H.metric_table(sweep_metrics))
            for line in lines:
                H.flush_print(line)
        except Exception as exc:  # noqa: BLE001
            errors.append(f"sweep benchmark: {_short(exc)}")
            traceback.print_exc()
    if args.only in (None, "compile"):
        H.flush_print(H.section("compile and first launch (fresh subprocesses)"))
        try:
            import bench_compile
            runs = 1 if args.quick else bench_compile.RUNS
            compile_metrics, lines = bench_compile.run_metrics(runs)
            metrics += compile_metrics
            H.flush_print(H.metric_table(compile_metrics))
            for line in lines:
                H.flush_print(line)
        except Exception as exc:  # noqa: BLE001
            errors.append(f"compile benchmarks: {_short(exc)}")
            traceback.print_exc()

    H.flush_print(H.section("summary"))
    missed = H.misses(cases, metrics)
    for line in missed:
        H.flush_print(line)
    for line in errors:
        H.flush_print(f"ERROR: {line}")
    H.flush_print(H.load_line("at end"))
    passed = sum(c.verdict == "PASS" for c in cases) + sum(m.verdict == "PASS" for m in metrics)
    H.flush_print(f"{passed} target(s) met, {len(missed)} missed, {len(errors)} error(s); "
                  f"bench took {time.perf_counter() - t_start:.1f} s")
    if args.json:
        args.json.write_text(json.dumps(_to_json(cases, metrics, machine, errors), indent=2))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
