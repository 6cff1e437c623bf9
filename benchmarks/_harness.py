"""Timing helpers for ``make bench``: warm-up, repetitions, medians, the results table.

Every case times its implementations (ours, numba, torch eager, torch.compile, numpy) in the
same process, one after the other: each gets a warm-up of its own right before its timed
calls. (Interleaving single
calls of the three was tried and rejected: on a small host, the worker threads one library
leaves spinning after a call slow down the next library's call, which measures the switch,
not the implementations.) The median of the timed calls is what the ratios and targets use;
the minimum is printed beside it as the best case.
"""
from __future__ import annotations

import gc
import os
import platform
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

# Defaults, overridable from benchmarks/run.py (--quick, --reps).
WARMUP_CALLS = 5           # at least this many warm-up calls of each implementation ...
WARMUP_SECONDS = 0.15      # ... and at least this long (torch's thread pool needs ~0.1 s to settle)
REPS = 25                  # timed calls per implementation and case ...
MIN_REPS = 7               # ... but never fewer than this, ...
CASE_SECONDS = 3.0         # ... and stop adding calls once a case has taken this long
STEADY_FACTOR = 1.5        # warm-up goes on until recent calls are this close to the fastest ...
WARMUP_MAX_SECONDS = 1.0   # ... or for at most this long
NOISY_FACTOR = 2.0         # a median this many times the minimum is flagged as noisy
STARVED_FACTOR = 2.0       # torch on 2 threads this many times slower than on 1: flagged
RETRY_BUDGET_SECONDS = 60  # flagged cases are re-measured only this long after the start

_START = time.perf_counter()


def may_retry() -> bool:
    """Whether there is still time to re-measure a flagged case (keeps make bench short)."""
    return time.perf_counter() - _START < RETRY_BUDGET_SECONDS


@dataclass
class Timing:
    """Wall times of one implementation over its timed calls, in seconds."""

    samples: list = field(default_factory=list)

    @property
    def median_ms(self) -> float:
        """Median wall time in milliseconds (NaN when nothing was measured)."""
        return statistics.median(self.samples) * 1e3 if self.samples else float("nan")

    @property
    def noisy(self) -> bool:
        """True when the median is more than ``NOISY_FACTOR`` times the minimum."""
        return bool(self.samples) and self.median_ms > NOISY_FACTOR * self.min_ms

    @property
    def min_ms(self) -> float:
        """Fastest wall time in milliseconds (NaN when nothing was measured)."""
        return min(self.samples) * 1e3 if self.samples else float("nan")


@dataclass
class CaseResult:
    """One row of the table: timings per implementation and the target on ours / ``against``."""

    name: str
    timings: dict                      # "ours" / "torch" / "torch.compile" / "numpy" / "numba"
    target: Optional[float] = None     # maximum allowed median ratio ours / ``against``
    torch_1thread_ms: Optional[float] = None   # torch eager median with 1 thread (a sanity check)
    attempts: int = 1
    against: str = "torch"             # the implementation the target is measured against
    note: str = ""                     # e.g. which numba variant was the faster

    @property
    def torch_starved(self) -> bool:
        """True when torch with 2 threads was over ``STARVED_FACTOR`` x slower than with 1.

        That happens when the host does not give the process two CPUs at once: torch's
        threads then spin at their barriers and each op takes milliseconds. Such a torch time
        says nothing about torch, so the ratio is not trusted.
        """
        t = self.timings.get("torch")
        return (t is not None and self.torch_1thread_ms is not None and bool(t.samples)
                and t.median_ms > STARVED_FACTOR * self.torch_1thread_ms)

    @property
    def reliable(self) -> bool:
        """No implementation was noisy and torch's threads were not starved."""
        return not self.torch_starved and not any(t.noisy for t in self.timings.values())

    def ratio(self, other: str) -> float:
        """Median time of ours divided by the median time of ``other`` (NaN if unavailable)."""
        ours, base = self.timings.get("ours"), self.timings.get(other)
        if ours is None or base is None or not base.samples or not ours.samples:
            return float("nan")
        return ours.median_ms / base.median_ms

    @property
    def verdict(self) -> str:
        """'PASS', 'MISS' or '-' (no target, or the baseline is not installed)."""
        if self.target is None:
            return "-"
        r = self.ratio(self.against)
        if r != r:      # NaN
            return "-"
        return "PASS" if r <= self.target else "MISS"


@dataclass
class MetricResult:
    """A single measured quantity with a target (compile and first-launch times)."""

    name: str
    value_ms: float                    # the value, in ``unit`` (milliseconds unless told)
    target_ms: Optional[float]         # the largest value that passes, in ``unit``
    detail: str = ""
    unit: str = "ms"

    @property
    def verdict(self) -> str:
        """'PASS', 'MISS' or '-' when there is no target or nothing was measured."""
        if self.target_ms is None or self.value_ms != self.value_ms:
            return "-"
        return "PASS" if self.value_ms <= self.target_ms else "MISS"


