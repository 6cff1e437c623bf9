// matmul_class.cpp with the tiling copied from a GM_ADDR word by word (the CopyTiling idiom of
// the programming guide's Matmul examples): a pointer over a local TCubeTiling.
#include "kernel_operator.h"
#include "lib/matmul_intf.h"

using AType = matmul::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>;
using BType = matmul::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>;
using CType = matmul::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float>;

class MatmulKernel {
public:
    __aicore__ inline MatmulKernel() {}
    __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR c, const TCubeTiling &tiling)
    {
        this->tiling = tiling;
        int32_t mBlocks = (tiling.M + tiling.singleCoreM - 1) / tiling.singleCoreM;
        int64_t mIndex = AscendC::GetBlockIdx() % mBlocks;
        int64_t nIndex = AscendC::GetBlockIdx() / mBlocks;
        aGm.SetGlobalBuffer((__gm__ half *)a + mIndex * tiling.singleCoreM * tiling.Ka);
        bGm.SetGlobalBuffer((__gm__ half *)b + nIndex * tiling.singleCoreN);
        cGm.SetGlobalBuffer((__gm__ float *)c + mIndex * tiling.singleCoreM * tiling.N +
                            nIndex * tiling.singleCoreN);
        tailM = std::min<int64_t>(tiling.M - mIndex * tiling.singleCoreM, tiling.singleCoreM);
        tailN = std::min<int64_t>(tiling.N - nIndex * tiling.singleCoreN, tiling.singleCoreN);
    }
    __aicore__ inline void Process()
    {
        if (AscendC::GetBlockIdx() >= tiling.usedCoreNum) {
            return;
        }
        matmulObj.SetTensorA(aGm);
        matmulObj.SetTensorB(bGm);
        matmulObj.SetTail(tailM, tailN);
        matmulObj.IterateAll(cGm);
        matmulObj.End();
    }

    matmul::Matmul<AType, BType, CType> matmulObj;

private:
    AscendC::GlobalTensor<half> aGm, bGm;
    AscendC::GlobalTensor<float> cGm;
    TCubeTiling tiling;
    int64_t tailM, tailN;
};

__aicore__ inline void CopyTiling(TCubeTiling *tiling, GM_ADDR tilingGM)
{
    uint32_t *ptr = reinterpret_cast<uint32_t *>(tiling);
    auto tiling32 = reinterpret_cast<__gm__ uint32_t *>(tilingGM);
    for (uint32_t i = 0; i < sizeof(TCubeTiling) / sizeof(uint32_t); i++, ptr++) {
        *ptr = *(tiling32 + i);
    }
    return;
}

extern "C" __global__ __aicore__ void matmul_copy_tiling(GM_ADDR a, GM_ADDR b, GM_ADDR c,
                                                         GM_ADDR workspace, GM_ADDR tilingGm)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);
    if ASCEND_IS_AIV {
        return;
    }
    TCubeTiling tiling;
    CopyTiling(&tiling, tilingGm);
    AscendC::TPipe pipe;
    MatmulKernel op;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), op.matmulObj, &tiling);
    op.Init(a, b, c, tiling);
    op.Process();
}
