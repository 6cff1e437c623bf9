"""Local arrays of scalars (cpp/control.py): constexpr tables indexed by loop variables and
run-time values, mutable arrays (brace lists zero-fill, run-time loads and stores with C's
meaning), misuse refused at the line."""
import pathlib

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py import cpp

KERNELS = pathlib.Path(__file__).resolve().parent / "kernels"


def _expected(n):
    coef, shape, acc = [0.5, 1.5, 2.5], [n, 2 * n], [1.0, 0.0, 0.0, 0.0]
    for i in range(3):
        acc[i + 1] = acc[i] + coef[i] * shape[i % 2]
    acc[n % 4] += 100
    return acc + [3.0, coef[(n % 4) % 3], float(n * [n, n + 1][(n % 4) % 2]),
                        3 * 100 + 4 * 10 + 4]


@pytest.mark.parametrize("n", [1, 3, 6, 8])
def test_local_arrays(n):
    m = cpp.load(KERNELS / "local_arrays.cpp")
    out = np.zeros(16, np.float32)
    m.k[1](out, n)
    np.testing.assert_array_equal(out[:8], np.array(_expected(n), np.float32))


TEMPLATE = '''#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void k(GM_ADDR out, int32_t n)
{{
    {stmt}
}}
'''


@pytest.mark.parametrize("stmt,message", [
    ("int32_t a[n];", "not supported: an array size that is not a positive compile-time"),
    ("int32_t a[2] = {1, 2, 3};", "3 values for an array of 2"),
    ("int32_t a[2]; a[2] = 1;", "index 2 is outside the array (size 2)"),
    ("int32_t a[2][2];", "not supported: a local array of more than one dimension"),
    ("int32_t a[2] = n;", "not supported: initialising an array from a value"),
    ("int32_t a[300];", "not supported: a local array of more than 256 elements"),
    ("GlobalTensor<half> a[2];", "not supported: a local array of GlobalTensor"),
])
def test_array_misuse(stmt, message):
    with pytest.raises(asc.KernelError) as info:
        cpp.load(TEMPLATE.format(stmt=stmt), name="arr.cpp")
    text = str(info.value)
    assert message in text and "arr.cpp:5:" in text and "^" in text, text
