"""ListTensorDesc and TensorDesc: a list of tensors described in one GM buffer.

Ascend C's ListTensorDesc parses a GM buffer laid out by the host (its documentation shows the
layout only as a figure); the layout here, our choice, in uint64 words from the buffer's start:

* word 0: the byte offset ``P`` of the data-pointer table (a multiple of 8, at least 8);
* from word 1 up to byte ``P``: one descriptor per tensor, a word whose low 32 bits are its
  number of dimensions ``dim`` (the high 32 bits are not read), then ``dim`` words of shape;
* from byte ``P``: one word per tensor, its data's place. A kernel here cannot hold a device
  address, so the word is the byte offset of the tensor's data from the start of the list
  buffer (the tensors live in the same GM argument).

``get_size()`` counts the descriptors; ``get_desc(desc, index)`` fills a TensorDesc (its index,
``get_dim()``, ``get_shape(i)`` read from the buffer, ``get_data_ptr()`` / ``get_data_obj()``
in the TensorDesc's dtype); ``get_data_ptr(index, dtype)`` is the index-th tensor's address.
``length`` (bytes) and ``shape_size`` (tensors) are only checked, when given (not 0xffffffff),
as the docs say: the table must start inside ``length`` and the list must hold ``shape_size``
tensors. Everything is scalar GM reads (``get_value`` instructions: their checks, timing and
sanitizer treatment); a bad layout (P not a multiple of 8, an index past the list, a data
offset not aligned to the dtype) stops the kernel at the line. ``TensorDesc.set_shape_addr(p)``
takes Ascend C's shape buffer address (an integer here) and keeps it: the shape is read from
the list buffer itself, so nothing is written there. A TensorDesc that get_desc never filled
has dim 0 and index 0, and its data faults at the first access (GM_UNSET).
"""
from __future__ import annotations


from ...dsl.types import DataType, bool_, float32, int32, int64, uint64
from .. import ir
from ..errors import KernelTypeError, OperandKindError
from .builtins import bind_args, function, method, want_dtype, want_int
from .values import FieldwiseRepr, identity_value, ConstV, GmAddrV, GmTensorV, NoneV, RtV, SVal

NO_CHECK = 0xFFFFFFFF
LOW32 = 0xFFFFFFFF


@identity_value
class ListTensorDescV(SVal, FieldwiseRepr):
    """A ListTensorDesc: variables (GM argument, first word, first word of the pointer table)."""

    arg: ir.Var
    base: ir.Var
    table: ir.Var
    arg_name: str = ""

    def describe(self) -> str:
        return "ListTensorDesc"


@identity_value
class TensorDescV(SVal, FieldwiseRepr):
    """A TensorDesc of ``dtype``: variables filled by ListTensorDesc.get_desc."""

    dtype: DataType
    arg: ir.Var
    index: ir.Var
    dim: ir.Var
    shape: ir.Var        # word index of its first shape word in the argument
    data: ir.Var         # byte offset of its data in the argument
    shape_addr: ir.Var
    arg_name: str = ""

    def describe(self) -> str:
        return f"TensorDesc[{self.dtype.name}]"


def _i64(v: int) -> ir.Const:
    return ir.Const(v, int64)


def _bin(op: str, a, b) -> ir.Bin:
    return ir.Bin(op, a, b, int64)


def _vars(an, loc, prefix: str, *specs) -> list:
    """Fresh variables of a mutable object, set to their initial values here."""
    n = an.new_label(prefix)
    out = []
    for name, dtype, init in specs:
        var = ir.Var(f"{n}.{name}", dtype)
        an.emit(ir.Assign(var, ir.Const(init, dtype), loc))
        out.append(var)
    return out


