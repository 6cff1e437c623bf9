"""Codegen of the A2 sort family (semantics and timing: ``ops/sort.py``): the runtime functions
``asc_rt_sort32`` and ``asc_rt_mrg_sort`` check every local range they touch (``check_local``,
which also records how far fresh memory must be refilled), record the V pipe's accesses in
sanitize mode, sort or merge the 8-byte (score, index) structures and charge one vector
instruction; ``get_mrg_sort_result`` reads the counts the latest mrg_sort left in ctx
(``abi.MRG_SORT``)."""
from __future__ import annotations

from llvmlite import ir as L

from ...dsl.types import Memory, PipeID
from ...simulator import abi
from ...simulator import timing_params as TP
from .. import ir
from . import runtime_lib
from .core import Codegen, FnBuilder, lowering
from .intrinsics import call_checked
from .rtfuncs import call_rt, call_tm, counted, rt
from .types import I64, PTR

UB = int(Memory.UB)
F64 = L.DoubleType()
I32 = L.IntType(32)
I16 = L.IntType(16)
I1 = L.IntType(1)


def _score(fb: FnBuilder, addr, esize):
    """(score as double, its bits as i32) of the half/float at UB offset ``addr``."""
    b = fb.b
    p = b.inttoptr(b.add(fb.ld(abi.MEM_BASE + UB), addr), PTR)
    is_half = b.icmp_signed("==", esize, fb.i64(2))
    h = b.load(p, typ=I16)
    with b.if_else(is_half) as (then, other):
        with then:
            bh = b.block
            hv = b.fpext(b.bitcast(h, L.HalfType()), F64)
            hbits = b.zext(h, I32)
        with other:
            bf = b.block
            raw = b.load(p, typ=I32)
            fv = b.fpext(b.bitcast(raw, L.FloatType()), F64)
    val = b.phi(F64)
    val.add_incoming(hv, bh)
    val.add_incoming(fv, bf)
    bits = b.phi(I32)
    bits.add_incoming(hbits, bh)
    bits.add_incoming(raw, bf)
    return val, bits


def _before(b: L.IRBuilder, a, pa, c, pc):
    """Whether score ``a`` at position ``pa`` goes before ``c`` at ``pc``: larger first, NaN
    above every number, ties by position."""
    na, nc = b.fcmp_unordered("uno", a, a), b.fcmp_unordered("uno", c, c)
    gt = b.or_(b.and_(na, b.not_(nc)), b.and_(b.not_(b.or_(na, nc)), b.fcmp_ordered(">", a, c)))
    eq = b.or_(b.and_(na, nc), b.fcmp_ordered("==", a, c))
    return b.or_(gt, b.and_(eq, b.icmp_signed("<", pa, pc)))


def _store_struct(fb: FnBuilder, addr, bits, index):
    b = fb.b
    p = b.inttoptr(b.add(fb.ld(abi.MEM_BASE + UB), addr), PTR)
    b.store(bits, p)          # half: the score in the low 2 bytes, 0 in the reserved 2
    b.store(index, b.gep(p, [fb.i64(4)], source_etype=L.IntType(8)))


