"""Sema of the high-level Matmul API (``asc.adv``): a compile-time Matmul object.

``asc.adv.Matmul(a=, b=, c=, bias=)`` is a compile-time record (``MatmulV``): the operand types
(position, format, dtype) are static; everything the kernel sets at run time (the A/B/bias
tensors, transposition, tails, original shapes) lives in kernel variables the set_* calls assign
(so ``if tiling.is_bias: mm.set_bias(...)`` works). Each data-moving call emits ONE intrinsic
(``matmul_iterate_all`` / ``matmul_get_tensor_c``) whose operands are read from those variables
and from the tiling (``compiler/ops/matmul.py`` lists them). ``with mm.iterate() as count:``
is a counted loop over the base_m x base_n tiles of C in the tiling's iterate order (M first
unless ``iterate_order`` is 1); ``get_tensor_c`` inside it produces tile ``count``, outside
it the next pending tile of the last bare ``mm.iterate()`` call. Batch matmul (layouts,
iterate_n_batch, the workspace) is in ``adv_batch.py``.
"""
from __future__ import annotations

from dataclasses import field
from typing import Optional

import dataclasses
import enum
import inspect

from ...adv import CONFIG_NAMES, CubeFormat, IterateOrder, LayoutMode, MatmulType, Property
from ...dsl.types import (DataType, Memory, TPosition, bool_, float16, float32, int8, int32,
                          int64, uint64)
from .. import ast as A
from .. import ir
from ..errors import (ArgumentError, DtypeError, KernelTypeError, KernelValueError,
                      OperandKindError, SourceLoc, UnsupportedConstructError)
from ..ops.matmul import BIAS_TYPES, DTYPE_CODES, MATMUL_ARGS, MATMUL_TYPES
from . import scalars as S
from .builtins import FUNCTIONS, bind_args, function, method, want_dtype, want_enum, want_int
from ...fieldwise import FrozenFieldwise, fieldwise_dataclass
from .values import (FieldwiseRepr, frozen_value, identity_value, ConstV, EnumV, GmTensorV, LocalTensorV, NoneV, PipeV, PyObjV,
                     RtV, StructV, SVal, TupleV)

UB_POSITIONS = (TPosition.VECCALC, TPosition.VECIN, TPosition.VECOUT)
#: run-time state of a Matmul: (name, dtype, initial value)
_STATE = (("a_arg", int64, -1), ("a_off", int64, 0), ("trans_a", int64, 0),
          ("b_arg", int64, -1), ("b_off", int64, 0), ("trans_b", int64, 0),
          ("bias_arg", int64, -1), ("bias_off", int64, 0),
          ("tail_m", int64, -1), ("tail_n", int64, -1), ("tail_k", int64, -1),
          ("org_m", int64, -1), ("org_n", int64, -1), ("org_ka", int64, -1),
          ("org_kb", int64, -1), ("batch_a", int64, -1), ("batch_b", int64, -1),
          ("quant_mode", int64, 0), ("quant_scalar", int64, 0), ("quant_arg", int64, -1),
          ("quant_off", int64, 0), ("a_scalar", float32, 0.0),
          ("b_scalar", float32, 0.0), ("bias_mem", int64, 0), ("bias_size", int64, 0),
          # set_workspace: GM argument (-1: none) and byte offset; iterate_n_batch's results
          # in it (sema/adv_batch.py): C elements per matrix, first element, end, next to hand
          ("ws_arg", int64, -1), ("ws_off", int64, 0), ("nb_mn", int64, 0),
          ("nb_first", int64, 0), ("nb_end", int64, 0), ("nb_pos", int64, 0),
          # the tiles of the last bare mm.iterate() call: how many, and the next to hand out
          ("it_tiles", int64, 0), ("it_next", int64, 0))


@identity_value
class MatmulV(SVal, FieldwiseRepr):
    """A Matmul object (compile-time record; run-time state in ``vars``)."""

    a: MatmulType
    b: MatmulType
    c: MatmulType
    bias: Optional[MatmulType]
    vars: dict
    tiling: Optional[StructV] = None
    config: "MatmulConfig" = field(default_factory=lambda: _config("MatmulConfig")())
    a_seen: bool = False
    b_seen: bool = False
    quant_seen: bool = False
    counts: list = field(default_factory=list)   # the enclosing `with mm.iterate()` counters
    hooks: dict = field(default_factory=dict)    # callback data (sema/adv_operands.py)
    sparse: bool = False                          # set_sparse_index was called
    static: object = None                         # get_matmul_api_tiling's record, if given

    def describe(self) -> str:
        return "asc.adv.Matmul"

    def load(self, name: str) -> ir.Expr:
        return ir.Load(self.vars[name])


@frozen_value
class MatmulIterV(SVal, FrozenFieldwise):
    """``mm.iterate()`` before the ``with``."""

    mm: MatmulV

    def describe(self) -> str:
        return "Matmul.iterate()"


# ----------------------------------------------------------------------------- construction
def _matmul_type(v: SVal, what: str, loc: SourceLoc, optional: bool = False):
    if optional and isinstance(v, NoneV):
        return None
    if not isinstance(v, PyObjV) or not isinstance(v.obj, MatmulType):
        raise KernelTypeError(f"asc.adv.Matmul: {what} must be an asc.adv.MatmulType(position, "
                              f"format, dtype[, is_trans]), got {v.describe()}", loc)
    return v.obj


