"""The cost table the native timing model reads: built from a ChipConfig at launch.

Compiled kernels do not embed any hardware number: they read this float64 table through ctx
(``abi.COSTS``), so one compiled kernel runs on every platform and a user's modified config
takes effect without recompiling. Layout (indices below) is shared with
``compiler/codegen/timing.py``.
"""
from __future__ import annotations

import functools

import numpy as np

from ..compiler.ops import REGISTRY, CostClass
from ..dsl.types import DataType, Memory, PipeID

CLASSES = list(CostClass)
FAMILIES = ("f16", "f32", "int")
CLASS_BASE = 0                       # [class][family] -> (cycles per repeat, latency)
PATHS = (("GM", "UB"), ("UB", "GM"), ("UB", "UB"), ("GM", "L1"), ("L1", "L0A"), ("L1", "L0B"),
         ("L0C", "GM"), ("L1", "BT"), ("L1", "FB"), ("L1", "GM"), ("L0C", "L1"), ("GM", "L0A"),
         ("GM", "L0B"))
PATH_BASE = CLASS_BASE + len(CLASSES) * len(FAMILIES) * 2   # [path] -> (B/cycle, latency, pipe)
PATH_FIELDS = 4                      # theoretical width (B/cycle), fixed cost, pipe, GM (0 no,
                                     # 1 read, 2 write)
MISC = PATH_BASE + len(PATHS) * PATH_FIELDS
# MISC + 0 is unused (it held a static per-launch share of HBM bandwidth; cores now share HBM by
# what they move at the time, simulator/contention.py)
BANK_RULE = MISC + 1         # 1: two-input vector ops pay UB bank-group read conflicts
FLAG_CYCLES = MISC + 2
ISSUE_CYCLES = MISC + 3      # scalar cycles to dispatch one instruction to a pipe queue
ALU = MISC + 4
LOAD = MISC + 5
STORE = MISC + 6
CUBE_LATENCY = MISC + 8      # cycles from an mmad's issue to its result in L0C
CUBE_M0 = MISC + 9           # fractal rows and columns (16)
CUBE_N0 = MISC + 10
CUBE_K0_F16 = MISC + 11      # K per cube cycle: float16/bfloat16 inputs
CUBE_K0_F32 = MISC + 12      #   float32 inputs
CUBE_K0_INT8 = MISC + 13     #   int8 inputs
CUBE_RATE = MISC + 14        # share of the cube this sub-core gets (1; 0.5 for each AIV of a mix
                             # AI Core whose two vector cores send matmul requests to one AIC)
L2_READ = MISC + 15          # L2 -> core read bytes per cycle per core (every GM read passes L2)
L2_SIZE = MISC + 16          # L2 capacity in bytes
VEC_MIN = MISC + 17          # fewest cycles a vector instruction occupies PIPE_V (1-3 repeats)
CUBE_ISSUE = MISC + 18       # cycles an mmad occupies PIPE_M beyond its fractal steps
CUBE_MIN = MISC + 19         # fewest cycles an mmad occupies PIPE_M
LOAD3D_LATENCY = MISC + 20   # cycles from a load_data 3D (img2col) to its data in L0A/L0B
# The DMA cost of one copy (simulator/dma_costs.py): the burst rule, then per path its lone-copy
# curve as KNOTS_MAX knots of (bytes, cycles, cycles per byte up to the next knot), the last
# real knot's slope being the plateau's; unused knots sit at NO_KNOT bytes (never reached).
DMA_BASE = MISC + 24
BURST_BYTES = DMA_BASE + 0   # bytes per request unit of a burst (512)
BURST_CYCLES = DMA_BASE + 1  # cycles per extra unit a strided copy issues
CURVE_BASE = DMA_BASE + 2    # [path][knot] -> (bytes, cycles, slope)
KNOTS_MAX = 12
KNOT_FIELDS = 3
CURVE_FIELDS = KNOTS_MAX * KNOT_FIELDS
NO_KNOT = 1e300
TABLE_SIZE = CURVE_BASE + len(PATHS) * CURVE_FIELDS

NUM_OPS = len(REGISTRY)
OP_INDEX = {name: i for i, name in enumerate(REGISTRY)}
COUNTER_SLOTS = 2 * NUM_OPS + len(PATHS)   # [op] instructions, [op] elements, [path] bytes
COUNT_BASE, ELEM_BASE, BYTES_BASE = 0, NUM_OPS, 2 * NUM_OPS

_MEMORY_NAMES = {Memory.GM: "GM", Memory.UB: "UB", Memory.L1: "L1", Memory.L0A: "L0A",
                 Memory.L0B: "L0B", Memory.L0C: "L0C", Memory.BT: "BT", Memory.FB: "FB"}


def family(dtype: DataType) -> int:
    """Cost family of a dtype: 0 = 16-bit float, 1 = 32-bit float, 2 = integer."""
    if dtype.is_float:
        return 0 if dtype.bits <= 16 else 1
    return 2


