"""Machine configurations: values match shared/reference/aicore_params.md (numbers written by
hand from the reference, not read from the code), lookup by name, copying and frozen-ness."""
from __future__ import annotations

import dataclasses
import pickle

import pytest

from ascendc_py.simulator import config as C
from ascendc_py.simulator.config import (ASCEND910B1, ASCEND910B2, ASCEND910B3, ASCEND910B4,
                                         PLATFORMS, ChipConfig, current_platform, get_platform,
                                         replace, set_platform, using_platform)

ALL = [ASCEND910B1, ASCEND910B2, ASCEND910B3, ASCEND910B4]


@pytest.fixture(autouse=True)
def _restore_platform():
    before = current_platform()
    yield
    set_platform(before)


# ---------------------------------------------------------------- reference values §1.1

@pytest.mark.parametrize("cfg, aic, aiv, mhz", [
    (ASCEND910B1, 25, 50, 1850),
    (ASCEND910B2, 24, 48, 1800),
    (ASCEND910B3, 20, 40, 1800),
    (ASCEND910B4, 20, 40, 1500),
])
def test_cores_and_clock(cfg, aic, aiv, mhz):
    assert (cfg.aic_cores, cfg.aiv_cores, cfg.clock_mhz) == (aic, aiv, mhz)
    assert cfg.aiv_per_aic == 2
    assert cfg.aiv_cores == 2 * cfg.aic_cores


# ---------------------------------------------------------------- §1.2 buffers

@pytest.mark.parametrize("cfg", ALL, ids=lambda c: c.name)
def test_buffers(cfg):
    m = cfg.memories
    assert (m.ub.size, m.ub.alignment) == (196608, 32)
    assert (m.l1.size, m.l1.alignment) == (524288, 32)
    assert (m.l0a.size, m.l0a.alignment) == (65536, 512)
    assert (m.l0b.size, m.l0b.alignment) == (65536, 512)
    assert (m.l0c.size, m.l0c.alignment) == (131072, 64)
    assert (m.bias_table.size, m.bias_table.alignment) == (1024, 64)
    assert (m.fixpipe_buffer.size, m.fixpipe_buffer.alignment) == (7168, 64)
    assert (m.icache_aic, m.icache_aiv, m.dcache) == (32768, 16384, 32768)
    assert m.get("ub") is m.ub and m.get("L0C") is m.l0c and m.get("bt") is m.bias_table


def test_ub_capacity_is_full_192k():
    assert ASCEND910B2.ub_capacity() == 192 * 1024
    assert ASCEND910B2.memories.ub_reserved_bytes == 256 + 8192  # documented, not subtracted


def test_ub_banks():
    b = ASCEND910B2.memories.ub_banks
    assert (b.bank_groups, b.banks_per_group, b.bank_bytes, b.row_bytes) == (16, 3, 4096, 32)
    assert b.bank_groups * b.banks_per_group * b.bank_bytes == 196608
    # bank(A) = 16 * floor(A / 64K) + ((A >> 5) & 15)
    assert [b.bank_group(a) for a in (0, 31, 32, 511, 512, 65536 + 64)] == [0, 0, 1, 15, 0, 2]
    assert b.bank(65536 + 64) == 18 and b.bank(2 * 65536 + 32 * 15) == 47


def test_positions_map_to_memories():
    cfg = ASCEND910B2
    assert cfg.memory_for_position("VECIN").name == "UB"
    assert cfg.memory_for_position("VECCALC").name == "UB"
    assert cfg.memory_for_position("A1").name == "L1"
    assert cfg.memory_for_position("B2").name == "L0B"
    assert cfg.memory_for_position("CO1").name == "L0C"
    assert cfg.memory_for_position("GM") is None
    with pytest.raises(KeyError):
        cfg.memory_for_position("NOWHERE")


def test_align_up():
    ub = ASCEND910B2.memories.ub
    assert [ub.align_up(n) for n in (0, 1, 32, 33, 1000)] == [0, 32, 32, 64, 1024]


# ---------------------------------------------------------------- §1.5 DMA and GM

@pytest.mark.parametrize("src, dst, width, pipe", [
    ("GM", "UB", 128, "MTE2"), ("GM", "L1", 256, "MTE2"), ("GM", "L0A", 128, "MTE2"),
    ("GM", "L0B", 128, "MTE2"), ("L1", "L0A", 256, "MTE1"), ("L1", "L0B", 128, "MTE1"),
    ("L1", "BT", 64, "MTE1"), ("L1", "FB", 64, "FIX"), ("L1", "GM", 128, "MTE3"),
    ("L0C", "GM", 128, "FIX"), ("L0C", "L1", 256, "FIX"), ("UB", "UB", 128, "V"),
    ("UB", "GM", 64, "MTE3"),  # ini ub_to_l2_rate
])
def test_dma_path_widths(src, dst, width, pipe):
    p = ASCEND910B2.dma.path(src, dst)
    assert (p.bytes_per_cycle, p.pipe) == (width, pipe)
    assert ASCEND910B2.dma.path(src.lower(), dst.lower()) is p


