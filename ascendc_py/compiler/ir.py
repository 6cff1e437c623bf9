"""The kernel IR: a typed scalar program plus one ``Intrinsic`` per DSL operation.

Semantic analysis resolves every object of the kernel language (tensors, queues, pipes) into
scalar fields and static attributes, so this IR only knows scalar types (``DataType``), mutable
scalar variables, structured control flow and intrinsic calls whose tensor operands are
``LocalRef``/``GlobalRef`` records of scalar expressions. Every statement carries a
``SourceLoc``; ``verify`` checks the invariants and runs in every test.
"""
from __future__ import annotations

import itertools
from dataclasses import field
from typing import Optional, Union

from ..dsl.types import DataType, Memory, bool_, int32, int64
from ..fieldwise import FrozenFieldwise, fieldwise_dataclass
from .errors import InternalCompilerError, SourceLoc

_ids = itertools.count()


def _frozen(cls):
    """``@dataclass(frozen=True)`` for an IR class deriving from ``FrozenFieldwise``: the same
    fields, ``repr``, ``==`` and hash, without compiling methods with ``exec`` when the module
    is imported (``fieldwise_dataclass``; issue 14: a cold compile imports this module)."""
    if not cls.__doc__:       # (fieldwise_dataclass would compile __init__ for a signature)
        cls.__doc__ = f"The ``{cls.__name__}`` IR node."
    return fieldwise_dataclass(cls, frozen=True)


@fieldwise_dataclass(frozen=True)
class Var:
    """A mutable scalar variable (an ``alloca`` in codegen). Identity is the object."""

    name: str
    dtype: DataType
    uid: int = field(default_factory=lambda: next(_ids))

    def __repr__(self) -> str:
        return f"%{self.name}.{self.uid}:{self.dtype.name}"


# ----------------------------------------------------------------------------- expressions
@_frozen
class Const(FrozenFieldwise):
    value: Union[int, float, bool]
    dtype: DataType


@_frozen
class Load(FrozenFieldwise):
    var: Var

    @property
    def dtype(self) -> DataType:
        return self.var.dtype


#: Binary operators. Integer ``floordiv``/``mod`` follow Python (floor) semantics.
BIN_OPS = frozenset({"add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "shl", "shr",
                     "and", "or", "xor", "min", "max",
                     "cdiv", "cmod"})   # C's truncating / and % (the C++ front end, cpp/)
CMP_OPS = frozenset({"lt", "le", "gt", "ge", "eq", "ne"})
UN_OPS = frozenset({"neg", "not", "invert", "abs"})


@_frozen
class Bin(FrozenFieldwise):
    op: str
    a: "Expr"
    b: "Expr"
    dtype: DataType


@_frozen
class Cmp(FrozenFieldwise):
    op: str
    a: "Expr"
    b: "Expr"

    @property
    def dtype(self) -> DataType:
        return bool_


@_frozen
class Un(FrozenFieldwise):
    op: str
    a: "Expr"
    dtype: DataType


@_frozen
class Cast(FrozenFieldwise):
    """Convert ``a`` to ``dtype``. ``checked``: an integer narrowing that must not wrap: a
    value outside ``dtype`` stops the kernel at the statement (ValueRangeError naming
    ``what``) instead of being truncated."""

    a: "Expr"
    dtype: DataType
    checked: bool = False
    what: str = ""


@_frozen
class Select(FrozenFieldwise):
    cond: "Expr"
    a: "Expr"
    b: "Expr"
    dtype: DataType


#: Values provided by the simulated core at run time.
SPECIALS = {"block_idx": int64, "block_num": int64, "sub_block_idx": int64,
            "sub_block_num": int64, "core_type": int64, "system_cycle": int64}


@_frozen
class Special(FrozenFieldwise):
    name: str

    @property
    def dtype(self) -> DataType:
        return SPECIALS[self.name]


@_frozen
class ScalarArg(FrozenFieldwise):
    """The value of the ``index``-th scalar kernel argument."""

    index: int
    dtype: DataType


Expr = Union[Const, Load, Bin, Cmp, Un, Cast, Select, Special, ScalarArg]


