"""Parameter records of pyasc's data-movement overloads (``SliceInfo``, ``DataCopyEnhancedParams``,
``Nz2NdParamsFull``, ``DataCopyCO12DstParams``) and
the enums they take (``BlockMode``, ``DeqScale``, ``pad_t``).

They are records, not instructions: constructing one checks every field (compile-time values
against the hardware field's range, Ascend C's types: ``uint16`` for the Nz2Nd and CO1 sizes and
strides, ``uint32`` for SliceInfo, ``uint8`` for the sid mode) and gives a value whose fields a
kernel can read (``p.n_size``). The data_copy overloads that take them (slice copies, the
enhanced DMA modes, NZ -> ND with every stride) are not implemented: passing one to
``asc.data_copy`` is a compile error naming the line. ``DataCopyCO12DstParams`` is consumed by
the L0C -> GM copy (sema/cube_sparse.py ``data_copy_co12``).
"""
from __future__ import annotations

import enum

from .cube import QuantModes


class BlockMode(enum.IntEnum):
    """pyasc's ``asc.BlockMode`` (Ascend C's enum, same values)."""
    BLOCK_MODE_NORMAL = 0
    BLOCK_MODE_MATRIX = 1
    BLOCK_MODE_VECTOR = 2
    BLOCK_MODE_SMALL_CHANNEL = 3
    BLOCK_MODE_DEPTHWISE = 4


class DeqScale(enum.IntEnum):
    """pyasc's ``asc.DeqScale``."""
    DEQ_NONE = 0
    DEQ = 1
    VDEQ = 2
    DEQ8 = 3
    VDEQ8 = 4
    DEQ16 = 5
    VDEQ16 = 6


class pad_t(enum.IntEnum):  # noqa: N801 - pyasc's (and Ascend C's) name
    """pyasc's ``asc.pad_t``."""
    PAD_NONE = 0
    PAD_MODE1 = 1
    PAD_MODE2 = 2
    PAD_MODE3 = 3
    PAD_MODE4 = 4
    PAD_MODE5 = 5
    PAD_MODE6 = 6
    PAD_MODE7 = 7
    PAD_MODE8 = 8


U8, U16, U32, U64 = (0, 2**8 - 1), (0, 2**16 - 1), (0, 2**32 - 1), (0, 2**64 - 1)
BOOL = "bool"

#: record → ((field, default or None when required, range | BOOL | enum class), ...) in pyasc's
#: positional order
RECORDS = {
    "SliceInfo": (("start_index", 0, U32), ("end_index", 31, U32), ("stride", 0, U32),
                  ("burst_len", 32, U32), ("shape_value", 0, U32)),
    "DataCopyEnhancedParams": (("block_mode", BlockMode.BLOCK_MODE_NORMAL, BlockMode),
                               ("deq_scale", DeqScale.DEQ_NONE, DeqScale),
                               ("deq_value_in", 0, U64), ("sid_store_mode_in", 0, U8),
                               ("is_relu_in", False, BOOL), ("pad_mode_in", pad_t.PAD_NONE, pad_t),
                               ("pad_value_in", 0, U64)),
    "Nz2NdParamsFull": tuple((n, None, U16) for n in (
        "nd_num", "n_value", "d_value", "src_nd_matrix_stride", "src_n_stride", "dst_d_stride",
        "dst_nd_matrix_stride")),
    "DataCopyCO12DstParams": (("n_size", None, U16), ("m_size", None, U16),
                              ("dst_stride", None, U32), ("src_stride", None, U16),
                              ("quant_pre", QuantModes.NoQuant, QuantModes),
                              ("relu_pre", 0, U8), ("channel_split", False, BOOL),
                              ("nz2nd_en", False, BOOL)),
}
