"""The CopyTiling idiom (cpp/pointers.py): a tiling struct (the file's own or a TCubeTiling)
copied word by word from a GM_ADDR through a local pointer over the struct; pointer moves
(``p++``, ``p + i``, ``p[i]``, ``*p``) with C's semantics; misuse refused at the line."""
import pathlib

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py import cpp

KERNELS = pathlib.Path(__file__).resolve().parent / "kernels"

SCALE = r'''#include "kernel_operator.h"
using namespace AscendC;
struct ScaleTilingData { uint32_t totalLength; uint32_t tileNum; float scale; };
__aicore__ inline void CopyTiling(ScaleTilingData *tiling, GM_ADDR tilingGM)
{
    uint32_t *ptr = reinterpret_cast<uint32_t *>(tiling);
    auto tiling32 = reinterpret_cast<__gm__ uint32_t *>(tilingGM);
    for (uint32_t i = 0; i < sizeof(ScaleTilingData) / sizeof(uint32_t) - 1; i++, ptr++) {
        *ptr = *(tiling32 + i);
    }
    float *f = reinterpret_cast<float *>(tiling);
    auto g = reinterpret_cast<__gm__ float *>(tilingGM);
    {body}
}
extern "C" __global__ __aicore__ void scale(GM_ADDR x, GM_ADDR tilingGM)
{
    ScaleTilingData t;
    CopyTiling(&t, tilingGM);
    uint32_t n = t.totalLength / t.tileNum;
    GlobalTensor<float> xGm;
    xGm.SetGlobalBuffer((__gm__ float *)x + GetBlockIdx() * n, n);
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, n * sizeof(float));
    LocalTensor<float> tt = buf.Get<float>();
    DataCopy(tt, xGm, n);
    SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
    Muls(tt, tt, t.scale, n);
    SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
    WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
    DataCopy(xGm, tt, n);
}
'''


@pytest.mark.parametrize("body", ["f[2] = g[2];", "*(f + 2) = *(g + 2);",
                                  "f += 2; g = g + 2; *f = *g;",
                                  "f += 2;\n#pragma unroll\n    for (int k = 2; k < 3; ++k) "
                                  "{ *f++ = *(g + k); }"])
def test_copy_tiling_of_the_files_struct(body):
    m = cpp.load(SCALE.replace("{body}", body), name="scale.cpp")
    x = np.ones(1024, np.float32)
    m.scale[4](x, m.ScaleTilingData(totalLength=1024, tileNum=4, scale=2.5))
    assert (x == 2.5).all()
    y = np.ones(512, np.float32)
    m.scale[2](y, {"totalLength": 512, "tileNum": 2, "scale": -1.0})
    assert (y == -1.0).all()


@pytest.mark.parametrize("member", [False, True])
def test_copy_tiling_of_a_tcube_tiling_equals_the_parameter_form(member):
    import matmul
    from ascendc_py.compiler.ops.matmul import matmul_reference
    rng = np.random.default_rng(3)
    m_, n_, k_ = 150, 70, 48
    a = rng.uniform(-1, 1, (m_, k_)).astype(np.float16)
    b = rng.uniform(-1, 1, (k_, n_)).astype(np.float16)
    tiling = matmul.make_tiling(m_, n_, k_, np.float16, np.float32, False)
    text = (KERNELS / "matmul_copy_tiling.cpp").read_text()
    if member:     # copied into the kernel object's member: CopyTiling(&this->tiling, ...)
        text = text.replace("    __aicore__ inline void Process()",
                            "    __aicore__ inline void Load(GM_ADDR t) "
                            "{ CopyTiling(&this->tiling, t); }\n"
                            "    __aicore__ inline void Process()")
        text = text.replace("    op.Init(a, b, c, tiling);",
                            "    op.Init(a, b, c, tiling);\n    op.Load(tilingGm);")
    mod = cpp.load(text, name="matmul_copy_tiling.cpp")
    c = np.zeros((m_, n_), np.float32)
    r1 = mod.matmul_copy_tiling[tiling.used_core_num](a, b, c, None, tiling)
    asc.testing.assert_close(c, matmul_reference(a, b, None, np.float32), **matmul.TOLERANCE)
    ref = cpp.load(KERNELS / "matmul_class.cpp")
    c2 = np.zeros_like(c)
    r2 = ref.matmul_class[tiling.used_core_num](a, b, c2, tiling)
    assert (c == c2).all() and r1.cycles == r2.cycles


def _err(body):
    with pytest.raises(asc.KernelError) as info:
        cpp.load(SCALE.replace("{body}", body), name="p.cpp")
    return str(info.value)


