"""Generators for the fuzz tests: random well-formed kernels with a NumPy model of what they
compute, and random edits of valid kernels (malformed sources).

Well-formed kernels (``kernel_specs()``) are drawn as a ``KernelSpec`` (plain data, so hypothesis
can shrink it and a failing case can be pasted into ``@example``) and rendered to Python source
by ``render()``; ``load_kernel()`` writes the source to a real file and imports it (the compiler
reads kernels with ``inspect``). A kernel copies ``n_in`` inputs tile by tile into UB (through
TQues, or into static LocalTensors synchronised with set_flag/wait_flag or pipe_barrier), fills
its output and scratch tensors with ``duplicate``, runs a random sequence of vector ops in count
form and masked form (contiguous and bit masks, repeats, block and repeat strides, sub-tensor
offsets) and copies the output and every scratch tensor back to GM. ``model()`` computes the same
sequence with each op's ``REGISTRY[name].reference`` and an error bound per element (0 where the
result must be exact, otherwise what the approximate ops' documented ulp tolerance can become
through the later ops), and ``check()`` compares.

Malformed sources (``malformed_cases()``) are 1-3 random edits (token deletions, duplications,
swaps and insertions, numbers made huge or negative, dtypes and enum members changed, set_flag or
wait_flag removed, event ids changed, buffers shrunk, statements removed, duplicated, swapped or
inserted) of the samples' kernels or of a generated kernel, restricted to kernel bodies and
module constants. ``run_case()`` compiles and launches one and classifies the outcome: success,
a catalogued ``asc.KernelError``, or a failure (``InternalCompilerError``, any other exception,
a hang).

``python kernel_gen.py --run-batch FILE`` runs the cases of a JSON file in a fresh process (the
crash guard of test_fuzz_sources.py): it prints ``CASE i`` before and ``RESULT i ...`` after each
case.
"""
from __future__ import annotations

import ast
import hashlib
import importlib.util
import io
import json
import os
import re
import sys
import threading
import time
import tokenize
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Union

import numpy as np
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # the --run-batch subprocess, when ascendc_py is not installed
    sys.path.append(str(ROOT))

import ascendc_py as asc  # noqa: E402
from ascendc_py.compiler.errors import InternalCompilerError  # noqa: E402
from ascendc_py.compiler.ops import REGISTRY  # noqa: E402

# ----------------------------------------------------------------------------- op tables
NP_DTYPES = {"float16": np.float16, "float32": np.float32, "int16": np.int16, "int32": np.int32}
FUZZ_OPS = ("add", "sub", "mul", "div", "max", "min", "adds", "muls", "maxs", "mins", "exp", "ln",
            "abs", "sqrt", "relu", "reciprocal", "rsqrt", "duplicate", "leaky_relu", "axpy")
# operands after dst: sources, and whether a scalar follows them
SHAPES = {"binary": (2, False), "unary": (1, False), "scalar": (1, True), "duplicate": (0, True),
          "axpy": (1, True)}
# documented bounds vs spec.reference (tests/ops/test_vector_ops.py): ulps, per dtype
APPROX_ULP = {"div": (1, 1), "sqrt": (1, 1), "reciprocal": (1, 1), "rsqrt": (1, 1),
              "exp": (1, 5), "ln": (1, 5)}           # (float16, float32)
ZERO_SIGN_OPS = {"max", "min", "maxs", "mins", "relu"}  # the sign of a zero result is unspecified


def shape_of(name: str) -> tuple[int, bool]:
    return SHAPES[REGISTRY[name].family.value]


def ops_for(dtype: str) -> list[str]:
    """The fuzzed ops the registry allows for ``dtype``."""
    return [n for n in FUZZ_OPS if dtype in {d.name for d in REGISTRY[n].dtypes}]


def esize(dtype: str) -> int:
    return np.dtype(NP_DTYPES[dtype]).itemsize


# ----------------------------------------------------------------------------- the spec
@dataclass(frozen=True)
class Operand:
    slot: int   # index into the kernel's tensors (inputs, out, scratch)
    off: int    # offset in 32-byte blocks


@dataclass(frozen=True)
class Masked:
    mask: Union[int, tuple]  # int: contiguous lane count; tuple: bit mask words (lanes 0-63, …)
    repeat: int
    blk: tuple               # block stride per operand (dst, src0, src1), in 32-B blocks
    rep: tuple               # repeat stride per operand, in 32-B blocks
    keywords: bool = False   # render mask=, repeat_times=, repeat_params= by keyword


@dataclass(frozen=True)
class Op:
    name: str
    dst: Operand
    srcs: tuple = ()
    scalar: Optional[int] = None   # index into KernelSpec.scalars
    count: Optional[int] = None    # count form
    masked: Optional[Masked] = None


@dataclass(frozen=True)
class Scalar:
    value: Union[int, float]
    literal: bool = False   # written into the source instead of passed as a parameter


@dataclass(frozen=True)
class KernelSpec:
    dtype: str
    n_in: int
    n_tmp: int
    units: int                  # tile length in 32-byte blocks
    tiles: int
    style: str                  # "tque" | "static"
    ops: tuple
    scalars: tuple
    init: tuple                 # scalar index of the duplicate filling out and each scratch slot
    inputs: tuple               # distribution per input: sym | pos | wide | special | int
    blocks: tuple = (1,)        # launches: block counts
    seed: int = 0
    # tque style
    shared_queue: bool = False
    depth: int = 1
    bufs: int = 1
    out_depth: int = 1
    out_bufs: int = 1
    batch: bool = False         # copy every tile in before computing any
    free_early: bool = True     # free the inputs before (True) or after the copy-out
    tmp_sync: str = "flags"     # scratch copy-out: flags | barrier
    # static style
    sync: tuple = ("flags", "flags", "flags")   # MTE2->V, V->MTE3, MTE3->MTE2
    events: tuple = (0, 0, 0)   # event ids (static: the three above; tque: V_MTE3, MTE3_V)
    preset: bool = False        # pre-set MTE3_MTE2 before the loop, drain it after
    pingpong: bool = False      # event id + t % 2
    gaps: tuple = ()            # static: 32-B gaps before each tensor
    # source variations
    static_loop: bool = False   # asc.static_range instead of range
    dtype_param: bool = False   # x0.dtype instead of asc.<dtype>
    module_consts: bool = False  # tile length and tile count as module constants
    strict: bool = False        # a repro: the model grants no slack for known bugs

    @property
    def epb(self) -> int:
        return 32 // esize(self.dtype)

    @property
    def L(self) -> int:
        return self.units * self.epb

    @property
    def per_block(self) -> int:
        return self.tiles * self.L

    @property
    def n_slots(self) -> int:
        return self.n_in + 1 + self.n_tmp

    @property
    def observed(self) -> list[int]:
        """Slots copied back to GM: out, then the scratch tensors."""
        return list(range(self.n_in, self.n_slots))


def slot_name(spec: KernelSpec, slot: int) -> str:
    if slot < spec.n_in:
        return f"i{slot}"
    if slot == spec.n_in:
        return "o"
    return f"w{slot - spec.n_in - 1}"


# ----------------------------------------------------------------------------- rendering
def _operand(spec: KernelSpec, o: Operand) -> str:
    name = slot_name(spec, o.slot)
    return name if o.off == 0 else f"{name}[{o.off * spec.epb}:]"


def _scalar_text(spec: KernelSpec, idx: int) -> str:
    s = spec.scalars[idx]
    return repr(s.value) if s.literal else f"s{idx}"


def render_op(spec: KernelSpec, op: Op) -> str:
    n_src, has_scalar = shape_of(op.name)
    args = [_operand(spec, op.dst)] + [_operand(spec, s) for s in op.srcs]
    if has_scalar:
        args.append(_scalar_text(spec, op.scalar))
    if op.masked is None:
        return f"asc.{op.name}({', '.join(args)}, {op.count})"
    m = op.masked
    if isinstance(m.mask, int):
        mask = str(m.mask)
    else:
        mask = "[" + ", ".join(f"0x{w:x}" for w in m.mask) + "]"
    if op.name == "duplicate":
        tail = [mask, str(m.repeat), str(m.blk[0]), str(m.rep[0])]
        if m.keywords:
            tail = [f"mask={mask}", f"repeat_times={m.repeat}", f"dst_block_stride={m.blk[0]}",
                    f"dst_repeat_stride={m.rep[0]}"]
        return f"asc.duplicate({', '.join(args + tail)})"
    if n_src == 2:
        params = (f"asc.BinaryRepeatParams({m.blk[0]}, {m.blk[1]}, {m.blk[2]}, {m.rep[0]}, "
                  f"{m.rep[1]}, {m.rep[2]})")
        if m.keywords:
            params = (f"asc.BinaryRepeatParams(dst_blk_stride={m.blk[0]}, "
                      f"src0_blk_stride={m.blk[1]}, src1_blk_stride={m.blk[2]}, "
                      f"dst_rep_stride={m.rep[0]}, src0_rep_stride={m.rep[1]}, "
                      f"src1_rep_stride={m.rep[2]})")
    else:
        params = f"asc.UnaryRepeatParams({m.blk[0]}, {m.blk[1]}, {m.rep[0]}, {m.rep[1]})"
        if m.keywords:
            params = (f"asc.UnaryRepeatParams(dst_blk_stride={m.blk[0]}, "
                      f"src_blk_stride={m.blk[1]}, dst_rep_stride={m.rep[0]}, "
                      f"src_rep_stride={m.rep[1]})")
    if m.keywords:
        tail = [f"mask={mask}", f"repeat_times={m.repeat}", f"repeat_params={params}"]
    else:
        tail = [mask, str(m.repeat), params]
    return f"asc.{op.name}({', '.join(args + tail)})"


