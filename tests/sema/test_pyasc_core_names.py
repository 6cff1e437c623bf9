"""pyasc's core names beyond the ops: the dtype aliases ``double``/``int_``, ``asc.number``
(a typed scalar) and ``asc.inline`` (verbatim C++, refused at the call with what to do)."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import ascendc_py as asc


def test_dtype_aliases_are_pyasc_s():
    assert asc.double is asc.float64 and asc.int_ is asc.int32


@asc.kernel
def typed_numbers(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int):
    xg = asc.GlobalTensor()
    yg = asc.GlobalTensor()
    xg.set_global_buffer(x, 8)
    yg.set_global_buffer(y, 8)
    xg.set_value(0, asc.number(2.2, asc.float16))        # rounded to float16 at compile time
    xg.set_value(1, asc.number(n, asc.float16))          # a run-time int converted
    yg.set_value(0, asc.number(300, asc.int8))            # wraps as a store to int8 does
    yg.set_value(1, asc.number(-7.9, asc.int_))           # C truncation toward zero


def test_number_is_a_typed_scalar():
    x = np.zeros(8, np.float16)
    y = np.zeros(8, np.int32)
    typed_numbers[1](x, y, 3)
    assert x[0] == np.float16(2.2) and x[1] == 3
    assert y[0] == np.int8(np.int32(300).astype(np.int8)) and y[1] == -7


def test_inline_is_refused_at_its_line():
    def k(x: asc.GlobalAddress):
        asc.inline("AscendC::PipeBarrier<PIPE_ALL>();")
    with pytest.raises(asc.KernelError) as e:
        asc.kernel(k)[1](np.zeros(8, np.float32))
    assert e.value.loc.line == inspect.getsourcelines(k)[1] + 1
    assert "verbatim C++" in str(e.value) and "asc.cpp.load" in str(e.value)
