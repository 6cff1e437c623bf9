"""Compile-time values of semantic analysis.

Sema is an abstract interpreter: every kernel-language value is one of these. Scalars are either
known (``ConstV``) or runtime IR expressions (``RtV``); tensors, queues and pipes are records of
static attributes (dtype, position) plus IR expressions for their runtime fields.
"""
from __future__ import annotations

import enum
from dataclasses import field
from typing import Any, Optional

from ...dsl.types import DataType, Memory, TPosition
from .. import ir
from ...fieldwise import Fieldwise, FrozenFieldwise, fieldwise_dataclass
from ..errors import SourceLoc, TensorInfo


class SVal:
    """Base of all sema values. ``describe`` names the kind in error messages."""

    def describe(self) -> str:
        return type(self).__name__


def frozen_value(cls):
    """``@dataclass(frozen=True)`` for an ``SVal`` subclass that also derives from
    ``FrozenFieldwise``: the same fields, ``repr``, ``==`` and hash, without compiling methods
    with ``exec`` when the module is imported (``fieldwise_dataclass``; issue 14: a cold
    compile imports this module)."""
    if not cls.__doc__:       # (fieldwise_dataclass would compile __init__ for a signature)
        cls.__doc__ = f"The ``{cls.__name__}`` sema value."
    return fieldwise_dataclass(cls, frozen=True)


class FieldwiseRepr:
    """``Fieldwise``'s ``__repr__`` (the generated one's text) for a class declared with
    ``identity_value``: ``==`` and the hash stay the object's identity, as ``@dataclass(eq=False)``
    leaves them."""

    __slots__ = ()
    __repr__ = Fieldwise.__repr__


def identity_value(cls):
    """``@dataclass(eq=False)`` for a mutable ``SVal`` subclass that also derives from
    ``FieldwiseRepr``: the same fields, ``__init__`` and ``repr``, ``==`` by identity, without
    compiling methods with ``exec`` when the module is imported (issue 14: a cold compile
    imports the sema modules)."""
    if not cls.__doc__:       # (fieldwise_dataclass would compile __init__ for a signature)
        cls.__doc__ = f"The ``{cls.__name__}`` sema value."
    return fieldwise_dataclass(cls)


@frozen_value
class ConstV(SVal, FrozenFieldwise):
    value: Any  # int | float | bool
    dtype: DataType

    def describe(self) -> str:
        return f"{self.dtype.name} constant {self.value!r}"

    def expr(self) -> ir.Const:
        return ir.Const(self.value, self.dtype)


@frozen_value
class WideIntV(SVal, FrozenFieldwise):
    """An exact compile-time integer outside the 64-bit range (``2**64`` in ``2**64 - 1``).

    Compile-time integer arithmetic is exact, as in Python: an intermediate result may leave
    the 64-bit range as long as the value finally used fits. A ``WideIntV`` may only take part
    in further compile-time arithmetic and comparisons; anything else (an op operand, a
    run-time operand, a store) is an error at that line."""

    value: int

    def describe(self) -> str:
        return f"integer constant {self.value}, which does not fit in 64 bits"


@frozen_value
class RtV(SVal, FrozenFieldwise):
    expr: ir.Expr

    @property
    def dtype(self) -> DataType:
        return self.expr.dtype

    def describe(self) -> str:
        return f"{self.dtype.name} value"


@frozen_value
class DTypeV(SVal, FrozenFieldwise):
    dtype: DataType

    def describe(self) -> str:
        return f"dtype {self.dtype.name}"


@frozen_value
class EnumV(SVal, FrozenFieldwise):
    member: enum.Enum

    def describe(self) -> str:
        return f"{type(self.member).__name__}.{self.member.name}"


@frozen_value
class StrV(SVal, FrozenFieldwise):
    value: str

    def describe(self) -> str:
        return "string"


@frozen_value
class NoneV(SVal, FrozenFieldwise):
    def describe(self) -> str:
        return "None"


@frozen_value
class PyObjV(SVal, FrozenFieldwise):
    """A host Python object reached through a global (module, enum class, kernel, builtin)."""

    obj: Any

    def describe(self) -> str:
        name = getattr(self.obj, "__name__", None) or type(self.obj).__name__
        return f"'{name}'"


