"""Semantic analysis of ``transpose`` and its record ``TransposeParamsExt`` (semantics:
``ops/transpose.py``). Compile-time sizes are checked here; run-time ones by an assertion at
the call's line (the kernel stops there)."""
from __future__ import annotations

from ...dsl.types import bool_, int64
from .. import ir
from ..errors import ConstantRangeError, KernelTypeError, KernelValueError
from ..ops.transpose import (BASIC_TYPES, EXT_B16_TYPES, LAYOUT_TYPES, MAX_C, MAX_HW, PARAMS,
                             TransposeType)
from .builtins import bind_args, function, want_enum, want_int, want_local
from .values import ConstV, EnumV, NoneV, StructV

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
