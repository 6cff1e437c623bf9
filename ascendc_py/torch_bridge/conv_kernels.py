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
of TK. ``MODE`` says what a chunk holds of the input (``ops_conv._l1_plan`` chooses): 0, the
rows the tile needs at their place in an image-sized buffer; 1 ``ROWS`` (an image whose
channel block does not fit L1), those rows packed as a map of their own, load3d getting the
image-edge rows as padding (``tile_rows``); 2 ``COLS`` (not even the rows of one output row
fit), a tile is up to TM columns of ONE output row and the chunk holds the rows × columns
window its kernels touch, halo included, the image edges as padding on all four sides
(``tile_window``). The output is NHWC (``channels_last``): row m of a tile is pixel m, its
Cout values contiguous.

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
#: the largest source gap (32-byte blocks) of one strided data_copy (DataCopyParams.srcStride)
STRIDE_MAX = 65535
#: the most blocks of one strided data_copy (DataCopyParams.blockCount)
COUNT_MAX = 4095
#: L1 bytes one chunk may take: its feature-map rows plus its weight rows (two chunks in L1,
#: plus the bias); ``ops_conv._l1_plan`` sizes chunks and row tiles by it
CONV_L1_BUFFER = 250 * 1024


@asc.kernel
def axis_span(first: int, last: int, size: int, k: int, s: int, p: int, d: int):
    """The input span along one axis (rows or columns) of the windows of outputs ``first ..
    last`` as a map of its own: ``(lo, count, before, after, skip)``: image indices ``lo ..
    lo + count`` (at least one), the padding before and after them, and how many outputs of
    the map precede ``first``. The map's output 0 starts at virtual index ``o`` (``first``'s
    ``first·s − p`` or, when that is past the image, the last one of its stride class that is
    not)."""
    v0 = first * s - p
    v1 = last * s - p + d * (k - 1)
    skip = asc.ceildiv(max(v0 - (size - 1), 0), s)
    o = v0 - skip * s
    lo = max(o, 0)
    hi = max(min(v1, size - 1), lo)
    return lo, hi - lo + 1, lo - o, max(v1 - hi, 0), skip


