"""The native runtime library: one vectorised loop per (vector op, dtype), the runtime and
timing functions, and what library definers add; generated in pieces, built lazily in shards.

Kernels do not carry their own copies of the element loops: codegen declares
``asc_vec_<op>_<dtype>`` (and the ``asc_rt_*``/``asc_tm_*`` functions) and calls it, and this
module provides the definitions. They are generated from the op registry with llvmlite, one
piece at a time (below); a piece's shard is optimised at O3 and cached on disk as object code
and a shared object (keyed by the compiler version, host CPU and piece) the first time a kernel
calls it, and loaded by ``runtime_loader.py``. This keeps per-kernel compile time small (the
kernel module holds only control flow and calls) and a fresh cache's first launch short (it
builds a dozen small shards, not the whole library).
"""
from __future__ import annotations

import functools
from typing import Optional

from llvmlite import ir as L

from ...dsl.types import DataType
from ...forksafe import ForkSafeLock
from ..ops import REGISTRY, Family
from .types import I1, I64, PTR, ElemBuilder, convert, counted_loop, memory_type, \
    prefer_vector_width

from .runtime_loader import CORE, ensure_loaded, register_with_llvm, symbol_address  # noqa: F401

#: extra library builders: fn(module) -> iterable of the symbol names it defined
LIBRARY_DEFINERS: list = []
_DEFINER_PIECES: dict[str, list] = {}   # piece -> its definers
_PROVIDES: dict[str, str] = {}          # symbol -> piece, for definers' symbols


def library_definer(fn=None, *, shard: str = CORE, provides: tuple = ()):
    """Register ``fn(module) -> [symbol names]``: it adds functions to the runtime library.

    Used bare (``@library_definer``) its functions go into the small core shard that every
    launching process loads (``ensure_loaded``), so ``symbol_address`` finds them cheaply.
    ``shard="lib.<name>"`` makes them a shard of their own, built the first time a kernel calls
    one of them (for large definers; the definer is run then to learn what it defines, unless
    ``provides`` names its symbols)."""
    def register(definer):
        piece = shard
        LIBRARY_DEFINERS.append(definer)
        _DEFINER_PIECES.setdefault(piece, []).append(definer)
        for name in provides:
            _PROVIDES[name] = piece
        return definer
    return register(fn) if fn is not None else register


def function_name(op: str, dtype: DataType, src_dtype: DataType | None = None) -> str:
    mixed = f"_{src_dtype.name}" if src_dtype is not None and src_dtype != dtype else ""
    return f"asc_vec_{op}_{dtype.name}{mixed}"


def operand_counts(spec) -> tuple[int, int]:
    """(source tensors, scalar operands) of an element-wise op."""
    n_src = {Family.BINARY: 2, Family.UNARY: 1, Family.SCALAR: 1, Family.DUPLICATE: 0,
             Family.AXPY: 1, Family.TERNARY: 2}[spec.family]
    return n_src, 1 if spec.family in (Family.SCALAR, Family.DUPLICATE, Family.AXPY) else 0


def signature(spec, dtype: DataType, src_dtype: DataType | None = None) -> L.FunctionType:
    """``void (ptr dst, ptr src…, U scalar…, i64 n)`` for an element-wise op (U: the source
    dtype, the dst dtype except for mixed-precision axpy)."""
    n_src, n_scalar = operand_counts(spec)
    dtype = src_dtype or dtype
    return L.FunctionType(L.VoidType(), [PTR] * (1 + n_src) + [memory_type(dtype)] * n_scalar
                          + [I64])


def declare_op(module: L.Module, spec, dtype: DataType, src_dtype=None) -> L.Function:
    """The whole vector instruction (checks, loop, timing) for (op, dtype), in a kernel."""
    from .vector_ops import op_name, op_signature
    name = op_name(spec, dtype, src_dtype)
    fn = module.globals.get(name)
    if fn is None:
        fn = L.Function(module, op_signature(spec, dtype, src_dtype), name=name)
    return fn