@function("adv.MatmulType")
def _matmul_type_ctor(an, args, kwargs, loc):
    b = bind_args("asc.adv.MatmulType()", ("position", "format", "dtype", "is_trans", "layout"),
                  args, kwargs, loc, {"is_trans": ConstV(False, bool_), "layout": NoneV()})
    pos = want_enum(b["position"], TPosition, "MatmulType position", loc)
    fmt = b["format"]
    if not isinstance(fmt, EnumV) or fmt.member.name not in CubeFormat.__members__:
        raise KernelTypeError(f"MatmulType format must be asc.CubeFormat.ND, got "
                              f"{fmt.describe()}", loc)
    dtype = want_dtype(b["dtype"], "MatmulType dtype", loc)
    trans = b["is_trans"]
    if not isinstance(trans, ConstV):
        raise KernelValueError("MatmulType is_trans must be a compile-time bool", loc)
    layout = LayoutMode.NONE
    if not isinstance(b["layout"], NoneV):
        layout = want_enum(b["layout"], LayoutMode, "MatmulType layout", loc)
    return PyObjV(MatmulType(pos, CubeFormat[fmt.member.name], dtype, bool(trans.value),
                             layout))


def _const_ints(b: dict, names: tuple, what: str, loc: SourceLoc) -> dict:
    """The compile-time ints (or bools) of bound arguments, by name."""
    out = {}
    for name in names:
        v = b[name]
        if not isinstance(v, ConstV) or isinstance(v.value, float):
            raise KernelValueError(f"{what}: {name} must be a compile-time int, got "
                                   f"{v.describe()}", loc)
        out[name] = v.value if isinstance(v.value, bool) else int(v.value)
    return out


@function("adv.QuantConfig")
def _quant_config_ctor(an, args, kwargs, loc):
    names = ("calc_count", "offset_count", "scale_count", "work_local_size")
    b = bind_args("asc.adv.QuantConfig()", names, args, kwargs, loc,
                  {n: ConstV(0, int32) for n in names})
    try:
        return PyObjV(_config("QuantConfig")(**_const_ints(b, names, "asc.adv.QuantConfig",
                                                           loc)))
    except ValueError as e:
        raise KernelValueError(str(e), loc) from None


def _py_value(v: SVal, what: str, loc: SourceLoc):
    """The host value of a compile-time argument (an int/bool/float, an enum member, None or a
    config record)."""
    if isinstance(v, ConstV):
        return v.value
    if isinstance(v, EnumV):
        return v.member
    if isinstance(v, NoneV):
        return None
    if isinstance(v, PyObjV) and not callable(v.obj):
        return v.obj
    raise KernelValueError(f"{what} must be a compile-time value, got {v.describe()}", loc)


def _record_ctor(cls):
    names = tuple(f.name for f in dataclasses.fields(cls))

    def ctor(an, args, kwargs, loc):
        b = bind_args(f"asc.adv.{cls.__name__}()", names, args, kwargs, loc,
                      {n: NoneV() for n in names})
        given = {n: _py_value(v, f"asc.adv.{cls.__name__} {n}", loc) for n, v in b.items()
                 if not isinstance(v, NoneV)}
        try:
            return PyObjV(cls(**given))
        except (TypeError, ValueError) as e:
            raise KernelValueError(f"asc.adv.{cls.__name__}: {e}", loc) from None
    return ctor


def _helper_ctor(fn):
    sig = inspect.signature(fn)
    variadic = any(p.kind == p.VAR_POSITIONAL for p in sig.parameters.values())

    def ctor(an, args, kwargs, loc):
        what = f"asc.adv.{fn.__name__}"
        try:
            if variadic:
                if kwargs:
                    raise TypeError("takes positional records only")
                out = fn(*(_py_value(a, what, loc) for a in args))
            else:
                out = fn(*(_py_value(a, what, loc) for a in args),
                         **{k: _py_value(v, what, loc) for k, v in kwargs.items()})
        except (TypeError, ValueError) as e:
            raise KernelValueError(f"{what}: {e}", loc) from None
        return PyObjV(out)
    return ctor


def _config(name: str):
    """``asc.adv.<name>`` of ``advlib/matmul_config.py``, imported only when a kernel uses one
    (its ~50-field dataclasses cost several ms to create: issue 14)."""
    from ...advlib import matmul_config
    return getattr(matmul_config, name)


def _lazy_config_ctor(name: str, make):
    """``make(_config(name))`` (``_record_ctor``/``_helper_ctor``), made on first call."""
    def ctor(an, args, kwargs, loc):
        real = make(_config(name))
        FUNCTIONS[f"adv.{name}"] = real
        return real(an, args, kwargs, loc)
    return ctor


# CONFIG_NAMES (ascendc_py/adv.py): the records (CONFIG_RECORDS), the helpers (CONFIG_HELPERS
# but get_matmul_api_tiling), QuantConfig (registered above), get_matmul_api_tiling, the
# MatmulApiStaticTiling record (not constructible in kernels) and the two tuples' names
for _name in CONFIG_NAMES[:5]:
    function(f"adv.{_name}")(_lazy_config_ctor(_name, _record_ctor))
for _name in CONFIG_NAMES[5:12] + ("get_matmul_api_tiling",):
    function(f"adv.{_name}")(_lazy_config_ctor(_name, _helper_ctor))


