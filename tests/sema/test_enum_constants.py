"""Enum members keep their type as module constants and ConstExpr arguments (issue 12 item 11),
and an IntEnum used as a number is its value, as in Python."""
from __future__ import annotations

import numpy as np
import pytest

import ascendc_py as asc

POS = asc.TPosition.VECCALC
EVENT = asc.HardEvent.V_MTE3


@asc.kernel
def from_module_constants(x: asc.GlobalAddress):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)
    a = asc.LocalTensor(asc.float32, POS, 0, 64)
    asc.duplicate(a, 3.0, 64)
    asc.set_flag(EVENT, 0)
    asc.wait_flag(EVENT, 0)
    asc.data_copy(xg, a, 64)


def test_module_level_enum_constants():
    x = np.zeros(64, np.float32)
    from_module_constants[1](x)
    assert (x == 3.0).all()


@asc.kernel
def cast_with(x: asc.GlobalAddress, y: asc.GlobalAddress, MODE: asc.ConstExpr[asc.RoundMode]):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y, 64)
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 64)
    b = asc.LocalTensor(asc.int32, asc.TPosition.VECOUT, 1024, 64)
    asc.data_copy(a, xg, 64)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.cast(b, a, MODE, 64)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(yg, b, 64)


@pytest.mark.parametrize("mode,want", [(asc.RoundMode.CAST_FLOOR, -2),
                                       (asc.RoundMode.CAST_CEIL, -1),
                                       (asc.RoundMode.CAST_RINT, -2)])
def test_constexpr_enum_argument(mode, want):
    x = np.full(64, -1.5, np.float32)
    y = np.zeros(64, np.int32)
    cast_with[1](x, y, mode)
    assert (y == want).all()


@asc.kernel
def enum_as_number(x: asc.GlobalAddress, MODE: asc.ConstExpr[asc.RoundMode]):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 8)
    xg.set_value(0, 1 if MODE == asc.RoundMode.CAST_RINT else 2)
    xg.set_value(1, int(POS))
    xg.set_value(2, POS + 1)
    xg.set_value(3, 1 if MODE == int(asc.RoundMode.CAST_RINT) else 0)


def test_int_enum_members_are_numbers_where_numbers_are_needed():
    x = np.zeros(8, np.int32)
    enum_as_number[1](x, asc.RoundMode.CAST_RINT)
    assert x[:4].tolist() == [1, int(POS), int(POS) + 1, 1]
