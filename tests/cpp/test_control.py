"""switch/case/default/break with C's fall-through, ++/--/=/op= used as values, the comma
operator, do/while and ?: (cpp/control.py), against a Python model of the C program."""
import pathlib

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py import cpp

KERNELS = pathlib.Path(__file__).resolve().parent / "kernels"


def _expected(n):
    if n == 0:
        r = 1 + 10
    elif n in (1, 2):
        r = 10
    elif n == 5:
        r = 1000 + 5
    else:                      # default, falling into case 5
        r = 100 + 1000 + (0 if n > 6 else 5)
    a = n
    b = a
    a += 2
    c = a
    a += 2
    d = a
    w = 3
    while w < n:
        w += 3
    return [r, 2 + 3, 4, b * 1000 + c * 100 + d, w if w > 7 else -w, 4]


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 7, 9, -4])
def test_control_flow(n):
    m = cpp.load(KERNELS / "control.cpp")
    out = np.zeros(16, np.int32)
    m.k[1](out, n)
    assert list(out[:6]) == _expected(n)


TEMPLATE = '''#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void k(GM_ADDR out, int32_t a)
{{
    {stmt}
}}
'''


@pytest.mark.parametrize("stmt,message", [
    ("switch (a) { case 1: return; }", "not supported: return inside a switch"),
    ("for (;;) { switch (a) { case 1: continue; } }", "not supported: continue inside a "
                                                      "switch"),
    ("switch (a) { case a: break; }", "not supported: a case label that is not an integer"),
    ("switch (a) { case 1: case 1: break; }", "case 1 appears twice in this switch"),
    ("switch (a) { default: default: break; }", "two default labels in one switch"),
    ("switch (1.5f) { case 1: break; }", "switch needs an integer value"),
    ("int32_t b = a > 0 && a++ > 1;", "not supported: ++, -- or = in an operand of &&"),
    ("int32_t b = a > 0 ? (a = 1) : 2;", "not supported: ++, -- or = in an operand of &&"),
])
def test_control_misuse(stmt, message):
    with pytest.raises(asc.KernelError) as info:
        cpp.load(TEMPLATE.format(stmt=stmt), name="ctl.cpp")
    text = str(info.value)
    assert message in text and "ctl.cpp:5:" in text and "^" in text, text
