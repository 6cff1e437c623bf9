// C scalar semantics: results written to an int32 GM array with SetValue (one block).
#include "kernel_operator.h"
using namespace AscendC;

enum Mode { PLAIN = 0, TWICE = 2 };
using Index = int32_t;
constexpr int32_t K = -7;
constexpr uint32_t BIG = 4294967295u;       // UINT32_MAX
constexpr int32_t SHIFTED = (1 << 4) | 3;   // 19

template <int32_t N>
__aicore__ inline int32_t AddN(int32_t v) { return v + N; }

template <typename T>
__aicore__ inline T Clamp(T v, T lo, T hi)
{
    if (v < lo) {
        return lo;
    }
    if (v > hi) {
        return hi;
    }
    return v;
}

__aicore__ inline int32_t SumTo(int32_t n)
{
    int32_t s = 0;
    int32_t i = 0;
    while (true) {
        if (i > n) {
            break;
        }
        if (i % 2 == 1) {
            i++;
            continue;
        }
        s += i;
        i++;
    }
    return s;
}

class Counter {
public:
    __aicore__ inline Counter() : count(5) {}
    __aicore__ inline void Bump(int32_t by) { count += by; }
    __aicore__ inline int32_t Get() const { return this->count; }
private:
    int32_t count;
    int32_t unused = 3;
};

extern "C" __global__ __aicore__ void scalars(GM_ADDR out, int32_t a, int32_t b, uint32_t u)
{
    GlobalTensor<int32_t> o;
    o.SetGlobalBuffer((__gm__ int32_t *)out);
    Index k = 0;
    o.SetValue(0, a / b);                  // truncates toward zero
    o.SetValue(1, a % b);                  // the sign of a
    o.SetValue(2, K / 2);                  // compile-time: -3
    o.SetValue(3, (int32_t)(u + 1u));      // wraps to 0 for u = UINT32_MAX
    o.SetValue(4, (int32_t)(u * 2u / 4u)); // (2u*u mod 2^32) / 4
    o.SetValue(5, u > 5 ? 1 : 0);
    o.SetValue(6, (int32_t)(BIG == u));
    o.SetValue(7, SHIFTED);
    o.SetValue(8, AddN<10>(a));
    o.SetValue(9, Clamp<int32_t>(a, -3, 3));
    o.SetValue(10, Clamp(b, 0, 100));
    o.SetValue(11, SumTo(10));
    Counter c;
    c.Bump(a);
    c.Bump(2);
    o.SetValue(12, c.Get());
    o.SetValue(13, TWICE * (int32_t)sizeof(half));
    int32_t acc = 0;
    for (int32_t i = 10; i > 0; i -= 3) {
        acc = acc * 10 + i;
    }
    o.SetValue(14, acc);
    int32_t d = 0;
    do {
        d += 7;
    } while (d < 20);
    o.SetValue(15, d);
    o.SetValue(16, -a >> 1);
    o.SetValue(17, !(a > 0) || b == 0);
    float f = 2.5f;
    o.SetValue(18, (int32_t)(f * a));       // float to int truncates
    o.SetValue(19, (int32_t)(a < u));         // a converted to unsigned
    k = 20;
    o.SetValue(k, k);
}
