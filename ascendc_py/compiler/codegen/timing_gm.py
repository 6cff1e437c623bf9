"""A core's GM port and its record of GM demand, kept natively by every GM transfer.

Two things happen when a DMA moves bytes between GM and a core (``timing.dma`` calls
``gm_transfer`` once per transfer):

* **The GM port.** Within one core, GM reads (MTE2) and GM writes (MTE3, FIX) use the core's
  one bus to L2/HBM, so they share it: a GM transfer's data phase starts at its start + latency
  (the latency holds no bandwidth) and takes ``transfer`` cycles alone; while it overlaps the
  data phase of the latest transfer of the other direction (``ctx[GM_PORT]``: the data phases
  of the latest read and of the latest write) the two share the bus half and half, so the new
  transfer is longer by the overlap. A core that reads and writes at once thus moves about one
  path width in all, not a read width plus a write width; transfers in one direction (one pipe,
  in order) never overlap anyway. Why not a single "port free" time that every GM transfer
  advances: transfers are issued in program order, not in time order, so the copy-in of tile
  i+1 (issued after the copy-out of tile i, but starting earlier) would wait for the whole
  copy-out, and double buffering would lose its overlap. Approximations: the transfer issued
  earlier keeps its schedule (it is not lengthened by the later one's share), and two writing
  pipes of a cube core (MTE3, FIX) do not share with each other.
* **The demand record.** The data phase's bytes are spread evenly over the windows of the
  block's own simulated time it covers (``abi`` GM demand record: GM bytes read and written, the
  port's busy cycles, and read bytes L2 serves (Matmul's re-reads) per window; a bounded number
  of windows whose width doubles, merging pairs, when the block's time outgrows them), and the
  bytes a DMA reads are added to the GM argument that its source check named
  (``ctx[GM_READ_ARG]``, set by ``check_gm``). After the launch ``simulator/contention.py``
  replays these windows of all cores against the chip's HBM and L2 bandwidth; nothing here knows
  about other cores, so blocks stay independent and deterministic.

Only the single-core cost (latency, transfer cycles) comes from the caller; this module adds no
cost of its own besides the wait for the port. Callers: every DMA (``timing.dma``) and the
Matmul API's MTE2 chunks and FIX writes (``timing_matmul.py``).
"""
from __future__ import annotations

from llvmlite import ir as L

from ...simulator import abi
from .core import counted_loop
from .types import F64, I64, PTR

#: the path-table field ``PATH_FIELDS - 1``: 0 no GM, 1 the path reads GM, 2 it writes GM
GM_NONE, GM_READS, GM_WRITES = 0, 1, 2


def gm_transfer(tb, gm_kind, start, latency, transfer, nbytes, l2_bytes=None,
                per_arg: bool = True):
    """Occupancy of a transfer issued at ``start`` (i64 values): ``latency + transfer`` when the
    path does not touch GM (``gm_kind`` 0); otherwise the port is shared (module docstring) and
    the data phase recorded.

    The Matmul API's analytic timing (``timing_matmul.py``) passes two more: ``l2_bytes``, the
    part of a read's ``nbytes`` that L2 serves (it models its own re-reads): recorded as L2
    traffic, which HBM never sees; and ``per_arg=False``: its reads are not counted against a
    GM argument, so the contention pass does not take them for re-reads a second time."""
    b = tb.b
    plain = b.add(latency, transfer)
    reads = b.icmp_signed("==", gm_kind, tb.i64(GM_READS))
    moves = b.and_(b.icmp_signed("!=", gm_kind, tb.i64(GM_NONE)),
                   b.icmp_signed(">", nbytes, tb.i64(0)))
    result = tb.alloca_builder.alloca(I64, name="gm_occ")
    b.store(plain, result)
    with b.if_then(moves):
        mine = b.select(reads, tb.i64(abi.GM_PORT), tb.i64(abi.GM_PORT + 2))
        other = b.select(reads, tb.i64(abi.GM_PORT + 2), tb.i64(abi.GM_PORT))
        lo, hi = tb.ld(other), tb.ld(b.add(other, tb.i64(1)))
        data = b.add(start, latency)
        alone = b.add(data, transfer)
        overlap = b.sub(b.select(b.icmp_signed("<", alone, hi), alone, hi), tb.max(data, lo))
        end = b.add(alone, tb.max(overlap, tb.i64(0)))
        tb.st(mine, data)
        tb.st(b.add(mine, tb.i64(1)), end)
        b.store(b.sub(end, start), result)
        record = tb.ld(abi.GM_DEMAND)
        with b.if_then(b.icmp_signed("!=", record, tb.i64(0))):
            _record(tb, b.inttoptr(record, PTR), gm_kind, data, end, transfer, nbytes,
                    l2_bytes, per_arg)
    return b.load(result, typ=I64)


