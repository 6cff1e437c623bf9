"""Front end: source capture, parsing into ``compiler.ast``, locations and syntax errors."""
from __future__ import annotations

import ast as pyast
import functools
import importlib.util
import linecache
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import assume, given, settings, strategies as st

from ascendc_py.compiler import ast as A
from ascendc_py.compiler.errors import KernelSyntaxError
from ascendc_py.compiler.frontend import KernelSource, capture_source, parse_function

REPO = Path(__file__).resolve().parents[2]
FIRST_LINE, COL_OFFSET = 100, 4     # every hand-built source pretends to sit here in its file


def parse(text: str, first_line: int = FIRST_LINE, col_offset: int = COL_OFFSET) -> A.FunctionDef:
    return parse_function(KernelSource.from_text(textwrap.dedent(text), "kern.py", first_line,
                                                 col_offset))


def body(text: str) -> tuple:
    """The statements of ``def f():`` followed by the indented ``text``."""
    return parse("def f():\n" + textwrap.indent(textwrap.dedent(text), "    ")).body


def expr(text: str):
    """The value of ``x = <text>`` in a kernel body."""
    (stmt,) = body(f"x = {text}\n")
    return stmt.value


def syntax_error(text: str) -> KernelSyntaxError:
    with pytest.raises(KernelSyntaxError) as info:
        parse(text)
    err = info.value
    for leak in ("lark", "Unexpected", "Traceback", "Token("):
        assert leak not in err.message and leak not in err.hint
    assert err.__cause__ is None and (err.__context__ is None or err.__suppress_context__)
    return err


def at(node, line: int, col: int, end_line: int | None = None, end_col: int | None = None):
    """Assert a node's absolute location; line/col are given relative to the snippet."""
    loc = node.loc
    assert (loc.file, loc.line, loc.col) == ("kern.py", FIRST_LINE + line - 1, col + COL_OFFSET)
    if end_line is not None:
        assert (loc.end_line, loc.end_col) == (FIRST_LINE + end_line - 1, end_col + COL_OFFSET)


# ----------------------------------------------------------------------------- functions
def test_function_header_decorators_params_and_return():
    fd = parse('''\
        @asc.jit(kernel_type=asc.KernelType.VECTOR, )
        @asc.kernel
        def add(x: asc.GlobalAddress, n: int, TILE: asc.ConstExpr[int] = 256) -> None:
            """Docstrings are dropped."""
            pass
        ''')
    assert fd.name == "add"
    at(fd, 3, 1, 5, 9)
    jit, kernel = fd.decorators
    assert isinstance(jit, A.Call) and jit.func.attr == "jit" and jit.args == ()
    (kw,) = jit.keywords
    assert kw.name == "kernel_type" and kw.value.attr == "VECTOR"
    at(jit, 1, 2, 1, 46)
    assert isinstance(kernel, A.Attribute) and kernel.value.id == "asc"
    x, n, tile = fd.params
    assert [p.name for p in fd.params] == ["x", "n", "TILE"]
    assert x.annotation.attr == "GlobalAddress" and x.default is None
    at(x, 3, 9, 3, 29)
    assert n.annotation.id == "int"
    assert isinstance(tile.annotation, A.Subscript) and tile.annotation.index.id == "int"
    assert tile.default.value == 256
    assert isinstance(fd.returns, A.Constant) and fd.returns.value is None
    assert [type(s) for s in fd.body] == [A.Pass]


def test_docstring_only_first_string_dropped():
    stmts = parse('def f():\n    """doc"""\n    "not a docstring"\n').body
    assert len(stmts) == 1 and stmts[0].value.value == "not a docstring"


def test_comments_blank_lines_and_continuations():
    stmts = body('''\
        # leading comment
        x = 1  # trailing comment

            # an oddly indented comment
        y = (1 +
             2)  # inside brackets
        z = x + \\
            y
        a = b = 3; pass;
        ''')
    assert [type(s) for s in stmts] == [A.Assign, A.Assign, A.Assign, A.Assign, A.Pass]
    assert stmts[1].value.op == "+"
    at(stmts[1], 6, 5, 7, 12)
    at(stmts[2].value.right, 9, 9)
    assert [t.id for t in stmts[3].targets] == ["a", "b"]


