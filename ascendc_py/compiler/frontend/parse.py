"""Kernel source text → ``ast.FunctionDef``: lark's LALR parser, then a walk over its tree.

The parser is built once per process, on first use (lark is imported only then), and its LALR
tables are cached under ``cache_dir()`` so that a new process loads them instead of rebuilding.
Tokens come from ``KernelLexer`` (one regex, Python's indentation and bracket rules); binary
operators arrive as flat operand/operator lists, to which ``_Builder.climb`` applies Python's
precedence (a short LALR reduction chain per operand is what makes parsing fast).
Every node gets an absolute ``SourceLoc`` (``KernelSource.first_line``/``col_offset`` applied).
Constructs outside the kernel language are parsed by the grammar and rejected here with a
``KernelSyntaxError`` that names them; lark's own syntax errors are translated into messages
that say what was found and what was expected, and name the common slips (missing ':',
C-style ``for``, ``++``, ``&&``, ``!x``, unbalanced brackets, bad indentation).
"""
from __future__ import annotations

import ast as pyast
import hashlib
import keyword
import re
import sys
import os
import threading
import warnings
from pathlib import Path

from .. import ast as A
from ..cachedir import cache_dir, is_regular_or_missing
from ..errors import (AssignmentTargetError, KernelSyntaxError, SourceLoc,
                      UnsupportedConstructError)
from .source import KernelSource

GRAMMAR_PATH = Path(__file__).with_name("grammar.lark")

_lock = threading.Lock()       # guards the parser and _lex_state


def _new_lock_after_fork() -> None:
    """A lock another thread held when the process forked stays held in the child: replace it."""
    global _lock
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_lock_after_fork)
_parser = None
_terminal_text: dict[str, str] = {}
_lex_state: dict[str, list] = {"brackets": []}

# ----------------------------------------------------------------------------- lexer
_OPENERS = {"LPAR": ")", "LSQB": "]", "LBRACE": "}"}
_CLOSERS = {"RPAR", "RSQB", "RBRACE"}


class _LexError(Exception):
    """A lexer error at ``pos`` = (line, col, end_line, end_col) in ``src.text``; ``{line}`` in
    the message stands for ``ref_line`` in file coordinates. No message: a bad character."""

    def __init__(self, message: str, pos: tuple, hint: str = "", ref_line: int = 0):
        super().__init__(message)
        self.message, self.pos, self.hint, self.ref_line = message, pos, hint, ref_line


def _tok_pos(tok) -> tuple[int, int, int, int]:
    return tok.line, tok.column, tok.end_line, tok.end_column


