"""Machine configurations of the simulated Ascend AI Core (one frozen dataclass per chip).

Every number comes from ``shared/reference/aicore_params.md`` (the "reference"); the comment next
to it names the reference row, its source key (``[C4]``, ``[C5]``, ``[D1]`` …) and the confidence
the reference gives (H = official doc or Huawei code, M = Huawei tool data or consistent quotes of
CANN's ini files, L = single source or derived, *est.* = estimate). Numbers the reference does not
give are not invented: the field says "not found" and holds the documented fallback.

Units: sizes in bytes, rates in bytes (or elements) per cycle of the core clock, latencies in
cycles, clock in MHz. Bandwidths are stored per cycle because that is how the sources state them
(CANN ini rates, msKPP path widths); ``replace(cfg, clock_mhz=...)`` therefore keeps bytes per cycle
fixed. To model a faster core with the same HBM (in GB/s), scale ``gm.hbm_chip_bytes_per_cycle``
too (``describe()`` prints both units).

Usage::

    from ascendc_py.simulator.config import ASCEND910B2, get_platform, set_platform, replace
    cfg = get_platform("910b4")                     # "Ascend910B4", case-insensitive
    fast = replace(ASCEND910B2, name="my910B2@1.5GHz", clock_mhz=1500)   # copy, change a field
    big_ub = ASCEND910B2.replace(memories__ub__size=256 * 1024)           # nested fields too
    set_platform(big_ub)                            # process-wide default for launches
    print(current_platform().describe())

Chips: Ascend910B1, Ascend910B2 (default), Ascend910B3, Ascend910B4 (arch 2201, split AIC/AIV).
Ascend310P3 is not provided: the reference gives its buffer sizes but no clock, DMA widths or
vector rates for arch 200x, and those would have to be invented.
"""
from __future__ import annotations

import contextlib
import dataclasses
import hashlib
from dataclasses import dataclass, field, replace
from typing import Any, Iterator

from .dma_costs import DmaCosts, DmaPath

__all__ = [
    "MemorySpec", "UbBanks", "Memories", "DmaPath", "DmaCosts", "GmCosts", "VecOpCost",
    "VectorCosts", "CubeCosts", "ScalarCosts", "PipeSpec", "LaunchCosts", "ChipConfig",
    "ASCEND910B1", "ASCEND910B2", "ASCEND910B3", "ASCEND910B4", "DEFAULT_PLATFORM", "PLATFORMS",
    "get_platform", "set_platform", "current_platform", "using_platform", "replace",
]

KB = 1024
MB = 1024 * 1024
_VEC_PIPE_LATENCY = 15  # Huawei CA model: vector latency = op delay + 15 [C5] H(model)


def _is_pow2(n: int) -> bool:
    return n > 0 and (n & (n - 1)) == 0


def _dtype_name(dtype: Any) -> str:
    """A dtype's plain name: accepts str, numpy/DSL dtypes (``.name``) and torch dtypes."""
    name = dtype if isinstance(dtype, str) else getattr(dtype, "name", None)
    if not isinstance(name, str):
        name = str(dtype)
    name = name.lower().removeprefix("torch.")
    return {"half": "float16", "fp16": "float16", "float": "float32", "float_": "float32",
            "fp32": "float32", "bf16": "bfloat16"}.get(name, name)


# --------------------------------------------------------------------------- memories

@dataclass(frozen=True, kw_only=True)
class MemorySpec:
    """One on-chip buffer of a core: its size and the alignment its addresses must respect."""

    name: str       #: short name, as in Ascend C docs: "UB", "L1", "L0A" …
    size: int       #: capacity in bytes (per core)
    alignment: int  #: required address/length granule in bytes

    def __post_init__(self) -> None:
        if self.size <= 0:
            raise ValueError(f"{self.name}: size must be positive, got {self.size}")
        if not _is_pow2(self.alignment):
            raise ValueError(f"{self.name}: alignment must be a power of two, got {self.alignment}")

    def align_up(self, nbytes: int) -> int:
        """``nbytes`` rounded up to this memory's alignment."""
        a = self.alignment
        return (nbytes + a - 1) // a * a


