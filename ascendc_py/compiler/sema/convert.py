"""Semantic analysis of cast, compare, compare_scalar, select: argument checks and IR emission.

Register handlers with ``builtins.function(name)`` (a DSL function) or ``builtins.method(kind,
name)``; imported by ``builtins.py``.

IR emitted (``attrs`` always carry the dtypes and the mode as an int):
* ``cast``: count form ``(dst, src, count)``; masked form ``(dst, src, is_set, kind, lo, hi,
  repeat, dst_blk, src_blk, dst_rep, src_rep)`` with ``("form", "masked")``.
* ``compare`` / ``compare_scalar``: ``(dst, src0, src1 | scalar, count)``; masked ``(dst, src0,
  src1 | scalar, repeat, dst_blk, src0_blk, src1_blk, dst_rep, src0_rep, src1_rep)`` (the mask
  is checked but, as on A2/A3, not used).
* ``select``: ``(dst, sel_mask, src0, src1 | None, scalar | None, count)``; masked ``(dst,
  sel_mask, src0, src1 | None, scalar | None, is_set, kind, lo, hi, repeat, 6 strides)``.
"""
from __future__ import annotations

from ...dsl.types import CMPMODE, SELMODE, RoundMode, bool_, int64
from .. import ir
from ..errors import KernelTypeError, KernelValueError
from ..ops import REGISTRY
from ..ops.convert import (CAST_TABLE, COMPARE_DST_TYPES, COMPARE_TYPES, SELECT_MASK_TYPES,
                           SELECT_TYPES, allowed_modes, compare_modes)
from . import scalars as S
from .builtins import (bind_args, function, mask_operand, repeat_strides, want_enum, want_int,
                       want_local)
from .values import ConstV, EnumV, LocalTensorV, NoneV, RtV

_MASK_KEYS = {"mask", "repeat_times", "repeat_params"}


def _bind(name: str, args, kwargs, loc):
    """Bind to the count form or the masked form (chosen as in pyasc: by the masked form's
    keywords or by the number of positional arguments)."""
    count_form, masked_form = REGISTRY[name].forms
    masked = bool(_MASK_KEYS & set(kwargs)) or len(args) >= len(masked_form) - 2
    form = masked_form if masked else count_form
    return masked, bind_args(f"asc.{name}()", form, args, kwargs, loc,
                             {"is_set_mask": ConstV(True, bool_)})


def _names(dtypes) -> str:
    return ", ".join(d.name for d in dtypes)


def _mode_names(modes) -> str:
    return ", ".join(f"{m.name}" for m in modes)


def _count(b, name: str, loc) -> ir.Expr:
    c = b["count"]
    if isinstance(c, ConstV) and not c.dtype.is_float and int(c.value) < 0:
        raise KernelValueError(f"asc.{name}: count {c.value} is negative", loc)
    return want_int(c, f"asc.{name} count", loc)


def _masked_operands(b, name: str, dtype, binary: bool, loc):
    """(is_set, kind, lo, hi, repeat) and the six strides of a masked form."""
    kind, lo, hi = mask_operand(b["mask"], dtype, name, loc)
    rt = b["repeat_times"]
    if isinstance(rt, ConstV) and not rt.dtype.is_float and not 0 <= int(rt.value) <= 255:
        raise KernelValueError(f"asc.{name}: repeat_times {rt.value} is outside 0..255", loc)
    repeat = want_int(rt, f"asc.{name} repeat_times", loc, int64)
    is_set = S.to_expr(S.truth(b["is_set_mask"], loc), int64)
    return (is_set, kind, lo, hi, repeat), repeat_strides(b["repeat_params"], binary, loc)


# ----------------------------------------------------------------------------- cast
def check_cast(src, dst, mode: RoundMode, loc) -> None:
    """A KernelTypeError naming the pair, the mode and what is allowed, unless allowed."""
    modes = allowed_modes(src, dst)
    if not modes:
        targets = [d.name for (s, d) in CAST_TABLE if s == src]
        hint = ("int32 -> float16 needs SetDeqScale (not supported); cast to float32 first"
                if (src.name, dst.name) == ("int32", "float16") else
                "cast through an intermediate type, e.g. float32")
        allowed = (f"{src.name} converts to {', '.join(targets)}" if targets else
                   f"{src.name} is not a cast source")
        raise KernelTypeError(f"asc.cast from {src.name} to {dst.name} is not supported on "
                              f"Ascend 910B (A2/A3); {allowed}", loc, hint=hint)
    if mode not in modes:
        raise KernelTypeError(f"asc.cast from {src.name} to {dst.name} does not support "
                              f"RoundMode.{mode.name} on Ascend 910B (A2/A3); allowed: "
                              f"{_mode_names(modes)}", loc)


