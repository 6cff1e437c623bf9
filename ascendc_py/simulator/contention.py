"""Chip-level sharing of HBM and L2 bandwidth, settled after a launch from each core's demand.

Why after the launch. Simulated cores run concurrently on host threads, each with its own
native timeline, so a core cannot know at its simulated time t what the others move at t, and
anything a core looked up from the others while running would depend on host thread scheduling.
Instead every block records, natively and only from its own timeline, how many GM bytes it read
and wrote in each window of its simulated time (``compiler/codegen/timing_gm.py``: a bounded
number of windows that widen as the block's time grows; each transfer already limited by its
path width and by the core's GM port, which MTE2 and MTE3 share). This module then replays those
windows on one launch-wide timeline, vectorised over windows and cores (no Python per
instruction): blocks are placed where the report places them (block b on core b mod cores, a
core's blocks one after another), and in every window of the timeline the cores that move data
share the chip:

* **HBM.** Of each core's read bytes, the share the L2 serves (below) does not reach HBM; the
  rest and all writes do (reads and writes share the same bandwidth). When the cores' summed HBM
  demand in a window exceeds the chip's ``gm.hbm_chip_bytes_per_cycle`` × window, the window is
  served as a processor-sharing (max-min fair) server: sorting the cores' demands d(1) <= ... <=
  d(n), core (i) needs (d(1) + ... + d(i-1) + (n-i+1) d(i)) / bandwidth cycles to move its
  bytes, and its delay is what this exceeds the cycles its port moved data in the window
  uncontended (its own pace, recorded with the bytes). A core that moves nothing in the window
  (it computes) is not delayed and holds no share; a core that moves little is barely delayed.
* **L2.** Every GM byte passes L2, so the same rule applies to all bytes against
  ``gm.l2_chip_bytes_per_cycle``; a core's delay in a window is the larger of the two.
* **Reuse served by L2.** GM bytes read more than once in the launch — per GM argument, the bytes
  DMAs read beyond the argument's size, e.g. a bias vector every core reads — are L2 hits with
  probability h = min(1, L2 size / launch footprint), the footprint being the summed size of
  the launch's GM arguments: under random replacement a line of the footprint is resident with
  probability capacity / footprint (the standard fully-associative estimate, e.g. Hennessy &
  Patterson's capacity-miss model), so reuse degrades gradually once the footprint outgrows
  L2 instead of falling off a cliff (LRU's behaviour on a cyclic sweep). Data a previous launch
  left in L2 is not modelled (every launch starts cold). The Matmul API's timing
  (``timing_matmul.py``) models its own re-reads: it records the bytes L2 serves apart (L2
  traffic only) and those it takes from HBM against no argument, so neither is taken for a
  re-read here.

A core's delay in a window is spread over its blocks' windows there in proportion to their
bytes; a block's delay adds to its cycles (``BlockTiming.hbm_stall`` keeps it, the report shows
it as the "HBM contention" stall), and its trace events are shifted by the delay accumulated
before their window. Approximations: demand is averaged over a window (bursts shorter than a
window are smoothed), and later windows are not re-aligned by the delays of earlier ones (the
timeline is the uncontended one); both are exact for cores that do the same thing at the same
time, the common case of a bandwidth-bound launch.

When: ``settle_launch`` runs once per launch, when its report is built (``Report.from_launch``),
for vector launches (``runtime.py``) and sub-core launches (``subcores.py``) alike, so a launch
whose report is never read (reports are built lazily on the main line) pays nothing for it.

Deterministic: the records depend only on each block's own native run, the replay visits units
in block order with fixed-order numpy reductions, so the same launch gives the same cycles
whatever the host threads did. Cheap: one vectorised pass over (units × windows) numbers,
remembered for repeated identical demand (``settle``).
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from . import abi

#: at most this many windows on the launch-wide timeline (the window widens to fit)
MAX_TIMELINE_WINDOWS = 4096
#: the "HBM contention" stall of the report
STALL_NAME = "HBM contention"


@dataclass(frozen=True)
class Settlement:
    """The result of ``settle``: per unit, its delay (cycles) and, per window of its own
    record, the delay accumulated before that window (for shifting its trace)."""

    delays: np.ndarray            #: int64 per unit
    shifts: np.ndarray            #: float64 [unit, window]
    tail: np.ndarray              #: float64 per unit: the delay of its last window
    widths: np.ndarray            #: float64 per unit: its record's window width
    l2_hit_fraction: float = 0.0  #: of all bytes read, the share L2 served as re-reads


def l2_hit_probability(footprint_bytes: float, l2_bytes: float) -> float:
    """Chance that re-read data is still in L2: min(1, L2 size / footprint) (module docstring)."""
    if footprint_bytes <= 0:
        return 1.0
    return min(1.0, l2_bytes / footprint_bytes)


def reread_fraction(records: np.ndarray, l2_bytes: float) -> float:
    """Of the bytes read in the launch, the share served by L2 as re-reads (the records'
    per-argument read bytes against the argument sizes they carry). The Matmul API's HBM reads
    are recorded without an argument (the re-reads its own L2 model hits are recorded apart,
    as L2 traffic): they count in the total read, never as re-reads."""
    nargs = (records.shape[1] - abi.DEMAND_ARGS) // 2
    sizes = records[0, abi.DEMAND_ARGS + nargs:abi.DEMAND_ARGS + 2 * nargs]
    per_arg = records[:, abi.DEMAND_ARGS:abi.DEMAND_ARGS + nargs].sum(axis=0)
    total = max(float(per_arg.sum()),
                float(records[:, abi.DEMAND_READ:abi.DEMAND_READ + abi.DEMAND_WINDOWS].sum()))
    if total <= 0:
        return 0.0
    reread = float(np.maximum(per_arg - sizes[:nargs], 0.0).sum())
    return l2_hit_probability(float(sizes.sum()), l2_bytes) * reread / total


def _finish_times(demand: np.ndarray, capacity: float) -> np.ndarray:
    """Per [window, lane]: when a lane's demand is served by a processor-sharing server of
    ``capacity`` bytes per window, in windows from the window's start (0 for no demand)."""
    order = np.argsort(demand, axis=1, kind="stable")
    rows = np.arange(demand.shape[0])[:, None]
    d = demand[rows, order]
    before = np.cumsum(d, axis=1) - d
    n = demand.shape[1]
    out = np.empty_like(d)
    out[rows, order] = (before + d * (n - np.arange(n))[None, :]) / capacity
    return out


