"""Planned launches bound in native code (simulator/fast_launch.py, issue 14): a launch that
takes the fast path computes the same bits and the same report as the usual path; every
argument the binder refuses, every mode or state it does not cover takes the usual path with
the usual result or error; and the fast path is really taken where it should be."""
from __future__ import annotations

import linecache
import os
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ascendc_py as asc
from ascendc_py.compiler import jit
from ascendc_py.compiler.errors import NonContiguousArrayError
from ascendc_py.simulator import abi, block_runner, cores, fast_launch, runtime
from notebook_cells import CALLER_CELL, HELPER_CELL, run_cell

TILE = 256
#: odd sizes leave a tail that is not a multiple of 32 bytes: the same warning on both paths
pytestmark = pytest.mark.filterwarnings("ignore::ascendc_py.TruncatedCopyWarning")


@asc.kernel
def scale_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int, alpha: float,
                 negate: bool, tile: asc.ConstExpr[int]):
    """z = ±alpha·x over n elements; block i owns a contiguous share, tile by tile."""
    share = asc.ceildiv(asc.ceildiv(n, asc.get_block_num()), 16) * 16
    start = min(asc.get_block_idx() * share, n)
    end = min(start + share, n)
    x_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x)
    z_gm.set_global_buffer(z)
    pipe = asc.TPipe()
    q_in = asc.TQue(asc.TPosition.VECIN, 2)
    q_out = asc.TQue(asc.TPosition.VECOUT, 2)
    pipe.init_buffer(q_in, 2, tile * x.dtype.sizeof())
    pipe.init_buffer(q_out, 2, tile * x.dtype.sizeof())
    p = start
    while p < end:
        count = min(tile, end - p)
        a = q_in.alloc_tensor(x.dtype)
        asc.data_copy(a, x_gm[p:], count)
        q_in.enque(a)
        a = q_in.deque(x.dtype)
        b = q_out.alloc_tensor(x.dtype)
        asc.muls(b, a, alpha, count)
        if negate:
            asc.muls(b, b, -1.0, count)
        q_out.enque(b)
        q_in.free_tensor(a)
        b = q_out.deque(x.dtype)
        asc.data_copy(z_gm[p:], b, count)
        q_out.free_tensor(b)
        p += count


@pytest.fixture(autouse=True)
def _one_host_thread(monkeypatch):
    """Launches on the launching thread alone unless a test asks otherwise (``threads``): the
    small launches here sit near block_runner.SERIAL_SECONDS, and on a busy host their
    measured time would move them between one and two host threads from launch to launch
    (each change is one launch on the usual path)."""
    monkeypatch.setattr(block_runner, "SERIAL_SECONDS", 1e9)


@pytest.fixture
def taken(monkeypatch):
    """The launches FastLaunch.run served (a list of True) and refused (False)."""
    seen = []
    real = fast_launch.FastLaunch.run

    def run(self, *args):
        result = real(self, *args)
        seen.append(result is not None)
        return result

    monkeypatch.setattr(fast_launch.FastLaunch, "run", run)
    return seen


@pytest.fixture(params=["alone", "pool"])
def threads(request, monkeypatch):
    """Blocks on the launching thread alone, or offered to the host pool's workers too."""
    if request.param == "pool":
        monkeypatch.setattr(block_runner, "SERIAL_SECONDS", 0.0)
    else:
        monkeypatch.setattr(block_runner, "SERIAL_SECONDS", 1e9)
    return request.param


def _report_fields(report) -> dict:
    """Every simulated figure of a report (not the host's times)."""
    return {"cycles": int(report.cycles), "launch_cycles": int(report.launch_cycles),
            "time_us": report.time_us, "pipe_busy": dict(report.pipe_busy),
            "stalls": {k: int(v) for k, v in report.stalls.items()},
            "instructions": dict(report.instructions),
            "bytes_moved": {k: int(v) for k, v in report.bytes_moved.items()},
            "core_cycles": [int(c) for c in report.core_cycles],
            "bottleneck": report.bottleneck, "gm_bandwidth": report.gm_bandwidth_gbps,
            "waves": report.waves, "cores_used": report.cores_used,
            "blocks": [repr(b) for b in report._blocks]}