def _define(module: L.Module, spec, dtype: DataType, noalias: bool = False,
            src_dtype: DataType | None = None) -> None:
    """The element loop of (op, dtype). ``noalias``: the variant the op wrappers call when every
    source is either exactly dst (in place) or disjoint from it, so LLVM vectorises without a
    runtime overlap check (in-place ops are the common case: add(x, x, y))."""
    name = function_name(spec.name, dtype, src_dtype) + ("_na" if noalias else "")
    fn = L.Function(module, signature(spec, dtype, src_dtype), name=name)
    fn.attributes.add("nounwind")
    prefer_vector_width(fn)
    if noalias:
        for a in fn.args:
            if a.type == PTR:
                a.add_attribute("noalias")
    args = list(fn.args)
    n_ptr = sum(1 for a in args if a.type == PTR)
    dst, srcs = args[0], args[1:n_ptr]
    scalars, n = args[n_ptr:-1], args[-1]
    mt = memory_type(dtype)
    b = L.IRBuilder(fn.append_basic_block("entry"))
    eb = ElemBuilder(b, module, dtype)
    st = memory_type(src_dtype or dtype)
    widen = (lambda v: convert(b, v, src_dtype, dtype)) if src_dtype not in (None, dtype) \
        else (lambda v: v)

    def element(i):
        vals = ([b.load(b.gep(dst, [i], source_etype=mt), typ=mt)]
                if spec.family in (Family.AXPY, Family.TERNARY) else [])
        vals += [widen(b.load(b.gep(p, [i], source_etype=st), typ=st)) for p in srcs]
        vals += [widen(v) for v in scalars]
        b.store(spec.elem(eb, *vals), b.gep(dst, [i], source_etype=mt))
    counted_loop(b, n, element)
    b.ret_void()


def declare_masked_op(module: L.Module, spec, dtype: DataType, src_dtype=None) -> L.Function:
    """The masked form (mask, repeat_times, repeat strides) of (op, dtype), in a kernel."""
    from .vector_ops import masked_op_name, masked_op_signature
    name = masked_op_name(spec, dtype, src_dtype)
    fn = module.globals.get(name)
    if fn is None:
        fn = L.Function(module, masked_op_signature(dtype, src_dtype), name=name)
    return fn


def declare_rt(module: L.Module, name: str) -> L.Function:
    """A runtime function of ``rtfuncs.py`` (``asc_rt_<name>``), declared in a kernel module."""
    from .rtfuncs import rt_signature
    full = f"asc_rt_{name}"
    fn = module.globals.get(full)
    if fn is None:
        fn = L.Function(module, rt_signature(name), name=full)
    return fn


# ----------------------------------------------------------------------------- pieces
# The library is generated in pieces, each in a module of its own: one per timing function
# ("tm.<name>"), one per runtime function ("rt.<name>"), one per vector op and dtype ("vec.<op>.
# <dtype>[.<src dtype>]": its two element loops and its instruction wrappers) and one per
# shard named by library definers ("core", "lib.<name>"). A shard (``shard_object``) is a piece
# linked with every piece it calls, transitively, then optimised and compiled as one module: the
# optimiser sees the same functions as when the library was one module, so each function's code
# is the same, and a shard needs no other shard. Copies of a callee in several shards are
# identical; a kernel calls the one of the shard that owns it (``piece_of``).
_lock = ForkSafeLock(reentrant=True)
_piece_ir: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {}
_scanned: set = set()       # definer pieces whose symbols are in _PROVIDES


def _vector_pieces():
    """(piece, spec, dtype, src_dtype) of every vector op and dtype with an element loop."""
    for spec in REGISTRY.values():
        if spec.elem is None:
            continue
        for dtype, src_dtype in [(d, None) for d in spec.dtypes] + list(spec.mixed):
            mixed = f".{src_dtype.name}" if src_dtype not in (None, dtype) else ""
            yield f"vec.{spec.name}.{dtype.name}{mixed}", spec, dtype, src_dtype


@functools.lru_cache(maxsize=1)
def _static_index() -> dict:
    """{symbol: piece} for the pieces whose symbols are known without generating them."""
    from . import intrinsics  # noqa: F401  (registers lowerings, @rt functions and definers)
    from .rtfuncs import RT_FUNCTIONS
    from .vector_ops import deferred_op_name, masked_op_name, op_name
    from .timing import TM_FUNCTIONS
    index = {f"asc_tm_{name}": f"tm.{name}" for name in TM_FUNCTIONS}
    index.update({f"asc_rt_{name}": f"rt.{name}" for name in RT_FUNCTIONS})
    for piece, spec, dtype, src_dtype in _vector_pieces():
        loop = function_name(spec.name, dtype, src_dtype)
        for name in (loop, loop + "_na", op_name(spec, dtype, src_dtype),
                     masked_op_name(spec, dtype, src_dtype)):
            index[name] = piece
        if src_dtype is None:
            index[deferred_op_name(spec, dtype)] = piece
    return index