def _both(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    return ir.Bin("and", a, b, bool_)


def _word(an, arg: ir.Expr, index: ir.Expr, loc) -> ir.Expr:
    """uint64 word ``index`` of GM argument ``arg`` (a scalar read), as int64."""
    res = ir.Var("list_word", uint64)
    ref = ir.GlobalRef(uint64, arg, _i64(0), _i64(-1))
    an.emit(ir.Intrinsic("get_value", (ref, index), (res,), loc, (("dtype", uint64),)))
    return ir.Cast(ir.Load(res), int64)


def _check(an, cond: ir.Expr, msg: str, loc) -> None:
    an.emit(ir.Intrinsic("kernel_assert", (cond,), (), loc, (("msg", msg),)))


def _walk(an, lv: ListTensorDescV, stop, loc) -> tuple[ir.Var, ir.Var]:
    """Descriptors from word 1 up to the pointer table (or ``stop`` of them): (word, count)."""
    off, cnt = ir.Var("list_off", int64), ir.Var("list_count", int64)
    an.emit(ir.Assign(off, _bin("add", ir.Load(lv.base), _i64(1)), loc))
    an.emit(ir.Assign(cnt, _i64(0), loc))
    cond = ir.Cmp("lt", ir.Load(off), ir.Load(lv.table))
    if stop is not None:
        cond = _both(cond, ir.Cmp("lt", ir.Load(cnt), stop))
    with an.capture() as body:
        dim = _bin("and", _word(an, ir.Load(lv.arg), ir.Load(off), loc), _i64(LOW32))
        an.emit(ir.Assign(off, _bin("add", ir.Load(off), _bin("add", dim, _i64(1))), loc))
        an.emit(ir.Assign(cnt, _bin("add", ir.Load(cnt), _i64(1)), loc))
    an.emit(ir.While((), cond, tuple(body), loc))
    return off, cnt


def _init(an, lv: ListTensorDescV, data, length, shape_size, loc) -> None:
    if not isinstance(data, GmAddrV):
        raise OperandKindError(f"ListTensorDesc data must be a GlobalAddress, got "
                               f"{data.describe()}", loc)
    length = want_int(length, "ListTensorDesc length", loc, int64)
    shape_size = want_int(shape_size, "ListTensorDesc shape_size", loc, int64)
    nbytes = _bin("mul", data.offset, _i64(data.dtype.sizeof()))
    _check(an, ir.Cmp("eq", _bin("mod", nbytes, _i64(8)), _i64(0)),
           "ListTensorDesc: the data address must be 8-byte aligned (the list is uint64 words)",
           loc)
    an.emit(ir.Assign(lv.arg, data.arg, loc))
    an.emit(ir.Assign(lv.base, _bin("floordiv", nbytes, _i64(8)), loc))
    p = ir.Var("list_p", int64)
    an.emit(ir.Assign(p, _word(an, data.arg, ir.Load(lv.base), loc), loc))
    _check(an, _both(ir.Cmp("ge", ir.Load(p), _i64(8)),
                     ir.Cmp("eq", _bin("mod", ir.Load(p), _i64(8)), _i64(0))),
           "ListTensorDesc: word 0 (the byte offset of the data-pointer table) must be a "
           "multiple of 8, at least 8", loc)
    an.emit(ir.Assign(lv.table, _bin("add", ir.Load(lv.base),
                                     _bin("floordiv", ir.Load(p), _i64(8))), loc))
    lv.arg_name = data.arg_name
    given = ir.Cmp("ne", length, _i64(NO_CHECK))
    with an.capture() as body:
        _check(an, ir.Cmp("le", ir.Load(p), length), "ListTensorDesc: the data-pointer table "
               "starts past length", loc)
    an.emit(ir.If(given, tuple(body), (), loc))
    with an.capture() as body:
        _, cnt = _walk(an, lv, None, loc)
        _check(an, ir.Cmp("eq", ir.Load(cnt), shape_size), "ListTensorDesc: the list does not "
               "hold shape_size tensors", loc)
    an.emit(ir.If(ir.Cmp("ne", shape_size, _i64(NO_CHECK)), tuple(body), (), loc))


_INIT = ("data", "length", "shape_size")


def _defaults():
    return {"length": ConstV(NO_CHECK, int64), "shape_size": ConstV(NO_CHECK, int64)}


@function("ListTensorDesc")
def _list_tensor_desc(an, args, kwargs, loc):
    arg, base, table = _vars(an, loc, "ltd", ("arg", int32, -1), ("base", int64, 0),
                             ("table", int64, 0))
    lv = ListTensorDescV(arg, base, table)
    if args or kwargs:
        b = bind_args("asc.ListTensorDesc()", _INIT, args, kwargs, loc, _defaults())
        _init(an, lv, b["data"], b["length"], b["shape_size"], loc)
    return lv


@method(ListTensorDescV, "init")
def _ltd_init(an, lv, name, args, kwargs, loc):
    b = bind_args("ListTensorDesc.init()", _INIT, args, kwargs, loc, _defaults())
    _init(an, lv, b["data"], b["length"], b["shape_size"], loc)
    return NoneV()


@method(ListTensorDescV, "get_size")
def _ltd_size(an, lv, name, args, kwargs, loc):
    bind_args("ListTensorDesc.get_size()", (), args, kwargs, loc)
    _, cnt = _walk(an, lv, None, loc)
    return an.temp(RtV(ir.Load(cnt)), "list_size", loc)


def _index(an, lv, v, what: str, loc) -> ir.Expr:
    index = want_int(v, what, loc, int64)
    _check(an, ir.Cmp("ge", index, _i64(0)), f"{what} is negative", loc)
    return index


def _pointer(an, lv, index, loc) -> ir.Expr:
    _, cnt = _walk(an, lv, _bin("add", index, _i64(1)), loc)
    _check(an, ir.Cmp("lt", index, ir.Load(cnt)), "ListTensorDesc: the index is past the "
           "last tensor of the list", loc)
    return _word(an, ir.Load(lv.arg), _bin("add", ir.Load(lv.table), index), loc)


def _address(an, dtype: DataType, arg, data_bytes, arg_name: str, loc) -> GmAddrV:
    _check(an, ir.Cmp("eq", _bin("mod", data_bytes, _i64(dtype.sizeof())), _i64(0)),
           f"ListTensorDesc: a tensor's data offset is not a multiple of sizeof({dtype.name})",
           loc)
    return GmAddrV(dtype, arg, _bin("floordiv", data_bytes, _i64(dtype.sizeof())), arg_name)


@method(ListTensorDescV, "get_data_ptr")
def _ltd_data_ptr(an, lv, name, args, kwargs, loc):
    b = bind_args("ListTensorDesc.get_data_ptr()", ("index", "dtype"), args, kwargs, loc)
    dtype = want_dtype(b["dtype"], "dtype", loc)
    index = _index(an, lv, b["index"], "ListTensorDesc.get_data_ptr index", loc)
    ptr = ir.Var("list_ptr", int64)
    an.emit(ir.Assign(ptr, _pointer(an, lv, index, loc), loc))
    return an.temp(_address(an, dtype, ir.Load(lv.arg), ir.Load(ptr), lv.arg_name, loc),
                   "list_data_ptr", loc)


@method(ListTensorDescV, "get_desc")
def _ltd_get_desc(an, lv, name, args, kwargs, loc):
    b = bind_args("ListTensorDesc.get_desc()", ("desc", "index"), args, kwargs, loc)
    desc = b["desc"]
    if not isinstance(desc, TensorDescV):
        raise KernelTypeError(f"ListTensorDesc.get_desc needs an asc.TensorDesc(), got "
                              f"{desc.describe()}", loc)
    index = _index(an, lv, b["index"], "ListTensorDesc.get_desc index", loc)
    off, cnt = _walk(an, lv, index, loc)
    _check(an, _both(ir.Cmp("eq", ir.Load(cnt), index),
                     ir.Cmp("lt", ir.Load(off), ir.Load(lv.table))),
           "ListTensorDesc: the index is past the last tensor of the list", loc)
    an.emit(ir.Assign(desc.dim, _bin("and", _word(an, ir.Load(lv.arg), ir.Load(off), loc),
                                     _i64(LOW32)), loc))
    an.emit(ir.Assign(desc.shape, _bin("add", ir.Load(off), _i64(1)), loc))
    an.emit(ir.Assign(desc.data, _word(an, ir.Load(lv.arg),
                                       _bin("add", ir.Load(lv.table), index), loc), loc))
    an.emit(ir.Assign(desc.index, index, loc))
    an.emit(ir.Assign(desc.arg, ir.Load(lv.arg), loc))
    desc.arg_name = lv.arg_name
    return NoneV()


# ----------------------------------------------------------------------------- TensorDesc
@function("TensorDesc")
def _tensor_desc(an, args, kwargs, loc):
    b = bind_args("asc.TensorDesc()", ("dtype",), args, kwargs, loc,
                  {"dtype": None})
    dtype = float32 if b["dtype"] is None else want_dtype(b["dtype"], "dtype", loc)
    v = _vars(an, loc, "td", ("arg", int32, -1), ("index", int64, 0), ("dim", int64, 0),
              ("shape", int64, 0), ("data", int64, 0), ("shape_addr", int64, 0))
    return TensorDescV(dtype, *v)


@method(TensorDescV, "set_shape_addr")
def _td_shape_addr(an, td, name, args, kwargs, loc):
    b = bind_args("TensorDesc.set_shape_addr()", ("shape_ptr",), args, kwargs, loc)
    an.emit(ir.Assign(td.shape_addr, want_int(b["shape_ptr"], "shape_ptr", loc, int64), loc))
    return NoneV()


@method(TensorDescV, "get_dim")
def _td_dim(an, td, name, args, kwargs, loc):
    bind_args("TensorDesc.get_dim()", (), args, kwargs, loc)
    return an.temp(RtV(ir.Load(td.dim)), "desc_dim", loc)


@method(TensorDescV, "get_index")
def _td_index(an, td, name, args, kwargs, loc):
    bind_args("TensorDesc.get_index()", (), args, kwargs, loc)
    return an.temp(RtV(ir.Load(td.index)), "desc_index", loc)


@method(TensorDescV, "get_shape")
def _td_shape(an, td, name, args, kwargs, loc):
    b = bind_args("TensorDesc.get_shape()", ("offset",), args, kwargs, loc)
    off = want_int(b["offset"], "TensorDesc.get_shape offset", loc, int64)
    _check(an, _both(ir.Cmp("ge", off, _i64(0)), ir.Cmp("lt", off, ir.Load(td.dim))),
           "TensorDesc.get_shape: the offset is not below get_dim()", loc)
    return RtV(_word(an, ir.Load(td.arg), _bin("add", ir.Load(td.shape), off), loc))


@method(TensorDescV, "get_data_ptr")
def _td_data_ptr(an, td, name, args, kwargs, loc):
    bind_args("TensorDesc.get_data_ptr()", (), args, kwargs, loc)
    return an.temp(_address(an, td.dtype, ir.Load(td.arg), ir.Load(td.data), td.arg_name,
                            loc), "desc_data_ptr", loc)


@method(TensorDescV, "get_data_obj")
def _td_data_obj(an, td, name, args, kwargs, loc):
    bind_args("TensorDesc.get_data_obj()", (), args, kwargs, loc)
    a = _address(an, td.dtype, ir.Load(td.arg), ir.Load(td.data), td.arg_name, loc)
    return an.temp(GmTensorV(td.dtype, a.arg, a.offset, _i64(-1), td.arg_name), "desc_data",
                   loc)
