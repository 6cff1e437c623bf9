"""The timing model, kept by the generated native code (no Python per instruction).

Model (after Huawei's CA model and msKPP; reference/aicore_params.md §2): the scalar unit issues
in program order (``T_SCALAR``); every vector/DMA instruction enters its pipe's in-order queue
(at most 32 waiting) and gets ``start = max(issue, pipe free)``, an occupancy and a latency;
pipes run in parallel and depend on each other only through explicit synchronisation:
``set_flag`` fires when all earlier work of the source pipe has completed and blocks that pipe
until then, ``wait_flag`` holds the destination pipe until the flag's time, ``pipe_barrier``
drains a pipe, and ``enque/deque/alloc_tensor/free_tensor`` are the flags they imply per buffer.

``TimingEmitter`` is the codegen hook (calls at each intrinsic); the ``asc_tm_*`` functions are
defined once in the runtime library. Costs come from the table in ``simulator/timing_params``.
"""
from __future__ import annotations

from llvmlite import ir as L

from ...dsl.types import NUM_PIPES, HardEvent, PipeID, TPosition
from ...simulator import abi
from ...simulator import timing_params as TP
from ..ops import REGISTRY, Family
from .core import FnBuilder
from .timing_gm import gm_transfer
from .types import F64, I64, PTR, intrinsic

#: producer and consumer pipe of each queue position (the flags enque/deque imply)
POSITION_PIPES = {
    TPosition.VECIN: (PipeID.PIPE_MTE2, PipeID.PIPE_V),
    TPosition.VECOUT: (PipeID.PIPE_V, PipeID.PIPE_MTE3),
    TPosition.VECCALC: (PipeID.PIPE_V, PipeID.PIPE_V),
    TPosition.A1: (PipeID.PIPE_MTE2, PipeID.PIPE_MTE1),
    TPosition.B1: (PipeID.PIPE_MTE2, PipeID.PIPE_MTE1),
    TPosition.C1: (PipeID.PIPE_MTE2, PipeID.PIPE_MTE1),
    TPosition.A2: (PipeID.PIPE_MTE1, PipeID.PIPE_M),
    TPosition.B2: (PipeID.PIPE_MTE1, PipeID.PIPE_M),
    TPosition.C2: (PipeID.PIPE_MTE1, PipeID.PIPE_M),
    TPosition.CO1: (PipeID.PIPE_M, PipeID.PIPE_FIX),
    TPosition.CO2: (PipeID.PIPE_FIX, PipeID.PIPE_MTE3),
}

TM_FUNCTIONS: dict[str, tuple[int, callable]] = {}
#: timing functions inlined into their callers (the copy functions of the runtime library call
#: ``dma`` once per copy: inlined, the timing-off test costs a load and a branch, not a call)
TM_INLINE: set[str] = set()


def tm(nargs: int, inline: bool = False):
    def deco(fn):
        TM_FUNCTIONS[fn.__name__] = (nargs, fn)
        if inline:
            TM_INLINE.add(fn.__name__)
        return fn
    return deco


def tm_signature(name: str) -> L.FunctionType:
    return L.FunctionType(L.VoidType(), [PTR] + [I64] * TM_FUNCTIONS[name][0])


def declare_tm(module: L.Module, name: str) -> L.Function:
    full = f"asc_tm_{name}"
    fn = module.globals.get(full)
    if fn is None:
        fn = L.Function(module, tm_signature(name), name=full)
    return fn


