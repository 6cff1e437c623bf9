"""Codegen of ``bilinear_interpolation`` (semantics and timing: ``ops/bilinear.py``) and its
runtime function ``asc_rt_bilinear``: every local range it touches passes ``check_local``
(which also records how far fresh memory must be refilled: the offsets, the src1 values, each
src0 block, the dst span), the V pipe's accesses are recorded in sanitize mode, and one vector
instruction is charged."""
from __future__ import annotations

from llvmlite import ir as L

from ...dsl.types import Memory, PipeID
from ...simulator import abi
from ...simulator import timing_params as TP
from .. import ir
from . import runtime_lib
from .core import Codegen, FnBuilder, lowering
from .intrinsics import call_checked
from .rtfuncs import call_rt, call_tm, counted, lanes_mask, rt
from .types import I64, PTR

UB = int(Memory.UB)
I16, I32, F32 = L.IntType(16), L.IntType(32), L.FloatType()


@rt("dst", "src0", "off", "src1", "kind", "lo", "hi", "h_rep", "mode", "blk", "v_off", "v_rep",
    "fam", "op")
def bilinear(fb: FnBuilder, dst, src0, off, src1, kind, lo, hi, h_rep, mode, blk, v_off, v_rep,
             fam, op, site):
    b = fb.b
    ub, v = fb.i64(UB), fb.i64(int(PipeID.PIPE_V))
    base = fb.ld(abi.MEM_BASE + UB)
    counted_mask = lanes_mask(fb, lo)
    lo_m = b.select(b.icmp_signed("==", kind, fb.i64(0)), counted_mask[0], lo)
    hi_m = b.select(b.icmp_signed("==", kind, fb.i64(0)), counted_mask[1], hi)
    iters = b.mul(h_rep, v_rep)
    per_it = b.select(b.icmp_signed("!=", mode, fb.i64(0)), fb.i64(8), fb.i64(1))
    span = b.add(b.add(b.mul(b.sub(v_rep, fb.i64(1)), b.mul(v_off, fb.i64(2))),
                       b.mul(b.mul(fb.i64(7), blk), fb.i64(32))), fb.i64(32))
    sanitize = b.icmp_signed("!=", fb.ld(abi.SANITIZE), fb.i64(0))
    with b.if_then(b.icmp_signed(">", iters, fb.i64(0))):
        call_rt(fb, "check_local", ub, dst, span, fb.i64(1), fb.i64(0), site)
        call_rt(fb, "check_local", ub, off, b.mul(iters, fb.i64(32)), fb.i64(1), fb.i64(2), site)
        call_rt(fb, "check_local", ub, src1, b.mul(b.mul(iters, per_it), fb.i64(2)), fb.i64(1),
                fb.i64(3), site)
        with b.if_then(sanitize):
            call_rt(fb, "san_issue", v, site)
            call_rt(fb, "san_access", v, ub, off, b.mul(iters, fb.i64(32)), fb.i64(0), site)
            call_rt(fb, "san_access", v, ub, src1, b.mul(b.mul(iters, per_it), fb.i64(2)),
                    fb.i64(0), site)

    def ptr(addr):
        return b.inttoptr(b.add(base, addr), PTR)

    def vertical(vi):
        row = b.add(dst, b.mul(vi, b.mul(v_off, fb.i64(2))))

        def horizontal(hi_):
            it = b.add(b.mul(vi, h_rep), hi_)

            def block(k):
                o = b.zext(b.load(ptr(b.add(off, b.mul(b.add(b.mul(it, fb.i64(8)), k),
                                                      fb.i64(4)))), typ=I32), I64)
                sblk = b.add(src0, o)
                call_rt(fb, "check_local", ub, sblk, fb.i64(32), fb.i64(1), fb.i64(1), site)
                dblk = b.add(row, b.mul(b.mul(k, blk), fb.i64(32)))
                with b.if_then(sanitize):
                    call_rt(fb, "san_access", v, ub, sblk, fb.i64(32), fb.i64(0), site)
                    call_rt(fb, "san_access", v, ub, dblk, fb.i64(32), fb.i64(1), site)
                si = b.select(b.icmp_signed("!=", mode, fb.i64(0)),
                              b.add(b.mul(it, fb.i64(8)), k), it)
                scale = b.fpext(b.bitcast(b.load(ptr(b.add(src1, b.mul(si, fb.i64(2)))),
                                                 typ=I16), L.HalfType()), F32)

                def elem(e):
                    lane = b.add(b.mul(k, fb.i64(16)), e)
                    word = b.select(b.icmp_signed("<", lane, fb.i64(64)), lo_m, hi_m)
                    on = b.icmp_signed("!=", b.and_(b.lshr(word, b.and_(lane, fb.i64(63))),
                                                    fb.i64(1)), fb.i64(0))
                    with b.if_then(on):
                        s = b.fpext(b.bitcast(b.load(ptr(b.add(sblk, b.mul(e, fb.i64(2)))),
                                                     typ=I16), L.HalfType()), F32)
                        prod = b.fptrunc(b.fmul(s, scale), L.HalfType())
                        dp = ptr(b.add(dblk, b.mul(e, fb.i64(2))))
                        cur = b.fpext(b.bitcast(b.load(dp, typ=I16), L.HalfType()), F32)
                        acc = b.fptrunc(b.fadd(cur, b.fpext(prod, F32)), L.HalfType())
                        new = b.select(b.icmp_signed("==", hi_, fb.i64(0)), prod, acc)
                        b.store(b.bitcast(new, I16), dp)
                counted(fb, fb.i64(16), elem)
            counted(fb, fb.i64(8), block)
        counted(fb, h_rep, horizontal)
    counted(fb, v_rep, vertical)
    call_tm(fb, "vec", op, fb.i64(TP.class_index(_cost())), fam, b.mul(iters, fb.i64(128)),
            fb.i64(2), src0, fb.i64(-1), site)


def _cost():
    from ..ops import REGISTRY
    return REGISTRY["bilinear_interpolation"].cost


@lowering("bilinear_interpolation")
def lower_bilinear(cg: Codegen, s: ir.Intrinsic) -> None:
    dtype = s.attr("dtype")
    refs = s.args[:5]
    addrs = [cg.b.sext(cg.expr(r.addr), I64) for r in refs[:4]]
    args = addrs + [cg._as_i64(cg.expr(e)) for e in s.args[5:]]
    args += [cg.i64(TP.family(dtype)), cg.i64(TP.OP_INDEX["bilinear_interpolation"])]
    call_checked(cg, runtime_lib.declare_rt(cg.module, "bilinear"), args,
                 "bilinear_interpolation", ("dst", "a src0 block", "src0_offset", "src1"),
                 operands=refs[:4])