@rt("dst", "src0", "src1", "tmp", "repeat", "full", "passes", "esize", "fam", "op")
def sort32(fb: FnBuilder, dst, src0, src1, tmp, repeat, full, passes, esize, fam, op, site):
    """Sort32 (``full`` 0), or Sort's full sort of all 32 * repeat scores (``full`` 1; ``tmp``
    is then checked as scratch of the same size, and dst does not overlap the sources)."""
    b = fb.b
    ub, v = fb.i64(UB), fb.i64(int(PipeID.PIPE_V))
    is_full = b.icmp_signed("!=", full, fb.i64(0))
    call_rt(fb, "check_local", ub, dst, b.mul(repeat, fb.i64(256)), fb.i64(1), fb.i64(0), site)
    call_rt(fb, "check_local", ub, src0, b.mul(repeat, b.mul(esize, fb.i64(32))), fb.i64(1),
            fb.i64(1), site)
    call_rt(fb, "check_local", ub, src1, b.mul(repeat, fb.i64(128)), fb.i64(1), fb.i64(2), site)
    with b.if_then(is_full):
        call_rt(fb, "check_local", ub, tmp, b.mul(repeat, fb.i64(256)), fb.i64(1), fb.i64(3),
                site)
    with b.if_then(b.icmp_signed("!=", fb.ld(abi.SANITIZE), fb.i64(0))):
        call_rt(fb, "san_issue", v, site)
        call_rt(fb, "san_access", v, ub, src0, b.mul(repeat, b.mul(esize, fb.i64(32))),
                fb.i64(0), site)
        call_rt(fb, "san_access", v, ub, src1, b.mul(repeat, fb.i64(128)), fb.i64(0), site)
        call_rt(fb, "san_access", v, ub, dst, b.mul(repeat, fb.i64(256)), fb.i64(1), site)
        with b.if_then(is_full):     # scratch the hardware writes (its bytes: unspecified)
            call_rt(fb, "san_access", v, ub, tmp, b.mul(repeat, fb.i64(256)), fb.i64(1), site)
    with b.if_else(is_full) as (whole, groups):
        with whole:
            _full_sort(fb, dst, src0, src1, b.mul(repeat, fb.i64(32)), esize)
        with groups:
            _sort_groups(fb, dst, src0, src1, repeat, esize)
    moved = b.sdiv(b.mul(b.mul(repeat, fb.i64(256)), passes), esize)
    call_tm(fb, "vec", op, fb.i64(TP.class_index(_cost("sort32"))), fam, moved, esize, src0,
            fb.i64(-1), site)


def _full_sort(fb: FnBuilder, dst, src0, src1, n, esize):
    """Rank every score among all n (read in place: sema keeps dst apart from the sources)."""
    b = fb.b
    ubase = fb.ld(abi.MEM_BASE + UB)
    rank = fb.alloca_builder.alloca(I64, name="frank")

    def place(i):
        vi, bits_i = _score(fb, b.add(src0, b.mul(i, esize)), esize)
        b.store(fb.i64(0), rank)

        def cmp(j):
            vj, _ = _score(fb, b.add(src0, b.mul(j, esize)), esize)
            b.store(b.add(b.load(rank, typ=I64), b.zext(_before(b, vj, j, vi, i), I64)), rank)
        counted(fb, n, cmp)
        ip = b.inttoptr(b.add(ubase, b.add(src1, b.mul(i, fb.i64(4)))), PTR)
        _store_struct(fb, b.add(dst, b.mul(b.load(rank, typ=I64), fb.i64(8))), bits_i,
                      b.load(ip, typ=I32))
    counted(fb, n, place)


def _sort_groups(fb: FnBuilder, dst, src0, src1, repeat, esize):
    b = fb.b
    vals = fb.alloca_builder.alloca(F64, size=fb.i64(32), name="vals")
    bits = fb.alloca_builder.alloca(I32, size=fb.i64(32), name="bits")
    idx = fb.alloca_builder.alloca(I32, size=fb.i64(32), name="idx")
    ubase = fb.ld(abi.MEM_BASE + UB)

    def per_repeat(r):
        def load(i):      # the 32 pairs first: dst may overlap the sources
            e = b.add(b.mul(r, fb.i64(32)), i)
            val, raw = _score(fb, b.add(src0, b.mul(e, esize)), esize)
            b.store(val, b.gep(vals, [i], source_etype=F64))
            b.store(raw, b.gep(bits, [i], source_etype=I32))
            ip = b.inttoptr(b.add(ubase, b.add(src1, b.mul(e, fb.i64(4)))), PTR)
            b.store(b.load(ip, typ=I32), b.gep(idx, [i], source_etype=I32))
        counted(fb, fb.i64(32), load)

        def place(i):
            vi = b.load(b.gep(vals, [i], source_etype=F64), typ=F64)
            rank = fb.alloca_builder.alloca(I64, name="rank")
            b.store(fb.i64(0), rank)

            def cmp(j):
                vj = b.load(b.gep(vals, [j], source_etype=F64), typ=F64)
                ahead = b.zext(_before(b, vj, j, vi, i), I64)
                b.store(b.add(b.load(rank, typ=I64), ahead), rank)
            counted(fb, fb.i64(32), cmp)
            at = b.add(dst, b.mul(b.add(b.mul(r, fb.i64(32)), b.load(rank, typ=I64)),
                                  fb.i64(8)))
            _store_struct(fb, at, b.load(b.gep(bits, [i], source_etype=I32), typ=I32),
                          b.load(b.gep(idx, [i], source_etype=I32), typ=I32))
        counted(fb, fb.i64(32), place)
    counted(fb, repeat, per_repeat)


