"""Semantic analysis of ``init_const_value(dst, InitConstValueParams(repeat_times, block_num,
dst_gap, init_value))`` and its record. Semantics: ``ops/cube_init.py``; lowering:
``codegen/lower_cube_init.py``."""
from __future__ import annotations

from ...dsl.types import TPosition, int64
from .. import ir
from ..errors import DtypeError, KernelTypeError, KernelValueError, OperandKindError
from ..ops.cube_init import INIT_CONST_FIELDS, INIT_CONST_TYPES
from . import scalars as S
from .builtins import bind_args, function, want_int
from .values import ConstV, LocalTensorV, NoneV, RtV, StructV, SVal

_NAMES = ("repeat_times", "block_num", "dst_gap", "init_value")
_POSITIONS = (TPosition.A1, TPosition.B1, TPosition.A2, TPosition.B2)


@function("InitConstValueParams")
def _params(an, args, kwargs, loc) -> SVal:
    from ...dsl.types import int32
    defaults = {n: ConstV(0, int32) for n in _NAMES}
    b = bind_args("asc.InitConstValueParams()", _NAMES, args, kwargs, loc, defaults)
    for name, lo, hi in INIT_CONST_FIELDS:
        v = b[name]
        want_int(v, f"InitConstValueParams.{name}", loc, int64)
        if isinstance(v, ConstV) and not lo <= int(v.value) <= hi:
            raise KernelValueError(f"InitConstValueParams.{name} = {v.value} is out of range "
                                   f"{lo}..{hi}", loc)
    if not isinstance(b["init_value"], (ConstV, RtV)):
        raise KernelTypeError(f"InitConstValueParams.init_value must be a number, got "
                              f"{b['init_value'].describe()}", loc)
    return StructV("InitConstValueParams", tuple((n, b[n]) for n in _NAMES))


@function("init_const_value")
def init_const_value(an, args, kwargs, loc) -> SVal:
    """``init_const_value(dst_at_A1_B1_A2_B2, InitConstValueParams(...))``."""
    b = bind_args("asc.init_const_value()", ("dst", "init_const_value_params"), args, kwargs,
                  loc)
    dst, params = b["dst"], b["init_const_value_params"]
    if not isinstance(dst, LocalTensorV):
        raise OperandKindError(f"asc.init_const_value dst must be a LocalTensor at A1/B1 (L1) "
                               f"or A2/B2 (L0A/L0B), got {dst.describe()}", loc)
    if dst.position not in _POSITIONS:
        raise KernelTypeError(f"asc.init_const_value dst must be at A1, B1, A2 or B2, got a "
                              f"tensor at {dst.position.name} ({dst.memory.name})", loc,
                              hint="Ascend C's InitConstValue fills L1 (A1/B1) and L0A/L0B "
                                   "(A2/B2); fill UB with asc.duplicate")
    if dst.dtype not in INIT_CONST_TYPES:
        raise DtypeError(f"asc.init_const_value does not support {dst.dtype.name} on Ascend "
                         f"910B (A2/A3); supported: "
                         f"{', '.join(d.name for d in INIT_CONST_TYPES)}", loc)
    if not isinstance(params, StructV) or params.kind != "InitConstValueParams":
        raise KernelTypeError(f"asc.init_const_value init_const_value_params must be "
                              f"asc.InitConstValueParams(...), got {params.describe()}", loc)
    fields = tuple(want_int(params.get(n), f"InitConstValueParams.{n}", loc, int64)
                   for n, _, _ in INIT_CONST_FIELDS)
    value = S.to_expr(params.get("init_value"), dst.dtype)   # converted to dst's dtype
    an.emit(ir.Intrinsic("init_const_value", (dst.ref(),) + fields + (value,), (), loc,
                         (("dtype", dst.dtype),)))
    return NoneV()