def _launch(blocks, x, n, alpha, negate, tile=TILE):
    z = np.full_like(x, 7)
    report = scale_kernel[blocks](x, z, n, alpha, negate, tile)
    return z, report


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("blocks,n", [(1, 1000), (2, 4096), (8, 3001), (3, 17)])
def test_fast_launches_give_the_usual_bits_and_report(dtype, blocks, n, threads, taken,
                                                      monkeypatch):
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n + 5).astype(dtype)
    got = []
    for enabled in (False, True):
        monkeypatch.setattr(fast_launch, "ENABLED", enabled)
        for alpha, negate in ((1.5, False), (-0.25, True), (3.0, True)):
            _launch(blocks, x, n, alpha, negate)          # (the plan and the fast path made)
            z, report = _launch(blocks, x, n, alpha, negate)
            got.append((z.tobytes(), _report_fields(report)))
    usual, fast = got[:3], got[3:]
    assert fast == usual
    assert taken and all(taken[-5:]), taken
    whole = n // 16 * 16     # (the tail of a copy not a multiple of 32 bytes is not copied)
    expected = (x[:whole].astype(np.float32) * dtype(3.0)).astype(dtype) * dtype(-1)
    assert fast[-1][0][:whole * x.itemsize] == expected.tobytes()


def test_the_binder_passed_its_self_check():
    assert fast_launch._functions() is not None


def test_refused_arguments_take_the_usual_path(taken):
    x = np.arange(1024, dtype=np.float32)
    for _ in range(3):
        _launch(2, x, 992, 2.0, False)
    assert taken[-1] is True
    z, _ = _launch(2, x.astype(np.float16), 992, 2.0, False)     # another dtype
    np.testing.assert_array_equal(z[:992], (x[:992] * 2).astype(np.float16))
    z, _ = _launch(2, x, 992, 2, False)                           # an int for a float
    np.testing.assert_array_equal(z[:992], x[:992] * 2)
    z, _ = _launch(2, x, 992, 2.0, 1)                             # an int for a bool
    np.testing.assert_array_equal(z[:992], -(x[:992] * 2))
    z, _ = _launch(2, x, 992, 2.0, False, tile=128)               # another constant
    np.testing.assert_array_equal(z[:992], x[:992] * 2)
    for enabled in (True, False):                                  # a strided array
        with pytest.MonkeyPatch.context() as m:
            m.setattr(fast_launch, "ENABLED", enabled)
            with pytest.raises(NonContiguousArrayError, match="'z' is not contiguous"):
                scale_kernel[2](x, np.zeros(2048, np.float32)[::2], 992, 2.0, False, TILE)
    read_only = x.copy()
    read_only.flags.writeable = False
    z, _ = _launch(2, read_only, 992, 2.0, False)                 # read-only input: fine
    np.testing.assert_array_equal(z[:992], x[:992] * 2)
    with pytest.raises(Exception) as fast:
        scale_kernel[2](x, np.zeros(1024, np.float32), 2 ** 31, 2.0, False, TILE)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(fast_launch, "ENABLED", False)
        with pytest.raises(Exception) as usual:
            scale_kernel[2](x, np.zeros(1024, np.float32), 2 ** 31, 2.0, False, TILE)
    assert type(fast.value) is type(usual.value) and str(fast.value) == str(usual.value)
    for _ in range(3):   # (a new specialisation compiled since retired the plans: remade)
        _launch(2, x, 992, 2.0, False)
    assert taken[-1] is True                           # the first signature is served again


def test_a_fault_on_the_fast_path_raises_as_on_the_usual_path(threads, taken, monkeypatch):
    x = np.arange(1024, dtype=np.float32)
    errors = []
    for enabled in (False, True):
        monkeypatch.setattr(fast_launch, "ENABLED", enabled)
        for _ in range(3):
            _launch(4, x, 1024, 2.0, False)
        with pytest.raises(asc.KernelError) as fault:
            scale_kernel[4](x, np.zeros(1024, np.float32), 4096, 2.0, False, TILE)  # n too big
        errors.append((type(fault.value), str(fault.value)))
    assert errors[0] == errors[1]
    assert taken[-1] is False or taken[-2] is True
    z, _ = _launch(4, x, 1024, 2.0, False)            # and the next launch is right
    np.testing.assert_array_equal(z, x * 2)


def test_a_redefined_or_replaced_helper_is_seen_by_the_next_fast_launch(taken):
    namespace = {"asc": asc, "__name__": "fast_launch_notebook"}
    names = [f"<fast-launch-cell-{os.getpid()}-{i}>" for i in range(4)]
    try:
        run_cell(namespace, HELPER_CELL, names[0])
        run_cell(namespace, CALLER_CELL, names[1])
        out = np.zeros(4, np.int32)
        for _ in range(3):
            namespace["caller"][1](out)
        assert out.tolist() == [0, 2, 4, 6] and taken[-1] is True
        run_cell(namespace, HELPER_CELL.replace("i * 2", "i * 3"), names[2])     # redefined
        namespace["caller"][1](out)
        assert out.tolist() == [0, 3, 6, 9]
        for _ in range(2):
            namespace["caller"][1](out)
        assert taken[-1] is True
        other = {"asc": asc}
        run_cell(other, HELPER_CELL.replace("i * 2", "i * 5"), names[3])
        namespace["scale"].fn.__code__ = other["scale"].fn.__code__   # (autoreload's way)
        namespace["caller"][1](out)
        assert out.tolist() == [0, 5, 10, 15]
    finally:
        for name in names:
            linecache.cache.pop(name, None)


