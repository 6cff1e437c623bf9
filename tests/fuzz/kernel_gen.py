"""Generators for the fuzz tests: random well-formed kernels with a NumPy model of what they
compute (the malformed sources are in ``source_edits.py``, the runner with its time limits and
crash guard in ``fuzz_runner.py``).

Well-formed kernels (``kernel_specs()``) are drawn as a ``KernelSpec`` (plain data, so hypothesis
can shrink it and a failing case can be pasted into ``@example``) and rendered to Python source
by ``render()``; ``fuzz_runner.load_kernel()`` writes the source to a real file and imports it
(the compiler reads kernels with ``inspect``). A kernel copies ``n_in`` inputs tile by tile into
UB (through TQues, or into static LocalTensors synchronised with set_flag/wait_flag or
pipe_barrier), fills its output and scratch tensors with ``duplicate``, runs a random sequence of
vector ops in count form and masked form (contiguous and bit masks, repeats, block and repeat
strides, sub-tensor offsets) and copies the output and every scratch tensor back to GM.
``model()`` computes the same sequence with each op's ``REGISTRY[name].reference`` and an error
bound per element (0 where the result must be exact, otherwise what the approximate ops'
documented ulp tolerance can become through the later ops), and ``check()`` compares.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Union

import numpy as np
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # the --run-batch subprocess, when ascendc_py is not installed
    sys.path.append(str(ROOT))

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