@pytest.mark.parametrize("body,message", [
    ("uint32_t v = *ptr;", "bit reinterpretation"),
    ("f[2] = *(ptr + 2);", "the pointer is 4 words into a struct of 3 words: outside it"),
    ("f[2] = g[3];", "word 3 of 'tilingGM' is outside the struct"),
    ("*g = 1.0f;", "not supported: writing GM through a scalar pointer"),
    ("for (uint32_t k = 0; k < tiling->tileNum; k++) { f++; }",
     "not supported: a loop that moves a pointer whose condition is not known"),
    ("if (tiling->tileNum > 1) { f++; }", "not supported: moving a pointer inside a loop or "
                                          "branch"),
    ("f[2] = g[tiling->tileNum];", "'tilingGM' carries a tiling struct (copied word by word "
                                   "or read as a struct) and is read here as GM data"),
    ("ptr = ptr + tiling->tileNum;", "pointer offset must be known at compile time"),
    ("f[2] = *(g * 2);", "operator '*' on a pointer"),
])
def test_pointer_misuse_is_refused_at_its_line(body, message):
    text = _err(body)
    assert message in text, text
    assert "p.cpp:13" in text and "^" in text, text


def test_a_tcube_tiling_copied_in_part_is_refused():
    text = (KERNELS / "matmul_copy_tiling.cpp").read_text().replace(
        "i < sizeof(TCubeTiling) / sizeof(uint32_t)", "i < 5")
    with pytest.raises(asc.KernelError, match=r"TCubeTiling copied only in part \(5 of"):
        cpp.load(text, name="part.cpp")


MEMBER = r'''
#include "kernel_operator.h"
using namespace AscendC;
struct TilingData { uint32_t totalLength; uint32_t tileNum; };
__aicore__ inline void InitTilingData(GM_ADDR tiling, TilingData* const tilingData)
{
    uint32_t *ptr = reinterpret_cast<uint32_t *>(tilingData);
    auto tiling32 = reinterpret_cast<__gm__ uint32_t *>(tiling);
    for (int i = 0; i < sizeof(TilingData) / sizeof(uint32_t); i++, ptr++) {
        *ptr = *(tiling32 + i);
    }
}
class K {
public:
    __aicore__ inline K() {}
    __aicore__ inline void Init(GM_ADDR out, GM_ADDR tiling)
    {
        InitTilingData(tiling, &this->td);
        o.SetGlobalBuffer((__gm__ int32_t *)out, 8);
    }
    __aicore__ inline void Process()
    {
        o.SetValue(0, td.totalLength);
        o.SetValue(1, this->td.tileNum);
    }
private:
    GlobalTensor<int32_t> o;
    TilingData td;
};
extern "C" __global__ __aicore__ void k(GM_ADDR out, GM_ADDR tiling)
{
    K op;
    op.Init(out, tiling);
    op.Process();
}
'''


@pytest.mark.parametrize("init", [
    "InitTilingData(tiling, &this->td);",
    "InitTilingData(tiling, &td);",
    "GET_TILING_DATA(tilingData, tiling);\n        this->td = tilingData;",
    "TilingData local;\n        InitTilingData(tiling, &local);\n        td = local;",
])
def test_tiling_copied_into_a_struct_member(init):
    text = MEMBER.replace("InitTilingData(tiling, &this->td);", init)
    m = cpp.load(text, name="member.cpp")
    out = np.zeros(8, np.int32)
    m.k[1](out, m.TilingData(totalLength=77, tileNum=3))
    assert list(out[:2]) == [77, 3]


def test_struct_assignment_of_another_type_is_refused():
    text = MEMBER.replace("InitTilingData(tiling, &this->td);", "td = 3;")
    with pytest.raises(asc.KernelTypeError, match="cannot assign int32_t to a TilingData"):
        cpp.load(text, name="member.cpp")


GM_READS = r'''#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void k(GM_ADDR x, GM_ADDR h, GM_ADDR out, int32_t n)
{
    __gm__ float *p = (__gm__ float *)x;
    GlobalTensor<float> o;
    o.SetGlobalBuffer((__gm__ float *)out, 8);
    o.SetValue(0, *p);
    o.SetValue(1, p[3]);
    o.SetValue(2, *(p + n));
    p++;
    o.SetValue(3, *p);
    o.SetValue(4, p[n]);
    auto hp = reinterpret_cast<__gm__ half *>(h);
    o.SetValue(5, (float)hp[n]);
    o.SetValue(6, (float)*(hp + 1));
}
'''


@pytest.mark.parametrize("n", [0, 5, 9])
def test_gm_scalar_pointer_reads(n):
    m = cpp.load(GM_READS, name="gm.cpp")
    x = np.arange(16, dtype=np.float32) * 1.5
    h = np.arange(16, dtype=np.float16) + 0.5
    out = np.zeros(8, np.float32)
    m.k[1](x, h, out, n)
    want = [x[0], x[3], x[n], x[1], x[1 + n], float(h[n]), float(h[1])]
    np.testing.assert_array_equal(out[:7], np.array(want, np.float32))
