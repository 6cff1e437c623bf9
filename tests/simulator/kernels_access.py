"""Kernels of the GM access tests: which arguments a kernel writes (read-only arguments, torch
version counters) and what local memory holds before a kernel writes it."""
from __future__ import annotations

import ascendc_py as asc

N = 256


@asc.kernel
def copy_out(x: asc.GlobalAddress, y: asc.GlobalAddress):
    """y = x through UB (data_copy in both directions); each block copies its N elements."""
    off = asc.get_block_idx() * N
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x + off, N)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y + off, N)
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 1)
    pipe.init_buffer(q, 1, N * 4)
    t = q.alloc_tensor(x.dtype)
    asc.data_copy(t, xg, N)
    q.enque(t)
    t = q.deque(x.dtype)
    asc.data_copy(yg, t, N)  # the write
    q.free_tensor(t)


@asc.kernel
def set_out(x: asc.GlobalAddress, y: asc.GlobalAddress):
    """y[0] = x[0] with the scalar unit."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 1)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y, 1)
    yg.set_value(0, xg.get_value(0))  # the write


@asc.kernel
def pad_out(x: asc.GlobalAddress, y: asc.GlobalAddress):
    """y[:10] = x[:10] with data_copy_pad (UB -> GM writes exactly 40 bytes)."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, N)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y, N)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, N * 4)
    t = buf.get(asc.float32)
    asc.data_copy(t, xg, N)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy_pad(yg, t, asc.DataCopyExtParams(1, 40, 0, 0, 0))  # the write


@asc.kernel
def pick_out(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, which: int):
    """Copy x to y (which == 0) or to z (otherwise): the written argument is chosen at run
    time, then element 3 is set through the same GlobalTensor."""
    off = asc.get_block_idx() * N
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x + off, N)
    dst = asc.GlobalTensor()
    if which == 0:
        dst.set_global_buffer(y + off, N)
    else:
        dst.set_global_buffer(z + off, N)
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 1)
    pipe.init_buffer(q, 1, N * 4)
    t = q.alloc_tensor(x.dtype)
    asc.data_copy(t, xg, N)
    q.enque(t)
    t = q.deque(x.dtype)
    asc.data_copy(dst, t, N)  # the chosen write
    q.free_tensor(t)
    dst.set_value(3, xg.get_value(0))


@asc.kernel
def write_then_fault(x: asc.GlobalAddress, y: asc.GlobalAddress):
    """y[0] = x[0], then a read one past the end of x: the launch faults after writing y."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, N)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y, N)
    yg.set_value(0, xg.get_value(0))
    v = xg.get_value(N)


@asc.kernel
def fixpipe_out(z: asc.GlobalAddress):
    """z = L0C (16 x 16 float32, never written: what a fresh L0C holds) through fixpipe."""
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 256)
    pipe = asc.TPipe()
    tc = asc.TBuf(asc.TPosition.CO1)
    pipe.init_buffer(tc, 256 * 4)
    l0c = tc.get(asc.float32)
    asc.fixpipe(zg, l0c, asc.FixpipeParamsV220(16, 16, 16, 16))  # the write


# ----------------------------------------------------------------------------- fresh memory
@asc.kernel
def ub_store(y: asc.GlobalAddress, v: int):
    """Fill a UB tensor with ``v`` and copy it out (leaves ``v`` in UB)."""
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y + asc.get_block_idx() * N, N)
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(q, 1, N * 4)
    t = q.alloc_tensor(asc.int32)
    asc.duplicate(t, v, N)
    q.enque(t)
    t = q.deque(asc.int32)
    asc.data_copy(yg, t, N)
    q.free_tensor(t)


@asc.kernel
def ub_peek(y: asc.GlobalAddress, v: int):
    """The same buffers as ub_store, but copies the UB tensor out without writing it."""
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y + asc.get_block_idx() * N, N)
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(q, 1, N * 4)
    t = q.alloc_tensor(asc.int32)
    q.enque(t)
    t = q.deque(asc.int32)
    asc.data_copy(yg, t, N)
    q.free_tensor(t)


@asc.kernel
def ub_store_then_peek(y: asc.GlobalAddress):
    """Even blocks leave 7 in UB; odd blocks copy out UB they never wrote."""
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y + asc.get_block_idx() * N, N)
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(q, 1, N * 4)
    t = q.alloc_tensor(asc.int32)
    if asc.get_block_idx() % 2 == 0:
        asc.duplicate(t, 7, N)
    q.enque(t)
    t = q.deque(asc.int32)
    asc.data_copy(yg, t, N)
    q.free_tensor(t)
