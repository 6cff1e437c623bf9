"""Semantic analysis of the A2 sort family and its records ``MrgSortSrcList`` and
``MrgSort4Info`` (semantics: ``ops/sort.py``). Compile-time values are checked here; run-time
ones by an assertion at the call's line (the kernel stops there)."""
from __future__ import annotations

from ...dsl.types import DataType, bool_, int64, uint32
from .. import ir
from ..errors import ArgumentError, ConstantRangeError, KernelTypeError, KernelValueError
from ..ops.sort import (MAX_QUEUE_LEN, MRG4_PARAMS, NOT_ON_A2, SORT_TYPES, STRUCT_BYTES,
                        VALID_BITS)
from . import scalars as S
from .builtins import bind_args, function, want_int, want_local
from .values import ConstV, DTypeV, LocalTensorV, NoneV, RtV, StructV, TupleV

_SRC = ("src1", "src2", "src3", "src4")


def _assert(an, cond: ir.Expr, msg: str, loc) -> None:
    an.emit(ir.Intrinsic("kernel_assert", (cond,), (), loc, (("msg", msg),)))


def _i(v: int) -> ir.Const:
    return ir.Const(v, int64)


def _bin(op, a, b, dtype=int64):
    return ir.Bin(op, a, b, dtype)


def _check_dtype(dtype: DataType, what: str, loc) -> None:
    if dtype not in SORT_TYPES:
        raise KernelTypeError(f"{what} does not support {dtype.name} on Ascend 910B (Atlas "
                              f"A2/A3); supported: half, float", loc)


@function("MrgSortSrcList")
def _src_list(an, args, kwargs, loc):
    """MrgSortSrcList(dtype, src1, src2, src3=None, src4=None) (pyasc's order); the dtype may
    be left out."""
    args = list(args)
    if args and isinstance(args[0], DTypeV):
        args = args[1:]
    kwargs = dict(kwargs)
    kwargs.pop("dtype", None)
    b = bind_args("asc.MrgSortSrcList()", _SRC, args, kwargs, loc,
                  {"src3": NoneV(), "src4": NoneV()})
    fields, dtype = [], None
    for n in _SRC:
        v = b[n]
        if isinstance(v, NoneV):
            fields.append((n, v))
            continue
        t = want_local(v, f"asc.MrgSortSrcList {n}", loc)
        if dtype is not None and t.dtype != dtype:
            raise KernelTypeError(f"asc.MrgSortSrcList: {n} is {t.dtype.name} but src1 is "
                                  f"{dtype.name}; the queues have one dtype", loc)
        dtype = t.dtype
        fields.append((n, t))
    return StructV("MrgSortSrcList", tuple(fields))


def _int_list(v, what, loc, count=4):
    if not isinstance(v, TupleV) or len(v.items) != count:
        raise KernelTypeError(f"{what} must be a list of {count} integers, got {v.describe()}",
                              loc)
    return [want_int(x, what, loc, int64) for x in v.items]


@function("MrgSort4Info")
def _info(an, args, kwargs, loc):
    """MrgSort4Info(element_lengths, if_exhausted_suspension=False, valid_bit=15,
    repeat_times=1)."""
    names = tuple(n for n, _ in MRG4_PARAMS)
    defaults = {"if_exhausted_suspension": ConstV(False, bool_),
                "valid_bit": ConstV(15, int64), "repeat_times": ConstV(1, int64)}
    b = bind_args("asc.MrgSort4Info()", names, args, kwargs, loc, defaults)
    lengths = _int_list(b["element_lengths"], "MrgSort4Info.element_lengths", loc)
    return StructV("MrgSort4Info", (("element_lengths", TupleV(tuple(RtV(e) for e in lengths))),
                                    ("if_exhausted_suspension", b["if_exhausted_suspension"]),
                                    ("valid_bit", b["valid_bit"]),
                                    ("repeat_times", b["repeat_times"])))


def _const(e):
    return e.value if isinstance(e, ir.Const) else None


