"""The Matmul server of a mix kernel: the AIVs' Matmul requests are timed on their AIC.

On hardware the Matmul API object of a mix kernel lives on the AIC: ``register_matmul`` makes
the AIC a server, and each AIV's ``iterate_all`` / ``get_tensor_c`` is a message to it; the AIC
runs MTE2/MTE1/M/FIX for the request and the AIV's scalar unit waits for the result. Here the
AIV still computes the result itself (the same native code as in a cube kernel: results do
not depend on who times them), and only the *timing* goes to the AIC:

* the AIV (``mm_request``) posts the request's timing arguments and its simulated time ``t``
  to its unit record in the launch group's shared state (``simulator/xcore_layout.py``,
  ``U_MM_*``) and polls until it is served;
* the AIC (``mm_serve``, called by ``register_matmul`` on the AIC of a mix kernel, whose kernel
  then ends) loops: it serves its block's pending requests on its own pipes at the full cube
  rate (``timing_matmul.matmul`` with ``serve=1``, which charges the AIC's M/MTE1/MTE2/FIX
  books and trace and does not hold the AIC's scalar unit for the result), and hands the time
  the result is ready back to the requester; it returns once every AIV of its block finished;
* the AIV's scalar unit then waits until that time (``mm_wait``: a stall on the S lane, the
  AIV row's "matmul wait").

A request reaches the AIC ``CROSS_CORE_LATENCY`` cycles after it is sent and the result reaches
the AIV as long after it is ready (the messages go the way of the cross-core flags).

**Determinism.** Sub-cores are host threads; the AIC's pipe clocks depend on the order it
serves requests in, so that order must not depend on host scheduling. The AIC serves requests
in the order of (simulated request time, sub-block index), and serves the least pending
request only once no other AIV of its block can still send an earlier one: each other AIV has
finished, has a pending request (which is later by construction), is blocked in a cross-core
wait on an empty counter (whatever releases it is a set by a sub-core at or after its own
pending time, plus the cross-core latency, so strictly later), or has a lower bound ``U_MM_LB``
(the time of its last result: its clock never goes back) past the request. Otherwise the AIC
waits (host time only) until one of these becomes true. The served order is then the sorted
order of all requests of the block, whatever the threads do. An AIV whose block's AIC never
registered (it finished without ``register_matmul``) times its request itself, as a cube
kernel does.

While it has nothing to serve, the AIC marks itself blocked on ``SERVER_FLAG`` (never set), so
the deadlock scan of cross-core waits still finds a hang (AIVs waiting for flags that only a
finished sub-core or the server could set) instead of waiting forever.
"""
from __future__ import annotations

from llvmlite import ir as L

from ...simulator import abi
from ...simulator import xcore_layout as X
from .core import FnBuilder
from .lower_crosscore import AIC, AIV, _State
from .rtfuncs import call_tm, counted, rt
from .timing import _TB, tm
from .types import I1, I64

E = abi.ErrorCode
#: the timing arguments of one Matmul call, in ``timing_matmul.matmul``'s order (without serve)
MM_ARGS = ("tm", "tn", "k", "m", "n", "base_m", "base_n", "base_k", "depth_a1", "depth_b1",
           "step_ka", "step_kb", "order", "db_l0c", "a_dt", "c_dt", "c_mem", "org_m", "org_n",
           "org_k", "cores", "op")
assert len(MM_ARGS) + 1 == X.MM_NARGS          # + site
MAX_POLL_MICROS = 200     # longest pause between polls of the server and its waiting AIVs


def _stopped(fb: FnBuilder, s: _State, site) -> L.Value:
    """Fail with LOOP_LIMIT when the launch watchdog expired; true when another sub-core
    faulted (the launch reports that fault)."""
    b = fb.b
    fb.fail_with(b.icmp_signed("<", fb.ld(abi.LOOP_BUDGET), fb.i64(0)), E.LOOP_LIMIT, site)
    return b.icmp_signed("!=", b.load_atomic(s.ptr(X.ABORT), "monotonic", 8, typ=I64),
                         fb.i64(0))


