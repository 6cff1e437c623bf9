"""Run pyasc's own pytest files, unmodified, on ascendc_py's simulator.

    pytest -p ascendc_py.pyasc_compat.pytest_plugin $PYASC_REPO/python/test/kernels
    pytest -p ascendc_py.pyasc_compat.pytest_plugin --pyasc-npu-as-model \\
        $PYASC_REPO/python/test/generalization
    pytest -p ascendc_py.pyasc_compat.pytest_plugin $PYASC_REPO/python/test/unit/language

The plugin installs the import mapping of :func:`ascendc_py.pyasc_compat.install` before pytest
reads pyasc's conftest files (they import ``asc.runtime.config``), so everything they and the
test files import from ``asc`` is ascendc_py's; their conftests' options work as written
(``--backend Model``, ``--platform``). Options it adds:

``--pyasc-npu-as-model``
    pyasc's generalization tests hard-code ``config.Backend.NPU`` and ``device="npu"``: with
    this flag ``Backend.NPU`` selects the simulator and torch's ``"npu"`` device is the CPU
    (:mod:`ascendc_py.pyasc_compat.npu`); the session header says so. Without it they fail
    with "no NPU here".
``--lenient``
    Lenient GM bounds for every launch (device-like slack past the end of a buffer, warnings
    instead of errors), as the runner's ``--lenient``; strict bounds are the default.

pyasc's unit/language tests compile each kernel with ``asc.runtime.launcher.Launcher.run``
mocked and ``asc.runtime.jit.MockTensor`` arguments: here the kernel is compiled by our
compiler for the mock's dtype and, the run being mocked, not run (see
:mod:`ascendc_py.pyasc_compat.launch`).
"""
from __future__ import annotations

import contextlib
import os

import pytest

from . import LENIENT_ENV, install
from .npu import npu_as_model

_stack = contextlib.ExitStack()
_installed = False


def _install() -> None:
    global _installed
    if not _installed:
        _stack.enter_context(install())
        _installed = True


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("pyasc", "pyasc programs on ascendc_py's simulator")
    group.addoption("--pyasc-npu-as-model", action="store_true", default=False,
                    help="run pyasc tests that hard-code Backend.NPU and device='npu' on the "
                         "simulator: Backend.NPU selects the Model backend, torch's 'npu' device "
                         "is the CPU")
    group.addoption("--lenient", action="store_true", default=False,
                    help="lenient GM bounds for every launch (device-like slack past the end of "
                         "a buffer; warnings instead of errors). Strict by default.")


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args) -> None:
    """Map ``asc`` before pyasc's conftest files are imported (they import from it). pyasc's
    test directories have no ``__init__.py`` and repeat basenames (``kernels/test_matmul.py``,
    ``kernels/insert_sync/test_matmul.py``): the import mode is ``importlib`` unless the
    command line names one."""
    _install()
    if not any(a == "--import-mode" or a.startswith("--import-mode=") for a in args):
        early_config.known_args_namespace.importmode = "importlib"
        early_config.option.importmode = "importlib"


def pytest_configure(config: pytest.Config) -> None:
    _install()
    if config.getoption("--lenient"):
        _stack.enter_context(_env(LENIENT_ENV, "1"))
    if config.getoption("--pyasc-npu-as-model"):
        _stack.enter_context(npu_as_model())


def pytest_unconfigure(config: pytest.Config) -> None:
    global _installed
    _stack.close()
    _installed = False


def _mode_lines(config: pytest.Config) -> list:
    lines = ["pyasc programs run on ascendc_py's simulator (import asc -> ascendc_py; "
             "Backend.Model is the simulator)"]
    if config.getoption("--pyasc-npu-as-model"):
        lines.append("--pyasc-npu-as-model: Backend.NPU is mapped onto the Model backend "
                     "(the simulator) and torch device 'npu' onto the CPU")
    if config.getoption("--lenient"):
        lines.append("--lenient: GM bounds are lenient (device-like slack; warnings)")
    return lines


def pytest_report_header(config: pytest.Config) -> list:
    return _mode_lines(config)


def pytest_terminal_summary(terminalreporter, exitstatus, config: pytest.Config) -> None:
    """The same lines at the end, where ``-q`` (no header) still shows them."""
    for line in _mode_lines(config):
        terminalreporter.write_line(line)


@contextlib.contextmanager
def _env(name: str, value: str):
    saved = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = saved