def _warm_up(fn: Callable, calls: int, seconds: float) -> None:
    """Call ``fn`` at least ``calls`` times and ``seconds`` long, then on until it is steady.

    Steady: the median of the last 5 calls is within ``STEADY_FACTOR`` of the fastest call so
    far (a library's worker threads may take a while to stop sleeping between calls), or
    ``WARMUP_MAX_SECONDS`` have passed.
    """
    clock = time.perf_counter
    start, times = clock(), []
    while True:
        t0 = clock()
        fn()
        t1 = clock()
        times.append(t1 - t0)
        if len(times) < max(calls, 5) or t1 - start < seconds:
            continue
        if statistics.median(times[-5:]) <= STEADY_FACTOR * min(times) \
                or t1 - start > WARMUP_MAX_SECONDS:
            return


def time_each(fns: dict, reps: Optional[int] = None, case_seconds: Optional[float] = None,
              warmup_calls: Optional[int] = None, warmup_seconds: Optional[float] = None) -> dict:
    """Time each callable in ``fns`` (name -> zero-argument callable), one after the other.

    For each callable in turn: warm up (``warmup_calls`` calls and at least ``warmup_seconds``),
    then time ``reps`` consecutive calls, stopping early once that callable has used its share
    of ``case_seconds`` and at least ``MIN_REPS`` calls are timed. The garbage collector is off
    while timing. Returns name -> ``Timing``.
    """
    reps = REPS if reps is None else reps
    budget = (CASE_SECONDS if case_seconds is None else case_seconds) / max(1, len(fns))
    warmup_calls = WARMUP_CALLS if warmup_calls is None else warmup_calls
    warmup_seconds = WARMUP_SECONDS if warmup_seconds is None else warmup_seconds
    clock = time.perf_counter
    out = {}
    gc_was_on = gc.isenabled()
    try:
        for name, fn in fns.items():
            gc.enable()
            gc.collect()
            _warm_up(fn, warmup_calls, warmup_seconds)
            gc.disable()
            samples = []
            start = clock()
            for i in range(reps):
                t0 = clock()
                fn()
                samples.append(clock() - t0)
                if i + 1 >= MIN_REPS and clock() - start > budget:
                    break
            out[name] = Timing(samples)
    finally:
        if gc_was_on:
            gc.enable()
    return out


def time_alternating(fns: dict, seconds: float = 2.0) -> dict:
    """Time the callables in ``fns`` (name -> zero-argument callable) in alternating calls:
    one round calls each once, in turn (the order reversed every other round), until
    ``seconds`` have passed (at least ``MIN_REPS`` rounds). Each is warmed up first
    (``_warm_up``); the collector is off while timing. For implementations that leave no
    thread spinning after a call (the module docstring says why the vector cases do not
    alternate). Returns name -> ``Timing``."""
    clock = time.perf_counter
    gc_was_on = gc.isenabled()
    names = list(fns)
    samples: dict = {k: [] for k in names}
    try:
        gc.collect()
        for fn in fns.values():
            _warm_up(fn, WARMUP_CALLS, WARMUP_SECONDS)
        gc.disable()
        start, rounds = clock(), 0
        while rounds < MIN_REPS or clock() - start < seconds:
            for k in (names if rounds % 2 == 0 else names[::-1]):
                t0 = clock()
                fns[k]()
                samples[k].append(clock() - t0)
            rounds += 1
    finally:
        if gc_was_on:
            gc.enable()
    return {k: Timing(v) for k, v in samples.items()}


# ----------------------------------------------------------------------------- printing
def _ms(x: float) -> str:
    return "n/a" if x != x else (f"{x:.3f}" if x < 100 else f"{x:.1f}")


def _ratio(x: float) -> str:
    return "n/a" if x != x else f"{x:.2f}"


def _table(header: list, rows: list) -> str:
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    fmt = lambda r: "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)  # noqa: E731
                              for i, (c, w) in enumerate(zip(r, widths)))
    lines = [fmt(header), "  ".join("-" * w for w in widths)]
    lines += [fmt(r) for r in rows]
    return "\n".join(lines)


