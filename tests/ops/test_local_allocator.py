"""LocalMemAllocator: tensors placed from address 0 up, aligned; run-time sizes; capacity and
position errors; not mixed with TPipe."""
from __future__ import annotations

import numpy as np
import pytest

import ascendc_py as asc


@asc.kernel
def alloc_add(x: asc.GlobalAddress, z: asc.GlobalAddress, a: asc.GlobalAddress, n: int):
    """z = x + x through two tensors of a run-time size; a = the addresses seen."""
    alloc = asc.LocalMemAllocator(asc.Hardware.UB)
    ag = asc.GlobalTensor()
    ag.set_global_buffer(a, 8)
    start = alloc.get_cur_addr()
    t = alloc.alloc(asc.TPosition.VECIN, asc.float32, n)
    mid = alloc.get_cur_addr()
    u = alloc.alloc(asc.TPosition.VECOUT, asc.float32, n)
    end = alloc.get_cur_addr()
    odd = alloc.alloc(asc.TPosition.VECCALC, asc.float16, 3)
    ag.set_value(5, alloc.get_cur_addr())
    ag.set_value(6, odd.get_phy_addr())
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    zg.set_global_buffer(z, n)
    asc.data_copy(t, xg, n)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.add(u, t, t, n)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, u, n)
    ag.set_value(0, start)
    ag.set_value(1, mid)
    ag.set_value(2, end)
    ag.set_value(3, t.get_phy_addr())
    ag.set_value(4, u.get_phy_addr())


@pytest.mark.parametrize("n", [8, 104, 1000])
def test_tensors_follow_each_other_aligned(n):
    x = np.arange(n, dtype=np.float32)
    z = np.zeros_like(x)
    a = np.zeros(8, np.int32)
    for sanitize in (False, True):
        alloc_add[1](x, z, a, n, sanitize=sanitize)
        np.testing.assert_array_equal(z, 2 * x)
    step = n * 4
    assert list(a[:7]) == [0, step, 2 * step, 0, step, 2 * step + 32, 2 * step]


def test_a_tensor_past_the_memory_stops_at_its_line():
    n = 40 * 1024          # two of 160 KB: the second does not fit in 192 KB of UB
    x = np.zeros(n, np.float32)
    with pytest.raises(asc.LocalMemoryError) as info:
        alloc_add[1](x, x.copy(), np.zeros(8, np.int32), n)
    import inspect
    lines, first = inspect.getsourcelines(alloc_add.fn)
    line = first + next(i for i, t in enumerate(lines) if "u = alloc.alloc" in t)
    assert f"test_local_allocator.py:{line}:" in str(info.value)


def _compile_error(body: str, cls):
    import linecache
    src = "def k(x: asc.GlobalAddress):\n" + "".join(f"    {line}\n" for line in body)
    name = f"<la-test-{abs(hash(tuple(body)))}>"
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)
    ns = {"asc": asc}
    exec(compile(src, name, "exec"), ns)
    with pytest.raises(cls) as info:
        asc.kernel(ns["k"])[1](np.zeros(8, np.float32))
    assert f":{len(body) + 1}:" in str(info.value), str(info.value)
    return str(info.value)


@pytest.mark.parametrize("body,cls,message", [
    (["a = asc.LocalMemAllocator(asc.Hardware.L1)",
      "t = a.alloc(asc.TPosition.VECIN, asc.float32, 8)"], asc.KernelTypeError,
     "VECIN is in UB, but this allocator hands out L1"),
    (["a = asc.LocalMemAllocator(asc.Hardware.GM)"], asc.KernelTypeError, "not one"),
    (["p = asc.TPipe()", "a = asc.LocalMemAllocator()"], asc.UnsupportedConstructError,
     "does not allow mixing"),
    (["a = asc.LocalMemAllocator()", "p = asc.TPipe()"], asc.UnsupportedConstructError,
     "does not allow mixing"),
])
def test_errors_name_the_line(body, cls, message):
    assert message in _compile_error(body, cls)


def test_other_memories_use_their_alignment():
    from ascendc_py.compiler.sema.local_allocator import _alignment
    from ascendc_py.dsl.types import Memory
    assert _alignment(Memory.L0A) == 512 and _alignment(Memory.UB) == 32
