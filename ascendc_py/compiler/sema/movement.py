"""Semantic analysis of data movement: data_copy (count and DataCopyParams forms), data_copy_pad
and the parameter records DataCopyParams, DataCopyExtParams, DataCopyPadExtParams,
DataCopyPadParams (semantics: ``ops/movement.py``).

Field values that are compile-time constants are range-checked here (the error names the
constructor's line); runtime values are checked by the runtime library.
"""
from __future__ import annotations

from ...dsl.types import Memory, bool_, int32, int64
from .. import ir
from ..errors import KernelTypeError, KernelValueError, SourceLoc
from ..ops import REGISTRY
from ...simulator.timing_params import copy_path_exists
from ..ops.movement import EXT_LIMITS, MAX_PADDING_BYTES, PARAMS_LIMITS
from . import scalars as S
from .builtins import bind_args, function, want_dtype, want_int
from .values import (ConstV, DTypeV, GmAddrV, GmTensorV, LocalTensorV, NoneV, RtV, StructV,
                     SVal)

# ----------------------------------------------------------------------------- parameter records
_PAD_FIELDS = (("is_pad", False), ("left_padding", 0), ("right_padding", 0),
               ("padding_value", 0))
RECORDS = {
    "DataCopyParams": (("block_count", 1), ("block_len", 0), ("src_stride", 0),
                       ("dst_stride", 0)),
    "DataCopyExtParams": (("block_count", 1), ("block_len", 0), ("src_stride", 0),
                          ("dst_stride", 0), ("rsv", 0)),
    "DataCopyPadExtParams": _PAD_FIELDS,
    "DataCopyPadParams": _PAD_FIELDS,
}
_LIMITS = {"DataCopyParams": dict(PARAMS_LIMITS), "DataCopyExtParams": dict(EXT_LIMITS)}


def _record(kind: str):
    names = tuple(n for n, _ in RECORDS[kind])

    def construct(an, args, kwargs, loc):
        args, dtype = list(args), None
        if kind == "DataCopyPadExtParams":  # pyasc spells it DataCopyPadExtParams(dtype, …)
            if args and isinstance(args[0], DTypeV):
                dtype = args.pop(0)
            elif "dtype" in kwargs:
                kwargs = dict(kwargs)
                dtype = kwargs.pop("dtype")
                want_dtype(dtype, f"{kind}.dtype", loc)
        defaults = {n: ConstV(d, bool_ if isinstance(d, bool) else int32)
                    for n, d in RECORDS[kind]}
        b = bind_args(f"asc.{kind}()", names, args, kwargs, loc, defaults)
        for n in names:
            v = b[n]
            if n == "is_pad":
                b[n] = S.truth(v, loc)
            elif n == "padding_value":
                if not isinstance(v, (ConstV, RtV)):
                    raise KernelTypeError(f"{kind}.padding_value must be a number, got "
                                          f"{v.describe()}", loc)
            else:
                want_int(v, f"{kind}.{n}", loc, int64)
                limit = _LIMITS.get(kind, {}).get(n, 255)   # paddings are uint8 element counts
                if isinstance(v, ConstV) and not 0 <= int(v.value) <= limit:
                    raise KernelValueError(f"{kind}.{n} = {v.value} is out of range 0..{limit}",
                                           loc)
        fields = tuple((n, b[n]) for n in names) + (("dtype", dtype or NoneV()),)
        return StructV(kind, fields)
    return construct


for _kind in RECORDS:
    function(_kind)(_record(_kind))


def _fields(v: StructV, names, loc) -> tuple:
    return tuple(want_int(v.get(n), f"{v.kind}.{n}", loc, int64) for n in names)


