"""``asc.cpp.load(path_or_source)``: an Ascend C kernel file as a module of launchable kernels.

``m = asc.cpp.load("add_custom.cpp")`` (or the text itself) parses and lowers every
``__global__`` function of the file; ``m.add_custom[8](x, y, z)`` launches one like a Python
kernel (same specialisation, compile cache, Report, trace, sanitizer). Errors name the .cpp
file's line and column with a caret.
"""
from __future__ import annotations

import hashlib
import linecache
import os
import pathlib

from ..compiler.errors import (InternalCompilerError, KernelError, KernelSyntaxError,
                               SourceLoc, user_boundary)
from ..dsl.kernel import Kernel
from ..dsl.launcher import CompiledTable

_FRONTEND_FILES = ("lexer.py", "grammar_cpp.lark", "parse.py", "unit.py", "lower.py",
                   "lower_expr.py", "inline.py", "entry.py", "loops.py", "tiling.py",
                   "matmul.py", "ctypes_c.py", "names.py", "sema_hooks.py", "binding.py", "specials.py")
_frontend_hash = None


def frontend_hash() -> str:
    """SHA-256 of the C++ front end's sources (part of every C++ kernel's cache key)."""
    global _frontend_hash
    if _frontend_hash is None:
        h = hashlib.sha256()
        here = pathlib.Path(__file__).parent
        for f in _FRONTEND_FILES:
            p = here / f
            if p.exists():
                h.update(p.read_bytes())
        _frontend_hash = h.hexdigest()
    return _frontend_hash


class _Code:
    """The identity the launcher checks a compiled entry against (a Python kernel's
    ``__code__``): one per loaded kernel."""

    def __init__(self, sha: str):
        self.sha = sha


class _CppFunction:
    """What ``Kernel`` reads of a Python function, for a C++ entry."""

    def __init__(self, name: str, module: str, namespace: dict, sha: str):
        self.__name__ = self.__qualname__ = name
        self.__module__ = module
        self.__globals__ = namespace
        self.__closure__ = None
        self.__code__ = _Code(sha)
        self.__doc__ = f"C++ kernel {name}"


class CppKernel(Kernel):
    """A ``__global__`` function of a C++ kernel file. Launch with ``k[block_dim](...)``."""

    def __init__(self, module: "CppModule", fdef, entry_params, structs: dict,
                 options: dict):
        from ..compiler.frontend.source import KernelSource
        from .binding import api_params
        self.module = module
        self._fdef = fdef
        self.entry_params = entry_params
        self.structs = structs                  # parameter name -> asc.Struct subclass
        text = module.text
        defines = repr(sorted(module.defines.items()))   # -D macros change the kernel
        defines += repr(sorted(module.headers.items()))  # and so do the headers read
        sha = hashlib.sha256(f"{text}\0{defines}\0{fdef.name}\0{frontend_hash()}".encode()
                             ).hexdigest()
        self.fn = _CppFunction(fdef.name, module.module_name, module.namespace, sha)
        self.options = options
        self.__name__ = self.__qualname__ = fdef.name
        self.__doc__ = f"C++ kernel {fdef.name} from {module.file}"
        self.__wrapped__ = None
        self._code = self.fn.__code__
        self._source = KernelSource(text, module.file, 1, 0,
                                    hashlib.sha256(text.encode()).hexdigest())
        self._ast = fdef
        self._compiled = CompiledTable()
        self._fast_specs = {}
        self._launchers = {}
        self._plan_params = None
        self.params = api_params(entry_params, structs)
        from .loops import names_in
        self.gm_read = names_in(fdef.body)   # GM_ADDR parameters the body names
        self._sha = sha
        if options:
            from ..compiler.kernel_kind import check_options
            check_options(options, self.def_loc())

    def _read_code(self) -> None:
        pass

    def _sync_code(self) -> None:
        pass

    def source(self):
        return self._source

    def parsed(self):
        return self._fdef

    def def_loc(self) -> SourceLoc:
        return self._fdef.loc

    def fingerprint(self) -> str:
        return self._sha

    def defaults(self) -> dict:
        return {}

    def namespace(self):
        return self.module.namespace

    def referenced(self) -> list:
        return []

    def dependency_guard(self) -> tuple:
        return ((self, self.fn.__code__),), ()

    def dependencies(self, seen=None):
        return [(self.fn.__qualname__, self._sha)], []

    def __repr__(self) -> str:
        return f"<asc.cpp kernel {self.__name__} from {self.module.file}>"

    def bind(self, args, kwargs):
        """As ``Kernel.bind``, with tiling structs from dicts and C scalar types."""
        from .binding import bind_cpp_args
        return bind_cpp_args(self, super().bind, args, kwargs)


