"""Codegen of brcb, gatherb, gather and scatter (semantics: ``ops/gather.py``).

Each call is one call of a runtime function (``@rt``, one per element width where the lane
geometry depends on it): ``asc_rt_idx_brcb``, ``asc_rt_idx_gatherb``, ``asc_rt_idx_elems_b16`` /
``_b32`` (gather and scatter). Before touching memory each one checks its operands with
``check_local`` (so the fresh-memory refill sees every byte reached): the offset tensor, the
lane-addressed operand, and the indexed operand at every offset (gatherb: each block; gather /
scatter: the range from the lowest to the highest offset, after every offset was checked to be
aligned). An offset past the indexed tensor stops the kernel at the line (TensorExtentError);
a misaligned one too (ValueRangeError). Sanitize mode sees the V pipe read the offsets and the
source and write the destination, block by block (brcb, gatherb) or element by element
(gather, scatter: only when sanitizing). Timing: one vector instruction (``call_tm("vec")``)
of the op's cost class.
"""
from __future__ import annotations

from llvmlite import ir as L

from ...dsl.types import Memory, PipeID
from ...simulator import abi
from ...simulator import timing_params as TP
from .. import ir
from ..ops import REGISTRY
from ..ops.gather import MISALIGNED_OFFSET, NEGATIVE_BASE, SAME_ADDRESS
from .core import Codegen, FnBuilder, lowering
from .footprint import check_strides, lane_span, operand_end
from .intrinsics import call_checked
from .rtfuncs import call_rt, call_tm, counted, lanes_mask, rt
from .runtime_lib import declare_rt
from .types import I1, I16, I32, I64, PTR

E = abi.ErrorCode
UB = int(Memory.UB)
V = int(PipeID.PIPE_V)


def _ptr(fb: FnBuilder, addr):
    return fb.b.inttoptr(fb.b.add(fb.ld(abi.MEM_BASE + UB), addr), PTR)


def _move(fb: FnBuilder, esize: int, dst, src) -> None:
    """Copy one element of ``esize`` bytes between UB byte addresses."""
    t = I16 if esize == 2 else I32
    fb.b.store(fb.b.load(_ptr(fb, src), typ=t), _ptr(fb, dst))


def _check(fb, addr, nbytes, aligned, which, site):
    call_rt(fb, "check_local", fb.i64(UB), addr, nbytes, fb.i64(aligned), fb.i64(which), site)


def _san(fb, addr, nbytes, write, site):
    call_rt(fb, "san_access", fb.i64(V), fb.i64(UB), addr, nbytes, fb.i64(write), site)


def _repeat_range(fb, repeat, site):
    b = fb.b
    bad = b.or_(b.icmp_signed("<", repeat, fb.i64(0)), b.icmp_signed(">", repeat, fb.i64(255)))
    fb.fail_with(bad, E.REPEAT_RANGE, site, repeat)


def _block_dst_end(fb, repeat, blk, rep):
    """Bytes from dst to the end of the last of the 8 blocks per repeat (0 without repeats)."""
    b = fb.b
    last = fb.sat_add(fb.sat_mul(b.sub(repeat, fb.i64(1)), rep), fb.sat_mul(fb.i64(7), blk))
    end = fb.sat_add(fb.sat_mul(last, fb.i64(32)), fb.i64(32))
    return b.select(b.icmp_signed(">", repeat, fb.i64(0)), end, fb.i64(0))


def _block_addr(fb, dst, r, i, blk, rep):
    b = fb.b
    return b.add(dst, b.mul(b.add(b.mul(r, rep), b.mul(i, blk)), fb.i64(32)))


