"""Codegen of the scalar-unit functions (``ops/scalar_bits.py``): a few LLVM instructions in
the kernel (llvm.cttz/ctpop/ctlz; scalar_cast through ``lower_convert.cast_elem``, the element
conversion of ``asc.cast``), charged as one scalar ALU operation."""
from __future__ import annotations

from llvmlite import ir as L

from ...dsl.types import float32
from .. import ir
from .core import Codegen, lowering
from .lower_convert import cast_elem
from .types import I1, I64, intrinsic


@lowering("scalar_bits")
def lower_scalar_bits(cg: Codegen, s: ir.Intrinsic) -> None:
    b = cg.b
    x = cg._as_i64(cg.expr(s.args[0]))
    kind = s.attr("kind")
    false = L.Constant(I1, 0)
    cttz = intrinsic(cg.module, "llvm.cttz.i64", I64, [I64, I1])
    ctlz = intrinsic(cg.module, "llvm.ctlz.i64", I64, [I64, I1])
    ctpop = intrinsic(cg.module, "llvm.ctpop.i64", I64, [I64])
    if kind == "scalar_get_sff_value":
        v = x if s.attr("count_value") else b.not_(x)
        r = b.select(b.icmp_signed("==", v, cg.i64(0)), cg.i64(-1), b.call(cttz, [v, false]))
    elif kind == "scalar_get_count_of_value":
        pop = b.call(ctpop, [x])
        r = pop if s.attr("count_value") else b.sub(cg.i64(64), pop)
    elif kind == "scalar_count_leading_zero":
        r = b.call(ctlz, [x, false])
    else:  # count_bits_cnt_same_as_sign_bit
        y = b.xor(x, b.ashr(x, cg.i64(63)))
        r = b.select(b.icmp_signed("==", y, cg.i64(0)), cg.i64(-1),
                     b.sub(b.call(ctlz, [y, false]), cg.i64(1)))
    b.store(r, cg.var(s.results[0]))
    cg.scalar_cost(1)


@lowering("scalar_cast")
def lower_scalar_cast(cg: Codegen, s: ir.Intrinsic) -> None:
    from ..sema.scalar_bits import CAST_MODES
    dtype = s.attr("dtype")
    x = cg.expr(s.args[0])
    r = cast_elem(cg.b, cg.module, x, float32, dtype, CAST_MODES[dtype], cg.i64(s.attr("mode")))
    cg.b.store(r, cg.var(s.results[0]))
    cg.scalar_cost(1)
