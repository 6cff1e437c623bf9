"""cast_deq and set_deq_scale (declarations and NumPy references): Ascend C's CastDeq and the
DEQSCALE register it reads.

``set_deq_scale(scale, offset, sign_mode)`` sets the register for ``cast_deq(...,
is_vec_deq=False)``; ``set_deq_scale(vdeq, VdeqInfo(scales[16], offsets[16], sign_modes[16]))``
writes the 16 parameter groups into the 128-byte uint64 UB tensor ``vdeq`` (scalar-unit stores)
and points the register at it, for ``is_vec_deq=True`` (pyasc's default);
``set_deq_scale(scale)`` sets the half scale of the int32 form. Every block starts with the
register unset, and a cast_deq whose parameters were never set stops the kernel at the line.

``cast_deq(dst, src, count | mask, repeat_times, UnaryRepeatParams, is_set_mask=True,
is_vec_deq=True, half_block=True)``:

* int16 ``src`` → int8/uint8 ``dst`` (the docs' formula ``dst[i] = src[i] * scale + offset``):
  computed in float32 (the product rounded to float32, then the offset added and rounded to
  float32), rounded to the nearest integer (ties to even) and saturated to int8 when the sign
  mode is set, to uint8 otherwise (the docs do not say how they round; this is our choice).
  ``offset`` keeps its low 9 bits, sign-extended (the docs: "only the first 9 bits are valid").
  With ``is_vec_deq`` element ``i`` uses group ``i % 16`` of the vdeq tensor ("cycled"; our
  reading of the docs). Each 32-byte block of 16 sources gives 16 bytes, written to one half of
  the corresponding 32-byte destination block: the low half (bytes 0..15) when ``half_block``
  is true, the high half otherwise (the docs' figure is not available as text; our choice); the
  other half is left alone.
* int32 ``src`` → float16 ``dst``: ``dst[i] = src[i] * scale`` with the half scale, in float32,
  rounded to float16 (ties to even; overflow gives inf); 16 results per 32-byte dst block.

Lane ``l`` of a masked repeat (64 lanes for int32, 128 for int16) reads the source at its own
geometry and writes destination block ``l // 16`` (``dst_blk_stride``/``dst_rep_stride`` in
32-byte blocks). Our packing of a vdeq word (what set_deq_scale writes, cast_deq reads):
bits 0..31 the float32 scale, 32..47 the offset, bit 48 the sign mode.
Timing: one VCONV-class vector instruction (cost class CONVERT).
"""
from __future__ import annotations

import numpy as np

from ...dsl.types import PipeID, float16, int16, int32, int8, uint8
from . import CostClass, Family, OpSpec, register

DEQ_PAIRS = ((int16, int8), (int16, uint8), (int32, float16))
COUNT_FORM = ("dst", "src", "count", "is_vec_deq", "half_block")
MASKED_FORM = ("dst", "src", "mask", "repeat_times", "repeat_params", "is_set_mask",
               "is_vec_deq", "half_block")
VDEQ_GROUPS = 16
#: ``VALUE_RANGE`` reasons (ERR_A) of cast_deq's run-time checks
UNSET_SCALAR, UNSET_VECTOR, UNSET_HALF = 20, 21, 22


def s9(offset: int) -> int:
    """The offset as the hardware keeps it: its low 9 bits, sign-extended."""
    v = int(offset) & 0x1FF
    return v - 0x200 if v & 0x100 else v


def pack_vdeq(scale: float, offset: int, sign: bool) -> int:
    bits = int(np.array([scale], np.float32).view(np.uint32)[0])
    return bits | ((int(offset) & 0xFFFF) << 32) | (int(bool(sign)) << 48)


def quantize(x: np.ndarray, scale, offset, sign) -> np.ndarray:
    """int16 values -> the bytes of int8 (sign) / uint8 results, elementwise parameters."""
    with np.errstate(all="ignore"):
        v = (x.astype(np.float32) * np.float32(scale)).astype(np.float32)
        v = (v + np.asarray([s9(o) for o in np.atleast_1d(offset)], np.float32)
             if np.ndim(offset) else v + np.float32(s9(offset))).astype(np.float32)
        r = np.rint(v.astype(np.float64))
    lo = np.where(sign, -128, 0)
    hi = np.where(sign, 127, 255)
    return np.clip(r, lo, hi).astype(np.int64).astype(np.uint8)


def cast_deq_ref(dst, src, count=None, mask=None, repeat_times=0, dst_blk=1, src_blk=1,
                 dst_rep=8, src_rep=8, half_block=True, scale=0.0, offset=0, sign=False,
                 vdeq=None, half_scale=0.0):
    """The result dst array (same dtype as ``dst``). ``vdeq``: 16 (scale, offset, sign) groups
    for is_vec_deq, else the register's (scale, offset, sign); int32 sources use half_scale."""
    out = np.array(dst, copy=True)
    raw = out.view(np.uint8)
    sraw = np.ascontiguousarray(src).view(np.uint8)
    ses = src.itemsize
    epr, spb = 256 // ses, 32 // ses
    if count is not None:
        lanes = [(i // epr, i % epr) for i in range(int(count))]
        dst_blk, src_blk, dst_rep, src_rep = 1, 1, 256 // ses // 16, 8
    else:
        if isinstance(mask, (list, tuple)):
            words = [int(w) & (2**64 - 1) for w in mask] + [0]
            act = [l for l in range(epr) if (words[l // 64] >> (l % 64)) & 1]
        else:
            act = list(range(min(int(mask), epr)))
        lanes = [(r, l) for r in range(int(repeat_times)) for l in act]
    for r, l in lanes:
        s_at = (r * src_rep + (l // spb) * src_blk) * 32 + (l % spb) * ses
        x = sraw[s_at:s_at + ses].view(src.dtype)
        d_blk = (r * dst_rep + (l // 16) * dst_blk) * 32
        if src.dtype == np.int32:
            with np.errstate(all="ignore"):
                v = np.float16((x.astype(np.float32) * np.float32(np.float16(half_scale)))[0])
            at = d_blk + (l % 16) * 2
            raw[at:at + 2] = np.array([v], np.float16).view(np.uint8)
            continue
        if vdeq is not None:
            g_scale, g_off, g_sign = vdeq[(r * epr + l) % VDEQ_GROUPS]
        else:
            g_scale, g_off, g_sign = scale, offset, sign
        at = d_blk + (0 if half_block else 16) + (l % 16)
        raw[at] = quantize(x, g_scale, g_off, g_sign)[0]
    return out


register(OpSpec("cast_deq", Family.SYSTEM, PipeID.PIPE_V, CostClass.CONVERT,
                (int8, uint8, float16), (COUNT_FORM, MASKED_FORM), cast_deq_ref, None,
                "cast_deq(dst, src, count | mask, repeat_times, repeat_params, [is_set_mask,] "
                "is_vec_deq=True, half_block=True): int16 -> int8/uint8 by the DEQSCALE "
                "register's scale/offset/sign (or 16 groups from a vdeq tensor), int32 -> half "
                "by its half scale"))
register(OpSpec("set_deq_scale", Family.SYSTEM, PipeID.PIPE_S, CostClass.SCALAR, (),
                (("scale",), ("scale", "offset", "sign_mode"), ("vdeq", "vdeq_info")), None, None,
                "set_deq_scale(scale) | (scale, offset, sign_mode) | (vdeq, VdeqInfo(...)): the "
                "DEQSCALE register cast_deq reads", flops_per_elem=0))
