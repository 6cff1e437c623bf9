"""The kernels behind the shipped torch ops (``ascendc_py.torch_bridge.ops``).

Every kernel works on flat, contiguous float16 or float32 buffers (bfloat16 is widened to
float32 by the op's host side until the language has a bfloat16 cast). Work is split the same
way everywhere:

* the launcher gives each block a contiguous range of ``share`` elements (pixels for the colour
  kernel), ``share`` a multiple of 16 so every block starts on a 32-byte boundary;
* a block walks its range in tiles of ``TILE`` elements (a compile-time value the launcher picks
  from the dtype and the kernel's Unified Buffer budget) through double-buffered queues;
* the last tile of a block may hold a count that is not a whole number of 32-byte blocks, which
  ``data_copy`` would truncate: ``load_tile``/``store_tile`` move the 32-byte-aligned body with
  ``data_copy`` and the remaining (< 32 B) elements one by one with ``get_value``/``set_value``.
  (When the language gains ``data_copy_pad`` these two helpers are the only place to change.)
"""
from __future__ import annotations

import ascendc_py as asc

BUFFER_NUM = 2   # double buffering: the copy-in of tile i+1 overlaps the compute of tile i


# ----------------------------------------------------------------------------- shared helpers
@asc.kernel
def load_tile(dst: asc.LocalTensor, src: asc.GlobalTensor, count: int,
              ALIGN: asc.ConstExpr[int]):
    """UB ← GM, ``count`` elements: the 32-byte body by DMA, the tail by the scalar unit."""
    body = count - count % ALIGN
    if body > 0:
        asc.data_copy(dst, src, body)
    for j in range(body, count):
        dst.set_value(j, src.get_value(j))


@asc.kernel
def store_tile(dst: asc.GlobalTensor, src: asc.LocalTensor, count: int,
               ALIGN: asc.ConstExpr[int]):
    """GM ← UB, ``count`` elements: the 32-byte body by DMA, the tail by the scalar unit."""
    body = count - count % ALIGN
    if body > 0:
        asc.data_copy(dst, src, body)
    for j in range(body, count):
        dst.set_value(j, src.get_value(j))


@asc.kernel
def block_range(total: int, share: int):
    """[start, end) of this block's elements."""
    start = min(asc.get_block_idx() * share, total)
    return start, min(start + share, total)


@asc.kernel
def gm(addr: asc.GlobalAddress):
    t = asc.GlobalTensor()
    t.set_global_buffer(addr)
    return t


# ----------------------------------------------------------------------------- add
ADD_UB_TILES = 6      # 2 inputs + 1 output, double buffered


@asc.kernel
def add_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, total: int,
               share: int, TILE: asc.ConstExpr[int]):
    """z = x + y."""
    start, end = block_range(total, share)
    xg = gm(x)
    yg = gm(y)
    zg = gm(z)
    ALIGN = 32 // x.dtype.sizeof()
    pipe = asc.TPipe()
    qx = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    qy = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    qz = asc.TQue(asc.TPosition.VECOUT, BUFFER_NUM)
    pipe.init_buffer(qx, BUFFER_NUM, TILE * x.dtype.sizeof())
    pipe.init_buffer(qy, BUFFER_NUM, TILE * x.dtype.sizeof())
    pipe.init_buffer(qz, BUFFER_NUM, TILE * x.dtype.sizeof())
    p = start
    while p < end:
        n = min(TILE, end - p)
        a = qx.alloc_tensor(x.dtype)
        load_tile(a, xg[p:], n, ALIGN)
        qx.enque(a)
        b = qy.alloc_tensor(x.dtype)
        load_tile(b, yg[p:], n, ALIGN)
        qy.enque(b)
        a = qx.deque(x.dtype)
        b = qy.deque(x.dtype)
        c = qz.alloc_tensor(x.dtype)
        asc.add(c, a, b, n)
        qx.free_tensor(a)
        qy.free_tensor(b)
        qz.enque(c)
        c = qz.deque(x.dtype)
        store_tile(zg[p:], c, n, ALIGN)
        qz.free_tensor(c)
        p += n


# ----------------------------------------------------------------------------- leaky_relu
LEAKY_RELU_UB_TILES = 4          # 1 input + 1 output, double buffered
LEAKY_RELU_BACKWARD_UB_TILES = 8  # 2 inputs + 1 output double buffered, 2 scratch tiles


