"""Run-time faults: each raises its KernelRuntimeError subclass naming the kernel line (with the
source line and a caret), says what went wrong, and leaves the process able to run kernels."""
from __future__ import annotations

import inspect
import re

import time

import numpy as np
import pytest

import ascendc_py as asc
from kernels_for_tests import assert_still_works

FORBIDDEN = ("lark", "llvmlite", "Traceback")
UB_SIZE = 192 * 1024  # 910B

# case numbers of faulty_kernel (a runtime selector: one compilation serves every case)
(GM_READ, GM_WRITE, GM_GET, GM_SET, GM_NEGATIVE, UB_CAPACITY, LOCAL_RANGE, LOCAL_MISALIGNED,
 SLICE_MISALIGNED, DEQUE_EMPTY, ALLOC_EXHAUSTED, ENQUE_FULL, FREE_FOREIGN, DOUBLE_FREE,
 WAIT_NEVER_SET, SET_TWICE, EVENT_RANGE, DIV_ZERO, MOD_ZERO, ZERO_STEP, NEGATIVE_COUNT,
 DEVICE_FN, ASSERT, UB_LOCAL_GET, NOT_INITIALISED, INIT_TWICE, ENQUE_TWICE) = range(1, 28)


@asc.kernel
def poke(t, i):
    t.set_value(i, 1)  # out of bounds when called with a bad index


