"""Codegen and runtime library of inter-block synchronisation through GM flag words
(``ops/ib_sync.py``): ib_set, ib_wait, notify_next_block, wait_pre_block.

The blocks of a launch using them run at once as host threads sharing one cross-core state
array (``simulator/xcore_layout.py``; the plan makes the group launch-wide, like ``sync_all``).
A flag word lives in the user's GM workspace; every read-modify-write of it and every stamp of
its simulated set time (``X.stamps_base``) happens under the state's spin lock. A wait whose
word is not positive marks its sub-core ``U_GM_WAIT`` with the word's address in ``U_WFLAG``
and polls like ``cross_core_wait_flag``: it stops with XCORE_DEADLOCK once every sub-core has
finished or is blocked on something nobody can set (``lower_crosscore.all_stuck``), with
XCORE_ABORTED when another faulted, and with LOOP_LIMIT when the watchdog (Ctrl-C or the
launch timeout) fires.

Timing: the flag word access is a scalar GM access; a set fires once every pipe of the setter
is done (``xc_fence``, as ``sync_all`` arrives); the wait holds the scalar unit until the set's
stamp plus the cross-core latency (``xc_wait``: a cross-core wait in the report and the trace).
"""
from __future__ import annotations

from llvmlite import ir as L

from ...dsl.types import PipeID
from ...simulator import abi
from ...simulator import timing_params as TP
from ...simulator import xcore_layout as X
from .. import ir
from ..ops.ib_sync import KIND_NOTIFY, KIND_SET, KIND_WAIT_PRE, OPS, SLOT_ELEMS
from .core import Codegen, FnBuilder, lowering
from .intrinsics import call_checked, operand
from .lower_crosscore import _State, all_stuck, fail_stopped, poll_turn
from .rtfuncs import call_rt, call_tm, operand_pointer, rt
from .runtime_lib import declare_rt
from .timing import _TB, tm
from .types import I1, I32, I64, PTR

E = abi.ErrorCode


# ----------------------------------------------------------------------------- codegen
def _lower(cg: Codegen, s: ir.Intrinsic) -> None:
    gm, word_e, blk_e, cores_e, ub_size = s.args
    kind = s.attr("kind")
    b = cg.b
    size = cg._as_i64(cg.expr(ub_size))
    small = b.and_(b.icmp_signed(">=", size, cg.i64(0)),
                   b.icmp_signed("<", size, cg.i64(SLOT_ELEMS)))
    cg.fail_if(small, E.VALUE_RANGE, "value", size, cg.i64(SLOT_ELEMS), cg.i64((1 << 31) - 1),
               (f"the {s.op} ub_workspace size (int32 elements; at least 32 bytes)",))
    _, a, off = operand(cg, gm)
    word = cg._as_i64(cg.expr(word_e))
    blk = cg._as_i64(cg.expr(blk_e))
    cores = cg._as_i64(cg.expr(cores_e))
    if kind == KIND_NOTIFY:
        active = b.icmp_signed("<", word, cores)         # the last block has no successor
    elif kind == KIND_WAIT_PRE:
        active = b.icmp_signed(">", word, cg.i64(0))     # block 0 has no predecessor
    else:
        bad = b.or_(b.icmp_signed("<", blk, cg.i64(0)), b.icmp_signed(">=", blk, cores))
        cg.fail_if(bad, E.VALUE_RANGE, "value", blk, cg.i64(0), b.sub(cores, cg.i64(1)),
                   (f"the {s.op} block_idx",))
        active = L.Constant(I1, 1)
    index = b.add(off, b.mul(word, cg.i64(SLOT_ELEMS)))
    call_checked(cg, declare_rt(cg.module, "ib_sync"),
                 [a, index, word, cg.i64(kind), b.zext(active, I64),
                  cg.i64(TP.OP_INDEX[s.op])], s.op, (), operands=s.args[:1])


for _op in OPS:
    lowering(_op)(_lower)


# ----------------------------------------------------------------------------- the op
@rt("a", "index", "word", "kind", "active", "op")
def ib_sync(fb: FnBuilder, a, index, word, kind, active, op, site):
    """One flag operation on int32 element ``index`` of GM argument ``a`` (``word``: its flag
    number, the key of its time stamp; ``kind``: ``ops.ib_sync.KIND_*``; ``active`` 0: nothing
    to do, only counted). Errors: XCORE_MODE (no shared state), the GM bounds of the word,
    XCORE_DEADLOCK, XCORE_ABORTED, LOOP_LIMIT."""
    b = fb.b
    fb.fail_with(b.icmp_signed("==", fb.ld(abi.XC_STATE), fb.i64(0)), E.XCORE_MODE, site,
                 fb.i64(-1))
    is_set = b.or_(b.icmp_signed("==", kind, fb.i64(KIND_SET)),
                   b.icmp_signed("==", kind, fb.i64(KIND_NOTIFY)))
    with b.if_else(b.icmp_signed("==", active, fb.i64(0))) as (idle, work):
        with idle:
            call_tm(fb, "xc_count", op)
        with work:
            esize = fb.i64(4)
            off = fb.sat_mul(index, esize)
            ptr = operand_pointer(fb, fb.i64(0), a, off, esize, esize, fb.i64(0), fb.i64(0), site)
            fb.st(abi.RES0, b.ptrtoint(ptr, I64))
            call_tm(fb, "ib_access", b.zext(is_set, I64))
            call_rt(fb, "san_issue", fb.i64(int(PipeID.PIPE_S)), site)
            with b.if_else(is_set) as (setter, waiter):
                with setter:
                    call_rt(fb, "san_gm_write", a, off, esize, site)
                    fb.st(abi.XC_TIME, fb.i64(0))
                    call_tm(fb, "xc_fence", op)
                    call_rt(fb, "ib_signal", word, kind, site)
                with waiter:
                    call_rt(fb, "ib_take", word, kind, site)
                    call_tm(fb, "xc_wait", fb.i64(int(PipeID.PIPE_S)), op, site)