# ----------------------------------------------------------------------------- statements
def test_assignments():
    a, b, c, d, e = body('''\
        a, b = x, y
        t[i], u.v = (1, 2)
        n: int = 5
        m: float
        s.total //= 3
        ''')
    assert isinstance(a.targets[0], A.Tuple) and [n.id for n in a.value.elts] == ["x", "y"]
    assert isinstance(b.targets[0].elts[0], A.Subscript)
    assert isinstance(b.targets[0].elts[1], A.Attribute)
    assert isinstance(c, A.AnnAssign) and c.annotation.id == "int" and c.value.value == 5
    assert isinstance(d, A.AnnAssign) and d.value is None
    assert isinstance(e, A.AugAssign) and e.op == "//" and e.target.attr == "total"
    at(e, 6, 5, 6, 18)


@pytest.mark.parametrize("op", ["+", "-", "*", "/", "//", "%", "<<", ">>", "&", "|", "^", "**",
                                "@"])
def test_augmented_assignment_ops(op):
    (stmt,) = body(f"x {op}= 2\n")
    assert isinstance(stmt, A.AugAssign) and stmt.op == op and stmt.value.value == 2


def test_if_elif_else_nests():
    (stmt,) = body('''\
        if a:
            x = 1
        elif b:
            x = 2
        elif c:
            pass
        else:
            x = 3
        ''')
    assert isinstance(stmt, A.If) and stmt.test.id == "a"
    at(stmt, 2, 5, 9, 14)
    (elif1,) = stmt.orelse
    assert isinstance(elif1, A.If) and elif1.test.id == "b"
    at(elif1, 4, 5)
    (elif2,) = elif1.orelse
    assert elif2.test.id == "c" and isinstance(elif2.body[0], A.Pass)
    assert isinstance(elif2.orelse[0], A.Assign)


def test_loops_with_else_break_continue():
    f, w = body('''\
        for i, j in pairs(n, step=2,):
            if i: continue
            break
        else:
            pass
        while k < n:
            k += 1
        else:
            return k
        ''')
    assert isinstance(f, A.For) and isinstance(f.target, A.Tuple)
    assert f.iter.func.id == "pairs" and f.iter.keywords[0].name == "step"
    assert isinstance(f.body[0].body[0], A.Continue) and isinstance(f.body[1], A.Break)
    assert isinstance(f.orelse[0], A.Pass)
    assert isinstance(w, A.While) and w.test.ops == ("<",)
    assert isinstance(w.orelse[0], A.Return) and w.orelse[0].value.id == "k"
    at(w.body[0], 8, 9, 8, 15)


def test_return_assert_expression_statement():
    r1, r2, r3, a1, a2, e = body('''\
        return
        return x
        return x, y
        assert n > 0
        assert n > 0, "n must be positive"
        asc.data_copy(dst, src[i * TILE:], TILE)
        ''')
    assert r1.value is None and r2.value.id == "x" and isinstance(r3.value, A.Tuple)
    assert a1.msg is None and a2.msg.value == "n must be positive"
    assert isinstance(e, A.ExprStmt) and isinstance(e.value, A.Call)
    sub = e.value.args[1]
    assert isinstance(sub.index, A.Slice) and sub.index.upper is None
    assert sub.index.lower.op == "*"


# ----------------------------------------------------------------------------- expressions
@pytest.mark.parametrize("text, value", [
    ("0", 0), ("42", 42), ("1_000_000", 1000000), ("0x1F", 31), ("0X_ff", 255), ("0o17", 15),
    ("0b1010", 10), ("1.5", 1.5), ("1e-3", 1e-3), (".5", 0.5), ("1.", 1.0), ("2.5E+2", 250.0),
    ("1_0.2_5", 10.25), ("True", True), ("False", False), ("None", None),
    ("'s'", "s"), ('"d"', "d"), ("'''t'''", "t"), ('"""u"""', "u"), ("'a\\tb'", "a\tb"),
    ("r'\\d'", "\\d"), ("'a' \"b\"", "ab"), ("'it\\'s'", "it's"), ('"x=%d\\n"', "x=%d\n"),
])
def test_literals(text, value):
    node = expr(text)
    assert isinstance(node, A.Constant)
    assert node.value == value and type(node.value) is type(value)


