"""Codegen of set_deq_scale and cast_deq (semantics: ``ops/deq.py``).

The DEQSCALE register is kernel state: allocas initialised in the kernel's entry block (every
block starts with it unset), written by ``set_deq_scale`` and read by ``cast_deq``, which
passes its values to the runtime function of its source width (``asc_rt_deq_cast_b16`` /
``_b32``). The vector form of set_deq_scale stores its 16 packed words into the vdeq tensor
with ``asc_rt_deq_write`` (scalar-unit stores: checked, sanitized, timed) and points the
register at it. cast_deq checks every operand with ``check_local`` before touching memory.
"""
from __future__ import annotations

from llvmlite import ir as L

from ...dsl.types import Memory, PipeID
from ...simulator import abi
from ...simulator import timing_params as TP
from .. import ir
from ..ops import REGISTRY
from ..ops.deq import UNSET_HALF, UNSET_SCALAR, UNSET_VECTOR, VDEQ_GROUPS
from .core import Codegen, FnBuilder, lowering
from .footprint import check_strides, lane_span, operand_end
from .intrinsics import call_checked
from .lower_gather import for_lanes, mask_lanes
from .rtfuncs import call_rt, call_tm, rt
from .runtime_lib import declare_rt
from .types import F32, I16, I32, I64, PTR, intrinsic

E = abi.ErrorCode
UB = int(Memory.UB)
REG = ("scale", "offset", "sign", "half", "vdeq", "scalar_set", "half_set")
HALF = L.HalfType()


def _register(cg: Codegen) -> dict:
    """The register's allocas, made (and initialised: unset) in the entry block once."""
    regs = getattr(cg, "_deq_register", None)
    if regs is None:
        ab = cg.alloca_builder
        regs = {}
        for name in REG:
            regs[name] = ab.alloca(I64, name=f"deq.{name}")
            ab.store(L.Constant(I64, -1 if name == "vdeq" else 0), regs[name])
        cg._deq_register = regs
    return regs


def _f32_bits(b, x):
    return b.zext(b.bitcast(b.fptrunc(x, F32) if x.type != F32 else x, I32), I64)


@lowering("set_deq_scale")
def lower_set_deq_scale(cg: Codegen, s: ir.Intrinsic) -> None:
    b, regs = cg.b, _register(cg)
    form = s.attr("form")
    if form == "half":   # the half scale, kept as the float32 of the half value
        h = b.fptrunc(cg.expr(s.args[0]), HALF)
        b.store(_f32_bits(b, b.fpext(h, F32)), regs["half"])
        b.store(cg.i64(1), regs["half_set"])
    elif form == "scalar":
        scale, offset, sign = (cg.expr(a) for a in s.args)
        b.store(_f32_bits(b, scale), regs["scale"])
        b.store(cg._as_i64(offset), regs["offset"])
        b.store(cg._as_i64(sign), regs["sign"])
        b.store(cg.i64(1), regs["scalar_set"])
    else:
        vdeq = s.args[0]
        n = VDEQ_GROUPS
        scales, offsets, signs = s.args[1:1 + n], s.args[1 + n:1 + 2 * n], s.args[1 + 2 * n:]
        words = []
        for sc, off, sg in zip(scales, offsets, signs):
            w = _f32_bits(b, cg.expr(sc))
            w = b.or_(w, b.shl(b.and_(cg._as_i64(cg.expr(off)), cg.i64(0xFFFF)), cg.i64(32)))
            w = b.or_(w, b.shl(b.and_(cg._as_i64(cg.expr(sg)), cg.i64(1)), cg.i64(48)))
            words.append(w)
        addr = cg.b.sext(cg.expr(vdeq.addr), I64)
        call_checked(cg, declare_rt(cg.module, "deq_write"),
                     [addr] + words + [cg.i64(TP.OP_INDEX["set_deq_scale"])], "set_deq_scale",
                     ("vdeq",), operands=(vdeq,))
        b.store(addr, regs["vdeq"])
    cg.scalar_cost(2)


@rt("addr", *(f"w{k}" for k in range(VDEQ_GROUPS)), "op")
def deq_write(fb: FnBuilder, addr, op, site, **words):
    """The 16 packed parameter groups into the 128-byte vdeq tensor (scalar-unit stores)."""
    call_rt(fb, "check_local", fb.i64(UB), addr, fb.i64(8 * VDEQ_GROUPS), fb.i64(1),
            fb.i64(0), site)
    s = fb.i64(int(PipeID.PIPE_S))
    call_rt(fb, "san_issue", s, site)
    call_rt(fb, "san_access", s, fb.i64(UB), addr, fb.i64(8 * VDEQ_GROUPS), fb.i64(1), site)
    base = fb.ld(abi.MEM_BASE + UB)
    for k in range(VDEQ_GROUPS):
        p = fb.b.inttoptr(fb.b.add(base, fb.b.add(addr, fb.i64(8 * k))), PTR)
        fb.b.store(words[f"w{k}"], p)
        call_tm(fb, "scalar_access", 1, op)


