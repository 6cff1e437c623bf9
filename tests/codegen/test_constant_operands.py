"""Lowering with constant operands (``core._int_div_parts`` with a positive constant divisor,
``Codegen.e_bin`` folding two integer constants): Python's floor division and modulo, and
two's complement wrap-around, as with run-time operands."""
from __future__ import annotations

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler.codegen import core


@asc.kernel
def div_by_constants(z: asc.GlobalAddress, a: int, d: int):
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 16)
    zg.set_value(0, a // 4)
    zg.set_value(1, a % 4)
    zg.set_value(2, a // 3)
    zg.set_value(3, a % 3)
    zg.set_value(4, a // 1)
    zg.set_value(5, a % 1)
    zg.set_value(6, a // d)        # the same with the divisor at run time
    zg.set_value(7, a % d)


@pytest.mark.parametrize("a", [0, 1, 3, 4, 5, 7, -1, -3, -4, -5, -7, 2**31 - 1, -2**31])
def test_floor_division_by_a_positive_constant(a):
    z = np.zeros(16, np.int32)
    div_by_constants[1](z, a, 3)
    assert z[:8].tolist() == [a // 4, a % 4, a // 3, a % 3, a, 0, a // 3, a % 3]


@pytest.mark.parametrize("value,bits,want", [(2**31, 32, -2**31), (2**32 + 5, 32, 5),
                                             (-1, 32, -1), (-2**31 - 1, 32, 2**31 - 1),
                                             (300, 8, 44), (2**63, 64, -2**63)])
def test_folded_constants_wrap_as_twos_complement(value, bits, want):
    assert core._wrap(value, bits) == want
