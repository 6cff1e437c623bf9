"""Name binding for semantic analysis: function scopes, slots for reassigned names, merges."""
from __future__ import annotations

from dataclasses import replace, field

from ...fieldwise import Fieldwise, fieldwise_dataclass
from typing import Any, Optional

from ... import dsl
from ...dsl.types import DataType, bool_, int32
from .. import ast as A
from .. import ir
from ..errors import (KernelTypeError, ReassignmentError, SourceLoc)
from .scalars import arith_type, to_expr
from .values import (ConstV, GmAddrV, GmTensorV, LocalTensorV, RtV, Slot, SVal, Undefined)


#: Methods that change the tensor they are called on (Ascend C's LocalTensor setters): the
#: receiver's name is rebound to the changed tensor (sema/objects.py).
MUTATING_METHODS = frozenset(("set_size", "set_buffer_len", "set_addr_with_offset",
                              "set_user_tag"))


def user_tagged_names(body: tuple[A.Stmt, ...]) -> set[str]:
    """Names a function calls ``set_user_tag`` on: their tensors carry a user tag variable
    (0 until set)."""
    names: set[str] = set()

    def walk(stmts):
        for s in stmts:
            if isinstance(s, A.ExprStmt) and isinstance(s.value, A.Call) and isinstance(
                    s.value.func, A.Attribute) and s.value.func.attr == "set_user_tag" \
                    and isinstance(s.value.func.value, A.Name):
                names.add(s.value.func.value.id)
            for child in ("body", "orelse"):
                walk(getattr(s, child, ()) or ())

    walk(body)
    return names


def assigned_names(body: tuple[A.Stmt, ...]) -> dict[str, int]:
    """How many assignment sites each name has in a function body (for targets included)."""
    counts: dict[str, int] = {}

    def target(t):
        if isinstance(t, A.Name):
            counts[t.id] = counts.get(t.id, 0) + 1
        elif isinstance(t, (A.Tuple, A.List)):
            for e in t.elts:
                target(e)

    def walk(stmts):
        for s in stmts:
            if isinstance(s, A.ExprStmt) and isinstance(s.value, A.Call) and isinstance(
                    s.value.func, A.Attribute) and s.value.func.attr in MUTATING_METHODS \
                    and isinstance(s.value.func.value, A.Name):
                target(s.value.func.value)   # `t.set_size(n)` assigns a new tensor to t
            if isinstance(s, A.Assign):
                for t in s.targets:
                    target(t)
            elif isinstance(s, A.AnnAssign) and s.value is not None:
                target(s.target)
            elif isinstance(s, A.AugAssign):
                target(s.target)
                target(s.target)  # a read-modify-write always needs storage
            elif isinstance(s, A.For):
                target(s.target)
                walk(s.body)
                walk(s.orelse)
            elif isinstance(s, (A.While, A.If)):
                walk(s.body)
                walk(s.orelse)
            elif isinstance(s, A.With):  # `with mm.iterate() as count:` is a loop
                if s.target is not None:
                    target(s.target)
                walk(s.body)

    walk(body)
    return counts


def field_assigned_names(body: tuple[A.Stmt, ...]) -> set[str]:
    """Names whose fields a function body assigns (``tiling.share_l1_size = …``,
    ``config.tile.tile_num = …``: the name at the root of the target)."""
    names: set[str] = set()

    def target(t):
        if isinstance(t, A.Attribute):
            root = t.value
            while isinstance(root, A.Attribute):
                root = root.value
            if isinstance(root, A.Name):
                names.add(root.id)
        elif isinstance(t, (A.Tuple, A.List)):
            for e in t.elts:
                target(e)

    def walk(stmts):
        for s in stmts:
            if isinstance(s, A.Assign):
                for t in s.targets:
                    target(t)
            elif isinstance(s, (A.AnnAssign, A.AugAssign)):
                target(s.target)
            for child in ("body", "orelse"):
                walk(getattr(s, child, ()) or ())

    walk(body)
    return names


@fieldwise_dataclass
class FunctionScope(Fieldwise):
    """One function being analysed (the kernel, or an inlined device function)."""

    name: str
    globals: dict
    env: dict[str, SVal]
    reassigned: set[str]
    slots: dict[str, Slot] = field(default_factory=dict)
    return_label: Optional[str] = None
    return_slot: Optional[Slot] = None
    returned: list = field(default_factory=list)
    loop_depth: int = 0
    simple_return: bool = False
    mutable_structs: set = field(default_factory=set)   # names whose fields are assigned
    user_tagged: set = field(default_factory=set)       # names set_user_tag is called on


def runtime_fields(v: SVal) -> Optional[tuple[ir.Expr, ...]]:
    """The runtime IR fields of a value that needs storage, or None for static values."""
    if isinstance(v, (ConstV, RtV)):
        return (to_expr(v, v.dtype),)
    if isinstance(v, LocalTensorV):
        if v.user_tag is not None:
            return (v.addr, v.size, v.tag, v.user_tag)
        return (v.addr, v.size, v.tag)
    if isinstance(v, GmAddrV):
        return (v.arg, v.offset)
    if isinstance(v, GmTensorV) and v.owned_vars is None:
        return (v.arg, v.offset, v.size)
    return None


def _field_types(v: SVal) -> tuple[DataType, ...]:
    return tuple(e.dtype for e in runtime_fields(v))


