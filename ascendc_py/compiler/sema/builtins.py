"""Calls, attributes and subscripts of the kernel language: the DSL builtins and methods.

Each builtin is a function registered in ``FUNCTIONS`` (by ``asc_name``) or ``METHODS`` (by value
kind and method name); a missing key is a clear "not supported in kernels" error. Op-specific
dtype/arity rules come from the op registry (``compiler/ops.py``).
"""
from __future__ import annotations

from dataclasses import replace

import enum

import numpy as np
from typing import Callable

from ...dsl import api
from ...dsl.types import (DataType, HardEvent, Memory, PipeID, TPosition, bool_, float32, int32,
                          int64, EVENT_IDS_PER_EVENT)
from .. import ast as A
from .. import ir
from ..errors import (ConstantRangeError, KernelSyntaxError, KernelTypeError, KernelValueError,
                      SourceLoc, UnsupportedConstructError)
from ..ops import REGISTRY, Family, OpSpec
from . import scalars as S
from .values import (BoundMethodV, ConstV, DTypeV, EnumV, GmAddrV, GmTensorV, LocalTensorV,
                     NoneV, PipeV, PyObjV, QueueV, RtV, StrV, SVal, TupleV, WideIntV)

FUNCTIONS: dict[str, Callable] = {}
METHODS: dict[tuple[type, str], Callable] = {}
UB_MEMORY = Memory.UB


def function(name: str):
    def deco(fn):
        FUNCTIONS[name] = fn
        return fn
    return deco


def method(kind: type, *names: str):
    def deco(fn):
        for n in names:
            METHODS[(kind, n)] = fn
        return fn
    return deco


# ----------------------------------------------------------------------------- argument binding
def bind_args(what: str, params: tuple[str, ...], args: list[SVal], kwargs: dict[str, SVal],
              loc: SourceLoc, defaults: dict | None = None) -> dict[str, SVal]:
    """Bind positional and keyword arguments to parameter names (Python rules)."""
    defaults = defaults or {}
    if len(args) > len(params):
        raise KernelTypeError(f"{what} takes at most {len(params)} arguments "
                              f"({', '.join(params)}) but {len(args)} were given", loc)
    bound = dict(zip(params, args))
    for k, v in kwargs.items():
        if k not in params:
            raise KernelTypeError(f"{what} got an unexpected keyword argument '{k}'", loc,
                                  hint=f"its parameters are: {', '.join(params)}")
        if k in bound:
            raise KernelTypeError(f"{what} got multiple values for argument '{k}'", loc)
        bound[k] = v
    for p in params:
        if p not in bound:
            if p in defaults:
                bound[p] = defaults[p]
            else:
                raise KernelTypeError(f"{what} is missing argument '{p}'", loc,
                                      hint=f"its parameters are: {', '.join(params)}")
    return bound


def want_int(v: SVal, what: str, loc: SourceLoc, dtype=int32) -> ir.Expr:
    """An integer operand as an IR expression of ``dtype``. Never a silent wrap: a constant
    that does not fit is a ConstantRangeError here, and a run-time value of a wider type is
    narrowed by a checked cast (the kernel stops with ValueRangeError at the line if it does
    not fit). 64-bit fields also take unsigned constants up to 2**64 - 1 (bit masks)."""
    v = S.numeric(v)
    if isinstance(v, WideIntV):
        raise S.wide_error(v, loc, f"{what} is an")
    if not isinstance(v, (ConstV, RtV)) or v.dtype.is_float or v.dtype == bool_:
        raise KernelTypeError(f"{what} must be an integer, got {v.describe()}", loc)
    if isinstance(v, ConstV):
        lo, hi = _int_range(dtype)
        if dtype.bits == 64:
            hi = (1 << 64) - 1
        if not lo <= int(v.value) <= hi:
            raise ConstantRangeError(f"{what} is {v.value}, which does not fit in "
                                     f"{dtype.name} ({lo}..{_int_range(dtype)[1]})", loc)
        return S.to_expr(v, dtype)
    if v.dtype.bits > dtype.bits or (v.dtype.bits == dtype.bits and
                                     v.dtype.is_signed != dtype.is_signed):
        return ir.Cast(v.expr, dtype, checked=True, what=what)
    return S.to_expr(v, dtype)


