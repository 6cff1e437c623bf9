/**
 * Matrix multiply with the high-level Matmul API, C = A @ B (+ bias), split over the cube
 * cores: the host's TCubeTiling cuts M x N into single-core blocks; each block points A, B, C
 * and the bias at its part, sets the tails of the last row/column of blocks and lets
 * IterateAll compute it. A cube-only kernel (KERNEL_TYPE_AIC_ONLY), the work under
 * ASCEND_IS_AIC as Ascend C code guards cube work.
 *
 * The same kernel as samples/matmul.py. From Python (tiling from ascendc_py.host):
 *   m = asc.cpp.load("samples/cpp/matmul_custom.cpp")
 *   m.matmul_custom[tiling.used_core_num](a, b, c, bias, tiling)
 * Element types are macros: defines={"C_TYPE": "half"} for a float16 C.
 */
#include "kernel_operator.h"
#include "lib/matmul_intf.h"
using namespace AscendC;
using namespace matmul;

#ifndef C_TYPE
#define C_TYPE float
#endif
typedef MatmulType<TPosition::GM, CubeFormat::ND, half> AType;
typedef MatmulType<TPosition::GM, CubeFormat::ND, half> BType;
typedef MatmulType<TPosition::GM, CubeFormat::ND, C_TYPE> CType;
typedef MatmulType<TPosition::GM, CubeFormat::ND, float> BiasType;

extern "C" __global__ __aicore__ void matmul_custom(GM_ADDR a, GM_ADDR b, GM_ADDR c,
                                                    GM_ADDR bias, TCubeTiling tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);
    if ASCEND_IS_AIC {
        int64_t block = GetBlockIdx();
        int32_t mBlocks = (tiling.M + tiling.singleCoreM - 1) / tiling.singleCoreM;
        int64_t mIndex = block % mBlocks;
        int64_t nIndex = block / mBlocks;
        GlobalTensor<half> aGm;
        GlobalTensor<half> bGm;
        GlobalTensor<C_TYPE> cGm;
        GlobalTensor<float> biasGm;
        aGm.SetGlobalBuffer((__gm__ half *)a + mIndex * tiling.singleCoreM * tiling.Ka);
        bGm.SetGlobalBuffer((__gm__ half *)b + nIndex * tiling.singleCoreN);
        cGm.SetGlobalBuffer((__gm__ C_TYPE *)c + mIndex * tiling.singleCoreM * tiling.N
                            + nIndex * tiling.singleCoreN);
        biasGm.SetGlobalBuffer((__gm__ float *)bias + nIndex * tiling.singleCoreN);
        int64_t tailM = std::min<int64_t>(tiling.M - mIndex * tiling.singleCoreM,
                                          tiling.singleCoreM);
        int64_t tailN = std::min<int64_t>(tiling.N - nIndex * tiling.singleCoreN,
                                          tiling.singleCoreN);
        TPipe pipe;
        Matmul<AType, BType, CType, BiasType> mm;
        REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &tiling);
        if (block < tiling.usedCoreNum) {
            mm.SetTensorA(aGm);
            mm.SetTensorB(bGm);
            if (tiling.isBias) {
                mm.SetBias(biasGm);
            }
            mm.SetTail(tailM, tailN);
            mm.IterateAll(cGm);
            mm.End();
        }
    }
}
