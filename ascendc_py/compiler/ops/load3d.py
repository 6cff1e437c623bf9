"""The cube's img2col load (Load3Dv2 on A2/A3): ``load_data(dst, src, LoadData3DParamsV2(...))``.

Semantics (Ascend C docs, "Load3D": image to column, A1 → A2 and B1 → B2; the element order
below is the one the FracZ weight layout pairs with, our reading of the docs; where they are
silent we chose and say so in the README, section "Convolution"):

* **Source**: one image of an L1 feature map in NC1HWC0: ``channel_size / C0`` channel blocks
  of ``l1_h × l1_w`` pixels of ``C0`` channels (C0 = 32 bytes / element size: 16 for
  float16/bfloat16, 8 for float32, 32 for int8), element (c1, h, w, c0) at
  ``((c1·l1_h + h)·l1_w + w)·C0 + c0``.
* **The img2col matrix** (M × K): the convolution windows of a ``filter_h × filter_w`` kernel
  (``+256`` each with ``filter_size_h/w``) with strides ``stride_h/w``, dilations
  ``dilation_filter_h/w`` and padding ``pad_list = (left, right, top, bottom)`` over the
  ``l1_h × l1_w`` map. Row m is window (ho, wo) = (m // Wo, m % Wo), ``Wo = (l1_w + left + right
  − dilation_w·(filter_w − 1) − 1) // stride_w + 1`` (Ho likewise); column k is
  (c1, kh, kw, c0) = k in the order ``((c1·filter_h + kh)·filter_w + kw)·C0 + c0``, so
  ``K = filter_h·filter_w·channel_size``. Its value is the source pixel at
  ``h = ho·stride_h − top + kh·dilation_h``, ``w = wo·stride_w − left + kw·dilation_w``, or
  ``pad_value`` where that lies outside the map.
* **The part loaded**: rows ``m_start_pt .. m_start_pt + m_extension`` (rounded up to whole
  16-row fractals; the extra rows follow the same rule) and columns ``k_start_pt ..
  k_start_pt + k_extension`` (whole C0 groups). At A2 (L0A) they form the left matrix in the
  ZZ layout (fractal (i//16, g) at ``(i//16·K1 + g)·512`` bytes, K1 = k_extension / C0); at B2
  (L0B) the transposed block (k × m) forms the right matrix in the ZN layout (fractal
  (g, i//16) at ``(g·M1 + i//16)·512``, M1 = ceil(m_extension / 16)).

``set_load_data_boundary(boundary)`` (Ascend C's SetLoadDataBoundary, the A1/B1 boundary
register of Load3D; bytes for Load3Dv2, 0 = none, else at least 1024): every block starts with
it 0; with a boundary set, the feature map must start below it and a read at L1 byte offset
``a >= boundary`` reads offset ``a − boundary`` (from the start of L1), as the docs say.

``set_load_data_repeat(LoadDataRepeatParam(repeat_time=1, repeat_stride=0, repeat_mode=0))``
(SetLoadDataRepeat) sets Load3Dv2's repeat register (every block starts with the defaults);
load_data 3D reads it: one iteration (repeat_time 1, any stride and mode) is the load above;
other repeat times are a run-time error at the load (the docs do not say which address, source
or destination, the stride advances, so repeats are not modelled).

**Registers** (Ascend C's Load3D state, per block, every block starting at 0): the *fmatrix*
(``l1_h``, ``l1_w``, the four pads) and the *padding value*. A load with ``LoadData3DParamsV2``
sets both from its fields first (pyasc's ``load_data`` passes Ascend C's default
``IsResetLoad3dConfig``, which resets them), then loads; ``set_load_data_padding_value(value)``
(SetLoadDataPaddingValue) sets the padding value (kept as a number, converted to the load's
dtype as a store converts).

**LoadData3DParamsV2Pro** (channel_size, en_transpose, en_small_k, filter_size_w,
filter_size_h, f_matrix_ctrl, ext_config, filter_config) is the same load with the window
fields packed in two 64-bit words and the map and padding taken from the registers (the last
V2 load or set_load_data_padding_value). The docs give the words but not their bit layout;
*chosen here* (:func:`v2pro_fields`), each field in LoadData3DParamsV2's order from the lowest
bits: ``ext_config`` = k_extension | m_extension << 16 | k_start_pt << 32 | m_start_pt << 48,
``filter_config`` = stride_w | stride_h << 8 | filter_w << 16 | filter_h << 24 |
dilation_filter_w << 32 | dilation_filter_h << 40 (the default 0x10101010101 is all ones).

Not modelled (errors at the line): Load3Dv1 (not an A2/A3 interface), ``en_transpose``,
``en_small_k``, ``f_matrix_ctrl`` (the right-matrix fmatrix), channel sizes that are not a
multiple of C0 (the 4-channel small-C forms).
"""
from __future__ import annotations

