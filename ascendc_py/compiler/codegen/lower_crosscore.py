"""Codegen and runtime library of cross-core synchronisation (``ops/crosscore.py``).

Sub-cores are host threads running native code; they meet in one shared int64 array per launch
group (layout and semantics: ``simulator/xcore_layout.py``) whose address is in
``ctx[abi.XC_STATE]``. Every access to it is made under its spin lock. A wait whose counter is
0 marks its sub-core blocked and polls (``sched_yield``, then ``usleep`` with back-off): no
Python runs while a sub-core waits. A waiter gives up with

- ``XCORE_DEADLOCK`` when every sub-core of its group has finished or is blocked on a counter
  that is 0 (nobody is left to set a flag: the hang it would be on hardware),
- ``XCORE_ABORTED`` when another sub-core faulted (the runtime reports that fault instead),
- ``LOOP_LIMIT`` when the launch watchdog expired (``ctx[LOOP_BUDGET]`` negative).

Timing: a set fires when all earlier work of its pipe is done (``asc_tm_xc_set``); the wait
that takes it holds this sub-core's scalar unit (so every later instruction) until the set's
cycle plus ``xcore_layout.CROSS_CORE_LATENCY`` (Ascend C: "all instructions after
CrossCoreWaitFlag are blocked"), recorded as cross-core wait stall in ``ctx[abi.XC_STALL]``
and as a trace event on the scalar lane. A barrier takes the latest arrival.
"""
from __future__ import annotations

from llvmlite import ir as L

from ...dsl.types import NUM_PIPES, PipeID
from ...simulator import abi
from ...simulator import timing_params as TP
from ...simulator import xcore_layout as X
from .. import ir
from ..ops.crosscore import MAX_FLAG_ID
from .core import Codegen, FnBuilder, lowering
from .intrinsics import call_checked
from .rtfuncs import call_rt, call_tm, counted, rt
from .runtime_lib import declare_rt
from .timing import _TB, tm
from .types import I1, I32, I64, PTR

E = abi.ErrorCode
AIV, AIC = 0, 1
MODE_SYNC_ALL = 3    # internal mode of sync_all(is_aiv_only=False): a barrier of every sub-core


# ----------------------------------------------------------------------------- codegen
@lowering("cross_core_set_flag")
def lower_set(cg: Codegen, s: ir.Intrinsic) -> None:
    flag = cg._as_i64(cg.expr(s.args[0]))
    mode, pipe = s.attr("mode"), s.attr("pipe")
    call_checked(cg, declare_rt(cg.module, "cross_core_set_flag"),
                 [flag, cg.i64(mode), cg.i64(pipe), cg.i64(TP.OP_INDEX[s.op])], s.op, (mode,))


@lowering("cross_core_wait_flag")
def lower_wait(cg: Codegen, s: ir.Intrinsic) -> None:
    flag = cg._as_i64(cg.expr(s.args[0]))
    call_checked(cg, declare_rt(cg.module, "cross_core_wait_flag"),
                 [flag, cg.i64(s.attr("pipe")), cg.i64(TP.OP_INDEX[s.op])], s.op)


@lowering("sync_all")
def lower_sync_all(cg: Codegen, s: ir.Intrinsic) -> None:
    aiv_only = int(bool(s.attr("aiv_only")))
    call_checked(cg, declare_rt(cg.module, "sync_all"),
                 [cg.i64(aiv_only), cg.i64(TP.OP_INDEX[s.op])], s.op, (aiv_only,))


