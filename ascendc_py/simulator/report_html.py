"""How a launch's Report (and an ``asc.profile``) looks in a notebook, a REPL and a browser.

``summary(report)`` is ``repr(report)``: three lines a REPL shows. ``fragment(report)`` is
``report._repr_html_()``: the summary rows, one busy bar per pipe, the timeline of the critical
core inline (a PNG in a ``data:`` URL, when the launch recorded a trace and matplotlib is
installed) and collapsible details (instructions per op, bytes per path, stalls). ``page`` and
``profile_page`` are the self-contained HTML documents ``save_html`` writes: one file, no
script, no font or image fetched from anywhere (it opens offline), with the timeline of every
core and a per-op table.

Presentation only: every figure shown is a field of the Report, computed by ``report.py``.
"""
from __future__ import annotations

import base64
import html
import io
import os
from pathlib import Path

from ..dsl.types import PIPE_NAMES

#: style of the fragment and the page (inline: a notebook cell and an offline file alike)
STYLE = """
.ascpy{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;font-size:13px}
.ascpy table{border-collapse:collapse;margin:4px 0}
.ascpy th,.ascpy td{text-align:left;padding:2px 10px 2px 0;vertical-align:top}
.ascpy td.n{text-align:right;font-variant-numeric:tabular-nums}
.ascpy .bar{display:inline-block;height:11px;background:#4c78a8;vertical-align:middle}
.ascpy .bar.hot{background:#e45756}
.ascpy .track{display:inline-block;width:240px;background:#eee;vertical-align:middle}
.ascpy summary{cursor:pointer;font-weight:600;margin-top:4px}
.ascpy img{max-width:100%}
.ascpy .muted{color:#777}
"""


# ----------------------------------------------------------------------------- text
def summary(report) -> str:
    """``repr(report)``: the headline, the busy pipes and the main stall, in three lines."""
    busy = sorted(((v, k) for k, v in report.pipe_busy_pct.items() if report.pipe_busy.get(k)),
                  reverse=True)
    stalls = [(v, k) for k, v in report.stalls.items() if v]
    head = (f"<Report {report.kernel}[{report.block_dim}] on {report.platform}: "
            f"{report.cycles:,} cycles = {report.time_us:,.2f} us, bottleneck "
            f"{report.bottleneck}")
    lines = [head, "  busy: " + (", ".join(f"{k} {v:.1f} %" for v, k in busy) or "none")]
    if stalls:
        v, k = max(stalls)
        lines[-1] += f"; largest stall: {k} {v:,} cycles"
    lines.append(f"  GM {report.gm_bandwidth_gbps:,.1f} of {report.peak_gm_bandwidth_gbps:,.0f}"
                 f" GB/s; print(report) shows every figure>")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- pictures
def display_ready(fig):
    """``fig``, displayable inline in IPython even when pyplot was never imported (IPython
    renders a Figure as PNG only once its inline backend registered a formatter for it)."""
    try:
        shell = get_ipython()  # type: ignore[name-defined]  # noqa: F821 - IPython's builtin
    except NameError:
        return fig
    try:
        formatter = shell.display_formatter.formatters["image/png"]
        formatter.lookup_by_type(type(fig))
    except KeyError:
        formatter.for_type(type(fig), lambda f: _png_bytes(f))
    except AttributeError:      # not an IPython shell after all
        pass
    return fig


def _png_bytes(fig, dpi: int = 90) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def _img(fig, alt: str) -> str:
    data = base64.b64encode(_png_bytes(fig)).decode("ascii")
    return f"<img alt='{html.escape(alt)}' src='data:image/png;base64,{data}'>"


def core_lanes(report, core: int) -> list[tuple[str, dict]]:
    """(label, {pipe: [(start, duration, op)]}) of ``core``: one group per sub-core of a cube
    or mix launch (``AIC``, ``AIV0``, ...), one unlabelled group for a vector launch."""
    groups: dict[str, dict] = {}
    if getattr(report, "_layout", None) is not None:
        from .subcore_report import subcore_events
        single = report._layout.per_block == 1 and report._layout.kind == "vector"
        for _, label, start, occ, _, pipe, _, op in subcore_events(report, core):
            groups.setdefault("" if single else label, {}).setdefault(pipe, []).append(
                (start, max(occ, 1), op))
    else:
        from .trace import core_events
        for _, start, occ, _, pipe, _, op in core_events(report, core):
            groups.setdefault("", {}).setdefault(pipe, []).append((start, max(occ, 1), op))
    return sorted(groups.items())


def traced(report) -> bool:
    """Whether the launch recorded per-instruction events (``trace=True``)."""
    return any(getattr(b, "trace", None) is not None for b in report._blocks)