CAST_PARAMS = ("dst", "src", "vdeq", "vec", "half_off", "scale", "offset", "sign", "half",
               "scalar_set", "half_set", "form", "count", "is_set", "mkind", "lo", "hi",
               "repeat", "dst_blk", "src_blk", "dst_rep", "src_rep", "op", "cls", "fam")


def _dst_end(fb: FnBuilder, repeats, blk, rep, span, half_off, des: int):
    """Bytes from dst to the end of the last byte written: lane j of repeat r goes to block
    r * rep + (j // 16) * blk, byte half_off + (j % 16) * des of it."""
    b = fb.b
    h_full, h_last = span

    def end_of(r, h):
        blocks = fb.sat_add(fb.sat_mul(r, rep), fb.sat_mul(b.sdiv(h, fb.i64(16)), blk))
        in_block = b.select(b.icmp_signed("==", blk, fb.i64(0)), fb.smin(h, fb.i64(15)),
                            b.srem(h, fb.i64(16)))
        return fb.sat_add(fb.sat_mul(blocks, fb.i64(32)),
                          b.add(half_off, b.mul(b.add(in_block, fb.i64(1)), fb.i64(des))))
    last = end_of(b.sub(repeats, fb.i64(1)), h_last)
    full = b.select(b.icmp_signed(">=", repeats, fb.i64(2)),
                    end_of(b.sub(repeats, fb.i64(2)), h_full), fb.i64(0))
    touches = b.and_(b.icmp_signed(">", repeats, fb.i64(0)),
                     b.icmp_signed(">=", h_last, fb.i64(0)))
    return b.select(touches, fb.smax(last, full), fb.i64(0))