def _int_range(dtype) -> tuple[int, int]:
    if dtype.is_signed:
        return -(1 << (dtype.bits - 1)), (1 << (dtype.bits - 1)) - 1
    return 0, (1 << dtype.bits) - 1


def want_const_int(v: SVal, what: str, loc: SourceLoc) -> int:
    if isinstance(v, WideIntV):
        raise S.wide_error(v, loc, f"{what} is an")
    if not isinstance(v, ConstV) or v.dtype.is_float:
        raise KernelValueError(f"{what} must be a compile-time integer, got {v.describe()}", loc,
                               hint="use a literal, a module constant or a ConstExpr parameter")
    return int(v.value)


def want_dtype(v: SVal, what: str, loc: SourceLoc) -> DataType:
    if not isinstance(v, DTypeV):
        raise KernelTypeError(f"{what} must be a dtype (e.g. asc.float16 or x.dtype), got "
                              f"{v.describe()}", loc)
    if v.dtype.is_void():
        raise KernelTypeError(f"{what} cannot be asc.void: it has no values (only a "
                              f"function's return type is void)", loc)
    return v.dtype


def want_enum(v: SVal, cls: type, what: str, loc: SourceLoc):
    if not isinstance(v, EnumV) or not isinstance(v.member, cls):
        raise KernelTypeError(f"{what} must be a {cls.__name__} member (e.g. "
                              f"asc.{cls.__name__}.{next(iter(cls)).name}), got "
                              f"{v.describe()}", loc)
    return v.member


#: Ascend C's ``pipe_t`` numbering (what an int pipe id means, as in pyasc's PipeID values):
#: 7..9 (PIPE_MTE4, PIPE_MTE5, PIPE_V2) do not exist on A2/A3.
PIPE_T = {0: PipeID.PIPE_S, 1: PipeID.PIPE_V, 2: PipeID.PIPE_M, 3: PipeID.PIPE_MTE1,
          4: PipeID.PIPE_MTE2, 5: PipeID.PIPE_MTE3, 6: PipeID.PIPE_ALL, 10: PipeID.PIPE_FIX}


def want_pipe(v: SVal, what: str, loc: SourceLoc) -> PipeID:
    """A pipe: a PipeID member, or a compile-time int in Ascend C's ``pipe_t`` numbering
    (``asc.pipe_barrier(0)`` is PIPE_S, 6 is PIPE_ALL, 10 is PIPE_FIX)."""
    if isinstance(v, ConstV) and v.dtype.is_int and v.dtype != bool_:
        pipe = PIPE_T.get(int(v.value))
        if pipe is None:
            known = ", ".join(f"{k} ({p.name})" for k, p in PIPE_T.items())
            raise KernelValueError(f"{what} {v.value} is not a pipe of A2/A3; pipe ids: {known}",
                                   loc)
        return pipe
    return want_enum(v, PipeID, what, loc)


def want_local(v: SVal, what: str, loc: SourceLoc, memory: Memory | None = UB_MEMORY
               ) -> LocalTensorV:
    if not isinstance(v, LocalTensorV):
        hint = ("copy global data into a LocalTensor with asc.data_copy first"
                if isinstance(v, (GmTensorV, GmAddrV)) else "")
        raise KernelTypeError(f"{what} must be a LocalTensor, got {v.describe()}", loc, hint=hint)
    if memory is not None and v.memory != memory:
        raise KernelTypeError(f"{what} must be in {memory.name} (positions VECIN/VECOUT/VECCALC), "
                              f"got a tensor at {v.position.name}", loc)
    return v


