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
