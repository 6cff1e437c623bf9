"""The kernel language's syntax tree: frozen dataclasses, each with a required ``loc``.

The front end (``frontend/parse.py``) builds these from lark's parse tree; semantic analysis
(``sema.py``) walks them. Only constructs of the kernel language have a node here; anything else
is rejected by the front end with a ``KernelSyntaxError`` naming the construct.
"""
from __future__ import annotations

from typing import Optional, Union

from ..fieldwise import FrozenFieldwise, fieldwise_dataclass
from .errors import SourceLoc


class Node(FrozenFieldwise):
    """A syntax node: every node class's first field is ``loc: SourceLoc``.

    The node classes are frozen dataclasses declared with ``node`` (``fieldwise_dataclass``:
    the ``repr``, ``==`` and hash of ``@dataclass(frozen=True)``, without compiling methods
    with ``exec`` when this module is imported; issue 14: ~30 classes, ~15 ms of a cold
    compile)."""

    __slots__ = ()


def node(cls):
    """``@dataclass(frozen=True)`` for a ``Node`` subclass, with ``loc: SourceLoc`` as its
    first field (see ``Node``)."""
    cls.__annotations__ = {"loc": "SourceLoc", **cls.__dict__.get("__annotations__", {})}
    if not cls.__doc__:       # (fieldwise_dataclass would compile __init__ for a signature)
        cls.__doc__ = f"The ``{cls.__name__}`` syntax node."
    return fieldwise_dataclass(cls, frozen=True)


# ----------------------------------------------------------------------------- expressions
@node
class Name(Node):
    id: str


@node
class Constant(Node):
    """int, float, bool, str or None literal."""

    value: object


@node
class Attribute(Node):
    value: "Expr"
    attr: str


@node
class Keyword(Node):
    name: str
    value: "Expr"


@node
class Call(Node):
    func: "Expr"
    args: tuple["Expr", ...]
    keywords: tuple[Keyword, ...]


@node
class BinOp(Node):
    """``op`` is the Python operator text: + - * / // % ** << >> & | ^ @"""

    op: str
    left: "Expr"
    right: "Expr"


@node
class UnaryOp(Node):
    """``op`` is one of: - + ~ not"""

    op: str
    operand: "Expr"


@node
class BoolOp(Node):
    """``op`` is 'and' or 'or'; ``values`` has two or more items."""

    op: str
    values: tuple["Expr", ...]


@node
class Compare(Node):
    """A (possibly chained) comparison: ``left ops[0] comparators[0] ops[1] ...``.

    ops are: < > == != <= >= in not in is is not
    """

    left: "Expr"
    ops: tuple[str, ...]
    comparators: tuple["Expr", ...]


@node
class Slice(Node):
    lower: Optional["Expr"]
    upper: Optional["Expr"]
    step: Optional["Expr"]


@node
class Subscript(Node):
    """``value[index]``; ``index`` is an Expr, a Slice, or a Tuple of them."""

    value: "Expr"
    index: Union["Expr", Slice]


@node
class IfExp(Node):
    test: "Expr"
    body: "Expr"
    orelse: "Expr"


@node
class Tuple(Node):
    elts: tuple["Expr", ...]


@node
class List(Node):
    elts: tuple["Expr", ...]


Expr = Union[Name, Constant, Attribute, Call, BinOp, UnaryOp, BoolOp, Compare, Subscript, IfExp,
             Tuple, List, Slice]


# ----------------------------------------------------------------------------- statements
@node
class ExprStmt(Node):
    value: Expr


@node
class Assign(Node):
    """``t1 = t2 = value``; each target is a Name, Tuple of Names, Attribute or Subscript."""

    targets: tuple[Expr, ...]
    value: Expr


@node
class AnnAssign(Node):
    target: Expr
    annotation: Expr
    value: Optional[Expr]


@node
class AugAssign(Node):
    """``target op= value``; ``op`` is the binary operator text without '=' (e.g. '+')."""

    target: Expr
    op: str
    value: Expr


@node
class If(Node):
    """``elif`` chains are nested Ifs in ``orelse``."""

    test: Expr
    body: tuple["Stmt", ...]
    orelse: tuple["Stmt", ...]


@node
class For(Node):
    target: Expr
    iter: Expr
    body: tuple["Stmt", ...]
    orelse: tuple["Stmt", ...]


@node
class While(Node):
    test: Expr
    body: tuple["Stmt", ...]
    orelse: tuple["Stmt", ...]


@node
class Break(Node):
    pass


@node
class Continue(Node):
    pass


@node
class Pass(Node):
    pass


@node
class Return(Node):
    value: Optional[Expr]


@node
class Assert(Node):
    test: Expr
    msg: Optional[Expr]


@node
class With(Node):
    """``with context as target: body`` (one item; only ``matmul.iterate()`` in kernels)."""

    context: Expr
    target: Optional[Expr]
    body: tuple["Stmt", ...]


Stmt = Union[ExprStmt, Assign, AnnAssign, AugAssign, If, For, While, Break, Continue, Pass,
             Return, Assert, With]


# ----------------------------------------------------------------------------- function
@node
class Param(Node):
    name: str
    annotation: Optional[Expr]
    default: Optional[Expr]


@node
class FunctionDef(Node):
    """One kernel or device function. ``docstring`` is dropped from ``body``."""

    name: str
    params: tuple[Param, ...]
    body: tuple[Stmt, ...]
    decorators: tuple[Expr, ...]
    returns: Optional[Expr]
