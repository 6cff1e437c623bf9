"""Kernel source text → ``ast.FunctionDef``: an LALR parser, then a walk over its tree.

The grammar (``grammar.lark``) is compiled by lark. Its LALR tables are exported once
(``lalr.export_tables``) and cached under ``cache_dir()``; a new process loads them with
``marshal`` and parses with ``lalr.FastParser`` without importing lark. Text that parser
rejects is parsed again with lark itself (built, or loaded from lark's own table cache, on
first use), whose exception ``syntax_errors.py`` turns into the message.
Tokens come from ``lexer.lex_tokens`` (one regex, Python's indentation and bracket rules);
binary operators arrive as flat operand/operator lists, to which ``_Builder.climb`` applies
Python's precedence (a short LALR reduction chain per operand is what makes parsing fast).
Every node gets an absolute ``SourceLoc`` (``KernelSource.first_line``/``col_offset`` applied).
Constructs outside the kernel language are parsed by the grammar and rejected here with a
``KernelSyntaxError`` that names them.
"""
from __future__ import annotations

import ast as pyast
import hashlib
import importlib.util
import marshal
import os
import re
import sys
import time
import warnings
from pathlib import Path
from typing import Optional

from ...forksafe import ForkSafeLock
from .. import ast as A
from ..cachedir import cache_dir, is_regular_or_missing, read_file, write_file
from ..errors import (AssignmentTargetError, KernelSyntaxError, SourceLoc,
                      UnsupportedConstructError)
from . import lalr
from .lexer import _lex_state, _LexError, lex_tokens, lexer_patterns
from .source import KernelSource
from .syntax_errors import _lex_error, _syntax_error, terminal_text as _terminal_text

GRAMMAR_PATH = Path(__file__).with_name("grammar.lark")

_lock = ForkSafeLock()         # guards the parsers and _lex_state
_fast_lock = ForkSafeLock()    # guards loading the fast front end
_parser = None
_fast = None                   # FastFrontEnd; False: unavailable in this process


# ----------------------------------------------------------------------------- lark's lexer
def _make_lexer_class():
    """Create KernelLexer, a lark ``Lexer`` (lark is imported here, not at module import)."""
    from lark.lexer import Lexer, Token

    class KernelLexer(Lexer):
        """lark's interface to ``lex_tokens``; about twice as fast as lark's own lexer."""

        def __init__(self, conf):
            skip, master, self.keywords = lexer_patterns(conf.terminals, conf.ignore)
            self.skip, self.master = re.compile(skip), re.compile(master)

        def lex(self, text):
            """Yield lark Tokens for ``text`` (lark's custom-lexer interface)."""
            return lex_tokens(text, self.master, self.skip, self.keywords, Token)

    KernelLexer.__module__, KernelLexer.__qualname__ = __name__, "KernelLexer"
    return KernelLexer


def __getattr__(name: str):
    """Create lark-dependent classes on first use (PEP 562), so that importing this module
    does not import lark; pickle finds KernelLexer here when loading the table cache."""
    if name == "KernelLexer":
        cls = globals()["KernelLexer"] = _make_lexer_class()
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ----------------------------------------------------------------------------- the parser
def _build_parser():
    """Create the Lark parser, loading its tables from the cache file when present."""
    import lark
    grammar = GRAMMAR_PATH.read_text()
    opts = dict(parser="lalr", lexer=__getattr__("KernelLexer"), propagate_positions=True,
                maybe_placeholders=True)
    key = hashlib.sha256(f"{grammar}\0{lark.__version__}\0{sys.version_info[:2]}".encode())
    root = cache_dir()
    path = root / f"lark_tables_{key.hexdigest()[:16]}.pickle" if root is not None else None
    if path is None or not is_regular_or_missing(path):   # never read a FIFO or a device
        return lark.Lark(grammar, **opts)
    # lark checks the grammar/options hash stored in the file and rebuilds (and rewrites the
    # file) when it does not match or the file is unreadable, e.g. half-written by another
    # process. The file name must stay the same: lark's hash includes it.
    try:
        return lark.Lark(grammar, cache=str(path), **opts)
    except OSError as exc:   # the cache could not be written: build without it
        from ..cachedir import problem
        problem(exc, path, fatal=False)
        return lark.Lark(grammar, **opts)


