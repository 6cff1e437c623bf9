/**
 * Sepia filter over NCHW images (3 channels), the seed article's coefficients:
 *     R' = .393 R + .769 G + .189 B
 *     G' = .349 R + .686 G + .168 B
 *     B' = .272 R + .534 G + .131 B
 * Blocks split the pixels of every image (shares rounded up to 16 pixels); each tile loads the
 * three colour planes into one TQue buffer, computes the three outputs with Muls/Add on the
 * vector unit (a TBuf holds the partial products) and stores them.
 *
 * The same kernel as samples/sepia.py. From Python:
 *   m = asc.cpp.load("samples/cpp/sepia_custom.cpp")
 *   m.sepia_custom[8](img, out, n, h * w)
 */
#include "kernel_operator.h"
using namespace AscendC;

#ifndef DTYPE_X
#define DTYPE_X half
#endif
constexpr int32_t TILE = 2048;          // pixels per tile
constexpr float SEPIA[3][3] = {{0.393f, 0.769f, 0.189f},
                               {0.349f, 0.686f, 0.168f},
                               {0.272f, 0.534f, 0.131f}};

// dst = cr * r + cg * g + cb * b, rounding after every operation as the vector unit does
template <typename T>
__aicore__ inline void Mix(const LocalTensor<T> &dst, const LocalTensor<T> &r,
                           const LocalTensor<T> &g, const LocalTensor<T> &b,
                           const LocalTensor<T> &tmp, float cr, float cg, float cb, int64_t n)
{
    Muls(dst, r, cr, n);
    Muls(tmp, g, cg, n);
    Add(dst, dst, tmp, n);
    Muls(tmp, b, cb, n);
    Add(dst, dst, tmp, n);
}

template <typename T>
class KernelSepia {
public:
    __aicore__ inline KernelSepia() {}
    __aicore__ inline void Init(GM_ADDR img, GM_ADDR out, int32_t images, int32_t hw)
    {
        this->images = images;
        this->hw = hw;
        int64_t share = ((hw + GetBlockNum() - 1) / GetBlockNum() + 16 - 1) / 16 * 16;
        start = std::min<int64_t>(GetBlockIdx() * share, hw);
        end = std::min<int64_t>(start + share, hw);
        srcGm.SetGlobalBuffer((__gm__ T *)img);
        dstGm.SetGlobalBuffer((__gm__ T *)out);
        pipe.InitBuffer(inQueue, 2, 3 * TILE * sizeof(T));
        pipe.InitBuffer(outQueue, 2, 3 * TILE * sizeof(T));
        pipe.InitBuffer(calcBuf, TILE * sizeof(T));
    }
    __aicore__ inline void Process()
    {
        LocalTensor<T> tmp = calcBuf.Get<T>();
        for (int32_t n = 0; n < images; n++) {
            int32_t base = n * 3 * hw;
            int64_t p = start;
            while (p < end) {
                int64_t count = std::min<int64_t>(TILE, end - p);
                CopyIn(base, p, count);
                Compute(tmp, count);
                CopyOut(base, p, count);
                p += count;
            }
        }
    }

private:
    __aicore__ inline void CopyIn(int32_t base, int64_t p, int64_t count)
    {
        LocalTensor<T> rgb = inQueue.AllocTensor<T>();
#pragma unroll
        for (int32_t c = 0; c < 3; c++) {
            DataCopy(rgb[c * TILE], srcGm[base + c * hw + p], count);
        }
        inQueue.EnQue(rgb);
    }
    __aicore__ inline void Compute(const LocalTensor<T> &tmp, int64_t count)
    {
        LocalTensor<T> rgb = inQueue.DeQue<T>();
        LocalTensor<T> res = outQueue.AllocTensor<T>();
#pragma unroll
        for (int32_t c = 0; c < 3; c++) {
            Mix(res[c * TILE], rgb, rgb[TILE], rgb[2 * TILE], tmp, SEPIA[c][0], SEPIA[c][1],
                SEPIA[c][2], count);
        }
        outQueue.EnQue(res);
        inQueue.FreeTensor(rgb);
    }
    __aicore__ inline void CopyOut(int32_t base, int64_t p, int64_t count)
    {
        LocalTensor<T> res = outQueue.DeQue<T>();
#pragma unroll
        for (int32_t c = 0; c < 3; c++) {
            DataCopy(dstGm[base + c * hw + p], res[c * TILE], count);
        }
        outQueue.FreeTensor(res);
    }

    TPipe pipe;
    TQue<TPosition::VECIN, 2> inQueue;
    TQue<TPosition::VECOUT, 2> outQueue;
    TBuf<TPosition::VECCALC> calcBuf;
    GlobalTensor<T> srcGm, dstGm;
    int32_t images, hw;
    int64_t start, end;
};

extern "C" __global__ __aicore__ void sepia_custom(GM_ADDR img, GM_ADDR out, int32_t images,
                                                   int32_t hw)
{
    KernelSepia<DTYPE_X> op;
    op.Init(img, out, images, hw);
    op.Process();
}
