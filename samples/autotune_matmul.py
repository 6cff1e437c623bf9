"""Autotune a matmul's base tile (base_m x base_n x base_k) on simulated cycles.

``samples/matmul.py``'s kernel, with the base shapes as ``ConstExpr`` parameters of a kernel
that inlines it. The host tiling (``MultiCoreMatmulTiling.set_fix_split``) depends on the base
shapes, so a ``pre_hook`` makes each config's ``TCubeTiling`` before the launch (as Triton's
``Config.pre_hook`` runs before each benchmark); a base tile that does not fit L0 fails in the
tiling and is reported and skipped. Every config's C is checked against the first one's within
the matmul sample's tolerance (the K order of the sums changes with base_k). Then ``asc.sweep``
compares the configs on two platforms and plots them against the roofline
(out/autotune_matmul_sweep.png). Run: python samples/autotune_matmul.py
"""
import pathlib

import numpy as np

import ascendc_py as asc
from ascendc_py import host
from matmul import HOST_TYPES, TOLERANCE, matmul_kernel
from ascendc_py.compiler.ops.matmul import matmul_reference

OUT = pathlib.Path(__file__).resolve().parent.parent / "out"
CONFIGS = [asc.Config(BASE_M=m, BASE_N=n, BASE_K=k)
           for m in (64, 128, 256) for n in (64, 128, 256) for k in (32, 64, 128)]


def with_tiling(args):
    """pre_hook: the TCubeTiling of this config's base tile for these A and B."""
    a, b = args["a"], args["b"]
    (m, k), n = a.shape, b.shape[1]
    t = host.MultiCoreMatmulTiling(host.get_ascendc_platform())
    for setter in (t.set_a_type, t.set_b_type):
        setter(host.TPosition.GM, host.CubeFormat.ND, HOST_TYPES[a.dtype.type], False)
    t.set_c_type(host.TPosition.GM, host.CubeFormat.ND, HOST_TYPES[args["c"].dtype.type])
    t.set_bias_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT)
    t.set_org_shape(m, n, k)
    t.set_shape(m, n, k)
    t.enable_bias(False)
    t.set_fix_split(args["BASE_M"], args["BASE_N"], args["BASE_K"])
    tiling = asc.adv.TCubeTiling()
    t.get_tiling(tiling)
    args["tiling"] = tiling


@asc.autotune(configs=CONFIGS, key=["a", "b"], pre_hook=with_tiling, **TOLERANCE)
@asc.kernel(kernel_type=asc.KernelType.AIC_ONLY)
def matmul_tuned(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
                 bias: asc.GlobalAddress, tiling: asc.adv.TCubeTiling,
                 BASE_M: asc.ConstExpr[int], BASE_N: asc.ConstExpr[int],
                 BASE_K: asc.ConstExpr[int]):
    # the base shapes reach the kernel through the tiling the pre_hook made for them
    matmul_kernel(a, b, c, bias, tiling)


def make_args(shape):
    """Launch arguments (without the base shapes) for C[m, n] = A[m, k] @ B[k, n]."""
    m, n, k = shape
    rng = np.random.default_rng(7)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float16)
    return a, b, np.zeros((m, n), np.float32), np.zeros(n, np.float32), asc.adv.TCubeTiling()


def main():
    shape = (1000, 1200, 700)
    a, b, c, bias, tiling = make_args(shape)
    cores = asc.current_platform().aic_cores     # blocks past the tiling's core count idle
    table = matmul_tuned.tune(cores, a, b, c, bias, tiling)    # every config, printed
    print(table)
    report = matmul_tuned[cores](a, b, c, bias, tiling)     # the chosen one: one launch
    asc.testing.assert_close(c, matmul_reference(a, b, None, np.float32), **TOLERANCE)
    print(f"matmul {shape}: chosen {table.best.label()}, {report.cycles:,} cycles; matches "
          f"golden")
    res = asc.sweep(matmul_tuned, CONFIGS, args=make_args, shapes=[shape], block_dim=cores,
                    platforms=["Ascend910B2", "Ascend910B4"])
    for best in res.best():
        print(f"  fastest on {best['platform']}: {best['config']} {best['cycles']:,} cycles "
              f"({100 * best['roofline_fraction']:.0f} % of the roofline bound, "
              f"{best['bound']} bound)")
    print("plot:", res.plot(OUT / "autotune_matmul_sweep.png"))
    return report


if __name__ == "__main__":
    main()
