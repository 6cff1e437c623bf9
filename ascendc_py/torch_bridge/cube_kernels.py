"""Cube kernels behind the shipped matrix ops (``torch_bridge.ops_cube``).

``linear_kernel``: ``y = x @ W^T + b`` with Ascend C's low-level matrix instructions
(``samples/linear.py`` explains each step): GM ND → L1 NZ (``data_copy`` with ``Nd2NzParams``)
→ L0A/L0B (``load_data``) → ``mmad`` (float32 accumulation in L0C, the first K chunk starting
from the bias in the BiasTable) → ``fixpipe`` (NZ → ND, float32 → the output dtype) → GM. It
is generic over the input dtype: ``C0`` = 32 / sizeof(T) columns per fractal row (16 for
float16/bfloat16, 8 for float32), one fractal = 512 bytes. Each block computes one TM×TN tile
of y; K is walked in chunks of ``TK`` elements through double-buffered L1 queues.
"""
from __future__ import annotations

import ascendc_py as asc

#: tile of y per block and K chunk, per input dtype size: L0A TM·TK, L0B TN·TK (≤ 64 KB each),
#: L0C TM·TN float32 (≤ 128 KB), L1 2·(TM+TN)·TK (≤ 512 KB)
LINEAR_TILES = {2: (128, 256, 128), 4: (128, 128, 64)}


@asc.kernel
def linear_kernel(x: asc.GlobalAddress, w: asc.GlobalAddress, b: asc.GlobalAddress,
                  y: asc.GlobalAddress, M: int, N: int, K: int, TM: asc.ConstExpr[int],
                  TN: asc.ConstExpr[int], TK: asc.ConstExpr[int], QUANT: asc.ConstExpr[int]):
    dt = x.dtype
    C0 = 32 // dt.sizeof()
    FRACTAL = 16 * C0
    xg = asc.GlobalTensor(); xg.set_global_buffer(x)
    wg = asc.GlobalTensor(); wg.set_global_buffer(w)
    bg = asc.GlobalTensor(); bg.set_global_buffer(b)
    yg = asc.GlobalTensor(); yg.set_global_buffer(y)
    tiles_n = asc.ceildiv(N, TN)
    mb = asc.get_block_idx() // tiles_n
    nb = asc.get_block_idx() % tiles_n
    m = min(TM, M - mb * TM)
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
    pipe.init_buffer(q_a1, 2, TM * TK * dt.sizeof())
    pipe.init_buffer(q_b1, 2, TN * TK * dt.sizeof())
    pipe.init_buffer(q_a2, 1, TM * TK * dt.sizeof())
    pipe.init_buffer(q_b2, 1, TN * TK * dt.sizeof())
    pipe.init_buffer(q_c, 1, TM * TN * 4)
    pipe.init_buffer(q_bias1, 1, TN * 4)
    pipe.init_buffer(q_bias2, 1, TN * 4)
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
        k1 = asc.ceildiv(k, C0)
        a1 = q_a1.alloc_tensor(dt)
        asc.data_copy(a1, xg[mb * TM * K + kc * TK:],
                      asc.Nd2NzParams(1, m, k, 0, K, m1 * 16, 1, 0))
        q_a1.enque(a1)
        w1 = q_b1.alloc_tensor(dt)
        asc.data_copy(w1, wg[nb * TN * K + kc * TK:],
                      asc.Nd2NzParams(1, n, k, 0, K, n1 * 16, 1, 0))
        q_b1.enque(w1)
        a1 = q_a1.deque(dt)
        a2 = q_a2.alloc_tensor(dt)
        for i in range(m1):
            asc.load_data(a2[i * k1 * FRACTAL:], a1[i * FRACTAL:],
                          asc.LoadData2DParams(0, k1, m1, 0, 0, False, 0))
        q_a2.enque(a2)
        q_a1.free_tensor(a1)
        w1 = q_b1.deque(dt)
        w2 = q_b2.alloc_tensor(dt)
        asc.load_data(w2, w1, asc.LoadData2DParams(0, k1 * n1, 1, 0, 0, False, 0))
        q_b2.enque(w2)
        q_b1.free_tensor(w1)
        a2 = q_a2.deque(dt)
        w2 = q_b2.deque(dt)
        if kc == 0:
            asc.mmad(acc, a2, w2, bt, asc.MmadParams(mm, n, k))
        else:
            asc.mmad(acc, a2, w2, asc.MmadParams(mm, n, k, 0, False, False))
        q_a2.free_tensor(a2)
        q_b2.free_tensor(w2)
    q_bias2.free_tensor(bt)
    q_c.enque(acc)
    acc = q_c.deque(asc.float32)
    asc.fixpipe(yg[mb * TM * N + nb * TN:], acc, asc.FixpipeParamsV220(n, m, m1 * 16, N, QUANT))
    q_c.free_tensor(acc)
