"""Convolution on the cube (img2col) and the vector kernels of the unfused Conv → BN → ReLU
chain (``torch_bridge.ops_conv``; README "Convolution").

``conv2d_kernel``: ``y = relu?(conv2d(x, w) + bias)`` for one group, any stride, padding and
dilation, with Ascend C's low-level instructions on a cube-only launch:

    GM x (NC1HWC0) ─data_copy (the input rows a tile needs)→ A1 (L1, NC1HWC0)
        ─load_data(LoadData3DParamsV2: img2col)→ A2 (L0A, ZZ) ┐
    GM w (FracZ) ─data_copy→ B1 ─load_data (2D)→ B2 (L0B, ZN) ┼→ mmad (float32 in L0C) ─┐
    GM bias (float32) ─data_copy→ C1 ─data_copy→ C2 (BiasTable) ┘  (first K step)       │
    CO1 ─fixpipe (NZ → ND rows = output pixels, relu_en, float32 → y's dtype)→ GM y (NHWC)

A tile is TM output pixels (rows of the img2col matrix, in (ho, wo) order) × TN output
channels of one image; blocks take tiles block, block + block_num, … in the order (pixel tile,
image, channel tile), so the short last pixel tiles share the last round. A tile is worked in
channel chunks of CB channel blocks: the chunk's input rows and weight rows go GM → L1 (one
strided copy each, ``fetch_unit``) while the previous chunk computes; inside a chunk, K steps
of TK. With ``ROWS`` (an image whose channel block does not fit L1) the input rows are packed
as a map of their own and load3d gets the image-edge rows as padding (``tile_rows``); without
it they sit at their place in an image-sized buffer. The output is NHWC (``channels_last``): row m of a tile is pixel m, its Cout values
contiguous.

``affine_kernel`` (vector): ``y = x·scale + shift`` per channel of an NHWC tensor (batch norm
in inference), and ``relu_kernel`` (vector): ``y = max(x, 0)``; the three-launch chain the fused
kernel replaces.
"""
from __future__ import annotations

import ascendc_py as asc

#: per input element size: (TM output pixels, TN output channels, TK K elements per step):
#: L0A TM·TK and L0B TN·TK double-buffered (≤ 64 KB each), L0C TM·TN float32 (≤ 128 KB)
CONV_TILES = {2: (256, 128, 64), 4: (128, 128, 32)}
#: TM when the large tiles would leave cores idle (fewer tiles than AI Cores)
CONV_TM_SMALL = 128
#: L1 bytes one chunk may take: its feature-map rows plus its weight rows (two chunks in L1,
#: plus the bias); ``ops_conv._l1_plan`` sizes chunks and row tiles by it
CONV_L1_BUFFER = 250 * 1024


