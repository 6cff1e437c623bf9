"""Codegen of reduce_*, whole_reduce_*, block_reduce_*, pair_reduce_sum: lowerings (``core.lowering``) and their runtime-library functions
(``rtfuncs.rt`` or ``runtime_lib.library_definer``). Imported by ``intrinsics.py``.

Each call becomes one call of a library function per dtype (semantics: ``ops/reduce.py``):

* ``asc_rgrp_<dtype>``: whole/block/pair reductions. One result per group of ``group`` lanes
  (a repeat, a 32-B block or a pair); the lowering passes the destination layout (bytes per
  ``dst_rep_stride`` unit, bytes between the results of a repeat, value/index offsets).
  Timing: one REDUCE-class vector instruction of ``repeats`` repeats.
* ``asc_rfull_<dtype>``: reduce_sum/max/min. Timing: the instruction sequence Ascend C's A2/A3
  implementation issues (``_Timing.plan_*`` below): the per-repeat ``vcadd``/``vcmax``/``vcmin``
  passes (REDUCE class), the ``pipe_barrier(PIPE_V)`` between them, and the V→S flag, scalar
  ``GetValue``/``SetValue`` and S→V / S→MTE3 flags around the final scalar copy, so the scalar
  unit waits for the vector result as it does on hardware. Internal flags and scalar accesses
  are counted as instructions of the reduce op.
"""
from __future__ import annotations

from llvmlite import ir as L

from ...dsl.types import Memory, PipeID
from ...simulator import abi
from ...simulator import timing_params as TP
from .. import ir
from ..ops import CostClass
from ..ops.reduce import (BLOCK_OPS, FULL_OPS, KINDS, REDUCE_DTYPES, WHOLE_OPS, ReduceOrder,
                          whole_layout)
from . import runtime_lib
from .core import Codegen, FnBuilder, lowering
from .footprint import check_strides, highest_lane, lane_span, operand_end
from .intrinsics import call_checked
from .rtfuncs import call_rt, call_tm, counted, lanes_mask
from .types import I1, I16, I32, I64, PTR, intrinsic, llvm_type

E = abi.ErrorCode

GROUP_PARAMS = ("dst", "src", "kind", "group", "rep_unit", "res_stride", "res_bytes", "val_off",
                "idx_off", "idx_bytes", "dst_align", "is_set", "mkind", "lo", "hi", "repeat",
                "dst_rep", "src_blk", "src_rep", "op")
FULL_PARAMS = ("dst", "src", "tmp", "kind", "form", "count", "mkind", "lo", "hi", "repeat",
               "src_rep", "cal_index", "op")
SUM, MAX, MIN = KINDS["sum"], KINDS["max"], KINDS["min"]


def _fn_type(params) -> L.FunctionType:
    return L.FunctionType(I64, [PTR] + [I64] * (len(params) + 1))


def _declare(module: L.Module, name: str, params) -> L.Function:
    fn = module.globals.get(name)
    if fn is None:
        fn = L.Function(module, _fn_type(params), name=name)
    return fn


