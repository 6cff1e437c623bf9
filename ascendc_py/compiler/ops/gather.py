"""Index-driven data movement in UB: brcb, gatherb, gather, scatter (declarations).

Semantics follow the Ascend C documentation for A2/A3 (``Brcb``, ``Gatherb``, ``Gather``,
``Scatter``); parameter names and order are pyasc's (``asc.brcb(dst, src0, repeat_times,
repeat_params)``, ``asc.gatherb(dst, src0, offset, repeat_times, repeat_params)``,
``asc.gather(dst, src, src_offset, src_base, count | mask, repeat_times, dst_rep_stride)``,
``asc.scatter(dst, src, dst_offset, dst_base, count | mask, repeat_times, src_rep_stride)``).
Every operand is a LocalTensor in UB; the operations move bits, so only the element width
matters to the results.

* ``brcb``: repeat ``r`` reads ``src0[8r .. 8r+7]`` and fills destination block ``i`` (32 B at
  ``dst + (r * dst_rep_stride + i * dst_blk_stride) * 32 B``) with copies of ``src0[8r+i]``.
  ``BrcbRepeatParams(dst_blk_stride=1, dst_rep_stride=8)``; a dst_blk_stride of 0 counts as 1
  (the docs). No mask. dst and src0 32-B aligned; src0 and dst at one address is an error (the
  docs do not support it).
* ``gatherb``: repeat ``r`` copies 8 blocks of 32 B: block ``i`` from ``src0 + offset[8r+i]``
  bytes to ``dst + (r * dst_rep_stride + i * dst_blk_stride) * 32 B``. ``offset`` is a uint32
  tensor of byte offsets, each a multiple of 32. ``GatherRepeatParams(dst_blk_stride=1,
  dst_rep_stride=8)``. Dtypes uint16/uint32 (A2/A3).
* ``gather``: ``dst[i] = element at src + src_base + src_offset[i]`` bytes; offsets are uint32
  byte offsets, ``src_base + src_offset[i]`` a multiple of the element size. Count form: ``i`` in
  0..count-1. Masked form: lane ``l`` of repeat ``r`` (active per the mask, as in every masked
  vector op; counter mode after ``set_mask_count``) writes ``dst + r * dst_rep_stride * 32 B +
  l * sizeof(T)`` from ``src_offset[r * epr + l]`` (epr = 256 B / sizeof(T)): the offsets of a
  repeat are consecutive (the documentation does not say how the offset tensor advances between
  repeats; this is our choice). Inactive lanes leave dst untouched.
* ``scatter``: the reverse: ``element at dst + dst_base + dst_offset[i] bytes = src[i]``; masked
  form: lane ``l`` of repeat ``r`` reads ``src + r * src_rep_stride * 32 B + l * sizeof(T)`` and
  uses ``dst_offset[r * epr + l]``. Two lanes with one destination: the later lane's value stays
  (element order; the docs do not say). The current Ascend C documentation lists Scatter for
  other products (Ascend 950, Atlas inference AI Core, 200I/500 A2) but not for A2/A3; pyasc
  exposes it, and we run it on the simulated 910B with the documented semantics.

An offset outside the tensor it indexes (``src`` for gather/gatherb, ``dst`` for scatter) is an
error at the line (``TensorExtentError``), as is a misaligned one (``ValueRangeError``): nothing
is read or written outside the tensor. Dtypes (A2/A3): brcb int16/uint16/int32/uint32/half/
bfloat16/float; gather and scatter the same; gatherb uint16/uint32.

Timing: brcb is a 1-cycle-per-repeat instruction (msKPP VBRCB ≈255 B/c, the unary-op rate:
cost class SIMPLE, one repeat per 256 B written); gatherb costs 2 cycles per repeat (VGATHERB
≈122 B/c: class GATHERB); gather and scatter ≈5.3 elements per cycle (VGATHER 10.6 B/c for
uint16, 21 B/c for uint32: class GATHER, 24 cycles per 256-B repeat of 16-bit elements, 12 of
32-bit ones; scatter has no measurement and uses gather's). Their cost family is the element
width (16-bit: the f16 column, 32-bit: the f32 column), not float/int.
"""
from __future__ import annotations

import numpy as np

from ...dsl.types import (PipeID, bfloat16, float16, float32, int16, int32, uint16, uint32)
from . import CostClass, Family, OpSpec, register

MOVE_DTYPES = (int16, uint16, int32, uint32, float16, bfloat16, float32)
GATHERB_DTYPES = (uint16, uint32)

BRCB_FORM = ("dst", "src0", "repeat_times", "repeat_params")
GATHERB_FORM = ("dst", "src0", "offset", "repeat_times", "repeat_params")
GATHER_FORMS = (("dst", "src", "src_offset", "src_base", "count"),
                ("dst", "src", "src_offset", "src_base", "mask", "repeat_times",
                 "dst_rep_stride"))
SCATTER_FORMS = (("dst", "src", "dst_offset", "dst_base", "count"),
                 ("dst", "src", "dst_offset", "dst_base", "mask", "repeat_times",
                  "src_rep_stride"))
#: (name, default) of the parameter records
BRCB_PARAMS = (("dst_blk_stride", 1), ("dst_rep_stride", 8))
GATHER_PARAMS = (("dst_blk_stride", 1), ("dst_rep_stride", 8))


# ----------------------------------------------------------------------------- references
def _bytes(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.uint8)


def brcb_ref(dst, src0, repeat_times, dst_blk_stride=1, dst_rep_stride=8):
    """Each of 8 elements per repeat broadcast into a 32-byte block of dst."""
    out = np.array(dst, copy=True)
    epb = 32 // out.itemsize
    blk = dst_blk_stride or 1
    for r in range(int(repeat_times)):
        for i in range(8):
            start = (r * dst_rep_stride + i * blk) * epb
            out[start:start + epb] = src0[8 * r + i]
    return out