def static_addresses(spec: KernelSpec) -> list[int]:
    nbytes = -(-spec.L * esize(spec.dtype) // 32) * 32
    addrs, cur = [], 0
    for k in range(spec.n_slots):
        gap = spec.gaps[k] if k < len(spec.gaps) else 0
        cur += gap * 32
        addrs.append(cur)
        cur += nbytes
    return addrs


def render(spec: KernelSpec) -> str:
    """The kernel's Python source (a module defining ``fz_kernel``)."""
    L, T = spec.L, spec.tiles
    Ls, Ts = ("TILE", "TILES") if spec.module_consts else (str(L), str(T))
    dt = "dt" if spec.dtype_param else f"asc.{spec.dtype}"
    es = "dt.sizeof()" if spec.dtype_param else str(esize(spec.dtype))
    params = [f"x{i}: asc.GlobalAddress" for i in range(spec.n_in)] + ["z: asc.GlobalAddress"]
    stype = "int" if spec.dtype.startswith("int") else "float"
    params += [f"s{k}: {stype}" for k, s in enumerate(spec.scalars) if not s.literal]
    body: list[str] = []
    A = body.append
    if spec.dtype_param:
        A("dt = x0.dtype")
    A(f"off = asc.get_block_idx() * ({Ts} * {Ls})")
    A(f"total = asc.get_block_num() * ({Ts} * {Ls})")
    for i in range(spec.n_in):
        A(f"g{i} = asc.GlobalTensor()")
        A(f"g{i}.set_global_buffer(x{i} + off, {Ts} * {Ls})")
    for k, _ in enumerate(spec.observed):
        A(f"h{k} = asc.GlobalTensor()")
        A(f"h{k}.set_global_buffer(z + {k} * total + off, {Ts} * {Ls})")
    loop = f"asc.static_range({Ts})" if spec.static_loop else f"range({Ts})"
    names = [slot_name(spec, k) for k in range(spec.n_slots)]
    out_slot = spec.n_in

    def compute(ind: str):
        for k in spec.observed:
            fill = _scalar_text(spec, spec.init[k - out_slot])
            body.append(f"{ind}asc.duplicate({names[k]}, {fill}, {Ls})")
        for op in spec.ops:
            body.append(ind + render_op(spec, op))

    def sync(ind: str, kind: str, event: str, ev: str):
        if kind == "barrier":
            body.append(f"{ind}asc.pipe_barrier(asc.PipeID.PIPE_ALL)")
        else:
            body.append(f"{ind}asc.set_flag(asc.HardEvent.{event}, {ev})")
            body.append(f"{ind}asc.wait_flag(asc.HardEvent.{event}, {ev})")

    def ev(k: int) -> str:
        return f"{spec.events[k]} + t % 2" if spec.pingpong else str(spec.events[k])

    if spec.style == "tque":
        A("pipe = asc.TPipe()")
        queues = ["qi"] * spec.n_in if spec.shared_queue else [f"q{i}" for i in range(spec.n_in)]
        for q in dict.fromkeys(queues):
            A(f"{q} = asc.TQue(asc.TPosition.VECIN, {spec.depth})")
            A(f"pipe.init_buffer({q}, {spec.bufs}, {Ls} * {es})")
        A(f"qo = asc.TQue(asc.TPosition.VECOUT, {spec.out_depth})")
        A(f"pipe.init_buffer(qo, {spec.out_bufs}, {Ls} * {es})")
        if spec.n_tmp:
            A("tb = asc.TBuf(asc.TPosition.VECCALC)")
            A(f"pipe.init_buffer(tb, {spec.n_tmp} * {Ls} * {es})")

        def copy_in(ind: str):
            for i in range(spec.n_in):
                A(f"{ind}i{i} = {queues[i]}.alloc_tensor({dt})")
                A(f"{ind}asc.data_copy(i{i}, g{i}[t * {Ls}:], {Ls})")
                A(f"{ind}{queues[i]}.enque(i{i})")

        def free_in(ind: str):
            for i in range(spec.n_in):
                A(f"{ind}{queues[i]}.free_tensor(i{i})")

        if spec.batch:
            A(f"for t in {loop}:")
            copy_in("    ")
        A(f"for t in {loop}:")
        ind = "    "
        if not spec.batch:
            copy_in(ind)
        for i in range(spec.n_in):
            A(f"{ind}i{i} = {queues[i]}.deque({dt})")
        A(f"{ind}o = qo.alloc_tensor({dt})")
        if spec.n_tmp:
            A(f"{ind}w = tb.get({dt})")
            for j in range(spec.n_tmp):
                A(f"{ind}w{j} = w[{j} * {Ls}:]" if j else f"{ind}w0 = w")
        compute(ind)
        A(f"{ind}qo.enque(o)")
        if spec.free_early:
            free_in(ind)
        if spec.n_tmp:
            if spec.tmp_sync == "barrier":
                A(f"{ind}asc.pipe_barrier(asc.PipeID.PIPE_ALL)")
            else:
                A(f"{ind}asc.set_flag(asc.HardEvent.V_MTE3, {spec.events[0]})")
                A(f"{ind}asc.wait_flag(asc.HardEvent.V_MTE3, {spec.events[0]})")
            for j in range(spec.n_tmp):
                A(f"{ind}asc.data_copy(h{j + 1}[t * {Ls}:], w{j}, {Ls})")
            if spec.tmp_sync == "barrier":
                A(f"{ind}asc.pipe_barrier(asc.PipeID.PIPE_ALL)")
            else:
                A(f"{ind}asc.set_flag(asc.HardEvent.MTE3_V, {spec.events[1]})")
                A(f"{ind}asc.wait_flag(asc.HardEvent.MTE3_V, {spec.events[1]})")
        A(f"{ind}o = qo.deque({dt})")
        A(f"{ind}asc.data_copy(h0[t * {Ls}:], o, {Ls})")
        A(f"{ind}qo.free_tensor(o)")
        if not spec.free_early:
            free_in(ind)
    else:
        addrs = static_addresses(spec)
        for k in range(spec.n_slots):
            pos = "VECIN" if k < spec.n_in else "VECOUT" if k == out_slot else "VECCALC"
            A(f"{names[k]} = asc.LocalTensor({dt}, asc.TPosition.{pos}, {addrs[k]}, {Ls})")
        if spec.preset:
            A(f"asc.set_flag(asc.HardEvent.MTE3_MTE2, {spec.events[2]})")
            if spec.pingpong:
                A(f"asc.set_flag(asc.HardEvent.MTE3_MTE2, {spec.events[2] + 1})")
        A(f"for t in {loop}:")
        ind = "    "
        if spec.preset:
            # the wait is not ping-ponged: with one buffer per slot, tile t's copy-in must wait
            # for tile t-1's copy-out (a t % 2 event would order it after tile t-2's only)
            A(f"{ind}asc.wait_flag(asc.HardEvent.MTE3_MTE2, {spec.events[2]})")
        for i in range(spec.n_in):
            A(f"{ind}asc.data_copy(i{i}, g{i}[t * {Ls}:], {Ls})")
        sync(ind, spec.sync[0], "MTE2_V", ev(0))
        compute(ind)
        sync(ind, spec.sync[1], "V_MTE3", ev(1))
        for n, k in enumerate(spec.observed):
            A(f"{ind}asc.data_copy(h{n}[t * {Ls}:], {names[k]}, {Ls})")
        if spec.preset:
            A(f"{ind}asc.set_flag(asc.HardEvent.MTE3_MTE2, {spec.events[2]})")
        else:
            sync(ind, spec.sync[2], "MTE3_MTE2", ev(2))
        if spec.preset:
            A(f"asc.wait_flag(asc.HardEvent.MTE3_MTE2, {spec.events[2]})")
            if spec.pingpong:
                A(f"asc.wait_flag(asc.HardEvent.MTE3_MTE2, {spec.events[2] + 1})")
    head = ["import ascendc_py as asc", ""]
    if spec.module_consts:
        head += [f"TILE = {L}", f"TILES = {T}", ""]
    head += ["", "@asc.kernel", f"def fz_kernel({', '.join(params)}):"]
    return "\n".join(head + ["    " + line for line in body]) + "\n"


# ----------------------------------------------------------------------------- launching
def make_launch(spec: KernelSpec, blocks: int) -> tuple[list, np.ndarray]:
    """(arguments, z) for one launch: inputs drawn from spec.seed, z filled with a sentinel."""
    rng = np.random.default_rng([spec.seed, blocks])
    npd = NP_DTYPES[spec.dtype]
    n = blocks * spec.per_block
    args = []
    for dist in spec.inputs:
        args.append(random_array(rng, n, npd, dist))
    z = np.full(len(spec.observed) * n, 77, npd)
    args.append(z)
    args += [s.value for s in spec.scalars if not s.literal]
    return args, z


def random_array(rng, n: int, npd, dist: str) -> np.ndarray:
    npd = np.dtype(npd)
    if npd.kind == "i":
        info = np.iinfo(npd)
        return rng.integers(info.min, info.max, n, endpoint=True).astype(npd)
    if dist == "pos":
        x = rng.uniform(1 / 16, 4, n)
    elif dist == "wide":
        x = rng.standard_normal(n) * 100
    else:
        x = rng.uniform(-4, 4, n)
    x = x.astype(npd)
    if dist == "special":
        specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-7, -2.5e-8, 60000.0, 1.0],
                            dtype=np.float64).astype(npd)
        pos = rng.integers(0, n, max(1, n // 8))
        x[pos] = specials[rng.integers(0, len(specials), pos.size)]
    return x


# ----------------------------------------------------------------------------- the NumPy model
def lane_mask(m: Masked, epb: int) -> np.ndarray:
    epr = 8 * epb
    if isinstance(m.mask, int):
        return np.arange(epr) < m.mask
    bits = np.zeros(epr, bool)
    for w, word in enumerate(m.mask):
        for k in range(64):
            if w * 64 + k < epr and (word >> k) & 1:
                bits[w * 64 + k] = True
    return bits


def index_maps(spec: KernelSpec, op: Op) -> list[np.ndarray]:
    """Element indices (within each operand's tensor) of dst and each source, in the order the
    hardware visits them."""
    operands = [op.dst] + list(op.srcs)
    epb = spec.epb
    if op.masked is None:
        return [o.off * epb + np.arange(op.count) for o in operands]
    m = op.masked
    lanes = np.nonzero(lane_mask(m, epb))[0]
    blk, j = lanes // epb, lanes % epb
    maps = []
    for k, o in enumerate(operands):
        idx = [(r * m.rep[k] + blk * m.blk[k]) * epb + j for r in range(m.repeat)]
        maps.append(o.off * epb + (np.concatenate(idx) if idx else np.zeros(0, int)))
    return maps


def _bound(name, a, ea, s, r, d=None, ed=None):
    """How far a result computed from inputs a ± ea can be from r (before rounding slack)."""
    A = [np.asarray(x, np.float64) for x in a]
    if name in ("add", "sub"):
        return ea[0] + ea[1]
    if name == "mul":
        return np.abs(A[1]) * ea[0] + np.abs(A[0]) * ea[1] + ea[0] * ea[1]
    if name == "div":
        num = np.abs(A[0]) * ea[1] + np.abs(A[1]) * ea[0]
        den = np.abs(A[1]) * (np.abs(A[1]) - ea[1])
        return np.where(num == 0, 0.0, np.where(np.abs(A[1]) > ea[1], num / den, np.inf))
    if name in ("max", "min"):
        return np.maximum(ea[0], ea[1])
    if name in ("adds", "maxs", "mins", "abs", "relu"):
        return ea[0]
    if name == "muls":
        return abs(float(s)) * ea[0]
    if name == "leaky_relu":
        return max(1.0, abs(float(s))) * ea[0]
    if name == "axpy":
        return ed + abs(float(s)) * ea[0]
    if name == "duplicate":
        return np.zeros_like(np.asarray(r, np.float64))
    x, e = A[0], ea[0]
    if name == "exp":
        return np.where(e == 0, 0.0, np.exp(x + e) - np.exp(x))
    if name == "ln":
        return np.where(e == 0, 0.0, np.where(x - e > 0, np.log(x) - np.log(x - e), np.inf))
    if name == "sqrt":
        return np.where(e == 0, 0.0, np.where(x - e >= 0, np.sqrt(x) - np.sqrt(x - e), np.inf))
    if name == "reciprocal":
        return np.where(e == 0, 0.0, np.where(np.abs(x) > e, e / (np.abs(x) * (np.abs(x) - e)),
                                              np.inf))
    if name == "rsqrt":
        return np.where(e == 0, 0.0, np.where(x - e > 0, 1 / np.sqrt(x - e) - 1 / np.sqrt(x),
                                              np.inf))
    raise KeyError(name)


@dataclass
class ModelState:
    vals: list    # per slot: (rows, L) arrays of the dtype
    errs: list    # per slot: (rows, L) float64 bounds (0: exact)
    zsign: list   # per slot: (rows, L) bool, a zero whose sign is unspecified


# Slack (in ulps) the model grants to results of (op, dtype) while a bug is known, so that the
# fuzzer keeps looking for new ones; KernelSpec(strict=True) repros get none.
KNOWN_BUG_SLACK: dict = {}   # none open (BUG-4, float16 axpy rounding twice, is fixed)


def apply_op(spec: KernelSpec, st_: ModelState, op: Op, scalars: list) -> None:
    npd = np.dtype(NP_DTYPES[spec.dtype])
    is_float = npd.kind == "f"
    maps = index_maps(spec, op)
    n_src, has_scalar = shape_of(op.name)
    s = scalars[op.scalar] if has_scalar else None
    di = maps[0]
    if di.size == 0:
        return
    srcs = [st_.vals[o.slot][:, mi] for o, mi in zip(op.srcs, maps[1:])]
    ref = REGISTRY[op.name].reference
    old = st_.vals[op.dst.slot][:, di]
    with np.errstate(all="ignore"):
        if op.name == "duplicate":
            r = ref(old, s)
        elif op.name == "axpy":
            r = ref(old, srcs[0], s)
        else:
            r = ref(*srcs, s) if has_scalar else ref(*srcs)
    r = np.asarray(r).astype(npd)
    if not is_float:
        st_.vals[op.dst.slot][:, di] = r
        return
    eas = [st_.errs[o.slot][:, mi] for o, mi in zip(op.srcs, maps[1:])]
    zss = [st_.zsign[o.slot][:, mi] for o, mi in zip(op.srcs, maps[1:])]
    ed = st_.errs[op.dst.slot][:, di]
    zd = st_.zsign[op.dst.slot][:, di]
    with np.errstate(all="ignore"):
        e = np.asarray(_bound(op.name, srcs, eas, s, r, old, ed), np.float64)
        e = np.broadcast_to(e, r.shape).copy()
        rf = r.astype(np.float64)
        spacing = np.spacing(np.abs(r)).astype(np.float64)
        e = np.where(e > 0, e + spacing, e)        # a perturbed result may round the other way
        tol = APPROX_ULP.get(op.name, (0, 0))[npd == np.float32]
        if not spec.strict:
            slack = KNOWN_BUG_SLACK.get((op.name, spec.dtype), 0)
            e = e + slack * spacing
        if tol:
            e = e + tol * spacing
            # near or past overflow an approximate result may be inf or the largest finite
            finite_in = np.all([np.isfinite(x) for x in srcs], axis=0) if srcs else True
            pole = np.zeros(r.shape, bool)
            if op.name in ("ln", "reciprocal", "rsqrt"):
                pole = srcs[0] == 0
            elif op.name == "div":
                pole = srcs[1] == 0
            big = np.abs(rf) > np.finfo(npd).max / 2
            e = np.where((big & np.isfinite(rf)) | (np.isinf(rf) & finite_in & ~pole), np.inf, e)
        # a zero of unspecified sign makes 1/x, x/0 and rsqrt's sign unspecified
        if op.name in ("reciprocal", "rsqrt"):
            e = np.where(zss[0] & (srcs[0] == 0), np.inf, e)
        elif op.name == "div":
            e = np.where(zss[1] & (srcs[1] == 0), np.inf, e)
        e = np.where(~np.isfinite(rf) & (e > 0), np.inf, e)
        e = np.where(np.isnan(e), np.inf, e)
    zin = np.zeros(r.shape, bool)
    for z in zss:
        zin |= z
    if op.name == "axpy":
        zin |= zd
    zs = (rf == 0) & (zin | (op.name in ZERO_SIGN_OPS))
    if op.name == "duplicate":
        zs = np.zeros(r.shape, bool)
    st_.vals[op.dst.slot][:, di] = r
    st_.errs[op.dst.slot][:, di] = e
    st_.zsign[op.dst.slot][:, di] = zs


def model(spec: KernelSpec, args: list, blocks: int) -> tuple[np.ndarray, np.ndarray]:
    """Expected z and its per-element error bound for one launch."""
    npd = np.dtype(NP_DTYPES[spec.dtype])
    rows, L = blocks * spec.tiles, spec.L
    scalars = [npd.type(s.value) for s in spec.scalars]
    vals = [np.asarray(args[i]).reshape(rows, L).copy() for i in range(spec.n_in)]
    vals += [np.zeros((rows, L), npd) for _ in range(1 + spec.n_tmp)]
    st_ = ModelState(vals, [np.zeros((rows, L)) for _ in vals],
                     [np.zeros((rows, L), bool) for _ in vals])
    for k in spec.observed:
        apply_op(spec, st_, Op("duplicate", Operand(k, 0), (), spec.init[k - spec.n_in], L),
                 scalars)
    for op in spec.ops:
        apply_op(spec, st_, op, scalars)
    # z layout: [observed slot][block][tile][L] == slot-major over (rows, L)
    exp = np.concatenate([st_.vals[k].reshape(-1) for k in spec.observed])
    err = np.concatenate([st_.errs[k].reshape(-1) for k in spec.observed])
    return exp, err


def check(spec: KernelSpec, got: np.ndarray, exp: np.ndarray, err: np.ndarray) -> Optional[str]:
    """None if ``got`` matches the model, else a description of the first mismatches."""
    if got.dtype.kind != "f":
        bad = got != exp
    else:
        g, x = got.astype(np.float64), exp.astype(np.float64)
        maxf = float(np.finfo(got.dtype).max)
        with np.errstate(all="ignore"):
            same = (g == x) | (np.isnan(g) & np.isnan(x))
            near = np.isinf(err) | (np.abs(g - x) <= err) | \
                (np.isinf(g) & np.isfinite(x) & (np.abs(x) + err >= maxf))
        bad = ~np.where(err == 0, same, near)
    if not bad.any():
        return None
    idx = np.nonzero(bad)[0]
    n = spec.tiles * spec.L
    lines = [f"{idx.size} of {got.size} elements differ from the NumPy model"]
    for i in idx[:8]:
        slot, rest = divmod(int(i), got.size // len(spec.observed))
        blk, rest = divmod(rest, n)
        tile, e = divmod(rest, spec.L)
        lines.append(f"  {slot_name(spec, spec.observed[slot])} block {blk} tile {tile} "
                     f"element {e}: got {got[i]!r}, expected {exp[i]!r} (bound {err[i]:.3g})")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- strategies
FLOAT_SCALARS = st.one_of(st.integers(-32, 32).map(lambda k: k / 8),
                          st.sampled_from([0.0, 1.0, -1.0, 0.01, 1e-3, 100.0, 0.3333, -7.75]))


def _scalar_value(dtype: str):
    if dtype == "int16":
        return st.one_of(st.integers(-8, 8), st.integers(-2**15, 2**15 - 1))
    if dtype == "int32":
        return st.one_of(st.integers(-8, 8), st.integers(-2**31, 2**31 - 1))
    npd = NP_DTYPES[dtype]
    return FLOAT_SCALARS.map(lambda v: float(npd(v)))


def _fits(units: int, off: int, repeat: int, blk: int, rep: int) -> bool:
    if repeat == 0:
        return off <= units
    return off + (repeat - 1) * rep + 7 * blk + 1 <= units


@st.composite
def masked_params(draw, spec_units: int, epb: int, n_operands: int, same: list):
    """A mask, repeat count, strides and offsets that keep every operand inside its tile and
    the destination's lanes distinct; None if the tile is too small for a masked op."""
    if spec_units < 8:
        return None
    epr = 8 * epb
    if draw(st.booleans()):
        mask = draw(st.one_of(st.integers(1, epr), st.just(epr)))
    else:
        words = 2 if epr > 64 else 1
        mask = tuple(draw(st.one_of(st.integers(0, 2**64 - 1),
                                    st.sampled_from([2**64 - 1, 1, 0xAAAAAAAAAAAAAAAA,
                                                     0xFFFFFFFF, 0xF0F0F0F0F0F0F0F0, 0])))
                     for _ in range(words))
        if not any(mask):
            mask = (1,) + mask[1:]
    repeat = draw(st.one_of(st.integers(1, 4), st.just(0), st.integers(1, 8)))
    blk, rep, offs = [], [], []
    for k in range(n_operands):
        b = draw(st.integers(1 if k == 0 else 0, 3))
        r = draw(st.one_of(st.just(8 * max(b, 1)), st.integers(0, 24)))
        if k == 0 and r < 8 * b and repeat > 1:
            # distinct destination blocks: repeats must not land on each other's blocks
            hit = {rr * r + bb * b for rr in range(repeat) for bb in range(8)}
            if len(hit) < 8 * repeat:
                r = 8 * b
        while repeat > 1 and not _fits(spec_units, 0, repeat, b, r):
            repeat -= 1
        if not _fits(spec_units, 0, repeat, b, r):
            b, r = 1, 8
        blk.append(b)
        rep.append(r)
    # all operands share the repeat count; re-check with the final one
    for k in range(n_operands):
        if not _fits(spec_units, 0, repeat, blk[k], rep[k]):
            blk[k], rep[k] = 1, 8
        if not _fits(spec_units, 0, repeat, blk[k], rep[k]):
            return None
    for k in range(n_operands):
        if k > 0 and same[k]:          # a source aliasing dst reads exactly where dst writes
            blk[k], rep[k] = blk[0], rep[0]
        span = 0 if repeat == 0 else (repeat - 1) * rep[k] + 7 * blk[k] + 1
        offs.append(draw(st.one_of(st.just(0), st.integers(0, spec_units - span))))
    for k in range(1, n_operands):
        if same[k]:
            offs[k] = offs[0]
    return Masked(mask, repeat, tuple(blk) + (1,) * (3 - n_operands),
                  tuple(rep) + (8,) * (3 - n_operands), draw(st.booleans())), offs


@st.composite
def op_strategy(draw, dtype: str, n_in: int, n_tmp: int, units: int, n_scalars: int):
    name = draw(st.sampled_from(ops_for(dtype)))
    n_src, has_scalar = shape_of(name)
    n_slots = n_in + 1 + n_tmp
    epb = 32 // esize(dtype)
    # mostly into the slots copied back to GM (out, scratch), sometimes into an input
    dst = draw(st.one_of(st.integers(n_in, n_slots - 1), st.integers(n_in, n_slots - 1),
                         st.integers(0, n_slots - 1)))
    srcs = [draw(st.one_of(st.integers(0, n_slots - 1), st.just(dst))) for _ in range(n_src)]
    scalar = draw(st.integers(0, n_scalars - 1)) if has_scalar else None
    same = [False] + [s == dst for s in srcs]
    if draw(st.integers(0, 2)) == 0:
        got = draw(masked_params(units, epb, 1 + n_src, same))
        if got is not None:
            m, offs = got
            return Op(name, Operand(dst, offs[0]),
                      tuple(Operand(s, o) for s, o in zip(srcs, offs[1:])), scalar, None, m)
    offs = [draw(st.one_of(st.just(0), st.integers(0, units - 1))) for _ in range(1 + n_src)]
    for k in range(1, 1 + n_src):
        if same[k]:
            offs[k] = offs[0]
    avail = (units - max(offs)) * epb
    count = draw(st.one_of(st.just(avail), st.integers(1, avail)))
    return Op(name, Operand(dst, offs[0]),
              tuple(Operand(s, o) for s, o in zip(srcs, offs[1:])), scalar, count, None)


@st.composite
def kernel_specs(draw, max_ops: int = 6):
    dtype = draw(st.sampled_from(["float32", "float16", "float32", "float16", "int16", "int32"]))
    n_in = draw(st.integers(1, 3))
    n_tmp = draw(st.integers(0, 2))
    units = draw(st.one_of(st.integers(1, 8), st.integers(8, 40), st.sampled_from([8, 16, 32])))
    tiles = draw(st.integers(1, 3))
    style = draw(st.sampled_from(["tque", "static"]))
    n_scalars = draw(st.integers(1, 3))
    scalars = tuple(Scalar(draw(_scalar_value(dtype)), draw(st.booleans()))
                    for _ in range(n_scalars))
    ops = tuple(draw(st.lists(op_strategy(dtype, n_in, n_tmp, units, n_scalars), min_size=1,
                              max_size=max_ops)))
    init = tuple(draw(st.integers(0, n_scalars - 1)) for _ in range(1 + n_tmp))
    dist = st.just("int") if dtype.startswith("int") else \
        st.sampled_from(["sym", "sym", "pos", "wide", "special"])
    inputs = tuple(draw(dist) for _ in range(n_in))
    blocks = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=2)))
    kw = dict(dtype=dtype, n_in=n_in, n_tmp=n_tmp, units=units, tiles=tiles, style=style,
              ops=ops, scalars=scalars, init=init, inputs=inputs, blocks=blocks,
              seed=draw(st.integers(0, 2**32 - 1)), static_loop=draw(st.booleans()),
              dtype_param=draw(st.booleans()), module_consts=draw(st.booleans()))
    if style == "tque":
        shared = n_in > 1 and draw(st.booleans())
        batch = tiles <= 2 and draw(st.booleans())
        in_flight = (n_in if shared else 1) * (tiles if batch else 1)
        kw.update(shared_queue=shared, batch=batch,
                  depth=in_flight + draw(st.integers(0, 1)),
                  bufs=in_flight + draw(st.integers(0, 1)),
                  out_depth=draw(st.integers(1, 2)), out_bufs=draw(st.integers(1, 2)),
                  free_early=draw(st.booleans()),
                  tmp_sync=draw(st.sampled_from(["flags", "flags", "barrier"])),
                  events=(draw(st.integers(0, 7)), draw(st.integers(0, 7)), 0))
    else:
        pingpong = draw(st.booleans())
        hi = 6 if pingpong else 7
        kw.update(sync=tuple(draw(st.sampled_from(["flags", "flags", "barrier"]))
                             for _ in range(3)),
                  events=tuple(draw(st.integers(0, hi)) for _ in range(3)),
                  preset=draw(st.booleans()), pingpong=pingpong,
                  gaps=tuple(draw(st.sampled_from([0, 0, 1, 3])) for _ in range(n_in + 1 + n_tmp)))
    return KernelSpec(**kw)


