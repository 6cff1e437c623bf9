"""Semantic analysis of the atomic GM-write switches ``set_atomic_add/max/min/type(dtype)`` and
``set_atomic_none()`` (semantics: ``ops/atomic.py``)."""
from __future__ import annotations

from ...dsl.types import int32
from .. import ir
from ..errors import ArgumentError, KernelTypeError
from ..ops.atomic import ATOMIC_TYPES, AtomicDtype, AtomicOp
from .builtins import bind_args, function, want_dtype, want_enum
from .values import NoneV, RtV, TupleV


def _with_dtype(op: str):
    def handler(an, args, kwargs, loc):
        if not args and not kwargs:
            raise ArgumentError(f"asc.{op}() needs the dtype to accumulate in, e.g. "
                                f"asc.{op}(asc.float32) (Ascend C's template argument)", loc)
        b = bind_args(f"asc.{op}()", ("dtype",), args, kwargs, loc)
        dtype = want_dtype(b["dtype"], f"asc.{op} dtype", loc)
        if dtype not in ATOMIC_TYPES:
            allowed = ", ".join(d.name for d in ATOMIC_TYPES)
            raise KernelTypeError(f"asc.{op} does not support {dtype.name} on Ascend 910B "
                                  f"(A2/A3); supported: {allowed}", loc)
        an.emit(ir.Intrinsic(op, (), (), loc, (("dtype", dtype),)))
        return NoneV()
    return handler


for _op in ("set_atomic_add", "set_atomic_max", "set_atomic_min", "set_atomic_type"):
    function(_op)(_with_dtype(_op))


@function("set_atomic_none")
def _set_atomic_none(an, args, kwargs, loc):
    if args or kwargs:
        raise ArgumentError("asc.set_atomic_none() takes no arguments", loc)
    an.emit(ir.Intrinsic("set_atomic_none", (), (), loc))
    return NoneV()


@function("set_store_atomic_config")
def _set_store_atomic_config(an, args, kwargs, loc):
    """set_store_atomic_config(atomic_type, atomic_op): Ascend C's template arguments, so both
    must be compile-time members of asc.AtomicDtype / asc.AtomicOp."""
    b = bind_args("asc.set_store_atomic_config()", ("atomic_type", "atomic_op"), args, kwargs,
                  loc)
    kind = AtomicDtype(want_enum(b["atomic_type"], AtomicDtype, "atomic_type", loc))
    want_enum(b["atomic_op"], AtomicOp, "atomic_op", loc)
    if kind == AtomicDtype.ATOMIC_NONE:
        an.emit(ir.Intrinsic("set_atomic_none", (), (), loc))
    else:
        an.emit(ir.Intrinsic("set_store_atomic_config", (), (), loc,
                             (("dtype", ATOMIC_TYPES[int(kind) - 1]),)))
    return NoneV()


@function("get_store_atomic_config")
def _get_store_atomic_config(an, args, kwargs, loc):
    """(atomic_type, atomic_op) as run-time integers."""
    if args or kwargs:
        raise ArgumentError("asc.get_store_atomic_config() takes no arguments", loc)
    kind, op = ir.Var("atomic_type", int32), ir.Var("atomic_op", int32)
    an.emit(ir.Intrinsic("get_store_atomic_config", (), (kind, op), loc))
    return TupleV((RtV(ir.Load(kind)), RtV(ir.Load(op))))