@function("sort32")
def _sort32(an, args, kwargs, loc):
    b = bind_args("asc.sort32()", ("dst", "src0", "src1", "repeat_time"), args, kwargs, loc)
    dst = want_local(b["dst"], "asc.sort32 dst", loc)
    src0 = want_local(b["src0"], "asc.sort32 src0", loc)
    src1 = want_local(b["src1"], "asc.sort32 src1", loc)
    _check_dtype(dst.dtype, "asc.sort32", loc)
    if src0.dtype != dst.dtype:
        raise KernelTypeError(f"asc.sort32: src0 is {src0.dtype.name} but dst is "
                              f"{dst.dtype.name}; they must have one dtype", loc)
    if src1.dtype != uint32:
        raise KernelTypeError(f"asc.sort32: src1 holds the indices and must be uint32, got "
                              f"{src1.dtype.name}", loc)
    rep = want_int(b["repeat_time"], "asc.sort32 repeat_time", loc, int64)
    if _const(rep) is not None and not 0 <= _const(rep) <= 255:
        raise ConstantRangeError(f"asc.sort32: repeat_time is {_const(rep)}; it must be in "
                                 f"0..255", loc)
    _assert(an, ir.Bin("and", ir.Cmp("ge", rep, _i(0)), ir.Cmp("le", rep, _i(255)), bool_),
            "asc.sort32: repeat_time must be in 0..255", loc)
    an.emit(ir.Intrinsic("sort32", (dst.ref(), src0.ref(), src1.ref(), rep), (), loc,
                         (("dtype", dst.dtype),)))
    return NoneV()


@function("sort")
def _sort(an, args, kwargs, loc):
    """sort(dst, concat, index, tmp, repeat_time, is_full_sort=False)."""
    b = bind_args("asc.sort()", ("dst", "concat", "index", "tmp", "repeat_time",
                                 "is_full_sort"), args, kwargs, loc,
                  {"is_full_sort": ConstV(False, bool_)})
    dst = want_local(b["dst"], "asc.sort dst", loc)
    concat = want_local(b["concat"], "asc.sort concat", loc)
    index = want_local(b["index"], "asc.sort index", loc)
    tmp = want_local(b["tmp"], "asc.sort tmp", loc)
    _check_dtype(dst.dtype, "asc.sort", loc)
    for name, t in (("concat", concat), ("tmp", tmp)):
        if t.dtype != dst.dtype:
            raise KernelTypeError(f"asc.sort: {name} is {t.dtype.name} but dst is "
                                  f"{dst.dtype.name}; they must have one dtype", loc)
    if index.dtype != uint32:
        raise KernelTypeError(f"asc.sort: index must be uint32, got {index.dtype.name}", loc)
    full = b["is_full_sort"]
    if not (isinstance(full, ConstV) and isinstance(full.value, (bool, int))):
        raise KernelTypeError("asc.sort: is_full_sort must be True or False (a compile-time "
                              "constant: Ascend C's template argument)", loc)
    rep = want_int(b["repeat_time"], "asc.sort repeat_time", loc, int64)
    if _const(rep) is not None and not 0 <= _const(rep) <= 255:
        raise ConstantRangeError(f"asc.sort: repeat_time is {_const(rep)}; it must be in "
                                 f"0..255", loc)
    _assert(an, ir.Bin("and", ir.Cmp("ge", rep, _i(0)), ir.Cmp("le", rep, _i(255)), bool_),
            "asc.sort: repeat_time must be in 0..255", loc)
    if bool(full.value):
        nbytes = _bin("mul", rep, _i(256))
        have = _bin("mul", ir.Cast(tmp.size, int64), _i(tmp.dtype.sizeof()))
        _assert(an, ir.Cmp("ge", have, nbytes), "asc.sort (full sort): tmp must hold the "
                "32 * repeat_time sorted structures (8 bytes each)", loc)
        d0 = ir.Cast(dst.addr, int64)
        apart = ir.Const(True, bool_)
        for t, size in ((concat, _bin("mul", rep, _i(32 * concat.dtype.sizeof()))),
                        (index, _bin("mul", rep, _i(128)))):
            a0 = ir.Cast(t.addr, int64)
            apart = ir.Bin("and", apart, ir.Bin("or", ir.Cmp("le", _bin("add", d0, nbytes), a0),
                                                ir.Cmp("le", _bin("add", a0, size), d0), bool_),
                           bool_)
        _assert(an, ir.Bin("or", apart, ir.Cmp("eq", rep, _i(0)), bool_),
                "asc.sort (full sort): dst overlaps concat or index", loc)
    an.emit(ir.Intrinsic("sort", (dst.ref(), concat.ref(), index.ref(), tmp.ref(), rep), (),
                         loc, (("dtype", dst.dtype), ("full", bool(full.value)))))
    return NoneV()


