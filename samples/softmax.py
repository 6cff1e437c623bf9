"""Row softmax, y[r] = exp(x[r] - max(x[r])) / sum(exp(x[r] - max(x[r]))), float32 and float16.

Blocks split the rows; each row goes through a double-buffered TQue pipeline:
  reduce_max → (V→S flag) get_value → adds(-max) → exp → reduce_sum → (V→S flag) get_value
  → muls(1 / sum).
The golden function repeats the kernel's arithmetic in NumPy (the registry's reduction
references give the same summation order, float16 rounding after every operation), and the
result is also checked against a float64 softmax. Run: python samples/softmax.py
"""
import numpy as np

import ascendc_py as asc
from ascendc_py.compiler.ops import REGISTRY

BUFFER_NUM = 2
MAX_COLS = 4096
TMP_ELEMS = 1024        # shared_tmp_buffer of reduce_max/reduce_sum (ample for MAX_COLS)


@asc.kernel
def scalar_of(work: asc.LocalTensor):
    """work[0] on the scalar unit, after the vector unit has written it."""
    asc.set_flag(asc.HardEvent.V_S, 0)
    asc.wait_flag(asc.HardEvent.V_S, 0)
    return work.get_value(0)


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
    pipe.init_buffer(q_in, BUFFER_NUM, MAX_COLS * x.dtype.sizeof())
    pipe.init_buffer(q_out, BUFFER_NUM, MAX_COLS * x.dtype.sizeof())
    pipe.init_buffer(calc, (TMP_ELEMS + 32) * x.dtype.sizeof())
    tmp = calc.get(x.dtype)
    work = tmp[TMP_ELEMS:]
    for r in range(first, last):
        src = q_in.alloc_tensor(x.dtype)
        asc.data_copy(src, x_gm[r * cols:], cols)
        q_in.enque(src)
        src = q_in.deque(x.dtype)
        dst = q_out.alloc_tensor(x.dtype)
        asc.reduce_max(work, src, tmp, cols)
        row_max = scalar_of(work)
        asc.adds(dst, src, -row_max, cols)
        asc.exp(dst, dst, cols)
        asc.reduce_sum(work, dst, tmp, cols)
        total = scalar_of(work)
        asc.muls(dst, dst, 1.0 / total, cols)
        q_out.enque(dst)
        q_in.free_tensor(src)
        dst = q_out.deque(x.dtype)
        asc.data_copy(y_gm[r * cols:], dst, cols)
        q_out.free_tensor(dst)


def golden(x):
    """The kernel's arithmetic in NumPy, row by row (float16 rounds after every operation)."""
    dt = x.dtype
    out = np.empty_like(x)
    one = np.zeros(1, dt)
    for r, row in enumerate(x):
        m = REGISTRY["reduce_max"].reference(one, row, row.size)[0]
        e = np.exp((row - m).astype(np.float32)).astype(dt)
        s = REGISTRY["reduce_sum"].reference(one, e, e.size)[0]
        inv = dt.type(np.float32(1.0) / np.float32(s))    # 1.0 / total on the scalar unit
        out[r] = (e * inv).astype(dt)
    return out


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
        # float64 softmax: float32 within 1e-5 relative; float16 within a few half ulps
        asc.testing.assert_close(y.astype(np.float64), exact, rtol=1e-5 if dtype == np.float32
                                 else 4e-3, atol=1e-7 if dtype == np.float32 else 2e-5)
        print(f"softmax {np.dtype(dtype).name} {shape}: matches golden")
        print(report)
    return report


if __name__ == "__main__":
    main()