# ----------------------------------------------------------------------------- attributes
def get_attribute(an, base: SVal, attr: str, loc: SourceLoc) -> SVal:
    from .scope import python_to_sval
    if isinstance(base, PyObjV):
        obj = base.obj
        if isinstance(obj, type) and issubclass(obj, enum.Enum):
            try:
                return EnumV(obj[attr])
            except KeyError:
                raise KernelNameError_(f"{obj.__name__} has no member '{attr}'", loc) from None
        if not hasattr(obj, attr):
            from ...dsl.suggest import hint
            name = getattr(obj, "__name__", type(obj).__name__)
            raise KernelNameError_(f"'{name}' has no attribute '{attr}'", loc, hint(
                attr, dir(obj), owner="asc" if name == "ascendc_py" else ""))
        value = getattr(obj, attr)
        sval = python_to_sval(value, loc)
        if not isinstance(sval, PyObjV):
            path = (getattr(obj, "__name__", "?"), attr)
            an.globals_read[path] = value
        return sval
    if attr == "dtype" and isinstance(base, (GmAddrV, GmTensorV, LocalTensorV)):
        if base.dtype is None:
            raise KernelTypeError("this GlobalTensor has no dtype before set_global_buffer", loc)
        return DTypeV(base.dtype)
    if isinstance(base, DTypeV) and attr in ("sizeof", "itemsize"):
        return BoundMethodV(base, attr) if attr == "sizeof" else ConstV(base.dtype.sizeof(),
                                                                         int32)
    if isinstance(base, EnumV) and attr in ("value", "name"):
        return ConstV(int(base.member.value), int32) if attr == "value" else StrV(
            base.member.name)
    if (type(base), attr) in METHODS:
        return BoundMethodV(base, attr)
    from .values import StructV
    if isinstance(base, StructV):
        try:
            return base.get(attr)
        except KeyError:
            raise KernelNameError_(f"{base.kind} has no field '{attr}'; fields: "
                                   f"{', '.join(k for k, _ in base.fields)}", loc) from None
    from ...dsl.suggest import hint
    known = [m for kind, m in METHODS if kind is type(base)] + (
        ["dtype"] if isinstance(base, (GmAddrV, GmTensorV, LocalTensorV)) else [])
    raise KernelNameError_(f"{base.describe()} has no attribute '{attr}' in kernels", loc,
                           hint(attr, known))


def KernelNameError_(msg, loc, hint: str = ""):  # noqa: N802 - local alias keeps imports short
    from ..errors import UnknownAttributeError
    return UnknownAttributeError(msg, loc, hint=hint)


def subscript(an, base: SVal, index, loc: SourceLoc) -> SVal:
    if isinstance(index, A.Slice):
        if index.upper is not None or index.step is not None:
            raise KernelSyntaxError("tensor slices take only a start offset: t[offset:]", loc)
        off = an.expr(index.lower) if index.lower is not None else ConstV(0, int32)
    else:
        off = an.expr(index)
    if isinstance(base, LocalTensorV):
        return subscript_local(an, base, off, loc)
    if isinstance(base, GmTensorV):
        if base.dtype is None:
            raise KernelTypeError("index a GlobalTensor only after set_global_buffer", loc)
        o = want_int(off, "a GlobalTensor offset", loc, int64)
        size = ir.Select(ir.Cmp("lt", base.size, ir.Const(0, int64)), ir.Const(-1, int64),
                         ir.Bin("sub", base.size, o, int64), int64)
        return GmTensorV(base.dtype, base.arg, ir.Bin("add", base.offset, o, int64), size,
                         base.arg_name)
    if isinstance(base, TupleV):
        i = want_const_int(off, "a tuple index", loc)
        try:
            return base.items[i]
        except IndexError:
            raise KernelValueError(f"tuple index {i} out of range", loc) from None
    if isinstance(base, PyObjV) and isinstance(base.obj, (tuple, list)):
        from .scope import python_to_sval
        i = want_const_int(off, "an index into a global tuple", loc)
        n = len(base.obj)
        if not -n <= i < n:
            raise ConstantRangeError(f"index {i} is out of range for a module-level "
                                     f"{type(base.obj).__name__} of {n} items", loc,
                                     hint=f"use an index in 0..{n - 1}" if n else "")
        return python_to_sval(base.obj[i], loc)
    raise KernelTypeError(f"{base.describe()} cannot be subscripted", loc)


