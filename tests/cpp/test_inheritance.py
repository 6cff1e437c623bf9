"""Simple inheritance without virtual functions (cpp/unit.py ``_inherit``): a derived kernel
class gets its base's members and methods, the base's constructor runs first (named in the
initialiser list or by default); what is outside is refused at its line."""
import pathlib

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py import cpp

KERNELS = pathlib.Path(__file__).resolve().parent / "kernels"


@pytest.mark.parametrize("n,a,b", [(128, 3.0, 0.5), (64, -1.0, 2.0)])
def test_derived_kernel_class(n, a, b):
    m = cpp.load(KERNELS / "inheritance.cpp")
    x = np.linspace(-2, 2, 4 * n).astype(np.float32)
    y = np.zeros_like(x)
    m.affine[4](x, y, n, a, b)
    # the base counted one step (CopyIn) before Compute read it
    np.testing.assert_array_equal(y, x * np.float32(a) + np.float32(b + 1.0))


TEMPLATE = '''#include "kernel_operator.h"
using namespace AscendC;
class Base {{
public:
    __aicore__ inline Base() {{ v = 7; }}
    __aicore__ inline int32_t Get() {{ return v; }}
    int32_t v;
}};
{top}
extern "C" __global__ __aicore__ void k(GM_ADDR out)
{{
    GlobalTensor<int32_t> o;
    o.SetGlobalBuffer((__gm__ int32_t *)out, 8);
    {stmt}
}}
'''


def test_default_base_constructor_and_hiding_by_name():
    top = ("class D : public Base { public: __aicore__ inline int32_t Get() { return v + 1; }"
           " __aicore__ inline int32_t Both() { return Get() * 10 + v; } };\n"
           "class E : public Base { public: __aicore__ inline E() : w(2) {} int32_t w; };")
    stmt = "D d; E e; o.SetValue(0, d.Both()); o.SetValue(1, e.Get() + e.w);"
    m = cpp.load(TEMPLATE.format(top=top, stmt=stmt), name="inh.cpp")
    out = np.zeros(8, np.int32)
    m.k[1](out)
    assert list(out[:2]) == [8 * 10 + 7, 9]


@pytest.mark.parametrize("top,stmt,line,message", [
    ("class D : public Base { public: int32_t v; };", "", 9,
     "not supported: a member 'v' that hides one of the base class Base"),
    ("class D : public Missing {};", "", 9, "syntax error: unexpected 'Missing'"),
    ("template <typename T> class TB { public: T t; };\nclass D : public TB<int32_t> {};", "",
     10, "not supported: a template or qualified base class"),
    ("class V { public: virtual void f() {} };", "", 9, "not supported: virtual function"),
    ("class P { public: __aicore__ inline P(int32_t a) {} };\nclass D : public P {};",
     "D d;", 15, "P() takes 1 arguments but 0 were given"),
])
def test_inheritance_misuse(top, stmt, line, message):
    with pytest.raises(asc.KernelError) as info:
        cpp.load(TEMPLATE.format(top=top, stmt=stmt), name="inh.cpp")
    text = str(info.value)
    assert message in text and f"inh.cpp:{line}:" in text and "^" in text, text