def _stamp_slot(s: _State, word) -> L.Value:
    b = s.b
    base = b.add(s.i(X.HEADER_SLOTS), b.mul(s.ld(X.NUNITS), s.i(X.UNIT_SLOTS)))
    return b.add(base, b.and_(word, s.i(X.IB_STAMPS - 1)))


@rt("word", "kind")
def ib_signal(fb: FnBuilder, word, kind, site):
    """Under the lock: set (ib_set: 1) or bump (notify: + 1) the word at ctx[RES0]; its stamp
    becomes ctx[XC_TIME] (ib_set on a word already set keeps the earlier stamp)."""
    b = fb.b
    s = _State(fb)
    p = b.inttoptr(fb.ld(abi.RES0), PTR)
    s.lock()
    old = b.load(p, typ=I32)
    notify = b.icmp_signed("==", kind, fb.i64(KIND_NOTIFY))
    b.store(b.select(notify, b.add(old, L.Constant(I32, 1)), L.Constant(I32, 1)), p)
    keep = b.and_(b.xor(notify, L.Constant(I1, 1)), b.icmp_signed(">", old, L.Constant(I32, 0)))
    with b.if_then(b.xor(keep, L.Constant(I1, 1))):
        s.st(_stamp_slot(s, word), fb.ld(abi.XC_TIME))
    s.unlock()


@rt("word", "kind")
def ib_take(fb: FnBuilder, word, kind, site):
    """Block until the word at ctx[RES0] is positive (wait_pre_block then takes one); the set's
    stamp goes to ctx[XC_TIME]. Errors: XCORE_DEADLOCK, XCORE_ABORTED, LOOP_LIMIT."""
    b, func = fb.b, fb.func
    s = _State(fb)
    u = fb.ld(abi.XC_UNIT)
    addr = fb.ld(abi.RES0)
    p = b.inttoptr(addr, PTR)
    consume = b.icmp_signed("==", kind, fb.i64(KIND_WAIT_PRE))
    rc = fb.alloca_builder.alloca(I64, name="rc")
    spins = fb.alloca_builder.alloca(I64, name="spins")
    b.store(fb.i64(0), rc)
    b.store(fb.i64(0), spins)

    def try_take() -> L.Value:       # under the lock
        v = b.load(p, typ=I32)
        have = b.icmp_signed(">", v, L.Constant(I32, 0))
        with b.if_then(have):
            with b.if_then(consume):
                b.store(b.sub(v, L.Constant(I32, 1)), p)
            fb.st(abi.XC_TIME, s.ld(_stamp_slot(s, word)))
            s.st(s.unit(u, X.U_STATE), 0)
        return have

    s.lock()
    have = try_take()
    with b.if_then(b.xor(have, L.Constant(I1, 1))):
        s.st(s.unit(u, X.U_STATE), X.U_GM_WAIT)
        s.st(s.unit(u, X.U_WFLAG), addr)
    s.unlock()
    head = func.append_basic_block("ib.poll")
    done = func.append_basic_block("ib.taken")
    stop = func.append_basic_block("ib.stop")
    b.cbranch(have, done, head)

    b.position_at_end(head)
    poll_turn(fb, s, rc, spins, stop, "ib")
    have = try_take()
    got = func.append_basic_block("ib.got")
    scan = func.append_basic_block("ib.scan")
    b.cbranch(have, got, scan)
    b.position_at_end(got)
    s.unlock()
    b.branch(done)
    b.position_at_end(scan)
    dead = all_stuck(fb, s)
    s.unlock()
    b.store(fb.i64(int(E.XCORE_DEADLOCK)), rc)
    b.cbranch(dead, stop, head)

    b.position_at_end(stop)
    fail_stopped(fb, rc, site, word, u)
    b.branch(done)
    b.position_at_end(done)


# ----------------------------------------------------------------------------- timing
@tm(1)
def ib_access(tb: _TB, store):
    """The scalar unit reads or writes the flag word (not counted: the op is counted once by
    xc_fence/xc_wait/xc_count)."""
    index = tb.b.select(tb.b.icmp_signed("!=", store, tb.i64(0)), tb.i64(TP.STORE),
                        tb.i64(TP.LOAD))
    tb.add_slot(abi.T_SCALAR, tb.ceil_i(tb.cost(index)))


__all__ = ["ib_sync", "ib_signal", "ib_take"]
