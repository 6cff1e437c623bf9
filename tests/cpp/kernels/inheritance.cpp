// Simple inheritance without virtual functions: a base class holding the pipe, the GM tensors
// and shared steps, a derived kernel class adding its own members and Compute; the base's
// constructor runs first (named in the initialiser list or by default).
#include "kernel_operator.h"
using namespace AscendC;

class KernelBase {
public:
    __aicore__ inline KernelBase(uint32_t len) : n(len) { steps = 0; }
    __aicore__ inline void Bind(GM_ADDR x, GM_ADDR y)
    {
        xGm.SetGlobalBuffer((__gm__ float *)x + GetBlockIdx() * n, n);
        yGm.SetGlobalBuffer((__gm__ float *)y + GetBlockIdx() * n, n);
        pipe.InitBuffer(buf, n * sizeof(float));
    }
    __aicore__ inline LocalTensor<float> CopyIn()
    {
        LocalTensor<float> t = buf.Get<float>();
        DataCopy(t, xGm, n);
        SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
        WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
        steps++;
        return t;
    }
    __aicore__ inline void CopyOut(LocalTensor<float> t)
    {
        SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
        WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
        DataCopy(yGm, t, n);
        steps++;
    }

protected:
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    GlobalTensor<float> xGm, yGm;
    uint32_t n;
    int32_t steps;
};

class KernelAffine : public KernelBase {
public:
    __aicore__ inline KernelAffine(uint32_t len, float a, float b) : KernelBase(len), mul(a)
    {
        this->add = b;
    }
    __aicore__ inline void Process()
    {
        LocalTensor<float> t = CopyIn();
        Muls(t, t, mul, n);
        Adds(t, t, add + (float)steps, this->n);
        CopyOut(t);
    }

private:
    float mul, add;
};

class KernelCopy : public KernelBase {
public:
    __aicore__ inline void Process(GM_ADDR x, GM_ADDR y)
    {
        Bind(x, y);
        CopyOut(CopyIn());
    }
};

extern "C" __global__ __aicore__ void affine(GM_ADDR x, GM_ADDR y, uint32_t n, float a, float b)
{
    KernelAffine op(n, a, b);
    op.Bind(x, y);
    op.Process();
}