def test_precedence_and_associativity():
    e = expr("a + b * c - d")
    assert e.op == "-" and e.left.op == "+" and e.left.right.op == "*"
    e = expr("a - b - c")
    assert e.left.op == "-" and e.left.left.id == "a"
    e = expr("a ** b ** c")
    assert e.op == "**" and e.right.op == "**"
    e = expr("-a ** b")
    assert isinstance(e, A.UnaryOp) and e.op == "-" and e.operand.op == "**"
    e = expr("a ** -b")
    assert e.op == "**" and e.right.op == "-"
    e = expr("a | b ^ c & d << e + f")
    assert [e.op, e.right.op, e.right.right.op, e.right.right.right.op] == ["|", "^", "&", "<<"]
    e = expr("~a // b % c @ d")
    assert e.op == "@" and e.left.op == "%" and e.left.left.left.op == "~"
    e = expr("not a == b and c or d")
    assert isinstance(e, A.BoolOp) and e.op == "or"
    assert e.values[0].op == "and" and e.values[0].values[0].op == "not"
    assert isinstance(e.values[0].values[0].operand, A.Compare)
    e = expr("a and b and c")
    assert e.op == "and" and len(e.values) == 3
    e = expr("a if b else c if d else e")
    assert isinstance(e, A.IfExp) and e.test.id == "b" and isinstance(e.orelse, A.IfExp)
    e = expr("(a + b) * c")
    assert e.op == "*" and e.left.op == "+"


def test_comparisons():
    e = expr("a < b <= c == d != e > f >= g")
    assert isinstance(e, A.Compare) and e.ops == ("<", "<=", "==", "!=", ">", ">=")
    assert [c.id for c in e.comparators] == list("bcdefg")
    e = expr("a in b not in c is d is not e")
    assert e.ops == ("in", "not in", "is", "is not")
    e = expr("a < b | c")
    assert e.comparators[0].op == "|"


def test_primaries():
    e = expr("asc.TQue(asc.TPosition.VECIN, BUFFER_NUM, depth=2)[0].x")
    assert isinstance(e, A.Attribute) and e.attr == "x"
    call = e.value.value
    assert isinstance(call, A.Call) and call.func.attr == "TQue" and len(call.args) == 2
    assert call.args[0].attr == "VECIN" and call.keywords[0].name == "depth"
    e = expr("t[a:b], t[::2], t[1:], t[i], t[i, j], [1, 2], (), (1,), [x,]")
    sub1, sub2, sub3, sub4, sub5, lst, empty, one, lst1 = e.elts
    assert (sub1.index.lower.id, sub1.index.upper.id, sub1.index.step) == ("a", "b", None)
    assert sub2.index.lower is None and sub2.index.step.value == 2
    assert sub3.index.lower.value == 1 and sub3.index.upper is None
    assert sub4.index.id == "i" and isinstance(sub5.index, A.Tuple)
    assert isinstance(lst, A.List) and len(lst.elts) == 2
    assert isinstance(empty, A.Tuple) and empty.elts == ()
    assert isinstance(one, A.Tuple) and len(one.elts) == 1 and len(lst1.elts) == 1
    e = expr("f(\n    a,\n    b,\n)")
    assert len(e.args) == 2


def test_expression_locations():
    (stmt,) = body("x = foo(a, k=b + 1)[i:j] * -c\n")
    at(stmt, 2, 5, 2, 34)
    mul = stmt.value
    at(mul, 2, 9, 2, 34)
    sub = mul.left
    at(sub, 2, 9, 2, 29)
    call = sub.value
    at(call, 2, 9, 2, 24)
    at(call.keywords[0], 2, 16, 2, 23)
    at(call.keywords[0].value, 2, 18, 2, 23)
    at(sub.index, 2, 25, 2, 28)
    at(mul.right, 2, 32, 2, 34)


