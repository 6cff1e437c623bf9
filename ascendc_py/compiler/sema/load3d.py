"""Semantic analysis of the img2col load: ``load_data(dst, src, LoadData3DParamsV2(...))`` and
the records ``LoadData3DParamsV1``, ``LoadData3DParamsV2``, ``LoadData3DParamsV2Pro`` (pyasc's
names and positional order). Semantics: ``ops/load3d.py``; lowering: ``codegen/lower_load3d.py``.

``sema/cube.py``'s ``load_data`` hands a 3D record here. Constant fields are checked at compile
time (range, C0 alignment, the K span); run-time values by the library.
"""
from __future__ import annotations

from ...dsl.types import Memory, bool_, int32, int64, uint64
from .. import ir
from ..errors import DtypeError, KernelTypeError, KernelValueError, OperandKindError
from ..ops.load3d import (BOUNDARY_MIN, REPEAT_FIELDS, LOAD3D_TYPES_A, LOAD3D_TYPES_B, LOAD3D_V2_FIELDS, c0_of,
                          output_size, V2PRO_FIELDS, V2PRO_PACKING, v2pro_fields)
from . import scalars as S
from .builtins import bind_args, function, want_int
from .values import ConstV, LocalTensorV, NoneV, RtV, StructV, SVal, TupleV

#: LoadData3DParamsV2 in pyasc's positional order, with defaults
V2_PARAMS = (("pad_list", None), ("l1_h", 1), ("l1_w", 1), ("channel_size", 1),
             ("k_extension", 1), ("m_extension", 1), ("k_start_pt", 0), ("m_start_pt", 0),
             ("stride_w", 1), ("stride_h", 1), ("filter_w", 1), ("filter_h", 1),
             ("dilation_filter_w", 1), ("dilation_filter_h", 1), ("en_transpose", False),
             ("pad_value", 0), ("filter_size_w", False), ("filter_size_h", False),
             ("f_matrix_ctrl", False))
V1_PARAMS = ("pad_list", "l1_h", "l1_w", "c1_index", "fetch_filter_w", "fetch_filter_h",
             "left_top_w", "left_top_h", "stride_w", "stride_h", "filter_w", "filter_h",
             "dilation_filter_w", "dilation_filter_h", "jump_stride", "repeat_mode",
             "repeat_time", "c_size", "pad_value")
_BOOLS = {"en_transpose", "filter_size_w", "filter_size_h", "f_matrix_ctrl"}
_LIMITS = {n: (lo, hi) for n, lo, hi in LOAD3D_V2_FIELDS}
_UNMODELLED = {"en_transpose": "LoadData3DParamsV2.en_transpose is not modelled",
               "f_matrix_ctrl": "LoadData3DParamsV2.f_matrix_ctrl (the right matrix's fmatrix) "
                                "is not modelled"}


def _pads(v: SVal, loc) -> tuple:
    if isinstance(v, NoneV):
        return tuple(ConstV(0, int32) for _ in range(4))
    if not isinstance(v, TupleV) or len(v.items) != 4:
        raise KernelTypeError(f"LoadData3DParamsV2.pad_list must be a list or tuple of 4 "
                              f"integers (left, right, top, bottom), got {v.describe()}", loc)
    return v.items


@function("LoadData3DParamsV2")
def _v2(an, args, kwargs, loc) -> SVal:
    names = tuple(n for n, _ in V2_PARAMS)
    defaults = {n: (NoneV() if d is None else ConstV(d, bool_ if isinstance(d, bool) else int32))
                for n, d in V2_PARAMS}
    b = bind_args("asc.LoadData3DParamsV2()", names, args, kwargs, loc, defaults)
    fields = []
    for (name, _lo, _hi), v in zip(LOAD3D_V2_FIELDS[:4], _pads(b["pad_list"], loc)):
        fields.append((name, v))
    for name in names[1:]:
        v = b[name]
        if name == "pad_value":
            if not isinstance(S.numeric(v), (ConstV, RtV)):
                raise KernelTypeError(f"LoadData3DParamsV2.pad_value must be a number, got "
                                      f"{v.describe()}", loc)
            fields.append((name, S.numeric(v)))
            continue
        if name in _BOOLS:
            v = S.truth(v, loc)
        else:
            want_int(v, f"LoadData3DParamsV2.{name}", loc, int64)
        fields.append((name, v))
    for name, v in fields:
        if name == "pad_value":
            continue
        if name in _BOOLS and isinstance(v, ConstV) and v.value and name in _UNMODELLED:
            raise KernelValueError(_UNMODELLED[name], loc)
        lo, hi = _LIMITS[name]
        if isinstance(v, ConstV) and name not in _BOOLS and not lo <= int(v.value) <= hi:
            raise KernelValueError(f"LoadData3DParamsV2.{name} = {v.value} is out of range "
                                   f"{lo}..{hi}", loc)
    return StructV("LoadData3DParamsV2", tuple(fields))


