"""Reports and traces of launches on sub-cores (``subcores.py``): cube and mix kernels, and
vector kernels with cross-core synchronisation.

Blocks map to cores round-robin (block b on AI Core b mod cores; for vector kernels, on vector
core b mod cores); a block occupies its core until its slowest sub-core finishes, blocks beyond
the core count run in later waves, and the chip time is the slowest core's. Pipe figures are
those of the critical core (per pipe, its busiest sub-core), stalls those of its critical
sub-core, with the cycles it waited at cross-core waits as the "cross-core wait" cause. The
rows per sub-core show each sub-core of the critical core with the pipes it has (AIC: M, MTE1,
MTE2, FIX; AIV: V, MTE2, MTE3); in a mix kernel the AIC row carries the Matmul work it did for
its AIVs, and an AIV row says how long its scalar unit waited for Matmul results.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from ..compiler.ops import REGISTRY
from ..dsl.kernel_types import SubcoreLayout
from ..dsl.types import PIPE_NAMES
from . import timing_params as TP

AIC_PIPES = ("M", "MTE1", "MTE2", "FIX")
AIV_PIPES = ("V", "MTE2", "MTE3")
_OPS = list(REGISTRY)


def _by_core(result) -> tuple[list, dict, dict]:
    """(core cycles, core -> [block], block -> [SubcoreTiming]) of a launch."""
    ncores = max(result.cores, 1)
    units: dict[int, list] = {}
    for t in result.blocks:
        units.setdefault(t.block, []).append(t)
    core_cycles = [0] * min(ncores, max(result.block_dim, 1))
    per_core: dict[int, list] = {}
    for block in sorted(units):
        core = block % ncores
        core_cycles[core] += max(t.cycles for t in units[block])
        per_core.setdefault(core, []).append(block)
    return core_cycles, per_core, units


def from_subcore_launch(cls, *, kernel: str, platform, result, compiled, **host):
    """A Report of a SubcoreLaunch."""
    lay = result.layout
    core_cycles, per_core, units = _by_core(result)
    critical = int(np.argmax(core_cycles)) if core_cycles else 0
    cycles = max(core_cycles) if core_cycles else 0
    zeros = np.zeros(len(PIPE_NAMES), np.int64)
    slots: dict[str, dict] = {}          # sub-core label -> its sums over the critical core
    for block in per_core.get(critical, []):
        for t in units[block]:
            acc = slots.setdefault(t.label, {"core_type": t.core_type, "cycles": 0,
                                             "busy": zeros.copy(), "stall_flag": zeros.copy(),
                                             "stall_scalar": zeros.copy(), "queue": 0,
                                             "scalar": 0, "cross": 0, "waits": 0,
                                             "mm": 0, "mm_waits": 0})
            acc["cycles"] += t.cycles
            acc["busy"] += t.pipe_busy
            acc["stall_flag"] += t.stall_flag
            acc["stall_scalar"] += t.stall_scalar
            acc["queue"] += t.stall_queue
            acc["scalar"] += t.scalar_busy
            acc["cross"] += t.cross_wait
            acc["waits"] += t.cross_waits
            acc["mm"] += t.mm_wait
            acc["mm_waits"] += t.mm_waits
    busy = zeros.copy()
    for acc in slots.values():
        busy = np.maximum(busy, acc["busy"])
    busy[0] = max((acc["scalar"] for acc in slots.values()), default=0)
    pipe_busy = {name: int(busy[i]) for i, name in enumerate(PIPE_NAMES)}
    pct = {k: (100.0 * v / cycles if cycles else 0.0) for k, v in pipe_busy.items()}
    hw = {k: v for k, v in pipe_busy.items() if k != "S"}
    bottleneck = max(hw, key=hw.get) if any(hw.values()) else "S"
    if pipe_busy["S"] > 1.5 * max(hw.values(), default=0):
        bottleneck = "S"
    crit = max(slots.values(), key=lambda a: a["cycles"]) if slots else None
    counters = sum((t.counters for t in result.blocks), np.zeros(TP.COUNTER_SLOTS, np.int64))
    instructions = {_OPS[i]: int(counters[TP.COUNT_BASE + i])
                    for i in range(TP.NUM_OPS) if counters[TP.COUNT_BASE + i]}
    bytes_moved = {f"{s}->{d}": int(counters[TP.BYTES_BASE + p])
                   for p, (s, d) in enumerate(TP.PATHS) if counters[TP.BYTES_BASE + p]}
    flops = sum(int(counters[TP.ELEM_BASE + i]) * REGISTRY[name].flops_per_elem
                for i, name in enumerate(_OPS) if REGISTRY[name].elem is not None)
    seconds = cycles / (platform.clock_mhz * 1e6) if cycles else 0.0
    gm_bytes = sum(v for k, v in bytes_moved.items() if "GM" in k)
    used = min(result.block_dim, result.cores)
    from .report import cube_flops_of
    cube_flops = cube_flops_of(counters)
    stalls = {"flag wait": 0, "queue full": 0, "scalar issue": 0, "cross-core wait": 0}
    if crit is not None:
        stalls = {"flag wait": int(crit["stall_flag"].sum()), "queue full": int(crit["queue"]),
                  "scalar issue": int(crit["stall_scalar"][PIPE_NAMES.index(bottleneck)])
                  if bottleneck != "S" else 0,
                  "cross-core wait": int(crit["cross"])}
    rows = []
    if lay.per_block > 1 or lay.kind != "vector":
        for label, acc in sorted(slots.items(), key=lambda kv: (-kv[1]["core_type"], kv[0])):
            names = AIC_PIPES if acc["core_type"] == 1 else AIV_PIPES
            names += tuple(n for i, n in enumerate(PIPE_NAMES)      # e.g. MTE3 for L1 -> GM
                           if n != "S" and n not in names and acc["busy"][i])
            share = ", ".join(f"{n} {100.0 * acc['busy'][PIPE_NAMES.index(n)] / cycles:.1f} %"
                              if cycles else f"{n} 0.0 %" for n in names)
            mm = (f"; matmul wait {acc['mm']:,} cycles ({acc['mm_waits']} requests)"
                  if acc["mm_waits"] else "")
            rows.append((f"  {label}", f"{acc['cycles']:>12,} cycles; {share}; cross-core wait "
                                       f"{acc['cross']:,} cycles ({acc['waits']} waits){mm}"))
    return cls(
        kernel=kernel, block_dim=result.block_dim, platform=platform.name,
        clock_mhz=platform.clock_mhz, cycles=int(cycles), time_us=seconds * 1e6,
        pipe_busy=pipe_busy, pipe_busy_pct=pct, bottleneck=bottleneck, stalls=stalls,
        instructions=instructions, bytes_moved=bytes_moved,
        gm_bandwidth_gbps=(gm_bytes / seconds / 1e9) if seconds else 0.0,
        peak_gm_bandwidth_gbps=platform.hbm_gbps, flops=int(flops),
        flops_per_s=(flops / seconds) if seconds else 0.0,
        peak_flops_per_s=platform.peak_vector_tops_f16 * 1e12 * result.active_aiv
        / max(platform.aiv_cores, 1),
        cube_flops=cube_flops, cube_flops_per_s=(cube_flops / seconds) if seconds else 0.0,
        peak_cube_flops_per_s=2.0 * platform.cube.macs_per_cycle("float16")
        * platform.clock_mhz * 1e6 * used,
        cores_used=used, waves=-(-result.block_dim // max(result.cores, 1)),
        core_cycles=core_cycles, critical_core=critical,
        trace_dropped=sum(t.trace_dropped for t in result.blocks),
        output=getattr(result, "output", ""), kernel_type=lay.kernel_type, subcore_rows=rows,
        _blocks=list(result.blocks), _sites=list(compiled.sites), _layout=lay,
        _cores=result.cores, **host)


# ----------------------------------------------------------------------------- trace
def subcore_events(report, core: int):
    """(block, label, start_cycle, occupancy, latency, pipe, site, op) of every event of the
    sub-cores of ``core``; later waves start when the core's previous block finished."""
    ncores = max(report._cores, 1)
    units: dict[int, list] = {}
    for t in report._blocks:
        if t.block % ncores == core:
            units.setdefault(t.block, []).append(t)
    offset = 0
    for block in sorted(units):
        for t in units[block]:
            if t.trace is not None:
                for start, occ, lat, pipe, site, op in t.trace.tolist():
                    yield block, t.label, offset + start, occ, lat, pipe, site, op
        offset += max(t.cycles for t in units[block])


