"""Semantic analysis of gather_mask, GatherMaskParams and get_gather_mask_remain_count
(``ops/gather_mask.py``).

``gather_mask`` emits one intrinsic with operands ``dst, src0, src1 (the pattern tensor, or
dst again for a built-in pattern), builtin (0 or 1..7), counter (reduce_mode), mask,
repeat_times, src0_block_stride, src0_repeat_stride, src1_repeat_stride`` and one result, the
count (int64).
"""
from __future__ import annotations

from ...dsl.types import int32, int64, uint16, uint32
from .. import ir
from ..errors import KernelTypeError, KernelValueError
from ..ops import REGISTRY
from ..ops.gather_mask import FORM, PARAMS, GatherMaskMode
from . import scalars as S
from .builtins import bind_args, function, want_enum, want_int, want_local
from .reduce import _count
from .values import ConstV, EnumV, LocalTensorV, RtV, StructV


@function("GatherMaskParams")
def _params(an, args, kwargs, loc):
    names = tuple(n for n, _ in PARAMS)
    b = bind_args("asc.GatherMaskParams()", names, args, kwargs, loc,
                  {n: ConstV(d, int32) for n, d in PARAMS})
    for n in names:
        want_int(b[n], f"GatherMaskParams.{n}", loc)
    return StructV("GatherMaskParams", tuple((n, b[n]) for n in names))


@function("gather_mask")
def _gather_mask(an, args, kwargs, loc):
    b = bind_args("asc.gather_mask()", FORM, args, kwargs, loc,
                  {"gather_mask_mode": EnumV(GatherMaskMode.DEFAULT)})
    dst = want_local(b["dst"], "asc.gather_mask dst", loc)
    src0 = want_local(b["src0"], "asc.gather_mask src0", loc)
    allowed = REGISTRY["gather_mask"].dtypes
    if dst.dtype != src0.dtype:
        raise KernelTypeError(f"asc.gather_mask: src0 is {src0.dtype.name} but dst is "
                              f"{dst.dtype.name}; they must have one dtype", loc)
    if dst.dtype not in allowed:
        raise KernelTypeError(f"asc.gather_mask does not support {dst.dtype.name} on Ascend "
                              f"910B (A2/A3); supported: {', '.join(d.name for d in allowed)}",
                              loc)
    want_enum(b["gather_mask_mode"], GatherMaskMode, "gather_mask_mode", loc)
    pattern = b["src1_pattern"]
    if isinstance(pattern, LocalTensorV):
        want = uint16 if dst.dtype.sizeof() == 2 else uint32
        if pattern.dtype != want:
            raise KernelTypeError(f"asc.gather_mask: a pattern tensor for {dst.dtype.name} must "
                                  f"be {want.name}, got {pattern.dtype.name}", loc)
        src1, builtin = want_local(pattern, "asc.gather_mask src1_pattern", loc), \
            ir.Const(0, int64)
    else:
        if not isinstance(pattern, ConstV) or pattern.dtype.is_float:
            raise KernelTypeError("asc.gather_mask src1_pattern must be a LocalTensor or a "
                                  "compile-time built-in pattern 1..7", loc)
        if not 1 <= int(pattern.value) <= 7:
            raise KernelValueError(f"asc.gather_mask: built-in pattern {pattern.value} is "
                                   f"outside 1..7", loc)
        src1, builtin = dst, ir.Const(int(pattern.value), int64)
    params = b["params"]
    if not isinstance(params, StructV) or params.kind != "GatherMaskParams":
        raise KernelTypeError(f"asc.gather_mask: params must be asc.GatherMaskParams(...), got "
                              f"{params.describe()}", loc)
    f = dict(params.fields)
    ops = (builtin, S.to_expr(S.truth(b["reduce_mode"], loc), int64),
           _count(b["mask"], "asc.gather_mask mask", loc, 2**32 - 1),
           _count(f["repeat_times"], "GatherMaskParams.repeat_times", loc, 255),
           _count(f["src0_block_stride"], "GatherMaskParams.src0_block_stride", loc, 65535),
           _count(f["src0_repeat_stride"], "GatherMaskParams.src0_repeat_stride", loc, 65535),
           _count(f["src1_repeat_stride"], "GatherMaskParams.src1_repeat_stride", loc, 65535))
    res = ir.Var("gather_mask.count", int64)
    an.emit(ir.Intrinsic("gather_mask", (dst.ref(), src0.ref(), src1.ref()) + ops, (res,), loc,
                         (("dtype", dst.dtype),)))
    return RtV(ir.Load(res))


@function("get_gather_mask_remain_count")
def _remain(an, args, kwargs, loc):
    bind_args("asc.get_gather_mask_remain_count()", (), args, kwargs, loc)
    res = ir.Var("gather_mask.remain", int64)
    an.emit(ir.Intrinsic("gather_mask_count", (), (res,), loc))
    return RtV(ir.Load(res))