def _record(kind: str, names: tuple):
    def construct(an, args, kwargs, loc) -> SVal:
        b = bind_args(f"asc.{kind}()", names, args, kwargs, loc,
                      {n: ConstV(0, int32) for n in names})
        return StructV(kind, tuple((n, b[n]) for n in names))
    return construct


function("LoadData3DParamsV1")(_record("LoadData3DParamsV1", V1_PARAMS))
_V2PRO_BOOLS = {"en_transpose", "en_small_k", "filter_size_w", "filter_size_h", "f_matrix_ctrl"}
_V2PRO_UNMODELLED = {"en_transpose": "is not modelled", "en_small_k": "(small-K mode) is not "
                     "modelled", "f_matrix_ctrl": "(the right matrix's fmatrix) is not modelled"}


@function("LoadData3DParamsV2Pro")
def _v2pro(an, args, kwargs, loc) -> SVal:
    names = tuple(n for n, _ in V2PRO_FIELDS)
    defaults = {n: ConstV(d, bool_ if isinstance(d, bool) else
                          (uint64 if n.endswith("config") else int32)) for n, d in V2PRO_FIELDS}
    b = bind_args("asc.LoadData3DParamsV2Pro()", names, args, kwargs, loc, defaults)
    fields = []
    for n in names:
        v = b[n]
        if n in _V2PRO_BOOLS:
            v = S.truth(v, loc)
            if isinstance(v, ConstV) and v.value and n in _V2PRO_UNMODELLED:
                raise KernelValueError(f"LoadData3DParamsV2Pro.{n} {_V2PRO_UNMODELLED[n]}", loc)
        else:
            v = S.numeric(v)
            want_int(v, f"LoadData3DParamsV2Pro.{n}", loc, uint64 if n.endswith("config")
                     else int64)
            hi = 2 ** 64 - 1 if n.endswith("config") else 65535
            if isinstance(v, ConstV) and not 0 <= int(v.value) <= hi:
                raise KernelValueError(f"LoadData3DParamsV2Pro.{n} = {v.value} is out of range "
                                       f"0..{hi}", loc)
        fields.append((n, v))
    return StructV("LoadData3DParamsV2Pro", tuple(fields))


def _packed_checks(rec: StructV, loc) -> None:
    """The window fields packed in constant ext_config / filter_config words, in range."""
    ext, flt = (_const(rec.get(w)) for w in ("ext_config", "filter_config"))
    for word, value in (("ext_config", ext), ("filter_config", flt)):
        if value is None:
            continue
        for name, got in v2pro_fields(ext or 0, flt or 0).items():
            lo, hi = _LIMITS[name]
            if (word, name) in _PACKED and not lo <= got <= hi:
                raise KernelValueError(f"LoadData3DParamsV2Pro.{word} packs {name} = {got}, "
                                       f"out of range {lo}..{hi}", loc,
                                       hint=f"the packing: {_PACKING_TEXT}")


_PACKED = {(w, n) for w, n, _lo, _width in V2PRO_PACKING}
_PACKING_TEXT = "; ".join(f"{w}[{lo + width - 1}:{lo}] = {n}"
                          for w, n, lo, width in V2PRO_PACKING)


def _const(v: SVal):
    return int(v.value) if isinstance(v, ConstV) else None