def _make_lexer_class():
    """Create KernelLexer, a lark ``Lexer`` (lark is imported here, not at module import)."""
    from lark.lexer import Lexer, Token

    class KernelLexer(Lexer):
        """One-regex tokenizer for grammar.lark, with Python's indentation and bracket rules.

        Emits _INDENT/_DEDENT, drops newlines inside brackets and checks bracket pairs.
        Indentation strings are compared as strings, so mixing tabs and spaces inconsistently
        is an error (as Python's TabError). About twice as fast as lark's own lexer.
        """

        def __init__(self, conf):
            terms = sorted(conf.terminals, key=lambda t: (-t.priority, -t.pattern.max_width,
                                                          -len(t.pattern.value), t.name))
            self.keywords = {t.pattern.value: t.name for t in terms if t.pattern.type == "str"
                             and t.pattern.value.isidentifier()}
            skip = "|".join(t.pattern.to_regexp() for t in terms if t.name in conf.ignore)
            groups = "|".join(f"(?P<{t.name}>{t.pattern.to_regexp()})" for t in terms
                              if t.name not in conf.ignore and t.pattern.value not in self.keywords)
            self.skip = re.compile(f"(?:{skip})*")
            self.master = re.compile(f"(?:{skip})*(?:{groups})")

        def lex(self, text):
            """Yield lark Tokens for ``text`` (lark's custom-lexer interface)."""
            match, keywords = self.master.match, self.keywords
            brackets: list = []
            _lex_state["brackets"] = brackets       # read by the error messages after a failure
            levels = [""]
            pos, line, line_start, size = 0, 1, 0, len(text)
            tok = None
            while pos < size:
                m = match(text, pos)
                if m is None:
                    start = self.skip.match(text, pos).end()
                    if start >= size:
                        break
                    line += text.count("\n", pos, start)
                    col = start - (text.rfind("\n", 0, start) + 1) + 1
                    raise _LexError("", (line, col, line, col + 1))
                kind = m.lastgroup
                start, end = m.span(kind)
                if start != pos and text.count("\n", pos, start):     # backslash continuation
                    line += text.count("\n", pos, start)
                    line_start = text.rfind("\n", pos, start) + 1
                value = m.group(kind)
                first_line, col = line, start - line_start + 1
                if "\n" in value:
                    line += value.count("\n")
                    line_start = start + value.rfind("\n") + 1
                pos = end
                if kind == "NAME":
                    kind = keywords.get(value, "NAME")
                tok = Token(kind, value, start, first_line, col, line, end - line_start + 1, end)
                if kind == "_NEWLINE":
                    if brackets or "\n" not in value:
                        continue
                    yield tok
                    indent = value.rsplit("\n", 1)[1].rsplit("\f", 1)[-1]
                    if indent == levels[-1]:
                        continue
                    where = (line, 1, line, len(indent) + 1)
                    if indent.startswith(levels[-1]):
                        levels.append(indent)
                        yield Token.new_borrow_pos("_INDENT", indent, tok)
                    elif indent in levels:
                        while levels[-1] != indent:
                            levels.pop()
                            yield Token.new_borrow_pos("_DEDENT", indent, tok)
                    elif "\t" in indent or any("\t" in lv for lv in levels):
                        raise _LexError("inconsistent use of tabs and spaces in indentation",
                                        where, "indent with spaces only (4 per level)")
                    else:
                        raise _LexError("unindent does not match any outer indentation level",
                                        where, "line this statement up with the block it ends")
                    continue
                if kind in _OPENERS:
                    brackets.append(tok)
                elif kind in _CLOSERS:
                    if not brackets:
                        raise _LexError(f"unmatched '{value}'", _tok_pos(tok),
                                        "remove it, or add the opening bracket it closes")
                    opener = brackets.pop()
                    if _OPENERS[opener.type] != value:
                        raise _LexError(f"closing '{value}' does not match opening "
                                        f"'{opener.value}' on line {{line}}", _tok_pos(tok),
                                        ref_line=opener.line)
                yield tok
            if brackets:
                opener = brackets[-1]
                raise _LexError(f"'{opener.value}' was never closed", _tok_pos(opener),
                                f"add the matching '{_OPENERS[opener.type]}'")
            while len(levels) > 1:
                levels.pop()
                yield Token.new_borrow_pos("_DEDENT", "", tok)

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


def parse_function(src: KernelSource) -> A.FunctionDef:
    """Parse the source of one kernel function into an ``ast.FunctionDef``.

    ``src.text`` must hold exactly one top-level ``def`` (decorators allowed). Raises
    ``KernelSyntaxError`` (with an absolute file location) for invalid syntax and for Python
    constructs outside the kernel language.
    """
    from lark.exceptions import LarkError, UnexpectedToken
    parser = get_parser()
    text = src.text if src.text.endswith("\n") else src.text + "\n"
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
        decorators = ()
        if first.data == "decorated":
            decorators = tuple(self.expr(d.children[0]) for d in first.children[:-1])
        return self.funcdef(target, decorators)

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
        return A.ExprStmt(self.loc(t), self.expr(t.children[0]))

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


# ----------------------------------------------------------------------------- syntax errors
_BLOCK_WORDS = {"if", "elif", "else", "for", "while", "def", "class", "with", "try", "except",
                "finally", "async"}
_EXPR_START = {"(", "[", "{", "-", "+", "~", "not", "lambda", "await", "True", "False", "None",
               "*", "**", "yield", "..."}
_OPERATORS = {"+", "-", "*", "/", "//", "%", "**", "<<", ">>", "&", "|", "^", "@", "<", ">", "==",
              "!=", "<=", ">=", "in", "not in", "is", "is not", "and", "or", "if", ".", "(", "["}