@dataclass(frozen=True, kw_only=True)
class UbBanks:
    """Unified Buffer banking (reference §1.2 "UB banking", [D3], H).

    48 banks x 4 KB (128 rows x 32 B), grouped as 16 bank groups x 3 banks. The vector unit reads
    one 32 B row per bank group per cycle (and writes one), so the 8 blocks of one repeat cost
    8 cycles when they all fall in one group and 1 cycle when they are spread over 8 groups.
    """

    bank_groups: int = 16       # [D3] H
    banks_per_group: int = 3    # [D3] H
    bank_bytes: int = 4 * KB    # [D3] H
    row_bytes: int = 32         # [D3] H

    def bank_group(self, addr: int) -> int:
        """Bank group of a UB byte address: ``(addr >> 5) & 15`` ([D3] formula fit, H)."""
        return (addr // self.row_bytes) % self.bank_groups

    def bank(self, addr: int) -> int:
        """Bank of a UB byte address: ``16 * (addr // 64K) + ((addr >> 5) & 15)`` ([D3], H)."""
        span = self.bank_groups * self.bank_bytes  # 64 KB: one bank of every group
        return self.bank_groups * (addr // span) + self.bank_group(addr)


@dataclass(frozen=True, kw_only=True)
class Memories:
    """The per-core buffers (reference §1.2)."""

    ub: MemorySpec
    l1: MemorySpec
    l0a: MemorySpec
    l0b: MemorySpec
    l0c: MemorySpec
    bias_table: MemorySpec
    fixpipe_buffer: MemorySpec
    ub_banks: UbBanks = field(default_factory=UbBanks)
    #: UB bytes the Ascend C guide says are reserved (256 B + 8 KB, ascendc_api.md §1 [DK]).
    #: Informational only: see ``ChipConfig.ub_capacity``.
    ub_reserved_bytes: int = 256 + 8 * KB
    icache_aic: int = 32 * KB   # [D8] H
    icache_aiv: int = 16 * KB   # [D8] H
    dcache: int = 32 * KB       # scalar data cache, [C7] H

    def get(self, name: str) -> MemorySpec:
        """The buffer called ``name`` ("UB", "L1", "L0A", "L0B", "L0C", "BT", "FB"), any case."""
        key = name.upper()
        for spec in self.all():
            if spec.name == key:
                return spec
        raise KeyError(f"unknown memory {name!r}; known: {[m.name for m in self.all()]}")

    def all(self) -> tuple[MemorySpec, ...]:
        """All buffers, in the order UB, L1, L0A, L0B, L0C, BT, FB."""
        return (self.ub, self.l1, self.l0a, self.l0b, self.l0c, self.bias_table,
                self.fixpipe_buffer)


#: TPosition name -> memory name on arch 2201 (ascendc_api.md §1, [DK] 通用说明和约束, H).
#: GM and CO2 (which is GM on A2/A3) map to None: they are not on-chip buffers.
POSITION_MEMORY: dict[str, str | None] = {
    "GM": None, "CO2": None,
    "VECIN": "UB", "VECOUT": "UB", "VECCALC": "UB",
    "A1": "L1", "B1": "L1", "C1": "L1",
    "A2": "L0A", "B2": "L0B", "CO1": "L0C", "C2": "BT", "C2PIPE2GM": "FB",
}


# --------------------------------------------------------------------------- DMA
# DmaPath and DmaCosts (the size-dependent cost of one copy per path, calibrated to msKPP's
# measurements, and where the sources disagree) live in dma_costs.py.


@dataclass(frozen=True, kw_only=True)
class GmCosts:
    """HBM and L2 (global memory) capacity, bandwidth and latency (reference §1.5)."""

    hbm_capacity: int                  #: bytes
    hbm_chip_bytes_per_cycle: float    #: whole-chip HBM bandwidth
    #: ini ``ddr_rate`` = 32 B/cycle/core ([C12] M). Times 24 cores it is ≈1.4 TB/s, so it reads as
    #: each core's share when all cores stream rather than a single-core limit.
    hbm_core_bytes_per_cycle: float = 32
    l2_size: int = 192 * MB                 # L2 192 MB (B1-B3) [C1][C9][C12] H
    l2_line_bytes: int = 512                # [C6][D2] H
    l2_chip_bytes_per_cycle: float = 2550   # L2_RO = 2550, unit inferred B/cycle/chip [C10] M
    l2_core_read_bytes_per_cycle: float = 110   # ini l2_read_rate [C12] M
    l2_core_write_bytes_per_cycle: float = 86   # ini l2_write_rate [C12] M
    l2_read_latency: int = 236    # [C10] M
    l2_write_latency: int = 96    # [C10] M
    l2_hit_latency: int = 50      # pypto simulator: hit 50 [C6] M
    l2_miss_extra_latency: int = 150  # pypto simulator: miss +150 [C6] M
    l2_hit_bandwidth_ratio: float = 4.5  # L2 hit vs miss BW, theoretical 4.5x (measured >=2x) [C4] M


# --------------------------------------------------------------------------- vector

@dataclass(frozen=True, kw_only=True)
class VecOpCost:
    """Issue occupancy (cycles per 256 B repeat) and latency of one class of vector instruction.

    Rates and latencies are given per dtype family: 16-bit floats (float16, bfloat16), 32-bit
    floats, and integers. Latency = the CA model's per-op delay + 15 cycles of pipeline.
    """

    cycles_per_repeat_f16: float
    cycles_per_repeat_f32: float
    cycles_per_repeat_int: float
    latency_f16: int
    latency_f32: int
    latency_int: int

    def _family(self, dtype: Any) -> str:
        name = _dtype_name(dtype)
        if name in ("float16", "bfloat16"):
            return "f16"
        if name in ("float32", "float64"):
            return "f32"
        return "int"

    def cycles_per_repeat(self, dtype: Any) -> float:
        """Occupancy of one repeat for ``dtype`` (str, numpy, torch or DSL dtype)."""
        return getattr(self, "cycles_per_repeat_" + self._family(dtype))

    def latency(self, dtype: Any) -> int:
        """Cycles from the last repeat's issue to the result being visible, for ``dtype``."""
        return getattr(self, "latency_" + self._family(dtype))


def _vop(rate: float, delay: int, *, rate_f32: float | None = None,
         rate_int: float | None = None, delay_f32: int | None = None,
         delay_int: int | None = None) -> VecOpCost:
    """Build a VecOpCost from the reference's "c/rep, delay" notation (fp16 figures first)."""
    return VecOpCost(
        cycles_per_repeat_f16=rate,
        cycles_per_repeat_f32=rate if rate_f32 is None else rate_f32,
        cycles_per_repeat_int=rate if rate_int is None else rate_int,
        latency_f16=delay + _VEC_PIPE_LATENCY,
        latency_f32=(delay if delay_f32 is None else delay_f32) + _VEC_PIPE_LATENCY,
        latency_int=(delay if delay_int is None else delay_int) + _VEC_PIPE_LATENCY)


@dataclass(frozen=True, kw_only=True)
class VectorCosts:
    """Vector unit (AIV) geometry and per-class costs (reference §1.3).

    Cycles per repeat follow msKPP's tables measured on a 910B1 ([C4] resource910b.cpp, one AIV:
    the slope of ``totalCycles`` over repeats 8..16 of each instruction); where Huawei's CA table
    ([C5] def.h/pipe.cpp, a model) says otherwise, the measurement wins and the comment says so.
    Latencies (not in msKPP's tables) come from the CA table. The class names match
    ``compiler.ops.CostClass`` values, and ``for_class`` looks one up by that name. ``make
    fidelity`` prints every figure beside its reference.

    Two-input ops: msKPP measures ~2 cycles per repeat ([C4], M) where the CA table says 1. The
    reference attributes the gap to read-read UB bank-group conflicts, so ``simple`` keeps the ALU
    rate (1) for use with the bank rule (``Memories.ub_banks``: cycles per repeat = max(ALU rate,
    worst bank-group load)); ``binary_measured_cycles_per_repeat`` holds the measured rate for a
    model that does not simulate banks. The timing model must say which one it uses.
    """

    repeat_bytes: int = 256        # 8 DataBlocks x 32 B per operand [D4] H
    block_bytes: int = 32          # [D4] H
    blocks_per_repeat: int = 8     # [D4] H
    max_repeat_times: int = 255    # [D4] H
    peak_f16_elements_per_cycle: int = 128  # vec_calc_size=128 [C2][C12] M
    ub_read_bytes_per_cycle: int = 512      # one 32 B row per bank group per cycle [D3] H
    ub_write_bytes_per_cycle: int = 512     # [D3] H
    pipe_latency: int = _VEC_PIPE_LATENCY   # [C5] H(model)
    binary_measured_cycles_per_repeat: float = 2.0  # VADD/VSUB/VMUL/VMAX/VSEL/VCMP ≈128 B/c [C4] M
    # a 1-, 2- or 3-repeat instruction still occupies the pipe ~3 cycles: msKPP's totalCycles
    # for 1, 2, 3 repeats of VABS fp32 are 3.07, 3.05, 3.03, then 1 per repeat [C4] M
    min_instruction_cycles: int = 3

    # ADD/SUB/MAX/MIN/ABS/ADDS/MAXS: 1 c/rep, delay 6 (fp) / 4 (int) [C5] H(model)
    simple: VecOpCost = _vop(1, 6, delay_int=4)
    # MUL/MULS: 1 c/rep, delay 7 (int 5) [C5] H(model). The CA table's int16 rate of 2 is not
    # what msKPP measured: VMULS int16/int32 1 c/rep, VMUL int 2 like every two-input op (bank
    # rule) [C4] M
    mul: VecOpCost = _vop(1, 7, delay_int=5)
    # EXP: fp16 4 / fp32 2 c/rep, delay 12 [C5] H(model) (≈32 elements/cycle, [C4][C5] M)
    transcendental: VecOpCost = _vop(4, 12, rate_f32=2)
    # LN: 4/2 c/rep, delay 14 [C5] H(model); the registry may class ln as transcendental
    ln: VecOpCost = _vop(4, 14, rate_f32=2)
    # SQRT: 4/2 c/rep, delay 13 [C5] H(model); msKPP VSQRT fp16 4.0, fp32 2.0 [C4] M
    div_sqrt: VecOpCost = _vop(4, 13, rate_f32=2)
    # DIV: msKPP VDIV fp16 4.0, fp32 4.0 c/rep [C4] M (the CA table's fp32 2 is not measured);
    # delay 13 [C5] H(model)
    div: VecOpCost = _vop(4, 13)
    # RSQRT, REC: 1 c/rep, delay 5 [C5] H(model)
    recip: VecOpCost = _vop(1, 5)
    # VCONV: 1 c/rep, delay 4 [C5] H(model)
    convert: VecOpCost = _vop(1, 4)
    # VECTORDUP ≈255 B/c = 1 c/rep (measured [C4] M); delay not found: uses the simple-op delay
    dup: VecOpCost = _vop(1, 6, delay_int=4)
    # CADD (whole reduce sum): msKPP VCADD fp16 7, fp32 3 c/rep [C4] M (the CA table's 7 for
    # both is not measured); delay 23 (fp16) / 20 (fp32) [C5] H(model)
    reduce: VecOpCost = _vop(7, 23, rate_f32=3, delay_f32=20, delay_int=20)
    # CMAX/CMIN: 7 c/rep, delay 9 / 8 [C5] H(model)
    reduce_max: VecOpCost = _vop(7, 9, delay_f32=8, delay_int=8)
    # CGADD/CGMAX/CGMIN (block reduce): msKPP fp16 7, fp32 1 c/rep [C4] M (the CA table says 1
    # for both); delay 15 / 12 [C5] H(model)
    block_reduce: VecOpCost = _vop(7, 15, rate_f32=1, rate_int=1, delay_f32=12, delay_int=12)
    # CPADD (pair reduce): msKPP VCPADD fp16 1.0, fp32 1.0 c/rep [C4] M; delay as CGADD's
    pair_reduce: VecOpCost = _vop(1, 15, delay_f32=12, delay_int=12)
    # BITSORT/MRGSORT4: 2 (fp16) / 4 (fp32) c/rep, delay 18 [C5] H(model)
    sort: VecOpCost = _vop(2, 18, rate_f32=4)
    # MOV UB->UB: 1 c/256 B, + 12 [C5] H(model)
    copy: VecOpCost = _vop(1, 12)
    # axpy is VAXPY: msKPP fp16 and fp32 2.0 c/rep [C4] M (VMADD/VMLA, 6 c/rep, are other
    # instructions); delay not found: uses MUL's 7
    madd: VecOpCost = _vop(2, 7, delay_int=5)
    # VMADD/VMLA (fused_mul_add, fused_mul_add_relu, mul_add_dst): msKPP ~42.6 B/c of one input,
    # 6 c/rep [C4] M; delay not found: uses MUL's 7
    fma: VecOpCost = _vop(6, 7, delay_int=5)
    # VGATHER (gather; scatter, unmeasured, uses it): msKPP 10.6 B/c for uint16, 21 B/c for
    # uint32 [C4] M, i.e. ~5.3 elements per cycle: 24 c per 256-B repeat of 16-bit elements,
    # 12 of 32-bit ones. The f16/f32 columns are the 16-/32-bit widths (ops/gather.py passes the
    # width as the family); delay not found: the simple-op delay
    gather: VecOpCost = _vop(24, 6, rate_f32=12, rate_int=12)
    # VGATHERB: msKPP ≈122 B/c [C4] M, 2 c/rep; delay not found: the simple-op delay
    gatherb: VecOpCost = _vop(2, 6)
    # VREDUCEV2 (gather_mask): msKPP 18.3 B/c [C4] M, 14 c per 256-B repeat at every width;
    # delay not found: the simple-op delay
    gather_mask: VecOpCost = _vop(14, 6, rate_f32=14, rate_int=14)

    def for_class(self, cost_class: Any) -> VecOpCost:
        """The cost of a class given by name or by an enum whose ``.value`` is the name."""
        name = getattr(cost_class, "value", cost_class)
        value = getattr(self, str(name).lower(), None) if isinstance(name, str) else None
        if not isinstance(value, VecOpCost):
            known = [f.name for f in dataclasses.fields(self)
                     if isinstance(getattr(self, f.name), VecOpCost)]
            raise KeyError(f"no vector cost class {cost_class!r}; known: {known}")
        return value

    def elements_per_repeat(self, dtype_bytes: int) -> int:
        """Elements one repeat processes for an element size in bytes (128 fp16, 64 fp32)."""
        return self.repeat_bytes // dtype_bytes


# --------------------------------------------------------------------------- cube, scalar, pipes

@dataclass(frozen=True, kw_only=True)
class CubeCosts:
    """Cube unit (AIC) rates (reference §1.4).

    An MMAD occupies the cube for max(fractal steps + ``mmad_issue_cycles``,
    ``mmad_min_cycles``) cycles, fractal steps = ceil(M/m0) * ceil(N/n0) * ceil(K/k0) (Huawei's
    CA formula, [C5] H as a model), and its result is in L0C ``mmad_latency`` cycles later; the
    MACs per cycle of a dtype are ``m0 * n0 * k0`` at most: 4096 for fp16 (16x16x16, [P1] H).
    The per-instruction overhead and minimum are fitted to msKPP's back-to-back MMAD throughput
    measured on a 910B1 ([C4] ``MMAD_FP16_FP16_FP32_1_core_910b1``, m=32, k=16, n=16..1024):
    cycles per MMAD = 2*m*n*k / measured ops per cycle is the CA formula + 1.8 to 3.1 cycles
    for n >= 32 (2 on the median) and 4.86 cycles for the smallest, 2-step MMAD; ``make
    fidelity`` prints each beside the model.
    """

    m0: int = 16  # fractal rows [C8][C12] H
    n0: int = 16  # fractal columns [C8][C12] H
    k0_f16: int = 16   # fp16/bf16 -> fp32 [C5] H(model)
    k0_int8: int = 32  # 8192 int8 MAC/cycle [P1][C12] H
    k0_int4: int = 64  # [C5] H(model)
    k0_f32: int = 4    # [C5] H(model)
    mmad_latency: int = 20       # [C5] H(model)
    mmad_issue_cycles: int = 2   # per-MMAD overhead, fitted to msKPP's MMAD table [C4] M
    mmad_min_cycles: int = 5     # a 2-step MMAD (m=32,n=16,k=16) measured 4.86 cycles [C4] M
    fractal_bytes: int = 512     # 16x16 fp16 [C8][C12] H
    load2d_latency: int = 25     # [C5] H(model)
    load3d_latency: int = 43     # [C5] H(model)

    def k0(self, dtype: Any) -> int:
        """The K step of one cube cycle for input ``dtype``."""
        name = _dtype_name(dtype)
        table = {"float16": self.k0_f16, "bfloat16": self.k0_f16, "int8": self.k0_int8,
                 "uint8": self.k0_int8, "int4": self.k0_int4, "float32": self.k0_f32}
        if name not in table:
            raise KeyError(f"the cube unit has no rate for dtype {name!r}; known: {sorted(table)}")
        return table[name]

    def macs_per_cycle(self, dtype: Any) -> int:
        """Peak multiply-accumulates per cycle for input ``dtype`` (4096 for float16)."""
        return self.m0 * self.n0 * self.k0(dtype)

    def mmad_occupancy(self, m: int, n: int, k: int, dtype: Any) -> int:
        """Cycles one MMAD of an (m x k) by (k x n) product occupies the cube (PIPE_M)."""
        ceil = lambda a, b: -(-a // b)  # noqa: E731
        if m <= 0 or n <= 0 or k <= 0:
            return 0
        steps = ceil(m, self.m0) * ceil(n, self.n0) * ceil(k, self.k0(dtype))
        return max(steps + self.mmad_issue_cycles, self.mmad_min_cycles)

    def mmad_cycles(self, m: int, n: int, k: int, dtype: Any) -> int:
        """Cycles of one MMAD of an (m x k) by (k x n) product, including the latency."""
        return self.mmad_occupancy(m, n, k, dtype) + self.mmad_latency


@dataclass(frozen=True, kw_only=True)
class ScalarCosts:
    """Scalar unit latencies (reference §1.6 "Scalar op latency (CA)", [C5], H as a model)."""

    alu: int = 2
    load: int = 6
    store: int = 4
    movemask: int = 8


@dataclass(frozen=True, kw_only=True)
class PipeSpec:
    """Pipes and synchronisation resources (reference §1.6)."""

    names: tuple[str, ...] = ("S", "V", "M", "MTE1", "MTE2", "MTE3", "FIX")  # [D5][D10][C5] H
    queue_depth: int = 32          # outstanding instrs per pipe (CA model) [C5] M
    event_ids: int = 8             # 0-7 per pipe pair on A2/A3 [D6] H
    reserved_event_ids: tuple[int, ...] = (6, 7)  # "do not insert 6 and 7 by hand" [DK]/[D6] H
    cross_core_flag_ids: int = 11  # flagId 0-10 [D7] H
    #: CrossCoreSetFlag counter limit: the reference (§1.6, [D7]) says "counter ≤16"; the current
    #: arch-2201 guide says one flagId may be set at most 15 times.
    cross_core_counter_max: int = 15
    #: Cost of set_flag/wait_flag: not found (CA model 0, msKPP 1 cycle [C5][C4], L); msKPP's 1.
    flag_cycles: int = 1


@dataclass(frozen=True, kw_only=True)
class LaunchCosts:
    """Device-side kernel head/tail overhead (reference §1.7, [C7], H), added once to every
    launch's device time (the report's "launch overhead" row).

    Mix kernels (an AIC and its AIVs) pay ``mix_extra_ns`` more: they start two kinds of core,
    each running its own binary with its own scalar unit and code ([D1][D9]), so the HW and SW
    initialisation of [C7] happens for a second core type before the launch's cross-core work
    can begin (*est.*, L: [C7] gives the breakdown for one core type only; no published figure
    for mix kernels was found).
    """

    head_ns: float = 150 + 50 + 1000  # scheduler ≈150 ns + HW init ≈50 ns + SW init ≈1 µs
    tail_ns: float = 500              # completion report ≈500 ns
    mix_extra_ns: float = 50 + 1000   # a second HW init + SW init (mix kernels) *est.* L

    def total_ns(self, mix: bool = False) -> float:
        """Nanoseconds a launch costs besides its blocks' work."""
        return self.head_ns + self.tail_ns + (self.mix_extra_ns if mix else 0.0)


# --------------------------------------------------------------------------- the chip

@dataclass(frozen=True, kw_only=True)
class ChipConfig:
    """One simulated chip. Frozen and hashable: it is part of the JIT specialisation key.

    Copy and change fields with ``dataclasses.replace`` (re-exported here as ``replace``)::

        cfg = replace(ASCEND910B2, clock_mhz=1500)

    or with ``cfg.replace(...)``, which also reaches nested fields with ``__``::

        cfg = ASCEND910B2.replace(name="B2-bigUB", memories__ub__size=256 * 1024)

    Give a changed config a new ``name`` so reports do not confuse it with the original.
    """

    name: str                  #: "Ascend910B2"
    npu_arch: str = "2201"     #: __NPU_ARCH__ (A2/A3), ascendc_api.md §1 [DK] H
    aic_cores: int             #: cube cores
    aiv_cores: int             #: vector cores
    aiv_per_aic: int = 2       #: AIC:AIV = 1:2 (MIX_AIC_1_2) [D9][C12] H
    clock_mhz: float           #: core clock (ini cube_freq)
    memories: Memories
    dma: DmaCosts = field(default_factory=DmaCosts)
    gm: GmCosts
    vector: VectorCosts = field(default_factory=VectorCosts)
    cube: CubeCosts = field(default_factory=CubeCosts)
    scalar: ScalarCosts = field(default_factory=ScalarCosts)
    pipes: PipeSpec = field(default_factory=PipeSpec)
    launch: LaunchCosts = field(default_factory=LaunchCosts)
    notes: str = ""            #: free text on the chip's sources and confidence

    def __post_init__(self) -> None:
        for f in ("aic_cores", "aiv_cores", "aiv_per_aic"):
            if getattr(self, f) <= 0:
                raise ValueError(f"{self.name}: {f} must be positive, got {getattr(self, f)}")
        if self.clock_mhz <= 0:
            raise ValueError(f"{self.name}: clock_mhz must be positive, got {self.clock_mhz}")

    def __hash__(self) -> int:
        """Hashed once per object (every launch looks its cost table up by the config; hashing
        the nested frozen dataclasses anew cost ~6 us a launch). Equal configs hash equal."""
        cached = self.__dict__.get("_hash")
        if cached is None:
            cached = hash(tuple(getattr(self, f.name) for f in dataclasses.fields(self)))
            object.__setattr__(self, "_hash", cached)
        return cached

    def __getstate__(self) -> dict:
        """Pickled without the cached hash (string hashes differ between processes)."""
        state = dict(self.__dict__)
        state.pop("_hash", None)
        return state

    # ---- derived quantities
    def ub_capacity(self) -> int:
        """UB bytes a kernel may allocate with ``TPipe.init_buffer`` (per AIV core).

        This is the full configured UB size (196608 B = 192 KB on 910B). The Ascend C guide
        quoted in ascendc_api.md §1 lists 256 B + 8 KB as reserved (``memories.ub_reserved_bytes``),
        but the current arch-2201 spec page and the parameter reference give 192 KB without a
        reservation, so we do not subtract it; set ``memories__ub__size`` to model a smaller UB.
        """
        return self.memories.ub.size

    def memory_for_position(self, position: Any) -> MemorySpec | None:
        """The buffer a ``TPosition`` (name or enum) lives in; None for GM and CO2."""
        name = position if isinstance(position, str) else getattr(position, "name", str(position))
        key = name.upper().rsplit(".", 1)[-1]
        if key not in POSITION_MEMORY:
            raise KeyError(f"unknown TPosition {position!r}; known: {sorted(POSITION_MEMORY)}")
        mem = POSITION_MEMORY[key]
        return None if mem is None else self.memories.get(mem)

    def cycles_to_us(self, cycles: float) -> float:
        """Microseconds taken by ``cycles`` at this chip's clock."""
        return cycles / self.clock_mhz

    def us_to_cycles(self, us: float) -> float:
        """Cycles elapsed in ``us`` microseconds at this chip's clock."""
        return us * self.clock_mhz

    def bytes_per_cycle_to_gbps(self, rate: float) -> float:
        """A rate in bytes/cycle as GB/s (1e9 B/s) at this chip's clock."""
        return rate * self.clock_mhz / 1e3

    @property
    def hbm_gbps(self) -> float:
        """Whole-chip HBM bandwidth in GB/s."""
        return self.bytes_per_cycle_to_gbps(self.gm.hbm_chip_bytes_per_cycle)

    @property
    def peak_cube_tflops_f16(self) -> float:
        """Chip peak float16 cube TFLOP/s (2 FLOP per MAC, all AIC cores)."""
        return 2 * self.cube.macs_per_cycle("float16") * self.aic_cores * self.clock_mhz / 1e6

    @property
    def peak_vector_tops_f16(self) -> float:
        """Chip peak float16 vector TOP/s (one op per element, all AIV cores)."""
        return self.vector.peak_f16_elements_per_cycle * self.aiv_cores * self.clock_mhz / 1e6

    def fingerprint(self) -> str:
        """A stable hex digest of every field (for disk cache keys; ``hash()`` is per-process)."""
        return hashlib.sha256(repr(self).encode()).hexdigest()[:32]

    def replace(self, **changes: Any) -> "ChipConfig":
        """A copy with ``changes`` applied; ``a__b__c=v`` sets nested field ``a.b.c``."""
        direct: dict[str, Any] = {}
        nested: dict[str, dict[str, Any]] = {}
        for key, value in changes.items():
            head, _, rest = key.partition("__")
            if rest:
                nested.setdefault(head, {})[rest] = value
            else:
                direct[key] = value
        for head, sub in nested.items():
            obj = direct.get(head, getattr(self, head))
            direct[head] = _replace_nested(obj, sub)
        return replace(self, **direct)

    def describe(self) -> str:
        """A readable multi-line summary of the configuration."""
        m, d, g, v = self.memories, self.dma, self.gm, self.vector
        kb = lambda n: f"{n / KB:g} KB"  # noqa: E731
        lines = [
            f"{self.name} (arch {self.npu_arch}): {self.aic_cores} AIC (cube) + {self.aiv_cores} "
            f"AIV (vector) cores, {self.clock_mhz:g} MHz",
            "  buffers/core: " + ", ".join(f"{s.name} {kb(s.size)}/{s.alignment} B"
                                           for s in m.all()) + " (size/alignment)",
            f"  UB capacity for kernels: {self.ub_capacity()} B",
            f"  HBM: {g.hbm_capacity / 2**30:g} GiB, {g.hbm_chip_bytes_per_cycle:g} B/cycle "
            f"= {self.hbm_gbps:.0f} GB/s chip, {g.hbm_core_bytes_per_cycle:g} B/cycle/core",
            f"  L2: {g.l2_size / MB:g} MB, {g.l2_chip_bytes_per_cycle:g} B/cycle chip "
            f"({self.bytes_per_cycle_to_gbps(g.l2_chip_bytes_per_cycle):.0f} GB/s), "
            f"core read/write {g.l2_core_read_bytes_per_cycle:g}/"
            f"{g.l2_core_write_bytes_per_cycle:g} B/cycle",
            "  DMA paths (fixed cycles of a lone copy, one core's plateau B/cycle, pipe; "
            "sizes between: msKPP's measured curve):",
        ]
        lines += [f"    {p.src:>3} -> {p.dst:<3} +{p.latency_cycles:<4d} "
                  f"{p.plateau_bytes_per_cycle:>6.1f} B/c  {p.pipe}"
                  + ("" if p.measured else "  (not measured: theoretical width)")
                  for p in d.paths()]
        lines.append(f"  vector: {v.repeat_bytes} B/repeat, peak {v.peak_f16_elements_per_cycle} "
                     f"fp16 elem/cycle/core ({self.peak_vector_tops_f16:.1f} TOPS chip); "
                     "cycles/repeat f16/f32/int, latency f16/f32/int:")
        for f in dataclasses.fields(v):
            c = getattr(v, f.name)
            if isinstance(c, VecOpCost):
                lines.append(f"    {f.name:<14} {c.cycles_per_repeat_f16:g}/{c.cycles_per_repeat_f32:g}/"
                             f"{c.cycles_per_repeat_int:g}  {c.latency_f16}/{c.latency_f32}/"
                             f"{c.latency_int}")
        lines += [
            f"  cube: {self.cube.macs_per_cycle('float16')} fp16 MAC/cycle/core, mmad latency "
            f"{self.cube.mmad_latency}, peak {self.peak_cube_tflops_f16:.0f} TFLOPS fp16",
            f"  scalar: ALU {self.scalar.alu}, LD {self.scalar.load}, ST {self.scalar.store} cycles;"
            f" pipe queue depth {self.pipes.queue_depth}, {self.pipes.event_ids} event ids per "
            "pipe pair",
        ]
        if self.notes:
            lines.append(f"  notes: {self.notes}")
        return "\n".join(lines)


def _replace_nested(obj: Any, changes: dict[str, Any]) -> Any:
    direct: dict[str, Any] = {}
    nested: dict[str, dict[str, Any]] = {}
    for key, value in changes.items():
        head, _, rest = key.partition("__")
        if rest:
            nested.setdefault(head, {})[rest] = value
        else:
            direct[key] = value
    for head, sub in nested.items():
        direct[head] = _replace_nested(direct.get(head, getattr(obj, head)), sub)
    return replace(obj, **direct)


# --------------------------------------------------------------------------- the 910B family

def _a2_memories() -> Memories:
    """The arch-2201 per-core buffers (reference §1.2; same on B1-B4)."""
    return Memories(
        ub=MemorySpec(name="UB", size=192 * KB, alignment=32),     # [C1][C12][D1] H
        l1=MemorySpec(name="L1", size=512 * KB, alignment=32),     # [C1][D1] H
        l0a=MemorySpec(name="L0A", size=64 * KB, alignment=512),   # one fractal [C1][D1] H
        l0b=MemorySpec(name="L0B", size=64 * KB, alignment=512),   # [C1][D1] H
        l0c=MemorySpec(name="L0C", size=128 * KB, alignment=64),   # [C1][D1] H
        bias_table=MemorySpec(name="BT", size=1 * KB, alignment=64),  # [C1][C12] H
        # FB 7 KB (ini fb0..3 = 2/1/2/2 KB); alignment 64 B per [D1] (128 B per [D2]) [C1][C12] H
        fixpipe_buffer=MemorySpec(name="FB", size=7 * KB, alignment=64),
    )


# HBM bandwidth (reference §1.5, *est.*): DDR_PHY = 37 B/cycle/core x 24 cores x 1.8 GHz
# ≈ 1.6 TB/s for B1-B3 ([C10][C2][C12] M/L); stored per cycle of each chip's own clock.
_HBM_910B_GBPS = 37 * 24 * 1.8     # 1598.4 GB/s
_HBM_910B4_GBPS = (800 + 960) / 2  # B4 ≈0.8-0.96 TB/s (*est.*, L): the midpoint


def _per_cycle(gbps: float, clock_mhz: float) -> float:
    return round(gbps * 1e3 / clock_mhz, 1)


ASCEND910B1 = ChipConfig(
    name="Ascend910B1",
    aic_cores=25, aiv_cores=50,  # mskpp arch_info 25/50 (one ini quote gives 24) [C4][C12] M
    clock_mhz=1850,              # cube_freq 1850 [C12] M
    memories=_a2_memories(),
    gm=GmCosts(hbm_capacity=64 * 2**30,  # 64 GB [C12] M
               hbm_chip_bytes_per_cycle=_per_cycle(_HBM_910B_GBPS, 1850)),  # ≈1.6 TB/s est. M/L
    notes="cores M (mskpp 25, one ini 24); clock M; HBM bandwidth est. (≈1.6 TB/s)",
)

ASCEND910B2 = ChipConfig(
    name="Ascend910B2",
    aic_cores=24, aiv_cores=48,  # [C11][C12] H
    clock_mhz=1800,              # cube_freq 1800; mskpp converts with 1800 [C12][C4] M
    memories=_a2_memories(),
    gm=GmCosts(hbm_capacity=64 * 2**30,  # 64 GB [C12] M
               hbm_chip_bytes_per_cycle=37 * 24),  # DDR_PHY 37 B/c/core x 24 = 888 [C10] M/L
    notes="default platform; cores H; clock M; HBM bandwidth est. (DDR_PHY 37 x 24 B/cycle)",
)

ASCEND910B3 = ChipConfig(
    name="Ascend910B3",
    aic_cores=20, aiv_cores=40,  # [C1][C4] H
    clock_mhz=1800,              # not found; HWConf uses 1.8 GHz [C12] L
    memories=_a2_memories(),
    gm=GmCosts(hbm_capacity=64 * 2**30,  # 64 GB [C12] M
               hbm_chip_bytes_per_cycle=_per_cycle(_HBM_910B_GBPS, 1800)),  # ≈1.6 TB/s est. M/L
    notes="cores H; clock not found (1.8 GHz assumed, L); HBM bandwidth est.",
)

ASCEND910B4 = ChipConfig(
    name="Ascend910B4",
    aic_cores=20, aiv_cores=40,  # [C12] M
    clock_mhz=1500,              # cube_freq 1500 [C12] M
    memories=_a2_memories(),
    gm=GmCosts(hbm_capacity=32 * 2**30,  # 32 GB [C12] M
               hbm_chip_bytes_per_cycle=_per_cycle(_HBM_910B4_GBPS, 1500),  # est. L
               l2_size=96 * MB),  # B4 reported 96 MB (ops-nn comment: physical 168 MB) [C9][C12]
    notes="cores M; clock M; HBM ≈0.88 TB/s est. (L); L2 96 MB; L2 bandwidth assumed as B1-B3",
)

#: Every known chip by canonical name.
PLATFORMS: dict[str, ChipConfig] = {c.name: c for c in
                                    (ASCEND910B1, ASCEND910B2, ASCEND910B3, ASCEND910B4)}
DEFAULT_PLATFORM: ChipConfig = ASCEND910B2

_current: ChipConfig = DEFAULT_PLATFORM


def _normalise(name: str) -> str:
    key = "".join(ch for ch in name.lower() if ch.isalnum())
    return key.removeprefix("ascend")


def get_platform(name_or_config: Any = None) -> ChipConfig:
    """Resolve a platform: a ChipConfig (returned as is), a name such as "Ascend910B2",
    "910B2" or "ascend910b2" (case, spaces, '-' and '_' ignored), an enum whose ``.name`` or
    ``.value`` is such a name (e.g. pyasc's ``Platform.Ascend910B2``), or None for the current
    process-wide default. Raises ValueError naming the known platforms otherwise."""
    if name_or_config is None:
        return _current
    if isinstance(name_or_config, ChipConfig):
        return name_or_config
    candidates = [name_or_config] if isinstance(name_or_config, str) else [
        getattr(name_or_config, "value", None), getattr(name_or_config, "name", None)]
    for cand in candidates:
        if isinstance(cand, str):
            key = _normalise(cand)
            for cfg in PLATFORMS.values():
                if _normalise(cfg.name) == key:
                    return cfg
    raise ValueError(f"unknown platform {name_or_config!r}; known: {', '.join(PLATFORMS)} "
                     "(or pass a ChipConfig)")


def set_platform(platform_or_backend: Any, platform: Any = None) -> ChipConfig:
    """Set the process-wide default platform used by launches that pass no ``platform=``.

    ``set_platform("910B4")`` or ``set_platform(cfg)``; pyasc's two-argument spelling
    ``set_platform(Backend.Model, Platform.Ascend910B1)`` is accepted too (the backend is ignored:
    every launch here runs on the simulator). Returns the new default.
    """
    global _current
    _current = get_platform(platform_or_backend if platform is None else platform)
    return _current


def current_platform() -> ChipConfig:
    """The process-wide default platform (Ascend910B2 unless ``set_platform`` changed it)."""
    return _current


@contextlib.contextmanager
def using_platform(name_or_config: Any) -> Iterator[ChipConfig]:
    """Context manager: make a platform the default inside a ``with`` block, then restore."""
    global _current
    previous = _current
    _current = get_platform(name_or_config)
    try:
        yield _current
    finally:
        _current = previous