# ----------------------------------------------------------------------------- brcb
@rt("dst", "src", "esize", "repeat", "dst_blk", "dst_rep", "op", "cls", "fam")
def idx_brcb(fb: FnBuilder, dst, src, esize, repeat, dst_blk, dst_rep, op, cls, fam, site):
    """brcb: 8 source elements per repeat, each filling one 32-byte destination block."""
    b = fb.b
    _repeat_range(fb, repeat, site)
    check_strides(fb, site, [(0, dst_blk, dst_rep)])
    blk = b.select(b.icmp_signed("==", dst_blk, fb.i64(0)), fb.i64(1), dst_blk)
    has = b.icmp_signed(">", repeat, fb.i64(0))
    fb.fail_with(b.and_(has, b.icmp_signed("==", dst, src)), E.VALUE_RANGE, site,
                 fb.i64(SAME_ADDRESS), dst, src)
    _check(fb, dst, _block_dst_end(fb, repeat, blk, dst_rep), 1, 0, site)
    src_ext = b.mul(b.mul(repeat, fb.i64(8)), esize)
    _check(fb, src, src_ext, 1, 1, site)
    call_rt(fb, "san_issue", fb.i64(V), site)
    _san(fb, src, src_ext, 0, site)
    epb = b.sdiv(fb.i64(32), esize)
    two = b.icmp_signed("==", esize, fb.i64(2))

    def per_repeat(r):
        def per_block(i):
            at = _block_addr(fb, dst, r, i, blk, dst_rep)
            _san(fb, at, fb.i64(32), 1, site)
            s = b.add(src, b.mul(b.add(b.mul(r, fb.i64(8)), i), esize))

            def fill(j):
                d = b.add(at, b.mul(j, esize))
                with b.if_else(two) as (half, word):
                    with half:
                        _move(fb, 2, d, s)
                    with word:
                        _move(fb, 4, d, s)
            counted(fb, epb, fill)
        counted(fb, fb.i64(8), per_block)
    counted(fb, repeat, per_repeat)
    call_tm(fb, "vec", op, cls, fam, b.mul(repeat, b.sdiv(fb.i64(256), esize)), esize, src,
            fb.i64(-1), site)


# ----------------------------------------------------------------------------- gatherb
@rt("dst", "src", "off", "esize", "repeat", "dst_blk", "dst_rep", "op", "cls", "fam")
def idx_gatherb(fb: FnBuilder, dst, src, off, esize, repeat, dst_blk, dst_rep, op, cls, fam,
                site):
    """gatherb: 8 blocks of 32 bytes per repeat, each from src at a uint32 byte offset."""
    b = fb.b
    _repeat_range(fb, repeat, site)
    check_strides(fb, site, [(0, dst_blk, dst_rep)])
    n = b.mul(repeat, fb.i64(8))
    _check(fb, off, b.mul(n, fb.i64(4)), 1, 2, site)
    _check(fb, dst, _block_dst_end(fb, repeat, dst_blk, dst_rep), 1, 0, site)

    def offset(k):
        return b.zext(b.load(_ptr(fb, b.add(off, b.mul(k, fb.i64(4)))), typ=I32), I64)

    def check(k):  # every offset: 32-B aligned, its block inside src
        o = offset(k)
        mis = b.icmp_signed("!=", b.and_(o, fb.i64(31)), fb.i64(0))
        fb.fail_with(mis, E.VALUE_RANGE, site, fb.i64(MISALIGNED_OFFSET), k, o)
        _check(fb, b.add(src, o), fb.i64(32), 1, 1, site)
    counted(fb, n, check)
    call_rt(fb, "san_issue", fb.i64(V), site)
    _san(fb, off, b.mul(n, fb.i64(4)), 0, site)

    def per_repeat(r):
        def per_block(i):
            k = b.add(b.mul(r, fb.i64(8)), i)
            s = b.add(src, offset(k))
            d = _block_addr(fb, dst, r, i, dst_blk, dst_rep)
            _san(fb, s, fb.i64(32), 0, site)
            _san(fb, d, fb.i64(32), 1, site)

            def word(j):
                sp, dp = _ptr(fb, b.add(s, b.mul(j, fb.i64(8)))), \
                    _ptr(fb, b.add(d, b.mul(j, fb.i64(8))))
                b.store(b.load(sp, typ=I64), dp)
            counted(fb, fb.i64(4), word)
        counted(fb, fb.i64(8), per_block)
    counted(fb, repeat, per_repeat)
    call_tm(fb, "vec", op, cls, fam, b.mul(repeat, b.sdiv(fb.i64(256), esize)), esize, src,
            fb.i64(-1), site)


