// The cube unit's low-level flow on raw layouts (as tests/ops/kernels_cube.py's mmad_kernel
// without a bias): LoadData GM -> L0A/L0B, Mmad twice (the second accumulates unless INIT2),
// Fixpipe L0C -> GM in the NZ layout.
#include "kernel_operator.h"
using namespace AscendC;

#ifndef INIT2
#define INIT2 true
#endif

extern "C" __global__ __aicore__ void mmad_custom(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c,
                                                  int32_t na, int32_t nb, int32_t nc,
                                                  int32_t nbias, int32_t m, int32_t n,
                                                  int32_t k, int32_t m2)
{
    GlobalTensor<half> ag, bg;
    GlobalTensor<float> sg, cg;
    ag.SetGlobalBuffer((__gm__ half *)a);
    bg.SetGlobalBuffer((__gm__ half *)b);
    sg.SetGlobalBuffer((__gm__ float *)bias);
    cg.SetGlobalBuffer((__gm__ float *)c);
    TPipe pipe;
    TBuf<TPosition::A2> ta;
    TBuf<TPosition::B2> tb;
    TBuf<TPosition::CO1> tc;
    TBuf<TPosition::C1> t1;
    TBuf<TPosition::C2> tt;
    pipe.InitBuffer(ta, na * (int32_t)sizeof(half));
    pipe.InitBuffer(tb, nb * (int32_t)sizeof(half));
    pipe.InitBuffer(tc, nc * 4);
    pipe.InitBuffer(t1, nbias * 4);
    pipe.InitBuffer(tt, nbias * 4);
    LocalTensor<half> l0a = ta.Get<half>();
    LocalTensor<half> l0b = tb.Get<half>();
    LocalTensor<float> l0c = tc.Get<float>();
    LoadData(l0a, ag, LoadData2DParams(0, na * (int32_t)sizeof(half) / 512, 1, 0, 0, false, 0));
    LoadData(l0b, bg, LoadData2DParams(0, nb * (int32_t)sizeof(half) / 512, 1, 0, 0, false, 0));
    PipeBarrier<PIPE_ALL>();
    Mmad(l0c, l0a, l0b, MmadParams(m, n, k, 0, false, true));
    PipeBarrier<PIPE_M>();
    Mmad(l0c, l0a, l0b, MmadParams(m2, n, k, 0, false, INIT2));
    PipeBarrier<PIPE_ALL>();
    int32_t m1 = (nc / 256) / ((n + 16 - 1) / 16);
    Fixpipe<float, float, CFG_NZ>(cg, l0c,
                                  FixpipeParamsV220((n + 16 - 1) / 16 * 16, m1 * 16, m1 * 16,
                                                    m1 * 16 * 16 * 4 / 32,
                                                    QuantMode_t::NoQuant));
}
