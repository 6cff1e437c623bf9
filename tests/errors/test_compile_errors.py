"""Compile errors: class, message, the exact kernel file:line:col, the source line and a caret
under the offending code, and no lark/LLVM internals or traceback text in the message."""
from __future__ import annotations

import inspect
import re
import textwrap
import warnings

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler.frontend.parse import parse_function
from ascendc_py.compiler.frontend.source import KernelSource
from kernels_for_tests import assert_still_works

FORBIDDEN = ("lark", "llvmlite", "Traceback", "site-packages")


def check_message(err: asc.KernelError, file: str, line: int, marker: str, words,
                  caret_on_marker: bool = True) -> None:
    """The rendered error starts with file:line:col, shows that line of the file and a caret
    line starting at col (under ``marker`` unless told otherwise), and contains ``words``."""
    text = str(err)
    m = re.match(rf"{re.escape(file)}:(\d+):(\d+): ", text)
    assert m, f"message does not start with {file}:line:col:\n{text}"
    assert int(m.group(1)) == line, text
    col = int(m.group(2))
    with open(file) as f:
        file_line = f.read().splitlines()[line - 1]
    lines = text.splitlines()
    assert "    " + file_line.rstrip() in lines, text
    caret = lines[lines.index("    " + file_line.rstrip()) + 1]
    assert set(caret.strip()) == {"^"} and caret.startswith("    "), text
    start, end = caret.index("^") - 4, len(caret.rstrip()) - 4
    assert start == col - 1, text
    if caret_on_marker:
        pos = file_line.index(marker)
        assert start < pos + len(marker) and pos < end, f"caret not under {marker!r}:\n{text}"
    for w in words:
        assert w.lower() in text.lower(), f"{w!r} not in:\n{text}"
    for bad in FORBIDDEN:
        assert bad not in text, f"{bad!r} leaked into:\n{text}"


def line_of(kernel, marker: str) -> int:
    """The absolute line number in this file of the kernel line containing ``marker``
    (lines keep their newline, so a marker ending in \\n matches a line's end)."""
    lines, first = inspect.getsourcelines(kernel.fn)
    hits = [i for i, t in enumerate(lines) if marker in t]
    assert len(hits) == 1, (marker, hits)
    return first + hits[0]


def launch_error(kernel, *args, cls=asc.KernelCompileError):
    with pytest.raises(cls) as info:
        kernel[1](*args)
    with pytest.raises(cls):      # a failed compilation is not cached: it fails again
        kernel[1](*args)
    return info.value


def out32():
    return np.zeros(64, np.float32)


# ----------------------------------------------------------------------------- syntax errors
SYNTAX_CASES = [
    # (source, marker on the failing line, words in the message)
    ("def k(x):\n    y = (x +\n    return y\n", "(x +", ["never closed"]),
    ("def k(x):\n    if x > 0\n        x = 1\n", "if x > 0", ["expected ':'"]),
    ("def k(x):\n    for (i = 0; i < 4; i++):\n        pass\n", "for (i", ["C-style", "range"]),
    ("def k(x):\n    if x > 0 && x < 4:\n        pass\n", "&&", ["and"]),
    ("def k(x):\n    y = x ? 1 : 2\n", "?", ["invalid character", "if"]),
    ("def k(x):\n    y = 1\n      z = 2\n", "z = 2", ["unexpected indent"]),
    ("def k(x):\n    y = [1, 2\n", "[1, 2", ["never closed"]),
]


@pytest.mark.parametrize("text,marker,words", SYNTAX_CASES)
def test_syntax_errors(tmp_path, text, marker, words):
    path = tmp_path / "bad_kernel.py"
    header = "import ascendc_py as asc\n\n\n@asc.kernel\n"
    path.write_text(header + text)
    src = KernelSource.from_text("@asc.kernel\n" + text, str(path), first_line=4)
    with pytest.raises(asc.KernelSyntaxError) as info:
        parse_function(src)
    full = path.read_text().splitlines()
    line = 1 + next(i for i, t in enumerate(full) if marker in t)
    check_message(info.value, str(path), line, marker, words, caret_on_marker=False)