@frozen_value
class TupleV(SVal, FrozenFieldwise):
    items: tuple[SVal, ...]

    def describe(self) -> str:
        return f"tuple of {len(self.items)}"


@frozen_value
class BoundMethodV(SVal, FrozenFieldwise):
    """``obj.method`` before the call."""

    self_val: SVal
    name: str

    def describe(self) -> str:
        return f"method {self.name}"


@frozen_value
class GmAddrV(SVal, FrozenFieldwise):
    """A GlobalAddress: kernel argument number ``arg`` plus an element offset."""

    dtype: DataType
    arg: ir.Expr     # int32
    offset: ir.Expr  # int64
    arg_name: str

    def describe(self) -> str:
        return f"GlobalAddress[{self.dtype.name}]"


@identity_value
class GmTensorV(SVal, FieldwiseRepr):
    """A GlobalTensor. ``GlobalTensor()`` objects are mutable (set_global_buffer)."""

    dtype: Optional[DataType]
    arg: ir.Expr
    offset: ir.Expr
    size: ir.Expr
    arg_name: str = ""
    owned_vars: Optional[tuple[ir.Var, ir.Var, ir.Var]] = None  # set for GlobalTensor() objects
    shape_info: Optional[SVal] = None    # a ShapeInfoV, from set_shape_info (sema/shape_info.py)

    def describe(self) -> str:
        return (f"GlobalTensor[{self.dtype.name}]" if self.dtype else
                "GlobalTensor (no dtype before set_global_buffer)")

    def ref(self) -> ir.GlobalRef:
        return ir.GlobalRef(self.dtype, self.arg, self.offset, self.size)


@frozen_value
class LocalTensorV(SVal, FrozenFieldwise):
    """A LocalTensor: ``size`` elements at byte ``addr`` of the position's memory. ``bounded``
    (see ``ir.LocalRef``); ``name`` (the source text the user wrote for it at the current
    instruction), ``origin`` and ``made_by`` (where and how it was created) are for messages
    and take no part in comparisons."""

    dtype: DataType
    position: TPosition
    addr: ir.Expr  # int32 bytes
    size: ir.Expr  # int32 elements
    tag: ir.Expr   # int32
    bounded: bool = True
    name: str = field(default="", compare=False)
    origin: Optional[SourceLoc] = field(default=None, compare=False)
    made_by: str = field(default="", compare=False)
    user_tag: Optional[ir.Expr] = None   # int32, from set_user_tag (None: never set)
    shape_info: Optional[SVal] = None    # a ShapeInfoV, from set_shape_info (sema/shape_info.py)

    @property
    def memory(self) -> Memory:
        return self.position.memory

    def describe(self) -> str:
        return f"LocalTensor[{self.dtype.name}, {self.position.name}]"

    def ref(self) -> ir.LocalRef:
        info = TensorInfo(self.name, self.dtype.name, self.dtype.sizeof(), self.origin,
                          self.made_by)
        return ir.LocalRef(self.memory, self.dtype, self.addr, self.size, self.tag,
                           self.bounded, info)


@identity_value
class QueueV(SVal, FieldwiseRepr):
    qid: int
    position: TPosition
    depth: int
    name: str
    is_tbuf: bool = False

    def describe(self) -> str:
        return f"{'TBuf' if self.is_tbuf else 'TQue'}({self.position.name})"


@identity_value
class PipeV(SVal, FieldwiseRepr):
    def describe(self) -> str:
        return "TPipe"


@frozen_value
class StructV(SVal, FrozenFieldwise):
    """A parameter record such as DataCopyParams; fields are SVals."""

    kind: str
    fields: tuple[tuple[str, SVal], ...]

    def get(self, name: str) -> SVal:
        for key, value in self.fields:
            if key == name:
                return value
        raise KeyError(name)

    def describe(self) -> str:
        return self.kind


@frozen_value
class Undefined(SVal, FrozenFieldwise):
    """A name that is not defined on every path reaching this point."""

    reason: str

    def describe(self) -> str:
        return "undefined"


@fieldwise_dataclass
class Slot(Fieldwise):
    """Storage of a name assigned more than once: one IR variable per runtime field."""

    template: SVal
    vars: tuple[ir.Var, ...] = field(default_factory=tuple)
