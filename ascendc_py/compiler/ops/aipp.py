"""AIPP, the AI Core's image pre-processing on the way from GM to L1 (Ascend C
SetAippFunctions + LoadImageToLocal; pyasc ``asc.set_aipp_functions``, ``asc.load_image_to_local``).

``set_aipp_functions(src0[, src1], input_format, AippParams(dtype, ...))`` sets the AIPP
registers: the source image (GlobalTensors of 8-bit pixels: interleaved channels, or for
YUV420SP_U8 the Y plane ``src0`` and the interleaved UV plane ``src1``), its format and the
processing; nothing moves. ``load_image_to_local(dst, LoadImageToLocalParams(horiz_size,
vert_size, horiz_start_pos, vert_start_pos, src_horiz_size, top_pad_size, bot_pad_size,
left_pad_size, right_pad_size))`` then moves a ``vert_size`` x ``horiz_size`` crop at
(``vert_start_pos``, ``horiz_start_pos``) of that image (rows of ``src_horiz_size`` pixels) into
``dst`` (L1, the AippParams dtype) on MTE2, processed per pixel in this order:

1. input channels: RGB888_U8 (R, G, B); XRGB8888_U8 the first three bytes (X, R, G), as the
   hardware keeps them, or (R, G, B) with ``is_swap_ax`` (XRGB -> RGBX); ``is_swap_rb``
   reverses the three (R <-> B). YUV420SP_U8: (Y, U, V), Y from ``src0[r][c]``, U and V from
   ``src1[r // 2][2 (c // 2)]`` and the byte after (one pair per 2 x 2 pixels; UV rows of
   ``src_horiz_size`` bytes rounded up to even), ``is_swap_uv``
   exchanges U and V. YUV400_U8: one channel (Y);
2. colour-space conversion (``is_enable_csc``, three-channel formats): ``o_k = clamp(((sum_j
   M[k][j] (i_j - bias_in_j)) >> 8) + bias_out_k, 0, 255)`` with the arithmetic shift, which
   is the documented YUV->RGB form (bias_out 0) and RGB->YUV form (bias_in 0) at once;
3. data type conversion to the output dtype, per channel k: int8 ``clamp(p - mean_k, -128,
   127)``; float16 ``(p - mean_k - min_k) * var_k`` in float32, rounded to half once;
4. left/right padding (padding mode 0): ``left_pad_size`` / ``right_pad_size`` pixels of
   ``padding_value_ch<k>`` on each row;
5. channel padding: the channels are padded to 32 bytes (mode 0: 32 int8 or 16 half channels)
   or to 4 (mode 1) with ``c_padding_value``.

``dst`` receives ``rows x (left + horiz_size + right) x channels`` elements, row-major (HWC),
from its start; ``is_single_line_copy`` makes ``rows`` 1 (vert_size is ignored), else it is
``vert_size``. A source GlobalTensor of a wider dtype is read as its bytes (the register holds
an address).

What the documentation leaves open, chosen here (and stated in the README): the steps' order,
the clamp of step 2, the float32 arithmetic of step 3, the channels XRGB keeps with and without
the X move. Not simulated, refused with an error naming the line: padding modes 1..3
(replicate, block, mirror) and top/bottom padding (mode 0 pads left and right only, per the
documentation); colour-space conversion of YUV400 (the documentation excludes it).

Timing: one GM -> L1 copy of the bytes written, one burst per row (a data_copy's cost).
"""
from __future__ import annotations

import enum

import numpy as np

from ...dsl.types import PipeID, float16, int8
from . import CostClass, Family, OpSpec, register


class AippInputFormat(enum.IntEnum):
    """Source image formats (pyasc ``asc.AippInputFormat``, Ascend C's values)."""

    YUV420SP_U8 = 0
    XRGB8888_U8 = 1
    RGB888_U8 = 4
    YUV400_U8 = 9


