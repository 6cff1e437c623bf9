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
    from ...dsl.struct import Struct, layout_kind
    if isinstance(annotation, type) and issubclass(annotation, Struct) and annotation is not Struct:
        return layout_kind(annotation)     # a user-defined struct (asc.Struct subclass)
    return struct_param_kind(annotation)


def bind_struct(kernel: str, name: str, annotation: Any, value: Any):
    """(ArgSpec, [(field value, int32), ...]) for a struct argument; LaunchArgumentError if
    ``value`` is not an instance of the annotated struct."""
    from ...compiler.errors import LaunchArgumentError
    from ..spec import ArgSpec
    kind = struct_kind(annotation) or struct_kind(type(value))
    if kind.startswith("struct "):
        return _bind_user_struct(kernel, name, annotation, value, kind)
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
    if kind.startswith("struct "):
        return _user_struct_value(kind, first_scalar)
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


# ----------------------------------------------------------------------------- mutable structs
def struct_storage(an, name: str, value, loc):
    """``value`` (a StructV bound to ``name``, whose fields the function assigns) with every
    numeric field copied into a variable of its own (nested structs recursively), so that
    ``name.field = v`` stores into it on any path (branches and loops merge as for any
    reassigned variable)."""
    from .. import ir
    from . import scalars as S
    from .values import ConstV, RtV, StructV

    def store(prefix: str, sv: StructV) -> StructV:
        fields = []
        for key, v in sv.fields:
            if isinstance(v, StructV):
                v = store(f"{prefix}.{key}", v)
            elif isinstance(v, (ConstV, RtV)):
                var = ir.Var(f"{prefix}.{key}", v.dtype)
                an.emit(ir.Assign(var, S.to_expr(v, v.dtype), loc))
                v = RtV(ir.Load(var))
            fields.append((key, v))
        return StructV(sv.kind, tuple(fields))

    return store(f"{name}#{an.new_label('s')}", value)


def assign_field(an, target, value, loc) -> None:
    """``base.field = value`` for a struct whose fields live in variables (see
    :func:`struct_storage`): the value is converted to the field's type (an integer that does
    not fit is an error, a wider run-time value is narrowed by a checked cast)."""
    from ..errors import AssignmentTargetError, OperandKindError
    from .. import ir
    from . import scalars as S
    from .builtins import KernelNameError_, want_int
    from .values import ConstV, RtV, StructV
    base = an.expr(target.value)
    if not isinstance(base, StructV):
        raise AssignmentTargetError(f"cannot assign to an attribute of {base.describe()}: only "
                                    f"struct fields (tiling.share_l1_size = ...) can be "
                                    f"assigned", target.loc)
    try:
        current = base.get(target.attr)
    except KeyError:
        raise KernelNameError_(f"{base.kind} has no field '{target.attr}'; fields: "
                               f"{', '.join(k for k, _ in base.fields)}", target.loc) from None
    if not (isinstance(current, RtV) and isinstance(current.expr, ir.Load)):
        raise AssignmentTargetError(f"{base.kind}.{target.attr} cannot be assigned here: assign "
                                    f"the fields of a struct held in a variable of this "
                                    f"function", target.loc)
    var = current.expr.var
    value = S.numeric(value)
    if not isinstance(value, (ConstV, RtV)):
        raise OperandKindError(f"{base.kind}.{target.attr} is a number; got "
                               f"{value.describe()}", loc)
    if var.dtype.is_float:
        expr = S.to_expr(value, var.dtype)
    elif value.dtype.is_float:
        raise OperandKindError(f"{base.kind}.{target.attr} is an integer field "
                               f"({var.dtype.name}); got {value.describe()}", loc,
                               hint="convert with int(...)")
    else:
        expr = want_int(value, f"{base.kind}.{target.attr}", loc, var.dtype)
    an.emit(ir.Assign(var, expr, loc))


def _construct_tcube_tiling(an, args, kwargs, loc):
    """``asc.adv.TCubeTiling(m=..., base_m=..., ...)`` in a kernel: a TCubeTiling whose named
    fields are the int32 values given (compile-time or run-time), the others 0."""
    from ..errors import ArgumentError
    from .builtins import want_int
    from .values import ConstV, RtV, StructV
    from ...adv import _ALIASES
    if args:
        raise ArgumentError("asc.adv.TCubeTiling() takes its fields as keyword arguments "
                            "(m=..., n=..., base_m=...)", loc)
    _, names = _structs()["TCubeTiling"]
    given = {}
    for key, v in kwargs.items():
        field = _ALIASES.get(key, key)
        if field not in names:
            from .builtins import KernelNameError_
            raise KernelNameError_(f"TCubeTiling has no field '{key}'; fields: "
                                   f"{', '.join(names)}", loc)
        expr = want_int(v, f"TCubeTiling.{field}", loc, int32)
        given[field] = RtV(expr) if not isinstance(v, ConstV) else ConstV(expr.value, int32)
    return StructV("TCubeTiling", tuple((n, given.get(n, ConstV(0, int32))) for n in names))


