"""Semantic analysis of the cube unit: data_copy with Nd2NzParams, load_data, mmad, fixpipe and
their parameter records (Nd2NzParams, LoadData2DParams, MmadParams, FixpipeParamsV220,
FixpipeConfig). Semantics and layouts: ``ops/cube.py``.

Every handler checks positions (which memory each operand must be in), dtypes (the combinations
910B supports) and the fields that are compile-time constants, naming the line; runtime values
are checked by the runtime library (``codegen/lower_cube.py``).
"""
from __future__ import annotations

from ...dsl.types import DataType, Memory, TPosition, bool_, int64
from .. import ir
from ..errors import DtypeError, KernelTypeError, KernelValueError, OperandKindError, SourceLoc
from ..ops.cube import (CUBE_COPY_TYPES, FIXPIPE_FIELDS, FIXPIPE_TYPES, FIXPIPE_UNMODELLED,
                        LOAD2D_FIELDS, LOAD2D_T_FIELDS, LOAD2D_T_V2_FIELDS, MMAD_FIELDS,
                        MMAD_TYPES, ND2NZ_FIELDS, TRANSPOSE_TYPES, CO2Layout, QuantModes)
from . import scalars as S
from .builtins import bind_args, function, want_enum, want_int
from .values import (ConstV, EnumV, GmTensorV, LocalTensorV, NoneV, PyObjV, StructV,
                     SVal)

_BOOL_FIELDS = {"if_transpose", "cmatrix_source", "cmatrix_init_val", "relu_en",
                "is_channel_split", "is_bias", "en_ssparse", "en_winograd_a", "en_winograd_b"}

#: record → ((field, default or None when required), ...) in pyasc's positional order
RECORDS = {
    "Nd2NzParams": tuple((n, None) for n, _, _ in ND2NZ_FIELDS),
    "LoadData2DParams": (("start_index", 0), ("repeat_times", 1), ("src_stride", 0),
                         ("sid", 0), ("dst_gap", 0), ("if_transpose", False), ("addr_mode", 0)),
    "LoadData2dTransposeParams": (("start_index", 0), ("repeat_times", 1), ("src_stride", 0),
                                  ("dst_gap", 0), ("dst_frac_gap", 0), ("addr_mode", 0)),
    "LoadData2dTransposeParamsV2": (("start_index", 0), ("repeat_times", 0), ("src_stride", 0),
                                    ("dst_gap", 0), ("dst_frac_gap", 0), ("src_frac_gap", 0),
                                    ("addr_mode", 0)),
    "MmadParams": (("m", 0), ("n", 0), ("k", 0), ("unit_flag", 0), ("cmatrix_source", False),
                   ("cmatrix_init_val", True)),
    "FixpipeParamsV220": (("n_size", None), ("m_size", None), ("src_stride", None),
                          ("dst_stride", None), ("quant_pre", QuantModes.NoQuant),
                          ("deq_scalar", 0), ("nd_num", 1), ("src_nd_stride", 0),
                          ("dst_nd_stride", 0), ("relu_en", False), ("unit_flag", 0),
                          ("is_channel_split", False)),
}
LIMITS = {"Nd2NzParams": ND2NZ_FIELDS, "LoadData2DParams": LOAD2D_FIELDS,
          "LoadData2dTransposeParams": LOAD2D_T_FIELDS,
          "LoadData2dTransposeParamsV2": LOAD2D_T_V2_FIELDS,
          "MmadParams": MMAD_FIELDS, "FixpipeParamsV220": FIXPIPE_FIELDS}
#: MmadParams's other pyasc overload (is_bias, fm_offset, en_ssparse, en_winograd_a/b)
_MMAD_LEGACY = ("is_bias", "fm_offset", "en_ssparse", "en_winograd_a", "en_winograd_b")


def _default(value) -> SVal:
    if isinstance(value, QuantModes):
        return EnumV(value)
    from ...dsl.types import int32
    return ConstV(value, bool_ if isinstance(value, bool) else int32)


