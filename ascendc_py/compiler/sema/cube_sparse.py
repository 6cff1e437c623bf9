"""Semantic analysis of ``load_data_with_sparse``, ``mmad_with_sparse``, the
``LoadData2DParamsV2`` record and its ``load_data`` form, and ``set_fix_pipe_pre_quant_flag``.
Semantics: ``ops/cube_sparse.py``; lowering: ``codegen/lower_cube_sparse.py``. Constant fields are range-checked here (naming the line),
run-time values by the library.
"""
from __future__ import annotations

from ...dsl.types import Memory, bool_, int32, int64, uint64
from .. import ir
from ..errors import DtypeError, KernelTypeError, KernelValueError, OperandKindError
from ..ops.cube import CUBE_COPY_TYPES
from ..ops.cube_sparse import LOAD2D_V2_FIELDS, SPARSE_INDEX_TYPES
from . import scalars as S
from .builtins import bind_args, function, want_int
from .cube import _fields, _local, _want_record
from .values import ConstV, GmTensorV, LocalTensorV, NoneV, StructV, SVal

_V2_LIMITS = {n: (lo, hi) for n, _d, lo, hi in LOAD2D_V2_FIELDS}


@function("LoadData2DParamsV2")
def _load2d_v2_record(an, args, kwargs, loc) -> SVal:
    names = tuple(f[0] for f in LOAD2D_V2_FIELDS)
    defaults = {n: ConstV(d, bool_ if isinstance(d, bool) else int32)
                for n, d, _lo, _hi in LOAD2D_V2_FIELDS}
    b = bind_args("asc.LoadData2DParamsV2()", names, args, kwargs, loc, defaults)
    fields = []
    for n in names:
        v = b[n]
        if n == "if_transpose":
            v = S.truth(v, loc)
        else:
            v = S.numeric(v)
            want_int(v, f"LoadData2DParamsV2.{n}", loc, int64)
            lo, hi = _V2_LIMITS[n]
            if isinstance(v, ConstV) and not lo <= int(v.value) <= hi:
                raise KernelValueError(f"LoadData2DParamsV2.{n} = {v.value} is out of range "
                                       f"{lo}..{hi}", loc)
        fields.append((n, v))
    return StructV("LoadData2DParamsV2", tuple(fields))


def load_data_2d_v2(an, dst: SVal, src: SVal, params: StructV, loc) -> SVal:
    """``load_data(dst_l0a_or_l0b, src_l1_or_gm, LoadData2DParamsV2(...))`` (from
    sema/cube.py's load_data)."""
    dst = _local(dst, "load_data", "dst", (Memory.L0A, Memory.L0B), "A2 (L0A) or B2 (L0B)", loc)
    if isinstance(src, LocalTensorV):
        _local(src, "load_data", "src", (Memory.L1,), "A1/B1 (L1) or GM", loc)
    elif not isinstance(src, GmTensorV):
        raise OperandKindError(f"asc.load_data src must be a LocalTensor at A1/B1 (L1) or a "
                               f"GlobalTensor, got {src.describe()}", loc)
    if src.dtype != dst.dtype:
        raise DtypeError(f"asc.load_data: dst is {dst.dtype.name} but src is {src.dtype.name}",
                         loc)
    if dst.dtype not in CUBE_COPY_TYPES:
        raise DtypeError(f"asc.load_data does not support {dst.dtype.name} on Ascend 910B "
                         f"(A2/A3); supported: {', '.join(d.name for d in CUBE_COPY_TYPES)}",
                         loc)
    tr = params.get("if_transpose")
    if isinstance(tr, ConstV) and tr.value:
        if dst.dtype.bits != 16:
            raise DtypeError(f"LoadData2DParamsV2.if_transpose transposes 16×16 fractals of "
                             f"16-bit types only, got {dst.dtype.name}", loc)
        if isinstance(src, GmTensorV):
            raise KernelTypeError("asc.load_data: if_transpose works only from L1 (A1/B1)", loc)
    fields = tuple(S.to_expr(params.get(n), int64) if n == "if_transpose" else
                   want_int(params.get(n), f"LoadData2DParamsV2.{n}", loc, int64)
                   for n, *_ in LOAD2D_V2_FIELDS)
    an.emit(ir.Intrinsic("load_data_2d_v2", (dst.ref(), src.ref()) + fields, (), loc,
                         (("dtype", dst.dtype),)))
    return NoneV()