def piece_of(symbol: str) -> Optional[str]:
    """The piece that defines ``symbol`` (None: no piece does). A definer that did not say
    what it provides is run (its IR generated, kept for its shard) to find out."""
    index = _static_index()
    piece = index.get(symbol) or _PROVIDES.get(symbol)
    if piece is not None:
        return piece
    with _lock:
        for piece in list(_DEFINER_PIECES):
            if piece not in _scanned:
                _scanned.add(piece)
                for name in piece_ir(piece)[1]:
                    _PROVIDES.setdefault(name, piece)
                if symbol in _PROVIDES:
                    return _PROVIDES[symbol]
    return None


def piece_ir(piece: str) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """(LLVM IR text, symbols defined, runtime symbols called but not defined) of a piece,
    generated once per process."""
    with _lock:
        if piece not in _piece_ir:
            module = _generate(piece)
            defined, needed = [], []
            for g in module.globals.values():
                if isinstance(g, L.Function) and g.is_declaration:
                    if g.name.startswith("asc_"):
                        needed.append(g.name)
                elif g.linkage in ("internal", "private"):
                    continue                # not a symbol (vecmath's tables)
                elif not isinstance(g, L.GlobalVariable) or g.initializer is not None:
                    defined.append(g.name)
            _piece_ir[piece] = (module_text(module), tuple(defined), tuple(needed))
        return _piece_ir[piece]


def module_text(module: L.Module) -> str:
    from .irtext import module_text as text
    return text(module)


def _generate(piece: str) -> L.Module:
    from . import intrinsics, sanitize, timing  # noqa: F401  (register lowerings, @rt functions)
    from .rtfuncs import define_all
    module = L.Module(name=f"asc_runtime.{piece}")
    kind, _, name = piece.partition(".")
    if kind == "tm":
        timing.define_all(module, [name])
    elif kind == "rt":
        define_all(module, [name])
    elif kind == "vec":
        _define_vector_piece(module, piece)
    elif piece in _DEFINER_PIECES:
        for definer in _DEFINER_PIECES[piece]:
            definer(module)
    else:
        raise KeyError(f"no runtime library piece {piece!r}")
    return module


def _define_vector_piece(module: L.Module, piece: str) -> None:
    from .vector_ops import define_masked_vector_op, define_vector_op
    for name, spec, dtype, src_dtype in _vector_pieces():
        if name == piece:
            _define(module, spec, dtype, src_dtype=src_dtype)
            _define(module, spec, dtype, noalias=True, src_dtype=src_dtype)
            define_vector_op(module, spec, dtype, src_dtype)
            if src_dtype is None:     # without its loop: for fused runs (``fusion.py``)
                define_vector_op(module, spec, dtype, with_loop=False)
            define_masked_vector_op(module, spec, dtype, src_dtype)
            return
    raise KeyError(f"no runtime library piece {piece!r}")


def closure(piece: str) -> list[str]:
    """``piece`` and every piece it calls, transitively (``piece`` first)."""
    order, todo = [piece], [piece]
    while todo:
        for symbol in piece_ir(todo.pop())[2]:
            callee = piece_of(symbol)
            if callee is None:
                raise KeyError(f"no runtime library piece defines {symbol}")
            if callee not in order:
                order.append(callee)
                todo.append(callee)
    return order


def shard_object(piece: str) -> tuple[bytes, list[str]]:
    """Object code of the shard of ``piece`` and the symbols it owns (those of ``piece``)."""
    from .. import jit
    llvm, _ = jit._llvm()
    pieces = closure(piece)
    with _lock:
        module = llvm.parse_assembly(piece_ir(pieces[0])[0])
        for other in pieces[1:]:
            module.link_in(llvm.parse_assembly(piece_ir(other)[0]))
    _internalize_callees(llvm, module, set(piece_ir(piece)[1]))
    obj, _ = jit.emit_object(module)
    return obj, list(piece_ir(piece)[1])


def _internalize_callees(llvm, module, owned: set) -> None:
    """Give the shard's copies of the functions it calls from other pieces internal linkage:
    its callers then call them directly (not through the PLT of the shared object, which a
    shared object needs for an exported function) and the optimiser may inline them and fold
    the caller's constant arguments (the per-instruction checks and timing calls of the vector
    op wrappers). Nothing outside the shard calls those copies (a kernel calls the shard that
    owns a symbol). Global variables keep their linkage: a piece's state stays one object per
    process, whichever shard defines it first."""
    for fn in module.functions:
        if not fn.is_declaration and fn.name not in owned and \
                fn.linkage == llvm.Linkage.external:
            fn.linkage = llvm.Linkage.internal


__all__ = ["CORE", "closure", "declare_op", "declare_rt", "ensure_loaded", "function_name",
           "library_definer", "operand_counts", "piece_of", "register_with_llvm", "shard_object",
           "symbol_address", "I1"]