def subscript_local(an, base: LocalTensorV, off: SVal, loc: SourceLoc) -> LocalTensorV:
    """``base[off:]``: the rest of a LocalTensor from element ``off`` (checked: a constant
    offset at compile time, a run-time one by ``check_offset``)."""
    o = want_int(off, "the LocalTensor offset", loc)
    size = base.dtype.sizeof()
    if isinstance(o, ir.Const):
        if not 0 <= o.value * size < 1 << 31:
            raise ConstantRangeError(f"the LocalTensor offset {o.value} is outside "
                                     f"0..{(1 << 31) // size - 1} elements", loc,
                                     hint="offsets count elements from the tensor's start")
    else:   # a run-time offset: negative or past 2**31 bytes stops the kernel (no wrap)
        an.emit(ir.Intrinsic("check_offset", (o, base.addr), (), loc,
                             (("esize", size),)))
    addr = ir.Bin("add", base.addr, ir.Bin("mul", o, ir.Const(size, int32), int32), int32)
    return replace(base, addr=addr, size=ir.Bin("sub", base.size, o, int32))


# ----------------------------------------------------------------------------- calls
def _no_wide_arguments(args: list[SVal], kwargs: dict[str, SVal], node) -> None:
    """An integer outside 64 bits (:class:`WideIntV`) may not reach a builtin: an error at the
    argument that carries it (list arguments such as masks included)."""
    nodes = list(node.args) + [k.value for k in node.keywords]
    for v, arg in zip(list(args) + list(kwargs.values()), nodes):
        items = v.items if isinstance(v, TupleV) else (v,)
        for item in items:
            if isinstance(item, WideIntV):
                raise S.wide_error(item, arg.loc, "the argument is an")


def call(an, func: SVal, args: list[SVal], kwargs: dict[str, SVal], node) -> SVal:
    loc = node.loc
    if not (isinstance(func, PyObjV) and (_is_kernel(func.obj) or
                                          PYTHON_FUNCS.get(func.obj) in _EXACT_FUNCS)):
        _no_wide_arguments(args, kwargs, node)
    if isinstance(func, BoundMethodV):
        if isinstance(func.self_val, DTypeV) and func.name == "sizeof":
            return ConstV(func.self_val.dtype.sizeof(), int32)
        handler = METHODS[(type(func.self_val), func.name)]
        return handler(an, func.self_val, func.name, args, kwargs, loc)
    if isinstance(func, PyObjV):
        obj = func.obj
        from ...dsl.kernel import Kernel
        if isinstance(obj, Kernel):
            return an.inline_call(obj, args, kwargs, node)
        name = getattr(obj, "asc_name", None)
        if name is None and obj in PYTHON_FUNCS:
            name = PYTHON_FUNCS[obj]
        if name in FUNCTIONS:
            return FUNCTIONS[name](an, args, kwargs, loc)
        if name in REGISTRY:
            return vector_op(an, REGISTRY[name], args, kwargs, loc)
        if name == "range":
            raise KernelSyntaxError("range(...) can only be used as a for-loop iterable", loc)
        if isinstance(obj, type) and issubclass(obj, np.generic):
            return _numpy_scalar(obj, args, kwargs, loc)
        if obj is DataType:     # asc.DataType("int32"): a dtype by name
            (v,) = bind_args("asc.DataType()", ("name",), args, kwargs, loc).values()
            from ...dsl.types import DTYPES_BY_NAME
            if not isinstance(v, StrV) or v.value not in DTYPES_BY_NAME:
                raise KernelValueError(f"asc.DataType() needs a dtype name such as 'int32', got "
                                       f"{v.describe() if not isinstance(v, StrV) else v.value}",
                                       loc, hint=f"names: {', '.join(DTYPES_BY_NAME)}")
            return DTypeV(DTYPES_BY_NAME[v.value])
        shown = getattr(obj, "__name__", None) or repr(obj)
        raise KernelSyntaxError(f"calling '{shown}' is not supported in kernels", loc,
                                hint="kernels can call asc builtins and other @asc.kernel "
                                     "functions")
    if isinstance(func, (LocalTensorV, GmTensorV)):
        # Ascend C's operator()(index): the element at index (a scalar read on PIPE_S)
        return METHODS[(type(func), "get_value")](an, func, "get_value", args, kwargs, loc)
    raise KernelTypeError(f"{func.describe()} is not callable", loc)


