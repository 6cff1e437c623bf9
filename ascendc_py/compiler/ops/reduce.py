"""Reductions: reduce_*, whole_reduce_*, block_reduce_*, pair_reduce_sum (declarations).

Semantics follow the Ascend C docs for A2/A3 (``ReduceSum/ReduceMax/ReduceMin``, ``ReduceRepeat``
= old ``WholeReduce*``, ``ReduceDataBlock`` = old ``BlockReduce*``, ``ReducePairElem`` = old
``PairReduceSum``); parameter names and order are pyasc's. Dtypes: float16 and float32 only.

Lanes. A repeat has ``epr`` = 256 B / sizeof(T) lanes (128 half, 64 float) in 8 blocks of ``epb``
= 32 B / sizeof(T) lanes; lane ``l`` of repeat ``r`` reads
``src + (r * src_rep_stride + (l // epb) * src_blk_stride) * 32 B + (l % epb) * sizeof(T)``.
Active lanes come from the mask (contiguous count or bit mask ``[low word, high word]``; in counter
mode, ``set_mask_count``, the mask is the element count and ``repeat_time`` is ignored). A mask or
``repeat_time`` of 0 is a NOP (A2/A3 docs); a group of lanes (block, pair, repeat) with no active
lane leaves its destination element untouched.

Summation order (exact, so the NumPy references reproduce it bit for bit):
* every hardware sum (whole/block/pair, and each repeat of reduce_sum) is a binary tree over lane
  *positions*: level 1 adds lanes (0,1), (2,3), …, the next level adds those results pairwise,
  and so on (128 → 1 for a half repeat, 16 → 1 for a half block). Inactive lanes enter the tree
  as +0.0. Every add rounds to the dtype (float16 arithmetic for half); overflow gives ±inf
  (the default non-saturating mode; the docs' 65504 clamp is the optional saturation mode);
* ``reduce_sum(dst, src, tmp, count)`` (counter-mode ``vcadd`` with accumulation, "方式一" on
  A2/A3): one tree per repeat of 128/64 elements (the last one zero-padded), then the repeat
  results are added *in order* in the dtype: ``acc = t0; acc = acc + t1; …``;
* ``reduce_sum(dst, src, tmp, mask, repeat_time, src_rep_stride)`` ("方式二"): one tree per
  repeat, the ``repeat_time`` results are written to ``shared_tmp_buffer`` and reduced again by
  trees over groups of 128/64 (zero-padded), until one value is left.
float32 follows the same orders in float32 arithmetic, so it is exact against the references too.
Against the exact (float64) sum, the usual bounds apply with u = 2**-24 (float32) or 2**-11
(float16): |err| <= d * u * sum|x| (to first order) with d = log2(n) for one tree of n lanes,
d = 7 (half) / 6 (float) + ceil(n / epr) - 1 for the count form of reduce_sum, and d = the number
of tree levels crossed for the masked form.

max/min: the result is the first extreme value in lane order (repeat by repeat); a NaN wins over
numbers (the first NaN), as ``np.argmax``/``np.argmin`` do; -0.0 and +0.0 compare equal. Indices
are stored in the value's bits: a half slot holds the index as uint16, a float slot as uint32
(read them with ``reinterpret_cast``; ``ORDER_ONLY_INDEX`` stores a uint32 in 4 bytes). For
whole_reduce_max/min the index is the lane within its repeat; for reduce_max/min it is the
element offset from ``src`` (count form) or ``r * src_rep_stride * epb + lane`` (masked form);
half keeps its low 16 bits (Ascend C supports indices up to 65535 for half).

Destinations. whole_reduce_*: the result of repeat r is at ``dst + r * dst_rep_stride * unit``,
unit = sizeof(T) for sums and ORDER_ONLY_VALUE, 2 * sizeof(T) for ORDER_VALUE_INDEX /
ORDER_INDEX_VALUE, 4 B for ORDER_ONLY_INDEX. block_reduce_*: 8 results per repeat at
``dst + r * dst_rep_stride * 8 elements``. pair_reduce_sum: epr/2 results per repeat at
``dst + r * dst_rep_stride * 128 B``. ``is_set_mask=False`` uses the mask register as set by
``set_vector_mask`` (the mask argument is then ignored). reduce_*: dst[0] = the value, and with
``cal_index`` dst[1] = the index (nothing else is written); count 0, repeat_time 0 or an empty
mask is a NOP. ``shared_tmp_buffer`` must be 32-B aligned and the size the Ascend C docs require
must fit in UB (checked); the masked reduce_sum keeps its repeat sums there, as the hardware
does; afterwards its contents are unspecified. reduce_* leave the mask register full and the
mask mode normal. Alignment checked at run time: src 32 B; dst 32 B for pair_reduce_sum and
float block_reduce_* (half block_reduce_* needs 16 B, which is not checked).

Timing (cost class REDUCE, 7 cycles per repeat on 910B, for every reduction instruction; the
chip config's separate block-reduce and max/min figures need their own cost classes): whole,
block and pair reductions are one instruction of ``repeat_time`` repeats. reduce_* expand as
on A2/A3: sum, count form: one counter-mode vcadd over ``count`` elements, then the scalar copy
of the accumulator into dst between V→S and S→V/S→MTE3 flags; sum, masked form: vcadd of the
repeats, barrier, vcadd over the repeat sums, barrier, then a final vcadd or the scalar copy;
max/min: vcmax/vcmin of the repeats, then passes over the (value, index) pairs and a scalar step
that reads the indices back (the count form with a tail adds a pass for the tail and one merging
the two results). The internal flags and scalar accesses count as instructions of the op.
"""
from __future__ import annotations

