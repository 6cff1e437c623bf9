"""Semantic analysis of reduce_*, whole_reduce_*, block_reduce_*, pair_reduce_sum: argument checks and IR emission.

Register handlers with ``builtins.function(name)`` (a DSL function) or ``builtins.method(kind,
name)``; imported by ``builtins.py``.

Every handler binds pyasc's parameter names (``ops/reduce.py``), checks that the tensors are
LocalTensors in UB of one dtype allowed on A2/A3 (float16, float32), and emits one
``ir.Intrinsic``. Operands, in order:

* whole/block/pair: ``dst, src, is_set, mask_kind, mask_lo, mask_hi, repeat, dst_rep_stride,
  src_blk_stride, src_rep_stride`` (int64); attrs ``dtype`` and, for whole max/min, ``order``;
* reduce_sum/max/min: ``dst, src, shared_tmp_buffer, count, mask_kind, mask_lo, mask_hi,
  repeat, src_rep_stride, cal_index``; attrs ``dtype`` and ``form`` ("count" or "masked"; the
  operands the form does not have are 0).
"""
from __future__ import annotations

from ...dsl.types import bool_, int64
from .. import ir
from ..errors import KernelTypeError, KernelValueError
from ..ops import REGISTRY
from ..ops.reduce import (BLOCK_OPS, FULL_OPS, REDUCE_DTYPES, WHOLE_OPS, ReduceOrder)
from . import scalars as S
from .builtins import (bind_args, function, mask_operand, want_enum, want_int, want_local)
from .values import ConstV, EnumV, NoneV, TupleV

MAX_REPEAT = 255


def _tensors(name: str, b: dict, names: tuple[str, ...], loc):
    """The LocalTensor operands: UB, one dtype, a dtype the op supports on A2/A3."""
    tensors = [want_local(b[n], f"asc.{name} {n}", loc) for n in names]
    dtype = tensors[0].dtype
    for n, t in zip(names[1:], tensors[1:]):
        if t.dtype != dtype:
            raise KernelTypeError(f"asc.{name}: {n} is {t.dtype.name} but {names[0]} is "
                                  f"{dtype.name}; all operands must have one dtype", loc,
                                  hint="convert with asc.cast first")
    if dtype not in REDUCE_DTYPES:
        allowed = ", ".join(d.name for d in REDUCE_DTYPES)
        raise KernelTypeError(f"asc.{name} does not support {dtype.name} on Ascend 910B "
                              f"(A2/A3); supported: {allowed}", loc,
                              hint="reductions take float16 or float32 tensors; cast first")
    return tensors


def _count(v, what: str, loc, limit: int | None = None) -> ir.Expr:
    """A non-negative integer operand (checked here when it is a constant)."""
    if isinstance(v, ConstV) and not v.dtype.is_float and v.dtype != bool_:
        n = int(v.value)
        if n < 0 or (limit is not None and n > limit):
            rng = f"0..{limit}" if limit is not None else ">= 0"
            raise KernelValueError(f"{what} is {n}, outside {rng}", loc)
    return want_int(v, what, loc, int64)


def _flag(v, loc) -> ir.Expr:
    return S.to_expr(S.truth(v, loc), int64)


def _masked_operands(name: str, b: dict, dtype, repeat_key: str, loc):
    kind, lo, hi = mask_operand(b["mask"], dtype, name, loc)
    repeat = _count(b[repeat_key], f"asc.{name} {repeat_key}", loc, MAX_REPEAT)
    return kind, lo, hi, repeat


def _repeat_reduce(an, name: str, args, kwargs, loc):
    """whole_reduce_*, block_reduce_*, pair_reduce_sum."""
    form = REGISTRY[name].forms[-1]
    if name in BLOCK_OPS and "repeat_time" in kwargs and "repeat" not in kwargs:
        kwargs = dict(kwargs)
        kwargs["repeat"] = kwargs.pop("repeat_time")  # the docs' name for pyasc's `repeat`
    defaults = {"is_set_mask": ConstV(True, bool_),
                "order": EnumV(ReduceOrder.ORDER_VALUE_INDEX)}
    b = bind_args(f"asc.{name}()", form, args, kwargs, loc, defaults)
    dst, src = _tensors(name, b, ("dst", "src"), loc)
    repeat_key = "repeat" if "repeat" in form else "repeat_time"
    kind, lo, hi, repeat = _masked_operands(name, b, dst.dtype, repeat_key, loc)
    strides = tuple(_count(b[k], f"asc.{name} {k}", loc, 65535)
                    for k in ("dst_rep_stride", "src_blk_stride", "src_rep_stride"))
    attrs = [("dtype", dst.dtype)]
    if "order" in form:
        order = want_enum(b["order"], ReduceOrder, f"asc.{name} order", loc)
        attrs.append(("order", int(order)))
    an.emit(ir.Intrinsic(name, (dst.ref(), src.ref(), _flag(b["is_set_mask"], loc), kind, lo,
                                hi, repeat) + strides, (), loc, tuple(attrs)))
    return NoneV()


def _full_reduce(an, name: str, args, kwargs, loc):
    """reduce_sum/max/min in the count form or the masked form."""
    count_form, masked_form = REGISTRY[name].forms
    masked = (bool({"mask", "repeat_time", "src_rep_stride"} & set(kwargs))
              or len(args) >= 6 or (len(args) >= 4 and isinstance(args[3], TupleV)))
    form = masked_form if masked else count_form
    b = bind_args(f"asc.{name}()", form, args, kwargs, loc,
                  {"cal_index": ConstV(False, bool_)})
    dst, src, tmp = _tensors(name, b, ("dst", "src", "shared_tmp_buffer"), loc)
    zero = ir.Const(0, int64)
    cal_index = _flag(b["cal_index"], loc) if "cal_index" in b else zero
    if masked:
        kind, lo, hi = mask_operand(b["mask"], dst.dtype, name, loc)
        # repeat_time may exceed 255 here (Ascend C: any int32); src_rep_stride is uint16
        repeat = _count(b["repeat_time"], f"asc.{name} repeat_time", loc)
        stride = _count(b["src_rep_stride"], f"asc.{name} src_rep_stride", loc, 65535)
        ops = (zero, kind, lo, hi, repeat, stride)
    else:
        ops = (_count(b["count"], f"asc.{name} count", loc), zero, zero, zero, zero, zero)
    an.emit(ir.Intrinsic(name, (dst.ref(), src.ref(), tmp.ref()) + ops + (cal_index,), (), loc,
                         (("dtype", dst.dtype), ("form", "masked" if masked else "count"))))
    return NoneV()


def _register():
    for name in WHOLE_OPS + BLOCK_OPS + ("pair_reduce_sum",):
        function(name)(lambda an, args, kwargs, loc, _n=name: _repeat_reduce(an, _n, args,
                                                                             kwargs, loc))
    for name in FULL_OPS:
        function(name)(lambda an, args, kwargs, loc, _n=name: _full_reduce(an, _n, args,
                                                                           kwargs, loc))


_register()
