"""Timing of Matmul calls: cycles grow with the work, more cores finish sooner, a mid-size
float16 product reaches a good share of the modeled cube peak, the L2 re-read model (a
footprint beyond L2 is slower, gradually), HBM shared by what the cores move (streaming cores
are held to the chip's bandwidth, a few cores move at one core's rate), and the report's
efficiency helper. The launches are of the
cube-only kernel (one AIC per block); mix kernels (whose AICs serve their AIVs' requests)
are in test_matmul_mix.py."""
from __future__ import annotations

import numpy as np

import ascendc_py as asc
from ascendc_py import host
from ascendc_py.simulator.config import ASCEND910B2

import kernels_matmul as K


def _cycles(m, n, k, dim=24, platform=None):
    a = np.ones((m, k), np.float16)
    b = np.ones((k, n), np.float16)
    with asc.simulator.config.using_platform(platform or ASCEND910B2):
        c, report, tiling = K.run_all(a, b, "float32", dim=dim)
    assert c[0, 0] == k
    return report


def test_cycles_grow_with_k_and_shrink_with_cores():
    c1, c2, c3 = (_cycles(512, 1024, k).cycles for k in (256, 1024, 2048))
    assert c1 < c2 < c3
    few, many = _cycles(1024, 1024, 512, dim=2).cycles, _cycles(1024, 1024, 512, dim=16).cycles
    assert many < few / 4


def test_mid_size_efficiency():
    report = _cycles(2048, 2048, 2048)
    eff = host.cube_efficiency(report, 2048, 2048, 2048)
    assert 0.7 <= eff <= 1.0, eff
    # the M pipe holds exactly the cube work of the critical core
    assert report.pipe_busy["M"] <= report.cycles
    assert report.bottleneck in ("M", "MTE2")


def test_l2_overflow_reads_from_hbm():
    # the same launch with an L2 too small for the footprint: every re-read comes from HBM
    # (shared between the cores by the contention pass)
    small_l2 = ASCEND910B2.replace(gm__l2_size=1024)
    fits = _cycles(1024, 1024, 1024)
    spills = _cycles(1024, 1024, 1024, platform=small_l2)
    assert spills.cycles > 1.5 * fits.cycles
    # a core reads at its own rate whether L2 or HBM serves it; the extra HBM bytes cost
    # contention between the cores
    assert spills.pipe_busy["MTE2"] == fits.pipe_busy["MTE2"]
    assert spills.stalls["HBM contention"] > fits.stalls["HBM contention"] + \
        0.5 * fits.cycles
    # HBM bytes: only first reads when it fits, every panel read when it does not
    assert spills.bytes_moved["GM->L1"] > 3 * fits.bytes_moved["GM->L1"]


def test_l2_hit_fraction_falls_gradually_past_l2():
    """Re-reads hit L2 with the fraction min(1, L2 / reuse distance) (timing_matmul.py); at
    1024^3 on 24 cores both operands' distances reach the whole footprint (A + B + C = 8 MiB),
    so as L2 shrinks past it the cycles and the HBM bytes grow monotonically and smoothly,
    the extra HBM bytes as 1 - L2 / footprint, without the old all-or-nothing cliff."""
    footprint = 1024 * 1024 * (2 + 2 + 4)
    fracs = (2.0, 1.0, 0.95, 0.9, 0.75, 0.5, 0.25)
    runs = [_cycles(1024, 1024, 1024,
                    platform=ASCEND910B2.replace(gm__l2_size=int(footprint * f)))
            for f in fracs]
    cycles = [r.cycles for r in runs]
    hbm = [r.bytes_moved["GM->L1"] for r in runs]
    assert cycles[0] == cycles[1] and hbm[0] == hbm[1]       # fits: only first reads
    assert all(x <= y for x, y in zip(cycles, cycles[1:])), cycles
    assert all(x < y for x, y in zip(hbm[1:], hbm[2:])), hbm
    # 5 % less L2 than the footprint costs a few per cent, not a step to HBM
    assert cycles[2] < 1.05 * cycles[1], cycles
    # the extra HBM bytes follow the miss fraction 1 - L2 / footprint
    first = hbm[1]
    extra = [h - first for h in hbm[2:]]
    misses = [1 - f for f in fracs[2:]]
    for e, miss in zip(extra, misses):
        assert abs(e / extra[-1] - miss / misses[-1]) < 0.02, (extra, misses)