import enum

import numpy as np

from ...dsl.types import PipeID
from . import FLOAT_TYPES, CostClass, Family, OpSpec, register


class ReduceOrder(enum.IntEnum):
    """Where whole_reduce_max/min put the value and the index (pyasc ``asc.ReduceOrder``)."""

    ORDER_VALUE_INDEX = 0
    ORDER_INDEX_VALUE = 1
    ORDER_ONLY_VALUE = 2
    ORDER_ONLY_INDEX = 3


KINDS = {"sum": 0, "max": 1, "min": 2}
REDUCE_DTYPES = FLOAT_TYPES

# parameter names (pyasc's); the masked forms take a contiguous mask (int) or a bit mask (list)
WHOLE_FORM = ("dst", "src", "mask", "repeat_time", "dst_rep_stride", "src_blk_stride",
              "src_rep_stride", "is_set_mask")
WHOLE_MINMAX_FORM = ("dst", "src", "mask", "repeat_time", "dst_rep_stride", "src_blk_stride",
                     "src_rep_stride", "order", "is_set_mask")
BLOCK_FORM = ("dst", "src", "repeat", "mask", "dst_rep_stride", "src_blk_stride",
              "src_rep_stride", "is_set_mask")
PAIR_FORM = ("dst", "src", "repeat_time", "mask", "dst_rep_stride", "src_blk_stride",
             "src_rep_stride", "is_set_mask")
FULL_SUM_FORMS = (("dst", "src", "shared_tmp_buffer", "count"),
                  ("dst", "src", "shared_tmp_buffer", "mask", "repeat_time", "src_rep_stride"))
FULL_MINMAX_FORMS = (("dst", "src", "shared_tmp_buffer", "count", "cal_index"),
                     ("dst", "src", "shared_tmp_buffer", "mask", "repeat_time", "src_rep_stride",
                      "cal_index"))


# ----------------------------------------------------------------------------- references
def _geometry(dtype):
    esize = np.dtype(dtype).itemsize
    return esize, 256 // esize, 32 // esize


