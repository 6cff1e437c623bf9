"""ShapeInfo, asc.array as its argument, get_shape_size and the tensors' set/get_shape_info."""
from __future__ import annotations

import numpy as np
import pytest

import ascendc_py as asc


@asc.kernel
def shapes(x: asc.GlobalAddress, o: asc.GlobalAddress, d: int):
    og = asc.GlobalTensor()
    og.set_global_buffer(o, 8)
    s0 = asc.ShapeInfo()
    s1 = asc.ShapeInfo(asc.array(asc.int32, [8, 3, 5]), data_format=asc.DataFormat.ND)
    s2 = asc.ShapeInfo(asc.array(asc.int32, 2, 7), asc.array(asc.int32, [4, 9]))
    t = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 64)
    t.set_shape_info(s1)
    g = asc.GlobalTensor()
    g.set_global_buffer(x, 8)
    g.set_shape_info(s2)
    og.set_value(0, asc.get_shape_size(t.get_shape_info()))
    og.set_value(1, asc.get_shape_size(s0))
    og.set_value(2, g.get_shape_info().original_shape(1))
    og.set_value(3, s1.shape(d))                      # a run-time dim
    og.set_value(4, s2.shape(0) + s2.original_shape(0))
    u = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 8)
    og.set_value(5, asc.get_shape_size(u.get_shape_info()))
    og.set_value(6, asc.ShapeInfo([d, 2]).shape(0))


def test_values():
    o = np.zeros(8, np.int32)
    shapes[1](np.zeros(8, np.float32), o, 2)
    assert list(o[:7]) == [120, 1, 9, 5, 11, 1, 2]
    shapes[1](np.zeros(8, np.float32), o, 0)
    assert o[3] == 8 and o[6] == 0


def test_run_time_dim_outside_the_shape_stops_at_the_line():
    import inspect
    lines, first = inspect.getsourcelines(shapes.fn)
    line = first + next(i for i, t in enumerate(lines) if "s1.shape(d)" in t)
    with pytest.raises(asc.KernelRuntimeError) as info:
        shapes[1](np.zeros(8, np.float32), np.zeros(8, np.int32), 3)
    assert f"test_shape_info.py:{line}:" in str(info.value)


def _compile_error(body: str, cls):
    import linecache
    src = ("def k(x: asc.GlobalAddress):\n"
           "    s = asc.ShapeInfo(asc.array(asc.int32, [4, 4]))\n"
           f"    {body}\n")
    name = f"<si-test-{abs(hash(body))}>"
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)
    ns = {"asc": asc}
    exec(compile(src, name, "exec"), ns)
    with pytest.raises(cls) as info:
        asc.kernel(ns["k"])[1](np.zeros(8, np.float32))
    assert ":3:" in str(info.value), str(info.value)
    return str(info.value)


@pytest.mark.parametrize("body,cls,message", [
    ("v = s.shape(2)", asc.KernelValueError, "has 2 dimensions"),
    ("v = asc.ShapeInfo(asc.array(asc.int32, 9, 1))", asc.KernelValueError, "at most 8"),
    ("v = asc.ShapeInfo(3)", asc.KernelTypeError, "asc.array or a list"),
    ("asc.LocalTensor(asc.float32).set_shape_info(3)", asc.KernelTypeError,
     "needs an asc.ShapeInfo"),
    ("v = asc.get_shape_size(4)", asc.KernelTypeError, "needs a ShapeInfo"),
    ("v = asc.array(asc.int32, 0)", asc.KernelValueError, "must be positive"),
    ("v = asc.array(asc.int32, [1], 2)", asc.KernelTypeError, "fill_value cannot"),
])
def test_compile_errors(body, cls, message):
    assert message in _compile_error(body, cls)