# ----------------------------------------------------------------------------- operands
def copy_operands(op: str, dst: SVal, src: SVal, loc: SourceLoc) -> str:
    """Check dst/src of a copy; return its direction (gm_to_local, local_to_gm, local_to_local)."""
    for v, what in ((dst, "dst"), (src, "src")):
        if isinstance(v, GmAddrV):
            raise KernelTypeError(f"asc.{op} {what} is a GlobalAddress; wrap it in a "
                                  f"GlobalTensor with set_global_buffer", loc)
        if not isinstance(v, (GmTensorV, LocalTensorV)):
            raise KernelTypeError(f"asc.{op} {what} must be a tensor, got {v.describe()}", loc)
        if isinstance(v, GmTensorV) and v.dtype is None:
            raise KernelTypeError(f"asc.{op} {what}: call set_global_buffer first", loc)
    memories = tuple(v.memory if isinstance(v, LocalTensorV) else Memory.GM for v in (src, dst))
    if memories != (Memory.GM, Memory.GM) and not copy_path_exists(*memories):
        where = " → ".join(v.position.name if isinstance(v, LocalTensorV) else "GM"
                           for v in (src, dst))
        raise KernelTypeError(f"asc.{op} has no data path {where} on the AI Core "
                              f"({memories[0].name} → {memories[1].name})", loc,
                              hint="vector kernels copy GM ↔ VECIN/VECOUT/VECCALC (UB); "
                                   "pick a queue or buffer at one of those positions")
    if dst.dtype != src.dtype:
        raise KernelTypeError(f"asc.{op}: dst is {dst.dtype.name} but src is "
                              f"{src.dtype.name}", loc, hint="use asc.cast to convert types")
    if isinstance(dst, LocalTensorV) and isinstance(src, GmTensorV):
        return "gm_to_local"
    if isinstance(dst, GmTensorV) and isinstance(src, LocalTensorV):
        return "local_to_gm"
    if isinstance(dst, LocalTensorV) and isinstance(src, LocalTensorV):
        return "local_to_local"
    raise KernelTypeError(f"asc.{op} cannot copy GM to GM; stage through UB", loc)


def _check_dtype(op: str, dtype, loc: SourceLoc) -> None:
    allowed = REGISTRY[op].dtypes
    if dtype not in allowed:
        raise KernelTypeError(f"asc.{op} does not support {dtype.name} on Ascend 910B (A2/A3); "
                              f"supported: {', '.join(d.name for d in allowed)}", loc)


# ----------------------------------------------------------------------------- data_copy
@function("data_copy")
def data_copy(an, args, kwargs, loc) -> SVal:
    """``data_copy(dst, src, count)`` or ``data_copy(dst, src, DataCopyParams(...))``."""
    if len(args) + len(kwargs) > 3:
        raise KernelTypeError("asc.data_copy takes (dst, src, count), (dst, src, "
                              "asc.DataCopyParams(...)) or (dst, src, asc.Nd2NzParams(...))",
                              loc, hint="the DataCopyEnhancedParams and slice forms are not "
                                        "supported")
    kw = dict(kwargs)
    for alias in ("repeat_params", "intri_params"):
        if alias in kw:
            kw["count"] = kw.pop(alias)
    b = bind_args("asc.data_copy()", ("dst", "src", "count"), args, kw, loc)
    dst, src, third = b["dst"], b["src"], b["count"]
    if isinstance(third, StructV) and third.kind == "Nd2NzParams":   # the cube's GM -> L1 form
        from .cube import data_copy_nd2nz
        return data_copy_nd2nz(an, dst, src, third, loc)
    if isinstance(third, StructV) and third.kind == "DataCopyCO12DstParams":   # L0C -> GM
        from .cube_sparse import data_copy_co12
        return data_copy_co12(an, dst, src, third, loc)
    from .cube import check_plain_copy
    check_plain_copy(dst, src, loc)
    direction = copy_operands("data_copy", dst, src, loc)
    attrs = (("direction", direction), ("dtype", dst.dtype))
    if isinstance(third, StructV):
        if third.kind != "DataCopyParams":
            raise KernelTypeError(f"asc.data_copy takes a count or asc.DataCopyParams(...), got "
                                  f"{third.kind}", loc,
                                  hint="DataCopyExtParams/DataCopyPadExtParams go with "
                                       "asc.data_copy_pad" if "Ext" in third.kind else "")
        _check_dtype("data_copy", dst.dtype, loc)
        fields = _fields(third, tuple(n for n, _ in PARAMS_LIMITS), loc)
        an.emit(ir.Intrinsic("data_copy", (dst.ref(), src.ref()) + fields, (), loc,
                             attrs + (("form", "params"),)))
        return NoneV()
    count = want_int(third, "asc.data_copy count", loc, int64)
    an.emit(ir.Intrinsic("data_copy", (dst.ref(), src.ref(), count), (), loc, attrs))
    return NoneV()


