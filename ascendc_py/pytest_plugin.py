"""ascendc_py's pytest plugin (entry point ``pytest11``; without the installed package:
``pytest -p ascendc_py.pytest_plugin``): what a kernel author's test file needs.

* ``--asc-sanitize``: every launch of the session runs in sanitize mode (races between pipes,
  uninitialised reads, blocks writing the same GM bytes), unless a test asks otherwise
  (``sanitize=False`` on a launch, ``asc.testing.check_kernel(..., sanitize=False)``);
  subprocesses inherit it (``ASCENDC_PY_SANITIZE=1``).
* ``--asc-platform NAME``: the default platform of every launch of the session.
* fixture ``asc_cache``: a fresh, empty compile cache directory for the test (a
  ``pathlib.Path``; ``ASCENDC_PY_CACHE_DIR`` points at it until the test ends).
* fixture ``asc_platform``: the ChipConfig the test's launches use by default: the test's
  ``@pytest.mark.asc_platform("910B4")`` marker, else ``--asc-platform``, else the default.
* fixture ``asc_golden`` and marker ``asc_golden(golden, **compare_options)``: a checker
  ``asc_golden(actual, *inputs)`` that asserts ``actual`` matches ``golden(*inputs)`` (or the
  array ``golden``) under ``asc.testing``'s dtype rules and the marker's options (``rtol``,
  ``atol``, ``fraction``, ``dtype``); without the marker, ``asc_golden(actual, expected)``.

A failed comparison shows ``asc.testing``'s report (mismatching element ranges, worst element,
the rule applied) and the test's line, not this plugin's frames.

This is not ``ascendc_py/pyasc_compat/pytest_plugin.py`` (which runs pyasc's own test suite);
the two may be loaded together.
"""
from __future__ import annotations

import os

import pytest

_SANITIZE_ENV = "ASCENDC_PY_SANITIZE"
_saved: dict = {}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ascendc_py", "ascendc_py kernels")
    group.addoption("--asc-sanitize", action="store_true", default=False,
                    help="run every kernel launch of the session in sanitize mode")
    group.addoption("--asc-platform", default=None, metavar="NAME",
                    help="default platform of every launch (Ascend910B1..B4)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "asc_platform(name): the platform the asc_platform "
                            "fixture selects for this test")
    config.addinivalue_line("markers", "asc_golden(golden, **options): the golden function "
                            "or array the asc_golden fixture compares with, and compare() "
                            "options (rtol, atol, fraction, dtype)")
    if config.getoption("--asc-sanitize"):
        _saved[_SANITIZE_ENV] = os.environ.get(_SANITIZE_ENV)
        os.environ[_SANITIZE_ENV] = "1"
    name = config.getoption("--asc-platform")
    if name:
        from .simulator.config import current_platform, get_platform, set_platform
        try:
            platform = get_platform(name)
        except ValueError as exc:
            raise pytest.UsageError(f"--asc-platform: {exc}") from None
        _saved["platform"] = current_platform()
        set_platform(platform)


def pytest_unconfigure(config: pytest.Config) -> None:
    if _SANITIZE_ENV in _saved:
        old = _saved.pop(_SANITIZE_ENV)
        if old is None:
            os.environ.pop(_SANITIZE_ENV, None)
        else:
            os.environ[_SANITIZE_ENV] = old
    if "platform" in _saved:
        from .simulator.config import set_platform
        set_platform(_saved.pop("platform"))


def pytest_report_header(config: pytest.Config) -> list:
    parts = []
    if config.getoption("--asc-sanitize"):
        parts.append("every launch sanitized")
    if config.getoption("--asc-platform"):
        parts.append(f"platform {config.getoption('--asc-platform')}")
    return [f"ascendc_py: {', '.join(parts)}"] if parts else []


@pytest.fixture()
def asc_cache(tmp_path_factory, monkeypatch):
    """A fresh compile cache directory for this test (``ASCENDC_PY_CACHE_DIR``)."""
    path = tmp_path_factory.mktemp("asc-cache")
    monkeypatch.setenv("ASCENDC_PY_CACHE_DIR", str(path))
    return path


@pytest.fixture()
def asc_platform(request):
    """The platform of this test's launches: its ``asc_platform`` marker, else
    ``--asc-platform``, else the current default."""
    from .simulator.config import current_platform, get_platform, using_platform
    marker = request.node.get_closest_marker("asc_platform")
    if marker is not None:
        if not marker.args:
            raise pytest.UsageError("@pytest.mark.asc_platform needs a platform name")
        platform = get_platform(marker.args[0])
    else:
        platform = get_platform(request.config.getoption("--asc-platform")
                                or current_platform())
    with using_platform(platform) as chip:
        yield chip


@pytest.fixture()
def asc_golden(request):
    """``check(actual, *inputs)``: assert ``actual`` matches the ``asc_golden`` marker's
    golden (called with ``inputs`` when it is a function); returns the Comparison."""
    from .testing import assert_close
    marker = request.node.get_closest_marker("asc_golden")

    def check(actual, *inputs, **options):
        __tracebackhide__ = True  # noqa: F841 - pytest shows the test's line
        if marker is None:
            if len(inputs) != 1:
                raise TypeError("asc_golden(actual, expected) without an asc_golden marker; "
                                "with @pytest.mark.asc_golden(fn), asc_golden(actual, *inputs)")
            expected = inputs[0]
            kw = options
        else:
            if not marker.args:
                raise pytest.UsageError("@pytest.mark.asc_golden needs the golden function "
                                        "or array")
            golden = marker.args[0]
            expected = golden(*inputs) if callable(golden) else golden
            kw = {**marker.kwargs, **options}
        return assert_close(actual, expected, **kw)

    return check