# ----------------------------------------------------------------------------- library helpers
class _Red:
    """Per-function helpers: UB pointers, lane activity, a 128-element scratch row, trees."""

    def __init__(self, fb: FnBuilder, dtype, site):
        self.fb, self.b, self.dtype, self.site = fb, fb.b, dtype, site
        self.T = llvm_type(dtype)
        self.esize = dtype.sizeof()
        self.epr, self.epb = 256 // self.esize, 32 // self.esize
        self.base = fb.ld(abi.MEM_BASE + int(Memory.UB))
        ab = fb.alloca_builder
        self.row = ab.alloca(self.T, size=128, name="row")
        self.best = ab.alloca(self.T, name="best")
        self.bidx = ab.alloca(I64, name="bidx")
        self.found = ab.alloca(I64, name="found")
        self.acc = ab.alloca(self.T, name="acc")

    def i(self, v):
        return self.fb.i64(v)

    def ptr(self, addr):
        return self.b.inttoptr(self.b.add(self.base, addr), PTR)

    def load(self, addr):
        return self.b.load(self.ptr(addr), typ=self.T)

    def store(self, addr, v):
        self.b.store(v, self.ptr(addr))

    def cell(self, k):
        return self.b.gep(self.row, [k], source_etype=self.T)

    def zero(self):
        return L.Constant(self.T, 0.0)

    def ceil_div(self, a, d):
        return self.fb.ceil_div(a, self.i(d))

    def bit_active(self, lo, hi, lane):
        b = self.b
        low = b.icmp_signed("<", lane, self.i(64))
        word = b.select(low, lo, hi)
        bit = b.and_(b.lshr(word, b.and_(lane, self.i(63))), self.i(1))
        return b.icmp_signed("!=", bit, self.i(0))

    def tree(self, group):
        """row[0] = pairwise tree over row[0:group] (group a power of two), in the dtype."""
        b = self.b
        cttz = intrinsic(self.fb.module, "llvm.cttz.i64", I64, [I64, I1])
        levels = b.call(cttz, [group, L.Constant(I1, 0)])

        def level(lev):
            width = b.ashr(group, b.add(lev, self.i(1)))

            def pair(k):
                two_k = b.shl(k, self.i(1))
                x = b.load(self.cell(two_k), typ=self.T)
                y = b.load(self.cell(b.add(two_k, self.i(1))), typ=self.T)
                b.store(b.fadd(x, y), self.cell(k))
            counted(self.fb, width, pair)
        counted(self.fb, levels, level)
        return b.load(self.cell(self.i(0)), typ=self.T)

    def reset_best(self):
        self.b.store(self.i(0), self.found)
        self.b.store(self.i(0), self.bidx)
        self.b.store(self.zero(), self.best)

    def consider(self, kind, v, index):
        """max/min scan step: keep the first extreme (a NaN beats numbers, the first NaN wins)."""
        b = self.b
        best = b.load(self.best, typ=self.T)
        first = b.icmp_signed("==", b.load(self.found, typ=I64), self.i(0))
        v_nan = b.fcmp_unordered("uno", v, v)
        best_num = b.fcmp_ordered("ord", best, best)
        gt = b.fcmp_ordered(">", v, best)
        lt = b.fcmp_ordered("<", v, best)
        beats = b.select(b.icmp_signed("==", kind, self.i(MAX)), gt, lt)
        take = b.or_(first, b.or_(b.and_(v_nan, best_num), beats))
        b.store(b.select(take, v, best), self.best)
        b.store(b.select(take, index, b.load(self.bidx, typ=I64)), self.bidx)
        b.store(self.i(1), self.found)

    def store_index(self, addr, index, nbytes):
        """Store ``index`` as a uint16 (nbytes 2) or uint32 (otherwise) at a UB byte address."""
        b = self.b
        with b.if_else(b.icmp_signed("==", nbytes, self.i(2))) as (two, four):
            with two:
                b.store(b.trunc(index, I16), self.ptr(addr))
            with four:
                b.store(b.trunc(index, I32), self.ptr(addr))

    def check(self, addr, nbytes, aligned, which):
        call_rt(self.fb, "check_local", self.i(int(Memory.UB)), addr, nbytes, aligned,
                self.i(which), self.site)

    def sanitize(self, reads, writes):
        """Sanitize mode: the V pipe reads ``reads`` then writes ``writes`` ((addr, bytes))."""
        v, ub = self.i(int(PipeID.PIPE_V)), self.i(int(Memory.UB))
        call_rt(self.fb, "san_issue", v, self.site)
        for addr, nbytes in reads:
            call_rt(self.fb, "san_access", v, ub, addr, nbytes, self.i(0), self.site)
        for addr, nbytes in writes:
            call_rt(self.fb, "san_access", v, ub, addr, nbytes, self.i(1), self.site)


