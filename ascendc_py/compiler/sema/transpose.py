"""Semantic analysis of ``transpose``, ``trans_data_to_5hd`` and their records
``TransposeParamsExt`` and ``TransDataTo5HDParams`` (semantics: ``ops/transpose.py``).
Compile-time sizes are checked here; run-time ones by an assertion at the call's line (the
kernel stops there)."""
from __future__ import annotations

from ...dsl.types import bool_, int64, uint64
from .. import ir
from ..errors import ConstantRangeError, KernelTypeError, KernelValueError
from ..ops.transpose import (BASIC_TYPES, EXT_B16_TYPES, LAYOUT_TYPES, MAX_C, MAX_HW, PARAMS,
                             TRANS5HD_PARAMS, TRANS5HD_TYPES, TransposeType)
from . import scalars as S
from .builtins import METHODS, bind_args, function, want_dtype, want_enum, want_int, want_local
from .values import ConstV, EnumV, LocalTensorV, NoneV, StructV, TupleV

T = TransposeType
_NAMES = tuple(n for n, _ in PARAMS)


@function("TransposeParamsExt")
def _params(an, args, kwargs, loc):
    """TransposeParamsExt(n_size=0, c_size=0, h_size=0, w_size=0, transpose_type=...)."""
    defaults = {n: (EnumV(d) if isinstance(d, T) else ConstV(d, int64)) for n, d in PARAMS}
    b = bind_args("asc.TransposeParamsExt()", _NAMES, args, kwargs, loc, defaults)
    for n in _NAMES[:4]:
        want_int(b[n], f"TransposeParamsExt.{n}", loc, int64)
        v = b[n]
        if isinstance(v, ConstV) and not 0 <= int(v.value) <= 65535:
            raise ConstantRangeError(f"TransposeParamsExt.{n} is {v.value}; the field holds "
                                     f"0..65535", loc)
    want_enum(b["transpose_type"], T, "TransposeParamsExt.transpose_type", loc)
    return StructV("TransposeParamsExt", tuple((n, b[n]) for n in _NAMES))


def _assert(an, cond: ir.Expr, msg: str, loc) -> None:
    an.emit(ir.Intrinsic("kernel_assert", (cond,), (), loc, (("msg", msg),)))


def _mul(a, b):
    return ir.Bin("mul", a, b, int64)


def _const(e):
    return e.value if isinstance(e, ir.Const) else None


