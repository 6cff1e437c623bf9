"""The end-of-kernel flag checks (``rtfuncs.kernel_end``): a wait_flag still pending is the
hang it would be on hardware (an error), a set_flag nobody waited for a warning naming the
flag, and a kernel whose flags all paired up ends silently (its fast path: one pass over the
flag slots finds them all zero)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler.errors import FlagLeftSetWarning, UnsatisfiedWaitError


@asc.kernel
def flags(x: asc.GlobalAddress, CASE: asc.ConstExpr[int]):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 8)
    if CASE == 0:                               # paired
        asc.set_flag(asc.HardEvent.V_MTE3, 1)
        asc.wait_flag(asc.HardEvent.V_MTE3, 1)
    elif CASE == 1:                             # set, never waited for
        asc.set_flag(asc.HardEvent.MTE3_MTE2, 5)
    else:                                       # waited for, never set
        asc.wait_flag(asc.HardEvent.MTE2_V, 2)


def test_paired_flags_end_silently():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        flags[2](np.zeros(8, np.float32), 0)


def test_a_flag_left_set_is_a_warning_naming_it():
    with pytest.warns(FlagLeftSetWarning, match="MTE3_MTE2.*5.*still set when the kernel ends"):
        flags[2](np.zeros(8, np.float32), 1)


def test_a_wait_never_satisfied_is_an_error():
    with pytest.raises(UnsatisfiedWaitError, match="MTE2_V.*2.*never satisfied"):
        flags[2](np.zeros(8, np.float32), 2)
