"""The op registry: every DSL intrinsic declared once.

The registry is one dict; the declarations are grouped by family in the modules of this package
(``vector.py``: element-wise ops; ``system.py``: contiguous data_copy, sync, queues, scalar
access, masks; ``convert.py``: cast/compare/select; ``reduce.py``: reductions; ``movement.py``:
strided and padded copies; ``debug.py``: printf/dump_tensor; ``vcopy.py``: copy; ``atomic.py``:
set_atomic_*; ``fused.py``: fused vector ops and casts; ``transpose.py``: transpose and
trans_data_to_5hd), imported at the bottom of this file in a fixed order (the order is the op
index the timing model's counters use).

An ``OpSpec`` gives the op's name, its call forms (parameter names), the dtypes it accepts, the
pipe it issues to, its cost class (read by the timing model), a NumPy reference and the name of
its lowering family. Element-wise vector ops also carry an element function used by codegen
(``elem``, written against the small ``ElemBuilder`` interface of ``codegen``) so that their
semantics live here and nowhere else. The type checker (sema), codegen, the timing model, the
tests and the docs all read ``REGISTRY``.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from ...dsl.types import (DataType, PipeID, bfloat16, float16, float32, int16, int32, uint16,
                         uint32)


class CostClass(enum.Enum):
    """Vector/MTE cost classes; the timing model maps each to cycles from the chip config."""

    SIMPLE = "simple"                  # add, sub, max, min, abs, adds, maxs, relu …
    MUL = "mul"                        # mul, muls
    TRANSCENDENTAL = "transcendental"  # exp
    LN = "ln"                          # ln (its own latency in Huawei's CA table)
    DIV_SQRT = "div_sqrt"              # sqrt (the name is historical: div has its own class)
    DIV = "div"                        # div (4 cycles per repeat in float32 too, unlike sqrt)
    RECIP = "recip"                    # reciprocal, rsqrt
    REDUCE = "reduce"                  # whole/reduce sums (CADD)
    REDUCE_MAX = "reduce_max"          # max/min reductions (CMAX/CMIN)
    BLOCK_REDUCE = "block_reduce"      # per-block reductions (CGADD, CGMAX, CGMIN)
    PAIR_REDUCE = "pair_reduce"        # pair reductions (CPADD)
    MADD = "madd"                      # axpy (multiply-add)
    CONVERT = "convert"
    DUP = "dup"
    DMA = "dma"
    SYNC = "sync"
    SCALAR = "scalar"
    NONE = "none"
    FMA = "fma"                        # fused_mul_add, mul_add_dst, fused_mul_add_relu (VMADD/VMLA)
    GATHER = "gather"                  # gather, scatter (VGATHER)
    GATHERB = "gatherb"                # gatherb (VGATHERB)
    GATHER_MASK = "gather_mask"        # gather_mask (VREDUCEV2)


class Family(enum.Enum):
    """Lowering families: how sema checks the call and which codegen routine lowers it."""

    BINARY = "binary"          # op(dst, src0, src1, count)
    UNARY = "unary"            # op(dst, src, count)
    SCALAR = "scalar"          # op(dst, src, scalar, count)
    DUPLICATE = "duplicate"    # op(dst, scalar, count)
    AXPY = "axpy"              # op(dst, src, scalar, count), dst is also read
    TERNARY = "ternary"        # op(dst, src0, src1, count), dst is also read (ops/fused.py)
    DATA_COPY = "data_copy"
    SYNC = "sync"
    QUEUE = "queue"
    SCALAR_MEM = "scalar_mem"  # get_value / set_value
    SYSTEM = "system"


FLOAT_TYPES = (float16, float32)
ARITH_TYPES = (int16, float16, int32, float32)


@dataclass(frozen=True)
class OpSpec:
    """One intrinsic. ``forms`` lists the accepted parameter-name tuples: the count form first,
    then (for vector ops) the masked form ``…, mask, repeat_times, repeat_params``."""

    name: str
    family: Family
    pipe: Optional[PipeID]
    cost: CostClass
    dtypes: tuple[DataType, ...] = ()
    forms: tuple[tuple[str, ...], ...] = ()
    reference: Optional[Callable] = None
    elem: Optional[Callable] = None
    doc: str = ""
    flops_per_elem: int = 1
    #: (dst dtype, src dtype) pairs allowed besides one dtype for all (mixed-precision axpy)
    mixed: tuple = ()
    #: largest repeat stride of the masked form (8-bit fields; Copy's repeat sizes are 12-bit)
    max_repeat_stride: int = 255


REGISTRY: dict[str, OpSpec] = {}


def register(spec: OpSpec) -> OpSpec:
    if spec.name in REGISTRY:
        raise ValueError(f"op {spec.name} declared twice")
    REGISTRY[spec.name] = spec
    return spec


# ----------------------------------------------------------------------------- references
def _in_dtype(fn):
    """Wrap a float reference so it computes in float32 and rounds to the input dtype."""

    def ref(*arrays, **kw):
        dtype = arrays[0].dtype
        if dtype == np.float16:
            out = fn(*[a.astype(np.float32) if isinstance(a, np.ndarray) else a
                       for a in arrays], **kw)
            return np.asarray(out).astype(np.float16)
        with np.errstate(all="ignore"):
            out = fn(*arrays, **kw)
        return np.asarray(out).astype(dtype)

    return ref


def _wrap_int(fn):
    def ref(*arrays):
        dtype = arrays[0].dtype
        if np.issubdtype(dtype, np.integer):
            wide = [a.astype(np.int64) if isinstance(a, np.ndarray) else np.int64(a)
                    for a in arrays]
            return fn(*wide).astype(dtype)
        return _in_dtype(fn)(*arrays)

    return ref


def vector_ops() -> list[OpSpec]:
    """Every element-wise vector op (the ones with an element function)."""
    return [s for s in REGISTRY.values() if s.elem is not None]


from . import vector, system, convert, reduce, movement, debug, cube, matmul, crosscore, cube_init  # noqa: E402,F401,E501  (order = op index)
# issue 15 op families, after the others (their op indices are appended)
from . import vcopy, atomic, fused, transpose  # noqa: E402,F401
from . import gather, reduce_repeat, buf_pool, scalar_bits, deq, gather_mask  # noqa: E402,F401,E501  (opfamilies2)
from . import sort, bilinear  # noqa: E402,F401  (sortfamily: ops/sort.py, ops/bilinear.py)
from . import aipp  # noqa: E402,F401  (AIPP: ops/aipp.py)
from . import sysctl  # noqa: E402,F401  (pyasc-lang: cache/profiling/system calls)
from . import copy_records, cmpmask  # noqa: E402,F401  (pyasc-lang: records, CMPMASK register)
from . import add_deq  # noqa: E402,F401  (pyasc-lang: add_deq_relu)
from . import load3d  # noqa: E402,F401  (conv19: ops/load3d.py, img2col)
from . import ib_sync  # noqa: E402,F401  (pyasc-sync: ib_set/ib_wait, notify/wait_pre_block)
from . import cube_sparse  # noqa: E402,F401  (pyasc15: 2:4 sparse cube, Load2Dv2, cube registers)