# ----------------------------------------------------------------------------- loading
_LOADED: dict[str, object] = {}
_LOAD_LOCK = threading.Lock()


def kernel_dir() -> Path:
    """Where generated modules are written (one per process; removed at exit)."""
    global _KDIR
    try:
        return _KDIR
    except NameError:
        import atexit
        import shutil
        import tempfile
        _KDIR = Path(tempfile.mkdtemp(prefix="ascendc_py_fuzz_"))
        atexit.register(shutil.rmtree, _KDIR, True)
        return _KDIR


_FRESH = iter(range(1, 1 << 62))


def load_module(source: str, fresh: bool = False):
    """Write ``source`` to a real file and import it (cached by content unless ``fresh``: a new
    module, so its kernels compile again and a replayed case behaves as the first time)."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    with _LOAD_LOCK:
        mod = None if fresh else _LOADED.get(digest)
        if mod is not None:
            return mod
        name = f"fz_{digest}" + (f"_{next(_FRESH)}" if fresh else "")
        path = kernel_dir() / f"{name}.py"
        path.write_text(source)
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SyntaxWarning)
                spec.loader.exec_module(mod)
        except BaseException:
            del sys.modules[name]
            raise
        if not fresh:
            _LOADED[digest] = mod
        return mod


def crumb_path() -> Path:
    """Where the case being run is written (per pytest-xdist worker): if the process dies in a
    case, this file names it."""
    import tempfile
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    return Path(tempfile.gettempdir()) / f"ascendc_py_fuzz_last_case.{worker}.txt"


class breadcrumb:
    """``with breadcrumb(text):`` keeps ``text`` in ``crumb_path()`` while the block runs."""

    def __init__(self, text: str):
        self.text = text

    def __enter__(self):
        try:
            crumb_path().write_text(self.text)
        except OSError:
            pass

    def __exit__(self, *exc):
        crumb_path().unlink(missing_ok=True)
        return False


def load_kernel(source: str, name: str = "fz_kernel", fresh: bool = False):
    return getattr(load_module(source, fresh), name)


# ----------------------------------------------------------------------------- running a case
# seconds a case may take (compile + launch; they take well under 1 s) before it is a hang
CASE_TIMEOUT = float(os.environ.get("ASCENDC_PY_FUZZ_TIMEOUT", "10"))
# the simulator's own watchdog stops a launch well before the harness would call it a hang
os.environ.setdefault("ASCENDC_PY_LAUNCH_TIMEOUT", str(max(0.5, CASE_TIMEOUT / 3)))


class Hang(Exception):
    """A case that did not finish in time. ``ended``: how the kernel ended once the harness
    aborted it (see ``abort_running_kernels``), or "" if it could not be stopped."""

    def __init__(self, message: str, ended: str = ""):
        super().__init__(message)
        self.ended = ended


# Aborting a hung kernel. Native code cannot be interrupted, and a daemon thread stuck in a
# launch would keep a core busy for the rest of the session, so on a timeout the harness makes
# the running blocks fault at their next instruction: the while-loop budget in each simulated
# core's ctx is set to 0 (the next while iteration raises LoopLimitError), then the size of every
# local memory to -1 (the next local access, even of 0 bytes, raises LocalOutOfRangeError). This
# only relies on the simulator's ABI; if its internals change, the abort is skipped and the hang
# is still reported.
_CTXS: dict = {}


def _track_contexts() -> None:
    try:
        from ascendc_py.simulator import runtime
        core = runtime._Core
    except (ImportError, AttributeError):
        return
    if getattr(core.prepare, "_fuzz_tracked", False):
        return
    original = core.prepare

    def prepare(self, *args, **kwargs):
        ctx = original(self, *args, **kwargs)
        _CTXS[id(ctx)] = ctx   # one ctx per host thread, reused across launches
        return ctx

    prepare._fuzz_tracked = True
    core.prepare = prepare


def abort_running_kernels(stage: str) -> bool:
    try:
        from ascendc_py.dsl.types import Memory
        from ascendc_py.simulator import abi
        budget, mem_size = abi.LOOP_BUDGET, abi.MEM_SIZE
    except (ImportError, AttributeError):
        return False
    for ctx in list(_CTXS.values()):
        if stage == "loops":
            ctx[budget] = 0
        else:
            for mem in Memory:
                if mem != Memory.GM:
                    ctx[mem_size + int(mem)] = -1   # even a 0-byte access is out of range
    return bool(_CTXS)


def call_with_timeout(fn, timeout: float = CASE_TIMEOUT):
    """Run fn() in a daemon thread (native code cannot be interrupted by a signal); raise Hang
    if it has not finished after ``timeout`` seconds (after trying to abort it). Time spent
    building the runtime library's shards (once, when a kernel first calls them) is not
    counted."""
    from ascendc_py.compiler.codegen.runtime_loader import build_seconds
    _track_contexts()
    box: dict = {}

    def target():
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller
            box["error"] = exc

    th = threading.Thread(target=target, daemon=True, name="fuzz-case")
    start, built = time.monotonic(), build_seconds()
    th.start()
    th.join(timeout)
    while th.is_alive():
        left = start + timeout + (build_seconds() - built) - time.monotonic()
        if left <= 0:
            break
        th.join(left)
    if th.is_alive():
        ended = ""
        # first only the while-loop budget (a loop that never ends ends with LoopLimitError),
        # then the local memories (anything else that issues instructions)
        for stage in ("loops", "memory"):
            if not abort_running_kernels(stage):
                break
            th.join(3 if stage == "loops" else 30)
            if not th.is_alive():
                err = box.get("error")
                ended = type(err).__name__ if err is not None else "returned"
                break
        raise Hang(f"no result after {timeout:.0f} s; " +
                   (f"aborted by the harness, it then ended with {ended}" if ended else
                    "the harness could not abort it (its thread is still running)"), ended)
    if "error" in box:
        raise box["error"]
    return box.get("value")


@dataclass(frozen=True)
class Arg:
    kind: str                  # in | out | scalar | const
    dtype: str = "float32"
    size: int = 0
    value: object = None
    dist: str = "sym"


@dataclass(frozen=True)
class Recipe:
    """How to launch a kernel of a (possibly edited) module."""

    kernel: str
    blocks: int
    args: tuple
    seed: int = 0

    def build(self) -> list:
        rng = np.random.default_rng(self.seed)
        out = []
        for a in self.args:
            if a.kind == "in":
                out.append(random_array(rng, a.size, NP_DTYPES[a.dtype],
                                        "int" if a.dtype.startswith("int") else a.dist))
            elif a.kind == "out":
                out.append(np.zeros(a.size, NP_DTYPES[a.dtype]))
            else:
                out.append(a.value)
        return out


def recipe_for(spec: KernelSpec, blocks: Optional[int] = None) -> Recipe:
    blocks = spec.blocks[0] if blocks is None else blocks
    n = blocks * spec.per_block
    args = [Arg("in", spec.dtype, n, dist=d) for d in spec.inputs]
    args.append(Arg("out", spec.dtype, n * len(spec.observed)))
    args += [Arg("scalar", value=s.value) for s in spec.scalars if not s.literal]
    return Recipe("fz_kernel", blocks, tuple(args), spec.seed)


@dataclass(frozen=True)
class Case:
    source: str
    recipe: Recipe
    base: str = ""
    edits: tuple = ()
    strict: bool = False      # a repro: its failure is never excused as a known bug
    timeout: float = 0.0      # seconds before it counts as a hang (0: CASE_TIMEOUT)


@dataclass
class Outcome:
    status: str                # ok | error | skip | fail
    detail: str = ""
    error_class: str = ""
    warnings: tuple = ()

    @property
    def failed(self) -> bool:
        return self.status == "fail"


def python_valid(source: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # SyntaxWarning: 'tuple' object is not callable …
        try:
            compile(source, "<fuzz>", "exec")
        except (SyntaxError, ValueError):
            return False
    return True


# ----------------------------------------------------------------------------- risky constants
# Compile-time folding of ``a ** b`` or ``a << b`` with a huge b runs in C with the GIL held (or
# allocates gigabytes): nothing in the process can time it out. Such cases run in a separate
# process (``run_isolated``), killed if they take too long.
_CAP = 1 << 70
RISKY_POW_EXPONENT = 1 << 20
RISKY_SHIFT = 1 << 27


def _cap(v: int) -> int:
    return max(-_CAP, min(_CAP, v))


def _safe_int(node, env: dict) -> Optional[int]:
    """The value of an integer constant expression (capped at 2**70 in magnitude, computed
    without ever building a huge number); None if it is not one."""
    if isinstance(node, ast.Constant):
        return _cap(node.value) if type(node.value) is int else None
    if isinstance(node, ast.Name):
        return env.get(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _safe_int(node.operand, env)
        return None if v is None else (-v if isinstance(node.op, ast.USub) else v)
    if not isinstance(node, ast.BinOp):
        return None
    a, b = _safe_int(node.left, env), _safe_int(node.right, env)
    if a is None or b is None:
        return None
    op = node.op
    if isinstance(op, ast.Add):
        return _cap(a + b)
    if isinstance(op, ast.Sub):
        return _cap(a - b)
    if isinstance(op, ast.Mult):
        return _cap(a * b)
    if isinstance(op, (ast.FloorDiv, ast.Mod)) and b:
        return _cap(a // b if isinstance(op, ast.FloorDiv) else a % b)
    if isinstance(op, ast.Pow) and b >= 0:
        return _cap(a ** b) if b <= 256 or abs(a) <= 1 and b <= _CAP else _CAP
    if isinstance(op, ast.LShift) and b >= 0:
        return _cap(a << b) if b <= 256 else _CAP
    if isinstance(op, ast.RShift) and b >= 0:
        return a >> min(b, 256)
    return None


def risky_constants(source: str) -> str:
    """Why compiling ``source`` may fold a gigantic constant ('' if it may not)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ""
    env: dict = {}
    for node in ast.walk(tree):   # flow-insensitive: every simple NAME = <int expression>
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name):
            v = _safe_int(node.value, env)
            if v is not None:
                env[node.targets[0].id] = v
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Pow, ast.LShift)):
            e = _safe_int(node.right, env)
            limit = RISKY_POW_EXPONENT if isinstance(node.op, ast.Pow) else RISKY_SHIFT
            if e is not None and e >= limit:
                return (f"constant {'**' if isinstance(node.op, ast.Pow) else '<<'} by "
                        f"{ast.unparse(node.right)} at line {node.lineno}")
    return ""


