"""TBufPool: regions from the pipe, sub-pools, pools sharing a region (the documented two-stage
pattern), reset as the end of a pool's pending work, capacity and never-initialised errors."""
from __future__ import annotations

import numpy as np
import pytest

import ascendc_py as asc


@asc.kernel
def stages(x: asc.GlobalAddress, z: asc.GlobalAddress, a: asc.GlobalAddress, n: int,
           RESET: asc.ConstExpr[bool]):
    """Ascend C's TBufPool example: pool0 from the pipe, pool1 inside it, pool2 over pool1's
    region; stage 1 (z = x + 1) on pool1's queues, stage 2 (z += x * 2 over it) on pool2's.
    a = the buffer addresses seen."""
    pipe = asc.TPipe()
    pool0 = asc.TBufPool(asc.TPosition.VECIN, 4)
    pool1 = asc.TBufPool(asc.TPosition.VECIN, 4)
    pool2 = asc.TBufPool(asc.TPosition.VECIN, 4)
    pipe.init_buf_pool(pool0, 4 * n * 4)
    pool0.init_buf_pool(pool1, 2 * n * 4)
    pool0.init_buf_pool(pool2, 2 * n * 4, pool1)
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    ag = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    zg.set_global_buffer(z, n)
    ag.set_global_buffer(a, 8)
    qi = asc.TQue(asc.TPosition.VECIN, 1)
    qo = asc.TQue(asc.TPosition.VECOUT, 1)
    pool1.init_buffer(qi, 1, n * 4)
    pool1.init_buffer(que=qo, num=1, len=n * 4)
    t = qi.alloc_tensor(asc.float32)
    ag.set_value(0, t.get_phy_addr())
    asc.data_copy(t, xg, n)
    qi.enque(t)
    t = qi.deque(asc.float32)
    u = qo.alloc_tensor(asc.float32)
    ag.set_value(1, u.get_phy_addr())
    asc.adds(u, t, 1.0, n)
    qi.free_tensor(t)
    qo.enque(u)
    u = qo.deque(asc.float32)
    asc.data_copy(zg, u, n)
    qo.free_tensor(u)
    if RESET:
        pool1.reset()
    qi2 = asc.TQue(asc.TPosition.VECIN, 1)
    tb = asc.TBuf(asc.TPosition.VECCALC)
    pool2.init_buffer(qi2, 1, n * 4)
    pool2.init_buffer(buf=tb, len=n * 4)
    v = qi2.alloc_tensor(asc.float32)
    w = tb.get(asc.float32)
    ag.set_value(2, v.get_phy_addr())
    ag.set_value(3, w.get_phy_addr())
    asc.data_copy(v, xg, n)
    qi2.enque(v)
    v = qi2.deque(asc.float32)
    asc.muls(w, v, 2.0, n)
    qi2.free_tensor(v)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, w, n)
    if RESET:
        pool2.reset()
        pool0.reset()
    pipe.reset()


def test_shared_pools_reuse_the_memory_after_reset():
    n = 256
    x = np.arange(n, dtype=np.float32)
    for sanitize in (False, True):
        z = np.zeros_like(x)
        a = np.zeros(8, np.int32)
        stages[1](x, z, a, n, True, sanitize=sanitize)
        np.testing.assert_array_equal(z, 2 * x)
        assert list(a[:4]) == [0, n * 4, 0, n * 4]     # pool2's buffers are pool1's


def test_without_reset_the_reuse_is_a_race():
    """No reset between the stages: MTE2 refills the memory stage 1's MTE3 may still read."""
    n = 256
    x = np.arange(n, dtype=np.float32)
    with pytest.raises(asc.DataRaceError):
        stages[1](x, np.zeros_like(x), np.zeros(8, np.int32), n, False, sanitize=True)


def test_reset_is_a_barrier_in_the_timing():
    n = 4096
    x = np.arange(n, dtype=np.float32)
    args = (x, np.zeros_like(x), np.zeros(8, np.int32), n)
    with_reset = stages[1](*args, True)
    without = stages[1](*args, False)
    assert with_reset.cycles > without.cycles


@asc.kernel
def pool_errors(SEL: asc.ConstExpr[int]):
    pipe = asc.TPipe()
    pool = asc.TBufPool(asc.TPosition.VECIN, 4)
    sub = asc.TBufPool(asc.TPosition.VECIN, 4)
    q = asc.TQue(asc.TPosition.VECIN, 1)
    if SEL == 0:
        pool.init_buffer(q, 1, 256)                      # a pool never given memory
    elif SEL == 1:
        pipe.init_buf_pool(pool, 1024)
        pool.init_buffer(q, 2, 1024)                     # 2 KB from a 1 KB pool
    elif SEL == 2:
        pipe.init_buf_pool(pool, 1024)
        pool.init_buf_pool(sub, 2048)                    # a sub-pool larger than its parent
    elif SEL == 3:
        pipe.init_buf_pool(pool, 1 << 20)                # more than UB
    else:
        pipe.init_buf_pool(pool, 2048)
        pool.init_buf_pool(sub, 512)
        pool.init_buf_pool(sub, 512)                     # fine: a pool may be placed again
        pool.init_buffer(q, 1, 32)
        pool.init_buffer(q, 1, 32)                       # a queue initialised twice


@pytest.mark.parametrize("sel,cls,message", [
    (0, asc.QueueNotInitializedError, "never given memory"),
    (1, asc.BufferCapacityError, "init_buffer asks for 2048 bytes of UB but only 1024"),
    (2, asc.BufferCapacityError, "init_buf_pool asks for 2048 bytes of UB but only 1024"),
    (3, asc.BufferCapacityError, "init_buf_pool asks for 1048576 bytes of UB"),
    (4, asc.QueueError, ""),
])
def test_errors_name_the_line(sel, cls, message):
    import inspect
    lines, first = inspect.getsourcelines(pool_errors.fn)
    marks = {0: "never given", 1: "2 KB from", 2: "sub-pool larger", 3: "more than UB",
             4: "initialised twice"}
    line = first + next(i for i, t in enumerate(lines) if marks[sel] in t)
    with pytest.raises(cls) as info:
        pool_errors[1](sel)
    assert message in str(info.value)
    assert f"test_buf_pool.py:{line}:" in str(info.value)


def _compile_error(body: str, cls):
    import linecache
    src = ("def k(x: asc.GlobalAddress):\n    pipe = asc.TPipe()\n"
           "    p = asc.TBufPool(asc.TPosition.VECIN)\n" f"    {body}\n")
    name = f"<pool-test-{abs(hash(body))}>"
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)
    ns = {"asc": asc}
    exec(compile(src, name, "exec"), ns)
    with pytest.raises(cls) as info:
        asc.kernel(ns["k"])[1](np.zeros(8, np.float32))
    assert ":4:" in str(info.value), str(info.value)
    return str(info.value)


@pytest.mark.parametrize("body,cls,message", [
    ("p.init_buffer(asc.TQue(asc.TPosition.A1, 1), 1, 32)", asc.KernelTypeError,
     "is in L1 but the pool is in UB"),
    ("p.init_buf_pool(asc.TBufPool(asc.TPosition.A1), 32)", asc.KernelTypeError, "is in L1"),
    ("q = asc.TBufPool(asc.TPosition.VECIN, 0)", asc.ConstantRangeError, "buf_id_size"),
    ("q = asc.TBufPool()", asc.KernelTypeError, "needs pos"),
    ("pipe.init_buf_pool(3, 32)", asc.OperandKindError, "must be an asc.TBufPool"),
])
def test_compile_errors(body, cls, message):
    assert message in _compile_error(body, cls)