def _record(kind: str):
    names = tuple(n for n, _ in RECORDS[kind])
    limits = {n: (lo, hi) for n, lo, hi in LIMITS[kind]}

    def construct(an, args, kwargs, loc):
        kwargs = dict(kwargs)
        legacy = {}
        if kind == "MmadParams":
            legacy = {n: kwargs.pop(n) for n in _MMAD_LEGACY if n in kwargs}
        defaults = {n: _default(d) for n, d in RECORDS[kind] if d is not None}
        b = bind_args(f"asc.{kind}()", names, args, kwargs, loc, defaults)
        if "is_bias" in legacy:   # MmadParams(m, n, k, is_bias=True): accumulate into L0C
            flag = S.truth(legacy["is_bias"], loc)
            if not isinstance(flag, ConstV):
                raise KernelValueError("MmadParams is_bias must be a compile-time bool; use "
                                       "cmatrix_init_val for a runtime choice", loc)
            b["cmatrix_init_val"] = ConstV(not flag.value, bool_)
        for n in names:
            v = b[n]
            if n == "quant_pre":
                if isinstance(v, ConstV) and not v.dtype.is_float:
                    v = EnumV(QuantModes(int(v.value))) if int(v.value) in \
                        QuantModes._value2member_map_ else v
                b[n] = EnumV(want_enum(v, QuantModes, f"{kind}.quant_pre", loc))
                continue
            if n in _BOOL_FIELDS:
                b[n] = S.truth(v, loc)
                continue
            want_int(v, f"{kind}.{n}", loc, int64)
            lo, hi = limits.get(n, (0, 2 ** 63 - 1))
            if isinstance(v, ConstV) and not lo <= int(v.value) <= hi:
                raise KernelValueError(f"{kind}.{n} = {v.value} is out of range {lo}..{hi}",
                                       loc, hint=_field_hint(kind, n))
        return StructV(kind, tuple((n, b[n]) for n in names))
    return construct


def _field_hint(kind: str, field: str) -> str:
    if kind == "MmadParams" and field in ("m", "n", "k"):
        return "one mmad computes at most 4095×4095×4095; split larger products"
    if field == "repeat_times":
        return "one load_data moves at most 255 fractals; issue several"
    return ""


for _kind in RECORDS:
    function(_kind)(_record(_kind))


@function("FixpipeConfig")
def _fixpipe_config(an, args, kwargs, loc):
    b = bind_args("asc.FixpipeConfig()", ("layout",), args, kwargs, loc)
    layout = want_enum(b["layout"], CO2Layout, "FixpipeConfig.layout", loc)
    return StructV("FixpipeConfig", (("layout", EnumV(layout)),))


@function("FixpipeConfig.cfg_row_major")
def _cfg_row_major(an, args, kwargs, loc):
    bind_args("asc.FixpipeConfig.cfg_row_major()", (), args, kwargs, loc)
    return StructV("FixpipeConfig", (("layout", EnumV(CO2Layout.ROW_MAJOR)),))


@function("FixpipeConfig.cfg_nz")
def _cfg_nz(an, args, kwargs, loc):
    bind_args("asc.FixpipeConfig.cfg_nz()", (), args, kwargs, loc)
    return StructV("FixpipeConfig", (("layout", EnumV(CO2Layout.NZ)),))


# ----------------------------------------------------------------------------- helpers
def _fields(rec: StructV, kind: str, loc) -> tuple:
    out = []
    for n, _ in RECORDS[kind]:
        v = rec.get(n)
        if n == "quant_pre":
            continue
        out.append(S.to_expr(v, int64) if n in _BOOL_FIELDS else
                   want_int(v, f"{kind}.{n}", loc, int64))
    return tuple(out)


def _want_record(v: SVal, kind: str, what: str, loc) -> StructV:
    if not isinstance(v, StructV) or v.kind != kind:
        raise KernelTypeError(f"{what} must be asc.{kind}(...), got {v.describe()}", loc)
    return v