def mask_lanes(fb: FnBuilder, masked, mkind, lo, hi, repeat, count, epr: int, site,
               is_set=None):
    """The lanes of a count-form (``masked`` false) or masked instruction of ``epr`` lanes per
    repeat, setting the mask register from the mask as the masked vector ops do (counter mode
    after set_mask_count: the mask is an element count; ``is_set`` false: the register is used
    as set_vector_mask left it). Returns (counts: the lanes are the first ``total`` elements,
    lo, hi: the normal-mode bit mask, total, repeats)."""
    b = fb.b
    counter = b.and_(masked, b.icmp_signed("!=", fb.ld(abi.MASK_MODE), fb.i64(0)))
    normal_masked = b.and_(masked, b.xor(counter, L.Constant(I1, 1)))
    setting = masked if is_set is None else b.and_(masked, b.icmp_signed("!=", is_set,
                                                                         fb.i64(0)))
    with b.if_then(setting):
        contiguous = b.icmp_signed("==", mkind, fb.i64(0))
        bad_m = b.and_(b.and_(contiguous, normal_masked),
                       b.or_(b.icmp_signed("<", lo, fb.i64(1)),
                             b.icmp_signed(">", lo, fb.i64(epr))))
        fb.fail_with(bad_m, E.MASK_RANGE, site, lo, fb.i64(epr))
        hi_arg = hi if epr > 64 else fb.i64(0)
        c_lo, c_hi = lanes_mask(fb, lo)
        use_contig = b.and_(contiguous, normal_masked)
        fb.st(abi.MASK_LO, b.select(use_contig, c_lo, lo))
        fb.st(abi.MASK_HI, b.select(use_contig, c_hi, b.select(counter, fb.i64(0), hi_arg)))
    m_lo = b.select(masked, fb.ld(abi.MASK_LO), fb.i64(-1))
    m_hi = b.select(masked, fb.ld(abi.MASK_HI), fb.i64(-1))
    if epr <= 64:
        m_hi = fb.i64(0)
    with b.if_then(normal_masked):
        _repeat_range(fb, repeat, site)
    total = b.select(masked, m_lo, count)
    counts = b.or_(b.xor(masked, L.Constant(I1, 1)), counter)
    fb.fail_with(b.and_(counts, b.icmp_signed("<", total, fb.i64(0))), E.NEGATIVE_COUNT,
                 site, total)
    repeats = b.select(counts, fb.ceil_div(total, fb.i64(epr)), repeat)
    empty = b.and_(normal_masked, b.icmp_signed("==", b.or_(m_lo, m_hi), fb.i64(0)))
    return counts, m_lo, m_hi, total, b.select(empty, fb.i64(0), repeats)


def for_lanes(fb: FnBuilder, counts, m_lo, m_hi, total, repeats, epr: int, visit) -> None:
    """visit(r, l) for each active lane l of each repeat r, in order."""
    b = fb.b

    def per_repeat(r):
        left = b.sub(total, b.mul(r, fb.i64(epr)))
        r_lo, r_hi = lanes_mask(fb, left)
        a_lo = b.select(counts, r_lo, m_lo)
        a_hi = b.select(counts, r_hi, m_hi) if epr > 64 else fb.i64(0)

        def per_lane(l):
            low = b.icmp_signed("<", l, fb.i64(64))
            word = b.select(low, a_lo, a_hi)
            bit = b.and_(b.lshr(word, b.and_(l, fb.i64(63))), fb.i64(1))
            with b.if_then(b.icmp_signed("!=", bit, fb.i64(0))):
                visit(r, l)
        counted(fb, fb.i64(epr), per_lane)
    counted(fb, repeats, per_repeat)