def _code(report, site: int) -> str:
    if 0 <= site < len(report._sites) and report._sites[site].loc is not None:
        loc = report._sites[site].loc
        from ..compiler.errors import place
        return place(loc.file, loc.line)
    return "?"


def write_subcore_trace(report, path) -> str:
    """Chrome Trace Event JSON: one process per core (``core{n}``; vector kernels keep
    ``core{n}.veccore0``), one lane per (sub-core, pipe) named like ``AIV1.MTE2``."""
    if not any(t.trace is not None for t in report._blocks):
        raise ValueError("this launch recorded no trace: launch with trace=True "
                         "(or set ASCENDC_PY_TRACE=1)")
    lay = report._layout
    labels = [SubcoreLayout.label(ct, sub, lay.n_aiv) for ct, sub in lay.units()]
    single = lay.per_block == 1 and lay.kind == "vector"
    us = 1.0 / report.clock_mhz
    events = []
    for core in range(len(report.core_cycles)):
        pid = f"core{core}.veccore0" if single else f"core{core}"
        events.append({"name": "process_name", "ph": "M", "pid": pid, "args": {"name": pid}})
        for k, label in enumerate(labels):
            for p, name in enumerate(PIPE_NAMES):
                tid = name if single else f"{label}.{name}"
                events.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                               "args": {"name": tid}})
                events.append({"name": "thread_sort_index", "ph": "M", "pid": pid, "tid": tid,
                               "args": {"sort_index": k * len(PIPE_NAMES) + p}})
        for block, label, start, occ, lat, pipe, site, op in subcore_events(report, core):
            name = _OPS[op] if 0 <= op < len(_OPS) else "?"
            events.append({"name": name, "ph": "X", "pid": pid,
                           "tid": PIPE_NAMES[pipe] if single else f"{label}.{PIPE_NAMES[pipe]}",
                           "ts": start * us, "dur": max(occ, 1) * us,
                           "args": {"code": _code(report, site), "block": block,
                                    "subcore": label, "latency_cycles": lat,
                                    "occupancy_cycles": occ}})
    path = Path(path)
    if path.parent and not path.parent.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        json.dump({"traceEvents": events, "displayTimeUnit": "ns",
                   "otherData": {"kernel": report.kernel, "platform": report.platform,
                                 "clock_mhz": report.clock_mhz,
                                 "kernel_type": report.kernel_type}}, f)
    return os.fspath(path)


def plot_subcore_timeline(report, path, core: int) -> str:
    """PNG of the pipes of ``core``'s slowest sub-core."""
    from .trace import _draw
    per_label: dict[str, int] = {}
    for t in report._blocks:
        if t.block % max(report._cores, 1) == core:
            per_label[t.label] = per_label.get(t.label, 0) + t.cycles
    if not per_label:
        raise ValueError("no trace events for this core: launch with trace=True")
    label = max(per_label, key=per_label.get)
    lanes: dict[int, list] = {}
    for _, lab, start, occ, _, pipe, _, op in subcore_events(report, core):
        if lab == label:
            lanes.setdefault(pipe, []).append((start, max(occ, 1), op))
    if not lanes:
        raise ValueError("no trace events for this core: launch with trace=True")
    title = f"{report.kernel}[{report.block_dim}] on {report.platform}: core {core} {label}"
    return _draw(lanes, title, "cycles", path)


__all__ = ["from_subcore_launch", "write_subcore_trace", "plot_subcore_timeline",
           "subcore_events"]