@asc.kernel
def leaky_relu_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, total: int, share: int,
                      slope: float, TILE: asc.ConstExpr[int]):
    """y = x if x >= 0 else slope * x."""
    start, end = block_range(total, share)
    xg = gm(x)
    yg = gm(y)
    ALIGN = 32 // x.dtype.sizeof()
    pipe = asc.TPipe()
    q_in = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    q_out = asc.TQue(asc.TPosition.VECOUT, BUFFER_NUM)
    pipe.init_buffer(q_in, BUFFER_NUM, TILE * x.dtype.sizeof())
    pipe.init_buffer(q_out, BUFFER_NUM, TILE * x.dtype.sizeof())
    p = start
    while p < end:
        n = min(TILE, end - p)
        src = q_in.alloc_tensor(x.dtype)
        load_tile(src, xg[p:], n, ALIGN)
        q_in.enque(src)
        src = q_in.deque(x.dtype)
        dst = q_out.alloc_tensor(x.dtype)
        asc.leaky_relu(dst, src, slope, n)
        q_in.free_tensor(src)
        q_out.enque(dst)
        dst = q_out.deque(x.dtype)
        store_tile(yg[p:], dst, n, ALIGN)
        q_out.free_tensor(dst)
        p += n


@asc.kernel
def leaky_relu_backward_kernel(g: asc.GlobalAddress, x: asc.GlobalAddress, dx: asc.GlobalAddress,
                               total: int, share: int, slope: float, scale: float,
                               TILE: asc.ConstExpr[int]):
    """dx = g if x > 0 else slope * g (torch's leaky_relu_backward: the slope applies at 0).

    There is no compare/select op yet, so the step h = [x > 0] is built from the others:
    x * scale³ saturates every positive value (down to the smallest subnormal) to >= 1 and
    leaves 0 at 0; clamping to [0, 1] gives exactly 0 or 1. ``scale`` is 2**63 for float32 and
    2**12 for float16 (chosen by the launcher). Then dx = g*h + slope*g*(1-h), where one term
    is always an exact zero.
    """
    start, end = block_range(total, share)
    gg = gm(g)
    xg = gm(x)
    dg = gm(dx)
    ALIGN = 32 // x.dtype.sizeof()
    pipe = asc.TPipe()
    q_g = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    q_x = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    q_out = asc.TQue(asc.TPosition.VECOUT, BUFFER_NUM)
    calc = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(q_g, BUFFER_NUM, TILE * x.dtype.sizeof())
    pipe.init_buffer(q_x, BUFFER_NUM, TILE * x.dtype.sizeof())
    pipe.init_buffer(q_out, BUFFER_NUM, TILE * x.dtype.sizeof())
    pipe.init_buffer(calc, 2 * TILE * x.dtype.sizeof())
    h = calc.get(x.dtype)
    w = h[TILE:]
    p = start
    while p < end:
        n = min(TILE, end - p)
        gt = q_g.alloc_tensor(x.dtype)
        load_tile(gt, gg[p:], n, ALIGN)
        q_g.enque(gt)
        xt = q_x.alloc_tensor(x.dtype)
        load_tile(xt, xg[p:], n, ALIGN)
        q_x.enque(xt)
        gt = q_g.deque(x.dtype)
        xt = q_x.deque(x.dtype)
        out = q_out.alloc_tensor(x.dtype)
        asc.muls(h, xt, scale, n)
        asc.muls(h, h, scale, n)
        asc.muls(h, h, scale, n)
        asc.maxs(h, h, 0.0, n)
        asc.mins(h, h, 1.0, n)         # h = 1 where x > 0, else 0
        asc.muls(w, h, -1.0, n)
        asc.adds(w, w, 1.0, n)         # w = 1 - h
        asc.mul(w, w, gt, n)
        asc.muls(w, w, slope, n)       # w = slope * g where x <= 0, else 0
        asc.mul(out, gt, h, n)
        asc.add(out, out, w, n)
        q_g.free_tensor(gt)
        q_x.free_tensor(xt)
        q_out.enque(out)
        out = q_out.deque(x.dtype)
        store_tile(dg[p:], out, n, ALIGN)
        q_out.free_tensor(out)
        p += n


# ----------------------------------------------------------------------------- swiglu
SWIGLU_UB_TILES = 7             # 2 inputs + 1 output double buffered, 1 scratch tile
SWIGLU_BACKWARD_UB_TILES = 13   # 3 inputs + 2 outputs double buffered, 3 scratch tiles