@asc.kernel
def faulty_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int, case: int, arg: int):
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    zg.set_global_buffer(z, n)
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 1)
    q2 = asc.TQue(asc.TPosition.VECOUT, 2)
    q3 = asc.TQue(asc.TPosition.VECIN, 2)      # init_buffer only in INIT_TWICE
    pipe.init_buffer(q, 2, 256)
    pipe.init_buffer(q2, 2, 256)
    a = q.alloc_tensor(asc.float32)
    if case == GM_READ:
        asc.data_copy(a, xg[n - 8:], 16)
    elif case == GM_WRITE:
        asc.data_copy(zg[arg:], a, 16)
    elif case == GM_GET:
        v = xg.get_value(n)
    elif case == GM_SET:
        zg.set_value(n + arg, 2.0)
    elif case == GM_NEGATIVE:
        asc.data_copy(a, xg[-arg:], 8)
    elif case == UB_CAPACITY:
        big = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(big, arg)
    elif case == LOCAL_RANGE:
        t = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, arg, 64)
    elif case == LOCAL_MISALIGNED:
        t = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 4096 + arg, 8)
    elif case == SLICE_MISALIGNED:
        asc.adds(a[arg:], a, 1.0, 8)
    elif case == DEQUE_EMPTY:
        b = q2.deque(asc.float32)
    elif case == ALLOC_EXHAUSTED:
        b = q.alloc_tensor(asc.float32)
        c = q.alloc_tensor(asc.float32)
    elif case == ENQUE_FULL:
        b = q.alloc_tensor(asc.float32)
        q.enque(a)
        q.enque(b)
    elif case == FREE_FOREIGN:
        q2.free_tensor(a)
    elif case == DOUBLE_FREE:
        q.free_tensor(a)
        q.free_tensor(a)  # twice
    elif case == WAIT_NEVER_SET:
        asc.wait_flag(asc.HardEvent.MTE2_V, 1)
    elif case == SET_TWICE:
        asc.set_flag(asc.HardEvent.V_MTE3, 2)
        asc.set_flag(asc.HardEvent.V_MTE3, 2)  # twice
    elif case == EVENT_RANGE:
        asc.set_flag(asc.HardEvent.MTE3_MTE2, arg)
    elif case == DIV_ZERO:
        zg.set_value(0, n // arg)
    elif case == MOD_ZERO:
        zg.set_value(0, n % arg)
    elif case == ZERO_STEP:
        for i in range(0, n, arg):
            pass
    elif case == NEGATIVE_COUNT:
        asc.muls(a, a, 2.0, -arg)
    elif case == DEVICE_FN:
        poke(zg, n + arg)
    elif case == ASSERT:
        assert arg < 3, "arg must stay below 3"
    elif case == UB_LOCAL_GET:
        v = a.get_value(arg)
    elif case == NOT_INITIALISED:
        b = q3.alloc_tensor(asc.float32)
    elif case == INIT_TWICE:
        pipe.init_buffer(q3, 1, 64)
        pipe.init_buffer(q3, 1, 64)  # again
    elif case == ENQUE_TWICE:
        q2.free_tensor(q2.alloc_tensor(asc.float32))
        b = q2.alloc_tensor(asc.float32)
        q2.enque(b)
        q2.enque(b)  # again


def source_line(kernel, marker: str) -> int:
    lines, first = inspect.getsourcelines(kernel.fn)
    hits = [i for i, t in enumerate(lines) if marker in t]
    assert len(hits) == 1, (marker, hits)
    return first + hits[0]


def check_fault(err, kernel, marker: str, words) -> None:
    text = str(err)
    line = source_line(kernel, marker)
    m = re.match(rf"{re.escape(__file__)}:(\d+):(\d+): ", text)
    assert m and int(m.group(1)) == line, f"expected line {line}:\n{text}"
    lines = text.splitlines()
    shown = [i for i, t in enumerate(lines) if marker in t]
    assert shown, text
    caret = lines[shown[0] + 1]
    assert set(caret.strip()) == {"^"} and caret.index("^") == 4 + int(m.group(2)) - 1, text
    for w in words:
        assert w.lower() in text.lower(), f"{w!r} not in:\n{text}"
    for bad in FORBIDDEN:
        assert bad not in text, text


def run_case(case, arg=0, n=64, blocks=1):
    x = np.arange(n, dtype=np.float32)
    z = np.zeros(n, np.float32)
    faulty_kernel[blocks](x, z, n, case, arg)
    return z


CASES = [
    # case, arg, expected class, marker (on the faulting line), words in the message
    (GM_READ, 0, asc.GMOutOfBoundsError, "xg[n - 8:], 16", ["'x'", "data_copy", "[56, 72)"]),
    (GM_WRITE, 56, asc.GMOutOfBoundsError, "zg[arg:], a, 16", ["'z'", "data_copy", "outside"]),
    (GM_GET, 0, asc.GMOutOfBoundsError, "xg.get_value(n)", ["'x'", "get_value"]),
    (GM_SET, 5, asc.GMOutOfBoundsError, "zg.set_value(n + arg", ["'z'", "set_value"]),
    (GM_NEGATIVE, 8, asc.GMOutOfBoundsError, "xg[-arg:], 8", ["'x'"]),
    (UB_CAPACITY, UB_SIZE, asc.BufferCapacityError, "pipe.init_buffer(big, arg)",
     [f"asks for {UB_SIZE} bytes", f"only {UB_SIZE - 4 * 256} of {UB_SIZE} bytes are free"]),
    (LOCAL_RANGE, UB_SIZE - 128, asc.LocalMemoryError, "VECCALC, arg, 64)",
     [f"[{UB_SIZE - 128}, {UB_SIZE + 128})", f"{UB_SIZE} bytes"]),
    (LOCAL_MISALIGNED, 4, asc.LocalMemoryError, "4096 + arg", ["4100", "32-byte aligned"]),
    (SLICE_MISALIGNED, 3, asc.LocalMemoryError, "asc.adds(a[arg:]", ["adds", "aligned"]),
    (DEQUE_EMPTY, 0, asc.QueueError, "b = q2.deque", ["deque", "empty"]),
    (ALLOC_EXHAUSTED, 0, asc.QueueError, "c = q.alloc_tensor", ["alloc_tensor", "2 buffers"]),
    (ENQUE_FULL, 0, asc.QueueError, "q.enque(b)", ["enque", "full", "depth 1"]),
    (FREE_FOREIGN, 0, asc.QueueError, "q2.free_tensor(a)", ["free_tensor", "does not belong"]),
    (DOUBLE_FREE, 0, asc.QueueError, "q.free_tensor(a)  # twice",
     ["free_tensor", "double free"]),
    (WAIT_NEVER_SET, 0, asc.SyncError, "wait_flag(asc.HardEvent.MTE2_V, 1)",
     ["MTE2_V id 1", "never satisfied"]),
    (SET_TWICE, 0, asc.SyncError, "V_MTE3, 2)  # twice",
     ["V_MTE3 id 2", "already set"]),
    (EVENT_RANGE, 9, asc.SyncError, "MTE3_MTE2, arg", ["event id 9", "out of range"]),
    (DIV_ZERO, 0, asc.KernelRuntimeError, "n // arg", ["division by zero"]),
    (MOD_ZERO, 0, asc.KernelRuntimeError, "n % arg", ["by zero"]),
    (ZERO_STEP, 0, asc.KernelRuntimeError, "range(0, n, arg)", ["step is zero"]),
    (NEGATIVE_COUNT, 8, asc.KernelRuntimeError, "-arg)", ["muls", "negative"]),
    (ASSERT, 3, asc.KernelRuntimeError, "assert arg < 3", ["assertion failed",
                                                           "arg must stay below 3"]),
    (UB_LOCAL_GET, UB_SIZE // 4, asc.TensorExtentError, "a.get_value(arg)",
     ["get_value index 49152 is outside the tensor 'a'", "alloc_tensor at line", "UB"]),
    (NOT_INITIALISED, 0, asc.QueueError, "b = q3.alloc_tensor", ["alloc_tensor", "init_buffer"]),
    (INIT_TWICE, 0, asc.QueueError, "64)  # again", ["init_buffer", "twice"]),
    (ENQUE_TWICE, 0, asc.QueueError, "q2.enque(b)  # again", ["enque", "enqueued"]),
]


@pytest.mark.parametrize("case,arg,cls,marker,words", CASES, ids=[str(c[0]) for c in CASES])
def test_runtime_fault(case, arg, cls, marker, words):
    with pytest.raises(cls) as info:
        run_case(case, arg)
    check_fault(info.value, faulty_kernel, marker, words)
    assert_still_works()


def test_correct_case_runs():
    """The same kernel with case 0 runs without a fault (the faults come from the cases)."""
    z = run_case(0)
    np.testing.assert_array_equal(z, 0)


def test_fault_in_an_inlined_function_points_at_its_line():
    with pytest.raises(asc.GMOutOfBoundsError) as info:
        run_case(DEVICE_FN, 3)
    check_fault(info.value, poke, "t.set_value(i, 1)", ["'z'", "set_value", "[67, 68)"])
    assert_still_works()


@asc.kernel
def one_bad_block(z: asc.GlobalAddress, bad: int):
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 64)
    if asc.get_block_idx() == bad:
        zg.set_value(64 + bad, 1.0)
    zg.set_value(asc.get_block_idx(), 1.0)


