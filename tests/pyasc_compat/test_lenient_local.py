"""Lenient mode past a LocalTensor (what pyasc's generalization tests rely on): an instruction
that runs past its tensor but stays inside the memory, and a LocalTensor made longer than its
buffer, are warnings naming the line and behave as on the device; strict mode (the default)
stops the kernel; the memory's own end stays an error in both. No pyasc checkout needed."""
from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler.errors import (KernelAssertionError, LocalOutOfRangeError,
                                        TensorExtentError, TensorExtentWarning)


def _line_of(fn, text: str) -> int:
    lines, start = inspect.getsourcelines(fn.fn)
    return start + next(i for i, ln in enumerate(lines) if text in ln)


@asc.kernel
def full_mask_on_half_tile(x: asc.GlobalAddress, z: asc.GlobalAddress):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 128)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 128)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, 256)
    whole = buf.get(asc.float16)
    asc.data_copy(whole, xg, 128)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    half = buf.get_with_offset(size=64, buf_offset=0, dtype=asc.float16)
    asc.adds(half, half, 1.0, mask=[2 ** 64 - 1, 2 ** 64 - 1], repeat_times=1,
             repeat_params=asc.UnaryRepeatParams(1, 1, 8, 8))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(zg, whole, 128)


def test_strict_mode_stops_an_instruction_past_its_tensor():
    x = np.arange(128, dtype=np.float16)
    with pytest.raises(TensorExtentError, match=r"adds dst 'half' would use elements \[0, "
                                                r"128\) but the tensor has 64"):
        full_mask_on_half_tile[1](x, np.zeros(128, np.float16))


def test_lenient_mode_runs_past_the_tensor_as_the_device_does():
    x = np.arange(128, dtype=np.float16)
    z = np.zeros(128, np.float16)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        full_mask_on_half_tile[1](x, z, lenient=True)
    # all 128 lanes were written: the 64 after the tensor are the rest of the TBuf
    np.testing.assert_array_equal(z, x + np.float16(1))
    slack = [w for w in caught if issubclass(w.category, TensorExtentWarning)]
    assert slack, [str(w.message) for w in caught]
    text = str(slack[0].message)
    assert f":{_line_of(full_mask_on_half_tile, 'asc.adds(')}:" in text
    assert "'half' uses elements [0, 128) of a tensor of 64 elements in UB" in text


@asc.kernel
def past_the_memory(z: asc.GlobalAddress):
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 64)
    t = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 192 * 1024 - 256, 64)
    asc.duplicate(t, 1.0, 128)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(zg, t, 64)


def test_lenient_mode_keeps_the_memory_bound():
    with pytest.raises(LocalOutOfRangeError):
        past_the_memory[1](np.zeros(64, np.float32), lenient=True)


@asc.kernel
def longer_buffer(x: asc.GlobalAddress, z: asc.GlobalAddress):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 64)
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 1)
    pipe.init_buffer(q, 1, 64 * 2)
    t = q.alloc_tensor(asc.float16)
    t.set_buffer_len(64 * 4)                      # pyasc's test_vadd_sw: 4 bytes an element
    zg.set_value(0, t.get_size())
    t.set_size(64)
    asc.data_copy(t, xg, 64)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(zg[32:], t, 32)
    q.free_tensor(t)


def test_set_buffer_len_past_the_buffer_strict_and_lenient():
    x = np.arange(64, dtype=np.float16)
    with pytest.raises(KernelAssertionError, match="can only be made shorter") as info:
        longer_buffer[1](x, np.zeros(64, np.float16))
    line = _line_of(longer_buffer, "t.set_buffer_len(")
    assert info.value.loc.line == line
    z = np.zeros(64, np.float16)
    with pytest.warns(TensorExtentWarning, match=rf":{line}:.*set_buffer_len: the new length "
                                                 rf"is larger than the tensor \(lenient"):
        longer_buffer[1](x, z, lenient=True)
    assert z[0] == 128                            # the length it was given, unchecked
    np.testing.assert_array_equal(z[32:], x[:32])


def test_set_buffer_len_negative_stays_an_error_in_lenient_mode():
    @asc.kernel
    def negative(z: asc.GlobalAddress, n: int):
        pipe = asc.TPipe()
        q = asc.TQue(asc.TPosition.VECIN, 1)
        pipe.init_buffer(q, 1, 128)
        t = q.alloc_tensor(asc.float16)
        t.set_buffer_len(n)
        q.free_tensor(t)

    with pytest.raises(KernelAssertionError, match="the new length is negative"):
        negative[1](np.zeros(8, np.float16), -2, lenient=True)