@function("load_data_with_sparse")
def _load_data_with_sparse(an, args, kwargs, loc) -> SVal:
    b = bind_args("asc.load_data_with_sparse()", ("dst", "src", "idx", "load_data_param"),
                  args, {("load_data_param" if k in ("params", "load_data_params") else k): v
                         for k, v in kwargs.items()}, loc)
    op = "load_data_with_sparse"
    dst = _local(b["dst"], op, "dst", (Memory.L0B,), "B2 (L0B)", loc)
    src = _local(b["src"], op, "src", (Memory.L1,), "B1 (L1)", loc)
    idx = _local(b["idx"], op, "idx", (Memory.L1,), "B1 (L1)", loc)
    if dst.dtype.name != "int8" or src.dtype.name != "int8":
        raise DtypeError(f"asc.{op} moves int8 weights only (dst {dst.dtype.name}, src "
                         f"{src.dtype.name})", loc)
    if idx.dtype not in SPARSE_INDEX_TYPES:
        raise DtypeError(f"asc.{op} idx holds packed 2-bit indices as uint8 or int8, got "
                         f"{idx.dtype.name}", loc)
    params = _want_record(b["load_data_param"], "LoadData2DParams", f"asc.{op} params", loc)
    tr = params.get("if_transpose")
    if isinstance(tr, ConstV) and tr.value:
        raise KernelValueError(f"asc.{op} does not transpose (if_transpose must be False)", loc)
    fields = _fields(params, "LoadData2DParams", loc)
    an.emit(ir.Intrinsic(op, (dst.ref(), src.ref(), idx.ref()) + fields, (), loc,
                         (("dtype", dst.dtype),)))
    return NoneV()


@function("mmad_with_sparse")
def _mmad_with_sparse(an, args, kwargs, loc) -> SVal:
    kw = {("params" if k == "mmad_params" else k): v for k, v in kwargs.items()}
    b = bind_args("asc.mmad_with_sparse()", ("dst", "fm", "filter", "params"), args, kw, loc)
    op = "mmad_with_sparse"
    dst = _local(b["dst"], op, "dst", (Memory.L0C,), "CO1 (L0C)", loc)
    fm = _local(b["fm"], op, "fm (left matrix)", (Memory.L0A,), "A2 (L0A)", loc)
    flt = _local(b["filter"], op, "filter (right matrix)", (Memory.L0B,), "B2 (L0B)", loc)
    if fm.dtype.name != "int8" or flt.dtype.name != "int8" or dst.dtype.name != "int32":
        raise DtypeError(f"asc.{op} computes int8 × int8 → int32 only, got {fm.dtype.name} × "
                         f"{flt.dtype.name} → {dst.dtype.name}", loc)
    params = _want_record(b["params"], "MmadParams", f"asc.{op} params", loc)
    src = params.get("cmatrix_source")
    if isinstance(src, ConstV) and src.value:
        raise KernelValueError(f"asc.{op} has no bias form: MmadParams.cmatrix_source must be "
                               f"False", loc)
    fields = _fields(params, "MmadParams", loc)
    an.emit(ir.Intrinsic(op, (dst.ref(), fm.ref(), flt.ref()) + fields, (), loc,
                         (("dtype", fm.dtype),)))
    return NoneV()


@function("set_fix_pipe_pre_quant_flag")
def _set_fix_pipe_pre_quant_flag(an, args, kwargs, loc) -> SVal:
    b = bind_args("asc.set_fix_pipe_pre_quant_flag()", ("config",), args, kwargs, loc)
    v = S.numeric(b["config"])
    e = want_int(v, "asc.set_fix_pipe_pre_quant_flag config", loc, uint64)
    if isinstance(v, ConstV) and not 0 <= int(v.value) <= 2 ** 64 - 1:
        raise KernelValueError(f"asc.set_fix_pipe_pre_quant_flag({v.value}): config is a "
                               f"uint64 (0..2**64-1)", loc)
    an.emit(ir.Intrinsic("set_fix_pipe_pre_quant_flag", (e,), (), loc))
    return NoneV()
