/**
 * Vector add, z = x + y, written the way the Ascend C programming guide introduces kernels:
 * a class with Init/Process and the CopyIn/Compute/CopyOut pipeline over double-buffered
 * TQues, launched by an extern "C" __global__ __aicore__ entry. Each block adds its share of
 * blockLength elements in tiles of TILE_LENGTH.
 *
 * The same kernel as samples/add_tque.py (same tiles, same instructions, same cycles).
 * ascendc_py: m = asc.cpp.load("samples/cpp/add_custom.cpp"); m.add_custom[8](x, y, z, n // 8)
 * Element type and tile length are macros, as -D options: defines={"DTYPE_X": "float"}.
 */
#include "kernel_operator.h"
using namespace AscendC;

#ifndef DTYPE_X
#define DTYPE_X half
#endif
#ifndef TILE_LENGTH
#define TILE_LENGTH 1024        // elements per tile (the Python sample's tile_length)
#endif
constexpr int32_t BUFFER_NUM = 2;   // double buffering: copy-in of tile i+1 overlaps tile i

template <typename T>
class KernelAdd {
public:
    __aicore__ inline KernelAdd() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, int32_t blockLength)
    {
        this->blockLength = blockLength;
        int64_t offset = GetBlockIdx() * blockLength;
        xGm.SetGlobalBuffer((__gm__ T *)x + offset, blockLength);
        yGm.SetGlobalBuffer((__gm__ T *)y + offset, blockLength);
        zGm.SetGlobalBuffer((__gm__ T *)z + offset, blockLength);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, TILE_LENGTH * sizeof(T));
        pipe.InitBuffer(inQueueY, BUFFER_NUM, TILE_LENGTH * sizeof(T));
        pipe.InitBuffer(outQueueZ, BUFFER_NUM, TILE_LENGTH * sizeof(T));
    }
    __aicore__ inline void Process()
    {
        for (int32_t i = 0; i < blockLength / TILE_LENGTH; i++) {
            CopyIn(i);
            Compute(i);
            CopyOut(i);
        }
    }

private:
    __aicore__ inline void CopyIn(int32_t progress)
    {
        LocalTensor<T> xLocal = inQueueX.AllocTensor<T>();
        LocalTensor<T> yLocal = inQueueY.AllocTensor<T>();
        DataCopy(xLocal, xGm[progress * TILE_LENGTH], TILE_LENGTH);
        DataCopy(yLocal, yGm[progress * TILE_LENGTH], TILE_LENGTH);
        inQueueX.EnQue(xLocal);
        inQueueY.EnQue(yLocal);
    }
    __aicore__ inline void Compute(int32_t progress)
    {
        LocalTensor<T> xLocal = inQueueX.DeQue<T>();
        LocalTensor<T> yLocal = inQueueY.DeQue<T>();
        LocalTensor<T> zLocal = outQueueZ.AllocTensor<T>();
        Add(zLocal, xLocal, yLocal, TILE_LENGTH);
        outQueueZ.EnQue<T>(zLocal);
        inQueueX.FreeTensor(xLocal);
        inQueueY.FreeTensor(yLocal);
    }
    __aicore__ inline void CopyOut(int32_t progress)
    {
        LocalTensor<T> zLocal = outQueueZ.DeQue<T>();
        DataCopy(zGm[progress * TILE_LENGTH], zLocal, TILE_LENGTH);
        outQueueZ.FreeTensor(zLocal);
    }

private:
    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX, inQueueY;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueZ;
    GlobalTensor<T> xGm;
    GlobalTensor<T> yGm;
    GlobalTensor<T> zGm;
    int32_t blockLength;
};

extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z,
                                                 int32_t blockLength)
{
    KernelAdd<DTYPE_X> op;
    op.Init(x, y, z, blockLength);
    op.Process();
}
