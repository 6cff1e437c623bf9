"""Kernels for the cube-unit tests (tests/ops/test_cube*.py): one per instruction on raw
layouts, and the canonical matmul flow GM ND → L1 NZ → L0A/L0B → mmad → L0C → fixpipe → GM."""
from __future__ import annotations

import ascendc_py as asc


@asc.kernel
def nd2nz_kernel(x: asc.GlobalAddress, bg: asc.GlobalAddress, z: asc.GlobalAddress, n_l1: int,
                 nd: int, nv: int, dv: int, smat: int, sd: int, c0s: int, ns: int, dmat: int):
    """z = L1 after data_copy(l1 (holding bg), x, Nd2NzParams(...))."""
    xg = asc.GlobalTensor(); xg.set_global_buffer(x)
    bgg = asc.GlobalTensor(); bgg.set_global_buffer(bg)
    zg = asc.GlobalTensor(); zg.set_global_buffer(z)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.A1)
    pipe.init_buffer(buf, n_l1 * x.dtype.sizeof())
    l1 = buf.get(x.dtype)
    asc.data_copy(l1, bgg, n_l1)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(l1, xg, asc.Nd2NzParams(nd, nv, dv, smat, sd, c0s, ns, dmat))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(zg, l1, n_l1)


@asc.kernel
def load2d_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, n_l1: int, n_l0: int,
                  start: int, rep: int, ss: int, gap: int, tr: bool, mode: int,
                  TO_B: asc.ConstExpr[bool], FROM_GM: asc.ConstExpr[bool]):
    """z = L0A/L0B (zeroed) after load_data(l0, l1 (holding x) or x, LoadData2DParams(...))."""
    xg = asc.GlobalTensor(); xg.set_global_buffer(x)
    zg = asc.GlobalTensor(); zg.set_global_buffer(z)
    pipe = asc.TPipe()
    b1 = asc.TBuf(asc.TPosition.A1)
    b2 = asc.TBuf(asc.TPosition.B2 if TO_B else asc.TPosition.A2)
    pipe.init_buffer(b1, n_l1 * x.dtype.sizeof())
    pipe.init_buffer(b2, n_l0 * x.dtype.sizeof())
    l1 = b1.get(x.dtype)
    l0 = b2.get(x.dtype)
    for i in range(n_l0):
        l0.set_value(i, 0)
    asc.data_copy(l1, xg, n_l1)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if FROM_GM:
        asc.load_data(l0, xg, asc.LoadData2DParams(start, rep, ss, 0, gap, tr, mode))
    else:
        asc.load_data(l0, l1, asc.LoadData2DParams(start, rep, ss, 0, gap, tr, mode))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    for i in range(n_l0):
        zg.set_value(i, l0.get_value(i))


