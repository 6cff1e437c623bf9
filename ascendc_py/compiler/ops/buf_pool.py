"""TBufPool's instructions (declarations; semantics in ``sema/buf_pool.py``).

A TBufPool is a region of one memory that queues and TBufs take their buffers from, so that
successive stages of a kernel can reuse memory: ``TPipe.init_buf_pool(pool, len)`` reserves the
region from the pipe, ``TBufPool.init_buf_pool(sub, len)`` carves a sub-pool out of a pool,
``share_buf=other`` lays the new pool over ``other``'s region instead, ``TBufPool.init_buffer``
gives a queue or TBuf its buffers from the pool, and ``TBufPool.reset()`` ends the pool's
pending work (a full barrier) so that another pool over the same memory can take it.
"""
from __future__ import annotations

from . import CostClass, Family, OpSpec, register

POOL_OPS = ("buf_pool_carve", "buf_pool_init_buffer")
#: ``VALUE_RANGE`` reason (ERR_A) of a pool used before it was given memory
POOL_UNSET = 10

for _name, _doc in (("buf_pool_carve", "init_buf_pool: a TBufPool's region, len bytes (rounded "
                                       "up to the memory's alignment) from the pipe, from a "
                                       "parent pool, or over a shared pool's region."),
                    ("buf_pool_init_buffer", "TBufPool.init_buffer: a queue's or TBuf's "
                                             "buffers from the pool's free part.")):
    register(OpSpec(_name, Family.QUEUE, None, CostClass.SCALAR, (), (), doc=_doc,
                    flops_per_elem=0))
