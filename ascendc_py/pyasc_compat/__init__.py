"""Run programs written for pyasc (hicann/pyasc) unmodified on ascendc_py's simulator.

Command line::

    python -m ascendc_py.pyasc_compat [--lenient] [--npu-as-model] PROGRAM.py [program args ...]

pyasc's own pytest files run through the pytest plugin
(``pytest -p ascendc_py.pyasc_compat.pytest_plugin``, :mod:`.pytest_plugin`) and are counted by
``python -m ascendc_py.pyasc_compat.corpus`` (:mod:`.corpus`).

From Python (tests use this; nothing leaks out of the call)::

    from ascendc_py import pyasc_compat
    code = pyasc_compat.run_program("add.py", ["-r", "Model"])   # -> exit status, 0 = success

    with pyasc_compat.install():     # just the import mapping: `import asc` works inside
        import asc
        import asc.runtime.config as config

:func:`install` maps ``asc``, ``asc.language``, ``asc.runtime.config`` and ``asc.lib.runtime``
onto ascendc_py (see :mod:`ascendc_py.pyasc_compat.shim`); pyasc's ``Model`` backend is our
simulator and ``NPU`` raises :class:`NoNPUError`. :func:`run_program` also runs the file as
``__main__`` with its own ``sys.argv``, with its directory first on ``sys.path``, and afterwards
restores ``sys.modules`` (the ``asc`` modules and any module imported from the program's
directory), ``sys.argv``, ``sys.path``, the process-wide platform and the environment.

Lenient GM bounds (``--lenient`` / ``lenient=True``): some pyasc programs copy whole tiles past
the end of a GM buffer, which device allocations tolerate. The runner sets the environment
variable :data:`LENIENT_ENV` (``ASCENDC_PY_LENIENT=1``) for the duration of the run; the launcher
reads it and launches with ``lenient=True`` (GM slack, out-of-bounds accesses become warnings).
Strict bounds stay the default.

NPU as the simulator (``--npu-as-model`` / ``npu_as_model=True``): programs that hard-code
pyasc's ``Backend.NPU`` and torch's ``device="npu"`` run on the simulator and CPU tensors
(:mod:`ascendc_py.pyasc_compat.npu`). Off by default: ``Backend.NPU`` raises :class:`NoNPUError`.
"""
from __future__ import annotations

import contextlib
import os
import runpy
import sys
from typing import Iterator, Optional, Sequence

from ..forksafe import ForkSafeLock
from . import shim
from .shim import Backend, KernelType, NoNPUError, Platform, Stream

__all__ = ["install", "run_program", "main", "Backend", "Platform", "KernelType", "Stream",
           "NoNPUError", "LENIENT_ENV"]

#: The environment variable the launcher honours as ``lenient=True`` for every launch.
LENIENT_ENV = "ASCENDC_PY_LENIENT"

_lock = ForkSafeLock(reentrant=True)
_depth = 0
_finder: Optional[shim.AscFinder] = None
_saved_asc: dict = {}


def _asc_modules() -> dict:
    return {k: v for k, v in sys.modules.items() if shim.is_asc_name(k)}


@contextlib.contextmanager
def install() -> Iterator[None]:
    """Make ``import asc`` (and ``asc.runtime.config``, ``asc.lib.runtime``, ``asc.language``…)
    resolve to ascendc_py inside the ``with`` block. An installed pyasc is shadowed meanwhile;
    on exit every ``asc`` module is removed from ``sys.modules`` and whatever was there before
    is put back. Nested ``install()`` blocks share the outermost one's mapping."""
    global _depth, _finder, _saved_asc
    with _lock:
        if _depth == 0:
            _saved_asc = _asc_modules()
            for name in _saved_asc:
                del sys.modules[name]
            _finder = shim.AscFinder()
            sys.meta_path.insert(0, _finder)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                with contextlib.suppress(ValueError):
                    sys.meta_path.remove(_finder)
                _finder = None
                for name in list(_asc_modules()):
                    del sys.modules[name]
                sys.modules.update(_saved_asc)
                _saved_asc = {}


