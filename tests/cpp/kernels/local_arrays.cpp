// Local arrays of scalars: constexpr/const tables (one and two dimensions, indexed by
// constants and run-time values), mutable arrays with brace lists and run-time stores.
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void k(GM_ADDR out, int32_t n)
{
    GlobalTensor<float> o;
    o.SetGlobalBuffer((__gm__ float *)out, 16);
    constexpr float coef[3] = {0.5f, 1.5f, 2.5f};
    const int32_t tab[2][2] = {{1, 2}, {3}};
    float acc[4] = {1.0f};
    int32_t shape[2];
    shape[0] = n; shape[1] = n * 2;
    for (int32_t i = 0; i < 3; i++) {
        acc[i + 1] = acc[i] + coef[i] * shape[i % 2];
    }
    int32_t j = n % 4;
    acc[j] += 100.0f;
    o.SetValue(0, acc[0]); o.SetValue(1, acc[1]); o.SetValue(2, acc[2]); o.SetValue(3, acc[3]);
    o.SetValue(4, (float)tab[1][0] + tab[1][1]);
    o.SetValue(5, coef[j % 3]);
    const int32_t dims[2] = {n, n + 1};
    o.SetValue(6, (float)(dims[0] * dims[j % 2]));
    o.SetValue(7, (float)(sizeof(coef) / sizeof(coef[0]) * 100 + sizeof(acc) / sizeof(float) * 10 +
                          sizeof(tab) / sizeof(int32_t)));
}