# ----------------------------------------------------------------------------- shared state
class _State:
    """IR helpers over the shared array of ``fb``'s launch group."""

    def __init__(self, fb: FnBuilder):
        self.fb, self.b = fb, fb.b
        self.base = fb.b.inttoptr(fb.ld(abi.XC_STATE), PTR)

    def i(self, v) -> L.Value:
        return self.fb.i64(v) if isinstance(v, int) else v

    def ptr(self, idx) -> L.Value:
        return self.b.gep(self.base, [self.i(idx)], source_etype=I64)

    def ld(self, idx) -> L.Value:
        return self.b.load(self.ptr(idx), typ=I64)

    def st(self, idx, v) -> None:
        self.b.store(self.i(v), self.ptr(idx))

    def unit(self, u, field: int) -> L.Value:
        b = self.b
        return b.add(b.mul(self.i(u), self.i(X.UNIT_SLOTS)), self.i(X.HEADER_SLOTS + field))

    def cnt_ring(self, u, f) -> L.Value:
        return self.b.add(self.unit(u, X.U_CNT), self.b.mul(self.i(f), self.i(X.RING_SLOTS)))

    def arr_ring(self, u, kind, f) -> L.Value:
        b = self.b
        k = b.add(b.mul(self.i(kind), self.i(X.NFLAGS)), self.i(f))
        return b.add(self.unit(u, X.U_ARR), b.mul(k, self.i(X.RING_SLOTS)))

    def count(self, ring) -> L.Value:
        return self.ld(self.b.add(ring, self.i(1)))

    def push(self, ring, stamp) -> None:
        b = self.b
        head, n = self.ld(ring), self.count(ring)
        pos = b.and_(b.add(head, n), self.i(X.RING_CAP - 1))
        self.st(b.add(b.add(ring, self.i(2)), pos), stamp)
        self.st(b.add(ring, self.i(1)), b.add(n, self.i(1)))

    def pop(self, ring) -> L.Value:
        b = self.b
        head = self.ld(ring)
        stamp = self.ld(b.add(b.add(ring, self.i(2)), head))
        self.st(ring, b.and_(b.add(head, self.i(1)), self.i(X.RING_CAP - 1)))
        self.st(b.add(ring, self.i(1)), b.sub(self.count(ring), self.i(1)))
        return stamp

    def call_fn(self, slot: int, fnty: L.FunctionType, args) -> None:
        b = self.b
        addr = self.ld(slot)
        with b.if_then(b.icmp_signed("!=", addr, self.i(0))):
            b.call(b.inttoptr(addr, fnty.as_pointer()), args)

    def backoff(self, spins, max_micros: int) -> None:
        """One poll's pause: sched_yield for the first 64 polls, then usleep of as many
        microseconds as polls so far, at most ``max_micros`` (``spins``: the poll counter)."""
        b = self.b
        k = b.load(spins, typ=I64)
        b.store(b.add(k, self.i(1)), spins)
        with b.if_else(b.icmp_signed("<", k, self.i(64))) as (fast, slow):
            with fast:
                self.call_fn(X.YIELD_FN, L.FunctionType(I32, []), [])
            with slow:
                micros = b.select(b.icmp_signed(">", k, self.i(max_micros)),
                                  self.i(max_micros), k)
                self.call_fn(X.SLEEP_FN, L.FunctionType(I32, [I32]), [b.trunc(micros, I32)])

    def lock(self) -> None:
        b, func = self.b, self.fb.func
        head = func.append_basic_block("xc.lock")
        done = func.append_basic_block("xc.locked")
        b.branch(head)
        b.position_at_end(head)
        res = b.cmpxchg(self.ptr(X.LOCK), self.i(0), self.i(1), "acquire", "monotonic")
        ok = b.extract_value(res, 1)
        with b.if_then(b.xor(ok, L.Constant(I1, 1))):
            self.call_fn(X.YIELD_FN, L.FunctionType(I32, []), [])
        b.cbranch(ok, done, head)
        b.position_at_end(done)

    def unlock(self) -> None:
        self.b.atomic_rmw("xchg", self.ptr(X.LOCK), self.i(0), "release")


def _max(b: L.IRBuilder, a, c) -> L.Value:
    return b.select(b.icmp_signed(">", a, c), a, c)


def _check_flag(fb: FnBuilder, flag, site) -> None:
    b = fb.b
    fb.fail_with(b.icmp_signed("==", fb.ld(abi.XC_STATE), fb.i64(0)), E.XCORE_MODE, site,
                 fb.i64(-1))
    bad = b.or_(b.icmp_signed("<", flag, fb.i64(0)), b.icmp_signed(">", flag,
                                                                     fb.i64(MAX_FLAG_ID)))
    fb.fail_with(bad, E.XCORE_FLAG_RANGE, site, flag)