# ----------------------------------------------------------------------------- operands
@_frozen
class LocalRef(FrozenFieldwise):
    """A LocalTensor operand: ``size`` elements of ``dtype`` at byte ``addr`` of ``memory``.

    ``tag`` identifies the queue buffer the tensor came from (-1 for static tensors and TBuf).
    ``bounded``: instructions must stay inside [addr, addr + size * sizeof) (False only for a
    static ``LocalTensor`` placed without a ``tile_size``). ``info`` describes the tensor for
    error messages (``errors.TensorInfo``); it takes no part in comparisons.
    """

    memory: Memory
    dtype: DataType
    addr: Expr   # int32 bytes
    size: Expr   # int32 elements
    tag: Expr    # int32
    bounded: bool = True
    info: object = field(default=None, compare=False, repr=False)


@_frozen
class GlobalRef(FrozenFieldwise):
    """A GlobalTensor operand: element ``offset`` into kernel argument number ``arg``."""

    dtype: DataType
    arg: Expr     # int32 index of the GM argument
    offset: Expr  # int64 elements from the argument's start
    size: Expr    # int64 elements declared by set_global_buffer (-1: not given)


Operand = Union[Expr, LocalRef, GlobalRef, str, int, float, DataType, tuple]


# ----------------------------------------------------------------------------- statements
@_frozen
class Assign(FrozenFieldwise):
    var: Var
    value: Expr
    loc: SourceLoc


@_frozen
class If(FrozenFieldwise):
    cond: Expr
    then: tuple["Stmt", ...]
    orelse: tuple["Stmt", ...]
    loc: SourceLoc


@_frozen
class ForRange(FrozenFieldwise):
    """``for var in range(start, stop, step)``; ``step`` must not be zero (checked at run time)."""

    var: Var
    start: Expr
    stop: Expr
    step: Expr
    body: tuple["Stmt", ...]
    loc: SourceLoc


@_frozen
class While(FrozenFieldwise):
    """Evaluate ``pre`` then test ``cond`` before each iteration."""

    pre: tuple["Stmt", ...]
    cond: Expr
    body: tuple["Stmt", ...]
    loc: SourceLoc


@_frozen
class Break(FrozenFieldwise):
    loc: SourceLoc


@_frozen
class Continue(FrozenFieldwise):
    loc: SourceLoc


@_frozen
class Block(FrozenFieldwise):
    """A labelled region that ``Exit(label)`` leaves (inlined returns, unrolled loops)."""

    label: str
    body: tuple["Stmt", ...]
    loc: SourceLoc


@_frozen
class Exit(FrozenFieldwise):
    label: str
    loc: SourceLoc


@_frozen
class Intrinsic(FrozenFieldwise):
    """One DSL operation. ``op`` names an entry of the op registry (``compiler/ops.py``)."""

    op: str
    args: tuple[Operand, ...]
    results: tuple[Var, ...]
    loc: SourceLoc
    attrs: tuple[tuple[str, object], ...] = ()

    def attr(self, name: str, default=None):
        for key, value in self.attrs:
            if key == name:
                return value
        return default


Stmt = Union[Assign, If, ForRange, While, Break, Continue, Block, Exit, Intrinsic]


@_frozen
class Function(FrozenFieldwise):
    """A whole kernel after inlining."""

    name: str
    body: tuple[Stmt, ...]
    loc: SourceLoc
    gm_args: tuple[tuple[str, DataType], ...]       # name, dtype of each GM argument
    scalar_args: tuple[tuple[str, DataType], ...]   # name, dtype of each runtime scalar
    num_queues: int = 0


# ----------------------------------------------------------------------------- verify
def expr_dtype(e: Expr) -> DataType:
    return e.dtype


def _check(cond: bool, msg: str, loc: Optional[SourceLoc]):
    if not cond:
        raise InternalCompilerError(f"IR verification failed: {msg}", loc)


def _verify_expr(e, loc) -> None:
    if isinstance(e, Const):
        _check(isinstance(e.dtype, DataType), "Const without dtype", loc)
    elif isinstance(e, Load):
        _check(isinstance(e.var, Var), "Load of a non-Var", loc)
    elif isinstance(e, Bin):
        _check(e.op in BIN_OPS, f"unknown binary op {e.op}", loc)
        _verify_expr(e.a, loc)
        _verify_expr(e.b, loc)
        if e.op not in ("shl", "shr") and not (e.a.dtype == e.dtype and e.b.dtype == e.dtype):
            _check(False, f"operand types of {e.op} differ from result: {e.a.dtype} {e.b.dtype} "
                          f"{e.dtype}", loc)
    elif isinstance(e, Cmp):
        _check(e.op in CMP_OPS, f"unknown comparison {e.op}", loc)
        _verify_expr(e.a, loc)
        _verify_expr(e.b, loc)
        if e.a.dtype != e.b.dtype:
            _check(False, f"comparison of {e.a.dtype} with {e.b.dtype}", loc)
    elif isinstance(e, Un):
        _check(e.op in UN_OPS, f"unknown unary op {e.op}", loc)
        _verify_expr(e.a, loc)
    elif isinstance(e, Cast):
        _verify_expr(e.a, loc)
    elif isinstance(e, Select):
        _verify_expr(e.cond, loc)
        _verify_expr(e.a, loc)
        _verify_expr(e.b, loc)
        _check(e.cond.dtype == bool_, "Select condition is not bool", loc)
        _check(e.a.dtype == e.dtype == e.b.dtype, "Select arm types differ", loc)
    elif isinstance(e, Special):
        _check(e.name in SPECIALS, f"unknown special {e.name}", loc)
    elif isinstance(e, ScalarArg):
        _check(e.index >= 0, "negative scalar arg index", loc)
    else:
        _check(False, f"not an expression: {e!r}", loc)


