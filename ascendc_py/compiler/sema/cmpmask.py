"""Semantic analysis of the CMPMASK register calls (``ops/cmpmask.py``): set_cmp_mask,
get_cmp_mask, and the register forms of compare and select, which ``sema/convert.py`` hands
over here. They emit the ``compare`` / ``select`` intrinsics' masked form with attribute
``cmpmask`` (what the register stands for) and no tensor where the register is used."""
from __future__ import annotations

from ...dsl.types import CMPMODE, SELMODE, bool_, int64
from .. import ir
from ..errors import KernelTypeError
from ..ops.convert import COMPARE_TYPES, SELECT_MASK_TYPES, SELECT_TYPES, compare_modes
from . import scalars as S
from .builtins import bind_args, function, mask_operand, repeat_strides, want_enum, want_int, \
    want_local
from .values import ConstV, EnumV, NoneV


def _names(dtypes) -> str:
    return ", ".join(d.name for d in dtypes)


def _register_op(op: str, what: str):
    def handler(an, args, kwargs, loc):
        b = bind_args(f"asc.{op}()", (what,), args, kwargs, loc)
        t = want_local(b[what], f"asc.{op} {what}", loc)
        an.emit(ir.Intrinsic(op, (t.ref(),), (), loc, (("dtype", t.dtype),)))
        return NoneV()
    return handler


function("set_cmp_mask")(_register_op("set_cmp_mask", "src"))
function("get_cmp_mask")(_register_op("get_cmp_mask", "dst"))


def is_register_compare(args, kwargs) -> bool:
    """compare(src0, src1, cmp_mode, mask, repeat_params): no dst and no repeat count."""
    if len(args) > 2 and isinstance(args[2], EnumV):
        return True
    return (len(args) <= 2 and "repeat_params" in kwargs and "repeat_times" not in kwargs
            and "count" not in kwargs and "dst" not in kwargs)


def compare_register(an, args, kwargs, loc):
    b = bind_args("asc.compare()", ("src0", "src1", "cmp_mode", "mask", "repeat_params",
                                     "is_set_mask"), args, kwargs, loc,
                  {"is_set_mask": ConstV(True, bool_)})
    src0 = want_local(b["src0"], "asc.compare src0", loc)
    src1 = want_local(b["src1"], "asc.compare src1", loc)
    dtype = src0.dtype
    if src1.dtype != dtype:
        raise KernelTypeError(f"asc.compare: src1 is {src1.dtype.name} but src0 is "
                              f"{dtype.name}; both sources must have one dtype", loc)
    if dtype not in COMPARE_TYPES:
        raise KernelTypeError(f"asc.compare does not support {dtype.name} sources on Ascend 910B "
                              f"(A2/A3); supported: {_names(COMPARE_TYPES)}", loc)
    mode = want_enum(b["cmp_mode"], CMPMODE, "asc.compare cmp_mode", loc)
    if mode not in compare_modes(dtype):
        raise KernelTypeError(f"asc.compare with {dtype.name} sources supports only CMPMODE.EQ "
                              f"on Ascend 910B (A2/A3), got CMPMODE.{mode.name}", loc)
    mask_operand(b["mask"], dtype, "compare", loc)          # checked; reserved on A2/A3
    S.truth(b["is_set_mask"], loc)
    strides = repeat_strides(b["repeat_params"], True, loc)
    an.emit(ir.Intrinsic("compare", (None, src0.ref(), src1.ref(), ir.Const(1, int64))
                         + strides, (), loc,
                         (("dtype", dtype), ("cmp_mode", int(mode)), ("form", "masked"),
                          ("cmpmask", "dst"))))
    return NoneV()


def select_register(an, args, kwargs, loc):
    """select(dst, src0, src1, repeat_times, repeat_params, sel_mode) (modes 0 and 2) or
    select(dst, sel_mask, src0, repeat_times, repeat_params) (mode 1, the scalar in CMPMASK)."""
    if "sel_mode" in kwargs or len(args) == 6:
        b = bind_args("asc.select()", ("dst", "src0", "src1", "repeat_times", "repeat_params",
                                        "sel_mode"), args, kwargs, loc)
        mode = want_enum(b["sel_mode"], SELMODE, "asc.select sel_mode", loc)
        if mode == SELMODE.VSEL_TENSOR_SCALAR_MODE:
            raise KernelTypeError("asc.select's register form with VSEL_TENSOR_SCALAR_MODE is "
                                  "select(dst, sel_mask, src0, repeat_times, repeat_params) "
                                  "(the scalar is in CMPMASK)", loc)
        sel, kind = None, ("sel" if mode == SELMODE.VSEL_CMPMASK_SPR else "addr")
        src1 = want_local(b["src1"], "asc.select src1", loc)
    else:
        b = bind_args("asc.select()", ("dst", "sel_mask", "src0", "repeat_times",
                                        "repeat_params"), args, kwargs, loc)
        mode, kind, src1 = SELMODE.VSEL_TENSOR_SCALAR_MODE, "scalar", None
        sel = want_local(b["sel_mask"], "asc.select sel_mask", loc)
        if sel.dtype not in SELECT_MASK_TYPES:
            raise KernelTypeError(f"asc.select sel_mask must be a {_names(SELECT_MASK_TYPES)} "
                                  f"tensor, got {sel.dtype.name}", loc)
    dst = want_local(b["dst"], "asc.select dst", loc)
    src0 = want_local(b["src0"], "asc.select src0", loc)
    dtype = dst.dtype
    if dtype not in SELECT_TYPES:
        raise KernelTypeError(f"asc.select does not support {dtype.name} on Ascend 910B (A2/A3); "
                              f"supported: {_names(SELECT_TYPES)}", loc)
    for t, name in ((src0, "src0"), (src1, "src1")):
        if t is not None and t.dtype != dtype:
            raise KernelTypeError(f"asc.select: {name} is {t.dtype.name} but dst is "
                                  f"{dtype.name}; dst and the sources must have one dtype", loc)
    rt = b["repeat_times"]
    if isinstance(rt, ConstV) and not rt.dtype.is_float and not 0 <= int(rt.value) <= 255:
        raise KernelTypeError(f"asc.select: repeat_times {rt.value} is outside 0..255", loc)
    repeat = want_int(rt, "asc.select repeat_times", loc, int64)
    strides = repeat_strides(b["repeat_params"], True, loc)
    zero = ir.Const(0, int64)
    head = (zero, zero, zero, zero, repeat)     # is_set 0: the mask register as it stands
    operands = (dst.ref(), sel.ref() if sel is not None else None, src0.ref(),
                src1.ref() if src1 is not None else None, None)
    an.emit(ir.Intrinsic("select", operands + head + strides, (), loc,
                         (("dtype", dtype), ("sel_mode", int(mode)), ("form", "masked"),
                          ("cmpmask", kind))))
    return NoneV()
