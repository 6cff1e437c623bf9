"""Row softmax, y[r] = exp(x[r] - max(x[r])) / sum(exp(x[r] - max(x[r]))), float32 and float16,
on Ascend C's SoftMax high-level API (asc.adv.softmax).

Blocks split the rows; each row goes through a double-buffered TQue pipeline and one call of
asc.adv.softmax (a SoftmaxTiling of one row built in the kernel, a temporary buffer from a
TBuf): ReduceMax, Adds(-max), Exp, ReduceSum, Div, float16 computed in float32 (see the README,
"Norms and activations"). The golden function replays that algorithm in NumPy (the registry's
reduction references give the summation order); the result is also checked against a float64
softmax. Run: python samples/softmax.py
"""
import numpy as np

import ascendc_py as asc
from ascendc_py.compiler.ops import REGISTRY

BUFFER_NUM = 2
MAX_COLS = 4096
#: asc.adv.softmax's temporary buffer for one row of MAX_COLS (host_adv.get_softmax_min_tmp_size)
TMP_BYTES = (8 + (2 * (MAX_COLS // 64) + 7) // 8 * 8 + 2 * MAX_COLS) * 4


@asc.kernel
def softmax_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, rows: int, cols: int):
    blocks = asc.get_block_num()
    share = asc.ceildiv(rows, blocks)
    first = asc.get_block_idx() * share
    last = min(first + share, rows)
    x_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, rows * cols)
    y_gm.set_global_buffer(y, rows * cols)
    pipe = asc.TPipe()
    q_in = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    q_out = asc.TQue(asc.TPosition.VECOUT, BUFFER_NUM)
    calc = asc.TBuf(asc.TPosition.VECCALC)
    stats = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(q_in, BUFFER_NUM, MAX_COLS * x.dtype.sizeof())
    pipe.init_buffer(q_out, BUFFER_NUM, MAX_COLS * x.dtype.sizeof())
    pipe.init_buffer(calc, TMP_BYTES)
    pipe.init_buffer(stats, 64)
    tmp = calc.get(asc.uint8)
    row_sum = stats.get(x.dtype)                 # one 32-byte block each
    row_max = row_sum[32 // x.dtype.sizeof():]
    tiling = asc.adv.SoftmaxTiling(src_m=1, src_k=cols, src_size=cols, split_m=1)
    for r in range(first, last):
        src = q_in.alloc_tensor(x.dtype)
        asc.data_copy(src, x_gm[r * cols:], cols)
        q_in.enque(src)
        src = q_in.deque(x.dtype)
        dst = q_out.alloc_tensor(x.dtype)
        asc.adv.softmax(dst, row_sum, row_max, src, tiling, tmp)
        q_out.enque(dst)
        q_in.free_tensor(src)
        dst = q_out.deque(x.dtype)
        asc.data_copy(y_gm[r * cols:], dst, cols)
        q_out.free_tensor(dst)


def golden(x):
    """asc.adv.softmax's algorithm in NumPy, row by row: float32 steps (float16 widened
    first), ReduceMax, x - max, exp, ReduceSum, divide, one rounding to float16."""
    f32 = np.float32
    out = np.empty(x.shape, f32)
    one = np.zeros(16, f32)
    for r, row in enumerate(x.astype(f32)):
        m = REGISTRY["reduce_max"].reference(one, row, row.size)[0]
        e = np.exp((row + f32(-m)).astype(f32)).astype(f32)
        s = REGISTRY["reduce_sum"].reference(one, e, e.size)[0]
        out[r] = (e / f32(s)).astype(f32)
    return out.astype(x.dtype)


def softmax(x, cores=8):
    """Run the kernel on a 2-D array; returns (y, report)."""
    rows, cols = x.shape
    assert cols <= MAX_COLS and (cols * x.dtype.itemsize) % 32 == 0
    y = np.zeros_like(x)
    report = softmax_kernel[cores](x, y, rows, cols)
    return y, report


def main():
    rng = np.random.default_rng(5)
    for dtype, shape in ((np.float32, (40, 1000)), (np.float16, (40, 1008))):
        x = (rng.standard_normal(shape) * 3).astype(dtype)
        y, report = softmax(x)
        asc.testing.assert_close(y, golden(x))
        xf = x.astype(np.float64)
        e = np.exp(xf - xf.max(axis=1, keepdims=True))
        exact = e / e.sum(axis=1, keepdims=True)
        # float64 softmax: float32 within 1e-5 relative; float16 within one half ulp or so
        asc.testing.assert_close(y.astype(np.float64), exact, rtol=1e-5 if dtype == np.float32
                                 else 2e-3, atol=1e-7 if dtype == np.float32 else 1e-5)
        print(f"softmax {np.dtype(dtype).name} {shape}: matches golden")
        print(report)
    return report


if __name__ == "__main__":
    main()
