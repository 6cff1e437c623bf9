"""The check before an instruction that writes a GM argument chosen at run time.

``compiler/gm_writes.py`` finds, for every instruction writing global memory, the arguments its
destination can name. When that is one argument, the runtime refuses a launch that passes it
read-only, and nothing is emitted here. When it is several (a GlobalTensor re-pointed in a
branch) or cannot be traced, ``Codegen.s_intrinsic`` calls ``guard_gm_write`` first: one call
of ``asc_rt_gm_write`` per instruction, which faults (``READ_ONLY_WRITE``, naming the argument)
before the instruction writes anything if the argument may not be written, and otherwise marks
it written in the launch's access array (``abi.GM_ACCESS``) so that the runtime bumps its
autograd version counter. (An index outside the arguments is left to the instruction's own GM
check.)
"""
from __future__ import annotations

from ...simulator import abi
from .. import ir
from ..gm_writes import ArgumentTargets, written_argument
from . import runtime_lib
from .core import Codegen, FnBuilder
from .rtfuncs import rt
from .types import I64, PTR

E = abi.ErrorCode


def guard_gm_write(cg: Codegen, s: ir.Intrinsic) -> None:
    """Before lowering ``s``: if it writes a GM argument chosen at run time, check it."""
    arg = written_argument(s)
    if arg is None:
        return
    targets = cg.__dict__.get("_gm_targets")
    if targets is None:
        targets = cg._gm_targets = ArgumentTargets(cg.fn)
    if targets.known(arg) is not None:
        return      # named at compile time: the launch is refused instead (simulator/gm_access)
    site = cg.i64(cg.site(s.op, ("destination",)))
    fn = runtime_lib.declare_rt(cg.module, "gm_write")
    cg.leave_on_error(cg.b.call(fn, [cg.ctx, cg._as_i64(cg.expr(arg)), site]))


@rt("arg")
def gm_write(fb: FnBuilder, arg, site):
    """GM argument ``arg`` is about to be written: fault if the launch marked it read-only or
    requiring grad, else mark it written. The access array is shared by the launch's blocks:
    the mark is an atomic or."""
    b = fb.b
    table = fb.ld(abi.GM_ACCESS)
    with b.if_then(b.icmp_signed("!=", table, fb.i64(0))):
        words = b.inttoptr(table, PTR)
        count = b.load(words, typ=I64)
        inside = b.and_(b.icmp_signed(">=", arg, fb.i64(0)), b.icmp_signed("<", arg, count))
        word = b.gep(words, [b.select(inside, b.add(arg, fb.i64(1)), fb.i64(0))],
                     source_etype=I64)
        flags = b.load_atomic(word, "monotonic", 8, typ=I64)
        refused = b.and_(flags, fb.i64(abi.GM_READ_ONLY | abi.GM_REQUIRES_GRAD))
        fb.fail_with(b.and_(inside, b.icmp_signed("!=", refused, fb.i64(0))),
                     E.READ_ONLY_WRITE, site, arg, refused)
        with b.if_then(inside):
            b.atomic_rmw("or", word, fb.i64(abi.GM_WRITTEN), "monotonic")