def _tiling_struct_constructor(cls):
    """``asc.adv.SoftmaxTiling(src_m=..., ...)`` (and the other asc.Struct tiling records of
    ascendc_py.adv) in a kernel: the named fields converted to their dtype (compile-time or
    run-time values), the others their defaults."""
    def construct(an, args, kwargs, loc):
        from ..errors import ArgumentError
        from . import scalars as S
        from .builtins import KernelNameError_, want_int
        from .values import ConstV, RtV, StructV
        name = cls.__name__
        if args:
            raise ArgumentError(f"asc.adv.{name}() takes its fields as keyword arguments", loc)
        fields = cls.struct_fields
        for key in kwargs:
            if key not in fields:
                raise KernelNameError_(f"{name} has no field '{key}'; fields: "
                                       f"{', '.join(fields)}", loc)
        values = []
        for key, f in fields.items():
            if key not in kwargs:
                values.append((key, ConstV(f.default, f.dtype)))
                continue
            v = S.numeric(kwargs[key])
            expr = S.to_expr(v, f.dtype) if f.dtype.is_float else \
                want_int(v, f"{name}.{key}", loc, f.dtype)
            values.append((key, ConstV(expr.value, f.dtype) if isinstance(v, ConstV)
                           and hasattr(expr, "value") else RtV(expr)))
        return StructV(name, tuple(values))
    return construct


def _register_constructors() -> None:
    from .builtins import function
    from ...adv import TILING_STRUCTS
    function("adv.TCubeTiling")(_construct_tcube_tiling)
    for cls in TILING_STRUCTS:
        function(cls.asc_name)(_tiling_struct_constructor(cls))


# ----------------------------------------------------------------------------- user structs
def _bind_user_struct(kernel: str, name: str, annotation: Any, value: Any, kind: str):
    """A user-defined ``asc.Struct`` argument: one scalar argument per (nested) field."""
    from ...compiler.errors import LaunchArgumentError
    from ...dsl.struct import Struct, arg_dtype, leaves
    from ...dsl.types import uint64
    from ..spec import ArgSpec
    cls = annotation if isinstance(annotation, type) and issubclass(annotation, Struct) \
        else type(value)
    if isinstance(annotation, str) and annotation.split(".")[-1].strip() != cls.__name__:
        raise LaunchArgumentError(f"{kernel}: argument '{name}' must be a {annotation}, got "
                                  f"{cls.__name__}")    # a string annotation (postponed)
    if not isinstance(value, cls):
        raise LaunchArgumentError(f"{kernel}: argument '{name}' must be a {cls.__name__}, got "
                                  f"{type(value).__name__}")
    values = []
    for path, dtype in leaves(cls):
        v = value
        for part in path.split("."):
            v = getattr(v, part)
        a = arg_dtype(dtype)
        if a.is_int and dtype == uint64 and int(v) >= 1 << 63:
            v = int(v) - (1 << 64)             # its bits, as an int64 argument
        values.append((v, a))
    return ArgSpec.of(name, "struct", value=kind), values


def _user_struct_value(kind: str, first_scalar: int):
    """StructV of a user struct parameter (nested StructVs for StructFields): each field the
    scalar argument converted back to the field's dtype."""
    from ...dsl.struct import arg_dtype
    from ...dsl.types import DTYPES_BY_NAME
    from .. import ir
    from .values import RtV, StructV
    head, body = kind[len("struct "):].split("(", 1)
    title = head.rsplit(".", 1)[-1]
    leaves = [item.rsplit(":", 1) for item in body[:-1].split(",") if item]
    args, tree = [], {}
    for i, (path, dname) in enumerate(leaves):
        dtype = DTYPES_BY_NAME[dname]
        a = arg_dtype(dtype)
        expr = ir.ScalarArg(first_scalar + i, a)
        node = tree
        *parents, leaf = path.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = RtV(expr if a == dtype else ir.Cast(expr, dtype))
        args.append((f"{title}.{path}", a))

    def build(label: str, node: dict) -> StructV:
        return StructV(label, tuple((k, build(k, v) if isinstance(v, dict) else v)
                                    for k, v in node.items()))
    return build(title, tree), args
