"""Kernels that call asc.adv.quant, concat and extract on one tile."""
from __future__ import annotations

import ascendc_py as asc

TILE = 8192      # bytes of the input buffer


def quant_kernel(mode="tmp", config=None):
    """asc.adv.quant of cnt of n elements of x into z (int8): mode "tmp" passes a temp_buffer
    of tmp_bytes, "framework" none, "nocount" no count (config's calc_count)."""
    cc = (0, 0, 0, 0) if config is None else config

    @asc.kernel
    def k(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int, cnt: int, scale: float,
          offset: float, tmp_bytes: int):
        xg = asc.GlobalTensor()
        xg.set_global_buffer(x, n)
        zg = asc.GlobalTensor()
        zg.set_global_buffer(z, n)
        pipe = asc.TPipe()
        qx = asc.TQue(asc.TPosition.VECIN, 1)
        qz = asc.TQue(asc.TPosition.VECOUT, 1)
        tb = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(qx, 1, TILE)
        pipe.init_buffer(qz, 1, TILE // 2)
        pipe.init_buffer(tb, tmp_bytes)
        a = qx.alloc_tensor(x.dtype)
        asc.data_copy(a, xg, n)
        qx.enque(a)
        a = qx.deque(x.dtype)
        c = qz.alloc_tensor(asc.int8)
        asc.duplicate(c.reinterpret_cast(asc.int16), 0, n // 2)
        if mode == "tmp":
            if config is None:
                asc.adv.quant(c, a, scale, offset, cnt, tb.get(asc.uint8, tmp_bytes))
            else:
                asc.adv.quant(c, a, scale, offset, cnt, tb.get(asc.uint8, tmp_bytes),
                              config=asc.adv.QuantConfig(cc[0], cc[1], cc[2], cc[3]))
        elif mode == "framework":
            asc.adv.quant(c, a, scale, offset, cnt)
        else:
            asc.adv.quant(c, a, scale, offset, temp_buffer=tb.get(asc.uint8, tmp_bytes),
                          config=asc.adv.QuantConfig(cc[0], cc[1], cc[2], cc[3]))
        qz.enque(c)
        qx.free_tensor(a)
        c = qz.deque(asc.int8)
        asc.data_copy(zg, c, n)
        qz.free_tensor(c)
    return k


@asc.kernel
def sort_pipeline_kernel(x: asc.GlobalAddress, idx: asc.GlobalAddress, zv: asc.GlobalAddress,
                         zi: asc.GlobalAddress, n: asc.ConstExpr[int], rep: int,
                         full: asc.ConstExpr[bool]):
    """asc.adv.concat of n scores, asc.sort (rep repeats of 32), asc.adv.extract of the sorted
    structures into zv (values) and zi (indices)."""
    xg = asc.GlobalTensor()
    ig = asc.GlobalTensor()
    vg = asc.GlobalTensor()
    jg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    ig.set_global_buffer(idx, n)
    vg.set_global_buffer(zv, n)
    jg.set_global_buffer(zi, n)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    b = asc.LocalTensor(asc.uint32, asc.TPosition.VECIN, 16384, n)
    c = asc.LocalTensor(x.dtype, asc.TPosition.VECCALC, 32768, n)
    s = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 49152, 2 * n)
    t = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 65536, 2 * n)
    v = asc.LocalTensor(x.dtype, asc.TPosition.VECOUT, 98304, n)
    j = asc.LocalTensor(asc.uint32, asc.TPosition.VECOUT, 114688, n)
    asc.data_copy(a, xg, n)
    asc.data_copy(b, ig, n)
    asc.data_copy(v, vg, n)
    asc.data_copy(j, jg, n)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.adv.concat(c, a, t.reinterpret_cast(x.dtype), 2 * rep)
    asc.sort(s.reinterpret_cast(x.dtype), c, b, t.reinterpret_cast(x.dtype), rep, full)
    asc.adv.extract(v, j, s.reinterpret_cast(x.dtype), rep)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(vg, v, n)
    asc.data_copy(jg, j, n)


@asc.kernel
def concat_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, n: asc.ConstExpr[int],
                  rep: int):
    """z[:16 rep] = asc.adv.concat of x (the rest of z kept)."""
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    zg.set_global_buffer(z, n)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    c = asc.LocalTensor(x.dtype, asc.TPosition.VECOUT, 32768, n)
    asc.data_copy(a, xg, n)
    asc.data_copy(c, zg, n)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.adv.concat(c, a, a, rep)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, c, n)