class _TB(FnBuilder):
    """FnBuilder with float helpers for the cost table."""

    def cost(self, index) -> L.Value:
        table = self.ctx_ptr(abi.COSTS)
        idx = index if isinstance(index, L.Value) else self.i64(index)
        return self.b.load(self.b.gep(table, [idx], source_etype=F64), typ=F64)

    def f(self, v) -> L.Value:
        return self.b.sitofp(v, F64)

    def ceil_i(self, v) -> L.Value:
        ceil = intrinsic(self.module, "llvm.ceil.f64", F64, [F64])
        return self.b.fptosi(self.b.call(ceil, [v]), I64)

    def max(self, a, c) -> L.Value:
        return self.b.select(self.b.icmp_signed(">", a, c), a, c)

    def add_slot(self, slot, value) -> None:
        self.st(slot, self.b.add(self.ld(slot), value))

    def count(self, index, value) -> None:
        counters = self.ctx_ptr(abi.COUNTERS)
        p = self.b.gep(counters, [index], source_etype=I64)
        self.b.store(self.b.add(self.b.load(p, typ=I64), value), p)

    def trace(self, start, occ, lat, pipe, site, op, when=None) -> None:
        """One event (``abi.TRACE_FIELDS``: start, occupancy, latency, pipe, site, op) in the
        trace buffer when tracing is on (and ``when``, an i1, holds); a full buffer counts it
        in TRACE_DROPPED."""
        b = self.b
        buf = self.ld(abi.TRACE_PTR)
        on = b.icmp_signed("!=", buf, self.i64(0))
        with b.if_then(on if when is None else b.and_(on, when)):
            length = self.ld(abi.TRACE_LEN)
            with b.if_else(b.icmp_signed("<", length, self.ld(abi.TRACE_CAP))) as (room, full):
                with room:
                    base = b.mul(length, self.i64(abi.TRACE_FIELDS))
                    ptr = b.inttoptr(buf, PTR)
                    for k, v in enumerate((start, occ, lat, pipe, site, op)):
                        b.store(v, b.gep(ptr, [b.add(base, self.i64(k))], source_etype=I64))
                    self.st(abi.TRACE_LEN, b.add(length, self.i64(1)))
                with full:
                    self.add_slot(abi.TRACE_DROPPED, self.i64(1))


def define_all(module: L.Module, names=None) -> None:
    """Define the timing functions ``names`` (default: all) in ``module``."""
    for name in TM_FUNCTIONS if names is None else names:
        nargs, body = TM_FUNCTIONS[name]
        func = L.Function(module, tm_signature(name), name=f"asc_tm_{name}")
        func.attributes.add("nounwind")
        if name in TM_INLINE:
            func.attributes.add("alwaysinline")
        tb = _TB(module, func)
        off = tb.b.icmp_signed("==", tb.ld(abi.TIMING_ON), tb.i64(0))
        with tb.b.if_then(off, likely=False):
            tb.b.ret_void()
            tb.b.position_at_end(func.append_basic_block("dead"))
        body(tb, *func.args[1:])
        if not tb.b.block.is_terminated:
            tb.b.ret_void()
        tb.alloca_builder.branch(func.basic_blocks[1])
        L.IRBuilder(tb.fail_block).ret_void()
        for blk in func.blocks:
            if not blk.is_terminated:
                L.IRBuilder(blk).unreachable()


def _issue(tb: _TB, pipe, occ, lat, op, site, occ_at=None) -> None:
    """Put one instruction on ``pipe``'s timeline (see the module docstring). ``occ_at``: a
    function of the start cycle giving the occupancy instead of ``occ`` (GM transfers)."""
    b = tb.b
    t = tb.ld(abi.T_SCALAR)
    # queue full: the instruction QUEUE_DEPTH places earlier must have left the queue
    n = tb.ld(b.add(tb.i64(abi.PIPE_COUNT), pipe))
    ring = b.add(tb.ld(abi.RING_BASE), b.mul(pipe, tb.i64(abi.QUEUE_DEPTH)))
    ring_slot = b.add(ring, b.urem(n, tb.i64(abi.QUEUE_DEPTH)))
    oldest = tb.ld(ring_slot)
    full = b.and_(b.icmp_signed(">=", n, tb.i64(abi.QUEUE_DEPTH)), b.icmp_signed(">", oldest, t))
    tb.add_slot(abi.STALL_QUEUE, b.select(full, b.sub(oldest, t), tb.i64(0)))
    t = b.select(full, oldest, t)
    free_slot = b.add(tb.i64(abi.PIPE_FREE), pipe)
    free = tb.ld(free_slot)
    idle = b.select(b.icmp_signed(">", t, free), b.sub(t, free), tb.i64(0))
    tb.add_slot(b.add(tb.i64(abi.STALL_SCALAR), pipe), idle)
    start = tb.max(t, free)
    if occ_at is not None:
        occ = occ_at(start)
    tb.st(free_slot, b.add(start, occ))
    end = b.add(b.add(start, occ), lat)
    done_slot = b.add(tb.i64(abi.PIPE_DONE), pipe)
    tb.st(done_slot, tb.max(tb.ld(done_slot), end))
    tb.add_slot(b.add(tb.i64(abi.PIPE_BUSY), pipe), occ)
    tb.st(ring_slot, start)
    tb.st(b.add(tb.i64(abi.PIPE_COUNT), pipe), b.add(n, tb.i64(1)))
    tb.st(abi.T_SCALAR, b.add(t, tb.ceil_i(tb.cost(TP.ISSUE_CYCLES))))
    tb.count(b.add(tb.i64(TP.COUNT_BASE), op), tb.i64(1))
    tb.trace(start, occ, lat, pipe, site, op)