class CppModule:
    """The kernels of one C++ file (attributes named as the ``__global__`` functions) and its
    tiling structs (``m.<StructName>``, ``asc.Struct`` classes)."""

    def __init__(self, text: str, file: str, defines: dict, include_dirs=()):
        self.text = text
        self.file = file
        self.defines = {str(k): str(v) for k, v in defines.items()}
        self.include_dirs = tuple(str(d) for d in include_dirs)
        stem = pathlib.Path(file).stem.strip("<>").replace(":", "_").replace("-", "_")
        digest = hashlib.sha256(f"{text}\0{sorted(self.defines.items())}".encode()).hexdigest()
        self.module_name = f"ascendc_py.cpp.kernels.{stem}_{digest[:8]}"
        from . import sema_hooks
        import numpy as np

        import ascendc_py as asc
        self.namespace = {"$asc": asc, "$np": np, "$gm_cast": sema_hooks.GM_CAST,
                          "$convert": sema_hooks.CONVERT, "range": range, "min": min,
                          "max": max}
        self.kernels: dict[str, CppKernel] = {}
        self.structs: dict = {}
        self._build(defines)

    def _build(self, defines: dict) -> None:
        from .lexer import lex, unsupported
        from .lower import Lowerer
        from .parse import parse_tokens
        from .tiling import struct_class
        from .unit import collect, loc_of
        from .entry import EntryParam
        from .lexer import INCLUDED
        tree = parse_tokens(lex(self.text, self.file, defines, self.include_dirs), self.file)
        self.headers = {h: "".join(linecache.getlines(h)) for h in INCLUDED.get(self.file, [])}

        def unsup(t, what, hint=""):
            loc = loc_of(self.file, t)
            err = unsupported(self.file, (loc.line, loc.col), what, hint)
            return err.relocated(loc)

        unit = collect(tree, self.file, unsup)
        if not unit.entries:
            raise KernelSyntaxError("no kernel in this file: a kernel is a function declared "
                                    "`extern \"C\" __global__ __aicore__ void name(...)`",
                                    SourceLoc(self.file, 1, 1))
        for f in unit.entries:
            lw = Lowerer(unit)
            fdef, params = lw.entry(f)
            structs, containers = {}, set()
            for i, p in enumerate(params):
                if p.kind == "struct":
                    info = p.struct
                    if info.name not in self.structs:
                        self.structs[info.name] = struct_class(info, lw, self.module_name)
                    if self.structs[info.name] is None:   # a holder of TCubeTilings only
                        params[i] = EntryParam(p.name, "gm", p.ct, info)
                        containers.add(p.name)
                        continue
                    structs[p.name] = self.structs[info.name]
            self.kernels[f.name] = CppKernel(self, fdef, params, structs,
                                             dict(getattr(lw, "options", {})))
            self.kernels[f.name].containers = containers
        self.structs = {k: v for k, v in self.structs.items() if v is not None}

    def __getattr__(self, name: str):
        kernels = self.__dict__.get("kernels", {})
        if name in kernels:
            return kernels[name]
        structs = self.__dict__.get("structs", {})
        if name in structs:
            return structs[name]
        raise AttributeError(f"{self.__dict__.get('file', 'the C++ file')} has no kernel or "
                             f"tiling struct '{name}'; kernels: "
                             f"{', '.join(kernels) or 'none'}")

    def __dir__(self):
        return list(self.kernels) + list(self.structs) + ["kernels", "structs", "file"]

    def __repr__(self) -> str:
        return f"<asc.cpp module {self.file}: {', '.join(self.kernels)}>"


def _is_path(source) -> bool:
    if isinstance(source, os.PathLike):
        return True
    return isinstance(source, str) and "\n" not in source and "{" not in source and \
        (source.endswith((".cpp", ".cc", ".cxx", ".h", ".hpp")) or os.path.isfile(source))


@user_boundary
def load(source, *, name: str | None = None, defines: dict | None = None,
         include_dirs=()) -> CppModule:
    """Load an Ascend C kernel file (a path) or kernel source text.

    ``name``: the file name errors show for source text (default ``<cpp:HASH>``).
    ``defines``: object-like macros, as ``-D`` on a compiler command line
    (``{"DTYPE_X": "float"}``); a value is C++ source text.
    ``include_dirs``: folders searched for ``#include "x.h"`` after the file's own folder
    (a header found is read, so a tiling struct can live in one; Ascend C's headers are not
    searched for and not read).
    """
    if _is_path(source):
        path = pathlib.Path(source)
        try:
            text = path.read_text()
        except OSError as exc:
            raise KernelSyntaxError(f"cannot read C++ kernel file {path}: {exc.strerror}",
                                    None) from None
        file = str(path.resolve())
        linecache.checkcache(file)
    else:
        text = str(source)
        file = name or f"<cpp:{hashlib.sha256(text.encode()).hexdigest()[:12]}>"
    if not text.endswith("\n"):
        text += "\n"
    lines = text.splitlines(keepends=True)
    linecache.cache[file] = (len(text), None, lines, file)
    try:
        return CppModule(text, file, dict(defines or {}), include_dirs)
    except KernelError:
        raise
    except RecursionError:
        raise KernelSyntaxError("the C++ source is nested too deeply to compile",
                                SourceLoc(file, 1, 1)) from None
    except Exception as exc:  # noqa: BLE001 - never show a front-end stack to the user
        raise InternalCompilerError(f"internal error in the C++ front end: "
                                    f"{type(exc).__name__}: {exc}", SourceLoc(file, 1, 1)) \
            from exc


__all__ = ["load", "CppModule", "CppKernel"]
