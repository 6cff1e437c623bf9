"""C++ front end errors: every construct outside the subset is "not supported: <construct>"
at its .cpp line and column with a caret, each with its own message; syntax errors name the
token; nothing shows a lark or Python stack."""
import pytest

import ascendc_py as asc
from ascendc_py import cpp

TEMPLATE = '''#include "kernel_operator.h"
using namespace AscendC;
{top}
extern "C" __global__ __aicore__ void k(GM_ADDR x, GM_ADDR y, int32_t n)
{{
    int32_t a = n;
    {stmt}
}}
'''

#: (file-scope code, statement, line, message): constructs outside the subset
CATALOGUE = [
    ("", "switch (a) { case 1: return; }", 7, "not supported: return inside a switch"),
    ("", "goto done;", 7, "not supported: goto"),
    ("", "int32_t *p = new int32_t[4];", 7, "not supported: new expression"),
    ("", "try { a = 1; } catch (...) {}", 7, "not supported: try/catch"),
    ("", "throw 1;", 7, "not supported: throw"),
    ("", "int32_t b[n];", 7, "not supported: an array size that is not a positive"),
    ("", "int32_t b = *x;", 7, "not supported: pointer dereference"),
    ("", "GM_ADDR q = &x;", 7, "not supported: address-of operator"),
    ("", "int32_t b = a > 0 && a++ > 1;", 7, "not supported: ++, -- or = in an operand"),
    ("", "for (;;) { switch (a) { case 1: continue; } }", 7,
     "not supported: continue inside a switch"),
    ("", "switch (a) { case a: break; }", 7, "not supported: a case label that is not"),
    ("", "static int32_t s = 0;", 7, "not supported: static local variable"),
    ("", "auto f = [](int v) { return v; };", 7, "not supported: lambda expression"),
    ("", 'printf(a);', 7, "printf needs a string literal format first"),
    ("", 'const char *s = "text";', 7, "not supported: string literal in a kernel"),
    ("", "char c = 'a';", 7, "not supported: character literal"),
    ("", "int32_t b = const_cast<int32_t>(a);", 7, "not supported: const_cast"),
    ("", "int32_t b = dynamic_cast<int32_t>(a);", 7, "not supported: dynamic_cast"),
    ("", "GlobalTensor<half> g; g.SetGlobalBuffer(reinterpret_cast<__gm__ half *>(n));", 7,
     "a (__gm__ half*) cast needs a GM_ADDR argument, got int32_t"),
    ("", "for (int32_t i = 0; i < n; i++) { return; }", 7,
     "not supported: return inside a loop"),
    ("", "class Local {};", 7, "not supported: class defined inside a function"),
    ("union U { int a; float b; };", "", 3, "not supported: union"),
    ("int32_t h;", "", 3, "not supported: global variable without a value"),
    ("struct B { int a; }; class D : public B { int a; };", "", 3,
     "not supported: a member 'a' that hides one of the base class B"),
    ("class C { public: virtual void f() {} };", "", 3, "not supported: virtual function"),
    ("class C { public: int operator+(int v) { return v; } };", "", 3,
     "not supported: operator overloading"),
    ("#define SQ(x) ((x) * (x))", "", 3, "not supported: function-like macro"),
    ("#if 1\n#endif", "", 3, "not supported: #if"),
    ("template <typename T> __global__ __aicore__ void t(GM_ADDR x) {}", "", 3,
     "not supported: template __global__ function"),
    ("", "x[0] = 1;", 7, "not supported: assigning a tensor element"),
    ("", "typeid(a);", 7, "not supported: typeid"),
    ("", 'asm("nop");', 7, "not supported: inline assembly"),
    ("", "int32_t b = decltype(a)(1);", 7, "not supported: decltype"),
    ("int32_t g = 1; int32_t v = g;", "g = 2;", 7, "cannot assign to a constant"),
    ("class K { public: __aicore__ inline K(int v) {} int w; };", "K k(1, 2);", 7,
     "K() takes 1 arguments but 2 were given"),
    ("", "#pragma unroll\n    for (int32_t i = 0; i < n; i++) {}", 7,
     "not supported: #pragma unroll on a loop without constant bounds"),
    ("class M { public: ~M(); }; M::~M() {}", "", 3,
     "syntax error: unexpected '~'"),
    ("__aicore__ inline int32_t G(int32_t v[4]) { return 1; }", "", 3,
     "not supported: array parameter"),
    ("class S { static int32_t count; };", "", 3,
     "not supported: static class member that is not a constexpr constant"),
    ("constexpr float C[2][1] = {{1.0f}, {2.0f}};", "float f = C[a][0];", 7,
     "not supported: indexing a constexpr array of arrays with a run-time index"),
    ("", "auto p = reinterpret_cast<__gm__ int32_t *>(x); *p = a;", 7,
     "not supported: writing GM through a scalar pointer"),
    ("", "auto p = reinterpret_cast<__gm__ int32_t *>(x);\n    while (a > 0) { p++; a--; }", 8,
     "not supported: moving a pointer inside a loop or branch whose condition"),
]


