"""Semantic analysis of AIPP (semantics: ``ops/aipp.py``): the parameter records, the
``set_aipp_functions`` register writes and ``load_image_to_local``.

The AIPP registers are kernel variables (``aipp.*``, zero from the kernel's start,
``Analyzer.prologue``): ``set_aipp_functions`` assigns them where it runs, as the hardware's
register writes, and ``load_image_to_local`` reads them where it runs, so a configuration set
in a branch or a called function is the one in force. The processing fields are compile-time
numbers (register constants); the crop of ``LoadImageToLocalParams`` may be run-time integers.
"""
from __future__ import annotations

import numpy as np

from ...dsl.types import Memory, bool_, float16, int8, int64, uint8
from .. import ir
from ..errors import (ConstantRangeError, KernelTypeError, KernelValueError,
                      UnsupportedConstructError)
from ..ops.aipp import AIPP_TYPES, LOAD_IMAGE_FIELDS, RECORDS, AippInputFormat
from .builtins import bind_args, function, want_dtype, want_enum, want_int, want_local
from .values import ConstV, DTypeV, GmTensorV, NoneV, StructV

_SUBRECORDS = (("padding_params", "AippPaddingParams"), ("swap_params", "AippSwapParams"),
               ("single_line_params", "AippSingleLineParams"),
               ("dtc_params", "AippDataTypeConvParams"),
               ("c_padding_params", "AippChannelPaddingParams"),
               ("csc_params", "AippColorSpaceConvParams"))

#: the AIPP registers load_image_to_local reads (int64 kernel variables)
#: (csc_r<k>: row k of the matrix, three int16 in 16-bit fields; csc_bias: bias_in_0..2 and
#: bias_out_0..2 in 8-bit fields)
REGISTERS = ("set", "arg", "off", "arg1", "off1", "fmt", "f16", "swap_rb", "swap_ax", "swap_uv",
             "single", "csc", "csc_r0", "csc_r1", "csc_r2", "csc_bias", "mean0", "mean1",
             "mean2", "min0", "min1", "min2", "var0", "var1", "var2", "cpad_mode", "cpad_value",
             "pad0", "pad1", "pad2")


def _number(v, what: str, loc):
    if isinstance(v, ConstV) and isinstance(v.value, (bool, int, float, np.number)):
        return v.value
    raise KernelValueError(f"{what} must be a compile-time number (an AIPP register "
                           f"constant), got {v.describe()}", loc)


def _record(kind: str):
    fields = RECORDS[kind]

    def build(an, args, kwargs, loc):
        b = bind_args(f"asc.{kind}()", tuple(n for n, _ in fields), args, kwargs, loc,
                      {n: ConstV(d, bool_ if isinstance(d, bool) else int64)
                       for n, d in fields})
        return StructV(kind, tuple((n, ConstV(_number(b[n], f"{kind}.{n}", loc), int64))
                                   for n, _ in fields))
    build.__name__ = f"_{kind}"
    build.__doc__ = f"asc.{kind}({', '.join(f'{n}={d!r}' for n, d in fields)})"
    return function(kind)(build)


for _kind in RECORDS:
    _record(_kind)


@function("AippParams")
def _aipp_params(an, args, kwargs, loc):
    """AippParams(dtype, padding_params=None, swap_params=None, ...): the output dtype (int8 or
    float16) and the six processing records (their defaults when None)."""
    names = ("dtype",) + tuple(n for n, _ in _SUBRECORDS)
    b = bind_args("asc.AippParams()", names, args, kwargs, loc,
                  {n: NoneV() for n, _ in _SUBRECORDS})
    dtype = want_dtype(b["dtype"], "AippParams dtype", loc)
    if dtype not in AIPP_TYPES:
        raise KernelTypeError(f"AippParams dtype must be asc.int8 or asc.float16, got "
                              f"{dtype.name}", loc)
    fields = [("dtype", DTypeV(dtype))]
    for name, kind in _SUBRECORDS:
        v = b[name]
        if isinstance(v, NoneV):
            v = StructV(kind, tuple((n, ConstV(d, int64)) for n, d in RECORDS[kind]))
        elif not isinstance(v, StructV) or v.kind != kind:
            raise KernelTypeError(f"AippParams {name} must be asc.{kind}(...), got "
                                  f"{v.describe()}", loc)
        fields.append((name, v))
    return StructV("AippParams", tuple(fields))


def _bits(value, dtype, what: str, loc) -> int:
    """A register value of the output dtype as its bits (int8 range-checked; half rounded)."""
    if dtype == int8:
        if not -128 <= int(value) <= 127 or int(value) != value:
            raise ConstantRangeError(f"{what} is {value}; an int8 output takes -128..127", loc)
        return int(value)
    return int(np.array(value, np.float16).view(np.uint16))


def _registers(an, loc) -> dict:
    regs = getattr(an, "aipp_registers", None)
    if regs is None:
        regs = {n: ir.Var(f"aipp.{n}", int64) for n in REGISTERS}
        for var in regs.values():
            an.prologue.append(ir.Assign(var, ir.Const(0, int64), loc))
        an.aipp_registers = regs
    return regs


