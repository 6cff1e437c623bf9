"""The cycle-approximate timing model, checked against numbers derived BY HAND from the machine
config (``ASCEND910B2``'s fields), never from the timing code or its cost table.

Model being checked (ascendc_py/compiler/codegen/timing.py docstring): the scalar unit issues in
program order (1 cycle per dispatched instruction, ``scalar.alu`` per ALU op); an instruction on
pipe p starts at max(issue time, pipe free), occupies ``occ`` cycles and completes at
start + occ + lat.
  * DMA:    occ = ``DmaCosts.copy_cycles`` for a core alone (the rule the config states in
            Python: the path's measured lone-copy curve plus the per-burst cost), lat = 0; its
            fixed part (the curve at 0 bytes, ``latency_cycles``) holds no bandwidth, the rest
            is the data phase. Cores share HBM (simulator/contention.py): when c cores move
            data at the same time faster than hbm_chip_bytes_per_cycle in all, each one's data
            phase stretches to bytes / (HBM / c).
  * Every launch also pays the launch overhead (config.launch): ``r.cycles`` =
    ``r.kernel_cycles`` (the blocks) + ``r.launch_cycles``.
  * vector: occ = ceil(repeats * cycles_per_repeat), repeats = ceil(count * sizeof / 256),
            lat = the class latency. Two-source ops: the 8 blocks of one repeat of a source sit in
            UB bank groups (addr>>5)&15 .. +7 (16 groups); the vector unit reads one 32 B row per
            group per cycle, so if the two sources' group ranges overlap some group is read twice
            per repeat -> 2 cycles/repeat; if they are disjoint (group distance 8, i.e. addresses
            256 B apart mod 512 B) -> 1 cycle/repeat. cycles_per_repeat = max(class rate, that).
  * set_flag fires when the source pipe has drained; wait_flag holds the destination pipe.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.simulator.config import ASCEND910B2

CFG = ASCEND910B2
GM_UB = CFG.dma.gm_to_ub
UB_GM = CFG.dma.ub_to_gm
HBM = CFG.gm.hbm_chip_bytes_per_cycle
REPEAT = 256          # bytes one vector repeat reads per operand (8 blocks x 32 B)
BANK_CONFLICT_CPR = 2  # two reads of one bank group per repeat (see module docstring)
F32, F16 = np.float32, np.float16


def dma_cycles(path, nbytes: int, cores: int = 1) -> int:
    """One copy when ``cores`` cores make the same copy at the same time: the config's rule for
    a core alone, its data phase stretched to bytes / (HBM / cores) when that is longer."""
    alone = CFG.dma.copy_cycles(path.src, path.dst, nbytes)
    share = HBM / min(cores, CFG.aiv_cores)
    return path.latency_cycles + max(alone - path.latency_cycles, math.ceil(nbytes / share))


def alone_rate(path, nbytes: int) -> float:
    """Bytes per cycle of one core's copy of ``nbytes`` during its data phase."""
    return nbytes / (CFG.dma.copy_cycles(path.src, path.dst, nbytes) - path.latency_cycles)


def events(report, block: int = 0):
    """Trace rows of one block as dicts, in issue order."""
    rows = report._blocks[block].trace.tolist()
    return [dict(start=s, occ=o, lat=l, pipe=p, site=site, op=op, end=s + o + l)
            for s, o, l, p, site, op in rows]


PIPE = {name: i for i, name in enumerate(("S", "V", "M", "MTE1", "MTE2", "MTE3", "FIX"))}


def on_pipe(evs, name):
    return [e for e in evs if e["pipe"] == PIPE[name]]


# ============================================================================ 1. lone DMA
@asc.kernel
def copy_in_kernel(x: asc.GlobalAddress, n: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x + asc.get_block_idx() * n, n)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    asc.data_copy(a, xg, n)


@asc.kernel
def copy_out_kernel(z: asc.GlobalAddress, n: int):
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, n)
    a = asc.LocalTensor(z.dtype, asc.TPosition.VECOUT, 0, n)
    asc.data_copy(zg, a, n)