import numpy as np

from ...dsl.types import (PipeID, bfloat16, float16, float32, int8, int32, uint8, uint32)
from . import CostClass, Family, OpSpec, register

#: LoadData3DParamsV2's fields in pyasc's order, the four pads first (field, lowest, highest);
#: pad_value is checked against the dtype, not here
LOAD3D_V2_FIELDS = (
    ("pad_left", 0, 255), ("pad_right", 0, 255), ("pad_top", 0, 255), ("pad_bottom", 0, 255),
    ("l1_h", 1, 32767), ("l1_w", 1, 32767), ("channel_size", 1, 65535),
    ("k_extension", 1, 65535), ("m_extension", 1, 65535), ("k_start_pt", 0, 65535),
    ("m_start_pt", 0, 65535), ("stride_w", 1, 63), ("stride_h", 1, 63), ("filter_w", 1, 255),
    ("filter_h", 1, 255), ("dilation_filter_w", 1, 255), ("dilation_filter_h", 1, 255),
    ("en_transpose", 0, 0), ("filter_size_w", 0, 1), ("filter_size_h", 0, 1),
    ("f_matrix_ctrl", 0, 0))
#: checks beyond a field's range, reported through the same record (index = len(FIELDS) + i)
LOAD3D_RULES = (
    ("align:channel_size", "a multiple of C0 (32 bytes of channels)"),
    ("align:k_start_pt", "a multiple of C0 (K is loaded in whole C0 groups)"),
    ("align:k_extension", "a multiple of C0 (K is loaded in whole C0 groups)"),
    ("span:k_start_pt + k_extension", "at most K = filter_h·filter_w·channel_size"),
    ("span:output size", "at least one window (Ho, Wo >= 1) for this map, kernel and padding"),
    ("span:m_start_pt + m_extension", "at most Ho·Wo rounded up to 16"),
    ("boundary:set_load_data_boundary", "0 (none) or at least 1024 bytes"),
    ("boundary:the feature map's L1 start", "below the boundary set_load_data_boundary set"),
    ("boundary:the feature map's bytes", "at most the boundary set_load_data_boundary set"),
    ("repeat:set_load_data_repeat's repeat_time",
     "1 (one iteration; Load3Dv2 repeats are not modelled)"),
)
#: LoadDataRepeatParam in pyasc's order (field, default, lowest, highest; the docs' ranges)
REPEAT_FIELDS = (("repeat_time", 1, 0, 255), ("repeat_stride", 0, 0, 65535),
                 ("repeat_mode", 0, 0, 1))
#: the smallest non-zero Load3Dv2 boundary (bytes; the docs' SetLoadDataBoundary constraint)
BOUNDARY_MIN = 1024
#: dtypes Load3Dv2 moves on A2/A3 per destination (int4 not modelled)
LOAD3D_TYPES_A = (int8, uint8, float16, bfloat16, uint32, int32, float32)
LOAD3D_TYPES_B = (float16, bfloat16, uint32, int32, float32)


#: LoadData3DParamsV2Pro in pyasc's order (field, default)
V2PRO_FIELDS = (("channel_size", 0), ("en_transpose", False), ("en_small_k", False),
                ("filter_size_w", False), ("filter_size_h", False), ("f_matrix_ctrl", False),
                ("ext_config", 0), ("filter_config", 0x10101010101))
