"""Sema of batch matmul (``asc.adv.Matmul``): ``iterate_batch``, ``iterate_n_batch``,
``get_batch_tensor_c``, ``set_batch_num``, ``set_workspace``, ``set_sparse_index``.

Every batch is one ``matmul_iterate_all`` of the batch's whole matrix (the tails if set, else
the single-core shape cut to the original one), so the timing model prices the cube
instructions each batch issues. Where batch ``j`` of an operand lives depends on its
``MatmulType`` layout (Ascend C's documented layouts; the tiling's ``{a,b,c}_layout_info_*``
give the axes):

- NONE / NORMAL: matrix ``j`` starts ``matrix_stride`` elements after matrix ``j - 1``
  (0: a whole matrix of the original shape); row stride from the original shape.
- BSNGD: the array is [B, S, N, G, D]; a batch is one S x D slab, batches counted over
  (B, N, G) in that order: batch j = (b, n, g) starts at b*S*N*G*D + (n*G + g)*D, rows N*G*D
  elements apart.
- SBNGD: [S, B, N, G, D]: batch j starts at j*D, rows B*N*G*D apart.
- BNGS1S2: [B, N, G, S1, S2]: each batch's S1 x S2 matrix is contiguous (starts at j*S1*S2,
  rows S2 apart).

A batch's S x D slab is the operand as stored (A: M x K, K x M when transposed; B: K x N,
N x K when transposed; C: M x N with S1 = M, S2 = N), which is how Ascend C's BSNGD example
(B transposed, S = N, D = K) reads; the ``matrix_stride_*`` arguments apply to NONE/NORMAL
operands only (a layout fixes its batches' places): our choices, see the README.
"""
from __future__ import annotations

from ...adv import LayoutMode
from ...dsl.types import Memory, TPosition, bool_, int32, int64, uint8
from .. import ir
from ..errors import (DtypeError, KernelTypeError, OperandKindError, SourceLoc,
                      UnsupportedConstructError)
from . import scalars as S
from .adv import (MatmulV, _assert, _atomic, _default, _emit, _flag, _gm_operand, _next_tile,
                  _ready, _set, _shape, _tile)
from .builtins import bind_args, method, want_int
from .values import ConstV, GmAddrV, GmTensorV, LocalTensorV, NoneV, RtV, SVal

LAYOUTS = (LayoutMode.BSNGD, LayoutMode.SBNGD, LayoutMode.BNGS1S2)
#: the tiling fields of each operand's B, S, N, G, D axes (C: B, S1, N, G, S2)
_AXES = {w: tuple(f"{w}_layout_info_{x}" for x in "bsngd") for w in "ab"}
_AXES["c"] = ("c_layout_info_b", "c_layout_info_s1", "c_layout_info_n", "c_layout_info_g",
              "c_layout_info_s2")


def _mul(x, y):
    return ir.Bin("mul", x, y, int64)


def _add(x, y):
    return ir.Bin("add", x, y, int64)


def _div(x, y):
    return ir.Bin("floordiv", x, y, int64)


def _tmp(an, expr: ir.Expr, label: str, loc: SourceLoc) -> ir.Expr:
    return S.to_expr(an.temp(RtV(expr), label, loc), int64)


def _layout_place(an, mm: MatmulV, which: str, last: ir.Expr, what: str, loc: SourceLoc):
    """For an operand with a BSNGD/SBNGD/BNGS1S2 layout: (place(j) -> element offset of batch
    j, row stride); checks at run time that the axes are set and batch ``last`` exists.
    None for NONE/NORMAL."""
    layout = getattr(mm, which).layout
    if layout not in LAYOUTS:
        return None
    B, Sx, N, G, D = (_tmp(an, _tile(mm, f), f"{which}_lay", loc) for f in _AXES[which])
    ok = ir.Const(True, bool_)
    for v in (B, Sx, N, G, D):
        ok = ir.Bin("and", ok, ir.Cmp("ge", v, ir.Const(1, int64)), bool_)
    _assert(an, ok, f"{what}: {which.upper()}'s {layout.name} layout needs the tiling's "
                    f"{which}_layout_info_* axes >= 1 (host: set_{which}_layout)", loc)
    count = _mul(_mul(B, N), G)
    _assert(an, ir.Cmp("lt", last, count), f"{what}: batch past the end of "
                                           f"{which.upper()}'s {layout.name} layout "
                                           f"(B * N * G batches)", loc)
    ng = _mul(N, G)
    if layout == LayoutMode.BSNGD:
        return (lambda j: _add(_mul(_mul(_div(j, ng), _mul(Sx, ng)), D),
                               _mul(ir.Bin("mod", j, ng, int64), D))), _mul(ng, D)
    if layout == LayoutMode.SBNGD:
        return (lambda j: _mul(j, D)), _mul(_mul(B, ng), D)
    return (lambda j: _mul(j, _mul(Sx, D))), D