@pytest.mark.parametrize("top,stmt,line,message", CATALOGUE,
                         ids=[c[3][:40] for c in CATALOGUE])
def test_unsupported_construct(top, stmt, line, message):
    src = TEMPLATE.format(top=top, stmt=stmt)
    with pytest.raises(asc.KernelError) as info:
        cpp.load(src, name="catalogue.cpp")
    text = str(info.value)
    assert f"catalogue.cpp:{line}:" in text, text
    assert message in text, text
    assert "^" in text
    for internal in ("lark", "Traceback", "lower.py", "parse.py"):
        assert internal not in text


def test_catalogue_messages_are_distinct():
    messages = [c[3] for c in CATALOGUE]
    assert len(set(messages)) == len(messages) >= 20


@pytest.mark.parametrize("stmt,found", [("a = 1 +;", "';'"), ("a = (1;", "';'"),
                                        ("if a > 0 { }", "'a'"), ("int32_t = 3;", "'='")])
def test_syntax_errors_point_at_the_token(stmt, found):
    with pytest.raises(asc.KernelSyntaxError) as info:
        cpp.load(TEMPLATE.format(top="", stmt=stmt), name="syntax.cpp")
    text = str(info.value)
    assert "syntax.cpp:7:" in text and f"syntax error: unexpected {found}" in text
    assert "^" in text


def test_undeclared_name_and_unknown_api():
    with pytest.raises(asc.KernelNameError, match="'b' is not declared"):
        cpp.load(TEMPLATE.format(top="", stmt="a = b;"), name="names.cpp")
    with pytest.raises(asc.KernelSyntaxError, match="unknown function 'NoSuchApi'"):
        cpp.load(TEMPLATE.format(top="", stmt="NoSuchApi(a);"), name="names.cpp")


def test_type_checker_errors_name_the_cpp_line():
    """An error found by the shared type checker (sema) points into the .cpp file."""
    import numpy as np
    src = TEMPLATE.format(top="", stmt="TPipe pipe;\n    TQue<TPosition::VECIN, 1> q;\n"
                                       "    pipe.InitBuffer(q, 1, 64);\n"
                                       "    LocalTensor<half> t = q.AllocTensor<half>();\n"
                                       "    Add(t, t, n, 16);")
    m = cpp.load(src, name="sema.cpp")
    x = np.zeros(16, np.float16)
    with pytest.raises(asc.KernelError) as info:
        m.k[1](x, x.copy(), 3)
    assert "sema.cpp:11:" in str(info.value)


def test_no_kernel_in_file():
    with pytest.raises(asc.KernelSyntaxError, match="no kernel in this file"):
        cpp.load("constexpr int32_t N = 1;\n", name="empty.cpp")


def test_bad_escape_in_a_printf_format():
    src = TEMPLATE.format(top="", stmt='printf("\\x", a);')
    with pytest.raises(asc.KernelTypeError, match="bad escape"):
        cpp.load(src, name="escape.cpp")
