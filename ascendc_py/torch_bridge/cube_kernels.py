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


#: bytes of ``asc.adv.swiglu``'s temporary buffer in the fused SwiGLU kernel (4 float32 regions
#: of 2048 elements: the API works through a chunk of rows in pieces of 2048 elements)
SWIGLU_FFN_TMP = 4 * 4 * 2048
#: Unified Buffer bytes the fused SwiGLU kernel's vector stage uses per padded element of a row
#: chunk: gate and up float32 tiles double-buffered (16), the output double-buffered (≤ 8), one
#: float32 result row (4); the chunks get what the API's temporary buffer leaves of 160 KB
SWIGLU_FFN_UB_BYTES_PER_ELEM = 28
SWIGLU_FFN_UB_BUDGET = 160 * 1024 - SWIGLU_FFN_TMP


def swiglu_ffn_tiling(m: int, n: int, k: int, in_type, base=None):
    """The TCubeTiling of ``swiglu_ffn_kernel`` for x (m×k) @ w (k×n) with inputs of host
    ``DataType`` ``in_type``: m×n over every vector core of the platform (the AIVs number
    themselves 2·block + sub-block); launch ``ceil(used_core_num / 2)`` blocks. ``base``:
    (base_m, base_n) to fix (``set_fix_split``; base_k stays the helper's), e.g. a config of
    run-time autotuning (``autotiling.ffn_tuner``)."""
    from .. import host
    from ..adv import TCubeTiling
    from ..simulator.config import current_platform
    t = host.MultiCoreMatmulTiling(host.get_ascendc_platform())
    t.set_a_type(host.TPosition.GM, host.CubeFormat.ND, in_type, False)
    t.set_b_type(host.TPosition.GM, host.CubeFormat.ND, in_type, False)
    t.set_c_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT)
    t.set_dim(current_platform().aiv_cores)
    t.set_org_shape(m, n, k)
    t.set_shape(m, n, k)
    t.enable_bias(False)
    if base is not None:
        t.set_fix_split(int(base[0]), int(base[1]), -1)
    tiling = TCubeTiling()
    t.get_tiling(tiling)
    return tiling


@asc.kernel
def zero_both_buffers(q: asc.TQue, count: int):
    """Write zeros into both buffers of a double-buffered float32 VECIN queue (alloc, duplicate,
    enque each; then deque and free both, which orders the vector writes before the next
    copy-in by the queue's flags)."""
    for _ in asc.static_range(2):
        z = q.alloc_tensor(asc.float32)
        asc.duplicate(z, 0.0, count)
        q.enque(z)
    for _ in asc.static_range(2):
        z = q.deque(asc.float32)
        q.free_tensor(z)


