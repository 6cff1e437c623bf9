"""Kernels and a harness for tests/ops/test_gather.py (brcb, gatherb, gather, scatter).

One kernel, compiled once per dtype and mask form: the op, the mask, repeat count, strides,
base, count and counter mode come from an int64 parameter array in GM (``get_value``), so
hypothesis can vary them without recompiling. UB layout: src at 0 (SRC_BYTES), dst after it
(DST_BYTES), the uint32 offsets after that (OFF_BYTES). dst is loaded from GM first, so the
elements the op must leave alone are checked too.
"""
from __future__ import annotations

import numpy as np

import ascendc_py as asc
from ascendc_py.compiler.ops import REGISTRY

SRC_BYTES = 32 * 1024
DST_BYTES = 32 * 1024
OFF_BYTES = 64 * 1024
SEL = ["brcb", "gatherb", "gather", "gather_masked", "scatter", "scatter_masked"]
P_SEL, P_MASK, P_HI, P_REPEAT, P_BLK, P_REP, P_BASE, P_COUNT, P_COUNTER = range(9)


@asc.kernel
def run_op(sel, dst, src, off, m, repeat, blk, rep, base, count):
    if sel == 0:
        asc.brcb(dst, src, repeat, asc.BrcbRepeatParams(blk, rep))
    elif sel == 1:  # gatherb takes uint16/uint32: the same bits
        ut = asc.uint16 if dst.dtype.sizeof() == 2 else asc.uint32
        asc.gatherb(dst.reinterpret_cast(ut), src.reinterpret_cast(ut), off, repeat_times=repeat,
                    repeat_params=asc.GatherRepeatParams(dst_blk_stride=blk, dst_rep_stride=rep))
    elif sel == 2:
        asc.gather(dst, src, off, base, count)
    elif sel == 3:
        asc.gather(dst, src, off, src_base=base, mask=m, repeat_times=repeat,
                   dst_rep_stride=rep)
    elif sel == 4:
        asc.scatter(dst, src, off, dst_base=base, count=count)
    else:
        asc.scatter(dst, src, off, base, m, repeat, rep)


@asc.kernel
def gather_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, o: asc.GlobalAddress,
                  p: asc.GlobalAddress, WORDS: asc.ConstExpr[int], SYNC: asc.ConstExpr[bool]):
    """WORDS: 0 = contiguous mask, 1 or 2 = a bit mask of that many uint64 words. SYNC: flags
    between the copies and the op (without them, sanitize mode reports races)."""
    n_src = SRC_BYTES // x.dtype.sizeof()
    n_dst = DST_BYTES // x.dtype.sizeof()
    n_off = OFF_BYTES // 4
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    og = asc.GlobalTensor()
    pg = asc.GlobalTensor()
    xg.set_global_buffer(x, n_src)
    zg.set_global_buffer(z, n_dst)
    og.set_global_buffer(o, n_off)
    pg.set_global_buffer(p, 16)
    src = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n_src)
    dst = asc.LocalTensor(x.dtype, asc.TPosition.VECOUT, SRC_BYTES, n_dst)
    off = asc.LocalTensor(asc.uint32, asc.TPosition.VECCALC, SRC_BYTES + DST_BYTES, n_off)
    asc.data_copy(src, xg, n_src)
    asc.data_copy(dst, zg, n_dst)
    asc.data_copy(off, og, n_off)
    if SYNC:
        asc.set_flag(asc.HardEvent.MTE2_V, 0)
        asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    sel = pg.get_value(P_SEL)
    lo = pg.get_value(P_MASK)
    hi = pg.get_value(P_HI)
    repeat = pg.get_value(P_REPEAT)
    blk = pg.get_value(P_BLK)
    rep = pg.get_value(P_REP)
    base = pg.get_value(P_BASE)
    count = pg.get_value(P_COUNT)
    if pg.get_value(P_COUNTER) != 0:
        asc.set_mask_count()
    if WORDS == 0:
        run_op(sel, dst, src, off, lo, repeat, blk, rep, base, count)
    elif WORDS == 1:
        run_op(sel, dst, src, off, [lo], repeat, blk, rep, base, count)
    else:
        run_op(sel, dst, src, off, [lo, hi], repeat, blk, rep, base, count)
    asc.set_mask_norm()
    asc.reset_mask()
    if SYNC:
        asc.set_flag(asc.HardEvent.V_MTE3, 0)
        asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, dst, n_dst)


def _signed(word: int) -> int:
    return int(np.array([word & (2**64 - 1)], np.uint64).view(np.int64)[0])


def make_src(rng, dtype):
    n = SRC_BYTES // np.dtype(dtype).itemsize
    return rng.integers(0, 2**16, n * np.dtype(dtype).itemsize // 2,
                        dtype=np.uint16).view(dtype)


def make_dst(rng, dtype):
    n = DST_BYTES // np.dtype(dtype).itemsize
    return rng.integers(0, 2**16, n * np.dtype(dtype).itemsize // 2,
                        dtype=np.uint16).view(dtype)


def make_offsets(offsets):
    o = np.zeros(OFF_BYTES // 4, np.uint32)
    o[:len(offsets)] = offsets
    return o


def run(op, x, z0, offsets=(), mask=0, repeat=0, blk=1, rep=8, base=0, count=0,
        counter=False, sync=True, **launch):
    """Run one op; returns (got, want, report). ``op``: a SEL entry."""
    words = 0 if not isinstance(mask, (list, tuple)) else len(mask)
    lo = mask if words == 0 else mask[0]
    hi = mask[1] if words == 2 else 0
    p = np.zeros(16, np.int64)
    p[:9] = [SEL.index(op), _signed(lo), _signed(hi), repeat, blk, rep, base, count,
             int(counter)]
    o = make_offsets(offsets)
    z = z0.copy()
    report = gather_kernel[1](x, z, o, p, words, sync, **launch)
    name = op.split("_")[0]
    ref = REGISTRY[name].reference
    if name in ("brcb", "gatherb"):
        args = (z0, x) + ((o,) if name == "gatherb" else ()) + (repeat, blk, rep)
        want = ref(*args)
    elif op.endswith("masked"):
        key = "dst_rep_stride" if name == "gather" else "src_rep_stride"
        want = ref(z0, x, o, base, mask=mask, repeat_times=repeat, counter=counter,
                   **{key: rep})
    else:
        want = ref(z0, x, o, base, count=count)
    return z, want, report


def assert_same_bits(got: np.ndarray, want: np.ndarray, what: str = "") -> None:
    g = got.view(np.uint16 if got.itemsize == 2 else np.uint32)
    w = want.view(g.dtype)
    bad = np.flatnonzero(g != w)
    assert bad.size == 0, (f"{what}: {bad.size} elements differ, first at {bad[:8]}: "
                           f"got {g[bad[:8]]} want {w[bad[:8]]}")
