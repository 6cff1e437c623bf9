"""Semantic analysis of cross-core synchronisation: cross_core_set_flag, cross_core_wait_flag,
sync_all (semantics: ``ops/crosscore.py`` and ``simulator/xcore_layout.py``).

The mode and the pipe are template arguments in Ascend C, so they must be compile-time values;
the flag id may be computed at run time (checked then), a constant one is checked here.
"""
from __future__ import annotations

from ...dsl.types import Memory, PipeID, bool_, int32
from .. import ir
from ..errors import KernelTypeError, KernelValueError, SourceLoc
from ..ops.crosscore import MAX_FLAG_ID, MODES
from . import scalars as S
from .builtins import bind_args, function, want_const_int, want_enum, want_int
from .values import ConstV, EnumV, GmTensorV, LocalTensorV, NoneV, SVal


def _flag_id(v: SVal, op: str, loc: SourceLoc) -> ir.Expr:
    expr = want_int(v, f"asc.{op} flag_id", loc)
    if isinstance(v, ConstV) and not 0 <= int(v.value) <= MAX_FLAG_ID:
        raise KernelValueError(f"asc.{op}: flag_id {v.value} is out of range 0..{MAX_FLAG_ID}",
                               loc, hint="Ascend 910B (A2/A3) has cross-core flags 0..10")
    return expr


def _mode(v: SVal, op: str, loc: SourceLoc) -> int:
    mode = want_const_int(v, f"asc.{op} mode_id", loc)
    if mode not in MODES:
        raise KernelValueError(f"asc.{op}: mode_id {mode} is not 0, 1 or 2", loc,
                               hint="0: every core of this type in the launch; 1: the two AIVs "
                                    "of one AI Core; 2: the AIC and the AIVs of one AI Core")
    return mode


def _pipe(v: SVal, op: str, loc: SourceLoc) -> PipeID:
    from .builtins import want_pipe
    pipe = want_pipe(v, f"asc.{op} pipe", loc)
    if pipe == PipeID.PIPE_ALL:
        raise KernelValueError(f"asc.{op}: pipe cannot be PIPE_ALL", loc,
                               hint="name the pipe whose earlier work the flag waits for, e.g. "
                                    "asc.PipeID.PIPE_MTE3 after a copy to GM")
    return pipe


@function("cross_core_set_flag")
def cross_core_set_flag(an, args, kwargs, loc) -> SVal:
    op = "cross_core_set_flag"
    b = bind_args(f"asc.{op}()", ("flag_id", "mode_id", "pipe"), args, kwargs, loc)
    flag = _flag_id(b["flag_id"], op, loc)
    an.emit(ir.Intrinsic(op, (flag,), (), loc, (("mode", _mode(b["mode_id"], op, loc)),
                                               ("pipe", int(_pipe(b["pipe"], op, loc))))))
    return NoneV()


@function("cross_core_wait_flag")
def cross_core_wait_flag(an, args, kwargs, loc) -> SVal:
    op = "cross_core_wait_flag"
    b = bind_args(f"asc.{op}()", ("flag_id", "mode_id", "pipe"), args, kwargs, loc,
                  {"mode_id": ConstV(0, int32), "pipe": EnumV(PipeID.PIPE_S)})
    flag = _flag_id(b["flag_id"], op, loc)
    _mode(b["mode_id"], op, loc)  # the counter decides; the mode is only checked
    an.emit(ir.Intrinsic(op, (flag,), (), loc, (("pipe", int(_pipe(b["pipe"], op, loc))),)))
    return NoneV()


@function("sync_all")
def sync_all(an, args, kwargs, loc) -> SVal:
    """``sync_all(is_aiv_only=True)`` (hard) or ``sync_all(gm_workspace, ub_workspace,
    used_cores=0, is_aiv_only=True)`` (soft: the same barrier; the workspaces are not used)."""
    soft = bool(args) and isinstance(args[0], GmTensorV) or "gm_workspace" in kwargs
    if soft:
        b = bind_args("asc.sync_all()", ("gm_workspace", "ub_workspace", "used_cores",
                                         "is_aiv_only"), args, kwargs, loc,
                      {"used_cores": ConstV(0, int32), "is_aiv_only": ConstV(True, bool_)})
        gm, ub = b["gm_workspace"], b["ub_workspace"]
        if not isinstance(gm, GmTensorV) or gm.dtype is None:
            raise KernelTypeError(f"asc.sync_all gm_workspace must be a GlobalTensor with "
                                  f"set_global_buffer called, got {gm.describe()}", loc)
        if not isinstance(ub, LocalTensorV) or ub.memory != Memory.UB:
            raise KernelTypeError(f"asc.sync_all ub_workspace must be a UB LocalTensor, got "
                                  f"{ub.describe()}", loc)
        used = b["used_cores"]
        if not isinstance(used, ConstV) or int(used.value) != 0:
            raise KernelValueError("asc.sync_all: only used_cores=0 (every core of the launch) "
                                   "is supported", loc)
        aiv_only = b["is_aiv_only"]
    else:
        b = bind_args("asc.sync_all()", ("is_aiv_only",), args, kwargs, loc,
                      {"is_aiv_only": ConstV(True, bool_)})
        aiv_only = b["is_aiv_only"]
    flag = S.truth(aiv_only, loc)
    if not isinstance(flag, ConstV):
        raise KernelValueError("asc.sync_all: is_aiv_only must be a compile-time bool", loc)
    an.emit(ir.Intrinsic("sync_all", (), (), loc, (("aiv_only", bool(flag.value)),)))
    return NoneV()


@function("get_task_ratio")
def get_task_ratio(an, args, kwargs, loc) -> SVal:
    """Ascend C GetTaskRatio: sub-cores of this one's type per AI Core in this launch (2 on an
    AIV of a 1:2 mix kernel, else 1), the same as get_sub_block_num()."""
    from .values import RtV
    if args or kwargs:
        raise KernelTypeError("asc.get_task_ratio() takes no arguments", loc)
    return RtV(ir.Special("sub_block_num"))
