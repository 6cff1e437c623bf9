"""Kernels that call the asc.adv math functions (one compiled kernel per API, dtype, form)."""
from __future__ import annotations

import ascendc_py as asc

TILE = 4096      # elements a launch handles at most


def unary_kernel(api, with_tmp=True):
    """A kernel running asc.adv.<api> on n elements (count=cnt, temp_buffer of tmp_bytes)."""
    fn = getattr(asc.adv, api)

    @asc.kernel
    def k(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int, cnt: int, tmp_bytes: int):
        xg = asc.GlobalTensor()
        xg.set_global_buffer(x, n)
        zg = asc.GlobalTensor()
        zg.set_global_buffer(z, n)
        pipe = asc.TPipe()
        qx = asc.TQue(asc.TPosition.VECIN, 1)
        qz = asc.TQue(asc.TPosition.VECOUT, 1)
        tb = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(qx, 1, TILE * 4)
        pipe.init_buffer(qz, 1, TILE * 4)
        pipe.init_buffer(tb, tmp_bytes)
        a = qx.alloc_tensor(x.dtype)
        asc.data_copy(a, xg, n)
        qx.enque(a)
        a = qx.deque(x.dtype)
        c = qz.alloc_tensor(x.dtype)
        asc.duplicate(c, 0.0, n)
        if with_tmp:
            fn(c, a, cnt, tb.get(asc.uint8, tmp_bytes))   # the API call
        else:
            fn(c, a, cnt)                                    # the API call
        qz.enque(c)
        qx.free_tensor(a)
        c = qz.deque(x.dtype)
        asc.data_copy(zg, c, n)
        qz.free_tensor(c)
    return k