def test_dma_latencies():
    d = ASCEND910B2.dma
    # CA-model GM latencies are kept for reference; the charged fixed costs are msKPP fits
    assert (d.gm_read_latency, d.gm_write_latency) == (347, 203)
    assert d.path("GM", "UB").latency_cycles == 216     # ≈120 ns (reference: 105-120 ns)
    assert d.path("GM", "L1").latency_cycles == 153
    assert d.path("UB", "GM").latency_cycles == 146     # ≈80 ns
    assert d.path("L0C", "GM").latency_cycles == 82     # msKPP ≈85
    assert d.path("L1", "L0A").latency_cycles == 3      # msKPP ≈4 for one fractal
    assert d.path("UB", "UB").latency_cycles == 0
    assert d.path("L1", "GM").latency_cycles == 203     # not measured: CA write latency
    assert (d.max_outstanding_reads, d.max_outstanding_writes) == (64, 48)
    with pytest.raises(KeyError, match="no DMA path UB->L1"):
        d.path("UB", "L1")


def test_dma_measured_curves():
    d = ASCEND910B2.dma
    gm_ub = d.path("GM", "UB")
    # knots: (0, fixed cost), then msKPP's points converted at its 1800 MHz
    assert gm_ub.knots()[0] == (0.0, 216.0)
    assert gm_ub.knots()[1][1] == pytest.approx(1024 / (7.29 * 2**30 / 1.8e9))
    assert gm_ub.plateau_bytes_per_cycle == pytest.approx(78.14 * 2**30 / 1.8e9)
    assert d.path("L1", "GM").plateau_bytes_per_cycle == 128   # unmeasured: the width
    assert d.path("L1", "GM").knots() == ((0.0, 203.0),)
    with pytest.raises(ValueError, match="increasing"):
        replace(gm_ub, measured=((2, 10.0), (1, 5.0)))
    with pytest.raises(ValueError, match="plateau"):
        replace(gm_ub, plateau_gib_per_s=0.0)


def test_gm_bandwidth_and_l2():
    g = ASCEND910B2.gm
    assert g.hbm_chip_bytes_per_cycle == 888  # DDR_PHY 37 x 24
    assert ASCEND910B2.hbm_gbps == pytest.approx(1598.4)
    assert g.hbm_core_bytes_per_cycle == 32
    assert (g.l2_chip_bytes_per_cycle, g.l2_core_read_bytes_per_cycle,
            g.l2_core_write_bytes_per_cycle) == (2550, 110, 86)
    assert (g.l2_read_latency, g.l2_write_latency) == (236, 96)
    assert (g.l2_line_bytes, g.l2_size) == (512, 192 * 2**20)
    assert g.hbm_capacity == 64 * 2**30
    # same ≈1.6 TB/s HBM on B1 and B3, in their own cycles
    assert ASCEND910B1.hbm_gbps == pytest.approx(1598.4, rel=1e-3)
    assert ASCEND910B3.hbm_gbps == pytest.approx(1598.4, rel=1e-3)
    # B4: 32 GB, 96 MB L2, 0.8-0.96 TB/s
    assert ASCEND910B4.gm.hbm_capacity == 32 * 2**30
    assert ASCEND910B4.gm.l2_size == 96 * 2**20
    assert 800 <= ASCEND910B4.hbm_gbps <= 960


# ---------------------------------------------------------------- §1.3 vector

def test_vector_geometry():
    v = ASCEND910B2.vector
    assert (v.repeat_bytes, v.block_bytes, v.blocks_per_repeat, v.max_repeat_times) == \
        (256, 32, 8, 255)
    assert v.peak_f16_elements_per_cycle == 128
    assert (v.ub_read_bytes_per_cycle, v.ub_write_bytes_per_cycle) == (512, 512)
    assert v.elements_per_repeat(2) == 128 and v.elements_per_repeat(4) == 64
    assert v.binary_measured_cycles_per_repeat == 2
    # fp16 vector peak 11.06 TOPS = 48 AIV x 1.8 GHz x 128
    assert ASCEND910B2.peak_vector_tops_f16 == pytest.approx(11.06, abs=0.01)