@pytest.mark.parametrize("bad", [0, 3, 7])
def test_fault_names_the_block(bad):
    z = np.zeros(64, np.float32)
    with pytest.raises(asc.GMOutOfBoundsError, match=rf"\(block {bad}\)") as info:
        one_bad_block[8](z, bad)
    check_fault(info.value, one_bad_block, "zg.set_value(64 + bad", ["'z'"])
    one_bad_block[8](z, 100)  # no faulty block: every block writes its flag
    np.testing.assert_array_equal(z[:8], 1.0)


@asc.kernel
def spin(z: asc.GlobalAddress, n: int):
    k = 0
    while n > 0:
        k += 1


def test_endless_while_loop_raises_loop_limit():
    """The default budget (2**25 iterations for all of a block's loops) runs out in well
    under a second here."""
    with pytest.raises(asc.LoopLimitError) as info:
        spin[1](np.zeros(8, np.float32), 1)
    check_fault(info.value, spin, "while n > 0", ["while loop", "33554432", "hung",
                                                  "ASCENDC_PY_LOOP_BUDGET"])
    assert_still_works()


@asc.kernel
def long_copy_loop(x: asc.GlobalAddress, n: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 8)
    t = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 8)
    for i in range(n):
        for j in range(4):
            asc.data_copy(t, xg, 8)


@asc.kernel
def heavy_loop(x: asc.GlobalAddress, n: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 16384)
    t = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 16384)
    for i in range(n):
        asc.data_copy(t, xg, 16384)
        asc.exp(t, t, 16384)


@pytest.mark.parametrize("blocks", [1, 3])
def test_watchdog_stops_a_launch_that_runs_too_long(monkeypatch, blocks):
    """Iterations that each cost microseconds stay inside the loop budget for minutes; the
    launch timeout stops them."""
    x = np.zeros(16384, np.float32)
    heavy_loop[blocks](x, 2)                      # compiled outside the timed launch
    monkeypatch.setenv("ASCENDC_PY_LAUNCH_TIMEOUT", "0.5")
    t0 = time.monotonic()
    with pytest.raises(asc.LoopLimitError) as info:
        heavy_loop[blocks](x, 10**9)
    assert time.monotonic() - t0 < 20
    check_fault(info.value, heavy_loop, "for i in range(n)", ["longer than 0.5 s", "hung",
                                                              "ASCENDC_PY_LAUNCH_TIMEOUT"])
    heavy_loop[blocks](x, 3)                      # the next launch starts with a fresh budget
    assert_still_works()


def test_for_loops_share_the_budget(monkeypatch):
    """for loops (nested ones counted together) spend the same budget; the environment
    variable sets it per launch."""
    x = np.zeros(8, np.float32)
    with pytest.raises(asc.LoopLimitError) as info:
        long_copy_loop[1](x, 2**40)
    check_fault(info.value, long_copy_loop, "for j in range(4)", ["for loop", "hung"])
    monkeypatch.setenv("ASCENDC_PY_LOOP_BUDGET", "1000")
    long_copy_loop[1](x, 199)          # 199 + 199 * 4 = 995 iterations
    with pytest.raises(asc.LoopLimitError, match="more than 1000 iterations"):
        long_copy_loop[1](x, 201)
    monkeypatch.setenv("ASCENDC_PY_LOOP_BUDGET", "not a number")
    long_copy_loop[1](x, 201)          # an unusable value keeps the default
    assert_still_works()