@function("adv.Matmul")
def _matmul_ctor(an, args, kwargs, loc):
    b = bind_args("asc.adv.Matmul()", ("a", "b", "c", "bias", "matmul_config", "matmul_policy"),
                  args, kwargs, loc, {"bias": NoneV(), "matmul_config": NoneV(),
                                      "matmul_policy": ConstV(0, int32)})
    ta, tb = _matmul_type(b["a"], "a", loc), _matmul_type(b["b"], "b", loc)
    tc, tbias = _matmul_type(b["c"], "c", loc), _matmul_type(b["bias"], "bias", loc, True)
    for name, t in (("a", ta), ("b", tb)) + ((("bias", tbias),) if tbias else ()):
        if t.position != TPosition.GM:
            raise UnsupportedConstructError(
                f"asc.adv.Matmul: {name} at {t.position.name} is not supported by the simulator; "
                f"A, B and bias are read from GM (TPosition.GM)", loc)
    for name, t in (("a", ta), ("b", tb), ("c", tc)):
        if t.format != CubeFormat.ND and not (name == "c" and t.format == CubeFormat.NZ):
            raise UnsupportedConstructError(f"asc.adv.Matmul: {name} format {t.format.name} is "
                                            f"not supported; use CubeFormat.ND (C: ND or NZ)",
                                            loc)
    if tc.position != TPosition.GM and tc.position not in UB_POSITIONS:
        raise UnsupportedConstructError(f"asc.adv.Matmul: c at {tc.position.name} is not "
                                        f"supported; use GM or VECCALC/VECIN/VECOUT (UB)", loc)
    if ta.dtype != tb.dtype:
        raise DtypeError(f"asc.adv.Matmul: a is {ta.dtype.name} but b is {tb.dtype.name}; A and "
                         f"B must have one dtype", loc)
    if ta.dtype not in MATMUL_TYPES:
        raise DtypeError(f"asc.adv.Matmul does not support {ta.dtype.name} inputs; supported: "
                         f"{', '.join(d.name for d in MATMUL_TYPES)}", loc)
    if tc.dtype not in MATMUL_TYPES[ta.dtype]:
        raise DtypeError(f"asc.adv.Matmul: c {tc.dtype.name} is not supported for "
                         f"{ta.dtype.name} inputs; supported: "
                         f"{', '.join(d.name for d in MATMUL_TYPES[ta.dtype])}", loc)
    if tbias is not None and tbias.dtype not in BIAS_TYPES[ta.dtype]:
        raise DtypeError(f"asc.adv.Matmul: bias {tbias.dtype.name} is not supported for "
                         f"{ta.dtype.name} inputs; supported: "
                         f"{', '.join(d.name for d in BIAS_TYPES[ta.dtype])}", loc)
    cfg, static = b["matmul_config"], None
    MatmulConfig = _config("MatmulConfig")
    if isinstance(cfg, NoneV):
        cfg = MatmulConfig()
    elif isinstance(cfg, PyObjV) and isinstance(cfg.obj, MatmulConfig):
        cfg = cfg.obj
    elif isinstance(cfg, PyObjV) and getattr(cfg.obj, "asc_name", "") == \
            "adv.MatmulApiStaticTiling":
        static, cfg = cfg.obj, cfg.obj.cfg    # get_matmul_api_tiling's result and its config
    else:
        raise KernelTypeError(f"asc.adv.Matmul: matmul_config must be an asc.adv.MatmulConfig "
                              f"(or a get_*_config helper's result), got {cfg.describe()}", loc)
    n = an.new_label("mm")
    state = {name: ir.Var(f"mm{n}.{name}", dt) for name, dt, _ in _STATE}
    for name, dt, init in _STATE:
        an.emit(ir.Assign(state[name], ir.Const(init, dt), loc))
    return MatmulV(ta, tb, tc, tbias, state, config=cfg, static=static)


@fieldwise_dataclass(frozen=True)
class ConstTiling(FrozenFieldwise):
    """The tiling of a fully constant MatmulApiStaticTiling (register_matmul without a
    tiling): every field a compile-time int (-1, unknown, reads as 0)."""

    obj: object
    kind: str = "TCubeTiling"

    def get(self, name: str) -> SVal:
        return ConstV(max(int(getattr(self.obj, name)), 0), int32)


#: the fields a constant tiling and a run-time one must agree on (the docs' constraint)
_CONST_FIELDS = ("base_m", "base_n", "base_k", "single_core_m", "single_core_n",
                 "single_core_k")


def _bind_tiling(an, mm: MatmulV, tiling: Optional[StructV], loc: SourceLoc) -> None:
    """Give the Matmul its tiling: the run-time one (checked at run time against a constant
    tiling's known fields), else a fully constant MatmulApiStaticTiling's."""
    from ...advlib.matmul_config import full_constant
    if tiling is None:
        if mm.static is not None and full_constant(mm.static):
            mm.tiling = ConstTiling(mm.static)
        return
    mm.tiling = tiling
    if mm.static is None:
        return
    for f in _CONST_FIELDS:
        want = int(getattr(mm.static, f))
        if want > 0:
            _assert(an, ir.Cmp("eq", _tile(mm, f), ir.Const(want, int64)),
                    f"Matmul: the run-time tiling's {f} differs from the constant tiling's "
                    f"({want}, get_matmul_api_tiling): they must agree", loc)


def _want_tiling(v: SVal, loc: SourceLoc) -> StructV:
    if not isinstance(v, StructV) or v.kind != "TCubeTiling":
        raise KernelTypeError(f"the tiling must be an asc.adv.TCubeTiling kernel parameter, got "
                              f"{v.describe()}", loc,
                              hint="declare the parameter as `tiling: asc.adv.TCubeTiling`")
    return v


def _want_matmul(v: SVal, loc: SourceLoc) -> MatmulV:
    if not isinstance(v, MatmulV):
        raise KernelTypeError(f"expected an asc.adv.Matmul, got {v.describe()}", loc)
    return v