@pytest.mark.parametrize("cls, dtype, rate, latency", [
    ("simple", "float16", 1, 6 + 15), ("simple", "float32", 1, 6 + 15),
    ("simple", "int32", 1, 4 + 15),
    ("mul", "float32", 1, 7 + 15), ("mul", "int16", 1, 5 + 15),   # VMULS int 1 (msKPP)
    ("transcendental", "float16", 4, 12 + 15), ("transcendental", "float32", 2, 12 + 15),
    ("ln", "float16", 4, 14 + 15), ("ln", "float32", 2, 14 + 15),
    ("div_sqrt", "float16", 4, 13 + 15), ("div_sqrt", "float32", 2, 13 + 15),
    ("div", "float16", 4, 13 + 15), ("div", "float32", 4, 13 + 15),
    ("recip", "float32", 1, 5 + 15), ("convert", "float16", 1, 4 + 15),
    ("reduce", "float16", 7, 23 + 15), ("reduce", "float32", 3, 20 + 15),
    ("reduce_max", "float16", 7, 9 + 15), ("reduce_max", "float32", 7, 8 + 15),
    ("block_reduce", "float16", 7, 15 + 15), ("block_reduce", "float32", 1, 12 + 15),
    ("pair_reduce", "float16", 1, 15 + 15), ("pair_reduce", "float32", 1, 12 + 15),
    ("sort", "float16", 2, 18 + 15), ("sort", "float32", 4, 18 + 15),
    ("copy", "float16", 1, 12 + 15), ("madd", "float32", 2, 7 + 15),
])
def test_vector_costs(cls, dtype, rate, latency):
    c = ASCEND910B2.vector.for_class(cls)
    assert c.cycles_per_repeat(dtype) == rate
    assert c.latency(dtype) == latency


def test_vector_cost_dtype_spellings():
    import numpy as np
    c = ASCEND910B2.vector.transcendental
    assert c.cycles_per_repeat(np.float16) == c.cycles_per_repeat(np.dtype("float16")) == 4
    assert c.cycles_per_repeat("half") == c.cycles_per_repeat("bfloat16") == 4
    assert c.cycles_per_repeat("float") == 2

    class FakeEnum:
        value = "div_sqrt"
    assert ASCEND910B2.vector.for_class(FakeEnum) is ASCEND910B2.vector.div_sqrt
    with pytest.raises(KeyError, match="no vector cost class"):
        ASCEND910B2.vector.for_class("teleport")
    with pytest.raises(KeyError):
        ASCEND910B2.vector.for_class("repeat_bytes")  # a field, but not a cost class


def test_transcendental_costs_more_than_add():
    v = ASCEND910B2.vector
    for dt in ("float16", "float32"):
        assert v.transcendental.cycles_per_repeat(dt) > v.simple.cycles_per_repeat(dt)


# ---------------------------------------------------------------- §1.4 cube, §1.6 scalar/pipes

def test_cube():
    cube = ASCEND910B2.cube
    assert cube.macs_per_cycle("float16") == 4096
    assert cube.macs_per_cycle("bfloat16") == 4096
    assert cube.macs_per_cycle("int8") == 8192
    assert (cube.k0("float16"), cube.k0("int8"), cube.k0("int4"), cube.k0("float32")) == \
        (16, 32, 64, 4)
    assert cube.mmad_latency == 20
    # ceil(32/16) * ceil(40/16) * ceil(100/16) steps + the per-mmad overhead + the latency:
    # 2*3*7 + 2 + 20; the smallest mmad occupies the minimum (5 cycles, msKPP)
    assert (cube.mmad_issue_cycles, cube.mmad_min_cycles) == (2, 5)
    assert cube.mmad_cycles(32, 40, 100, "float16") == 64
    assert cube.mmad_occupancy(16, 16, 16, "float16") == 5
    assert cube.mmad_occupancy(0, 16, 16, "float16") == 0
    # peaks: B1 379, B2 354, B4 246 TFLOPS fp16
    assert ASCEND910B1.peak_cube_tflops_f16 == pytest.approx(379, abs=1)
    assert ASCEND910B2.peak_cube_tflops_f16 == pytest.approx(354, abs=1)
    assert ASCEND910B4.peak_cube_tflops_f16 == pytest.approx(246, abs=1)
    with pytest.raises(KeyError):
        cube.k0("int32")


def test_scalar_and_pipes():
    s, p = ASCEND910B2.scalar, ASCEND910B2.pipes
    assert (s.alu, s.load, s.store, s.movemask) == (2, 6, 4, 8)
    assert p.queue_depth == 32
    assert p.event_ids == 8
    assert p.cross_core_flag_ids == 11
    assert set(p.names) == {"S", "V", "M", "MTE1", "MTE2", "MTE3", "FIX"}
    assert ASCEND910B2.launch.head_ns == 1200 and ASCEND910B2.launch.tail_ns == 500


def test_time_conversions():
    assert ASCEND910B2.cycles_to_us(1800) == pytest.approx(1.0)
    assert ASCEND910B4.us_to_cycles(2.0) == pytest.approx(3000)
    assert ASCEND910B2.bytes_per_cycle_to_gbps(128) == pytest.approx(230.4)


