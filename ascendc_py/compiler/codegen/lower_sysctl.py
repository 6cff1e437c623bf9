"""Codegen of ``sys_hint`` (``ops/sysctl.py``): the cache, hint, profiling and SoC-state calls.

A call with a GlobalTensor operand makes one library call, ``sys_gm_touch``, that checks the
operand's first element (GM_UNSET for a GlobalTensor never bound, GM_OUT_OF_BOUNDS past its
argument), as the address is used by the instruction on the NPU. The cost is
``ops.sysctl.HINT_COST`` scalar instructions. No memory is read or written, so the sanitizer
records nothing for these calls.
"""
from __future__ import annotations

from ...simulator import abi
from .. import ir
from ..ops.sysctl import HF32_AWAY, HF32_ON, HINT_COST
from . import runtime_lib
from .core import Codegen, FnBuilder, lowering
from .intrinsics import call_checked, operand
from .rtfuncs import operand_pointer, rt
from .types import I64


@rt("mem", "a", "off", "esize")
def sys_gm_touch(fb: FnBuilder, mem, a, off, esize, site):
    """Check that element ``off`` of a GM operand (``mem`` 0, argument ``a``) exists."""
    start = fb.sat_mul(off, esize)
    operand_pointer(fb, mem, a, start, esize, esize, fb.i64(0), fb.i64(0), site)


@lowering("sys_hint")
def lower_sys_hint(cg: Codegen, s: ir.Intrinsic) -> None:
    kind = s.attr("kind")
    if s.args:
        ref = s.args[0]
        call_checked(cg, runtime_lib.declare_rt(cg.module, "sys_gm_touch"),
                     [*operand(cg, ref), cg.i64(ref.dtype.sizeof())], kind, ("dst",),
                     operands=s.args)
    cg.scalar_cost(HINT_COST[kind])


@lowering("set_pad_value")
def lower_set_pad_value(cg: Codegen, s: ir.Intrinsic) -> None:
    """ctx[PAD_VALUE] the value's float64 bits, ctx[PAD_VALUE_SET] 1 (lower_movement's
    data_copy_pad reads them)."""
    value = cg.expr(s.args[0])
    cg.st(abi.PAD_VALUE, cg.b.bitcast(value, I64))
    cg.st(abi.PAD_VALUE_SET, cg.i64(1))
    cg.scalar_cost(1)


@lowering("set_hf32")
def lower_set_hf32(cg: Codegen, s: ir.Intrinsic) -> None:
    """ctx[HF32]'s bit for the mode (bit 0) or the trans mode (bit 1), from a run-time bool;
    ``lower_cube`` rounds float32 mmad operands by it."""
    bit = HF32_ON if s.attr("which") == "mode" else HF32_AWAY
    on = cg.b.icmp_signed("!=", cg._as_i64(cg.expr(s.args[0])), cg.i64(0))
    kept = cg.b.and_(cg.ld(abi.HF32), cg.i64(~bit))
    cg.st(abi.HF32, cg.b.or_(kept, cg.b.select(on, cg.i64(bit), cg.i64(0))))
    cg.scalar_cost(1)