@function("cast")
def _cast(an, args, kwargs, loc):
    masked, b = _bind("cast", args, kwargs, loc)
    dst = want_local(b["dst"], "asc.cast dst", loc)
    src = want_local(b["src"], "asc.cast src", loc)
    mode = want_enum(b["round_mode"], RoundMode, "asc.cast round_mode", loc)
    check_cast(src.dtype, dst.dtype, mode, loc)
    attrs = (("src", src.dtype), ("dst", dst.dtype), ("round_mode", int(mode)))
    if not masked:
        an.emit(ir.Intrinsic("cast", (dst.ref(), src.ref(), _count(b, "cast", loc)), (), loc,
                             attrs))
        return NoneV()
    wide = dst.dtype if dst.dtype.sizeof() >= src.dtype.sizeof() else src.dtype
    head, strides = _masked_operands(b, "cast", wide, False, loc)
    dst_blk, src_blk, _, dst_rep, src_rep, _ = strides
    an.emit(ir.Intrinsic("cast", (dst.ref(), src.ref()) + head + (dst_blk, src_blk, dst_rep,
                                                                   src_rep), (), loc,
                         attrs + (("form", "masked"),)))
    return NoneV()


# ----------------------------------------------------------------------------- compare
def _scalar_of(v, what: str, dtype, loc) -> ir.Expr:
    if not isinstance(v, (ConstV, RtV)):
        raise KernelTypeError(f"{what} must be a number, got {v.describe()}", loc)
    return S.to_expr(v, dtype)  # converted to the tensor dtype, as Ascend C does


def _compare(name: str, args, kwargs, loc, an):
    scalar = name == "compare_scalar"
    if not scalar:
        from .cmpmask import compare_register, is_register_compare
        if is_register_compare(args, kwargs):   # the result in CMPMASK (sema/cmpmask.py)
            return compare_register(an, args, kwargs, loc)
    masked, b = _bind(name, args, kwargs, loc)
    dst = want_local(b["dst"], f"asc.{name} dst", loc)
    src0 = want_local(b["src0"], f"asc.{name} src0", loc)
    dtype = src0.dtype
    if scalar:
        other = _scalar_of(b["src1_scalar"], f"asc.{name} src1_scalar", dtype, loc)
    else:
        src1 = want_local(b["src1"], f"asc.{name} src1", loc)
        if src1.dtype != dtype:
            raise KernelTypeError(f"asc.{name}: src1 is {src1.dtype.name} but src0 is "
                                  f"{dtype.name}; both sources must have one dtype", loc,
                                  hint="convert with asc.cast first")
        other = src1.ref()
    mode = want_enum(b["cmp_mode"], CMPMODE, f"asc.{name} cmp_mode", loc)
    if dtype not in COMPARE_TYPES:
        raise KernelTypeError(f"asc.{name} does not support {dtype.name} sources on Ascend 910B "
                              f"(A2/A3); supported: {_names(COMPARE_TYPES)}", loc)
    if mode not in compare_modes(dtype):
        raise KernelTypeError(f"asc.{name} with {dtype.name} sources supports only "
                              f"CMPMODE.EQ on Ascend 910B (A2/A3), got CMPMODE.{mode.name}",
                              loc)
    dst_types = COMPARE_DST_TYPES if not scalar else COMPARE_DST_TYPES[:1]
    if dst.dtype not in dst_types:
        raise KernelTypeError(f"asc.{name} dst must be a {_names(dst_types)} tensor (one bit "
                              f"per element), got {dst.dtype.name}", loc,
                              hint="allocate the result as uint8 (count / 8 bytes)")
    attrs = (("dtype", dtype), ("cmp_mode", int(mode)))
    if not masked:
        count = _count(b, name, loc)
        c = b["count"]
        if isinstance(c, ConstV) and (int(c.value) * dtype.sizeof()) % 256:
            raise KernelValueError(
                f"asc.{name}: count {int(c.value)} x sizeof({dtype.name}) = "
                f"{int(c.value) * dtype.sizeof()} bytes is not a multiple of 256 bytes", loc,
                hint=f"Ascend C compares whole 256-byte repeats only: use a multiple of "
                     f"{256 // dtype.sizeof()} elements (pad the data)")
        an.emit(ir.Intrinsic(name, (dst.ref(), src0.ref(), other, count), (), loc, attrs))
        return NoneV()
    head, strides = _masked_operands(b, name, dtype, not scalar, loc)
    if scalar:
        d_blk, s_blk, _, d_rep, s_rep, _ = strides
        strides = (d_blk, s_blk, ir.Const(1, int64), d_rep, s_rep, ir.Const(8, int64))
    an.emit(ir.Intrinsic(name, (dst.ref(), src0.ref(), other, head[4]) + strides, (), loc,
                         attrs + (("form", "masked"),)))
    return NoneV()