def _define_cast(ses: int):
    epr, spb = 256 // ses, 32 // ses
    des = 1 if ses == 2 else 2

    def body(fb: FnBuilder, site, **a):
        b = fb.b
        vec = b.icmp_signed("!=", a["vec"], fb.i64(0))
        if ses == 2:
            fb.fail_with(b.and_(vec, b.icmp_signed("<", a["vdeq"], fb.i64(0))), E.VALUE_RANGE,
                         site, fb.i64(UNSET_VECTOR), fb.i64(0), fb.i64(0))
            fb.fail_with(b.and_(b.xor(vec, L.Constant(vec.type, 1)),
                                b.icmp_signed("==", a["scalar_set"], fb.i64(0))),
                         E.VALUE_RANGE, site, fb.i64(UNSET_SCALAR), fb.i64(0), fb.i64(0))
        else:
            fb.fail_with(b.icmp_signed("==", a["half_set"], fb.i64(0)), E.VALUE_RANGE, site,
                         fb.i64(UNSET_HALF), fb.i64(0), fb.i64(0))
        masked = b.icmp_signed("!=", a["form"], fb.i64(0))
        counts, m_lo, m_hi, total, repeats = mask_lanes(
            fb, masked, a["mkind"], a["lo"], a["hi"], a["repeat"], a["count"], epr, site,
            a["is_set"])
        one = fb.i64(1)
        dst_blk = b.select(masked, a["dst_blk"], one)
        src_blk = b.select(masked, a["src_blk"], one)
        dst_rep = b.select(masked, a["dst_rep"], fb.i64(epr // 16))
        src_rep = b.select(masked, a["src_rep"], fb.i64(8))
        check_strides(fb, site, [(0, dst_blk, dst_rep), (1, src_blk, src_rep)])
        span = lane_span(fb, counts, m_lo, m_hi, total, repeats, epr)
        half_off = a["half_off"] if ses == 2 else fb.i64(0)
        dst_ext = _dst_end(fb, repeats, dst_blk, dst_rep, span, half_off, des)
        src_ext = operand_end(fb, repeats, src_blk, src_rep, span, ses)
        ub = fb.i64(UB)
        call_rt(fb, "check_local", ub, a["dst"], dst_ext, fb.i64(1), fb.i64(0), site)
        call_rt(fb, "check_local", ub, a["src"], src_ext, fb.i64(1), fb.i64(1), site)
        if ses == 2:
            with b.if_then(vec):
                call_rt(fb, "check_local", ub, a["vdeq"], fb.i64(8 * VDEQ_GROUPS), fb.i64(1),
                        fb.i64(8), site)
        v = fb.i64(int(PipeID.PIPE_V))
        call_rt(fb, "san_issue", v, site)
        call_rt(fb, "san_access", v, ub, a["src"], src_ext, fb.i64(0), site)
        if ses == 2:
            with b.if_then(vec):
                call_rt(fb, "san_access", v, ub, a["vdeq"], fb.i64(8 * VDEQ_GROUPS),
                        fb.i64(0), site)
        base = fb.ld(abi.MEM_BASE + UB)

        def ptr(addr):
            return b.inttoptr(b.add(base, addr), PTR)

        def addrs(r, l):
            s_at = b.add(a["src"], b.add(
                b.mul(b.add(b.mul(r, src_rep), b.mul(b.sdiv(l, fb.i64(spb)), src_blk)),
                      fb.i64(32)), b.mul(b.srem(l, fb.i64(spb)), fb.i64(ses))))
            d_at = b.add(a["dst"], b.add(
                b.mul(b.add(b.mul(r, dst_rep), b.mul(b.sdiv(l, fb.i64(16)), dst_blk)),
                      fb.i64(32)), b.add(half_off, b.mul(b.srem(l, fb.i64(16)),
                                                          fb.i64(des)))))
            return s_at, d_at
        san = b.icmp_signed("!=", fb.ld(abi.SANITIZE), fb.i64(0))
        with b.if_then(san):
            for_lanes(fb, counts, m_lo, m_hi, total, repeats, epr, lambda r, l: call_rt(
                fb, "san_access", v, ub, addrs(r, l)[1], fb.i64(des), fb.i64(1), site))

        def f32_of(bits):
            return b.bitcast(b.trunc(bits, I32), F32)

        def work(r, l):
            s_at, d_at = addrs(r, l)
            if ses == 4:
                x = b.sitofp(b.load(ptr(s_at), typ=I32), F32)
                h = b.fptrunc(b.fmul(x, f32_of(a["half"])), HALF)
                b.store(b.bitcast(h, I16), ptr(d_at))
                return
            x = b.sitofp(b.load(ptr(s_at), typ=I16), F32)
            g = b.srem(b.add(b.mul(r, fb.i64(epr)), l), fb.i64(VDEQ_GROUPS))
            scale_b, off, sign = a["scale"], a["offset"], a["sign"]
            w = b.select(vec, b.load(ptr(b.add(fb.smax(a["vdeq"], fb.i64(0)),
                                               b.mul(g, fb.i64(8)))), typ=I64), fb.i64(0))
            scale_b = b.select(vec, b.and_(w, fb.i64(0xFFFFFFFF)), scale_b)
            off = b.select(vec, b.ashr(b.shl(w, fb.i64(16)), fb.i64(48)), off)
            sign = b.select(vec, b.and_(b.lshr(w, fb.i64(48)), fb.i64(1)), sign)
            off9 = b.ashr(b.shl(off, fb.i64(55)), fb.i64(55))
            val = b.fadd(b.fmul(x, f32_of(scale_b)), b.sitofp(off9, F32))
            rint = intrinsic(fb.module, "llvm.rint.f32", F32, [F32])
            sat = intrinsic(fb.module, "llvm.fptosi.sat.i32.f32", I32, [F32])
            q = b.sext(b.call(sat, [b.call(rint, [val])]), I64)
            signed = b.icmp_signed("!=", sign, fb.i64(0))
            q = fb.smax(q, b.select(signed, fb.i64(-128), fb.i64(0)))
            q = fb.smin(q, b.select(signed, fb.i64(127), fb.i64(255)))
            b.store(b.trunc(q, L.IntType(8)), ptr(d_at))
        for_lanes(fb, counts, m_lo, m_hi, total, repeats, epr, work)
        elems = b.select(counts, b.select(b.icmp_signed(">", repeats, fb.i64(0)), total,
                                          fb.i64(0)), b.mul(repeats, fb.i64(epr)))
        call_tm(fb, "vec", a["op"], a["cls"], a["fam"], elems, fb.i64(ses), a["src"],
                fb.i64(-1), site)

    body.__name__ = f"deq_cast_b{ses * 8}"
    rt(*CAST_PARAMS)(body)


for _ses in (2, 4):
    _define_cast(_ses)


@lowering("cast_deq")
def lower_cast_deq(cg: Codegen, s: ir.Intrinsic) -> None:
    b, regs = cg.b, _register(cg)
    src_dtype = s.attr("src_dtype")
    dst, src = (cg.b.sext(cg.expr(r.addr), I64) for r in s.args[:2])
    rest = [cg._as_i64(cg.expr(e)) for e in s.args[2:]]
    count, is_set, mkind, lo, hi, repeat, dst_blk, src_blk, dst_rep, src_rep = rest
    reg = {k: b.load(v, typ=I64) for k, v in regs.items()}
    spec = REGISTRY["cast_deq"]
    args = [dst, src, reg["vdeq"], cg.i64(int(s.attr("vec"))),
            cg.i64(0 if s.attr("half_block") else 16), reg["scale"], reg["offset"],
            reg["sign"], reg["half"], reg["scalar_set"], reg["half_set"],
            cg.i64(0 if s.attr("form") == "count" else 1), count, is_set, mkind, lo, hi, repeat,
            dst_blk, src_blk, dst_rep, src_rep, cg.i64(TP.OP_INDEX["cast_deq"]),
            cg.i64(TP.class_index(spec.cost)), cg.i64(TP.family(src_dtype))]
    fn = declare_rt(cg.module, f"deq_cast_b{src_dtype.sizeof() * 8}")
    call_checked(cg, fn, args, "cast_deq", ("dst", "src"), operands=s.args[:2])