# ----------------------------------------------------------------------------- capture_source
MODULE = '''\
def identity(fn):
    return fn


def outer():
    # helper comment
    @identity
    def inner(x: int, n=4):
        """doc"""
        y = x + n
        return y
    return inner


class Holder:
    @staticmethod
    def method(a):
        for i in range(a):
            a += i
'''


@pytest.fixture
def module(tmp_path):
    path = tmp_path / "kernels_mod.py"
    path.write_text(MODULE)
    spec = importlib.util.spec_from_file_location("kernels_mod", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_capture_source_of_nested_function(module):
    src = capture_source(module.outer())
    assert src.file == module.__file__
    assert src.first_line == 7 and src.col_offset == 4
    assert src.text.startswith("@identity\ndef inner(")
    assert len(src.sha256) == 64
    fd = parse_function(src)
    assert fd.loc.line == 8 and fd.loc.col == 5
    assign = fd.body[0]
    assert (assign.loc.line, assign.loc.col) == (10, 9)
    value = assign.value
    assert value.loc.source_line()[value.loc.col - 1: value.loc.end_col - 1] == "x + n"
    assert "^^^^^" in value.loc.excerpt()


def test_capture_source_of_method(module):
    src = capture_source(module.Holder.method)
    assert (src.first_line, src.col_offset) == (16, 4)
    fd = parse_function(src)
    aug = fd.body[0].body[0]
    assert (aug.loc.line, aug.loc.col, aug.loc.end_col) == (19, 13, 19)


def test_capture_source_from_notebook_cell():
    name = "<ipython-input-7-0123456789ab>"
    cell = "import math\n\ndef cell_kernel(a):\n    return a * 2\n"
    linecache.cache[name] = (len(cell), None, cell.splitlines(True), name)
    try:
        ns: dict = {}
        exec(compile(cell, name, "exec"), ns)
        src = capture_source(ns["cell_kernel"])
    finally:
        del linecache.cache[name]
    assert (src.file, src.first_line, src.col_offset) == (name, 3, 0)
    assert parse_function(src).body[0].value.op == "*"


def test_capture_source_unavailable():
    ns: dict = {}
    exec("def made_by_exec(a):\n    return a\n", ns)
    with pytest.raises(KernelSyntaxError, match="cannot read the source of kernel "
                                                "'made_by_exec'"):
        capture_source(ns["made_by_exec"])
    with pytest.raises(KernelSyntaxError, match="lambda"):
        capture_source(lambda a: a)


# ----------------------------------------------------------------------------- rejected constructs
UNSUPPORTED = [
    ("class", "class A:\n    pass\n", 1),
    ("class", "def f():\n    x = 1\n    class A:\n        pass\n", 3),
    ("lambda", "def f():\n    g = lambda x: x\n", 2),
    ("with", "def f():\n    with a as b, c as d:\n        pass\n", 2),  # one item: sema
    ("try", "def f():\n    try:\n        pass\n    except E as e:\n        pass\n", 2),
    ("import", "def f():\n    import numpy as np\n", 2),
    ("import", "def f():\n    from . import x\n", 2),
    ("global", "def f():\n    global X\n", 2),
    ("nonlocal", "def f():\n    nonlocal X\n", 2),
    ("del", "def f():\n    del x\n", 2),
    ("yield", "def f():\n    yield 1\n", 2),
    ("yield", "def f():\n    x = yield\n", 2),
    ("async", "async def f():\n    pass\n", 1),
    ("async", "def f():\n    async for x in y:\n        pass\n", 2),
    ("await", "def f():\n    await g()\n", 2),
    ("nested function", "def f():\n    def g():\n        pass\n", 2),
    ("list comprehension", "def f():\n    x = [i for i in y]\n", 2),
    ("dict comprehension", "def f():\n    x = {i: i for i in y}\n", 2),
    ("set comprehension", "def f():\n    x = {i for i in y if i}\n", 2),
    ("generator expression", "def f():\n    x = sum(i for i in y)\n", 2),
    ("generator expression", "def f():\n    x = (i for i in y)\n", 2),
    ("dict literal", "def f():\n    x = {'a': 1}\n", 2),
    ("dict literal", "def f():\n    x = {}\n", 2),
    ("set literal", "def f():\n    x = {1, 2}\n", 2),
    ("*args", "def f():\n    g(*a)\n", 2),
    ("**kwargs", "def f():\n    g(**k)\n", 2),
    ("*x", "def f():\n    a, *b = c\n", 2),
    ("*args", "def f(*a):\n    pass\n", 1),
    ("**kwargs", "def f(**k):\n    pass\n", 1),
    (":=", "def f():\n    if (n := g()) > 1:\n        pass\n", 2),
    ("raise", "def f():\n    raise ValueError(1)\n", 2),
    ("f-string", "def f():\n    asc.printf(f'{x}')\n", 2),
    ("Ellipsis", "def f():\n    x = ...\n", 2),
    ("Ellipsis", "def f():\n    g(...)\n", 2),
    ("bytes", "def f():\n    x = b'1'\n", 2),
    ("complex", "def f():\n    x = 2j\n", 2),
]


@pytest.mark.parametrize("construct, text, line", UNSUPPORTED,
                         ids=[f"{c}-{i}" for i, (c, _, _) in enumerate(UNSUPPORTED)])
def test_unsupported_construct_is_named(construct, text, line):
    err = syntax_error(text)
    assert construct in err.message and "not supported in kernels" in err.message
    assert err.loc.line == FIRST_LINE + line - 1 and err.loc.file == "kern.py"


@pytest.mark.parametrize("text, words", [
    ("def f():\n    pass\ndef g():\n    pass\n", "exactly one top-level `def`"),
    ("x = 1\n", "single function definition"),
    ("# empty\n", "no function definition"),
])
def test_source_must_be_one_function(text, words):
    assert words in syntax_error(text).message


# ----------------------------------------------------------------------------- syntax slips
SLIPS = [
    # (text, line, words in message, words in hint)
    ("def f(x):\n    if x > 1\n        x = 2\n", 2, "expected ':' at the end of the `if` line", ""),
    ("def f(x):\n    for i in range(x)\n        pass\n", 2, "expected ':'", ""),
    ("def f(x):\n    while x\n        pass\n", 2, "`while` line", ""),
    ("def f(x)\n    return x\n", 1, "`def` line", ""),
    ("def f(n):\n    for (i = 0; i < n; i++) {\n        pass\n    }\n", 2, "C-style", "range"),
    ("def f(n):\n    i = 0\n    i++\n", 3, "`++`", "i += 1"),
    ("def f(n):\n    n--\n", 2, "`--`", "i -= 1"),
    ("def f(a, b):\n    if a && b:\n        pass\n", 2, "`&&`", "and"),
    ("def f(a, b):\n    x = a || b\n", 2, "`||`", "or"),
    ("def f(a):\n    if !a:\n        pass\n", 2, "`!`", "not x"),
    ("def f(a):\n    x = g(a, 1\n    y = 2\n", 2, "'(' was never closed", "')'"),
    ("def f(a):\n    y = 1\n    x = [a, 1\n", 3, "'[' was never closed", "']'"),
    ("def f(a):\n    x = (a + 1))\n", 2, "unmatched ')'", ""),
    ("def f(a):\n    x = [a + 1)\n", 2, "does not match opening '[' on line 101", ""),
    ("def f(a):\n    x = [1, 2\n         3]\n", 3, "unexpected number `3`", "comma"),
    ("def f(a):\n    x = 1\n        y = 2\n", 3, "unexpected indent", ""),
    ("def f(a):\n    if a:\n    x = 1\n", 3, "expected an indented block after `if` statement "
                                            "on line 101", "pass"),
    ("def f(a):\n", 1, "expected an indented block after `def`", ""),
    ("def f(a):\n    if a:\n        x = 1\n      y = 2\n", 4, "unindent does not match", ""),
    ("def f(a):\n    if a:\n\tx = 1\n", 3, "inconsistent use of tabs and spaces", ""),
    ("def f(a):\n    if a = 1:\n        pass\n", 2, "'=' assigns", "'=='"),
    ("def f(a):\n    if a {\n        pass\n    }\n", 2, "expected ':'", "not '{ }'"),
    ("def f(a):\n    x = 'abc\n", 2, "unterminated string", ""),
    ("def f(a):\n    x = a ? 1 : 2\n", 2, "invalid character '?'", "if"),
    ("def f(a):\n    x = a +\n", 2, "expected an expression", ""),
    ("def f(a):\n    g(a,, b)\n", 2, "unexpected ','", ""),
    ("def f(a):\n    for = 3\n", 2, "`for` is a Python keyword", ""),
    ("def f(a):\n    x = a == not a\n", 2, "`not` cannot follow", ""),
    ("def f(a):\n    x = 007\n", 2, "leading zeros", "0o"),
    ("def f(a):\n    break\n", 2, "`break` outside a loop", ""),
    ("def f(a):\n    g(a) = 1\n", 2, "cannot assign to a function call", ""),
    ("def f(a):\n    g(a=1, 2)\n", 2, "positional argument follows keyword argument", ""),
    ("def f(a):\n    g(a=1, a=2)\n", 2, "keyword argument 'a' repeated", ""),
    ("def f(a, a):\n    pass\n", 1, "duplicate parameter 'a'", ""),
    ("def f(a=1, b):\n    pass\n", 1, "without a default follows", ""),
    ("def f(a):\n    x = $a\n", 2, "invalid character '$'", ""),
    ("def f(a):\n    x = 1 +* 2\n", 2, "unexpected '*'", ""),
]


@pytest.mark.parametrize("text, line, words, hint", SLIPS,
                         ids=[f"slip-{i}" for i in range(len(SLIPS))])
def test_syntax_slips(text, line, words, hint):
    err = syntax_error(text)
    assert words in err.message
    assert hint in err.hint
    assert err.loc.line == FIRST_LINE + line - 1
    assert f"kern.py:{err.loc.line}:" in str(err)


def test_syntax_error_points_at_token():
    err = syntax_error("def f(a):\n    x = a b\n")
    assert (err.loc.line, err.loc.col) == (FIRST_LINE + 1, 11 + COL_OFFSET)
    assert "unexpected name `b`" in err.message and "an operator" in err.message


# ----------------------------------------------------------------------------- parser table cache
def _run(code: str, cache: Path) -> str:
    env = dict(os.environ, ASCENDC_PY_CACHE_DIR=str(cache), PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_import_does_not_load_lark(tmp_path):
    code = ("import sys\nimport ascendc_py.compiler.frontend\n"
            "print('lark' in sys.modules)")
    assert _run(code, tmp_path).strip() == "False"


def test_parser_tables_are_cached_across_processes(tmp_path):
    code = textwrap.dedent('''\
        import time
        import lark
        from ascendc_py.compiler.frontend import KernelSource, parse, parse_function
        t0 = time.perf_counter()
        parse.get_parser()
        t1 = time.perf_counter()
        fd = parse_function(KernelSource.from_text("def f(a):\\n    return a + 1\\n"))
        t2 = time.perf_counter()
        print(f"{t1 - t0:.4f} {t2 - t1:.4f} {fd.body[0].value.op}")
        ''')
    first = _run(code, tmp_path).split()
    files = list(tmp_path.glob("lark_tables_*.pickle"))
    assert len(files) == 1 and files[0].stat().st_size > 0
    second = _run(code, tmp_path).split()
    build, load = float(first[0]), float(second[0])
    print(f"\nparser creation: {1e3 * build:.1f} ms without cache, {1e3 * load:.1f} ms with "
          f"cache; first parse {1e3 * float(second[1]):.1f} ms")
    assert second[2] == "+"
    assert load < 0.5


# ----------------------------------------------------------------------------- precedence fuzzing
NAMES = {"a": 7, "b": -3, "c": 12}
BINOPS = ["+", "-", "*", "//", "%", "<<", ">>", "&", "|", "^",
          "<", "<=", ">", ">=", "==", "!=", "and", "or"]


class Skip(Exception):
    """The expression would divide by zero or shift absurdly far."""


def _shift(a, b, left):
    if b < 0 or b > 64:
        raise Skip
    return a << b if left else a >> b


def _div(a, b, floor):
    if b == 0:
        raise Skip
    return a // b if floor else a % b


_BIN = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
        "//": lambda a, b: _div(a, b, True), "%": lambda a, b: _div(a, b, False),
        "<<": lambda a, b: _shift(a, b, True), ">>": lambda a, b: _shift(a, b, False),
        "&": lambda a, b: a & b, "|": lambda a, b: a | b, "^": lambda a, b: a ^ b}
_CMP = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
        ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}


