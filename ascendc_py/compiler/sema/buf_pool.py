"""Semantic analysis of TBufPool (pyasc ``asc.TBufPool``, Ascend C TBufPool).

``TBufPool(pos, buf_id_size=4)`` is a region of ``pos``'s memory that queues and TBufs take
their buffers from, so that the stages of a kernel can reuse memory. Its state is three
run-time scalars of the kernel (region start, end and the first free byte; -1 until the pool
is given memory):

* ``TPipe.init_buf_pool(pool, len[, share_buf])``: ``len`` bytes (rounded up to the memory's
  alignment) from the pipe, as ``init_buffer`` reserves them; ``TBufPool.init_buf_pool(sub,
  len[, share_buf])``: from this pool's free part (a sub-pool); with ``share_buf=other`` the
  new pool lies over ``other``'s region (its first ``len`` bytes) instead, as Ascend C's shared
  pools do. More than the pipe or pool has is a BufferCapacityError at the line.
* ``TBufPool.init_buffer(que, num, len)`` / ``init_buffer(buf, len)``: the queue's (TBuf's)
  buffers from the pool's free part (errors as ``TPipe.init_buffer``'s).
* ``TBufPool.reset()``: "ends the pool's pending events" (the docs): every pipe's work issued
  before it completes before any later instruction starts, modelled as ``pipe_barrier(PIPE_ALL)``
  (the timing model and sanitize mode see that barrier: the next stage's accesses to the
  reused memory are ordered after the last stage's). The pool's queues keep their buffers, as
  the docs say ("they still exist, their contents may be overwritten"): a queue of a pool that
  shares the memory overwrites them, which is the point of sharing.

Using a pool before it was given memory stops the kernel at the line. ``buf_id_size`` (the
number of buffer ids of Ascend C's pool) must be 1..16 and limits nothing else here.
"""
from __future__ import annotations


from ...dsl.types import Memory, PipeID, TPosition, int32
from .. import ir
from ..errors import ConstantRangeError, KernelTypeError, OperandKindError
from .builtins import bind_args, function, method, want_const_int, want_enum, want_int
from .objects import _queue_attrs
from .values import FieldwiseRepr, identity_value, ConstV, NoneV, PipeV, QueueV, SVal

MAX_BUF_IDS = 16


@identity_value
class PoolV(SVal, FieldwiseRepr):
    position: TPosition
    base: ir.Var
    end: ir.Var
    cur: ir.Var
    name: str

    @property
    def memory(self) -> Memory:
        return self.position.memory

    def describe(self) -> str:
        return f"TBufPool({self.position.name})"


@function("TBufPool")
def _tbuf_pool(an, args, kwargs, loc):
    b = bind_args("asc.TBufPool()", ("pos", "buf_id_size"), args, kwargs, loc,
                  {"pos": None, "buf_id_size": ConstV(4, int32)})
    if b["pos"] is None:
        raise KernelTypeError("asc.TBufPool() needs pos (the TPosition whose memory it "
                              "manages)", loc)
    pos = want_enum(b["pos"], TPosition, "pos", loc)
    if pos.memory == Memory.GM:
        raise ConstantRangeError("a TBufPool manages local memory, not GM", loc)
    ids = want_const_int(b["buf_id_size"], "buf_id_size", loc)
    if not 1 <= ids <= MAX_BUF_IDS:
        raise ConstantRangeError(f"TBufPool buf_id_size must be 1..{MAX_BUF_IDS}, got {ids}",
                                 loc)
    n = an.new_label("pool")
    pool = PoolV(pos, *(ir.Var(f"pool{n}.{f}", int32) for f in ("base", "end", "cur")),
                 name=f"TBufPool@{loc.line}")
    for var in (pool.base, pool.end, pool.cur):
        an.emit(ir.Assign(var, ir.Const(-1, int32), loc))
    return pool


def _want_pool(v, what, loc) -> PoolV:
    if not isinstance(v, PoolV):
        raise OperandKindError(f"{what} must be an asc.TBufPool, got {v.describe()}", loc)
    return v


