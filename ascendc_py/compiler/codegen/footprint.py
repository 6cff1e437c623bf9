"""Where a masked vector instruction reaches: the bytes of each operand it touches.

A masked (repeat) instruction works on ``repeats`` repeats of 8 blocks of 32 bytes per operand;
block ``i`` of repeat ``r`` starts at ``(r * rep_stride + i * blk_stride) * 32`` bytes, and the
mask chooses the lanes (normal mode: the same lanes in every repeat; counter mode: ``total``
elements, whole repeats and then the rest). The checks need the END of what is touched, which
depends on the highest enabled lane, so that a kernel whose mask covers only the tensor's
elements is not refused for the blocks the mask leaves alone. Everything here is once per
instruction and overflow-safe (saturating), and the strides are checked against their hardware
fields first (block strides 16-bit, repeat strides 8-bit unsigned: ``STRIDE_RANGE``).
"""
from __future__ import annotations

from llvmlite import ir as L

from ...simulator import abi
from .core import FnBuilder
from .types import I1, I64, intrinsic

E = abi.ErrorCode
MAX_BLOCK_STRIDE = 65535
MAX_REPEAT_STRIDE = 255


def check_strides(fb: FnBuilder, site, operands, max_repeat: int = MAX_REPEAT_STRIDE) -> None:
    """Each (which, block stride, repeat stride) must fit its hardware field (repeat strides
    are 8-bit but for copy's 12-bit repeat sizes: ``max_repeat``)."""
    b = fb.b
    for which, blk, rep in operands:
        for value, limit in ((blk, MAX_BLOCK_STRIDE), (rep, max_repeat)):
            bad = b.or_(b.icmp_signed("<", value, fb.i64(0)),
                        b.icmp_signed(">", value, fb.i64(limit)))
            with b.if_then(bad, likely=False):
                fb.st(abi.ERR_D, fb.i64(which))
            fb.fail_with(bad, E.STRIDE_RANGE, site, value, fb.i64(limit))


def highest_lane(fb: FnBuilder, lo, hi, epr: int):
    """The highest lane a normal-mode mask (hi:lo bit words) enables among ``epr``, or -1."""
    b = fb.b
    ctlz = intrinsic(fb.module, "llvm.ctlz.i64", I64, [I64, I1])
    hi = hi if epr > 64 else fb.i64(0)
    lo = lo if epr >= 64 else b.and_(lo, fb.i64((1 << epr) - 1))
    top_hi = b.sub(fb.i64(127), b.call(ctlz, [hi, L.Constant(I1, 0)]))
    top_lo = b.sub(fb.i64(63), b.call(ctlz, [lo, L.Constant(I1, 0)]))
    return b.select(b.icmp_signed("!=", hi, fb.i64(0)), top_hi, top_lo)


def lane_span(fb: FnBuilder, counter, lo, hi, total, repeats, epr: int):
    """(highest lane of a full repeat, highest lane of the last repeat) the instruction
    enables; -1 when none. Counter mode: every lane of the repeats before the last, then the
    ``total`` elements left."""
    b = fb.b
    h = highest_lane(fb, lo, hi, epr)
    left = b.sub(total, fb.sat_mul(b.sub(repeats, fb.i64(1)), fb.i64(epr)))
    h_last = b.select(counter, b.sub(fb.smin(left, fb.i64(epr)), fb.i64(1)), h)
    h_full = b.select(counter, fb.i64(epr - 1), h)
    return h_full, h_last


def operand_end(fb: FnBuilder, repeats, blk, rep, span, esize: int):
    """Bytes from an operand's start to the end of the last byte the instruction touches
    (0 when it touches none). ``span`` is ``lane_span``'s pair; lane ``j`` of repeat ``r`` is
    element ``j % per_block`` of block ``j // per_block`` (``per_block = 32 // esize``)."""
    b = fb.b
    per = 32 // esize
    h_full, h_last = span

    def end_of(r, h):
        blocks = fb.sat_add(fb.sat_mul(r, rep), fb.sat_mul(b.sdiv(h, fb.i64(per)), blk))
        # with a block stride of 0 the blocks overlap: the furthest element is the highest
        # lane position inside a block that any enabled lane has
        in_block = b.select(b.icmp_signed("==", blk, fb.i64(0)),
                            fb.smin(h, fb.i64(per - 1)), b.srem(h, fb.i64(per)))
        return fb.sat_add(fb.sat_mul(blocks, fb.i64(32)),
                          b.mul(b.add(in_block, fb.i64(1)), fb.i64(esize)))

    last = end_of(b.sub(repeats, fb.i64(1)), h_last)
    full = b.select(b.icmp_signed(">=", repeats, fb.i64(2)),
                    end_of(b.sub(repeats, fb.i64(2)), h_full), fb.i64(0))
    end = fb.smax(last, full)
    touches = b.and_(b.icmp_signed(">", repeats, fb.i64(0)),
                     b.icmp_signed(">=", h_last, fb.i64(0)))
    return b.select(touches, end, fb.i64(0))


__all__ = ["check_strides", "highest_lane", "lane_span", "operand_end", "MAX_BLOCK_STRIDE",
           "MAX_REPEAT_STRIDE"]
