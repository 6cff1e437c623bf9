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
