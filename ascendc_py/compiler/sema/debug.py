"""Semantic analysis of printf, print and dump_tensor (output format: ``ops/debug.py``).

The format string is parsed here, at compile time: string and compile-time numeric arguments
are formatted into the text right away, and only runtime values become operands of the
``printf`` intrinsic (its ``segments`` attribute says how to print each one).
"""
from __future__ import annotations

import builtins as _py

from ...dsl.types import bool_, int64
from .. import ir
from ..errors import KernelTypeError, KernelValueError, SourceLoc
from ..ops.debug import FLOAT_CONVERSIONS, FormatError, format_value, parse_format
from . import builtins as B
from .builtins import bind_args, function, want_int
from .values import ConstV, GmTensorV, LocalTensorV, NoneV, RtV, StrV, SVal


def _kind(dtype) -> str:
    if dtype == bool_:
        return "b"
    if dtype.is_float:
        return "f"
    return "i" if dtype.is_signed else "u"


def _emit(an, segments: list, values: list, loc: SourceLoc) -> None:
    """Merge adjacent text and emit one printf intrinsic."""
    merged: list = []
    for seg in segments:
        if seg[0] == "text" and merged and merged[-1][0] == "text":
            merged[-1] = ("text", merged[-1][1] + seg[1])
        else:
            merged.append(seg)
    an.emit(ir.Intrinsic("printf", tuple(values), (), loc, (("segments", tuple(merged)),)))


@function("printf")
def _printf(an, args, kwargs, loc):
    if kwargs:
        raise KernelTypeError("asc.printf takes no keyword arguments: printf(fmt, *args)", loc)
    if not args or not isinstance(args[0], StrV):
        raise KernelTypeError("asc.printf needs a format string constant first: "
                              "asc.printf(\"x = %d\\n\", x)", loc)
    try:
        pieces = parse_format(args[0].value)
    except FormatError as e:
        raise KernelValueError(f"asc.printf: {e}", loc) from None
    convs = [p for p in pieces if p[0] == "conv"]
    values = list(args[1:])
    if len(convs) != len(values):
        raise KernelTypeError(f"asc.printf: the format has {len(convs)} conversion"
                              f"{'s' if len(convs) != 1 else ''} but {len(values)} "
                              f"argument{'s' if len(values) != 1 else ''} were given", loc)
    segments, operands, k = [], [], 0
    for p in pieces:
        if p[0] == "text":
            segments.append(p)
            continue
        _, spec, conv = p
        v = values[k]
        k += 1
        if conv == "s":
            if not isinstance(v, StrV):
                raise KernelTypeError(f"asc.printf: %s needs a string constant, got "
                                      f"{v.describe()}", loc)
            segments.append(("text", f"%{spec}s" % v.value))
            continue
        if not isinstance(v, (ConstV, RtV)):
            hint = "print tensors with asc.dump_tensor" if isinstance(
                v, (LocalTensorV, GmTensorV)) else ""
            raise KernelTypeError(f"asc.printf: %{conv} needs a number, got {v.describe()}",
                                  loc, hint=hint)
        kind = _kind(v.dtype)
        if kind == "f" and conv not in FLOAT_CONVERSIONS:
            raise KernelTypeError(f"asc.printf: %{conv} needs an integer, got a "
                                  f"{v.dtype.name} value", loc,
                                  hint="use %f for floating-point values, or int(x)")
        if isinstance(v, ConstV):
            segments.append(("text", format_value(spec, conv, kind, v.dtype.name, v.value)))
            continue
        segments.append(("conv", spec, conv, kind, v.dtype.name))
        operands.append(v.expr)
    _emit(an, segments, operands, loc)
    return NoneV()


@function("py_print")
def _print(an, args, kwargs, loc):
    """Python's print(*values, sep=' ', end='\\n') inside a kernel."""
    opts = {"sep": " ", "end": "\n"}
    for key, v in kwargs.items():
        if key not in opts:
            raise KernelTypeError(f"print() in a kernel takes only sep= and end=, got "
                                  f"'{key}'", loc)
        if not isinstance(v, StrV):
            raise KernelTypeError(f"print() {key}= must be a string constant", loc)
        opts[key] = v.value
    segments, operands = [], []
    for i, v in enumerate(args):
        if i:
            segments.append(("text", opts["sep"]))
        if isinstance(v, StrV):
            segments.append(("text", v.value))
        elif isinstance(v, ConstV):
            segments.append(("text", format_value("", "print", _kind(v.dtype), v.dtype.name,
                                                  v.value)))
        elif isinstance(v, RtV):
            segments.append(("conv", "", "print", _kind(v.dtype), v.dtype.name))
            operands.append(v.expr)
        else:
            hint = "print tensors with asc.dump_tensor" if isinstance(
                v, (LocalTensorV, GmTensorV)) else ""
            raise KernelTypeError(f"print() in a kernel prints numbers and strings, got "
                                  f"{v.describe()}", loc, hint=hint)
    segments.append(("text", opts["end"]))
    _emit(an, segments, operands, loc)
    return NoneV()


# Python's print inside a kernel gets Python's semantics (asc.printf is the C-style one)
B.PYTHON_FUNCS[_py.print] = "py_print"


@function("dump_tensor")
def _dump_tensor(an, args, kwargs, loc):
    kw = dict(kwargs)
    if "count" in kw:
        kw["dump_size"] = kw.pop("count")
    b = bind_args("asc.dump_tensor()", ("tensor", "desc", "dump_size", "shape_info"), args, kw,
                  loc, {"shape_info": NoneV()})
    t = b["tensor"]
    if not isinstance(t, (LocalTensorV, GmTensorV)):
        raise KernelTypeError(f"asc.dump_tensor needs a LocalTensor or GlobalTensor, got "
                              f"{t.describe()}", loc)
    if t.dtype is None:
        raise KernelTypeError("asc.dump_tensor: call set_global_buffer first", loc)
    if not isinstance(b["shape_info"], NoneV):
        raise KernelTypeError("asc.dump_tensor: shape_info is not supported; the elements are "
                              "printed as one list", loc)
    desc = want_int(b["desc"], "asc.dump_tensor desc", loc, int64)
    count = want_int(b["dump_size"], "asc.dump_tensor dump_size", loc, int64)
    c = b["dump_size"]
    if isinstance(c, ConstV) and int(c.value) < 0:
        raise KernelValueError(f"asc.dump_tensor dump_size is negative ({c.value})", loc)
    position = "GM" if isinstance(t, GmTensorV) else t.memory.name
    an.emit(ir.Intrinsic("dump_tensor", (t.ref(), desc, count), (), loc,
                         (("dtype", t.dtype), ("position", position))))
    return NoneV()