# ----------------------------------------------------------------------------- signal
@rt("flag", "mode")
def xc_signal(fb: FnBuilder, flag, mode, site):
    """Under the lock: this sub-core sets ``flag`` in ``mode`` (0, 1, 2, or 3 = every sub-core)
    with the stamp in ctx[XC_TIME]; deliver to the receivers' counters when it completes a
    barrier (or at once for mode 2 from the AIC). Errors: XCORE_MODE, XCORE_OVERFLOW."""
    b = fb.b
    s = _State(fb)
    u = fb.ld(abi.XC_UNIT)
    me_type, me_block = s.ld(s.unit(u, X.U_TYPE)), s.ld(s.unit(u, X.U_BLOCK))
    is_aic = b.icmp_signed("==", me_type, fb.i64(AIC))
    naiv, has_aic = s.ld(X.NAIV), s.ld(X.HAS_AIC)
    # partners this launch lacks: mode 1 needs the AIV pair of a mix kernel (not from the AIC),
    # mode 2 needs both an AIC and AIVs
    m1 = b.icmp_signed("==", mode, fb.i64(1))
    m2 = b.icmp_signed("==", mode, fb.i64(2))
    bad1 = b.and_(m1, b.or_(is_aic, b.icmp_signed("==", has_aic, fb.i64(0))))
    bad2 = b.and_(m2, b.or_(b.icmp_signed("==", has_aic, fb.i64(0)),
                            b.icmp_signed("==", naiv, fb.i64(0))))
    fb.fail_with(b.or_(bad1, bad2), E.XCORE_MODE, site, mode, me_type)
    direct = b.and_(m2, is_aic)                 # AIC -> its AIVs: no barrier
    kind = b.select(m2, fb.i64(X.KIND_TO_AIC),
                    b.select(m1, fb.i64(X.KIND_PAIR),
                             b.select(b.icmp_signed("==", mode, fb.i64(MODE_SYNC_ALL)),
                                      fb.i64(X.KIND_ALL), fb.i64(X.KIND_TYPE))))
    stamp = fb.ld(abi.XC_TIME)
    err = fb.alloca_builder.alloca(I64, name="err")
    err_unit = fb.alloca_builder.alloca(I64, name="err_unit")
    t_max = fb.alloca_builder.alloca(I64, name="t_max")
    ready = fb.alloca_builder.alloca(I1, name="ready")
    b.store(fb.i64(0), err)
    b.store(fb.i64(0), err_unit)
    b.store(stamp, t_max)
    b.store(direct, ready)
    nunits = s.ld(X.NUNITS)

    def member(v) -> L.Value:
        v_type, v_block = s.ld(s.unit(v, X.U_TYPE)), s.ld(s.unit(v, X.U_BLOCK))
        same_type = b.icmp_signed("==", v_type, me_type)
        my_aiv = b.and_(b.icmp_signed("==", v_block, me_block),
                        b.icmp_signed("==", v_type, fb.i64(AIV)))
        k_type = b.icmp_signed("==", kind, fb.i64(X.KIND_TYPE))
        k_all = b.icmp_signed("==", kind, fb.i64(X.KIND_ALL))
        return b.or_(k_all, b.select(k_type, same_type, my_aiv))

    def receiver(v) -> L.Value:
        v_type, v_block = s.ld(s.unit(v, X.U_TYPE)), s.ld(s.unit(v, X.U_BLOCK))
        here = b.icmp_signed("==", v_block, me_block)
        to_aic = b.and_(here, b.icmp_signed("==", v_type, fb.i64(AIC)))
        to_aivs = b.and_(here, b.icmp_signed("==", v_type, fb.i64(AIV)))
        barrier_to_aic = b.and_(b.icmp_signed("==", kind, fb.i64(X.KIND_TO_AIC)),
                                b.xor(direct, L.Constant(I1, 1)))
        return b.select(direct, to_aivs, b.select(barrier_to_aic, to_aic, member(v)))

    def overflow(n, v) -> None:   # the first receiver whose counter is full
        full = b.icmp_signed(">=", n, fb.i64(X.COUNTER_LIMIT))
        with b.if_then(b.and_(full, b.icmp_signed("==", b.load(err, typ=I64), fb.i64(0)))):
            b.store(fb.i64(int(E.XCORE_OVERFLOW)), err)
            b.store(v, err_unit)

    s.lock()
    with b.if_then(b.xor(direct, L.Constant(I1, 1))):
        mine = s.arr_ring(u, kind, flag)
        overflow(s.count(mine), u)
        with b.if_then(b.icmp_signed("==", b.load(err, typ=I64), fb.i64(0))):
            s.push(mine, stamp)
            b.store(L.Constant(I1, 1), ready)

            def check(v):
                with b.if_then(member(v)):
                    empty = b.icmp_signed("==", s.count(s.arr_ring(v, kind, flag)), fb.i64(0))
                    with b.if_then(empty):
                        b.store(L.Constant(I1, 0), ready)
            counted(fb, nunits, check)
            with b.if_then(b.load(ready, typ=I1)):
                def take(v):
                    with b.if_then(member(v)):
                        t = s.pop(s.arr_ring(v, kind, flag))
                        b.store(_max(b, b.load(t_max, typ=I64), t), t_max)
                counted(fb, nunits, take)
    with b.if_then(b.and_(b.load(ready, typ=I1),
                          b.icmp_signed("==", b.load(err, typ=I64), fb.i64(0)))):
        when = b.load(t_max, typ=I64)

        def precheck(v):
            with b.if_then(receiver(v)):
                overflow(s.count(s.cnt_ring(v, flag)), v)
        counted(fb, nunits, precheck)
        with b.if_then(b.icmp_signed("==", b.load(err, typ=I64), fb.i64(0))):
            def deliver(v):
                with b.if_then(receiver(v)):
                    s.push(s.cnt_ring(v, flag), when)
            counted(fb, nunits, deliver)
    s.unlock()
    code = b.load(err, typ=I64)
    fb.fail_with(b.icmp_signed("!=", code, fb.i64(0)), E.XCORE_OVERFLOW, site, flag,
                 b.load(err_unit, typ=I64), fb.i64(X.COUNTER_LIMIT))


