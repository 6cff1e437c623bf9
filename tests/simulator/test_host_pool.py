"""The host pool of the native block loop (simulator/block_runner.py, asc_pool_* in
compiler/codegen/block_loop.py): a multi-thread launch is one native call, its workers' blocks
compute the same bits and figures, launches from several Python threads at once are safe, and a
worker that never started cannot hang a launch."""
from __future__ import annotations

import threading
import time
import warnings

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.simulator import abi, block_runner, runtime
from kernels_for_tests import TILE, vadd_kernel

pytestmark = pytest.mark.skipif(not block_runner.available() or
                                block_runner._functions()[4] is None,
                                reason="the runtime library has no host pool on this host")


def _figures(report) -> tuple:
    return (int(report.cycles), [int(b.cycles) for b in report._blocks],
            [b.counters.tolist() for b in report._blocks])


@pytest.fixture
def two_threads(monkeypatch):
    """Every multi-block launch asks for helper threads (runtime.WORKERS of them, at least 2)."""
    monkeypatch.setattr(block_runner, "SERIAL_SECONDS", 0.0)
    monkeypatch.setattr(runtime, "WORKERS", max(2, runtime.WORKERS))


def _launches_until_a_worker_ran(ran, seconds: float = 30.0):
    """Launch numbers 0, 1, ... until a pool worker ran blocks in some launch and at least four
    launches were made, or ``seconds`` passed. Whether a woken worker gets a CPU before the
    launching thread has run every block is up to the host's scheduler: on a machine whose
    other CPU is busy (``pytest -n 2``) it can take many launches, so the bound is time."""
    deadline = time.monotonic() + seconds
    i = 0
    while i < 4 or (not ran() and time.monotonic() < deadline):
        yield i
        i += 1


def _spy_runs(monkeypatch) -> list:
    """The NativeLaunch of every launch from now on."""
    runs = []
    real = block_runner.run
    monkeypatch.setattr(block_runner, "run", lambda *a, **k: runs.append(real(*a, **k))
                        or runs[-1])
    return runs


def _worker_ran(result) -> bool:
    """Whether the first pool worker took its share of a launch (its thread record went
    from waiting to running)."""
    buf, lay, _ = result._records
    return lay.threads > 1 and buf[lay.records + lay.record + abi.THREAD_STATE] == \
        abi.THREAD_RUNNING