def case_table(results: list) -> str:
    """The speed table: median (min) ms per implementation, ratios, target, verdict.

    An implementation a case did not measure (numba or torch.compile absent or failing, no
    formula for that case) shows n/a, and so do its ratio."""
    header = ["case", "ours (ms)", "numba (ms)", "torch eager (ms)", "torch.compile (ms)",
              "numpy (ms)", "ours/numba", "ours/torch", "ours/torch.compile", "ours/numpy",
              "target", "result"]
    rows = []
    for r in results:
        cell = lambda k: (f"{_ms(r.timings[k].median_ms)} ({_ms(r.timings[k].min_ms)})"  # noqa: E731
                          + ("*" if r.timings[k].noisy else "")
                          + ("!" if k == "torch" and r.torch_starved else "")
                          if k in r.timings else "n/a")
        name = r.name + (f" (run {r.attempts}x)" if r.attempts > 1 else "")
        rows.append([name, cell("ours"), cell("numba"), cell("torch"), cell("torch.compile"),
                     cell("numpy"), _ratio(r.ratio("numba")), _ratio(r.ratio("torch")),
                     _ratio(r.ratio("torch.compile")), _ratio(r.ratio("numpy")),
                     "-" if r.target is None else f"ours/{r.against} <= {r.target:g}",
                     r.verdict])
    table = _table(header, rows)
    notes = [f"{r.name}: {r.note}" for r in results if r.note]
    if notes:
        table += "\n" + "\n".join(notes)
    if any(t.noisy for r in results for t in r.timings.values()):
        table += (f"\n* noisy: median > {NOISY_FACTOR:g}x min (the machine was busy or a "
                  f"library's threads kept sleeping); rerun before trusting that ratio")
    if any(r.torch_starved for r in results):
        table += (f"\n! torch on 2 threads took > {STARVED_FACTOR:g}x its 1-thread time "
                  f"(the host did not run both threads at once); rerun before trusting that ratio")
    if any(r.attempts > 1 for r in results):
        table += "\n(run Nx): the first measurement was flagged, the case was measured again"
    return table


def metric_table(results: list) -> str:
    """The compile-metrics table: value, target, verdict and the detail text."""
    header = ["metric", "median", "target", "result", "detail"]
    unit = lambda m: "x" if m.unit == "x" else f" {m.unit}"  # noqa: E731
    rows = [[m.name, f"{_ms(m.value_ms)}{unit(m)}",
             "-" if m.target_ms is None else f"<= {m.target_ms:g}{unit(m)}",
             m.verdict, m.detail] for m in results]
    return _table(header, rows)


def misses(cases: list, metrics: list) -> list:
    """One 'MISSED: ...' line per case or metric that missed its target."""
    out = []
    for r in cases:
        if r.verdict == "MISS":
            a = r.against
            out.append(f"MISSED: {r.name}: ours/{a} = {r.ratio(a):.2f} "
                       f"(target <= {r.target:g}; ours {r.timings['ours'].median_ms:.3f} ms, "
                       f"{a} {r.timings[a].median_ms:.3f} ms)"
                       + ("" if r.reliable else " [flagged as unreliable, see table]"))
        elif r.verdict == "PASS" and not r.reliable:
            out.append(f"UNRELIABLE PASS: {r.name}: ours/{r.against} = "
                       f"{r.ratio(r.against):.2f} was "
                       f"measured while flagged (see table); rerun to confirm")
    for m in metrics:
        if m.verdict == "MISS":
            out.append(f"MISSED: {m.name.strip()}: {m.value_ms:.2f} {m.unit} "
                       f"(target <= {m.target_ms:g} {m.unit})")
    return out


def machine_info() -> list:
    """Lines describing the host: CPU, counts, Python and library versions."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    versions = [f"python {platform.python_version()}"]
    for mod in ("numpy", "torch", "llvmlite", "lark"):
        try:
            versions.append(f"{mod} {__import__(mod).__version__}")
        except ImportError:
            versions.append(f"{mod} (not installed)")
    try:
        from ascendc_py.simulator import runtime
        workers = f", simulator host threads {runtime.WORKERS}"
    except Exception:  # noqa: BLE001 - a broken package is reported by the benchmarks themselves
        workers = ""
    return [f"machine: {cpu}; os.cpu_count() {os.cpu_count()}, usable CPUs {usable}{workers}; "
            f"{platform.system()} {platform.release()}",
            "versions: " + ", ".join(versions),
            load_line("at start")]


def load_line(when: str) -> str:
    """The 1/5/15-minute load averages: above the CPU count, other work shared the machine."""
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:
        return f"load average {when}: unknown"
    busy = " (busy: more runnable tasks than CPUs; expect noisy numbers)" \
        if one > (os.cpu_count() or 1) else ""
    return f"load average {when}: {one:.2f} {five:.2f} {fifteen:.2f}{busy}"


def section(title: str) -> str:
    """A section heading for the printed report."""
    return f"\n== {title} " + "=" * max(0, 74 - len(title))


def flush_print(*args) -> None:
    """print() and flush, so progress shows when stdout is a pipe (make, tee)."""
    print(*args)
    sys.stdout.flush()