def gatherb_ref(dst, src0, offset, repeat_times, dst_blk_stride=1, dst_rep_stride=8):
    """Block r*8+i of the result: 32 bytes of src0 at byte offset[8r+i]."""
    out = np.array(dst, copy=True)
    raw, src = _bytes(out), _bytes(src0)
    for r in range(int(repeat_times)):
        for i in range(8):
            o = int(offset[8 * r + i])
            d = (r * dst_rep_stride + i * dst_blk_stride) * 32
            raw[d:d + 32] = src[o:o + 32]
    return raw.view(out.dtype)


def _lanes(mask, repeat_times, epr, count=None, counter=False):
    """(repeat, lane) pairs in order: the count form's elements or the active masked lanes (in
    counter mode, ``set_mask_count``, the mask is the element count)."""
    if count is not None or counter:
        n = int(count if count is not None else mask)
        return [(i // epr, i % epr) for i in range(n)]
    if isinstance(mask, (list, tuple)):
        words = [int(w) & (2**64 - 1) for w in mask] + [0]
        act = [l for l in range(epr) if (words[l // 64] >> (l % 64)) & 1]
    else:
        act = list(range(min(int(mask), epr)))
    return [(r, l) for r in range(int(repeat_times)) for l in act]


def gather_ref(dst, src, src_offset, src_base, count=None, mask=None, repeat_times=1,
               dst_rep_stride=8, counter=False):
    """dst element (count form: i; masked: r * dst_rep_stride * 32 B + lane) = the element at
    byte src_base + src_offset[k] of src (k = i, or r * epr + lane)."""
    out = np.array(dst, copy=True)
    es = out.itemsize
    epr = 256 // es
    srcb = _bytes(src)
    for r, l in _lanes(mask, repeat_times, epr, count, counter):
        k = r * epr + l
        at = int(src_base) + int(src_offset[k])
        d = k if count is not None else (r * dst_rep_stride * 32) // es + l
        out[d] = srcb[at:at + es].view(out.dtype)[0]
    return out


def scatter_ref(dst, src, dst_offset, dst_base, count=None, mask=None, repeat_times=1,
                src_rep_stride=8, counter=False):
    """The element at byte dst_base + dst_offset[k] of dst = src element k (count form) or
    src[r * src_rep_stride * 32 B + lane] (masked); later lanes win."""
    out = np.array(dst, copy=True)
    es = out.itemsize
    epr = 256 // es
    raw, srcb = _bytes(out), _bytes(src)
    for r, l in _lanes(mask, repeat_times, epr, count, counter):
        k = r * epr + l
        s = k if count is not None else (r * src_rep_stride * 32) // es + l
        at = int(dst_base) + int(dst_offset[k])
        raw[at:at + es] = srcb[s * es:(s + 1) * es]
    return raw.view(out.dtype)


# ----------------------------------------------------------------------------- declarations
register(OpSpec("brcb", Family.SYSTEM, PipeID.PIPE_V, CostClass.SIMPLE, MOVE_DTYPES,
                (BRCB_FORM,), brcb_ref, None,
                "brcb(dst, src0, repeat_times, BrcbRepeatParams(dst_blk_stride=1, "
                "dst_rep_stride=8)): 8 elements per repeat, each broadcast into one 32-byte "
                "block of dst"))
register(OpSpec("gatherb", Family.SYSTEM, PipeID.PIPE_V, CostClass.GATHERB, GATHERB_DTYPES,
                (GATHERB_FORM,), gatherb_ref, None,
                "gatherb(dst, src0, offset, repeat_times, GatherRepeatParams(dst_blk_stride=1, "
                "dst_rep_stride=8)): 8 blocks of 32 bytes per repeat from src0 at the uint32 "
                "byte offsets (multiples of 32)"))
register(OpSpec("gather", Family.SYSTEM, PipeID.PIPE_V, CostClass.GATHER, MOVE_DTYPES,
                GATHER_FORMS, gather_ref, None,
                "gather(dst, src, src_offset, src_base, count | mask, repeat_times, "
                "dst_rep_stride): dst[i] = the element at byte src_base + src_offset[i] of src"))
register(OpSpec("scatter", Family.SYSTEM, PipeID.PIPE_V, CostClass.GATHER, MOVE_DTYPES,
                SCATTER_FORMS, scatter_ref, None,
                "scatter(dst, src, dst_offset, dst_base, count | mask, repeat_times, "
                "src_rep_stride): the element at byte dst_base + dst_offset[i] of dst = src[i]"))

GATHER_OPS = ("brcb", "gatherb", "gather", "scatter")
#: ``VALUE_RANGE`` reasons (ERR_A) of their run-time checks, worded by ``describe``
SAME_ADDRESS, MISALIGNED_OFFSET, NEGATIVE_BASE = 1, 2, 3


def describe(op: str, a: int, b: int, c: int) -> str:
    """The ValueRangeError text of these ops' run-time checks (ERR_A = reason)."""
    if a == SAME_ADDRESS:
        return f"{op}: dst and src0 are the same UB address ({b}); Ascend C does not support it"
    if a == MISALIGNED_OFFSET:
        unit = "32 bytes" if op == "gatherb" else "the element size"
        return (f"{op}: offset {b} is {c} bytes, not a multiple of {unit} (offsets are in "
                f"bytes)")
    if a == NEGATIVE_BASE:
        return f"{op}: the base offset is {b}, negative"
    return f"{op}: a value is out of range"