ISOLATED_GRACE = 5.0   # seconds an isolated case may take beyond its timeout


def run_isolated(case: Case, timeout: float) -> Outcome:
    """Run one case in a fresh ``--run-batch`` process; kill it ``timeout`` + a grace after
    it is ready (Hang), report a death by signal (Crash)."""
    import queue
    import subprocess
    import tempfile
    import time
    fd, path = tempfile.mkstemp(suffix=".json", dir=kernel_dir())
    with os.fdopen(fd, "w") as f:
        json.dump([case_to_json(case)], f)
    err = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen([sys.executable, __file__, "--run-batch", path, "--isolated"],
                            stdout=subprocess.PIPE, stderr=err, text=True)
    lines: queue.Queue = queue.Queue()

    def reader():
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=reader, daemon=True).start()
    deadline, ready = time.monotonic() + 120, False
    while True:
        try:
            line = lines.get(timeout=max(0.05, deadline - time.monotonic()))
        except queue.Empty:
            break
        if line is None:
            break
        if line.startswith("READY"):
            ready, deadline = True, time.monotonic() + timeout + ISOLATED_GRACE
        elif line.startswith("RESULT "):
            r = json.loads(line[7:])
            proc.wait()
            err.close()
            return Outcome(r["status"], r["detail"], r["class"])
    if proc.poll() is None:
        proc.kill()
        proc.wait()
        err.close()
        what = "after it was ready" if ready else "(it never got ready)"
        return Outcome("fail", f"hang: no result {timeout + ISOLATED_GRACE:.0f} s {what}; the "
                       f"process was killed", "Hang(isolated)")
    err.seek(0)
    tail = err.read()[-3000:]
    err.close()
    return Outcome("fail", f"crash: the process running the case died with status "
                   f"{proc.returncode}\n{tail}", "Crash")