def test_a_patched_run_blocks_sees_every_launch(monkeypatch, taken):
    x = np.arange(1024, dtype=np.float32)
    for _ in range(3):
        _launch(2, x, 992, 2.0, False)
    assert taken[-1] is True
    seen = []
    real = runtime.run_blocks
    monkeypatch.setattr(runtime, "run_blocks", lambda *a, **k: seen.append(1) or real(*a, **k))
    _launch(2, x, 992, 2.0, False)
    assert seen == [1]


def test_timing_and_loop_budget_changes_between_fast_launches(monkeypatch, taken):
    x = np.arange(1024, dtype=np.float32)
    for _ in range(3):
        _, on = _launch(2, x, 992, 2.0, False)
    jit.set_timing(False)
    try:
        _, off = _launch(2, x, 992, 2.0, False)
        _, off2 = _launch(2, x, 992, 2.0, False)
    finally:
        jit.set_timing(None)
    assert off.cycles == off2.cycles < on.cycles and off.launch_cycles == 0
    assert taken[-1] is True                   # (both timing modes on the fast path)
    _, again = _launch(2, x, 992, 2.0, False)
    assert again.cycles == on.cycles and taken[-1] is True
    monkeypatch.setenv("ASCENDC_PY_LOOP_BUDGET", "1")
    with pytest.raises(asc.KernelError, match="loop"):
        _launch(2, x, 992, 2.0, False)
    monkeypatch.delenv("ASCENDC_PY_LOOP_BUDGET")
    z, _ = _launch(2, x, 992, 2.0, False)
    np.testing.assert_array_equal(z[:992], x[:992] * 2)


def test_codegen_variants_in_alternation_each_keep_their_fast_path(taken):
    """(the benchmarks time the extent checks and fusion on and off in alternating calls)"""
    x = np.arange(1024, dtype=np.float32)
    results = {}
    for i in range(12):   # (a variant's first compile retires the other's plan: remade)
        checks = bool(i % 2)
        jit.set_extent_checks(checks)
        try:
            z, report = _launch(2, x, 992, 2.0, False)
        finally:
            jit.set_extent_checks(None)
        results.setdefault(checks, set()).add((z.tobytes(), report.cycles))
    assert all(len(v) == 1 for v in results.values())
    assert taken[-4:] == [True] * 4


def test_a_launch_from_another_thread_takes_the_usual_path(taken):
    x = np.arange(1024, dtype=np.float32)
    for _ in range(3):
        _launch(2, x, 992, 2.0, False)
    assert taken[-1] is True
    results = []
    worker = threading.Thread(target=lambda: results.append(_launch(2, x, 992, 2.0, False)[0]))
    worker.start()
    worker.join()
    np.testing.assert_array_equal(results[0][:992], x[:992] * 2)
    assert taken[-1] is False                  # (refused off the main thread)
    _launch(2, x, 992, 2.0, False)
    assert taken[-1] is True                   # and the main thread's is still served


def test_host_threads_changing_between_launches_keep_a_fast_path_each(taken, monkeypatch):
    x = np.arange(4096, dtype=np.float32)
    monkeypatch.setattr(scale_kernel[2], "_fast", {})   # (what earlier tests left)
    made = set()
    for i in range(16):
        monkeypatch.setattr(block_runner, "SERIAL_SECONDS", 0.0 if i % 8 < 4 else 1e9)
        z, _ = _launch(2, x, 4096, 2.0, False)
        np.testing.assert_array_equal(z, x * 2)
        made.update(id(f) for f in scale_kernel[2]._fast.values() if f is not None)
    assert len(made) == 2                 # (one per host-thread count, made once each)
    assert taken[-8:] == [False, True, True, True] * 2   # (a change: one usual launch)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_the_sepia_sample_on_the_fast_path_matches_its_first_launch(dtype, threads, taken):
    import pathlib
    import sys
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "samples"))
    try:
        from sepia import sepia
    finally:
        sys.path.pop(0)
    img = np.random.default_rng(7).random((2, 3, 40, 56), dtype=np.float32).astype(dtype)
    first_out, first = sepia(img)
    for _ in range(3):
        out, report = sepia(img)
    assert taken[-1] is True
    assert out.tobytes() == first_out.tobytes()
    assert _report_fields(report) == _report_fields(first)