def _batches(an, mm: MatmulV, what: str, loops: ir.Expr, batch_a: ir.Expr, batch_b: ir.Expr,
             b: dict, c, loc: SourceLoc) -> None:
    """``loops`` rounds of max(batch_a, batch_b) products C[i] = A[i // (batch / batch_a)] @
    B[i // (batch / batch_b)], round l taking the next batch_a / batch_b batches of A / B.
    ``c``: a GlobalTensor (C's layout places the results) or None (the workspace: matrix after
    matrix, each M x N with row stride N)."""
    org_m = _default(mm.load("org_m"), _tile(mm, "m"))
    org_n = _default(mm.load("org_n"), _tile(mm, "n"))
    org_ka = _default(mm.load("org_ka"), _tile(mm, "k_a"))
    org_kb = _default(mm.load("org_kb"), _tile(mm, "k_b"))

    def stride(key, dflt):
        v = want_int(b[key], f"Matmul.{what} {key}", loc, int64)
        return ir.Select(ir.Cmp("le", v, ir.Const(0, int64)), dflt, v, int64)

    sa = _tmp(an, stride("matrix_stride_a", _mul(org_m, org_ka)), "batch_sa", loc)
    sb = _tmp(an, stride("matrix_stride_b", _mul(org_kb, org_n)), "batch_sb", loc)
    sc = _tmp(an, stride("matrix_stride_c", _mul(org_m, org_n)), "batch_sc", loc)
    ba, bb = _tmp(an, batch_a, "batch_a", loc), _tmp(an, batch_b, "batch_b", loc)
    nl = _tmp(an, loops, "batch_loops", loc)
    big = ir.Select(ir.Cmp("lt", ba, bb), bb, ba, int64)
    small = ir.Select(ir.Cmp("lt", ba, bb), ba, bb, int64)
    total = _tmp(an, big, "batch_n", loc)
    one, zero = ir.Const(1, int64), ir.Const(0, int64)
    divisible = ir.Cmp("eq", ir.Bin("mod", total, ir.Select(ir.Cmp("lt", small, one), one, small,
                                                            int64), int64), zero)
    _assert(an, ir.Bin("and", ir.Bin("and", ir.Cmp("ge", small, one), divisible, bool_),
                       ir.Cmp("ge", nl, zero), bool_),
            f"Matmul.{what}: batch_a and batch_b must be >= 1 and the larger a multiple of the "
            f"smaller", loc)
    ra = _tmp(an, _div(total, ir.Select(ir.Cmp("lt", ba, one), one, ba, int64)), "batch_ra", loc)
    rb = _tmp(an, _div(total, ir.Select(ir.Cmp("lt", bb, one), one, bb, int64)), "batch_rb", loc)
    a0, b0 = _tmp(an, mm.load("a_off"), "batch_a0", loc), _tmp(an, mm.load("b_off"), "batch_b0",
                                                               loc)
    # each batch is a whole matrix: the tails if set, else the single-core shape cut to the
    # original one (the tiling rounds single_core_m/n up)
    saved = {}
    for key, single, org in (("tail_m", "single_core_m", org_m), ("tail_n", "single_core_n", org_n),
                             ("tail_k", "single_core_k", org_ka)):
        saved[key] = _tmp(an, mm.load(key), f"batch_{key}", loc)
        sc_ = _tile(mm, single)
        _set(an, mm, key, _default(saved[key], ir.Select(ir.Cmp("lt", org, sc_), org, sc_, int64)),
             loc)
    m, n, _ = _shape(mm)
    m, n = _tmp(an, m, "batch_m", loc), _tmp(an, n, "batch_n_cols", loc)
    last = (lambda per: ir.Bin("sub", _mul(nl, per), one, int64))
    place = {w: _layout_place(an, mm, w, last(per), f"Matmul.{what}", loc)
             for w, per in (("a", ba), ("b", bb), ("c", total))
             if w != "c" or c is not None}
    over = {}
    if any(p is not None for p in place.values()):
        over.update(org_m=m, org_n=n)     # each batch is its own whole matrix
    if place["a"] is not None:
        over["lda"] = place["a"][1]
    if place["b"] is not None:
        over["ldb"] = place["b"][1]
    if c is None:                       # the workspace: contiguous M x N matrices
        ws = workspace_tensor(an, mm, zero, zero, loc)
        c_arg, c_base, c_size = S.to_expr(RtV(ws.arg), int64), ws.offset, ws.size
        over["ldc"] = n
        _set(an, mm, "nb_mn", _mul(m, n), loc)
        _set(an, mm, "nb_first", c_base, loc)
        _set(an, mm, "nb_end", _mul(_mul(nl, total), _mul(m, n)), loc)
        _set(an, mm, "nb_pos", zero, loc)
    else:
        c_arg, c_base, c_size = S.to_expr(RtV(c.arg), int64), c.offset, c.size
        if place["c"] is not None:
            over["ldc"] = place["c"][1]
    lvar = ir.Var(f"batch{an.new_label('bl')}", int64)
    ivar = ir.Var(f"batch{an.new_label('bi')}", int64)
    lo, i = ir.Load(lvar), ir.Load(ivar)
    with an.capture() as body:
        for key, base, rep, step, per in (("a_off", a0, ra, sa, ba), ("b_off", b0, rb, sb, bb)):
            j = _add(_mul(lo, per), _div(i, rep))
            p = place[key[0]]
            _set(an, mm, key, _add(base, p[0](j) if p else _mul(j, step)), loc)
        jc = _add(_mul(lo, total), i)
        if c is None:
            c_off = _add(c_base, _mul(jc, _mul(m, n)))
        else:
            c_off = _add(c_base, place["c"][0](jc) if place["c"] else _mul(jc, sc))
        _emit(an, mm, "matmul_iterate_all", 0, Memory.GM, c_arg, c_off, c_size, zero, zero, loc,
              over)
    inner = ir.ForRange(ivar, zero, total, one, tuple(body), loc)
    an.emit(ir.ForRange(lvar, zero, nl, one, (inner,), loc))
    _set(an, mm, "a_off", a0, loc)
    _set(an, mm, "b_off", b0, loc)
    for key, value in saved.items():
        _set(an, mm, key, value, loc)