@function("adv.register_matmul")
def _register_matmul(an, args, kwargs, loc):
    b = bind_args("asc.adv.register_matmul()", ("pipe", "workspace", "matmul", "tiling"), args,
                  kwargs, loc, {"tiling": NoneV()})
    if not isinstance(b["pipe"], PipeV):
        raise KernelTypeError(f"register_matmul: pipe must be an asc.TPipe(), got "
                              f"{b['pipe'].describe()}", loc)
    mm = _want_matmul(b["matmul"], loc)
    _bind_tiling(an, mm, None if isinstance(b["tiling"], NoneV) else
                 _want_tiling(b["tiling"], loc), loc)
    server = ir.Var("matmul_server", int64)
    an.emit(ir.Intrinsic("matmul_register", (), (server,), loc))
    label = getattr(an, "kernel_return_label", None)
    if label is not None:  # the AIC of a mix kernel serves the AIVs' requests: its kernel ends
        an.emit(ir.If(ir.Cmp("ne", ir.Load(server), ir.Const(0, int64)),
                      (ir.Exit(label, loc),), (), loc))
    return NoneV()


@method(MatmulV, "init")
def _init(an, mm: MatmulV, name, args, kwargs, loc):
    b = bind_args("Matmul.init()", ("tiling",), args, kwargs, loc)
    _bind_tiling(an, mm, _want_tiling(b["tiling"], loc), loc)
    return NoneV()


# ----------------------------------------------------------------------------- setters
def _set(an, mm: MatmulV, name: str, value: ir.Expr, loc: SourceLoc) -> None:
    an.emit(ir.Assign(mm.vars[name], value, loc))


def _gm_operand(v: SVal, what: str, want: DataType, loc: SourceLoc) -> GmTensorV:
    if not isinstance(v, GmTensorV):
        raise OperandKindError(f"{what} must be a GlobalTensor, got {v.describe()}", loc)
    if v.dtype is None:
        raise OperandKindError(f"{what}: call set_global_buffer on the GlobalTensor first", loc)
    if v.dtype != want:
        raise DtypeError(f"{what} is {v.dtype.name} but the Matmul's MatmulType says "
                         f"{want.name}", loc)
    return v


def _flag(v: SVal, what: str, loc: SourceLoc) -> ir.Expr:
    t = S.truth(v, loc)
    return S.to_expr(t, int64)


@method(MatmulV, "set_tensor_a", "set_tensor_b")
def _set_tensor(an, mm: MatmulV, name, args, kwargs, loc):
    which = name[-1]
    b = bind_args(f"Matmul.{name}()", ("tensor", "transpose"), args, kwargs, loc,
                  {"transpose": ConstV(False, bool_)})
    if isinstance(b["tensor"], (ConstV, RtV)):
        from .adv_operands import set_scalar
        return set_scalar(an, mm, which, b["tensor"], loc)
    t = _gm_operand(b["tensor"], f"Matmul.{name} tensor", getattr(mm, which).dtype, loc)
    _set(an, mm, f"{which}_arg", S.to_expr(RtV(t.arg), int64), loc)
    _set(an, mm, f"{which}_off", t.offset, loc)
    _set(an, mm, f"trans_{which}", _flag(b["transpose"], "transpose", loc), loc)
    setattr(mm, f"{which}_seen", True)
    return NoneV()


@method(MatmulV, "set_bias")
def _set_bias(an, mm: MatmulV, name, args, kwargs, loc):
    b = bind_args("Matmul.set_bias()", ("tensor",), args, kwargs, loc)
    bias = mm.bias or mm.c          # Ascend C's Matmul template: BIAS_TYPE = C_TYPE by default
    if bias.dtype not in BIAS_TYPES[mm.a.dtype]:
        raise DtypeError(f"Matmul.set_bias: without a bias type the bias is C's "
                         f"{bias.dtype.name}, not a bias of {mm.a.dtype.name} inputs; pass "
                         f"bias=asc.adv.MatmulType(...) to asc.adv.Matmul", loc)
    if isinstance(b["tensor"], LocalTensorV):
        from .adv_operands import set_local_bias
        return set_local_bias(an, mm, b["tensor"], bias.dtype, loc)
    t = _gm_operand(b["tensor"], "Matmul.set_bias tensor", bias.dtype, loc)
    _set(an, mm, "bias_arg", S.to_expr(RtV(t.arg), int64), loc)
    _set(an, mm, "bias_off", t.offset, loc)
    _set(an, mm, "bias_mem", ir.Const(0, int64), loc)
    return NoneV()


@method(MatmulV, "disable_bias")
def _disable_bias(an, mm: MatmulV, name, args, kwargs, loc):
    bind_args("Matmul.disable_bias()", (), args, kwargs, loc)
    _set(an, mm, "bias_arg", ir.Const(-1, int64), loc)
    return NoneV()


@method(MatmulV, "set_tail", "set_single_shape")
def _set_tail(an, mm: MatmulV, name, args, kwargs, loc):
    if name == "set_tail":
        minus = ConstV(-1, int32)
        b = bind_args("Matmul.set_tail()", ("tail_m", "tail_n", "tail_k"), args, kwargs, loc,
                      {"tail_m": minus, "tail_n": minus, "tail_k": minus})
        vals = (b["tail_m"], b["tail_n"], b["tail_k"])
    else:
        b = bind_args("Matmul.set_single_shape()", ("single_m", "single_n", "single_k"), args,
                      kwargs, loc)
        vals = (b["single_m"], b["single_n"], b["single_k"])
    for key, v in zip(("tail_m", "tail_n", "tail_k"), vals):
        _set(an, mm, key, want_int(v, f"Matmul.{name} {key}", loc, int64), loc)
    return NoneV()


