"""Sema of the Matmul operands beyond GM tensors: a scalar A or B (``set_tensor_a/b(scalar)``),
a local C of ``iterate_all``, and the callback hooks (``set_self_define_data``,
``set_user_def_info``).

Ascend C passes these values to the user-defined copy callbacks of a Matmul declared with the
``MatmulCallBackFunc`` template parameter (``DataCopyOut``, ``CopyA1``, ``CopyB1`` receive them
as their ``dataPtr`` / ``tilingPtr`` arguments). pyasc's ``asc.adv.Matmul`` has no way to
declare such callbacks, and neither has this project, so nothing reads the values: each call
is checked (the operand kind, and the documented order: before ``set_tensor_a/b``) and the
value is recorded on the compile-time Matmul record (``MatmulV.hooks``), where a future
callback mechanism would find it. No code is emitted.
"""
from __future__ import annotations

from ...dsl.types import Memory, bool_, float16, float32, int64
from .. import ir
from ..errors import DtypeError, KernelTypeError, KernelValueError, OperandKindError, SourceLoc
from ..ops.matmul import A_SCALAR
from . import scalars as S
from .adv import MatmulV, _atomic, _emit, _ready, _set
from .builtins import bind_args, method, want_int
from .values import GmAddrV, GmTensorV, NoneV, RtV, SVal


def _hook_value(v: SVal, what: str, ints: bool, loc: SourceLoc) -> SVal:
    if isinstance(v, GmAddrV) or (isinstance(v, GmTensorV) and v.dtype is not None):
        return v
    if ints:
        want_int(v, what, loc, int64)   # a uint64 data word (Ascend C's uint64_t dataPtr)
        return v
    raise OperandKindError(f"{what} must be a GlobalAddress or a GlobalTensor, got "
                           f"{v.describe()}", loc)


@method(MatmulV, "set_self_define_data")
def _set_self_define_data(an, mm: MatmulV, name, args, kwargs, loc):
    """The data word (a GM address or a uint64) Ascend C hands to the Matmul's user copy
    callbacks; recorded, read by nothing here (no callbacks). Must precede set_tensor_a/b."""
    b = bind_args("Matmul.set_self_define_data()", ("data_ptr",), args, kwargs, loc)
    v = _hook_value(b["data_ptr"], "Matmul.set_self_define_data data_ptr", True, loc)
    if mm.a_seen or mm.b_seen:
        raise KernelValueError("Matmul.set_self_define_data must be called before "
                               "set_tensor_a / set_tensor_b (Ascend C's documented order)", loc)
    mm.hooks["self_define_data"] = v
    return NoneV()


@method(MatmulV, "set_user_def_info")
def _set_user_def_info(an, mm: MatmulV, name, args, kwargs, loc):
    """The user tiling address (Ascend C's tilingPtr) handed to the Matmul's user copy
    callbacks; recorded, read by nothing here (no callbacks)."""
    b = bind_args("Matmul.set_user_def_info()", ("tiling_ptr",), args, kwargs, loc)
    mm.hooks["user_def_info"] = _hook_value(b["tiling_ptr"], "Matmul.set_user_def_info "
                                            "tiling_ptr", False, loc)
    return NoneV()


def set_scalar(an, mm: MatmulV, which: str, v: SVal, loc: SourceLoc):
    """``set_tensor_a/b(scalar)`` (Ascend C's SetTensorA(aScalar) / SetTensorB(bScalar),
    half/float): every element of the matrix is the scalar converted to its dtype (the docs:
    a [1, K] vector of it, for a reduce-sum of the other matrix along K; with M (N) > 1 every
    row (column) is that vector, our choice)."""
    dtype = getattr(mm, which).dtype
    if dtype not in (float16, float32):
        raise DtypeError(f"Matmul.set_tensor_{which}(scalar) needs a float16 or float32 "
                         f"{which.upper()} (Ascend C's SetTensor{which.upper()}({which}Scalar)); "
                         f"this Matmul's {which.upper()} is {dtype.name}", loc)
    if v.dtype == bool_:
        raise KernelTypeError(f"Matmul.set_tensor_{which} scalar must be a number, got a bool",
                              loc)
    e = S.to_expr(v, dtype)
    _set(an, mm, f"{which}_scalar", e if e.dtype == float32 else ir.Cast(e, float32), loc)
    _set(an, mm, f"{which}_arg", ir.Const(A_SCALAR, int64), loc)
    _set(an, mm, f"{which}_off", ir.Const(0, int64), loc)
    _set(an, mm, f"trans_{which}", ir.Const(0, int64), loc)
    setattr(mm, f"{which}_seen", True)
    return NoneV()


def iterate_all_local(an, mm: MatmulV, b: dict, loc: SourceLoc):
    """``iterate_all(local_c)`` (Ascend C's IterateAll(ubCmatrix)): the whole single-core C into
    a UB or TSCM (L1) LocalTensor, row-major with row stride N; the GM-only options must be
    left unset (as pyasc requires)."""
    t = b["tensor"]
    for key in ("en_sequential_write", "wait_iterate_all", "fake_msg"):
        if not isinstance(b[key], NoneV):
            raise KernelValueError(f"Matmul.iterate_all into a LocalTensor: {key} applies to a "
                                   f"GM C only", loc)
    if t.memory not in (Memory.UB, Memory.L1):
        raise KernelTypeError(f"Matmul.iterate_all: C goes to GM, UB or TSCM (L1), not "
                              f"{t.describe()}", loc)
    if t.dtype != mm.c.dtype:
        raise DtypeError(f"Matmul.iterate_all tensor is {t.dtype.name} but the Matmul's c type "
                         f"is {mm.c.dtype.name}", loc)
    _ready(mm, "iterate_all", loc)
    _atomic(b["en_atomic"], loc)
    _emit(an, mm, "matmul_iterate_all", 0, t.memory, S.to_expr(RtV(t.addr), int64),
          ir.Const(0, int64), S.to_expr(RtV(t.size), int64), ir.Const(0, int64),
          ir.Const(0, int64), loc)
    return NoneV()


def set_local_bias(an, mm: MatmulV, t, dtype, loc: SourceLoc):
    """``set_bias(local)`` (Ascend C's SetBias(LocalTensor inputBias)): the N bias values read
    from a UB (VECOUT / VECIN / VECCALC) or TSCM (L1) LocalTensor instead of GM."""
    if t.memory not in (Memory.UB, Memory.L1):
        raise KernelTypeError(f"Matmul.set_bias: a local bias is in UB or TSCM (L1), not "
                              f"{t.describe()}", loc)
    if t.dtype != dtype:
        raise DtypeError(f"Matmul.set_bias tensor is {t.dtype.name} but the Matmul's bias type "
                         f"is {dtype.name}", loc)
    _set(an, mm, "bias_arg", S.to_expr(RtV(t.addr), int64), loc)
    _set(an, mm, "bias_off", ir.Const(0, int64), loc)
    _set(an, mm, "bias_mem", ir.Const(int(t.memory), int64), loc)
    _set(an, mm, "bias_size", S.to_expr(RtV(t.size), int64), loc)
    return NoneV()
