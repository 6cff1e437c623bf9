"""Codegen of the atomic GM-write switches and the read-modify-write they select (semantics and
the order across blocks: ``ops/atomic.py``).

``set_atomic_*`` store the mode (low byte) and the dtype code (bits 8..15) in ctx
(``abi.ATOMIC``): one scalar instruction. The copies that write GM from local memory (``lower_movement.py``) call
``gm_store``: a plain ``memmove`` unless a mode is set and the destination is GM, then the
library's ``atomic_write``: element by element in the atomic dtype, under a process-wide lock so
that blocks running on different host threads never lose an update.
"""
from __future__ import annotations

from llvmlite import ir as L

from ...dsl.types import Memory, bfloat16, float32
from ...simulator import abi
from .. import ir
from ..ops.atomic import ATOMIC_TYPES, MODES
from .core import Codegen, FnBuilder, lowering
from .rtfuncs import call_rt, counted, rt
from .types import I1, I64, PTR, ElemBuilder, convert, intrinsic, memory_type

_OP_MODE = {"set_atomic_add": MODES["add"], "set_atomic_max": MODES["max"],
            "set_atomic_min": MODES["min"], "set_atomic_none": MODES["none"],
            "set_store_atomic_config": MODES["add"]}


@lowering("get_store_atomic_config")
def lower_get_store_atomic_config(cg: Codegen, s: ir.Intrinsic) -> None:
    """(AtomicDtype value, op): the dtype code is the AtomicDtype value (ATOMIC_TYPES' order),
    0 with no mode; op = mode - 1 (0 = sum)."""
    state = cg.ld(abi.ATOMIC)
    mode, code = cg.b.and_(state, cg.i64(255)), cg.b.lshr(state, cg.i64(8))
    on = cg.b.icmp_signed("!=", mode, cg.i64(0))
    kind = cg.b.select(on, code, cg.i64(0))
    op = cg.b.select(on, cg.b.sub(mode, cg.i64(1)), cg.i64(0))
    for var, value in zip(s.results, (kind, op)):
        cg.b.store(cg.b.trunc(value, L.IntType(32)), cg.var(var))
    cg.scalar_cost(2)


@lowering("set_atomic_add", "set_atomic_max", "set_atomic_min", "set_atomic_none",
          "set_atomic_type", "set_store_atomic_config")
def lower_set_atomic(cg: Codegen, s: ir.Intrinsic) -> None:
    cg.site(s.op)          # the launch reads the kernel's sites to see that it uses atomics
    dtype = s.attr("dtype")
    state = cg.ld(abi.ATOMIC)
    mode = cg.b.and_(state, cg.i64(255)) if s.op == "set_atomic_type" else \
        cg.i64(_OP_MODE[s.op])
    code = cg.i64((ATOMIC_TYPES.index(dtype) + 1) << 8) if dtype is not None else \
        cg.b.and_(state, cg.i64(255 << 8))       # set_atomic_none keeps the dtype
    cg.st(abi.ATOMIC, cg.b.or_(mode, code))
    cg.scalar_cost(1)


def gm_store(fb: FnBuilder, dst_mem, dst, src, nbytes, site) -> None:
    """Move ``nbytes`` from pointer ``src`` to pointer ``dst`` of a copy whose destination
    memory is ``dst_mem``: accumulate when it is GM and an atomic mode is set."""
    b = fb.b
    atomic = b.and_(b.icmp_signed("==", dst_mem, fb.i64(int(Memory.GM))),
                    b.icmp_signed("!=", b.and_(fb.ld(abi.ATOMIC), fb.i64(255)), fb.i64(0)))
    with b.if_else(atomic, likely=False) as (then, otherwise):
        with then:
            call_rt(fb, "atomic_write", b.ptrtoint(dst, I64), b.ptrtoint(src, I64), nbytes,
                    site)
        with otherwise:
            fn = intrinsic(fb.module, "llvm.memmove.p0.p0.i64", L.VoidType(),
                           [PTR, PTR, I64, I1])
            b.call(fn, [dst, src, nbytes, L.Constant(I1, 0)])


def _lock(module: L.Module) -> L.GlobalVariable:
    lock = module.globals.get("asc_atomic_lock")
    if lock is None:
        lock = L.GlobalVariable(module, I64, name="asc_atomic_lock")
        lock.linkage = "internal"
        lock.initializer = L.Constant(I64, 0)
    return lock


def _combine(fb: FnBuilder, dtype, mode: int, old, new):
    b = fb.b
    if dtype == bfloat16:   # in float32, rounded once back (exact: 24 >= 2 * 8 + 2 bits)
        wide = _combine(fb, float32, mode, convert(b, old, bfloat16, float32),
                        convert(b, new, bfloat16, float32))
        return convert(b, wide, float32, bfloat16)
    eb = ElemBuilder(b, fb.module, dtype)
    return {MODES["add"]: eb.add, MODES["max"]: eb.max, MODES["min"]: eb.min}[mode](old, new)


@rt("dst", "src", "nbytes")
def atomic_write(fb: FnBuilder, dst, src, nbytes, site):
    """``dst[i] = op(dst[i], src[i])`` over ``nbytes`` in ctx's atomic mode and dtype."""
    b = fb.b
    lock = _lock(fb.module)
    spin = fb.func.append_basic_block("acquire")
    held = fb.func.append_basic_block("held")
    b.branch(spin)
    b.position_at_end(spin)
    got = b.extract_value(b.cmpxchg(lock, fb.i64(0), fb.i64(1), "acquire", "monotonic"), 1)
    b.cbranch(got, held, spin)
    b.position_at_end(held)
    state = fb.ld(abi.ATOMIC)
    mode, code = b.and_(state, fb.i64(255)), b.lshr(state, fb.i64(8))
    for k, dtype in enumerate(ATOMIC_TYPES):
        mt = memory_type(dtype)
        for m in (MODES["add"], MODES["max"], MODES["min"]):
            this = b.and_(b.icmp_signed("==", code, fb.i64(k + 1)),
                          b.icmp_signed("==", mode, fb.i64(m)))
            with b.if_then(this):
                d, s = b.inttoptr(dst, PTR), b.inttoptr(src, PTR)

                def one(i, d=d, s=s, mt=mt, dtype=dtype, m=m):
                    pd, ps = b.gep(d, [i], source_etype=mt), b.gep(s, [i], source_etype=mt)
                    b.store(_combine(fb, dtype, m, b.load(pd, typ=mt), b.load(ps, typ=mt)), pd)
                counted(fb, b.sdiv(nbytes, fb.i64(dtype.sizeof())), one)
    b.store_atomic(fb.i64(0), lock, "release", 8)