@method(MatmulV, "set_org_shape")
def _set_org_shape(an, mm: MatmulV, name, args, kwargs, loc):
    b = bind_args("Matmul.set_org_shape()", ("org_m", "org_n", "org_ka", "org_kb", "org_kc"),
                  args, kwargs, loc, {"org_kb": NoneV(), "org_kc": NoneV()})
    ka = want_int(b["org_ka"], "org_ka", loc, int64)
    kb = ka if isinstance(b["org_kb"], NoneV) else want_int(b["org_kb"], "org_kb", loc, int64)
    for key, v in (("org_m", want_int(b["org_m"], "org_m", loc, int64)),
                   ("org_n", want_int(b["org_n"], "org_n", loc, int64)), ("org_ka", ka),
                   ("org_kb", kb)):
        _set(an, mm, key, v, loc)
    return NoneV()


@method(MatmulV, "end", "set_hf32", "wait_iterate_all", "wait_get_tensor_c")
def _no_op(an, mm: MatmulV, name, args, kwargs, loc):
    return NoneV()   # synchronous here: nothing to release or wait for


# ----------------------------------------------------------------------------- computing
def _tile(mm: MatmulV, field: str) -> ir.Expr:
    return S.to_expr(mm.tiling.get(field), int64)


def _default(value: ir.Expr, fallback: ir.Expr) -> ir.Expr:
    """``value`` unless it is negative (not set), else ``fallback``."""
    return ir.Select(ir.Cmp("lt", value, ir.Const(0, int64)), fallback, value, int64)


def _ready(mm: MatmulV, what: str, loc: SourceLoc) -> None:
    if mm.tiling is None:
        raise KernelValueError(f"Matmul.{what} before asc.adv.register_matmul(pipe, workspace, "
                               f"matmul, tiling): the Matmul has no tiling yet (none is "
                               f"needed only with a fully constant get_matmul_api_tiling "
                               f"config)", loc)
    if mm.sparse:
        raise UnsupportedConstructError(
            f"Matmul.{what} after set_sparse_index: the sparse (2:4 densified) Matmul is not "
            f"supported by the simulator (the densification is not publicly documented)", loc)
    for which in ("a", "b"):
        if not getattr(mm, f"{which}_seen"):
            raise KernelValueError(f"Matmul.{what} before Matmul.set_tensor_{which}(...): the "
                                   f"Matmul has no {which.upper()} matrix", loc)
    if mm.a.dtype == int8 and mm.c.dtype != int32 and not mm.quant_seen:
        raise KernelValueError(f"Matmul.{what}: int8 inputs with a {mm.c.dtype.name} C are "
                               f"dequantized: call Matmul.set_quant_scalar(...) or "
                               f"set_quant_vector(...) first", loc)


def _shape(mm: MatmulV):
    """(m, n, k) of this core's product: the tails if set, else the single-core shape."""
    return (_default(mm.load("tail_m"), _tile(mm, "single_core_m")),
            _default(mm.load("tail_n"), _tile(mm, "single_core_n")),
            _default(mm.load("tail_k"), _tile(mm, "single_core_k")))


def _emit(an, mm: MatmulV, op: str, mode: int, c_mem, c_a, c_off, c_size, tile, seq,
          loc: SourceLoc, over: Optional[dict] = None) -> None:
    """Emit ``op`` for this Matmul's state; ``over`` replaces operands by name (a batch
    layout's lda/ldb/ldc and the whole-matrix shape, sema/adv_batch.py)."""
    m, n, k = _shape(mm)
    org_m = _default(mm.load("org_m"), _tile(mm, "m"))
    org_n = _default(mm.load("org_n"), _tile(mm, "n"))
    org_ka = _default(mm.load("org_ka"), _tile(mm, "k_a"))
    org_kb = _default(mm.load("org_kb"), _tile(mm, "k_b"))
    trans_a, trans_b = mm.load("trans_a"), mm.load("trans_b")
    # row strides of A and B as stored: A is M x Ka (or Ka x M transposed), B is Kb x N (N x Kb)
    lda = ir.Select(ir.Cmp("ne", trans_a, ir.Const(0, int64)), org_m, org_ka, int64)
    ldb = ir.Select(ir.Cmp("ne", trans_b, ir.Const(0, int64)), org_kb, org_n, int64)
    if mm.c.format == CubeFormat.NZ:    # ldc: the NZ destination's rows, rounded up to 16
        def r16(e):
            return ir.Bin("mul", ir.Bin("floordiv", ir.Bin("add", e, ir.Const(15, int64), int64),
                                        ir.Const(16, int64), int64), ir.Const(16, int64), int64)
        whole = r16(m if c_mem else org_m)
        ldc = whole if mode == 0 else ir.Select(ir.Cmp("ne", seq, ir.Const(0, int64)),
                                                r16(_tile(mm, "base_m")), whole, int64)
    else:
        ldc = (n if c_mem else org_n) if mode == 0 else ir.Select(
            ir.Cmp("ne", seq, ir.Const(0, int64)), _tile(mm, "base_n"), n if c_mem else org_n,
            int64)
    code = DTYPE_CODES
    bias_dt = mm.bias.dtype if mm.bias is not None else mm.c.dtype
    from ..ops import REGISTRY
    values = {
        "mode": ir.Const(mode, int64), "a_arg": mm.load("a_arg"), "a_off": mm.load("a_off"),
        "a_dt": ir.Const(code[mm.a.dtype], int64), "b_arg": mm.load("b_arg"),
        "b_off": mm.load("b_off"), "b_dt": ir.Const(code[mm.b.dtype], int64),
        "bias_arg": mm.load("bias_arg"), "bias_off": mm.load("bias_off"),
        "bias_dt": ir.Const(code[bias_dt], int64), "c_mem": ir.Const(int(c_mem), int64),
        "c_a": c_a, "c_off": c_off, "c_size": c_size, "c_dt": ir.Const(code[mm.c.dtype], int64),
        "m": m, "n": n, "k": k, "lda": lda, "ldb": ldb, "ldc": ldc, "trans_a": trans_a,
        "trans_b": trans_b, "tile": tile, "seq": seq,
        "base_m": _tile(mm, "base_m"), "base_n": _tile(mm, "base_n"),
        "base_k": _tile(mm, "base_k"), "depth_a1": _tile(mm, "depth_a1"),
        "depth_b1": _tile(mm, "depth_b1"), "step_ka": _tile(mm, "step_k_a"),
        "step_kb": _tile(mm, "step_k_b"), "order": _order(mm),
        "db_l0c": _tile(mm, "db_l0c"), "org_m": org_m, "org_n": org_n, "org_k": org_ka,
        "cores": _tile(mm, "used_core_num"), "op": ir.Const(list(REGISTRY).index(op), int64),
        "quant_mode": mm.load("quant_mode"), "quant_scalar": mm.load("quant_scalar"),
        "quant_arg": mm.load("quant_arg"), "quant_off": mm.load("quant_off"),
        "a_scalar": mm.load("a_scalar"), "b_scalar": mm.load("b_scalar"),
        "bias_mem": mm.load("bias_mem"), "bias_size": mm.load("bias_size"),
        "c_nz": ir.Const(int(mm.c.format == CubeFormat.NZ), int64),
    }
    values.update(over or {})
    an.emit(ir.Intrinsic(op, tuple(values[name] for name in MATMUL_ARGS), (), loc,
                         (("dtype", mm.a.dtype),)))