#: the packed words' fields (LOAD3D_V2_FIELDS names): (word, name, lowest bit, width)
V2PRO_PACKING = (("ext_config", "k_extension", 0, 16), ("ext_config", "m_extension", 16, 16),
                 ("ext_config", "k_start_pt", 32, 16), ("ext_config", "m_start_pt", 48, 16),
                 ("filter_config", "stride_w", 0, 8), ("filter_config", "stride_h", 8, 8),
                 ("filter_config", "filter_w", 16, 8), ("filter_config", "filter_h", 24, 8),
                 ("filter_config", "dilation_filter_w", 32, 8),
                 ("filter_config", "dilation_filter_h", 40, 8))
#: the fmatrix register's fields
FMATRIX_FIELDS = ("pad_left", "pad_right", "pad_top", "pad_bottom", "l1_h", "l1_w")


def v2pro_fields(ext_config: int, filter_config: int) -> dict:
    """The LoadData3DParamsV2 fields packed in V2Pro's two words (the layout chosen above)."""
    words = {"ext_config": int(ext_config), "filter_config": int(filter_config)}
    return {name: (words[w] >> lo) & ((1 << width) - 1) for w, name, lo, width in V2PRO_PACKING}


def v2pro_words(**fields) -> tuple[int, int]:
    """(ext_config, filter_config) packing LoadData3DParamsV2 fields (missing ones: 0 in
    ext_config, 1 in filter_config)."""
    out = {"ext_config": 0, "filter_config": 0}
    for w, name, lo, width in V2PRO_PACKING:
        v = int(fields.get(name, 0 if w == "ext_config" else 1))
        out[w] |= (v & ((1 << width) - 1)) << lo
    return out["ext_config"], out["filter_config"]


def c0_of(itemsize: int) -> int:
    """Channels of one 32-byte C0 group for an element of ``itemsize`` bytes."""
    return 32 // itemsize


def output_size(l1: int, pad_a: int, pad_b: int, filt: int, dil: int, stride: int) -> int:
    """Windows along one axis (Ho or Wo); < 1 when the kernel does not fit."""
    return (l1 + pad_a + pad_b - dil * (filt - 1) - 1) // stride + 1


def img2col_matrix(fmap: np.ndarray, c1: int, l1_h: int, l1_w: int, pads, filt, stride, dil,
                   pad_value) -> np.ndarray:
    """The whole img2col matrix (Ho·Wo × filter_h·filter_w·c1·C0) of the NC1HWC0 image
    ``fmap`` (flat, C0 = 32 / itemsize), rows (ho, wo), columns (c1, kh, kw, c0)."""
    left, right, top, bottom = pads
    fh, fw = filt
    sh, sw = stride
    dh, dw = dil
    c0 = c0_of(fmap.itemsize)
    img = fmap[:c1 * l1_h * l1_w * c0].reshape(c1, l1_h, l1_w, c0)
    ho_n = output_size(l1_h, top, bottom, fh, dh, sh)
    wo_n = output_size(l1_w, left, right, fw, dw, sw)
    padded = np.full((c1, l1_h + top + bottom + dh * fh + sh, l1_w + left + right + dw * fw + sw,
                      c0), pad_value, fmap.dtype)
    padded[:, top:top + l1_h, left:left + l1_w] = img
    out = np.empty((ho_n, wo_n, c1, fh, fw, c0), fmap.dtype)
    for kh in range(fh):
        for kw in range(fw):
            rows = padded[:, kh * dh:kh * dh + sh * ho_n:sh, kw * dw:kw * dw + sw * wo_n:sw]
            out[:, :, :, kh, kw] = rows.transpose(1, 2, 0, 3)
    return out.reshape(ho_n * wo_n, c1 * fh * fw * c0)


