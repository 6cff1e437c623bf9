"""Chip-level sharing (simulator/contention.py), the core's GM port (codegen/timing_gm.py), L2
for re-read data and the launch overhead, checked against figures derived from the config.

Hand model: a core alone copies at its path width (latency + bytes / width); c cores moving
data at the same time share HBM (``gm.hbm_chip_bytes_per_cycle``) and L2
(``gm.l2_chip_bytes_per_cycle``) max-min fairly, a core that computes holds no share; bytes read
again in the launch (beyond a GM argument's size) come from L2 with probability
min(1, L2 size / footprint); every launch pays ``launch.total_ns`` (more for mix kernels).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.simulator import contention
from ascendc_py.simulator.config import ASCEND910B2

CFG = ASCEND910B2
GM_UB, UB_GM = CFG.dma.gm_to_ub, CFG.dma.ub_to_gm
HBM = CFG.gm.hbm_chip_bytes_per_cycle
L2 = CFG.gm.l2_chip_bytes_per_cycle
CORES = CFG.aiv_cores
F32 = np.float32


def alone(path, nbytes: int) -> int:
    """One core's copy on its own (the config's DMA rule: the measured lone-copy curve)."""
    return CFG.dma.copy_cycles(path.src, path.dst, nbytes)


def shared(path, nbytes: int, rate: float) -> float:
    """latency + bytes at ``rate`` B/cycle (a core's share), never faster than alone."""
    return path.latency_cycles + max(alone(path, nbytes) - path.latency_cycles, nbytes / rate)


# ----------------------------------------------------------------------------- kernels
@asc.kernel
def copy_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, n_tiles: int,
                tile: asc.ConstExpr[int]):
    """Read + write copy, double buffered."""
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    off = asc.get_block_idx() * n_tiles * tile
    xg.set_global_buffer(x + off, n_tiles * tile)
    zg.set_global_buffer(z + off, n_tiles * tile)
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 2)
    pipe.init_buffer(q, 2, tile * x.dtype.sizeof())
    for i in range(n_tiles):
        a = q.alloc_tensor(x.dtype)
        asc.data_copy(a, xg[i * tile:], tile)
        q.enque(a)
        a = q.deque(x.dtype)
        asc.data_copy(zg[i * tile:], a, tile)
        q.free_tensor(a)


@asc.kernel
def half_compute(x: asc.GlobalAddress, n: int, copiers: int, reps: int):
    """Blocks below ``copiers`` read n elements of their own; the others compute only."""
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    if asc.get_block_idx() < copiers:
        xg = asc.GlobalTensor()
        xg.set_global_buffer(x + asc.get_block_idx() * n, n)
        asc.data_copy(a, xg, n)
    else:
        for i in range(reps):
            asc.exp(a, a, n)


@asc.kernel
def read_while_writing(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int):
    """One copy-in and one independent copy-out (no flag between them)."""
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    zg.set_global_buffer(z, n)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    b = asc.LocalTensor(x.dtype, asc.TPosition.VECOUT, 98304, n)
    asc.data_copy(a, xg, n)
    asc.data_copy(zg, b, n)


@asc.kernel
def reread(x: asc.GlobalAddress, n: int, reps: int, stride: int):
    """Every block reads n elements ``reps`` times: at x + (block * reps + r) * stride (stride
    0: the same vector, a broadcast every core re-reads)."""
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, n + (asc.get_block_num() * reps) * stride)
    for r in range(reps):
        asc.data_copy(a, xg[(asc.get_block_idx() * reps + r) * stride:], n)
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)


# ----------------------------------------------------------------------------- HBM sharing
def test_read_write_copy_on_every_core_stays_under_hbm():
    """48 cores copying (read + write): the bytes moved over the blocks' time reach the chip's
    HBM bandwidth and never exceed it (the static split let reads and writes each have it)."""
    n_tiles, tile = 8, 8192
    x = np.random.default_rng(0).random(CORES * n_tiles * tile).astype(F32)
    z = np.zeros_like(x)
    r = copy_kernel[CORES](x, z, n_tiles, tile)
    np.testing.assert_array_equal(z, x)
    rate = 2 * x.nbytes / r.kernel_cycles          # bytes per cycle, reads and writes
    assert rate <= HBM * 1.001
    assert rate >= 0.9 * HBM
    assert r.gm_bandwidth_gbps <= r.peak_gm_bandwidth_gbps
    assert r.stalls["HBM contention"] > 0.5 * r.kernel_cycles


