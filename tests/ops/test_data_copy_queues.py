"""data_copy (GM→UB, UB→GM, UB→UB, 32-byte truncation), TQue/TBuf semantics, static
LocalTensors, get_value/set_value and get_size, each checked against NumPy."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import ascendc_py as asc


# ----------------------------------------------------------------------------- data_copy
@asc.kernel
def round_trip(x: asc.GlobalAddress, z: asc.GlobalAddress, block_length: int):
    """GM → UB (VECIN) → UB (VECOUT) → GM, per block."""
    off = asc.get_block_idx() * block_length
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x + off, block_length)
    zg.set_global_buffer(z + off, block_length)
    nbytes = block_length * x.dtype.sizeof()
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, block_length)
    b = asc.LocalTensor(x.dtype, asc.TPosition.VECOUT, nbytes, block_length)
    asc.data_copy(a, xg, block_length)
    asc.data_copy(b, a, block_length)
    asc.data_copy(zg, b, block_length)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.int64,
                                   np.float16, np.float32])
@pytest.mark.parametrize("blocks", [1, 3, 8])
def test_round_trip_every_dtype(dtype, blocks):
    per_block = 3 * 32 // np.dtype(dtype).itemsize   # 96 bytes: an odd multiple of 32 B
    rng = np.random.default_rng(blocks)
    x = rng.integers(-100, 100, blocks * per_block).astype(dtype)
    z = np.zeros_like(x)
    round_trip[blocks](x, z, per_block)
    np.testing.assert_array_equal(z, x)


@asc.kernel
def copy_count(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int, in_count: int,
               out_count: int):
    """UB is filled with -1, then `in_count` elements come in and `out_count` go out."""
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    zg.set_global_buffer(z, n)
    t = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    asc.duplicate(t, -1.0, n)
    asc.data_copy(t, xg, in_count)
    asc.data_copy(zg, t, out_count)


@pytest.mark.parametrize("count", [13, 9, 15, 7, 0, 16, 24])
def test_gm_to_ub_truncates_to_32_bytes(count):
    """float32 count 13 = 52 B: hardware copies 32 B (8 elements); the UB tail keeps -1."""
    n = 32
    x = np.arange(1, n + 1, dtype=np.float32)
    z = np.zeros(n, np.float32)
    if count * 4 % 32:   # the hardware drops the tail: a warning at the line, in every mode
        with pytest.warns(asc.TruncatedCopyWarning, match=f"data_copy of {count * 4} bytes"):
            copy_count[1](x, z, n, count, n)
    else:
        copy_count[1](x, z, n, count, n)
    copied = (count * 4 // 32) * 8
    np.testing.assert_array_equal(z[:copied], x[:copied])
    np.testing.assert_array_equal(z[copied:], -1.0)


@pytest.mark.parametrize("count", [13, 31, 7])
def test_ub_to_gm_truncates_to_32_bytes(count):
    n = 32
    x = np.arange(1, n + 1, dtype=np.float32)
    z = np.full(n, 42.0, np.float32)
    with pytest.warns(asc.TruncatedCopyWarning):
        copy_count[1](x, z, n, n, count)
    copied = (count * 4 // 32) * 8
    np.testing.assert_array_equal(z[:copied], x[:copied])
    np.testing.assert_array_equal(z[copied:], 42.0)


def test_float16_truncation_unit_is_16_elements():
    n = 64
    x = np.arange(n, dtype=np.float16)
    z = np.zeros(n, np.float16)
    copy_count[1](x, z, n, 47, n)          # 94 B → 64 B = 32 elements
    np.testing.assert_array_equal(z[:32], x[:32])
    np.testing.assert_array_equal(z[32:], -1.0)


@asc.kernel
def ub_to_ub(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int, shift: int):
    """z[shift:shift+n] = x[:n] through two UB tensors; z elsewhere is the duplicate value."""
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    zg.set_global_buffer(z)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    b = asc.LocalTensor(x.dtype, asc.TPosition.VECCALC, 8192, n + shift)
    asc.data_copy(a, xg, n)
    asc.duplicate(b, 5, n + shift)
    asc.data_copy(b[shift:], a, n)
    asc.data_copy(zg, b, n + shift)


def test_ub_to_ub_copy_at_an_offset():
    n, shift = 40, 16
    x = np.arange(100, 100 + n, dtype=np.int32)
    z = np.zeros(n + shift, np.int32)
    ub_to_ub[1](x, z, n, shift)
    np.testing.assert_array_equal(z[:shift], 5)
    np.testing.assert_array_equal(z[shift:], x)


# ----------------------------------------------------------------------------- queues
@asc.kernel
def fifo_kernel(z: asc.GlobalAddress, BUFS: asc.ConstExpr[int]):
    """Fill tensors with 1, 2, 3, 4 and pass them through a VECOUT queue; the order they are
    dequeued in is the order they land in z (16 float32 each)."""
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 64)
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECOUT, BUFS)
    pipe.init_buffer(q, BUFS, 16 * 4)
    k = 0
    for rnd in range(4 // BUFS):
        for j in range(BUFS):
            t = q.alloc_tensor(asc.float32)
            asc.duplicate(t, float(rnd * BUFS + j + 1), 16)
            q.enque(t)
        for j in range(BUFS):
            t = q.deque(asc.float32)
            asc.data_copy(zg[k * 16:], t, 16)
            q.free_tensor(t)
            k += 1


@pytest.mark.parametrize("bufs", [1, 2, 4])
def test_queue_is_fifo(bufs):
    z = np.zeros(64, np.float32)
    fifo_kernel[1](z, bufs)
    np.testing.assert_array_equal(z, np.repeat(np.arange(1, 5, dtype=np.float32), 16))


@asc.kernel
def buffers_distinct(z: asc.GlobalAddress):
    """Two buffers allocated together do not alias; a freed buffer is handed out again."""
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 48)
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 2)
    pipe.init_buffer(q, 2, 64)
    a = q.alloc_tensor(asc.int32)
    b = q.alloc_tensor(asc.int32)
    asc.duplicate(a, 1, 16)
    asc.duplicate(b, 2, 16)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)   # V's results before MTE3 copies them out
    asc.data_copy(zg, a, 16)
    asc.data_copy(zg[16:], b, 16)
    zg.set_value(40, a.get_size())
    zg.set_value(41, b.get_phy_addr() - a.get_phy_addr())
    q.free_tensor(a)
    c = q.alloc_tensor(asc.int32)
    zg.set_value(42, c.get_phy_addr() - a.get_phy_addr())
    q.free_tensor(b)
    q.free_tensor(c)
    d = q.alloc_tensor(asc.int16)
    zg.set_value(43, d.get_size())
    q.free_tensor(d)


def test_buffers_are_distinct_and_reused():
    z = np.zeros(48, np.int32)
    buffers_distinct[1](z)
    np.testing.assert_array_equal(z[:16], 1)
    np.testing.assert_array_equal(z[16:32], 2)
    assert z[40] == 16            # 64 bytes of int32
    assert abs(z[41]) == 64       # the second buffer is the next 64 B (stride = 64)
    assert z[42] == 0             # the freed buffer is the one handed out again
    assert z[43] == 32            # same buffer seen as int16


@asc.kernel
def alloc_order(z: asc.GlobalAddress, frees: asc.ConstExpr[int]):
    """Four buffers of 64 B: take three, free those ``frees`` names (a bit each), then take
    as many as are free and write each one's buffer index (its address / 64) to z."""
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 8)
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 4)
    pipe.init_buffer(q, 4, 64)
    a = q.alloc_tensor(asc.int32)
    b = q.alloc_tensor(asc.int32)
    c = q.alloc_tensor(asc.int32)
    base = a.get_phy_addr()
    zg.set_value(0, (b.get_phy_addr() - base) // 64)
    zg.set_value(1, (c.get_phy_addr() - base) // 64)
    if frees & 1:
        q.free_tensor(a)
    if frees & 2:
        q.free_tensor(b)
    if frees & 4:
        q.free_tensor(c)
    d = q.alloc_tensor(asc.int32)
    zg.set_value(2, (d.get_phy_addr() - base) // 64)
    if frees & 1 and frees & 2:
        e = q.alloc_tensor(asc.int32)
        zg.set_value(3, (e.get_phy_addr() - base) // 64)


@pytest.mark.parametrize("frees,expected", [
    (0, [1, 2, 3, -1]),      # the fourth buffer, the cursor's
    (2, [1, 2, 3, -1]),
    (3, [1, 2, 3, 0]),       # after the cursor wraps: the first free from buffer 0
])
def test_alloc_tensor_takes_the_first_free_buffer_from_the_cursor_on(frees, expected):
    z = np.full(8, -1, np.int32)
    alloc_order[1](z, frees)
    assert z[:4].tolist() == expected


@asc.kernel
def alloc_after_wrap(z: asc.GlobalAddress):
    """Three buffers: take all three, free the second, take one (the cursor has wrapped to
    buffer 0, which is taken: the scan goes on to buffer 1); then with none free, a fourth
    alloc_tensor fails."""
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 8)
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 3)
    pipe.init_buffer(q, 3, 64)
    a = q.alloc_tensor(asc.int32)
    b = q.alloc_tensor(asc.int32)
    c = q.alloc_tensor(asc.int32)
    q.free_tensor(b)
    d = q.alloc_tensor(asc.int32)
    zg.set_value(0, (d.get_phy_addr() - a.get_phy_addr()) // 64)
    e = q.alloc_tensor(asc.int32)
    zg.set_value(1, e.get_phy_addr())


def test_alloc_tensor_scans_past_taken_buffers_and_fails_when_none_is_free():
    z = np.full(8, -1, np.int32)
    with pytest.raises(asc.QueueError, match="none of the queue's 3 buffers free") as err:
        alloc_after_wrap[1](z)
    lines, first = inspect.getsourcelines(alloc_after_wrap.fn)
    line = first + next(i for i, text in enumerate(lines) if "e = q.alloc_tensor" in text)
    assert f"test_data_copy_queues.py:{line}:" in str(err.value)
    assert "e = q.alloc_tensor(asc.int32)" in str(err.value)
    assert z[0] == 1


@asc.kernel
def init_buffer_rounds(z: asc.GlobalAddress, LEN: asc.ConstExpr[int]):
    """init_buffer rounds each buffer's length up to 32 B: the second queue starts there."""
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 8)
    pipe = asc.TPipe()
    q1 = asc.TQue(asc.TPosition.VECIN, 2)
    q2 = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(q1, 2, LEN)
    pipe.init_buffer(q2, 1, 32)
    a = q1.alloc_tensor(asc.int32)
    b = q1.alloc_tensor(asc.int32)
    c = q2.alloc_tensor(asc.int32)
    zg.set_value(0, b.get_phy_addr() - a.get_phy_addr())
    zg.set_value(1, c.get_phy_addr() - a.get_phy_addr())
    zg.set_value(2, a.get_size())


@pytest.mark.parametrize("length,stride", [(4, 32), (32, 32), (33, 64), (100, 128)])
def test_init_buffer_rounds_up_to_32_bytes(length, stride):
    z = np.zeros(8, np.int32)
    init_buffer_rounds[1](z, length)
    assert z[0] == stride and z[1] == 2 * stride
    assert z[2] == length // 4


@asc.kernel
def tbuf_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int):
    """TBuf.get(dtype) sees the whole buffer; get(dtype, len) a prefix; both alias."""
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    zg.set_global_buffer(z, n + 8)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, 2 * n * 4)
    whole = buf.get(asc.float32)
    head = buf.get(asc.float32, n)
    asc.data_copy(head, xg, n)
    asc.muls(whole[n:], whole, 3.0, n)
    asc.data_copy(zg, whole[n:], n)
    zg.set_value(n, whole.get_size())
    zg.set_value(n + 1, head.get_size())
    zg.set_value(n + 2, whole[8:].get_size())