@function("mrg_sort")
def _mrg_sort(an, args, kwargs, loc):
    with_info = (len(args) == 3 and not kwargs) or "params" in kwargs
    if with_info:
        b = bind_args("asc.mrg_sort()", ("dst", "sort_list", "params"), args, kwargs, loc)
        p = b["params"]
        if not isinstance(p, StructV) or p.kind != "MrgSort4Info":
            raise KernelTypeError(f"asc.mrg_sort: params must be asc.MrgSort4Info(...), got "
                                  f"{p.describe()}", loc)
        counts = [x.expr for x in p.get("element_lengths").items]
        valid, rep, exh = p.get("valid_bit"), p.get("repeat_times"), \
            p.get("if_exhausted_suspension")
    else:
        names = ("dst", "sort_list", "element_count_list", "sorted_num", "valid_bit",
                 "repeat_time", "is_exhausted_suspension")
        b = bind_args("asc.mrg_sort()", names, args, kwargs, loc,
                      {"is_exhausted_suspension": ConstV(False, bool_)})
        counts = _int_list(b["element_count_list"], "asc.mrg_sort element_count_list", loc)
        if not isinstance(b["sorted_num"], TupleV):
            raise KernelTypeError("asc.mrg_sort: sorted_num must be a list of 4 integers (an "
                                  "output of Ascend C; read the counts with "
                                  "asc.get_mrg_sort_result())", loc)
        valid, rep, exh = b["valid_bit"], b["repeat_time"], b["is_exhausted_suspension"]
        if not (isinstance(exh, ConstV) and isinstance(exh.value, (bool, int))):
            raise KernelTypeError("asc.mrg_sort: is_exhausted_suspension must be True or False "
                                  "(a compile-time constant)", loc)
    return _emit_mrg(an, b["dst"], b["sort_list"], counts, valid, rep, exh, loc)


def _emit_mrg(an, dst_v, lst, counts, valid_v, rep_v, exh_v, loc):
    dst = want_local(dst_v, "asc.mrg_sort dst", loc)
    _check_dtype(dst.dtype, "asc.mrg_sort", loc)
    if not isinstance(lst, StructV) or lst.kind != "MrgSortSrcList":
        raise KernelTypeError(f"asc.mrg_sort: sort_list must be asc.MrgSortSrcList(...), got "
                              f"{lst.describe()}", loc)
    srcs = [lst.get(n) for n in _SRC]
    for s in srcs:
        if isinstance(s, LocalTensorV) and s.dtype != dst.dtype:
            raise KernelTypeError(f"asc.mrg_sort: the queues are {s.dtype.name} but dst is "
                                  f"{dst.dtype.name}; they must have one dtype", loc)
    valid = want_int(valid_v, "asc.mrg_sort valid_bit", loc, int64)
    rep = want_int(rep_v, "asc.mrg_sort repeat_time", loc, int64)
    exh = S.to_expr(S.truth(exh_v, loc), int64)
    if _const(valid) is not None:
        if _const(valid) not in VALID_BITS:
            raise KernelValueError(f"asc.mrg_sort: valid_bit is {_const(valid)}; it must be "
                                   f"0b11, 0b111 or 0b1111 (2, 3 or 4 queues)", loc)
        missing = [n for n, s in zip(_SRC[:VALID_BITS[_const(valid)]], srcs)
                   if isinstance(s, NoneV)]
        if missing:
            raise ArgumentError(f"asc.mrg_sort: valid_bit {_const(valid)} merges "
                                f"{VALID_BITS[_const(valid)]} queues but MrgSortSrcList has no "
                                f"{missing[0]}", loc)
    for k, c in enumerate(counts):
        if _const(c) is not None and not 0 <= _const(c) <= MAX_QUEUE_LEN:
            raise ConstantRangeError(f"asc.mrg_sort: the length of queue {k + 1} is "
                                     f"{_const(c)}; it must be in 0..{MAX_QUEUE_LEN}", loc)
    if _const(rep) is not None and not 1 <= _const(rep) <= 255:
        raise ConstantRangeError(f"asc.mrg_sort: repeat_time is {_const(rep)}; it must be in "
                                 f"1..255", loc)
    ok = ir.Bin("or", ir.Cmp("eq", valid, _i(3)), ir.Bin("or", ir.Cmp("eq", valid, _i(7)),
                                                        ir.Cmp("eq", valid, _i(15)), bool_),
                bool_)
    nq = _bin("add", _i(2), _bin("add", ir.Cast(ir.Cmp("ge", valid, _i(7)), int64),
                                 ir.Cast(ir.Cmp("eq", valid, _i(15)), int64)))
    for k in (2, 3):
        if isinstance(srcs[k], NoneV):
            ok = ir.Bin("and", ok, ir.Cmp("le", nq, _i(k)), bool_)
    _assert(an, ok, "asc.mrg_sort: valid_bit must be 0b11, 0b111 or 0b1111 and name only "
                    "queues MrgSortSrcList has", loc)
    in_range = ir.Const(True, bool_)
    for c in counts:
        in_range = ir.Bin("and", in_range, ir.Bin("and", ir.Cmp("ge", c, _i(0)),
                                                  ir.Cmp("le", c, _i(MAX_QUEUE_LEN)), bool_),
                          bool_)
    _assert(an, in_range, f"asc.mrg_sort: queue lengths must be in 0..{MAX_QUEUE_LEN}", loc)
    # repeat_time > 1: four queues of one length, one after the other, no suspension
    addr = [ir.Cast(s.addr, int64) if isinstance(s, LocalTensorV) else None for s in srcs]
    rep_ok = ir.Bin("and", ir.Cmp("eq", valid, _i(15)), ir.Cmp("eq", exh, _i(0)), bool_)
    for k in range(1, 4):
        if addr[k] is None:
            rep_ok = ir.Const(False, bool_)
            break
        rep_ok = ir.Bin("and", rep_ok, ir.Bin("and", ir.Cmp("eq", counts[k], counts[0]),
                                              ir.Cmp("eq", addr[k], _bin(
                                                  "add", addr[k - 1],
                                                  _bin("mul", counts[0], _i(STRUCT_BYTES)))),
                                              bool_), bool_)
    _assert(an, ir.Bin("and", ir.Bin("and", ir.Cmp("ge", rep, _i(1)),
                                     ir.Cmp("le", rep, _i(255)), bool_),
                       ir.Bin("or", ir.Cmp("eq", rep, _i(1)), rep_ok, bool_), bool_),
            "asc.mrg_sort: repeat_time must be in 1..255, and above 1 only with four valid "
            "queues of one length stored one after the other and no exhausted suspension", loc)
    # sources and destination must not overlap (per repeat; the whole span here)
    total = _i(0)
    for k, c in enumerate(counts):
        if addr[k] is not None:
            used = ir.Cast(ir.Cmp("lt", _i(k), nq), int64)
            total = _bin("add", total, _bin("mul", used, c))
    span = _bin("mul", _bin("mul", total, _i(STRUCT_BYTES)), rep)
    d0 = ir.Cast(dst.addr, int64)
    apart = ir.Const(True, bool_)
    for k, c in enumerate(counts):
        if addr[k] is None:
            continue
        sb = _bin("mul", _bin("mul", c, _i(STRUCT_BYTES)), rep) if k == 0 else \
            _bin("mul", c, _i(STRUCT_BYTES))
        sep = ir.Bin("or", ir.Bin("or", ir.Cmp("le", _bin("add", d0, span), addr[k]),
                                  ir.Cmp("le", _bin("add", addr[k], sb), d0), bool_),
                     ir.Bin("or", ir.Cmp("ge", _i(k), nq), ir.Cmp("eq", c, _i(0)), bool_),
                     bool_)
        apart = ir.Bin("and", apart, sep, bool_)
    _assert(an, apart, "asc.mrg_sort: a source queue overlaps dst; Ascend C does not allow "
                       "it", loc)
    refs = (dst.ref(),) + tuple(s.ref() if isinstance(s, LocalTensorV) else None for s in srcs)
    an.emit(ir.Intrinsic("mrg_sort", refs + tuple(counts) + (valid, rep, exh), (), loc,
                         (("dtype", dst.dtype),)))
    return NoneV()