# ----------------------------------------------------------------------------- the workspace
@method(MatmulV, "set_workspace")
def _set_workspace(an, mm: MatmulV, name, args, kwargs, loc):
    """The GM buffer of iterate_n_batch's results and of ``get_tensor_c()``'s returned tiles."""
    b = bind_args("Matmul.set_workspace()", ("addr", "size"), args, kwargs, loc,
                  {"size": NoneV()})
    addr = b["addr"]
    if not isinstance(addr, (GmTensorV, GmAddrV)) or addr.dtype is None:
        raise OperandKindError(f"Matmul.set_workspace: addr must be a GlobalTensor (after "
                               f"set_global_buffer) or a GM address, got {addr.describe()}", loc)
    if not isinstance(b["size"], NoneV):
        want_int(b["size"], "Matmul.set_workspace size", loc, int64)
    _set(an, mm, "ws_arg", S.to_expr(RtV(addr.arg), int64), loc)
    _set(an, mm, "ws_off", _mul(addr.offset, ir.Const(addr.dtype.sizeof(), int64)), loc)
    return NoneV()


def workspace_tensor(an, mm: MatmulV, first: ir.Expr, size: ir.Expr, loc: SourceLoc) -> GmTensorV:
    """A GlobalTensor of C's dtype over ``size`` elements from element ``first`` of the
    workspace (checked at run time: set, and aligned to C's element)."""
    es = ir.Const(mm.c.dtype.sizeof(), int64)
    _assert(an, ir.Bin("and", ir.Cmp("ge", mm.load("ws_arg"), ir.Const(0, int64)),
                       ir.Cmp("eq", ir.Bin("mod", mm.load("ws_off"), es, int64),
                              ir.Const(0, int64)), bool_),
            "Matmul: no workspace (call mm.set_workspace(gm) first) or one not aligned to C's "
            "element size", loc)
    arg = _tmp(an, mm.load("ws_arg"), "ws_arg", loc)
    off = _tmp(an, _add(_div(mm.load("ws_off"), es), first), "ws_first", loc)
    return GmTensorV(mm.c.dtype, ir.Cast(arg, int32), off, size, arg_name="workspace")