def _local(v: SVal, op: str, what: str, memories: tuple, positions: str, loc) -> LocalTensorV:
    if not isinstance(v, LocalTensorV):
        raise OperandKindError(f"asc.{op} {what} must be a LocalTensor at {positions}, got "
                               f"{v.describe()}", loc)
    if v.memory not in memories:
        raise KernelTypeError(f"asc.{op} {what} must be at {positions}, got a tensor at "
                              f"{v.position.name} ({v.memory.name})", loc,
                              hint=_POSITION_HINT)
    return v


_POSITION_HINT = ("the cube path is GM -(data_copy Nd2Nz)-> A1/B1 (L1) -(load_data)-> A2 (L0A) "
                  "/ B2 (L0B) -(mmad)-> CO1 (L0C) -(fixpipe)-> GM; bias: L1 -(data_copy)-> C2")


def _names(dtypes) -> str:
    return ", ".join(d.name for d in dtypes)


def _const(v: SVal):
    return int(v.value) if isinstance(v, ConstV) else None


# ----------------------------------------------------------------------------- data_copy Nd2Nz
def data_copy_nd2nz(an, dst: SVal, src: SVal, params: StructV, loc: SourceLoc) -> SVal:
    """``data_copy(dst_l1, src_gm, Nd2NzParams(...))`` (called by sema/movement.py)."""
    if not isinstance(src, GmTensorV):
        raise KernelTypeError("asc.data_copy with Nd2NzParams copies GM → L1: src must be a "
                              f"GlobalTensor, got {src.describe()}", loc,
                              hint="the UB → L1 and L1 → L1 ND2NZ forms are not modelled")
    dst = _local(dst, "data_copy", "dst (Nd2NzParams)", (Memory.L1,), "A1/B1/C1 (L1)", loc)
    if dst.dtype not in CUBE_COPY_TYPES:
        raise DtypeError(f"asc.data_copy with Nd2NzParams does not support {dst.dtype.name} "
                         f"on Ascend 910B (A2/A3); supported: {_names(CUBE_COPY_TYPES)}", loc)
    fields = _fields(params, "Nd2NzParams", loc)
    an.emit(ir.Intrinsic("data_copy", (dst.ref(), src.ref()) + fields, (), loc,
                         (("direction", "gm_to_local"), ("dtype", dst.dtype),
                          ("form", "nd2nz"))))
    return NoneV()


def check_plain_copy(dst: SVal, src: SVal, loc: SourceLoc) -> None:
    """data_copy by count or DataCopyParams never touches L0A/L0B/L0C: the cube moves data
    there with load_data, mmad and fixpipe (called by sema/movement.py)."""
    for v, what in ((dst, "dst"), (src, "src")):
        if isinstance(v, LocalTensorV) and v.memory in (Memory.L0A, Memory.L0B, Memory.L0C):
            use = {Memory.L0A: "asc.load_data (L1 → A2)", Memory.L0B: "asc.load_data (L1 → B2)",
                   Memory.L0C: "asc.mmad to write it and asc.fixpipe to read it"}[v.memory]
            raise KernelTypeError(f"asc.data_copy {what} is at {v.position.name} "
                                  f"({v.memory.name}), which data_copy does not reach", loc,
                                  hint=f"use {use}")


