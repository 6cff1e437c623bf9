"""A 200-config sweep of the sepia kernel (``make bench``): in-process against the process pool.

The kernel is ``samples/autotune_sepia.py``'s (TILE and BUFS as ConstExpr), on a (4, 3, 224,
224) float32 image; the configs are TILE 256..2560 (10) x BUFS 1, 2 x block_dim 4..48 (10) =
200 launches (20 specialisations to compile or load). Runs alternate in one process, in-process
then pool, ``ROUNDS`` times (the machine is shared: alternating spreads the noise over both);
the first in-process run, which compiles the 20 specialisations into the disk cache, is a
warm-up and not counted, so both backends load them from the same warm cache. Pool runs use
``WORKERS`` worker processes (forkserver); the first pool run includes starting them, and later
ones reuse them (their kernels stay compiled), so both are shown. Every run's rows must equal
the first in-process run's. Wall time and CPU time (this process's threads, plus the pool
workers' from /proc, which is where a pool run's work happens) are printed per run; on a
loaded machine the CPU times are the steadier figure.
"""
from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for p in (str(ROOT), str(ROOT / "samples"), str(HERE)):
    if p not in sys.path:
        sys.path.insert(0, p)

import _harness as H  # noqa: E402

WORKERS = 2
ROUNDS = 3
SHAPE = (4, 3, 224, 224)


def configs():
    import ascendc_py as asc
    return [asc.Config(TILE=256 * t, BUFS=b, block_dim=d) for t in range(1, 11) for b in (1, 2)
            for d in (4, 8, 12, 16, 20, 24, 32, 40, 44, 48)]


def _workers_cpu() -> float:
    """CPU seconds (user + system) the pool's worker processes have used so far (Linux)."""
    from ascendc_py import sweeper
    pool = sweeper._POOL["pool"]
    total = 0.0
    for pid in list(getattr(pool, "_processes", None) or ()):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            pass
    return total


def _run(backend: str, rounds_done: list):
    import ascendc_py as asc
    import autotune_sepia as sample
    t0, c0, w0 = time.perf_counter(), time.process_time(), _workers_cpu()
    res = asc.sweep(sample.sepia_tuned, configs(), args=sample.make_args, shapes=[SHAPE],
                    backend=backend, workers=WORKERS, progress=False)
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0 + (_workers_cpu() - w0 if backend == "process" else 0.0)
    rounds_done.append((backend, wall, cpu))
    return res.records, wall


def run_metrics(rounds: int = ROUNDS) -> tuple[list, list]:
    """([MetricResult], note lines)."""
    from ascendc_py import sweeper
    done: list = []
    reference, _ = _run("inprocess", [])          # warm-up: compiles into the disk cache
    local, pool = [], []
    for _ in range(rounds):
        rows, wall = _run("inprocess", done)
        assert rows == reference, "in-process rows changed between runs"
        local.append(wall)
        rows, wall = _run("process", done)
        assert rows == reference, "process-pool rows differ from the in-process rows"
        pool.append(wall)
    sweeper.shutdown_pool()
    ok = sum(r["cycles"] is not None for r in reference)
    best = min((r for r in reference if r["cycles"] is not None), key=lambda r: r["cycles"])
    n = len(reference)
    m_local = statistics.median(local)
    m_pool = statistics.median(pool[1:]) if len(pool) > 1 else pool[0]
    metrics = [
        H.MetricResult(f"sweep sepia {n} configs in-process (median of {rounds})",
                       m_local * 1e3, None, detail=f"{n / m_local:.0f} configs/s"),
        H.MetricResult(f"sweep sepia {n} configs, pool of {WORKERS} (first, with start-up)",
                       pool[0] * 1e3, None, detail=f"{n / pool[0]:.0f} configs/s"),
        H.MetricResult(f"sweep sepia {n} configs, pool of {WORKERS} (warm workers, median)",
                       m_pool * 1e3, None, detail=f"{m_local / m_pool:.2f}x the in-process "
                                                  f"rate; rows identical"),
    ]
    notes = [f"sweep: {ok} of {n} configs ran; fastest {best['config']} "
             f"({best['cycles']:,} cycles)",
             "sweep runs (backend, wall s / CPU s of this process and its pool workers): " +
             ", ".join(f"{b} {w:.2f}/{c:.2f}" for b, w, c in done)]
    return metrics, notes


if __name__ == "__main__":
    metrics, notes = run_metrics()
    print(H.metric_table(metrics))
    for line in notes:
        print(line)