def evaluate(node):
    """A tiny evaluator for our AST over Python ints (Python semantics, incl. chains)."""
    if isinstance(node, A.Constant):
        return node.value
    if isinstance(node, A.Name):
        return NAMES[node.id]
    if isinstance(node, A.UnaryOp):
        v = evaluate(node.operand)
        return {"-": lambda: -v, "+": lambda: +v, "~": lambda: ~v, "not": lambda: not v}[node.op]()
    if isinstance(node, A.BinOp):
        return _BIN[node.op](evaluate(node.left), evaluate(node.right))
    if isinstance(node, A.BoolOp):
        value = evaluate(node.values[0])
        for other in node.values[1:]:
            if (node.op == "and") != bool(value):
                return value
            value = evaluate(other)
        return value
    if isinstance(node, A.Compare):
        left = evaluate(node.left)
        for op, comp in zip(node.ops, node.comparators):
            right = evaluate(comp)
            if not _CMP[op](left, right):
                return False
            left = right
        return True
    raise AssertionError(node)


def _join(parts):
    left, op, right, space = parts
    space = " " if op.isalpha() else space
    return f"{left}{space}{op}{space}{right}"


def _expressions():
    leaves = st.one_of(st.integers(0, 40).map(str), st.sampled_from(sorted(NAMES)),
                       st.sampled_from(["0x1f", "1_0", "0b11"]))

    def extend(inner):
        return st.one_of(
            st.tuples(inner, st.sampled_from(BINOPS), inner, st.sampled_from([" ", ""])).map(_join),
            inner.map(lambda s: f"({s})"),
            inner.map(lambda s: f"-{s}"),
            inner.map(lambda s: f"~{s}"),
            inner.map(lambda s: f"not {s}"),
        )
    return st.recursive(leaves, extend, max_leaves=12)