@asc.kernel
def swiglu_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, out: asc.GlobalAddress,
                  total: int, share: int, TILE: asc.ConstExpr[int]):
    """out = silu(a) * b = a * b / (1 + exp(-a))."""
    start, end = block_range(total, share)
    ag = gm(a)
    bg = gm(b)
    og = gm(out)
    ALIGN = 32 // a.dtype.sizeof()
    pipe = asc.TPipe()
    qa = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    qb = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    qo = asc.TQue(asc.TPosition.VECOUT, BUFFER_NUM)
    calc = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(qa, BUFFER_NUM, TILE * a.dtype.sizeof())
    pipe.init_buffer(qb, BUFFER_NUM, TILE * a.dtype.sizeof())
    pipe.init_buffer(qo, BUFFER_NUM, TILE * a.dtype.sizeof())
    pipe.init_buffer(calc, TILE * a.dtype.sizeof())
    t = calc.get(a.dtype)
    p = start
    while p < end:
        n = min(TILE, end - p)
        at = qa.alloc_tensor(a.dtype)
        load_tile(at, ag[p:], n, ALIGN)
        qa.enque(at)
        bt = qb.alloc_tensor(a.dtype)
        load_tile(bt, bg[p:], n, ALIGN)
        qb.enque(bt)
        at = qa.deque(a.dtype)
        bt = qb.deque(a.dtype)
        ot = qo.alloc_tensor(a.dtype)
        asc.muls(t, at, -1.0, n)
        asc.exp(t, t, n)
        asc.adds(t, t, 1.0, n)         # t = 1 + exp(-a)
        asc.div(t, at, t, n)           # t = silu(a)
        asc.mul(ot, t, bt, n)
        qa.free_tensor(at)
        qb.free_tensor(bt)
        qo.enque(ot)
        ot = qo.deque(a.dtype)
        store_tile(og[p:], ot, n, ALIGN)
        qo.free_tensor(ot)
        p += n


@asc.kernel
def swiglu_backward_kernel(g: asc.GlobalAddress, a: asc.GlobalAddress, b: asc.GlobalAddress,
                           grad_a: asc.GlobalAddress, grad_b: asc.GlobalAddress, total: int,
                           share: int, TILE: asc.ConstExpr[int]):
    """With s = sigmoid(a): grad_b = g * a * s, grad_a = g * b * (s + a*s - a*s*s)."""
    start, end = block_range(total, share)
    gg = gm(g)
    ag = gm(a)
    bg = gm(b)
    gag = gm(grad_a)
    gbg = gm(grad_b)
    ALIGN = 32 // a.dtype.sizeof()
    pipe = asc.TPipe()
    qg = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    qa = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    qb = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    q_ga = asc.TQue(asc.TPosition.VECOUT, BUFFER_NUM)
    q_gb = asc.TQue(asc.TPosition.VECOUT, BUFFER_NUM)
    calc = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(qg, BUFFER_NUM, TILE * a.dtype.sizeof())
    pipe.init_buffer(qa, BUFFER_NUM, TILE * a.dtype.sizeof())
    pipe.init_buffer(qb, BUFFER_NUM, TILE * a.dtype.sizeof())
    pipe.init_buffer(q_ga, BUFFER_NUM, TILE * a.dtype.sizeof())
    pipe.init_buffer(q_gb, BUFFER_NUM, TILE * a.dtype.sizeof())
    pipe.init_buffer(calc, 3 * TILE * a.dtype.sizeof())
    one = calc.get(a.dtype)
    s = one[TILE:]
    sa = one[2 * TILE:]
    asc.duplicate(one, 1.0, TILE)
    p = start
    while p < end:
        n = min(TILE, end - p)
        gt = qg.alloc_tensor(a.dtype)
        load_tile(gt, gg[p:], n, ALIGN)
        qg.enque(gt)
        at = qa.alloc_tensor(a.dtype)
        load_tile(at, ag[p:], n, ALIGN)
        qa.enque(at)
        bt = qb.alloc_tensor(a.dtype)
        load_tile(bt, bg[p:], n, ALIGN)
        qb.enque(bt)
        gt = qg.deque(a.dtype)
        at = qa.deque(a.dtype)
        bt = qb.deque(a.dtype)
        ga = q_ga.alloc_tensor(a.dtype)
        gb = q_gb.alloc_tensor(a.dtype)
        asc.muls(s, at, -1.0, n)
        asc.exp(s, s, n)
        asc.adds(s, s, 1.0, n)
        asc.div(s, one, s, n)          # s = sigmoid(a)
        asc.mul(sa, at, s, n)          # sa = silu(a)
        asc.mul(gb, gt, sa, n)         # grad_b = g * silu(a)
        asc.mul(ga, sa, s, n)
        asc.sub(ga, sa, ga, n)
        asc.add(ga, ga, s, n)          # silu'(a) = s + a*s*(1 - s)
        asc.mul(sa, gt, bt, n)
        asc.mul(ga, ga, sa, n)         # grad_a = g * b * silu'(a)
        qg.free_tensor(gt)
        qa.free_tensor(at)
        qb.free_tensor(bt)
        q_ga.enque(ga)
        q_gb.enque(gb)
        ga = q_ga.deque(a.dtype)
        store_tile(gag[p:], ga, n, ALIGN)
        q_ga.free_tensor(ga)
        gb = q_gb.deque(a.dtype)
        store_tile(gbg[p:], gb, n, ALIGN)
        q_gb.free_tensor(gb)
        p += n