def timeline_html(report, cores) -> str:
    """The timeline of ``cores`` as one inline PNG, or a line saying why there is none."""
    if not traced(report):
        return ("<p class='muted'>No timeline: launch with <code>trace=True</code> (or "
                "<code>ASCENDC_PY_TRACE=1</code>) to record one.</p>")
    groups = []
    for core in cores:
        for label, lanes in core_lanes(report, core):
            groups.append((f"core {core} {label}".strip() if len(cores) > 1 or label else "",
                           lanes))
    if not groups:
        return "<p class='muted'>No events on these cores.</p>"
    try:
        from .trace import timeline_figure
        which = f"core {cores[0]}" if len(cores) == 1 else f"{len(cores)} cores"
        fig = timeline_figure({}, f"{report.kernel}[{report.block_dim}] on {report.platform}:"
                              f" {which}", "cycles", groups=groups)
    except ImportError as exc:
        return f"<p class='muted'>No timeline: {html.escape(str(exc))}</p>"
    return _img(fig, f"timeline of {report.kernel}")


# ----------------------------------------------------------------------------- tables
def _rows_table(rows) -> str:
    return "<table>" + "".join(f"<tr><th>{html.escape(k.strip())}</th>"
                               f"<td>{html.escape(v.strip())}</td></tr>" for k, v in rows) \
        + "</table>"


def busy_bars(report) -> str:
    """One bar per pipe that did any work: its share of the launch's cycles."""
    out = []
    for name in PIPE_NAMES:
        pct = report.pipe_busy_pct.get(name, 0.0)
        if not report.pipe_busy.get(name):
            continue
        hot = " hot" if name == report.bottleneck else ""
        out.append(f"<tr><th>{name}</th><td><span class='track'><span class='bar{hot}' "
                   f"style='width:{min(pct, 100.0):.1f}%'></span></span></td>"
                   f"<td class='n'>{pct:.1f} %</td>"
                   f"<td class='n'>{report.pipe_busy[name]:,} cycles</td></tr>")
    if not out:
        return ""
    return ("<table><tr><th colspan='4'>pipe busy (critical core "
            f"{report.critical_core})</th></tr>" + "".join(out) + "</table>")


def op_rows(report) -> list[tuple[str, str, int, int | None]]:
    """(op, pipe, calls over all blocks, occupancy cycles over all traced cores, or None when
    the launch was not traced) per op. The pipe is the lanes the op ran on in the trace; without
    one, the registry's pipe, "MTE (by path)" for a DMA op (its pipe depends on the path), else
    "S" (the scalar unit issues it and no pipe runs it)."""
    from ..compiler.ops import REGISTRY
    from .trace import _OPS, PIPE_NAMES
    occupancy: dict[str, int] = {}
    lanes_of: dict[str, set] = {}
    is_traced = traced(report)
    if is_traced:
        for core in range(len(report.core_cycles)):
            for _, lanes in core_lanes(report, core):
                for pipe, spans in lanes.items():
                    for _, dur, op in spans:
                        name = _OPS[op] if 0 <= op < len(_OPS) else "?"
                        occupancy[name] = occupancy.get(name, 0) + dur
                        lanes_of.setdefault(name, set()).add(pipe)
    rows = []
    for name, calls in report.instructions.items():
        spec = REGISTRY.get(name)
        if name in lanes_of:
            pipe = "/".join(PIPE_NAMES[p] for p in sorted(lanes_of[name]))
        elif spec is not None and spec.pipe:
            pipe = spec.pipe.name.removeprefix("PIPE_")
        elif spec is not None and spec.cost.value == "dma":
            pipe = "MTE (by path)"
        else:
            pipe = "S"
        rows.append((name, pipe, calls, occupancy.get(name, 0) if is_traced else None))
    return sorted(rows, key=lambda r: (-(r[3] or 0), -r[2], r[0]))


def op_table(report) -> str:
    rows = op_rows(report)
    if not rows:
        return "<p class='muted'>No instructions.</p>"
    head = "<tr><th>op</th><th>pipe</th><th>calls</th><th>pipe cycles (traced)</th></tr>"
    body = "".join(f"<tr><td>{html.escape(n)}</td><td>{html.escape(p)}</td>"
                   f"<td class='n'>{c:,}</td>"
                   f"<td class='n'>{'—' if o is None else f'{o:,}'}</td></tr>"
                   for n, p, c, o in rows)
    return f"<table>{head}{body}</table>"


def _details(title: str, body: str, open_: bool = False) -> str:
    return (f"<details{' open' if open_ else ''}><summary>{html.escape(title)}</summary>"
            f"{body}</details>")