# ---------------------------------------------------------------- registry

@pytest.mark.parametrize("spelling", ["Ascend910B2", "910B2", "910b2", "ascend910b2",
                                      "ASCEND910B2", " Ascend 910B2 ", "ascend-910b2",
                                      "ascend_910B2"])
def test_get_platform_spellings(spelling):
    assert get_platform(spelling) is ASCEND910B2


def test_get_platform_other_forms():
    import enum

    class Platform(enum.Enum):  # pyasc-style enum
        Ascend910B1 = "Ascend910B1"
        Ascend910B3 = 3

    assert get_platform(Platform.Ascend910B1) is ASCEND910B1
    assert get_platform(Platform.Ascend910B3) is ASCEND910B3  # by .name
    custom = replace(ASCEND910B2, name="mine")
    assert get_platform(custom) is custom
    assert get_platform(None) is current_platform()
    with pytest.raises(ValueError, match="unknown platform 'Ascend910C'.*Ascend910B2"):
        get_platform("Ascend910C")


def test_registry_contents():
    assert set(PLATFORMS) == {"Ascend910B1", "Ascend910B2", "Ascend910B3", "Ascend910B4"}
    assert all(PLATFORMS[name].name == name for name in PLATFORMS)
    assert C.DEFAULT_PLATFORM is ASCEND910B2


def test_set_and_current_platform():
    assert current_platform() is ASCEND910B2
    assert set_platform("910B4") is ASCEND910B4
    assert current_platform() is ASCEND910B4
    set_platform("Model", "Ascend910B1")  # pyasc's (backend, platform) spelling
    assert current_platform() is ASCEND910B1
    with using_platform("910b3") as cfg:
        assert cfg is ASCEND910B3 and current_platform() is ASCEND910B3
    assert current_platform() is ASCEND910B1
    with pytest.raises(ValueError):
        set_platform("nope")
    assert current_platform() is ASCEND910B1


# ---------------------------------------------------------------- copying, frozen-ness

def test_replace_top_level():
    cfg = replace(ASCEND910B2, clock_mhz=1500)
    assert cfg.clock_mhz == 1500 and ASCEND910B2.clock_mhz == 1800
    assert cfg.memories is ASCEND910B2.memories
    assert cfg != ASCEND910B2


def test_replace_nested():
    cfg = ASCEND910B2.replace(name="bigUB", memories__ub__size=256 * 1024,
                              dma__gm_to_ub__bytes_per_cycle=64, vector__simple__latency_f16=30)
    assert cfg.name == "bigUB" and cfg.ub_capacity() == 262144
    assert cfg.dma.path("GM", "UB").bytes_per_cycle == 64
    assert cfg.vector.simple.latency_f16 == 30
    assert cfg.memories.l1 == ASCEND910B2.memories.l1
    assert ASCEND910B2.ub_capacity() == 196608 and ASCEND910B2.dma.gm_to_ub.bytes_per_cycle == 128
    with pytest.raises(TypeError):
        ASCEND910B2.replace(memories__ub__sise=1)


def test_validation_on_copy():
    with pytest.raises(ValueError, match="clock_mhz"):
        replace(ASCEND910B2, clock_mhz=0)
    with pytest.raises(ValueError, match="alignment"):
        ASCEND910B2.replace(memories__ub__alignment=48)


def test_frozen_and_hashable():
    with pytest.raises(dataclasses.FrozenInstanceError):
        ASCEND910B2.clock_mhz = 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        ASCEND910B2.memories.ub.size = 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        ASCEND910B2.dma.gm_to_ub.bytes_per_cycle = 1
    with pytest.raises(TypeError):
        ChipConfig(name="x")  # everything else is keyword-only and required
    # hashable and equal by value: usable in a JIT specialisation key
    assert hash(ASCEND910B2) == hash(replace(ASCEND910B2))
    assert {ASCEND910B2: 1}[replace(ASCEND910B2)] == 1
    assert pickle.loads(pickle.dumps(ASCEND910B2)) == ASCEND910B2


def test_fingerprint_is_stable_and_sensitive():
    fp = ASCEND910B2.fingerprint()
    assert fp == replace(ASCEND910B2).fingerprint()
    assert fp != replace(ASCEND910B2, clock_mhz=1500).fingerprint()
    assert len({c.fingerprint() for c in ALL}) == 4


def test_describe():
    text = ASCEND910B2.describe()
    assert text.count("\n") > 10
    for needle in ("Ascend910B2", "24 AIC", "48 AIV", "1800 MHz", "UB 192 KB", "GM -> UB",
                   "46.6 B/c", "+216", "transcendental", "4096 fp16 MAC/cycle", "queue depth 32"):
        assert needle in text, needle