def run_case(case: Case, timeout: float = 0.0, isolate: bool = True) -> Outcome:
    """Compile and launch one case. ``fail``: an InternalCompilerError, an exception that is not
    an asc.KernelError, a warning that is not an asc.KernelWarning, or a hang. A case that
    folds gigantic constants (``risky_constants``) runs in a separate process if ``isolate``."""
    timeout = timeout or case.timeout or CASE_TIMEOUT
    if not python_valid(case.source):
        return Outcome("skip", "not valid Python")
    reason = risky_constants(case.source) if isolate else ""
    if reason:
        out = run_isolated(case, timeout)
        out.detail = f"(run in a separate process: {reason})\n{out.detail}"
        return out
    with breadcrumb(f"{case.recipe!r}\n{case.source}"):
        return _run_in_process(case, timeout)


def _run_in_process(case: Case, timeout: float) -> Outcome:
    try:
        mod = load_module(case.source, fresh=True)
    except Exception as exc:  # noqa: BLE001 - a module-level Python error, not the compiler's
        if isinstance(exc, asc.KernelError):
            return Outcome("error", str(exc), type(exc).__name__)
        return Outcome("skip", f"import: {type(exc).__name__}: {exc}")
    kern = getattr(mod, case.recipe.kernel, None)
    if kern is None:
        return Outcome("skip", "kernel not defined")
    args = case.recipe.build()
    caught: list = []

    def launch():
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                return kern[case.recipe.blocks](*args)
            finally:
                caught.extend(w)

    try:
        call_with_timeout(launch, timeout)
        outcome = Outcome("ok")
    except Hang as exc:
        return Outcome("fail", f"hang: {exc}", f"Hang({exc.ended})" if exc.ended else "Hang")
    except InternalCompilerError as exc:
        return Outcome("fail", f"InternalCompilerError: {exc}\n{_cause(exc)}",
                       "InternalCompilerError")
    except asc.KernelError as exc:
        outcome = Outcome("error", str(exc), type(exc).__name__)
    except BaseException as exc:  # noqa: BLE001 - exactly what the fuzzer looks for
        import traceback
        return Outcome("fail", "".join(traceback.format_exception(exc)), type(exc).__name__)
    outcome.warnings = tuple(f"{w.category.__name__}: {w.message}" for w in caught)
    foreign = [w for w in caught if not issubclass(w.category, asc.KernelWarning)
               and ("ascendc_py" in str(w.filename) or "fz_" in str(w.filename))]
    if foreign:
        return Outcome("fail", "non-catalogued warning: " + "; ".join(
            f"{w.category.__name__}: {w.message} ({w.filename}:{w.lineno})" for w in foreign),
            foreign[0].category.__name__, outcome.warnings)
    return outcome


