"""Codegen of the fused casts ``add_relu_cast``, ``sub_relu_cast`` and ``mul_cast`` (semantics:
``ops/fused.py``) and their runtime-library functions.

Like ``asc.cast`` (``lower_convert.py``, whose instruction helpers this module reuses), each
(op, src, dst) has an element loop ``asc_fcvt_<op>_<src>_<dst>(ptr dst, ptr src0, ptr src1,
i64 n)`` (the operation in the sources' dtype, relu, then the conversion ``asc.cast`` does with
CAST_RINT) and two instructions, the count form and the masked form, whose repeats cover the
lanes of the wider source type; the destination, narrower, uses fewer 32-byte blocks of each
repeat (count form: half as many).
"""
from __future__ import annotations

from llvmlite import ir as L

from ...dsl.types import RoundMode
from .. import ir
from ..ops import REGISTRY
from . import runtime_lib
from .core import Codegen, lowering
from .footprint import check_strides, lane_span, operand_end
from .intrinsics import call_checked
from .lower_convert import (_begin, _check, _end, _for_active_lanes, _lane_address, _loop_function,
                            _mask_state, _ptr, _reset_mask, _signature, _timing, cast_elem)
from .types import I1, I64, PTR, ElemBuilder, memory_type

OPS = ("add_relu_cast", "sub_relu_cast", "mul_cast")
PARAMS = ("dst", "src0", "src1", "count", "site")
MASKED_PARAMS = ("dst", "src0", "src1", "is_set", "kind", "lo", "hi", "repeat", "dst_blk",
                 "src0_blk", "src1_blk", "dst_rep", "src0_rep", "src1_rep", "site")
RINT = RoundMode.CAST_RINT


def _pairs(op):
    return [(s, d) for d, s in REGISTRY[op].mixed]


def loop_name(op, src, dst) -> str:
    return f"asc_fcvt_{op}_{src.name}_{dst.name}"


def inst_name(op, src, dst, masked: bool) -> str:
    return f"asc_fcv{'m' if masked else ''}_{op}_{src.name}_{dst.name}"


def _define_loop(module, op, src, dst) -> L.Function:
    st = memory_type(src)

    def body(b, a, i):
        x = b.load(b.gep(a[1], [i], source_etype=st), typ=st)
        y = b.load(b.gep(a[2], [i], source_etype=st), typ=st)
        eb = ElemBuilder(b, module, src)
        r = {"add_relu_cast": eb.add, "sub_relu_cast": eb.sub, "mul_cast": eb.mul}[op](x, y)
        if op != "mul_cast":
            r = eb.max(r, eb.zero(r))
        out = cast_elem(b, module, r, src, dst, (RINT,), L.Constant(I64, int(RINT)))
        b.store(out, b.gep(a[0], [i], source_etype=memory_type(dst)))
    _loop_function(module, loop_name(op, src, dst), [PTR, PTR, PTR, I64], 3, body)
    return module.globals[loop_name(op, src, dst)]


def _define(module, op, src, dst, loop) -> list[str]:
    es, ed = src.sizeof(), dst.sizeof()
    # count form
    fb, a = _begin(module, inst_name(op, src, dst, False), PARAMS)
    b, count, site = fb.b, a["count"], a["site"]
    from ...simulator import abi
    fb.fail_with(b.icmp_signed("<", count, fb.i64(0)), abi.ErrorCode.NEGATIVE_COUNT, site, count)
    _check(fb, a["dst"], fb.sat_mul(count, fb.i64(ed)), 0, site)
    _check(fb, a["src0"], fb.sat_mul(count, fb.i64(es)), 1, site)
    _check(fb, a["src1"], fb.sat_mul(count, fb.i64(es)), 2, site)
    b.call(loop, [_ptr(fb, a["dst"]), _ptr(fb, a["src0"]), _ptr(fb, a["src1"]), count])
    _reset_mask(fb)
    _timing(fb, op, src, count, es, a["src0"], a["src1"], site)
    _end(fb)
    # masked form: a repeat is 256 bytes of each source
    epr = 256 // es
    fb, a = _begin(module, inst_name(op, src, dst, True), MASKED_PARAMS)
    b, site = fb.b, a["site"]
    count = masked_three_operands(fb, a, epr, ed, es, loop, [])
    _timing(fb, op, src, count, es, a["src0"], a["src1"], site)
    _end(fb)
    return [inst_name(op, src, dst, False), inst_name(op, src, dst, True)]


def masked_three_operands(fb, a, epr: int, ed: int, es: int, loop, extra: list):
    """The body of a masked (dst, src0, src1) form whose repeat is ``epr`` elements of each
    source (``ed``/``es``: element sizes): strides and each operand's extent checked, then one
    call of ``loop(dst, src0, src1, n, *extra)`` over the whole run when every operand is
    contiguous and the mask full (or in counter mode), else one per active lane. Returns the
    element count the timing charges."""
    b, site = fb.b, a["site"]
    counter, lo, hi, total, repeats, full = _mask_state(fb, a, epr)
    ops = (("dst", ed, 0), ("src0", es, 1), ("src1", es, 2))
    check_strides(fb, site, [(w, a[f"{n}_blk"], a[f"{n}_rep"]) for n, _, w in ops])
    span = lane_span(fb, counter, lo, hi, total, repeats, epr)
    contiguous = L.Constant(I1, 1)
    for name, esize, which in ops:
        blk, rep = a[f"{name}_blk"], a[f"{name}_rep"]
        _check(fb, a[name], operand_end(fb, repeats, blk, rep, span, esize), which, site)
        contiguous = b.and_(contiguous, b.and_(b.icmp_signed("==", blk, fb.i64(1)),
                                               b.icmp_signed("==", rep,
                                                             fb.i64(epr * esize // 32))))
    count = b.select(counter, total, b.mul(repeats, fb.i64(epr)))
    with b.if_else(b.and_(contiguous, b.or_(counter, full))) as (fast, slow):
        with fast:
            b.call(loop, [_ptr(fb, a[n]) for n, _, _ in ops] + [count] + extra)
        with slow:
            def lane(r, j):
                ptrs = [_ptr(fb, _lane_address(fb, a[n], a[f"{n}_blk"], a[f"{n}_rep"], r, j, e))
                        for n, e, _ in ops]
                b.call(loop, ptrs + [fb.i64(1)] + extra)
            _for_active_lanes(fb, counter, lo, hi, total, repeats, epr, lane)
    return count


@runtime_lib.library_definer(shard="lib.fusedcast")
def define_library(module: L.Module) -> list[str]:
    names: list[str] = []
    for op in OPS:
        for src, dst in _pairs(op):
            loop = _define_loop(module, op, src, dst)
            names += [loop.name] + _define(module, op, src, dst, loop)
    return names


@lowering(*OPS)
def lower_fused_cast(cg: Codegen, s: ir.Intrinsic) -> None:
    src, dst = s.attr("src_dtype"), s.attr("dtype")
    masked = s.attr("form") == "masked"
    name = inst_name(s.op, src, dst, masked)
    fn = cg.module.globals.get(name) or L.Function(
        cg.module, _signature(MASKED_PARAMS if masked else PARAMS), name=name)
    args = [cg.b.sext(cg.expr(r.addr), I64) for r in s.args[:3]]
    args += [cg._as_i64(cg.expr(e)) for e in s.args[3:]]
    call_checked(cg, fn, args, s.op, ("dst", "src0", "src1"), operands=s.args[:3])
