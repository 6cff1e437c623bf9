"""Semantic analysis of cast_deq, set_deq_scale and VdeqInfo (``ops/deq.py``).

Intrinsics: ``set_deq_scale`` with attr ``form`` "half" (operand: the scale as float32),
"scalar" (scale float32, offset int64, sign int64) or "vector" (the vdeq tensor, then 16
scales, 16 offsets, 16 signs); ``cast_deq`` with operands ``dst, src, count, is_set,
mask_kind, mask_lo, mask_hi, repeat, dst_blk, src_blk, dst_rep, src_rep`` and attrs
``form``, ``vec`` and ``half_block`` (compile-time flags, as Ascend C's template arguments).
"""
from __future__ import annotations


from ...dsl.types import bool_, float32, int64, uint64
from .. import ir
from ..errors import KernelTypeError
from ..ops import REGISTRY
from ..ops.deq import DEQ_PAIRS, VDEQ_GROUPS
from . import scalars as S
from .builtins import (bind_args, function, mask_operand, repeat_strides, want_int, want_local)
from ...fieldwise import FrozenFieldwise
from .values import frozen_value, ConstV, LocalTensorV, NoneV, StructV, SVal, TupleV

MAX_REPEAT = 255


@frozen_value
class VdeqInfoV(SVal, FrozenFieldwise):
    scales: tuple
    offsets: tuple
    signs: tuple

    def describe(self) -> str:
        return "VdeqInfo"


def _sixteen(v, what, loc) -> tuple:
    if not isinstance(v, TupleV) or len(v.items) != VDEQ_GROUPS:
        raise KernelTypeError(f"VdeqInfo {what} must be a list of {VDEQ_GROUPS} values, got "
                              f"{v.describe()}", loc)
    return v.items


@function("VdeqInfo")
def _vdeq_info(an, args, kwargs, loc):
    b = bind_args("asc.VdeqInfo()", ("scale", "offset", "sign_mode"), args, kwargs, loc)
    scales = tuple(S.to_expr(S.numeric(x), float32) for x in _sixteen(b["scale"], "scale", loc))
    offsets = tuple(want_int(x, "VdeqInfo offset", loc, int64)
                    for x in _sixteen(b["offset"], "offset", loc))
    signs = tuple(S.to_expr(S.truth(x, loc), int64)
                  for x in _sixteen(b["sign_mode"], "sign_mode", loc))
    return VdeqInfoV(scales, offsets, signs)


def _flag_const(v, what, loc) -> bool:
    if not isinstance(v, ConstV):
        raise KernelTypeError(f"asc.cast_deq {what} must be a compile-time True/False (an "
                              f"Ascend C template argument)", loc)
    return bool(v.value)


@function("set_deq_scale")
def _set_deq_scale(an, args, kwargs, loc):
    first = args[0] if args else kwargs.get("vdeq", kwargs.get("scale"))
    if isinstance(first, LocalTensorV):
        b = bind_args("asc.set_deq_scale()", ("vdeq", "vdeq_info"), args, kwargs, loc)
        t = want_local(b["vdeq"], "asc.set_deq_scale vdeq", loc)
        if t.dtype != uint64:
            raise KernelTypeError(f"asc.set_deq_scale: vdeq must be a uint64 LocalTensor (128 "
                                  f"bytes), got {t.dtype.name}", loc)
        info = b["vdeq_info"]
        if not isinstance(info, VdeqInfoV):
            raise KernelTypeError(f"asc.set_deq_scale: vdeq_info must be an asc.VdeqInfo(...), "
                                  f"got {info.describe()}", loc)
        an.emit(ir.Intrinsic("set_deq_scale", (t.ref(),) + info.scales + info.offsets
                             + info.signs, (), loc, (("form", "vector"),)))
        return NoneV()
    if len(args) + len(kwargs) == 1:
        b = bind_args("asc.set_deq_scale()", ("scale",), args, kwargs, loc)
        an.emit(ir.Intrinsic("set_deq_scale", (S.to_expr(S.numeric(b["scale"]), float32),), (),
                             loc, (("form", "half"),)))
        return NoneV()
    b = bind_args("asc.set_deq_scale()", ("scale", "offset", "sign_mode"), args, kwargs, loc)
    ops = (S.to_expr(S.numeric(b["scale"]), float32),
           want_int(b["offset"], "set_deq_scale offset", loc, int64),
           S.to_expr(S.truth(b["sign_mode"], loc), int64))
    an.emit(ir.Intrinsic("set_deq_scale", ops, (), loc, (("form", "scalar"),)))
    return NoneV()


@function("cast_deq")
def _cast_deq(an, args, kwargs, loc):
    count_form, masked_form = REGISTRY["cast_deq"].forms
    masked = (bool({"mask", "repeat_times", "repeat_params", "is_set_mask"} & set(kwargs))
              or len(args) >= 6 or (len(args) >= 5 and isinstance(args[4], StructV))
              or (len(args) >= 3 and isinstance(args[2], TupleV)))
    true = ConstV(True, bool_)
    b = bind_args("asc.cast_deq()", masked_form if masked else count_form, args, kwargs, loc,
                  {"is_set_mask": true, "is_vec_deq": true, "half_block": true})
    dst = want_local(b["dst"], "asc.cast_deq dst", loc)
    src = want_local(b["src"], "asc.cast_deq src", loc)
    if (src.dtype, dst.dtype) not in DEQ_PAIRS:
        pairs = ", ".join(f"{s.name} -> {d.name}" for s, d in DEQ_PAIRS)
        raise KernelTypeError(f"asc.cast_deq converts {pairs} on A2/A3, not {src.dtype.name} "
                              f"-> {dst.dtype.name}", loc)
    vec = _flag_const(b["is_vec_deq"], "is_vec_deq", loc)
    half = _flag_const(b["half_block"], "half_block", loc)
    zero = ir.Const(0, int64)
    if masked:
        kind, lo, hi = mask_operand(b["mask"], src.dtype, "cast_deq", loc)
        repeat = want_int(b["repeat_times"], "asc.cast_deq repeat_times", loc, int64)
        if isinstance(repeat, ir.Const) and not 0 <= repeat.value <= MAX_REPEAT:
            raise KernelTypeError(f"asc.cast_deq repeat_times is {repeat.value}, outside "
                                  f"0..{MAX_REPEAT}", loc)
        strides = repeat_strides(b["repeat_params"], False, loc)
        is_set = S.to_expr(S.truth(b["is_set_mask"], loc), int64)
        ops = (zero, is_set, kind, lo, hi, repeat, strides[0], strides[1], strides[3],
               strides[4])
    else:
        count = want_int(b["count"], "asc.cast_deq count", loc, int64)
        ops = (count,) + (zero,) * 9
    an.emit(ir.Intrinsic("cast_deq", (dst.ref(), src.ref()) + ops, (), loc,
                         (("dtype", dst.dtype), ("src_dtype", src.dtype),
                          ("form", "masked" if masked else "count"), ("vec", vec),
                          ("half_block", half))))
    return NoneV()

