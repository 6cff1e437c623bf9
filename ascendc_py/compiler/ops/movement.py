"""Strided and padded data movement: data_copy with DataCopyParams, data_copy_pad (declarations).

Semantics (Ascend C on A2/A3, reference/ascendc_api.md §3), shared by the NumPy references below,
sema (range checks) and the runtime library:

* ``data_copy(dst, src, DataCopyParams(block_count, block_len, src_stride, dst_stride))``:
  ``block_count`` bursts of ``block_len`` 32-byte blocks; the strides are the gaps between the
  end of one burst and the start of the next, in 32-byte blocks, on each side. GM→UB (MTE2),
  UB→GM (MTE3), UB→UB. ``block_count`` 0..4095, the others 0..65535; a zero count or length is
  a no-op.
* ``data_copy_pad(dst, src, DataCopyExtParams(block_count, block_len, src_stride, dst_stride,
  rsv)[, DataCopyPadExtParams(is_pad, left_padding, right_padding, padding_value)])``:
  ``block_len`` is in BYTES (a multiple of the element size, 0..2097151); the GM-side stride is
  in bytes, the UB-side stride in 32-byte blocks.

  - GM→UB: each burst lands in UB as ``left_padding`` elements, the ``block_len`` bytes of data,
    ``right_padding`` elements, then "dummy" elements up to the next 32-byte boundary (paddings
    are at most 32 bytes each). With ``is_pad`` every padding and dummy element is
    ``padding_value``. Without it: if both paddings are 0 the dummy elements repeat the burst's
    first element (Ascend C's documented rule); otherwise paddings and dummies are unspecified
    ("random" in the Ascend C docs) and the simulator leaves those UB bytes unchanged.
  - UB→GM: each burst reads ``ceil(block_len / 32)`` blocks of UB and writes exactly
    ``block_len`` bytes to GM (the unaligned-tail solution).

  The older ``data_copy_pad(dst, src, DataCopyParams, DataCopyPadParams)`` overload is the same
  with 16-bit fields (``block_len`` in bytes there too).

Timing: a strided or padded copy is ONE MTE instruction: it pays the path latency once (the DMA
engine streams the bursts back to back) and moves each burst rounded up to whole 32-byte blocks
(an unaligned 47-byte row costs 64 bytes of bandwidth). The per-burst command overhead of real
MTEs (and GM's 128/256/512-byte request granules) is not modelled.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ...dsl.types import (bfloat16, float16, float32, float64, int8, int16, int32, int64, uint8,
                         uint16, uint32, uint64)
from . import REGISTRY, CostClass, Family, OpSpec, register

BLOCK = 32
#: (field, max) of DataCopyParams (uint16 fields; block_count ≤ 4095 on A2/A3)
PARAMS_LIMITS = (("block_count", 4095), ("block_len", 65535), ("src_stride", 65535),
                 ("dst_stride", 65535))
#: (field, max) of DataCopyExtParams
EXT_LIMITS = (("block_count", 4095), ("block_len", 2097151), ("src_stride", 2 ** 32 - 1),
              ("dst_stride", 2 ** 32 - 1), ("rsv", 2 ** 32 - 1))
MAX_PADDING_BYTES = 32
#: dtypes DataCopy/DataCopyPad move on A2/A3
COPY_TYPES = (int8, uint8, int16, uint16, float16, bfloat16, int32, uint32, float32, int64,
              uint64, float64)


# ----------------------------------------------------------------------------- NumPy references
def _bytes(a: np.ndarray) -> np.ndarray:
    return a.reshape(-1).view(np.uint8)


def data_copy_reference(dst: np.ndarray, src: np.ndarray, count_or_params) -> np.ndarray:
    """``dst`` after ``data_copy(dst, src, count)`` or ``data_copy(dst, src, (block_count,
    block_len, src_stride, dst_stride))`` (flat arrays of one dtype, both starting at the
    operands' first element)."""
    out = dst.copy()
    d, s = _bytes(out), _bytes(src)
    if isinstance(count_or_params, (tuple, list)):
        count, length, src_gap, dst_gap = (int(v) for v in count_or_params)
        n = length * BLOCK
        for i in range(count if length else 0):
            so, do = i * (length + src_gap) * BLOCK, i * (length + dst_gap) * BLOCK
            d[do:do + n] = s[so:so + n]
        return out
    n = int(count_or_params) * src.itemsize // BLOCK * BLOCK   # the 32-byte truncation
    d[:n] = s[:n]
    return out


def data_copy_pad_reference(dst: np.ndarray, src: np.ndarray, params, pad=None, *,
                            to_gm: bool = False) -> np.ndarray:
    """``dst`` after ``data_copy_pad`` with ``params`` = (block_count, block_len_bytes,
    src_stride, dst_stride[, rsv]) and ``pad`` = (is_pad, left_padding, right_padding,
    padding_value) (GM→UB; ignored for UB→GM, ``to_gm=True``). Unspecified padding (no
    ``is_pad``, non-zero paddings) keeps ``dst``'s previous bytes, as the simulator does."""
    out = dst.copy()
    d, s = _bytes(out), _bytes(src)
    count, length, src_gap, dst_gap = (int(v) for v in tuple(params)[:4])
    es = src.itemsize
    if not count or not length:
        return out
    if to_gm:
        unit = -(-length // BLOCK) * BLOCK
        for i in range(count):
            so, do = i * (unit + src_gap * BLOCK), i * (length + dst_gap)
            d[do:do + length] = s[so:so + length]
        return out
    is_pad, left, right, value = pad if pad is not None else (False, 0, 0, 0)
    left, right = int(left), int(right)
    unit = -(-(left * es + length + right * es) // BLOCK) * BLOCK
    for i in range(count):
        so, do = i * (length + src_gap), i * (unit + dst_gap * BLOCK)
        block = d[do:do + unit]
        block[left * es:left * es + length] = s[so:so + length]
        elems = block.view(src.dtype)
        first, last = left, left + length // es
        if is_pad:
            elems[:first] = value
            elems[last:] = value
        elif left == 0 and right == 0:
            elems[last:] = elems[0]
    return out


# ----------------------------------------------------------------------------- declarations
# data_copy's count form is declared with the other system intrinsics (ops/system.py); its
# DataCopyParams form and the NumPy reference of both forms are added here.
REGISTRY["data_copy"] = dataclasses.replace(
    REGISTRY["data_copy"],
    forms=(("dst", "src", "count"), ("dst", "src", "repeat_params")),
    reference=data_copy_reference, dtypes=COPY_TYPES,
    doc="Copy GM→UB (MTE2), UB→GM (MTE3) or UB→UB: `count` elements (a byte length that is "
        "not a multiple of 32 is truncated down, as on hardware), or DataCopyParams("
        "block_count, block_len, src_stride, dst_stride) bursts with lengths and gaps in "
        "32-byte blocks.")

register(OpSpec(
    "data_copy_pad", Family.DATA_COPY, None, CostClass.DMA, COPY_TYPES,
    (("dst", "src", "data_copy_params", "pad_params"), ("dst", "src", "data_copy_params")),
    data_copy_pad_reference,
    doc="Unaligned copy: GM→UB with DataCopyExtParams (block_len in bytes) pads each burst to "
        "32 bytes (DataCopyPadExtParams: left/right padding elements and their value); UB→GM "
        "writes exactly block_len bytes per burst.",
    flops_per_elem=0))