_MEMO: "OrderedDict[tuple, Optional[Settlement]]" = OrderedDict()
_MEMO_SIZE = 32
_memo_lock = threading.Lock()


def settle(records: np.ndarray, lanes: Sequence[int], offsets: Sequence[int],
           platform) -> Optional[Settlement]:
    """Replay the units' GM demand records (``abi`` layout, one row per unit) on the launch
    timeline: unit u runs on lane ``lanes[u]`` from cycle ``offsets[u]``. None when nothing
    moved. The result depends only on the arguments, so it is remembered for the last few
    distinct ones: a launch repeated with the same shapes (a training loop, a benchmark) records
    the same demand and skips the ~100 numpy calls of the replay."""
    records = np.ascontiguousarray(records, np.float64)
    key = (records.tobytes(), tuple(lanes), tuple(offsets), platform)
    with _memo_lock:
        if key in _MEMO:
            _MEMO.move_to_end(key)
            return _MEMO[key]
    result = _settle(records, lanes, offsets, platform)
    with _memo_lock:
        _MEMO[key] = result
        while len(_MEMO) > _MEMO_SIZE:
            _MEMO.popitem(last=False)
    return result


def _settle(records: np.ndarray, lanes, offsets, platform) -> Optional[Settlement]:
    """``settle`` without the memo."""
    n = abi.DEMAND_WINDOWS
    reads = records[:, abi.DEMAND_READ:abi.DEMAND_READ + n]
    writes = records[:, abi.DEMAND_WRITE:abi.DEMAND_WRITE + n]
    busy = records[:, abi.DEMAND_BUSY:abi.DEMAND_BUSY + n]
    served = records[:, abi.DEMAND_L2:abi.DEMAND_L2 + n]   # Matmul's L2 re-reads: no HBM
    total = reads + writes + served
    if not total.any():
        return None
    gm = platform.gm
    hit = reread_fraction(records, gm.l2_size)
    hbm = reads * (1.0 - hit) + writes
    widths = np.maximum(records[:, abi.DEMAND_WIDTH], 1.0)
    lanes = np.asarray(lanes, np.int64)
    offsets = np.asarray(offsets, np.float64)
    nlanes = int(lanes.max()) + 1
    if not offsets.any() and (widths == widths[0]).all() and \
            len(set(lanes.tolist())) == len(lanes):   # (np.unique would import numpy.ma)
        # one wave, every unit on its own lane from cycle 0 with the same windows (the usual
        # launch): the timeline's windows are the units' own
        window, cell = float(widths[0]), None
        grids = []
        for values in (total, hbm, busy):
            grid = np.zeros((n, nlanes))
            grid[:, lanes] = values.T
            grids.append(grid)
        grid_total, grid_hbm, grid_busy = grids
    else:
        span = float((offsets + widths * n).max())
        window = max(float(widths.max()), np.ceil(span / MAX_TIMELINE_WINDOWS))
        mid = offsets[:, None] + (np.arange(n)[None, :] + 0.5) * widths[:, None]
        cell_window = np.minimum((mid // window).astype(np.int64), MAX_TIMELINE_WINDOWS)
        nwin = int(cell_window.max()) + 1
        cell = (cell_window * nlanes + lanes[:, None]).ravel()
        size = nwin * nlanes
        grid_total, grid_hbm, grid_busy = (
            np.bincount(cell, values.ravel(), size).reshape(nwin, nlanes)
            for values in (total, hbm, busy))
    # a window whose whole demand fits the chip within the shortest busy time of its cores
    # delays nobody (every core's processor-sharing time is at most that): only the others
    # are sorted
    shortest = np.where(grid_total > 0, grid_busy, np.inf).min(axis=1)
    contended = ((grid_hbm.sum(axis=1) > gm.hbm_chip_bytes_per_cycle * shortest)
                 | (grid_total.sum(axis=1) > gm.l2_chip_bytes_per_cycle * shortest))
    if not contended.any():
        return None
    rows = np.flatnonzero(contended)
    finish = np.maximum(
        _finish_times(grid_hbm[rows], gm.hbm_chip_bytes_per_cycle * window),
        _finish_times(grid_total[rows], gm.l2_chip_bytes_per_cycle * window))
    grid_delay = np.zeros_like(grid_total)
    grid_delay[rows] = np.where(grid_total[rows] > 0,
                                np.maximum(finish * window - grid_busy[rows], 0.0), 0.0)
    if cell is None:
        unit_delay = np.where(total > 0, grid_delay[:, lanes].T, 0.0)
    else:   # each unit's windows take their share of their lane's delay there, by bytes
        share = np.divide(total, grid_total.ravel()[cell].reshape(total.shape),
                          out=np.zeros_like(total), where=total > 0)
        unit_delay = grid_delay.ravel()[cell].reshape(total.shape) * share
    shifts = np.cumsum(unit_delay, axis=1) - unit_delay
    out = Settlement(np.rint(unit_delay.sum(axis=1)).astype(np.int64), shifts,
                     unit_delay[:, -1].copy(), widths, hit)
    for array in (out.delays, out.shifts, out.tail, out.widths):
        array.setflags(write=False)    # shared by the launches the memo serves
    return out


def apply(timings: Sequence, settlement: Optional[Settlement]) -> None:
    """Add each unit's delay to its timing record (cycles, ``hbm_stall``) and shift its trace."""
    if settlement is None:
        return
    for u, bt in enumerate(timings):
        delay = int(settlement.delays[u])
        if delay <= 0:
            continue
        bt.cycles += delay
        bt.hbm_stall += delay
        if bt.trace is not None and len(bt.trace):
            # the delay accumulated before the event's window, plus the part of its own
            # window's delay that lies before the event (linearly)
            width = settlement.widths[u]
            k = np.minimum(bt.trace[:, 0] // width, abi.DEMAND_WINDOWS - 1).astype(np.int64)
            within = np.clip(bt.trace[:, 0] / width - k, 0.0, 1.0)
            before = settlement.shifts[u]
            own = np.diff(np.append(before, before[-1] + settlement.tail[u]))
            bt.trace[:, 0] += np.rint(before[k] + within * own[k]).astype(np.int64)


def settle_launch(result, platform) -> None:
    """Settle a launch's sharing of HBM and L2 once (``Report.from_launch`` calls it; a launch
    with timing off kept no records and is left alone)."""
    if getattr(result, "_settled", False):
        return
    result._settled = True
    if getattr(result, "subcores", False):
        settle_subcores(result.blocks, result.cores, result.layout.per_block, platform)
    else:
        settle_blocks(result.blocks, platform.aiv_cores, platform)


def settle_blocks(timings: Sequence, cores: int, platform) -> None:
    """Vector launches (one record per block, in block order): block b runs on core b mod
    ``cores`` after the core's earlier blocks (``report.py``'s mapping)."""
    units = [bt for bt in timings if bt.gm_demand is not None]
    if not units:
        return
    lanes, offsets, clock = [], [], {}
    for bt in units:
        lane = bt.block % cores
        lanes.append(lane)
        offsets.append(clock.get(lane, 0))
        clock[lane] = clock.get(lane, 0) + bt.cycles
    apply(units, settle(np.stack([bt.gm_demand for bt in units]), lanes, offsets, platform))


def settle_subcores(timings: Sequence, cores: int, per_block: int, platform) -> None:
    """Sub-core launches (records in (block, sub-core) order, each with ``block`` and a slot
    order): each sub-core of an AI Core is its own lane; a core's blocks run one after another,
    a block taking as long as its slowest sub-core (``subcore_report.py``'s mapping)."""
    units = [t for t in timings if t.gm_demand is not None]
    if not units:
        return
    by_block: dict[int, list] = {}
    for t in units:
        by_block.setdefault(t.block, []).append(t)
    lanes, offsets, clock = [], [], {}
    ordered = []
    for block in sorted(by_block):
        core = block % cores
        start = clock.get(core, 0)
        for slot, t in enumerate(by_block[block]):
            ordered.append(t)
            lanes.append(core * per_block + slot)
            offsets.append(start)
        clock[core] = start + max(t.cycles for t in by_block[block])
    apply(ordered, settle(np.stack([t.gm_demand for t in ordered]), lanes, offsets, platform))


__all__ = ["settle", "apply", "settle_launch", "settle_blocks", "settle_subcores", "Settlement",
           "l2_hit_probability", "reread_fraction", "STALL_NAME"]
