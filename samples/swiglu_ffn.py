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
(``swiglu_ffn_tiling``, shared with ``torch.ops.ascendc.swiglu_ffn``, whose kernel
``ascendc_py.torch_bridge.cube_kernels.swiglu_ffn_kernel`` spells the same vector steps out
by hand). Run: python samples/swiglu_ffn.py [--large]  (--large: the benchmark's
2048×1024 @ 1024×2816 float16 shape).
"""
import sys

import numpy as np

import ascendc_py as asc
from ascendc_py import host
from ascendc_py.torch_bridge.cube_kernels import swiglu_ffn_tiling, zero_both_buffers

HOST_TYPES = {np.float16: host.DataType.DT_FLOAT16, np.float32: host.DataType.DT_FLOAT}
#: bytes of asc.adv.swiglu's temporary buffer (4 float32 regions of 2048 elements: the API
#: works through a chunk of rows in pieces of 2048 elements)
SWIGLU_TMP = 4 * 4 * 2048
#: UB bytes for the row chunks: g and u double-buffered float32 (16 B per element), y
#: double-buffered (at most 8), a float32 result row (4)
UB_BUDGET = 160 * 1024 - SWIGLU_TMP
UB_BYTES_PER_ELEM = 28


@asc.kernel
def swiglu_ffn_kernel(x: asc.GlobalAddress, wg: asc.GlobalAddress, wu: asc.GlobalAddress,
                      y: asc.GlobalAddress, ws: asc.GlobalAddress,
                      tiling: asc.adv.TCubeTiling):
    """y = silu(x @ wg) * (x @ wu): x (M×K), wg/wu (K×N), y (M×N) of one dtype; ws a float32
    GM workspace of 2·M·N elements; ``tiling`` splits M×N over the vector cores."""
    dt = y.dtype
    idx = asc.get_block_idx()                  # the vector core's index (2·block + sub-block)
    m_blocks = tiling.m.ceildiv(tiling.single_core_m)
    m_index = idx % m_blocks
    n_index = idx // m_blocks
    M = tiling.m
    N = tiling.n
    row0 = m_index * tiling.single_core_m
    col0 = n_index * tiling.single_core_n
    x_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x + row0 * tiling.k_a)
    wg_gm = asc.GlobalTensor()
    wg_gm.set_global_buffer(wg + col0)
    wu_gm = asc.GlobalTensor()
    wu_gm.set_global_buffer(wu + col0)
    g_ws = asc.GlobalTensor()
    g_ws.set_global_buffer(ws + row0 * N + col0)
    u_ws = asc.GlobalTensor()
    u_ws.set_global_buffer(ws + M * N + row0 * N + col0)
    y_gm = asc.GlobalTensor()
    y_gm.set_global_buffer(y + row0 * N + col0)
    tail_m = min(M - row0, tiling.single_core_m)
    tail_n = min(N - col0, tiling.single_core_n)
    pipe = asc.TPipe()
    mm_g = asc.adv.Matmul(a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, dt),
                          b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, dt),
                          c=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.float32))
    mm_u = asc.adv.Matmul(a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, dt),
                          b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, dt),
                          c=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.float32))
    asc.adv.register_matmul(pipe, ws, mm_g, tiling)
    asc.adv.register_matmul(pipe, ws, mm_u, tiling)
    # vector stage: chunks of `rows` rows of tail_n columns, each row padded to `cols` elements
    cols = max(16, asc.ceildiv(tail_n, 16) * 16)     # (idle cores: tail_n <= 0)
    rows = max(1, min(tail_m, UB_BUDGET // (cols * UB_BYTES_PER_ELEM)))
    q_g = asc.TQue(asc.TPosition.VECIN, 2)
    q_u = asc.TQue(asc.TPosition.VECIN, 2)
    q_y = asc.TQue(asc.TPosition.VECOUT, 2)
    calc = asc.TBuf(asc.TPosition.VECCALC)
    tmp = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(q_g, 2, rows * cols * 4)
    pipe.init_buffer(q_u, 2, rows * cols * 4)
    pipe.init_buffer(q_y, 2, rows * cols * dt.sizeof())
    pipe.init_buffer(calc, rows * cols * 4)
    pipe.init_buffer(tmp, SWIGLU_TMP)
    if idx < tiling.used_core_num:
        mm_g.set_tensor_a(x_gm)
        mm_g.set_tensor_b(wg_gm)
        mm_g.set_tail(tail_m, tail_n)
        mm_g.iterate_all(g_ws)
        mm_g.end()
        mm_u.set_tensor_a(x_gm)
        mm_u.set_tensor_b(wu_gm)
        mm_u.set_tail(tail_m, tail_n)
        mm_u.iterate_all(u_ws)
        mm_u.end()
        t = calc.get(asc.float32)
        work = tmp.get(asc.uint8)
        # rows land in UB `cols` floats apart; the gap after a row's 32-byte-padded data is never
        # copied into: zero every input buffer once so the vector unit never reads garbage there
        zero_both_buffers(q_g, rows * cols)
        zero_both_buffers(q_u, rows * cols)
        in_gap = (cols * 4 - asc.ceildiv(tail_n * 4, 32) * 32) // 32   # UB gap between rows
        out_gap = (cols * dt.sizeof() - asc.ceildiv(tail_n * dt.sizeof(), 32) * 32) // 32
        r = 0
        while r < tail_m:
            n_rows = min(rows, tail_m - r)
            count = n_rows * cols
            read = asc.DataCopyExtParams(n_rows, tail_n * 4, (N - tail_n) * 4, in_gap, 0)
            zero_pad = asc.DataCopyPadExtParams(asc.float32, True, 0, 0, 0.0)
            g = q_g.alloc_tensor(asc.float32)
            asc.data_copy_pad(g, g_ws[r * N:], read, zero_pad)
            q_g.enque(g)
            u = q_u.alloc_tensor(asc.float32)
            asc.data_copy_pad(u, u_ws[r * N:], read, zero_pad)
            q_u.enque(u)
            g = q_g.deque(asc.float32)
            u = q_u.deque(asc.float32)
            out = q_y.alloc_tensor(dt)
            if dt == asc.float32:
                asc.adv.swiglu(out, u, g, 1.0, count, work)      # u · silu(g)
            else:
                asc.adv.swiglu(t, u, g, 1.0, count, work)
                asc.cast(out, t, asc.RoundMode.CAST_RINT, count)
            q_g.free_tensor(g)
            q_u.free_tensor(u)
            q_y.enque(out)
            out = q_y.deque(dt)
            asc.data_copy_pad(y_gm[r * N:], out,
                              asc.DataCopyExtParams(n_rows, tail_n * dt.sizeof(), out_gap,
                                                    (N - tail_n) * dt.sizeof(), 0))
            q_y.free_tensor(out)
            r += n_rows


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