@asc.kernel
def mmad_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, bias: asc.GlobalAddress,
                c: asc.GlobalAddress, na: int, nb: int, nc: int, nbias: int, m: int, n: int,
                k: int, m2: int, INIT2: asc.ConstExpr[bool], BIAS: asc.ConstExpr[bool]):
    """Raw layouts: a → L0A, b → L0B (load_data from GM, contiguous fractals); mmad(m, n, k)
    (init, or with bias), then a second mmad (rows m2) that accumulates unless INIT2; c = L0C."""
    ag = asc.GlobalTensor(); ag.set_global_buffer(a)
    bg = asc.GlobalTensor(); bg.set_global_buffer(b)
    sg = asc.GlobalTensor(); sg.set_global_buffer(bias)
    cg = asc.GlobalTensor(); cg.set_global_buffer(c)
    pipe = asc.TPipe()
    ta = asc.TBuf(asc.TPosition.A2)
    tb = asc.TBuf(asc.TPosition.B2)
    tc = asc.TBuf(asc.TPosition.CO1)
    t1 = asc.TBuf(asc.TPosition.C1)
    tt = asc.TBuf(asc.TPosition.C2)
    pipe.init_buffer(ta, na * a.dtype.sizeof())
    pipe.init_buffer(tb, nb * a.dtype.sizeof())
    pipe.init_buffer(tc, nc * 4)
    pipe.init_buffer(t1, nbias * 4)
    pipe.init_buffer(tt, nbias * 4)
    l0a = ta.get(a.dtype)
    l0b = tb.get(a.dtype)
    l0c = tc.get(bias.dtype)
    asc.load_data(l0a, ag, asc.LoadData2DParams(0, na * a.dtype.sizeof() // 512, 1, 0, 0, False, 0))
    asc.load_data(l0b, bg, asc.LoadData2DParams(0, nb * a.dtype.sizeof() // 512, 1, 0, 0, False, 0))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if BIAS:
        l1 = t1.get(bias.dtype)
        bt = tt.get(bias.dtype)
        asc.data_copy(l1, sg, nbias)
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        asc.data_copy(bt, l1, nbias)
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        asc.mmad(l0c, l0a, l0b, bt, asc.MmadParams(m, n, k))
    else:
        asc.mmad(l0c, l0a, l0b, asc.MmadParams(m, n, k, 0, False, True))
    asc.pipe_barrier(asc.PipeID.PIPE_M)
    asc.mmad(l0c, l0a, l0b, asc.MmadParams(m2, n, k, 0, False, INIT2))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    m1 = (nc // 256) // asc.ceildiv(n, 16)
    asc.fixpipe(cg, l0c, asc.FixpipeParamsV220(asc.ceildiv(n, 16) * 16, m1 * 16, m1 * 16,
                                               m1 * 16 * 16 * 4 // 32, asc.QuantModes.NoQuant),
                asc.FixpipeConfig.cfg_nz())


@asc.kernel
def fixpipe_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, raw: asc.GlobalAddress,
                   z: asc.GlobalAddress, na: int, nb: int, nc: int, m: int, n: int, k: int,
                   ns: int, ms: int, ss: int, ds: int, deq: int, ndn: int, sns: int, dns: int,
                   relu: bool, QUANT: asc.ConstExpr[int], NZ: asc.ConstExpr[bool]):
    """L0C = mmad of raw-layout a, b (as in mmad_kernel); raw = L0C dump; z gets fixpipe."""
    ag = asc.GlobalTensor(); ag.set_global_buffer(a)
    bg = asc.GlobalTensor(); bg.set_global_buffer(b)
    rg = asc.GlobalTensor(); rg.set_global_buffer(raw)
    zg = asc.GlobalTensor(); zg.set_global_buffer(z)
    pipe = asc.TPipe()
    ta = asc.TBuf(asc.TPosition.A2)
    tb = asc.TBuf(asc.TPosition.B2)
    tc = asc.TBuf(asc.TPosition.CO1)
    pipe.init_buffer(ta, na * a.dtype.sizeof())
    pipe.init_buffer(tb, nb * a.dtype.sizeof())
    pipe.init_buffer(tc, nc * 4)
    l0a = ta.get(a.dtype)
    l0b = tb.get(a.dtype)
    l0c = tc.get(raw.dtype)
    asc.load_data(l0a, ag, asc.LoadData2DParams(0, na * a.dtype.sizeof() // 512, 1, 0, 0, False, 0))
    asc.load_data(l0b, bg, asc.LoadData2DParams(0, nb * a.dtype.sizeof() // 512, 1, 0, 0, False, 0))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.mmad(l0c, l0a, l0b, asc.MmadParams(m, n, k, 0, False, True))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    m1 = asc.ceildiv(m, 16)
    asc.fixpipe(rg, l0c, asc.FixpipeParamsV220(asc.ceildiv(n, 16) * 16, m1 * 16, m1 * 16,
                                               m1 * 16 * 16 * 4 // 32), asc.FixpipeConfig.cfg_nz)
    params = asc.FixpipeParamsV220(ns, ms, ss, ds, QUANT, deq, ndn, sns, dns, relu)
    if NZ:
        asc.fixpipe(zg, l0c, params, asc.FixpipeConfig(asc.CO2Layout.NZ))
    else:
        asc.fixpipe(zg, l0c, params)


@asc.kernel
def matmul_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, bias: asc.GlobalAddress,
                  c: asc.GlobalAddress, M: int, N: int, K: int, TM: asc.ConstExpr[int],
                  TN: asc.ConstExpr[int], TK: asc.ConstExpr[int], BT: asc.ConstExpr[bool],
                  BIAS: asc.ConstExpr[bool], RELU: asc.ConstExpr[bool], QUANT: asc.ConstExpr[int]):
    """C = A (M×K) @ B (K×N, or N×K given as BT) [+ bias], tiles TM×TN per block, K in chunks
    of TK accumulated in L0C; the flow of Ascend C's basic matmul samples."""
    ag = asc.GlobalTensor(); ag.set_global_buffer(a)
    bg = asc.GlobalTensor(); bg.set_global_buffer(b)
    sg = asc.GlobalTensor(); sg.set_global_buffer(bias)
    cg = asc.GlobalTensor(); cg.set_global_buffer(c)
    dt = a.dtype
    c0 = 32 // dt.sizeof()
    frac = 512 // dt.sizeof()
    tiles_n = asc.ceildiv(N, TN)
    mb = asc.get_block_idx() // tiles_n
    nb = asc.get_block_idx() % tiles_n
    m = min(TM, M - mb * TM)
    n = min(TN, N - nb * TN)
    m1 = asc.ceildiv(m, 16)
    n1 = asc.ceildiv(n, 16)
    pipe = asc.TPipe()
    qa1 = asc.TQue(asc.TPosition.A1, 1)
    qb1 = asc.TQue(asc.TPosition.B1, 1)
    qa2 = asc.TQue(asc.TPosition.A2, 1)
    qb2 = asc.TQue(asc.TPosition.B2, 1)
    qc = asc.TQue(asc.TPosition.CO1, 1)
    qs1 = asc.TQue(asc.TPosition.C1, 1)
    qbt = asc.TQue(asc.TPosition.C2, 1)
    kp = asc.ceildiv(TK, 32) * 32
    pipe.init_buffer(qa1, 1, asc.ceildiv(TM, 16) * 16 * kp * dt.sizeof())
    pipe.init_buffer(qb1, 1, asc.ceildiv(TN, 16) * 16 * kp * dt.sizeof())
    pipe.init_buffer(qa2, 1, asc.ceildiv(TM, 16) * 16 * kp * dt.sizeof())
    pipe.init_buffer(qb2, 1, asc.ceildiv(TN, 16) * 16 * kp * dt.sizeof())
    pipe.init_buffer(qc, 1, asc.ceildiv(TM, 16) * asc.ceildiv(TN, 16) * 1024)
    pipe.init_buffer(qs1, 1, asc.ceildiv(TN, 16) * 64)
    pipe.init_buffer(qbt, 1, asc.ceildiv(TN, 16) * 64)
    if BIAS:
        s1 = qs1.alloc_tensor(bias.dtype)
        asc.data_copy(s1, sg[nb * TN:], n1 * 16)
        qs1.enque(s1)
        s1 = qs1.deque(bias.dtype)
        bt = qbt.alloc_tensor(bias.dtype)
        asc.data_copy(bt, s1, n1 * 16)
        qbt.enque(bt)
        qs1.free_tensor(s1)
        bt = qbt.deque(bias.dtype)
    cl = qc.alloc_tensor(bias.dtype)
    mm = m if m != 1 else 2          # m == 1 would switch the cube to GEMV (A read as ND)
    for kc in range(asc.ceildiv(K, TK)):
        k = min(TK, K - kc * TK)
        k1 = asc.ceildiv(k, c0)
        a1 = qa1.alloc_tensor(dt)
        asc.data_copy(a1, ag[mb * TM * K + kc * TK:], asc.Nd2NzParams(1, m, k, 0, K, m1 * 16, 1, 0))
        qa1.enque(a1)
        b1 = qb1.alloc_tensor(dt)
        if BT:
            asc.data_copy(b1, bg[nb * TN * K + kc * TK:],
                          asc.Nd2NzParams(1, n, k, 0, K, n1 * 16, 1, 0))
        else:
            asc.data_copy(b1, bg[kc * TK * N + nb * TN:],
                          asc.Nd2NzParams(1, k, n, 0, N, asc.ceildiv(k, 16) * 16, 1, 0))
        qb1.enque(b1)
        a1 = qa1.deque(dt)
        a2 = qa2.alloc_tensor(dt)
        for i in range(m1):
            asc.load_data(a2[i * k1 * frac:], a1[i * frac:],
                          asc.LoadData2DParams(0, k1, m1, 0, 0, False, 0))
        qa2.enque(a2)
        qa1.free_tensor(a1)
        b1 = qb1.deque(dt)
        b2 = qb2.alloc_tensor(dt)
        if BT:
            asc.load_data(b2, b1, asc.LoadData2DParams(0, k1 * n1, 1, 0, 0, False, 0))
        else:
            kb = asc.ceildiv(k, 16)
            for i in range(kb):
                asc.load_data(b2[i * n1 * frac:], b1[i * frac:],
                              asc.LoadData2DParams(0, n1, kb, 0, 0, True, 0))
        qb2.enque(b2)
        qb1.free_tensor(b1)
        a2 = qa2.deque(dt)
        b2 = qb2.deque(dt)
        if BIAS and kc == 0:
            asc.mmad(cl, a2, b2, bt, asc.MmadParams(mm, n, k))
        else:
            asc.mmad(cl, a2, b2, asc.MmadParams(mm, n, k, 0, False, kc == 0))
        qa2.free_tensor(a2)
        qb2.free_tensor(b2)
    if BIAS:
        qbt.free_tensor(bt)
    qc.enque(cl)
    cl = qc.deque(bias.dtype)
    asc.fixpipe(cg[mb * TM * N + nb * TN:], cl,
                asc.FixpipeParamsV220(n, m, m1 * 16, N, QUANT, 0, 1, 0, 0, RELU))
    qc.free_tensor(cl)


@asc.kernel
def load2d_t_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, n_l1: int, n_l0: int,
                    start: int, rep: int, ss: int, gap: int, fgap: int, mode: int,
                    TO_B: asc.ConstExpr[bool]):
    """z = L0A/L0B (zeroed) after load_data_with_transpose(l0, l1 (holding x), params)."""
    xg = asc.GlobalTensor(); xg.set_global_buffer(x)
    zg = asc.GlobalTensor(); zg.set_global_buffer(z)
    pipe = asc.TPipe()
    b1 = asc.TBuf(asc.TPosition.B1)
    b2 = asc.TBuf(asc.TPosition.B2 if TO_B else asc.TPosition.A2)
    pipe.init_buffer(b1, n_l1 * x.dtype.sizeof())
    pipe.init_buffer(b2, n_l0 * x.dtype.sizeof())
    l1 = b1.get(x.dtype)
    l0 = b2.get(x.dtype)
    for i in range(n_l0):
        l0.set_value(i, 0)
    asc.data_copy(l1, xg, n_l1)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.load_data_with_transpose(l0, l1, asc.LoadData2dTransposeParams(start, rep, ss, gap,
                                                                        fgap, mode))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    for i in range(n_l0):
        zg.set_value(i, l0.get_value(i))


@asc.kernel
def int8_kn_matmul(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress, M: int,
                   K: int, N: int):
    """int8 C = A (M×K) @ B (K×N, not transposed in GM): B reaches L0B through
    load_data_with_transpose (32×32 squares), as in Ascend C's int8 samples; one block."""
    ag = asc.GlobalTensor(); ag.set_global_buffer(a)
    bg = asc.GlobalTensor(); bg.set_global_buffer(b)
    cg = asc.GlobalTensor(); cg.set_global_buffer(c)
    m1 = asc.ceildiv(M, 16)
    k1 = asc.ceildiv(K, 32)          # k fractals of A (k0 = 32) = B's 32-row squares
    n2 = asc.ceildiv(N, 32)          # B's 32-column blocks
    pipe = asc.TPipe()
    ta1 = asc.TBuf(asc.TPosition.A1)
    tb1 = asc.TBuf(asc.TPosition.B1)
    ta2 = asc.TBuf(asc.TPosition.A2)
    tb2 = asc.TBuf(asc.TPosition.B2)
    tc = asc.TBuf(asc.TPosition.CO1)
    pipe.init_buffer(ta1, m1 * k1 * 512)
    pipe.init_buffer(tb1, k1 * n2 * 1024)
    pipe.init_buffer(ta2, m1 * k1 * 512)
    pipe.init_buffer(tb2, k1 * n2 * 1024)
    pipe.init_buffer(tc, m1 * n2 * 2 * 1024)
    a1 = ta1.get(asc.int8)
    b1 = tb1.get(asc.int8)
    a2 = ta2.get(asc.int8)
    b2 = tb2.get(asc.int8)
    cl = tc.get(asc.int32)
    asc.data_copy(a1, ag, asc.Nd2NzParams(1, M, K, 0, K, m1 * 16, 1, 0))
    asc.data_copy(b1, bg, asc.Nd2NzParams(1, K, N, 0, N, k1 * 32, 1, 0))
    asc.set_flag(asc.HardEvent.MTE2_MTE1, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE1, 0)
    for i in range(m1):
        asc.load_data(a2[i * k1 * 512:], a1[i * 512:], asc.LoadData2DParams(0, k1, m1, 0, 0,
                                                                            False, 0))
    for i in range(k1):
        asc.load_data_with_transpose(b2[i * n2 * 1024:], b1,
                                     asc.LoadData2dTransposeParams(i, n2, k1, 1, 0, 0))
    asc.set_flag(asc.HardEvent.MTE1_M, 0)
    asc.wait_flag(asc.HardEvent.MTE1_M, 0)
    asc.mmad(cl, a2, b2, asc.MmadParams(M if M != 1 else 2, n2 * 32, K, 0, False, True))
    asc.set_flag(asc.HardEvent.M_FIX, 0)
    asc.wait_flag(asc.HardEvent.M_FIX, 0)
    asc.fixpipe(cg, cl, asc.FixpipeParamsV220(N, M, m1 * 16, N))
