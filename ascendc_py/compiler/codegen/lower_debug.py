"""Codegen of printf and dump_tensor: each appends one binary record to the block's print buffer
(``abi.PRINT_PTR``; layout and decoding in ``ops/debug.py``) through one library call. The
record's site id names the format (the site's detail holds the printf segments, or dump_tensor's
dtype and position)."""
from __future__ import annotations

from llvmlite import ir as L

from ...dsl.types import bfloat16
from ...simulator import abi
from .. import ir
from ..ops.debug import HEADER_WORDS
from .core import Codegen, FnBuilder, lowering
from .intrinsics import call_checked, operand
from . import runtime_lib
from .rtfuncs import operand_pointer, rt
from .types import F64, I1, I64, PTR, bf16_to_f32, intrinsic

E = abi.ErrorCode
HEADER_BYTES = 8 * HEADER_WORDS


def _append(fb: FnBuilder, site, parts) -> None:
    """Append ``[site, payload bytes, payload…]`` to the print buffer if it fits, else count a
    dropped record. ``parts``: (pointer, bytes) pieces of the payload, copied in order."""
    b = fb.b
    buf = fb.ld(abi.PRINT_PTR)
    with b.if_then(b.icmp_signed("!=", buf, fb.i64(0))):
        words = b.inttoptr(buf, PTR)

        def word(k):
            return b.gep(words, [fb.i64(k)], source_etype=I64)
        cap, used = b.load(word(0), typ=I64), b.load(word(1), typ=I64)
        nbytes = fb.i64(0)
        for _, n in parts:
            nbytes = b.add(nbytes, n)
        need = b.add(fb.i64(16), b.and_(b.add(nbytes, fb.i64(7)), fb.i64(~7)))
        fits = b.icmp_signed("<=", b.add(used, need), cap)
        with b.if_else(fits) as (then, otherwise):
            with then:
                rec = b.add(buf, b.add(fb.i64(HEADER_BYTES), used))
                b.store(site, b.inttoptr(rec, PTR))
                b.store(nbytes, b.inttoptr(b.add(rec, fb.i64(8)), PTR))
                at = b.add(rec, fb.i64(16))
                memcpy = intrinsic(fb.module, "llvm.memcpy.p0.p0.i64", L.VoidType(),
                                   [PTR, PTR, I64, I1])
                for ptr, n in parts:
                    b.call(memcpy, [b.inttoptr(at, PTR), ptr, n, L.Constant(I1, 0)])
                    at = b.add(at, n)
                b.store(b.add(used, need), word(1))
            with otherwise:
                b.store(b.add(b.load(word(2), typ=I64), fb.i64(1)), word(2))


@rt("src", "nbytes")
def print_record(fb: FnBuilder, src, nbytes, site):
    """printf: the record's payload is ``nbytes`` bytes at address ``src`` (its values)."""
    _append(fb, site, [(fb.b.inttoptr(src, PTR), nbytes)])


@rt("mem", "a", "off", "count", "esize", "desc")
def dump_tensor(fb: FnBuilder, mem, a, off, count, esize, desc, site):
    """dump_tensor: payload [desc, address, count] then the first ``count`` elements."""
    b = fb.b
    fb.fail_with(b.icmp_signed("<", count, fb.i64(0)), E.NEGATIVE_COUNT, site, count)
    nbytes = fb.sat_mul(count, esize)
    start = fb.sat_mul(off, esize)
    data = operand_pointer(fb, mem, a, start, nbytes, esize, fb.i64(0), fb.i64(0), site)
    head = fb.alloca_builder.alloca(I64, size=fb.i64(3), name="dump_head")
    addr = b.select(b.icmp_signed("==", mem, fb.i64(0)), start, b.add(a, start))
    for k, v in enumerate((desc, addr, count)):
        b.store(v, b.gep(head, [fb.i64(k)], source_etype=I64))
    _append(fb, site, [(b.bitcast(head, PTR), fb.i64(24)), (data, nbytes)])


# ----------------------------------------------------------------------------- lowerings
def _as_word(cg: Codegen, e) -> L.Value:
    """A scalar as one 64-bit word: integers sign/zero-extended, floats as float64 bits."""
    v = cg.expr(e)
    dt = e.dtype
    if dt == bfloat16:
        v = bf16_to_f32(cg.b, v)
    if isinstance(v.type, (L.HalfType, L.FloatType)):
        v = cg.b.fpext(v, F64)
    if isinstance(v.type, L.DoubleType):
        return cg.b.bitcast(v, I64)
    if v.type.width == 64:
        return v
    if v.type.width == 1 or not dt.is_signed:
        return cg.b.zext(v, I64)
    return cg.b.sext(v, I64)


@lowering("printf")
def lower_printf(cg: Codegen, s: ir.Intrinsic) -> None:
    n = len(s.args)
    if n:
        arr = cg.alloca_builder.alloca(I64, size=cg.i64(n), name="printf_args")
        for k, e in enumerate(s.args):
            cg.b.store(_as_word(cg, e), cg.b.gep(arr, [cg.i64(k)], source_etype=I64))
        src = cg.b.ptrtoint(arr, I64)
    else:
        src = cg.i64(0)
    call_checked(cg, runtime_lib.declare_rt(cg.module, "print_record"), [src, cg.i64(8 * n)],
                 "printf", (s.attr("segments"),))


@lowering("dump_tensor")
def lower_dump_tensor(cg: Codegen, s: ir.Intrinsic) -> None:
    ref, desc, count = s.args
    dtype = s.attr("dtype")
    args = [*operand(cg, ref), cg._as_i64(cg.expr(count)), cg.i64(dtype.sizeof()),
            cg._as_i64(cg.expr(desc))]
    call_checked(cg, runtime_lib.declare_rt(cg.module, "dump_tensor"), args, "dump_tensor",
                 ("tensor", dtype.name, s.attr("position")), operands=s.args[:1])