# ----------------------------------------------------------------------------- the binder
class _Params:
    """A kernel as plan_key sees it: (name, kind, int allowed, float allowed) per parameter:
    x (gm), z (gm), n: int, alpha: float, negate: bool, tile (a constant)."""
    _plan_params = (("x", "gm", True, True), ("z", "gm", True, True),
                    ("n", "scalar", True, False), ("alpha", "scalar", False, True),
                    ("negate", "scalar", True, True), ("tile", "const", True, True))


def _good(draw) -> bool:
    """Mostly True: most generated arguments are ones the reference call takes, so that
    whole tuples are taken often enough to check what the binder writes."""
    return draw(st.integers(0, 9)) < 8


def _arrays(draw, dtype):
    base = np.arange(draw(st.integers(0, 40)), dtype=dtype)
    how = "plain" if _good(draw) else draw(st.sampled_from([
        "read_only", "strided", "2d", "2d_t", "offset", "other_dtype", "list", "scalar_array"]))
    if how == "read_only":
        base.flags.writeable = False
    elif how == "strided":
        base = base[::2]
    elif how == "2d" and base.size % 4 == 0:
        base = base.reshape(4, -1)
    elif how == "2d_t" and base.size % 4 == 0 and base.size:
        base = base.reshape(4, -1).T
    elif how == "offset" and base.size > 2:      # a view one byte off: misaligned data
        base = np.frombuffer(base.tobytes() + b"\0", np.uint8)[1:1 + base.nbytes].view(dtype)
    elif how == "other_dtype":
        base = base.astype(np.float64)
    elif how == "list":
        return base.tolist()
    elif how == "scalar_array":
        return np.array(3, dtype)
    return base


@st.composite
def _argument_tuples(draw):
    ints = st.sampled_from([0, 1, -1, 7, 2 ** 31 - 1, 2 ** 31, -2 ** 31, -2 ** 31 - 1, 2 ** 63,
                            True, 1.5, "7"])
    floats = st.sampled_from([0.0, -0.0, 1.5, float("inf"), float("nan"), 3, True])
    bools = st.sampled_from([True, False, 1, 0, 1.0])
    consts = st.sampled_from([256, int("256"), 255, 256.0, True, "256"])
    goods = (st.sampled_from([0, 1, -1, 7, 2 ** 31 - 1, -2 ** 31]), st.sampled_from(
        [0.0, -0.0, 1.5, float("inf"), float("nan")]), st.booleans(),
        st.sampled_from([256, int("256")]))
    scalars = [draw(good if _good(draw) else every)
               for good, every in zip(goods, (ints, floats, bools, consts))]
    args = (_arrays(draw, np.float16), _arrays(draw, np.float32), *scalars)
    cut = 6 if _good(draw) else draw(st.sampled_from([5, 7]))
    return args[:cut] if cut <= 6 else args + (1,)


_REFERENCE = (np.zeros(4, np.float16), np.zeros(4, np.float32), 1, 1.0, True, 256)


def test_the_binder_takes_exactly_what_plan_key_binds_to_the_same_key():
    """asc_bind_args (the fast path) and plan_key (the planned path) agree on every argument
    tuple: the binder takes it iff plan_key binds it to the reference call's key, and then
    writes plan_key's addresses, sizes and scalars. Both outcomes must occur often."""
    from ascendc_py.dsl.launcher import launch_names, plan_key
    names = launch_names()
    bind, shared = fast_launch._functions()
    reference = plan_key(_Params, _REFERENCE, names)
    slots = list(range(20, 20 + 2 * 2 + 3))        # ptr x, ptr z, size x, size z, 3 scalars
    kinds = [(abi.BIND_ARRAY, id(np.dtype(np.float16)), 2, slots[0], slots[2]),
             (abi.BIND_ARRAY, id(np.dtype(np.float32)), 4, slots[1], slots[3]),
             (abi.BIND_INT32, 0, 0, slots[4], 0), (abi.BIND_FLOAT64, 0, 0, slots[5], 0),
             (abi.BIND_BOOL_, 0, 0, slots[6], 0), (abi.BIND_CONST, id(int), id(256), 0, 0)]
    spec = fast_launch._Spec({**shared, abi.BIND_SIGINT: 0}, kinds, [])
    job = np.zeros(32, np.int64)
    outcomes = []

    @settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(args=_argument_tuples())
    def agree(args):
        job[:] = 0
        taken = bind(spec.address, job.ctypes.data, args) == 0
        bound = plan_key(_Params, args, names)
        assert taken == (bound is not None and bound[0] == reference[0]), (args, bound)
        outcomes.append(taken)
        if taken:
            _, gm, scalars = bound
            assert list(job[slots[0]:slots[2]]) == [g.address for g in gm]
            assert list(job[slots[2]:slots[4]]) == [g.nbytes for g in gm]
            words = [int(np.float64(v).view(np.int64)) if type(v) is float else int(v)
                     for v, _ in scalars]
            assert list(job[slots[4]:slots[4] + 3]) == words

    agree()
    assert 0.1 < sum(outcomes) / len(outcomes) < 0.9, (sum(outcomes), len(outcomes))