@contextlib.contextmanager
def _program_state(path: str, argv: Sequence[str], lenient: bool) -> Iterator[None]:
    """argv, sys.path[0], the lenient env var, the platform and modules imported from the
    program's directory (ascendc_py's own excepted): set for the run, restored afterwards."""
    from ascendc_py.simulator import config as sim_config

    directory = os.path.dirname(path)
    saved_argv = sys.argv
    saved_path = list(sys.path)
    saved_modules = set(sys.modules)
    saved_env = os.environ.get(LENIENT_ENV)
    sys.argv = [path, *argv]
    sys.path.insert(0, directory)
    if lenient:
        os.environ[LENIENT_ENV] = "1"
    try:
        with sim_config.using_platform(sim_config.current_platform()):
            yield
    finally:
        sys.argv = saved_argv
        sys.path[:] = saved_path
        if lenient:
            if saved_env is None:
                os.environ.pop(LENIENT_ENV, None)
            else:
                os.environ[LENIENT_ENV] = saved_env
        for name in set(sys.modules) - saved_modules:
            if name == "ascendc_py" or name.startswith("ascendc_py."):
                continue
            file = getattr(sys.modules.get(name), "__file__", None)
            if file and _inside(os.path.abspath(file), directory):
                del sys.modules[name]


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def _exit_status(code) -> int:
    """The process exit status Python would use for ``SystemExit(code)``."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def run_program(path: str, argv: Sequence[str] = (), *, lenient: bool = False,
                npu_as_model: bool = False) -> int:
    """Run the pyasc program at ``path`` as ``__main__`` with ``sys.argv = [path, *argv]``.

    Returns its exit status (0 when it returns normally, else what ``sys.exit`` was given).
    Other exceptions (a failed ``assert`` in the program, a kernel error) propagate to the
    caller, as they would end the process with a traceback. ``lenient=True`` sets
    ``ASCENDC_PY_LENIENT=1`` for the run; ``npu_as_model=True`` maps ``Backend.NPU`` and
    ``device="npu"`` onto the simulator (see the module docstring). Everything the run changes
    in this process is restored afterwards, see :func:`install`."""
    path = os.path.abspath(os.fspath(path))
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such pyasc program: {path}")
    from .npu import npu_as_model as _npu_as_model
    npu = _npu_as_model() if npu_as_model else contextlib.nullcontext()
    with install(), _program_state(path, [str(a) for a in argv], lenient), npu:
        try:
            runpy.run_path(path, run_name="__main__")
        except SystemExit as exc:
            return _exit_status(exc.code)
    return 0


USAGE = """\
usage: python -m ascendc_py.pyasc_compat [--lenient] [--npu-as-model] PROGRAM.py [ARGS ...]

Run a program written for pyasc (import asc ...) unmodified on ascendc_py's simulator.
pyasc's Model backend (the tutorials' default, -r Model) is the simulator; -r NPU is an error.

options (before PROGRAM.py; everything after it is passed to the program):
  --lenient    tolerate GM accesses past the end of a buffer (device-like slack; warnings
               naming the line instead of errors); sets ASCENDC_PY_LENIENT=1
  --npu-as-model  Backend.NPU selects the simulator too and torch's device "npu" is the CPU
               (for programs that hard-code the NPU)
  -h, --help   show this help
"""


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The command line: ``[--lenient] [--npu-as-model] PROGRAM.py [ARGS ...]``; returns the
    exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    lenient = npu = False
    while args and args[0].startswith("-"):
        opt = args.pop(0)
        if opt in ("-h", "--help"):
            print(USAGE, end="")
            return 0
        if opt == "--lenient":
            lenient = True
        elif opt == "--npu-as-model":
            npu = True
        elif opt == "--":
            break
        else:
            print(f"unknown option {opt}\n\n{USAGE}", end="", file=sys.stderr)
            return 2
    if not args:
        print(USAGE, end="", file=sys.stderr)
        return 2
    program, *program_args = args
    if not os.path.isfile(program):
        print(f"no such file: {program}", file=sys.stderr)
        return 2
    try:
        return run_program(program, program_args, lenient=lenient, npu_as_model=npu)
    except NoNPUError as exc:
        print(f"{program}: error: {exc}", file=sys.stderr)
        return 1