def get_tensor_c_ws(an, mm: MatmulV, args, kwargs, loc):
    """``t = mm.get_tensor_c(en_atomic, en_sequential_write, sync)``: the next pending tile
    written to the workspace (tile i at element i * base_m * base_n of it, row stride base_n),
    returned as a GlobalTensor of C's dtype over that tile."""
    b = bind_args("Matmul.get_tensor_c()", ("en_atomic", "en_sequential_write", "sync"), args,
                  kwargs, loc, {"en_atomic": ConstV(0, int32),
                                "en_sequential_write": ConstV(False, bool_),
                                "sync": ConstV(False, bool_)})
    _atomic(b["en_atomic"], loc)
    _flag(b["en_sequential_write"], "en_sequential_write", loc)
    tile = _next_tile(an, mm, loc)
    if tile is None:
        return workspace_tensor(an, mm, ir.Const(0, int64), ir.Const(0, int64), loc)
    area = ir.Bin("mul", _tile(mm, "base_m"), _tile(mm, "base_n"), int64)
    first = ir.Bin("mul", tile, area, int64)
    ws = workspace_tensor(an, mm, first, area, loc)
    _emit(an, mm, "matmul_get_tensor_c", 1, Memory.GM, S.to_expr(RtV(ws.arg), int64),
          ws.offset, ws.size, tile, ir.Const(1, int64), loc)
    return ws


# ----------------------------------------------------------------------------- batch calls
@method(MatmulV, "set_batch_num")
def _set_batch_num(an, mm: MatmulV, name, args, kwargs, loc):
    b = bind_args("Matmul.set_batch_num()", ("batch_a", "batch_b"), args, kwargs, loc)
    for key in ("batch_a", "batch_b"):
        _set(an, mm, key, want_int(b[key], f"Matmul.set_batch_num {key}", loc, int64), loc)
    return NoneV()


@method(MatmulV, "set_sparse_index")
def _set_sparse_index(an, mm: MatmulV, name, args, kwargs, loc):
    """Ascend C's SetSparseIndex (the index matrix of a 2:4 sparse B, pure-cube MDL Matmul):
    checked and recorded; a later computing call of this Matmul is a compile error (the
    sparse product is not supported)."""
    b = bind_args("Matmul.set_sparse_index()", ("index_global",), args, kwargs, loc)
    t = b["index_global"]
    if not isinstance(t, GmTensorV) or t.dtype is None:
        raise OperandKindError(f"Matmul.set_sparse_index needs a uint8 GlobalTensor, got "
                               f"{t.describe()}", loc)
    if t.dtype != uint8:
        raise DtypeError(f"Matmul.set_sparse_index: the index matrix is uint8, got "
                         f"{t.dtype.name}", loc)
    mm.hooks["sparse_index"] = t
    mm.sparse = True
    return NoneV()


_BATCH_ARGS = ("tensor", "batch_a", "batch_b", "en_sequential_write", "matrix_stride_a",
               "matrix_stride_b", "matrix_stride_c", "en_partial_sum", "en_atomic", "sync",
               "wait_iterate_batch")
