"""The fast front end (``lalr.FastParser`` over tables exported from lark) builds exactly the
tree lark builds, for every function in the samples, the benchmarks and the tests; it parses in
a new process without importing lark; and text it rejects still gets lark's error message."""
import ast as pyast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ascendc_py.compiler.frontend import KernelSource, lalr, parse, parse_function
from ascendc_py.compiler.errors import KernelSyntaxError

REPO = Path(__file__).resolve().parents[2]
META = ("line", "column", "end_line", "end_column", "start_pos", "end_pos", "empty",
        "container_line", "container_column", "container_end_line", "container_end_column",
        "container_start_pos", "container_end_pos")
TOKEN = ("type", "value", "line", "column", "end_line", "end_column", "start_pos", "end_pos")


def _functions():
    """Dedented source of every function (methods and nested ones too) in the repository's
    samples, benchmarks and tests."""
    out = []
    for folder in ("samples", "benchmarks", "tests"):
        for path in sorted((REPO / folder).rglob("*.py")):
            text = path.read_text()
            try:
                tree = pyast.parse(text)
            except SyntaxError:
                continue
            for node in pyast.walk(tree):
                if isinstance(node, (pyast.FunctionDef, pyast.AsyncFunctionDef)):
                    seg = pyast.get_source_segment(text, node, padded=True)
                    if seg:
                        first = node.decorator_list[0].lineno if node.decorator_list else \
                            node.lineno
                        lines = text.splitlines()[first - 1:node.end_lineno]
                        out.append((f"{path.relative_to(REPO)}:{first}",
                                    textwrap.dedent("\n".join(lines)) + "\n"))
    return out


def _same(a, b, where="") -> None:
    """Assert that lark's tree ``a`` and the fast parser's tree ``b`` are identical."""
    if a is None or b is None:
        assert a is b, where
        return
    if isinstance(a, str):
        assert isinstance(b, lalr.Token) and str(a) == str(b), where
        for attr in TOKEN:
            assert getattr(a, attr) == getattr(b, attr), (where, attr)
        return
    assert isinstance(b, lalr.Tree) and a.data == b.data, (where, a.data, b)
    for attr in META:
        assert getattr(a.meta, attr, "-") == getattr(b.meta, attr, "-"), (where, a.data, attr)
    assert len(a.children) == len(b.children), (where, a.data)
    for i, (x, y) in enumerate(zip(a.children, b.children)):
        _same(x, y, f"{where}/{a.data}[{i}]")


def test_fast_parser_builds_the_tree_lark_builds():
    from lark.exceptions import LarkError
    lark_parser, fast = parse.get_parser(), parse.get_fast_parser()
    assert fast is not None
    functions = _functions()
    assert len(functions) > 500
    parsed = 0
    for where, text in functions:
        try:
            expected = lark_parser.parse(text)
        except (LarkError, parse._LexError):
            with pytest.raises((lalr.ParseFailed, parse._LexError)):
                fast.parse(text)
            continue
        _same(expected, fast.parse(text), where)
        parsed += 1
    assert parsed > 500


def test_rejected_text_gets_the_lark_error_message():
    with pytest.raises(KernelSyntaxError) as err:
        parse_function(KernelSource.from_text("def f(a):\n    x = a b\n"))
    assert "unexpected name `b`" in err.value.message and "an operator" in err.value.message


def _run(code: str, cache: Path) -> str:
    env = dict(os.environ, ASCENDC_PY_CACHE_DIR=str(cache), PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_a_new_process_parses_from_the_cached_tables_without_lark(tmp_path):
    code = textwrap.dedent('''\
        import sys
        from ascendc_py.compiler.frontend import KernelSource, parse_function
        fd = parse_function(KernelSource.from_text("def f(a):\\n    return a + 1\\n"))
        print(fd.body[0].value.op, 'lark' in sys.modules)
        ''')
    assert _run(code, tmp_path).split() == ["+", "True"]       # builds and caches the tables
    assert len(list(tmp_path.glob("lark_tables_*.fast"))) == 1
    assert _run(code, tmp_path).split() == ["+", "False"]


def test_corrupt_tables_are_rebuilt(tmp_path):
    code = ("from ascendc_py.compiler.frontend import KernelSource, parse_function\n"
            "print(parse_function(KernelSource.from_text('def f(a):\\n    return a\\n')).name)")
    assert _run(code, tmp_path).strip() == "f"
    (path,) = tmp_path.glob("lark_tables_*.fast")
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    assert _run(code, tmp_path).strip() == "f"
    assert path.read_bytes() != bytes(data)