def _static_checks(rec: StructV, c0: int, loc) -> None:
    """The C0 alignments and spans whose fields are all constants."""
    g = {n: _const(rec.get(n)) for n, _, _ in LOAD3D_V2_FIELDS}
    for name in ("channel_size", "k_start_pt", "k_extension"):
        if g[name] is not None and g[name] % c0:
            raise KernelValueError(
                f"LoadData3DParamsV2.{name} = {g[name]} must be a multiple of C0 = {c0} for "
                f"this dtype", loc,
                hint="store the feature map as NC1HWC0 with the channels zero-padded to a "
                     "multiple of C0 (asc.host.nchw_to_nc1hwc0); the 4-channel small-C forms "
                     "are not modelled")
    if None not in (g["filter_h"], g["filter_w"], g["channel_size"], g["k_start_pt"],
                    g["k_extension"], g["filter_size_w"], g["filter_size_h"]):
        k = ((g["filter_h"] + 256 * g["filter_size_h"]) * (g["filter_w"] + 256 * g["filter_size_w"])
             * g["channel_size"])
        if g["k_start_pt"] + g["k_extension"] > k:
            raise KernelValueError(
                f"LoadData3DParamsV2: k_start_pt + k_extension = "
                f"{g['k_start_pt'] + g['k_extension']} is more than K = filter_h·filter_w·"
                f"channel_size = {k}", loc)
    axes = (("l1_h", "pad_top", "pad_bottom", "filter_h", "dilation_filter_h", "stride_h",
             "filter_size_h"),
            ("l1_w", "pad_left", "pad_right", "filter_w", "dilation_filter_w", "stride_w",
             "filter_size_w"))
    sizes = []
    for l1, pa, pb, f, d, s, big in axes:
        if None in (g[l1], g[pa], g[pb], g[f], g[d], g[s], g[big]):
            return
        sizes.append(output_size(g[l1], g[pa], g[pb], g[f] + 256 * g[big], g[d], g[s]))
    if min(sizes) < 1:
        raise KernelValueError(f"LoadData3DParamsV2: the {g['filter_h']}×{g['filter_w']} kernel "
                               f"(dilation {g['dilation_filter_h']}×{g['dilation_filter_w']}) "
                               f"does not fit the padded {g['l1_h']}×{g['l1_w']} map: no "
                               f"window", loc)
    if g["m_start_pt"] is not None and g["m_extension"] is not None:
        limit = -(-sizes[0] * sizes[1] // 16) * 16
        if g["m_start_pt"] + g["m_extension"] > limit:
            raise KernelValueError(
                f"LoadData3DParamsV2: m_start_pt + m_extension = "
                f"{g['m_start_pt'] + g['m_extension']} is past the {sizes[0]}×{sizes[1]} = "
                f"{sizes[0] * sizes[1]} windows (at most {limit}, whole fractals)", loc)


def load_data_3d(an, dst: SVal, src: SVal, params: StructV, loc) -> SVal:
    """``load_data(dst_A2_or_B2, src_A1_or_B1, LoadData3DParams*)`` (from sema/cube.py)."""
    if params.kind == "LoadData3DParamsV1":
        raise KernelValueError("asc.load_data with LoadData3DParamsV1 (Load3Dv1) does not exist "
                               "on Ascend 910B (A2/A3): the docs list it for the Atlas training "
                               "and inference products only", loc,
                               hint="use asc.LoadData3DParamsV2")
    if not isinstance(dst, LocalTensorV) or dst.memory not in (Memory.L0A, Memory.L0B):
        raise OperandKindError(f"asc.load_data (Load3D) dst must be a LocalTensor at A2 (L0A) "
                               f"or B2 (L0B), got {dst.describe()}", loc)
    if not isinstance(src, LocalTensorV) or src.memory != Memory.L1:
        raise OperandKindError(f"asc.load_data (Load3D) src must be a LocalTensor at A1/B1 "
                               f"(L1): img2col reads the feature map from L1, got "
                               f"{src.describe()}", loc)
    if src.dtype != dst.dtype:
        raise DtypeError(f"asc.load_data: dst is {dst.dtype.name} but src is {src.dtype.name}",
                         loc)
    allowed = LOAD3D_TYPES_A if dst.memory == Memory.L0A else LOAD3D_TYPES_B
    if dst.dtype not in allowed:
        where = "A2 (L0A)" if dst.memory == Memory.L0A else "B2 (L0B)"
        raise DtypeError(f"asc.load_data (Load3Dv2) to {where} does not support "
                         f"{dst.dtype.name} on Ascend 910B (A2/A3); supported: "
                         f"{', '.join(d.name for d in allowed)}", loc)
    if params.kind == "LoadData3DParamsV2Pro":   # the window packed, the map from registers
        c0 = c0_of(dst.dtype.sizeof())
        ch = _const(params.get("channel_size"))
        if ch is not None and ch % c0:
            raise KernelValueError(f"LoadData3DParamsV2Pro.channel_size = {ch} must be a "
                                   f"multiple of C0 = {c0} for this dtype", loc)
        _packed_checks(params, loc)
        ops = tuple(S.to_expr(params.get(n), int64) if n in _V2PRO_BOOLS else
                    want_int(params.get(n), f"LoadData3DParamsV2Pro.{n}", loc,
                             uint64 if n.endswith("config") else int64)
                    for n, _ in V2PRO_FIELDS)
        an.emit(ir.Intrinsic("load_data_3d", (dst.ref(), src.ref()) + ops, (), loc,
                             (("dtype", dst.dtype), ("form", "v2pro"))))
        return NoneV()
    _static_checks(params, c0_of(dst.dtype.sizeof()), loc)
    fields = tuple(S.to_expr(params.get(n), int64) if n in _BOOLS else
                   want_int(params.get(n), f"LoadData3DParamsV2.{n}", loc, int64)
                   for n, _, _ in LOAD3D_V2_FIELDS)
    pad = S.to_expr(params.get("pad_value"), dst.dtype)
    an.emit(ir.Intrinsic("load_data_3d", (dst.ref(), src.ref()) + fields + (pad,), (), loc,
                         (("dtype", dst.dtype),)))
    return NoneV()


@function("set_load_data_boundary")
def _set_load_data_boundary(an, args, kwargs, loc) -> SVal:
    b = bind_args("asc.set_load_data_boundary()", ("boundary",), args, kwargs, loc)
    v = S.numeric(b["boundary"])
    e = want_int(v, "asc.set_load_data_boundary boundary", loc, int64)
    if isinstance(v, ConstV) and int(v.value) != 0 and not \
            BOUNDARY_MIN <= int(v.value) <= 0xFFFFFFFF:
        raise KernelValueError(
            f"asc.set_load_data_boundary({v.value}): the boundary is 0 (none) or "
            f"{BOUNDARY_MIN}..4294967295 bytes for load_data 3D (Load3Dv2)", loc)
    an.emit(ir.Intrinsic("set_load_data_boundary", (e,), (), loc))
    return NoneV()


@function("LoadDataRepeatParam")
def _repeat_param(an, args, kwargs, loc) -> SVal:
    names = tuple(f[0] for f in REPEAT_FIELDS)
    b = bind_args("asc.LoadDataRepeatParam()", names, args, kwargs, loc,
                  {n: ConstV(d, int32) for n, d, _, _ in REPEAT_FIELDS})
    fields = []
    for name, _d, lo, hi in REPEAT_FIELDS:
        v = S.numeric(b[name])
        want_int(v, f"LoadDataRepeatParam.{name}", loc, int64)
        if isinstance(v, ConstV) and not lo <= int(v.value) <= hi:
            raise KernelValueError(f"LoadDataRepeatParam.{name} = {v.value} is out of range "
                                   f"{lo}..{hi}", loc)
        fields.append((name, v))
    return StructV("LoadDataRepeatParam", tuple(fields))


@function("set_load_data_repeat")
def _set_load_data_repeat(an, args, kwargs, loc) -> SVal:
    b = bind_args("asc.set_load_data_repeat()", ("param",), args, kwargs, loc)
    rec = b["param"]
    if not isinstance(rec, StructV) or rec.kind != "LoadDataRepeatParam":
        raise KernelTypeError(f"asc.set_load_data_repeat takes an asc.LoadDataRepeatParam(...), "
                              f"got {rec.describe()}", loc)
    ops = tuple(want_int(rec.get(n), f"LoadDataRepeatParam.{n}", loc, int64)
                for n, *_ in REPEAT_FIELDS)
    an.emit(ir.Intrinsic("set_load_data_repeat", ops, (), loc))
    return NoneV()


@function("set_load_data_padding_value")
def _set_load_data_padding_value(an, args, kwargs, loc) -> SVal:
    from ...dsl.types import float64
    b = bind_args("asc.set_load_data_padding_value()", ("pad_value",), args, kwargs, loc)
    value = S.to_expr(S.cast(b["pad_value"], float64, loc), float64)
    an.emit(ir.Intrinsic("set_load_data_padding_value", (value,), (), loc))
    return NoneV()