def lane_mask(mask, epr: int) -> np.ndarray:
    """Active lanes of one repeat (normal mode): an int is a count, a list is [low, high]."""
    if isinstance(mask, (list, tuple)):
        words = [int(w) & (2**64 - 1) for w in mask] + [0]
        return np.array([(words[l // 64] >> (l % 64)) & 1 for l in range(epr)], bool)
    return np.arange(epr) < int(mask)


def _active(mask, repeat_time: int, epr: int, counter: bool) -> np.ndarray:
    """(repeats, epr) bool array of the active lanes."""
    if counter:
        total = int(mask)
        reps = -(-total // epr)
        return np.arange(reps * epr).reshape(reps, epr) < total
    return np.tile(lane_mask(mask, epr), (int(repeat_time), 1))


def _gather(src: np.ndarray, act: np.ndarray, src_blk: int, src_rep: int, epb: int):
    """(repeats, epr) values read by the lanes (0 where inactive) and their element offsets."""
    reps, epr = act.shape
    r = np.arange(reps)[:, None]
    l = np.arange(epr)[None, :]
    pos = r * src_rep * epb + (l // epb) * src_blk * epb + l % epb
    vals = np.where(act, src[np.clip(pos, 0, src.size - 1)], src.dtype.type(0))
    return vals.astype(src.dtype), pos


def tree_sum(vals: np.ndarray) -> np.ndarray:
    """Pairwise tree over the last axis (length a power of two), rounding to the dtype."""
    with np.errstate(over="ignore", invalid="ignore"):
        while vals.shape[-1] > 1:
            vals = vals[..., 0::2] + vals[..., 1::2]
    return vals[..., 0]


def _first_extreme(vals: np.ndarray, kind: str) -> int:
    """Index of the first max/min (the first NaN if there is one)."""
    return int(np.argmax(vals) if kind == "max" else np.argmin(vals))


def _put(raw: np.ndarray, byte: int, value, dtype) -> None:
    b = np.array([value], dtype).view(np.uint8)
    raw[byte:byte + b.size] = b


def _index_type(esize: int):
    return np.uint16 if esize == 2 else np.uint32


def whole_layout(kind: str, order: ReduceOrder, esize: int):
    """(unit bytes per dst_rep_stride, value offset or None, index offset or None, index bytes)."""
    if kind == "sum" or order == ReduceOrder.ORDER_ONLY_VALUE:
        return esize, 0, None, 0
    if order == ReduceOrder.ORDER_ONLY_INDEX:
        return 4, None, 0, 4
    if order == ReduceOrder.ORDER_INDEX_VALUE:
        return 2 * esize, esize, 0, esize
    return 2 * esize, 0, esize, esize


def _whole_ref(kind: str):
    def ref(dst, src, mask, repeat_time, dst_rep_stride, src_blk_stride, src_rep_stride,
            order=ReduceOrder.ORDER_VALUE_INDEX, counter=False):
        esize, epr, epb = _geometry(src.dtype)
        out = np.array(dst, copy=True)
        raw = out.view(np.uint8)
        act = _active(mask, repeat_time, epr, counter)
        vals, _ = _gather(src, act, src_blk_stride, src_rep_stride, epb)
        unit, voff, ioff, ibytes = whole_layout(kind, ReduceOrder(order), esize)
        sums = tree_sum(vals) if kind == "sum" else None
        for r in range(act.shape[0]):
            lanes = np.flatnonzero(act[r])
            if lanes.size == 0:
                continue
            base = r * dst_rep_stride * unit
            if kind == "sum":
                _put(raw, base, sums[r], src.dtype)
                continue
            k = lanes[_first_extreme(vals[r, lanes], kind)]
            if voff is not None:
                _put(raw, base + voff, vals[r, k], src.dtype)
            if ioff is not None:
                _put(raw, base + ioff, k, np.uint32 if ibytes == 4 else _index_type(esize))
        return out
    return ref


def _grouped_ref(kind: str, group_of):
    """block_reduce_* (group = one block) and pair_reduce_sum (group = 2 lanes)."""
    def ref(dst, src, repeat, mask, dst_rep_stride, src_blk_stride, src_rep_stride,
            counter=False):
        esize, epr, epb = _geometry(src.dtype)
        group = group_of(epb)
        per_rep = epr // group
        rep_elems = 8 if group == epb else epr // 2   # dst_rep_stride unit: 8 elems / 128 B
        out = np.array(dst, copy=True)
        act = _active(mask, repeat, epr, counter)
        vals, _ = _gather(src, act, src_blk_stride, src_rep_stride, epb)
        reps = act.shape[0]
        gv = vals.reshape(reps, per_rep, group)
        ga = act.reshape(reps, per_rep, group)
        if kind == "sum":
            res = tree_sum(gv)
        else:  # the first extreme of the active lanes (keeps -0.0 / +0.0 as in the source)
            res = np.zeros((reps, per_rep), src.dtype)
            for r, g in zip(*np.nonzero(ga.any(-1))):
                lanes = np.flatnonzero(ga[r, g])
                res[r, g] = gv[r, g, lanes[_first_extreme(gv[r, g, lanes], kind)]]
        for r in range(reps):
            for g in range(per_rep):
                if ga[r, g].any():
                    out[r * dst_rep_stride * rep_elems + g] = res[r, g]
        return out
    return ref


def _masked_positions(src, mask, repeat_time, src_rep_stride, epr, epb):
    act = _active(mask, repeat_time, epr, False)
    vals, pos = _gather(src, act, 1, src_rep_stride, epb)
    return act, vals, pos


def _full_sum_ref(dst, src, count=None, mask=None, repeat_time=None, src_rep_stride=None):
    esize, epr, epb = _geometry(src.dtype)
    out = np.array(dst, copy=True)
    with np.errstate(over="ignore", invalid="ignore"):
        if count is not None:
            if count <= 0:
                return out
            reps = -(-count // epr)
            padded = np.zeros(reps * epr, src.dtype)
            padded[:count] = src[:count]
            partial = tree_sum(padded.reshape(reps, epr))
            acc = partial[0]
            for t in partial[1:]:
                acc = src.dtype.type(acc + t)
            out[0] = acc
            return out
        act, vals, _ = _masked_positions(src, mask, repeat_time, src_rep_stride, epr, epb)
        if act.size == 0 or not act.any():
            return out
        level = tree_sum(vals)
        while level.size > 1:
            padded = np.zeros(-(-level.size // epr) * epr, src.dtype)
            padded[:level.size] = level
            level = tree_sum(padded.reshape(-1, epr))
        out[0] = level[0]
    return out


def _full_minmax_ref(kind: str):
    def ref(dst, src, count=None, mask=None, repeat_time=None, src_rep_stride=None,
            cal_index=False):
        esize, epr, epb = _geometry(src.dtype)
        out = np.array(dst, copy=True)
        if count is not None:
            if count <= 0:
                return out
            vals, pos = src[:count], np.arange(count)
        else:
            act, v, p = _masked_positions(src, mask, repeat_time, src_rep_stride, epr, epb)
            vals, pos = v[act], p[act]
            if vals.size == 0:
                return out
        k = _first_extreme(vals, kind)
        out[0] = vals[k]
        if cal_index:
            index = int(pos[k]) & (0xFFFF if esize == 2 else 0xFFFFFFFF)
            out.view(_index_type(esize))[1] = index
        return out
    return ref


# ----------------------------------------------------------------------------- declarations
def _cost(name: str) -> CostClass:
    """CA-model class of a reduction: block and pair reductions (CGADD) are cheap, max/min
    (CMAX/CMIN) and sums (CADD) cost 7 cycles per repeat with different latencies."""
    if name.startswith("pair_reduce"):
        return CostClass.PAIR_REDUCE
    if name.startswith("block_reduce"):
        return CostClass.BLOCK_REDUCE
    if name.endswith(("_max", "_min")):
        return CostClass.REDUCE_MAX
    return CostClass.REDUCE


def _reg(name, forms, ref, doc):
    register(OpSpec(name, Family.SYSTEM, PipeID.PIPE_V, _cost(name), REDUCE_DTYPES, forms,
                    ref, None, doc))


for _kind in ("sum", "max", "min"):
    _extra = ("" if _kind == "sum" else
              "; value and index per `order` (ReduceOrder, default ORDER_VALUE_INDEX), the index "
              "being the lane within the repeat, stored in the value's bits")
    _reg(f"whole_reduce_{_kind}", (WHOLE_FORM if _kind == "sum" else WHOLE_MINMAX_FORM,),
         _whole_ref(_kind),
         f"One {_kind} per repeat of the active lanes (Ascend C WholeReduce{_kind.capitalize()} "
         f"/ ReduceRepeat); dst_rep_stride in results{_extra}.")
    _reg(f"block_reduce_{_kind}", (BLOCK_FORM,), _grouped_ref(_kind, lambda epb: epb),
         f"One {_kind} per 32-byte block of each repeat, 8 results per repeat (Ascend C "
         f"BlockReduce{_kind.capitalize()} / ReduceDataBlock); dst_rep_stride in units of 8 "
         f"results; a block without active lanes leaves its result untouched.")
_reg("pair_reduce_sum", (PAIR_FORM,), _grouped_ref("sum", lambda epb: 2),
     "Sums of adjacent lane pairs, epr/2 results per repeat (Ascend C PairReduceSum / "
     "ReducePairElem); dst_rep_stride in units of 128 bytes; a pair with no active lane leaves "
     "its result untouched.")
_reg("reduce_sum", FULL_SUM_FORMS, _full_sum_ref,
     "dst[0] = sum of count elements (tree per repeat, repeats added in order) or of the masked "
     "repeats (tree per repeat, then trees over the repeat sums kept in shared_tmp_buffer).")
for _kind in ("max", "min"):
    _reg(f"reduce_{_kind}", FULL_MINMAX_FORMS, _full_minmax_ref(_kind),
         f"dst[0] = {_kind} of count elements or of the masked repeats; with cal_index, dst[1] "
         f"holds the index of its first occurrence in the value's bits (uint16 for half, uint32 "
         f"for float).")

WHOLE_OPS = tuple(f"whole_reduce_{k}" for k in KINDS)
BLOCK_OPS = tuple(f"block_reduce_{k}" for k in KINDS)
FULL_OPS = tuple(f"reduce_{k}" for k in KINDS)
REDUCE_OPS = WHOLE_OPS + BLOCK_OPS + ("pair_reduce_sum",) + FULL_OPS