_BATCH_CUBE_ARGS = ("tensor", "en_partial_sum", "en_atomic", "en_sequential_write",
                    "matrix_stride_a", "matrix_stride_b", "matrix_stride_c")
_STRIDES = {"matrix_stride_a": ConstV(0, int32), "matrix_stride_b": ConstV(0, int32),
            "matrix_stride_c": ConstV(0, int32)}


def _is_bool(v: SVal) -> bool:
    return isinstance(v, ConstV) and isinstance(v.value, bool)


@method(MatmulV, "iterate_batch")
def _iterate_batch(an, mm: MatmulV, name, args, kwargs, loc):
    """C[i] = A[i // (batch / batch_a)] @ B[i // (batch / batch_b)] (+ bias) for i < batch =
    max(batch_a, batch_b), each batch placed by its operand's layout (module docstring). The
    cube-only form (tensor, en_partial_sum, en_atomic, ...) takes the batch counts from
    set_batch_num, else from the tiling's a/b_layout_info_b."""
    cube_only = (len(args) > 1 and _is_bool(args[1])) or ("en_partial_sum" in kwargs and
                                                          "batch_a" not in kwargs)
    if cube_only:
        b = bind_args("Matmul.iterate_batch()", _BATCH_CUBE_ARGS, args, kwargs, loc, _STRIDES)
        batch_a = _default(mm.load("batch_a"), _tile(mm, "a_layout_info_b"))
        batch_b = _default(mm.load("batch_b"), _tile(mm, "b_layout_info_b"))
    else:
        b = bind_args("Matmul.iterate_batch()", _BATCH_ARGS, args, kwargs, loc,
                      dict(_STRIDES, en_partial_sum=NoneV(), en_atomic=NoneV(),
                           sync=ConstV(True, bool_), wait_iterate_batch=NoneV()))
        batch_a = want_int(b["batch_a"], "Matmul.iterate_batch batch_a", loc, int64)
        batch_b = want_int(b["batch_b"], "Matmul.iterate_batch batch_b", loc, int64)
    _ready(mm, "iterate_batch", loc)
    if not isinstance(b["en_atomic"], NoneV):
        _atomic(b["en_atomic"], loc)
    ps = b["en_partial_sum"]
    if not isinstance(ps, NoneV) and not (isinstance(ps, ConstV) and not ps.value):
        raise UnsupportedConstructError("Matmul.iterate_batch: en_partial_sum is not supported "
                                        "by the simulator (C is overwritten)", loc)
    seq = b["en_sequential_write"]
    if not isinstance(seq, ConstV) or seq.value:
        raise UnsupportedConstructError("Matmul.iterate_batch writes C to GM here: "
                                        "en_sequential_write must be False (a UB C is not "
                                        "supported by the simulator's batch matmul)", loc)
    if mm.c.position != TPosition.GM:
        raise KernelTypeError(f"Matmul.iterate_batch writes C to GM, but this Matmul's c type "
                              f"is at {mm.c.position.name}", loc)
    c = _gm_operand(b["tensor"], "Matmul.iterate_batch tensor", mm.c.dtype, loc)
    _batches(an, mm, "iterate_batch", ir.Const(1, int64), batch_a, batch_b, b, c, loc)
    return NoneV()


@method(MatmulV, "iterate_n_batch")
def _iterate_n_batch(an, mm: MatmulV, name, args, kwargs, loc):
    """Ascend C's IterateNBatch: ``batch_loop`` iterate_batch rounds, round l on the next
    batch_a batches of A and batch_b of B, their C matrices into the workspace
    (``set_workspace``) one after another, each M x N with row stride N (our choice); read
    them there or with ``get_batch_tensor_c``, one round per call."""
    b = bind_args("Matmul.iterate_n_batch()", ("batch_loop", "batch_a", "batch_b",
                                                "en_sequential_write", "matrix_stride_a",
                                                "matrix_stride_b", "matrix_stride_c", "sync",
                                                "wait_iterate_batch"), args, kwargs, loc,
                  dict(_STRIDES, sync=ConstV(True, bool_),
                       wait_iterate_batch=ConstV(False, bool_)))
    loops = want_int(b["batch_loop"], "Matmul.iterate_n_batch batch_loop", loc, int64)
    batch_a = want_int(b["batch_a"], "Matmul.iterate_n_batch batch_a", loc, int64)
    batch_b = want_int(b["batch_b"], "Matmul.iterate_n_batch batch_b", loc, int64)
    for key in ("en_sequential_write", "sync", "wait_iterate_batch"):
        S.truth(b[key], loc)            # checked; the results are always in the workspace
    _ready(mm, "iterate_n_batch", loc)
    _batches(an, mm, "iterate_n_batch", loops, batch_a, batch_b, b, None, loc)
    return NoneV()


