"""Semantic analysis of ShapeInfo, ``asc.array`` (as ShapeInfo's argument) and the shape-info
methods of LocalTensor and GlobalTensor (pyasc ``asc.ShapeInfo``, Ascend C ``ShapeInfo``).

A ShapeInfo is a compile-time record of integer expressions: ``ShapeInfo()`` (no dimensions),
``ShapeInfo(shape, original_shape=None, data_format=DataFormat.ND)`` with ``shape`` an
``asc.array(dtype, values)`` / ``asc.array(dtype, length, fill_value)`` or a list of integers
(at most 8 dimensions, Ascend C's ``K_MAX_SHAPE_DIM``); the original shape defaults to the
shape. ``s.shape(dim)`` / ``s.original_shape(dim)`` give a dimension (a constant ``dim``
outside the dimensions is a compile error, a run-time one stops the kernel at the line);
``asc.get_shape_size(s)`` is the product of the dimensions (1 for none: the empty product).
``t.set_shape_info(s)`` attaches it to a LocalTensor or GlobalTensor variable and
``t.get_shape_info()`` returns what was attached (a ShapeInfo without dimensions if nothing
was, as Ascend C's default-constructed one). Nothing else reads it: it describes data, it does
not move any.

``asc.array(dtype, values)`` / ``asc.array(dtype, length, fill_value=None)`` builds a fixed-length
list of values of ``dtype`` (read with a constant index); writing its elements is not supported
here.
"""
from __future__ import annotations

from dataclasses import replace

from ...dsl.data_format import DataFormat
from ...dsl.types import bool_, int32
from .. import ir
from ..errors import KernelTypeError, KernelValueError
from . import scalars as S
from .builtins import (bind_args, function, method, want_const_int, want_dtype, want_enum,
                       want_int)
from ...fieldwise import FrozenFieldwise
from .values import frozen_value, ConstV, EnumV, GmTensorV, LocalTensorV, NoneV, RtV, SVal, TupleV

MAX_DIMS = 8


@frozen_value
class ShapeInfoV(SVal, FrozenFieldwise):
    shape: tuple
    original: tuple
    data_format: DataFormat = DataFormat.ND

    def describe(self) -> str:
        return f"ShapeInfo({len(self.shape)} dims)"


EMPTY = ShapeInfoV((), ())


@function("array")
def _array(an, args, kwargs, loc):
    b = bind_args("asc.array()", ("dtype", "length_or_values", "fill_value"), args, kwargs,
                  loc, {"fill_value": None})
    dtype = want_dtype(b["dtype"], "dtype", loc)
    if dtype == bool_:
        raise KernelTypeError("asc.array dtype must be an integer or float type", loc)
    first = b["length_or_values"]
    if isinstance(first, TupleV):
        if b["fill_value"] is not None:
            raise KernelTypeError("asc.array: fill_value cannot be given with initial values",
                                  loc)
        items = first.items
    else:
        n = want_const_int(first, "asc.array length", loc)
        if n <= 0:
            raise KernelValueError(f"asc.array length must be positive, got {n}", loc)
        fill = b["fill_value"] if b["fill_value"] is not None else ConstV(0, dtype)
        items = (fill,) * n
    return TupleV(tuple(RtV(S.to_expr(S.numeric(v), dtype)) if not isinstance(v, ConstV)
                        else ConstV(v.value, dtype) for v in items))


def _dims(v, what, loc) -> tuple:
    if not isinstance(v, TupleV):
        raise KernelTypeError(f"{what} must be an asc.array or a list of integers, got "
                              f"{v.describe()}", loc)
    if len(v.items) > MAX_DIMS:
        raise KernelValueError(f"{what} has {len(v.items)} dimensions; a ShapeInfo holds at "
                               f"most {MAX_DIMS}", loc)
    return tuple(want_int(x, f"{what} dimension", loc) for x in v.items)


