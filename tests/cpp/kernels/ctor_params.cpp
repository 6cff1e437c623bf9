// Constructors with parameters and member-initialiser lists, defined outside a class
// template (K<T>::K(...) : a(x), b() {...}), this->member, K op(args) and K op{args}.
#include "kernel_operator.h"
using namespace AscendC;
constexpr int32_t BUFFER_NUM = 2;
template <typename T>
class KernelScale {
public:
    __aicore__ inline KernelScale(GM_ADDR x, uint32_t len, float f);
    __aicore__ inline void Process();
private:
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    GlobalTensor<T> xGm;
    uint32_t n;
    float factor;
    int32_t unused;
};
template <typename T>
__aicore__ inline KernelScale<T>::KernelScale(GM_ADDR x, uint32_t len, float f)
    : n(len), factor(f), unused()
{
    this->xGm.SetGlobalBuffer((__gm__ T *)x + GetBlockIdx() * this->n, n);
    pipe.InitBuffer(buf, n * sizeof(T));
}
template <typename T>
__aicore__ inline void KernelScale<T>::Process()
{
    LocalTensor<T> t = buf.Get<T>();
    DataCopy(t, xGm, n);
    SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
    Muls(t, t, (T)(this->factor + unused), n);
    SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
    WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
    DataCopy(xGm, t, n);
}
extern "C" __global__ __aicore__ void scale(GM_ADDR x, uint32_t n, float f)
{
    KernelScale<float> op(x, n, f);
    op.Process();
    KernelScale<float> op2{x, n, f};
    op2.Process();
}