def test_computing_cores_hold_no_hbm_share():
    """Half the cores compute, half copy 96 KB each: the copiers share HBM among themselves
    (888 / 24 B/cycle each), not a static split over every core (888 / 48)."""
    nbytes, copiers = 96 * 1024, CORES // 2
    x = np.zeros(copiers * nbytes // 4, F32)
    r = half_compute[CORES](x, nbytes // 4, copiers, 40)
    copy = [bt for bt in r._blocks if bt.block < copiers]
    work = [bt for bt in r._blocks if bt.block >= copiers]
    expected = shared(GM_UB, nbytes, HBM / copiers)
    static = shared(GM_UB, nbytes, HBM / CORES)
    assert copiers * GM_UB.bytes_per_cycle > HBM            # the copiers do contend
    for bt in copy:
        assert bt.cycles == pytest.approx(expected, rel=0.03)
        assert bt.hbm_stall > 0
    assert max(bt.cycles for bt in copy) < 0.7 * static
    assert all(bt.hbm_stall == 0 for bt in work)


def test_reads_and_writes_of_one_core_share_its_port():
    """A copy-in and an independent copy-out of one core: alone each would run at its path
    width at the same time; on the shared port the later one (the copy-out) is longer by the
    time their data phases overlap (the two share the bus half and half)."""
    n = 16384                     # 64 KB each way
    nbytes = n * 4
    x, z = np.ones(n, F32), np.zeros(n, F32)
    r = read_while_writing[1](x, z, n, trace=True)
    rd, wr = sorted(r._blocks[0].trace.tolist(), key=lambda e: e[3])[:2]  # MTE2 then MTE3
    assert rd[1] == alone(GM_UB, nbytes)
    read_data = (rd[0] + GM_UB.latency_cycles, rd[0] + rd[1])
    write_data = wr[0] + UB_GM.latency_cycles
    write_alone = alone(UB_GM, nbytes) - UB_GM.latency_cycles     # its data phase alone
    overlap = min(read_data[1], write_data + write_alone) - max(read_data[0], write_data)
    assert overlap > 0
    assert wr[1] == UB_GM.latency_cycles + write_alone + overlap
    assert r.kernel_cycles >= wr[0] + wr[1]


# ----------------------------------------------------------------------------- L2
def test_broadcast_reread_costs_hbm_once():
    """Every core reads the same 64 KB vector 4 times: HBM serves it once, L2 the rest (at the
    chip's L2 bandwidth), so the launch is as fast as L2 allows; the same bytes read from
    distinct addresses (no reuse) are HBM-bound."""
    nbytes, reps = 64 * 1024, 4
    n = nbytes // 4
    bcast = reread[CORES](np.ones(n, F32), n, reps, 0)
    distinct = reread[CORES](np.ones(n + CORES * reps * n, F32), n, reps, n)
    per_copy_l2 = GM_UB.latency_cycles + CORES * nbytes / L2
    per_copy_hbm = GM_UB.latency_cycles + CORES * nbytes / HBM
    assert bcast.kernel_cycles == pytest.approx(reps * per_copy_l2, rel=0.05)
    assert distinct.kernel_cycles == pytest.approx(reps * per_copy_hbm, rel=0.05)
    # the re-read share: all but the first read of the vector
    records = np.stack([bt.gm_demand for bt in bcast._blocks])
    total = CORES * reps * nbytes
    assert contention.reread_fraction(records, CFG.gm.l2_size) == \
        pytest.approx((total - nbytes) / total)


@pytest.mark.parametrize("l2_fraction", [0.5, 0.25])
def test_reread_hits_fall_gradually_when_the_footprint_outgrows_l2(l2_fraction):
    """With an L2 of a fraction f of the launch's footprint, a re-read hits with probability f:
    HBM then carries (1 - f * reuse) of the bytes, between the all-L2 and the all-HBM case."""
    nbytes, reps = 64 * 1024, 4
    n = nbytes // 4
    small = CFG.replace(name=f"B2-L2x{l2_fraction}", gm__l2_size=int(nbytes * l2_fraction))
    assert contention.l2_hit_probability(nbytes, small.gm.l2_size) == pytest.approx(l2_fraction)
    full = reread[CORES](np.ones(n, F32), n, reps, 0)
    part = reread[CORES](np.ones(n, F32), n, reps, 0, platform=small)
    none = reread[CORES](np.ones(n + CORES * reps * n, F32), n, reps, n)
    total = CORES * reps * nbytes
    hit = l2_fraction * (total - nbytes) / total
    to_hbm = CORES * nbytes * (1 - hit)
    per_copy = GM_UB.latency_cycles + max(to_hbm / HBM, CORES * nbytes / L2)
    assert part.kernel_cycles == pytest.approx(reps * per_copy, rel=0.05)
    assert full.kernel_cycles < part.kernel_cycles < none.kernel_cycles


def test_l2_hit_probability_is_gradual():
    l2 = CFG.gm.l2_size
    probs = [contention.l2_hit_probability(f * l2, l2) for f in (0.5, 1, 1.5, 2, 4, 8)]
    assert probs[:2] == [1.0, 1.0]
    assert probs[2:] == pytest.approx([2 / 3, 1 / 2, 1 / 4, 1 / 8])


# ----------------------------------------------------------------------------- launch cost
def test_launch_overhead_row_and_value():
    """[C7]: scheduler 150 ns + HW init 50 ns + SW init 1 us + completion 500 ns per launch."""
    r = half_compute[1](np.zeros(1024, F32), 1024, 1, 0)
    ns = 150 + 50 + 1000 + 500
    assert CFG.launch.total_ns() == ns
    assert r.launch_cycles == round(ns * CFG.clock_mhz / 1e3)
    assert r.cycles == r.kernel_cycles + r.launch_cycles
    assert r.time_us == pytest.approx(r.cycles / CFG.clock_mhz)
    rows = dict(r.rows())
    assert "launch overhead" in rows["  launch overhead"] or \
        f"{r.launch_cycles:,} cycles" in rows["  launch overhead"]
    assert f"{r.launch_cycles:,} cycles" in str(r)


@asc.kernel(kernel_type=asc.KernelType.MIX_AIC_1_2)
def mix_touch(out: asc.GlobalAddress):
    og = asc.GlobalTensor()
    og.set_global_buffer(out, 8)
    if asc.ascend_is_aic():
        og.set_value(0, 1.0)


@asc.kernel(kernel_type=asc.KernelType.AIC_ONLY)
def cube_touch(out: asc.GlobalAddress):
    og = asc.GlobalTensor()
    og.set_global_buffer(out, 8)
    og.set_value(0, 2.0)


def test_mix_kernels_pay_a_second_core_type_start():
    out = np.zeros(8, F32)
    mix = mix_touch[1](out)
    cube = cube_touch[1](out)
    extra = CFG.launch.mix_extra_ns
    assert extra == 50 + 1000                     # a second HW init + SW init
    assert mix.launch_cycles == round((CFG.launch.total_ns() + extra) * CFG.clock_mhz / 1e3)
    assert cube.launch_cycles == round(CFG.launch.total_ns() * CFG.clock_mhz / 1e3)
    assert mix.cycles == mix.kernel_cycles + mix.launch_cycles


def test_timing_off_costs_nothing(monkeypatch):
    monkeypatch.setenv("ASCENDC_PY_TIMING", "0")
    r = half_compute[2](np.zeros(2048, F32), 1024, 1, 3)
    assert r.launch_cycles == 0 and r.stalls["HBM contention"] == 0
    assert r.cycles == r.kernel_cycles      # (only the scalar clock, kept inline, advanced)


# ----------------------------------------------------------------------------- determinism
def test_contended_launch_is_deterministic():
    """Same cycles, stalls and trace on every run, whatever the host threads did."""
    nbytes, copiers = 32 * 1024, 20
    x = np.zeros(copiers * nbytes // 4, F32)
    runs = [half_compute[CORES + 8](x, nbytes // 4, copiers, 7, trace=True) for _ in range(4)]
    first = runs[0]
    assert first.stalls["HBM contention"] > 0 or any(bt.hbm_stall for bt in first._blocks)
    for r in runs[1:]:
        assert r.cycles == first.cycles and r.core_cycles == first.core_cycles
        assert r.stalls == first.stalls
        for a, b in zip(r._blocks, first._blocks):
            assert a.cycles == b.cycles and a.hbm_stall == b.hbm_stall
            np.testing.assert_array_equal(a.trace, b.trace)


def test_trace_of_a_delayed_core_is_shifted():
    """Four copies in a row on every core: each event starts after the delayed end of the one
    before it, and the last ends with the block."""
    nbytes, reps = 64 * 1024, 4
    n = nbytes // 4
    r = reread[CORES](np.ones(n + CORES * reps * n, F32), n, reps, n, trace=True)
    bt = r._blocks[5]
    copies = [e for e in bt.trace.tolist() if e[3] == 4]      # MTE2
    assert len(copies) == reps and bt.hbm_stall > 0
    per_copy = bt.cycles / reps
    for k, e in enumerate(copies):
        assert e[0] == pytest.approx(k * per_copy, abs=0.1 * per_copy)   # within a window
