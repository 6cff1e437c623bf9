"""Codegen of set_cmp_mask / get_cmp_mask (``ops/cmpmask.py``): a kernel-side check of the
16-byte alignment, then one library call that checks the 16 UB bytes (and records them in
sanitize mode), moves them between UB and the ctx slots ``abi.CMPMASK_LO``/``HI`` and times
one repeat of a simple vector instruction. (compare/select's register forms:
``lower_convert.py``.)"""
from __future__ import annotations

from llvmlite import ir as L

from ...dsl.types import Memory, PipeID, uint8
from ...simulator import abi
from ...simulator import timing_params as TP
from .. import ir
from ..ops import REGISTRY
from ..ops.cmpmask import CMPMASK_BYTES
from . import runtime_lib
from .core import Codegen, FnBuilder, lowering
from .intrinsics import WRITTEN, call_checked
from .rtfuncs import call_rt, call_tm, rt
from .types import I1, I64, PTR, intrinsic

E = abi.ErrorCode
UB = int(Memory.UB)
WRITTEN["set_cmp_mask"] = ()        # reads its operand (the register is not memory)
WRITTEN["sys_hint"] = ()            # ops/sysctl.py: checks its GM operand, writes nothing


def _move(fb: FnBuilder, addr, to_register: bool, op: str, site) -> None:
    b = fb.b
    n = fb.i64(CMPMASK_BYTES)
    call_rt(fb, "check_local", fb.i64(UB), addr, n, fb.i64(0), fb.i64(0), site)
    v = fb.i64(int(PipeID.PIPE_V))
    call_rt(fb, "san_issue", v, site)
    call_rt(fb, "san_access", v, fb.i64(UB), addr, n, fb.i64(int(not to_register)), site)
    ub = b.inttoptr(b.add(fb.ld(abi.MEM_BASE + UB), addr), PTR)
    reg = fb.slot_ptr(abi.CMPMASK_LO)
    memcpy = intrinsic(fb.module, "llvm.memcpy.p0.p0.i64", L.VoidType(), [PTR, PTR, I64, I1])
    dst, src = (reg, ub) if to_register else (ub, reg)
    b.call(memcpy, [b.bitcast(dst, PTR), b.bitcast(src, PTR), n, L.Constant(I1, 0)])
    spec = REGISTRY[op]
    call_tm(fb, "vec", TP.OP_INDEX[op], TP.class_index(spec.cost), TP.family(uint8), n,
            fb.i64(1), addr, fb.i64(-1), site)


@rt("addr")
def set_cmp_mask(fb: FnBuilder, addr, site):
    """CMPMASK = UB[addr, addr + 16)."""
    _move(fb, addr, True, "set_cmp_mask", site)


@rt("addr")
def get_cmp_mask(fb: FnBuilder, addr, site):
    """UB[addr, addr + 16) = CMPMASK."""
    _move(fb, addr, False, "get_cmp_mask", site)


@lowering("set_cmp_mask", "get_cmp_mask")
def lower_cmpmask(cg: Codegen, s: ir.Intrinsic) -> None:
    ref = s.args[0]
    addr = cg.b.sext(cg.expr(ref.addr), I64)
    what = "src" if s.op == "set_cmp_mask" else "dst"
    cg.fail_if(cg.b.icmp_signed("!=", cg.b.and_(addr, cg.i64(15)), cg.i64(0)), E.ASSERTION,
               s.op, addr, detail=(f"asc.{s.op}: {what} must start on a 16-byte boundary of "
                                   f"UB (Ascend C's requirement)",))
    call_checked(cg, runtime_lib.declare_rt(cg.module, s.op), [addr], s.op, (what,),
                 operands=s.args)
