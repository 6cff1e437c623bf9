"""Kernels and a harness for tests/ops/test_reduce.py.

One kernel per family (whole/block/pair, and reduce_*), compiled once per dtype and mask form:
the op, the order, the mask value, repeat count, strides, counter mode and cal_index are read at
run time from an int64 parameter array in GM (``get_value``), so hypothesis can vary all of them
without recompiling. UB layout: src at 0 (96 KB), dst at 96 KB (48 KB), shared_tmp_buffer at
144 KB (48 KB). dst is loaded from GM before the op, so elements the op must not touch are
checked too.
"""
from __future__ import annotations

import numpy as np

import ascendc_py as asc
from ascendc_py.compiler.ops import REGISTRY

SRC_BYTES = 96 * 1024
DST_BYTES = 48 * 1024
TMP_BYTES = 48 * 1024

# selector → (op, order) of repeat_kernel
REPEAT_SEL = [("whole_reduce_sum", None)] + [
    (f"whole_reduce_{k}", o) for k in ("max", "min") for o in asc.ReduceOrder] + [
    ("block_reduce_sum", None), ("block_reduce_max", None), ("block_reduce_min", None),
    ("pair_reduce_sum", None)]
FULL_SEL = ["reduce_sum", "reduce_max", "reduce_min"]   # + 3 for the masked form
P_SEL, P_MASK, P_HI, P_REPEAT, P_DST_REP, P_SRC_BLK, P_SRC_REP, P_COUNTER, P_CAL = range(9)


@asc.kernel
def run_repeat_op(sel, dst, src, m, repeat, dst_rep, src_blk, src_rep):
    if sel == 0:
        asc.whole_reduce_sum(dst, src, m, repeat, dst_rep, src_blk, src_rep)
    elif sel == 1:
        asc.whole_reduce_max(dst, src, m, repeat, dst_rep, src_blk, src_rep)
    elif sel == 2:
        asc.whole_reduce_max(dst, src, m, repeat, dst_rep, src_blk, src_rep,
                             asc.ReduceOrder.ORDER_INDEX_VALUE)
    elif sel == 3:
        asc.whole_reduce_max(dst, src, mask=m, repeat_time=repeat, dst_rep_stride=dst_rep,
                             src_blk_stride=src_blk, src_rep_stride=src_rep,
                             order=asc.ReduceOrder.ORDER_ONLY_VALUE)
    elif sel == 4:
        asc.whole_reduce_max(dst, src, m, repeat, dst_rep, src_blk, src_rep,
                             order=asc.ReduceOrder.ORDER_ONLY_INDEX)
    elif sel == 5:
        asc.whole_reduce_min(dst, src, m, repeat, dst_rep, src_blk, src_rep,
                             asc.ReduceOrder.ORDER_VALUE_INDEX)
    elif sel == 6:
        asc.whole_reduce_min(dst, src, m, repeat, dst_rep, src_blk, src_rep,
                             asc.ReduceOrder.ORDER_INDEX_VALUE)
    elif sel == 7:
        asc.whole_reduce_min(dst, src, m, repeat, dst_rep, src_blk, src_rep,
                             asc.ReduceOrder.ORDER_ONLY_VALUE)
    elif sel == 8:
        asc.whole_reduce_min(dst, src, m, repeat, dst_rep, src_blk, src_rep,
                             asc.ReduceOrder.ORDER_ONLY_INDEX)
    elif sel == 9:
        asc.block_reduce_sum(dst, src, repeat, m, dst_rep, src_blk, src_rep)
    elif sel == 10:
        asc.block_reduce_max(dst, src, repeat=repeat, mask=m, dst_rep_stride=dst_rep,
                             src_blk_stride=src_blk, src_rep_stride=src_rep)
    elif sel == 11:
        asc.block_reduce_min(dst, src, repeat, m, dst_rep, src_blk, src_rep)
    else:
        asc.pair_reduce_sum(dst, src, repeat, m, dst_rep, src_blk, src_rep)


@asc.kernel
def run_full_op(sel, dst, src, tmp, m, count, repeat, src_rep, cal):
    if sel == 0:
        asc.reduce_sum(dst, src, tmp, count)
    elif sel == 1:
        asc.reduce_max(dst, src, tmp, count, cal)
    elif sel == 2:
        asc.reduce_min(dst, src, tmp, count=count, cal_index=cal)
    elif sel == 3:
        asc.reduce_sum(dst, src, tmp, m, repeat, src_rep)
    elif sel == 4:
        asc.reduce_max(dst, src, shared_tmp_buffer=tmp, mask=m, repeat_time=repeat,
                       src_rep_stride=src_rep, cal_index=cal)
    else:
        asc.reduce_min(dst, src, tmp, m, repeat, src_rep, cal)