# ----------------------------------------------------------------------------- take (wait)
def all_stuck(fb: FnBuilder, s: _State) -> L.Value:
    """Under the lock: whether every sub-core of the group has finished or is blocked on
    something nobody can change any more: a cross-core counter that is 0, or a GM flag word
    (``U_STATE == U_GM_WAIT``, ``ops/ib_sync.py``) that is not positive."""
    b = fb.b
    dead = fb.alloca_builder.alloca(I1, name="dead")
    b.store(L.Constant(I1, 1), dead)

    def look(v):
        finished = b.icmp_signed("!=", b.load_atomic(s.ptr(s.unit(v, X.U_DONE)), "acquire", 8,
                                                     typ=I64), fb.i64(0))
        state = s.ld(s.unit(v, X.U_STATE))
        blocked = b.icmp_signed("==", state, fb.i64(1))
        on_gm = b.icmp_signed("==", state, fb.i64(X.U_GM_WAIT))
        waits_on = s.ld(s.unit(v, X.U_WFLAG))
        flag = b.select(blocked, waits_on, fb.i64(0))
        empty = b.icmp_signed("==", s.count(s.cnt_ring(v, flag)), fb.i64(0))
        stuck = b.or_(b.or_(finished, b.and_(blocked, empty)), on_gm)
        b.store(b.and_(b.load(dead, typ=I1), stuck), dead)
        with b.if_then(on_gm):
            word = b.load_atomic(b.inttoptr(waits_on, PTR), "monotonic", 4, typ=I32)
            b.store(b.and_(b.load(dead, typ=I1), b.icmp_signed("<=", word, L.Constant(I32, 0))),
                    dead)
    counted(fb, s.ld(X.NUNITS), look)
    return b.load(dead, typ=I1)


def poll_turn(fb: FnBuilder, s: _State, rc, spins, stop, tag: str) -> None:
    """One turn of a cross-core poll loop (xc_take here, ib_take in lower_ib_sync.py): leave to
    ``stop`` with ``rc`` XCORE_ABORTED when another core aborted the launch, or LOOP_LIMIT when
    the loop budget is spent (Ctrl-C, the time limit); otherwise back off and take the lock."""
    b, func = fb.b, fb.func
    aborted = b.load_atomic(s.ptr(X.ABORT), "monotonic", 8, typ=I64)
    b.store(fb.i64(int(E.XCORE_ABORTED)), rc)
    go = func.append_basic_block(f"{tag}.go")
    b.cbranch(b.icmp_signed("!=", aborted, fb.i64(0)), stop, go)
    b.position_at_end(go)
    b.store(fb.i64(int(E.LOOP_LIMIT)), rc)
    go2 = func.append_basic_block(f"{tag}.go2")
    b.cbranch(b.icmp_signed("<", fb.ld(abi.LOOP_BUDGET), fb.i64(0)), stop, go2)
    b.position_at_end(go2)
    s.backoff(spins, 500)
    s.lock()