# ----------------------------------------------------------------------------- load_data
@function("load_data")
def load_data(an, args, kwargs, loc) -> SVal:
    """``load_data(dst_l0a_or_l0b, src_l1_or_gm, LoadData2DParams(...))``."""
    b = bind_args("asc.load_data()", ("dst", "src", "params"), args, kwargs, loc)
    if isinstance(b["params"], StructV) and b["params"].kind.startswith("LoadData3D"):
        from .load3d import load_data_3d   # img2col (Load3D): sema/load3d.py
        return load_data_3d(an, b["dst"], b["src"], b["params"], loc)
    if isinstance(b["params"], StructV) and b["params"].kind == "LoadData2DParamsV2":
        from .cube_sparse import load_data_2d_v2   # Load2Dv2: sema/cube_sparse.py
        return load_data_2d_v2(an, b["dst"], b["src"], b["params"], loc)
    dst = _local(b["dst"], "load_data", "dst", (Memory.L0A, Memory.L0B), "A2 (L0A) or B2 (L0B)",
                 loc)
    src = b["src"]
    if isinstance(src, LocalTensorV):
        _local(src, "load_data", "src", (Memory.L1,), "A1/B1 (L1) or GM", loc)
    elif not isinstance(src, GmTensorV):
        raise OperandKindError(f"asc.load_data src must be a LocalTensor at A1/B1 (L1) or a "
                               f"GlobalTensor, got {src.describe()}", loc)
    params = _want_record(b["params"], "LoadData2DParams", "asc.load_data params", loc)
    if src.dtype != dst.dtype:
        raise DtypeError(f"asc.load_data: dst is {dst.dtype.name} but src is {src.dtype.name}",
                         loc)
    if dst.dtype not in CUBE_COPY_TYPES:
        raise DtypeError(f"asc.load_data does not support {dst.dtype.name} on Ascend 910B "
                         f"(A2/A3); supported: {_names(CUBE_COPY_TYPES)}", loc)
    tr = params.get("if_transpose")
    if isinstance(tr, ConstV) and tr.value:
        if dst.dtype.bits != 16:
            raise DtypeError(f"asc.load_data with if_transpose=True transposes 16×16 fractals "
                             f"of 16-bit types only, got {dst.dtype.name}", loc,
                             hint="for 8- and 32-bit types lay the matrix out transposed in "
                                  "GM (e.g. B as N×K) so no transpose is needed")
        if isinstance(src, GmTensorV):
            raise KernelTypeError("asc.load_data: if_transpose works only from L1 (A1/B1)", loc)
    fields = _fields(params, "LoadData2DParams", loc)
    an.emit(ir.Intrinsic("load_data", (dst.ref(), src.ref()) + fields, (), loc,
                         (("dtype", dst.dtype),)))
    return NoneV()


@function("load_data_with_transpose")
def load_data_with_transpose(an, args, kwargs, loc) -> SVal:
    """``load_data_with_transpose(dst_l0, src_l1, LoadData2dTransposeParams(...))``."""
    b = bind_args("asc.load_data_with_transpose()", ("dst", "src", "params"), args, kwargs, loc)
    op = "load_data_with_transpose"
    dst = _local(b["dst"], op, "dst", (Memory.L0A, Memory.L0B), "A2 (L0A) or B2 (L0B)", loc)
    src = _local(b["src"], op, "src", (Memory.L1,), "A1/B1 (L1)", loc)
    if isinstance(b["params"], StructV) and b["params"].kind == "LoadData2dTransposeParamsV2":
        raise KernelTypeError(f"asc.{op} with LoadData2dTransposeParamsV2 is not available on "
                              f"Ascend 910B (Atlas A2/A3): Ascend C provides that overload on "
                              f"Ascend 950PR/950DT only", loc,
                              hint="use asc.LoadData2dTransposeParams(start_index, repeat_times, "
                                   "src_stride, dst_gap, dst_frac_gap, addr_mode)")
    params = _want_record(b["params"], "LoadData2dTransposeParams", f"asc.{op} params", loc)
    if src.dtype != dst.dtype:
        raise DtypeError(f"asc.{op}: dst is {dst.dtype.name} but src is {src.dtype.name}", loc)
    if dst.dtype not in TRANSPOSE_TYPES:
        raise DtypeError(f"asc.{op} does not support {dst.dtype.name} on Ascend 910B (A2/A3); "
                         f"supported: {_names(TRANSPOSE_TYPES)}", loc)
    fields = _fields(params, "LoadData2dTransposeParams", loc)
    an.emit(ir.Intrinsic(op, (dst.ref(), src.ref()) + fields, (), loc, (("dtype", dst.dtype),)))
    return NoneV()