def get_parser():
    """The process-wide Lark parser (built, or loaded from the table cache, on first call)."""
    global _parser
    if _parser is None:
        with _lock:
            if _parser is None:
                p = _build_parser()
                _terminal_text.update({t.name: t.pattern.value for t in p.terminals
                                       if t.pattern.type == "str"})
                _parser = p
    return _parser


class FastFrontEnd:
    """``lex_tokens`` and ``lalr.FastParser`` over tables exported from the lark parser."""

    def __init__(self, tables: tuple):
        self.parser = lalr.FastParser(tables)
        skip, master, self.keywords = self.parser.lexer_patterns
        self.skip, self.master = re.compile(skip), re.compile(master)

    def parse(self, text: str):
        """The parse tree of ``text`` (as lark builds it); raises ``_LexError`` or
        ``lalr.ParseFailed``."""
        return self.parser.parse(lex_tokens(text, self.master, self.skip, self.keywords,
                                            lalr.Token))


def _fast_tables_path() -> Optional[Path]:
    """Where the exported tables live: the name hashes the grammar, the table format, the
    Python version and the files that shape the tables (this module, ``lalr.py`` and lark's
    ``__init__``, by size and modification time, as ``compiler_version`` does)."""
    root = cache_dir()
    if root is None:
        return None
    h = hashlib.sha256(GRAMMAR_PATH.read_bytes())
    h.update(f"\0{lalr.TABLE_FORMAT}\0{sys.version_info[:2]}".encode())
    spec = importlib.util.find_spec("lark")
    for name in (spec.origin if spec is not None else None, __file__, lalr.__file__):
        try:
            st = os.stat(name)
            h.update(f"\0{name}:{st.st_size}:{st.st_mtime_ns}".encode())
        except (OSError, TypeError):
            h.update(b"\0?")
    return root / f"lark_tables_{h.hexdigest()[:16]}.fast"


def _load_fast_front_end() -> Optional[FastFrontEnd]:
    path = _fast_tables_path()
    blob = read_file(path) if path is not None else None
    if blob is not None and len(blob) > 32 and hashlib.sha256(blob[32:]).digest() == blob[:32]:
        try:
            return FastFrontEnd(marshal.loads(blob[32:]))
        except (ValueError, EOFError, TypeError, re.error, lalr.TablesUnavailable):
            pass                                    # not ours or stale: rebuild below
    # a one-time cost (a few tenths of a second) a user's first compile waits for: say so
    print("ascendc_py: building the parser tables, once "
          + ("(later processes load them from the cache) ..." if path is not None else
             "(no usable cache: in every process) ..."), file=sys.stderr, flush=True)
    start = time.perf_counter()
    p = get_parser()
    try:
        tables = lalr.export_tables(p, lexer_patterns(p.lexer_conf.terminals,
                                                      p.lexer_conf.ignore))
    except lalr.TablesUnavailable:
        return None
    if path is not None:
        payload = marshal.dumps(tables)
        write_file(path, hashlib.sha256(payload).digest() + payload)
    print(f"ascendc_py: parser tables built in {time.perf_counter() - start:.1f} s",
          file=sys.stderr, flush=True)
    return FastFrontEnd(tables)


def get_fast_parser() -> Optional[FastFrontEnd]:
    """The process-wide fast front end: tables loaded from the cache (no lark import), or
    exported from the lark parser on first use and cached; None if they cannot be exported."""
    global _fast
    if _fast is None:
        with _fast_lock:
            if _fast is None:
                _fast = _load_fast_front_end() or False
    return _fast or None


