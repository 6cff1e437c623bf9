"""The seed article's fused SwiGLU feed-forward gate, y = silu(x @ Wg) * (x @ Wu), in ONE mix
kernel launch (1 AIC : 2 AIV per AI Core on the 910B), its vector stage on the high-level
``asc.adv.swiglu`` API:

    AIV i: Matmul API requests → the cube computes x_i @ Wg and x_i @ Wu for this vector core's
           block of y (float32 accumulation) into a float32 GM workspace (the 910B's cube and
           vector cores share data only through GM)
    AIV i: workspace rows → UB (data_copy_pad) → asc.adv.swiglu(y, u, g, 1.0): u · Swish(g) =
           u · g / (1 + exp(-g)) in float32 (Swish with beta 1 is silu) → one rounding to
           float16 → y

The host splits M×N over the vector cores with the Matmul tiling helper
(``swiglu_ffn_tiling``). The kernel is
``ascendc_py.torch_bridge.cube_kernels.swiglu_ffn_kernel``, the one
``torch.ops.ascendc.swiglu_ffn`` launches (read it there). Run: python samples/swiglu_ffn.py
[--large]  (--large: the benchmark's 2048×1024 @ 1024×2816 float16 shape).
"""
import sys

import numpy as np

import ascendc_py as asc
from ascendc_py import host
from ascendc_py.torch_bridge.cube_kernels import swiglu_ffn_kernel, swiglu_ffn_tiling

HOST_TYPES = {np.float16: host.DataType.DT_FLOAT16, np.float32: host.DataType.DT_FLOAT}


def make_tiling(m, n, k, dtype):
    """M×N over every vector core of the platform (the AIVs number themselves 2·block + sub)."""
    return swiglu_ffn_tiling(m, n, k, HOST_TYPES[dtype])


def swiglu_ffn(x, wg, wu):
    """y = silu(x @ wg) * (x @ wu) on the simulator; returns (y, report)."""
    (m, k), n = x.shape, wg.shape[1]
    tiling = make_tiling(m, n, k, x.dtype.type)
    y = np.zeros((m, n), x.dtype)
    workspace = np.zeros(2 * m * n, np.float32)
    report = swiglu_ffn_kernel[-(-tiling.used_core_num // 2)](x, wg, wu, y, workspace, tiling)
    return y, report


def golden(x, wg, wu):
    g = x.astype(np.float64) @ wg.astype(np.float64)
    u = x.astype(np.float64) @ wu.astype(np.float64)
    return (g / (1.0 + np.exp(-g)) * u).astype(x.dtype)


def main(large: bool = False):
    rng = np.random.default_rng(3)
    m, k, n = (2048, 1024, 2816) if large else (300, 200, 700)   # odd shapes by default
    x = rng.uniform(-1, 1, (m, k)).astype(np.float16)
    wg = (rng.uniform(-1, 1, (k, n)) / np.sqrt(k)).astype(np.float16)
    wu = (rng.uniform(-1, 1, (k, n)) / np.sqrt(k)).astype(np.float16)
    y, report = swiglu_ffn(x, wg, wu)
    asc.testing.assert_close(y, golden(x, wg, wu))
    print(f"swiglu_ffn float16 x ({m}×{k}), Wg/Wu ({k}×{n}): one mix launch on asc.adv.swiglu, "
          f"matches golden")
    print(report)
    return report


if __name__ == "__main__":
    main(large="--large" in sys.argv[1:])
