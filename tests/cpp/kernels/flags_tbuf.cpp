// z = (x + y) * 2 in float, from half inputs: TBufs, manual SetFlag/WaitFlag, Cast, Muls,
// a uint32_t tiling read through GET_TILING_DATA, an unused workspace parameter.
#include "kernel_operator.h"
using namespace AscendC;

struct AddTilingData {
    uint32_t totalLength;
    uint32_t tileNum;
};

class KernelAddFlags {
public:
    __aicore__ inline KernelAddFlags() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t totalLength,
                                uint32_t tileNum)
    {
        this->blockLength = totalLength / GetBlockNum();
        this->tileNum = tileNum;
        this->tileLength = this->blockLength / tileNum;
        xGm.SetGlobalBuffer((__gm__ half *)x + this->blockLength * GetBlockIdx(), this->blockLength);
        yGm.SetGlobalBuffer((__gm__ half *)y + this->blockLength * GetBlockIdx(), this->blockLength);
        zGm.SetGlobalBuffer((__gm__ float *)z + this->blockLength * GetBlockIdx(), this->blockLength);
        pipe.InitBuffer(xBuf, this->tileLength * sizeof(half));
        pipe.InitBuffer(yBuf, this->tileLength * sizeof(half));
        pipe.InitBuffer(sumBuf, this->tileLength * sizeof(half));
        pipe.InitBuffer(outBuf, this->tileLength * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        LocalTensor<half> xLocal = xBuf.Get<half>();
        LocalTensor<half> yLocal = yBuf.Get<half>();
        LocalTensor<half> sLocal = sumBuf.Get<half>();
        LocalTensor<float> zLocal = outBuf.Get<float>();
        for (uint32_t i = 0; i < tileNum; ++i) {
            DataCopy(xLocal, xGm[i * tileLength], tileLength);
            DataCopy(yLocal, yGm[i * tileLength], tileLength);
            SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
            WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
            Add(sLocal, xLocal, yLocal, tileLength);
            PipeBarrier<PIPE_V>();
            Cast(zLocal, sLocal, RoundMode::CAST_NONE, tileLength);
            PipeBarrier<PIPE_V>();
            Muls(zLocal, zLocal, 2.0f, tileLength);
            SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
            WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
            DataCopy(zGm[i * tileLength], zLocal, tileLength);
            SetFlag<HardEvent::MTE3_MTE2>(EVENT_ID0);
            WaitFlag<HardEvent::MTE3_MTE2>(EVENT_ID0);
        }
    }

private:
    TPipe pipe;
    TBuf<QuePosition::VECCALC> xBuf, yBuf, sumBuf, outBuf;
    GlobalTensor<half> xGm, yGm;
    GlobalTensor<float> zGm;
    uint32_t blockLength;
    uint32_t tileNum;
    uint32_t tileLength;
};

extern "C" __global__ __aicore__ void add_flags(GM_ADDR x, GM_ADDR y, GM_ADDR z,
                                                GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KernelAddFlags op;
    op.Init(x, y, z, tilingData.totalLength, tilingData.tileNum);
    op.Process();
}

#ifndef ASCENDC_CPU_DEBUG
void add_flags_do(uint32_t blockDim, void *stream, uint8_t *x, uint8_t *y, uint8_t *z)
{
    add_flags<<<blockDim, nullptr, stream>>>(x, y, z, nullptr, nullptr);
}
#endif