def _cost(name):
    from ..ops import REGISTRY
    return REGISTRY[name].cost


@lowering("sort32", "sort")
def lower_sort32(cg: Codegen, s: ir.Intrinsic) -> None:
    """sort32(dst, src0, src1, rep); sort(dst, concat, index, tmp, rep) with attr ``full``."""
    dtype = s.attr("dtype")
    refs, rep = s.args[:-1], s.args[-1]
    full = bool(s.attr("full", False))
    addrs = [cg.b.sext(cg.expr(r.addr), I64) for r in refs]
    if len(addrs) == 3:
        addrs.append(cg.i64(-1))
    rep_v = cg._as_i64(cg.expr(rep))
    if full:   # one pass of sort32 and the merge passes: 1 + ceil(log4(repeat)) (ops/sort.py)
        passes = cg.i64(1)
        runs = rep_v
        for _ in range(4):          # repeat <= 255: at most 4 merge passes
            more = cg.b.icmp_signed(">", runs, cg.i64(1))
            passes = cg.b.add(passes, cg.b.zext(more, I64))
            runs = cg.b.sdiv(cg.b.add(runs, cg.i64(3)), cg.i64(4))
    else:
        passes = cg.i64(1)
    args = addrs + [rep_v, cg.i64(int(full)), passes, cg.i64(dtype.sizeof()),
                    cg.i64(TP.family(dtype)), cg.i64(TP.OP_INDEX[s.op])]
    names = ("dst", "src0", "src1") if s.op == "sort32" else ("dst", "concat", "index", "tmp")
    call_checked(cg, runtime_lib.declare_rt(cg.module, "sort32"), args, s.op, names,
                 operands=refs)


_Q = ("s1", "s2", "s3", "s4", "c1", "c2", "c3", "c4")


