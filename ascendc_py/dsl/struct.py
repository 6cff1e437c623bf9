"""User-defined struct kernel parameters (pyasc's ``asc.language.core.struct``).

A struct is a class deriving from :class:`Struct` whose fields are class attributes::

    class TileConfig(asc.Struct):
        tile_length = asc.Field(dtype=asc.int32, default=0)
        tile_num = asc.Field(dtype=asc.int32, default=0)

    class KernelConfig(asc.Struct):
        tile = asc.StructField(TileConfig)

    @asc.kernel
    def k(x: asc.GlobalAddress, config: KernelConfig):
        n = config.tile.tile_length            # run-time values of the field's dtype
        config.tile.tile_num = 4               # fields can be assigned (the kernel's copy)

On the host an instance is a mutable record (``TileConfig(tile_length=512)``, ``cfg.tile_num =
3``); a field without a default must be given. A kernel argument is passed by value, field by
field (one scalar argument each, in declaration order, nested structs flattened): the kernel
reads each as a run-time value of its field's dtype and one compiled kernel serves every value.
Field dtypes: bool, int8..int64, uint8..uint64, float16, float32 (float64 fields are refused:
kernel scalars are at most float32). A value that does not fit its field's dtype is an error on
the host, never a silent wrap.
"""
from __future__ import annotations

from typing import Any, ClassVar, Optional

import numpy as np

from .types import (DataType, as_dtype, bool_, float16, float32, float64, int8, int16, int32,
                    int64, uint8, uint16, uint32, uint64)

__all__ = ["Struct", "Field", "StructField", "KnownTypes"]

_MISSING = object()


class KnownTypes:
    """pyasc's ``asc.language.core.dtype.KnownTypes``: dtype names as class attributes (``KT.int32``;
    ``int1`` is bool, ``bool_`` is pyasc's int8, ``int_`` int32, ``half`` float16, ``float_``
    float32, ``double`` float64)."""

    int1 = bool_
    int8, int16, int32, int64 = int8, int16, int32, int64
    uint8, uint16, uint32, uint64 = uint8, uint16, uint32, uint64
    float16, float32, float64 = float16, float32, float64
    bool_ = int8
    int_ = int32
    half = float16
    float_ = float32
    double = float64


class Field:
    """A scalar field of a :class:`Struct`: its dtype and default (``Field(dtype=asc.int32,
    default=0)``; without a default the field must be given when the struct is made)."""

    def __init__(self, dtype: Any, default: Any = _MISSING, name: Optional[str] = None,
                 enum: Optional[str] = None):
        self.dtype: DataType = as_dtype(dtype)
        if self.dtype == float64:
            raise TypeError("float64 struct fields are not supported (kernel scalars are at "
                            "most float32); use float32")
        self.default = default
        self.name = name
        self.enum = enum

    def convert(self, owner: str, key: str, value: Any):
        """``value`` checked against the field's dtype (no silent wrap or truncation)."""
        d = self.dtype
        if d == bool_:
            if not isinstance(value, (bool, np.bool_, int, np.integer)) or int(value) not in (0, 1):
                raise ValueError(f"{owner}.{key} is a bool field; got {value!r}")
            return bool(value)
        if d.is_float:
            if not isinstance(value, (int, float, np.integer, np.floating)) or \
                    isinstance(value, bool):
                raise TypeError(f"{owner}.{key} is a {d.name} field; got {value!r}")
            return float(value)
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
            raise TypeError(f"{owner}.{key} is a {d.name} field; got {value!r}")
        lo, hi = ((-(1 << (d.bits - 1)), (1 << (d.bits - 1)) - 1) if d.is_signed
                  else (0, (1 << d.bits) - 1))
        if not lo <= int(value) <= hi:
            raise ValueError(f"{owner}.{key} = {value} does not fit {d.name} ({lo}..{hi})")
        return int(value)


class StructField:
    """A nested struct field (``StructField(TileConfig)``; by default a ``TileConfig()``)."""

    def __init__(self, struct_cls: type, default: Any = None, name: Optional[str] = None):
        if not (isinstance(struct_cls, type) and issubclass(struct_cls, Struct)):
            raise TypeError(f"StructField needs a Struct class, got {struct_cls!r}")
        self.struct_cls = struct_cls
        self.default = default
        self.name = name

    def convert(self, owner: str, key: str, value: Any):
        if not isinstance(value, self.struct_cls):
            raise TypeError(f"{owner}.{key} is a {self.struct_cls.__name__}; got "
                            f"{type(value).__name__}")
        return value


class Struct:
    """Base of user-defined struct kernel parameters (see the module docstring)."""

    struct_fields: ClassVar[dict] = {}

    def __init_subclass__(cls, pack: int = 8, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        cls.struct_fields = {k: v for k, v in vars(cls).items()
                             if isinstance(v, (Field, StructField))}
        if not cls.struct_fields:
            raise TypeError(f"Struct '{cls.__name__}' must have at least one field")

    def __init__(self, **fields: Any):
        cls = type(self)
        for key in fields:
            if key not in cls.struct_fields:
                raise AttributeError(f"{cls.__name__} has no field '{key}'; fields: "
                                     f"{', '.join(cls.struct_fields)}")
        for key, f in cls.struct_fields.items():
            if key in fields:
                value = fields[key]
            elif isinstance(f, StructField):
                value = f.struct_cls() if f.default is None else f.default
            elif f.default is _MISSING:
                raise TypeError(f"{cls.__name__}: field '{key}' has no default and was not given")
            else:
                value = f.default
            setattr(self, key, value)

    def __setattr__(self, key: str, value: Any) -> None:
        f = type(self).struct_fields.get(key)
        if f is None:
            raise AttributeError(f"{type(self).__name__} has no field '{key}'; fields: "
                                 f"{', '.join(type(self).struct_fields)}")
        object.__setattr__(self, key, f.convert(type(self).__name__, key, value))

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and all(
            getattr(self, k) == getattr(other, k) for k in self.struct_fields)

    __hash__ = None   # mutable

    def __repr__(self) -> str:
        return f"{type(self).__name__}(" + ", ".join(
            f"{k}={getattr(self, k)!r}" for k in self.struct_fields) + ")"


# ----------------------------------------------------------------------------- kernel arguments
def leaves(cls: type, prefix: str = "") -> list:
    """[(dotted path, field dtype)] of a Struct class, nested structs flattened in order."""
    out = []
    for key, f in cls.struct_fields.items():
        if isinstance(f, StructField):
            out.extend(leaves(f.struct_cls, f"{prefix}{key}."))
        else:
            out.append((prefix + key, f.dtype))
    return out


def layout_kind(cls: type) -> str:
    """The specialisation key of a Struct parameter: its class and field layout."""
    body = ",".join(f"{path}:{dtype.name}" for path, dtype in leaves(cls))
    return f"struct {cls.__module__}.{cls.__qualname__}({body})"


def arg_dtype(dtype: DataType) -> DataType:
    """The scalar argument type a field of ``dtype`` is passed as (bool, int32, int64 or
    float32; the kernel converts back to the field's dtype)."""
    if dtype == bool_:
        return bool_
    if dtype.is_float:
        return float32
    if dtype.bits < 32 or dtype == int32:
        return int32
    return int64