def read_slot(slot: Slot) -> SVal:
    """The SVal that reads the slot's variables."""
    t = slot.template
    loads = tuple(ir.Load(var) for var in slot.vars)
    if isinstance(t, (ConstV, RtV)):
        return RtV(loads[0])
    if isinstance(t, LocalTensorV):
        return replace(t, addr=loads[0], size=loads[1], tag=loads[2],
                       user_tag=loads[3] if len(loads) > 3 else None)
    if isinstance(t, GmAddrV):
        return GmAddrV(t.dtype, loads[0], loads[1], t.arg_name)
    if isinstance(t, GmTensorV):
        return GmTensorV(t.dtype, loads[0], loads[1], loads[2], t.arg_name)
    raise AssertionError(t)


def new_slot(name: str, value: SVal) -> Slot:
    """Storage for ``name`` shaped like ``value`` (scalars are widened to arithmetic types)."""
    if isinstance(value, (ConstV, RtV)):
        dtype = value.dtype if value.dtype == bool_ else arith_type(value.dtype)
        template = RtV(ir.Const(0, dtype))
        return Slot(template, (ir.Var(name, dtype),))
    fields = runtime_fields(value)
    suffixes = {LocalTensorV: ("addr", "size", "tag", "user_tag"), GmAddrV: ("arg", "off"),
                GmTensorV: ("arg", "off", "size")}[type(value)]
    return Slot(value, tuple(ir.Var(f"{name}.{s}", e.dtype) for s, e in zip(suffixes, fields)))


def slot_accepts(slot: Slot, value: SVal) -> bool:
    t = slot.template
    if isinstance(t, (ConstV, RtV)):
        return isinstance(value, (ConstV, RtV))
    if type(t) is not type(value):
        return False
    if isinstance(t, LocalTensorV):
        # a tensor without a length (LocalTensor(...) with no tile_size) cannot take the
        # place of one with a length: reads of the variable already check against its length
        return ((t.dtype, t.position.memory) == (value.dtype, value.position.memory)
                and value.bounded >= t.bounded)
    if isinstance(t, (GmAddrV, GmTensorV)):
        return t.dtype == value.dtype
    return False


def store_slot(slot: Slot, name: str, value: SVal, loc: SourceLoc) -> list[ir.Assign]:
    """Assignments storing ``value`` into the slot (checking it fits)."""
    if (isinstance(slot.template, LocalTensorV) and isinstance(value, LocalTensorV)
            and value.bounded < slot.template.bounded and slot_accepts(
                Slot(replace(slot.template, bounded=False)), value)):
        raise ReassignmentError(
            f"'{name}' held a LocalTensor with a length and is now assigned one without "
            f"(asc.LocalTensor(...) with no tile_size)", loc,
            hint="give the LocalTensor a tile_size, or use a new name")
    if not slot_accepts(slot, value):
        raise ReassignmentError(
            f"'{name}' was {slot.template.describe()} and is now assigned "
            f"{value.describe()}", loc,
            hint="a reassigned variable keeps one kind and dtype; use a new name")
    if isinstance(slot.template, (ConstV, RtV)):
        var = slot.vars[0]
        if var.dtype.is_int and value.dtype.is_float:
            raise ReassignmentError(
                f"'{name}' is an integer variable and cannot hold the {value.dtype.name} value "
                f"assigned here", loc, hint=f"initialise '{name}' with a float (e.g. 0.0) or "
                                            f"convert with int(...)")
        if var.dtype == bool_ and value.dtype != bool_:
            raise ReassignmentError(f"'{name}' is a bool variable; assigned {value.describe()}",
                                  loc)
        return [ir.Assign(var, to_expr(value, var.dtype), loc)]
    if isinstance(value, LocalTensorV) and (value.origin, value.made_by) != (
            slot.template.origin, slot.template.made_by):
        slot.template = replace(slot.template, origin=None, made_by="")  # several origins
    fields = runtime_fields(value)
    if isinstance(value, LocalTensorV) and len(fields) < len(slot.vars):   # a user tag slot
        fields = fields + (ir.Const(0, int32),)
    return [ir.Assign(var, e, loc) for var, e in zip(slot.vars, fields)]


def merge_envs(base: dict[str, SVal], branches: list[dict[str, SVal]], what: str) -> dict:
    """Bindings after control flow joins; names that differ become ``Undefined``."""
    merged: dict[str, SVal] = {}
    names = set(base)
    for env in branches:
        names |= set(env)
    for name in names:
        values = [env.get(name) for env in branches]
        first = values[0]
        if all(v is first or (v is not None and first is not None and _same(v, first))
               for v in values):
            merged[name] = first
        elif any(v is None for v in values):
            merged[name] = Undefined(f"'{name}' is assigned on only some paths of the {what} "
                                     f"before this use")
        else:
            merged[name] = Undefined(f"'{name}' holds different kinds of value on different "
                                     f"paths of the {what}")
    return merged


def _same(a: SVal, b: SVal) -> bool:
    try:
        return a == b
    except Exception:  # noqa: BLE001 - comparing IR trees of different shapes
        return False


def python_to_sval(obj: Any, loc: SourceLoc) -> SVal:
    """Map a host Python object (a global or default value) to a sema value."""
    import enum

    import numpy as np

    from .scalars import const_of
    from .values import DTypeV, EnumV, NoneV, PyObjV, StrV

    if obj is None:
        return NoneV()
    if isinstance(obj, enum.Enum):   # before numbers: an IntEnum member keeps its type
        return EnumV(obj)
    if isinstance(obj, (bool, int, float, np.integer, np.floating, np.bool_)):
        return const_of(obj, loc)
    if isinstance(obj, dsl.types.DataType):
        return DTypeV(obj)
    if isinstance(obj, str):
        return StrV(obj)
    return PyObjV(obj)