@pytest.mark.parametrize("nbytes", [1024, 1056, 4096, 16384, 65536, 100 * 1024, 192 * 1024])
def test_lone_gm_to_ub_copy(nbytes):
    # 1 block: HBM's 888 B/cycle > the path's measured plateau, so the curve alone counts
    assert HBM / 1 > GM_UB.plateau_bytes_per_cycle
    expected = math.ceil(GM_UB.curve_cycles(nbytes))
    assert expected == dma_cycles(GM_UB, nbytes)
    x = np.zeros(nbytes // 4, F32)
    r = copy_in_kernel[1](x, nbytes // 4, trace=True)
    (ev,) = events(r)
    assert ev["pipe"] == PIPE["MTE2"]
    assert ev["occ"] == expected and ev["lat"] == 0
    assert r.pipe_busy["MTE2"] == expected
    assert r.bytes_moved == {"GM->UB": nbytes}
    assert r.instructions["data_copy"] == 1
    # nothing else runs: the launch ends when the copy completes
    assert r.kernel_cycles == ev["start"] + expected
    assert r.cycles == r.kernel_cycles + r.launch_cycles
    assert ev["start"] <= 8  # only a few scalar cycles before the copy is issued


@pytest.mark.parametrize("nbytes", [1024, 32768, 192 * 1024])
def test_lone_ub_to_gm_copy(nbytes):
    expected = math.ceil(UB_GM.curve_cycles(nbytes))
    z = np.zeros(nbytes // 2, F16)
    r = copy_out_kernel[1](z, nbytes // 2, trace=True)
    (ev,) = events(r)
    assert ev["pipe"] == PIPE["MTE3"] and ev["occ"] == expected
    assert r.pipe_busy["MTE3"] == expected and r.bytes_moved == {"UB->GM": nbytes}


@pytest.mark.parametrize("cores, shared", [(8, False), (16, False), (24, True), (48, True)])
def test_copy_limited_by_hbm_share(cores, shared):
    """All cores copy at once. Below ~19 cores their summed rate (one core's measured plateau
    each) fits HBM and every copy takes its lone time; beyond, each one's HBM share
    (888/cores) is below one core's rate, so its copy ends after latency + bytes / share (the
    delay is the "HBM contention" stall)."""
    nbytes = 65536
    share = HBM / cores
    assert (share < alone_rate(GM_UB, nbytes)) == shared
    alone = CFG.dma.copy_cycles("GM", "UB", nbytes)
    expected = dma_cycles(GM_UB, nbytes, cores)
    x = np.zeros(cores * nbytes // 4, F32)
    r = copy_in_kernel[cores](x, nbytes // 4, trace=True)
    for b in range(cores):
        (ev,) = events(r, b)
        assert ev["occ"] == alone                 # the core's own timeline
        assert r._blocks[b].cycles == pytest.approx(ev["start"] + expected, rel=0.02)
    assert r.stalls["HBM contention"] == pytest.approx(expected - alone, rel=0.03, abs=2)
    assert r.bytes_moved == {"GM->UB": cores * nbytes}


def test_copy_follows_a_modified_config():
    """The cost comes from the config passed at launch, not from numbers baked into the code."""
    slow = CFG.replace(name="B2-slowdma", dma__gm_to_ub__latency_cycles=1000,
                       dma__gm_to_ub__bytes_per_cycle=32, dma__gm_to_ub__measured=(),
                       dma__gm_to_ub__plateau_gib_per_s=0.0)
    x = np.zeros(4096, F32)
    r = copy_in_kernel[1](x, 4096, trace=True, platform=slow)
    (ev,) = events(r)
    assert ev["occ"] == 1000 + 16384 // 32


# ============================================================================ 2. vector ops
# operands placed by hand: src0 at 0, src1 at SRC1 (+ 256 B: bank-group distance 8 = disjoint),
# dst at DST. 255 fp32 repeats = 65280 B fit below each next operand.
SRC1, DST = 65536, 131072 + 256


@asc.kernel
def add_kernel(x: asc.GlobalAddress, n: int, a1: int):
    s0 = asc.LocalTensor(x.dtype, asc.TPosition.VECCALC, 0, n)
    s1 = asc.LocalTensor(x.dtype, asc.TPosition.VECCALC, a1, n)
    d = asc.LocalTensor(x.dtype, asc.TPosition.VECCALC, DST, n)
    asc.add(d, s0, s1, n)


@asc.kernel
def mul_kernel(x: asc.GlobalAddress, n: int, a1: int):
    s0 = asc.LocalTensor(x.dtype, asc.TPosition.VECCALC, 0, n)
    s1 = asc.LocalTensor(x.dtype, asc.TPosition.VECCALC, a1, n)
    d = asc.LocalTensor(x.dtype, asc.TPosition.VECCALC, DST, n)
    asc.mul(d, s0, s1, n)


@asc.kernel
def exp_kernel(x: asc.GlobalAddress, n: int):
    s0 = asc.LocalTensor(x.dtype, asc.TPosition.VECCALC, 0, n)
    d = asc.LocalTensor(x.dtype, asc.TPosition.VECCALC, DST, n)
    asc.exp(d, s0, n)


@asc.kernel
def adds_kernel(x: asc.GlobalAddress, n: int):
    s0 = asc.LocalTensor(x.dtype, asc.TPosition.VECCALC, 0, n)
    d = asc.LocalTensor(x.dtype, asc.TPosition.VECCALC, DST, n)
    asc.adds(d, s0, 3, n)


def one_vec_event(report):
    (ev,) = events(report)
    assert ev["pipe"] == PIPE["V"]
    assert report.kernel_cycles == ev["end"]  # the blocks end when the op completes
    return ev


def count_for(repeats: int, dtype, short: int = 0) -> int:
    """Elements filling ``repeats`` repeats; ``short`` elements fewer (still ``repeats``)."""
    return repeats * REPEAT // np.dtype(dtype).itemsize - short


REPEAT_CASES = [(1, 0), (8, 0), (100, 0), (255, 0), (1, 63), (8, 1), (100, 17), (255, 5)]


def occupancy(repeats, rate) -> int:
    """PIPE_V cycles of an instruction: repeats x rate, at least the minimum per instruction."""
    return max(math.ceil(repeats * rate), CFG.vector.min_instruction_cycles)


@pytest.mark.parametrize("repeats, expected", [(1, 3), (2, 3), (3, 3), (4, 4), (40, 40)])
def test_short_instructions_take_the_minimum(repeats, expected):
    # msKPP (VABS/VADDS fp32, 910B1): 3 cycles for 1-3 repeats, then 1 per repeat
    assert CFG.vector.min_instruction_cycles == 3
    ev = one_vec_event(adds_kernel[1](np.zeros(8, F32), count_for(repeats, F32), trace=True))
    assert ev["occ"] == expected


@pytest.mark.parametrize("repeats, short", REPEAT_CASES)
@pytest.mark.parametrize("dtype", [F32, F16])
def test_add_disjoint_banks_rate(repeats, short, dtype):
    cost = CFG.vector.simple
    rate = cost.cycles_per_repeat(dtype.__name__)
    n = count_for(repeats, dtype, short)
    x = np.zeros(8, dtype)
    ev = one_vec_event(add_kernel[1](x, n, SRC1 + 256, trace=True))
    assert ev["occ"] == occupancy(repeats, max(rate, 1))
    assert ev["lat"] == cost.latency(dtype.__name__)


@pytest.mark.parametrize("repeats", [1, 8, 100, 255])
@pytest.mark.parametrize("a1", [SRC1, SRC1 + 32, SRC1 + 224, SRC1 + 512, SRC1 + 288])
def test_add_overlapping_banks_pays_two_cycles(repeats, a1):
    # group distance (0 - a1/32) mod 16 is 0, 15, 9, 0, 7: never 8, so the ranges overlap
    assert ((0 - (a1 >> 5)) & 15) != 8
    rate = CFG.vector.simple.cycles_per_repeat_f32
    assert rate < BANK_CONFLICT_CPR  # otherwise the bank rule would not show
    ev = one_vec_event(add_kernel[1](np.zeros(8, F32), count_for(repeats, F32), a1, trace=True))
    assert ev["occ"] == occupancy(repeats, max(rate, BANK_CONFLICT_CPR))


# 256 B apart mod 512 B: group distance 8 (25856 = 50*512 + 256 sits right after src0's data)
@pytest.mark.parametrize("a1", [SRC1 + 256, SRC1 + 768, 25856, 32768 + 256])
def test_add_disjoint_banks_other_offsets(a1):
    assert ((0 - (a1 >> 5)) & 15) == 8
    ev = one_vec_event(add_kernel[1](np.zeros(8, F32), count_for(100, F32), a1, trace=True))
    assert ev["occ"] == 100 * CFG.vector.simple.cycles_per_repeat_f32


@pytest.mark.parametrize("dtype, key", [(F32, "f32"), (F16, "f16"), (np.int32, "int"),
                                        (np.int16, "int")])
@pytest.mark.parametrize("disjoint", [True, False])
def test_mul_rates_per_dtype(dtype, key, disjoint):
    cost = CFG.vector.mul
    rate = getattr(cost, f"cycles_per_repeat_{key}")
    bank = 1 if disjoint else BANK_CONFLICT_CPR
    ev = one_vec_event(mul_kernel[1](np.zeros(8, dtype), count_for(50, dtype),
                                     SRC1 + (256 if disjoint else 0), trace=True))
    assert ev["occ"] == math.ceil(50 * max(rate, bank))
    assert ev["lat"] == getattr(cost, f"latency_{key}")


@pytest.mark.parametrize("repeats", [1, 8, 100, 255])
@pytest.mark.parametrize("dtype, key", [(F32, "f32"), (F16, "f16")])
def test_exp_rate_per_dtype(repeats, dtype, key):
    cost = CFG.vector.transcendental
    ev = one_vec_event(exp_kernel[1](np.zeros(8, dtype), count_for(repeats, dtype, 3),
                                     trace=True))
    assert ev["occ"] == occupancy(repeats, getattr(cost, f"cycles_per_repeat_{key}"))
    assert ev["lat"] == getattr(cost, f"latency_{key}")


@pytest.mark.parametrize("dtype", [np.int32, F16])
def test_single_source_op_never_pays_bank_rule(dtype):
    key = "int" if dtype is np.int32 else "f16"
    ev = one_vec_event(adds_kernel[1](np.zeros(8, dtype), count_for(40, dtype), trace=True))
    assert ev["occ"] == 40 * getattr(CFG.vector.simple, f"cycles_per_repeat_{key}")
    assert ev["lat"] == getattr(CFG.vector.simple, f"latency_{key}")


def test_config_rates_the_tests_rely_on():
    """The config numbers the tests above rely on (reference §1.3, Huawei CA table)."""
    v = CFG.vector
    assert (v.simple.cycles_per_repeat_f16, v.simple.cycles_per_repeat_f32) == (1, 1)
    t = v.transcendental
    assert (t.cycles_per_repeat_f16, t.cycles_per_repeat_f32) == (4, 2)
    assert t.latency_f32 > v.simple.latency_f32


@pytest.mark.parametrize("dtype", [F32, F16])
def test_exp_costs_more_than_add(dtype):
    n = count_for(64, dtype)
    x = np.zeros(8, dtype)
    e = one_vec_event(exp_kernel[1](x, n, trace=True))
    fast = one_vec_event(add_kernel[1](x, n, SRC1 + 256, trace=True))   # disjoint banks
    slow = one_vec_event(add_kernel[1](x, n, SRC1, trace=True))         # bank conflict
    assert e["occ"] > fast["occ"]
    for a in (fast, slow):
        assert e["occ"] >= a["occ"] and e["occ"] + e["lat"] > a["occ"] + a["lat"]
    if dtype is F16:  # 4 c/rep: more than even the bank-conflicted add
        assert e["occ"] == 64 * CFG.vector.transcendental.cycles_per_repeat_f16 > slow["occ"]


# ============================================================================ 3. ordering
@asc.kernel
def flag_pipeline(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int, sync: asc.ConstExpr[int]):
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    zg.set_global_buffer(z, n)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    c = asc.LocalTensor(x.dtype, asc.TPosition.VECOUT, 65536, n)
    asc.data_copy(a, xg, n)
    if sync:
        asc.set_flag(asc.HardEvent.MTE2_V, 0)
        asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.adds(c, a, 1.0, n)
    if sync:
        asc.set_flag(asc.HardEvent.V_MTE3, 0)
        asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, c, n)


def test_set_wait_flag_orders_pipes():
    n = 8192
    x = np.ones(n, F32)
    z = np.zeros(n, F32)
    r = flag_pipeline[1](x, z, n, 1, trace=True)
    np.testing.assert_array_equal(z, 2.0)
    cp, v, out = events(r)
    assert (cp["pipe"], v["pipe"], out["pipe"]) == (PIPE["MTE2"], PIPE["V"], PIPE["MTE3"])
    assert cp["occ"] == dma_cycles(GM_UB, 4 * n)
    assert v["start"] >= cp["end"]
    assert out["start"] >= v["end"]  # the flag waits for the vector latency too
    assert v["start"] - cp["end"] <= 4 and out["start"] - v["end"] <= 4  # no spurious delay
    assert r.stalls["flag wait"] > 0


def test_without_flags_pipes_do_not_wait():
    """Dependencies come only from synchronisation: an unsynchronised kernel overlaps (racy)."""
    n = 8192
    r = flag_pipeline[1](np.ones(n, F32), np.zeros(n, F32), n, 0, trace=True)
    cp, v, out = events(r)
    assert v["start"] < cp["end"] and out["start"] < v["end"]


@asc.kernel
def wait_before_set(x: asc.GlobalAddress, n: int, m: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 2 * n)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    b = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 32768, n)
    c = asc.LocalTensor(x.dtype, asc.TPosition.VECCALC, 65536, m)
    asc.data_copy(a, xg, n)
    asc.wait_flag(asc.HardEvent.V_MTE2, 0)   # MTE2 queue blocks here until V sets the flag
    asc.exp(c, c, m)
    asc.set_flag(asc.HardEvent.V_MTE2, 0)
    asc.data_copy(b, xg[n:], n)


def test_set_then_wait_holds_destination_pipe():
    """Control: the set comes first in program order, the wait holds MTE2 until exp is done."""
    n, m = 256, 255 * 64
    r = wait_before_set_ok[1](np.ones(2 * n, F32), n, m, trace=True)
    cp1, ex, cp2 = events(r)
    assert ex["end"] > cp1["end"] and cp2["start"] >= ex["end"]


@asc.kernel
def wait_before_set_ok(x: asc.GlobalAddress, n: int, m: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 2 * n)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    b = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 32768, n)
    c = asc.LocalTensor(x.dtype, asc.TPosition.VECCALC, 65536, m)
    asc.data_copy(a, xg, n)
    asc.exp(c, c, m)
    asc.set_flag(asc.HardEvent.V_MTE2, 0)
    asc.wait_flag(asc.HardEvent.V_MTE2, 0)
    asc.data_copy(b, xg[n:], n)


def test_wait_issued_before_its_set_orders_pipes():
    n, m = 256, 255 * 64  # short copies, a long exp (255 fp32 repeats)
    r = wait_before_set[1](np.ones(2 * n, F32), n, m, trace=True)
    cp1, ex, cp2 = events(r)
    assert ex["end"] > cp1["end"]
    assert cp2["start"] >= ex["end"]


@asc.kernel
def v_barrier(x: asc.GlobalAddress, n: int, barrier: asc.ConstExpr[int]):
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECCALC, 0, n)
    b = asc.LocalTensor(x.dtype, asc.TPosition.VECCALC, 65536, n)
    asc.exp(b, a, n)
    if barrier:
        asc.pipe_barrier(asc.PipeID.PIPE_V)
    asc.exp(a, b, n)


@pytest.mark.parametrize("barrier", [0, 1])
def test_pipe_barrier_drains_the_pipe(barrier):
    """Back to back, the second exp starts when the first's occupancy ends (pipelined); after
    pipe_barrier(PIPE_V) it starts only once the first has completed (latency included)."""
    t = CFG.vector.transcendental
    occ = 100 * t.cycles_per_repeat_f32
    e1, e2 = events(v_barrier[1](np.zeros(8, F32), count_for(100, F32), barrier, trace=True))
    assert e1["occ"] == e2["occ"] == occ
    assert e2["start"] == e1["start"] + occ + (t.latency_f32 if barrier else 0)


@asc.kernel
def tque_add(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, n_tiles: int,
             tile: asc.ConstExpr[int], nbuf: asc.ConstExpr[int]):
    xg = asc.GlobalTensor()
    yg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    off = asc.get_block_idx() * n_tiles * tile
    xg.set_global_buffer(x + off, n_tiles * tile)
    yg.set_global_buffer(y + off, n_tiles * tile)
    zg.set_global_buffer(z + off, n_tiles * tile)
    pipe = asc.TPipe()
    qx = asc.TQue(asc.TPosition.VECIN, nbuf)
    qy = asc.TQue(asc.TPosition.VECIN, nbuf)
    qz = asc.TQue(asc.TPosition.VECOUT, nbuf)
    pipe.init_buffer(qx, nbuf, tile * x.dtype.sizeof())
    pipe.init_buffer(qy, nbuf, tile * x.dtype.sizeof())
    pipe.init_buffer(qz, nbuf, tile * x.dtype.sizeof())
    for i in range(n_tiles):
        a = qx.alloc_tensor(x.dtype)
        asc.data_copy(a, xg[i * tile:], tile)
        qx.enque(a)
        b = qy.alloc_tensor(x.dtype)
        asc.data_copy(b, yg[i * tile:], tile)
        qy.enque(b)
        a = qx.deque(x.dtype)
        b = qy.deque(x.dtype)
        c = qz.alloc_tensor(x.dtype)
        asc.add(c, a, b, tile)
        qz.enque(c)
        qx.free_tensor(a)
        qy.free_tensor(b)
        c = qz.deque(x.dtype)
        asc.data_copy(zg[i * tile:], c, tile)
        qz.free_tensor(c)


def run_tque_add(n_tiles, tile, nbuf, blocks=1, dtype=F32, **kw):
    rng = np.random.default_rng(0)
    x = rng.random(blocks * n_tiles * tile).astype(dtype)
    y = rng.random(x.size).astype(dtype)
    z = np.zeros_like(x)
    r = tque_add[blocks](x, y, z, n_tiles, tile, nbuf, **kw)
    np.testing.assert_array_equal(z, x + y)
    return r


@pytest.mark.parametrize("nbuf", [1, 2])
def test_enque_deque_order_pipes(nbuf):
    n_tiles = 6
    evs = events(run_tque_add(n_tiles, 2048, nbuf, trace=True))
    mte2, v, mte3 = on_pipe(evs, "MTE2"), on_pipe(evs, "V"), on_pipe(evs, "MTE3")
    assert (len(mte2), len(v), len(mte3)) == (2 * n_tiles, n_tiles, n_tiles)
    for i in range(n_tiles):
        # deque (V) after enque (MTE2) of both inputs; deque (MTE3) after enque (V)
        assert v[i]["start"] >= max(mte2[2 * i]["end"], mte2[2 * i + 1]["end"])
        assert mte3[i]["start"] >= v[i]["end"]
        # alloc_tensor waits for free_tensor of the same buffer: tile i + nbuf reuses it
        if i + nbuf < n_tiles:
            assert mte2[2 * (i + nbuf)]["start"] >= v[i]["end"]
            assert v[i + nbuf]["start"] >= mte3[i]["end"]
    if nbuf == 2:  # double buffering really overlaps copy-in of tile i+1 with compute of tile i
        assert any(mte2[2 * (i + 1)]["start"] < v[i]["end"] for i in range(n_tiles - 1))


# ============================================================================ 4. double buffering
@asc.kernel
def stages_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, n_tiles: int,
                  tile: asc.ConstExpr[int], nbuf: asc.ConstExpr[int],
                  serial: asc.ConstExpr[int], exps: asc.ConstExpr[int]):
    """Per tile three stages: copy-in (MTE2), ``exps`` exps (V), copy-out (MTE3); ``serial``: a
    PIPE_ALL barrier ends every tile, so the stages of different tiles never overlap."""
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, n_tiles * tile)
    zg.set_global_buffer(z, n_tiles * tile)
    pipe = asc.TPipe()
    qi = asc.TQue(asc.TPosition.VECIN, nbuf)
    qo = asc.TQue(asc.TPosition.VECOUT, nbuf)
    pipe.init_buffer(qi, nbuf, tile * x.dtype.sizeof())
    pipe.init_buffer(qo, nbuf, tile * x.dtype.sizeof())
    for i in range(n_tiles):
        a = qi.alloc_tensor(x.dtype)
        asc.data_copy(a, xg[i * tile:], tile)
        qi.enque(a)
        a = qi.deque(x.dtype)
        c = qo.alloc_tensor(x.dtype)
        asc.exp(c, a, tile)
        for r in range(exps - 1):
            asc.exp(c, c, tile)
        qo.enque(c)
        qi.free_tensor(a)
        c = qo.deque(x.dtype)
        asc.data_copy(zg[i * tile:], c, tile)
        qo.free_tensor(c)
        if serial:
            asc.pipe_barrier(asc.PipeID.PIPE_ALL)