def test_a_pool_launch_is_one_native_call_with_the_same_figures(two_threads, monkeypatch):
    blocks, n = 16, 16 * TILE * 4
    rng = np.random.default_rng(5)
    x, y = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    z = np.zeros(n, np.float32)
    serial = _figures(vadd_kernel[blocks](x, y, z, n // blocks))
    calls = []
    native = list(block_runner._functions())
    launch = native[4]
    native[4] = lambda *a: calls.append(a) or launch(*a)
    monkeypatch.setattr(block_runner, "_native", tuple(native))
    python_pool = []
    monkeypatch.setattr(runtime, "_executor", lambda: python_pool.append(1))
    runs = _spy_runs(monkeypatch)
    ran = 0
    for i in _launches_until_a_worker_ran(lambda: ran):
        z = np.zeros(n, np.float32)
        figures = _figures(vadd_kernel[blocks](x, y, z, n // blocks))
        np.testing.assert_array_equal(z, x + y)
        assert figures == serial
        ran += _worker_ran(runs[-1])
    assert len(calls) == len(runs) and not python_pool   # one native call per launch
    assert ran, "no launch had a pool worker run blocks"


def test_launches_from_several_python_threads_at_once(two_threads):
    blocks, n = 8, 8 * TILE * 2
    x = np.arange(n, dtype=np.float32)
    expected = _figures(vadd_kernel[blocks](x, x, np.zeros(n, np.float32), n // blocks))
    errors = []

    def launches(seed: int) -> None:
        try:
            y = np.full(n, seed, np.float32)
            for _ in range(25):
                z = np.zeros(n, np.float32)
                report = vadd_kernel[blocks](x, y, z, n // blocks)
                np.testing.assert_array_equal(z, x + y)
                assert len(report._blocks) == blocks
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=launches, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    launches(7)
    for t in threads:
        t.join(120)
        assert not t.is_alive(), "a launch from a Python thread did not finish"
    assert not errors, errors[0]
    assert _figures(vadd_kernel[blocks](x, x, np.zeros(n, np.float32), n // blocks)) == \
        expected


def test_a_worker_that_never_started_cannot_hang_a_launch(two_threads, monkeypatch):
    """A pool whose threads could not start: the launching thread runs every block and
    withdraws the offers no worker took."""
    def refuse(self):
        raise RuntimeError("can't start new thread")
    with monkeypatch.context() as m:
        m.setattr(threading.Thread, "start", refuse)
        pool = block_runner._HostPool(runtime.WORKERS - 1, block_runner._functions()[5])
    assert pool.threads == []
    monkeypatch.setattr(block_runner, "_pool", pool)
    blocks, n = 8, 8 * TILE
    x = np.arange(n, dtype=np.float32)
    done = []

    def launch():
        for _ in range(3):
            z = np.zeros(n, np.float32)
            vadd_kernel[blocks](x, x, z, n // blocks)
            done.append(bool((z == 2 * x).all()))
    t = threading.Thread(target=launch, daemon=True)
    t.start()
    t.join(60)
    assert done == [True, True, True]
    assert pool.lock.acquire(False)    # every launch let go of the pool
    pool.lock.release()


def test_a_launch_that_finds_the_pool_taken_runs_on_its_own_thread(two_threads, monkeypatch):
    runs = _spy_runs(monkeypatch)
    blocks, n = 8, 8 * TILE
    x = np.arange(n, dtype=np.float32)
    vadd_kernel[blocks](x, x, np.zeros(n, np.float32), n // blocks)
    pool = block_runner._pool
    assert pool is not None and runs[-1]._records[1].threads > 1
    assert pool.lock.acquire(False)
    try:
        z = np.zeros(n, np.float32)
        vadd_kernel[blocks](x, x, z, n // blocks)
    finally:
        pool.lock.release()
    np.testing.assert_array_equal(z, 2 * x)
    assert runs[-1]._records[1].threads == 1


def test_a_launch_never_offers_more_workers_than_the_pool_has(two_threads, monkeypatch):
    """runtime.WORKERS raised after the pool was made: the launch uses the workers there are
    (it wrote past the pool record before)."""
    blocks, n = 8, 8 * TILE
    x = np.arange(n, dtype=np.float32)
    vadd_kernel[blocks](x, x, np.zeros(n, np.float32), n // blocks)   # the pool exists now
    pool = block_runner._pool
    guard = pool.record.copy()
    monkeypatch.setattr(runtime, "WORKERS", len(pool.cores) + 4)
    runs = _spy_runs(monkeypatch)
    for _ in range(5):
        z = np.zeros(n, np.float32)
        vadd_kernel[blocks](x, x, z, n // blocks)
        np.testing.assert_array_equal(z, 2 * x)
    assert runs[-1]._records[1].threads == len(pool.cores) + 1
    assert pool.record.size == guard.size


#: iterations each block of busy_then_bad spins: milliseconds, so that a worker woken on a
#: busy CPU is scheduled while block 0 still runs (a few microseconds were often too short)
BUSY = 200_000


@asc.kernel
def busy_then_bad(z: asc.GlobalAddress, bad: int, n: int):
    """Every block spins ``n`` iterations on its own element; block ``bad`` then writes past
    the end of z (64 float32)."""
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 64)
    for i in range(n):
        zg.set_value(asc.get_block_idx() % 64, 1.0)
    if asc.get_block_idx() == bad:
        zg.set_value(64 + bad, 1.0)


@asc.kernel
def truncating(x: asc.GlobalAddress, z: asc.GlobalAddress, count: int, n: int):
    """Each block spins, then copies ``count`` float32 in (a count that is not a multiple of 8
    warns) and 8 out."""
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)
    zg.set_global_buffer(z + asc.get_block_idx() * 8, 8)
    for i in range(n):
        zg.set_value(0, 0.0)
    t = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 64)
    asc.data_copy(t, xg, count)
    asc.data_copy(zg, t, 8)


@pytest.mark.parametrize("bad", [0, 13, 31])
def test_a_failing_block_on_the_pool_raises_as_in_the_python_loop(bad, two_threads,
                                                                   monkeypatch):
    z = np.zeros(64, np.float32)
    with monkeypatch.context() as m:
        m.setattr(block_runner, "ENABLED", False)
        with pytest.raises(asc.GMOutOfBoundsError) as python_loop:
            busy_then_bad[32](z, bad, BUSY)
    pool_launches = []       # (layout, buffer) of each launch on the pool
    real = block_runner._run_pool
    monkeypatch.setattr(block_runner, "_run_pool",
                        lambda *a: pool_launches.append((a[1], a[2])) or real(*a))
    ran = 0
    for i in _launches_until_a_worker_ran(lambda: ran):
        with pytest.raises(asc.GMOutOfBoundsError) as native:
            busy_then_bad[32](z, bad, BUSY)
        assert str(native.value) == str(python_loop.value)
        lay, buf = pool_launches[-1]
        ran += buf[lay.records + lay.record + abi.THREAD_STATE] == abi.THREAD_RUNNING
    assert ran, "no launch had a pool worker run blocks"
    z[:] = 0
    busy_then_bad[32](z, -1, BUSY)      # the next launch runs every block again
    np.testing.assert_array_equal(z[:32], 1.0)


def test_warnings_of_blocks_on_the_pool_as_in_the_python_loop(two_threads, monkeypatch):
    x = np.arange(64, dtype=np.float32)

    def launch(native: bool) -> list:
        z = np.zeros(16 * 8, np.float32)
        with monkeypatch.context() as m, warnings.catch_warnings(record=True) as found:
            m.setattr(block_runner, "ENABLED", native)
            warnings.simplefilter("always")
            truncating[16](x, z, 13, 2000)
        np.testing.assert_array_equal(z, np.tile(x[:8], 16))
        return sorted(str(w.message) for w in found)

    expected = launch(False)
    assert any("data_copy of 52 bytes" in m for m in expected)
    runs = _spy_runs(monkeypatch)
    ran = 0
    for i in range(60):
        assert launch(True) == expected
        ran += _worker_ran(runs[-1])
        if ran and i >= 3:
            break
    assert ran, "no launch had a pool worker run blocks"



@asc.kernel
def count_up(x: asc.GlobalAddress, n: int, first: int):
    """Each block counts in its own element of x (a long scalar loop): block 0 to ``first``,
    the others to ``n``."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x + asc.get_block_idx() * 8, 8)
    count = n
    if asc.get_block_idx() == 0:
        count = first
    for i in range(count):
        xg.set_value(0, i)


def _thread_state(tid: int) -> str:
    """A thread's scheduler state letter (R running or runnable, S sleeping) from /proc."""
    with open(f"/proc/self/task/{tid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


@pytest.mark.skipif(not hasattr(threading.Thread, "native_id"), reason="no thread ids")
def test_a_worker_spins_after_its_share_however_long_it_took(two_threads):
    """The worker's spin for the next launch (POOL_SPIN) counts from the end of its share: it
    used to count from its claim, so a worker whose share outlasted the spin went to sleep at
    once and every next launch had to wake it through the kernel. Block 1 (the worker's,
    when it claims it while the launching thread runs the short block 0) takes ~0.3 s and the
    spin is 0.1 s; the launch ends with the worker's share, and the worker is read at once."""
    x = np.zeros(16, np.float32)
    count_up[1](x, 1000, 1000)
    t0 = time.perf_counter()
    count_up[1](x, 1_000_000, 1_000_000)
    per_iteration = (time.perf_counter() - t0) / 1_000_000
    n = min(30_000_000, max(1_000_000, int(0.3 / per_iteration)))
    first = max(1000, int(0.005 / per_iteration))   # ~5 ms: time for the worker to claim
    count_up[2](x, 1000, 1000)                       # makes the pool
    pool = block_runner._pool
    saved = int(pool.record[abi.POOL_SPIN])
    pool.record[abi.POOL_SPIN] = int(per_iteration * n / 3 * 1e9)
    state = None
    try:
        worker_ctx = pool.ready[4][0]               # (the worker's core, this launch shape)
        for _ in _launches_until_a_worker_ran(lambda: worker_ctx[abi.BLOCK_IDX] == 1):
            worker_ctx[abi.BLOCK_IDX] = -1
            count_up[2](x, n, first)
            state = _thread_state(pool.threads[0].native_id)
            if worker_ctx[abi.BLOCK_IDX] == 1:      # the worker ran block 1
                break
        else:
            pytest.skip("no launch had the pool worker run block 1")
    finally:
        pool.record[abi.POOL_SPIN] = saved
    np.testing.assert_array_equal(x[[0, 8]], [first - 1, np.float32(n - 1)])
    assert state == "R", f"the worker is {state!r} right after its share, not spinning"


@pytest.mark.skipif(block_runner._getcpu is None, reason="no sched_getcpu on this host")
def test_the_launching_cpu_is_asked_on_the_first_pool_launch_then_every_16th(two_threads,
                                                                             monkeypatch):
    x = np.arange(2 * TILE, dtype=np.float32)
    z = np.zeros_like(x)
    vadd_kernel[2](x, x, z, TILE)
    pool = block_runner._pool
    if pool is None or not pool.cores:
        pytest.skip("the host pool has no worker here")
    asked, moved = [], []
    cpus = iter(range(100, 200))       # a launching thread that moves between every question
    monkeypatch.setattr(block_runner, "_getcpu", lambda: asked.append(1) or next(cpus))
    monkeypatch.setattr(block_runner._HostPool, "keep_off", lambda self, cpu: moved.append(cpu))
    monkeypatch.setattr(pool, "launches", -1)     # (as a new pool: its first launch asks)
    for _ in range(33):
        vadd_kernel[2](x, x, z, TILE)
    np.testing.assert_array_equal(z, x + x)
    assert len(asked) == 3 and moved == [100, 101, 102]