def _mask_register(fb: FnBuilder, a, r: _Red, site):
    """Apply the mask argument (unless is_set_mask is false) as the masked vector ops do, but a
    contiguous mask of 0 or an all-zero bit mask is a NOP (A2/A3 reduction docs). Returns (lo,
    hi, counter, repeats, total)."""
    b = fb.b
    epr = r.epr
    counter = b.icmp_signed("!=", fb.ld(abi.MASK_MODE), fb.i64(0))
    normal = b.xor(counter, L.Constant(I1, 1))
    with b.if_then(b.icmp_signed("!=", a["is_set"], fb.i64(0))):
        contiguous = b.icmp_signed("==", a["mkind"], fb.i64(0))
        m = a["lo"]
        bad = b.and_(b.and_(contiguous, normal),
                     b.or_(b.icmp_signed("<", m, fb.i64(0)), b.icmp_signed(">", m, fb.i64(epr))))
        fb.fail_with(bad, E.MASK_RANGE, site, m, fb.i64(epr))
        c_lo, c_hi = lanes_mask(fb, m)
        hi_arg = a["hi"] if epr > 64 else fb.i64(0)
        use_contig = b.and_(contiguous, normal)
        fb.st(abi.MASK_LO, b.select(use_contig, c_lo, a["lo"]))
        fb.st(abi.MASK_HI, b.select(use_contig, c_hi, b.select(counter, fb.i64(0), hi_arg)))
    lo, hi = fb.ld(abi.MASK_LO), fb.ld(abi.MASK_HI)
    if epr <= 64:
        hi = fb.i64(0)
    repeat = a["repeat"]
    bad_r = b.and_(normal, b.or_(b.icmp_signed("<", repeat, fb.i64(0)),
                                 b.icmp_signed(">", repeat, fb.i64(255))))
    fb.fail_with(bad_r, E.REPEAT_RANGE, site, repeat)
    fb.fail_with(b.and_(counter, b.icmp_signed("<", lo, fb.i64(0))), E.NEGATIVE_COUNT, site, lo)
    repeats = b.select(counter, r.ceil_div(lo, epr), repeat)
    empty = b.and_(normal, b.icmp_signed("==", b.or_(lo, hi), fb.i64(0)))
    repeats = b.select(empty, fb.i64(0), repeats)
    return lo, hi, counter, repeats


# ----------------------------------------------------------------------------- whole/block/pair
def define_group_reduce(module: L.Module, dtype) -> str:
    name = f"asc_rgrp_{dtype.name}"
    func = L.Function(module, _fn_type(GROUP_PARAMS), name=name)
    fb = FnBuilder(module, func)
    b = fb.b
    a = dict(zip(GROUP_PARAMS + ("site",), func.args[1:]))
    site = a["site"]
    r = _Red(fb, dtype, site)
    lo, hi, counter, repeats = _mask_register(fb, a, r, site)
    has_work = b.icmp_signed(">", repeats, fb.i64(0))
    group = a["group"]
    nres = b.sdiv(fb.i64(r.epr), group)
    check_strides(fb, site, [(0, fb.i64(0), a["dst_rep"]), (1, a["src_blk"], a["src_rep"])])
    span = lane_span(fb, counter, lo, hi, lo, repeats, r.epr)
    src_ext = operand_end(fb, repeats, a["src_blk"], a["src_rep"], span, r.esize)
    # the groups with an enabled lane write a result: up to the highest lane's group
    def dst_end(rep, h):
        base = fb.sat_mul(fb.sat_mul(rep, a["dst_rep"]), a["rep_unit"])
        return fb.sat_add(fb.sat_add(base, b.mul(b.sdiv(h, group), a["res_stride"])),
                          a["res_bytes"])
    dst_ext = fb.smax(dst_end(b.sub(repeats, fb.i64(1)), span[1]),
                      b.select(b.icmp_signed(">=", repeats, fb.i64(2)),
                               dst_end(b.sub(repeats, fb.i64(2)), span[0]), fb.i64(0)))
    dst_ext = b.select(b.and_(has_work, b.icmp_signed(">=", span[1], fb.i64(0))), dst_ext,
                       fb.i64(0))
    r.check(a["dst"], dst_ext, a["dst_align"], 0)
    r.check(a["src"], src_ext, fb.i64(1), 1)
    r.sanitize([(a["src"], src_ext)], [(a["dst"], dst_ext)])
    is_sum = b.icmp_signed("==", a["kind"], fb.i64(SUM))

    def per_repeat(rep):
        left = b.sub(lo, b.mul(rep, fb.i64(r.epr)))  # counter mode: lanes left

        def per_group(g):
            r.reset_best()

            def per_lane(j):
                lane = b.add(b.mul(g, group), j)
                act = b.select(counter, b.icmp_signed("<", lane, left),
                               r.bit_active(lo, hi, lane))
                blk = b.sdiv(lane, fb.i64(r.epb))
                off = b.add(b.mul(b.add(b.mul(rep, a["src_rep"]), b.mul(blk, a["src_blk"])),
                                  fb.i64(32)),
                            b.mul(b.srem(lane, fb.i64(r.epb)), fb.i64(r.esize)))
                b.store(r.zero(), r.cell(j))
                with b.if_then(act):
                    v = r.load(b.add(a["src"], off))
                    b.store(v, r.cell(j))
                    r.consider(a["kind"], v, lane)
            counted(fb, group, per_lane)
            with b.if_then(b.icmp_signed("!=", b.load(r.found, typ=I64), fb.i64(0))):
                value = r.best
                with b.if_then(is_sum):
                    b.store(r.tree(group), r.best)
                base = b.add(a["dst"], b.add(b.mul(b.mul(rep, a["dst_rep"]), a["rep_unit"]),
                                             b.mul(g, a["res_stride"])))
                with b.if_then(b.icmp_signed(">=", a["val_off"], fb.i64(0))):
                    r.store(b.add(base, a["val_off"]), b.load(value, typ=r.T))
                with b.if_then(b.icmp_signed(">=", a["idx_off"], fb.i64(0))):
                    r.store_index(b.add(base, a["idx_off"]), b.load(r.bidx, typ=I64),
                                  a["idx_bytes"])
        counted(fb, nres, per_group)
    counted(fb, repeats, per_repeat)
    count = b.select(counter, b.select(has_work, lo, fb.i64(0)), b.mul(repeats, fb.i64(r.epr)))
    call_tm(fb, "vec", a["op"], class_of_op(fb, a["op"]), TP.family(dtype), count,
            r.esize, a["src"], fb.i64(-1), site)
    b.ret(fb.i64(0))
    fb.finish()
    return name


