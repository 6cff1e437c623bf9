"""TQueBind: the documented data paths, their hand-over pipes (default-mode checks and sanitize
mode see them), depth 0, user positions on enque/deque, and the errors."""
from __future__ import annotations

import numpy as np
import pytest

import ascendc_py as asc

P = asc.TPosition


@asc.kernel
def copy_through(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int, BIND: asc.ConstExpr[int]):
    """GM -> UB -> GM with no vector work, through one queue (BIND 1: TQueBind(VECIN, VECOUT);
    0: TQue(VECIN), whose consumer is the vector pipe, not MTE3; 2: keywords)."""
    pipe = asc.TPipe()
    if BIND == 1:
        q = asc.TQueBind(asc.TPosition.VECIN, asc.TPosition.VECOUT, 1)
    elif BIND == 2:
        q = asc.TQueBind(src=asc.TPosition.VECIN, dst=asc.TPosition.VECOUT, depth=2)
    else:
        q = asc.TQue(asc.TPosition.VECIN, 1)
    pipe.init_buffer(q, 2, n * 4)
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    zg.set_global_buffer(z, n)
    t = q.alloc_tensor(asc.float32)
    asc.data_copy(t, xg, n)
    q.enque(t)
    t2 = q.deque(asc.float32)
    asc.data_copy(zg, t2, n)
    q.free_tensor(t2)


@asc.kernel
def copy_in_place(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int, TQUE: asc.ConstExpr[bool]):
    """The in-place forms on a depth-0 queue: alloc_tensor(t) and deque(t) fill t."""
    pipe = asc.TPipe()
    if TQUE:
        q = asc.TQue(asc.TPosition.VECIN, 0)
    else:
        q = asc.TQueBind(asc.TPosition.VECIN, asc.TPosition.VECOUT, 0)
    pipe.init_buffer(q, 1, n * 4)
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    zg.set_global_buffer(z, n)
    t = asc.LocalTensor(asc.float32)
    q.alloc_tensor(t)
    asc.data_copy(t, xg, n)
    q.enque(t)
    u = asc.LocalTensor(asc.float32)
    q.deque(u)
    if TQUE:
        asc.muls(u, u, 2.0, n)
        asc.set_flag(asc.HardEvent.V_MTE3, 0)
        asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, u, n)
    q.free_tensor(u)


@pytest.mark.parametrize("tque", [False, True])
def test_in_place_forms_on_depth_zero_queues(tque):
    x = np.arange(640, dtype=np.float32)
    for sanitize in (False, True):
        z = np.zeros_like(x)
        copy_in_place[1](x, z, 640, tque, sanitize=sanitize)
        np.testing.assert_array_equal(z, x * 2 if tque else x)


@pytest.mark.parametrize("bind", [1, 2])
def test_vecin_to_vecout_hands_mte2_writes_to_mte3(bind):
    x = np.arange(1000, dtype=np.float32)
    for sanitize in (False, True):
        z = np.zeros_like(x)
        copy_through[1](x, z, 1000, bind, sanitize=sanitize)
        np.testing.assert_array_equal(z, x)


def test_the_same_program_on_tque_vecin_has_no_hand_over_to_mte3():
    """TQue(VECIN) hands MTE2's writes to the vector pipe: MTE3 reading them is unordered, which
    sanitize mode reports (the default-mode hand-over check counts a deque as a hand-over to
    every pipe and does not)."""
    x = np.arange(1000, dtype=np.float32)
    with pytest.raises(asc.DataRaceError):
        copy_through[1](x, np.zeros_like(x), 1000, 0, sanitize=True)


@asc.kernel
def bind_add(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int):
    """GM->VECIN and VECOUT->GM TQueBinds act as TQue(VECIN) and TQue(VECOUT); user positions
    on enque/deque name the same paths."""
    pipe = asc.TPipe()
    qi = asc.TQueBind(asc.TPosition.GM, asc.TPosition.VECIN, 1)
    qo = asc.TQueBind(asc.TPosition.VECOUT, asc.TPosition.GM, 1)
    pipe.init_buffer(qi, 1, n * 4)
    pipe.init_buffer(qo, 1, n * 4)
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    zg.set_global_buffer(z, n)
    a = qi.alloc_tensor(asc.float32)
    asc.data_copy(a, xg, n)
    qi.enque(a, asc.TPosition.GM, asc.TPosition.VECIN)
    a2 = qi.deque(asc.float32, asc.TPosition.GM, asc.TPosition.VECIN)
    b = qo.alloc_tensor(asc.float32)
    asc.adds(b, a2, 1.0, n)
    qo.enque(b)
    qi.free_tensor(a2)
    b2 = qo.deque(asc.float32)
    asc.data_copy(zg, b2, n)
    qo.free_tensor(b2)
    if qo.get_tensor_count_in_que() != 0 or not qo.has_idle_buffer():
        asc.printf("bad queue state\n")
    qo.free_all_event()


def test_gm_paths_act_as_tque():
    x = np.arange(512, dtype=np.float32)
    for sanitize in (False, True):
        z = np.zeros_like(x)
        rep = bind_add[1](x, z, 512, sanitize=sanitize)
        np.testing.assert_array_equal(z, x + 1)
        assert "bad" not in "".join(rep.output or "")


def _compile_error(body: str, cls):
    import linecache
    src = ("def k(x: asc.GlobalAddress):\n"
           "    pipe = asc.TPipe()\n"
           "    t = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 64)\n"
           f"    {body}\n")
    name = f"<qb-test-{abs(hash(body))}>"
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)
    ns = {"asc": asc}
    exec(compile(src, name, "exec"), ns)
    with pytest.raises(cls) as info:
        asc.kernel(ns["k"])[1](np.zeros(8, np.float32))
    assert ":4:" in str(info.value), str(info.value)
    return str(info.value)


@pytest.mark.parametrize("body,cls,message", [
    ("q = asc.TQueBind(asc.TPosition.VECOUT, asc.TPosition.A1, 1)",
     asc.UnsupportedConstructError, "VECOUT -> A1 is not supported"),
    ("q = asc.TQueBind(asc.TPosition.GM, asc.TPosition.GM, 1)", asc.ConstantRangeError,
     "both GM"),
    ("q = asc.TQueBind(asc.TPosition.VECIN, asc.TPosition.VECIN, 9)", asc.ConstantRangeError,
     "depth must be"),
    ("q = asc.TQueBind(asc.TPosition.A1, asc.TPosition.A1, 1, 1)",
     asc.UnsupportedConstructError, "mask"),
    ("asc.TQueBind(asc.TPosition.VECIN, asc.TPosition.VECIN, 1).alloc_tensor(t)",
     asc.UnsupportedConstructError, "needs a queue declared with depth 0"),
    ("asc.TQue(asc.TPosition.VECIN, 1).deque(t)", asc.KernelTypeError, "dtype"),
    ("asc.TQue(asc.TPosition.VECIN, 0).deque(asc.float32)",
     asc.UnsupportedConstructError, "only the in-place form"),
    ("asc.TQueBind(asc.TPosition.VECIN, asc.TPosition.VECIN, 0).alloc_tensor(t.dtype)",
     asc.UnsupportedConstructError, "only the in-place form"),
    ("asc.TQue(asc.TPosition.VECIN, 0).alloc_tensor(t[8:])", asc.KernelError, "variable"),
])
def test_errors_name_the_line(body, cls, message):
    assert message in _compile_error(body, cls)
