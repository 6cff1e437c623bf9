"""asc.testing's readable Comparison (repr, mismatching index ranges), the launcher-returned-a-
Report message, float16_golden, and the pytest plugin (ascendc_py.pytest_plugin: fixtures
asc_cache, asc_platform, asc_golden, option --asc-sanitize), run in a pytest subprocess."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py import testing

REPO = Path(__file__).resolve().parents[1]
PLUGIN = "ascendc_py.pytest_plugin"


# ============================================================================ Comparison
def test_repr_is_the_report_with_mismatching_ranges():
    """A tail never processed reads as one range; repr (what pytest shows) is the report."""
    g = np.arange(1000, dtype=np.float32)
    a = g.copy()
    a[768:] = 0
    c = testing.compare(a, g)
    assert c.mismatch_ranges == ((768, 1000),) and c.mismatch_runs == 1
    assert "elements [768, 1000) mismatch" in str(c)
    assert repr(c) == ("<FAILED float32 (1000,): elements [768, 1000) mismatch (232 of 1000); "
                       "worst (770,): 0.0 vs golden 770.0; max abs err 999>")
    assert "Comparison(" not in repr(c) and len(repr(c)) < 240   # pytest's repr limit


def test_ranges_of_scattered_and_many_runs():
    g = np.zeros((4, 10), np.float32)
    a = g.copy()
    a[0, 3] = 1
    a[2, 0:5] = 1
    c = testing.compare(a, g)
    assert c.mismatch_ranges == ((3, 4), (20, 25))
    assert "flat elements 3, [20, 25) mismatch" in str(c)
    b = np.zeros(100, np.float32)
    b[::2] = 1
    c = testing.compare(b, np.zeros(100, np.float32))
    assert c.mismatch_runs == 50 and len(c.mismatch_ranges) == testing.MAX_RANGES
    assert "and 42 more run(s) mismatch" in str(c)
    assert testing.compare(g, g).mismatch_ranges == ()


def test_launcher_returning_the_report_is_a_clear_error():
    @asc.kernel
    def plain_copy(x: asc.GlobalAddress, z: asc.GlobalAddress):
        xg = asc.GlobalTensor()
        zg = asc.GlobalTensor()
        xg.set_global_buffer(x, 256)
        zg.set_global_buffer(z, 256)
        a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, 256)
        asc.data_copy(a, xg, 256)
        asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.data_copy(zg, a, 256)

    def run(x):
        return plain_copy[1](x, np.zeros_like(x))     # the Report, not the output
    x = np.arange(256, dtype=np.float32)
    with pytest.raises(TypeError, match=r"run returned the launch Report of plain_copy\[1\], "
                                        "not an array.*return that output array"):
        testing.check_kernel(run, lambda x: x, x)
    with pytest.raises(TypeError, match="got the launch Report"):
        testing.compare(run(x), x)


# ============================================================================ float16 golden
def test_float16_golden_rounds_after_every_operation():
    rng = np.random.default_rng(3)
    x = rng.uniform(-2, 2, 4096).astype(np.float16)
    y = rng.uniform(-2, 2, 4096).astype(np.float16)

    def fn(x, y):
        return (x * y + x) * 3.0 - y

    got = testing.float16_golden(fn, x, y)
    assert got.dtype == np.float16
    # the same as rounding by hand after each operation
    t = (x.astype(np.float32) * y).astype(np.float16)
    t = (t.astype(np.float32) + x).astype(np.float16)
    t = (t.astype(np.float32) * 3.0).astype(np.float16)
    t = (t.astype(np.float32) - y).astype(np.float16)
    np.testing.assert_array_equal(got, t)
    # a float32 golden computed in one go and rounded once differs (the reason for the helper)
    once = fn(x.astype(np.float32), y.astype(np.float32)).astype(np.float16)
    assert np.count_nonzero(once != got) > 0
    # float32 inputs are rounded to float16 first
    np.testing.assert_array_equal(testing.float16_golden(fn, x.astype(np.float32), y), got)


def test_float16_golden_rejects_a_widening_operation():
    x = np.ones(8, np.float16)
    with pytest.raises(TypeError, match="returned as float32: an operation widened it"):
        testing.float16_golden(lambda x: x * np.float32(2.0), x)


# ============================================================================ pytest plugin
TEST_FILE = '''
import numpy as np
import pytest
import ascendc_py as asc
from ascendc_py.simulator.sanitizer import last_launch_sanitized

@asc.kernel
def twice(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int):
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    zg.set_global_buffer(z, n)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    asc.data_copy(a, xg, n)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.muls(a, a, 2.0, n)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, a, n)

def run(x):
    z = np.zeros_like(x)
    r = twice[1](x, z, x.size)
    return z, r

def test_cache(asc_cache):
    assert not any(asc_cache.iterdir())
    run(np.ones(256, np.float32))
    assert any(asc_cache.iterdir())

@pytest.mark.asc_platform("910B4")
def test_platform_marker(asc_platform):
    assert asc_platform.name == "Ascend910B4"
    assert run(np.ones(256, np.float32))[1].platform == "Ascend910B4"

def test_platform_default(asc_platform):
    assert run(np.ones(256, np.float32))[1].platform == asc_platform.name
    print("PLATFORM", asc_platform.name)

def test_sanitize_option():
    run(np.ones(256, np.float32))
    print("SANITIZED", last_launch_sanitized())

@pytest.mark.asc_golden(lambda x: x * 2, rtol=1e-6)
def test_golden_marker(asc_golden):
    x = np.arange(256, dtype=np.float32)
    cmp = asc_golden(run(x)[0], x)
    assert cmp.passed and "1e-06" in cmp.rule

@pytest.mark.asc_golden(lambda x: x * 3)
def test_golden_marker_fails_readably(asc_golden):
    x = np.arange(256, dtype=np.float32)
    asc_golden(run(x)[0], x)

def test_golden_without_marker(asc_golden):
    x = np.arange(256, dtype=np.float32)
    asc_golden(run(x)[0], x * 2)

def test_assert_comparison_shows_report():
    x = np.arange(1000, dtype=np.float32)
    z = x.copy()
    z[768:] = 0
    assert asc.testing.compare(z, x)
'''


def _pytest(directory: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONPATH=os.pathsep.join(
        [str(REPO)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    env.pop("ASCENDC_PY_SANITIZE", None)
    return subprocess.run([sys.executable, "-m", "pytest", "-p", PLUGIN, "-p", "no:cacheprovider",
                           "-p", "no:xdist", "-q", "-rA", "-s", *args, str(directory)],
                          cwd=directory, env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def plugin_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("plugin")
    (d / "test_k.py").write_text(textwrap.dedent(TEST_FILE))
    return d


def test_plugin_fixtures_and_markers(plugin_dir):
    p = _pytest(plugin_dir)
    out = p.stdout
    assert "2 failed, 6 passed" in out, out + p.stderr
    assert "FAILED test_k.py::test_golden_marker_fails_readably" in out
    assert "FAILED test_k.py::test_assert_comparison_shows_report" in out
    assert "elements [1, 256) mismatch" in out      # element 0 is 0 == 0
    assert "elements [768, 1000) mismatch" in out
    assert "SANITIZED False" in out and "PLATFORM Ascend910B2" in out
    assert "def assert_close" not in out and "def check(" not in out    # frames hidden


def test_plugin_session_options(plugin_dir):
    p = _pytest(plugin_dir, "-v", "--asc-sanitize", "--asc-platform", "910B1", "-k",
                "sanitize_option or platform_default")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "SANITIZED True" in p.stdout and "PLATFORM Ascend910B1" in p.stdout
    assert "ascendc_py: every launch sanitized, platform 910B1" in p.stdout
    p = _pytest(plugin_dir, "--asc-platform", "910B9")
    assert p.returncode == 4 and "unknown platform" in p.stderr


def test_plugin_entry_point_is_declared():
    text = (REPO / "pyproject.toml").read_text()
    # named as the module, so that `-p ascendc_py.pytest_plugin` with the package installed
    # finds it registered under that name instead of registering it a second time (pytest's
    # "Plugin already registered under a different name")
    assert ('[project.entry-points.pytest11]\n"ascendc_py.pytest_plugin" = '
            '"ascendc_py.pytest_plugin"') in text