def _order(mm: MatmulV) -> ir.Expr:
    """The base-tile order: the config's (ORDER_M / ORDER_N), else the tiling's."""
    if mm.config.iterate_order != IterateOrder.UNDEF:
        return ir.Const(int(mm.config.iterate_order), int64)
    return _tile(mm, "iterate_order")


def _atomic(v: SVal, loc: SourceLoc) -> None:
    if not isinstance(v, ConstV) or int(v.value) != 0:
        raise UnsupportedConstructError("Matmul: en_atomic other than 0 is not supported by the "
                                        "simulator (C is overwritten)", loc)


@method(MatmulV, "iterate_all")
def _iterate_all(an, mm: MatmulV, name, args, kwargs, loc):
    b = bind_args("Matmul.iterate_all()", ("tensor", "en_atomic", "sync", "en_sequential_write",
                                           "wait_iterate_all", "fake_msg"), args, kwargs, loc,
                  {"en_atomic": ConstV(0, int32), "sync": ConstV(True, bool_),
                   "en_sequential_write": NoneV(), "wait_iterate_all": NoneV(),
                   "fake_msg": NoneV()})
    if isinstance(b["tensor"], LocalTensorV):
        from .adv_operands import iterate_all_local
        return iterate_all_local(an, mm, b, loc)
    _ready(mm, "iterate_all", loc)
    _atomic(b["en_atomic"], loc)
    if mm.c.position != TPosition.GM:
        raise KernelTypeError(f"Matmul.iterate_all writes C to GM, but this Matmul's c type is "
                              f"at {mm.c.position.name}; use `with mm.iterate()` and "
                              f"get_tensor_c, or MatmulType(TPosition.GM, ...)", loc)
    c = _gm_operand(b["tensor"], "Matmul.iterate_all tensor", mm.c.dtype, loc)
    _emit(an, mm, "matmul_iterate_all", 0, Memory.GM, S.to_expr(RtV(c.arg), int64), c.offset,
          c.size, ir.Const(0, int64), ir.Const(0, int64), loc)
    return NoneV()


@method(MatmulV, "iterate")
def _iterate(an, mm: MatmulV, name, args, kwargs, loc):
    """``with mm.iterate() as count:`` (the loop over C's tiles, ``with_statement``) or a bare
    ``mm.iterate(sync=False)`` call: every base_m x base_n tile of C becomes pending, and each
    ``get_tensor_c`` outside a ``with`` takes the next one in the iterate order."""
    bind_args("Matmul.iterate()", ("en_partial_sum", "sync", "local_c_matrix"), args, kwargs,
              loc, {"en_partial_sum": ConstV(False, bool_), "sync": ConstV(True, bool_),
                    "local_c_matrix": NoneV()})
    _ready(mm, "iterate", loc)
    if not getattr(an, "_matmul_with", False):    # a bare call: its tiles become pending
        _set(an, mm, "it_tiles", _tile_count(mm), loc)
        _set(an, mm, "it_next", ir.Const(0, int64), loc)
    return MatmulIterV(mm)


def _tile_count(mm: MatmulV) -> ir.Expr:
    """ceil(m / base_m) * ceil(n / base_n) of this core's product."""
    m, n, _ = _shape(mm)
    one = ir.Const(1, int64)

    def ceil(x, d):
        return ir.Bin("floordiv", ir.Bin("add", x, ir.Bin("sub", d, one, int64), int64), d,
                      int64)
    return ir.Bin("mul", ceil(m, _tile(mm, "base_m")), ceil(n, _tile(mm, "base_n")), int64)


def _assert(an, cond: ir.Expr, msg: str, loc: SourceLoc) -> None:
    an.emit(ir.Intrinsic("kernel_assert", (cond,), (), loc, (("msg", msg),)))