@tm(8, inline=True)
def vec(tb: _TB, op, cls, fam, count, esize, a0, a1, site):
    """A vector instruction over ``count`` elements; a1 >= 0 for two-source ops (bank rule)."""
    b = tb.b
    base = b.add(tb.i64(TP.CLASS_BASE), b.mul(b.add(b.mul(cls, tb.i64(len(TP.FAMILIES))), fam),
                                               tb.i64(2)))
    cpr = tb.cost(base)
    lat = tb.ceil_i(tb.cost(b.add(base, tb.i64(1))))
    repeats = b.sdiv(b.add(b.mul(count, esize), tb.i64(255)), tb.i64(256))
    # UB bank groups: blocks of a repeat sit in groups (addr>>5)&15 .. +7; two sources whose
    # group ranges overlap read some group twice per repeat: 2 cycles per repeat instead of 1.
    d = b.and_(b.sub(b.ashr(a0, tb.i64(5)), b.ashr(a1, tb.i64(5))), tb.i64(15))
    disjoint = b.icmp_signed("==", d, tb.i64(8))
    two = b.and_(b.icmp_signed(">=", a1, tb.i64(0)),
                 b.fcmp_ordered("!=", tb.cost(TP.BANK_RULE), L.Constant(F64, 0.0)))
    bank = b.select(b.and_(two, b.xor(disjoint, L.Constant(disjoint.type, 1))),
                    L.Constant(F64, 2.0), L.Constant(F64, 1.0))
    cpr = b.select(b.fcmp_ordered(">", bank, cpr), bank, cpr)
    occ = tb.ceil_i(b.fmul(tb.f(repeats), cpr))
    least = tb.ceil_i(tb.cost(TP.VEC_MIN))     # an instruction of 1-3 repeats still takes ~3
    occ = b.select(b.icmp_signed("<", occ, least), least, occ)
    occ = b.select(b.icmp_signed(">", count, tb.i64(0)), occ, tb.i64(0))
    tb.count(b.add(tb.i64(TP.ELEM_BASE), op), count)
    _issue(tb, tb.i64(int(PipeID.PIPE_V)), occ, lat, op, site)


def _knot(tb: _TB, path, size) -> L.Value:
    """Cost-table index of the last knot of ``path``'s lone-copy curve at or below ``size``
    (f64 bytes; branch-free count): its fields are (bytes, cycles, cycles per byte onwards)."""
    b = tb.b
    curve = b.add(tb.i64(TP.CURVE_BASE), b.mul(path, tb.i64(TP.CURVE_FIELDS)))
    k = tb.i64(0)
    for j in range(1, TP.KNOTS_MAX):
        below = b.fcmp_ordered("<=", tb.cost(b.add(curve, tb.i64(j * TP.KNOT_FIELDS))), size)
        k = b.add(k, b.zext(below, I64))
    return b.add(curve, b.mul(k, tb.i64(TP.KNOT_FIELDS)))