@function("set_aipp_functions")
def _set_aipp_functions(an, args, kwargs, loc):
    """set_aipp_functions(src0[, src1], input_format, config)."""
    params = ("src0", "src1", "input_format", "config") if len(args) + len(kwargs) == 4 else (
        "src0", "input_format", "config")
    b = bind_args("asc.set_aipp_functions()", params, args, kwargs, loc)
    fmt = want_enum(b["input_format"], AippInputFormat, "set_aipp_functions input_format",
                    loc)
    two = fmt == AippInputFormat.YUV420SP_U8
    if two != ("src1" in b):
        raise KernelTypeError(
            f"set_aipp_functions: {fmt.name} takes "
            + ("two sources (the Y plane src0 and the UV plane src1)" if two else
               "one source (src1 is the UV plane of YUV420SP_U8 only)"), loc)
    srcs = [b["src0"]] + ([b["src1"]] if two else [])
    for name, src in zip(("src0", "src1"), srcs):
        if not isinstance(src, GmTensorV) or src.dtype is None:
            raise KernelTypeError(f"set_aipp_functions {name} must be a GlobalTensor of the "
                                  f"image, got {src.describe()}", loc)
    config = b["config"]
    if not isinstance(config, StructV) or config.kind != "AippParams":
        raise KernelTypeError(f"set_aipp_functions config must be asc.AippParams(...), got "
                              f"{config.describe()}", loc)
    dtype = config.get("dtype").dtype
    sub = {name: {n: v.value for n, v in config.get(name).fields} for name, _ in _SUBRECORDS}
    csc = sub["csc_params"]
    if csc["is_enable_csc"] and fmt == AippInputFormat.YUV400_U8:
        raise UnsupportedConstructError("set_aipp_functions: colour-space conversion "
                                        "(is_enable_csc) of YUV400_U8 (one channel) is not "
                                        "supported", loc)
    packed_rows = []
    for r in range(3):
        word = 0
        for c in range(3):
            m = int(csc[f"csc_matrix_r{r}_c{c}"])
            if not -32768 <= m <= 32767:
                raise ConstantRangeError(f"AippColorSpaceConvParams.csc_matrix_r{r}_c{c} is "
                                         f"{m}; it is an int16", loc)
            word |= (m & 0xFFFF) << (16 * c)
        packed_rows.append(word)
    bias = 0
    for i, name in enumerate([f"csc_bias_in_{k}" for k in range(3)]
                             + [f"csc_bias_out_{k}" for k in range(3)]):
        if not 0 <= int(csc[name]) <= 255:
            raise ConstantRangeError(f"AippColorSpaceConvParams.{name} is {csc[name]}; it is "
                                     f"a uint8", loc)
        bias |= int(csc[name]) << (8 * i)
    pad, dtc, cpad = sub["padding_params"], sub["dtc_params"], sub["c_padding_params"]
    if pad["padding_mode"] != 0:
        raise UnsupportedConstructError(
            f"set_aipp_functions: padding mode {pad['padding_mode']} is not simulated; mode 0 "
            f"(constant left/right padding) is", loc)
    if cpad["c_padding_mode"] not in (0, 1):
        raise ConstantRangeError(f"AippChannelPaddingParams.c_padding_mode is "
                                 f"{cpad['c_padding_mode']}; it must be 0 (to 32 bytes) or 1 "
                                 f"(to 4 channels)", loc)
    for k in range(3):
        if not 0 <= int(dtc[f"dtc_mean_ch{k}"]) <= 255:
            raise ConstantRangeError(f"AippDataTypeConvParams.dtc_mean_ch{k} is "
                                     f"{dtc[f'dtc_mean_ch{k}']}; it is a uint8 (0..255)", loc)
    half = {n: int(np.array(dtc[n], np.float16).view(np.uint16))
            for n in dtc if n.startswith(("dtc_min", "dtc_var"))}
    values = {
        "set": 1, "fmt": int(fmt), "f16": int(dtype == float16),
        "swap_rb": int(bool(sub["swap_params"]["is_swap_rb"])),
        "swap_ax": int(bool(sub["swap_params"]["is_swap_ax"])),
        "swap_uv": int(bool(sub["swap_params"]["is_swap_uv"])),
        "csc": int(bool(csc["is_enable_csc"])), "csc_r0": packed_rows[0],
        "csc_r1": packed_rows[1], "csc_r2": packed_rows[2], "csc_bias": bias,
        "single": int(bool(sub["single_line_params"]["is_single_line_copy"])),
        "cpad_mode": int(cpad["c_padding_mode"]),
        "cpad_value": _bits(cpad["c_padding_value"], dtype,
                            "AippChannelPaddingParams.c_padding_value", loc)}
    for k in range(3):
        values[f"mean{k}"] = int(dtc[f"dtc_mean_ch{k}"])
        values[f"min{k}"] = half[f"dtc_min_ch{k}"]
        values[f"var{k}"] = half[f"dtc_var_ch{k}"]
        values[f"pad{k}"] = _bits(pad[f"padding_value_ch{k}"], dtype,
                                  f"AippPaddingParams.padding_value_ch{k}", loc)
    regs = _registers(an, loc)
    an.emit(ir.Intrinsic("set_aipp_functions", (), (), loc, (("dtype", uint8),)))
    for k, src in enumerate(srcs):
        suffix = "1" if k else ""
        values["arg" + suffix] = ir.Cast(src.arg, int64)
        values["off" + suffix] = ir.Bin("mul", ir.Cast(src.offset, int64),
                                        ir.Const(src.dtype.sizeof(), int64), int64)
    for name, value in values.items():
        an.emit(ir.Assign(regs[name], value if isinstance(value, ir.Expr) else
                          ir.Const(value, int64), loc))
    return NoneV()


