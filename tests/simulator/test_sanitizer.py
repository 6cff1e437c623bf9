"""Sanitize mode: races between pipes (with both lines and the fixing HardEvent), correct
synchronisation by flags, queues and barriers (no false positives), uninitialised UB reads, GM
bytes written by two blocks, late-set and truncation warnings, and the samples run clean."""
import importlib
import pathlib
import sys
import warnings

import numpy as np
import pytest

import ascendc_py as asc

SAMPLES = pathlib.Path(__file__).resolve().parents[2] / "samples"
N = 64


def line_of(fn, marker: str) -> int:
    import inspect
    lines, first = inspect.getsourcelines(fn.fn)
    hits = [first + i for i, text in enumerate(lines) if marker in text]
    assert len(hits) == 1, hits
    return hits[0]


@asc.kernel
def copy_compute(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int, SYNC: asc.ConstExpr[int]):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    c = asc.LocalTensor(x.dtype, asc.TPosition.VECOUT, n * 4, n)
    asc.data_copy(a, xg, n)  # copy-in
    if SYNC == 1:
        asc.set_flag(asc.HardEvent.MTE2_V, 0)
        asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    if SYNC == 2:
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.adds(c, a, 1.0, n)  # compute
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, c, n)


def test_missing_flag_is_a_race_naming_both_lines_and_the_event():
    x = np.ones(N, np.float32)
    z = np.zeros(N, np.float32)
    with pytest.raises(asc.DataRaceError) as info:
        copy_compute[1](x, z, N, 0, sanitize=True)
    text = str(info.value)
    assert f":{line_of(copy_compute, '# compute')}:" in text.splitlines()[0]
    assert f":{line_of(copy_compute, '# copy-in')}:" in text
    assert "HardEvent.MTE2_V" in text and "MTE2" in text and "pipe V" in text


@pytest.mark.parametrize("sync", [1, 2])
def test_flags_and_barriers_order_the_pipes(sync):
    x = np.arange(N, dtype=np.float32)
    z = np.zeros(N, np.float32)
    copy_compute[1](x, z, N, sync, sanitize=True)
    np.testing.assert_array_equal(z, x + 1)


def test_without_sanitize_mode_the_race_is_not_checked():
    x = np.ones(N, np.float32)
    z = np.zeros(N, np.float32)
    copy_compute[1](x, z, N, 0)  # runs (functional execution is in program order)
    np.testing.assert_array_equal(z, x + 1)


@asc.kernel
def transitive(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int):
    """MTE2 reuses the buffer V read, ordered only through MTE3 (V_MTE3 then MTE3_MTE2)."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    c = asc.LocalTensor(x.dtype, asc.TPosition.VECOUT, n * 4, n)
    for t in range(3):
        asc.data_copy(a, xg[t * n:], n)
        asc.set_flag(asc.HardEvent.MTE2_V, 0)
        asc.wait_flag(asc.HardEvent.MTE2_V, 0)
        asc.muls(c, a, 2.0, n)
        asc.set_flag(asc.HardEvent.V_MTE3, 0)
        asc.wait_flag(asc.HardEvent.V_MTE3, 0)
        asc.data_copy(zg[t * n:], c, n)
        asc.set_flag(asc.HardEvent.MTE3_MTE2, 0)
        asc.wait_flag(asc.HardEvent.MTE3_MTE2, 0)


def test_happens_before_is_transitive():
    x = np.arange(3 * N, dtype=np.float32)
    z = np.zeros_like(x)
    transitive[1](x, z, N, sanitize=True)
    np.testing.assert_array_equal(z, 2 * x)


def test_queue_operations_synchronise_the_samples():
    sys.path.insert(0, str(SAMPLES))
    try:
        for name in ("add_tque", "add_flags", "leaky_relu", "sepia", "softmax", "layernorm"):
            asc.set_sanitizer(True)
            try:
                importlib.import_module(name).main()
            finally:
                asc.set_sanitizer(None)
    finally:
        sys.path.remove(str(SAMPLES))


@asc.kernel
def reads_garbage(z: asc.GlobalAddress, n: int):
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z)
    a = asc.LocalTensor(z.dtype, asc.TPosition.VECIN, 0, n)
    c = asc.LocalTensor(z.dtype, asc.TPosition.VECOUT, n * 4, n)
    asc.exp(c, a, n)  # reads a
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, c, n)


def test_reading_unwritten_ub_is_reported():
    z = np.zeros(N, np.float32)
    with pytest.raises(asc.UninitializedReadError) as info:
        reads_garbage[1](z, N, sanitize=True)
    assert f":{line_of(reads_garbage, '# reads a')}:" in str(info.value)


@asc.kernel
def overlapping_blocks(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z)  # every block writes the same slice
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    asc.data_copy(a, xg, n)
    asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.data_copy(zg, a, n)  # the write


def test_two_blocks_writing_the_same_gm_bytes_is_reported():
    x = np.ones(N, np.float32)
    z = np.zeros(N, np.float32)
    with pytest.raises(asc.BlockOverlapError) as info:
        overlapping_blocks[2](x, z, N, sanitize=True)
    assert "blocks 0 and 1" in str(info.value)
    assert f":{line_of(overlapping_blocks, '# the write')}:" in str(info.value)
    overlapping_blocks[1](x, z, N, sanitize=True)  # one block: fine


@asc.kernel
def late_set(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)  # waits for a later set
    asc.data_copy(a, xg, n)
    asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.data_copy(zg, a, n)


def test_wait_satisfied_only_by_a_later_set_warns():
    x = np.ones(N, np.float32)
    z = np.zeros(N, np.float32)
    with pytest.warns(asc.LateSetWarning) as record:
        late_set[1](x, z, N, sanitize=True)
    assert f":{line_of(late_set, '# waits for a later set')}:" in str(record[0].message)
    np.testing.assert_array_equal(z, x)


@asc.kernel
def short_copy(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, 64)
    asc.data_copy(a, xg, n)  # truncated
    asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.data_copy(zg, a, 8)


@pytest.mark.parametrize("sanitize", [True, False])
def test_truncated_copy_warns_in_every_mode(sanitize):
    """The check is O(1) per copy, so the default mode makes it too (issue 11 §2)."""
    x = np.arange(64, dtype=np.float32)
    z = np.zeros(64, np.float32)
    with pytest.warns(asc.TruncatedCopyWarning) as record:
        short_copy[1](x, z, 10, sanitize=sanitize)  # 40 bytes: hardware copies 32
    assert "40 bytes" in str(record[0].message) and "32" in str(record[0].message)


def test_flags_left_set_warn_without_sanitize_mode():
    x = np.ones(N, np.float32)
    z = np.zeros(N, np.float32)

    with pytest.warns(asc.FlagLeftSetWarning):
        left_set[1](x, z, N)


@asc.kernel
def left_set(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    asc.data_copy(a, xg, n)
    asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.data_copy(zg, a, n)
    asc.set_flag(asc.HardEvent.MTE3_MTE2, 1)  # never waited for