@pytest.mark.parametrize("whole", [True, False])
def test_a_launch_buffer_from_a_whole_or_a_front_template_gives_the_same_launch(
        whole, threads, taken, monkeypatch):
    """(block_runner.WHOLE_TEMPLATE_BYTES: many blocks keep only the buffer's front)"""
    monkeypatch.setattr(block_runner, "WHOLE_TEMPLATE_BYTES", 1 << 30 if whole else 0)
    blocks = 5 if whole else 6           # (a layout of its own, made under the setting)
    x = np.random.default_rng(3).standard_normal(blocks * 512).astype(np.float32)
    got = []
    for enabled in (False, True):
        monkeypatch.setattr(fast_launch, "ENABLED", enabled)
        for _ in range(3):
            z = np.zeros_like(x)
            report = scale_kernel[blocks](x, z, x.size, 1.5, True, 128)
        got.append((z.tobytes(), _report_fields(report)))
    assert got[0] == got[1] and taken[-1] is True
    fast = [f for f in scale_kernel[blocks]._fast.values() if f is not None]
    assert fast and all(f.lay.whole == whole for f in fast)
    np.testing.assert_array_equal(z, -(x * np.float32(1.5)))


@asc.kernel
def offset_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int, delta: float):
    """z = x + delta over n elements on one queue and a TBuf: a core shape (queue count) other
    than scale_kernel's."""
    x_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x)
    z_gm.set_global_buffer(z)
    share = asc.ceildiv(asc.ceildiv(n, asc.get_block_num()), 16) * 16
    start = min(asc.get_block_idx() * share, n)
    end = min(start + share, n)
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 1)
    tmp = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(q, 1, 128 * x.dtype.sizeof())
    pipe.init_buffer(tmp, 128 * x.dtype.sizeof())
    p = start
    while p < end:
        count = min(128, end - p)
        a = q.alloc_tensor(x.dtype)
        asc.data_copy(a, x_gm[p:], count)
        q.enque(a)
        a = q.deque(x.dtype)
        t = tmp.get(x.dtype)
        asc.adds(t, a, delta, count)
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        asc.data_copy(z_gm[p:], t, count)
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        q.free_tensor(a)
        p += count


@pytest.mark.parametrize("cores_kept", [cores.CORES_PER_THREAD, 1])
def test_kernels_launched_in_turn_each_keep_their_fast_path(threads, taken, cores_kept,
                                                          monkeypatch):
    """Two kernels of different core shapes (and a third launch shape) launched in turn, as a
    training step's ops are: each thread keeps a core per shape and each core its templates,
    so every launch after the first few is served by its FastLaunch (before: each launch
    replaced the thread's core and remade its FastLaunch, 108 us against 10 us a launch);
    the bits and reports are those of the usual path. With one core kept per thread, each
    switch makes a new core, and the launches are still right."""
    monkeypatch.setattr(cores, "CORES_PER_THREAD", cores_kept)
    x = np.random.default_rng(5).standard_normal(2048).astype(np.float32)
    launches = [lambda z: scale_kernel[4](x, z, x.size, 1.5, True, TILE),
                lambda z: offset_kernel[4](x, z, x.size, 0.25),
                lambda z: scale_kernel[2](x, z, x.size, -2.0, False, TILE)]
    got = []
    for enabled in (False, True):
        monkeypatch.setattr(fast_launch, "ENABLED", enabled)
        rounds = []
        for _ in range(4):
            for launch in launches:
                z = np.zeros_like(x)
                report = launch(z)
                rounds.append((z.tobytes(), _report_fields(report)))
        got.append(rounds)
    assert got[0] == got[1]
    np.testing.assert_array_equal(np.frombuffer(got[1][-2][0], np.float32),
                                  x + np.float32(0.25))
    if cores_kept > 1:
        assert taken[-6:] == [True] * 6, taken
        kept = runtime._thread_cores.cores
        assert len({id(c) for c in kept.values()}) == len(kept) >= 2
