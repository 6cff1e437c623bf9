"""Struct kernel parameters (``tiling: asc.adv.TCubeTiling``).

The launcher passes a struct argument as one int32 scalar argument per field (in the struct's
field order); the specialisation records only the struct kind (``ArgSpec(name, "struct",
value=kind)``), so one compiled kernel serves every tiling. Inside the kernel the parameter is
a ``StructV`` whose fields are runtime int32 values: ``tiling.m``, arithmetic, comparisons,
``if tiling.is_bias:`` and ``tiling.m.ceildiv(tiling.single_core_m)`` work as on any int; an
unknown field is an error at its line naming the fields.

Kept free of heavy imports: the launcher imports it to bind arguments.
"""
from __future__ import annotations

import numpy as np

from typing import Any, Optional

from ...dsl.types import int32


def _structs() -> dict:
    from ...adv import STRUCT_PARAMS
    return STRUCT_PARAMS


def struct_kind(annotation: Any) -> Optional[str]:
    """The struct kind named by a parameter annotation (a class or its dotted name), or None."""
    from ...adv import struct_param_kind
    return struct_param_kind(annotation)


def bind_struct(kernel: str, name: str, annotation: Any, value: Any):
    """(ArgSpec, [(field value, int32), ...]) for a struct argument; LaunchArgumentError if
    ``value`` is not an instance of the annotated struct."""
    from ...compiler.errors import LaunchArgumentError
    from ..spec import ArgSpec
    kind = struct_kind(annotation) or struct_kind(type(value))
    cls, fields = _structs()[kind]
    if not isinstance(value, cls):
        raise LaunchArgumentError(f"{kernel}: argument '{name}' must be an asc.adv.{kind}, got "
                                  f"{type(value).__name__}")
    values = []
    for f in fields:
        v = getattr(value, f)
        if not isinstance(v, (int, np.integer)) or \
                not -(1 << 31) <= int(v) < 1 << 31:
            shown = repr(v) if len(repr(v)) <= 24 else repr(v)[:20] + "…"
            raise LaunchArgumentError(f"{kernel}: field '{f}' of argument '{name}' "
                                      f"({kind}) is {shown}; it must be an int32 integer")
        values.append((int(v), int32))
    return ArgSpec.of(name, "struct", value=kind), values


def struct_value(kind: str, first_scalar: int):
    """The sema value of a struct parameter whose fields are scalar arguments
    ``first_scalar``, ``first_scalar + 1`` … and the (name, dtype) list of those arguments."""
    from .. import ir
    from .values import RtV, StructV
    _, fields = _structs()[kind]
    value = StructV(kind, tuple((f, RtV(ir.ScalarArg(first_scalar + i, int32)))
                                for i, f in enumerate(fields)))
    return value, [(f"{kind}.{f}", int32) for f in fields]


def _register_methods() -> None:
    """``x.ceildiv(y)`` on runtime and constant integers (pyasc's integer method)."""
    from . import scalars as S
    from .builtins import bind_args, method
    from .values import ConstV, RtV

    def ceildiv(an, self_val, name, args, kwargs, loc):
        b = bind_args(f"{name}()", ("divisor",), args, kwargs, loc)
        one = ConstV(1, int32)
        num = S.binary("-", S.binary("+", self_val, b["divisor"], loc), one, loc)
        return S.binary("//", num, b["divisor"], loc)

    method(RtV, "ceildiv")(ceildiv)
    method(ConstV, "ceildiv")(ceildiv)