def parse_function(src: KernelSource) -> A.FunctionDef:
    """Parse the source of one kernel function into an ``ast.FunctionDef``.

    ``src.text`` must hold exactly one top-level ``def`` (decorators allowed). Raises
    ``KernelSyntaxError`` (with an absolute file location) for invalid syntax and for Python
    constructs outside the kernel language. Valid text is parsed by the fast front end; text
    it rejects is parsed again by lark, whose errors the messages are made from.
    """
    text = src.text if src.text.endswith("\n") else src.text + "\n"
    fast = get_fast_parser()
    if fast is not None:
        with _lock:
            try:
                tree = fast.parse(text)
            except (_LexError, lalr.ParseFailed, KeyError, IndexError):
                tree = None
        if tree is not None:
            return _Builder(src).module(tree)
    from lark.exceptions import LarkError, UnexpectedToken
    parser = get_parser()
    with _lock:
        try:
            tree = parser.parse(text)
            err = None
        except _LexError as e:
            err = _lex_error(e, src, text)
        except UnexpectedToken as e:
            err = _syntax_error(e, src, text, _lex_state["brackets"])
        except LarkError:
            err = KernelSyntaxError("invalid syntax", SourceLoc(src.file, src.first_line, 1))
    if err is not None:
        raise err from None
    return _Builder(src).module(tree)


# ----------------------------------------------------------------------------- unsupported constructs
_LOOP = "use a `for` loop (or `asc.static_range` to unroll it)"
_BY_NAME = "declare each parameter by name"
_UNSUPPORTED = {   # tree name → (what, hint); the message is "<what> not supported in kernels"
    "classdef": ("class definitions are", "define classes outside the kernel"),
    "lambdef": ("`lambda` expressions are", "define a module-level helper with @asc.kernel"),
    "with_stmt": ("`with` statements with several items are", "nest one `with` per item"),
    "try_stmt": ("`try` statements are", "kernels cannot catch exceptions; test with `if`"),
    "import_stmt": ("`import` statements are", "import at the top of the file instead"),
    "global_stmt": ("`global` statements are", "kernels read module constants directly"),
    "nonlocal_stmt": ("`nonlocal` statements are", ""),
    "del_stmt": ("`del` statements are", ""),
    "raise_stmt": ("`raise` statements are", "check with `assert` or `asc.static_assert`"),
    "yield_expr": ("`yield` is", "a kernel cannot be a generator"),
    "async_stmt": ("`async` functions and statements are", ""),
    "await_expr": ("`await` is", ""),
    "funcdef": ("nested function definitions are",
                "define the helper at module level with @asc.kernel; calls to it are inlined"),
    "listcomp": ("list comprehensions are", _LOOP),
    "setcomp": ("set comprehensions are", _LOOP),
    "dictcomp": ("dict comprehensions are", _LOOP),
    "genexp": ("generator expressions are", _LOOP),
    "genexp_arg": ("generator expressions are", _LOOP),
    "dict": ("dict literals are", "pass the values as separate arguments"),
    "set": ("set literals are", ""),
    "star_expr": ("starred expressions (`*x`) are", "unpack into a fixed number of names"),
    "star_arg": ("starred arguments (`*args`) are", "pass each argument explicitly"),
    "kwstar_arg": ("`**kwargs` arguments are", "pass each keyword argument explicitly"),
    "walrus": ("assignment expressions (`:=`) are", "assign the value on its own line first"),
    "ellipsis": ("`...` (Ellipsis) is", "use `pass` for an empty body"),
    "star_param": ("`*args` and `*` parameters are", _BY_NAME),
    "kwstar_param": ("`**kwargs` parameters are", _BY_NAME),
    "slash_param": ("positional-only parameters (`/`) are", _BY_NAME),
}