def class_of_op(fb: FnBuilder, op):
    """The timing cost class of the reduction whose op index is the runtime value ``op``."""
    from ..ops import REGISTRY
    b = fb.b
    cls = fb.i64(TP.class_index(CostClass.REDUCE))
    for name, spec in REGISTRY.items():
        if spec.cost in (CostClass.REDUCE_MAX, CostClass.BLOCK_REDUCE, CostClass.PAIR_REDUCE):
            hit = b.icmp_signed("==", op, fb.i64(TP.OP_INDEX[name]))
            cls = b.select(hit, fb.i64(TP.class_index(spec.cost)), cls)
    return cls


# ----------------------------------------------------------------------------- reduce_*
TM_WRAPPERS = {"asc_red_tm_vec": 6, "asc_red_tm_sync": 3, "asc_red_tm_scalar": 3}


def define_timing_wrappers(module: L.Module) -> None:
    """Small non-inlined wrappers of the ``asc_tm_*`` calls, so the many call sites of the
    reduce_* timing plans stay calls (the library's O3 build time grows with inlined copies)."""
    for name, nargs in TM_WRAPPERS.items():
        func = L.Function(module, L.FunctionType(L.VoidType(), [PTR] + [I64] * nargs), name=name)
        func.attributes.add("noinline")
        fb = FnBuilder(module, func)
        p = func.args[1:]
        if name == "asc_red_tm_vec":  # op, family, elements, esize, src address, site
            call_tm(fb, "vec", p[0], class_of_op(fb, p[0]), p[1], p[2], p[3], p[4],
                    fb.i64(-1), p[5])
        elif name == "asc_red_tm_sync":  # source pipe, destination pipe, op: set + wait flag
            fb.st(abi.RES2, fb.i64(0))
            call_tm(fb, "set_time", p[0], abi.RES2, p[2])
            call_tm(fb, "wait_time", p[1], abi.RES2, 0, p[2])
        else:  # loads, stores, op: scalar GetValue/SetValue
            counted(fb, p[0], lambda _: call_tm(fb, "scalar_access", 0, p[2]))
            counted(fb, p[1], lambda _: call_tm(fb, "scalar_access", 1, p[2]))
        fb.b.ret_void()
        fb.alloca_builder.branch(func.basic_blocks[1])
        L.IRBuilder(fb.fail_block).ret_void()