def plateau_rate(tb: _TB, path) -> L.Value:
    """The fastest one core moves data on ``path`` (f64 bytes per cycle): the slope of its
    curve's last knot, i.e. ``DmaPath.plateau_bytes_per_cycle`` (the measured plateau, or the
    width of an unmeasured path). ``path`` is the path's index in ``TP.PATHS``."""
    path = path if isinstance(path, L.Value) else tb.i64(path)
    beyond = L.Constant(F64, TP.NO_KNOT / 2)     # past every real knot
    slope = tb.cost(tb.b.add(_knot(tb, path, beyond), tb.i64(2)))
    return tb.b.fdiv(L.Constant(F64, 1.0), slope)


@tm(5, inline=True)
def dma(tb: _TB, path, nbytes, bursts, op, site):
    """One copy of ``nbytes`` in ``bursts`` equal bursts on ``path`` (the rule is stated in
    ``simulator/dma_costs.py``; ``DmaCosts.copy_cycles`` is the same in Python): the path's
    lone-copy curve plus the per-burst cost. Its fixed part (the curve at 0 bytes) is latency,
    which holds no bandwidth; the rest is the data phase, which a GM transfer moves through this
    core's GM port, shared by reads and writes, and records as HBM demand (``timing_gm.py``;
    chip-level sharing is settled after the launch by ``simulator/contention.py``). The whole
    cost occupies the path's pipe."""
    b = tb.b
    base = b.add(tb.i64(TP.PATH_BASE), b.mul(path, tb.i64(TP.PATH_FIELDS)))
    size = tb.f(nbytes)
    at = _knot(tb, path, size)
    cycles = b.fadd(tb.cost(b.add(at, tb.i64(1))),
                    b.fmul(b.fsub(size, tb.cost(at)), tb.cost(b.add(at, tb.i64(2)))))
    # bursts: request units issued beyond those of one contiguous copy of the same bytes
    extra_slot = tb.alloca_builder.alloca(I64, name="burst_extra")
    b.store(tb.i64(0), extra_slot)
    with b.if_then(b.icmp_signed(">", bursts, tb.i64(1))):   # integer divisions only here
        unit = b.fptosi(tb.cost(TP.BURST_BYTES), I64)
        units = b.sub(b.mul(bursts, tb.ceil_div(tb.ceil_div(nbytes, bursts), unit)),
                      tb.ceil_div(nbytes, unit))
        units = tb.smax(units, tb.i64(0))
        b.store(tb.ceil_i(b.fmul(tb.f(units), tb.cost(TP.BURST_CYCLES))), extra_slot)
    extra = b.load(extra_slot, typ=I64)
    latency = tb.ceil_i(tb.cost(b.add(base, tb.i64(1))))
    transfer = tb.smax(b.sub(b.add(tb.ceil_i(cycles), extra), latency), tb.i64(0))
    gm_kind = b.fptosi(tb.cost(b.add(base, tb.i64(3))), I64)
    pipe = b.fptosi(tb.cost(b.add(base, tb.i64(2))), I64)
    moves = b.icmp_signed(">", nbytes, tb.i64(0))
    tb.count(b.add(tb.i64(TP.ELEM_BASE), op), nbytes)
    tb.count(b.add(tb.i64(TP.BYTES_BASE), path), nbytes)
    _issue(tb, pipe, None, tb.i64(0), op, site, occ_at=lambda start: b.select(
        moves, gm_transfer(tb, gm_kind, start, latency, transfer, nbytes), tb.i64(0)))


