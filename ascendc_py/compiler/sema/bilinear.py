"""Semantic analysis of ``bilinear_interpolation`` (semantics: ``ops/bilinear.py``):
operand dtypes and constant ranges at compile time, run-time values by an assertion at the
call's line."""
from __future__ import annotations

from ...dsl.types import bool_, int64, uint8, uint32
from .. import ir
from ..errors import ConstantRangeError, KernelTypeError
from ..ops.bilinear import BILINEAR_TYPES
from . import scalars as S
from .builtins import bind_args, function, mask_operand, want_int, want_local
from .values import NoneV

_PARAMS = ("dst", "src0", "src0_offset", "src1", "mask", "h_repeat", "repeat_mode",
           "dst_blk_stride", "v_r_offset", "v_repeat", "shared_tmp_buffer")
_LIMITS = {"h_repeat": 255, "v_repeat": 255, "dst_blk_stride": 65535, "v_r_offset": 65535}


def _in(e, lo, hi):
    return ir.Bin("and", ir.Cmp("ge", e, ir.Const(lo, int64)), ir.Cmp("le", e, ir.Const(hi, int64)),
                  bool_)


@function("bilinear_interpolation")
def _bilinear(an, args, kwargs, loc):
    b = bind_args("asc.bilinear_interpolation()", _PARAMS, args, kwargs, loc)
    what = "asc.bilinear_interpolation"
    dst = want_local(b["dst"], f"{what} dst", loc)
    src0 = want_local(b["src0"], f"{what} src0", loc)
    src1 = want_local(b["src1"], f"{what} src1", loc)
    off = want_local(b["src0_offset"], f"{what} src0_offset", loc)
    tmp = want_local(b["shared_tmp_buffer"], f"{what} shared_tmp_buffer", loc)
    if dst.dtype not in BILINEAR_TYPES:
        raise KernelTypeError(f"{what} does not support {dst.dtype.name} on Ascend 910B (Atlas "
                              f"A2/A3); supported: half", loc)
    for name, t in (("src0", src0), ("src1", src1)):
        if t.dtype != dst.dtype:
            raise KernelTypeError(f"{what}: {name} is {t.dtype.name} but dst is "
                                  f"{dst.dtype.name}; they must have one dtype", loc)
    if off.dtype != uint32:
        raise KernelTypeError(f"{what}: src0_offset must be uint32, got {off.dtype.name}", loc)
    if tmp.dtype != uint8:
        raise KernelTypeError(f"{what}: shared_tmp_buffer must be uint8, got "
                              f"{tmp.dtype.name}", loc)
    kind, lo, hi = mask_operand(b["mask"], dst.dtype, "bilinear_interpolation", loc)
    vals = {}
    for name, limit in _LIMITS.items():
        e = want_int(b[name], f"{what} {name}", loc, int64)
        if isinstance(e, ir.Const) and not 0 <= e.value <= limit:
            raise ConstantRangeError(f"{what}: {name} is {e.value}; it must be in 0..{limit}",
                                     loc)
        vals[name] = e
    mode = S.to_expr(S.truth(b["repeat_mode"], loc), int64)
    ok = ir.Const(True, bool_)
    for name, limit in _LIMITS.items():
        ok = ir.Bin("and", ok, _in(vals[name], 0, limit), bool_)
    an.emit(ir.Intrinsic("kernel_assert", (ok,), (), loc, (("msg", f"{what}: h_repeat and "
                         f"v_repeat must be in 0..255, dst_blk_stride and v_r_offset in "
                         f"0..65535"),)))
    if isinstance(kind, ir.Const) and kind.value == 0:
        if isinstance(lo, ir.Const) and not 1 <= lo.value <= 128:
            raise ConstantRangeError(f"{what}: mask {lo.value} must be in 1..128 (lanes of "
                                     f"half)", loc)
        an.emit(ir.Intrinsic("kernel_assert", (_in(lo, 1, 128),), (), loc,
                             (("msg", f"{what}: the mask must be in 1..128 (lanes of half)"),)))
    refs = (dst.ref(), src0.ref(), off.ref(), src1.ref(), tmp.ref())
    scalars = (kind, lo, hi, vals["h_repeat"], mode, vals["dst_blk_stride"],
               vals["v_r_offset"], vals["v_repeat"])
    an.emit(ir.Intrinsic("bilinear_interpolation", refs + scalars, (), loc,
                         (("dtype", dst.dtype),)))
    return NoneV()