def test_syntax_error_in_an_indented_kernel_keeps_file_columns(tmp_path):
    text = textwrap.indent("def k(x):\n    y = x +* 2\n", "    ")
    path = tmp_path / "nested.py"
    path.write_text("class Holder:\n" + text)
    src = KernelSource.from_text(textwrap.dedent(text), str(path), first_line=2, col_offset=4)
    with pytest.raises(asc.KernelSyntaxError) as info:
        parse_function(src)
    check_message(info.value, str(path), 3, "*", ["syntax"])
    assert f"{path}:3:" in str(info.value)


# ----------------------------------------------------------------------------- unsupported
@asc.kernel
def uses_with(out: asc.GlobalAddress):
    with open("x") as f:
        pass


@asc.kernel
def uses_lambda(out: asc.GlobalAddress):
    f = lambda v: v + 1  # noqa: E731


@asc.kernel
def uses_class(out: asc.GlobalAddress):
    class Local:
        pass


@asc.kernel
def uses_listcomp(out: asc.GlobalAddress):
    values = [i * 2 for i in range(4)]


@asc.kernel
def uses_try(out: asc.GlobalAddress):
    try:
        pass
    except Exception:
        pass


@asc.kernel
def uses_nested_def(out: asc.GlobalAddress):
    def inner():
        pass


@asc.kernel
def uses_dict(out: asc.GlobalAddress):
    d = {"a": 1}


@pytest.mark.parametrize("kernel,marker,words", [
    (uses_with, "with open", ["`with`", "not supported"]),
    (uses_lambda, "lambda v", ["lambda", "not supported"]),
    (uses_class, "class Local", ["class", "not supported"]),
    (uses_listcomp, "for i in range(4)]", ["list comprehension", "for"]),
    (uses_try, "try:", ["`try`", "not supported"]),
    (uses_nested_def, "def inner", ["nested function", "@asc.kernel"]),
    (uses_dict, '{"a"', ["dict", "not supported"]),
], ids=lambda v: getattr(v, "__name__", None))
def test_unsupported_constructs(kernel, marker, words):
    err = launch_error(kernel, out32(), cls=asc.KernelSyntaxError)
    check_message(err, __file__, line_of(kernel, marker), marker, words)


# ----------------------------------------------------------------------------- names
@asc.kernel
def misspelled(out: asc.GlobalAddress, block_length: int):
    og = asc.GlobalTensor()
    og.set_global_buffer(out, block_lenght)


@asc.kernel
def unknown_builtin(out: asc.GlobalAddress):
    asc.get_blok_idx()


@asc.kernel
def unknown_method(out: asc.GlobalAddress):
    og = asc.GlobalTensor()
    og.set_global_buffer(out, 8)
    og.set_valu(0, 1)


def test_unknown_name_with_did_you_mean():
    err = launch_error(misspelled, out32(), 8, cls=asc.KernelNameError)
    check_message(err, __file__, line_of(misspelled, "block_lenght"), "block_lenght",
                  ["block_lenght", "not defined", "did you mean 'block_length'"])


def test_unknown_dsl_builtin():
    err = launch_error(unknown_builtin, out32(), cls=asc.KernelNameError)
    check_message(err, __file__, line_of(unknown_builtin, "get_blok_idx"), "asc.get",
                  ["get_blok_idx"])


def test_unknown_method():
    err = launch_error(unknown_method, out32(), cls=asc.KernelNameError)
    check_message(err, __file__, line_of(unknown_method, "set_valu("), "og.set_valu",
                  ["set_valu"])