def _numpy_scalar(cls, args, kwargs, loc) -> SVal:
    """``np.float16(2.2)``, ``np.int32(n)``: the value converted to that type (a constant
    stays a constant, rounded or wrapped as numpy and a store of that type do)."""
    from ...dsl.types import as_dtype
    try:
        dtype = as_dtype(cls)
    except (TypeError, ValueError, KeyError):
        raise KernelTypeError(f"np.{cls.__name__} is not a kernel scalar type", loc) from None
    (v,) = bind_args(f"np.{cls.__name__}()", ("value",), args, kwargs, loc).values()
    v = S.numeric(v)
    if isinstance(v, ConstV) and dtype.is_int and v.dtype.is_int and v.dtype != bool_:
        lo, hi = _int_range(dtype)
        if not lo <= int(v.value) <= hi:    # numpy refuses it too (OverflowError)
            raise ConstantRangeError(f"np.{cls.__name__}({v.value}): {v.value} is outside "
                                     f"{dtype.name} ({lo}..{hi})", loc)
    return S.cast(v, dtype, loc)


def _is_kernel(obj) -> bool:
    from ...dsl.kernel import Kernel
    return isinstance(obj, Kernel)


# ----------------------------------------------------------------------------- Python builtins
import builtins as _py  # noqa: E402

PYTHON_FUNCS = {_py.min: "py_min", _py.max: "py_max", _py.abs: "py_abs", _py.int: "py_int",
                _py.float: "py_float", _py.bool: "py_bool", _py.range: "range",
                _py.len: "py_len", _py.print: "printf"}
#: Python builtins that compute on exact compile-time integers (wide ones included)
_EXACT_FUNCS = ("py_min", "py_max", "py_abs", "py_int", "py_float", "py_bool")


@function("py_min")
def _min(an, args, kwargs, loc):
    if kwargs or len(args) < 2:
        raise KernelTypeError("min() takes two or more numbers in kernels", loc)
    return S.min_max("min", args, loc)


@function("py_max")
def _max(an, args, kwargs, loc):
    if kwargs or len(args) < 2:
        raise KernelTypeError("max() takes two or more numbers in kernels", loc)
    return S.min_max("max", args, loc)


@function("py_abs")
def _abs(an, args, kwargs, loc):
    (v,) = bind_args("abs()", ("x",), args, kwargs, loc).values()
    v = S.numeric(v)
    if isinstance(v, WideIntV):
        return S.int_const(abs(v.value), loc)
    if isinstance(v, ConstV):
        if v.dtype.is_int and v.dtype != bool_:   # exact: abs(-2**63) is 2**63
            return S.int_const(abs(int(v.value)), loc, narrow=v.dtype == int32)
        return ConstV(abs(v.value), v.dtype)
    if not isinstance(v, RtV):
        raise KernelTypeError(f"abs() needs a number, got {v.describe()}", loc)
    t = S.arith_type(v.dtype)
    return RtV(ir.Un("abs", S.to_expr(v, t), t))


@function("py_int")
def _int(an, args, kwargs, loc):
    (v,) = bind_args("int()", ("x",), args, kwargs, loc).values()
    v = S.numeric(v)
    if isinstance(v, WideIntV):
        return v
    if isinstance(v, ConstV):
        return S.const_of(int(v.value), loc)
    return S.cast(v, int32 if v.dtype.bits <= 32 else int64, loc)


@function("py_float")
def _float(an, args, kwargs, loc):
    (v,) = bind_args("float()", ("x",), args, kwargs, loc).values()
    return S.cast(v, float32, loc)


@function("py_bool")
def _bool(an, args, kwargs, loc):
    (v,) = bind_args("bool()", ("x",), args, kwargs, loc).values()
    return S.truth(v, loc)


@function("py_len")
def _len(an, args, kwargs, loc):
    (v,) = bind_args("len()", ("x",), args, kwargs, loc).values()
    if isinstance(v, TupleV):
        return ConstV(len(v.items), int32)
    if isinstance(v, PyObjV) and isinstance(v.obj, (tuple, list)):  # a module-level tuple
        return ConstV(len(v.obj), int32)
    raise KernelTypeError("len() works on tuples only; use t.get_size() for tensors", loc)