@rt("dst", *_Q, "valid", "repeat", "exhausted", "esize", "fam", "op")
def mrg_sort(fb: FnBuilder, **a):
    b = fb.b
    dst, valid, repeat, exh, esize, fam, op, site = (a[k] for k in (
        "dst", "valid", "repeat", "exhausted", "esize", "fam", "op", "site"))
    srcs, counts = [a[f"s{k}"] for k in range(1, 5)], [a[f"c{k}"] for k in range(1, 5)]
    ub, v = fb.i64(UB), fb.i64(int(PipeID.PIPE_V))
    nq = b.add(fb.i64(2), b.add(b.zext(b.icmp_signed(">=", valid, fb.i64(7)), I64),
                                b.zext(b.icmp_signed("==", valid, fb.i64(15)), I64)))
    used = [b.icmp_signed("<", fb.i64(k), nq) for k in range(4)]
    cnt = [b.select(used[k], counts[k], fb.i64(0)) for k in range(4)]
    total = b.add(b.add(cnt[0], cnt[1]), b.add(cnt[2], cnt[3]))
    step = b.mul(total, fb.i64(8))
    sanitize = b.icmp_signed("!=", fb.ld(abi.SANITIZE), fb.i64(0))
    with b.if_then(sanitize):
        call_rt(fb, "san_issue", v, site)
    pos = fb.alloca_builder.alloca(I64, size=fb.i64(4), name="pos")
    stopped = fb.alloca_builder.alloca(I1, name="stopped")

    def per_repeat(r):
        off = b.mul(r, step)
        d = b.add(dst, off)
        call_rt(fb, "check_local", ub, d, step, fb.i64(1), fb.i64(0), site)
        base = []
        for k in range(4):
            sk = b.add(srcs[k], off)
            base.append(sk)
            with b.if_then(b.icmp_signed(">", cnt[k], fb.i64(0))):
                call_rt(fb, "check_local", ub, sk, b.mul(cnt[k], fb.i64(8)), fb.i64(0),
                        fb.i64(k + 1), site)
                with b.if_then(sanitize):
                    call_rt(fb, "san_access", v, ub, sk, b.mul(cnt[k], fb.i64(8)), fb.i64(0),
                            site)
            b.store(fb.i64(0), b.gep(pos, [fb.i64(k)], source_etype=I64))
        with b.if_then(sanitize):
            call_rt(fb, "san_access", v, ub, d, step, fb.i64(1), site)
        b.store(L.Constant(I1, 0), stopped)

        def one(t):
            with b.if_then(b.not_(b.load(stopped, typ=I1))):
                best = fb.alloca_builder.alloca(I64, name="best")
                b.store(fb.i64(-1), best)
                bval = fb.alloca_builder.alloca(F64, name="bval")
                for k in range(4):
                    pk = b.load(b.gep(pos, [fb.i64(k)], source_etype=I64), typ=I64)
                    with b.if_then(b.icmp_signed("<", pk, cnt[k])):
                        val, _ = _score(fb, b.add(base[k], b.mul(pk, fb.i64(8))), esize)
                        cur = b.load(best, typ=I64)
                        # an earlier queue wins ties: only a strictly better score replaces it
                        better = b.or_(b.icmp_signed("<", cur, fb.i64(0)),
                                       _before(b, val, fb.i64(0), b.load(bval, typ=F64),
                                               fb.i64(0)))
                        with b.if_then(better):
                            b.store(fb.i64(k), best)
                            b.store(val, bval)
                k = b.load(best, typ=I64)
                kp = b.gep(pos, [k], source_etype=I64)
                pk = b.load(kp, typ=I64)
                sbase = srcs[0]
                for q in range(1, 4):
                    sbase = b.select(b.icmp_signed("==", k, fb.i64(q)), base[q], sbase)
                sbase = b.select(b.icmp_signed("==", k, fb.i64(0)), base[0], sbase)
                sp = b.inttoptr(b.add(fb.ld(abi.MEM_BASE + UB), b.add(sbase, b.mul(
                    pk, fb.i64(8)))), PTR)
                dp = b.inttoptr(b.add(fb.ld(abi.MEM_BASE + UB), b.add(d, b.mul(
                    t, fb.i64(8)))), PTR)
                b.store(b.load(sp, typ=I64), dp)
                b.store(b.add(pk, fb.i64(1)), kp)
                ck = cnt[0]
                for q in range(1, 4):
                    ck = b.select(b.icmp_signed("==", k, fb.i64(q)), cnt[q], ck)
                done = b.icmp_signed("==", b.add(pk, fb.i64(1)), ck)
                with b.if_then(b.and_(done, b.icmp_signed("!=", exh, fb.i64(0)))):
                    b.store(L.Constant(I1, 1), stopped)
        counted(fb, total, one)
    counted(fb, repeat, per_repeat)
    packed = fb.i64(0)
    for k in range(4):
        pk = b.and_(b.load(b.gep(pos, [fb.i64(k)], source_etype=I64), typ=I64), fb.i64(0xFFFF))
        packed = b.or_(packed, b.shl(pk, fb.i64(16 * k)))
    fb.st(abi.MRG_SORT, packed)
    # the measured VMRGSORT rate, 15.6 B/c: 4 DIV-class repeats (16 cycles) per 256 B written
    moved = b.sdiv(b.mul(b.mul(repeat, step), fb.i64(4)), esize)
    call_tm(fb, "vec", op, fb.i64(TP.class_index(_cost("mrg_sort"))), fam, moved, esize,
            srcs[0], fb.i64(-1), site)


@lowering("mrg_sort")
def lower_mrg_sort(cg: Codegen, s: ir.Intrinsic) -> None:
    dtype = s.attr("dtype")
    refs = s.args[:5]
    args = [cg.b.sext(cg.expr(r.addr), I64) if r is not None else cg.i64(0) for r in refs]
    args += [cg._as_i64(cg.expr(e)) for e in s.args[5:]]
    args += [cg.i64(dtype.sizeof()), cg.i64(TP.family(dtype)), cg.i64(TP.OP_INDEX["mrg_sort"])]
    call_checked(cg, runtime_lib.declare_rt(cg.module, "mrg_sort"), args, "mrg_sort",
                 ("dst", "src1", "src2", "src3", "src4"), operands=refs)


@lowering("get_mrg_sort_result")
def lower_get_mrg_sort_result(cg: Codegen, s: ir.Intrinsic) -> None:
    packed = cg.ld(abi.MRG_SORT)
    for k, var in enumerate(s.results):
        val = cg.b.and_(cg.b.lshr(packed, cg.i64(16 * k)), cg.i64(0xFFFF))
        cg.b.store(cg.b.trunc(val, I32), cg.var(var))
    cg.scalar_cost(1)