# ----------------------------------------------------------------------------- arity and dtypes
@asc.kernel
def op_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress,
              CASE: asc.ConstExpr[str]):
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, 64)
    b = asc.LocalTensor(y.dtype, asc.TPosition.VECIN, 1024, 64)
    c = asc.LocalTensor(z.dtype, asc.TPosition.VECOUT, 2048, 64)
    n = asc.get_block_num() * 64
    if CASE == "missing_count":
        asc.add(c, a, b)
    elif CASE == "too_many":
        asc.exp(c, a, 64, 1, 2, 3, 4)
    elif CASE == "no_args_builtin":
        asc.get_block_idx(3)
    elif CASE == "keyword":
        asc.add(c, a, b, cnt=64)
    elif CASE == "duplicate_keyword":
        asc.sub(c, a, b, 64, count=64)
    elif CASE == "div":
        asc.div(c, a, b, 64)
    elif CASE == "exp":
        asc.exp(c, a, 64)
    elif CASE == "mix":
        asc.add(c, a, b, 64)
    elif CASE == "float_count":
        asc.add(c, a, b, 64.0)
    elif CASE == "gm_operand":
        asc.add(c, x, b, 64)
    elif CASE == "static_range":
        for i in asc.static_range(n):
            pass
    elif CASE == "depth":
        q = asc.TQue(asc.TPosition.VECIN, n)
    elif CASE == "depth_range":
        q = asc.TQue(asc.TPosition.VECIN, 9)
    elif CASE == "gm_to_gm":
        g = asc.GlobalTensor()
        g.set_global_buffer(x, 64)
        asc.data_copy(g, g, 64)
    elif CASE == "numpy_call":
        v = np.sum(n)
    elif CASE == "event_id":
        asc.set_flag(asc.HardEvent.MTE2_V, 8)


F32, F16, I32, I16 = (np.zeros(64, t) for t in (np.float32, np.float16, np.int32, np.int16))

OP_CASES = [
    # case, dtypes (x, y, z), error class, marker, words
    ("missing_count", (F32, F32, F32), asc.KernelTypeError, "asc.add(c, a, b)\n",
     ["asc.add", "missing argument 'count'"]),
    ("too_many", (F32, F32, F32), asc.KernelTypeError, "asc.exp(c, a, 64, 1, 2, 3, 4)",
     ["asc.exp", "at most", "7 were given"]),
    ("no_args_builtin", (F32, F32, F32), asc.KernelTypeError, "get_block_idx(3)",
     ["takes no arguments"]),
    ("keyword", (F32, F32, F32), asc.KernelTypeError, "cnt=64", ["unexpected keyword", "cnt"]),
    ("duplicate_keyword", (F32, F32, F32), asc.KernelTypeError, "count=64)",
     ["multiple values", "count"]),
    ("div", (I32, I32, I32), asc.KernelTypeError, "asc.div(c, a, b, 64)",
     ["asc.div", "int32", "float16, float32"]),
    ("exp", (I16, I16, I16), asc.KernelTypeError, "asc.exp(c, a, 64)\n", ["asc.exp", "int16"]),
    ("mix", (F32, F16, F32), asc.KernelTypeError, "asc.add(c, a, b, 64)\n",
     ["float16", "float32", "one dtype"]),
    ("float_count", (F32, F32, F32), asc.KernelTypeError, "64.0", ["count", "integer"]),
    ("gm_operand", (F32, F32, F32), asc.KernelTypeError, "asc.add(c, x, b, 64)",
     ["LocalTensor", "data_copy"]),
    ("static_range", (F32, F32, F32), asc.KernelValueError, "static_range(n)",
     ["static_range", "compile-time"]),
    ("depth", (F32, F32, F32), asc.KernelValueError, "TPosition.VECIN, n)",
     ["depth", "compile-time"]),
    ("depth_range", (F32, F32, F32), asc.KernelValueError, "VECIN, 9)", ["depth", "1..8"]),
    ("gm_to_gm", (F32, F32, F32), asc.KernelTypeError, "data_copy(g, g, 64)", ["GM to GM"]),
    ("numpy_call", (F32, F32, F32), asc.KernelSyntaxError, "np.sum", ["sum", "not supported"]),
    ("event_id", (F32, F32, F32), asc.KernelValueError, "MTE2_V, 8)", ["event id", "0..7"]),
]


