// switch with fall-through, default in the middle and a break under a condition; a switch on a
// constant; comma in for clauses and declarations; ++/--/= and op= as values; do/while; ?:.
#include "kernel_operator.h"
using namespace AscendC;
constexpr int32_t MODE = 2;
extern "C" __global__ __aicore__ void k(GM_ADDR out, int32_t n)
{
    GlobalTensor<int32_t> o;
    o.SetGlobalBuffer((__gm__ int32_t *)out, 16);
    int32_t r = 0;
    switch (n) {
        case 0:
            r += 1;
        case 1:
        case 2:
            r += 10;
            break;
        default:
            r += 100;
        case 5:
            r += 1000;
            if (n > 6) {
                break;
            }
            r += 5;
    }
    o.SetValue(0, r);
    int32_t s = 0;
    switch (MODE) { case 1: s = 1; break; case 2: s = 2; default: s += 3; }
    o.SetValue(1, s);
    int32_t i = 0, j = 0, cnt = 0;
    for (i = 0, j = 10; i < j; ++i, j -= 2) { cnt++; }
    o.SetValue(2, cnt);
    int32_t a = n;
    int32_t b = a++;
    int32_t c = ++a;
    int32_t d = (a += 2);
    o.SetValue(3, b * 1000 + c * 100 + d);
    int32_t w = 0;
    do { w += 3; } while (w < n);
    o.SetValue(4, w > 7 ? w : -w);
    int32_t q = 0;
    while (q++ < 3) { }
    o.SetValue(5, q);
}