class _Timing:
    """The instruction sequence of Ascend C's ReduceSum/Max/Min on A2/A3, for the timing model."""

    def __init__(self, fb: FnBuilder, r: _Red, a, site):
        self.fb, self.b, self.r, self.a, self.site = fb, fb.b, r, a, site

    def _call(self, name, *args):
        fn = self.fb.module.globals[name]
        self.b.call(fn, [self.fb.ctx] + [self.fb._as_i64(x) for x in args])

    def vec(self, elems):
        self._call("asc_red_tm_vec", self.a["op"], TP.family(self.r.dtype), elems,
                   self.r.esize, self.a["src"], self.site)

    def rep(self, n=1):
        self.vec(self.b.mul(n, self.fb.i64(self.r.epr)) if isinstance(n, L.Value)
                 else self.fb.i64(n * self.r.epr))

    def barrier(self):
        call_tm(self.fb, "barrier", int(PipeID.PIPE_V), self.a["op"])

    def sync(self, src: PipeID, dst: PipeID):
        self._call("asc_red_tm_sync", int(src), int(dst), self.a["op"])

    def scalar(self, loads: int, stores: int):
        self._call("asc_red_tm_scalar", loads, stores, self.a["op"])

    def final(self, loads: int, stores: int):
        """V→S flag, the scalar copy into dst, S→V and S→MTE3 flags."""
        self.sync(PipeID.PIPE_V, PipeID.PIPE_S)
        self.scalar(loads, stores)
        self.sync(PipeID.PIPE_S, PipeID.PIPE_V)
        self.sync(PipeID.PIPE_S, PipeID.PIPE_MTE3)

    def eq(self, x, v):
        return self.b.icmp_signed("==", x, self.fb.i64(v))

    def plan_sum(self, form_count, n, R):
        b, epr = self.b, self.r.epr
        with b.if_else(form_count) as (count_form, masked_form):
            with count_form:  # counter-mode vcadd accumulating into the ACC register
                self.vec(n)
                self.final(0, 1)
            with masked_form:
                with b.if_else(self.eq(R, 1)) as (one, many):
                    with one:
                        self.rep(1)
                        self.final(1, 1)
                    with many:
                        self.rep(R)
                        self.barrier()
                        self.vec(R)
                        self.barrier()
                        with b.if_else(self.eq(self.r.ceil_div(R, epr), 1)) as (s, m):
                            with s:
                                self.final(1, 1)
                            with m:
                                self.rep(1)

    def plan_minmax(self, R, idx):
        """ReduceImpl: vcmax/vcmin passes over (value, index) pairs, then the scalar step."""
        b, epr = self.b, self.r.epr
        with b.if_else(self.eq(R, 1)) as (one, many):
            with one:
                self.rep(1)
                with b.if_then(b.icmp_signed("==", idx, self.fb.i64(0))):
                    self.final(1, 1)
            with many:
                self.rep(R)
                self.barrier()
                c1 = self.r.ceil_div(b.mul(R, self.fb.i64(2)), epr)
                self.rep(c1)
                cur = b.mul(c1, self.fb.i64(2))
                self.barrier()
                bigger = b.icmp_signed(">", cur, self.fb.i64(epr))
                with b.if_else(b.icmp_signed("!=", idx, self.fb.i64(0))) as (wi, ni):
                    with wi:
                        with b.if_else(self.eq(cur, 2)) as (two, more):
                            with two:
                                self.final(3, 2)
                            with more:
                                with b.if_then(bigger):
                                    self.rep(self.r.ceil_div(cur, epr))
                                    self.barrier()
                                self.rep(1)
                                self.final(5, 2)
                    with ni:
                        with b.if_then(bigger):
                            self.rep(self.r.ceil_div(cur, epr))
                            self.barrier()
                        self.rep(1)
                        self.final(1, 1)

    def plan_minmax_count(self, n, idx):
        """Body repeats, then the tail repeat and a 2-element pass to merge the two results."""
        b, epr = self.b, self.r.epr
        body = b.sdiv(n, self.fb.i64(epr))
        tail = b.srem(n, self.fb.i64(epr))
        no_body = self.eq(body, 0)
        self.plan_minmax(b.select(no_body, self.fb.i64(1), body), idx)
        with b.if_then(b.and_(b.xor(no_body, L.Constant(I1, 1)),
                              b.icmp_signed("!=", tail, self.fb.i64(0)))):
            self.sync(PipeID.PIPE_V, PipeID.PIPE_S)
            self.scalar(2, 0)
            self.plan_minmax(self.fb.i64(1), idx)
            self.sync(PipeID.PIPE_V, PipeID.PIPE_S)
            self.scalar(2, 2)
            self.sync(PipeID.PIPE_S, PipeID.PIPE_V)
            self.plan_minmax(self.fb.i64(1), idx)
            with b.if_then(b.icmp_signed("!=", idx, self.fb.i64(0))):
                self.final(1, 1)