def _stage_cycles(report, exps: int) -> dict:
    """The model's own cost of each stage of one tile, from the serial run's trace: per pipe,
    from its first event's start to its last event's end in tile 0."""
    evs = events(report)
    out = {}
    for name, count in (("MTE2", 1), ("V", exps), ("MTE3", 1)):
        tile0 = on_pipe(evs, name)[:count]
        out[name] = tile0[-1]["end"] - tile0[0]["start"]
    return out


@pytest.mark.parametrize("tile, exps", [(8192, 2), (4096, 8)])
def test_double_buffering_speedup_is_stage_sum_over_longest_stage(tile, exps):
    """Double buffering speeds a kernel up by (sum S of its serialised stages) / (its longest
    stage M): serially each of the n tiles costs S; pipelined, M per tile plus the other stages
    once to fill and drain the pipeline, (n - 1) M + S, whose ratio tends to S / M. The stage
    costs are the model's own (the serial run's trace), so the check holds whatever the cost
    table says. Copy-out (MTE3) is the longest stage in the first case, the exps (V) in the
    second."""
    n = 32
    x = np.random.default_rng(0).random(n * tile).astype(F32) - 0.5
    z1, z2 = np.zeros_like(x), np.zeros_like(x)
    serial = stages_kernel[1](x, z1, n, tile, 1, 1, exps, trace=True)
    piped = stages_kernel[1](x, z2, n, tile, 2, 0, exps)
    np.testing.assert_array_equal(z1, z2)
    stages = _stage_cycles(serial, exps)
    total, longest = sum(stages.values()), max(stages.values())
    assert serial.kernel_cycles == pytest.approx(n * total, rel=0.05)
    hand = n * total / ((n - 1) * longest + total)
    assert serial.kernel_cycles / piped.kernel_cycles == pytest.approx(hand, rel=0.10)
    assert serial.kernel_cycles / piped.kernel_cycles == pytest.approx(total / longest,
                                                                        rel=0.10)
    assert total / longest > 1.5


