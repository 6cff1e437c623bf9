"""The launch plan (dsl/kernel.py ``_LaunchPlan``): launches of a specialisation after the first
reuse what does not depend on the argument values, and anything that could make it stale (the
platform, the codegen variant, a mode asked for by argument or environment, an argument the
plan's binding does not cover) takes the full path with the same result as without a plan."""
from __future__ import annotations

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler import jit
from ascendc_py.simulator import block_runner, runtime
from ascendc_py.simulator.sanitizer import sanitizing
from kernels_for_tests import TILE, vadd_kernel


def _launch(x, blocks=2, **options):
    z = np.zeros_like(x)
    report = vadd_kernel[blocks](x, x, z, x.size // blocks, **options)
    np.testing.assert_array_equal(z, x + x)
    return report


def test_launchers_and_plans_are_kept():
    x = np.arange(2 * TILE, dtype=np.float32)
    assert vadd_kernel[2] is vadd_kernel[2]
    _launch(x)
    report = _launch(x)
    assert report.code_origin == "memory"
    assert len(vadd_kernel[2]._plans) >= 1


def test_another_platform_is_not_served_by_the_plan():
    x = np.arange(2 * TILE, dtype=np.float32)
    first = _launch(x)
    before = asc.current_platform()
    try:
        asc.set_platform("Ascend910B1")
        other = _launch(x)
        assert other.platform == "Ascend910B1"
    finally:
        asc.set_platform(before)
    assert _launch(x).platform == first.platform == before.name


def test_timing_off_and_on_between_launches():
    x = np.arange(2 * TILE, dtype=np.float32)
    on = _launch(x)
    jit.set_timing(False)
    try:
        off = _launch(x)
    finally:
        jit.set_timing(None)
    assert on.cycles > off.cycles and on.launch_cycles > 0 == off.launch_cycles
    assert _launch(x).cycles == on.cycles


def test_a_read_only_array_after_the_plan_is_refused():
    x = np.arange(2 * TILE, dtype=np.float32)
    _launch(x)
    z = np.zeros_like(x)
    z.flags.writeable = False
    with pytest.raises(asc.ReadOnlyArgumentError):
        vadd_kernel[2](x, x, z, TILE)


def test_modes_asked_for_after_the_plan_are_honoured(monkeypatch):
    x = np.arange(2 * TILE, dtype=np.float32)
    _launch(x)
    with sanitizing():
        assert _launch(x).sanitized
    assert not _launch(x).sanitized
    monkeypatch.setenv("ASCENDC_PY_TRACE", "1")
    traced = _launch(x)
    assert any(b.trace is not None and len(b.trace) for b in traced._blocks)
    monkeypatch.delenv("ASCENDC_PY_TRACE")
    assert all(b.trace is None for b in _launch(x)._blocks)


def test_the_native_loop_switched_off_after_the_plan(monkeypatch):
    """Tests switch the native loop off between launches (block_runner.ENABLED): the plan's
    launches then take the Python loop, with the same figures."""
    x = np.arange(2 * TILE, dtype=np.float32)
    native = _launch(x)
    calls = []
    monkeypatch.setattr(block_runner, "ENABLED", False)
    real = runtime._run
    monkeypatch.setattr(runtime, "_run", lambda *a, **k: calls.append(1) or real(*a, **k))
    python = _launch(x)
    assert calls and python.cycles == native.cycles


def test_a_cleared_table_of_compiled_entries_retires_the_plan():
    x = np.arange(2 * TILE, dtype=np.float32)
    _launch(x)
    vadd_kernel._compiled.clear()
    jit.wait_for_links()
    assert _launch(x).code_origin in ("disk", "compiled")
    assert _launch(x).code_origin == "memory"


def test_a_table_replaced_by_a_plain_dict_makes_no_plan(monkeypatch):
    """Tests replace a kernel's table of compiled entries with a dict: launches then make no
    plan (and the plan made before is retired)."""
    x = np.arange(2 * TILE, dtype=np.float32)
    _launch(x)
    monkeypatch.setattr(vadd_kernel, "_compiled", {})
    for _ in range(2):
        _launch(x)
    assert all(p.table is not vadd_kernel._compiled for p in vadd_kernel[2]._plans.values())


def test_environment_changed_after_the_plan_is_seen_by_the_next_launch(monkeypatch):
    """A planned launch reads its modes' variables in one pass (launcher ``_EnvModes``): each
    change is seen by the very next launch, as when each was read on its own."""
    x = np.arange(2 * TILE, dtype=np.float32)
    on = _launch(x)
    monkeypatch.setenv("ASCENDC_PY_TIMING", "0")
    assert _launch(x).launch_cycles == 0
    monkeypatch.setenv("ASCENDC_PY_TIMING", "1")
    assert _launch(x).cycles == on.cycles
    monkeypatch.setenv("ASCENDC_PY_SANITIZE", "1")
    assert _launch(x).sanitized
    monkeypatch.delenv("ASCENDC_PY_SANITIZE")
    assert not _launch(x).sanitized
    asc.set_sanitizer(True)
    try:
        assert _launch(x).sanitized
    finally:
        asc.set_sanitizer(None)
    many = np.arange(16 * TILE, dtype=np.float32)     # 8 tiles per block
    _launch(many)
    monkeypatch.setenv("ASCENDC_PY_LOOP_BUDGET", "2")
    with pytest.raises(asc.LoopLimitError):
        _launch(many)
    monkeypatch.delenv("ASCENDC_PY_LOOP_BUDGET")
    _launch(many)
    _launch(x, blocks=1)         # (the plan of 1 block)
    limits = []
    real = runtime._WATCHDOG.watch
    monkeypatch.setattr(runtime._WATCHDOG, "watch",
                        lambda stop, limit=None: limits.append(limit) or real(stop, limit))
    monkeypatch.setenv("ASCENDC_PY_LAUNCH_TIMEOUT", "7.5")
    _launch(x, blocks=1)
    monkeypatch.setenv("ASCENDC_PY_LAUNCH_TIMEOUT", "0")
    _launch(x, blocks=1)
    assert limits[-2:] == [7.5, 0.0]


@pytest.mark.parametrize("dtype", ["datetime64[s]", "timedelta64[ns]"])
def test_an_array_numpy_cannot_export_is_a_user_error_not_a_valueerror(dtype):
    """(regression: the plan's binding let ctypes' ValueError "cannot include dtype 'M' in a
    buffer" out of a launch with a datetime64 array, the first and every later one)"""
    x = np.arange(2 * TILE, dtype=np.float32)
    _launch(x)
    bad = np.zeros(x.size, dtype)
    for _ in range(2):
        with pytest.raises(asc.UnsupportedArrayError, match="argument 'y' has unsupported dtype"):
            vadd_kernel[2](x, bad, np.zeros_like(x), TILE)