def _minmax_tmp_elems(r: _Red, R1, idx):
    """shared_tmp_buffer elements ReduceMax/Min need (the Ascend C docs' formula)."""
    b, fb = r.b, r.fb
    epb, epr = r.epb, r.epr

    def up(x, m):
        return b.mul(r.ceil_div(x, m), fb.i64(m))
    it1 = b.mul(R1, fb.i64(2))
    a1 = up(it1, epb)
    it2 = b.mul(r.ceil_div(it1, epr), fb.i64(2))
    a2 = up(it2, epb)
    it3 = b.mul(r.ceil_div(it2, epr), fb.i64(2))
    a3 = b.select(b.icmp_signed(">", it2, fb.i64(2)), up(it3, epb), fb.i64(0))
    with_idx = b.add(a1, b.add(a2, a3))
    return b.select(b.icmp_signed("!=", idx, fb.i64(0)), with_idx, a1)


def define_full_reduce(module: L.Module, dtype) -> str:
    name = f"asc_rfull_{dtype.name}"
    func = L.Function(module, _fn_type(FULL_PARAMS), name=name)
    fb = FnBuilder(module, func)
    b = fb.b
    a = dict(zip(FULL_PARAMS + ("site",), func.args[1:]))
    site = a["site"]
    r = _Red(fb, dtype, site)
    epr, epb, esize = r.epr, r.epb, r.esize
    kind, idx = a["kind"], a["cal_index"]
    count_form = b.icmp_signed("==", a["form"], fb.i64(0))
    is_sum = b.icmp_signed("==", kind, fb.i64(SUM))
    # --- the lanes: count form = the first n elements; masked = mask bits of each repeat
    n = a["count"]
    fb.fail_with(b.and_(count_form, b.icmp_signed("<", n, fb.i64(0))), E.NEGATIVE_COUNT, site,
                 n)
    contiguous = b.icmp_signed("==", a["mkind"], fb.i64(0))
    m = a["lo"]
    bad_m = b.and_(b.and_(b.xor(count_form, L.Constant(I1, 1)), contiguous),
                   b.or_(b.icmp_signed("<", m, fb.i64(0)), b.icmp_signed(">", m, fb.i64(epr))))
    fb.fail_with(bad_m, E.MASK_RANGE, site, m, fb.i64(epr))
    c_lo, c_hi = lanes_mask(fb, m)
    lo = b.select(contiguous, c_lo, a["lo"])
    hi = b.select(contiguous, c_hi, a["hi"]) if epr > 64 else fb.i64(0)
    R = a["repeat"]
    fb.fail_with(b.and_(b.xor(count_form, L.Constant(I1, 1)), b.icmp_signed("<", R, fb.i64(0))),
                 E.REPEAT_RANGE, site, R)
    empty = b.icmp_signed("==", b.or_(lo, hi), fb.i64(0))
    reps = b.select(count_form, r.ceil_div(n, epr), b.select(empty, fb.i64(0), R))
    has_work = b.icmp_signed(">", reps, fb.i64(0))
    # --- operand checks (nothing is touched when there is no work: a NOP, as on A2/A3)
    check_strides(fb, site, [(1, fb.i64(1), a["src_rep"])])
    with b.if_then(has_work):
        h = highest_lane(fb, lo, hi, epr)
        src_ext = b.select(count_form, fb.sat_mul(n, fb.i64(esize)),
                           operand_end(fb, R, fb.i64(1), a["src_rep"], (h, h), esize))
        dst_ext = b.select(b.and_(b.xor(is_sum, L.Constant(I1, 1)),
                                  b.icmp_signed("!=", idx, fb.i64(0))),
                           fb.i64(2 * esize), fb.i64(esize))
        r1 = b.select(count_form, b.select(b.icmp_signed("<", n, fb.i64(epr)), fb.i64(1),
                                           b.sdiv(n, fb.i64(epr))), R)
        tmp_sum = b.select(count_form, fb.i64(0), b.mul(r.ceil_div(R, epb), fb.i64(epb)))
        tmp_elems = b.select(is_sum, tmp_sum, _minmax_tmp_elems(r, r1, idx))
        r.check(a["dst"], dst_ext, fb.i64(0), 0)
        r.check(a["src"], src_ext, fb.i64(1), 1)
        r.check(a["tmp"], b.mul(tmp_elems, fb.i64(esize)), fb.i64(1), 2)
        r.sanitize([(a["src"], src_ext)],
                   [(a["tmp"], b.mul(tmp_elems, fb.i64(esize))), (a["dst"], dst_ext)])

    def lane_info(rep, lane):
        """(active, UB byte address, index) of a lane."""
        in_count = b.icmp_signed("<", lane, b.sub(n, b.mul(rep, fb.i64(epr))))
        act = b.select(count_form, in_count, r.bit_active(lo, hi, lane))
        pos_count = b.add(b.mul(rep, fb.i64(epr)), lane)
        pos_masked = b.add(b.mul(b.mul(rep, a["src_rep"]), fb.i64(epb)), lane)
        pos = b.select(count_form, pos_count, pos_masked)
        return act, b.add(a["src"], b.mul(pos, fb.i64(esize))), pos

    def fill_row(rep):
        def per_lane(lane):
            act, addr, _ = lane_info(rep, lane)
            b.store(r.zero(), r.cell(lane))
            with b.if_then(act):
                b.store(r.load(addr), r.cell(lane))
        counted(fb, fb.i64(epr), per_lane)
        return r.tree(fb.i64(epr))

    with b.if_then(has_work):
        with b.if_else(is_sum) as (sum_, minmax):
            with sum_:
                with b.if_else(count_form) as (seq, tree):
                    with seq:  # repeat trees added in order
                        def acc_step(rep):
                            t = fill_row(rep)
                            prev = b.load(r.acc, typ=r.T)
                            first = b.icmp_signed("==", rep, fb.i64(0))
                            b.store(b.select(first, t, b.fadd(prev, t)), r.acc)
                        counted(fb, reps, acc_step)
                        r.store(a["dst"], b.load(r.acc, typ=r.T))
                    with tree:  # repeat sums to shared_tmp_buffer, then trees over them
                        counted(fb, reps, lambda rep: r.store(
                            b.add(a["tmp"], b.mul(rep, fb.i64(esize))), fill_row(rep)))
                        cur = fb.alloca_builder.alloca(I64, name="cur")
                        b.store(reps, cur)

                        def level(_):
                            c = b.load(cur, typ=I64)
                            with b.if_then(b.icmp_signed(">", c, fb.i64(1))):
                                groups = r.ceil_div(c, epr)

                                def per_group(k):
                                    def per_lane(j):
                                        e = b.add(b.mul(k, fb.i64(epr)), j)
                                        b.store(r.zero(), r.cell(j))
                                        with b.if_then(b.icmp_signed("<", e, c)):
                                            b.store(r.load(b.add(a["tmp"],
                                                                 b.mul(e, fb.i64(esize)))),
                                                    r.cell(j))
                                    counted(fb, fb.i64(epr), per_lane)
                                    r.store(b.add(a["tmp"], b.mul(k, fb.i64(esize))),
                                            r.tree(fb.i64(epr)))
                                counted(fb, groups, per_group)
                                b.store(groups, cur)
                        counted(fb, fb.i64(6), level)  # 64**6 > 2**31 repeats
                        r.store(a["dst"], r.load(a["tmp"]))
            with minmax:  # the first extreme in (repeat, lane) order
                r.reset_best()

                def scan(rep):
                    def per_lane(lane):
                        act, addr, pos = lane_info(rep, lane)
                        with b.if_then(act):
                            r.consider(kind, r.load(addr), pos)
                    counted(fb, fb.i64(epr), per_lane)
                counted(fb, reps, scan)
                with b.if_then(b.icmp_signed("!=", b.load(r.found, typ=I64), fb.i64(0))):
                    r.store(a["dst"], b.load(r.best, typ=r.T))
                    with b.if_then(b.icmp_signed("!=", idx, fb.i64(0))):
                        r.store_index(b.add(a["dst"], fb.i64(esize)), b.load(r.bidx, typ=I64),
                                      fb.i64(esize))
        t = _Timing(fb, r, a, site)
        with b.if_else(is_sum) as (sum_, minmax):
            with sum_:
                t.plan_sum(count_form, n, R)
            with minmax:
                with b.if_else(count_form) as (cf, mf):
                    with cf:
                        t.plan_minmax_count(n, idx)
                    with mf:
                        t.plan_minmax(R, idx)
    # the API leaves the mask register full and the mode normal (as the count-form ops do)
    fb.st(abi.MASK_LO, fb.i64(-1))
    fb.st(abi.MASK_HI, fb.i64(-1))
    fb.st(abi.MASK_MODE, fb.i64(0))
    b.ret(fb.i64(0))
    fb.finish()
    return name