def _examples(n: int) -> int:
    """n examples normally; more under a bigger hypothesis profile (``make fuzz``)."""
    return max(n, settings().max_examples)


@pytest.mark.fuzz
@settings(max_examples=_examples(300), deadline=None)
@given(_expressions())
def test_expression_precedence_matches_python(text):
    try:
        compile(text, "<expr>", "eval")
        valid = True
    except SyntaxError:
        valid = False
    src = KernelSource.from_text(f"def f():\n    x = {text}\n")
    if not valid:
        with pytest.raises(KernelSyntaxError):
            parse_function(src)
        return
    ours = parse_function(src).body[0].value
    theirs = pyast.parse(text, mode="eval").body
    try:
        value = evaluate(ours)
        python_value = evaluate(_from_python(theirs))
    except Skip:
        assume(False)
    assert value == python_value == eval(text, {}, dict(NAMES))


def _from_python(node):
    """Python's own AST of the same text, mapped onto ours (to evaluate it safely)."""
    loc = None
    ops = {pyast.Add: "+", pyast.Sub: "-", pyast.Mult: "*", pyast.FloorDiv: "//",
           pyast.Mod: "%", pyast.LShift: "<<", pyast.RShift: ">>", pyast.BitAnd: "&",
           pyast.BitOr: "|", pyast.BitXor: "^", pyast.USub: "-", pyast.UAdd: "+",
           pyast.Invert: "~", pyast.Not: "not", pyast.And: "and", pyast.Or: "or",
           pyast.Lt: "<", pyast.LtE: "<=", pyast.Gt: ">", pyast.GtE: ">=", pyast.Eq: "==",
           pyast.NotEq: "!="}
    if isinstance(node, pyast.Constant):
        return A.Constant(loc, node.value)
    if isinstance(node, pyast.Name):
        return A.Name(loc, node.id)
    if isinstance(node, pyast.UnaryOp):
        return A.UnaryOp(loc, ops[type(node.op)], _from_python(node.operand))
    if isinstance(node, pyast.BinOp):
        return A.BinOp(loc, ops[type(node.op)], _from_python(node.left),
                       _from_python(node.right))
    if isinstance(node, pyast.BoolOp):
        return A.BoolOp(loc, ops[type(node.op)], tuple(map(_from_python, node.values)))
    if isinstance(node, pyast.Compare):
        return A.Compare(loc, _from_python(node.left), tuple(ops[type(o)] for o in node.ops),
                         tuple(map(_from_python, node.comparators)))
    raise AssertionError(node)