@function("get_mrg_sort_result")
def _get_mrg_sort_result(an, args, kwargs, loc):
    """(queue 1, queue 2, queue 3, queue 4) structures the latest mrg_sort wrote (uint16)."""
    if args or kwargs:
        raise ArgumentError("asc.get_mrg_sort_result() takes no arguments", loc)
    from ...dsl.types import int32
    vs = tuple(ir.Var(f"mrg_sort_list{k + 1}", int32) for k in range(4))
    an.emit(ir.Intrinsic("get_mrg_sort_result", (), vs, loc))
    return TupleV(tuple(RtV(ir.Load(v)) for v in vs))


def _sort_len(name):
    def fn(an, args, kwargs, loc):
        param = "elem_count" if name == "get_sort_len" else "elem_offset"
        b = bind_args(f"asc.{name}()", (param,), args, kwargs, loc)
        n = want_int(b[param], f"asc.{name} {param}", loc, uint32)
        # GetSortLen<float> / GetSortOffset<float>: 8-byte structures as float elements
        return RtV(ir.Bin("mul", n, ir.Const(STRUCT_BYTES // 4, uint32), uint32))
    return fn


for _n in ("get_sort_len", "get_sort_offset"):
    function(_n)(_sort_len(_n))


def _not_on_a2(name):
    def fn(an, args, kwargs, loc):
        raise KernelTypeError(f"asc.{name} is not available on Ascend 910B (Atlas A2/A3): "
                              f"Ascend C provides it on the Atlas training series (910) and the "
                              f"Atlas inference series AI Core, which work on 8-element region "
                              f"proposals", loc,
                              hint="on A2 sort with asc.sort32 and merge with asc.mrg_sort")
    return fn


for _n in NOT_ON_A2:
    function(_n)(_not_on_a2(_n))
