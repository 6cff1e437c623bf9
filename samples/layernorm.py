"""Row layer norm, y[r] = (x[r] - mean) / sqrt(var + eps) * gamma + beta, float32 and float16,
on Ascend C's LayerNorm high-level API (asc.adv.layernorm).

mean and var are over the row (biased variance, as torch.nn.LayerNorm). Blocks split the rows;
gamma and beta are loaded once per block; each row goes through a double-buffered TQue pipeline
and one call of asc.adv.layernorm (a LayerNormTiling of one row built in the kernel, a
temporary buffer from a TBuf), whose documented steps are: mean = ReduceSum(x * 1/H), variance
= ReduceSum((x - mean)^2 * 1/H), Exp(Ln(variance + eps) * -1/2) times (x - mean), times gamma,
plus beta; float16 computes in float32 (see the README, "Norms and activations"). The golden
function replays those steps in NumPy (the registry's reduction references give the summation
order); the result is also checked against a float64 layer norm. Run: python samples/layernorm.py
"""
import numpy as np

import ascendc_py as asc
from ascendc_py.compiler.ops import REGISTRY

BUFFER_NUM = 2
MAX_COLS = 4096
#: asc.adv.layernorm's temporary buffer for one row of MAX_COLS
#: (host_adv.get_layer_norm_max_min_tmp_size: the minimum, float32 / float16)
TMP_BYTES_F32 = (16 + 2 * MAX_COLS) * 4
TMP_BYTES_F16 = (16 + 2 * 8 + 2 * MAX_COLS + 3 * MAX_COLS) * 4


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
    stats = asc.TBuf(asc.TPosition.VECCALC)
    size = x.dtype.sizeof()
    tmp_bytes = TMP_BYTES_F32
    if x.dtype == asc.float16:
        tmp_bytes = TMP_BYTES_F16
    pipe.init_buffer(q_in, BUFFER_NUM, MAX_COLS * size)
    pipe.init_buffer(q_out, BUFFER_NUM, MAX_COLS * size)
    pipe.init_buffer(params, 2 * MAX_COLS * size)
    pipe.init_buffer(calc, tmp_bytes)
    pipe.init_buffer(stats, 64)
    g = params.get(x.dtype)
    b = g[MAX_COLS:]
    tmp = calc.get(asc.uint8)
    mean = stats.get(x.dtype)                   # one row's mean and variance
    var = mean[32 // size:]
    asc.data_copy(g, g_gm, cols)
    asc.data_copy(b, b_gm, cols)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    tiling = asc.adv.LayerNormTiling(b_length=1, s_length=1, h_length=cols,
                                     original_h_length=cols, one_tmp_size=cols)
    for r in range(first, last):
        src = q_in.alloc_tensor(x.dtype)
        asc.data_copy(src, x_gm[r * cols:], cols)
        q_in.enque(src)
        src = q_in.deque(x.dtype)
        dst = q_out.alloc_tensor(x.dtype)
        asc.adv.layernorm(dst, mean, var, src, g, b, eps, tiling, tmp)
        q_out.enque(dst)
        q_in.free_tensor(src)
        dst = q_out.deque(x.dtype)
        asc.data_copy(y_gm[r * cols:], dst, cols)
        q_out.free_tensor(dst)


def golden(x, gamma, beta, eps):
    """asc.adv.layernorm's documented steps in NumPy, row by row: float32 (float16 widened
    first), one rounding to float16 at the end."""
    f32 = np.float32
    one = np.zeros(16, f32)
    inv = f32(1.0) / f32(x.shape[1])
    g = gamma.astype(f32)
    b = beta.astype(f32)
    out = np.empty(x.shape, f32)
    for r, row in enumerate(x.astype(f32)):
        mean = REGISTRY["reduce_sum"].reference(one, (row * inv).astype(f32), row.size)[0]
        d = (row + f32(-mean)).astype(f32)
        var = REGISTRY["reduce_sum"].reference(one, ((d * d).astype(f32) * inv).astype(f32),
                                               row.size)[0]
        w = np.full(row.size, f32(var) + f32(eps), f32)
        rstd = np.exp((np.log(w) * f32(-0.5)).astype(f32)).astype(f32)
        out[r] = ((((d * rstd).astype(f32)) * g).astype(f32) + b).astype(f32)
    return out.astype(x.dtype)


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
