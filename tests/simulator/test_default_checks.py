"""What the default mode checks besides extents (issue 11 §2): TQue tensors used after
free_tensor or read by a pipe another pipe's write was not handed over to, truncated copies;
what it leaves to sanitize mode (the report says so); asc.testing runs kernels in sanitize mode
by default and a failed comparison suggests it; in sanitize mode the root cause comes first."""
from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import ascendc_py as asc

N = 64


@asc.kernel
def queue_misuse(x: asc.GlobalAddress, z: asc.GlobalAddress, CASE: asc.ConstExpr[int]):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, N)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, N)
    pipe = asc.TPipe()
    qi = asc.TQue(asc.TPosition.VECIN, 1)
    qo = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(qi, 1, N * 4)
    pipe.init_buffer(qo, 1, N * 4)
    a = qo.alloc_tensor(asc.float32) if CASE == 2 else qi.alloc_tensor(asc.float32)
    asc.data_copy(a, xg, N)  # copy-in
    if CASE in (0, 3, 5):
        qi.enque(a)
        a = qi.deque(asc.float32)
    if CASE == 2:                                   # a copy-in through a VECOUT queue
        qo.enque(a)
        a = qo.deque(asc.float32)
    if CASE == 4:                                   # ordered by flags instead of the queue
        asc.set_flag(asc.HardEvent.MTE2_V, 0)
        asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    o = a if CASE == 2 else qo.alloc_tensor(asc.float32)
    asc.muls(o, a, 2.0, N)  # compute
    if CASE == 3:
        qi.free_tensor(a)
        asc.adds(o, a, 1.0, N)  # after-free
    if CASE == 5:
        asc.data_copy(zg, o, N)  # no-copy-out-handover
    qo.enque(o)
    o = qo.deque(asc.float32)
    asc.data_copy(zg, o, N)


def line(marker: str) -> int:
    lines, first = inspect.getsourcelines(queue_misuse.fn)
    return first + next(i for i, t in enumerate(lines) if t.rstrip().endswith(f"# {marker}"))


def run(case, **kw):
    x = np.arange(N, dtype=np.float32)
    z = np.zeros(N, np.float32)
    return queue_misuse[1](x, z, case, **kw), z


@pytest.mark.parametrize("case", [0, 4])
def test_handed_over_tensors_run(case):
    _, z = run(case)
    np.testing.assert_array_equal(z, 2 * np.arange(N, dtype=np.float32))


@pytest.mark.parametrize("case,marker,words", [
    (1, "compute", ["muls on pipe V uses src 'a', which pipe MTE2 wrote",
                    f"data_copy at line", "HardEvent.MTE2_V"]),
    (2, "compute", ["muls on pipe V uses src 'a', which pipe MTE2 wrote", "VECOUT V→MTE3"]),
    (5, "no-copy-out-handover", ["data_copy on pipe MTE3 uses src 'o', which pipe V wrote",
                                 "muls at line"]),
])
def test_forgotten_hand_over_is_an_error_in_default_mode(case, marker, words):
    with pytest.raises(asc.HandoverError) as info:
        run(case)
    text = str(info.value)
    assert f":{line(marker)}:" in text.splitlines()[0]
    for w in words:
        assert w in text, text
    assert isinstance(info.value, asc.DataRaceError)


def test_use_after_free_names_the_free():
    with pytest.raises(asc.UseAfterFreeError) as info:
        run(3)
    text = str(info.value)
    assert f":{line('after-free')}:" in text.splitlines()[0]
    assert f"adds uses src 'a' after free_tensor at line {line('after-free') - 1}" in text


def test_sanitize_mode_reports_the_race_byte_by_byte():
    with pytest.raises(asc.DataRaceError) as info:
        run(1, sanitize=True)
    assert not isinstance(info.value, asc.HandoverError)
    assert "UB bytes [" in str(info.value)


def test_report_says_what_was_not_checked():
    report, _ = run(0)
    assert report.unchecked == ("races between pipes byte by byte", "uninitialised reads",
                                "blocks writing the same GM bytes")
    assert "not checked" in str(report) and "run with sanitize=True" in str(report)
    sanitized, _ = run(0, sanitize=True)
    assert sanitized.unchecked == () and "not checked" not in str(sanitized)


@asc.kernel
def reads_unwritten(x: asc.GlobalAddress, z: asc.GlobalAddress):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, N)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, N)
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, N)
    asc.data_copy(a, xg, N // 2)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.adds(a, a, 1.0, N)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(zg, a, N)


def test_unwritten_local_memory_is_nan_in_every_launch_and_block():
    """Fresh local memory holds 0xFF bytes (NaN), never an earlier launch's data."""
    x = np.ones(N, np.float32)
    for _ in range(2):
        z = np.zeros(N, np.float32)
        reads_unwritten[1](x, z)
        assert (z[:N // 2] == 2.0).all() and np.isnan(z[N // 2:]).all()


def test_check_kernel_runs_in_sanitize_mode_and_a_failure_suggests_it():
    def launch(x):
        z = np.zeros(N, np.float32)
        reads_unwritten[1](x, z)
        return z

    x = np.ones(N, np.float32)
    with pytest.raises(asc.UninitializedReadError):       # sanitize mode found the cause
        asc.testing.check_kernel(launch, lambda v: v + 1, x)
    with pytest.raises(AssertionError) as info:             # without it: wrong numbers, hint
        asc.testing.check_kernel(launch, lambda v: v + 1, x, sanitize=False)
    assert "hint: the kernel ran without sanitize mode" in str(info.value)


@asc.kernel
def truncated_then_read(x: asc.GlobalAddress, z: asc.GlobalAddress):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 128)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 128)
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 128)
    asc.data_copy(a, xg, 100)  # truncated
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.adds(a, a, 1.0, 100)  # read
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, a, 96)


@asc.kernel
def mismatched_flags(x: asc.GlobalAddress, z: asc.GlobalAddress):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 128)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 128)
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 128)
    asc.data_copy(a, xg, 128)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 1)  # wrong-id
    asc.adds(a, a, 1.0, 128)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(zg, a, 128)


def _marked(kernel, marker: str) -> int:
    lines, first = inspect.getsourcelines(kernel.fn)
    return first + next(i for i, t in enumerate(lines) if t.rstrip().endswith(f"# {marker}"))


def test_truncation_is_a_warning_in_default_mode_and_the_root_cause_in_sanitize_mode():
    x, z = np.ones(128, np.float32), np.zeros(128, np.float32)
    with pytest.warns(asc.TruncatedCopyWarning, match="data_copy of 400 bytes"):
        truncated_then_read[1](x, z)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(asc.UninitializedReadError) as info:
            truncated_then_read[1](x, z, sanitize=True)
    text = str(info.value)
    assert f":{_marked(truncated_then_read, 'read')}:" in text.splitlines()[0]
    assert (f"root cause: the data_copy at line {_marked(truncated_then_read, 'truncated')} "
            f"asked for 16 bytes more than it copied") in text


def test_mismatched_flag_pair_is_the_root_cause_of_the_race():
    x, z = np.ones(128, np.float32), np.zeros(128, np.float32)
    with pytest.raises(asc.DataRaceError) as info:
        mismatched_flags[1](x, z, sanitize=True)
    text = str(info.value)
    assert (f"root cause: wait_flag(HardEvent.MTE2_V, 1) at line "
            f"{_marked(mismatched_flags, 'wrong-id')} waits for a set_flag that never came") \
        in text
    assert "set_flag(HardEvent.MTE2_V, 0) was set and nothing waited for it" in text