def _slot(tb, record, index):
    return tb.b.gep(record, [index if isinstance(index, L.Value) else tb.i64(index)],
                    source_etype=F64)


def _add(tb, record, index, value) -> None:
    p = _slot(tb, record, index)
    tb.b.store(tb.b.fadd(tb.b.load(p, typ=F64), value), p)


def _record(tb, record, gm_kind, data, end, transfer, nbytes, l2_bytes, per_arg: bool) -> None:
    """Spread ``nbytes`` (of which ``l2_bytes`` L2 serves, when not None) and ``transfer``
    port cycles over the windows [data, end) covers; widen the windows first if ``end`` lies
    past the last one; count a read against its GM argument (when ``per_arg``). Window widths
    are powers of two (``ctx[GM_DEMAND_SHIFT]``): no division on the common path, a transfer
    inside one window."""
    b, func = tb.b, tb.func
    n = abi.DEMAND_WINDOWS
    # widen: while end > n * width, merge pairs of windows and double the width
    head = func.append_basic_block("gm_widen")
    body = func.append_basic_block("gm_widen_body")
    done = func.append_basic_block("gm_widen_done")
    b.branch(head)
    b.position_at_end(head)
    shift = tb.ld(abi.GM_DEMAND_SHIFT)
    b.cbranch(b.icmp_signed(">", end, b.shl(tb.i64(n), shift)), body, done)
    b.position_at_end(body)
    for base in (abi.DEMAND_READ, abi.DEMAND_WRITE, abi.DEMAND_BUSY, abi.DEMAND_L2):
        def merge(j, base=base):
            lo = b.add(tb.i64(base), b.mul(j, tb.i64(2)))
            pair = b.fadd(b.load(_slot(tb, record, lo), typ=F64),
                          b.load(_slot(tb, record, b.add(lo, tb.i64(1))), typ=F64))
            b.store(pair, _slot(tb, record, b.add(tb.i64(base), j)))
        counted_loop(b, func, tb.i64(n // 2), merge)

        def clear(j, base=base):
            b.store(L.Constant(F64, 0.0), _slot(tb, record, b.add(tb.i64(base + n // 2), j)))
        counted_loop(b, func, tb.i64(n // 2), clear)
    wider = b.add(shift, tb.i64(1))
    tb.st(abi.GM_DEMAND_SHIFT, wider)
    b.store(tb.f(b.shl(tb.i64(1), wider)), _slot(tb, record, abi.DEMAND_WIDTH))
    b.branch(head)
    b.position_at_end(done)
    base = b.select(b.icmp_signed("==", gm_kind, tb.i64(GM_READS)), tb.i64(abi.DEMAND_READ),
                    tb.i64(abi.DEMAND_WRITE))
    # (record base, bytes): the HBM-bound bytes, then those L2 serves
    parts = [(base, nbytes)] if l2_bytes is None else \
        [(base, b.sub(nbytes, l2_bytes)), (tb.i64(abi.DEMAND_L2), l2_bytes)]
    first = b.ashr(data, shift)
    last = b.ashr(b.sub(tb.max(end, b.add(data, tb.i64(1))), tb.i64(1)), shift)
    with b.if_else(b.icmp_signed("==", first, last)) as (one, many):
        with one:
            for where, count in parts:
                _add(tb, record, b.add(where, first), tb.f(count))
            _add(tb, record, b.add(tb.i64(abi.DEMAND_BUSY), first), tb.f(transfer))
        with many:   # window k gets the share of [data, end) in [k*w, (k+1)*w)
            span = tb.f(b.sub(end, data))
            rates = [(where, b.fdiv(tb.f(count), span)) for where, count in parts]
            busy = b.fdiv(tb.f(transfer), span)

            def spread(i):
                k = b.add(first, i)
                lo = tb.max(data, b.shl(k, shift))
                hi_edge = b.shl(b.add(k, tb.i64(1)), shift)
                hi = b.select(b.icmp_signed("<", end, hi_edge), end, hi_edge)
                cycles = tb.f(b.sub(hi, lo))
                for where, rate in rates:
                    _add(tb, record, b.add(where, k), b.fmul(cycles, rate))
                _add(tb, record, b.add(tb.i64(abi.DEMAND_BUSY), k), b.fmul(cycles, busy))
            counted_loop(b, func, b.add(b.sub(last, first), tb.i64(1)), spread)
    if not per_arg:
        return
    with b.if_then(b.icmp_signed("==", gm_kind, tb.i64(GM_READS))):
        arg = tb.max(tb.ld(abi.GM_READ_ARG), tb.i64(0))
        _add(tb, record, b.add(tb.i64(abi.DEMAND_ARGS), arg), tb.f(nbytes))


__all__ = ["gm_transfer", "GM_NONE", "GM_READS", "GM_WRITES"]