# ----------------------------------------------------------------------------- tree → AST
# Binding strength of the operators in a `flat` sequence (unary + - ~ and ** bind tighter and
# are nested by the grammar itself; `not` is a prefix between `and` and the comparisons).
_PREC = {"or": 1, "and": 2, "<": 4, ">": 4, "==": 4, ">=": 4, "<=": 4, "!=": 4, "in": 4,
         "not in": 4, "is": 4, "is not": 4, "|": 5, "^": 6, "&": 7, "<<": 8, ">>": 8,
         "+": 9, "-": 9, "*": 10, "/": 10, "//": 10, "%": 10, "@": 10}
_AND_PREC, _NOT_PREC, _CMP_PREC = 2, 3, 4


def _op(tok) -> str:
    """Operator text of a token, with `not  in` / `is\nnot` normalised."""
    return tok.value if tok.value in _PREC else " ".join(tok.value.split())


class _Builder:
    """Walks lark's parse tree and builds ``ast`` nodes with absolute locations."""

    def __init__(self, src: KernelSource):
        self.src = src
        self.file = src.file
        self.dl = src.first_line - 1
        self.dc = src.col_offset
        self.loops = 0

    # --- locations
    def loc(self, x) -> SourceLoc:
        """Absolute location of a Tree (its meta) or a Token."""
        m = x if isinstance(x, str) else x.meta
        return SourceLoc(self.file, m.line + self.dl, m.column + self.dc,
                         m.end_line + self.dl, m.end_column + self.dc)

    def span(self, start: SourceLoc, end: SourceLoc) -> SourceLoc:
        return SourceLoc(self.file, start.line, start.col, end.end_line, end.end_col)

    def opt(self, x):
        """``expr(x)``, or None for an absent optional part."""
        return None if x is None else self.expr(x)

    def fail(self, message: str, x, hint: str = ""):
        raise KernelSyntaxError(message, self.loc(x), hint=hint)

    def unsupported(self, tree):
        what, hint = _UNSUPPORTED.get(tree.data, ("this construct is", ""))
        raise UnsupportedConstructError(f"{what} not supported in kernels", self.loc(tree),
                                        hint=hint)

    # --- top level
    def module(self, tree) -> A.FunctionDef:
        stmts = [c for c in tree.children if not isinstance(c, str)]
        if not stmts:
            raise KernelSyntaxError("no function definition found in the kernel source",
                                    SourceLoc(self.file, self.src.first_line, 1))
        first = stmts[0]
        target = first.children[-1] if first.data == "decorated" else first
        if target.data != "funcdef":
            if target.data in _UNSUPPORTED:
                self.unsupported(target)
            self.fail("the kernel source must be a single function definition (`def`)", first)
        if len(stmts) > 1:
            self.fail("the kernel source must contain exactly one top-level `def`; "
                      "found another statement here", stmts[1])
        decorators = []
        if first.data == "decorated":
            # decorators run in Python, not in the kernel: one the kernel language cannot
            # spell (``@asc.autotune(configs=[... for ...])``) is left out, not an error
            for d in first.children[:-1]:
                try:
                    decorators.append(self.expr(d.children[0]))
                except KernelSyntaxError:
                    pass
        return self.funcdef(target, tuple(decorators))

    def funcdef(self, tree, decorators) -> A.FunctionDef:
        name, params_tree, returns, suite = tree.children
        params, seen, need_default = [], set(), False
        for p in params_tree.children if params_tree is not None else ():
            if p.data != "param":
                self.unsupported(p)
            pname, ann, default = p.children
            if pname in seen:
                self.fail(f"duplicate parameter '{pname}' in function definition", p)
            seen.add(str(pname))
            if default is None and need_default:
                self.fail(f"parameter '{pname}' without a default follows a parameter with "
                          "a default", p)
            need_default = default is not None
            params.append(A.Param(self.loc(p), str(pname), self.opt(ann), self.opt(default)))
        body = self.suite(suite)
        if body and type(body[0]) is A.ExprStmt and type(body[0].value) is A.Constant \
                and isinstance(body[0].value.value, str):
            body = body[1:]     # the docstring
        loc = self.loc(tree)
        if body:
            loc = self.span(loc, body[-1].loc)
        return A.FunctionDef(loc, str(name), tuple(params), body, decorators, self.opt(returns))

    # --- statements
    def suite(self, tree) -> tuple:
        out: list = []
        for child in tree.children:
            self.stmt_into(child, out)
        return tuple(out)

    def stmt_into(self, tree, out: list) -> None:
        if tree.data == "simple_stmt":
            for small in tree.children:
                if small is not None:
                    out.append(self.STMT.get(small.data, _Builder.unsupported)(self, small))
        else:
            out.append(self.STMT.get(tree.data, _Builder.unsupported)(self, tree))

    def block_end(self, loc: SourceLoc, *bodies) -> SourceLoc:
        for body in reversed(bodies):
            if body:
                return self.span(loc, body[-1].loc)
        return loc

    def expr_stmt(self, t):
        child = t.children[0]
        if getattr(child, "data", None) == "ellipsis":   # `...` alone: a placeholder, as `pass`
            return A.Pass(self.loc(t))
        return A.ExprStmt(self.loc(t), self.expr(child))

    def assign(self, t):
        *targets, value = [self.expr(c) for c in t.children]
        for target in targets:
            self.check_target(target, t)
        return A.Assign(self.loc(t), tuple(targets), value)

    def annassign(self, t):
        target, ann, value = t.children
        target = self.expr(target)
        if type(target) not in (A.Name, A.Attribute, A.Subscript):
            self.fail("only a single name, attribute or subscript can be annotated", t)
        return A.AnnAssign(self.loc(t), target, self.expr(ann), self.opt(value))

    def augassign(self, t):
        target, op, value = t.children
        target = self.expr(target)
        if type(target) not in (A.Name, A.Attribute, A.Subscript):
            self.fail(f"cannot use '{op}' on {_describe(target)}", t)
        return A.AugAssign(self.loc(t), target, op.value[:-1], self.expr(value))

    def check_target(self, e, t) -> None:
        kind = type(e)
        if kind in (A.Tuple, A.List):
            for elt in e.elts:
                self.check_target(elt, t)
        elif kind not in (A.Name, A.Attribute, A.Subscript):
            raise AssignmentTargetError(f"cannot assign to {_describe(e)}", e.loc,
                                    hint="'==' compares; '=' assigns to a name")

    def simple(kind):
        return lambda self, t: kind(self.loc(t))

    def jump(kind, word):
        def build(self, t):
            if not self.loops:
                self.fail(f"`{word}` outside a loop", t)
            return kind(self.loc(t))
        return build

    def return_stmt(self, t):
        return A.Return(self.loc(t), self.opt(t.children[0]))

    def assert_stmt(self, t):
        test, msg = t.children
        return A.Assert(self.loc(t), self.expr(test), self.opt(msg))

    def if_stmt(self, t):
        ch = t.children
        orelse = () if ch[-1] is None else self.suite(ch[-1])
        for clause in reversed(ch[2:-1]):     # elif chain, innermost first
            test, suite = clause.children
            body = self.suite(suite)
            loc = self.block_end(self.loc(clause), body, orelse)
            orelse = (A.If(loc, self.expr(test), body, orelse),)
        body = self.suite(ch[1])
        return A.If(self.block_end(self.loc(t), body, orelse), self.expr(ch[0]), body, orelse)

    def loop_body(self, suite):
        self.loops += 1
        try:
            return self.suite(suite)
        finally:
            self.loops -= 1

    def while_stmt(self, t):
        test, suite, orelse = t.children
        body = self.loop_body(suite)
        orelse = () if orelse is None else self.suite(orelse)
        return A.While(self.block_end(self.loc(t), body, orelse), self.expr(test), body, orelse)

    def for_stmt(self, t):
        target, it, suite, orelse = t.children
        target = self.expr(target)
        self.check_target(target, t)
        body = self.loop_body(suite)
        orelse = () if orelse is None else self.suite(orelse)
        return A.For(self.block_end(self.loc(t), body, orelse), target, self.expr(it), body,
                     orelse)

    def with_stmt(self, t):
        *items, suite = t.children
        if len(items) != 1:
            self.unsupported(t)
        context, target = items[0].children
        target = self.opt(target)
        if target is not None:
            self.check_target(target, t)
        body = self.suite(suite)
        return A.With(self.block_end(self.loc(t), body, ()), self.expr(context), target, body)

    def decorated(self, t):
        self.unsupported(t.children[-1])

    STMT = {
        "expr_stmt": expr_stmt, "assign": assign, "annassign": annassign,
        "augassign": augassign, "pass_stmt": simple(A.Pass),
        "break_stmt": jump(A.Break, "break"), "continue_stmt": jump(A.Continue, "continue"),
        "return_stmt": return_stmt, "assert_stmt": assert_stmt, "if_stmt": if_stmt,
        "while_stmt": while_stmt, "for_stmt": for_stmt, "decorated": decorated,
        "with_stmt": with_stmt,
    }

    # --- expressions
    def expr(self, x):
        """Build an expression node from a Tree or Token."""
        if isinstance(x, str):
            kind = x.type
            if kind == "NAME":
                return A.Name(self.loc(x), x.value)
            if kind == "NUMBER":
                return A.Constant(self.loc(x), self.number(x))
            raise KernelSyntaxError(f"unexpected '{x.value}'", self.loc(x))  # pragma: no cover
        handler = self.EXPR.get(x.data)
        if handler is None:
            self.unsupported(x)
        return handler(self, x)

    def number(self, tok):
        text = tok.value.replace("_", "")
        if text[-1] in "jJ":
            self.fail("complex number literals are not supported in kernels", tok)
        if text[:2] in ("0x", "0X", "0o", "0O", "0b", "0B"):
            return int(text, 0)
        if "." in text or "e" in text or "E" in text:
            return float(text)
        if len(text) > 1 and text[0] == "0" and text.strip("0"):
            self.fail("leading zeros are not allowed in decimal integer literals", tok,
                      "write an octal number as 0o17")
        return int(text)

    def string(self, t):
        parts = []
        for tok in t.children:
            text = tok.value
            prefix = text[: len(text) - len(text.lstrip("rRbBfFuU"))].lower()
            if "f" in prefix:
                self.fail("f-strings are not supported in kernels", tok,
                          'use asc.printf with arguments: asc.printf("x = %d\\n", x)')
            if "b" in prefix:
                self.fail("bytes literals are not supported in kernels", tok)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    parts.append(pyast.literal_eval(text) if "\\" in text or prefix
                                 else text[3:-3] if text[:3] in ('"""', "'''") else text[1:-1])
            except (SyntaxError, ValueError):
                self.fail("invalid string literal", tok)
        return A.Constant(self.loc(t), "".join(parts))

    def const(value):
        return lambda self, t: A.Constant(self.loc(t), value)

    def exprs(self, children) -> tuple:
        return tuple(self.expr(c) for c in children if c is not None)

    def tuple_(self, t):
        return A.Tuple(self.loc(t), self.exprs(t.children))

    def list_(self, t):
        return A.List(self.loc(t), self.exprs(t.children))

    def getattr_(self, t):
        value, name = t.children
        return A.Attribute(self.loc(t), self.expr(value), name.value)

    def call(self, t):
        func, arguments = t.children
        args, keywords, names = [], [], set()
        for a in arguments.children if arguments is not None else ():
            if isinstance(a, str) or a.data not in ("kwarg", "star_arg", "kwstar_arg",
                                                     "genexp_arg", "walrus"):
                if keywords:
                    raise KernelSyntaxError("positional argument follows keyword argument",
                                            self.loc(a))
                args.append(self.expr(a))
            elif a.data == "kwarg":
                name, value = a.children
                if name in names:
                    self.fail(f"keyword argument '{name}' repeated", a)
                names.add(str(name))
                keywords.append(A.Keyword(self.loc(a), name.value, self.expr(value)))
            else:
                self.unsupported(a)
        return A.Call(self.loc(t), self.expr(func), tuple(args), tuple(keywords))

    def getitem(self, t):
        value, index = t.children
        return A.Subscript(self.loc(t), self.expr(value), self.expr(index))

    def slice_(self, t):
        lower, upper, step = t.children
        if step is not None:
            step = step.children[0]
        return A.Slice(self.loc(t), self.opt(lower), self.opt(upper), self.opt(step))

    def ifexp(self, t):
        body, test, orelse = t.children
        return A.IfExp(self.loc(t), self.expr(test), self.expr(body), self.expr(orelse))

    def outer(self, item) -> SourceLoc:
        """Location of an operand including any parentheses lark inlined around it."""
        if isinstance(item, str):
            return self.loc(item)
        m = item.meta
        return SourceLoc(self.file, getattr(m, "container_line", m.line) + self.dl,
                         getattr(m, "container_column", m.column) + self.dc,
                         getattr(m, "container_end_line", m.end_line) + self.dl,
                         getattr(m, "container_end_column", m.end_column) + self.dc)

    def flat(self, t):
        """Apply Python's operator precedence to a flat operand/operator sequence."""
        node, _, _ = self.climb(t.children, 0, 0)
        return node

    def climb(self, items, pos: int, min_prec: int, after_not: bool = False):
        """Precedence climbing from ``items[pos]``; returns (node, next pos, outer loc)."""
        item = items[pos]
        if isinstance(item, str) and item.type == "NOT":
            if min_prec > _NOT_PREC and not after_not:
                self.fail("`not` cannot follow this operator without parentheses", item,
                          "write `a == (not b)`")
            operand, pos, end = self.climb(items, pos + 1, _CMP_PREC, True)
            outer = self.span(self.loc(item), end)
            left = A.UnaryOp(outer, "not", operand)
        else:
            left, outer = self.expr(item), self.outer(item)
            pos += 1
        n = len(items)
        while pos < n:
            op = _op(items[pos])
            prec = _PREC[op]
            if prec < min_prec:
                break
            if prec == _CMP_PREC:
                ops, comparators = [], []
                while pos < n and _PREC[_op(items[pos])] == _CMP_PREC:
                    ops.append(_op(items[pos]))
                    right, pos, end = self.climb(items, pos + 1, _CMP_PREC + 1)
                    comparators.append(right)
                outer = self.span(outer, end)
                left = A.Compare(outer, left, tuple(ops), tuple(comparators))
            elif prec <= _AND_PREC:
                values = [left]
                while pos < n and items[pos].value == op:
                    right, pos, end = self.climb(items, pos + 1, prec + 1)
                    values.append(right)
                outer = self.span(outer, end)
                left = A.BoolOp(outer, op, tuple(values))
            else:
                right, pos, end = self.climb(items, pos + 1, prec + 1)
                outer = self.span(outer, end)
                left = A.BinOp(outer, op, left, right)
        return left, pos, outer

    def factor(self, t):
        op, operand = t.children
        return A.UnaryOp(self.loc(t), op.value, self.expr(operand))

    def power(self, t):
        base, exponent = t.children
        return A.BinOp(self.loc(t), "**", self.expr(base), self.expr(exponent))

    EXPR = {
        "string": string, "const_true": const(True), "const_false": const(False),
        "const_none": const(None), "tuple": tuple_, "list": list_, "getattr": getattr_,
        "call": call, "getitem": getitem, "slice": slice_, "ifexp": ifexp, "flat": flat,
        "test": flat, "factor": factor, "power": power,
    }
    del simple, jump, const


def _describe(e) -> str:
    """Words for an expression that cannot be assigned to."""
    return {A.Call: "a function call", A.Constant: "a literal", A.BinOp: "an expression",
            A.UnaryOp: "an expression", A.BoolOp: "an expression", A.Compare: "a comparison",
            A.IfExp: "a conditional expression"}.get(type(e), "this expression")
