"""Semantic analysis of brcb, gatherb, gather, scatter and their parameter records.

Registered with ``builtins.function``; imported by ``builtins.py``. Parameter names are pyasc's
(``ops/gather.py``). Every tensor is a LocalTensor in UB; the data operands share one dtype the
op allows on A2/A3 and the offset tensor is uint32. Operands of the emitted ``ir.Intrinsic``:

* brcb: ``dst, src0, repeat, dst_blk_stride, dst_rep_stride``;
* gatherb: ``dst, src0, offset, repeat, dst_blk_stride, dst_rep_stride``;
* gather/scatter: ``dst, src, offset, base, count, mask_kind, mask_lo, mask_hi, repeat,
  rep_stride`` with attr ``form`` ("count" or "masked"; the other form's operands are 0).

Constant arguments outside their hardware fields (repeat 0..255, strides, a negative base or
count) are errors here, at the line; run-time values are checked by the library.
"""
from __future__ import annotations

from ...dsl.types import int32, int64, uint32
from .. import ir
from ..errors import KernelTypeError
from ..ops import REGISTRY
from ..ops.gather import BRCB_PARAMS, GATHER_PARAMS
from .builtins import bind_args, function, mask_operand, want_local
from .reduce import _count
from .values import ConstV, NoneV, StructV, TupleV

MAX_REPEAT = 255


def _record(kind: str, fields):
    """A parameter-record constructor (BrcbRepeatParams, GatherRepeatParams)."""
    names = tuple(n for n, _ in fields)
    defaults = {n: ConstV(d, int32) for n, d in fields}

    def construct(an, args, kwargs, loc):
        b = bind_args(f"asc.{kind}()", names, args, kwargs, loc, defaults)
        for n in names:
            _count(b[n], f"{kind}.{n}", loc, 65535)
        return StructV(kind, tuple((n, b[n]) for n in names))
    function(kind)(construct)


_record("BrcbRepeatParams", BRCB_PARAMS)
_record("GatherRepeatParams", GATHER_PARAMS)




def _data(name: str, b: dict, names, loc):
    """The data operands: LocalTensors in UB of one dtype the op allows."""
    tensors = [want_local(b[n], f"asc.{name} {n}", loc) for n in names]
    dtype = tensors[0].dtype
    for n, t in zip(names[1:], tensors[1:]):
        if t.dtype.sizeof() != dtype.sizeof() or t.dtype != dtype:
            raise KernelTypeError(f"asc.{name}: {n} is {t.dtype.name} but {names[0]} is "
                                  f"{dtype.name}; they must have one dtype", loc,
                                  hint="reinterpret_cast one of them")
    allowed = REGISTRY[name].dtypes
    if dtype not in allowed:
        raise KernelTypeError(f"asc.{name} does not support {dtype.name} on Ascend 910B "
                              f"(A2/A3); supported: {', '.join(d.name for d in allowed)}", loc,
                              hint="the operation moves bits: reinterpret_cast to a supported "
                                   "dtype of the same width")
    return tensors


def _offsets(name: str, v, what: str, loc):
    t = want_local(v, f"asc.{name} {what}", loc)
    if t.dtype != uint32:
        raise KernelTypeError(f"asc.{name}: {what} must be a uint32 LocalTensor (byte "
                              f"offsets), got {t.dtype.name}", loc)
    return t


def _params(name: str, v, kind: str, loc):
    if not isinstance(v, StructV) or v.kind != kind:
        raise KernelTypeError(f"asc.{name}: repeat_params must be asc.{kind}(...), got "
                              f"{v.describe()}", loc)
    return tuple(_count(v.get(n), f"{kind}.{n}", loc, 65535) for n in ("dst_blk_stride",
                                                                      "dst_rep_stride"))


@function("brcb")
def _brcb(an, args, kwargs, loc):
    form = REGISTRY["brcb"].forms[0]
    b = bind_args("asc.brcb()", form, args, kwargs, loc)
    dst, src = _data("brcb", b, ("dst", "src0"), loc)
    repeat = _count(b["repeat_times"], "asc.brcb repeat_times", loc, MAX_REPEAT)
    strides = _params("brcb", b["repeat_params"], "BrcbRepeatParams", loc)
    an.emit(ir.Intrinsic("brcb", (dst.ref(), src.ref(), repeat) + strides, (), loc,
                         (("dtype", dst.dtype),)))
    return NoneV()


@function("gatherb")
def _gatherb(an, args, kwargs, loc):
    form = REGISTRY["gatherb"].forms[0]
    b = bind_args("asc.gatherb()", form, args, kwargs, loc)
    dst, src = _data("gatherb", b, ("dst", "src0"), loc)
    off = _offsets("gatherb", b["offset"], "offset", loc)
    repeat = _count(b["repeat_times"], "asc.gatherb repeat_times", loc, MAX_REPEAT)
    strides = _params("gatherb", b["repeat_params"], "GatherRepeatParams", loc)
    an.emit(ir.Intrinsic("gatherb", (dst.ref(), src.ref(), off.ref(), repeat) + strides, (),
                         loc, (("dtype", dst.dtype),)))
    return NoneV()


def _indexed(name: str, an, args, kwargs, loc):
    """gather / scatter in the count form or the masked form."""
    count_form, masked_form = REGISTRY[name].forms
    stride_key = masked_form[-1]
    masked = (bool({"mask", "repeat_times", stride_key} & set(kwargs)) or len(args) >= 6
              or (len(args) >= 5 and isinstance(args[4], TupleV)))
    b = bind_args(f"asc.{name}()", masked_form if masked else count_form, args, kwargs, loc)
    dst, src = _data(name, b, ("dst", "src"), loc)
    off_key, base_key = count_form[2], count_form[3]
    off = _offsets(name, b[off_key], off_key, loc)
    base = _count(b[base_key], f"asc.{name} {base_key}", loc, 2**32 - 1)
    zero = ir.Const(0, int64)
    if masked:
        kind, lo, hi = mask_operand(b["mask"], dst.dtype, name, loc)
        repeat = _count(b["repeat_times"], f"asc.{name} repeat_times", loc, MAX_REPEAT)
        limit = 65535 if name == "gather" else 255   # dst_rep_stride uint16, src_rep uint8
        stride = _count(b[stride_key], f"asc.{name} {stride_key}", loc, limit)
        ops = (zero, kind, lo, hi, repeat, stride)
    else:
        ops = (_count(b["count"], f"asc.{name} count", loc, 2**32 - 1), zero, zero, zero, zero,
               zero)
    an.emit(ir.Intrinsic(name, (dst.ref(), src.ref(), off.ref(), base) + ops, (), loc,
                         (("dtype", dst.dtype), ("form", "masked" if masked else "count"))))
    return NoneV()


for _name in ("gather", "scatter"):
    function(_name)(lambda an, args, kwargs, loc, _n=_name: _indexed(_n, an, args, kwargs, loc))