#: bytes per source pixel (of src0) of each format, and the channels a pixel has
IN_CHANNELS = {AippInputFormat.RGB888_U8: 3, AippInputFormat.XRGB8888_U8: 4,
               AippInputFormat.YUV400_U8: 1, AippInputFormat.YUV420SP_U8: 1}
OUT_CHANNELS = {AippInputFormat.RGB888_U8: 3, AippInputFormat.XRGB8888_U8: 3,
                AippInputFormat.YUV400_U8: 1, AippInputFormat.YUV420SP_U8: 3}
AIPP_TYPES = (int8, float16)

#: AIPP parameter record -> ((field, default), ...), pyasc's names and defaults
RECORDS = {
    "AippPaddingParams": (("padding_mode", 0), ("padding_value_ch0", 0),
                          ("padding_value_ch1", 0), ("padding_value_ch2", 0),
                          ("padding_value_ch3", 0)),
    "AippSwapParams": (("is_swap_rb", False), ("is_swap_uv", False), ("is_swap_ax", False)),
    "AippSingleLineParams": (("is_single_line_copy", False),),
    "AippDataTypeConvParams": (("dtc_mean_ch0", 0), ("dtc_mean_ch1", 0), ("dtc_mean_ch2", 0),
                               ("dtc_min_ch0", 0.0), ("dtc_min_ch1", 0.0), ("dtc_min_ch2", 0.0),
                               ("dtc_var_ch0", 1.0), ("dtc_var_ch1", 1.0), ("dtc_var_ch2", 1.0),
                               ("dtc_round_mode", 0)),
    "AippChannelPaddingParams": (("c_padding_mode", 0), ("c_padding_value", 0)),
    "AippColorSpaceConvParams": (("is_enable_csc", False),) + tuple(
        (f"csc_matrix_r{r}_c{c}", 0) for r in range(3) for c in range(3)) + tuple(
        (f"csc_bias_{io}_{k}", 0) for io in ("in", "out") for k in range(3)),
}
#: LoadImageToLocalParams fields in pyasc's order, with its defaults
LOAD_IMAGE_FIELDS = (("horiz_size", 2), ("vert_size", 2), ("horiz_start_pos", 0),
                     ("vert_start_pos", 0), ("src_horiz_size", 2), ("top_pad_size", 0),
                     ("bot_pad_size", 0), ("left_pad_size", 0), ("right_pad_size", 0))


def padded_channels(out_dtype, c_padding_mode: int) -> int:
    """Channels per output pixel: 32 bytes' worth (mode 0) or 4 (mode 1)."""
    return 32 // np.dtype(out_dtype).itemsize if c_padding_mode == 0 else 4


