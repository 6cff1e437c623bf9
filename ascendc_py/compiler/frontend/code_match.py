"""Does a source text compile to the code object the user is running?

The compiler reads a kernel's source TEXT (from its file, through ``linecache``), while Python
runs the function's CODE OBJECT, made when the module was imported or the cell was run. The two
disagree when the file was edited after the import, or when a function compiled from a string
(``exec(compile(src, "name.py", "exec"))``) names a file that holds something else. Compiling
either silently would run code the user is not running (or cache it under the wrong key), so
``source_matches_code`` recompiles the captured text the way Python compiled the function —
same future flags, inside the same chain of enclosing functions and classes, so closures and
name mangling come out the same — and compares the function's bytecode, constants and names
(recursively through nested code objects). Line numbers and columns are not compared: moving
or re-indenting a function does not change what it does.
"""
from __future__ import annotations

import __future__
import ast
import functools
import math
import warnings

#: the ``co_flags`` bits that are ``from __future__`` compiler flags
_FUTURE_FLAGS = 0
for _name in __future__.all_feature_names:
    _FUTURE_FLAGS |= getattr(__future__, _name).compiler_flag


def source_matches_code(text: str, code, qualname: str, file_text: str = "",
                        module_globals: dict | None = None) -> bool:
    """True when the source ascendc_py would compile is the source of ``code``, the code object
    of the function ``qualname`` (its ``__qualname__``).

    ``file_text`` (the whole file or notebook cell, as ``linecache`` holds it) is compiled the
    way Python compiled it at import and searched for a function of that name with equal code
    (bytecode, constants, names, arguments); compiling the whole file reproduces the context
    that shapes a function's bytecode (which names were bound by imports, future flags).
    ``text`` alone (a dedented definition, decorators included) is the second chance, compiled
    inside the chain of enclosing functions and classes the qualified name gives. Modules
    whose asserts pytest rewrote at import (``module_globals`` has pytest's helpers) are not
    compared: their bytecode is not what their text compiles to."""
    if module_globals is not None and "@py_builtins" in module_globals:
        return True
    flags = code.co_flags & _FUTURE_FLAGS
    if file_text and _defines(_compile(file_text, code.co_filename, flags), code):
        return True
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    if len(tree.body) != 1 or not isinstance(tree.body[0], (ast.FunctionDef,
                                                            ast.AsyncFunctionDef)):
        return False
    tree.body = [_enclose(tree.body[0], code, qualname)]
    ast.fix_missing_locations(tree)
    return _defines(_compile(tree, code.co_filename, flags), code)


def defines_at_first_line(file_text: str, code) -> bool:
    """True when ``file_text``, compiled as Python compiled ``code``'s module, defines at
    ``code.co_firstlineno`` a function whose code equals ``code`` (a stricter test than
    :func:`source_matches_code`'s, for texts that are only candidates, e.g. notebook cells)."""
    module = _compile(file_text, code.co_filename, code.co_flags & _FUTURE_FLAGS)
    return module is not None and any(
        c.co_firstlineno == code.co_firstlineno and _same_code(c, code)
        for c in _code_objects(module, code.co_name))


def _compile(source, filename: str, flags: int):
    """``source`` compiled as Python compiles a module, or None. Python warned about the text
    (SyntaxWarning, DeprecationWarning for invalid escapes) when it compiled the module itself:
    the comparison compiles it again silently, not a second time at the user. A file's text
    is compiled once for all the kernels it defines (the last few texts are remembered)."""
    if isinstance(source, str):
        return _compile_text(source, filename, flags)
    return _compile_now(source, filename, flags)


@functools.lru_cache(maxsize=4)
def _compile_text(source: str, filename: str, flags: int):
    return _compile_now(source, filename, flags)


def _compile_now(source, filename: str, flags: int):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return compile(source, filename, "exec", flags=flags, dont_inherit=True)
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        return None


def _defines(module, code) -> bool:
    """Does compiled ``module`` define a function whose code equals ``code``?"""
    return module is not None and any(_same_code(c, code)
                                      for c in _code_objects(module, code.co_name))


def _enclose(fdef: ast.stmt, code, qualname: str) -> ast.stmt:
    """Wrap ``fdef`` in the functions and classes its qualified name says enclose it; the
    innermost enclosing function binds the free variables the function closes over."""
    parts = qualname.split(".")[:-1]
    node = fdef
    innermost_function = True
    for i in range(len(parts) - 1, -1, -1):
        part = parts[i]
        if part == "<locals>":
            continue
        if i + 1 < len(parts) and parts[i + 1] == "<locals>":   # an enclosing function
            outer = ast.parse(f"def {_identifier(part)}():\n    pass\n").body[0]
            binds = []
            if innermost_function:
                binds = [ast.parse(f"{name} = None").body[0] for name in code.co_freevars
                         if name != "__class__"]
                innermost_function = False
            outer.body = binds + [node]
            node = outer
        else:                                                      # an enclosing class
            outer = ast.parse(f"class {_identifier(part)}:\n    pass\n").body[0]
            outer.body = [node]
            node = outer
    if innermost_function and code.co_freevars:
        # no enclosing function in the qualified name (a function whose __qualname__ was set
        # by hand): bind the free names in a function of our own
        outer = ast.parse("def __asc_enclosing__():\n    pass\n").body[0]
        outer.body = [ast.parse(f"{name} = None").body[0] for name in code.co_freevars
                      if name != "__class__"] + [node]
        node = outer
    return node


def _identifier(name: str) -> str:
    return name if name.isidentifier() else "__asc_scope__"


def _code_objects(code, name: str):
    """Every code object named ``name`` nested (at any depth) in ``code``."""
    for const in code.co_consts:
        if hasattr(const, "co_code"):
            if const.co_name == name:
                yield const
            yield from _code_objects(const, name)


def _same_code(a, b) -> bool:
    if (a.co_code != b.co_code or a.co_names != b.co_names or a.co_varnames != b.co_varnames
            or a.co_freevars != b.co_freevars or a.co_cellvars != b.co_cellvars
            or a.co_argcount != b.co_argcount or a.co_kwonlyargcount != b.co_kwonlyargcount
            or a.co_posonlyargcount != b.co_posonlyargcount
            or len(a.co_consts) != len(b.co_consts)):
        return False
    for x, y in zip(a.co_consts, b.co_consts):
        if hasattr(x, "co_code") or hasattr(y, "co_code"):
            if not (hasattr(x, "co_code") and hasattr(y, "co_code") and _same_code(x, y)):
                return False
        elif not _same_constant(x, y):
            return False
    return True


def _same_constant(x, y) -> bool:
    if type(x) is not type(y):
        return False
    if isinstance(x, float):
        return x == y or (math.isnan(x) and math.isnan(y))
    if isinstance(x, (tuple, frozenset)):
        xs, ys = (sorted(map(repr, x)), sorted(map(repr, y))) if isinstance(x, frozenset) \
            else (x, y)
        return len(xs) == len(ys) and all(_same_constant(p, q) for p, q in zip(xs, ys))
    return x == y


__all__ = ["defines_at_first_line", "source_matches_code"]
