"""Matmul efficiency (``make bench``): the modeled time of a 4096^3 float16 -> float32 matmul on
all 24 cube cores of an Ascend910B2 against the modeled cube peak.

The launch is ``samples/matmul.py``'s kernel and host tiling (``MultiCoreMatmulTiling`` over
every AIC). Its report's cycles are compared with the ideal: 4096^3 MACs at 4096 fp16 MAC per
cycle per AIC on 24 AIC (= 699,051 cycles). The metric is modeled cycles / ideal cycles (lower
is better; the target 1/0.85 = 1.18 is "at least 85 % of the cube peak"). The first 64 rows of
C are checked against NumPy.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for p in (str(ROOT), str(ROOT / "samples"), str(HERE)):
    if p not in sys.path:
        sys.path.insert(0, p)

import _harness as H  # noqa: E402

SIZE = 4096
TARGET_EFFICIENCY = 0.85


def run_metrics() -> tuple[list, list]:
    """([MetricResult], note lines)."""
    import ascendc_py as asc
    from ascendc_py import host
    import matmul as sample
    t0 = time.perf_counter()
    with asc.simulator.config.using_platform("Ascend910B2"):
        report = sample.run_large(SIZE, check_rows=64)
    eff = host.cube_efficiency(report, SIZE, SIZE, SIZE, "float16")
    metric = H.MetricResult(
        f"matmul {SIZE}^3 fp16->fp32, 24 AIC: cycles / cube-peak cycles", 1.0 / eff,
        1.0 / TARGET_EFFICIENCY,
        detail=f"{eff * 100:.1f} % of the modeled cube peak ({report.cycles:,} cycles; "
               f"bottleneck {report.bottleneck})", unit="x")
    return [metric], [f"matmul {SIZE}^3 launch took {time.perf_counter() - t0:.1f} s of wall "
                      f"time (compile, BLAS, checks)"]


if __name__ == "__main__":
    metrics, notes = run_metrics()
    print(H.metric_table(metrics))
    for line in notes:
        print(line)