_NO_TILE = ("Matmul.get_tensor_c outside `with matmul.iterate() as count:` takes the next "
            "base_m x base_n tile of the last mm.iterate() call, and none is pending")


def _is_tensor(v: SVal) -> bool:
    return isinstance(v, (LocalTensorV, GmTensorV))


@method(MatmulV, "get_tensor_c", "async_get_tensor_c")
def _get_tensor_c(an, mm: MatmulV, name, args, kwargs, loc):
    """Inside ``with mm.iterate() as count``: tile ``count``. Outside (Ascend C's asynchronous
    GetTensorC after ``Iterate<false>()``): the next pending tile of the last bare
    ``mm.iterate()`` call (a run-time error when none is left). Without a tensor it returns
    the tile as a GlobalTensor of the workspace (``set_workspace``), row stride base_n."""
    if name == "async_get_tensor_c":
        b = bind_args("Matmul.async_get_tensor_c()", ("c",), args, kwargs, loc)
        b = {"tensor": b["c"], "en_atomic": ConstV(0, int32),
             "en_sequential_write": ConstV(False, bool_), "sync": ConstV(False, bool_),
             "optional_tensor": NoneV()}
    elif not (args and _is_tensor(args[0])) and "tensor" not in kwargs:
        from .adv_batch import get_tensor_c_ws
        return get_tensor_c_ws(an, mm, args, kwargs, loc)
    else:
        b = bind_args("Matmul.get_tensor_c()", ("tensor", "en_atomic", "en_sequential_write",
                                                "sync", "optional_tensor"), args, kwargs, loc,
                      {"en_atomic": ConstV(0, int32), "en_sequential_write": ConstV(False, bool_),
                       "sync": ConstV(True, bool_), "optional_tensor": NoneV()})
    _atomic(b["en_atomic"], loc)
    seq = _flag(b["en_sequential_write"], "en_sequential_write", loc)
    dests = [_c_dest(mm, b["tensor"], loc)]
    if not isinstance(b["optional_tensor"], NoneV):     # GetTensorC(gm, co2Local): both
        if dests[0][0] != Memory.GM or not isinstance(b["optional_tensor"], LocalTensorV):
            raise KernelTypeError("Matmul.get_tensor_c with optional_tensor: tensor must be a "
                                  "GlobalTensor and optional_tensor a LocalTensor (VECIN)", loc)
        dests.append(_c_dest(mm, b["optional_tensor"], loc))
    if mm.counts:
        _ready(mm, "get_tensor_c", loc)
        tile = S.to_expr(mm.counts[-1], int64)
    else:
        tile = _next_tile(an, mm, loc)
        if tile is None:
            return NoneV()
    for c_mem, c_a, c_off, c_size in dests:
        _emit(an, mm, "matmul_get_tensor_c", 1, c_mem, c_a, c_off, c_size, tile, seq, loc)
    return NoneV()


def _next_tile(an, mm: MatmulV, loc: SourceLoc) -> Optional[ir.Expr]:
    """The next pending tile of the last bare mm.iterate() (checked at run time), or None when
    no mm.iterate() can have run before this call (no tiling or A/B yet in the source): then
    the call is a run-time error if reached."""
    if mm.tiling is None or not (mm.a_seen and mm.b_seen):
        _assert(an, ir.Const(False, bool_), _NO_TILE, loc)
        return None
    _ready(mm, "get_tensor_c", loc)
    tile = S.to_expr(an.temp(RtV(mm.load("it_next")), "mm_tile", loc), int64)
    _assert(an, ir.Cmp("lt", tile, mm.load("it_tiles")), _NO_TILE, loc)
    _set(an, mm, "it_next", ir.Bin("add", tile, ir.Const(1, int64), int64), loc)
    return tile


def _c_dest(mm: MatmulV, t: SVal, loc: SourceLoc):
    """(memory, address or GM argument, element offset, size) of a get_tensor_c destination: a
    UB LocalTensor (whatever C's position: the tile goes where the tensor is) or a GlobalTensor
    for a GM C."""
    if isinstance(t, LocalTensorV):
        if t.memory != Memory.UB:
            raise KernelTypeError(f"Matmul.get_tensor_c: {t.describe()} is not in UB "
                                  f"(VECIN/VECOUT/VECCALC)", loc)
        if t.dtype != mm.c.dtype:
            raise DtypeError(f"Matmul.get_tensor_c tensor is {t.dtype.name} but the Matmul's c "
                             f"type is {mm.c.dtype.name}", loc)
        return (Memory.UB, S.to_expr(RtV(t.addr), int64), ir.Const(0, int64),
                S.to_expr(RtV(t.size), int64))
    if mm.c.position != TPosition.GM:
        raise KernelTypeError(f"Matmul.get_tensor_c: a GlobalTensor does not match the c "
                              f"type at {mm.c.position.name}", loc)
    c = _gm_operand(t, "Matmul.get_tensor_c tensor", mm.c.dtype, loc)
    return Memory.GM, S.to_expr(RtV(c.arg), int64), c.offset, c.size


# ----------------------------------------------------------------------------- quant
@method(MatmulV, "set_quant_scalar")
def _set_quant_scalar(an, mm: MatmulV, name, args, kwargs, loc):
    """The dequant scale of every element of C (int8 inputs, float16/int8 C): the float32 whose
    bits are the low 32 of ``quant_scalar`` (Ascend C's SetQuantScalar)."""
    b = bind_args("Matmul.set_quant_scalar()", ("quant_scalar",), args, kwargs, loc)
    bits = want_int(b["quant_scalar"], "quant_scalar", loc, int64)
    if not _quant_ok(mm):
        return NoneV()
    _set(an, mm, "quant_scalar", bits, loc)
    _set(an, mm, "quant_mode", ir.Const(1, int64), loc)
    mm.quant_seen = True
    return NoneV()