# ----------------------------------------------------------------------------- gather/scatter
ELEM_PARAMS = ("dst", "src", "off", "base", "scatter", "form", "count", "mkind", "lo", "hi",
               "repeat", "rep_stride", "op", "cls", "fam")


def _define_elems(esize: int):
    epr = 256 // esize

    def body(fb: FnBuilder, dst, src, off, base, scatter, form, count, mkind, lo, hi, repeat,
             rep_stride, op, cls, fam, site):
        b = fb.b
        is_scatter = b.icmp_signed("!=", scatter, fb.i64(0))
        lane_op = b.select(is_scatter, src, dst)      # the operand addressed lane by lane
        indexed = b.select(is_scatter, dst, src)      # the operand the offsets index
        lane_which = b.select(is_scatter, fb.i64(1), fb.i64(0))
        idx_which = b.select(is_scatter, fb.i64(0), fb.i64(1))
        fb.fail_with(b.icmp_signed("<", base, fb.i64(0)), E.VALUE_RANGE, site,
                     fb.i64(NEGATIVE_BASE), base, fb.i64(0))
        masked = b.icmp_signed("!=", form, fb.i64(0))
        counts, m_lo, m_hi, total, repeats = mask_lanes(fb, masked, mkind, lo, hi, repeat,
                                                        count, epr, site)
        stride = b.select(masked, rep_stride, fb.i64(8))   # count form: contiguous repeats
        with b.if_else(is_scatter) as (sc, ga):
            with sc:
                check_strides(fb, site, [(1, fb.i64(1), stride)])
            with ga:
                check_strides(fb, site, [(0, fb.i64(1), stride)])
        span = lane_span(fb, counts, m_lo, m_hi, total, repeats, epr)
        lane_end = operand_end(fb, repeats, fb.i64(1), stride, span, esize)
        # offsets: lane l of repeat r uses offset r * epr + l, up to the highest active lane
        off_end = operand_end(fb, repeats, fb.i64(1), fb.i64(epr * 4 // 32), span, 4)
        call_rt(fb, "check_local", fb.i64(UB), lane_op, lane_end, fb.i64(1), lane_which, site)
        _check(fb, off, off_end, 1, 2, site)
        san = b.icmp_signed("!=", fb.ld(abi.SANITIZE), fb.i64(0))
        lowest = fb.alloca_builder.alloca(I64)
        highest = fb.alloca_builder.alloca(I64)
        b.store(fb.i64(2**62), lowest)
        b.store(fb.i64(-1), highest)

        def lanes(visit):
            """visit(k, lane address) for each active lane in order."""
            def one(r, l):
                at = b.add(lane_op, b.add(b.mul(b.mul(r, stride), fb.i64(32)),
                                          b.mul(l, fb.i64(esize))))
                visit(b.add(b.mul(r, fb.i64(epr)), l), at)
            for_lanes(fb, counts, m_lo, m_hi, total, repeats, epr, one)

        def byte_of(k):
            o = b.zext(b.load(_ptr(fb, b.add(off, b.mul(k, fb.i64(4)))), typ=I32), I64)
            return b.add(base, o)

        def bounds(k, at):
            o = byte_of(k)
            mis = b.icmp_signed("!=", b.and_(o, fb.i64(esize - 1)), fb.i64(0))
            fb.fail_with(mis, E.VALUE_RANGE, site, fb.i64(MISALIGNED_OFFSET), k, o)
            b.store(fb.smin(b.load(lowest, typ=I64), o), lowest)
            b.store(fb.smax(b.load(highest, typ=I64), o), highest)
        lanes(bounds)
        lo_b, hi_b = b.load(lowest, typ=I64), b.load(highest, typ=I64)
        any_ = b.icmp_signed(">=", hi_b, fb.i64(0))
        start = b.select(any_, b.add(indexed, lo_b), indexed)
        reach = b.select(any_, b.add(b.sub(hi_b, lo_b), fb.i64(esize)), fb.i64(0))
        call_rt(fb, "check_local", fb.i64(UB), start, reach, fb.i64(0), idx_which, site)
        call_rt(fb, "san_issue", fb.i64(V), site)
        with b.if_then(san):
            _san(fb, off, off_end, 0, site)
            with b.if_then(is_scatter):
                _san(fb, lane_op, lane_end, 0, site)

            def san_lane(k, at):
                e = b.add(indexed, byte_of(k))
                with b.if_else(is_scatter) as (sc, ga):
                    with sc:
                        _san(fb, e, fb.i64(esize), 1, site)
                    with ga:
                        _san(fb, e, fb.i64(esize), 0, site)
                        _san(fb, at, fb.i64(esize), 1, site)
            lanes(san_lane)

        def work(k, at):
            e = b.add(indexed, byte_of(k))
            with b.if_else(is_scatter) as (sc, ga):
                with sc:
                    _move(fb, esize, e, at)
                with ga:
                    _move(fb, esize, at, e)
        lanes(work)
        elems = b.select(counts, b.select(b.icmp_signed(">", repeats, fb.i64(0)), total,
                                          fb.i64(0)), b.mul(repeats, fb.i64(epr)))
        call_tm(fb, "vec", op, cls, fam, elems, fb.i64(esize), lane_op, fb.i64(-1), site)

    body.__name__ = f"idx_elems_b{esize * 8}"
    rt(*ELEM_PARAMS)(body)


for _esize in (2, 4):
    _define_elems(_esize)


# ----------------------------------------------------------------------------- lowerings
def _addr(cg: Codegen, ref) -> L.Value:
    return cg.b.sext(cg.expr(ref.addr), I64)


def _timing_consts(cg: Codegen, s: ir.Intrinsic, width_family: bool):
    dtype = s.attr("dtype")
    spec = REGISTRY[s.op]
    fam = (0 if dtype.sizeof() == 2 else 1) if width_family else TP.family(dtype)
    return [cg.i64(TP.OP_INDEX[s.op]), cg.i64(TP.class_index(spec.cost)), cg.i64(fam)]


@lowering("brcb", "gatherb")
def lower_block_moves(cg: Codegen, s: ir.Intrinsic) -> None:
    dtype = s.attr("dtype")
    tensors = 2 if s.op == "brcb" else 3
    rest = [cg._as_i64(cg.expr(e)) for e in s.args[tensors:]]   # repeat, dst_blk, dst_rep
    addrs = [_addr(cg, r) for r in s.args[:tensors]]
    fn = declare_rt(cg.module, "idx_" + s.op)
    args = addrs + [cg.i64(dtype.sizeof())] + rest + _timing_consts(cg, s, False)
    detail = ("dst", "src0") if s.op == "brcb" else ("dst", "src0", "offset")
    call_checked(cg, fn, args, s.op, detail, operands=s.args[:tensors])


@lowering("gather", "scatter")
def lower_elem_moves(cg: Codegen, s: ir.Intrinsic) -> None:
    dtype = s.attr("dtype")
    dst, src, off = (_addr(cg, r) for r in s.args[:3])
    rest = [cg._as_i64(cg.expr(e)) for e in s.args[3:]]
    base, count, mkind, lo, hi, repeat, stride = rest
    form = 0 if s.attr("form") == "count" else 1
    fn = declare_rt(cg.module, f"idx_elems_b{dtype.sizeof() * 8}")
    args = [dst, src, off, base, cg.i64(int(s.op == "scatter")), cg.i64(form), count, mkind,
            lo, hi, repeat, stride] + _timing_consts(cg, s, True)
    detail = ("dst", "src", "src_offset" if s.op == "gather" else "dst_offset")
    call_checked(cg, fn, args, s.op, detail, operands=s.args[:3])


__all__ = ["idx_brcb", "idx_gatherb", "ELEM_PARAMS"]