def _my_aic(fb: FnBuilder, s: _State, me_block) -> L.Value:
    """Unit index of the AIC of this sub-core's block, or -1."""
    b = fb.b
    found = fb.alloca_builder.alloca(I64, name="aic")
    b.store(fb.i64(-1), found)

    def look(v):
        hit = b.and_(b.icmp_signed("==", s.ld(s.unit(v, X.U_TYPE)), fb.i64(AIC)),
                     b.icmp_signed("==", s.ld(s.unit(v, X.U_BLOCK)), me_block))
        with b.if_then(hit):
            b.store(v, found)
    counted(fb, s.ld(X.NUNITS), look)
    return b.load(found, typ=I64)


# ----------------------------------------------------------------------------- the AIV side
@rt(*MM_ARGS)
def mm_request(fb: FnBuilder, site, **a):
    """AIV of a mix kernel: send one Matmul call's timing to the AIC of its block and wait for
    the result's time (module docstring); without a serving AIC, time it here."""
    b, func = fb.b, fb.func
    args = [a[n] for n in MM_ARGS] + [site]
    local = func.append_basic_block("mm.local")
    with b.if_then(b.icmp_signed("==", fb.ld(abi.TIMING_ON), fb.i64(0))):
        b.ret(fb.i64(0))
        b.position_at_end(func.append_basic_block("mm.timed"))
    s = _State(fb)
    u = fb.ld(abi.XC_UNIT)
    aic = _my_aic(fb, s, s.ld(s.unit(u, X.U_BLOCK)))
    posted = func.append_basic_block("mm.posted")
    b.cbranch(b.icmp_signed("<", aic, fb.i64(0)), local, posted)

    b.position_at_end(posted)
    s.lock()
    for i, v in enumerate(args):
        s.st(s.unit(u, X.U_MM_ARGS + i), v)
    s.st(s.unit(u, X.U_MM_T), fb.ld(abi.T_SCALAR))
    s.st(s.unit(u, X.U_MM_STATE), 1)
    s.unlock()
    spins = fb.alloca_builder.alloca(I64, name="spins")
    b.store(fb.i64(0), spins)
    head = func.append_basic_block("mm.poll")
    b.branch(head)
    b.position_at_end(head)
    s.lock()
    state = s.ld(s.unit(u, X.U_MM_STATE))
    served = b.icmp_signed("==", state, fb.i64(2))
    resp = s.ld(s.unit(u, X.U_MM_RESP))
    aic_done = b.icmp_signed("!=", b.load_atomic(s.ptr(s.unit(aic, X.U_DONE)), "acquire", 8,
                                                 typ=I64), fb.i64(0))
    orphan = b.and_(b.xor(served, L.Constant(I1, 1)), aic_done)
    with b.if_then(b.or_(served, orphan)):
        s.st(s.unit(u, X.U_MM_STATE), 0)
    s.unlock()
    got = func.append_basic_block("mm.got")
    wait = func.append_basic_block("mm.wait")
    not_served = func.append_basic_block("mm.not_served")
    b.cbranch(served, got, not_served)
    b.position_at_end(not_served)
    b.cbranch(orphan, local, wait)

    b.position_at_end(wait)
    fb.fail_with(_stopped(fb, s, site), E.XCORE_ABORTED, site)
    s.backoff(spins, MAX_POLL_MICROS)
    b.branch(head)

    b.position_at_end(got)
    call_tm(fb, "mm_wait", resp, a["op"], site)
    b.ret(fb.i64(0))

    b.position_at_end(local)     # no server: the call is timed on this sub-core (CUBE_RATE)
    call_tm(fb, "matmul", *args, fb.i64(0))