# ----------------------------------------------------------------------------- system builtins
def _special(name):
    def handler(an, args, kwargs, loc):
        if args or kwargs:
            raise KernelTypeError(f"asc.{name}() takes no arguments", loc)
        return RtV(ir.Special(name.replace("get_", "")))
    return handler


for _n in ("get_block_idx", "get_block_num", "get_sub_block_idx", "get_sub_block_num",
           "get_system_cycle"):
    FUNCTIONS[_n] = _special(_n)


def _is_core(name, core_type):
    def handler(an, args, kwargs, loc):
        if args or kwargs:
            raise KernelTypeError(f"asc.{name}() takes no arguments", loc)
        return S.compare("==", RtV(ir.Special("core_type")), ConstV(core_type, int32), loc)
    return handler


FUNCTIONS["ascend_is_aic"] = _is_core("ascend_is_aic", 1)
FUNCTIONS["ascend_is_aiv"] = _is_core("ascend_is_aiv", 0)


@function("ceildiv")
def _ceildiv(an, args, kwargs, loc):
    b = bind_args("ceildiv()", ("a", "b"), args, kwargs, loc)
    one = ConstV(1, int32)
    num = S.binary("-", S.binary("+", b["a"], b["b"], loc), one, loc)
    return S.binary("//", num, b["b"], loc)


@function("number")
def _number(an, args, kwargs, loc):
    b = bind_args("asc.number()", ("value", "dtype"), args, kwargs, loc)
    return S.cast(b["value"], want_dtype(b["dtype"], "asc.number() dtype", loc), loc)


@function("inline")
def _inline(an, args, kwargs, loc):
    raise UnsupportedConstructError(
        "asc.inline inserts verbatim C++ into pyasc's generated code; the simulator runs no "
        "C++ text", loc, hint="write it with asc builtins, or load a whole C++ kernel with "
                              "asc.cpp.load (README \"C++ kernels\")")


@function("static_assert")
def _static_assert(an, args, kwargs, loc):
    b = bind_args("static_assert()", ("cond", "msg"), args, kwargs, loc, {"msg": StrV("")})
    cond = S.truth(b["cond"], loc)
    if not isinstance(cond, ConstV):
        raise KernelValueError("static_assert needs a compile-time condition", loc,
                               hint="use a plain `assert` for runtime checks")
    if not cond.value:
        msg = b["msg"].value if isinstance(b["msg"], StrV) else ""
        raise KernelValueError(f"static_assert failed{': ' + msg if msg else ''}", loc)
    return NoneV()


@function("set_flag")
def _set_flag(an, args, kwargs, loc):
    return _flag_op(an, "set_flag", args, kwargs, loc)


@function("wait_flag")
def _wait_flag(an, args, kwargs, loc):
    return _flag_op(an, "wait_flag", args, kwargs, loc)


def _flag_op(an, name, args, kwargs, loc):
    b = bind_args(f"asc.{name}()", ("event", "event_id"), args, kwargs, loc,
                  {"event_id": ConstV(0, int32)})
    event = want_enum(b["event"], HardEvent, "the event", loc)
    eid = b["event_id"]
    if isinstance(eid, ConstV) and not 0 <= int(eid.value) < EVENT_IDS_PER_EVENT:
        raise KernelValueError(f"event id {eid.value} is out of range 0..{EVENT_IDS_PER_EVENT-1}",
                               loc)
    an.emit(ir.Intrinsic(name, (int(event), want_int(eid, "the event id", loc)), (), loc))
    return NoneV()


@function("pipe_barrier")
def _pipe_barrier(an, args, kwargs, loc):
    b = bind_args("asc.pipe_barrier()", ("pipe",), args, kwargs, loc)
    pipe = want_pipe(b["pipe"], "the pipe", loc)
    an.emit(ir.Intrinsic("pipe_barrier", (int(pipe),), (), loc))
    return NoneV()