@function("transpose")
def _transpose(an, args, kwargs, loc):
    extended = len(args) + len(kwargs) > 2
    form = ("dst", "src", "shared_tmp_buffer", "params") if extended else ("dst", "src")
    b = bind_args("asc.transpose()", form, args, kwargs, loc)
    dst = want_local(b["dst"], "asc.transpose dst", loc)
    src = want_local(b["src"], "asc.transpose src", loc)
    if src.dtype != dst.dtype:
        raise KernelTypeError(f"asc.transpose: src is {src.dtype.name} but dst is "
                              f"{dst.dtype.name}; they must have one dtype", loc)
    zero, sixteen = ir.Const(0, int64), ir.Const(16, int64)
    kind, sizes, tmp = T.TRANSPOSE_ND2ND_B16, (zero, zero, sixteen, sixteen), None
    allowed = BASIC_TYPES
    if extended:
        tmp = want_local(b["shared_tmp_buffer"], "asc.transpose shared_tmp_buffer", loc)
        p = b["params"]
        if not isinstance(p, StructV) or p.kind != "TransposeParamsExt":
            raise KernelTypeError(f"asc.transpose: params must be asc.TransposeParamsExt(...), "
                                  f"got {p.describe()}", loc)
        f = dict(p.fields)
        kind = T(want_enum(f["transpose_type"], T, "transpose_type", loc))
        if kind == T.TRANSPOSE_TYPE_NONE:
            return NoneV()                       # "the API does nothing"
        if kind not in (T.TRANSPOSE_ND2ND_B16, T.TRANSPOSE_NCHW2NHWC, T.TRANSPOSE_NHWC2NCHW):
            raise KernelValueError(f"asc.transpose: {kind.name} is not supported by Ascend C "
                                   f"(TRANSPOSE_ND2ND_B16, TRANSPOSE_NCHW2NHWC and "
                                   f"TRANSPOSE_NHWC2NCHW are)", loc)
        if kind == T.TRANSPOSE_ND2ND_B16:
            allowed = EXT_B16_TYPES
        else:
            allowed = LAYOUT_TYPES
            sizes = tuple(want_int(f[n], n, loc, int64) for n in _NAMES[:4])
    if dst.dtype not in allowed:
        names = ", ".join(d.name for d in allowed)
        raise KernelTypeError(f"asc.transpose ({kind.name}) does not support {dst.dtype.name} "
                              f"on Ascend 910B (A2/A3); supported: {names}", loc)
    es = ir.Const(dst.dtype.sizeof(), int64)
    tmp_bytes = zero
    if kind != T.TRANSPOSE_ND2ND_B16:
        n, c, h, w = sizes
        hw = _mul(h, w)
        if _const(c) is not None and _const(c) > MAX_C:
            raise ConstantRangeError(f"TransposeParamsExt.c_size is {_const(c)}; at most "
                                     f"{MAX_C}", loc)
        if _const(hw) is not None or (_const(h) is not None and _const(w) is not None):
            hwv = (_const(h) or 0) * (_const(w) or 0) if _const(hw) is None else _const(hw)
            if hwv > MAX_HW or hwv * dst.dtype.sizeof() % 32:
                raise ConstantRangeError(
                    f"TransposeParamsExt: h_size * w_size is {hwv}; it must be at most {MAX_HW} "
                    f"and h_size * w_size * sizeof({dst.dtype.name}) a multiple of 32 bytes", loc)
        ok = ir.Bin("and", ir.Cmp("le", c, ir.Const(MAX_C, int64)),
                    ir.Bin("and", ir.Cmp("le", hw, ir.Const(MAX_HW, int64)),
                           ir.Cmp("eq", ir.Bin("mod", _mul(hw, es), ir.Const(32, int64), int64),
                                  zero), bool_), bool_)
        _assert(an, ok, "asc.transpose: c_size <= 4095, h_size * w_size <= 4095 and h_size * "
                        "w_size * sizeof(T) a multiple of 32 bytes are required", loc)
        h0 = 32 if dst.dtype.sizeof() == 1 else 16
        rows = ir.Bin("add", c, ir.Const(2, int64), int64) if kind == T.TRANSPOSE_NCHW2NHWC \
            else ir.Bin("add", _mul(c, ir.Const(2, int64)), ir.Const(1, int64), int64)
        tmp_bytes = _mul(rows, ir.Const(h0 * 32, int64))   # rows * h0 * w0 * sizeof(T)
        have = _mul(ir.Cast(tmp.size, int64), ir.Const(tmp.dtype.sizeof(), int64))
        count = _mul(_mul(n, c), hw)
        _assert(an, ir.Bin("or", ir.Cmp("ge", have, tmp_bytes), ir.Cmp("eq", count, zero),
                           bool_),
                f"asc.transpose ({kind.name}): shared_tmp_buffer is smaller than Ascend C "
                f"requires ((c_size {'+ 2' if kind == T.TRANSPOSE_NCHW2NHWC else '* 2 + 1'})"
                f" * {h0} * 32 bytes)", loc)
        nbytes = _mul(count, es)
        d0, s0 = ir.Cast(dst.addr, int64), ir.Cast(src.addr, int64)
        apart = ir.Bin("or", ir.Cmp("le", ir.Bin("add", d0, nbytes, int64), s0),
                       ir.Cmp("le", ir.Bin("add", s0, nbytes, int64), d0), bool_)
        _assert(an, ir.Bin("or", apart, ir.Cmp("eq", count, zero), bool_),
                f"asc.transpose ({kind.name}): src and dst overlap; Ascend C does not allow "
                f"it for this transpose type", loc)
    refs = (dst.ref(), src.ref(), tmp.ref() if tmp is not None else None)
    an.emit(ir.Intrinsic("transpose", refs + tuple(sizes) + (tmp_bytes,), (), loc,
                         (("dtype", dst.dtype), ("kind", int(kind)))))
    return NoneV()


# ----------------------------------------------------------------------------- trans_data_to_5hd

_5HD_NAMES = tuple(n for n, _ in TRANS5HD_PARAMS)


@function("TransDataTo5HDParams")
def _params_5hd(an, args, kwargs, loc):
    """TransDataTo5HDParams(dst_high_half=False, src_high_half=False, repeat_times=1,
    dst_rep_stride=0, src_rep_stride=0)."""
    defaults = {n: ConstV(d, bool_ if isinstance(d, bool) else int64)
                for n, d in TRANS5HD_PARAMS}
    b = bind_args("asc.TransDataTo5HDParams()", _5HD_NAMES, args, kwargs, loc, defaults)
    fields = []
    for n in _5HD_NAMES:
        if n.endswith("high_half"):
            fields.append((n, S.truth(b[n], loc)))
            continue
        want_int(b[n], f"TransDataTo5HDParams.{n}", loc, int64)
        v = b[n]
        limit = 255 if n == "repeat_times" else 65535
        if isinstance(v, ConstV) and not 0 <= int(v.value) <= limit:
            raise ConstantRangeError(f"TransDataTo5HDParams.{n} is {v.value}; the field holds "
                                     f"0..{limit}", loc)
        fields.append((n, v))
    return StructV("TransDataTo5HDParams", tuple(fields))