def _load_sample(name):
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).resolve().parents[2] / "samples" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"_sample_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_serialising_manual_flags_have_no_overlap():
    """samples/add_flags.py waits right after every set_flag: nothing overlaps. Its 16 iterations
    each do: 2 GM->UB copies of B bytes, one add (x_local and y_local 2*B apart, a multiple of
    512 B: 2 c/rep), one UB->GM copy, so T = 16 * (2*Dx + Vt + D3) plus flag/scalar cycles."""
    mod = _load_sample("add_flags")
    iters = mod.TILE_NUM * mod.BUFFER_NUM
    tile = 2048
    block_length = iters * tile
    B = tile * 4
    x = np.random.default_rng(1).random(block_length).astype(F32)
    y = np.ones_like(x)
    z = np.zeros_like(x)
    r = mod.add_flags_kernel[1](x, y, z, block_length, trace=True)
    np.testing.assert_array_equal(z, x + y)
    Dx = dma_cycles(GM_UB, B)
    Vt = (B // REPEAT) * BANK_CONFLICT_CPR + CFG.vector.simple.latency_f32
    D3 = dma_cycles(UB_GM, B)
    assert r.kernel_cycles == pytest.approx(iters * (2 * Dx + Vt + D3), rel=0.01)
    evs = sorted(events(r), key=lambda e: e["start"])
    assert len(evs) == 4 * iters
    for a, b in zip(evs, evs[1:]):
        assert b["start"] >= a["end"], (a, b)          # strictly one thing at a time
    busy = sum(e["occ"] + e["lat"] for e in evs)
    assert 0 <= r.kernel_cycles - busy <= 4 * iters + 16   # only flag and scalar-issue cycles in between


# ============================================================================ 5. multi-core
CHUNK = 192 * 1024  # one whole-UB copy
TOTAL_CHUNKS = 48


@asc.kernel
def stream_kernel(x: asc.GlobalAddress, chunks: int, chunk: asc.ConstExpr[int]):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x + asc.get_block_idx() * chunks * chunk, chunks * chunk)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, chunk)
    for k in range(chunks):
        asc.data_copy(a, xg[k * chunk:], chunk)