# ----------------------------------------------------------------------------- data_copy_pad
@function("data_copy_pad")
def data_copy_pad(an, args, kwargs, loc) -> SVal:
    """``data_copy_pad(dst, src, DataCopyExtParams(...)[, DataCopyPadExtParams(...)])`` (also
    the older ``DataCopyParams`` + ``DataCopyPadParams`` overload)."""
    b = bind_args("asc.data_copy_pad()", ("dst", "src", "data_copy_params", "pad_params"),
                  args, kwargs, loc, {"pad_params": NoneV()})
    dst, src, params, pad = b["dst"], b["src"], b["data_copy_params"], b["pad_params"]
    direction = copy_operands("data_copy_pad", dst, src, loc)
    if direction == "local_to_local":
        raise KernelTypeError("asc.data_copy_pad copies GM→UB or UB→GM; for UB→UB use "
                              "asc.data_copy", loc)
    for v in (dst, src):
        if isinstance(v, LocalTensorV) and v.memory != Memory.UB:
            raise KernelTypeError(f"asc.data_copy_pad moves data between GM and UB (VECIN/"
                                  f"VECOUT/VECCALC), got a tensor at {v.position.name}", loc)
    _check_dtype("data_copy_pad", dst.dtype, loc)
    if not isinstance(params, StructV) or params.kind not in ("DataCopyExtParams",
                                                              "DataCopyParams"):
        raise KernelTypeError(f"asc.data_copy_pad needs asc.DataCopyExtParams(block_count, "
                              f"block_len, src_stride, dst_stride, rsv), got "
                              f"{params.describe()}", loc)
    fields = _fields(params, ("block_count", "block_len", "src_stride", "dst_stride"), loc)
    zero = ir.Const(0, int64)
    if direction == "local_to_gm":
        if not isinstance(pad, NoneV):
            raise KernelTypeError("asc.data_copy_pad UB→GM takes no padding parameters: it "
                                  "writes exactly block_len bytes per block", loc)
        pad_fields = (zero, zero, zero, ir.Const(0, dst.dtype))
    elif isinstance(pad, NoneV):
        pad_fields = (zero, zero, zero, ir.Const(0, dst.dtype))
    else:
        want = "DataCopyPadExtParams" if params.kind == "DataCopyExtParams" else \
            "DataCopyPadParams"
        if not isinstance(pad, StructV) or pad.kind not in ("DataCopyPadExtParams",
                                                            "DataCopyPadParams"):
            raise KernelTypeError(f"asc.data_copy_pad pad_params must be asc.{want}(is_pad, "
                                  f"left_padding, right_padding, padding_value), got "
                                  f"{pad.describe()}", loc)
        pdt = pad.get("dtype")
        if isinstance(pdt, DTypeV) and pdt.dtype != dst.dtype:
            raise KernelTypeError(f"asc.data_copy_pad: the DataCopyPadExtParams are for "
                                  f"{pdt.dtype.name} but the tensors are {dst.dtype.name}", loc)
        esize = dst.dtype.sizeof()
        for n in ("left_padding", "right_padding"):
            v = pad.get(n)
            if isinstance(v, ConstV) and int(v.value) * esize > MAX_PADDING_BYTES:
                raise KernelValueError(f"{pad.kind}.{n} = {v.value} elements of "
                                       f"{dst.dtype.name} is more than {MAX_PADDING_BYTES} "
                                       f"bytes", loc)
        pad_fields = (S.to_expr(pad.get("is_pad"), int64),
                      want_int(pad.get("left_padding"), f"{pad.kind}.left_padding", loc, int64),
                      want_int(pad.get("right_padding"), f"{pad.kind}.right_padding", loc,
                               int64),
                      S.to_expr(pad.get("padding_value"), dst.dtype))
    bl = params.get("block_len")
    if isinstance(bl, ConstV) and int(bl.value) % dst.dtype.sizeof():
        raise KernelValueError(f"{params.kind}.block_len = {bl.value} bytes is not a multiple "
                               f"of sizeof({dst.dtype.name}) = {dst.dtype.sizeof()}", loc)
    an.emit(ir.Intrinsic("data_copy_pad", (dst.ref(), src.ref()) + fields + pad_fields, (),
                         loc, (("direction", direction), ("dtype", dst.dtype))))
    return NoneV()
