// out = exp(x - max?) style pieces: DataCopyPad with its parameter records, Duplicate,
// ReduceSum with a work tensor, GetValue/SetValue, Exp, Div, Adds, for an n not a multiple
// of 32 bytes (one block, one tile).
#include "kernel_operator.h"
using namespace AscendC;
constexpr int32_t PADDED = 1024;   // elements the local buffers hold

template <typename T>
class KernelVec {
public:
    __aicore__ inline KernelVec() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR s, uint32_t n)
    {
        this->n = n;
        xGm.SetGlobalBuffer((__gm__ T *)x, n);
        yGm.SetGlobalBuffer((__gm__ T *)y, n);
        sGm.SetGlobalBuffer((__gm__ T *)s, 8);
        pipe.InitBuffer(inQueue, 1, PADDED * sizeof(T));
        pipe.InitBuffer(outQueue, 1, PADDED * sizeof(T));
        pipe.InitBuffer(workBuf, PADDED * sizeof(T));
        pipe.InitBuffer(sumBuf, 32);
    }
    __aicore__ inline void Process()
    {
        LocalTensor<T> xLocal = inQueue.AllocTensor<T>();
        DataCopyExtParams copyParams{1, (uint32_t)(n * sizeof(T)), 0, 0, 0};
        DataCopyPadExtParams<T> padParams{true, 0, 0, 0};
        DataCopyPad(xLocal, xGm, copyParams, padParams);
        inQueue.EnQue(xLocal);
        xLocal = inQueue.DeQue<T>();
        LocalTensor<T> yLocal = outQueue.AllocTensor<T>();
        LocalTensor<T> work = workBuf.Get<T>();
        LocalTensor<T> sum = sumBuf.Get<T>();
        Duplicate(yLocal, (T)0, PADDED);
        ReduceSum(sum, xLocal, work, n);
        T total = sum.GetValue(0);
        Exp(yLocal, xLocal, n);
        Adds(yLocal, yLocal, (T)1.0, n);
        Muls(yLocal, yLocal, total, n);
        outQueue.EnQue(yLocal);
        inQueue.FreeTensor(xLocal);
        yLocal = outQueue.DeQue<T>();
        DataCopyPad(yGm, yLocal, copyParams);
        outQueue.FreeTensor(yLocal);
        sGm.SetValue(0, total);
    }

private:
    TPipe pipe;
    TQue<TPosition::VECIN, 1> inQueue;
    TQue<TPosition::VECOUT, 1> outQueue;
    TBuf<TPosition::VECCALC> workBuf, sumBuf;
    GlobalTensor<T> xGm, yGm, sGm;
    uint32_t n;
};

extern "C" __global__ __aicore__ void vec(GM_ADDR x, GM_ADDR y, GM_ADDR s, uint32_t n)
{
    KernelVec<float> op;
    op.Init(x, y, s, n);
    op.Process();
}
