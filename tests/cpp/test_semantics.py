"""C semantics and the general subset on kernels written for these tests
(tests/cpp/kernels/): integer division truncating toward zero, unsigned wrap-around,
constexpr folding, templates over types and int constants with deduction, enums, aliases,
early returns, while/do/for with break and continue, member initialisers, TBufs with
manual flags, a uint32 tiling struct, an unused workspace parameter passed as None, the
host wrapper dropped by #ifndef ASCENDC_CPU_DEBUG."""
import pathlib

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py import cpp

KERNELS = pathlib.Path(__file__).resolve().parent / "kernels"


def _c_div(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _expected(a, b, u):
    wrap32 = lambda v: ((v + 2**31) % 2**32) - 2**31  # noqa: E731
    clamp = lambda v, lo, hi: lo if v < lo else (hi if v > hi else v)  # noqa: E731
    acc = 0
    for i in range(10, 0, -3):
        acc = acc * 10 + i
    return [_c_div(a, b), a - _c_div(a, b) * b, -3, wrap32((u + 1) % 2**32),
            wrap32(((u * 2) % 2**32) // 4), int(u > 5), int(u == 2**32 - 1), 19, wrap32(a + 10),
            clamp(a, -3, 3), clamp(b, 0, 100), 30, wrap32(5 + a + 2), 4, acc, 21,
            wrap32(-a) >> 1, int(not (a > 0) or b == 0), int(2.5 * a),
            int(a % 2**32 < u), 20]


@pytest.mark.parametrize("a,b,u", [(-17, 5, 4294967295), (17, -5, 7), (100, 7, 0), (-1000, -1, 2**31),
                                   (123456, 2, 2**32 - 2)])
def test_scalar_semantics(a, b, u):
    m = cpp.load(KERNELS / "scalars.cpp")
    out = np.zeros(32, np.int32)
    m.scalars[1](out, a, b, u)
    assert out[:21].tolist() == _expected(a, b, u)


def test_unsigned_argument_range_is_checked():
    m = cpp.load(KERNELS / "scalars.cpp")
    with pytest.raises(asc.KernelLaunchError, match="does not fit uint32_t"):
        m.scalars[1](np.zeros(32, np.int32), 1, 1, -1)


def test_division_by_zero_names_the_line():
    m = cpp.load(KERNELS / "scalars.cpp")
    with pytest.raises(asc.KernelRuntimeError) as info:
        m.scalars[1](np.zeros(32, np.int32), 1, 0, 1)
    assert "scalars.cpp:59:" in str(info.value) and "a / b" in str(info.value)


@pytest.mark.parametrize("blocks,tiles", [(8, 4), (2, 3)])
def test_tbuf_flags_cast_uint32_tiling(blocks, tiles):
    m = cpp.load(KERNELS / "flags_tbuf.cpp")
    n = blocks * tiles * 512
    rng = np.random.default_rng(n)
    x = rng.random(n).astype(np.float16)
    y = rng.random(n).astype(np.float16)
    z = np.zeros(n, np.float32)
    m.add_flags[blocks](x, y, z, None, m.AddTilingData(totalLength=n, tileNum=tiles))
    np.testing.assert_allclose(z, 2 * (x + y).astype(np.float32), rtol=1e-6)


def test_sanitizer_and_trace_work_on_cpp_kernels(tmp_path):
    m = cpp.load(KERNELS / "flags_tbuf.cpp")
    n = 2 * 2 * 512
    x = np.ones(n, np.float16)
    z = np.zeros(n, np.float32)
    report = m.add_flags[2](x, x, z, None, {"totalLength": n, "tileNum": 2},
                            sanitize=True, trace=True)
    assert (z == 4).all()
    path = report.save_trace(tmp_path / "t.json")
    assert "flags_tbuf.cpp" in pathlib.Path(path).read_text()


def _without_struct(src: str, replacement: str) -> str:
    start = src.index("struct AddTilingData")
    end = src.index("};", start) + 2
    return src[:start] + replacement + src[end:]


def _run_flags(m, struct_name=None):
    n = 2 * 2 * 512
    x = np.full(n, 1.5, np.float16)
    z = np.zeros(n, np.float32)
    m.add_flags[2](x, x, z, None, {"tileNum": 2, "totalLength": n})
    assert (z == 6).all()


def test_tiling_struct_from_an_included_header(tmp_path):
    (tmp_path / "t.h").write_text("#pragma once\nstruct FlagsTilingData {\n"
                                  "    uint32_t totalLength;\n    uint32_t tileNum;\n};\n")
    src = _without_struct((KERNELS / "flags_tbuf.cpp").read_text(), '#include "t.h"')
    (tmp_path / "k.cpp").write_text(src)
    m = cpp.load(tmp_path / "k.cpp")
    assert list(m.FlagsTilingData.struct_fields) == ["totalLength", "tileNum"]
    _run_flags(m)
    (tmp_path / "t.h").write_text("struct FlagsTilingData {\n    uint32_t totalLength\n};\n")
    with pytest.raises(asc.KernelSyntaxError) as info:
        cpp.load(tmp_path / "k.cpp")
    assert "t.h:3:1: syntax error" in str(info.value)


def test_tiling_struct_not_in_the_file_is_inferred_from_its_uses():
    src = _without_struct((KERNELS / "flags_tbuf.cpp").read_text(), '#include "absent.h"')
    m = cpp.load(src, name="inferred.cpp")
    assert {k: f.dtype for k, f in m.TilingData.struct_fields.items()} == {
        "totalLength": asc.uint32, "tileNum": asc.uint32}
    _run_flags(m)


DTYPES = {"DTYPE_X": "half", "DTYPE_Y": "half", "DTYPE_Z": "half"}


def test_operator_project_style_kernel():
    with pytest.raises(asc.KernelNameError) as info:
        cpp.load(KERNELS / "add_opproj.cpp")
    assert "defines={'DTYPE_X': 'half'}" in str(info.value)
    m = cpp.load(KERNELS / "add_opproj.cpp", defines=DTYPES)
    x = np.random.default_rng(0).random(8 * 2048).astype(np.float16)
    y = np.random.default_rng(1).random(x.size).astype(np.float16)
    z = np.zeros_like(x)
    m.add_custom[8](x, y, z, None, {"totalLength": x.size, "tileNum": 8})
    asc.testing.assert_close(z, (x + y).astype(np.float16))


def test_assert_message_is_reported():
    m = cpp.load(KERNELS / "add_opproj.cpp", defines=DTYPES)
    x = np.zeros(8 * 2048, np.float16)
    with pytest.raises(asc.KernelRuntimeError) as info:
        m.add_custom[8](x, x.copy(), x.copy(), None, {"totalLength": x.size, "tileNum": 0})
    assert "tile num can not be zero" in str(info.value)
    assert "add_opproj.cpp:" in str(info.value)


@pytest.mark.parametrize("n", [1000, 8, 1024])
def test_vector_apis_with_records(n):
    """DataCopyPad with DataCopyExtParams{...}/DataCopyPadExtParams<T>{...}, Duplicate,
    ReduceSum, GetValue/SetValue, Exp, Adds, Muls by a value read from a tensor."""
    m = cpp.load(KERNELS / "vector_apis.cpp")
    x = np.random.default_rng(n).random(n).astype(np.float32) * 0.1
    y = np.zeros(n, np.float32)
    s = np.zeros(8, np.float32)
    m.vec[1](x, y, s, n)
    np.testing.assert_allclose(s[0], x.sum(), rtol=1e-5)
    np.testing.assert_allclose(y, (np.exp(x) + 1) * s[0], rtol=1e-5)


def test_methods_defined_outside_the_class():
    src = """
template <typename T>
class K {
public:
    __aicore__ inline K() {}
    __aicore__ inline void Init(GM_ADDR x);
    __aicore__ inline void Process();
private:
    AscendC::GlobalTensor<T> xGm;
};
template <typename T>
__aicore__ inline void K<T>::Init(GM_ADDR x) { xGm.SetGlobalBuffer((__gm__ T *)x); }
template <typename T>
__aicore__ inline void K<T>::Process() { xGm.SetValue(0, (T)(sizeof(T) * 10)); }
extern "C" __global__ __aicore__ void k(GM_ADDR x) { K<int32_t> op; op.Init(x); op.Process(); }
"""
    out = np.zeros(8, np.int32)
    cpp.load(src, name="outside.cpp").k[1](out)
    assert out[0] == 40


def test_default_arguments():
    src = """
__aicore__ inline int32_t F(int32_t a, int32_t b = 3) { return a * b; }
extern "C" __global__ __aicore__ void k(GM_ADDR out)
{
    GlobalTensor<int32_t> o;
    o.SetGlobalBuffer((__gm__ int32_t *)out);
    o.SetValue(0, F(5));
    o.SetValue(1, F(5, 7));
}
"""
    out = np.zeros(8, np.int32)
    cpp.load(src, name="defaults.cpp").k[1](out)
    assert out[:2].tolist() == [15, 35]


def test_class_constant_through_its_scope():
    src = """
class Sizes { public: static constexpr int32_t TILE = 64; };
extern "C" __global__ __aicore__ void k(GM_ADDR out)
{
    GlobalTensor<int32_t> o;
    o.SetGlobalBuffer((__gm__ int32_t *)out);
    o.SetValue(0, Sizes::TILE * 2);
}
"""
    out = np.zeros(8, np.int32)
    cpp.load(src, name="scoped.cpp").k[1](out)
    assert out[0] == 128


def test_named_casts_and_auto():
    src = '''
#include "kernel_operator.h"
extern "C" __global__ __aicore__ void scale(GM_ADDR x, int32_t n, float f)
{
    AscendC::GlobalTensor<float> xGm;
    xGm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(x), static_cast<uint32_t>(n));
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, n * sizeof(float));
    auto t = buf.Get<float>();
    AscendC::DataCopy(t, xGm, n);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::Muls(t, t, static_cast<float>(f * 2), n);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopy(xGm, t, n);
}
'''
    m = cpp.load(src, name="casts.cpp")
    x = np.ones(64, np.float32)
    m.scale[1](x, 64, 1.5)
    assert (x == 3).all()


def test_static_constexpr_class_member():
    src = (pathlib.Path(__file__).resolve().parents[2] / "samples" / "cpp" /
           "add_custom.cpp").read_text()
    src = src.replace("constexpr int32_t BUFFER_NUM = 2;", "").replace(
        "private:\n    TPipe pipe;", "private:\n    static constexpr int32_t BUFFER_NUM = 2;\n"
                                     "    TPipe pipe;")
    assert "static constexpr" in src
    m = cpp.load(src, name="static_member.cpp")
    x = np.random.default_rng(5).random(8 * 2048).astype(np.float16)
    z = np.zeros_like(x)
    m.add_custom[8](x, x, z, 2048)
    asc.testing.assert_close(z, (x + x).astype(np.float16))


@pytest.mark.parametrize("init2", [True, False])
def test_low_level_cube_flow_matches_the_python_kernel(init2):
    """LoadData/Mmad/Fixpipe<float, float, CFG_NZ> with LoadData2DParams, MmadParams and
    FixpipeParamsV220 records, QuantMode_t::NoQuant: the same L0C and cycles as
    tests/ops/kernels_cube.py's mmad_kernel."""
    import sys
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "ops"))
    try:
        import test_cube
        from kernels_cube import mmad_kernel
    finally:
        sys.path.pop(0)
    from ascendc_py.dsl.types import float16
    m_, n_, k_ = 20, 37, 45
    a, b, na, nb, nc = test_cube._mmad_inputs(float16, m_, n_, k_, m_)
    bias = np.zeros(48, np.float32)
    c, c_py = np.zeros(nc, np.float32), np.zeros(nc, np.float32)
    mod = cpp.load(KERNELS / "mmad.cpp", defines={"INIT2": "true" if init2 else "false"})
    report = mod.mmad_custom[1](a, b, bias, c, na, nb, nc, 48, m_, n_, k_, m_)
    report_py = mmad_kernel[1](a, b, bias, c_py, na, nb, nc, 48, m_, n_, k_, m_, init2, False)
    np.testing.assert_array_equal(c, c_py)
    assert report.cycles == report_py.cycles


def test_printf_prints_after_the_launch(capsys):
    src = """
extern "C" __global__ __aicore__ void k(GM_ADDR x, int32_t n)
{
    AscendC::PRINTF("block %d of %d: n=%d\\n", (int32_t)GetBlockIdx(), (int32_t)GetBlockNum(), n);
}
"""
    cpp.load(src, name="printf.cpp").k[2](np.zeros(8, np.float32), 7)
    out = capsys.readouterr().out
    assert "block 0 of 2: n=7" in out and "block 1 of 2: n=7" in out
