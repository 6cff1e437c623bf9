"""``asc.profile()``: collect every kernel launch inside a ``with`` block.

    import ascendc_py as asc

    with asc.profile() as prof:
        loss = model(x).sum(); loss.backward()
    print(prof)                              # a table like torch.profiler's key_averages()
    prof.export_chrome_trace("trace.json")   # one event per launch; Perfetto / chrome://tracing

Works around any code (torch ops from ``torch_bridge``, direct ``kernel[n](...)`` launches),
from any thread. Launches made by a ``torch_bridge`` op are attributed to the op
("ascendc::swiglu"); other launches to their kernel only. This module does not import torch.
"""
from __future__ import annotations

import contextvars
import json
import os
import sys
import threading
import time
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from .. import profiler

_current_op: contextvars.ContextVar = contextvars.ContextVar("ascendc_py_op", default="")


def enter_op(name: str) -> contextvars.Token:
    """Attribute the launches made from now on to the op ``name`` (a torch op's launcher call,
    ``AscendOp._launch``) until ``exit_op`` is called with the returned token."""
    return _current_op.set(name)


def exit_op(token: contextvars.Token) -> None:
    """End what ``enter_op`` began."""
    _current_op.reset(token)


def current_op() -> str:
    """The op whose launcher is running in this context, or ''."""
    return _current_op.get()


@dataclass
class LaunchEvent:
    """One kernel launch seen by a profile. Times: ``device_us`` simulated on ``platform``;
    ``host_seconds`` the launch's host wall time (binding, finding or compiling the code,
    running the blocks); ``host_start`` seconds after the profile started;
    ``device_start_us`` where the launch sits on the simulated device timeline (launches back
    to back, in launch order)."""

    op: str
    kernel: str
    block_dim: int
    platform: str
    cycles: int
    device_us: float
    host_seconds: float
    host_start: float
    device_start_us: float = 0.0
    compile_seconds: float = 0.0   # part of host_seconds spent compiling (first launches)
    bottleneck: str = ""
    report: Any = field(default=None, repr=False)   # kept only when it holds a trace

    @property
    def name(self) -> str:
        return self.op or self.kernel


@dataclass
class EventStats:
    """Launches of one (op, kernel) pair, summed (a row of ``key_averages()``)."""

    op: str
    kernel: str
    calls: int = 0
    device_us: float = 0.0
    host_seconds: float = 0.0
    block_dims: set = field(default_factory=set)

    @property
    def device_avg_us(self) -> float:
        return self.device_us / self.calls if self.calls else 0.0

    @property
    def host_avg_seconds(self) -> float:
        return self.host_seconds / self.calls if self.calls else 0.0


_SORT_KEYS = {"device_time_total": lambda s: -s.device_us,
              "device_time": lambda s: -s.device_avg_us,
              "host_time_total": lambda s: -s.host_seconds,
              "calls": lambda s: -s.calls,
              "name": lambda s: (s.op or s.kernel, s.kernel)}