@function("compare")
def _compare_fn(an, args, kwargs, loc):
    return _compare("compare", args, kwargs, loc, an)


@function("compare_scalar")
def _compare_scalar_fn(an, args, kwargs, loc):
    return _compare("compare_scalar", args, kwargs, loc, an)


# ----------------------------------------------------------------------------- select
@function("select")
def _select(an, args, kwargs, loc):
    register_form = (len(args) + len(kwargs) in (4, 5) and "sel_mode" not in kwargs
                     and not any(isinstance(a, EnumV) for a in args)) or (
        "sel_mode" in kwargs and "mask" not in kwargs and "count" not in kwargs
        and len(args) <= 3)
    if register_form:       # CMPMASK and the mask register (sema/cmpmask.py)
        from .cmpmask import select_register
        return select_register(an, args, kwargs, loc)
    masked, b = _bind("select", args, kwargs, loc)
    dst = want_local(b["dst"], "asc.select dst", loc)
    sel = want_local(b["sel_mask"], "asc.select sel_mask", loc)
    src0 = want_local(b["src0"], "asc.select src0", loc)
    mode = want_enum(b["sel_mode"], SELMODE, "asc.select sel_mode", loc)
    dtype = dst.dtype
    if dtype not in SELECT_TYPES:
        raise KernelTypeError(f"asc.select does not support {dtype.name} on Ascend 910B (A2/A3); "
                              f"supported: {_names(SELECT_TYPES)}", loc)
    if src0.dtype != dtype:
        raise KernelTypeError(f"asc.select: src0 is {src0.dtype.name} but dst is {dtype.name}; "
                              f"dst and the sources must have one dtype", loc)
    if sel.dtype not in SELECT_MASK_TYPES:
        raise KernelTypeError(f"asc.select sel_mask must be a {_names(SELECT_MASK_TYPES)} "
                              f"tensor, got {sel.dtype.name}", loc)
    v = b["src1"]
    if mode == SELMODE.VSEL_TENSOR_SCALAR_MODE:
        if isinstance(v, LocalTensorV):
            raise KernelTypeError("asc.select with VSEL_TENSOR_SCALAR_MODE takes a scalar src1, "
                                  "got a LocalTensor", loc,
                                  hint="use VSEL_TENSOR_TENSOR_MODE to select between two "
                                       "tensors")
        src1, scalar = None, _scalar_of(v, "asc.select src1", dtype, loc)
    else:
        if not isinstance(v, LocalTensorV):
            raise KernelTypeError(f"asc.select with {mode.name} takes a LocalTensor src1, got "
                                  f"{v.describe()}", loc,
                                  hint="use VSEL_TENSOR_SCALAR_MODE to select with a scalar")
        src1t = want_local(v, "asc.select src1", loc)
        if src1t.dtype != dtype:
            raise KernelTypeError(f"asc.select: src1 is {src1t.dtype.name} but dst is "
                                  f"{dtype.name}; dst and the sources must have one dtype", loc)
        src1, scalar = src1t.ref(), None
    attrs = (("dtype", dtype), ("sel_mode", int(mode)))
    operands = (dst.ref(), sel.ref(), src0.ref(), src1, scalar)
    if not masked:
        an.emit(ir.Intrinsic("select", operands + (_count(b, "select", loc),), (), loc, attrs))
        return NoneV()
    head, strides = _masked_operands(b, "select", dtype, True, loc)
    an.emit(ir.Intrinsic("select", operands + head + strides, (), loc,
                         attrs + (("form", "masked"),)))
    return NoneV()