@runtime_lib.library_definer(shard="lib.reduce")
def define_reduce_library(module: L.Module):
    names = []
    define_timing_wrappers(module)
    for dtype in REDUCE_DTYPES:
        names.append(define_group_reduce(module, dtype))
        names.append(define_full_reduce(module, dtype))
    return names


# ----------------------------------------------------------------------------- lowerings
def _addr(cg: Codegen, ref) -> L.Value:
    return cg.b.sext(cg.expr(ref.addr), I64)


@lowering(*WHOLE_OPS, *BLOCK_OPS, "pair_reduce_sum")
def lower_repeat_reduce(cg: Codegen, s: ir.Intrinsic) -> None:
    dtype = s.attr("dtype")
    esize = dtype.sizeof()
    epr, epb = 256 // esize, 32 // esize
    kind = s.op.rsplit("_", 1)[1]
    dst, src = s.args[:2]
    if s.op in WHOLE_OPS:
        unit, voff, ioff, ibytes = whole_layout(kind, ReduceOrder(s.attr("order", 0)), esize)
        ends = [o + (esize if o == voff else ibytes) for o in (voff, ioff) if o is not None]
        group, rep_unit, res_stride, res_bytes, align = epr, unit, 0, max(ends), 0
    elif s.op in BLOCK_OPS:  # dst_rep_stride unit: 8 results (16 B half, 32 B float)
        voff, ioff, ibytes = 0, None, 0
        group, rep_unit, res_stride, res_bytes = epb, 8 * esize, esize, esize
        align = 1 if esize == 4 else 0   # 32-B alignment for float; half needs 16 B
    else:  # pair: dst_rep_stride unit 128 B
        voff, ioff, ibytes = 0, None, 0
        group, rep_unit, res_stride, res_bytes, align = 2, 128, esize, esize, 1
    consts = [KINDS[kind], group, rep_unit, res_stride, res_bytes,
              -1 if voff is None else voff, -1 if ioff is None else ioff, ibytes, align]
    rest = [cg._as_i64(cg.expr(e)) for e in s.args[2:]]
    fn = _declare(cg.module, f"asc_rgrp_{dtype.name}", GROUP_PARAMS)
    args = [_addr(cg, dst), _addr(cg, src)] + [cg.i64(c) for c in consts] + rest
    call_checked(cg, fn, args + [cg.i64(TP.OP_INDEX[s.op])], s.op, ("dst", "src"),
                 operands=s.args[:2])


@lowering(*FULL_OPS)
def lower_full_reduce(cg: Codegen, s: ir.Intrinsic) -> None:
    dtype = s.attr("dtype")
    dst, src, tmp = s.args[:3]
    kind = KINDS[s.op.split("_", 1)[1]]
    form = 0 if s.attr("form") == "count" else 1
    rest = [cg._as_i64(cg.expr(e)) for e in s.args[3:]]  # count, mkind, lo, hi, repeat, stride,
    count, mkind, lo, hi, repeat, stride, cal_index = rest  # cal_index
    fn = _declare(cg.module, f"asc_rfull_{dtype.name}", FULL_PARAMS)
    args = [_addr(cg, dst), _addr(cg, src), _addr(cg, tmp), cg.i64(kind), cg.i64(form), count,
            mkind, lo, hi, repeat, stride, cal_index, cg.i64(TP.OP_INDEX[s.op])]
    call_checked(cg, fn, args, s.op, ("dst", "src", "shared_tmp_buffer"), operands=s.args[:3])