@function("LoadImageToLocalParams")
def _load_image_params(an, args, kwargs, loc):
    """LoadImageToLocalParams(horiz_size=2, vert_size=2, horiz_start_pos=0, vert_start_pos=0,
    src_horiz_size=2, top_pad_size=0, bot_pad_size=0, left_pad_size=0, right_pad_size=0)."""
    names = tuple(n for n, _ in LOAD_IMAGE_FIELDS)
    b = bind_args("asc.LoadImageToLocalParams()", names + ("sid",), args, kwargs, loc,
                  {**{n: ConstV(d, int64) for n, d in LOAD_IMAGE_FIELDS},
                   "sid": ConstV(0, int64)})
    for name in names:
        e = want_int(b[name], f"LoadImageToLocalParams.{name}", loc, int64)
        if isinstance(e, ir.Const) and not 0 <= e.value <= 0xFFFF:
            raise ConstantRangeError(f"LoadImageToLocalParams.{name} is {e.value}; the "
                                     f"hardware field holds 0..65535", loc)
    return StructV("LoadImageToLocalParams", tuple((n, b[n]) for n in names))


def _check(an, cond, msg, loc):
    an.emit(ir.Intrinsic("kernel_assert", (cond,), (), loc, (("msg", msg),)))


@function("load_image_to_local")
def _load_image_to_local(an, args, kwargs, loc):
    """load_image_to_local(dst, load_data_params)."""
    b = bind_args("asc.load_image_to_local()", ("dst", "load_data_params"), args, kwargs, loc)
    dst = want_local(b["dst"], "asc.load_image_to_local dst", loc, memory=Memory.L1)
    if dst.dtype not in AIPP_TYPES:
        raise KernelTypeError(f"asc.load_image_to_local dst must be int8 or float16 (the "
                              f"AippParams dtype), got {dst.dtype.name}", loc)
    p = b["load_data_params"]
    if not isinstance(p, StructV) or p.kind != "LoadImageToLocalParams":
        raise KernelTypeError(f"asc.load_image_to_local load_data_params must be "
                              f"asc.LoadImageToLocalParams(...), got {p.describe()}", loc)
    f = {n: want_int(p.get(n), n, loc, int64) for n, _ in LOAD_IMAGE_FIELDS}
    regs = {n: ir.Load(v) for n, v in _registers(an, loc).items()}
    what = "asc.load_image_to_local"
    zero, one = ir.Const(0, int64), ir.Const(1, int64)
    _check(an, ir.Cmp("ne", regs["set"], zero),
           f"{what}: no set_aipp_functions ran before it (the AIPP registers are unset)", loc)
    _check(an, ir.Cmp("eq", regs["f16"], ir.Const(int(dst.dtype == float16), int64)),
           f"{what}: dst is {dst.dtype.name} but the AippParams dtype set by "
           f"set_aipp_functions is not", loc)
    _check(an, ir.Bin("and", ir.Cmp("eq", f["top_pad_size"], zero),
                      ir.Cmp("eq", f["bot_pad_size"], zero), bool_),
           f"{what}: top/bottom padding is not supported by padding mode 0 (left and right "
           f"only)", loc)
    _check(an, ir.Bin("and", ir.Cmp("ge", f["horiz_size"], one),
                      ir.Cmp("ge", f["vert_size"], one), bool_),
           f"{what}: horiz_size and vert_size must be at least 1", loc)
    _check(an, ir.Cmp("le", ir.Bin("add", f["horiz_start_pos"], f["horiz_size"], int64),
                      f["src_horiz_size"]),
           f"{what}: the crop (horiz_start_pos + horiz_size) is wider than the source rows "
           f"(src_horiz_size)", loc)
    fields = tuple(f[n] for n, _ in LOAD_IMAGE_FIELDS if n not in ("top_pad_size",
                                                                     "bot_pad_size"))
    an.emit(ir.Intrinsic("load_image_to_local", (dst.ref(),) + tuple(
        regs[n] for n in REGISTERS[1:]) + fields, (), loc, (("dtype", dst.dtype),)))
    return NoneV()