def _kv_table(items, unit: str) -> str:
    return "<table>" + "".join(f"<tr><th>{html.escape(str(k))}</th><td class='n'>{v:,}"
                               f"</td><td>{unit}</td></tr>" for k, v in items) + "</table>"


# ----------------------------------------------------------------------------- documents
def fragment(report, *, all_cores: bool = False) -> str:
    """The HTML block of a report (``_repr_html_``; ``all_cores``: every core's timeline)."""
    from .report import _bytes
    cores = list(range(len(report.core_cycles))) if all_cores else [report.critical_core]
    details = [
        _details("instructions per op", op_table(report), open_=all_cores),
        _details("bytes moved per path", "<table>" + "".join(
            f"<tr><th>{html.escape(k)}</th><td class='n'>{_bytes(v)}</td></tr>"
            for k, v in report.bytes_moved.items()) + "</table>"),
        _details("stalls", _kv_table(report.stalls.items(), "cycles")),
        _details("cycles per core", _kv_table(enumerate(report.core_cycles), "cycles")),
    ]
    if report.output:
        details.append(_details("kernel output", f"<pre>{html.escape(report.output)}</pre>"))
    return (f"<div class='ascpy'><style>{STYLE}</style>" + _rows_table(report.rows())
            + busy_bars(report) + timeline_html(report, cores) + "".join(details) + "</div>")


def _document(title: str, body: str) -> str:
    return ("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            f"<title>{html.escape(title)}</title></head><body>{body}</body></html>\n")


def _write(path, text: str) -> str:
    path = Path(path)
    if path.parent and not path.parent.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return os.fspath(path)


def save_report(report, path) -> str:
    """Write the report of one launch as a self-contained HTML page."""
    title = f"{report.kernel}[{report.block_dim}] on {report.platform}"
    return _write(path, _document(title, f"<h2 class='ascpy'>{html.escape(title)}</h2>"
                                  + fragment(report, all_cores=True)))


def save_profile(prof, path) -> str:
    """Write an ``asc.profile``: its table, its launches in order and the full report of
    every launch it kept (those recorded with per-instruction traces)."""
    return _write(path, _document("asc.profile", profile_fragment(prof, reports=True)))


def profile_fragment(prof, *, reports: bool = False) -> str:
    """The HTML block of an ``asc.profile`` (its ``_repr_html_``; ``reports``: with the
    report of every launch it kept)."""
    rows = prof.key_averages()
    total = prof.device_time_us
    head = ("<tr><th>op</th><th>kernel</th><th>calls</th><th>blocks</th>"
            "<th>device total (us)</th><th>device avg (us)</th><th>device %</th>"
            "<th>host total (ms)</th></tr>")
    body = "".join(
        f"<tr><td>{html.escape(r.op or '-')}</td><td>{html.escape(r.kernel)}</td>"
        f"<td class='n'>{r.calls}</td><td>{','.join(map(str, sorted(r.block_dims)))}</td>"
        f"<td class='n'>{r.device_us:,.3f}</td><td class='n'>{r.device_avg_us:,.3f}</td>"
        f"<td class='n'>{100.0 * r.device_us / total if total else 0:.1f}</td>"
        f"<td class='n'>{r.host_seconds * 1e3:,.3f}</td></tr>" for r in rows)
    launches = "".join(
        f"<tr><td class='n'>{i}</td><td>{html.escape(e.op or '-')}</td>"
        f"<td>{html.escape(e.kernel)}</td><td class='n'>{e.block_dim}</td>"
        f"<td class='n'>{e.device_start_us:,.3f}</td><td class='n'>{e.device_us:,.3f}</td>"
        f"<td>{html.escape(e.bottleneck)}</td></tr>" for i, e in enumerate(prof.events))
    parts = [f"<h2>asc.profile: {len(prof.events)} launches, device {total:,.3f} us "
             f"(simulated), host {prof.host_seconds * 1e3:,.3f} ms</h2>",
             f"<table>{head}{body}</table>",
             _details("launches in order", "<table><tr><th>#</th><th>op</th><th>kernel</th>"
                      "<th>blocks</th><th>device start (us)</th><th>device (us)</th>"
                      f"<th>bottleneck</th></tr>{launches}</table>")]
    kept = [(i, e) for i, e in enumerate(prof.events) if e.report is not None]
    for i, e in kept if reports else ():
        parts.append(_details(f"launch {i}: {e.kernel}[{e.block_dim}] report",
                              fragment(e.report, all_cores=True)))
    if not kept:
        parts.append("<p class='muted'>Per-launch reports and timelines: profile with "
                     "<code>asc.profile(record_instructions=True)</code>.</p>")
    return f"<div class='ascpy'><style>{STYLE}</style>" + "".join(parts) + "</div>"