@pytest.mark.parametrize("case,arrays,cls,marker,words", OP_CASES, ids=[c[0] for c in OP_CASES])
def test_op_errors(case, arrays, cls, marker, words):
    err = launch_error(op_kernel, *[a.copy() for a in arrays], case, cls=cls)
    check_message(err, __file__, line_of(op_kernel, marker), marker.strip(), words)


@asc.kernel
def returns_value(out: asc.GlobalAddress):
    return 1


@asc.kernel
def int_var_gets_float(out: asc.GlobalAddress, n: int):
    total = 0
    for i in range(n):
        total = total + 0.5


def test_kernel_cannot_return_a_value():
    err = launch_error(returns_value, out32(), cls=asc.KernelTypeError)
    check_message(err, __file__, line_of(returns_value, "return 1"), "return", ["return"])


def test_integer_variable_cannot_become_float():
    err = launch_error(int_var_gets_float, out32(), 3, cls=asc.KernelTypeError)
    check_message(err, __file__, line_of(int_var_gets_float, "total + 0.5"), "total",
                  ["integer variable", "float"])


COEFFICIENTS = (0.5, 0.25)


@asc.kernel
def tuple_index_out_of_range(out: asc.GlobalAddress):
    g = asc.GlobalTensor()
    g.set_global_buffer(out, 64)
    g.set_value(0, COEFFICIENTS[2])


@asc.kernel
def copy_without_a_data_path(out: asc.GlobalAddress):
    g = asc.GlobalTensor()
    g.set_global_buffer(out, 64)
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.C2PIPE2GM, 1)
    pipe.init_buffer(q, 1, 256)
    t = q.alloc_tensor(asc.float32)
    asc.data_copy(t, g, 64)


def test_module_tuple_index_out_of_range():
    err = launch_error(tuple_index_out_of_range, out32(), cls=asc.ConstantRangeError)
    check_message(err, __file__, line_of(tuple_index_out_of_range, "COEFFICIENTS[2]"),
                  "COEFFICIENTS[2]", ["index 2 is out of range", "tuple of 2 items", "0..1"])


def test_data_copy_between_positions_without_a_data_path():
    err = launch_error(copy_without_a_data_path, out32(), cls=asc.KernelTypeError)
    check_message(err, __file__, line_of(copy_without_a_data_path, "asc.data_copy(t, g"),
                  "asc.data_copy(t, g, 64)", ["no data path", "GM → C2PIPE2GM", "VECIN"])


@asc.kernel
def constant_folding(out: asc.GlobalAddress, case: asc.ConstExpr[int]):
    g = asc.GlobalTensor()
    g.set_global_buffer(out, 64)
    if case == 0:
        g.set_value(0, 2 ** (2 ** 31 - 1) - 1)  # <- pow
    elif case == 1:
        g.set_value(0, 1 << (2 ** 40))  # <- shl
    elif case == 2:
        g.set_value(0, 1e300 ** 2.0)  # <- fpow
    elif case == 3:
        g.set_value(0, (-8.0) ** 0.5)  # <- complex
    else:
        g.set_value(0, 1e300 * 1e300)  # <- inf


@pytest.mark.parametrize("case,marker,words", [
    (0, "# <- pow", ["2 ** 2147483647", "64-bit"]),
    (1, "# <- shl", ["1 << 1099511627776", "64-bit"]),
    (2, "# <- fpow", ["1e+300 ** 2.0", "no finite value"]),
    (3, "# <- complex", ["not a real number"]),
])
def test_constant_folding_that_cannot_be_done(case, marker, words):
    """Folding never computes unbounded integers or leaks Python's errors (it used to take
    minutes and gigabytes for 2 ** (2 ** 31 - 1))."""
    err = launch_error(constant_folding, out32(), case, cls=asc.ConstantRangeError)
    check_message(err, __file__, line_of(constant_folding, marker), "", words,
                  caret_on_marker=False)


def test_float_constant_overflow_is_infinity():
    z = out32()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        constant_folding[1](z, 4)
    assert z[0] == np.inf


def test_process_still_works_after_compile_errors():
    assert_still_works()
