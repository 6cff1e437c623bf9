"""Matrix multiply with the high-level Matmul API, split over the cube cores: C = A @ B (+ bias).

The host tiling helper (``ascendc_py.host.MultiCoreMatmulTiling``, pyasc's asc.lib.host) cuts
M x N into single-core blocks and picks the base tiles; the kernel finds its block from the
tiling, points A/B/C (and the bias) at it, sets the tails of the last row/column of blocks and
lets ``Matmul.iterate_all`` compute it. Shapes need not be multiples of anything.

Kernel type: a cube-only kernel (``kernel_type=asc.KernelType.AIC_ONLY``; pyasc's
``matmul_cube_only=True`` does the same). Each block runs on one AIC (the cube core: M, MTE1,
MTE2 and FIX pipes), up to the chip's AI Core count at once, and, as in Ascend C and pyasc's
tutorial 04, the work sits under ``asc.ascend_is_aic()``. Without either option a kernel that
uses the Matmul API is a mix kernel (MIX_AIC_1_2): the AIC becomes the matmul server and each
of the two AIVs of an AI Core runs its own Matmul at half the cube's rate, so the tiling's
``set_dim`` then counts AIVs and the launch has ``used_core_num // 2`` blocks.

Run: ``python samples/matmul.py`` (add ``--large`` for the 4096^3 case).
"""
import sys

import numpy as np

import ascendc_py as asc
from ascendc_py import host
from ascendc_py.compiler.ops.matmul import matmul_reference

#: float32 sums of hundreds of products are order-dependent at ~1e-6 relative to the terms;
#: the golden sums in numpy's order, the cube (BLAS here) in its own
TOLERANCE = dict(rtol=1e-4, atol=1e-4)
HOST_TYPES = {np.float16: host.DataType.DT_FLOAT16, np.float32: host.DataType.DT_FLOAT}


@asc.kernel(kernel_type=asc.KernelType.AIC_ONLY)
def matmul_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
                  bias: asc.GlobalAddress, tiling: asc.adv.TCubeTiling):
    if asc.ascend_is_aic():
        block = asc.get_block_idx()
        m_blocks = tiling.m.ceildiv(tiling.single_core_m)
        m_index = block % m_blocks
        n_index = block // m_blocks
        a_gm = asc.GlobalTensor()
        b_gm = asc.GlobalTensor()
        c_gm = asc.GlobalTensor()
        bias_gm = asc.GlobalTensor()
        a_gm.set_global_buffer(a + m_index * tiling.single_core_m * tiling.k_a)
        b_gm.set_global_buffer(b + n_index * tiling.single_core_n)
        c_gm.set_global_buffer(c + m_index * tiling.single_core_m * tiling.n
                               + n_index * tiling.single_core_n)
        bias_gm.set_global_buffer(bias + n_index * tiling.single_core_n)
        tail_m = min(tiling.m - m_index * tiling.single_core_m, tiling.single_core_m)
        tail_n = min(tiling.n - n_index * tiling.single_core_n, tiling.single_core_n)
        pipe = asc.TPipe()
        mm = asc.adv.Matmul(
            a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, a_gm.dtype),
            b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, b_gm.dtype),
            c=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, c_gm.dtype),
            bias=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, bias_gm.dtype))
        asc.adv.register_matmul(pipe, c, mm, tiling)
        if block < tiling.used_core_num:
            mm.set_tensor_a(a_gm)
            mm.set_tensor_b(b_gm)
            if tiling.is_bias:
                mm.set_bias(bias_gm)
            mm.set_tail(tail_m, tail_n)
            mm.iterate_all(c_gm)
            mm.end()


def make_tiling(m, n, k, in_dtype=np.float16, out_dtype=np.float32, bias=False, cores=None):
    """A TCubeTiling for C[m, n] = A[m, k] @ B[k, n] over ``cores`` cube cores (AICs; default
    all of the platform's)."""
    t = host.MultiCoreMatmulTiling(host.get_ascendc_platform())
    t.set_a_type(host.TPosition.GM, host.CubeFormat.ND, HOST_TYPES[in_dtype], False)
    t.set_b_type(host.TPosition.GM, host.CubeFormat.ND, HOST_TYPES[in_dtype], False)
    t.set_c_type(host.TPosition.GM, host.CubeFormat.ND, HOST_TYPES[out_dtype])
    t.set_bias_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT)
    if cores is not None:
        t.set_dim(cores)
    t.set_org_shape(m, n, k)
    t.set_shape(m, n, k)
    t.enable_bias(bias)
    tiling = asc.adv.TCubeTiling()
    t.get_tiling(tiling)
    return tiling


def matmul(a, b, bias=None, out_dtype=np.float32, cores=None):
    """C = a @ b (+ bias) on the simulator; returns (C, report, tiling)."""
    (m, k), (_, n) = a.shape, b.shape
    tiling = make_tiling(m, n, k, a.dtype.type, out_dtype, bias is not None, cores)
    c = np.zeros((m, n), out_dtype)
    bias_arg = bias if bias is not None else np.zeros(n, np.float32)
    report = matmul_kernel[tiling.used_core_num](a, b, c, bias_arg, tiling)
    return c, report, tiling


def efficiency_line(report, m, n, k):
    eff = host.cube_efficiency(report, m, n, k, "float16")
    return (f"{m}x{n}x{k}: {report.cycles:,} cycles, {eff * 100:.1f} % of the modeled cube peak "
            f"(2*{m}*{n}*{k} FLOP at 4096 MAC/cycle x {asc.current_platform().aic_cores} AIC)")


def main(large: bool = False):
    rng = np.random.default_rng(7)
    m, n, k = 1000, 1200, 700           # not multiples of any base tile
    a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float16)
    bias = rng.uniform(-1, 1, n).astype(np.float32)
    report = None
    for out_dtype, with_bias in ((np.float32, False), (np.float32, True), (np.float16, True)):
        c, report, tiling = matmul(a, b, bias if with_bias else None, out_dtype)
        golden = matmul_reference(a, b, bias if with_bias else None, out_dtype)
        asc.testing.assert_close(c, golden, **TOLERANCE)
        print(f"matmul float16 -> {np.dtype(out_dtype).name}{' + bias' if with_bias else ''} "
              f"{m}x{n}x{k} on {tiling.used_core_num} AIC: matches golden")
    print(tiling)
    print(report)
    print(efficiency_line(report, m, n, k))
    if large:
        report = run_large()
    return report


def run_large(size: int = 4096, check_rows: int = 64):
    """size^3 float16 -> float32 on all cube cores; checks the first ``check_rows`` rows."""
    rng = np.random.default_rng(11)
    a = rng.uniform(-1, 1, (size, size)).astype(np.float16)
    b = rng.uniform(-1, 1, (size, size)).astype(np.float16)
    c, report, tiling = matmul(a, b)
    golden = matmul_reference(a[:check_rows], b)
    asc.testing.assert_close(c[:check_rows], golden, **TOLERANCE)
    print(f"matmul float16 -> float32 {size}^3: first {check_rows} rows match golden")
    print(tiling)
    print(report)
    print(efficiency_line(report, size, size, size))
    return report


if __name__ == "__main__":
    main(large="--large" in sys.argv[1:])