def fail_stopped(fb: FnBuilder, rc, site, what, u) -> None:
    """The error a poll loop left with: ``rc``'s LOOP_LIMIT or XCORE_ABORTED, else a deadlock
    (every sub-core stuck) naming ``what`` it waited for and the unit ``u``."""
    b = fb.b
    code = b.load(rc, typ=I64)
    fb.fail_with(b.icmp_signed("==", code, fb.i64(int(E.LOOP_LIMIT))), E.LOOP_LIMIT, site)
    fb.fail_with(b.icmp_signed("==", code, fb.i64(int(E.XCORE_ABORTED))), E.XCORE_ABORTED,
                 site)
    fb.fail_with(L.Constant(I1, 1), E.XCORE_DEADLOCK, site, what, u)


@rt("flag")
def xc_take(fb: FnBuilder, flag, site):
    """Block until this sub-core's counter of ``flag`` is non-zero, take one; its stamp goes
    to ctx[XC_TIME]. Errors: XCORE_DEADLOCK, XCORE_ABORTED, LOOP_LIMIT (watchdog)."""
    b, func = fb.b, fb.func
    s = _State(fb)
    u = fb.ld(abi.XC_UNIT)
    mine = s.cnt_ring(u, flag)
    rc = fb.alloca_builder.alloca(I64, name="rc")
    spins = fb.alloca_builder.alloca(I64, name="spins")
    b.store(fb.i64(0), rc)
    b.store(fb.i64(0), spins)
    s.lock()
    have = b.icmp_signed(">", s.count(mine), fb.i64(0))
    with b.if_else(have) as (now, later):
        with now:
            fb.st(abi.XC_TIME, s.pop(mine))
        with later:
            s.st(s.unit(u, X.U_STATE), 1)
            s.st(s.unit(u, X.U_WFLAG), flag)
    s.unlock()
    head = func.append_basic_block("xc.poll")
    done = func.append_basic_block("xc.taken")
    b.cbranch(have, done, head)

    b.position_at_end(head)       # ------------------------------------------ poll loop
    stop = func.append_basic_block("xc.stop")
    poll_turn(fb, s, rc, spins, stop, "xc")
    have = b.icmp_signed(">", s.count(mine), fb.i64(0))
    got = func.append_basic_block("xc.got")
    scan = func.append_basic_block("xc.scan")
    b.cbranch(have, got, scan)
    b.position_at_end(got)
    fb.st(abi.XC_TIME, s.pop(mine))
    s.st(s.unit(u, X.U_STATE), 0)
    s.unlock()
    b.store(fb.i64(0), rc)
    b.branch(done)

    b.position_at_end(scan)       # every sub-core finished or blocked on an empty counter?
    dead = all_stuck(fb, s)
    s.unlock()
    b.store(fb.i64(int(E.XCORE_DEADLOCK)), rc)
    b.cbranch(dead, stop, head)

    b.position_at_end(stop)       # ------------------------------------------ give up
    fail_stopped(fb, rc, site, flag, u)
    b.branch(done)
    b.position_at_end(done)


# ----------------------------------------------------------------------------- the ops
@rt("flag", "mode", "pipe", "op")
def cross_core_set_flag(fb: FnBuilder, flag, mode, pipe, op, site):
    _check_flag(fb, flag, site)
    fb.st(abi.XC_TIME, fb.i64(0))
    call_tm(fb, "xc_set", pipe, op)
    call_rt(fb, "xc_signal", flag, mode, site)


@rt("flag", "pipe", "op")
def cross_core_wait_flag(fb: FnBuilder, flag, pipe, op, site):
    _check_flag(fb, flag, site)
    call_rt(fb, "xc_take", flag, site)
    call_tm(fb, "xc_wait", pipe, op, site)


