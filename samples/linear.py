"""A custom linear layer y = x @ W^T + b on the cube unit (the seed article's CustomLinear),
written with Ascend C's low-level matrix instructions:

    GM x (M×K, ND) ─data_copy(Nd2NzParams)→ A1 (L1, NZ) ─load_data→ A2 (L0A, ZZ) ┐
    GM W (N×K, ND) ─data_copy(Nd2NzParams)→ B1 (L1, NZ) ─load_data→ B2 (L0B, ZN) ┼→ mmad → CO1
    GM b (N, fp32) ─data_copy→ C1 (L1) ─data_copy→ C2 (BiasTable) ───────────────┘   (L0C, NZ)
    CO1 ─fixpipe (NZ→ND, float32 or float16 with round-to-nearest-even)→ GM y (M×N)

W is stored N×K (as torch.nn.Linear keeps it), which is exactly the layout L0B wants after the
ND→NZ copy, so B needs no transpose. Blocks take TM×TN tiles of y (multi-core over M and N);
K is walked in TK chunks that accumulate in L0C (the first chunk starts from the bias). The
L1 queues are double-buffered so the next chunk's copy-in overlaps the current load/mmad.
Shapes need not be multiples of 16.

The kernel is ``ascendc_py.torch_bridge.cube_kernels.linear_kernel`` (read it there: every
step above is one instruction), the same code ``torch.ops.ascendc.linear`` launches; it is
generic over float16, bfloat16 and float32 inputs. Run: python samples/linear.py
"""
import numpy as np

import ascendc_py as asc
from ascendc_py.torch_bridge.cube_kernels import LINEAR_TILES, linear_kernel


def linear(x, w, b, out_dtype=np.float32):
    """y = x @ w.T + b (x: M×K, w: N×K, both float16 or both float32; b: N float32)."""
    M, K = x.shape
    N = w.shape[0]
    TM, TN, TK = LINEAR_TILES[x.itemsize]
    bias = np.zeros(-(-N // TN) * TN, np.float32)   # the kernel reads whole 16-column groups
    bias[:N] = b
    y = np.empty((M, N), out_dtype)
    quant = asc.QuantModes.F322F16 if out_dtype == np.float16 else asc.QuantModes.NoQuant
    blocks = -(-M // TM) * -(-N // TN)
    report = linear_kernel[blocks](x, w, bias, y, M, N, K, TM, TN, TK, int(quant))
    return y, report


def golden(x, w, b):
    return (x.astype(np.float64) @ w.astype(np.float64).T + b).astype(np.float32)


def main():
    rng = np.random.default_rng(5)
    M, K, N = 200, 300, 150                 # none a multiple of 16
    x = rng.standard_normal((M, K)).astype(np.float16)
    w = (rng.standard_normal((N, K)) / np.sqrt(K)).astype(np.float16)
    b = rng.standard_normal(N).astype(np.float32)
    ref = golden(x, w, b)
    y, report = linear(x, w, b)
    asc.testing.assert_close(y, ref, rtol=1e-5, atol=1e-5)
    print(f"linear float16 x ({M}×{K}) @ W^T ({K}×{N}) + b -> float32: matches golden")
    y16, report16 = linear(x, w, b, np.float16)
    asc.testing.assert_close(y16, ref.astype(np.float16), rtol=1e-3, atol=1e-3)
    print("linear -> float16 (fixpipe F322F16): matches golden")
    print(report)
    return report


if __name__ == "__main__":
    main()