# ----------------------------------------------------------------------------- mmad
@function("mmad")
def mmad(an, args, kwargs, loc) -> SVal:
    """``mmad(dst, fm, filter, params)`` or ``mmad(dst, fm, filter, bias, params)``."""
    kw = dict(kwargs)
    if len(args) + len(kw) >= 5:
        b = bind_args("asc.mmad()", ("dst", "fm", "filter", "bias", "params"), args, kw, loc)
    else:
        b = bind_args("asc.mmad()", ("dst", "fm", "filter", "params"), args, kw, loc)
        b["bias"] = None
    dst = _local(b["dst"], "mmad", "dst", (Memory.L0C,), "CO1 (L0C)", loc)
    fm = _local(b["fm"], "mmad", "fm (left matrix)", (Memory.L0A,), "A2 (L0A)", loc)
    flt = _local(b["filter"], "mmad", "filter (right matrix)", (Memory.L0B,), "B2 (L0B)", loc)
    bias = None
    if b["bias"] is not None:
        bias = _local(b["bias"], "mmad", "bias", (Memory.BT,), "C2 (BiasTable)", loc)
    params = _want_record(b["params"], "MmadParams", "asc.mmad params", loc)
    combos = "; ".join(f"{i.name}×{i.name}→{o.name}" for i, (o, _) in MMAD_TYPES.items())
    if fm.dtype != flt.dtype or fm.dtype not in MMAD_TYPES:
        raise DtypeError(f"asc.mmad does not support {fm.dtype.name} × {flt.dtype.name} on "
                         f"Ascend 910B (A2/A3); supported: {combos}", loc)
    acc, bias_t = MMAD_TYPES[fm.dtype]
    if dst.dtype != acc:
        raise DtypeError(f"asc.mmad: {fm.dtype.name} inputs accumulate into {acc.name} in L0C, "
                         f"but dst is {dst.dtype.name}; supported: {combos}", loc)
    if bias is not None and bias.dtype != bias_t:
        raise DtypeError(f"asc.mmad: the bias of {fm.dtype.name} inputs must be {bias_t.name}, "
                         f"got {bias.dtype.name}", loc)
    src = params.get("cmatrix_source")
    if bias is None and isinstance(src, ConstV) and src.value:
        raise KernelValueError("MmadParams.cmatrix_source=True takes its initial values from "
                               "the BiasTable: use the bias overload mmad(dst, fm, filter, "
                               "bias, params)", loc)
    fields = _fields(params, "MmadParams", loc)
    refs = (dst.ref(), fm.ref(), flt.ref(), bias.ref() if bias is not None else None)
    an.emit(ir.Intrinsic("mmad", refs + fields, (), loc, (("dtype", fm.dtype),)))
    return NoneV()


