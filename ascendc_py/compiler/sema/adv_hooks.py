"""Sema of Matmul's callback hooks (``set_self_define_data``, ``set_user_def_info``).

Ascend C passes these values to the user-defined copy callbacks of a Matmul declared with the
``MatmulCallBackFunc`` template parameter (``DataCopyOut``, ``CopyA1``, ``CopyB1`` receive them
as their ``dataPtr`` / ``tilingPtr`` arguments). pyasc's ``asc.adv.Matmul`` has no way to
declare such callbacks, and neither has this project, so nothing reads the values: each call
is checked (the operand kind, and the documented order: before ``set_tensor_a/b``) and the
value is recorded on the compile-time Matmul record (``MatmulV.hooks``), where a future
callback mechanism would find it. No code is emitted.
"""
from __future__ import annotations

from ..errors import KernelValueError, OperandKindError, SourceLoc
from .adv import MatmulV
from .builtins import bind_args, method, want_int
from .values import GmAddrV, GmTensorV, NoneV, SVal
from ...dsl.types import int64


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