# ----------------------------------------------------------------------------- vector ops
def vector_op(an, spec: OpSpec, args, kwargs, loc) -> SVal:
    """An element-wise vector op in its count form or its masked form."""
    count_form, masked_form = spec.forms[0], spec.forms[-1]
    masked = len(spec.forms) > 1 and (
        bool({"mask", "repeat_times", "repeat_params", "dst_block_stride"} & set(kwargs))
        or len(args) >= len(masked_form) - 1)
    form = masked_form if masked else count_form
    b = bind_args(f"asc.{spec.name}()", form, args, kwargs, loc,
                  {"is_set_mask": ConstV(True, bool_)})
    dst = want_local(b["dst"], f"asc.{spec.name} dst", loc)
    operands = [dst.ref()]
    scalar = None
    src_dtype = dst.dtype  # differs only for a mixed-precision pair (spec.mixed)
    src_dtypes = []
    for name in form[1:]:
        if name.startswith("src"):
            src = want_local(b[name], f"asc.{spec.name} {name}", loc)
            if (dst.dtype, src.dtype) in spec.mixed:
                if any(d != src.dtype for d in src_dtypes):
                    raise KernelTypeError(f"asc.{spec.name}: {name} is {src.dtype.name} but "
                                          f"the other source is {src_dtypes[0].name}; the "
                                          f"sources must have one dtype", loc,
                                          hint="convert with asc.cast first")
                src_dtype = src.dtype
            elif src.dtype != dst.dtype:
                raise KernelTypeError(f"asc.{spec.name}: {name} is {src.dtype.name} but dst is "
                                      f"{dst.dtype.name}; all operands must have one dtype",
                                      loc, hint="convert with asc.cast first")
            if src_dtype != dst.dtype and src.dtype != src_dtype:
                raise KernelTypeError(f"asc.{spec.name}: {name} is {src.dtype.name} but the "
                                      f"other source is {src_dtype.name}; the sources must "
                                      f"have one dtype", loc, hint="convert with asc.cast first")
            src_dtypes.append(src.dtype)
            operands.append(src.ref())
        elif name == "scalar":  # converted to the tensor dtype, as Ascend C does
            sv = b[name]
            if not isinstance(sv, (ConstV, RtV)):
                raise KernelTypeError(f"asc.{spec.name}: {name} must be a number, got "
                                      f"{sv.describe()}", loc)
            scalar = (sv, name)
    if dst.dtype not in spec.dtypes:
        allowed = ", ".join(d.name for d in spec.dtypes)
        raise KernelTypeError(f"asc.{spec.name} does not support {dst.dtype.name} on Ascend "
                              f"910B (A2/A3); supported: {allowed}", loc)
    if scalar is not None:  # converted to the source dtype, as Ascend C does
        scalar = S.to_expr(scalar[0], src_dtype)
    attrs = (("dtype", dst.dtype),) + ((("src_dtype", src_dtype),)
                                       if src_dtype != dst.dtype else ())
    if not masked:
        count = want_int(b["count"], f"asc.{spec.name} count", loc)
        extra = (scalar,) if scalar is not None else ()
        an.emit(ir.Intrinsic(spec.name, tuple(operands) + extra + (count,), (), loc, attrs))
        return NoneV()
    while len(operands) < 3:
        operands.append(None)
    kind, lo, hi = mask_operand(b["mask"], dst.dtype, spec.name, loc)
    repeat = want_int(b["repeat_times"], f"asc.{spec.name} repeat_times", loc, int64)
    if "repeat_params" in b:
        strides = repeat_strides(b["repeat_params"],
                                 spec.family in (Family.BINARY, Family.TERNARY), loc)
    else:  # duplicate: dst_block_stride, dst_repeat_stride
        strides = (want_int(b["dst_block_stride"], "dst_block_stride", loc, int64),
                   ir.Const(1, int64), ir.Const(1, int64),
                   want_int(b["dst_repeat_stride"], "dst_repeat_stride", loc, int64),
                   ir.Const(8, int64), ir.Const(8, int64))
    is_set = S.to_expr(S.truth(b["is_set_mask"], loc), int64)
    an.emit(ir.Intrinsic(spec.name, tuple(operands) + (scalar, is_set, kind, lo, hi, repeat)
                         + strides, (), loc, attrs + (("form", "masked"),)))
    return NoneV()


