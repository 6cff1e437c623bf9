"""Codegen of add_deq_relu (semantics: ``ops/add_deq.py``).

Like the fused casts (``lower_fused_cast.py``, whose structure this follows with
``lower_convert``'s instruction helpers), an element loop ``asc_adr_loop(ptr dst, ptr src0, ptr
src1, i64 n, i64 scale_bits)`` and two instructions (count and masked form) that check every
operand (and record them in sanitize mode) before the loop runs. The half scale comes from the
DEQSCALE register (``lower_deq._register``); an unset register stops the kernel (VALUE_RANGE,
the message of cast_deq's int32 form).
"""
from __future__ import annotations

from llvmlite import ir as L

from ...dsl.types import int32
from ...simulator import abi
from .. import ir
from ..ops.deq import UNSET_HALF
from . import runtime_lib
from .core import Codegen, lowering
from .intrinsics import call_checked
from .lower_convert import _begin, _check, _end, _loop_function, _ptr, _reset_mask, _signature, _timing
from .lower_deq import _register
from .lower_fused_cast import masked_three_operands
from .types import F32, I16, I32, I64, PTR

E = abi.ErrorCode
OP = "add_deq_relu"
LOOP = "asc_adr_loop"
PARAMS = ("dst", "src0", "src1", "count", "half", "half_set", "site")
MASKED_PARAMS = ("dst", "src0", "src1", "is_set", "kind", "lo", "hi", "repeat", "dst_blk",
                 "src0_blk", "src1_blk", "dst_rep", "src0_rep", "src1_rep", "half", "half_set",
                 "site")
ES, ED, EPR = 4, 2, 64


def _define_loop(module) -> L.Function:
    def body(b, a, i):
        x = b.load(b.gep(a[1], [i], source_etype=I32), typ=I32)
        y = b.load(b.gep(a[2], [i], source_etype=I32), typ=I32)
        scale = b.bitcast(b.trunc(a[4], I32), F32)
        v = b.fmul(b.sitofp(b.add(x, y), F32), scale)                 # the int32 sum wraps
        v = b.select(b.fcmp_ordered(">", v, L.Constant(F32, 0.0)), v, L.Constant(F32, 0.0))
        h = b.fptrunc(v, L.HalfType())
        b.store(b.bitcast(h, I16), b.gep(a[0], [i], source_etype=I16))
    _loop_function(module, LOOP, [PTR, PTR, PTR, I64, I64], 3, body)
    return module.globals[LOOP]


def _unset(fb, a) -> None:
    fb.fail_with(fb.b.icmp_signed("==", a["half_set"], fb.i64(0)), E.VALUE_RANGE, a["site"],
                 fb.i64(UNSET_HALF), fb.i64(0), fb.i64(0))


@runtime_lib.library_definer(shard="lib.adddeq")
def define_library(module: L.Module) -> list[str]:
    loop = _define_loop(module)
    # count form
    fb, a = _begin(module, "asc_adr_count", PARAMS)
    b, count, site = fb.b, a["count"], a["site"]
    fb.fail_with(b.icmp_signed("<", count, fb.i64(0)), E.NEGATIVE_COUNT, site, count)
    _unset(fb, a)
    _check(fb, a["dst"], fb.sat_mul(count, fb.i64(ED)), 0, site)
    _check(fb, a["src0"], fb.sat_mul(count, fb.i64(ES)), 1, site)
    _check(fb, a["src1"], fb.sat_mul(count, fb.i64(ES)), 2, site)
    b.call(loop, [_ptr(fb, a["dst"]), _ptr(fb, a["src0"]), _ptr(fb, a["src1"]), count,
                  a["half"]])
    _reset_mask(fb)
    _timing(fb, OP, int32, count, ES, a["src0"], a["src1"], site)
    _end(fb)
    # masked form
    fb, a = _begin(module, "asc_adr_masked", MASKED_PARAMS)
    site = a["site"]
    _unset(fb, a)
    count = masked_three_operands(fb, a, EPR, ED, ES, loop, [a["half"]])
    _timing(fb, OP, int32, count, ES, a["src0"], a["src1"], site)
    _end(fb)
    return [LOOP, "asc_adr_count", "asc_adr_masked"]


@lowering(OP)
def lower_add_deq_relu(cg: Codegen, s: ir.Intrinsic) -> None:
    masked = s.attr("form") == "masked"
    name = "asc_adr_masked" if masked else "asc_adr_count"
    fn = cg.module.globals.get(name) or L.Function(
        cg.module, _signature(MASKED_PARAMS if masked else PARAMS), name=name)
    regs = _register(cg)
    args = [cg.b.sext(cg.expr(r.addr), I64) for r in s.args[:3]]
    args += [cg._as_i64(cg.expr(e)) for e in s.args[3:]]
    args += [cg.b.load(regs["half"], typ=I64), cg.b.load(regs["half_set"], typ=I64)]
    call_checked(cg, fn, args, OP, ("dst", "src0", "src1"), operands=s.args[:3])