def _carve(an, parent: PoolV | None, args, kwargs, loc):
    b = bind_args("init_buf_pool()", ("buf_pool", "len", "share_buf"), args, kwargs, loc,
                  {"len": ConstV(0, int32), "share_buf": NoneV()})
    pool = _want_pool(b["buf_pool"], "init_buf_pool buf_pool", loc)
    share = None if isinstance(b["share_buf"], NoneV) else _want_pool(
        b["share_buf"], "init_buf_pool share_buf", loc)
    for other in (parent, share):
        if other is not None and other.memory != pool.memory:
            raise KernelTypeError(f"init_buf_pool: {pool.describe()} is in {pool.memory.name} "
                                  f"but {other.describe()} is in {other.memory.name}", loc)
    length = want_int(b["len"], "len", loc)
    minus = ir.Const(-1, int32)
    mode = 2 if share is not None else 1 if parent is not None else 0
    src = share if share is not None else parent
    operands = (length, ir.Load(src.base) if src else minus, ir.Load(src.end) if src else minus,
                ir.Load(src.cur) if src else minus)
    results = (pool.base, pool.end, ir.Var("pool.parent_cur", int32))
    an.emit(ir.Intrinsic("buf_pool_carve", operands, results, loc,
                         (("memory", pool.memory), ("mode", mode))))
    an.emit(ir.Assign(pool.cur, ir.Load(pool.base), loc))
    if mode == 1:
        an.emit(ir.Assign(parent.cur, ir.Load(results[2]), loc))
    return NoneV()


@method(PipeV, "init_buf_pool")
def _pipe_init_buf_pool(an, pipe, name, args, kwargs, loc):
    return _carve(an, None, args, kwargs, loc)


@method(PoolV, "init_buf_pool")
def _pool_init_buf_pool(an, pool: PoolV, name, args, kwargs, loc):
    return _carve(an, pool, args, kwargs, loc)


@method(PoolV, "init_buffer")
def _pool_init_buffer(an, pool: PoolV, name, args, kwargs, loc):
    first = args[0] if args else kwargs.get("que", kwargs.get("buf"))
    if isinstance(first, QueueV) and first.is_tbuf:
        kw = dict(kwargs)
        if "num" in kw and "len" not in kw:
            kw["len"] = kw.pop("num")
        b = bind_args("init_buffer(buf, len)", ("buf", "len"), args, kw, loc)
        q, num = b["buf"], ir.Const(1, int32)
    else:
        b = bind_args("init_buffer(que, num, len)", ("que", "num", "len"), args, kwargs, loc)
        q = b["que"]
        if not isinstance(q, QueueV):
            raise OperandKindError(f"init_buffer needs a TQue or TBuf, got {q.describe()}", loc)
        num = want_int(b["num"], "num", loc)
    if q.position.memory != pool.memory:
        raise KernelTypeError(f"TBufPool.init_buffer: {q.describe()} is in "
                              f"{q.position.memory.name} but the pool is in "
                              f"{pool.memory.name}", loc)
    length = want_int(b["len"], "len", loc)
    new_cur = ir.Var("pool.cur", int32)
    an.emit(ir.Intrinsic("buf_pool_init_buffer", (num, length, ir.Load(pool.cur),
                                                  ir.Load(pool.end)), (new_cur,), loc,
                         _queue_attrs(q)))
    an.emit(ir.Assign(pool.cur, ir.Load(new_cur), loc))
    return NoneV()


@method(PoolV, "reset")
def _pool_reset(an, pool: PoolV, name, args, kwargs, loc):
    """Ascend C Reset: end the pool's pending events, so another pool over the same memory
    can take it; the pool's buffers stay allocated (their contents may be overwritten)."""
    bind_args("reset()", (), args, kwargs, loc)
    an.emit(ir.Intrinsic("pipe_barrier", (int(PipeID.PIPE_ALL),), (), loc))
    return NoneV()
