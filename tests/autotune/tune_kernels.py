"""Kernels the autotune and sweep tests launch (module level: sweep workers import them)."""
import numpy as np

import ascendc_py as asc


@asc.kernel
def scaled_add(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, n: int,
               TILE: asc.ConstExpr[int], BUFS: asc.ConstExpr[int], SCALE: asc.ConstExpr[int] = 1):
    """z = SCALE * (x + y) over n elements per block, in tiles of TILE with BUFS buffers."""
    asc.static_assert(TILE % 64 == 0, "TILE must be a multiple of 64")
    start = asc.get_block_idx() * n
    xg = asc.GlobalTensor(); xg.set_global_buffer(x + start, n)
    yg = asc.GlobalTensor(); yg.set_global_buffer(y + start, n)
    zg = asc.GlobalTensor(); zg.set_global_buffer(z + start, n)
    pipe = asc.TPipe()
    qx = asc.TQue(asc.TPosition.VECIN, BUFS)
    qy = asc.TQue(asc.TPosition.VECIN, BUFS)
    qz = asc.TQue(asc.TPosition.VECOUT, BUFS)
    pipe.init_buffer(qx, BUFS, TILE * x.dtype.sizeof())
    pipe.init_buffer(qy, BUFS, TILE * y.dtype.sizeof())
    pipe.init_buffer(qz, BUFS, TILE * z.dtype.sizeof())
    for i in range(n // TILE):
        a = qx.alloc_tensor(x.dtype); asc.data_copy(a, xg[i * TILE:], TILE); qx.enque(a)
        b = qy.alloc_tensor(x.dtype); asc.data_copy(b, yg[i * TILE:], TILE); qy.enque(b)
        a = qx.deque(x.dtype); b = qy.deque(x.dtype); c = qz.alloc_tensor(x.dtype)
        asc.add(c, a, b, TILE)
        if SCALE != 1:
            asc.muls(c, c, SCALE * 1.0, TILE)
        qz.enque(c); qx.free_tensor(a); qy.free_tensor(b)
        c = qz.deque(x.dtype); asc.data_copy(zg[i * TILE:], c, TILE); qz.free_tensor(c)


def make_args(n):
    """Launch arguments for 8 blocks of n elements each (sweep's args function)."""
    rng = np.random.default_rng(n)
    x = rng.random(8 * n, dtype=np.float32)
    y = rng.random(8 * n, dtype=np.float32)
    return x, y, np.zeros_like(x), n