@method(MatmulV, "set_quant_vector")
def _set_quant_vector(an, mm: MatmulV, name, args, kwargs, loc):
    """One dequant scale per column of C: a uint64 GlobalTensor of N (the low 32 bits of each
    are a float32; Ascend C's SetQuantVector)."""
    b = bind_args("Matmul.set_quant_vector()", ("quant_vector",), args, kwargs, loc)
    t = _gm_operand(b["quant_vector"], "Matmul.set_quant_vector tensor", uint64, loc)
    if not _quant_ok(mm):
        return NoneV()
    _set(an, mm, "quant_arg", S.to_expr(RtV(t.arg), int64), loc)
    _set(an, mm, "quant_off", t.offset, loc)
    _set(an, mm, "quant_mode", ir.Const(2, int64), loc)
    mm.quant_seen = True
    return NoneV()


def _quant_ok(mm: MatmulV) -> bool:
    """Whether this Matmul's types have a dequant stage (int8 A/B, float16 or int8 C). Other
    Matmuls accept set_quant_* (checked) and ignore it: the scale belongs to the (de)quant on
    the way out of L0C, which a float product (or an int32 C) does not have (our choice)."""
    return mm.a.dtype == int8 and mm.c.dtype in (float16, int8)


def with_statement(an, s) -> None:
    """``with mm.iterate() as count: body`` — a loop over the tiles of C."""
    c = s.context
    if not (isinstance(c, A.Call) and isinstance(c.func, A.Attribute)
            and c.func.attr == "iterate"):
        raise UnsupportedConstructError("`with` statements are not supported in kernels, except "
                                        "`with matmul.iterate() as count:`", s.loc)
    an._matmul_with = True          # the with-form's tiles are its loop's, not pending ones
    try:
        ctx = an.expr(s.context)
    finally:
        an._matmul_with = False
    if not isinstance(ctx, MatmulIterV):
        raise UnsupportedConstructError(f"`with` in kernels only takes matmul.iterate(), got "
                                        f"{ctx.describe()}", s.context.loc)
    mm = ctx.mm
    _ready(mm, "iterate", s.context.loc)
    m, n, _ = _shape(mm)
    tiles = S.binary("*", S.binary("//", RtV(ir.Bin("add", m, ir.Bin("sub", _tile(
        mm, "base_m"), ir.Const(1, int64), int64), int64)), RtV(_tile(mm, "base_m")), s.loc),
        S.binary("//", RtV(ir.Bin("add", n, ir.Bin("sub", _tile(mm, "base_n"),
                                                           ir.Const(1, int64), int64), int64)),
                 RtV(_tile(mm, "base_n")), s.loc), s.loc)
    tiles = an.temp(tiles, "matmul_tiles", s.loc)
    var = ir.Var(s.target.id if isinstance(s.target, A.Name) else "count", int32)
    base = dict(an.scope.env)
    an.scope.loop_depth += 1
    saved = getattr(an, "_static_labels", None)
    an._static_labels = None
    mm.counts.append(RtV(ir.Load(var)))
    try:
        with an.capture() as body:
            if s.target is not None:
                if not isinstance(s.target, A.Name):
                    raise ArgumentError("`with matmul.iterate() as NAME`: one plain name", s.loc)
                an.bind(s.target.id, RtV(ir.Load(var)), s.target.loc)
            an.stmts(s.body)
    finally:
        mm.counts.pop()
        an._static_labels = saved
        an.scope.loop_depth -= 1
    an.scope.env = an._loop_env_after(base, an.scope.env)
    an.emit(ir.ForRange(var, ir.Const(0, int32), S.to_expr(tiles, int32), ir.Const(1, int32),
                        tuple(body), s.loc))


@function("adv.shape_rows")
def _shape_rows(an, args, kwargs, loc):
    b = bind_args("asc.adv.shape_rows()", ("tensor",), args, kwargs, loc)
    t = b["tensor"]
    if not isinstance(t, LocalTensorV):
        raise OperandKindError(f"asc.adv.shape_rows needs a LocalTensor, got {t.describe()}", loc)
    info = t.shape_info
    zero = ConstV(0, int32)
    if info is None or not getattr(info, "shape", ()):
        return TupleV((zero, zero, zero))
    def sval(e: ir.Expr) -> SVal:       # a ShapeInfo holds int32 expressions
        return ConstV(e.value, int32) if isinstance(e, ir.Const) else RtV(e)
    rows = ConstV(1, int32)
    for d in info.shape[:-1]:
        rows = S.binary("*", rows, sval(d), loc)
    orig = info.original[-1] if getattr(info, "original", ()) else info.shape[-1]
    return TupleV((rows, sval(info.shape[-1]), sval(orig)))


@function("property")
def _property(an, args, kwargs, loc):
    b = bind_args("asc.property()", ("prop",), args, kwargs, loc)
    p = b["prop"]
    if isinstance(p, PyObjV) and isinstance(p.obj, Property):
        return ConstV(p.obj.value, int32)
    raise KernelTypeError(f"asc.property() takes an asc property such as asc.DEFAULT_C0_SIZE, "
                          f"got {p.describe()}", loc)


from .structs import _register_constructors, _register_methods  # noqa: E402

_register_methods()
_register_constructors()
from . import adv_operands  # noqa: E402,F401  (registrations)
from . import adv_batch  # noqa: E402,F401  (registrations)