_PHY = "_trans5hd_phy_dtypes"


def _record_phy_dtype(original):
    def handler(an, t, name, args, kwargs, loc):
        an.__dict__.setdefault(_PHY, []).append(t.dtype)   # for trans_data_to_5hd's dtype
        return original(an, t, name, args, kwargs, loc)
    return handler


def _address_dtype(an, given, loc):
    """The data dtype of the address forms: ``dtype=`` when given, else the dtype of the
    tensors the kernel took get_phy_addr of (as pyasc infers it), which must be one."""
    if given is not None:
        return want_dtype(given, "asc.trans_data_to_5hd dtype", loc)
    seen = set(an.__dict__.get(_PHY, []))
    if len(seen) != 1:
        raise KernelTypeError("asc.trans_data_to_5hd with addresses: cannot tell the data "
                              "dtype (pyasc infers it from the get_phy_addr of the data "
                              "tensors; here " + (f"{len(seen)} dtypes were used" if seen else
                                                  "none was called") + ")", loc,
                              hint="pass dtype=asc.float16 (or the data's dtype)")
    return next(iter(seen))


def _addresses(an, v, what, loc):
    """(kind, [16 address expressions] | table LocalTensorV, dtype or None)."""
    if isinstance(v, TupleV):
        if len(v.items) != 16:
            raise KernelTypeError(f"asc.trans_data_to_5hd: {what} must list 16 addresses or "
                                  f"tensors, got {len(v.items)}", loc)
        if all(isinstance(x, LocalTensorV) for x in v.items):
            dtypes = {x.dtype for x in v.items}
            if len(dtypes) != 1:
                raise KernelTypeError(f"asc.trans_data_to_5hd: the tensors of {what} must have "
                                      f"one dtype", loc)
            tensors = [want_local(x, f"asc.trans_data_to_5hd {what}", loc) for x in v.items]
            return "list", [ir.Cast(t.addr, int64) for t in tensors], dtypes.pop()
        return "list", [want_int(x, f"asc.trans_data_to_5hd {what} address", loc, int64)
                        for x in v.items], None
    t = want_local(v, f"asc.trans_data_to_5hd {what}", loc)
    if t.dtype != uint64:
        raise KernelTypeError(f"asc.trans_data_to_5hd: {what} as a LocalTensor holds the 16 "
                              f"addresses and must be uint64, got {t.dtype.name}", loc,
                              hint="or pass lists of 16 LocalTensors")
    return "table", t, None


@function("trans_data_to_5hd")
def _trans_data_to_5hd(an, args, kwargs, loc):
    kwargs = dict(kwargs)
    given = kwargs.pop("dtype", None)
    b = bind_args("asc.trans_data_to_5hd()", ("dst_list", "src_list", "params"), args, kwargs,
                  loc)
    dk, d, ddt = _addresses(an, b["dst_list"], "dst_list", loc)
    sk, s, sdt = _addresses(an, b["src_list"], "src_list", loc)
    if dk != sk:
        raise KernelTypeError("asc.trans_data_to_5hd: dst_list and src_list must be of one "
                              "form (16 tensors, 16 addresses, or uint64 address tensors)", loc)
    dtype = ddt or sdt
    if ddt is not None and sdt is not None and ddt != sdt:
        raise KernelTypeError(f"asc.trans_data_to_5hd: dst tensors are {ddt.name} but src "
                              f"tensors are {sdt.name}", loc)
    if dtype is None:
        dtype = _address_dtype(an, given, loc)
    if dtype not in TRANS5HD_TYPES:
        names = ", ".join(x.name for x in TRANS5HD_TYPES)
        raise KernelTypeError(f"asc.trans_data_to_5hd does not support {dtype.name} on Ascend "
                              f"910B (A2/A3); supported: {names}", loc)
    p = b["params"]
    if not isinstance(p, StructV) or p.kind != "TransDataTo5HDParams":
        raise KernelTypeError(f"asc.trans_data_to_5hd: params must be "
                              f"asc.TransDataTo5HDParams(...), got {p.describe()}", loc)
    f = dict(p.fields)
    fields = [S.to_expr(f[n], int64) if n.endswith("high_half") else
              want_int(f[n], n, loc, int64) for n in _5HD_NAMES]
    if dk == "table":
        operands = (d.ref(), s.ref()) + (ir.Const(-1, int64),) * 32
    else:
        operands = (None, None) + tuple(d) + tuple(s)
    an.emit(ir.Intrinsic("trans_data_to_5hd", operands + tuple(fields), (), loc,
                         (("dtype", dtype),)))
    return NoneV()


METHODS[(LocalTensorV, "get_phy_addr")] = _record_phy_dtype(
    METHODS[(LocalTensorV, "get_phy_addr")])