def copy_path_exists(src: Memory, dst: Memory) -> bool:
    """Whether the AI Core has a DMA path from ``src`` to ``dst`` (one the cost table prices)."""
    return (_MEMORY_NAMES[src], _MEMORY_NAMES[dst]) in PATHS


def memory_name(mem: Memory) -> str:
    """A memory's name in the DMA path table ("GM", "UB", "L1" …)."""
    return _MEMORY_NAMES[mem]


def path_index(src: Memory, dst: Memory) -> int:
    return PATHS.index((_MEMORY_NAMES[src], _MEMORY_NAMES[dst]))


def class_index(cost: CostClass) -> int:
    return CLASSES.index(cost)


_CLASS_FIELDS = {CostClass.SIMPLE: "simple", CostClass.MUL: "mul",
                 CostClass.TRANSCENDENTAL: "transcendental", CostClass.LN: "ln",
                 CostClass.DIV_SQRT: "div_sqrt", CostClass.DIV: "div",
                 CostClass.PAIR_REDUCE: "pair_reduce",
                 CostClass.RECIP: "recip", CostClass.REDUCE: "reduce", CostClass.MADD: "madd",
                 CostClass.FMA: "fma",
                 CostClass.REDUCE_MAX: "reduce_max", CostClass.BLOCK_REDUCE: "block_reduce",
                 CostClass.CONVERT: "convert", CostClass.DUP: "dup", CostClass.DMA: "copy",
                 CostClass.SYNC: "simple", CostClass.SCALAR: "simple", CostClass.NONE: "simple",
                 CostClass.GATHER: "gather", CostClass.GATHERB: "gatherb",
                 CostClass.GATHER_MASK: "gather_mask"}


@functools.lru_cache(maxsize=64)
def cost_table(platform, bank_rule: bool = True) -> np.ndarray:
    """The table for ``platform`` (the same whatever the launch: nothing in it depends on how
    many cores run)."""
    t = np.zeros(TABLE_SIZE, np.float64)
    vec = platform.vector
    for c, cls in enumerate(CLASSES):
        cost = getattr(vec, _CLASS_FIELDS[cls])
        for f, fam in enumerate(FAMILIES):
            base = CLASS_BASE + (c * len(FAMILIES) + f) * 2
            t[base] = getattr(cost, f"cycles_per_repeat_{fam}")
            t[base + 1] = getattr(cost, f"latency_{fam}")
    by_ends = {(path.src, path.dst): path for path in platform.dma.paths()}
    for p, (src, dst) in enumerate(PATHS):
        path = by_ends.get((src, dst)) or platform.dma.path(src, dst)   # (KeyError if none)
        base = PATH_BASE + p * PATH_FIELDS
        t[base] = path.bytes_per_cycle
        t[base + 1] = path.latency_cycles
        t[base + 2] = int(PipeID["PIPE_" + path.pipe])
        t[base + 3] = 1.0 if src == "GM" else 2.0 if dst == "GM" else 0.0  # timing_gm kinds
        segments = path.segments()
        if len(segments) > KNOTS_MAX:
            raise ValueError(f"DMA path {src}->{dst}: {len(segments)} knots, at most {KNOTS_MAX}")
        curve = CURVE_BASE + p * CURVE_FIELDS
        t[curve:curve + CURVE_FIELDS:KNOT_FIELDS] = NO_KNOT
        for k, segment in enumerate(segments):
            t[curve + k * KNOT_FIELDS:curve + (k + 1) * KNOT_FIELDS] = segment
    t[BANK_RULE] = 1.0 if bank_rule else 0.0
    t[FLAG_CYCLES] = platform.pipes.flag_cycles
    t[ISSUE_CYCLES] = 1.0
    t[ALU] = platform.scalar.alu
    t[LOAD] = platform.scalar.load
    t[STORE] = platform.scalar.store
    cube = platform.cube
    t[CUBE_LATENCY] = cube.mmad_latency
    t[CUBE_ISSUE], t[CUBE_MIN] = cube.mmad_issue_cycles, cube.mmad_min_cycles
    t[LOAD3D_LATENCY] = cube.load3d_latency
    t[CUBE_M0], t[CUBE_N0] = cube.m0, cube.n0
    t[CUBE_K0_F16], t[CUBE_K0_F32], t[CUBE_K0_INT8] = cube.k0_f16, cube.k0_f32, cube.k0_int8
    t[CUBE_RATE] = 1.0
    t[L2_READ] = platform.gm.l2_core_read_bytes_per_cycle
    t[L2_SIZE] = platform.gm.l2_size
    t[VEC_MIN] = vec.min_instruction_cycles
    t[BURST_BYTES] = platform.dma.burst_bytes
    t[BURST_CYCLES] = platform.dma.burst_cycles
    t.setflags(write=False)
    return t