def test_tbuf_get():
    n = 24
    x = np.arange(n, dtype=np.float32) - 5
    z = np.zeros(n + 8, np.float32)
    tbuf_kernel[1](x, z, n)
    np.testing.assert_array_equal(z[:n], x * 3)
    np.testing.assert_array_equal(z[n:n + 3], [2 * n, n, 2 * n - 8])


# ----------------------------------------------------------------------------- scalar access
@asc.kernel
def scalar_access(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int):
    """Reverse x into z with get_value/set_value on GM and UB; z[n] = sum, z[n+1] = size."""
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    zg.set_global_buffer(z, n + 8)
    t = asc.LocalTensor(asc.int32, asc.TPosition.VECCALC, 1024, n)
    total = 0
    for i in range(n):
        v = xg.get_value(i)
        t.set_value(n - 1 - i, v)
        total += v
    asc.data_copy(zg, t, n)
    zg.set_value(n, total)
    zg.set_value(n + 1, xg.get_size())
    zg.set_value(n + 2, t.get_value(0) + zg.get_value(n - 1))
    zg.set_value(n + 3, xg[5:].get_value(0))
    zg.set_value(n + 4, t[2:].get_size())


def test_get_value_set_value_gm_and_ub():
    n = 16
    x = np.arange(10, 10 + n, dtype=np.int32) * 3
    z = np.zeros(n + 8, np.int32)
    scalar_access[1](x, z, n)
    np.testing.assert_array_equal(z[:n], x[::-1])
    assert z[n] == x.sum()
    assert z[n + 1] == n
    assert z[n + 2] == x[-1] + x[0]
    assert z[n + 3] == x[5]
    assert z[n + 4] == n - 2