def _verify_operand(a, loc) -> None:
    if isinstance(a, LocalRef):
        for part, want in ((a.addr, int32), (a.size, int32), (a.tag, int32)):
            _verify_expr(part, loc)
            if part.dtype != want:
                _check(False, f"LocalRef field has type {part.dtype}", loc)
    elif isinstance(a, GlobalRef):
        _verify_expr(a.arg, loc)
        _verify_expr(a.offset, loc)
        _verify_expr(a.size, loc)
        _check(a.arg.dtype == int32 and a.offset.dtype == int64 and a.size.dtype == int64,
               "GlobalRef field types", loc)
    elif isinstance(a, (str, int, float, DataType)) or a is None:
        pass
    elif isinstance(a, tuple):
        for item in a:
            _verify_operand(item, loc)
    else:
        _verify_expr(a, loc)


def verify(fn: Function) -> None:
    """Check the IR's invariants; raise InternalCompilerError naming the location."""
    from .ops import REGISTRY

    def walk(stmts, loops: int, labels: tuple[str, ...]):
        for s in stmts:
            loc = getattr(s, "loc", None)
            if not isinstance(loc, SourceLoc):     # (messages are formatted only on failure:
                _check(False, f"statement without location: {s!r}", None)  # a repr is costly)
            if isinstance(s, Assign):
                _verify_expr(s.value, loc)
                if s.value.dtype != s.var.dtype:
                    _check(False, f"assign {s.value.dtype.name} to {s.var!r}", loc)
            elif isinstance(s, If):
                _verify_expr(s.cond, loc)
                _check(s.cond.dtype == bool_, "If condition is not bool", loc)
                walk(s.then, loops, labels)
                walk(s.orelse, loops, labels)
            elif isinstance(s, ForRange):
                for e in (s.start, s.stop, s.step):
                    _verify_expr(e, loc)
                    _check(e.dtype == s.var.dtype, "range bound type differs from loop var", loc)
                walk(s.body, loops + 1, labels)
            elif isinstance(s, While):
                walk(s.pre, loops, labels)
                _verify_expr(s.cond, loc)
                _check(s.cond.dtype == bool_, "While condition is not bool", loc)
                walk(s.body, loops + 1, labels)
            elif isinstance(s, (Break, Continue)):
                _check(loops > 0, "break/continue outside a loop", loc)
            elif isinstance(s, Block):
                walk(s.body, loops, labels + (s.label,))
            elif isinstance(s, Exit):
                _check(s.label in labels, f"exit to unknown label {s.label}", loc)
            elif isinstance(s, Intrinsic):
                _check(s.op in REGISTRY, f"unknown intrinsic {s.op}", loc)
                for a in s.args:
                    _verify_operand(a, loc)
            else:
                _check(False, f"unknown statement {s!r}", loc)

    walk(fn.body, 0, ())


def memories_used(fn: Function) -> tuple[Memory, ...]:
    """The local memories the kernel touches (so the runtime allocates only those)."""
    found: set[Memory] = set()

    def operand(a):
        if isinstance(a, LocalRef):
            found.add(a.memory)
        elif isinstance(a, tuple):
            for x in a:
                operand(x)

    def walk(stmts):
        for s in stmts:
            if isinstance(s, Intrinsic):
                for a in s.args:
                    operand(a)
                mem = s.attr("memory")
                if mem is not None:
                    found.add(mem)
            for child in ("then", "orelse", "body", "pre"):
                sub = getattr(s, child, None)
                if sub:
                    walk(sub)

    walk(fn.body)
    found.add(Memory.UB)
    return tuple(sorted(found))
