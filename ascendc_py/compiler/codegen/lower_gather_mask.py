"""Codegen of gather_mask and get_gather_mask_remain_count (semantics: ``ops/gather_mask.py``).

One runtime function per element width (``asc_rt_gmask_b16`` / ``_b32``): it checks src0 and the
pattern tensor with ``check_local``, counts the selected lanes (reading only the pattern), checks
the ``count`` elements of dst, then moves them; sanitize mode sees src0 and the pattern read and
dst written. The count is also kept in kernel state (an entry-initialised alloca) for
get_gather_mask_remain_count.
"""
from __future__ import annotations

from llvmlite import ir as L

from ...dsl.types import Memory, PipeID
from ...simulator import abi
from ...simulator import timing_params as TP
from .. import ir
from ..ops import REGISTRY
from .core import Codegen, FnBuilder, lowering
from .footprint import check_strides, lane_span, operand_end
from .intrinsics import call_checked
from .lower_gather import _repeat_range, for_lanes
from .rtfuncs import call_rt, call_tm, rt
from .runtime_lib import declare_rt
from .types import I1, I8, I16, I32, I64, PTR

UB = int(Memory.UB)
PARAMS = ("dst", "src0", "src1", "builtin", "counter", "mask", "repeat", "src0_blk", "src0_rep",
          "src1_rep", "op", "cls", "fam")


