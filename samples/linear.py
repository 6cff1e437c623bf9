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
Shapes need not be multiples of 16. Run: python samples/linear.py
"""
import numpy as np

import ascendc_py as asc

TM, TN, TK = 64, 64, 128          # tile of y per block, K chunk


@asc.kernel
def linear_kernel(x: asc.GlobalAddress, w: asc.GlobalAddress, b: asc.GlobalAddress,
                  y: asc.GlobalAddress, M: int, N: int, K: int, OUT_F16: asc.ConstExpr[bool]):
    xg = asc.GlobalTensor(); xg.set_global_buffer(x)
    wg = asc.GlobalTensor(); wg.set_global_buffer(w)
    bg = asc.GlobalTensor(); bg.set_global_buffer(b)
    yg = asc.GlobalTensor(); yg.set_global_buffer(y)
    tiles_n = asc.ceildiv(N, TN)
    mb = asc.get_block_idx() // tiles_n
    nb = asc.get_block_idx() % tiles_n
    m = min(TM, M - mb * TM)           # this block's rows and columns of y
    n = min(TN, N - nb * TN)
    m1 = asc.ceildiv(m, 16)
    n1 = asc.ceildiv(n, 16)
    pipe = asc.TPipe()
    q_a1 = asc.TQue(asc.TPosition.A1, 2)
    q_b1 = asc.TQue(asc.TPosition.B1, 2)
    q_a2 = asc.TQue(asc.TPosition.A2, 1)
    q_b2 = asc.TQue(asc.TPosition.B2, 1)
    q_c = asc.TQue(asc.TPosition.CO1, 1)
    q_bias1 = asc.TQue(asc.TPosition.C1, 1)
    q_bias2 = asc.TQue(asc.TPosition.C2, 1)
    pipe.init_buffer(q_a1, 2, TM * TK * 2)
    pipe.init_buffer(q_b1, 2, TN * TK * 2)
    pipe.init_buffer(q_a2, 1, TM * TK * 2)
    pipe.init_buffer(q_b2, 1, TN * TK * 2)
    pipe.init_buffer(q_c, 1, TM * TN * 4)
    pipe.init_buffer(q_bias1, 1, TN * 4)
    pipe.init_buffer(q_bias2, 1, TN * 4)
    # bias: GM -> L1 -> BiasTable
    b1 = q_bias1.alloc_tensor(asc.float32)
    asc.data_copy(b1, bg[nb * TN:], n1 * 16)
    q_bias1.enque(b1)
    b1 = q_bias1.deque(asc.float32)
    bt = q_bias2.alloc_tensor(asc.float32)
    asc.data_copy(bt, b1, n1 * 16)
    q_bias2.enque(bt)
    q_bias1.free_tensor(b1)
    bt = q_bias2.deque(asc.float32)
    acc = q_c.alloc_tensor(asc.float32)
    mm = m if m != 1 else 2            # m == 1 would switch the cube to GEMV (A read as ND)
    for kc in range(asc.ceildiv(K, TK)):
        k = min(TK, K - kc * TK)
        k1 = asc.ceildiv(k, 16)
        # copy-in: x rows and W rows of this chunk, ND -> NZ (16×16 fractals, column-major)
        a1 = q_a1.alloc_tensor(asc.float16)
        asc.data_copy(a1, xg[mb * TM * K + kc * TK:],
                      asc.Nd2NzParams(1, m, k, 0, K, m1 * 16, 1, 0))
        q_a1.enque(a1)
        w1 = q_b1.alloc_tensor(asc.float16)
        asc.data_copy(w1, wg[nb * TN * K + kc * TK:],
                      asc.Nd2NzParams(1, n, k, 0, K, n1 * 16, 1, 0))
        q_b1.enque(w1)
        # L1 -> L0A: NZ -> ZZ, one load per 16-row stripe of x
        a1 = q_a1.deque(asc.float16)
        a2 = q_a2.alloc_tensor(asc.float16)
        for i in range(m1):
            asc.load_data(a2[i * k1 * 256:], a1[i * 256:],
                          asc.LoadData2DParams(0, k1, m1, 0, 0, False, 0))
        q_a2.enque(a2)
        q_a1.free_tensor(a1)
        # L1 -> L0B: W's NZ fractals already are B's ZN fractals
        w1 = q_b1.deque(asc.float16)
        w2 = q_b2.alloc_tensor(asc.float16)
        asc.load_data(w2, w1, asc.LoadData2DParams(0, k1 * n1, 1, 0, 0, False, 0))
        q_b2.enque(w2)
        q_b1.free_tensor(w1)
        a2 = q_a2.deque(asc.float16)
        w2 = q_b2.deque(asc.float16)
        if kc == 0:
            asc.mmad(acc, a2, w2, bt, asc.MmadParams(mm, n, k))     # L0C = bias + x W^T
        else:
            asc.mmad(acc, a2, w2, asc.MmadParams(mm, n, k, 0, False, False))  # accumulate
        q_a2.free_tensor(a2)
        q_b2.free_tensor(w2)
    q_bias2.free_tensor(bt)
    q_c.enque(acc)
    acc = q_c.deque(asc.float32)
    quant = asc.QuantModes.F322F16 if OUT_F16 else asc.QuantModes.NoQuant
    asc.fixpipe(yg[mb * TM * N + nb * TN:], acc,
                asc.FixpipeParamsV220(n, m, m1 * 16, N, quant))
    q_c.free_tensor(acc)


def linear(x, w, b, out_dtype=np.float32):
    """y = x @ w.T + b (x: M×K float16, w: N×K float16, b: N float32)."""
    M, K = x.shape
    N = w.shape[0]
    bias = np.zeros(-(-N // TN) * TN, np.float32)   # the kernel reads whole 16-column groups
    bias[:N] = b
    y = np.empty((M, N), out_dtype)
    blocks = -(-M // TM) * -(-N // TN)
    report = linear_kernel[blocks](x, w, bias, y, M, N, K, out_dtype == np.float16)
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
