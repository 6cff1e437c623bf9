/**
 * LeakyReLU, y = x if x >= 0 else slope * x, with the host's tiling struct: the kernel reads
 * the total length and the slope with GET_TILING_DATA, splits the elements between the blocks
 * (the last block also takes the remainder) and runs a double-buffered TQue pipeline over
 * tiles of TILE elements, the last one shorter.
 *
 * The same kernel as samples/leaky_relu.py. From Python:
 *   m = asc.cpp.load("samples/cpp/leaky_relu_custom.cpp")
 *   m.leaky_relu_custom[8](x, y, m.LeakyReluTilingData(totalLength=x.size, slope=0.01))
 * (a dict {"totalLength": ..., "slope": ...} works too).
 */
#include "kernel_operator.h"
using namespace AscendC;

struct LeakyReluTilingData {
    int32_t totalLength;    // elements of x and y
    float slope;            // the negative slope
};

#ifndef DTYPE_X
#define DTYPE_X half
#endif
#ifndef TILE
#define TILE 4096
#endif
constexpr int32_t BUFFER_NUM = 2;

template <typename T>
class KernelLeakyRelu {
public:
    __aicore__ inline KernelLeakyRelu() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, int32_t totalLength, float slope)
    {
        int64_t blocks = GetBlockNum();
        int64_t share = totalLength / blocks;
        int64_t start = GetBlockIdx() * share;
        length = share;
        if (GetBlockIdx() == blocks - 1) {
            length = totalLength - start;       // the last block takes the remainder
        }
        this->slope = slope;
        xGm.SetGlobalBuffer((__gm__ T *)x + start, length);
        yGm.SetGlobalBuffer((__gm__ T *)y + start, length);
        pipe.InitBuffer(inQueue, BUFFER_NUM, TILE * sizeof(T));
        pipe.InitBuffer(outQueue, BUFFER_NUM, TILE * sizeof(T));
    }
    __aicore__ inline void Process()
    {
        int64_t done = 0;
        while (done < length) {
            int64_t n = std::min<int64_t>(TILE, length - done);
            CopyIn(done, n);
            Compute(n);
            CopyOut(done, n);
            done += n;
        }
    }

private:
    __aicore__ inline void CopyIn(int64_t offset, int64_t n)
    {
        LocalTensor<T> src = inQueue.AllocTensor<T>();
        DataCopy(src, xGm[offset], n);
        inQueue.EnQue(src);
    }
    __aicore__ inline void Compute(int64_t n)
    {
        LocalTensor<T> src = inQueue.DeQue<T>();
        LocalTensor<T> dst = outQueue.AllocTensor<T>();
        LeakyRelu(dst, src, slope, n);
        outQueue.EnQue(dst);
        inQueue.FreeTensor(src);
    }
    __aicore__ inline void CopyOut(int64_t offset, int64_t n)
    {
        LocalTensor<T> dst = outQueue.DeQue<T>();
        DataCopy(yGm[offset], dst, n);
        outQueue.FreeTensor(dst);
    }

    TPipe pipe;
    TQue<TPosition::VECIN, BUFFER_NUM> inQueue;
    TQue<TPosition::VECOUT, BUFFER_NUM> outQueue;
    GlobalTensor<T> xGm, yGm;
    int64_t length;
    float slope;
};

extern "C" __global__ __aicore__ void leaky_relu_custom(GM_ADDR x, GM_ADDR y, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KernelLeakyRelu<DTYPE_X> op;
    op.Init(x, y, tilingData.totalLength, tilingData.slope);
    op.Process();
}