def _cause(exc: BaseException) -> str:
    import traceback
    c = exc.__cause__
    return "".join(traceback.format_exception(c)) if c is not None else ""


# ----------------------------------------------------------------------------- the samples
SAMPLES = ROOT / "samples"


def _sample_case(file: str, recipe: Recipe) -> tuple[str, str, Recipe]:
    return file, kernel_part(SAMPLES / file), recipe


def kernel_part(path: Path) -> str:
    """A sample's source up to its first top-level function that is not a kernel (its golden,
    main …): imports, constants and kernels."""
    text = path.read_text()
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and not node.decorator_list:
            return "".join(lines[:node.lineno - 1]).rstrip() + "\n"
    return text


def _f32(kind: str, n: int, dist: str = "sym") -> Arg:
    return Arg(kind, "float32", n, dist=dist)


_BASES: list = []


def sample_bases() -> list[tuple[str, str, Recipe]]:
    """(name, source, recipe) of each sample kernel at a small size that runs cleanly."""
    if _BASES:
        return _BASES
    bases = _BASES
    if (SAMPLES / "add_flags.py").exists():
        # 2 blocks of 256 elements: tile_length = 256 // 8 // 2 = 16 (64 B)
        bases.append(_sample_case("add_flags.py", Recipe(
            "add_flags_kernel", 2, (_f32("in", 512), _f32("in", 512), _f32("out", 512),
                                    Arg("scalar", value=256)))))
    if (SAMPLES / "add_tque.py").exists():
        bases.append(_sample_case("add_tque.py", Recipe(
            "add_kernel", 2, (_f32("in", 512), _f32("in", 512), _f32("out", 512),
                              Arg("scalar", value=256), Arg("const", value=32)))))
    if (SAMPLES / "leaky_relu.py").exists():
        bases.append(_sample_case("leaky_relu.py", Recipe(
            "leaky_relu_kernel", 2, (_f32("in", 320), _f32("out", 320),
                                     Arg("scalar", value=320), Arg("scalar", value=0.01),
                                     Arg("const", value=64)))))
    if (SAMPLES / "sepia.py").exists():
        bases.append(_sample_case("sepia.py", Recipe(
            "sepia_kernel", 2, (_f32("in", 3 * 96, "pos"), _f32("out", 3 * 96),
                                Arg("scalar", value=1), Arg("scalar", value=96)))))
    if (SAMPLES / "softmax.py").exists():
        bases.append(_sample_case("softmax.py", Recipe(
            "softmax_kernel", 2, (_f32("in", 4 * 64), _f32("out", 4 * 64),
                                  Arg("scalar", value=4), Arg("scalar", value=64)))))
    if (SAMPLES / "layernorm.py").exists():
        bases.append(_sample_case("layernorm.py", Recipe(
            "layernorm_kernel", 2, (_f32("in", 4 * 64), _f32("in", 64, "pos"), _f32("in", 64),
                                    _f32("out", 4 * 64), Arg("scalar", value=4),
                                    Arg("scalar", value=64), Arg("scalar", value=1e-5)))))
    if (SAMPLES / "mix_pipeline.py").exists():
        # a mix kernel: the AIC feeds its two AIVs through a GM workspace with cross-core flags
        tile = 2048
        bases.append(_sample_case("mix_pipeline.py", Recipe(
            "mix_pipeline", 2, (_f32("in", 2 * 2 * tile), _f32("out", 2 * 2 * tile),
                                _f32("out", 2 * 2 * tile), Arg("scalar", value=2)))))
    cube_kernels = ROOT / "ascendc_py" / "torch_bridge" / "cube_kernels.py"
    if cube_kernels.exists():
        # the low-level cube kernel (Nd2Nz, load_data, mmad with bias, fixpipe): 20x40 @ 40x24
        bases.append(("cube_kernels.py", kernel_part(cube_kernels), Recipe(
            "linear_kernel", 1, (Arg("in", "float16", 20 * 40), Arg("in", "float16", 24 * 40),
                                 _f32("in", 256), _f32("out", 20 * 24), Arg("scalar", value=20),
                                 Arg("scalar", value=24), Arg("scalar", value=40),
                                 Arg("const", value=128), Arg("const", value=256),
                                 Arg("const", value=128), Arg("const", value=0)))))
    return bases