@tm(3)
def mm_wait(tb: _TB, ready, op, site):
    """The AIV's scalar unit waits for the Matmul result (ready + the message latency): a
    stall on the S lane, counted in MM_STALL / MM_WAITS and as a flag wait of PIPE_S."""
    b = tb.b
    t = tb.ld(abi.T_SCALAR)
    arrive = b.add(ready, tb.i64(X.CROSS_CORE_LATENCY))
    stall = b.select(b.icmp_signed(">", arrive, t), b.sub(arrive, t), tb.i64(0))
    tb.st(abi.T_SCALAR, b.add(t, stall))
    tb.add_slot(abi.STALL_FLAG + 0, stall)            # PIPE_S
    tb.add_slot(abi.MM_STALL, stall)
    tb.add_slot(abi.MM_WAITS, tb.i64(1))
    tb.trace(t, stall, tb.i64(0), tb.i64(0), site, op,
             when=b.icmp_signed(">", stall, tb.i64(0)))


@tm(1)
def mm_arrive(tb: _TB, when):
    """The AIC's scalar unit takes a request that arrives at ``when``: it idles until then (a
    flag-wait stall of PIPE_S, not issue work)."""
    b = tb.b
    t = tb.ld(abi.T_SCALAR)
    gap = b.select(b.icmp_signed(">", when, t), b.sub(when, t), tb.i64(0))
    tb.st(abi.T_SCALAR, b.add(t, gap))
    tb.add_slot(abi.STALL_FLAG + 0, gap)


