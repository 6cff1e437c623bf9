"""Session-wide test setup: an isolated compile cache and the hypothesis profiles.

* ``ASCENDC_PY_CACHE_DIR`` points at a fresh temporary directory for the whole session (unless the
  caller already set it), so tests never read or write the user's ``~/.cache/ascendc_py``. It is
  set in ``pytest_configure``, before collection and before pytest-xdist starts its workers, so
  the workers (and any subprocess a test starts) inherit the same directory.
* Hypothesis profiles: ``default`` (50 examples, no deadline), ``ci`` (200 examples, derandomized)
  and ``long`` (10000 examples, used by ``make fuzz``). ``default`` is loaded unless
  ``--hypothesis-profile`` is given.
"""
from __future__ import annotations

import os
import shutil
import tempfile

import pytest

try:
    from hypothesis import HealthCheck, settings
except ImportError:  # hypothesis is a test extra; tests that need it import it themselves
    settings = None
else:
    settings.register_profile("default", deadline=None, max_examples=50)
    settings.register_profile("ci", deadline=None, max_examples=200, derandomize=True,
                              print_blob=True, suppress_health_check=[HealthCheck.too_slow])
    settings.register_profile("medium", deadline=None, max_examples=2000,
                              suppress_health_check=[HealthCheck.too_slow])
    settings.register_profile("long", deadline=None, max_examples=10000,
                              suppress_health_check=[HealthCheck.too_slow])

CACHE_ENV = "ASCENDC_PY_CACHE_DIR"
_created_cache_dir: str | None = None


def pytest_configure(config: pytest.Config) -> None:
    global _created_cache_dir
    if not os.environ.get(CACHE_ENV):
        _created_cache_dir = tempfile.mkdtemp(prefix="ascendc_py_test_cache_")
        os.environ[CACHE_ENV] = _created_cache_dir
    if settings is not None:
        try:
            chosen = config.getoption("--hypothesis-profile")
        except ValueError:  # hypothesis' pytest plugin not active
            chosen = None
        if not chosen:
            settings.load_profile("default")


def pytest_unconfigure(config: pytest.Config) -> None:
    global _created_cache_dir
    if _created_cache_dir is not None:
        shutil.rmtree(_created_cache_dir, ignore_errors=True)
        if os.environ.get(CACHE_ENV) == _created_cache_dir:
            del os.environ[CACHE_ENV]
        _created_cache_dir = None
