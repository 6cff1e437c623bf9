// The Matmul API in the operator-project style: the TCubeTiling is a field of the tiling
// struct the host's header declares (not here), read with GET_TILING_DATA.
#include "kernel_operator.h"
#include "lib/matmul_intf.h"
#include "matmul_custom_tiling.h"
using namespace AscendC;
using namespace matmul;

using AType = MatmulType<TPosition::GM, CubeFormat::ND, half>;
using BType = MatmulType<TPosition::GM, CubeFormat::ND, half>;
using CType = MatmulType<TPosition::GM, CubeFormat::ND, float>;

extern "C" __global__ __aicore__ void matmul_custom(GM_ADDR a, GM_ADDR b, GM_ADDR c,
                                                    GM_ADDR workspace, GM_ADDR tilingGm)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);
    GET_TILING_DATA(tilingData, tilingGm);
    TCubeTiling tiling = tilingData.cubeTilingData;
    if ASCEND_IS_AIC {
        int64_t block = GetBlockIdx();
        int32_t mBlocks = (tiling.M + tiling.singleCoreM - 1) / tiling.singleCoreM;
        int64_t mIndex = block % mBlocks;
        int64_t nIndex = block / mBlocks;
        GlobalTensor<half> aGm, bGm;
        GlobalTensor<float> cGm;
        aGm.SetGlobalBuffer((__gm__ half *)a + mIndex * tiling.singleCoreM * tiling.Ka);
        bGm.SetGlobalBuffer((__gm__ half *)b + nIndex * tiling.singleCoreN);
        cGm.SetGlobalBuffer((__gm__ float *)c + mIndex * tiling.singleCoreM * tiling.N
                            + nIndex * tiling.singleCoreN);
        TPipe pipe;
        Matmul<AType, BType, CType> mm;
        REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &tilingData.cubeTilingData);
        if (block < tiling.usedCoreNum) {
            mm.SetTensorA(aGm);
            mm.SetTensorB(bGm);
            mm.SetTail(std::min<int64_t>(tiling.M - mIndex * tiling.singleCoreM,
                                         tiling.singleCoreM),
                       std::min<int64_t>(tiling.N - nIndex * tiling.singleCoreN,
                                         tiling.singleCoreN));
            mm.IterateAll(cGm);
            mm.End();
        }
    }
}