@asc.kernel
def swiglu_ffn_kernel(x: asc.GlobalAddress, wg: asc.GlobalAddress, wu: asc.GlobalAddress,
                      y: asc.GlobalAddress, ws: asc.GlobalAddress,
                      tiling: asc.adv.TCubeTiling):
    """y = silu(x @ wg) * (x @ wu), one mix launch (1 AIC : 2 AIV per AI Core).

    ``x`` (M×K), ``wg``/``wu`` (K×N) and ``y`` (M×N) share one dtype (float16, bfloat16 or
    float32); ``ws`` is a float32 GM workspace of 2·M·N elements; ``tiling`` splits M×N over
    the vector cores (``used_core_num`` ≤ 2 · block_dim). Each AIV asks the cube (Matmul API)
    for its single-core block of both projections, written as float32 to the workspace (on the
    910B the cube and vector cores share data only through GM), then streams that block's rows
    through the Unified Buffer: ``asc.adv.swiglu(y, u, g, 1.0)``, u · Swish(g) = u · g /
    (1 + exp(-g)) in float32 (Swish with beta 1 is silu), rounded once to y's dtype. The
    torch op ``torch.ops.ascendc.swiglu_ffn`` and ``samples/swiglu_ffn.py`` launch this kernel.
    """
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
    rows = max(1, min(tail_m, SWIGLU_FFN_UB_BUDGET // (cols * SWIGLU_FFN_UB_BYTES_PER_ELEM)))
    q_g = asc.TQue(asc.TPosition.VECIN, 2)
    q_u = asc.TQue(asc.TPosition.VECIN, 2)
    q_y = asc.TQue(asc.TPosition.VECOUT, 2)
    calc = asc.TBuf(asc.TPosition.VECCALC)
    tmp = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(q_g, 2, rows * cols * 4)
    pipe.init_buffer(q_u, 2, rows * cols * 4)
    pipe.init_buffer(q_y, 2, rows * cols * dt.sizeof())
    pipe.init_buffer(calc, rows * cols * 4)
    pipe.init_buffer(tmp, SWIGLU_FFN_TMP)
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


def host_type(dtype):
    """The host ``DataType`` of a torch or NumPy float16/bfloat16/float32 dtype."""
    from .. import host
    name = str(dtype).removeprefix("torch.")
    return {"float16": host.DataType.DT_FLOAT16, "bfloat16": host.DataType.DT_BF16,
            "float32": host.DataType.DT_FLOAT}[name]


def _split(t) -> tuple:
    return t.single_core_m, t.single_core_n, t.single_core_k, t.base_k


def ffn_tiling(m: int, n: int, k: int, in_type, base: tuple, keep_split: bool = False):
    """``swiglu_ffn_tiling`` with base_m × base_n ``base`` ((0, 0): the tiling helper's own
    fit). The helper may give a fixed base other K steps (single_core_k, base_k) than its own
    fit, which would sum other float32 partial products: ValueError. ``keep_split``: instead,
    whenever the helper gives ``base`` another split (single_core_m, single_core_n or the K
    steps) than its own fit, return its own fit. With the same split, every vector core asks
    the cube for the same block, which the simulator multiplies with one host BLAS call of the
    same shape: the same result bits whatever the base (the shipped table's rule)."""
    own = swiglu_ffn_tiling(m, n, k, in_type)
    if tuple(base) == (0, 0):
        return own
    tiling = swiglu_ffn_tiling(m, n, k, in_type, base)
    if keep_split:
        return tiling if _split(tiling) == _split(own) else own
    if _split(tiling)[2:] != _split(own)[2:]:
        raise ValueError(f"base {base[0]}x{base[1]} changes the K steps (single_core_k "
                         f"{tiling.single_core_k}, base_k {tiling.base_k} instead of "
                         f"{own.single_core_k}, {own.base_k}): other result bits")
    return tiling


def ffn_keeps_split(m: int, n: int, k: int, in_type, base: tuple) -> bool:
    """Whether the helper gives ``base`` its own fit's split (``ffn_tiling``)."""
    if tuple(base) == (0, 0):
        return True
    return _split(swiglu_ffn_tiling(m, n, k, in_type, base)) == \
        _split(swiglu_ffn_tiling(m, n, k, in_type))


def with_ffn_tiling(args: dict) -> None:
    """pre_hook of ``ffn_tuned``: the TCubeTiling of this config's base shape for x and wg
    (BASE_M = BASE_N = 0: the tiling helper's own choice; ``ffn_tiling``)."""
    (m, k), n = args["x"].shape, args["wg"].shape[1]
    args["tiling"] = ffn_tiling(m, n, k, host_type(args["x"].dtype),
                                (args["BASE_M"], args["BASE_N"]))


def with_ffn_split_kept(args: dict) -> None:
    """pre_hook of the shipped table's FFN tuning: ``with_ffn_tiling`` with ``keep_split``
    (a base that would change the helper's split runs the helper's own fit)."""
    (m, k), n = args["x"].shape, args["wg"].shape[1]
    args["tiling"] = ffn_tiling(m, n, k, host_type(args["x"].dtype),
                                (args["BASE_M"], args["BASE_N"]), keep_split=True)


@asc.kernel
def ffn_tuned(x: asc.GlobalAddress, wg: asc.GlobalAddress, wu: asc.GlobalAddress,
              y: asc.GlobalAddress, ws: asc.GlobalAddress, tiling: asc.adv.TCubeTiling,
              BASE_M: asc.ConstExpr[int], BASE_N: asc.ConstExpr[int]):
    """``swiglu_ffn_kernel`` with its Matmul base shape as ConstExpr parameters to autotune:
    they reach the kernel through the tiling ``with_ffn_tiling`` makes for them."""
    swiglu_ffn_kernel(x, wg, wu, y, ws, tiling)


@asc.kernel
def ffn_tuned_split_kept(x: asc.GlobalAddress, wg: asc.GlobalAddress, wu: asc.GlobalAddress,
                         y: asc.GlobalAddress, ws: asc.GlobalAddress,
                         tiling: asc.adv.TCubeTiling, BASE_M: asc.ConstExpr[int],
                         BASE_N: asc.ConstExpr[int]):
    """``ffn_tuned`` for the shipped table's tuning (``with_ffn_split_kept`` makes its
    tiling): a kernel of its own so that autotune's disk cache of choices, keyed by the
    kernel, keeps its tables apart from run-time tuning's."""
    swiglu_ffn_kernel(x, wg, wu, y, ws, tiling)