@rt("aiv_only", "op")
def sync_all(fb: FnBuilder, aiv_only, op, site):
    """aiv_only: a barrier of the AIVs (of the AICs in a launch without AIVs; nothing on the
    AIC of a mix kernel); else of every sub-core."""
    b = fb.b
    fb.fail_with(b.icmp_signed("==", fb.ld(abi.XC_STATE), fb.i64(0)), E.XCORE_MODE, site,
                 fb.i64(-1))
    s = _State(fb)
    u = fb.ld(abi.XC_UNIT)
    on_mix_aic = b.and_(b.icmp_signed("==", s.ld(s.unit(u, X.U_TYPE)), fb.i64(AIC)),
                        b.icmp_signed(">", s.ld(X.NAIV), fb.i64(0)))
    aiv = b.icmp_signed("!=", aiv_only, fb.i64(0))
    with b.if_then(b.and_(aiv, on_mix_aic)):
        call_tm(fb, "xc_count", op)
        b.ret(fb.i64(0))
        b.position_at_end(fb.func.append_basic_block("xc.sync"))
    flag = b.select(aiv, fb.i64(X.SYNC_AIV_FLAG), fb.i64(X.SYNC_ALL_FLAG))
    mode = b.select(aiv, fb.i64(0), fb.i64(MODE_SYNC_ALL))
    fb.st(abi.XC_TIME, fb.i64(0))
    call_tm(fb, "xc_fence", op)
    call_rt(fb, "xc_signal", flag, mode, site)
    call_rt(fb, "xc_take", flag, site)
    call_tm(fb, "xc_wait", fb.i64(int(PipeID.PIPE_S)), fb.i64(-1), site)


# ----------------------------------------------------------------------------- timing
def _count(tb: _TB, op) -> None:
    with tb.b.if_then(tb.b.icmp_signed(">=", op, tb.i64(0))):
        tb.count(tb.b.add(tb.i64(TP.COUNT_BASE), op), tb.i64(1))


@tm(1)
def xc_count(tb: _TB, op):
    """An instruction that does nothing on this sub-core (counted only)."""
    _count(tb, op)


@tm(2)
def xc_set(tb: _TB, pipe, op):
    """A cross-core set fires once all earlier work of ``pipe`` completed (the scalar unit's
    issue time for PIPE_S); its stamp goes to ctx[XC_TIME]."""
    b = tb.b
    t = tb.ld(abi.T_SCALAR)
    is_s = b.icmp_signed("==", pipe, tb.i64(int(PipeID.PIPE_S)))
    safe = b.select(is_s, tb.i64(int(PipeID.PIPE_V)), pipe)
    free_slot = b.add(tb.i64(abi.PIPE_FREE), safe)
    when = tb.max(tb.max(t, tb.ld(free_slot)), tb.ld(b.add(tb.i64(abi.PIPE_DONE), safe)))
    fire = b.select(is_s, t, when)
    with b.if_then(b.xor(is_s, L.Constant(I1, 1))):
        tb.st(free_slot, b.add(when, tb.ceil_i(tb.cost(TP.FLAG_CYCLES))))
    tb.st(abi.XC_TIME, fire)
    _count(tb, op)


@tm(1)
def xc_fence(tb: _TB, op):
    """sync_all: this sub-core arrives once all its pipes and its scalar unit are done."""
    t = tb.ld(abi.T_SCALAR)
    for p in range(NUM_PIPES):
        t = tb.max(t, tb.max(tb.ld(abi.PIPE_DONE + p), tb.ld(abi.PIPE_FREE + p)))
    tb.st(abi.XC_TIME, t)
    _count(tb, op)


@tm(3)
def xc_wait(tb: _TB, pipe, op, site):
    """The taken set's stamp (+ latency) holds the scalar unit, so every later instruction;
    the stall is this sub-core's cross-core wait time (and a trace event on the S lane)."""
    b = tb.b
    t = tb.ld(abi.T_SCALAR)
    fired = b.add(tb.ld(abi.XC_TIME), tb.i64(X.CROSS_CORE_LATENCY))
    stall = b.select(b.icmp_signed(">", fired, t), b.sub(fired, t), tb.i64(0))
    now = b.add(t, stall)
    tb.st(abi.T_SCALAR, now)
    is_s = b.icmp_signed("==", pipe, tb.i64(int(PipeID.PIPE_S)))
    with b.if_then(b.xor(is_s, L.Constant(I1, 1))):
        free_slot = b.add(tb.i64(abi.PIPE_FREE), pipe)
        tb.st(free_slot, tb.max(tb.ld(free_slot), now))
    tb.add_slot(abi.XC_STALL, stall)
    tb.add_slot(abi.XC_WAITS, tb.i64(1))
    _count(tb, op)
    trace_op = b.select(b.icmp_signed(">=", op, tb.i64(0)), op, tb.i64(TP.OP_INDEX["sync_all"]))
    tb.trace(t, stall, tb.i64(0), tb.i64(int(PipeID.PIPE_S)), site, trace_op,
             when=b.icmp_signed(">", stall, tb.i64(0)))


__all__ = ["lower_set", "lower_wait", "lower_sync_all", "all_stuck"]