def mask_operand(v: SVal, dtype, op: str, loc: SourceLoc):
    """(kind, lo, hi) of a mask argument: an int count (kind 0) or a list bit mask (kind 1).

    A bit mask is Ascend C's ``uint64_t mask[2]``: ``[low, high]``, lanes 0..63 and 64..127.
    For 8/16-bit dtypes (128 lanes) both words are needed. For 32/64-bit dtypes (64/32
    lanes) the low word alone may be given, or both as the documentation's two-word array:
    the high word covers no lane of a 256-byte repeat and is ignored, as the hardware does
    (the documentation asks for 0 there; pyasc's tests pass ``[2**64 - 1, 2**64 - 1]``)."""
    lanes = 256 // dtype.sizeof()
    if isinstance(v, TupleV):
        allowed = (2,) if lanes > 64 else (1, 2)
        if len(v.items) not in allowed:
            shown = "2 uint64 values" if lanes > 64 else "1 or 2 uint64 values"
            raise KernelTypeError(f"asc.{op}: a bit mask for {dtype.name} is a list of {shown} "
                                  f"([low, high]; {lanes} lanes), got {len(v.items)}", loc)
        parts = [want_int(x, "a mask word", loc, int64) for x in v.items]
        hi = parts[1] if lanes > 64 else ir.Const(0, int64)
        return ir.Const(1, int64), parts[0], hi
    # the range [1, lanes] is checked at run time: in counter mode the mask is a count
    if isinstance(v, ConstV) and not v.dtype.is_float and int(v.value) < 0:
        raise KernelValueError(f"asc.{op}: mask {v.value} is negative", loc)
    return ir.Const(0, int64), want_int(v, "the mask", loc, int64), ir.Const(0, int64)


def repeat_strides(v: SVal, binary: bool, loc: SourceLoc) -> tuple:
    """(dst_blk, src0_blk, src1_blk, dst_rep, src0_rep, src1_rep) from a RepeatParams value."""
    from .values import StructV
    want = "BinaryRepeatParams" if binary else "UnaryRepeatParams"
    if not isinstance(v, StructV) or v.kind != want:
        raise KernelTypeError(f"repeat_params must be asc.{want}(...), got {v.describe()}", loc)
    f = {k: want_int(x, k, loc, int64) for k, x in v.fields}
    if binary:
        return (f["dst_blk_stride"], f["src0_blk_stride"], f["src1_blk_stride"],
                f["dst_rep_stride"], f["src0_rep_stride"], f["src1_rep_stride"])
    one, eight = ir.Const(1, int64), ir.Const(8, int64)
    return (f["dst_blk_stride"], f["src_blk_stride"], one, f["dst_rep_stride"],
            f["src_rep_stride"], eight)


from . import objects, convert, reduce, movement, debug, cube, adv, crosscore, cube_init  # noqa: E402,F401,E501  (registrations)
from . import event_ids  # noqa: E402,F401  (TPipe event-id pool)
from . import auto_tensor  # noqa: E402,F401  (asc.LocalTensorAuto)
from . import vcopy, atomic, fused, transpose  # noqa: E402,F401  (issue 15 op families)
from . import gather, reduce_repeat, queue_bind, local_allocator, buf_pool, shape_info, scalar_bits, deq, gather_mask  # noqa: E402,F401,E501
from . import sort, bilinear  # noqa: E402,F401  (sort family, bilinear_interpolation)
from . import aipp  # noqa: E402,F401  (AIPP records, set_aipp_functions, load_image_to_local)
from . import sysctl  # noqa: E402,F401  (pyasc-lang: cache/profiling/system calls)
from . import copy_records  # noqa: E402,F401  (pyasc-lang: SliceInfo, Nz2NdParamsFull, ...)
from . import cmpmask  # noqa: E402,F401  (pyasc-lang: the CMPMASK register)
from . import list_tensor  # noqa: E402,F401  (pyasc-lang: ListTensorDesc, TensorDesc)
from . import add_deq  # noqa: E402,F401  (pyasc-lang: add_deq_relu)
from . import load3d  # noqa: E402,F401  (conv19: LoadData3DParams records, img2col)
from . import ib_sync  # noqa: E402,F401  (pyasc-sync: GM-flag inter-block sync)
from . import cube_sparse  # noqa: E402,F401  (pyasc15: 2:4 sparse cube, LoadData2DParamsV2, cube registers)
