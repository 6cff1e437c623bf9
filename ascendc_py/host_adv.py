"""Host-side temporary-buffer queries of the high-level math APIs (Ascend C's
``GetXxxMaxMinTmpSize`` in pyasc's snake_case): ``get_tanh_max_min_tmp_size(src_shape,
type_size, is_reuse_source=False) -> (max_value, min_value)`` in bytes, one per
``asc.adv`` math function.

As Ascend C documents: a kernel must give the API at least ``min_value`` bytes (a smaller
``temp_buffer`` stops the kernel at the call with a ``KernelAssertionError``); up to
``max_value`` bytes a larger buffer means fewer, longer instructions; beyond ``max_value``
nothing more is used; 0 means no temporary buffer is needed. The numbers are ours (they follow
from our algorithms, see ``ascendc_py/advlib/_core.py``): an API whose body needs ``k`` float32
scratch regions takes ``(k + 2) * 256`` bytes at least and ``(k + 2) * 4 * align64(count)`` at
most. ``log`` and ``exp`` with ``taylor_expand_level = 0`` use no temporary buffer; exp's query
answers for a Taylor level > 0.
"""
from __future__ import annotations

import math
from typing import Iterable, Union

from .advlib import activation as _activation
from .advlib.math import BODY_REGIONS, MATH_APIS, REPEAT

__all__ = ["math_tmp_size", "MATH_TMP_QUERIES"] + [f"get_{n}_max_min_tmp_size"
                                                  for n in MATH_APIS]

Shape = Union[int, Iterable[int]]


def _count(shape: Shape) -> int:
    if isinstance(shape, int):
        dims = [shape]
    else:
        dims = [int(d) for d in getattr(shape, "dims", shape)]
    if any(d < 0 for d in dims):
        raise ValueError(f"shape {dims} has a negative dimension")
    return math.prod(dims)


