"""Capturing a kernel's source text, with the file coordinates the parser maps back to.

``capture_source(fn)`` reads the function's lines (decorators included) with
``inspect.getsourcelines``, which works for functions defined in files and in Jupyter/IPython
cells (IPython registers each cell in ``linecache``); a function a cell magic compiled
(``%%time``, ``%%timeit``…) is found in the session's cells (``notebook.py``). The text is
dedented by the indentation of its first line, so a function nested in a class or another
function parses like a top-level one; ``first_line`` and ``col_offset`` turn parser positions
back into absolute file positions: ``line = first_line + rel_line - 1`` and
``col = rel_col + col_offset``.
"""
from __future__ import annotations

import functools
import hashlib
import inspect
import linecache
import os
import warnings
from ...fieldwise import FrozenFieldwise, fieldwise_dataclass

from ..errors import KernelSyntaxError, SourceChangedError, SourceLoc
from .code_match import source_matches_code


@fieldwise_dataclass(frozen=True)
class KernelSource(FrozenFieldwise):
    """The source of one kernel function and where it sits in its file.

    ``text``: the dedented source of the function, decorators included, ending in a newline.
    ``file``: the file name as ``inspect`` reports it (a path, or an IPython cell name).
    ``first_line``: the 1-based line in ``file`` of the first line of ``text``.
    ``col_offset``: how many columns the dedent removed from each line.
    ``sha256``: hex digest of ``text`` (part of the compile-cache key).
    """

    text: str
    file: str
    first_line: int
    col_offset: int
    sha256: str

    @classmethod
    def from_text(cls, text: str, file: str = "<kernel>", first_line: int = 1,
                  col_offset: int = 0) -> "KernelSource":
        """Build a KernelSource from already-dedented text (tests, generated kernels)."""
        if text and not text.endswith("\n"):
            text += "\n"
        return cls(text, file, first_line, col_offset, hashlib.sha256(text.encode()).hexdigest())


def dedent_source(lines: list[str]) -> tuple[str, int]:
    """Remove the first line's indentation from every line that starts with it.

    Returns ``(text, removed_columns)``. Lines that do not start with that indentation (blank
    lines, comments, continuation lines of a multi-line string) are left as they are, except
    that whitespace-only lines become empty.
    """
    if not lines:
        return "", 0
    first = lines[0]
    prefix = first[: len(first) - len(first.lstrip(" \t"))]
    n = len(prefix)
    out = []
    for line in lines:
        if line.startswith(prefix):
            out.append(line[n:])
        elif not line.strip():
            out.append("\n" if line.endswith("\n") else "")
        else:
            out.append(line)
    text = "".join(out)
    if not text.endswith("\n"):
        text += "\n"
    return text, n


def capture_source(fn) -> KernelSource:
    """The source of the Python function ``fn`` as a :class:`KernelSource`.

    Raises ``KernelSyntaxError`` if the source cannot be read (a function created by ``exec``
    of a string or typed at the interactive prompt) or if ``fn`` is a lambda, and
    ``SourceChangedError`` if the text found is not the source of the code Python runs (the
    file was edited after the import): compiling it would run code the user is not running.
    """
    name = getattr(fn, "__name__", repr(fn))
    try:
        fn = inspect.unwrap(fn)
    except ValueError:
        pass
    code = getattr(fn, "__code__", None)
    file = code.co_filename if code is not None else "<unknown>"
    loc = SourceLoc(file, code.co_firstlineno if code is not None else 0, 1)
    if name == "<lambda>":
        raise KernelSyntaxError(
            "a lambda cannot be a kernel", loc,
            hint="define the kernel with `def` and decorate it with @asc.kernel")
    try:
        found = _lines_from_file(fn, code)
        if found is not None:
            lines, first_line, file = found
        else:
            lines, first_line = inspect.getsourcelines(fn)
            file = inspect.getsourcefile(fn) or inspect.getfile(fn)
    except (OSError, TypeError):
        found = _from_notebook_cell(fn, code)
        if found is not None:
            return found
        raise KernelSyntaxError(
            f"cannot read the source of kernel '{name}': define it in a file or a notebook cell",
            None,
            hint="functions created with exec() or typed at the interactive prompt have no "
                 "source that ascendc_py can read") from None
    text, col_offset = dedent_source(lines)
    file_text = "".join(linecache.getlines(file))
    if code is not None and not source_matches_code(
            text, code, getattr(fn, "__qualname__", name), file_text,
            getattr(fn, "__globals__", None)):
        found = _from_notebook_cell(fn, code) if not os.path.isfile(file) else None
        if found is not None:
            return found
        raise SourceChangedError(
            f"the source of '{name}' in {file} is not the code Python is running: the file "
            f"changed since it was imported (or '{name}' was compiled from another text)",
            loc, hint="reload the module (importlib.reload), re-run the cell that defines "
                      f"'{name}', or restart the interpreter, so that the code you run and "
                      f"the source ascendc_py compiles are the same")
    return KernelSource(text, file, max(first_line, 1), col_offset,
                        hashlib.sha256(text.encode()).hexdigest())


def _lines_from_file(fn, code):
    """``(lines, first_line, file)`` as ``inspect.getsourcelines`` and ``getsourcefile`` give
    them for a function defined in a source file, found without ``tokenize`` (whose first use
    in a process compiles its regular expressions: ~2 ms of a cold compile, issue 14): the
    file's text (``linecache``, re-read when the file changed on disk, as ``inspect`` does) is
    parsed by ``ast`` once for all the kernels it defines, and the function is the ``def``
    whose first line (its first decorator's) is ``code.co_firstlineno``; its block ends at the
    definition's last line, where ``inspect.getblock`` ends it. None (the caller asks
    ``inspect``) for anything else: no code object, no such file, a text that does not parse,
    no definition starting at that line or several."""
    if code is None or not isinstance(getattr(fn, "__globals__", None), dict):
        return None
    file = code.co_filename
    if not file or (file.startswith("<") and file.endswith(">")) or not os.path.isfile(file):
        return None
    if inspect.getsourcefile(fn) != file:
        return None
    linecache.checkcache(file)
    lines = linecache.getlines(file, fn.__globals__)
    if not lines:
        return None
    span = _definition_spans("".join(lines), file).get(code.co_firstlineno)
    if span is None:
        return None
    first, last = span
    return lines[first - 1:last], first, file


@functools.lru_cache(maxsize=4)
def _definition_spans(text: str, file: str) -> dict:
    """{first line: (first line, last line)} of every function definition in ``text`` whose
    first line no other definition shares (1-based; a decorated definition starts at its
    first decorator); empty if the text does not parse."""
    import ast
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text, file)
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        return {}
    spans: dict = {}
    shared = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            if first in spans:
                shared.add(first)
            spans[first] = (first, node.end_lineno)
    for first in shared:
        del spans[first]
    return spans


def _from_notebook_cell(fn, code) -> KernelSource | None:
    """The source of ``fn`` found in a cell of the running IPython session whose text compiles
    to ``code`` (a cell magic compiled it under a name linecache does not know), or None."""
    from .notebook import find_cell_source
    found = find_cell_source(fn, code)
    if found is None:
        return None
    lines, file, first_line = found
    text, col_offset = dedent_source(lines)
    return KernelSource(text, file, first_line, col_offset,
                        hashlib.sha256(text.encode()).hexdigest())