def _define(es: int):
    epr, epb = 256 // es, 32 // es
    t = I16 if es == 2 else I32

    def body(fb: FnBuilder, site, **a):
        b = fb.b
        counter = b.icmp_signed("!=", a["counter"], fb.i64(0))
        with b.if_then(b.xor(counter, L.Constant(I1, 1))):
            _repeat_range(fb, a["repeat"], site)
        fb.fail_with(b.and_(counter, b.icmp_signed("<", a["mask"], fb.i64(0))),
                     abi.ErrorCode.NEGATIVE_COUNT, site, a["mask"])
        total = b.select(counter, a["mask"], b.mul(a["repeat"], fb.i64(epr)))
        repeats = fb.ceil_div(total, fb.i64(epr))
        check_strides(fb, site, [(1, a["src0_blk"], a["src0_rep"])])
        span = lane_span(fb, L.Constant(I1, 1), fb.i64(-1), fb.i64(-1), total, repeats, epr)
        src_ext = operand_end(fb, repeats, a["src0_blk"], a["src0_rep"], span, es)
        user = b.icmp_signed("==", a["builtin"], fb.i64(0))
        has = b.icmp_signed(">", repeats, fb.i64(0))
        pat_ext = b.select(b.and_(user, has), fb.sat_add(
            fb.sat_mul(fb.sat_mul(b.sub(repeats, fb.i64(1)), a["src1_rep"]), fb.i64(32)),
            fb.i64(epr // 8)), fb.i64(0))
        ub = fb.i64(UB)
        call_rt(fb, "check_local", ub, a["src0"], src_ext, fb.i64(1), fb.i64(1), site)
        call_rt(fb, "check_local", ub, a["src1"], pat_ext, fb.i64(1), fb.i64(2), site)
        base = fb.ld(abi.MEM_BASE + UB)

        def ptr(addr):
            return b.inttoptr(b.add(base, addr), PTR)

        def take(r, l):
            pb = b.load(ptr(b.add(a["src1"], b.add(b.mul(b.mul(r, a["src1_rep"]), fb.i64(32)),
                                                   b.sdiv(l, fb.i64(8))))), typ=I8)
            bit = b.and_(b.lshr(b.zext(pb, I64), b.srem(l, fb.i64(8))), fb.i64(1))
            k = a["builtin"]
            two = b.srem(l, fb.i64(2))
            four = b.srem(l, fb.i64(4))
            built = b.select(b.icmp_signed("==", k, fb.i64(7)), fb.i64(1), b.select(
                b.icmp_signed("<=", k, fb.i64(2)),
                b.zext(b.icmp_signed("==", two, b.sub(k, fb.i64(1))), I64),
                b.zext(b.icmp_signed("==", four, b.sub(k, fb.i64(3))), I64)))
            return b.icmp_signed("!=", b.select(user, bit, built), fb.i64(0))
        count = fb.alloca_builder.alloca(I64)
        b.store(fb.i64(0), count)

        def tally(r, l):
            with b.if_then(take(r, l)):
                b.store(b.add(b.load(count, typ=I64), fb.i64(1)), count)
        for_lanes(fb, L.Constant(I1, 1), fb.i64(-1), fb.i64(-1), total, repeats, epr, tally)
        n = b.load(count, typ=I64)
        dst_ext = b.mul(n, fb.i64(es))
        call_rt(fb, "check_local", ub, a["dst"], dst_ext, fb.i64(1), fb.i64(0), site)
        v = fb.i64(int(PipeID.PIPE_V))
        call_rt(fb, "san_issue", v, site)
        call_rt(fb, "san_access", v, ub, a["src0"], src_ext, fb.i64(0), site)
        call_rt(fb, "san_access", v, ub, a["src1"], pat_ext, fb.i64(0), site)
        call_rt(fb, "san_access", v, ub, a["dst"], dst_ext, fb.i64(1), site)
        b.store(fb.i64(0), count)

        def move(r, l):
            with b.if_then(take(r, l)):
                k = b.load(count, typ=I64)
                s_at = b.add(a["src0"], b.add(
                    b.mul(b.add(b.mul(r, a["src0_rep"]), b.mul(b.sdiv(l, fb.i64(epb)),
                                                               a["src0_blk"])), fb.i64(32)),
                    b.mul(b.srem(l, fb.i64(epb)), fb.i64(es))))
                b.store(b.load(ptr(s_at), typ=t), ptr(b.add(a["dst"], b.mul(k, fb.i64(es)))))
                b.store(b.add(k, fb.i64(1)), count)
        for_lanes(fb, L.Constant(I1, 1), fb.i64(-1), fb.i64(-1), total, repeats, epr, move)
        call_tm(fb, "vec", a["op"], a["cls"], a["fam"], b.select(has, total, fb.i64(0)),
                fb.i64(es), a["src0"], fb.i64(-1), site)
        fb.st(abi.RES0, n)

    body.__name__ = f"gmask_b{es * 8}"
    rt(*PARAMS)(body)


for _es in (2, 4):
    _define(_es)


def _state(cg: Codegen):
    slot = getattr(cg, "_gather_mask_count", None)
    if slot is None:
        slot = cg.alloca_builder.alloca(I64, name="gather_mask.count")
        cg.alloca_builder.store(L.Constant(I64, 0), slot)
        cg._gather_mask_count = slot
    return slot


@lowering("gather_mask")
def lower_gather_mask(cg: Codegen, s: ir.Intrinsic) -> None:
    dtype = s.attr("dtype")
    addrs = [cg.b.sext(cg.expr(r.addr), I64) for r in s.args[:3]]
    rest = [cg._as_i64(cg.expr(e)) for e in s.args[3:]]
    spec = REGISTRY["gather_mask"]
    fam = 0 if dtype.sizeof() == 2 else 1
    args = addrs + rest + [cg.i64(TP.OP_INDEX["gather_mask"]),
                           cg.i64(TP.class_index(spec.cost)), cg.i64(fam)]
    call_checked(cg, declare_rt(cg.module, f"gmask_b{dtype.sizeof() * 8}"), args,
                 "gather_mask", ("dst", "src0", "src1_pattern"), operands=s.args[:3])
    n = cg.ld(abi.RES0)
    cg.b.store(n, _state(cg))
    cg.b.store(n, cg.var(s.results[0]))


@lowering("gather_mask_count")
def lower_gather_mask_count(cg: Codegen, s: ir.Intrinsic) -> None:
    cg.b.store(cg.b.load(_state(cg), typ=I64), cg.var(s.results[0]))
    cg.scalar_cost(1)
