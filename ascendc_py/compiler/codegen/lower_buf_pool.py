"""Codegen of TBufPool (``sema/buf_pool.py``): ``buf_pool_carve`` and
``buf_pool_init_buffer`` are calls of runtime functions (``asc_rt_pool_carve``,
``asc_rt_pool_init_buffer``); reset is a ``pipe_barrier(PIPE_ALL)`` emitted by sema."""
from __future__ import annotations

from ...simulator import abi
from .. import ir
from ..ops.buf_pool import POOL_UNSET
from .core import Codegen, FnBuilder, lowering
from .intrinsics import call_checked
from .rtfuncs import mem_alignment, place_queue, rt
from .runtime_lib import declare_rt
from .types import I32

E = abi.ErrorCode


def _unset(fb: FnBuilder, value, site) -> None:
    fb.fail_with(fb.b.icmp_signed("<", value, fb.i64(0)), E.VALUE_RANGE, site,
                 fb.i64(POOL_UNSET), value, fb.i64(0))


@rt("mem", "mode", "length", "src_base", "src_end", "src_cur")
def pool_carve(fb: FnBuilder, mem, mode, length, src_base, src_end, src_cur, site):
    """A pool's region: from the pipe (mode 0), from a parent pool's free part (1), or over a
    shared pool's region (2). RES0/RES1: its start and end; RES2: the parent's new cursor."""
    b = fb.b
    fb.fail_with(b.icmp_signed("<", length, fb.i64(0)), E.NEGATIVE_COUNT, site, length)
    align = mem_alignment(fb, mem)
    size = b.and_(b.add(length, b.sub(align, fb.i64(1))), b.sub(fb.i64(0), align))
    ptr_slot = b.add(fb.i64(abi.ALLOC_PTR), mem)
    from_pipe = b.icmp_signed("==", mode, fb.i64(0))
    with b.if_then(b.icmp_signed("!=", mode, fb.i64(0))):
        _unset(fb, b.select(b.icmp_signed("==", mode, fb.i64(1)), src_cur, src_base), site)
    start = b.select(from_pipe, fb.ld(ptr_slot),
                     b.select(b.icmp_signed("==", mode, fb.i64(1)), src_cur, src_base))
    start = b.and_(b.add(start, b.sub(align, fb.i64(1))), b.sub(fb.i64(0), align))
    limit = b.select(from_pipe, fb.ld(b.add(fb.i64(abi.MEM_SIZE), mem)), src_end)
    end = b.add(start, size)
    fb.fail_with(b.icmp_signed(">", end, limit), E.CAPACITY, site, size, b.sub(limit, start),
                 b.select(from_pipe, limit, b.sub(src_end, src_base)))
    with b.if_then(from_pipe):
        fb.st(ptr_slot, end)
    fb.st(abi.RES0, start)
    fb.st(abi.RES1, end)
    fb.st(abi.RES2, b.select(b.icmp_signed("==", mode, fb.i64(1)), end, fb.i64(-1)))


@rt("qbase", "mem", "num", "length", "cur", "end")
def pool_init_buffer(fb: FnBuilder, qbase, mem, num, length, cur, end, site):
    """A queue's buffers from a pool's free part [cur, end); RES0: the pool's new cursor."""
    _unset(fb, cur, site)
    fb.st(abi.RES0, place_queue(fb, qbase, mem, num, length, cur, end, site))


def _results(cg: Codegen, s: ir.Intrinsic) -> None:
    for k, var in enumerate(s.results):
        cg.b.store(cg.b.trunc(cg.ld(abi.RES0 + k), I32), cg.var(var))


@lowering("buf_pool_carve")
def lower_carve(cg: Codegen, s: ir.Intrinsic) -> None:
    args = [cg.i64(int(s.attr("memory"))), cg.i64(s.attr("mode"))] + [
        cg._as_i64(cg.expr(a)) for a in s.args]
    call_checked(cg, declare_rt(cg.module, "pool_carve"), args, "init_buf_pool",
                 (None, int(s.attr("memory"))))
    _results(cg, s)
    cg.scalar_cost(4)


@lowering("buf_pool_init_buffer")
def lower_pool_init_buffer(cg: Codegen, s: ir.Intrinsic) -> None:
    num, length, cur, end = (cg._as_i64(cg.expr(a)) for a in s.args)
    qbase = cg.i64(abi.queue_slot(cg.nq, s.attr("queue"), 0))
    call_checked(cg, declare_rt(cg.module, "pool_init_buffer"),
                 [qbase, cg.i64(int(s.attr("memory"))), num, length, cur, end],
                 "init_buffer", (s.attr("queue"), int(s.attr("memory"))))
    _results(cg, s)
    cg.scalar_cost(4)