def load3d_reference(dst: np.ndarray, src: np.ndarray, params, to_l0b: bool = False
                     ) -> np.ndarray:
    """``dst`` (flat L0A or L0B elements) after ``load_data(dst, src, LoadData3DParamsV2(
    *params))``; ``params`` = the 21 fields of ``LOAD3D_V2_FIELDS`` then ``pad_value`` (a value
    of the dtype). Rows past Ho·Wo of the last fractal read as windows further down the map."""
    (left, right, top, bottom, l1_h, l1_w, ch, k_ext, m_ext, k_start, m_start, sw, sh, fw, fh,
     dw, dh, _tr, fsw, fsh, _fmc, pad_value) = params
    fw, fh = fw + 256 * fsw, fh + 256 * fsh
    c0 = c0_of(src.itemsize)
    c1 = ch // c0
    rows = -(-m_ext // 16) * 16
    wo_n = output_size(l1_w, left, right, fw, dw, sw)
    img = src[:c1 * l1_h * l1_w * c0].reshape(c1, l1_h, l1_w, c0)
    mat = np.empty((rows, k_ext), src.dtype)
    m = np.arange(m_start, m_start + rows)
    ho, wo = m // wo_n, m % wo_n
    for g in range(k_ext // c0):
        k = k_start + g * c0
        cb, rem = divmod(k // c0, fh * fw)
        kh, kw = divmod(rem, fw)
        h = ho * sh - top + kh * dh
        w = wo * sw - left + kw * dw
        inside = (h >= 0) & (h < l1_h) & (w >= 0) & (w < l1_w)
        block = np.full((rows, c0), pad_value, src.dtype)
        block[inside] = img[cb, h[inside], w[inside]]
        mat[:, g * c0:(g + 1) * c0] = block
    out = dst.copy()
    groups = k_ext // c0
    m1 = rows // 16
    for i in range(rows):
        for g in range(groups):
            frac = (g * m1 + i // 16) if to_l0b else (i // 16 * groups + g)
            at = frac * 16 * c0 + (i % 16) * c0
            out[at:at + c0] = mat[i, g * c0:(g + 1) * c0]
    return out


register(OpSpec(
    "load_data_3d", Family.DATA_COPY, PipeID.PIPE_MTE1, CostClass.DMA, LOAD3D_TYPES_A,
    (("dst", "src", "params"),), load3d_reference,
    doc="img2col (Load3Dv2): asc.load_data(dst_A2_or_B2, src_A1_or_B1, LoadData3DParamsV2("
        "pad_list, l1_h, l1_w, channel_size, k_extension, m_extension, k_start_pt, m_start_pt, "
        "stride_w, stride_h, filter_w, filter_h, dilation_filter_w, dilation_filter_h, "
        "en_transpose, pad_value, filter_size_w, filter_size_h, f_matrix_ctrl)) from an "
        "NC1HWC0 feature map in L1 to ZZ (L0A) / ZN (L0B) fractals; or with "
        "LoadData3DParamsV2Pro(channel_size, en_transpose, en_small_k, filter_size_w, "
        "filter_size_h, f_matrix_ctrl, ext_config, filter_config), the map and pad value from "
        "the registers the last V2 load / set_load_data_padding_value set.", flops_per_elem=0))

register(OpSpec(
    "set_load_data_boundary", Family.SYSTEM, PipeID.PIPE_S, CostClass.SCALAR, (),
    (("boundary",),), None,
    doc="set_load_data_boundary(boundary): the L1 boundary (bytes; 0 = none, else >= 1024) of "
        "load_data 3D: reads of the feature map at or past it wrap to the start of L1",
    flops_per_elem=0))
register(OpSpec(
    "set_load_data_repeat", Family.SYSTEM, PipeID.PIPE_S, CostClass.SCALAR, (),
    (("param",),), None,
    doc="set_load_data_repeat(LoadDataRepeatParam(repeat_time=1, repeat_stride=0, "
        "repeat_mode=0)): Load3Dv2's repeat register, read by load_data 3D (one iteration "
        "modelled)", flops_per_elem=0))
register(OpSpec(
    "set_load_data_padding_value", Family.SYSTEM, PipeID.PIPE_S, CostClass.SCALAR, (),
    (("pad_value",),), None,
    doc="set_load_data_padding_value(value): the Load3D padding register, read by load_data "
        "with LoadData3DParamsV2Pro (a LoadData3DParamsV2 load sets it from its pad_value)",
    flops_per_elem=0))
