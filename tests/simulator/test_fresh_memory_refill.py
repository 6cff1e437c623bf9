"""Fresh local memory on the native block loop (codegen/block_loop.py): every block starts with
every byte of every local memory FRESH_MEMORY_BYTE, as the Python loop of runtime.py gives it,
while only the bytes earlier blocks on the core may have changed are written again (those below
the furthest end ``check_local`` passed: abi.LOCAL_REACH, counted in the core's ``dirty``)."""
from __future__ import annotations

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.simulator import block_runner, runtime
from kernels_for_tests import TILE, vadd_kernel

UB_BYTES = 192 * 1024
FAR = UB_BYTES - 4096          # a byte offset near the end of UB (float32 elements: FAR // 4)


@asc.kernel
def scribble(z: asc.GlobalAddress, at: asc.ConstExpr[int], n: asc.ConstExpr[int]):
    """Writes 1.0 into n float32 of UB at byte ``at`` (a static tensor: no allocation)."""
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 8)
    t = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, at, n)
    asc.duplicate(t, 1.0, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(zg, t, 8)


@asc.kernel
def peek(z: asc.GlobalAddress, at: asc.ConstExpr[int], n: asc.ConstExpr[int]):
    """Copies n float32 of UB at byte ``at`` to z without writing them first."""
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, n)
    t = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, at, n)
    asc.data_copy(zg, t, n)


@asc.kernel
def write_then_peek(z: asc.GlobalAddress, at: asc.ConstExpr[int], n: asc.ConstExpr[int]):
    """Block 0 writes n float32 of UB at byte ``at``; every other block copies them out
    unwritten (each block to its own n elements of z)."""
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z + asc.get_block_idx() * n, n)
    t = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, at, n)
    if asc.get_block_idx() == 0:
        asc.duplicate(t, 2.0, n)
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(zg, t, n)


def _fresh_bytes(nbytes: int) -> np.ndarray:
    return np.full(nbytes, runtime.FRESH_MEMORY_BYTE, np.uint8)


def _assert_core_fresh_beyond_dirty() -> None:
    """This thread's core: every byte past its dirty count holds FRESH_MEMORY_BYTE."""
    core = runtime._thread_cores.core
    for k, (mem, (_, view)) in enumerate(core.memories.items()):
        rest = view[int(core.dirty[k]):]
        bad = np.flatnonzero(rest != runtime.FRESH_MEMORY_BYTE)
        assert not len(bad), (f"{mem.name}: byte {int(core.dirty[k]) + int(bad[0])} changed "
                              f"past the dirty count {int(core.dirty[k])}")


@pytest.mark.parametrize("native", [True, False])
@pytest.mark.parametrize("at", [0, 4096, FAR])
def test_bytes_an_earlier_launch_wrote_read_fresh(native, at, monkeypatch):
    """A launch writes UB; the next launch on the same thread reads those bytes unwritten and
    gets FRESH_MEMORY_BYTE in every byte, on both loops."""
    monkeypatch.setattr(block_runner, "ENABLED", native)
    n = 1024
    scribble[1](np.zeros(8, np.float32), at, n)
    z = np.zeros(n, np.float32)
    peek[1](z, at, n)
    np.testing.assert_array_equal(z.view(np.uint8), _fresh_bytes(4 * n))


@pytest.mark.parametrize("blocks", [2, 5])
def test_bytes_an_earlier_block_wrote_read_fresh(blocks, monkeypatch):
    """Within one launch: block 0 writes, the later blocks (on the same host thread, or on
    another) read unwritten bytes; native and Python loop give the same bytes."""
    n = 512
    out = {}
    for native in (True, False):
        monkeypatch.setattr(block_runner, "ENABLED", native)
        z = np.zeros(blocks * n, np.float32)
        write_then_peek[blocks](z, FAR, n)
        out[native] = z.view(np.uint8).copy()
        np.testing.assert_array_equal(z[:n], 2.0)
        np.testing.assert_array_equal(z[n:].view(np.uint8), _fresh_bytes(4 * n * (blocks - 1)))
    np.testing.assert_array_equal(out[True], out[False])


def test_only_reached_bytes_are_counted_dirty(monkeypatch):
    """vadd reaches its three tiles; a static tensor near the end of UB reaches that far.
    After each launch every byte past the count is fresh."""
    monkeypatch.setattr(block_runner, "SERIAL_SECONDS", 1e9)   # every block on this thread
    x = np.ones(4 * TILE, np.float32)
    scribble[1](np.zeros(8, np.float32), FAR, 1024)     # the whole UB up to FAR + 4 KB
    _assert_core_fresh_beyond_dirty()
    core = runtime._thread_cores.core
    assert int(core.dirty[0]) == FAR + 4096
    vadd_kernel[4](x, x, np.zeros_like(x), TILE)
    _assert_core_fresh_beyond_dirty()
    core = runtime._thread_cores.core
    assert 0 < int(core.dirty[0]) <= 3 * TILE * 4 + 3 * 32    # three tiles (aligned)


def test_python_loop_counts_the_whole_memory_dirty(monkeypatch):
    """A block of the Python loop (sanitize, trace, print, lenient) is not tracked: the next
    native block refills the whole memory."""
    x = np.ones(TILE, np.float32)
    vadd_kernel[1](x, x, np.zeros_like(x), TILE, trace=True)
    core = runtime._thread_cores.core
    assert [int(d) for d in core.dirty] == [view.size for _, view in core.memories.values()]
    z = np.zeros(1024, np.float32)
    peek[1](z, 0, 1024)
    np.testing.assert_array_equal(z.view(np.uint8), _fresh_bytes(4096))


def test_samples_leave_no_byte_changed_past_the_count(monkeypatch):
    """The invariant over every launch of the vector samples: after each native launch, the
    bytes past the core's dirty counts are fresh (what the blocks wrote lies below them)."""
    import importlib
    import pathlib
    import sys
    from ascendc_py import profiler
    samples = pathlib.Path(__file__).resolve().parents[2] / "samples"
    checked = []

    def check(report):
        if report.kernel_type == "AIV_ONLY" and getattr(runtime._thread_cores, "core", None):
            _assert_core_fresh_beyond_dirty()
            checked.append(report.kernel)

    monkeypatch.setattr(block_runner, "SERIAL_SECONDS", 1e9)   # every block on this thread
    profiler.observe(check)
    sys.path.insert(0, str(samples))
    try:
        for name in ("add_tque", "add_flags", "sepia", "softmax", "layernorm", "leaky_relu"):
            importlib.import_module(name).main()
    finally:
        sys.path.remove(str(samples))
        profiler.unobserve(check)
    assert checked
