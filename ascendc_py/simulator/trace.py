"""Chrome Trace Event JSON and PNG timelines of a launch.

The JSON has the shape of ``msprof op simulator``'s trace.json: one complete ("X") event per
instruction, ``pid`` = core, ``tid`` = pipe lane, ``ts``/``dur`` in microseconds,
``args.code`` = kernel file:line. Perfetto and chrome://tracing open it.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from ..compiler.ops import REGISTRY
from ..dsl.types import PIPE_NAMES

_OPS = list(REGISTRY)


def core_events(report, core: int):
    """(block, start_cycle, occupancy, latency, pipe, site, op) of every event on ``core``."""
    ncores = max(len(report.core_cycles), 1)
    offset = 0
    for bt in report._blocks:
        if bt.block % ncores != core:
            continue
        if bt.trace is not None:
            for start, occ, lat, pipe, site, op in bt.trace.tolist():
                yield bt.block, offset + start, occ, lat, pipe, site, op
        offset += bt.cycles


def _code(report, site: int) -> str:
    if 0 <= site < len(report._sites) and report._sites[site].loc is not None:
        loc = report._sites[site].loc
        from ..compiler.errors import place
        return place(loc.file, loc.line)
    return "?"


def _inserted_at(report) -> dict:
    """Source location -> the flags the insert_sync pass put before the instruction there
    (flags are not trace events: the instruction that waited on them carries them)."""
    out: dict = {}
    for site in report._sites:
        if site.op in ("set_flag", "pipe_barrier") and len(site.detail) == 2 \
                and site.detail[0] == "insert_sync" and site.loc is not None:
            out.setdefault(site.loc, []).append(site.detail[1])
    return out


def _inserted(report, site: int, at: dict) -> dict:
    """``{"insert_sync": "MTE2->V"}`` on an instruction the insert_sync pass synchronised."""
    if at and 0 <= site < len(report._sites):
        pairs = at.get(report._sites[site].loc)
        if pairs and report._sites[site].op not in ("set_flag", "wait_flag", "pipe_barrier"):
            return {"insert_sync": ", ".join(pairs)}
    return {}


def write_chrome_trace(report, path) -> str:
    if getattr(report, "_layout", None) is not None:   # launches on sub-cores
        from .subcore_report import write_subcore_trace
        return write_subcore_trace(report, path)
    if not any(bt.trace is not None for bt in report._blocks):
        raise ValueError("this launch recorded no trace: launch with trace=True "
                         "(or set ASCENDC_PY_TRACE=1)")
    us_per_cycle = 1.0 / report.clock_mhz
    events = []
    inserted = _inserted_at(report)
    for core in range(len(report.core_cycles)):
        events.append({"name": "process_name", "ph": "M", "pid": f"core{core}.veccore0",
                       "args": {"name": f"core{core}.veccore0"}})
        for tid, name in enumerate(PIPE_NAMES):
            events.append({"name": "thread_name", "ph": "M", "pid": f"core{core}.veccore0",
                           "tid": name, "args": {"name": name}})
            events.append({"name": "thread_sort_index", "ph": "M",
                           "pid": f"core{core}.veccore0", "tid": name,
                           "args": {"sort_index": tid}})
        for block, start, occ, lat, pipe, site, op in core_events(report, core):
            events.append({"name": _OPS[op] if 0 <= op < len(_OPS) else "?", "ph": "X",
                           "pid": f"core{core}.veccore0", "tid": PIPE_NAMES[pipe],
                           "ts": start * us_per_cycle, "dur": max(occ, 1) * us_per_cycle,
                           "args": {"code": _code(report, site), "block": block,
                                    "latency_cycles": lat, "occupancy_cycles": occ,
                                    **_inserted(report, site, inserted)}})
    path = Path(path)
    if path.parent and not path.parent.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        json.dump({"traceEvents": events, "displayTimeUnit": "ns",
                   "otherData": {"kernel": report.kernel, "platform": report.platform,
                                 "clock_mhz": report.clock_mhz,
                                 "insert_sync": report.inserted_sync}}, f)
    return os.fspath(path)


def plot_timeline(report, path, core: int = 0) -> str:
    if getattr(report, "_layout", None) is not None:   # launches on sub-cores
        from .subcore_report import plot_subcore_timeline
        return plot_subcore_timeline(report, path, core)
    lanes: dict[int, list] = {}
    for _, start, occ, _, pipe, _, op in core_events(report, core):
        lanes.setdefault(pipe, []).append((start, max(occ, 1), op))
    if not lanes:
        raise ValueError("no trace events for this core: launch with trace=True")
    title = f"{report.kernel}[{report.block_dim}] on {report.platform}: core {core}"
    return _draw(lanes, title, "cycles", path)


def plot_trace_file(trace_path, path, core: int = 0, subcore: str | None = None) -> str:
    """Draw the timeline of ``core`` from a trace JSON written by ``Report.save_trace``. In the
    trace of a cube or mix launch (lanes ``AIC.M``, ``AIV0.V``, ...) it draws ``subcore`` (a
    label such as ``"AIC"``), by default the one whose last event ends latest."""
    with open(trace_path) as f:
        data = json.load(f)
    pids = (f"core{core}.veccore0", f"core{core}")
    ops = {name: i for i, name in enumerate(_OPS)}
    per_label: dict[str, dict[int, list]] = {}
    for ev in data.get("traceEvents", []):
        if ev.get("ph") != "X" or ev.get("pid") not in pids:
            continue
        label, _, pipe = str(ev.get("tid", "")).rpartition(".")
        if pipe in PIPE_NAMES:
            per_label.setdefault(label, {}).setdefault(PIPE_NAMES.index(pipe), []).append(
                (ev["ts"], ev["dur"], ops.get(ev.get("name"), 0)))
    if subcore is not None and subcore not in per_label:
        raise ValueError(f"{trace_path} has no events of sub-core {subcore!r} on core {core}"
                         f" (it has: {', '.join(sorted(per_label)) or 'none'})")
    if not per_label:
        raise ValueError(f"{trace_path} has no events for core {core}")
    if subcore is None:
        subcore = max(per_label, key=lambda lab: max(s + d for spans in per_label[lab].values()
                                                      for s, d, _ in spans))
    other = data.get("otherData", {})
    title = f"{other.get('kernel', '')} on {other.get('platform', '')}: core {core}"
    if subcore:
        title += f" {subcore}"
    return _draw(per_label[subcore], title, "microseconds", path)


def timeline_figure(lanes: dict, title: str, unit: str, *, groups=None):
    """A matplotlib Figure of a timeline: ``lanes`` maps a pipe index to its (start, duration,
    op) spans. Only pipes with events get a lane (the scalar unit issues instructions but runs
    none on a pipe, and a vector kernel never uses the cube's pipes). ``groups``, when given, is
    a list of (label, lanes) drawn one under the other (every core of a launch). Made without
    pyplot: no backend is selected or changed (a notebook's stays inline)."""
    Figure = _figure_class()
    from matplotlib import colormaps
    groups = groups if groups is not None else [("", lanes)]
    rows = [(label, pipe) for label, g in groups for pipe in sorted(g)]
    fig = Figure(figsize=(12, 0.45 * max(len(rows), 1) + 1.3))
    ax = fig.subplots()
    colours = colormaps["tab20"]
    for y, (label, pipe) in enumerate(rows):
        spans = dict(groups)[label][pipe]
        ax.broken_barh([(s, d) for s, d, _ in spans], (y - 0.4, 0.8),
                       facecolors=[colours(op % 20) for _, _, op in spans])
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([f"{label} {PIPE_NAMES[pipe]}".strip() for label, pipe in rows])
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlabel(unit)
    ax.set_title(title)
    _legend(ax, colours, [spans for _, g in groups for spans in g.values()])
    fig.tight_layout()
    return fig


def _legend(ax, colours, lane_spans) -> None:
    """A legend of the ops drawn (colour = op), at most 12 entries."""
    from matplotlib.patches import Patch
    ops = sorted({op for spans in lane_spans for _, _, op in spans})[:12]
    if ops:
        ax.legend(handles=[Patch(color=colours(op % 20),
                                 label=_OPS[op] if 0 <= op < len(_OPS) else "?") for op in ops],
                  loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small",
                  frameon=False)


def save_figure(fig, path, dpi: int = 110) -> str:
    """Write ``fig`` to ``path`` (format from its suffix), making the directory."""
    path = Path(path)
    if path.parent and not path.parent.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    return os.fspath(path)


def plot_busy(report, path=None):
    """What ``Report.plot()`` draws for a launch that recorded no trace: each pipe's busy share
    of the critical core, a bar per pipe that ran anything, the title saying how to get the
    timeline. With ``path`` write it there and return the path; without, return the Figure."""
    Figure = _figure_class()
    pipes = [name for name in report.pipe_busy if report.pipe_busy.get(name)]
    fig = Figure(figsize=(8, 0.45 * max(len(pipes), 1) + 1.5))
    ax = fig.subplots()
    pct = [report.pipe_busy_pct.get(name, 0.0) for name in pipes]
    ax.barh(range(len(pipes)), pct, color=["#d9534f" if name == report.bottleneck else
                                           "#4e79a7" for name in pipes])
    for y, (name, p) in enumerate(zip(pipes, pct)):
        ax.text(p + 1, y, f"{p:.1f} %  {report.pipe_busy[name]:,} cycles", va="center")
    ax.set_yticks(range(len(pipes)))
    ax.set_yticklabels(pipes)
    ax.set_ylim(len(pipes) - 0.5, -0.5)
    ax.set_xlim(0, 130)
    ax.set_xlabel(f"busy share of {report.cycles:,} cycles (critical core {report.critical_core})")
    ax.set_title(f"{report.kernel}[{report.block_dim}] on {report.platform}: pipe busy\n"
                 "(no timeline: launch with trace=True, or ASCENDC_PY_TRACE=1, to draw one)",
                 fontsize=10)
    fig.tight_layout()
    return _show_or_save(fig, path)


def _draw(lanes: dict, title: str, unit: str, path):
    """Write the timeline to ``path``; with no path return the Figure (``Report.plot()``)."""
    return _show_or_save(timeline_figure(lanes, title, unit), path)


def _figure_class():
    """matplotlib's Figure (no pyplot), or an ImportError that says how to get it."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError("plotting needs matplotlib: pip install matplotlib "
                          "(or the ascendc_py[plot] extra)") from None
    return Figure


def _show_or_save(fig, path):
    """``fig`` written to ``path`` (its path returned); with no path, the Figure, ready for a
    notebook to display."""
    if path is None:
        from .report_html import display_ready
        return display_ready(fig)
    return save_figure(fig, path)


def main(argv=None) -> int:
    """``python -m ascendc_py.simulator.trace TRACE.json [-o OUT.png] [--core N]``."""
    import argparse
    parser = argparse.ArgumentParser(description="Draw a pipe timeline from a trace JSON.")
    parser.add_argument("trace")
    parser.add_argument("-o", "--output", default=None)
    parser.add_argument("--core", type=int, default=0)
    parser.add_argument("--subcore", default=None,
                        help="cube/mix traces: the sub-core to draw (AIC, AIV0, AIV1; default "
                             "the one that ends last)")
    args = parser.parse_args(argv)
    out = args.output or os.path.splitext(args.trace)[0] + f".core{args.core}.png"
    try:
        print(plot_trace_file(args.trace, out, args.core, args.subcore))
    except (OSError, ValueError) as exc:     # a missing file, no such core or sub-core
        parser.error(str(exc))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
