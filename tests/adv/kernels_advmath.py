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


@asc.kernel
def _setup(pipe, qx, qy, qz, tb, tmp_bytes):
    pipe.init_buffer(qx, 1, TILE * 4)
    pipe.init_buffer(qy, 1, TILE * 4)
    pipe.init_buffer(qz, 1, TILE * 4)
    pipe.init_buffer(tb, tmp_bytes)


@asc.kernel
def exp_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int, cnt: int, tmp_bytes: int,
               level: asc.ConstExpr[int]):
    """asc.adv.exp(dst, src, cnt, level, temp_buffer)."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, n)
    pipe = asc.TPipe()
    qx = asc.TQue(asc.TPosition.VECIN, 1)
    qy = asc.TQue(asc.TPosition.VECIN, 1)
    qz = asc.TQue(asc.TPosition.VECOUT, 1)
    tb = asc.TBuf(asc.TPosition.VECCALC)
    _setup(pipe, qx, qy, qz, tb, tmp_bytes)
    a = qx.alloc_tensor(x.dtype)
    asc.data_copy(a, xg, n)
    qx.enque(a)
    a = qx.deque(x.dtype)
    c = qz.alloc_tensor(x.dtype)
    asc.duplicate(c, 0.0, n)
    asc.adv.exp(c, a, cnt, level, tb.get(asc.uint8, tmp_bytes))
    qz.enque(c)
    qx.free_tensor(a)
    c = qz.deque(x.dtype)
    asc.data_copy(zg, c, n)
    qz.free_tensor(c)


def binary_kernel(api, with_tmp=True):
    """asc.adv.power / asc.adv.xor (dst, src0, src1, cnt[, temp_buffer])."""
    fn = getattr(asc.adv, api)

    @asc.kernel
    def k(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, n: int, cnt: int,
          tmp_bytes: int):
        xg = asc.GlobalTensor()
        xg.set_global_buffer(x, n)
        yg = asc.GlobalTensor()
        yg.set_global_buffer(y, n)
        zg = asc.GlobalTensor()
        zg.set_global_buffer(z, n)
        pipe = asc.TPipe()
        qx = asc.TQue(asc.TPosition.VECIN, 1)
        qy = asc.TQue(asc.TPosition.VECIN, 1)
        qz = asc.TQue(asc.TPosition.VECOUT, 1)
        tb = asc.TBuf(asc.TPosition.VECCALC)
        _setup(pipe, qx, qy, qz, tb, tmp_bytes)
        a = qx.alloc_tensor(x.dtype)
        asc.data_copy(a, xg, n)
        qx.enque(a)
        b = qy.alloc_tensor(x.dtype)
        asc.data_copy(b, yg, n)
        qy.enque(b)
        a = qx.deque(x.dtype)
        b = qy.deque(x.dtype)
        c = qz.alloc_tensor(x.dtype)
        asc.duplicate(c, 0, n)
        if with_tmp:
            fn(c, a, b, cnt, tb.get(asc.uint8, tmp_bytes))   # the API call
        else:
            fn(c, a, b, cnt)                                    # the API call
        qz.enque(c)
        qx.free_tensor(a)
        qy.free_tensor(b)
        c = qz.deque(x.dtype)
        asc.data_copy(zg, c, n)
        qz.free_tensor(c)
    return k


@asc.kernel
def axpy_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int, cnt: int, tmp_bytes: int,
                scalar: asc.ConstExpr[float]):
    """z = z + x * scalar with asc.adv.axpy (z may be float32 with float16 x)."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, n)
    pipe = asc.TPipe()
    qx = asc.TQue(asc.TPosition.VECIN, 1)
    qy = asc.TQue(asc.TPosition.VECIN, 1)
    qz = asc.TQue(asc.TPosition.VECOUT, 1)
    tb = asc.TBuf(asc.TPosition.VECCALC)
    _setup(pipe, qx, qy, qz, tb, tmp_bytes)
    a = qx.alloc_tensor(x.dtype)
    asc.data_copy(a, xg, n)
    qx.enque(a)
    c = qy.alloc_tensor(z.dtype)
    asc.data_copy(c, zg, n)
    qy.enque(c)
    a = qx.deque(x.dtype)
    c = qy.deque(z.dtype)
    asc.adv.axpy(c, a, scalar, cnt, tb.get(asc.uint8, tmp_bytes))
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, c, n)
    qx.free_tensor(a)
    qy.free_tensor(c)
