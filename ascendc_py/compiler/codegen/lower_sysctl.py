"""Codegen of ``sys_hint`` (``ops/sysctl.py``): the cache, hint, profiling and SoC-state calls.

A call with a GlobalTensor operand makes one library call, ``sys_gm_touch``, that checks the
operand's first element (GM_UNSET for a GlobalTensor never bound, GM_OUT_OF_BOUNDS past its
argument), as the address is used by the instruction on the NPU. The cost is
``ops.sysctl.HINT_COST`` scalar instructions. No memory is read or written, so the sanitizer
records nothing for these calls.
"""
from __future__ import annotations

from .. import ir
from ..ops.sysctl import HINT_COST
from . import runtime_lib
from .core import Codegen, FnBuilder, lowering
from .intrinsics import call_checked, operand
from .rtfuncs import operand_pointer, rt


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