_NAMED_TERMINALS = {"NAME": "a name", "NUMBER": "a number", "STRING": "a string",
                    "_NEWLINE": "the end of the line", "_INDENT": "an indented block",
                    "_DEDENT": "the end of the block", "$END": "the end of the source",
                    "AUGOP": "an operator such as '+='", "ELLIPSIS": "'...'"}


def _error_at(src: KernelSource, pos, message: str, hint: str = "") -> KernelSyntaxError:
    """A KernelSyntaxError at a position (line, col, end_line, end_col) relative to src.text."""
    line, col, end_line, end_col = pos
    dl = src.first_line - 1
    loc = SourceLoc(src.file, line + dl, col + src.col_offset, end_line + dl,
                    end_col + src.col_offset)
    return KernelSyntaxError(message, loc, hint=hint)


def _code_only(line: str) -> str:
    """The line with string literals and the comment removed (a rough cut for heuristics)."""
    line = re.sub(r"'[^']*'|\"[^\"]*\"", "''", line)
    return line.split("#", 1)[0]


def _header_line(lines: list[str], before: int) -> int:
    """The 1-based number of the nearest line before ``before`` ending in ':'."""
    for n in range(before - 1, 0, -1):
        if _code_only(lines[n - 1]).rstrip().endswith(":"):
            return n
    return 0


def _first_word(line: str) -> str:
    m = re.match(r"\s*(\w+)", line)
    return m.group(1) if m else ""


