"""Finding a kernel's source in Jupyter/IPython cells that run under a cell magic.

IPython registers every cell it runs in ``linecache`` under the cell's name, so a kernel defined
in a plain cell is found like one in a file. A cell magic compiles the cell's *body* itself,
under a name nothing registers: ``%%time`` as ``'<timed exec>'``, ``%%timeit`` as
``'<magic-timeit>'`` (inside a function ``inner``), ``%%prun`` as ``'<string>'``; ``%%capture``
runs its body as a new cell. For such a function :func:`find_cell_source` searches the text of
the cells: the ones being run (IPython's ``run_cell_async`` frames on the stack) first, then the
session's input history, newest first. From each raw cell it takes the cell itself and the body
under each leading ``%%magic`` line, applies IPython's input transformations as the magic did,
and accepts a candidate only when its text compiles to the function's code object
(:func:`~.code_match.source_matches_code`): a text that does not is never taken. The cell is
registered in ``linecache`` under a name of its own, with its raw lines, so error excerpts show
the lines the user typed and the error names ``Cell In[N], line L`` counting the magic lines.
"""
from __future__ import annotations

import hashlib
import inspect
import linecache
import os
import sys

from ..errors import register_cell_name
from .code_match import defines_at_first_line, source_matches_code

def ipython_shell():
    """The running IPython shell, or None (IPython is never imported here)."""
    if "IPython" not in sys.modules:
        return None
    try:
        from IPython import get_ipython
        return get_ipython()
    except Exception:  # noqa: BLE001 - a broken IPython is no IPython
        return None


def is_unregistered_name(filename: str) -> bool:
    """True for a code object's file name that names no file and no ``linecache`` entry (the
    ``'<timed exec>'`` of a cell magic, ``'<string>'``): its text must be searched for."""
    return not os.path.isfile(filename) and not linecache.getlines(filename)


def find_cell_source(fn, code):
    """``(lines, file, first_line)`` of the definition of ``fn`` (code object ``code``) in a
    cell of the running IPython session, or None when no cell's text compiles to ``code``.

    ``lines``: the definition's lines, decorators included, as the magic compiled them;
    ``file``: the ``linecache`` name the cell was registered under; ``first_line``: the line of
    the first of ``lines`` in the cell as the user sees it (magic lines counted)."""
    shell = ipython_shell()
    if shell is None or code is None:
        return None
    qualname = getattr(fn, "__qualname__", code.co_name)
    needle = f"def {code.co_name}"
    for number, raw in _cells(shell):
        if needle not in raw:
            continue
        for offset, body in _bodies(raw):
            found = _match(shell, body, code, qualname)
            if found is None:
                continue
            lines, transformed = found
            line = _line_in_body(body, lines, code.co_firstlineno)
            if line is None:
                # the transformation changed the definition's lines: show the body it compiled
                return lines, _register(transformed, number), code.co_firstlineno
            return lines, _register(raw, number), offset + line
    return None


def _line_in_body(body: str, lines: list[str], first_line: int) -> int | None:
    """The line of ``body`` where the definition ``lines`` (found at ``first_line`` of the body
    as IPython transformed it, which drops leading blank lines) starts, or None."""
    body_lines = body.splitlines()
    blank = 0
    while blank < len(body_lines) and not body_lines[blank].strip():
        blank += 1
    want = [line.rstrip("\r\n") for line in lines]
    for skip in dict.fromkeys((0, blank)):
        start = first_line - 1 + skip
        if body_lines[start:start + len(lines)] == want:
            return start + 1
    return None


def _cells(shell):
    """``(number, raw text)`` of the cells being run (outermost first), then of the session's
    history, newest first; each text once."""
    seen = set()
    running = []
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "run_cell_async":
            local = frame.f_locals
            raw, number = local.get("raw_cell"), local.get("execution_count")
            if isinstance(raw, str):
                running.append((number if isinstance(number, int)
                                else getattr(shell, "execution_count", 0), raw))
        frame = frame.f_back
    outer = ""
    for number, raw in reversed(running):
        if raw in seen or (outer and raw.rstrip("\n") in outer):  # %%capture's body
            continue
        seen.add(raw)
        outer = outer or raw
        yield number, raw
    history = getattr(getattr(shell, "history_manager", None), "input_hist_raw", None) or []
    for index in range(len(history) - 1, 0, -1):
        raw = history[index]
        if isinstance(raw, str) and raw not in seen:
            seen.add(raw)
            yield index, raw


def _bodies(raw: str):
    """``(lines before it, text)``: the cell itself, then the body under each of its leading
    ``%%magic`` lines (``%%capture`` over ``%%time`` gives two)."""
    lines = raw.splitlines(True)
    i = 0
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i < len(lines) and not lines[i].startswith("%%"):
        yield 0, raw
        return
    while i < len(lines) and lines[i].startswith("%%"):
        i += 1
        yield i, "".join(lines[i:])


def _match(shell, body: str, code, qualname: str):
    """``(definition lines, transformed body)`` if ``body``, transformed as IPython does before
    compiling, defines a function whose code is ``code`` at its first line; else None."""
    try:
        text = shell.transform_cell(body)
    except Exception:  # noqa: BLE001 - IPython could not transform it: neither could the magic
        text = body
    lines = text.splitlines(True)
    ln = code.co_firstlineno
    if not 1 <= ln <= len(lines):
        return None
    try:
        block = inspect.getblock(lines[ln - 1:])
    except Exception:  # noqa: BLE001 - tokenize errors: not this text
        return None
    from .source import dedent_source
    dedented, _ = dedent_source(block)
    # the whole text at the function's line (the context of a plain cell), or the definition
    # alone inside its enclosing functions (%%timeit's ``inner``)
    if not (defines_at_first_line(text, code)
            or source_matches_code(dedented, code, qualname, "", None)):
        return None
    return block, text


def _register(text: str, number: int) -> str:
    """Register ``text`` (a cell) in ``linecache`` under a name that error messages show as
    ``Cell In[number]``; return the name."""
    digest = hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]
    name = f"<ipython-cell-{number}-{digest}>"
    linecache.cache[name] = (len(text), None, [line if line.endswith("\n") else line + "\n"
                                               for line in text.splitlines(True)], name)
    register_cell_name(name, f"In[{number}]")
    return name


__all__ = ["find_cell_source", "ipython_shell", "is_unregistered_name"]