def test_l2_misses_start_at_the_reuse_distance_not_the_footprint():
    """4096 x 4096 x 512 on 24 cores (M-first; B stays in L1, A panels are re-read once per
    column of tiles): footprint 72 MiB, but A's re-reads come back after a sweep of about
    34 MiB (all of A, the B panels in flight, the C tiles written meanwhile), so the HBM bytes
    stay at the first reads until L2 drops below that, then grow smoothly; the cycles grow
    monotonically with no step (by less than the HBM bytes)."""
    m = n = 4096
    k = 512
    a = np.ones((m, k), np.float16)
    b = np.ones((k, n), np.float16)
    mib = 1 << 20
    runs = []
    for l2 in (80, 64, 48, 40, 32, 24, 16, 8):
        with asc.simulator.config.using_platform(ASCEND910B2.replace(gm__l2_size=l2 * mib)):
            _, report, tiling = K.run_all(a, b, "float32")
        runs.append((l2, report.cycles, report.bytes_moved["GM->L1"]))
    assert tiling.iterate_order == 0
    first = runs[0][2]
    assert all(h == first for l2, _, h in runs if l2 >= 40), runs
    assert all(h > first for l2, _, h in runs if l2 <= 24), runs
    cycles = [c for _, c, _ in runs]
    hbm = [h for _, _, h in runs]
    assert all(x <= y for x, y in zip(cycles, cycles[1:])), runs
    assert all(x <= y for x, y in zip(hbm, hbm[1:])), runs
    assert all(y / x <= g / h for x, y, h, g in zip(cycles, cycles[1:], hbm, hbm[1:])), runs


def _hbm_bytes(report):
    """The launch's HBM traffic: first reads and missed re-reads of A/B, and the C writes."""
    return report.bytes_moved["GM->L1"] + report.bytes_moved["L0C->GM"]


def test_streaming_cores_are_held_to_the_chip_hbm_bandwidth():
    """24 cores re-read every panel from HBM (an L2 of 1 KiB): each alone moves at GM -> L1's
    per-core plateau, together far more than the chip's HBM; the contention pass delays them so
    that the launch's HBM bytes per cycle stay within the chip's bandwidth."""
    plat = ASCEND910B2.replace(gm__l2_size=1024)
    report = _cycles(2048, 2048, 512, platform=plat)
    bandwidth = plat.gm.hbm_chip_bytes_per_cycle
    stall = report.stalls["HBM contention"]
    assert stall > 0
    assert _hbm_bytes(report) / report.kernel_cycles <= bandwidth
    # without the delay the same bytes would have moved faster than HBM allows
    assert _hbm_bytes(report) / (report.kernel_cycles - stall) > bandwidth


def test_few_cores_move_at_one_core_rate():
    """Two cores re-reading from HBM (an L2 of 1 KiB) move at one core's GM -> L1 rate and are
    not slowed by any static split of HBM: the same cycles, and no contention, on a chip whose
    HBM is just enough for two cores (a split among all its AI Cores would give each a fraction
    of that rate)."""
    gm_l1 = ASCEND910B2.dma.path("GM", "L1").plateau_bytes_per_cycle
    fix = ASCEND910B2.dma.path("L0C", "GM").plateau_bytes_per_cycle
    stock = ASCEND910B2.replace(gm__l2_size=1024)
    narrow = stock.replace(gm__hbm_chip_bytes_per_cycle=2 * (gm_l1 + fix))
    assert narrow.gm.hbm_chip_bytes_per_cycle / narrow.aic_cores < gm_l1 / 4
    runs = [_cycles(1024, 1024, 512, dim=2, platform=p) for p in (stock, narrow)]
    assert runs[0].cycles == runs[1].cycles
    assert runs[0].stalls["HBM contention"] == runs[1].stalls["HBM contention"] == 0
    # the critical core's MTE2 moves its half of the HBM reads no faster than one core can
    assert runs[0].pipe_busy["MTE2"] >= runs[0].bytes_moved["GM->L1"] / 2 / gm_l1


def test_efficiency_of_a_launch_on_a_renamed_config():
    # a modified config gets a new name (README); the efficiency helper used to look the name
    # up among the built-in platforms and raised ValueError
    slow = ASCEND910B2.replace(name="B2-fewer-cores", aic_cores=12)
    report = _cycles(512, 512, 512, dim=12, platform=slow)
    eff = host.cube_efficiency(report, 512, 512, 512)
    assert eff == (512 ** 3) / (report.cycles * 4096 * 12)