@function("ShapeInfo")
def _shape_info(an, args, kwargs, loc):
    b = bind_args("asc.ShapeInfo()", ("shape", "original_shape", "data_format"), args, kwargs,
                  loc, {"shape": None, "original_shape": None,
                        "data_format": EnumV(DataFormat.ND)})
    if b["shape"] is None:
        if b["original_shape"] is not None:
            raise KernelTypeError("asc.ShapeInfo: original_shape needs shape", loc)
        return EMPTY
    shape = _dims(b["shape"], "ShapeInfo shape", loc)
    original = shape if b["original_shape"] is None else _dims(
        b["original_shape"], "ShapeInfo original_shape", loc)
    fmt = want_enum(b["data_format"], DataFormat, "data_format", loc)
    return ShapeInfoV(shape, original, fmt)


def _dim(an, dims: tuple, dim_v, what, loc):
    if isinstance(dim_v, ConstV) and not dim_v.dtype.is_float:
        d = int(dim_v.value)
        if not 0 <= d < len(dims):
            raise KernelValueError(f"{what}({d}): the ShapeInfo has {len(dims)} dimensions",
                                   loc)
        return RtV(dims[d]) if not isinstance(dims[d], ir.Const) else ConstV(dims[d].value,
                                                                           int32)
    d = want_int(dim_v, "dim", loc)
    an.emit(ir.Intrinsic("kernel_assert", (ir.Bin("and", ir.Cmp("ge", d, ir.Const(0, int32)),
                                                  ir.Cmp("lt", d, ir.Const(len(dims), int32)),
                                                  bool_),), (), loc,
                         (("msg", f"{what}: dim outside the ShapeInfo's {len(dims)} "
                                  f"dimensions"),)))
    value = ir.Const(0, int32)
    for k, x in enumerate(dims):
        value = ir.Select(ir.Cmp("eq", d, ir.Const(k, int32)), x, value, int32)
    return RtV(value)


@method(ShapeInfoV, "shape", "original_shape")
def _shape_dim(an, s: ShapeInfoV, name, args, kwargs, loc):
    b = bind_args(f"{name}()", ("dim",), args, kwargs, loc)
    return _dim(an, s.shape if name == "shape" else s.original, b["dim"], name, loc)


@function("get_shape_size")
def _get_shape_size(an, args, kwargs, loc):
    b = bind_args("asc.get_shape_size()", ("shape_info",), args, kwargs, loc)
    s = b["shape_info"]
    if not isinstance(s, ShapeInfoV):
        raise KernelTypeError(f"asc.get_shape_size needs a ShapeInfo, got {s.describe()}", loc)
    size = ir.Const(1, int32)
    for x in s.shape:
        size = ir.Bin("mul", size, x, int32)
    return RtV(size)


def _want_shape_info(v, loc) -> ShapeInfoV:
    if not isinstance(v, ShapeInfoV):
        raise KernelTypeError(f"set_shape_info needs an asc.ShapeInfo, got {v.describe()}", loc)
    return v


@method(LocalTensorV, "set_shape_info")
def _lt_set(an, t, name, args, kwargs, loc):
    b = bind_args("set_shape_info()", ("shape_info",), args, kwargs, loc)
    an.rebind_receiver(replace(t, shape_info=_want_shape_info(b["shape_info"], loc)), name, loc)
    return NoneV()


@method(GmTensorV, "set_shape_info")
def _gm_set(an, g, name, args, kwargs, loc):
    b = bind_args("set_shape_info()", ("shape_info",), args, kwargs, loc)
    g.shape_info = _want_shape_info(b["shape_info"], loc)
    return NoneV()


@method(LocalTensorV, "get_shape_info")
@method(GmTensorV, "get_shape_info")
def _get(an, t, name, args, kwargs, loc):
    bind_args("get_shape_info()", (), args, kwargs, loc)
    return t.shape_info if t.shape_info is not None else EMPTY


