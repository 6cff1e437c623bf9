"""DMA costs of the simulated AI Core: one ``DmaPath`` per transfer path, calibrated to msKPP.

Re-exported by ``simulator/config.py`` (``ChipConfig.dma``); the conventions of that module
apply (every figure names its reference row and source key of ``shared/reference/
aicore_params.md``: [C4] msKPP, [C5] Huawei's CA model, [D2] the 220x hardware constraints …).

**The cost of one copy** of ``nbytes`` on a path, in cycles of the core clock:

1. *Lone-copy curve*: a piecewise-linear function of the size through knots (bytes, cycles):
   the first knot is (0, ``latency_cycles``), the fixed cost of a lone copy; the others are
   msKPP's single-core measurements on a 910B1 ([C4] ``csrc/prof_data/resource910b.cpp``: one
   copy of a given size, bandwidth in GiB/s, which msKPP converts to bytes per cycle at 1800 MHz
   and interpolates linearly in size); beyond the last knot the copy moves at the path's measured
   *plateau*, which is therefore the fastest one core moves data on that path (the per-core cap).
   Paths msKPP did not measure on a 910B have no knots: ``latency_cycles + bytes /
   bytes_per_cycle`` (the old model).
2. *HBM sharing* is not part of a copy's own cost: on a path that touches GM the curve's part
   beyond the fixed cost is the data phase, recorded as HBM demand and shared between the cores
   that move data at the time after the launch (``compiler/codegen/timing_gm.py``,
   ``simulator/contention.py``).
3. *Bursts*: a strided copy (DataCopyParams with ``block_count > 1``, data_copy_pad, nd2nz rows)
   pays ``burst_cycles`` per extra request unit: Huawei's CA model issues one uop per
   ``burst_bytes`` (512 B) *per burst* (``uops = ceil(burst / 512)`` each, one cycle each, [C5]),
   so ``bursts x ceil(burst / 512) - ceil(bytes / 512)`` extra cycles over the contiguous copy of
   the same bytes; bursts that are not multiples of 512 B waste part of a unit, which is the
   guidance that non-512 B-aligned strides lose bandwidth ([D2]).

The whole cost occupies the path's pipe (the next copy on the same queue starts after it): msKPP
runs each copy's measured time on its pipe's timeline, and the CA model completes the copies of
one MTE queue one after another, each paying its latency ([C4][C5]); Huawei's guidance that a
transfer needs >= 16 KB to reach full bandwidth ([D2]) holds only if small copies issued back to
back stay slow. ``DmaCosts.copy_cycles`` states the rule in Python; the native timing function
(``compiler/codegen/timing.py``: ``dma``) computes the same from the cost table.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

__all__ = ["DmaPath", "DmaCosts", "MSKPP_CLOCK_MHZ", "GIB"]

GIB = 2 ** 30
#: msKPP turns its measured GiB/s into bytes per cycle at a fixed 1800 MHz (data_adapter.cpp,
#: reference §1.1 "mskpp converts with 1800" [C4] M); the knots below are converted the same way.
MSKPP_CLOCK_MHZ = 1800.0


def _gibps_to_bytes_per_cycle(gibps: float) -> float:
    return gibps * GIB / (MSKPP_CLOCK_MHZ * 1e6)


@dataclass(frozen=True, kw_only=True)
class DmaPath:
    """One data path of the memory transfer engines and the cost of one copy on it.

    The lone-copy cost is piecewise linear in the size (see the module docstring): knots
    (0, ``latency_cycles``) and ``measured`` (KiB, GiB/s), then ``plateau_gib_per_s`` beyond the
    last; with no measurements, ``latency_cycles + bytes / bytes_per_cycle``.
    """

    src: str               #: "GM", "UB", "L1", "L0A", "L0B", "L0C", "BT", "FB"
    dst: str
    pipe: str              #: pipe that executes it: "MTE1", "MTE2", "MTE3", "FIX" or "V"
    #: theoretical path width (msKPP arch_info.cpp [C4] H): the rate of an unmeasured path, of
    #: local fills (init_const_value), and of the Matmul API's analytic timing
    bytes_per_cycle: float
    #: fixed cost of a lone copy (cycles from issue to completion of a 0-byte copy)
    latency_cycles: int
    #: msKPP's single-core measurements: (KiB in one copy, GiB/s) [C4]
    measured: tuple[tuple[float, float], ...] = ()
    #: measured rate beyond the last point (GiB/s); 0 when the path is not measured
    plateau_gib_per_s: float = 0.0

    def __post_init__(self) -> None:
        sizes = [kib for kib, _ in self.measured]
        if sizes != sorted(set(sizes)) or any(k <= 0 or g <= 0 for k, g in self.measured):
            raise ValueError(f"{self.src}->{self.dst}: measured points must have increasing "
                             f"positive sizes and positive rates, got {self.measured}")
        if self.measured and self.plateau_gib_per_s <= 0:
            raise ValueError(f"{self.src}->{self.dst}: a measured path needs its plateau rate")

    @property
    def plateau_bytes_per_cycle(self) -> float:
        """The fastest one core moves data on this path (B/cycle): the measured plateau, or the
        theoretical width when the path is not measured."""
        if self.measured:
            return _gibps_to_bytes_per_cycle(self.plateau_gib_per_s)
        return self.bytes_per_cycle

    def knots(self) -> tuple[tuple[float, float], ...]:
        """The lone-copy curve's knots (bytes, cycles), starting at (0, ``latency_cycles``)."""
        points = [(0.0, float(self.latency_cycles))]
        for kib, gibps in self.measured:
            nbytes = kib * 1024
            points.append((nbytes, nbytes / _gibps_to_bytes_per_cycle(gibps)))
        return tuple(points)

    def segments(self) -> tuple[tuple[float, float, float], ...]:
        """The curve as (bytes, cycles, cycles per byte up to the next knot) per knot; the last
        slope is the plateau's. The cost table holds exactly these figures."""
        pts = self.knots()
        slopes = [(y1 - y0) / (x1 - x0) for (x0, y0), (x1, y1) in zip(pts, pts[1:])]
        slopes.append(1.0 / self.plateau_bytes_per_cycle)
        return tuple((x, y, s) for (x, y), s in zip(pts, slopes))

    def curve_cycles(self, nbytes: float) -> float:
        """The lone-copy curve at ``nbytes`` (cycles, not rounded; no GM share, one burst)."""
        x, y, s = [seg for seg in self.segments() if seg[0] <= nbytes][-1]
        return y + (nbytes - x) * s