def _words(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def _expected_words(expected) -> str:
    names = set(expected)
    text = {**_terminal_text, "NOT_IN": "not in", "IS_NOT": "is not"}
    words = []
    if "NAME" in names and "NUMBER" in names:
        words.append("an expression")
        names = {n for n in names if n not in ("NAME", "NUMBER", "STRING", "ELLIPSIS")
                 and text.get(n) not in _EXPR_START}
    ops = {n for n in names if text.get(n) in _OPERATORS}
    if len(ops) >= 4:
        words.append("an operator")
        names -= ops
    rest = sorted(_NAMED_TERMINALS.get(n) or f"'{text.get(n, n)}'" for n in names)
    words += rest[:8]
    return _words(words) if words else ""


def _found_words(tok) -> str:
    kind = tok.type
    if kind in ("$END", "_NEWLINE", "_DEDENT", "_INDENT"):
        return _NAMED_TERMINALS[kind].replace("the ", "", 1)
    if kind in ("NAME", "NUMBER"):
        return f"{kind.lower()} `{tok.value}`"
    if kind == "STRING":
        return "string"
    value = " ".join(tok.value.split())
    return f"keyword `{value}`" if value.replace(" ", "").isalpha() else f"'{value}'"


def _slip(code: str) -> tuple[str, str] | None:
    """Name a common non-Python habit on the failing line, if there is one."""
    if re.match(r"\s*for\s*\(", code) and ";" in code:
        return ("C-style `for (init; condition; step)` loops are not Python",
                "write `for i in range(start, stop, step):`")
    for op, word in (("&&", "and"), ("||", "or")):
        if op in code:
            return f"`{op}` is not a Python operator", f"use `{word}`"
    m = re.search(r"\+\+|--", code)
    if m:
        sign = m.group()[0]
        return (f"`{m.group()}` is not a Python operator", f"write `i {sign}= 1`")
    return None


def _lex_error(e: _LexError, src: KernelSource, text: str) -> KernelSyntaxError:
    """Translate the lexer's error (a bad character, indentation or bracket)."""
    if e.message:
        message = e.message.format(line=e.ref_line + src.first_line - 1)
        return _error_at(src, e.pos, message, e.hint)
    lines = text.splitlines()
    line, col = e.pos[:2]
    code = lines[line - 1] if 0 < line <= len(lines) else ""
    char = code[col - 1: col]
    slip = _slip(_code_only(code))
    if slip:
        return _error_at(src, (line, 1 + len(code) - len(code.lstrip()), line, len(code) + 1),
                         *slip)
    pos = (line, col, line, col + 1)
    if char == "!":
        return _error_at(src, pos, "`!` is not a Python operator",
                         "use `not x` for negation; `!=` compares")
    if char in "\"'":
        return _error_at(src, (line, col, line, len(code) + 1), "unterminated string literal",
                         "close the string with the quote it starts with")
    if char == "?":
        return _error_at(src, pos, "invalid character '?'",
                         "the conditional expression is `a if condition else b`")
    hint = "use straight quotes: ' or \"" if char in "\u201c\u201d\u2018\u2019" else ""
    return _error_at(src, pos, f"invalid character {char!r} (U+{ord(char or ' '):04X})", hint)


def _syntax_error(e, src: KernelSource, text: str, brackets: list) -> KernelSyntaxError:
    """Translate one of lark's UnexpectedInput errors into a KernelSyntaxError."""
    lines = text.splitlines()
    tok = e.token       # KernelLexer raises _LexError, so this is an UnexpectedToken
    kind = tok.type
    try:    # what the parser can really accept here (LALR's `expected` over-approximates)
        expected = set(e.accepts or e.expected or ())
    except Exception:   # pragma: no cover - depends on lark internals
        expected = set(e.expected or ())
    if kind == "$END":
        n = len(lines)
        while n > 1 and not lines[n - 1].strip():
            n -= 1
        pos = (n, len(lines[n - 1]) + 1, n, len(lines[n - 1]) + 2)
    elif kind in ("_INDENT", "_DEDENT"):
        indent = len(tok.value)
        pos = (tok.end_line, indent + 1, tok.end_line, len(lines[tok.end_line - 1]) + 1)
    else:
        pos = _tok_pos(tok)
    line = pos[0]
    code = _code_only(lines[line - 1]) if 0 < line <= len(lines) else ""

    slip = _slip(code)
    if slip and kind != "_INDENT":
        start = 1 + len(code) - len(code.lstrip())
        return _error_at(src, (line, start, line, len(code.rstrip()) + 1), *slip)
    if kind == "_INDENT":
        return _error_at(src, pos, "unexpected indent",
                         "this line is indented more than the block it belongs to")
    if "_INDENT" in expected:
        header = _header_line(lines, line + 1 if kind in ("_NEWLINE", "$END") else line)
        word = _first_word(lines[header - 1]) if header else ""
        what = f"`{word}` statement" if word in _BLOCK_WORDS else "the line ending in ':'"
        where = f" on line {header + src.first_line - 1}" if header else ""
        return _error_at(src, pos, f"expected an indented block after {what}{where}",
                         "indent the body (4 spaces), or write `pass` for an empty body")
    colon = next((n for n in expected if _terminal_text.get(n) == ":"), None)
    if colon and kind == "_NEWLINE":
        word = _first_word(lines[line - 1])
        what = f" at the end of the `{word}` line" if word in _BLOCK_WORDS else ""
        return _error_at(src, pos, f"expected ':'{what}",
                         "a block header such as `if x:` ends with a colon")
    if colon and tok.value == "{":
        return _error_at(src, pos, "expected ':'",
                         "Python blocks start with ':' and an indented body, not '{ }'")
    word = _first_word(code)
    if tok.value == "=" and word in ("if", "elif", "while"):
        return _error_at(src, pos, "invalid syntax: '=' assigns", "use '==' to compare")
    if keyword.iskeyword(word) and tok.value.endswith("=") \
            and re.match(rf"\s*{word}\s*{re.escape(tok.value)}", code):
        return _error_at(src, pos, f"`{word}` is a Python keyword and cannot be used as a name",
                         f"rename it, e.g. `{word}_`")
    if brackets and kind not in ("$END",) and line > brackets[-1].line:
        opener = brackets[-1]
        opener_code = lines[opener.line - 1]
        first = lines[line - 1]
        starts_line = first[: tok.column - 1].strip() == ""
        indent_of = (lambda s: len(s) - len(s.lstrip()))
        if starts_line and indent_of(first) <= indent_of(opener_code):
            return _error_at(src, _tok_pos(opener), f"'{opener.value}' was never closed",
                             f"add the matching '{_OPENERS[opener.type]}'")
    message = f"invalid syntax: unexpected {_found_words(tok)}"
    wanted = _expected_words(expected)
    if wanted:
        message += f"; expected {wanted}"
    hint = ""
    if brackets and kind in ("NAME", "NUMBER", "STRING") and "COMMA" in expected:
        hint = "did you forget a comma?"
    return _error_at(src, pos, message, hint)
