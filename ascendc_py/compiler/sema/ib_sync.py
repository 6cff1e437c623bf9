"""Semantic analysis of inter-block synchronisation through GM flags: ib_set, ib_wait,
notify_next_block, wait_pre_block (semantics: ``ops/ib_sync.py``)."""
from __future__ import annotations

from ...dsl.types import Memory, bool_, int32, int64
from .. import ir
from ..errors import KernelTypeError, KernelValueError, SourceLoc
from ..ops.ib_sync import OPS, SLOT_ELEMS
from . import scalars as S
from .builtins import bind_args, function, want_int
from .values import ConstV, GmTensorV, LocalTensorV, NoneV, SVal


def _workspaces(op: str, b: dict, loc: SourceLoc) -> tuple[ir.GlobalRef, ir.Expr]:
    """The GM workspace and the UB workspace's size in elements (-1: unknown, not checked;
    a size known only at run time is checked then)."""
    gm, ub = b["gm_workspace"], b["ub_workspace"]
    if not isinstance(gm, GmTensorV) or gm.dtype is None:
        raise KernelTypeError(f"asc.{op} gm_workspace must be a GlobalTensor with "
                              f"set_global_buffer called, got {gm.describe()}", loc)
    if gm.dtype != int32:
        raise KernelTypeError(f"asc.{op} gm_workspace must hold int32, got "
                              f"{gm.describe()}", loc,
                              hint="the flags are int32 words (GlobalTensor<int32_t>)")
    if not isinstance(ub, LocalTensorV) or ub.memory != Memory.UB:
        raise KernelTypeError(f"asc.{op} ub_workspace must be a UB LocalTensor (VECIN, "
                              f"VECCALC or VECOUT), got {ub.describe()}", loc)
    if ub.dtype != int32:
        raise KernelTypeError(f"asc.{op} ub_workspace must hold int32, got {ub.describe()}",
                              loc)
    if isinstance(ub.size, ir.Const) and int(ub.size.value) < SLOT_ELEMS:
        raise KernelValueError(f"asc.{op}: ub_workspace has {ub.size.value} int32 elements; "
                               f"it needs at least {SLOT_ELEMS} (32 bytes)", loc)
    return gm.ref(), (_i64(ub.size) if ub.bounded else ir.Const(-1, int64))


def _i64(e: ir.Expr) -> ir.Expr:
    return e if e.dtype == int64 else ir.Cast(e, int64)


def _bin(op: str, a: ir.Expr, c: ir.Expr) -> ir.Expr:
    return ir.Bin({"+": "add", "*": "mul"}[op], _i64(a), _i64(c), int64)


def _ib(op: str):
    def handler(an, args, kwargs, loc) -> SVal:
        b = bind_args(f"asc.{op}()", ("gm_workspace", "ub_workspace", "block_idx", "event_id",
                                      "is_aiv_only"), args, kwargs, loc,
                      {"is_aiv_only": ConstV(True, bool_)})
        gm, ub_size = _workspaces(op, b, loc)
        blk = want_int(b["block_idx"], f"asc.{op} block_idx", loc)
        event = want_int(b["event_id"], f"asc.{op} event_id", loc)
        for name in ("block_idx", "event_id"):
            v = b[name]
            if isinstance(v, ConstV) and int(v.value) < 0:
                raise KernelValueError(f"asc.{op}: {name} {v.value} is negative", loc)
        flag = S.truth(b["is_aiv_only"], loc)
        if not isinstance(flag, ConstV):
            raise KernelValueError(f"asc.{op}: is_aiv_only must be a compile-time bool", loc)
        cores = ir.Special("block_num")
        if not flag.value:
            cores = _bin("*", cores, ir.Const(2, int64))
        word = _bin("+", _bin("*", event, cores), blk)
        an.emit(ir.Intrinsic(op, (gm, word, _i64(blk), cores, ub_size), (), loc,
                             (("kind", OPS[op]),)))
        return NoneV()
    return handler


def _neighbour(op: str):
    def handler(an, args, kwargs, loc) -> SVal:
        b = bind_args(f"asc.{op}()", ("gm_workspace", "ub_workspace"), args, kwargs, loc)
        gm, ub_size = _workspaces(op, b, loc)
        me = ir.Special("block_idx")
        word = _bin("+", me, ir.Const(1, int64)) if op == "notify_next_block" else me
        an.emit(ir.Intrinsic(op, (gm, word, me, ir.Special("block_num"), ub_size), (), loc,
                             (("kind", OPS[op]),)))
        return NoneV()
    return handler


for _op in ("ib_set", "ib_wait"):
    function(_op)(_ib(_op))
for _op in ("notify_next_block", "wait_pre_block"):
    function(_op)(_neighbour(_op))