@pytest.mark.fuzz
@settings(max_examples=_examples(100), deadline=None)
@given(_expressions())
def test_expression_tree_shape_matches_python(text):
    """Same tree as Python's parser, node for node (locations aside)."""
    try:
        theirs = _from_python(pyast.parse(text, mode="eval").body)
    except SyntaxError:
        return
    ours = parse_function(KernelSource.from_text(f"def f():\n    x = {text}\n")).body[0].value
    assert _shape(ours) == _shape(theirs)


def _shape(node):
    if isinstance(node, A.Constant):
        return node.value
    if isinstance(node, A.Name):
        return node.id
    if isinstance(node, A.UnaryOp):
        return (node.op, _shape(node.operand))
    if isinstance(node, A.BinOp):
        return (node.op, _shape(node.left), _shape(node.right))
    if isinstance(node, A.BoolOp):
        return (node.op, *map(_shape, node.values))
    return ("cmp", _shape(node.left), node.ops, *map(_shape, node.comparators))


def test_ellipsis_statement_is_a_placeholder_like_pass():
    """`...` alone on a line (pyasc's tests use it as an empty `with` body) is a no-op."""
    (stmt,) = body("...\n")
    assert type(stmt) is A.Pass and stmt.loc.line == FIRST_LINE + 1
    first, second = body("if x:\n    ...\n...\n")
    assert type(first.body[0]) is A.Pass and type(second) is A.Pass


