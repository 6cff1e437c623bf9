"""The op registry: every DSL intrinsic declared once.

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

from ..dsl.types import (DataType, PipeID, bfloat16, float16, float32, int16, int32, uint16,
                         uint32)


class CostClass(enum.Enum):
    """Vector/MTE cost classes; the timing model maps each to cycles from the chip config."""

    SIMPLE = "simple"                  # add, sub, max, min, abs, adds, maxs, relu …
    MUL = "mul"                        # mul, muls
    TRANSCENDENTAL = "transcendental"  # exp, ln
    DIV_SQRT = "div_sqrt"              # div, sqrt
    RECIP = "recip"                    # reciprocal, rsqrt
    REDUCE = "reduce"
    CONVERT = "convert"
    DUP = "dup"
    DMA = "dma"
    SYNC = "sync"
    SCALAR = "scalar"
    NONE = "none"


class Family(enum.Enum):
    """Lowering families: how sema checks the call and which codegen routine lowers it."""

    BINARY = "binary"          # op(dst, src0, src1, count)
    UNARY = "unary"            # op(dst, src, count)
    SCALAR = "scalar"          # op(dst, src, scalar, count)
    DUPLICATE = "duplicate"    # op(dst, scalar, count)
    DATA_COPY = "data_copy"
    SYNC = "sync"
    QUEUE = "queue"
    SCALAR_MEM = "scalar_mem"  # get_value / set_value
    SYSTEM = "system"


FLOAT_TYPES = (float16, float32)
ARITH_TYPES = (int16, float16, int32, float32)


@dataclass(frozen=True)
class OpSpec:
    """One intrinsic. ``forms`` lists the accepted parameter-name tuples (count form first)."""

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


# ----------------------------------------------------------------------------- element functions
# Each ``elem`` receives an ``ElemBuilder`` (codegen) and LLVM values of the op's dtype and
# returns the result value; ``eb`` hides float/int and float16 details.


def _binary(name, elem, ref, dtypes=ARITH_TYPES, cost=CostClass.SIMPLE, doc=""):
    register(OpSpec(name, Family.BINARY, PipeID.PIPE_V, cost, dtypes,
                    (("dst", "src0", "src1", "count"),), ref, elem, doc))


def _unary(name, elem, ref, dtypes=FLOAT_TYPES, cost=CostClass.SIMPLE, doc="", flops=1):
    register(OpSpec(name, Family.UNARY, PipeID.PIPE_V, cost, dtypes,
                    (("dst", "src", "count"),), ref, elem, doc, flops))


def _scalar(name, elem, ref, dtypes=ARITH_TYPES, cost=CostClass.SIMPLE, doc=""):
    register(OpSpec(name, Family.SCALAR, PipeID.PIPE_V, cost, dtypes,
                    (("dst", "src", "scalar", "count"),), ref, elem, doc))


_binary("add", lambda eb, a, b: eb.add(a, b), _wrap_int(lambda a, b: a + b),
        doc="dst[i] = src0[i] + src1[i]")
_binary("sub", lambda eb, a, b: eb.sub(a, b), _wrap_int(lambda a, b: a - b),
        doc="dst[i] = src0[i] - src1[i]")
_binary("mul", lambda eb, a, b: eb.mul(a, b), _wrap_int(lambda a, b: a * b), cost=CostClass.MUL,
        doc="dst[i] = src0[i] * src1[i]")
_binary("div", lambda eb, a, b: eb.div(a, b), _in_dtype(lambda a, b: a / b), dtypes=FLOAT_TYPES,
        cost=CostClass.DIV_SQRT, doc="dst[i] = src0[i] / src1[i]")
_binary("max", lambda eb, a, b: eb.max(a, b), _wrap_int(np.maximum),
        doc="dst[i] = max(src0[i], src1[i])")
_binary("min", lambda eb, a, b: eb.min(a, b), _wrap_int(np.minimum),
        doc="dst[i] = min(src0[i], src1[i])")

_scalar("adds", lambda eb, a, s: eb.add(a, s), _wrap_int(lambda a, s: a + s),
        doc="dst[i] = src[i] + scalar")
_scalar("muls", lambda eb, a, s: eb.mul(a, s), _wrap_int(lambda a, s: a * s), cost=CostClass.MUL,
        doc="dst[i] = src[i] * scalar")
_scalar("maxs", lambda eb, a, s: eb.max(a, s), _wrap_int(np.maximum),
        doc="dst[i] = max(src[i], scalar)")
_scalar("mins", lambda eb, a, s: eb.min(a, s), _wrap_int(np.minimum),
        doc="dst[i] = min(src[i], scalar)")
_scalar("leaky_relu", lambda eb, a, s: eb.select(eb.ge_zero(a), a, eb.mul(a, s)),
        _in_dtype(lambda a, s: np.where(a >= 0, a, a * s)), dtypes=FLOAT_TYPES,
        doc="dst[i] = src[i] if src[i] >= 0 else src[i] * scalar")

_unary("exp", lambda eb, a: eb.call_math("exp", a), _in_dtype(np.exp),
       cost=CostClass.TRANSCENDENTAL, doc="dst[i] = e ** src[i]")
_unary("ln", lambda eb, a: eb.call_math("log", a), _in_dtype(np.log),
       cost=CostClass.TRANSCENDENTAL, doc="dst[i] = natural log of src[i]")
_unary("abs", lambda eb, a: eb.abs(a), _in_dtype(np.abs), doc="dst[i] = |src[i]|")
_unary("sqrt", lambda eb, a: eb.call_math("sqrt", a), _in_dtype(np.sqrt),
       cost=CostClass.DIV_SQRT, doc="dst[i] = sqrt(src[i])")
_unary("relu", lambda eb, a: eb.max(a, eb.zero(a)), _wrap_int(lambda a: np.maximum(a, 0)),
       dtypes=(float16, int32, float32), doc="dst[i] = max(src[i], 0)")

register(OpSpec("duplicate", Family.DUPLICATE, PipeID.PIPE_V, CostClass.DUP,
                (int16, uint16, float16, bfloat16, int32, uint32, float32),
                (("dst", "scalar", "count"),),
                lambda dst, s: np.full_like(dst, s), lambda eb, s: s,
                "dst[i] = scalar", 0))

# ----------------------------------------------------------------------------- data movement
register(OpSpec("data_copy", Family.DATA_COPY, None, CostClass.DMA, (),
                (("dst", "src", "count"),),
                doc="Copy count elements GM→UB (MTE2), UB→GM (MTE3) or UB→UB (V). A byte "
                    "length that is not a multiple of 32 is truncated down, as on hardware.",
                flops_per_elem=0))

# ----------------------------------------------------------------------------- synchronisation
for _name, _doc in (("set_flag", "Set flag (event, id) once all earlier work of the source "
                                 "pipe completes."),
                    ("wait_flag", "Block the destination pipe until flag (event, id) is set, "
                                  "then clear it."),
                    ("pipe_barrier", "Later instructions of the pipe wait for all earlier "
                                     "ones.")):
    register(OpSpec(_name, Family.SYNC, None, CostClass.SYNC, (),
                    (("event", "event_id"),) if _name != "pipe_barrier" else (("pipe",),),
                    doc=_doc, flops_per_elem=0))

# ----------------------------------------------------------------------------- queues and buffers
for _name, _doc in (("init_buffer", "Reserve num buffers of len bytes (rounded up to 32 B) "
                                    "for a TQue, or len bytes for a TBuf."),
                    ("alloc_tensor", "Take a free buffer of the queue."),
                    ("enque", "Hand a tensor to the consumer side of the queue."),
                    ("deque", "Take the oldest enqueued tensor."),
                    ("free_tensor", "Return the tensor's buffer to the queue."),
                    ("tbuf_get", "The TBuf's memory as a LocalTensor.")):
    register(OpSpec(_name, Family.QUEUE, None, CostClass.SCALAR, (), (), doc=_doc,
                    flops_per_elem=0))

# ----------------------------------------------------------------------------- scalar memory
register(OpSpec("get_value", Family.SCALAR_MEM, PipeID.PIPE_S, CostClass.SCALAR, (),
                (("index",),), doc="Read one element (scalar unit).", flops_per_elem=0))
register(OpSpec("set_value", Family.SCALAR_MEM, PipeID.PIPE_S, CostClass.SCALAR, (),
                (("index", "value"),), doc="Write one element (scalar unit).",
                flops_per_elem=0))
register(OpSpec("check_local", Family.SYSTEM, None, CostClass.NONE, (), (),
                doc="Check that a static LocalTensor lies inside its memory.", flops_per_elem=0))
register(OpSpec("kernel_assert", Family.SYSTEM, None, CostClass.NONE, (), (),
                doc="A runtime `assert` inside a kernel.", flops_per_elem=0))


def vector_ops() -> list[OpSpec]:
    """Every element-wise vector op (the ones with an element function)."""
    return [s for s in REGISTRY.values() if s.elem is not None]