@tm(6)
def cube(tb: _TB, op, m, n, k, k0_slot, site):
    """An mmad on PIPE_M: max(ceil(m/M0)·ceil(n/N0)·ceil(k/k0) + CUBE_ISSUE, CUBE_MIN) cycles (k0
    from the cost table slot ``k0_slot``, per input dtype; ``CubeCosts.mmad_occupancy`` is the
    same in Python) divided by this core's share of the cube (CUBE_RATE), plus CUBE_LATENCY;
    m·n·k MACs go to the op's element counter (2 flops each)."""
    b = tb.b

    def blocks(v, slot):
        return b.fdiv(tb.f(v), tb.cost(slot))
    fm = b.call(intrinsic(tb.module, "llvm.ceil.f64", F64, [F64]), [blocks(m, TP.CUBE_M0)])
    fn = b.call(intrinsic(tb.module, "llvm.ceil.f64", F64, [F64]), [blocks(n, TP.CUBE_N0)])
    fk = b.call(intrinsic(tb.module, "llvm.ceil.f64", F64, [F64]), [b.fdiv(tb.f(k),
                                                                           tb.cost(k0_slot))])
    steps = b.fadd(b.fmul(b.fmul(fm, fn), fk), tb.cost(TP.CUBE_ISSUE))
    least = tb.cost(TP.CUBE_MIN)
    steps = b.select(b.fcmp_ordered("<", steps, least), least, steps)
    occ = tb.ceil_i(b.fdiv(steps, tb.cost(TP.CUBE_RATE)))
    work = b.icmp_signed(">", b.mul(b.mul(m, n), k), tb.i64(0))
    occ = b.select(work, occ, tb.i64(0))
    lat = b.select(work, tb.ceil_i(tb.cost(TP.CUBE_LATENCY)), tb.i64(0))
    tb.count(b.add(tb.i64(TP.ELEM_BASE), op), b.mul(b.mul(m, n), k))
    _issue(tb, tb.i64(int(PipeID.PIPE_M)), occ, lat, op, site)


@tm(2)
def scalar_access(tb: _TB, store, op):
    """get_value/set_value: the scalar unit performs the access and waits for it."""
    index = tb.b.select(tb.b.icmp_signed("!=", store, tb.i64(0)), tb.i64(TP.STORE),
                        tb.i64(TP.LOAD))
    cycles = tb.ceil_i(tb.cost(index))
    tb.add_slot(abi.T_SCALAR, cycles)
    tb.count(tb.b.add(tb.i64(TP.COUNT_BASE), op), tb.i64(1))


@tm(3)
def set_time(tb: _TB, pipe, slot, op):
    """set_flag (or enque/free_tensor): fires once all earlier work of ``pipe`` completed."""
    b = tb.b
    t = tb.ld(abi.T_SCALAR)
    is_s = b.icmp_signed("==", pipe, tb.i64(int(PipeID.PIPE_S)))
    safe = b.select(is_s, tb.i64(int(PipeID.PIPE_V)), pipe)
    free_slot = b.add(tb.i64(abi.PIPE_FREE), safe)
    when = tb.max(tb.max(t, tb.ld(free_slot)), tb.ld(b.add(tb.i64(abi.PIPE_DONE), safe)))
    fire = b.select(is_s, t, when)
    with b.if_then(b.xor(is_s, L.Constant(is_s.type, 1))):
        tb.st(free_slot, b.add(when, tb.ceil_i(tb.cost(TP.FLAG_CYCLES))))
    # a wait_flag issued earlier in program order left its pipe's marker -(1 + pipe): that
    # pipe's queue has been blocked since, so its next instruction starts after the fire
    old = tb.ld(slot)
    with b.if_then(b.icmp_signed("<", old, tb.i64(0))):
        waiter = b.sub(tb.i64(-1), old)
        wfree = b.add(tb.i64(abi.PIPE_FREE), waiter)
        tb.st(wfree, tb.max(tb.ld(wfree), fire))
    tb.st(slot, fire)
    tb.count(b.add(tb.i64(TP.COUNT_BASE), op), tb.i64(1))