# ----------------------------------------------------------------------------- colour matrix
COLOR_UB_TILES = 13   # 3 planes in + 3 planes out double buffered, 1 scratch tile


@asc.kernel
def mix_channel(dst: asc.LocalTensor, rgb: asc.LocalTensor, tmp: asc.LocalTensor, c0: float,
                c1: float, c2: float, n: int, TILE: asc.ConstExpr[int]):
    """dst = c0 * R + c1 * G + c2 * B (the planes of ``rgb`` are TILE elements apart)."""
    asc.muls(dst, rgb, c0, n)
    asc.muls(tmp, rgb[TILE:], c1, n)
    asc.add(dst, dst, tmp, n)
    asc.muls(tmp, rgb[2 * TILE:], c2, n)
    asc.add(dst, dst, tmp, n)


@asc.kernel
def color_matrix_kernel(img: asc.GlobalAddress, out: asc.GlobalAddress, hw: int, total: int,
                        share: int, m00: float, m01: float, m02: float, m10: float, m11: float,
                        m12: float, m20: float, m21: float, m22: float,
                        TILE: asc.ConstExpr[int]):
    """out[:, i] = sum_j m[i][j] * img[:, j] over NCHW images with C = 3.

    Pixels are numbered image-major (p = n * hw + q, ``total`` = N * H * W); a block takes
    ``share`` of them and walks them in tiles that never cross an image. The sepia op launches
    it with the sepia matrix and its backward with the transposed matrix.
    """
    start, end = block_range(total, share)
    src = gm(img)
    dst = gm(out)
    ALIGN = 32 // img.dtype.sizeof()
    pipe = asc.TPipe()
    q_in = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    q_out = asc.TQue(asc.TPosition.VECOUT, BUFFER_NUM)
    calc = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(q_in, BUFFER_NUM, 3 * TILE * img.dtype.sizeof())
    pipe.init_buffer(q_out, BUFFER_NUM, 3 * TILE * img.dtype.sizeof())
    pipe.init_buffer(calc, TILE * img.dtype.sizeof())
    tmp = calc.get(img.dtype)
    p = start
    while p < end:
        q = p % hw
        base = (p - q) * 3 + q          # element offset of the R plane at this pixel
        n = min(TILE, end - p, hw - q)
        rgb = q_in.alloc_tensor(img.dtype)
        for c in asc.static_range(3):
            load_tile(rgb[c * TILE:], src[base + c * hw:], n, ALIGN)
        q_in.enque(rgb)
        rgb = q_in.deque(img.dtype)
        res = q_out.alloc_tensor(img.dtype)
        mix_channel(res, rgb, tmp, m00, m01, m02, n, TILE)
        mix_channel(res[TILE:], rgb, tmp, m10, m11, m12, n, TILE)
        mix_channel(res[2 * TILE:], rgb, tmp, m20, m21, m22, n, TILE)
        q_in.free_tensor(rgb)
        q_out.enque(res)
        res = q_out.deque(img.dtype)
        for c in asc.static_range(3):
            store_tile(dst[base + c * hw:], res[c * TILE:], n, ALIGN)
        q_out.free_tensor(res)
        p += n