# ----------------------------------------------------------------------------- fixpipe
@function("fixpipe")
def fixpipe(an, args, kwargs, loc) -> SVal:
    """``fixpipe(dst_gm, src_l0c, FixpipeParamsV220(...)[, config])``."""
    b = bind_args("asc.fixpipe()", ("dst", "src", "params", "config"), args, kwargs, loc,
                  {"config": NoneV()})
    dst, src = b["dst"], b["src"]
    if isinstance(dst, LocalTensorV):
        raise KernelTypeError(f"asc.fixpipe dst must be a GlobalTensor; L0C → {dst.position.name}"
                              f" is not modelled", loc,
                              hint="fixpipe moves L0C results to GM; the L1 and UB "
                                   "destinations are not supported yet")
    if not isinstance(dst, GmTensorV) or dst.dtype is None:
        raise OperandKindError(f"asc.fixpipe dst must be a GlobalTensor (after "
                               f"set_global_buffer), got {dst.describe()}", loc)
    if isinstance(b["params"], LocalTensorV):
        raise KernelTypeError("asc.fixpipe with a cbuf_workspace (tensor quantisation) is not "
                              "modelled", loc)
    src = _local(src, "fixpipe", "src", (Memory.L0C,), "CO1 (L0C)", loc)
    params = _want_record(b["params"], "FixpipeParamsV220", "asc.fixpipe params", loc)
    config = b["config"]
    if isinstance(config, PyObjV) and getattr(config.obj, "asc_name", "").startswith(
            "FixpipeConfig."):   # pyasc passes FixpipeConfig.cfg_row_major uncalled
        config = StructV("FixpipeConfig", (("layout", EnumV(
            CO2Layout.NZ if config.obj.asc_name.endswith("cfg_nz") else CO2Layout.ROW_MAJOR)),))
    if isinstance(config, EnumV):
        config = StructV("FixpipeConfig", (("layout", EnumV(
            want_enum(config, CO2Layout, "fixpipe config", loc))),))
    layout = CO2Layout.ROW_MAJOR if isinstance(config, NoneV) else \
        _want_record(config, "FixpipeConfig", "asc.fixpipe config", loc).get("layout").member
    if layout == CO2Layout.COLUMN_MAJOR:
        raise KernelValueError("FixpipeConfig CO2Layout.COLUMN_MAJOR (NZ2DN) exists only on "
                               "Ascend 950; 910B has ROW_MAJOR (NZ2ND) and NZ", loc)
    quant = params.get("quant_pre").member
    pair = (src.dtype, dst.dtype)
    if pair in FIXPIPE_UNMODELLED:
        raise DtypeError(f"asc.fixpipe {src.dtype.name} → {dst.dtype.name} "
                         f"({FIXPIPE_UNMODELLED[pair]}) exists on 910B but is not modelled by "
                         f"the simulator", loc)
    if pair not in FIXPIPE_TYPES:
        ok = "; ".join(f"{s.name}→{d.name} ({'/'.join(q.name for q in qs)})"
                       for (s, d), qs in FIXPIPE_TYPES.items())
        raise DtypeError(f"asc.fixpipe cannot move {src.dtype.name} from L0C to "
                         f"{dst.dtype.name} on Ascend 910B (A2/A3); supported: {ok} (and the "
                         f"int8 quantisations)", loc)
    if quant not in FIXPIPE_TYPES[pair]:
        want = "/".join(f"QuantModes.{q.name}" for q in FIXPIPE_TYPES[pair])
        raise KernelValueError(f"asc.fixpipe {src.dtype.name} → {dst.dtype.name} needs quant_pre"
                               f"={want}, got QuantModes.{quant.name}", loc,
                               hint="fixpipe does not infer the conversion from the dtypes")
    split = params.get("is_channel_split")
    if isinstance(split, ConstV) and split.value:
        raise KernelValueError("FixpipeParamsV220.is_channel_split is not modelled", loc)
    n_size = _const(params.get("n_size"))
    if layout == CO2Layout.NZ and n_size is not None and n_size % 16:
        raise KernelValueError(f"FixpipeParamsV220.n_size = {n_size} must be a multiple of 16 "
                               f"for NZ output", loc)
    m_size = _const(params.get("m_size"))
    if layout == CO2Layout.ROW_MAJOR and m_size is not None and m_size > 8192:
        raise KernelValueError(f"FixpipeParamsV220.m_size = {m_size} is more than 8192, the "
                               f"limit with NZ2ND", loc)
    fields = _fields(params, "FixpipeParamsV220", loc)
    an.emit(ir.Intrinsic("fixpipe", (dst.ref(), src.ref()) + fields, (), loc,
                         (("dtype", dst.dtype), ("src_dtype", src.dtype), ("quant", int(quant)),
                          ("layout", int(layout)))))
    return NoneV()


__all__ = ["data_copy_nd2nz", "RECORDS", "DataType", "TPosition"]
