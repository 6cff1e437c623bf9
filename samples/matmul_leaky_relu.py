"""Matmul + LeakyReLU fused in one mix kernel (pyasc's tutorial 05 in our style):
C = leaky_relu(A @ B + bias).

Each vector core (AIV) owns one single-core block of C. It iterates over the block's
base_m × base_n tiles (``with mm.iterate() as count:``): the cube computes each tile (Matmul API,
float32 with the bias) and ``get_tensor_c`` delivers it into a Unified Buffer tile; the vector
unit applies leaky_relu and a strided ``data_copy`` writes the tile into C. Tiles come in the
tiling's iterate order (M first), which the offset computation follows. Shapes must be
multiples of the base tile here (the tile is written with whole 32-byte rows), as in the
tutorial. Run: python samples/matmul_leaky_relu.py
"""
import numpy as np

import ascendc_py as asc
from ascendc_py import host

ALPHA = 0.001


@asc.kernel
def matmul_leaky_relu_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
                             bias: asc.GlobalAddress, alpha: float,
                             tiling: asc.adv.TCubeTiling):
    idx = asc.get_block_idx()                    # vector core index: 2·block + sub-block
    m_blocks = tiling.m.ceildiv(tiling.single_core_m)
    m_index = idx % m_blocks
    n_index = idx // m_blocks
    a_gm = asc.GlobalTensor()
    a_gm.set_global_buffer(a + m_index * tiling.k_a * tiling.single_core_m)
    b_gm = asc.GlobalTensor()
    b_gm.set_global_buffer(b + n_index * tiling.single_core_n)
    c_gm = asc.GlobalTensor()
    c_gm.set_global_buffer(c + m_index * tiling.n * tiling.single_core_m
                           + n_index * tiling.single_core_n)
    bias_gm = asc.GlobalTensor()
    bias_gm.set_global_buffer(bias + n_index * tiling.single_core_n)
    pipe = asc.TPipe()
    out_q = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(out_q, 1, tiling.base_m * tiling.base_n * 4)
    mm = asc.adv.Matmul(
        a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.float16),
        b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.float16),
        c=asc.adv.MatmulType(asc.TPosition.VECCALC, asc.CubeFormat.ND, asc.float32),
        bias=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.float32))
    asc.adv.register_matmul(pipe, c, mm, tiling)     # on the AIC: becomes the matmul server
    if idx < tiling.used_core_num:
        mm.set_tensor_a(a_gm)
        mm.set_tensor_b(b_gm)
        mm.set_bias(bias_gm)
        round_m = tiling.single_core_m // tiling.base_m
        with mm.iterate() as count:
            tile = out_q.alloc_tensor(asc.float32)
            mm.get_tensor_c(tile, en_sequential_write=True)
            asc.leaky_relu(tile, tile, alpha, tiling.base_m * tiling.base_n)
            out_q.enque(tile)
            tile = out_q.deque(asc.float32)
            start = count % round_m * tiling.base_m * tiling.n + count // round_m * tiling.base_n
            asc.data_copy(c_gm[start:], tile, asc.DataCopyParams(
                tiling.base_m, tiling.base_n * 4 // 32, 0, (tiling.n - tiling.base_n) * 4 // 32))
            out_q.free_tensor(tile)
        mm.end()


def make_tiling(m, n, k, cores):
    t = host.MultiCoreMatmulTiling(host.get_ascendc_platform())
    t.set_a_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT16, False)
    t.set_b_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT16, False)
    t.set_c_type(host.TPosition.VECCALC, host.CubeFormat.ND, host.DataType.DT_FLOAT)
    t.set_bias_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT)
    t.set_dim(cores)
    t.set_org_shape(m, n, k)
    t.set_shape(m, n, k)
    t.enable_bias(True)
    t.set_traverse(host.MatrixTraverse.FIRSTM)
    t.set_fix_split(128, 128, -1)
    tiling = asc.adv.TCubeTiling()
    t.get_tiling(tiling)
    return tiling


def golden(a, b, bias, alpha=ALPHA):
    c = a.astype(np.float64) @ b.astype(np.float64) + bias
    return np.where(c >= 0, c, c * alpha).astype(np.float32)


def main():
    rng = np.random.default_rng(11)
    m, k, n = 1024, 320, 640
    a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float16)
    bias = rng.uniform(-1, 1, n).astype(np.float32)
    tiling = make_tiling(m, n, k, cores=8)        # 8 vector cores = 4 AI Cores
    c = np.zeros((m, n), np.float32)
    report = matmul_leaky_relu_kernel[tiling.used_core_num // 2](a, b, c, bias, ALPHA, tiling)
    asc.testing.assert_close(c, golden(a, b, bias), rtol=1e-4, atol=1e-4)
    print(f"matmul_leaky_relu float16 ({m}×{k}) @ ({k}×{n}) + bias on "
          f"{tiling.used_core_num} vector cores: matches golden")
    print(report)
    return report


if __name__ == "__main__":
    main()
