"""The native block loop (simulator/block_runner.py, codegen/block_loop.py) against the Python
loop of runtime.py: the same bits, the same report figures, the same faults and warnings,
whichever host threads run the blocks."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.simulator import block_runner, runtime
from kernels_for_tests import TILE, vadd_kernel


def _figures(report) -> dict:
    return {"cycles": int(report.cycles), "pipe_busy": dict(report.pipe_busy),
            "stalls": {k: int(v) for k, v in report.stalls.items()},
            "instructions": dict(report.instructions),
            "bytes_moved": {k: int(v) for k, v in report.bytes_moved.items()},
            "core_cycles": [int(c) for c in report.core_cycles],
            "block_cycles": [int(b.cycles) for b in report._blocks],
            "counters": [b.counters.tolist() for b in report._blocks]}


def _launch(native: bool, monkeypatch, fn):
    with monkeypatch.context() as m:
        m.setattr(block_runner, "ENABLED", native)
        return fn()


def test_native_loop_is_the_default_path(monkeypatch):
    calls = []
    real = block_runner.run
    monkeypatch.setattr(block_runner, "run", lambda *a, **k: calls.append(1) or real(*a, **k))
    x = np.ones(TILE, np.float32)
    vadd_kernel[1](x, x, np.zeros_like(x), TILE)
    assert calls == [1]
    assert block_runner.available()


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("blocks", [1, 3, 8, 13])
def test_same_bits_and_report_as_the_python_loop(dtype, blocks, monkeypatch):
    rng = np.random.default_rng(blocks)
    n = blocks * TILE * 3
    x = rng.standard_normal(n).astype(dtype)
    y = rng.standard_normal(n).astype(dtype)
    results = {}
    for native in (False, True):
        z = np.full(n, 9, dtype)
        report = _launch(native, monkeypatch,
                         lambda: vadd_kernel[blocks](x, y, z, n // blocks))
        results[native] = (z, _figures(report), isinstance(report._blocks, list))
    np.testing.assert_array_equal(results[True][0].view(np.uint8),
                                  results[False][0].view(np.uint8))
    assert results[True][1] == results[False][1]
    np.testing.assert_array_equal(results[True][0], x + y)


@pytest.mark.parametrize("serial_seconds", [0.0, 1e9])
def test_threads_or_launching_thread_alone_give_the_same_result(serial_seconds, monkeypatch):
    """SERIAL_SECONDS 0: helper threads join from the second launch on; huge: one thread."""
    monkeypatch.setattr(block_runner, "SERIAL_SECONDS", serial_seconds)
    blocks, n = 16, 16 * TILE * 2
    x = np.arange(n, dtype=np.float32)
    figures = []
    for _ in range(4):
        z = np.zeros(n, np.float32)
        figures.append(_figures(vadd_kernel[blocks](x, x, z, n // blocks)))
        np.testing.assert_array_equal(z, 2 * x)
    assert all(f == figures[0] for f in figures)


def test_many_blocks_of_an_empty_kernel(monkeypatch):
    z = np.zeros(64, np.float32)
    report = one_bad_block[2000](z, -1)
    assert report.block_dim == 2000 and len(report._blocks) == 2000
    assert [b.block for b in report._blocks] == list(range(2000))
    np.testing.assert_array_equal(z, 1.0)


@asc.kernel
def one_bad_block(z: asc.GlobalAddress, bad: int):
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 64)
    if asc.get_block_idx() == bad:
        zg.set_value(64 + bad, 1.0)
    zg.set_value(asc.get_block_idx() % 64, 1.0)


@pytest.mark.parametrize("bad", [0, 5, 31])
def test_a_failing_block_raises_as_in_the_python_loop(bad, monkeypatch):
    messages = {}
    for native in (False, True):
        z = np.zeros(64, np.float32)
        with pytest.raises(asc.GMOutOfBoundsError, match=rf"\(block {bad}\)") as info:
            _launch(native, monkeypatch, lambda: one_bad_block[32](z, bad))
        messages[native] = str(info.value)
    assert messages[True] == messages[False]
    z = np.zeros(64, np.float32)
    one_bad_block[32](z, -1)             # the next launch runs every block again
    np.testing.assert_array_equal(z[:32], 1.0)


@asc.kernel
def truncating_copy(x: asc.GlobalAddress, z: asc.GlobalAddress, count: int):
    """Each block copies ``count`` float32 in and 8 out: a count that is not a multiple of 8
    is truncated (a TruncatedCopyWarning per block)."""
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)
    zg.set_global_buffer(z + asc.get_block_idx() * 8, 8)
    t = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 64)
    asc.data_copy(t, xg, count)
    asc.data_copy(zg, t, 8)


def test_warnings_of_every_block_as_in_the_python_loop(monkeypatch):
    x = np.arange(64, dtype=np.float32)
    caught = {}
    for native in (False, True):
        z = np.zeros(8 * 8, np.float32)
        with warnings.catch_warnings(record=True) as found:
            warnings.simplefilter("always")
            _launch(native, monkeypatch, lambda: truncating_copy[8](x, z, 13))
        caught[native] = sorted(str(w.message) for w in found)
        np.testing.assert_array_equal(z, np.tile(x[:8], 8))
    assert caught[True] == caught[False]
    assert any("data_copy of 52 bytes" in m for m in caught[True])


@asc.kernel
def loops(z: asc.GlobalAddress, n: int):
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 64)
    for i in range(n):
        zg.set_value(asc.get_block_idx() % 64, 1.0)


@pytest.mark.parametrize("native", [False, True])
def test_blocks_that_start_after_a_stop_get_its_budget(native, monkeypatch):
    """A launch the watchdog stopped before its blocks start: straight-line blocks still run
    to their end, a block with a loop stops at its first iteration, on either path."""
    real = runtime.LaunchStop

    class StoppedAtOnce(real):
        def __init__(self, job=None):
            super().__init__(job)
            self.stop()

    monkeypatch.setattr(block_runner, "ENABLED", native)
    monkeypatch.setattr(runtime, "LaunchStop", StoppedAtOnce)
    z = np.zeros(64, np.float32)
    one_bad_block[4](z, -1)
    np.testing.assert_array_equal(z[:4], 1.0)
    with pytest.raises(asc.LoopLimitError, match="(?i)time"):
        loops[4](z, 3)