@method(MatmulV, "get_batch_tensor_c")
def _get_batch_tensor_c(an, mm: MatmulV, name, args, kwargs, loc):
    """The next round of the last iterate_n_batch: max(batch_a, batch_b) C matrices (M x N
    each, one after another). ``get_batch_tensor_c(batch_a, batch_b, ...)`` returns them as a
    GlobalTensor of the workspace; ``get_batch_tensor_c(ub, batch_a, batch_b, ...)`` copies
    them into a UB LocalTensor (a data_copy: the bytes must be a multiple of 32)."""
    local = bool(args) and isinstance(args[0], LocalTensorV) or "tensor" in kwargs
    names = ("batch_a", "batch_b", "en_sequential_write", "sync")
    b = bind_args("Matmul.get_batch_tensor_c()", (("tensor",) if local else ()) + names, args,
                  kwargs, loc, {"en_sequential_write": ConstV(False, bool_),
                                "sync": ConstV(True, bool_)})
    ba = want_int(b["batch_a"], "Matmul.get_batch_tensor_c batch_a", loc, int64)
    bb = want_int(b["batch_b"], "Matmul.get_batch_tensor_c batch_b", loc, int64)
    for key in ("en_sequential_write", "sync"):
        S.truth(b[key], loc)
    if local:
        t = b["tensor"]
        if not isinstance(t, LocalTensorV) or t.memory != Memory.UB:
            raise KernelTypeError(f"Matmul.get_batch_tensor_c: the tensor must be a UB "
                                  f"LocalTensor, got {t.describe()}", loc)
        if t.dtype != mm.c.dtype:
            raise DtypeError(f"Matmul.get_batch_tensor_c tensor is {t.dtype.name} but the "
                             f"Matmul's c type is {mm.c.dtype.name}", loc)
    count = _tmp(an, _mul(ir.Select(ir.Cmp("lt", ba, bb), bb, ba, int64), mm.load("nb_mn")),
                 "nb_count", loc)
    pos = _tmp(an, mm.load("nb_pos"), "nb_pos", loc)
    _assert(an, ir.Bin("and", ir.Cmp("le", _add(pos, count), mm.load("nb_end")),
                       ir.Cmp("gt", count, ir.Const(0, int64)), bool_),
            "Matmul.get_batch_tensor_c: no round of an iterate_n_batch left to fetch", loc)
    _set(an, mm, "nb_pos", _add(pos, count), loc)
    first = _add(mm.load("nb_first"), pos)
    view = GmTensorV(mm.c.dtype, ir.Cast(mm.load("ws_arg"), int32),
                     _tmp(an, first, "nb_first", loc), count, arg_name="workspace")
    if not local:
        return view
    from .movement import data_copy
    _assert(an, ir.Cmp("eq", ir.Bin("mod", _mul(count, ir.Const(mm.c.dtype.sizeof(), int64)),
                                    ir.Const(32, int64), int64), ir.Const(0, int64)),
            "Matmul.get_batch_tensor_c into UB: the round's bytes must be a multiple of 32 "
            "(Ascend C pads single_core_n with an ND_ALIGN C, which is not supported)", loc)
    return data_copy(an, [b["tensor"], view, RtV(count)], {}, loc)


@method(MatmulV, "wait_iterate_batch")
def _wait_batch(an, mm: MatmulV, name, args, kwargs, loc):
    return NoneV()   # synchronous here
