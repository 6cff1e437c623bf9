"""How close the timing model is to figures measured on a 910B: ``make fidelity``.

Every row runs a probe kernel through the simulator (on the platform's own cost table, so a
user's modified config is measured too), reads the model's figure from the launch report, and
puts it beside a reference figure with its source:

- vector instructions: cycles per repeat (PIPE_V busy cycles of 16 repeats minus those of 8,
  over 8) against msKPP's tables measured on a 910B1 ([C4] ``csrc/prof_data/resource910b.cpp``,
  one AIV: the slope of ``totalCycles`` over repeats 8..16), and the cycles of a 1-repeat
  instruction against msKPP's ``totalCycles`` at 1 repeat;
- DMA: single-core bandwidth (GiB/s) of one copy of a given size (busy cycles of its pipe)
  against msKPP's ``mov`` tables (same file; it converts at 1800 MHz, the default platform's
  clock), for every path msKPP measured on a 910B (data_copy GM->UB, UB->GM, GM->L1, UB->UB, a
  strided DataCopyParams and a data_copy_pad copy, load_data L1->L0A/L0B and GM->L0A, fixpipe
  L0C->GM, L1->BT and L1->FB), at the model's knots and between them.

A row is *calibrated* when the model is meant to match it within its tolerance (10 % for vector
rates, 25 % for DMA bandwidth; every row is calibrated today); ``tests/simulator/test_fidelity.py`` fails when a calibrated row
is outside. Reference keys ([C4] …) are those of the project's hardware reference
(``aicore_params.md``), which ``simulator/config.py`` cites too.

    python -m ascendc_py.fidelity [--markdown]
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Optional

import numpy as np

import ascendc_py as asc

MSKPP = "msKPP 910B1 [C4]"
UB = asc.TPosition.VECCALC
SRC1 = 65536      # second source: same 512-byte phase as the first (the bank groups msKPP's
DST = 131072      # probes, and ordinary TPipe buffers, share), destination after both


@dataclass(frozen=True)
class Row:
    """One figure of the model beside its reference."""

    what: str
    unit: str
    model: float
    reference: float
    source: str
    tolerance: float          # allowed |model/reference - 1|
    calibrated: bool

    @property
    def error(self) -> float:
        """Signed relative error of the model (0.1: 10 % too high)."""
        return self.model / self.reference - 1.0

    @property
    def within(self) -> bool:
        return abs(self.error) <= self.tolerance + 1e-9


# ----------------------------------------------------------------------------- vector probes
@asc.kernel
def _vector_probe(x: asc.GlobalAddress, n: int, OP: asc.ConstExpr[str]):
    epr = 256 // x.dtype.sizeof()
    reps = n // epr
    a = asc.LocalTensor(x.dtype, UB, 0, n)
    b = asc.LocalTensor(x.dtype, UB, SRC1, n)
    d = asc.LocalTensor(x.dtype, UB, DST, n)
    if OP == "add":
        asc.add(d, a, b, n)
    elif OP == "sub":
        asc.sub(d, a, b, n)
    elif OP == "mul":
        asc.mul(d, a, b, n)
    elif OP == "max":
        asc.max(d, a, b, n)
    elif OP == "min":
        asc.min(d, a, b, n)
    elif OP == "div":
        asc.div(d, a, b, n)
    elif OP == "bitwise_and":
        asc.bitwise_and(d, a, b, n)
    elif OP == "adds":
        asc.adds(d, a, 2, n)
    elif OP == "muls":
        asc.muls(d, a, 2, n)
    elif OP == "maxs":
        asc.maxs(d, a, 2, n)
    elif OP == "shift_left":
        asc.shift_left(d, a, 1, n)
    elif OP == "abs":
        asc.abs(d, a, n)
    elif OP == "relu":
        asc.relu(d, a, n)
    elif OP == "exp":
        asc.exp(d, a, n)
    elif OP == "ln":
        asc.ln(d, a, n)
    elif OP == "sqrt":
        asc.sqrt(d, a, n)
    elif OP == "reciprocal":
        asc.reciprocal(d, a, n)
    elif OP == "rsqrt":
        asc.rsqrt(d, a, n)
    elif OP == "bitwise_not":
        asc.bitwise_not(d, a, n)
    elif OP == "duplicate":
        asc.duplicate(d, 1, n)
    elif OP == "axpy":
        asc.axpy(d, a, 2, n)
    elif OP == "fused_mul_add":
        asc.fused_mul_add(d, a, b, n)
    elif OP == "mul_add_dst":
        asc.mul_add_dst(d, a, b, n)
    elif OP == "whole_reduce_sum":
        asc.whole_reduce_sum(d, a, epr, reps, 1, 1, 8)
    elif OP == "whole_reduce_max":
        asc.whole_reduce_max(d, a, epr, reps, 1, 1, 8)
    elif OP == "block_reduce_sum":
        asc.block_reduce_sum(d, a, reps, epr, 1, 1, 8)
    elif OP == "block_reduce_max":
        asc.block_reduce_max(d, a, reps, epr, 1, 1, 8)
    elif OP == "pair_reduce_sum":
        asc.pair_reduce_sum(d, a, reps, epr, 1, 1, 8)
    elif OP == "gather" or OP == "gatherb":   # offsets 0 (scalar stores: no vector time)
        o = asc.LocalTensor(asc.uint32, UB, SRC1, n)
        for i in range(n):
            o.set_value(i, 0)
        if OP == "gather":
            asc.gather(d, a, o, 0, n)
        else:
            asc.gatherb(d, a, o, reps, asc.GatherRepeatParams(1, 8))
    elif OP == "gather_mask":
        asc.gather_mask(d, a, 7, False, 0, asc.GatherMaskParams(1, reps, 8, 0))


#: (our op, dtype, msKPP instruction, its cycles per repeat)
VECTOR_RATES = (
    ("add", "float32", "VADD_FP32", 2.00), ("add", "int32", "VADD_INT32", 2.00),
    ("sub", "float32", "VSUB_FP32", 2.00), ("sub", "float16", "VSUB_FP16", 2.00),
    ("mul", "float32", "VMUL_FP32", 2.00), ("mul", "int32", "VMUL_INT32", 2.00),
    ("max", "float16", "VMAX_FP16", 2.00), ("min", "float32", "VMIN_FP32", 2.00),
    ("div", "float16", "VDIV_FP16", 4.00), ("div", "float32", "VDIV_FP32", 4.00),
    ("bitwise_and", "int16", "VAND_INT16", 2.00),
    ("adds", "float32", "VADDS_FP32", 1.00), ("adds", "int16", "VADDS_INT16", 1.00),
    ("muls", "int32", "VMULS_INT32", 1.00), ("muls", "int16", "VMULS_INT16", 1.00),
    ("maxs", "float16", "VMAXS_FP16", 1.00), ("shift_left", "int32", "VSHL_INT32", 1.00),
    ("abs", "float16", "VABS_FP16", 1.00), ("abs", "float32", "VABS_FP32", 1.00),
    ("relu", "float32", "VRELU_FP32", 1.00),
    ("exp", "float16", "VEXP_FP16", 3.89), ("exp", "float32", "VEXP_FP32", 2.00),
    ("ln", "float16", "VLN_FP16", 3.89), ("ln", "float32", "VLN_FP32", 2.00),
    ("sqrt", "float16", "VSQRT_FP16", 4.00), ("sqrt", "float32", "VSQRT_FP32", 2.00),
    ("reciprocal", "float16", "VREC_FP16", 1.00), ("rsqrt", "float32", "VRSQRT_FP32", 1.00),
    ("bitwise_not", "int16", "VNOT_INT16", 1.00),
    ("duplicate", "float16", "VECTORDUP_FP16", 0.97), ("duplicate", "int32",
                                                        "VECTORDUP_INT32", 1.00),
    ("axpy", "float16", "VAXPY_FP16", 2.00), ("axpy", "float32", "VAXPY_FP32", 2.00),
    # reference table: VMADD/VMLA ~42.6 B/cycle of one input (256 B / 42.6 = 6.0 c/rep)
    ("fused_mul_add", "float16", "VMADD", 6.00), ("mul_add_dst", "float16", "VMLA", 6.00),
    ("whole_reduce_sum", "float16", "VCADD_FP16", 7.00),
    ("whole_reduce_sum", "float32", "VCADD_FP32", 3.00),
    ("whole_reduce_max", "float16", "VCMAX_FP16", 6.81),
    ("whole_reduce_max", "float32", "VCMAX_FP32", 7.00),
    ("block_reduce_sum", "float16", "VCGADD_FP16", 7.00),
    ("block_reduce_sum", "float32", "VCGADD_FP32", 1.00),
    ("block_reduce_max", "float32", "VCGMAX_FP32", 1.00),
    ("pair_reduce_sum", "float16", "VCPADD_FP16", 1.00),
    ("pair_reduce_sum", "float32", "VCPADD_FP32", 1.00),
    # msKPP: VGATHER 10.6 B/c (uint16) and 21 B/c (uint32) of gathered data, VGATHERB ~122 B/c
    ("gather", "uint16", "VGATHER_U16", 24.15), ("gather", "uint32", "VGATHER_U32", 12.19),
    ("gatherb", "uint16", "VGATHERB", 2.10),
    ("gather_mask", "uint16", "VREDUCEV2", 13.99),   # msKPP 18.3 B/c
)
#: 1-repeat instructions (msKPP totalCycles at 1 repeat)
VECTOR_SINGLE = (("abs", "float32", "VABS_FP32", 3.07), ("adds", "float32", "VADDS_FP32", 3.04),
                 ("add", "float32", "VADD_FP32", 3.09), ("relu", "float16", "VRELU_FP16", 3.03))


def vector_rate(op: str, dtype: str, platform) -> float:
    """The model's cycles per repeat of ``op`` on ``dtype``: PIPE_V busy cycles of 16 repeats
    minus those of 8, over 8 (what msKPP's slope measures)."""
    return (_vector_busy(op, dtype, 16, platform) - _vector_busy(op, dtype, 8, platform)) / 8


def _vector_busy(op: str, dtype: str, repeats: int, platform) -> int:
    epr = 256 // np.dtype(dtype).itemsize
    report = _vector_probe[1](np.zeros(8, dtype), repeats * epr, op, platform=platform)
    return int(report.pipe_busy["V"])


# ----------------------------------------------------------------------------- DMA probes
@asc.kernel
def _copy_probe(x: asc.GlobalAddress, n: int, WHERE: asc.ConstExpr[str]):
    """One copy of ``n`` elements (4 B each) on the path ``WHERE`` names; "strided": 16 bursts
    (DataCopyParams) of 1 KiB every 2 KiB of x; "pad": data_copy_pad, 32 bursts likewise."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    if WHERE == "GM->UB":
        t = asc.LocalTensor(x.dtype, UB, 0, n)
        asc.data_copy(t, xg, n)
    elif WHERE == "UB->GM":
        t = asc.LocalTensor(x.dtype, UB, 0, n)
        asc.data_copy(xg, t, n)
    elif WHERE == "UB->UB":
        t = asc.LocalTensor(x.dtype, UB, 0, n)
        u = asc.LocalTensor(x.dtype, UB, n * 4, n)
        asc.data_copy(u, t, n)
    elif WHERE == "GM->UB strided":
        t = asc.LocalTensor(x.dtype, UB, 0, n)
        blocks = n * 4 // 32 // 16                     # 32-byte blocks per burst
        asc.data_copy(t, xg, asc.DataCopyParams(16, blocks, blocks, 0))
    elif WHERE == "GM->UB pad":
        t = asc.LocalTensor(x.dtype, UB, 0, n)
        burst = n * 4 // 32                            # bytes per burst
        asc.data_copy_pad(t, xg, asc.DataCopyExtParams(32, burst, burst, 0, 0),
                          asc.DataCopyPadExtParams(False, 0, 0, 0))
    else:
        pipe = asc.TPipe()
        buf = asc.TBuf(asc.TPosition.A1)
        pipe.init_buffer(buf, n * x.dtype.sizeof())
        t = buf.get(x.dtype)
        asc.data_copy(t, xg, n)


@asc.kernel
def _cube_probe(x: asc.GlobalAddress, size: int, WHERE: asc.ConstExpr[str]):
    """load_data of ``size`` fractals (L1 or GM -> L0A/L0B), fixpipe of a float32 L0C matrix of
    16 x ``size`` elements to GM (no conversion), or data_copy of ``size`` float32 from L1 to
    the bias table (BT) or the fixpipe buffer (FB)."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    pipe = asc.TPipe()
    if WHERE == "L0C->GM":
        tc = asc.TBuf(asc.TPosition.CO1)
        pipe.init_buffer(tc, 16 * size * 4)
        l0c = tc.get(x.dtype)
        asc.fixpipe(xg, l0c, asc.FixpipeParamsV220(size, 16, 16, size))
    elif WHERE == "L1->BT" or WHERE == "L1->FB":
        t1 = asc.TBuf(asc.TPosition.C1)
        t2 = asc.TBuf(asc.TPosition.C2 if WHERE == "L1->BT" else asc.TPosition.C2PIPE2GM)
        pipe.init_buffer(t1, size * 4)
        pipe.init_buffer(t2, size * 4)
        asc.data_copy(t2.get(x.dtype), t1.get(x.dtype), size)
    else:
        t1 = asc.TBuf(asc.TPosition.A1)
        t2 = asc.TBuf(asc.TPosition.B2 if WHERE == "L1->L0B" else asc.TPosition.A2)
        pipe.init_buffer(t1, size * 512)
        pipe.init_buffer(t2, size * 512)
        l1 = t1.get(x.dtype)
        l0 = t2.get(x.dtype)
        params = asc.LoadData2DParams(0, size, 1, 0, 0, False, 0)
        if WHERE == "GM->L0A":
            asc.load_data(l0, xg, params)
        else:
            asc.load_data(l0, l1, params)


_COPY_PIPE = {"GM->UB": "MTE2", "UB->GM": "MTE3", "GM->L1": "MTE2", "UB->UB": "V",
              "GM->UB strided": "MTE2", "GM->UB pad": "MTE2", "L1->L0A": "MTE1",
              "L1->L0B": "MTE1", "GM->L0A": "MTE2", "L0C->GM": "FIX", "L1->BT": "MTE1",
              "L1->FB": "FIX"}
#: (probe, KiB in one copy, msKPP GiB/s) from the 910B1 tables GM_TO_UB, UB_TO_GM, GM_TO_L1,
#: UB_TO_UB; sizes between the model's knots (3, 12, 20, 48, 192 …) test its interpolation.
#: The strided and pad probes move 16 KiB in 16 x 1 KiB and 32 x 512 B bursts: whole 512 B
#: units, so the per-burst rule adds nothing and msKPP's 16 KiB figure is the reference.
DMA_BANDWIDTH = (
    ("GM->UB", 1, 7.29), ("GM->UB", 3, 18.62), ("GM->UB", 4, 23.60), ("GM->UB", 12, 54.55),
    ("GM->UB", 16, 67.99), ("GM->UB", 20, 69.26), ("GM->UB", 48, 77.35), ("GM->UB", 64, 77.05),
    ("GM->UB", 128, 78.49), ("GM->UB", 192, 78.44),
    ("GM->UB strided", 16, 67.99), ("GM->UB pad", 16, 67.99),
    ("UB->GM", 1, 11.39), ("UB->GM", 4, 37.91), ("UB->GM", 12, 75.87), ("UB->GM", 16, 86.85),
    ("UB->GM", 40, 109.08), ("UB->GM", 64, 110.66),
    ("GM->L1", 1, 9.93), ("GM->L1", 16, 93.19), ("GM->L1", 48, 166.22), ("GM->L1", 64, 176.28),
    ("GM->L1", 96, 214.50), ("GM->L1", 256, 261.36),
    ("UB->UB", 1, 436.7), ("UB->UB", 5, 440.59), ("UB->UB", 40, 440.99), ("UB->UB", 90, 439.81),
)
#: (probe, fractals (load_data repeats), float32 columns of 16 rows (fixpipe) or float32
#: elements (L1 -> BT/FB), msKPP GiB/s) from the 910B1 tables L1_TO_L0A / L1_TO_L0B / GM_TO_L0A
#: (per repeat), L0C_TO_GM, L1_TO_BT and L1_TO_FB (per KiB)
CUBE_BANDWIDTH = (
    ("L1->L0A", 1, 217.14), ("L1->L0A", 3, 376.65), ("L1->L0A", 16, 427.44),
    ("L1->L0A", 24, 431.84), ("L1->L0A", 128, 439.33),
    ("L1->L0B", 1, 175.31), ("L1->L0B", 4, 207.34), ("L1->L0B", 12, 215.92),
    ("L1->L0B", 128, 220.09),
    ("GM->L0A", 1, 12.58), ("GM->L0A", 8, 94.53), ("GM->L0A", 24, 211.14),
    ("GM->L0A", 96, 226.05),
    ("L0C->GM", 16, 20.78), ("L0C->GM", 64, 85.79), ("L0C->GM", 128, 161.25),
    ("L0C->GM", 256, 203.25), ("L0C->GM", 384, 203.64), ("L0C->GM", 1024, 196.54),
    ("L1->BT", 32, 54.13), ("L1->BT", 64, 55.0), ("L1->BT", 256, 55.1),
    ("L1->FB", 32, 11.61), ("L1->FB", 96, 24.5), ("L1->FB", 256, 37.53),
)


def _gib_per_s(report, where: str, nbytes: int, platform) -> float:
    cycles = report.pipe_busy[_COPY_PIPE[where]]
    return nbytes / (cycles / (platform.clock_mhz * 1e6)) / 2 ** 30


def _copy_gib_per_s(where: str, kib: int, platform) -> float:
    n = kib * 1024 // 4
    length = 2 * n if where in ("GM->UB strided", "GM->UB pad") else n   # gaps between bursts
    report = _copy_probe[1](np.zeros(length, np.float32), n, where, platform=platform)
    return _gib_per_s(report, where, kib * 1024, platform)


def _cube_gib_per_s(where: str, size: int, platform) -> float:
    """Single-core bandwidth of one load_data (``size`` fractals) or fixpipe (16 x ``size``
    float32)."""
    nbytes = size * _CUBE_UNIT_BYTES.get(where, 512)
    report = _cube_probe[1](np.zeros(nbytes // 4, np.float32), size, where, platform=platform)
    return _gib_per_s(report, where, nbytes, platform)


_CUBE_UNIT_BYTES = {"L0C->GM": 64, "L1->BT": 4, "L1->FB": 4}


def _cube_label(where: str, size: int) -> str:
    if where == "L0C->GM":
        return f"{where} {size * 64 / 1024:g} KiB (fixpipe 16x{size} float32), one core"
    if where in ("L1->BT", "L1->FB"):
        return f"{where} {size * 4} B (data_copy), one core"
    return f"{where} {size} fractal{'s' if size > 1 else ''} ({size / 2:g} KiB, load_data), one core"


# ----------------------------------------------------------------------------- cube probes
@asc.kernel
def _mmad_probe(x: asc.GlobalAddress, m: int, n: int, k: int, reps: int):
    """``reps`` back-to-back float16 x float16 -> float32 mmads of (m x k) by (k x n), each
    starting a new L0C result (what msKPP's MMAD table measures)."""
    pipe = asc.TPipe()
    ta = asc.TBuf(asc.TPosition.A2)
    tb = asc.TBuf(asc.TPosition.B2)
    tc = asc.TBuf(asc.TPosition.CO1)
    pipe.init_buffer(ta, m * k * 2)
    pipe.init_buffer(tb, k * n * 2)
    pipe.init_buffer(tc, m * n * 4)
    l0a = ta.get(x.dtype)
    l0b = tb.get(x.dtype)
    l0c = tc.get(asc.float32)
    for _ in range(reps):
        asc.mmad(l0c, l0a, l0b, asc.MmadParams(m, n, k, 0, False, True))


#: msKPP's MMAD_FP16_FP16_FP32_1_core_910b1 (m=32, k=16): (n, measured ops per cycle), ops =
#: 2 m n k per MMAD, back to back on one AIC [C4]
MMAD_RATES = ((16, 3369.81), (32, 5445.00), (48, 5893.53), (64, 6685.98), (128, 7258.39),
              (256, 7693.37), (512, 7818.66), (1024, 8057.17))


def mmad_ops_per_cycle(n: int, platform, m: int = 32, k: int = 16) -> float:
    """The model's throughput of back-to-back (m x k) by (k x n) float16 mmads: 2 m n k over the
    PIPE_M cycles of one more mmad (16 minus 8 of them, over 8)."""
    x = np.zeros(8, np.float16)
    busy = [int(_mmad_probe[1](x, m, n, k, reps, platform=platform).pipe_busy["M"])
            for reps in (8, 16)]
    return 2 * m * n * k / ((busy[1] - busy[0]) / 8)


# ----------------------------------------------------------------------------- the table
def rows(platform=None) -> list[Row]:
    """Every figure of the model beside its reference, on ``platform`` (a name or a
    ``ChipConfig``; default: the current one)."""
    chip = asc.current_platform() if platform is None else \
        asc.get_platform(platform) if isinstance(platform, str) else platform
    out = []
    for op, dtype, instr, ref in VECTOR_RATES:
        rate = vector_rate(op, dtype, chip)
        out.append(Row(f"{op} {dtype} ({instr})", "cycles/repeat", rate, ref, MSKPP, 0.10,
                       True))
    for op, dtype, instr, ref in VECTOR_SINGLE:
        out.append(Row(f"{op} {dtype}, 1 repeat ({instr})", "cycles",
                       _vector_busy(op, dtype, 1, chip), ref, MSKPP, 0.10, True))
    for where, kib, ref in DMA_BANDWIDTH:
        out.append(Row(f"{where} {kib} KiB, one core", "GiB/s", _copy_gib_per_s(where, kib, chip),
                       ref, MSKPP, 0.25, True))
    for where, size, ref in CUBE_BANDWIDTH:
        out.append(Row(_cube_label(where, size), "GiB/s", _cube_gib_per_s(where, size, chip),
                       ref, MSKPP, 0.25, True))
    for n, ref in MMAD_RATES:
        out.append(Row(f"mmad fp16 m=32 k=16 n={n}, back to back", "ops/cycle",
                       mmad_ops_per_cycle(n, chip), ref, MSKPP, 0.10, True))
    return out


def summary(table: list[Row]) -> str:
    """One paragraph: how many rows, how many within tolerance, the worst errors."""
    cal = [r for r in table if r.calibrated]
    other = [r for r in table if not r.calibrated]
    worst = max(cal, key=lambda r: abs(r.error), default=None)
    text = (f"{len(cal)} calibrated figures, {sum(r.within for r in cal)} within tolerance"
            + (f" (largest error {worst.error:+.1%}: {worst.what})" if worst else ""))
    if other:
        bad = max(other, key=lambda r: abs(r.error))
        text += (f"; {len(other)} figures not calibrated yet, {sum(r.within for r in other)} "
                 f"within 25 % (largest error {bad.error:+.0%}: {bad.what})")
    return text


def format_table(table: list[Row], markdown: bool = False) -> str:
    head = ("figure", "unit", "model", "reference", "error", "tolerance", "source", "status")
    body = [(r.what, r.unit, f"{r.model:.2f}", f"{r.reference:.2f}", f"{r.error:+.1%}",
             f"±{r.tolerance:.0%}", r.source,
             ("ok" if r.within else "OUTSIDE") if r.calibrated else
             ("not calibrated (inside)" if r.within else "not calibrated")) for r in table]
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(row) + " |" for row in body]
        return "\n".join(lines)
    widths = [max(len(str(x)) for x in col) for col in zip(head, *body)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join([fmt.format(*head), fmt.format(*("-" * w for w in widths))]
                     + [fmt.format(*row) for row in body])


def main(argv: Optional[list] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    table = rows()
    print(f"Timing model fidelity on {asc.current_platform().name} "
          f"(model figures from probe kernels; references measured on a 910B1)\n")
    print(format_table(table, markdown="--markdown" in argv))
    print("\n" + summary(table))
    return 0 if all(r.within for r in table if r.calibrated) else 1


if __name__ == "__main__":
    sys.exit(main())