# ----------------------------------------------------------------------------- source edits
NUMBERS = ["0", "1", "-1", "2", "3", "7", "8", "9", "16", "31", "33", "255", "256", "257",
           "4096", "65536", "-32", "-4096", "2**31 - 1", "2**31", "2**32", "2**63 - 1", "2**63",
           "2**64", "10**12", "10**30", "0.5", "-0.0", "1e30", "1e308", "3.5", "(-7)"]
DTYPE_NAMES = ["float16", "float32", "int16", "int32", "int8", "uint8", "uint16", "bfloat16",
               "int64", "float64", "bool_", "uint32"]
INSERT_TOKENS = ["asc", ".", ",", "(", ")", "[", "]", ":", "+", "-", "*", "//", "%", "=", "0",
                 "1", "-1", "2**40", "None", "True", "not", "and", "or", "if", "else", "lambda",
                 "x", "t", "i", "n", "dtype", "sizeof", "float32", "float16", "int32", "len",
                 "range", "min", "max", "abs", "TILE", "asc.add", "asc.data_copy", "'s'", "1.5",
                 "in", "is", "**", "<<", ">>", "~", "==", "<", "@", "yield", "await", "del"]
STATEMENTS = [
    "asc.pipe_barrier(asc.PipeID.PIPE_ALL)",
    "asc.set_flag(asc.HardEvent.MTE2_V, 0)",
    "asc.wait_flag(asc.HardEvent.MTE2_V, 0)",
    "asc.set_flag(asc.HardEvent.V_MTE3, 7)",
    "asc.wait_flag(asc.HardEvent.V_MTE3, 3)",
    "asc.wait_flag(asc.HardEvent.MTE3_MTE2, 1)",
    "asc.set_flag(asc.HardEvent.S_V, 8)",
    "asc.pipe_barrier(asc.PipeID.PIPE_V)",
    "print(1)",
    "import os",
    "x = lambda: 0",
    "q = [k for k in range(3)]",
    "d = {}",
    "yield 1",
    "global TILE",
    "del t",
    "with open('f') as f: pass",
    "assert False, 'fuzz'",
    "asc.static_assert(False, 'fuzz')",
    "raise ValueError('fuzz')",
    "return 5",
    "while True: pass",
    "for k in range(2**40): pass",
    "x = 1 / 0",
    "x = 1 // 0",
    "k = 0\nwhile k < 10: k = k",
    "asc.duplicate(asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 1, 8), 1.0, 8)",
    "asc.duplicate(asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 196608, 64), 1.0, 64)",
    "asc.duplicate(asc.LocalTensor(asc.float16, asc.TPosition.VECOUT, 0, 16), 1.0, -16)",
    "asc.add(asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 64), "
    "asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 256, 64), "
    "asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 512, 64), 64, 300, "
    "asc.BinaryRepeatParams())",
    "asc.abs(asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, 128), "
    "asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 256, 128), [0, 0], 1, "
    "asc.UnaryRepeatParams())",
    "qq = asc.TQue(asc.TPosition.VECIN, 2)",
    "qq = asc.TQue(asc.TPosition.VECIN, 2)\nqq.deque(asc.float32)",
    "pp = asc.TPipe()\nqq = asc.TQue(asc.TPosition.VECOUT, 1)\npp.init_buffer(qq, 9, 64)",
    "pp = asc.TPipe()\nqq = asc.TQue(asc.TPosition.VECOUT, 1)\npp.init_buffer(qq, 1, 10**9)",
    "asc.static_range(3)",
    "s = 'text' + 1",
    "x = (1, 2)[5]",
    "x = asc.get_block_idx() // 0",
    "x = asc.nosuchthing",
    "x = undefined_name",
    "x = 10**40",
    "x = 2**63 + 1",
    "x = -2**63 - 1",
    "x = 1 << 70",
    "x = 3 % 0",
    "x = 1.0 // 0.0",
    "x: int = 1.5",
    "x = [1, 2, 3]",
    "x = (asc.float32, 1)",
    "x = asc.GlobalTensor()\nx.get_value(0)",
    "async def f(): pass",
    "def f(): pass",
    "class C: pass",
    "try:\n    pass\nexcept Exception:\n    pass",
    "x = 1 if asc.get_block_idx() else 'a'",
]


@dataclass(frozen=True)
class Edit:
    kind: str
    a: int = 0
    b: int = 0
    c: int = 0


EDIT_KINDS = ["delete_token", "dup_token", "swap_tokens", "insert_token", "number", "number",
              "number", "dtype", "dtype", "drop_flag", "drop_flag", "event_id", "event_id",
              "shrink", "shrink", "delete_stmt", "delete_stmt", "dup_stmt", "swap_stmts",
              "insert_stmt", "insert_stmt", "enum", "identifier", "identifier"]


def editable_lines(source: str) -> set[int]:
    """1-based lines edits may touch: kernel bodies and module-level NAME = constant lines."""
    tree = ast.parse(source)
    lines: set[int] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.decorator_list:
            lines.update(range(node.body[0].lineno, node.end_lineno + 1))
        elif isinstance(node, ast.Assign) and isinstance(node.value, (ast.Constant, ast.Tuple)):
            lines.update(range(node.lineno, node.end_lineno + 1))
    return lines


def _tokens(source: str, lines: set[int]) -> list:
    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type in (tokenize.NAME, tokenize.NUMBER, tokenize.OP, tokenize.STRING) \
                    and tok.start[0] in lines:
                out.append(tok)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return out


def _offsets(source: str) -> list[int]:
    starts, pos = [0], 0
    for line in source.splitlines(keepends=True):
        pos += len(line)
        starts.append(pos)
    return starts


def _span(starts, tok) -> tuple[int, int]:
    return starts[tok.start[0] - 1] + tok.start[1], starts[tok.end[0] - 1] + tok.end[1]


def _statements(source: str, lines: set[int]) -> list[ast.stmt]:
    """Simple statements on editable lines (in kernel bodies)."""
    tree = ast.parse(source)
    out = []
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            for s in block if isinstance(block, list) else []:
                if isinstance(s, ast.stmt) and not isinstance(s, (ast.FunctionDef, ast.ClassDef)) \
                        and s.lineno in lines and not isinstance(node, ast.Module):
                    out.append(s)
    out.sort(key=lambda s: (s.lineno, s.col_offset))
    return out