def input_channels(image: np.ndarray, fmt: AippInputFormat, src_horiz_size: int, uv=None,
                   swap_rb: bool = False, swap_ax: bool = False,
                   swap_uv: bool = False) -> np.ndarray:
    """Step 1: the whole source image as [rows, src_horiz_size, channels] int64."""
    w = src_horiz_size
    if fmt == AippInputFormat.YUV420SP_U8:
        y = np.asarray(image, np.uint8).reshape(-1, w).astype(np.int64)
        pairs = np.asarray(uv, np.uint8).reshape(-1, (w + 1) // 2, 2)   # rows of even length
        rows, cols = np.arange(y.shape[0]) // 2, np.arange(w) // 2
        u, v = pairs[rows][:, cols, 0], pairs[rows][:, cols, 1]
        if swap_uv:
            u, v = v, u
        return np.stack([y, u.astype(np.int64), v.astype(np.int64)], axis=-1)
    pix = np.asarray(image, np.uint8).reshape(-1, w, IN_CHANNELS[fmt]).astype(np.int64)
    if fmt == AippInputFormat.YUV400_U8:
        return pix
    base = 1 if (fmt == AippInputFormat.XRGB8888_U8 and swap_ax) else 0
    order = [base + 2, base + 1, base] if swap_rb else [base, base + 1, base + 2]
    return pix[:, :, order]


def colour_space(px: np.ndarray, matrix, bias_in, bias_out) -> np.ndarray:
    """Step 2 on [..., 3] int64 pixels: clamp(((M (p - bias_in)) >> 8) + bias_out, 0, 255)."""
    m = np.asarray(matrix, np.int64).reshape(3, 3)
    centred = px - np.asarray(bias_in, np.int64)
    out = (np.einsum("kj,...j->...k", m, centred) >> 8) + np.asarray(bias_out, np.int64)
    return np.clip(out, 0, 255)


def aipp_reference(image: np.ndarray, fmt: AippInputFormat, out_dtype, *, horiz_size: int,
                   vert_size: int, horiz_start_pos: int = 0, vert_start_pos: int = 0,
                   src_horiz_size: int, left_pad_size: int = 0, right_pad_size: int = 0,
                   uv=None, swap_rb: bool = False, swap_ax: bool = False,
                   swap_uv: bool = False, single_line: bool = False, csc=None,
                   mean=(0, 0, 0), min_=(0.0, 0.0, 0.0), var=(1.0, 1.0, 1.0),
                   padding_values=(0, 0, 0), c_padding_mode: int = 0,
                   c_padding_value=0) -> np.ndarray:
    """What load_image_to_local writes: a flat array of ``rows * width * channels`` elements
    of ``out_dtype`` (int8 or float16). ``image``: the source bytes (uint8, flat; the Y plane
    for YUV420SP, ``uv`` its UV plane); ``csc``: (matrix 3x3, bias_in, bias_out) or None."""
    out_dtype = np.dtype(out_dtype)
    px = input_channels(image, fmt, src_horiz_size, uv, swap_rb, swap_ax, swap_uv)
    rows = 1 if single_line else vert_size
    crop = px[vert_start_pos:vert_start_pos + rows,
              horiz_start_pos:horiz_start_pos + horiz_size]
    if csc is not None:
        crop = colour_space(crop, *csc)
    n_in = crop.shape[-1]
    cols = []
    for k in range(n_in):
        p = crop[:, :, k]
        if out_dtype == np.int8:
            v = np.clip(p - int(mean[k]), -128, 127).astype(np.int8)
        else:
            v = ((p - int(mean[k])).astype(np.float32) - np.float32(np.float16(min_[k])))
            v = (v * np.float32(np.float16(var[k]))).astype(np.float16)
        cols.append(v)
    body = np.stack(cols, axis=-1)
    width = left_pad_size + horiz_size + right_pad_size
    n_c = padded_channels(out_dtype, c_padding_mode)
    out = np.empty((rows, width, n_c), out_dtype)
    out[...] = np.asarray(c_padding_value).astype(out_dtype)
    pads = np.array([padding_values[k] for k in range(n_in)]).astype(out_dtype)
    out[:, :left_pad_size, :n_in] = pads
    out[:, left_pad_size + horiz_size:, :n_in] = pads
    out[:, left_pad_size:left_pad_size + horiz_size, :n_in] = body
    return out.reshape(-1)


register(OpSpec("set_aipp_functions", Family.SYSTEM, PipeID.PIPE_S, CostClass.SCALAR, (),
                (("src0", "input_format", "config"), ("src0", "src1", "input_format", "config")),
                None, None, "set_aipp_functions(src0[, src1], input_format, AippParams(...)): "
                "the AIPP registers (source image, format, processing) for load_image_to_local",
                0))
register(OpSpec("load_image_to_local", Family.SYSTEM, PipeID.PIPE_MTE2, CostClass.DMA,
                AIPP_TYPES, (("dst", "load_data_params"),), aipp_reference, None,
                "load_image_to_local(dst, LoadImageToLocalParams(...)): a crop of the AIPP "
                "source image, channel-swapped, converted and padded, GM -> L1", 0))