@asc.kernel
def tile_rows(m0: int, mm: int, h: int, kh: int, sh: int, ph: int, dh: int, wo: int):
    """The input rows of the img2col tile of pixels ``m0 .. m0 + mm`` (full output rows wide)
    as a map of their own: ``(lo, rows, top, bottom, m_start)`` (``axis_span``) with the
    tile's first window in that map."""
    r0 = m0 // wo
    lo, rows, top, bottom, kd = axis_span(r0, (m0 + mm - 1) // wo, h, kh, sh, ph, dh)
    return lo, rows, top, bottom, m0 - (r0 - kd) * wo


@asc.kernel
def tile_window(r: int, q0: int, m: int, h: int, wd: int, kh: int, kw: int, sh: int, sw: int,
                ph: int, pw: int, dh: int, dw: int):
    """The input window of the column tile ``q0 .. q0 + m`` of output row ``r`` (``COLS``)
    as a map of its own: ``(lo, rows, clo, cols, left, right, top, bottom, m_start)``: image
    rows ``lo .. lo + rows`` and columns ``clo .. clo + cols``, load3d's ``pad_list`` for the
    image edges, and the tile's first window in that map."""
    lo, rows, top, bottom, kd = axis_span(r, r, h, kh, sh, ph, dh)
    clo, cols, left, right, kc = axis_span(q0, q0 + m - 1, wd, kw, sw, pw, dw)
    wo_map = (cols + left + right - dw * (kw - 1) - 1) // sw + 1
    return lo, rows, clo, cols, left, right, top, bottom, kd * wo_map + kc


@asc.kernel
def tile_pixels(mt: int, pixels: int, wo: int, TM: int, MODE: int):
    """``(m0, m)``: the first pixel (``ho·Wo + wo``) and the pixel count of pixel tile ``mt``
    of an image: TM consecutive pixels, or with ``COLS`` (MODE 2) up to TM columns of one
    output row."""
    m0 = mt * TM
    m = min(TM, pixels - m0)
    if MODE == 2:
        wq = asc.ceildiv(wo, TM)
        q0 = (mt % wq) * TM
        m0 = (mt // wq) * wo + q0
        m = min(TM, wo - q0)
    return m0, m


@asc.kernel
def fetch_unit(q_a1: asc.TQue, q_b1: asc.TQue, xg: asc.GlobalTensor, wg: asc.GlobalTensor,
               u: int, n_img: int, c1: int, h: int, wd: int, kh: int, kw: int, sh: int,
               sw: int, ph: int, pw: int, dh: int, dw: int, wo: int, pixels: int, cb: int,
               cout: int, n_tiles: int, TM: int, TN: int, MODE: int):
    """Copy unit ``u`` of this block (its tile, channel chunk) into L1: the input the tile's
    windows touch, of the chunk's channel blocks (A1; MODE 0: the rows at their place in an
    image-sized map, one strided copy; 1 ``ROWS``: the rows packed as a map of their own,
    ``tile_rows``, one strided copy; 2 ``COLS``: the rows × columns window, ``tile_window``,
    one strided copy per channel block), and the chunk's FracZ weight rows for the tile's
    output channels (B1, one strided copy); enque both."""
    dt = xg.dtype
    C0 = 32 // dt.sizeof()
    chunks = asc.ceildiv(c1, cb)
    t = asc.get_block_idx() + (u // chunks) * asc.get_block_num()
    ch = u % chunks
    img = (t // n_tiles) % n_img
    m0, m = tile_pixels(t // (n_tiles * n_img), pixels, wo, TM, MODE)
    mm = max(m, 2)
    c1a = ch * cb
    cbn = min(cb, c1 - c1a)
    a1 = q_a1.alloc_tensor(dt)
    if MODE == 2:
        lo, rows, clo, cols, left, right, top, bottom, m_start = tile_window(
            m0 // wo, m0 % wo, m, h, wd, kh, kw, sh, sw, ph, pw, dh, dw)
        for j in range(cbn):
            src = (((img * c1 + c1a + j) * h + lo) * wd + clo) * C0
            if wd - cols <= STRIDE_MAX and rows <= COUNT_MAX:
                asc.data_copy(a1[j * rows * cols * C0:], xg[src:],
                              asc.DataCopyParams(rows, cols, wd - cols, 0))
            else:       # rows further apart than a copy's stride reaches (or too many
                # for one copy): a copy each
                for i in range(rows):
                    asc.data_copy(a1[(j * rows + i) * cols * C0:], xg[src + i * wd * C0:],
                                  asc.DataCopyParams(1, cols, 0, 0))
    elif MODE == 1:
        lo, rows, top, bottom, m_start = tile_rows(m0, m, h, kh, sh, ph, dh, wo)
        src = ((img * c1 + c1a) * h + lo) * wd * C0
        if (h - rows) * wd <= STRIDE_MAX:
            asc.data_copy(a1, xg[src:], asc.DataCopyParams(cbn, rows * wd, (h - rows) * wd, 0))
        else:           # channel blocks further apart than a copy's stride: a copy each
            for j in range(cbn):
                asc.data_copy(a1[j * rows * wd * C0:], xg[src + j * h * wd * C0:],
                              asc.DataCopyParams(1, rows * wd, 0, 0))
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
                  ho: int, wo: int, cb: int, slab: int, TM: asc.ConstExpr[int],
                  TN: asc.ConstExpr[int], TK: asc.ConstExpr[int], QUANT: asc.ConstExpr[int],
                  RELU: asc.ConstExpr[bool], MODE: asc.ConstExpr[int] = 0):
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
        pipe.init_buffer(q_a1, 2, cb * slab * 32)
        n1_all = asc.ceildiv(cout, 16)
        pipe.init_buffer(q_b1, 2, cb * kh * kw * 32 * min(TN, n1_all * 16))
        pipe.init_buffer(q_a2, 2, TM * TK * dt.sizeof())
        pipe.init_buffer(q_b2, 2, TN * TK * dt.sizeof())
        pipe.init_buffer(q_c, 1, TM * TN * 4)
        pipe.init_buffer(q_bias1, 1, TN * 4)
        pipe.init_buffer(q_bias2, 1, TN * 4)
        pixels = ho * wo
        m_tiles = asc.ceildiv(pixels, TM)
        if MODE == 2:
            m_tiles = ho * asc.ceildiv(wo, TM)
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
            fetch_unit(q_a1, q_b1, xg, wg, 0, n_img, c1, h, wd, kh, kw, sh, sw, ph, pw, dh,
                       dw, wo, pixels, cb, cout, n_tiles, TM, TN, MODE)
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
            m0, m = tile_pixels(t // (n_tiles * n_img), pixels, wo, TM, MODE)
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
                fetch_unit(q_a1, q_b1, xg, wg, u + 1, n_img, c1, h, wd, kh, kw, sh, sw, ph,
                           pw, dh, dw, wo, pixels, cb, cout, n_tiles, TM, TN, MODE)
            c1a = ch * cb
            cbn = min(cb, c1 - c1a)
            # m, not mm: a second row of a 1-pixel tile could need one more padding row than
            # the 255 load3d takes; the fractal is written whole anyway
            if MODE == 2:
                lo, rows, clo, cols, left, right, top, bottom, m_start = tile_window(
                    m0 // wo, m0 % wo, m, h, wd, kh, kw, sh, sw, ph, pw, dh, dw)
            elif MODE == 1:
                lo, rows, top, bottom, m_start = tile_rows(m0, m, h, kh, sh, ph, dh, wo)
            a1 = q_a1.deque(dt)
            w1 = q_b1.deque(dt)
            k_chunk = cbn * taps * C0
            for ks in range(asc.ceildiv(k_chunk, TK)):
                k0 = ks * TK
                k = min(TK, k_chunk - k0)
                a2 = q_a2.alloc_tensor(dt)
                if MODE == 2:   # the tile's rows x columns, a map of their own
                    asc.load_data(a2, a1, asc.LoadData3DParamsV2(
                        [left, right, top, bottom], rows, cols, cbn * C0, k, m, k0, m_start,
                        sw, sh, kw, kh, dw, dh, False, 0))
                elif MODE == 1:   # the tile's rows, a map of their own (fetch_unit)
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