def test_bandwidth_bound_kernel_scales_then_flattens():
    """The multi-core bandwidth knee. 48 copies of 192 KB split over c cores (48/c each), all
    cores in step. Per-core rate = min(one core's measured rate r, 888/c) B/c: 888/c >= r for
    c up to ~19 (time halves with the cores), below it from then on, where the byte term is
    48 * 192 KB / 888 whatever c is: the time flattens (only the per-copy latency count still
    shrinks)."""
    elems = CHUNK // 4
    x = np.zeros(TOTAL_CHUNKS * elems, F32)
    saturate = next(c for c in range(1, 49) if HBM / c < alone_rate(GM_UB, CHUNK))
    assert 16 < saturate <= 24
    times = {}
    for c in (1, 2, 4, 8, 16, 24, 48):
        per_core = TOTAL_CHUNKS // c
        r = stream_kernel[c](x, per_core, elems)
        expected = per_core * dma_cycles(GM_UB, CHUNK, c)
        assert r.kernel_cycles == pytest.approx(expected, rel=0.01), c
        assert r.bytes_moved == {"GM->UB": TOTAL_CHUNKS * CHUNK}
        assert r.cores_used == c and r.bottleneck == "MTE2"
        assert r.gm_bandwidth_gbps <= r.peak_gm_bandwidth_gbps * 1.001
        times[c] = r.kernel_cycles
    assert times[1] > times[2] > times[4] > times[8] > times[16] >= times[24] >= times[48]
    for c in (2, 4, 8, 16):                                        # one core's rate: linear
        assert times[c] / times[c // 2] == pytest.approx(0.5, rel=0.02)
    assert times[48] / times[24] > 0.85                            # 2x the cores, ~same time
    byte_term = TOTAL_CHUNKS * CHUNK / HBM
    for c in (24, 48):
        lat = (TOTAL_CHUNKS // c) * GM_UB.latency_cycles
        assert times[c] - lat == pytest.approx(byte_term, rel=0.01)


def test_blocks_beyond_core_count_run_in_waves():
    """Wave quantisation: blocks beyond the 48 cores run in later waves on the same cores. Two
    full waves take twice one wave; 49 blocks take a full wave plus a lone block (which then
    has HBM to itself: width-bound, not share-bound)."""
    elems = 4096
    x = np.zeros(96 * elems, F32)
    one = stream_kernel[48](x, 1, elems)
    two = stream_kernel[96](x, 1, elems)       # same per-block work, two waves on 48 cores
    odd = stream_kernel[49](x, 1, elems)       # core 0 runs blocks 0 and 48
    assert (one.waves, two.waves, odd.waves) == (1, 2, 2)
    assert one.launch_cycles == two.launch_cycles == odd.launch_cycles > 0
    wave = dma_cycles(GM_UB, elems * 4, 48)
    assert one.kernel_cycles == pytest.approx(wave, rel=0.02)
    assert two.kernel_cycles == pytest.approx(2 * one.kernel_cycles, rel=0.01)
    lone = dma_cycles(GM_UB, elems * 4, 1)
    assert odd.critical_core == 0
    assert odd.kernel_cycles == pytest.approx(one.kernel_cycles + lone, rel=0.02)
    assert odd.core_cycles[1] == pytest.approx(one.kernel_cycles, rel=0.01)


# ============================================================================ 7. system cycle
@asc.kernel
def clock_kernel(x: asc.GlobalAddress, out: asc.GlobalAddress, n: int):
    og = asc.GlobalTensor()
    og.set_global_buffer(out, 8)
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    t0 = asc.get_system_cycle()
    asc.data_copy(a, xg, n)
    t1 = asc.get_system_cycle()
    asc.set_flag(asc.HardEvent.MTE2_S, 0)
    asc.wait_flag(asc.HardEvent.MTE2_S, 0)
    t2 = asc.get_system_cycle()
    asc.exp(a, a, n)
    t3 = asc.get_system_cycle()
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    t4 = asc.get_system_cycle()
    k = 0
    for i in range(100):
        k += i
    t5 = asc.get_system_cycle()
    og.set_value(0, t0)
    og.set_value(1, t1)
    og.set_value(2, t2)
    og.set_value(3, t3)
    og.set_value(4, t4)
    og.set_value(5, t5)
    og.set_value(6, k)


def test_get_system_cycle_is_the_scalar_clock():
    n = 4096
    out = np.zeros(8, np.int64)
    r = clock_kernel[1](np.ones(n, F32), out, n, trace=True)
    t0, t1, t2, t3, t4, t5, k = out[:7].tolist()
    assert k == sum(range(100))
    cp, ex = events(r)
    assert list(out[:6]) == sorted(out[:6])                    # monotonic
    assert 1 <= t1 - t0 <= 4                  # dispatching the copy costs the scalar ~1 cycle,
    assert t1 < cp["end"]                     # and it does not wait for the DMA
    assert t2 == cp["end"]                    # wait_flag(MTE2_S) holds the scalar unit
    assert t3 - t2 <= 4 and t3 < ex["end"]    # the vector op is dispatched, not waited for
    assert t4 == ex["end"]                    # PIPE_ALL barrier drains every pipe
    assert t5 - t4 >= 100 * CFG.scalar.alu    # scalar loop work costs ALU cycles
    assert r.kernel_cycles >= t5
