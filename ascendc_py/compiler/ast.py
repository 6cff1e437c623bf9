"""The kernel language's syntax tree: frozen dataclasses, each with a required ``loc``.

The front end (``frontend/parse.py``) builds these from lark's parse tree; semantic analysis
(``sema.py``) walks them. Only constructs of the kernel language have a node here; anything else
is rejected by the front end with a ``KernelSyntaxError`` naming the construct.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Union

from .errors import SourceLoc


@dataclass(frozen=True)
class Node:
    loc: SourceLoc


# ----------------------------------------------------------------------------- expressions
@dataclass(frozen=True)
class Name(Node):
    id: str


@dataclass(frozen=True)
class Constant(Node):
    """int, float, bool, str or None literal."""

    value: object


@dataclass(frozen=True)
class Attribute(Node):
    value: "Expr"
    attr: str


@dataclass(frozen=True)
class Keyword(Node):
    name: str
    value: "Expr"


@dataclass(frozen=True)
class Call(Node):
    func: "Expr"
    args: tuple["Expr", ...]
    keywords: tuple[Keyword, ...]


@dataclass(frozen=True)
class BinOp(Node):
    """``op`` is the Python operator text: + - * / // % ** << >> & | ^ @"""

    op: str
    left: "Expr"
    right: "Expr"


@dataclass(frozen=True)
class UnaryOp(Node):
    """``op`` is one of: - + ~ not"""

    op: str
    operand: "Expr"


@dataclass(frozen=True)
class BoolOp(Node):
    """``op`` is 'and' or 'or'; ``values`` has two or more items."""

    op: str
    values: tuple["Expr", ...]


@dataclass(frozen=True)
class Compare(Node):
    """A (possibly chained) comparison: ``left ops[0] comparators[0] ops[1] ...``.

    ops are: < > == != <= >= in not in is is not
    """

    left: "Expr"
    ops: tuple[str, ...]
    comparators: tuple["Expr", ...]


@dataclass(frozen=True)
class Slice(Node):
    lower: Optional["Expr"]
    upper: Optional["Expr"]
    step: Optional["Expr"]


@dataclass(frozen=True)
class Subscript(Node):
    """``value[index]``; ``index`` is an Expr, a Slice, or a Tuple of them."""

    value: "Expr"
    index: Union["Expr", Slice]


@dataclass(frozen=True)
class IfExp(Node):
    test: "Expr"
    body: "Expr"
    orelse: "Expr"


@dataclass(frozen=True)
class Tuple(Node):
    elts: tuple["Expr", ...]


@dataclass(frozen=True)
class List(Node):
    elts: tuple["Expr", ...]


Expr = Union[Name, Constant, Attribute, Call, BinOp, UnaryOp, BoolOp, Compare, Subscript, IfExp,
             Tuple, List, Slice]


# ----------------------------------------------------------------------------- statements
@dataclass(frozen=True)
class ExprStmt(Node):
    value: Expr


@dataclass(frozen=True)
class Assign(Node):
    """``t1 = t2 = value``; each target is a Name, Tuple of Names, Attribute or Subscript."""

    targets: tuple[Expr, ...]
    value: Expr


@dataclass(frozen=True)
class AnnAssign(Node):
    target: Expr
    annotation: Expr
    value: Optional[Expr]


@dataclass(frozen=True)
class AugAssign(Node):
    """``target op= value``; ``op`` is the binary operator text without '=' (e.g. '+')."""

    target: Expr
    op: str
    value: Expr


@dataclass(frozen=True)
class If(Node):
    """``elif`` chains are nested Ifs in ``orelse``."""

    test: Expr
    body: tuple["Stmt", ...]
    orelse: tuple["Stmt", ...]


@dataclass(frozen=True)
class For(Node):
    target: Expr
    iter: Expr
    body: tuple["Stmt", ...]
    orelse: tuple["Stmt", ...]


@dataclass(frozen=True)
class While(Node):
    test: Expr
    body: tuple["Stmt", ...]
    orelse: tuple["Stmt", ...]


@dataclass(frozen=True)
class Break(Node):
    pass


@dataclass(frozen=True)
class Continue(Node):
    pass


@dataclass(frozen=True)
class Pass(Node):
    pass


@dataclass(frozen=True)
class Return(Node):
    value: Optional[Expr]


@dataclass(frozen=True)
class Assert(Node):
    test: Expr
    msg: Optional[Expr]


@dataclass(frozen=True)
class With(Node):
    """``with context as target: body`` (one item; only ``matmul.iterate()`` in kernels)."""

    context: Expr
    target: Optional[Expr]
    body: tuple["Stmt", ...]


Stmt = Union[ExprStmt, Assign, AnnAssign, AugAssign, If, For, While, Break, Continue, Pass,
             Return, Assert, With]


# ----------------------------------------------------------------------------- function
@dataclass(frozen=True)
class Param(Node):
    name: str
    annotation: Optional[Expr]
    default: Optional[Expr]


@dataclass(frozen=True)
class FunctionDef(Node):
    """One kernel or device function. ``docstring`` is dropped from ``body``."""

    name: str
    params: tuple[Param, ...]
    body: tuple[Stmt, ...]
    decorators: tuple[Expr, ...]
    returns: Optional[Expr]
