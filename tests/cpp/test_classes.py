"""Classes as the programming guide writes them: constructors with parameters and
member-initialiser lists, constructors and methods defined outside the (template) class,
``this->member``, objects declared as ``K op(args);`` or ``K op{args};``."""
import pathlib

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py import cpp

KERNELS = pathlib.Path(__file__).resolve().parent / "kernels"


@pytest.mark.parametrize("n,f", [(256, 2.0), (64, -0.5)])
def test_constructor_with_parameters_and_initialisers(n, f):
    m = cpp.load(KERNELS / "ctor_params.cpp")
    x = np.linspace(-3, 3, 4 * n).astype(np.float32)
    want = x * np.float32(f) * np.float32(f)     # two objects, each scales once
    m.scale[4](x, n, f)
    np.testing.assert_array_equal(x, want)


TEMPLATE = '''#include "kernel_operator.h"
using namespace AscendC;
class Acc {{
public:
    __aicore__ inline Acc(int32_t a, int32_t b = 5) : x(a), y(b * 2) {{ z = x + y; }}
    __aicore__ inline Acc() : x(), y(1) {{ z = 7; }}
    int32_t x, y, z;
}};
{top}
extern "C" __global__ __aicore__ void k(GM_ADDR out, int32_t n)
{{
    GlobalTensor<int32_t> o;
    o.SetGlobalBuffer((__gm__ int32_t *)out, 8);
    {stmt}
}}
'''


def test_overloads_defaults_and_value_initialised_members():
    stmt = ("Acc a(n); Acc b(n, 1); Acc c; Acc d{3, 4};\n"
            "    o.SetValue(0, a.z); o.SetValue(1, b.z); o.SetValue(2, c.x);"
            " o.SetValue(3, c.z); o.SetValue(4, d.y);")
    m = cpp.load(TEMPLATE.format(top="", stmt=stmt), name="acc.cpp")
    out = np.zeros(8, np.int32)
    m.k[1](out, 4)
    assert list(out[:5]) == [4 + 10, 4 + 2, 0, 7, 8]


@pytest.mark.parametrize("top,stmt,message", [
    ("", "Acc a(1, 2, 3);", "Acc() takes"),
    ("class P { public: __aicore__ inline P(int32_t v); int32_t w; };", "P p(1);",
     "P() is declared but not defined"),
    ("class Q { public: __aicore__ inline Q(int32_t v) : w(v, v) {} int32_t w; };", "Q q(1);",
     "not supported: initialising the member 'w' from 2 values"),
    ("class R { public: __aicore__ inline R(int32_t v) : nope(v) {} int32_t w; };", "R r(1);",
     "class R has no member 'nope'"),
])
def test_constructor_misuse(top, stmt, message):
    with pytest.raises(asc.KernelError) as info:
        cpp.load(TEMPLATE.format(top=top, stmt=stmt), name="ctor.cpp")
    text = str(info.value)
    assert message in text and "ctor.cpp:" in text and "^" in text, text