def _align(n: int, a: int) -> int:
    return max(-(-n // a) * a, a)


def math_tmp_size(api: str, src_shape: Shape, type_size: int,
                  is_reuse_source: bool = False) -> tuple[int, int]:
    """(max_value, min_value) in bytes of the temporary buffer of ``asc.adv.<api>`` for
    ``src_shape`` elements of ``type_size`` bytes (2: float16/int16, 4: float32)."""
    if api not in MATH_APIS:
        raise ValueError(f"unknown math API {api!r}; known: {', '.join(MATH_APIS)}")
    if type_size not in (2, 4):
        raise ValueError(f"type_size must be 2 (half, int16) or 4 (float), got {type_size}")
    n = _count(src_shape)
    if api == "log":
        return 0, 0
    if api == "xor":
        return 2 * _align(n, 2 * REPEAT), 4 * REPEAT
    if api == "axpy":
        return 4 * _align(n, REPEAT), 4 * REPEAT
    regions = BODY_REGIONS[api] + 2
    return regions * 4 * _align(n, REPEAT), regions * 4 * REPEAT


def _query(api: str):
    def query(src_shape: Shape, type_size: int, is_reuse_source: bool = False
              ) -> tuple[int, int]:
        return math_tmp_size(api, src_shape, type_size, is_reuse_source)
    query.__name__ = query.__qualname__ = f"get_{api}_max_min_tmp_size"
    query.__doc__ = (f"Ascend C's Get{api.capitalize()}MaxMinTmpSize: (max_value, min_value) "
                     f"in bytes of asc.adv.{api}'s temp_buffer for src_shape elements of "
                     f"type_size bytes.")
    return query


#: api name -> its query function
MATH_TMP_QUERIES = {n: _query(n) for n in MATH_APIS}
globals().update({f"get_{n}_max_min_tmp_size": q for n, q in MATH_TMP_QUERIES.items()})


# ----------------------------------------------------------------------------- softmax
def _rows(src_shape: Shape) -> tuple[int, int]:
    """(m, k): the product of the non-last dimensions and the last one."""
    dims = [src_shape] if isinstance(src_shape, int) else \
        [int(d) for d in getattr(src_shape, "dims", src_shape)]
    if not dims or any(d < 0 for d in dims):
        raise ValueError(f"src_shape {dims} must have dimensions >= 0")
    return math.prod(dims[:-1]), dims[-1]


def _softmax_bytes(rows: int, k: int) -> int:
    work = -(-2 * -(-k // 64) // 8) * 8              # ReduceMax's float32 work area
    return (8 + work + 2 * rows * k) * 4


def _check_size(data_type_size: int) -> None:
    if data_type_size not in (2, 4):
        raise ValueError(f"data_type_size (of max and sum) must be 2 (half) or 4 (float), got "
                         f"{data_type_size}")


def get_softmax_max_tmp_size(src_shape: Shape, data_type_size: int,
                             is_reuse_source: bool = False) -> int:
    """Ascend C's GetSoftMaxMaxTmpSize: bytes of asc.adv.softmax's temp_buffer that hold all
    rows of ``src_shape`` in one pass (``data_type_size``: of max and sum; our rule, see
    ``ascendc_py/advlib/softmax.py``)."""
    _check_size(data_type_size)
    m, k = _rows(src_shape)
    return _softmax_bytes(m, k) if m * k else 0


def get_softmax_min_tmp_size(src_shape: Shape, data_type_size: int,
                             is_reuse_source: bool = False) -> int:
    """Ascend C's GetSoftMaxMinTmpSize: the smallest temp_buffer of asc.adv.softmax (one row
    per pass)."""
    _check_size(data_type_size)
    m, k = _rows(src_shape)
    return _softmax_bytes(1, k) if m * k else 0


def softmax_tiling_func(src_shape: Shape, data_type_size: int, local_work_space_size: int,
                        softmax_tiling=None):
    """Ascend C's SoftMaxTilingFunc: fill (and return) an ``asc.adv.SoftmaxTiling`` for
    ``src_shape`` ([..., k], rows of k elements) and a temp_buffer of
    ``local_work_space_size`` bytes: split_m is the rows per pass that fit the buffer (all
    rows at most); range_m passes of split_m rows, then tail_m rows. ValueError below
    get_softmax_min_tmp_size."""
    from .adv import SoftmaxTiling
    _check_size(data_type_size)
    m, k = _rows(src_shape)
    t = softmax_tiling if softmax_tiling is not None else SoftmaxTiling()
    if m * k and local_work_space_size < _softmax_bytes(1, k):
        raise ValueError(f"local_work_space_size {local_work_space_size} is below the "
                         f"minimum {_softmax_bytes(1, k)} bytes for rows of {k} elements")
    split = 0
    if m * k:
        split = min(m, (local_work_space_size // 4 - (_softmax_bytes(0, k) // 4)) // (2 * k))
    reduce_k = 32 // data_type_size
    t.src_m, t.src_k, t.src_size = m, k, m * k
    t.out_max_m, t.out_max_k, t.out_max_size = m, reduce_k, m * reduce_k
    t.split_m, t.split_k, t.split_size = split, k, split * k
    t.reduce_m, t.reduce_k, t.reduce_size = split, reduce_k, split * reduce_k
    t.range_m = m // split if split else 0
    t.tail_m = m - t.range_m * split
    t.tail_split_size, t.tail_reduce_size = t.tail_m * k, t.tail_m * reduce_k
    return t


__all__ += ["get_softmax_max_tmp_size", "get_softmax_min_tmp_size", "softmax_tiling_func"]


# ----------------------------------------------------------------------------- rmsnorm
def _bsh(shape: Shape, what: str) -> tuple[int, int, int]:
    dims = [int(d) for d in getattr(shape, "dims", shape)]
    if len(dims) != 3 or any(d < 0 for d in dims):
        raise ValueError(f"{what} must be [B, S, H] with dimensions >= 0, got {dims}")
    return dims[0], dims[1], dims[2]


def _rms_norm_bytes(rows: int, h: int, type_size: int) -> int:
    if type_size == 2:
        return (16 + h + 2 * rows * h) * 4
    return (16 + rows * h) * 4


def get_rms_norm_max_min_tmp_size(src_shape: Shape, type_size: int,
                                  is_basic_block: bool = False) -> tuple[int, int]:
    """Ascend C's GetRmsNormMaxMinTmpSize: (max_value, min_value) in bytes of asc.adv.rmsnorm's
    temp_buffer for a [B, S, H] src of ``type_size`` bytes (2: half, 4: float): all rows in one
    pass / one row per pass (our rule, see ``ascendc_py/advlib/normalization.py``)."""
    if type_size not in (2, 4):
        raise ValueError(f"type_size must be 2 (half) or 4 (float), got {type_size}")
    b, s, h = _bsh(src_shape, "src_shape")
    if b * s * h == 0:
        return 0, 0
    return _rms_norm_bytes(b * s, h, type_size), _rms_norm_bytes(1, h, type_size)


def get_rms_norm_tiling_info(src_shape: Shape, origin_src_shape: Shape,
                             stack_buffer_byte_size: int, type_size: int, tiling=None,
                             is_basic_block: bool = False):
    """Ascend C's GetRmsNormTilingInfo: fill (and return) an ``asc.adv.RmsNormTiling`` for a
    [B, S, H] src (H 32-byte aligned) whose valid rows are origin_src_shape's H, and a
    temp_buffer of ``stack_buffer_byte_size`` bytes: main_bs_length rows per pass (all rows at
    most), loop_round full passes, then tail_bs_length rows from input_tail_pos.
    reciprocal_of_h_length = float32(1 / original H). ValueError below the minimum size."""
    import numpy as np

    from .adv import RmsNormTiling
    if type_size not in (2, 4):
        raise ValueError(f"type_size must be 2 (half) or 4 (float), got {type_size}")
    b, s, h = _bsh(src_shape, "src_shape")
    ob, os_, oh = _bsh(origin_src_shape, "origin_src_shape")
    if (ob, os_) != (b, s) or oh > h or (h * type_size) % 32:
        raise ValueError(f"src_shape {[b, s, h]} must have H 32-byte aligned and "
                         f"origin_src_shape {[ob, os_, oh]} the same B, S and H <= it")
    rows = b * s
    lo = _rms_norm_bytes(1, h, type_size)
    if rows * h and stack_buffer_byte_size < lo:
        raise ValueError(f"stack_buffer_byte_size {stack_buffer_byte_size} is below the "
                         f"minimum {lo} bytes")
    main = 0
    if rows * h:
        per_row = (2 if type_size == 2 else 1) * h * 4
        main = min(rows, (stack_buffer_byte_size - _rms_norm_bytes(0, h, type_size)) // per_row)
    t = tiling if tiling is not None else RmsNormTiling()
    t.b_length, t.s_length, t.h_length, t.original_h_length = b, s, h, oh
    t.reciprocal_of_h_length = float(np.float32(1.0) / np.float32(oh)) if oh else 0.0
    t.main_bs_length, t.main_bsh_length = main, main * h
    t.main_bs_length_align = -(-main // 8) * 8
    t.loop_round = rows // main if main else 0
    t.input_tail_pos = t.loop_round * main * h
    t.tail_bs_length = rows - t.loop_round * main
    t.tail_bsh_length = t.tail_bs_length * h
    return t


__all__ += ["get_rms_norm_max_min_tmp_size", "get_rms_norm_tiling_info"]


# ----------------------------------------------------------------------------- layernorm
def _layer_norm_layout(rows: int, h: int, type_size: int, per_pass: int) -> dict:
    """float32 element offsets/sizes of asc.adv.layernorm's temporary buffer (our rule)."""
    half = type_size == 2
    sa = -(-rows // 8) * 8 if half else 0
    regions = 3 if half else 2
    fixed = 16 + 2 * sa + (2 * h if half else 0)
    return {"sa": sa, "regions": regions, "fixed": fixed,
            "total": fixed + regions * per_pass * h}


def get_layer_norm_max_min_tmp_size(src_shape: Shape, type_size: int,
                                    is_reuse_source: bool = False) -> tuple[int, int]:
    """Ascend C's GetLayerNormMaxMinTmpSize: (max_value, min_value) in bytes of
    asc.adv.layernorm's temp_buffer for a [B, S, H] input of ``type_size`` bytes: all rows in
    one pass / one row per pass (our rule, see ``ascendc_py/advlib/layernorm.py``)."""
    if type_size not in (2, 4):
        raise ValueError(f"type_size must be 2 (half) or 4 (float), got {type_size}")
    b, s, h = _bsh(src_shape, "src_shape")
    rows = b * s
    if rows * h == 0:
        return 0, 0
    return (_layer_norm_layout(rows, h, type_size, rows)["total"] * 4,
            _layer_norm_layout(rows, h, type_size, 1)["total"] * 4)


def get_layer_norm_nd_tiling_info(src_shape: Shape, stack_buffer_size: int, type_size: int,
                                  is_reuse_source: bool = False, tiling=None,
                                  origin_src_shape: Shape = None):
    """Ascend C's GetLayerNormNDTilingInfo: fill (and return) an ``asc.adv.LayerNormTiling``
    for a [B, S, H] input (H 32-byte aligned; ``origin_src_shape``'s H, when given, is the
    valid part of a row) and a temp_buffer of ``stack_buffer_size`` bytes: one_tmp_size =
    (rows per pass) * H float32 elements, the most rows that fit (all at most);
    number_of_tmp_buf the row regions; the mean/variance positions and sizes those of the
    float32 statistics (float16 only); tmp_buf_size the float32 elements used. ValueError below
    the minimum size."""
    from .adv import LayerNormTiling
    if type_size not in (2, 4):
        raise ValueError(f"type_size must be 2 (half) or 4 (float), got {type_size}")
    b, s, h = _bsh(src_shape, "src_shape")
    oh = h if origin_src_shape is None else _bsh(origin_src_shape, "origin_src_shape")[2]
    if oh > h or (h * type_size) % 32:
        raise ValueError(f"src_shape {[b, s, h]} must have H 32-byte aligned and the original "
                         f"H ({oh}) <= it")
    rows = b * s
    lay = _layer_norm_layout(rows, h, type_size, 0)
    lo = _layer_norm_layout(rows, h, type_size, 1)["total"] * 4
    if rows * h and stack_buffer_size < lo:
        raise ValueError(f"stack_buffer_size {stack_buffer_size} is below the minimum {lo} "
                         f"bytes")
    per = min(rows, (stack_buffer_size // 4 - lay["fixed"]) // (lay["regions"] * h)) \
        if rows * h else 0
    t = tiling if tiling is not None else LayerNormTiling()
    t.b_length, t.s_length, t.h_length, t.original_h_length = b, s, h, oh
    t.input_x_size, t.mean_var_size = rows * h, rows
    t.number_of_tmp_buf = lay["regions"]
    t.mean_tmp_tensor_pos, t.mean_tmp_tensor_size = (16, lay["sa"]) if lay["sa"] else (0, 0)
    t.variance_tmp_tensor_pos = 16 + lay["sa"] if lay["sa"] else 0
    t.variance_tmp_tensor_size = lay["sa"]
    t.one_tmp_size = per * h
    t.tmp_buf_size = _layer_norm_layout(rows, h, type_size, per)["total"] if rows * h else 0
    return t


__all__ += ["get_layer_norm_max_min_tmp_size", "get_layer_norm_nd_tiling_info"]


# ----------------------------------------------------------------------------- activations
#: float32 regions of each activation API's temporary buffer, per chunk of 64k elements (the
#: APIs' own table, advlib/activation.py)
ACTIVATION_REGIONS = _activation.REGIONS


def activation_tmp_size(api: str, src_shape: Shape, type_size: int,
                        is_reuse_source: bool = False) -> tuple[int, int]:
    """(max_value, min_value) in bytes of ``asc.adv.<api>``'s temp_buffer (gelu, faster_gelu,
    silu, swiglu, geglu) for ``src_shape`` elements of ``type_size`` bytes: the math APIs'
    rule, ``regions * 4 * align64(count)`` at most and ``regions * 256`` at least."""
    if api not in ACTIVATION_REGIONS:
        raise ValueError(f"unknown activation API {api!r}; known: "
                         f"{', '.join(ACTIVATION_REGIONS)}")
    if type_size not in (2, 4):
        raise ValueError(f"type_size must be 2 (half) or 4 (float), got {type_size}")
    r = ACTIVATION_REGIONS[api]
    return r * 4 * _align(_count(src_shape), REPEAT), r * 4 * REPEAT


def _activation_query(api: str, ascend: str):
    def query(src_shape: Shape, type_size: int, is_reuse_source: bool = False
              ) -> tuple[int, int]:
        return activation_tmp_size(api, src_shape, type_size, is_reuse_source)
    query.__name__ = query.__qualname__ = f"get_{api}_max_min_tmp_size"
    query.__doc__ = (f"Ascend C's {ascend}: (max_value, min_value) in bytes of "
                     f"asc.adv.{api}'s temp_buffer for src_shape elements of type_size bytes.")
    return query


get_gelu_max_min_tmp_size = _activation_query("gelu", "GetGeluMaxMinTmpSize")
get_faster_gelu_max_min_tmp_size = _activation_query("faster_gelu", "GetGeluMaxMinTmpSize "
                                                     "(FasterGelu)")
get_silu_max_min_tmp_size = _activation_query("silu", "Silu (no query in Ascend C; ours)")
get_swiglu_max_min_tmp_size = _activation_query("swiglu", "GetSwiGLUMaxMinTmpSize")
get_geglu_max_min_tmp_size = _activation_query("geglu", "GetGeGLUMaxMinTmpSize")

__all__ += ["activation_tmp_size", "ACTIVATION_REGIONS"] + \
    [f"get_{a}_max_min_tmp_size" for a in ACTIVATION_REGIONS]


# ----------------------------------------------------------------------------- quant
def get_ascend_quant_max_min_tmp_size(src_shape: Shape, type_size: int,
                                      is_reuse_source: bool = False) -> tuple[int, int]:
    """Ascend C's GetAscendQuantMaxMinTmpSize: (max_value, min_value) in bytes of
    asc.adv.quant's temp_buffer for ``src_shape`` elements of ``type_size`` bytes (2: half,
    4: float): the half intermediate of one chunk, 512 bytes at least, the whole count
    (``2 * align32(count)``, 512 at least) at most (our rule, see advlib/quant.py)."""
    from .advlib.quant import CHUNK_ALIGN, MIN_TMP
    if type_size not in (2, 4):
        raise ValueError(f"type_size must be 2 (half) or 4 (float), got {type_size}")
    n = _count(src_shape)
    return max(MIN_TMP, 2 * _align(n, CHUNK_ALIGN)), MIN_TMP


__all__ += ["get_ascend_quant_max_min_tmp_size"]


# ----------------------------------------------------------------------------- concat
def get_concat_tmp_size(elem_count: int, data_type_size: int) -> int:
    """Ascend C's GetConcatTmpSize (without the platform argument): bytes of asc.adv.concat's
    tmp. 0: on A2/A3 Concat is a move of the scores and needs no scratch (our rule, see
    advlib/sortreg.py)."""
    if data_type_size not in (2, 4):
        raise ValueError(f"data_type_size must be 2 (half) or 4 (float), got {data_type_size}")
    if elem_count < 0:
        raise ValueError(f"elem_count must be >= 0, got {elem_count}")
    return 0


__all__ += ["get_concat_tmp_size"]