@tm(4)
def wait_time(tb: _TB, pipe, slot, pending, op):
    """wait_flag (or deque/alloc_tensor): ``pipe`` starts nothing before the slot's time.

    ``pending``: the matching set_flag comes later in program order; mark the slot so that the
    set holds this pipe when it fires (the scalar unit can still issue that set, since only the
    destination pipe's queue is blocked). Instructions of this pipe issued in between are
    scheduled without the hold, a documented approximation."""
    b = tb.b
    with b.if_then(b.icmp_signed("!=", pending, tb.i64(0))):
        tb.st(slot, b.sub(tb.i64(-1), pipe))
        tb.count(b.add(tb.i64(TP.COUNT_BASE), op), tb.i64(1))
        tb.b.ret_void()
        tb.b.position_at_end(tb.func.append_basic_block("dead"))
    fired = tb.ld(slot)
    t = tb.ld(abi.T_SCALAR)
    is_s = b.icmp_signed("==", pipe, tb.i64(int(PipeID.PIPE_S)))
    free_slot = b.add(tb.i64(abi.PIPE_FREE), pipe)
    ready = b.select(is_s, t, tb.max(t, tb.ld(free_slot)))
    stall = b.select(b.icmp_signed(">", fired, ready), b.sub(fired, ready), tb.i64(0))
    tb.add_slot(b.add(tb.i64(abi.STALL_FLAG), pipe), stall)
    with b.if_else(is_s) as (then, otherwise):
        with then:
            tb.st(abi.T_SCALAR, tb.max(t, fired))
        with otherwise:
            tb.st(free_slot, tb.max(tb.ld(free_slot), fired))
    tb.count(b.add(tb.i64(TP.COUNT_BASE), op), tb.i64(1))


@tm(2)
def barrier(tb: _TB, pipe, op):
    """pipe_barrier: the pipe (or every pipe and the scalar unit, for PIPE_ALL) drains."""
    b = tb.b
    is_all = b.icmp_signed("==", pipe, tb.i64(int(PipeID.PIPE_ALL)))
    with b.if_else(is_all) as (then, otherwise):
        with then:
            issue = tb.ld(abi.T_SCALAR)
            t = issue
            for p in range(NUM_PIPES):
                t = tb.max(t, tb.max(tb.ld(abi.PIPE_DONE + p), tb.ld(abi.PIPE_FREE + p)))
            tb.add_slot(abi.STALL_FLAG + int(PipeID.PIPE_S), b.sub(t, issue))  # scalar waits
            tb.st(abi.T_SCALAR, t)
            for p in range(NUM_PIPES):
                tb.st(abi.PIPE_FREE + p, t)
        with otherwise:
            free_slot = b.add(tb.i64(abi.PIPE_FREE), pipe)
            tb.st(free_slot, tb.max(tb.ld(free_slot), tb.ld(b.add(tb.i64(abi.PIPE_DONE), pipe))))
    tb.count(b.add(tb.i64(TP.COUNT_BASE), op), tb.i64(1))


# ----------------------------------------------------------------------------- codegen hook
class TimingEmitter:
    """Codegen hook for the scalar unit's own work (the runtime library times everything else)."""

    def call(self, cg, name: str, args) -> None:
        cg.b.call(declare_tm(cg.module, name), [cg.ctx] + [cg._as_i64(a) for a in args])

    def scalar(self, cg, ops: int) -> None:
        """``ops`` scalar ALU operations issued by the scalar unit."""
        if ops > 0:  # ALU cycles per op come from the cost table, read once per launch
            cg.st(abi.T_SCALAR, cg.b.add(cg.ld(abi.T_SCALAR), cg.b.mul(self._alu(cg),
                                                                       cg.i64(ops))))

    def _alu(self, cg):
        value = getattr(cg, "_alu_cycles", None)
        if value is None:  # loaded in the entry block, so it dominates every use
            b = cg.alloca_builder
            table = b.inttoptr(b.load(b.gep(cg.ctx, [cg.i64(abi.COSTS)], source_etype=I64),
                                      typ=I64), PTR)
            value = b.fptosi(b.load(b.gep(table, [cg.i64(TP.ALU)], source_etype=F64), typ=F64),
                             I64)
            cg._alu_cycles = value
        return value

    def barrier(self, cg, pipe: int) -> None:
        self.call(cg, "barrier", [pipe, TP.OP_INDEX["pipe_barrier"]])


__all__ = ["TimingEmitter", "define_all", "declare_tm", "POSITION_PIPES", "Family", "REGISTRY", "HardEvent"]