@asc.kernel
def set_value_float16(z: asc.GlobalAddress, v: float):
    """A float32 scalar stored into a float16 tensor rounds to nearest."""
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 16)
    for i in range(16):
        zg.set_value(i, v * i)


def test_set_value_converts_to_the_tensor_dtype():
    z = np.zeros(16, np.float16)
    v = 0.1
    set_value_float16[1](z, v)
    np.testing.assert_array_equal(z, (np.float32(v) * np.arange(16, dtype=np.float32))
                                  .astype(np.float16))


@asc.kernel
def static_tensors(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int):
    """Static LocalTensors: placement by byte address, default position, get_size."""
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    zg.set_global_buffer(z, 2 * n + 8)
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, n)
    b = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, n * 4, n)
    alias = asc.LocalTensor(dtype=asc.float32, pos=asc.TPosition.VECCALC, addr=n * 4,
                            tile_size=n)
    asc.data_copy(a, xg, n)
    asc.adds(b, a, 1.0, n)
    asc.data_copy(zg, alias, n)          # alias and b share bytes
    asc.data_copy(zg[n:], a, n)
    zg.set_value(2 * n, a.get_size())
    zg.set_value(2 * n + 1, a[8:].get_size())


def test_static_local_tensors():
    n = 24
    x = np.arange(n, dtype=np.float32)
    z = np.zeros(2 * n + 8, np.float32)
    static_tensors[1](x, z, n)
    np.testing.assert_array_equal(z[:n], x + 1)
    np.testing.assert_array_equal(z[n:2 * n], x)
    assert z[2 * n] == n and z[2 * n + 1] == n - 8