@asc.kernel
def tile_rows(m0: int, mm: int, h: int, kh: int, sh: int, ph: int, dh: int, wo: int):
    """The input rows of the img2col tile of pixels ``m0 .. m0 + mm`` as a map of their own:
    ``(lo, rows, top, bottom, m_start)``: image rows ``lo .. lo + rows`` (at least one), the
    padding rows above and below them, and the tile's first window in that map. Its output
    row 0 starts at virtual row ``o`` (the first output row's ``r0·sh − ph`` or, when that is
    below the image, the last one of its stride class that is not)."""
    r0 = m0 // wo
    v0 = r0 * sh - ph
    v1 = ((m0 + mm - 1) // wo) * sh - ph + dh * (kh - 1)
    kd = asc.ceildiv(max(v0 - (h - 1), 0), sh)
    o = v0 - kd * sh
    lo = max(o, 0)
    hi = max(min(v1, h - 1), lo)
    return lo, hi - lo + 1, lo - o, max(v1 - hi, 0), m0 - (r0 - kd) * wo


@asc.kernel
def fetch_unit(q_a1: asc.TQue, q_b1: asc.TQue, xg: asc.GlobalTensor, wg: asc.GlobalTensor,
               u: int, n_img: int, c1: int, h: int, wd: int, kh: int, kw: int, sh: int,
               ph: int, dh: int, wo: int, pixels: int, cb: int, cout: int, n_tiles: int,
               TM: int, TN: int, ROWS: bool):
    """Copy unit ``u`` of this block (its tile, channel chunk) into L1, one strided copy each:
    the input rows the tile's windows touch, of the chunk's channel blocks (A1; with ``ROWS``
    packed as a map of their own, ``tile_rows``, else at their place in the image), and
    the chunk's FracZ weight rows for the tile's output channels (B1); enque both."""
    dt = xg.dtype
    C0 = 32 // dt.sizeof()
    chunks = asc.ceildiv(c1, cb)
    t = asc.get_block_idx() + (u // chunks) * asc.get_block_num()
    ch = u % chunks
    img = (t // n_tiles) % n_img
    m0 = (t // (n_tiles * n_img)) * TM
    mm = max(min(TM, pixels - m0), 2)
    c1a = ch * cb
    cbn = min(cb, c1 - c1a)
    a1 = q_a1.alloc_tensor(dt)
    if ROWS:
        lo, rows, top, bottom, m_start = tile_rows(m0, min(TM, pixels - m0), h, kh, sh, ph,
                                                   dh, wo)
        asc.data_copy(a1, xg[((img * c1 + c1a) * h + lo) * wd * C0:],
                      asc.DataCopyParams(cbn, rows * wd, (h - rows) * wd, 0))
    else:
        h_lo = max((m0 // wo) * sh - ph, 0)
        h_hi = min(((m0 + mm - 1) // wo) * sh - ph + dh * (kh - 1), h - 1)
        if h_hi >= h_lo:
            rows = h_hi - h_lo + 1
            asc.data_copy(a1[h_lo * wd * C0:], xg[((img * c1 + c1a) * h + h_lo) * wd * C0:],
                          asc.DataCopyParams(cbn, rows * wd, (h - rows) * wd, (h - rows) * wd))
    q_a1.enque(a1)
    n0 = (t % n_tiles) * TN
    n1 = asc.ceildiv(min(TN, cout - n0), 16)
    n1_all = asc.ceildiv(cout, 16)
    w1 = q_b1.alloc_tensor(dt)
    asc.data_copy(w1, wg[(c1a * kh * kw * n1_all + n0 // 16) * 16 * C0:],
                  asc.DataCopyParams(cbn * kh * kw, n1 * 16, (n1_all - n1) * 16, 0))
    q_b1.enque(w1)


@asc.kernel(kernel_type=asc.KernelType.AIC_ONLY)
def conv2d_kernel(x: asc.GlobalAddress, w: asc.GlobalAddress, bias: asc.GlobalAddress,
                  y: asc.GlobalAddress, n_img: int, c1: int, h: int, wd: int, cout: int,
                  kh: int, kw: int, sh: int, sw: int, ph: int, pw: int, dh: int, dw: int,
                  ho: int, wo: int, cb: int, rows_l1: int, TM: asc.ConstExpr[int], TN: asc.ConstExpr[int],
                  TK: asc.ConstExpr[int], QUANT: asc.ConstExpr[int], RELU: asc.ConstExpr[bool],
                  ROWS: asc.ConstExpr[bool] = False):
    if asc.ascend_is_aic():
        dt = x.dtype
        C0 = 32 // dt.sizeof()
        FRACTAL = 16 * C0
        xg = asc.GlobalTensor(); xg.set_global_buffer(x)
        wg = asc.GlobalTensor(); wg.set_global_buffer(w)
        bg = asc.GlobalTensor(); bg.set_global_buffer(bias)
        yg = asc.GlobalTensor(); yg.set_global_buffer(y)
        pipe = asc.TPipe()
        q_a1 = asc.TQue(asc.TPosition.A1, 2)
        q_b1 = asc.TQue(asc.TPosition.B1, 2)
        q_a2 = asc.TQue(asc.TPosition.A2, 2)
        q_b2 = asc.TQue(asc.TPosition.B2, 2)
        q_c = asc.TQue(asc.TPosition.CO1, 1)
        q_bias1 = asc.TQue(asc.TPosition.C1, 1)
        q_bias2 = asc.TQue(asc.TPosition.C2, 1)
        pipe.init_buffer(q_a1, 2, cb * rows_l1 * wd * 32)
        n1_all = asc.ceildiv(cout, 16)
        pipe.init_buffer(q_b1, 2, cb * kh * kw * 32 * min(TN, n1_all * 16))
        pipe.init_buffer(q_a2, 2, TM * TK * dt.sizeof())
        pipe.init_buffer(q_b2, 2, TN * TK * dt.sizeof())
        pipe.init_buffer(q_c, 1, TM * TN * 4)
        pipe.init_buffer(q_bias1, 1, TN * 4)
        pipe.init_buffer(q_bias2, 1, TN * 4)
        pixels = ho * wo
        m_tiles = asc.ceildiv(pixels, TM)
        n_tiles = asc.ceildiv(cout, TN)
        taps = kh * kw
        chunks = asc.ceildiv(c1, cb)
        tiles = n_img * m_tiles * n_tiles
        block = asc.get_block_idx()
        mine = 0
        if block < tiles:
            mine = asc.ceildiv(tiles - block, asc.get_block_num())
        units = mine * chunks       # (tile, channel chunk) pairs: the next one's rows are
        if units > 0:               # copied in while this one computes
            fetch_unit(q_a1, q_b1, xg, wg, 0, n_img, c1, h, wd, kh, kw, sh, ph, dh, wo,
                       pixels, cb, cout, n_tiles, TM, TN, ROWS)
        first = True
        acc = q_c.alloc_tensor(asc.float32)
        bt = q_bias2.alloc_tensor(asc.float32)
        q_bias2.enque(bt)
        bt = q_bias2.deque(asc.float32)
        for u in range(units):
            t = block + (u // chunks) * asc.get_block_num()
            ch = u % chunks
            nt = t % n_tiles               # pixel tiles outermost: the short last tile of
            img = (t // n_tiles) % n_img   # every image comes in the last round
            mt = t // (n_tiles * n_img)
            m0 = mt * TM
            m = min(TM, pixels - m0)
            mm = max(m, 2)             # m == 1 would switch the cube to GEMV
            n0 = nt * TN
            n = min(TN, cout - n0)
            n1 = asc.ceildiv(n, 16)
            if ch == 0:                # a new tile: its bias into the BiasTable
                q_bias2.free_tensor(bt)
                b1 = q_bias1.alloc_tensor(asc.float32)
                asc.data_copy(b1, bg[n0:], n1 * 16)
                q_bias1.enque(b1)
                b1 = q_bias1.deque(asc.float32)
                bt = q_bias2.alloc_tensor(asc.float32)
                asc.data_copy(bt, b1, n1 * 16)
                q_bias2.enque(bt)
                q_bias1.free_tensor(b1)
                bt = q_bias2.deque(asc.float32)
                first = True
            if u + 1 < units:          # after the bias: MTE2 runs its copies in order
                fetch_unit(q_a1, q_b1, xg, wg, u + 1, n_img, c1, h, wd, kh, kw, sh, ph, dh,
                           wo, pixels, cb, cout, n_tiles, TM, TN, ROWS)
            c1a = ch * cb
            cbn = min(cb, c1 - c1a)
            if ROWS:    # m, not mm: a second row of a 1-pixel tile could need one more
                # padding row than the 255 load3d takes; the fractal is written whole anyway
                lo, rows, top, bottom, m_start = tile_rows(m0, m, h, kh, sh, ph, dh, wo)
            a1 = q_a1.deque(dt)
            w1 = q_b1.deque(dt)
            k_chunk = cbn * taps * C0
            for ks in range(asc.ceildiv(k_chunk, TK)):
                k0 = ks * TK
                k = min(TK, k_chunk - k0)
                a2 = q_a2.alloc_tensor(dt)
                if ROWS:    # the tile's rows, a map of their own (fetch_unit)
                    asc.load_data(a2, a1, asc.LoadData3DParamsV2(
                        [pw, pw, top, bottom], rows, wd, cbn * C0, k, m, k0, m_start, sw, sh,
                        kw, kh, dw, dh, False, 0))
                else:       # the whole image's place, its rows copied in
                    asc.load_data(a2, a1, asc.LoadData3DParamsV2(
                        [pw, pw, ph, ph], h, wd, cbn * C0, k, mm, k0, m0, sw, sh, kw, kh, dw,
                        dh, False, 0))
                q_a2.enque(a2)
                b2 = q_b2.alloc_tensor(dt)
                asc.load_data(b2, w1[(k0 // C0) * n1 * FRACTAL:],
                              asc.LoadData2DParams(0, (k // C0) * n1, 1, 0, 0, False, 0))
                q_b2.enque(b2)
                a2 = q_a2.deque(dt)
                b2 = q_b2.deque(dt)
                if first:
                    asc.mmad(acc, a2, b2, bt, asc.MmadParams(mm, n, k))
                else:
                    asc.mmad(acc, a2, b2, asc.MmadParams(mm, n, k, 0, False, False))
                first = False
                q_a2.free_tensor(a2)
                q_b2.free_tensor(b2)
            q_a1.free_tensor(a1)
            q_b1.free_tensor(w1)
            if ch == chunks - 1:       # the tile is done: L0C -> GM
                q_c.enque(acc)
                acc = q_c.deque(asc.float32)
                asc.fixpipe(yg[((img * pixels) + m0) * cout + n0:], acc,
                            asc.FixpipeParamsV220(n, m, asc.ceildiv(mm, 16) * 16, cout, QUANT,
                                                  0, 1, 0, 0, RELU))
                q_c.free_tensor(acc)
                acc = q_c.alloc_tensor(asc.float32)
        q_c.free_tensor(acc)
        q_bias2.free_tensor(bt)


#: elements of one vector tile (a multiple of the channel count: whole pixels)
AFFINE_TILE = 4096


@asc.kernel
def affine_kernel(x: asc.GlobalAddress, scale: asc.GlobalAddress, shift: asc.GlobalAddress,
                  y: asc.GlobalAddress, total: int, tile: int):
    """y = x·scale + shift (float32 math) over ``total`` elements of an NHWC tensor; ``scale``
    and ``shift`` (float32) hold one tile of ``tile`` elements (the per-channel values repeated
    over tile / C pixels), loaded once; each block takes tiles block, block + block_num, …"""
    dt = x.dtype
    xg = asc.GlobalTensor(); xg.set_global_buffer(x)
    sg = asc.GlobalTensor(); sg.set_global_buffer(scale)
    bg = asc.GlobalTensor(); bg.set_global_buffer(shift)
    yg = asc.GlobalTensor(); yg.set_global_buffer(y)
    pipe = asc.TPipe()
    q_in = asc.TQue(asc.TPosition.VECIN, 2)
    q_out = asc.TQue(asc.TPosition.VECOUT, 2)
    q_p = asc.TQue(asc.TPosition.VECIN, 1)
    wide = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(q_in, 2, tile * dt.sizeof())
    pipe.init_buffer(q_out, 2, tile * dt.sizeof())
    pipe.init_buffer(q_p, 1, 2 * tile * 4)
    pipe.init_buffer(wide, tile * 4)
    p = q_p.alloc_tensor(asc.float32)
    asc.data_copy(p, sg, tile)
    asc.data_copy(p[tile:], bg, tile)
    q_p.enque(p)
    p = q_p.deque(asc.float32)
    t = wide.get(asc.float32)
    i = asc.get_block_idx() * tile
    while i < total:
        count = min(tile, total - i)
        xin = q_in.alloc_tensor(dt)
        asc.data_copy(xin, xg[i:], count)
        q_in.enque(xin)
        xin = q_in.deque(dt)
        out = q_out.alloc_tensor(dt)
        if dt == asc.float32:
            asc.mul(out, xin, p, count)
            asc.add(out, out, p[tile:], count)
        else:
            asc.cast(t, xin, asc.RoundMode.CAST_NONE, count)
            asc.mul(t, t, p, count)
            asc.add(t, t, p[tile:], count)
            asc.cast(out, t, asc.RoundMode.CAST_RINT, count)
        q_in.free_tensor(xin)
        q_out.enque(out)
        out = q_out.deque(dt)
        asc.data_copy(yg[i:], out, count)
        q_out.free_tensor(out)
        i += asc.get_block_num() * tile
    q_p.free_tensor(p)


@asc.kernel
def relu_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, total: int, tile: int):
    """y = max(x, 0) over ``total`` elements; blocks take tiles block, block + block_num, …"""
    dt = x.dtype
    xg = asc.GlobalTensor(); xg.set_global_buffer(x)
    yg = asc.GlobalTensor(); yg.set_global_buffer(y)
    pipe = asc.TPipe()
    q_in = asc.TQue(asc.TPosition.VECIN, 2)
    q_out = asc.TQue(asc.TPosition.VECOUT, 2)
    pipe.init_buffer(q_in, 2, tile * dt.sizeof())
    pipe.init_buffer(q_out, 2, tile * dt.sizeof())
    i = asc.get_block_idx() * tile
    while i < total:
        count = min(tile, total - i)
        xin = q_in.alloc_tensor(dt)
        asc.data_copy(xin, xg[i:], count)
        q_in.enque(xin)
        xin = q_in.deque(dt)
        out = q_out.alloc_tensor(dt)
        asc.relu(out, xin, count)
        q_in.free_tensor(xin)
        q_out.enque(out)
        out = q_out.deque(dt)
        asc.data_copy(yg[i:], out, count)
        q_out.free_tensor(out)
        i += asc.get_block_num() * tile