class profile:
    """Context manager recording every kernel launch inside it (``asc.profile``).

    ``record_instructions=True`` also records each launch's per-instruction trace (it sets
    ``ASCENDC_PY_TRACE=1`` for the duration), which ``export_chrome_trace`` nests under the
    launches; it slows launches down.

    After the block: ``events`` (``LaunchEvent`` per launch), ``key_averages()``,
    ``table()`` (also ``str(prof)``), ``device_time_us`` (sum of simulated device times),
    ``host_seconds`` (sum of launch host times), ``export_chrome_trace(path)``.
    """

    def __init__(self, *, record_instructions: bool = False):
        self.record_instructions = record_instructions
        self.events: list[LaunchEvent] = []
        self._lock = threading.Lock()
        self._t0 = 0.0
        self._env_before: Optional[str] = None
        self._active = False

    # ------------------------------------------------------------------ recording
    def __enter__(self) -> "profile":
        if self._active:
            raise RuntimeError("this profile is already recording")
        self._active = True
        self._t0 = time.perf_counter()
        if self.record_instructions:
            self._env_before = os.environ.get("ASCENDC_PY_TRACE")
            os.environ["ASCENDC_PY_TRACE"] = "1"
        profiler.observe(self._on_launch)
        return self

    def __exit__(self, *exc) -> None:
        profiler.unobserve(self._on_launch)
        if self.record_instructions:
            if self._env_before is None:
                os.environ.pop("ASCENDC_PY_TRACE", None)
            else:
                os.environ["ASCENDC_PY_TRACE"] = self._env_before
        self._active = False

    def _on_launch(self, report) -> None:
        end = time.perf_counter()
        host = report.wall_seconds + report.prepare_seconds
        traced = any(getattr(b, "trace", None) is not None for b in report._blocks)
        with self._lock:
            prev = self.events[-1] if self.events else None
            self.events.append(LaunchEvent(
                op=current_op(), kernel=report.kernel, block_dim=report.block_dim,
                platform=report.platform, cycles=report.cycles, device_us=report.time_us,
                host_seconds=host, host_start=max(end - host - self._t0, 0.0),
                device_start_us=prev.device_start_us + prev.device_us if prev else 0.0,
                compile_seconds=report.prepare_seconds if report.code_origin == "compiled"
                else 0.0,
                bottleneck=report.bottleneck, report=report if traced else None))

    # ------------------------------------------------------------------ summaries
    @property
    def device_time_us(self) -> float:
        """Sum of the simulated device times of all launches (microseconds)."""
        return sum(e.device_us for e in self.events)

    @property
    def host_seconds(self) -> float:
        """Sum of the host wall times of all launches."""
        return sum(e.host_seconds for e in self.events)

    def __len__(self) -> int:
        return len(self.events)

    def key_averages(self, sort_by: str = "device_time_total") -> list[EventStats]:
        """One ``EventStats`` per (op, kernel), sorted by ``sort_by`` (device_time_total,
        device_time, host_time_total, calls or name)."""
        if sort_by not in _SORT_KEYS:
            raise ValueError(f"sort_by must be one of {', '.join(_SORT_KEYS)}")
        rows: dict[tuple, EventStats] = {}
        for e in self.events:
            s = rows.setdefault((e.op, e.kernel), EventStats(e.op, e.kernel))
            s.calls += 1
            s.device_us += e.device_us
            s.host_seconds += e.host_seconds
            s.block_dims.add(e.block_dim)
        return sorted(rows.values(), key=_SORT_KEYS[sort_by])

    def table(self, sort_by: str = "device_time_total", row_limit: Optional[int] = None) -> str:
        """The key averages as a text table (like ``torch.profiler``'s ``table()``)."""
        rows = self.key_averages(sort_by)[:row_limit]
        total = self.device_time_us
        head = ("Op", "Kernel", "Calls", "Blocks", "Device total", "Device avg", "Device %",
                "Host total", "Host avg")
        body = [(r.op or "-", r.kernel, str(r.calls),
                 ",".join(str(b) for b in sorted(r.block_dims)),
                 _us(r.device_us), _us(r.device_avg_us),
                 f"{100.0 * r.device_us / total:.1f}%" if total else "-",
                 _s(r.host_seconds), _s(r.host_avg_seconds)) for r in rows]
        widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h)
                  for i, h in enumerate(head)]
        rule = "  ".join("-" * w for w in widths)

        def line(cells):
            return "  ".join(c.ljust(w) if i < 2 else c.rjust(w)
                             for i, (c, w) in enumerate(zip(cells, widths)))

        platforms = sorted({e.platform for e in self.events})
        lines = [rule, line(head), rule] + [line(b) for b in body] + [rule]
        compiling = sum(e.compile_seconds for e in self.events)
        lines.append(f"Device time total (simulated{', ' if platforms else ''}"
                     f"{', '.join(platforms)}): {_us(total)}   Host time total: "
                     f"{_s(self.host_seconds)}"
                     + (f" (of which compiling kernels: {_s(compiling)})" if compiling else "")
                     + f"   Launches: {len(self.events)}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()

    def __repr__(self) -> str:
        return (f"<asc.profile: {len(self.events)} launches, device {_us(self.device_time_us)}, "
                f"host {_s(self.host_seconds)}>")

    def save_html(self, path) -> str:
        """Write a self-contained HTML page (opens offline): the table, the launches in order
        and, for launches recorded with ``record_instructions=True``, each one's report with
        the timeline of every core (``simulator/report_html.py``)."""
        from ..simulator.report_html import save_profile
        return save_profile(self, path)

    def _repr_html_(self) -> str:
        from ..simulator.report_html import profile_fragment
        return profile_fragment(self)

    # ------------------------------------------------------------------ Chrome trace
    def export_chrome_trace(self, path) -> str:
        """Write one Chrome Trace Event JSON (Perfetto, chrome://tracing).

        Process "host": one event per launch at its host wall time (seconds since the profile
        started). Process "NPU (simulated …)": the same launches on the simulated device
        timeline, back to back in launch order. Launches recorded with per-instruction traces
        (``record_instructions=True``) get their instructions nested below, one process per
        core and one lane per pipe, offset to the launch's device start.
        """
        platform = self.events[0].platform if self.events else "?"
        npu = f"NPU (simulated {platform})"
        events: list[dict] = []
        for pid, name, order in (("host", "host (kernel launches)", 0), (npu, npu, 1)):
            events.append({"name": "process_name", "ph": "M", "pid": pid, "args": {"name": name}})
            events.append({"name": "process_sort_index", "ph": "M", "pid": pid,
                           "args": {"sort_index": order}})
        for i, e in enumerate(self.events):
            label = f"{e.op} / {e.kernel}" if e.op else e.kernel
            args = {"op": e.op, "kernel": e.kernel, "block_dim": e.block_dim,
                    "device_us": round(e.device_us, 3), "cycles": e.cycles,
                    "host_ms": round(e.host_seconds * 1e3, 3), "bottleneck": e.bottleneck,
                    "launch": i}
            events.append({"name": label, "cat": "launch", "ph": "X", "pid": "host",
                           "tid": "launch", "ts": e.host_start * 1e6,
                           "dur": e.host_seconds * 1e6, "args": args})
            events.append({"name": label, "cat": "kernel", "ph": "X", "pid": npu,
                           "tid": "stream", "ts": e.device_start_us, "dur": e.device_us,
                           "args": args})
            if e.report is not None:
                events.extend(_instruction_events(e))
        path = Path(path)
        if path.parent and not path.parent.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w") as f:
            json.dump({"traceEvents": events, "displayTimeUnit": "ns",
                       "otherData": {"platform": platform, "launches": len(self.events),
                                     "device_time_us": self.device_time_us}}, f)
        return os.fspath(path)


def _instruction_events(e: LaunchEvent) -> list[dict]:
    from ..dsl.types import PIPE_NAMES
    from ..simulator.trace import _OPS, core_events
    report = e.report
    us_per_cycle = 1.0 / report.clock_mhz
    out = []
    for core in range(len(report.core_cycles)):
        pid = f"NPU core{core}"
        for block, start, occ, lat, pipe, site, op in core_events(report, core):
            out.append({"name": _OPS[op] if 0 <= op < len(_OPS) else "?", "cat": "instruction",
                        "ph": "X", "pid": pid, "tid": PIPE_NAMES[pipe],
                        "ts": e.device_start_us + start * us_per_cycle,
                        "dur": max(occ, 1) * us_per_cycle,
                        "args": {"kernel": e.kernel, "block": block, "latency_cycles": lat}})
    return out


def _us(v: float) -> str:
    return f"{v / 1e3:,.3f}ms" if v >= 1e4 else f"{v:,.3f}us"


def _s(v: float) -> str:
    return f"{v:,.3f}s" if v >= 10 else f"{v * 1e3:,.3f}ms"


class _CallableModule(types.ModuleType):
    """This module shares its name with the class ``profile``; once it is imported, Python makes
    ``ascendc_py.torch_bridge.profile`` the module. Calling the module makes a ``profile``, so
    ``torch_bridge.profile()`` always works (``asc.profile`` is the class itself)."""

    def __call__(self, *args, **kwargs):
        return profile(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