@dataclass(frozen=True, kw_only=True)
class DmaCosts:
    """Every transfer path and the per-burst rule (reference §1.5; model in the module docstring).

    **Where sources disagree** (the choice, and why):

    - *Measurement over model*: the fixed costs are fitted to msKPP's lone copies (reference
      "DMA fixed cost", fitted to [C4]) instead of the CA model's GM latencies (read 347, write
      203 cycles [C5], kept as ``gm_read_latency``/``gm_write_latency`` for reference): a lone
      1 KiB GM->UB copy takes 235 cycles on the board, less than the CA model's latency alone.
    - *GM->UB plateau*: msKPP's 910B1 table (78 GiB/s from 32 KB on, 200 sizes) is followed, not
      its 910B3 table (rising to ~190 GiB/s at 192 KB, the shape of its GM->L1 curve): the 910B1
      table is dense and flat, is the chip of every other calibrated figure here, and pairs with
      a UB->GM plateau (110 GiB/s = 66 B/cycle) that matches the ini ``ub_to_l2_rate`` of 64
      ([C12]); the issue (13) calls the 78 GiB/s figure the measured one.
    - *UB->UB*: measured 440 GiB/s (262 B/cycle) against arch_info's theoretical 128 B/cycle:
      the measurement is followed (``bytes_per_cycle`` keeps the theoretical width).
    - *L1->L0A/L0B*: msKPP has two tables; it prices load_data with the per-repeat one (one
      512 B fractal per repeat, ``MovTypeRepeat``), so that one is followed (the per-KiB table
      gives 6 instead of 5 cycles for 2 fractals).
    - *L0C->GM*: msKPP sizes the copy by its L0C (source) bytes; fixpipe is charged by the bytes
      it writes, so the two agree for float32 output (the fidelity probe uses float32).
    """

    gm_read_latency: int = 347   # GM latency (CA model) read 347 (+4) [C5] H(model); not charged
    gm_write_latency: int = 203  # GM latency (CA model) write 203 (+4) [C5] H(model); not charged
    max_outstanding_reads: int = 64   # [C5] H(model)
    max_outstanding_writes: int = 48  # [C5] H(model)
    gm_request_bytes: tuple[int, ...] = (128, 256, 512)  # GM requests, unaligned rounded up [C6][D2] H
    burst_bytes: int = 512       # CA model: uops = ceil(bytes / 512) per burst [C5] H(model)
    burst_cycles: float = 1.0    # CA model: exeTime = popTime + uops, one cycle per uop [C5] H(model)
    full_bandwidth_bytes: int = 16 * 1024  # ">=16 KB per transfer to reach full BW" [D2] H

    # Fixed costs: the first two msKPP points extrapolated to 0 bytes (fit, L), in the reference's
    # measured range (GM->UB ≈105-120 ns, UB->GM ≈80 ns, L0C->GM ≈40-45 ns, L1->L0A ≈0).
    # Points: (KiB, GiB/s) from resource910b.cpp [C4] M, 910B1 tables unless said otherwise.
    gm_to_ub: DmaPath = DmaPath(
        src="GM", dst="UB", pipe="MTE2", bytes_per_cycle=128,      # width [C4] H
        latency_cycles=216,       # 235.3 c at 1 KiB, 254.7 at 2 KiB -> 216 c = 120 ns (fit)
        measured=((1, 7.29), (2, 13.48), (4, 23.60), (8, 42.74), (16, 67.99), (24, 77.12),
                  (32, 77.19), (64, 77.05), (128, 78.49)),          # GM_TO_UB_910b1 [C4] M
        plateau_gib_per_s=78.14)  # mean of the 137 sizes >= 64 KiB [C4] M
    ub_to_gm: DmaPath = DmaPath(
        src="UB", dst="GM", pipe="MTE3", bytes_per_cycle=64,       # ini ub_to_l2_rate [C12] M
        latency_cycles=146,       # 150.7 c at 1 KiB, 155.3 at 2 KiB -> 146 c = 81 ns (fit)
        measured=((1, 11.39), (2, 22.11), (4, 37.91), (8, 57.84), (16, 86.85), (24, 106.94),
                  (32, 108.39), (64, 110.66)),                       # UB_TO_GM_910b1 [C4] M
        plateau_gib_per_s=110.15)  # mean of the sizes >= 40 KiB [C4] M
    ub_to_ub: DmaPath = DmaPath(
        src="UB", dst="UB", pipe="V", bytes_per_cycle=128,         # width [C4] H
        latency_cycles=0,         # 3.9 c per KiB from 1 KiB on: no fixed cost (fit; CA: MOV 12+15)
        measured=((1, 436.7), (8, 440.72), (120, 440.13)),          # UB_TO_UB_910b1 [C4] M
        plateau_gib_per_s=440.13)
    gm_to_l1: DmaPath = DmaPath(
        src="GM", dst="L1", pipe="MTE2", bytes_per_cycle=256,      # width [C4] H
        latency_cycles=153,       # 172.8 c at 1 KiB, 192.3 at 2 KiB -> 153 c = 85 ns (fit)
        measured=((1, 9.93), (2, 17.86), (4, 29.33), (8, 57.98), (16, 93.19), (32, 147.37),
                  (64, 176.28), (128, 232.51), (256, 261.36), (512, 261.86)),  # GM_TO_L1 [C4] M
        plateau_gib_per_s=266.91)  # mean of the sizes >= 256 KiB [C4] M
    # GM -> L0A/L0B: msKPP's per-repeat tables (repeat r = r/2 KiB, one 512 B fractal each).
    gm_to_l0a: DmaPath = DmaPath(
        src="GM", dst="L0A", pipe="MTE2", bytes_per_cycle=128,     # width [C4] H
        latency_cycles=67,        # 68.2 c for 1 fractal, 69.8 for 2 (fit)
        measured=((0.5, 12.58), (1, 24.6), (2, 49.51), (4, 94.53), (8, 175.65), (12, 211.14),
                  (24, 216.78), (64, 229.42)),                       # GM_TO_L0A_910b1 [C4] M
        plateau_gib_per_s=229.42)
    gm_to_l0b: DmaPath = DmaPath(
        src="GM", dst="L0B", pipe="MTE2", bytes_per_cycle=128,     # width [C4] H
        latency_cycles=67,        # 68.4 c for 1 fractal, 69.5 for 2 (fit)
        measured=((0.5, 12.55), (1, 24.7), (2, 49.58), (4, 94.23), (8, 176.66), (12, 218.31),
                  (64, 218.22)),                                     # GM_TO_L0B_910b1 [C4] M
        plateau_gib_per_s=218.22)
    # L1 -> L0A/L0B (load_data): msKPP's per-repeat tables; CA model: LOAD2D +25 [C5] (not used)
    l1_to_l0a: DmaPath = DmaPath(
        src="L1", dst="L0A", pipe="MTE1", bytes_per_cycle=256,     # width [C4] H
        latency_cycles=3,         # 3.95 c for 1 fractal, 4.90 for 2 (fit)
        measured=((0.5, 217.14), (1, 349.97), (2, 390.93), (4, 414.6), (8, 427.44),
                  (24, 436.41), (64, 439.33)),                       # L1_TO_L0A_910b1 [C4] M
        plateau_gib_per_s=439.33)
    l1_to_l0b: DmaPath = DmaPath(
        src="L1", dst="L0B", pipe="MTE1", bytes_per_cycle=128,     # width [C4] H
        latency_cycles=1,         # 4.93 c for 1 fractal, 8.82 for 2 (fit)
        measured=((0.5, 175.31), (1, 195.5), (2, 207.34), (8, 217.06), (64, 220.09)),
        plateau_gib_per_s=220.09)                                    # L1_TO_L0B_910b1 [C4] M
    l1_to_bt: DmaPath = DmaPath(
        src="L1", dst="BT", pipe="MTE1", bytes_per_cycle=64,       # width [C4] H
        latency_cycles=2,         # 3.0 c for 64 B, 4.0 for 128 B (fit)
        measured=((0.0625, 35.75), (0.125, 54.13), (1, 55.1)),      # L1_TO_BT_910b1 [C4] M
        plateau_gib_per_s=55.1)
    l1_to_fb: DmaPath = DmaPath(
        src="L1", dst="FB", pipe="FIX", bytes_per_cycle=64,        # width [C4] H
        latency_cycles=15,        # 18.5 c for 128 B, 22.4 for 256 B (fit)
        measured=((0.125, 11.61), (0.25, 19.17), (0.5, 28.46), (1, 37.53)),  # L1_TO_FB [C4] M
        plateau_gib_per_s=37.53)
    # L1 -> GM: not measured on a 910B (msKPP has a 910_95 table only): width and CA latency.
    l1_to_gm: DmaPath = DmaPath(src="L1", dst="GM", pipe="MTE3", bytes_per_cycle=128,  # [C4] H
                                latency_cycles=203)                  # GM write [C5] H(model)
    # L0C -> GM (fixpipe): flat ~82 c up to 11 KiB, then ~200 GiB/s.
    l0c_to_gm: DmaPath = DmaPath(
        src="L0C", dst="GM", pipe="FIX", bytes_per_cycle=128,      # width [C4] H
        latency_cycles=82,        # 82.6 c at 1 KiB, 82.0 at 2 KiB (fit; CA model 203)
        measured=((8, 161.25), (11, 211.41), (16, 203.25), (32, 201.33), (64, 196.54),
                  (128, 196.84)),                                    # L0C_TO_GM_910b1 [C4] M
        plateau_gib_per_s=200.05)  # mean of the sizes >= 16 KiB [C4] M
    # L0C -> L1: latency not found in the reference, not measured on a 910B: width only.
    l0c_to_l1: DmaPath = DmaPath(src="L0C", dst="L1", pipe="FIX", bytes_per_cycle=256,  # [C4] H
                                 latency_cycles=0)
    load3d_extra_latency: int = 43 - 25  # LOAD3D +43 vs LOAD2D +25 [C5] H(model)

    def paths(self) -> tuple[DmaPath, ...]:
        """All paths, in declaration order."""
        return tuple(getattr(self, f.name) for f in dataclasses.fields(self)
                     if isinstance(getattr(self, f.name), DmaPath))

    def path(self, src: str, dst: str) -> DmaPath:
        """The path from ``src`` to ``dst`` (memory names, any case); KeyError if none exists."""
        s, d = src.upper(), dst.upper()
        for p in self.paths():
            if p.src == s and p.dst == d:
                return p
        known = ", ".join(f"{p.src}->{p.dst}" for p in self.paths())
        raise KeyError(f"no DMA path {src}->{dst}; known paths: {known}")

    def extra_burst_cycles(self, nbytes: int, bursts: int) -> float:
        """Cycles a copy of ``nbytes`` in ``bursts`` equal bursts pays over one contiguous copy."""
        if nbytes <= 0 or bursts <= 1:
            return 0.0
        unit = self.burst_bytes
        per_burst = -(-nbytes // bursts)
        units = bursts * -(-per_burst // unit) - -(-nbytes // unit)
        return self.burst_cycles * max(0, units)

    def copy_cycles(self, src: str, dst: str, nbytes: int, bursts: int = 1) -> int:
        """Cycles one copy of ``nbytes`` (in ``bursts`` bursts) occupies its pipe on a core
        alone (the module docstring's rule, as the native timing function computes it; HBM
        contention between cores is added after the launch)."""
        if nbytes <= 0:
            return 0
        total = self.path(src, dst).curve_cycles(nbytes)
        return math.ceil(total) + math.ceil(self.extra_burst_cycles(nbytes, bursts))
