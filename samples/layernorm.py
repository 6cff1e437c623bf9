"""Row layer norm, y[r] = (x[r] - mean) * rsqrt(var + eps) * gamma + beta, float32 and float16.

mean and var are over the row (biased variance, as torch.nn.LayerNorm). Blocks split the rows;
gamma and beta are loaded once per block; each row goes through a double-buffered TQue pipeline
with tier-1 ops only:
  reduce_sum → muls(1/cols) → (V→S flag) get_value → adds(-mean) → mul (square) → reduce_sum
  → muls(1/cols) → adds(eps) → rsqrt (on one element) → (V→S flag) get_value → muls(rstd)
  → mul(gamma) → add(beta).
The golden function repeats that arithmetic in NumPy (the registry's reduction references give
the kernel's summation order; float16 rounds after every operation); the result is also checked
against a float64 layer norm. Run: python samples/layernorm.py
"""
import numpy as np

import ascendc_py as asc
from ascendc_py.compiler.ops import REGISTRY

BUFFER_NUM = 2
MAX_COLS = 4096


@asc.kernel
def scalar_of(work: asc.LocalTensor):
    """work[0] on the scalar unit, after the vector unit has written it."""
    asc.set_flag(asc.HardEvent.V_S, 0)
    asc.wait_flag(asc.HardEvent.V_S, 0)
    return work.get_value(0)


@asc.kernel
def layernorm_kernel(x: asc.GlobalAddress, gamma: asc.GlobalAddress, beta: asc.GlobalAddress,
                     y: asc.GlobalAddress, rows: int, cols: int, eps: float):
    blocks = asc.get_block_num()
    share = asc.ceildiv(rows, blocks)
    first = asc.get_block_idx() * share
    last = min(first + share, rows)
    x_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    g_gm = asc.GlobalTensor()
    b_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, rows * cols)
    y_gm.set_global_buffer(y, rows * cols)
    g_gm.set_global_buffer(gamma, cols)
    b_gm.set_global_buffer(beta, cols)
    pipe = asc.TPipe()
    q_in = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    q_out = asc.TQue(asc.TPosition.VECOUT, BUFFER_NUM)
    params = asc.TBuf(asc.TPosition.VECCALC)
    calc = asc.TBuf(asc.TPosition.VECCALC)
    size = x.dtype.sizeof()
    pipe.init_buffer(q_in, BUFFER_NUM, MAX_COLS * size)
    pipe.init_buffer(q_out, BUFFER_NUM, MAX_COLS * size)
    pipe.init_buffer(params, 2 * MAX_COLS * size)
    pipe.init_buffer(calc, (MAX_COLS + 64) * size)
    g = params.get(x.dtype)
    b = g[MAX_COLS:]
    sq = calc.get(x.dtype)          # squares; also the reductions' shared_tmp_buffer
    work = sq[MAX_COLS:]
    asc.data_copy(g, g_gm, cols)
    asc.data_copy(b, b_gm, cols)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    inv_cols = 1.0 / cols
    for r in range(first, last):
        src = q_in.alloc_tensor(x.dtype)
        asc.data_copy(src, x_gm[r * cols:], cols)
        q_in.enque(src)
        src = q_in.deque(x.dtype)
        dst = q_out.alloc_tensor(x.dtype)
        asc.reduce_sum(work, src, sq, cols)                # count form: sq is not used
        asc.muls(work, work, inv_cols, 1)
        mean = scalar_of(work)
        asc.adds(dst, src, -mean, cols)                    # x - mean
        asc.mul(sq, dst, dst, cols)
        asc.reduce_sum(work, sq, sq[cols:], cols)
        asc.muls(work, work, inv_cols, 1)                  # biased variance
        asc.adds(work, work, eps, 1)
        asc.rsqrt(work, work, 1)
        rstd = scalar_of(work)
        asc.muls(dst, dst, rstd, cols)
        asc.mul(dst, dst, g, cols)
        asc.add(dst, dst, b, cols)
        q_out.enque(dst)
        q_in.free_tensor(src)
        dst = q_out.deque(x.dtype)
        asc.data_copy(y_gm[r * cols:], dst, cols)
        q_out.free_tensor(dst)


def golden(x, gamma, beta, eps):
    """The kernel's arithmetic in NumPy, row by row (float16 rounds after every operation)."""
    dt = x.dtype
    one = np.zeros(1, dt)
    inv_cols = dt.type(np.float32(1.0) / np.float32(x.shape[1]))
    eps_t = dt.type(np.float32(eps))
    out = np.empty_like(x)
    for r, row in enumerate(x):
        mean = (REGISTRY["reduce_sum"].reference(one, row, row.size)[0] * inv_cols).astype(dt)
        xc = (row - mean).astype(dt)
        var = REGISTRY["reduce_sum"].reference(one, (xc * xc).astype(dt), row.size)[0]
        var = dt.type(dt.type(var * inv_cols) + eps_t)
        rstd = dt.type(np.float32(1.0) / np.sqrt(np.float32(var)))
        out[r] = (((xc * rstd).astype(dt) * gamma).astype(dt) + beta).astype(dt)
    return out


def layernorm(x, gamma, beta, eps=1e-5, cores=8):
    """Run the kernel on a 2-D array; returns (y, report)."""
    rows, cols = x.shape
    assert cols <= MAX_COLS and (cols * x.dtype.itemsize) % 32 == 0
    y = np.zeros_like(x)
    report = layernorm_kernel[cores](x, gamma, beta, y, rows, cols, eps)
    return y, report


def main():
    rng = np.random.default_rng(11)
    eps = 1e-5
    for dtype, shape in ((np.float32, (48, 1024)), (np.float16, (48, 768))):
        x = (rng.standard_normal(shape) * 2 + 0.5).astype(dtype)
        gamma = (rng.standard_normal(shape[1]) * 0.5 + 1).astype(dtype)
        beta = (rng.standard_normal(shape[1]) * 0.1).astype(dtype)
        y, report = layernorm(x, gamma, beta, eps)
        asc.testing.assert_close(y, golden(x, gamma, beta, eps))
        xf = x.astype(np.float64)
        mean = xf.mean(axis=1, keepdims=True)
        var = ((xf - mean) ** 2).mean(axis=1, keepdims=True)
        exact = (xf - mean) / np.sqrt(var + eps) * gamma.astype(np.float64) + beta
        # against float64: float32 within 1e-4 absolute; float16 within ~1e-2 (half rounding)
        asc.testing.assert_close(y.astype(np.float64), exact, rtol=0,
                                 atol=1e-4 if dtype == np.float32 else 3e-2)
        print(f"layernorm {np.dtype(dtype).name} {shape}: matches golden")
        print(report)
    return report


if __name__ == "__main__":
    main()
