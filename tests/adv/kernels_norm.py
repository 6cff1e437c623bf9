"""Kernels that call asc.adv.softmax (and the other norm/activation APIs) on one tile."""
from __future__ import annotations

import ascendc_py as asc

TILE = 8192      # bytes of each input/output buffer


def softmax_kernel(stat_dtype=None, with_tmp=True, with_ori=False):
    """dst, max, sum of asc.adv.softmax over x viewed as [tiling.src_m, tiling.src_k]
    (max/sum in stat_dtype, x's dtype when None; temp_buffer of tmp_bytes when with_tmp)."""

    @asc.kernel
    def k(x: asc.GlobalAddress, z: asc.GlobalAddress, mx: asc.GlobalAddress,
          sm: asc.GlobalAddress, tiling: asc.adv.SoftmaxTiling, ori_k: int, tmp_bytes: int):
        n = tiling.src_m * tiling.src_k
        st = x.dtype if stat_dtype is None else stat_dtype
        ns = tiling.src_m * (32 // st.sizeof())
        xg = asc.GlobalTensor()
        xg.set_global_buffer(x, n)
        zg = asc.GlobalTensor()
        zg.set_global_buffer(z, n)
        mg = asc.GlobalTensor()
        mg.set_global_buffer(mx, ns)
        sg = asc.GlobalTensor()
        sg.set_global_buffer(sm, ns)
        pipe = asc.TPipe()
        qx = asc.TQue(asc.TPosition.VECIN, 1)
        qz = asc.TQue(asc.TPosition.VECOUT, 1)
        qs = asc.TQue(asc.TPosition.VECOUT, 1)
        tb = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(qx, 1, TILE)
        pipe.init_buffer(qz, 1, TILE)
        pipe.init_buffer(qs, 1, 2048)
        pipe.init_buffer(tb, tmp_bytes)
        a = qx.alloc_tensor(x.dtype)
        asc.data_copy(a, xg, n)
        qx.enque(a)
        a = qx.deque(x.dtype)
        c = qz.alloc_tensor(x.dtype)
        s = qs.alloc_tensor(st)
        mxt = s[512 // st.sizeof():]
        if with_tmp and with_ori:
            asc.adv.softmax(c, s, mxt, a, tiling, tb.get(asc.uint8, tmp_bytes), ori_src_k=ori_k)
        elif with_tmp:
            asc.adv.softmax(c, s, mxt, a, tiling, tb.get(asc.uint8, tmp_bytes))
        else:
            asc.adv.softmax(c, s, mxt, a, tiling)
        qz.enque(c)
        qs.enque(s)
        qx.free_tensor(a)
        c = qz.deque(x.dtype)
        asc.data_copy(zg, c, n)
        qz.free_tensor(c)
        s = qs.deque(st)
        asc.data_copy(sg, s, ns)
        asc.data_copy(mg, s[512 // st.sizeof():], ns)
        qs.free_tensor(s)
    return k


def rmsnorm_kernel(with_tmp=True):
    """asc.adv.rmsnorm over x viewed as [b * s, h] with gamma [h] and epsilon eps."""

    @asc.kernel
    def k(x: asc.GlobalAddress, gm: asc.GlobalAddress, z: asc.GlobalAddress, eps: float,
          tiling: asc.adv.RmsNormTiling, tmp_bytes: int):
        n = tiling.b_length * tiling.s_length * tiling.h_length
        xg = asc.GlobalTensor()
        xg.set_global_buffer(x, n)
        gg = asc.GlobalTensor()
        gg.set_global_buffer(gm, tiling.h_length)
        zg = asc.GlobalTensor()
        zg.set_global_buffer(z, n)
        pipe = asc.TPipe()
        qx = asc.TQue(asc.TPosition.VECIN, 1)
        qg = asc.TQue(asc.TPosition.VECIN, 1)
        qz = asc.TQue(asc.TPosition.VECOUT, 1)
        tb = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(qx, 1, TILE)
        pipe.init_buffer(qg, 1, 2048)
        pipe.init_buffer(qz, 1, TILE)
        pipe.init_buffer(tb, tmp_bytes)
        a = qx.alloc_tensor(x.dtype)
        asc.data_copy(a, xg, n)
        qx.enque(a)
        g = qg.alloc_tensor(x.dtype)
        asc.data_copy(g, gg, tiling.h_length)
        qg.enque(g)
        a = qx.deque(x.dtype)
        g = qg.deque(x.dtype)
        c = qz.alloc_tensor(x.dtype)
        if with_tmp:
            asc.adv.rmsnorm(c, a, g, eps, tiling, tb.get(asc.uint8, tmp_bytes))
        else:
            asc.adv.rmsnorm(c, a, g, eps, tiling)
        qz.enque(c)
        qx.free_tensor(a)
        qg.free_tensor(g)
        c = qz.deque(x.dtype)
        asc.data_copy(zg, c, n)
        qz.free_tensor(c)
    return k


def layernorm_kernel(with_tmp=True):
    """asc.adv.layernorm over x viewed as [b * s, h]: output, mean and variance to GM."""

    @asc.kernel
    def k(x: asc.GlobalAddress, gm: asc.GlobalAddress, bt: asc.GlobalAddress,
          z: asc.GlobalAddress, mu: asc.GlobalAddress, var: asc.GlobalAddress, eps: float,
          tiling: asc.adv.LayerNormTiling, tmp_bytes: int):
        rows = tiling.b_length * tiling.s_length
        n = rows * tiling.h_length
        blk = 32 // x.dtype.sizeof()
        ra = (rows + blk - 1) // blk * blk       # mu, var: whole 32-byte blocks on the host
        xg = asc.GlobalTensor()
        xg.set_global_buffer(x, n)
        gg = asc.GlobalTensor()
        gg.set_global_buffer(gm, tiling.h_length)
        bg = asc.GlobalTensor()
        bg.set_global_buffer(bt, tiling.h_length)
        zg = asc.GlobalTensor()
        zg.set_global_buffer(z, n)
        mg = asc.GlobalTensor()
        mg.set_global_buffer(mu, ra)
        vg = asc.GlobalTensor()
        vg.set_global_buffer(var, ra)
        pipe = asc.TPipe()
        qx = asc.TQue(asc.TPosition.VECIN, 1)
        qg = asc.TQue(asc.TPosition.VECIN, 1)
        qz = asc.TQue(asc.TPosition.VECOUT, 1)
        qs = asc.TQue(asc.TPosition.VECOUT, 1)
        tb = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(qx, 1, TILE)
        pipe.init_buffer(qg, 1, 4096)
        pipe.init_buffer(qz, 1, TILE)
        pipe.init_buffer(qs, 1, 1024)
        pipe.init_buffer(tb, tmp_bytes)
        a = qx.alloc_tensor(x.dtype)
        asc.data_copy(a, xg, n)
        qx.enque(a)
        g = qg.alloc_tensor(x.dtype)
        asc.data_copy(g, gg, tiling.h_length)
        asc.data_copy(g[2048 // x.dtype.sizeof():], bg, tiling.h_length)
        qg.enque(g)
        a = qx.deque(x.dtype)
        g = qg.deque(x.dtype)
        c = qz.alloc_tensor(x.dtype)
        s = qs.alloc_tensor(x.dtype)
        sv = s[512 // x.dtype.sizeof():]
        if with_tmp:
            asc.adv.layernorm(c, s, sv, a, g, g[2048 // x.dtype.sizeof():], eps, tiling,
                              tb.get(asc.uint8, tmp_bytes))
        else:
            asc.adv.layernorm(c, s, sv, a, g, g[2048 // x.dtype.sizeof():], eps, tiling)
        qz.enque(c)
        qs.enque(s)
        qx.free_tensor(a)
        qg.free_tensor(g)
        c = qz.deque(x.dtype)
        asc.data_copy(zg, c, n)
        qz.free_tensor(c)
        s = qs.deque(x.dtype)
        asc.data_copy(mg, s, ra)
        asc.data_copy(vg, s[512 // x.dtype.sizeof():], ra)
        qs.free_tensor(s)
    return k


def activation_kernel(api, two_inputs=False, with_tmp=True):
    """asc.adv.<api> on cnt of n elements (temp_buffer of tmp_bytes; a second input y and the
    scalar beta for swiglu)."""
    fn = getattr(asc.adv, api)

    @asc.kernel
    def k(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, n: int, cnt: int,
          beta: float, tmp_bytes: int):
        xg = asc.GlobalTensor()
        xg.set_global_buffer(x, n)
        yg = asc.GlobalTensor()
        yg.set_global_buffer(y, n)
        zg = asc.GlobalTensor()
        zg.set_global_buffer(z, n)
        pipe = asc.TPipe()
        qx = asc.TQue(asc.TPosition.VECIN, 1)
        qz = asc.TQue(asc.TPosition.VECOUT, 1)
        tb = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(qx, 1, 2 * TILE)
        pipe.init_buffer(qz, 1, TILE)
        pipe.init_buffer(tb, tmp_bytes)
        a = qx.alloc_tensor(x.dtype)
        asc.data_copy(a, xg, n)
        b = a[TILE // x.dtype.sizeof():]
        asc.data_copy(b, yg, n)
        qx.enque(a)
        a = qx.deque(x.dtype)
        b = a[TILE // x.dtype.sizeof():]
        c = qz.alloc_tensor(x.dtype)
        asc.duplicate(c, 0.0, n)
        if api == "swiglu":
            if with_tmp:
                fn(c, a, b, beta, cnt, tb.get(asc.uint8, tmp_bytes))
            else:
                fn(c, a, b, beta, cnt)
        elif two_inputs:
            if with_tmp:
                fn(c, a, b, cnt, tb.get(asc.uint8, tmp_bytes))
            else:
                fn(c, a, b, cnt)
        elif with_tmp:
            fn(c, a, cnt, tb.get(asc.uint8, tmp_bytes))
        else:
            fn(c, a, cnt)
        qz.enque(c)
        qx.free_tensor(a)
        c = qz.deque(x.dtype)
        asc.data_copy(zg, c, n)
        qz.free_tensor(c)
    return k