def _stmt_span(starts, s: ast.stmt) -> tuple[int, int]:
    return starts[s.lineno - 1], starts[s.end_lineno]   # whole lines


def _pick(seq, i: int):
    return seq[i % len(seq)] if seq else None


def apply_edit(source: str, e: Edit) -> str:
    """One edit (arguments are taken modulo the number of candidates); the source unchanged if
    the edit has no candidate or the source is not valid Python any more."""
    try:
        lines = editable_lines(source)
    except SyntaxError:
        return source
    starts = _offsets(source)
    toks = _tokens(source, lines)
    k = e.kind

    def splice(a: int, b: int, text: str) -> str:
        return source[:a] + text + source[b:]

    if k in ("delete_token", "dup_token", "insert_token") and toks:
        t = _pick(toks, e.a)
        a, b = _span(starts, t)
        if k == "delete_token":
            return splice(a, b, "")
        if k == "dup_token":
            return splice(b, b, " " + t.string)
        return splice(a, a, _pick(INSERT_TOKENS, e.b) + " ")
    if k == "swap_tokens" and len(toks) > 1:
        i = e.a % len(toks)
        j = (i + 1 + e.b % 3) % len(toks) if e.c % 2 else e.b % len(toks)
        i, j = sorted((i, j))
        if i == j:
            return source
        (a1, b1), (a2, b2) = _span(starts, toks[i]), _span(starts, toks[j])
        return source[:a1] + toks[j].string + source[b1:a2] + toks[i].string + source[b2:]
    if k == "number":
        nums = [t for t in toks if t.type == tokenize.NUMBER]
        t = _pick(nums, e.a)
        if t is None:
            return source
        a, b = _span(starts, t)
        return splice(a, b, "(" + _pick(NUMBERS, e.b) + ")")
    if k == "dtype":
        cands = [t for t in toks if t.type == tokenize.NAME and
                 (t.string in DTYPE_NAMES or t.string == "dtype")]
        t = _pick(cands, e.a)
        if t is None:
            return source
        a, b = _span(starts, t)
        new = _pick(DTYPE_NAMES, e.b)
        if t.string == "dtype":       # x.dtype -> x.dtype of another tensor or a literal dtype
            return splice(a, b, "dtype" if e.c % 2 else new)
        return splice(a, b, new)
    if k == "enum":
        cands = [i for i, t in enumerate(toks[:-2]) if t.string in
                 ("HardEvent", "TPosition", "PipeID") and toks[i + 1].string == "."]
        i = _pick(cands, e.a)
        if i is None:
            return source
        enum_cls = {"HardEvent": asc.HardEvent, "TPosition": asc.TPosition,
                    "PipeID": asc.PipeID}[toks[i].string]
        members = [m.name for m in enum_cls] + ["NOPE"]
        a, b = _span(starts, toks[i + 2])
        return splice(a, b, _pick(members, e.b))
    if k == "identifier":
        names = [t for t in toks if t.type == tokenize.NAME and t.string not in
                 ("asc", "def", "for", "in", "if", "else", "elif", "while", "return", "and",
                  "or", "not", "pass", "True", "False", "None")]
        t = _pick(names, e.a)
        if t is None:
            return source
        pool = sorted({x.string for x in names})
        a, b = _span(starts, t)
        return splice(a, b, _pick(pool, e.b))
    stmts = _statements(source, lines)
    if k in ("drop_flag", "event_id"):
        flagged = [s for s in stmts if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
                   and re.search(r"\b(set_flag|wait_flag)\b", ast.unparse(s.value.func))]
        s = _pick(flagged, e.a)
        if s is None:
            return source
        a, b = _stmt_span(starts, s)
        indent = " " * s.col_offset
        if k == "drop_flag":
            return splice(a, b, indent + "pass\n")
        call = s.value
        if len(call.args) < 2:
            return source
        ids = ["-1", "0", "1", "2", "3", "4", "5", "6", "7", "8", "100", "2**40", "t",
               "asc.get_block_idx()", "1.5"]
        new = ast.Call(call.func, [call.args[0], ast.Name(_pick(ids, e.b))], call.keywords)
        return splice(a, b, indent + ast.unparse(new) + "\n")
    if k == "shrink":
        sized = []
        for s in stmts:
            for node in ast.walk(s):
                if isinstance(node, ast.Call) and node.args:
                    f = ast.unparse(node.func)
                    if f.endswith(("init_buffer", "LocalTensor", ".get", "set_global_buffer",
                                   "data_copy")):
                        sized.append((s, node))
        got = _pick(sized, e.a)
        if got is None:
            return source
        s, call = got
        last = call.args[-1]
        expr = ast.unparse(last)
        new_arg = _pick([f"({expr}) // 2", f"({expr}) - 32", "32", "0", "1", f"({expr}) - 1",
                         f"({expr}) * 1000"], e.b)
        text = source[starts[last.lineno - 1] + last.col_offset:
                      starts[last.end_lineno - 1] + last.end_col_offset]
        a = starts[last.lineno - 1] + last.col_offset
        return splice(a, a + len(text), new_arg)
    if k == "delete_stmt":
        s = _pick(stmts, e.a)
        if s is None:
            return source
        a, b = _stmt_span(starts, s)
        return splice(a, b, " " * s.col_offset + "pass\n")
    if k == "dup_stmt":
        s = _pick(stmts, e.a)
        if s is None:
            return source
        a, b = _stmt_span(starts, s)
        return splice(b, b, source[a:b])
    if k == "swap_stmts" and len(stmts) > 1:
        s1, s2 = _pick(stmts, e.a), _pick(stmts, e.b)
        (a1, b1), (a2, b2) = sorted([_stmt_span(starts, s1), _stmt_span(starts, s2)])
        if a2 < b1 or s1.col_offset != s2.col_offset:
            return source
        return source[:a1] + source[a2:b2] + source[b1:a2] + source[a1:b1] + source[b2:]
    if k == "insert_stmt":
        s = _pick(stmts, e.a)
        if s is None:
            return source
        a, _ = _stmt_span(starts, s)
        indent = " " * s.col_offset
        text = "".join(indent + line + "\n" for line in _pick(STATEMENTS, e.b).split("\n"))
        # an inserted multi-line block keeps its own relative indentation
        return splice(a, a, text)
    return source


def apply_edits(source: str, edits) -> str:
    for e in edits:
        new = apply_edit(source, e)
        if python_valid(new):
            source = new
    return source


EDITS = st.builds(Edit, st.sampled_from(EDIT_KINDS), st.integers(0, 10**6),
                  st.integers(0, 10**6), st.integers(0, 10**6))


@st.composite
def malformed_cases(draw, generated_weight: int = 1):
    """A sample kernel or a generated one, with 1-3 edits."""
    bases = sample_bases()
    if draw(st.integers(0, len(bases) + generated_weight - 1)) < len(bases):
        name, src, recipe = draw(st.sampled_from(bases))
    else:
        spec = draw(kernel_specs(max_ops=3))
        name, src, recipe = "generated", render(spec), recipe_for(spec)
    edits = tuple(draw(st.lists(EDITS, min_size=1, max_size=3)))
    return Case(apply_edits(src, edits), recipe, name, edits)


# ----------------------------------------------------------------------------- subprocess runner
def case_to_json(case: Case) -> dict:
    r = case.recipe
    return {"source": case.source, "base": case.base, "timeout": case.timeout,
            "recipe": {"kernel": r.kernel, "blocks": r.blocks, "seed": r.seed,
                       "args": [[a.kind, a.dtype, a.size, a.value, a.dist] for a in r.args]}}


def case_from_json(d: dict) -> Case:
    r = d["recipe"]
    args = tuple(Arg(k, dt, n, v, dist) for k, dt, n, v, dist in r["args"])
    return Case(d["source"], Recipe(r["kernel"], r["blocks"], args, r["seed"]), d.get("base", ""),
                timeout=d.get("timeout", 0.0))


def run_batch_file(path: str, isolated: bool = False) -> int:
    """Run the cases of a JSON file one after another, printing progress lines (see the module
    doc). The runtime library is loaded first, outside any case's time limit (then ``READY``).
    ``isolated``: this process is itself the separate process of ``run_isolated``."""
    with open(path) as f:
        cases = [case_from_json(d) for d in json.load(f)]
    from ascendc_py.compiler.codegen.runtime_lib import ensure_loaded
    ensure_loaded()
    print("READY", flush=True)
    for i, case in enumerate(cases):
        print(f"CASE {i}", flush=True)
        out = run_case(case, isolate=not isolated)
        print("RESULT " + json.dumps({"i": i, "status": out.status, "class": out.error_class,
                                      "detail": out.detail[-4000:]}), flush=True)
    return 0


if __name__ == "__main__":
    if len(sys.argv) in (3, 4) and sys.argv[1] == "--run-batch":
        sys.exit(run_batch_file(sys.argv[2], sys.argv[3:] == ["--isolated"]))
    print(__doc__)