# ----------------------------------------------------------------------------- the AIC side
@rt()
def mm_serve(fb: FnBuilder, site):
    """AIC of a mix kernel: serve the Matmul requests of this block's AIVs in the order of
    (simulated time, sub-block) until every AIV finished (module docstring)."""
    b, func = fb.b, fb.func
    s = _State(fb)
    u = fb.ld(abi.XC_UNIT)
    me_block = s.ld(s.unit(u, X.U_BLOCK))
    best = fb.alloca_builder.alloca(I64, name="best")
    best_t = fb.alloca_builder.alloca(I64, name="best_t")
    best_sub = fb.alloca_builder.alloca(I64, name="best_sub")
    live = fb.alloca_builder.alloca(I64, name="live")
    ok = fb.alloca_builder.alloca(I1, name="ok")
    spins = fb.alloca_builder.alloca(I64, name="spins")
    slots = [fb.alloca_builder.alloca(I64, name=f"arg{i}") for i in range(X.MM_NARGS)]
    b.store(fb.i64(0), spins)
    s.lock()
    s.st(s.unit(u, X.U_MM_STATE), 1)
    s.unlock()
    head = func.append_basic_block("mm.serve")
    leave = func.append_basic_block("mm.leave")
    b.branch(head)

    b.position_at_end(head)
    scan = func.append_basic_block("mm.scan")
    b.cbranch(_stopped(fb, s, site), leave, scan)
    b.position_at_end(scan)
    s.lock()
    b.store(fb.i64(-1), best)
    b.store(fb.i64((1 << 63) - 1), best_t)
    b.store(fb.i64((1 << 63) - 1), best_sub)
    b.store(fb.i64(0), live)
    nunits = s.ld(X.NUNITS)

    def mine(v) -> L.Value:
        done = b.icmp_signed("!=", b.load_atomic(s.ptr(s.unit(v, X.U_DONE)), "acquire", 8,
                                                 typ=I64), fb.i64(0))
        ours = b.and_(b.icmp_signed("==", s.ld(s.unit(v, X.U_TYPE)), fb.i64(AIV)),
                      b.icmp_signed("==", s.ld(s.unit(v, X.U_BLOCK)), me_block))
        return b.and_(ours, b.xor(done, L.Constant(I1, 1)))

    def before(t1, s1, t2, s2) -> L.Value:   # (t1, s1) < (t2, s2)
        return b.or_(b.icmp_signed("<", t1, t2),
                     b.and_(b.icmp_signed("==", t1, t2), b.icmp_signed("<", s1, s2)))

    def pick(v):
        with b.if_then(mine(v)):
            b.store(b.add(b.load(live, typ=I64), fb.i64(1)), live)
            t, sub = s.ld(s.unit(v, X.U_MM_T)), s.ld(s.unit(v, X.U_SUB))
            pending = b.icmp_signed("==", s.ld(s.unit(v, X.U_MM_STATE)), fb.i64(1))
            with b.if_then(b.and_(pending, before(t, sub, b.load(best_t, typ=I64),
                                                  b.load(best_sub, typ=I64)))):
                b.store(v, best)
                b.store(t, best_t)
                b.store(sub, best_sub)
    counted(fb, nunits, pick)
    b.store(b.icmp_signed(">=", b.load(best, typ=I64), fb.i64(0)), ok)

    def check(v):   # can v still send a request before the best one?
        other = b.and_(mine(v), b.icmp_signed("!=", v, b.load(best, typ=I64)))
        pending = b.icmp_signed("==", s.ld(s.unit(v, X.U_MM_STATE)), fb.i64(1))
        with b.if_then(b.and_(other, b.xor(pending, L.Constant(I1, 1)))):
            blocked = b.icmp_signed("==", s.ld(s.unit(v, X.U_STATE)), fb.i64(1))
            empty = b.icmp_signed("==", s.count(s.cnt_ring(v, s.ld(s.unit(v, X.U_WFLAG)))),
                                  fb.i64(0))
            ahead = before(b.load(best_t, typ=I64), b.load(best_sub, typ=I64),
                           s.ld(s.unit(v, X.U_MM_LB)), s.ld(s.unit(v, X.U_SUB)))
            safe = b.or_(b.and_(blocked, empty), ahead)
            b.store(b.and_(b.load(ok, typ=I1), safe), ok)
    counted(fb, nunits, check)
    finished = b.icmp_signed("==", b.load(live, typ=I64), fb.i64(0))
    go = b.load(ok, typ=I1)
    # idle: "blocked" on a flag nobody sets (the deadlock scan of cross-core waits)
    s.st(s.unit(u, X.U_STATE), b.zext(b.xor(go, L.Constant(I1, 1)), I64))
    s.st(s.unit(u, X.U_WFLAG), X.SERVER_FLAG)
    who = b.load(best, typ=I64)
    with b.if_then(go):
        for i, slot in enumerate(slots):
            b.store(s.ld(s.unit(who, X.U_MM_ARGS + i)), slot)
    s.unlock()
    serve = func.append_basic_block("mm.serve_one")
    idle = func.append_basic_block("mm.idle")
    not_finished = func.append_basic_block("mm.not_finished")
    b.cbranch(finished, leave, not_finished)
    b.position_at_end(not_finished)
    b.cbranch(go, serve, idle)

    b.position_at_end(idle)
    s.backoff(spins, MAX_POLL_MICROS)
    b.branch(head)

    b.position_at_end(serve)
    b.store(fb.i64(0), spins)
    call_tm(fb, "mm_arrive", b.add(b.load(best_t, typ=I64), fb.i64(X.CROSS_CORE_LATENCY)))
    fb.st(abi.XC_TIME, fb.i64(0))
    call_tm(fb, "matmul", *[b.load(slot, typ=I64) for slot in slots], fb.i64(1))
    ready = fb.ld(abi.XC_TIME)
    s.lock()
    s.st(s.unit(who, X.U_MM_RESP), ready)
    s.st(s.unit(who, X.U_MM_LB), b.add(ready, fb.i64(X.CROSS_CORE_LATENCY)))
    s.st(s.unit(who, X.U_MM_STATE), 2)
    s.unlock()
    b.branch(head)

    b.position_at_end(leave)
    s.lock()
    s.st(s.unit(u, X.U_STATE), 0)
    s.st(s.unit(u, X.U_MM_STATE), 0)
    s.unlock()


__all__ = ["MM_ARGS"]