@asc.kernel
def reduce_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, p: asc.GlobalAddress,
                  FULL: asc.ConstExpr[bool], WORDS: asc.ConstExpr[int]):
    """WORDS: 0 = contiguous mask, 1 or 2 = a bit mask of that many uint64 words."""
    n_src = SRC_BYTES // x.dtype.sizeof()
    n_dst = DST_BYTES // x.dtype.sizeof()
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    pg = asc.GlobalTensor()
    xg.set_global_buffer(x, n_src)
    zg.set_global_buffer(z, n_dst)
    pg.set_global_buffer(p, 16)
    src = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n_src)
    dst = asc.LocalTensor(x.dtype, asc.TPosition.VECOUT, SRC_BYTES, n_dst)
    tmp = asc.LocalTensor(x.dtype, asc.TPosition.VECCALC, SRC_BYTES + DST_BYTES, n_dst)
    asc.data_copy(src, xg, n_src)
    asc.data_copy(dst, zg, n_dst)
    sel = pg.get_value(P_SEL)
    lo = pg.get_value(P_MASK)
    hi = pg.get_value(P_HI)
    repeat = pg.get_value(P_REPEAT)
    dst_rep = pg.get_value(P_DST_REP)
    src_blk = pg.get_value(P_SRC_BLK)
    src_rep = pg.get_value(P_SRC_REP)
    cal = pg.get_value(P_CAL) != 0
    if pg.get_value(P_COUNTER) != 0:
        asc.set_mask_count()
    if FULL:
        if WORDS == 0:
            run_full_op(sel, dst, src, tmp, lo, lo, repeat, src_rep, cal)
        elif WORDS == 1:
            run_full_op(sel, dst, src, tmp, [lo], lo, repeat, src_rep, cal)
        else:
            run_full_op(sel, dst, src, tmp, [lo, hi], lo, repeat, src_rep, cal)
    else:
        if WORDS == 0:
            run_repeat_op(sel, dst, src, lo, repeat, dst_rep, src_blk, src_rep)
        elif WORDS == 1:
            run_repeat_op(sel, dst, src, [lo], repeat, dst_rep, src_blk, src_rep)
        else:
            run_repeat_op(sel, dst, src, [lo, hi], repeat, dst_rep, src_blk, src_rep)
    asc.set_mask_norm()
    asc.reset_mask()
    asc.data_copy(zg, dst, n_dst)


def _signed(word: int) -> int:
    return int(np.array([word & (2**64 - 1)], np.uint64).view(np.int64)[0])


def geometry(dtype):
    esize = np.dtype(dtype).itemsize
    return esize, 256 // esize, 32 // esize


def make_src(rng, dtype, scale=1.0, specials=()):
    n = SRC_BYTES // np.dtype(dtype).itemsize
    with np.errstate(over="ignore"):
        x = (rng.standard_normal(n) * scale).astype(dtype)
        for pos, value in specials:
            x[int(pos * n) % n] = np.dtype(dtype).type(value)
    return x


def make_dst(rng, dtype):
    return rng.standard_normal(DST_BYTES // np.dtype(dtype).itemsize).astype(dtype)


def run_repeat(name, order, x, z0, mask, repeat, dst_rep, src_blk, src_rep, counter=False):
    """Run one whole/block/pair op; returns (got, want) dst arrays."""
    sel = REPEAT_SEL.index((name, order))
    words = 0 if not isinstance(mask, (list, tuple)) else len(mask)
    lo = mask if words == 0 else mask[0]
    hi = mask[1] if words == 2 else 0
    p = np.zeros(16, np.int64)
    p[:9] = [sel, _signed(lo), _signed(hi), repeat, dst_rep, src_blk, src_rep, int(counter), 0]
    z = z0.copy()
    report = reduce_kernel[1](x, z, p, False, words)
    kw = {"order": order} if order is not None else {}
    want = REGISTRY[name].reference(z0, x, *((mask, repeat) if name.startswith("whole")
                                            else (repeat, mask)),
                                    dst_rep, src_blk, src_rep, counter=counter, **kw)
    return z, want, report


def run_full(name, x, z0, count=None, mask=None, repeat=0, src_rep=8, cal_index=False):
    sel = FULL_SEL.index(name) + (3 if count is None else 0)
    words = 0 if not isinstance(mask, (list, tuple)) else len(mask)
    lo = (count if count is not None else mask) if words == 0 else mask[0]
    hi = mask[1] if words == 2 else 0
    p = np.zeros(16, np.int64)
    p[:9] = [sel, _signed(lo), _signed(hi), repeat, 0, 1, src_rep, 0, int(cal_index)]
    z = z0.copy()
    report = reduce_kernel[1](x, z, p, True, words)
    kw = {} if name == "reduce_sum" else {"cal_index": cal_index}
    if count is not None:
        want = REGISTRY[name].reference(z0, x, count, **kw)
    else:
        want = REGISTRY[name].reference(z0, x, mask=mask, repeat_time=repeat,
                                        src_rep_stride=src_rep, **kw)
    return z, want, report


def assert_same_bits(got: np.ndarray, want: np.ndarray, what: str = "") -> None:
    """Bitwise equality (NaN payloads aside: any NaN matches any NaN)."""
    g = got.view(np.uint16 if got.itemsize == 2 else np.uint32)
    w = want.view(g.dtype)
    both_nan = np.isnan(got) & np.isnan(want)
    bad = np.flatnonzero((g != w) & ~both_nan)
    assert bad.size == 0, (f"{what}: {bad.size} elements differ, first at {bad[:8]}: "
                           f"got {got[bad[:8]]} want {want[bad[:8]]}")