def test_a_kernel_source_is_found_as_inspect_finds_it():
    """``capture_source`` finds a function's lines in its file without ``tokenize``
    (``source._lines_from_file``, issue 14): the same lines and first line as
    ``inspect.getsourcelines`` for every function of the package, the samples and these
    tests, decorated, nested in classes, one-line or ending in comments."""
    import importlib
    import inspect
    import pkgutil
    import types

    import ascendc_py
    from ascendc_py.compiler.frontend.source import _lines_from_file

    def functions(namespace, depth=0):
        for value in list(vars(namespace).values()):
            if isinstance(value, types.FunctionType):
                yield inspect.unwrap(value)
            elif isinstance(getattr(value, "fn", None), types.FunctionType):
                yield inspect.unwrap(value.fn)
            elif isinstance(value, type) and depth < 2 and \
                    value.__module__ == getattr(namespace, "__name__", None):
                yield from functions(value, depth + 1)

    modules = [importlib.import_module(m.name)
               for m in pkgutil.walk_packages(ascendc_py.__path__, "ascendc_py.")
               if m.name.startswith(("ascendc_py.compiler", "ascendc_py.dsl"))]
    modules.append(sys.modules[__name__])
    found = 0
    for module in modules:
        for fn in functions(module):
            got = _lines_from_file(fn, fn.__code__)
            if got is None:
                continue
            lines, first, file = got
            assert (lines, first) == tuple(inspect.getsourcelines(fn)), fn.__qualname__
            assert file == inspect.getsourcefile(fn)
            found += 1
    assert found > 500


@functools.lru_cache(maxsize=None)
def _decorated(x):  # a comment after the def line
    return (x +
            1)
    # a comment at the end of the body


class _Holder:
    def method(self, x,
               y):
        """A docstring."""
        return x, y


def _one_line(x): return x  # noqa: E704
