"""ListTensorDesc / TensorDesc (``compiler/sema/list_tensor.py``) over buffers built in the
documented layout: sizes, descriptors, shapes, data pointers and objects (read and written),
the length / shape_size checks and the errors of a bad layout or index."""
from __future__ import annotations

import numpy as np
import pytest

import ascendc_py as asc


def build(shapes, dtypes, values):
    """The list buffer (uint64 words): [P][dim, shape...]...[data offsets...][data...]."""
    desc = []
    for shape in shapes:
        desc += [len(shape), *shape]
    table_word = 1 + len(desc)
    data_word = table_word + len(shapes)
    words, offsets, blobs = data_word, [], []
    for v, dt in zip(values, dtypes):
        raw = np.asarray(v, dt).tobytes()
        raw += b"\0" * (-len(raw) % 8)
        offsets.append(words * 8)
        blobs.append(raw)
        words += len(raw) // 8
    head = np.array([table_word * 8, *desc, *offsets], np.uint64).tobytes()
    return np.frombuffer(head + b"".join(blobs), np.uint64).copy(), offsets


@asc.kernel
def walk(x: asc.GlobalAddress, o: asc.GlobalAddress, f: asc.GlobalAddress, n: int,
         INIT: asc.ConstExpr[int]):
    og = asc.GlobalTensor()
    fg = asc.GlobalTensor()
    og.set_global_buffer(o, 16)
    fg.set_global_buffer(f, 4)
    if INIT:
        lst = asc.ListTensorDesc()
        lst.init(data=x, shape_size=n)
    else:
        lst = asc.ListTensorDesc(x, 0xffffffff, n)
    og.set_value(0, lst.get_size())
    a = asc.TensorDesc(asc.int32)
    a.set_shape_addr(0)
    lst.get_desc(a, 0)
    og.set_value(1, a.get_dim())
    og.set_value(2, a.get_shape(0))
    og.set_value(3, a.get_shape(1))
    og.set_value(4, a.get_index())
    ag = a.get_data_obj()
    og.set_value(5, ag.get_value(5))
    ag.set_value(0, 77)
    b = asc.TensorDesc(dtype=asc.float32)
    lst.get_desc(b, index=1)
    og.set_value(6, b.get_dim())
    og.set_value(7, b.get_shape(0))
    og.set_value(8, b.get_index())
    bg = asc.GlobalTensor()
    bg.set_global_buffer(lst.get_data_ptr(index=1, dtype=asc.float32))
    fg.set_value(0, bg.get_value(3))
    cg = asc.GlobalTensor()
    cg.set_global_buffer(b.get_data_ptr())
    fg.set_value(1, cg.get_value(1))


@pytest.mark.parametrize("init", [0, 1])
def test_descriptors_shapes_and_data(init):
    a = np.arange(6, dtype=np.int32) + 10
    b = np.array([0.5, 1.5, 2.5, 3.5], np.float32)
    x, offsets = build([(2, 3), (4,)], [np.int32, np.float32], [a, b])
    o = np.zeros(16, np.int64)
    f = np.zeros(4, np.float32)
    walk[1](x, o, f, 2, init)
    assert list(o[:9]) == [2, 2, 2, 3, 0, 15, 1, 4, 1]
    assert list(f[:2]) == [3.5, 1.5]
    got = x.view(np.uint8)[offsets[0]:offsets[0] + 24].view(np.int32)
    assert list(got) == [77, 11, 12, 13, 14, 15]          # written through get_data_obj


def test_shape_size_is_checked():
    x, _ = build([(2, 3), (4,)], [np.int32, np.float32], [np.zeros(6), np.zeros(4)])
    with pytest.raises(asc.KernelAssertionError, match="shape_size"):
        walk[1](x, np.zeros(16, np.int64), np.zeros(4, np.float32), 3, 0)


def test_an_index_past_the_list_stops_the_kernel():
    x, _ = build([(2, 3)], [np.int32], [np.zeros(6)])    # one tensor; walk asks for index 1
    with pytest.raises(asc.KernelAssertionError, match="past the last tensor"):
        walk[1](x, np.zeros(16, np.int64), np.zeros(4, np.float32), 0xffffffff, 0)


def test_a_bad_table_offset_stops_the_kernel():
    x, _ = build([(2, 3), (4,)], [np.int32, np.float32], [np.zeros(6), np.zeros(4)])
    x[0] = 12
    with pytest.raises(asc.KernelAssertionError, match="multiple of 8"):
        walk[1](x, np.zeros(16, np.int64), np.zeros(4, np.float32), 2, 0)


@asc.kernel
def unfilled(o: asc.GlobalAddress, READ: asc.ConstExpr[int]):
    og = asc.GlobalTensor()
    og.set_global_buffer(o, 4)
    d = asc.TensorDesc()
    og.set_value(0, d.get_dim())
    og.set_value(1, d.get_index())
    if READ == 1:
        og.set_value(2, d.get_shape(0))
    elif READ == 2:
        g = d.get_data_obj()
        og.set_value(2, g.get_value(0))


def test_an_unfilled_desc():
    o = np.full(4, 9, np.int64)
    unfilled[1](o, 0)
    assert list(o[:2]) == [0, 0]
    with pytest.raises(asc.KernelAssertionError, match="not below get_dim"):
        unfilled[1](o, 1)
    with pytest.raises(asc.GlobalTensorUnsetError):
        unfilled[1](o, 2)


@asc.kernel
def wrong(x: asc.GlobalAddress, KIND: asc.ConstExpr[int]):
    lst = asc.ListTensorDesc(x)
    if KIND == 0:
        lst.get_desc(x, 0)
    else:
        asc.ListTensorDesc(lst)


def test_compile_errors_name_the_line():
    with pytest.raises(asc.KernelTypeError, match="needs an asc.TensorDesc"):
        wrong[1](np.zeros(8, np.uint64), 0)
    with pytest.raises(asc.OperandKindError, match="GlobalAddress"):
        wrong[1](np.zeros(8, np.uint64), 1)
