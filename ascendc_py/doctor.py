"""``ascendc-py doctor``: check the installation and say what to fix.

Each check prints one line, ``ok``, ``warn`` (works, with a cost or a missing option) or
``FAIL`` (kernels cannot compile or run), with the fix. The last check compiles and launches a
small kernel, which exercises the parser tables, llvmlite, the runtime library and the
simulator together.
"""
from __future__ import annotations

import importlib
import sys
import time
from typing import Callable

OK, WARN, FAIL = "ok", "warn", "FAIL"


def _version(module: str):
    mod = importlib.import_module(module)
    return getattr(mod, "__version__", "?")


def _tuple(v: str) -> tuple:
    out = []
    for part in v.split("."):
        digits = "".join(ch for ch in part if ch.isdigit())
        if not digits:
            break
        out.append(int(digits))
    return tuple(out)


def check_python():
    v = sys.version_info
    if v < (3, 10):
        return FAIL, "python", f"{v.major}.{v.minor}", "ascendc_py needs Python 3.10 or newer"
    return OK, "python", f"{v.major}.{v.minor}.{v.micro}", ""


def _required(module: str, minimum: tuple, pip: str):
    try:
        v = _version(module)
    except ImportError as exc:
        return FAIL, module, f"not importable ({exc})", f"pip install '{pip}'"
    if minimum and _tuple(str(v)) < minimum:
        return FAIL, module, f"{v} (too old)", f"pip install -U '{pip}'"
    return OK, module, str(v), ""


def check_numpy():
    return _required("numpy", (), "numpy")


def check_lark():
    return _required("lark", (1, 2), "lark>=1.2")


def check_llvmlite():
    status = _required("llvmlite", (0, 44), "llvmlite>=0.44")
    if status[0] != OK:
        return status
    try:
        from llvmlite import binding as llvm
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        triple = llvm.get_process_triple()
    except Exception as exc:  # noqa: BLE001 - any failure here means no native code
        return FAIL, "llvmlite", f"cannot target this CPU: {exc}", \
            "reinstall llvmlite for this platform"
    return OK, "llvmlite", f"{status[2]}, native target {triple}", ""


def check_cache():
    from .compiler import cachedir
    root = cachedir.cache_dir()
    if root is None:
        return WARN, "compile cache", f"{cachedir._root()} is not usable", \
            "set ASCENDC_PY_CACHE_DIR to a writable directory (kernels recompile in every " \
            "process until then)"
    return OK, "compile cache", str(root), ""


def check_parser_tables():
    from .compiler.frontend import parse
    path = parse._fast_tables_path()
    existed = path is not None and path.exists()
    start = time.perf_counter()
    try:
        fast = parse.get_fast_parser()
    except Exception as exc:  # noqa: BLE001
        return FAIL, "parser tables", f"cannot build: {exc}", "reinstall lark>=1.2"
    if fast is None:
        return WARN, "parser tables", "not exportable; the lark parser is used (slower)", \
            "pip install -U 'lark>=1.2'"
    how = "cached" if existed else f"built now in {time.perf_counter() - start:.1f} s"
    return OK, "parser tables", f"{how} ({path})" if path else how, ""


def check_linker():
    from .compiler.native import linker
    cc = linker()
    if cc is None:
        return WARN, "C compiler (linking)", "none found (or ASCENDC_PY_NO_LINK=1)", \
            "install cc/gcc/clang so cached kernels load as shared libraries (faster); " \
            "without one they load through LLVM's MCJIT"
    return OK, "C compiler (linking)", cc, ""


def check_kernel():
    """Compile and launch a small kernel: parser, llvmlite, runtime library, simulator."""
    import numpy as np
    try:
        from ._doctor_kernel import doctor_scale
        x = np.arange(512, dtype=np.float32)
        z = np.zeros_like(x)
        start = time.perf_counter()
        report = doctor_scale[2](x, z, 256)
        seconds = time.perf_counter() - start
    except Exception as exc:  # noqa: BLE001 - any failure: the installation is broken
        return FAIL, "kernel launch", f"{type(exc).__name__}: {exc}", \
            "reinstall ascendc_py and llvmlite; if it persists, clear the cache " \
            "('ascendc-py cache clear') and report the message"
    if not np.array_equal(z, 2 * x):
        return FAIL, "kernel launch", "wrong result", "report it: the simulator miscomputed"
    return OK, "kernel launch", f"compiled and ran in {seconds:.2f} s ({report.cycles:,} " \
        f"simulated cycles, code from {report.code_origin})", ""


def check_torch():
    try:
        v = _version("torch")
    except ImportError:
        return WARN, "torch (optional)", "not installed: the torch bridge is unavailable", \
            "pip install 'ascendc_py[torch]' to use torch tensors and ops"
    if _tuple(v)[:2] < (2, 1):
        return WARN, "torch (optional)", f"{v} (older than 2.1: custom ops need torch.library)",\
            "pip install 'ascendc_py[torch]'"
    return OK, "torch (optional)", v, ""


def check_matplotlib():
    try:
        v = _version("matplotlib")
    except ImportError:
        return WARN, "matplotlib (optional)", "not installed: no timelines (report.plot, " \
            "ascendc-py trace, the HTML report's pictures)", "pip install 'ascendc_py[plot]'"
    return OK, "matplotlib (optional)", v, ""


CHECKS = (check_python, check_numpy, check_lark, check_llvmlite, check_cache,
          check_parser_tables, check_linker, check_kernel, check_torch, check_matplotlib)


def run_checks(out: Callable[[str], None] = print) -> int:
    """Run every check, writing one line each (and the fix under it); returns the number of
    failed checks."""
    failed = 0
    for check in CHECKS:
        status, name, detail, fix = check()
        out(f"{status:>4}  {name}: {detail}")
        if fix:
            out(f"      fix: {fix}")
        failed += status == FAIL
    out("all required checks passed" if not failed else f"{failed} check(s) failed")
    return failed
