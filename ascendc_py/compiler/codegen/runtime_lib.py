"""The native runtime library: one vectorised loop per (vector op, dtype), built once.

Kernels do not carry their own copies of the element loops: codegen declares
``asc_vec_<op>_<dtype>`` and calls it, and this module provides the definitions. The library is
generated from the op registry with llvmlite, optimised at O3, cached on disk as object code
(keyed by the compiler version and host CPU) and loaded once per process; its symbols are
registered with ``llvm.add_symbol`` so every kernel's object code links against it. This keeps
per-kernel compile time small (the kernel module holds only control flow and calls).
"""
from __future__ import annotations

import os
import threading

from llvmlite import ir as L

from ...dsl.types import DataType
from ..ops import REGISTRY, Family
from .types import I1, I64, PTR, ElemBuilder, convert, memory_type

_lock = threading.Lock()


def _new_lock_after_fork() -> None:
    """A lock another thread held when the process forked stays held in the child: replace it."""
    global _lock
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_lock_after_fork)
_loaded = False

#: extra library builders: fn(module) -> iterable of the symbol names it defined
LIBRARY_DEFINERS: list = []


def library_definer(fn):
    """Register ``fn(module) -> [symbol names]``: it adds functions to the runtime library."""
    LIBRARY_DEFINERS.append(fn)
    return fn


def function_name(op: str, dtype: DataType, src_dtype: DataType | None = None) -> str:
    mixed = f"_{src_dtype.name}" if src_dtype is not None and src_dtype != dtype else ""
    return f"asc_vec_{op}_{dtype.name}{mixed}"


def operand_counts(spec) -> tuple[int, int]:
    """(source tensors, scalar operands) of an element-wise op."""
    n_src = {Family.BINARY: 2, Family.UNARY: 1, Family.SCALAR: 1, Family.DUPLICATE: 0,
             Family.AXPY: 1}[spec.family]
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
    from .rtfuncs import op_name, op_signature
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
    if noalias:
        for a in fn.args:
            if a.type == PTR:
                a.add_attribute("noalias")
    args = list(fn.args)
    n_ptr = sum(1 for a in args if a.type == PTR)
    dst, srcs = args[0], args[1:n_ptr]
    scalars, n = args[n_ptr:-1], args[-1]
    mt = memory_type(dtype)
    entry = fn.append_basic_block("entry")
    loop = fn.append_basic_block("loop")
    done = fn.append_basic_block("done")
    b = L.IRBuilder(entry)
    b.cbranch(b.icmp_signed(">", n, L.Constant(I64, 0)), loop, done)
    b.position_at_end(loop)
    i = b.phi(I64)
    i.add_incoming(L.Constant(I64, 0), entry)
    eb = ElemBuilder(b, module, dtype)
    st = memory_type(src_dtype or dtype)
    widen = (lambda v: convert(b, v, src_dtype, dtype)) if src_dtype not in (None, dtype) \
        else (lambda v: v)
    vals = ([b.load(b.gep(dst, [i], source_etype=mt), typ=mt)] if spec.family == Family.AXPY
            else [])
    vals += [widen(b.load(b.gep(p, [i], source_etype=st), typ=st)) for p in srcs]
    vals += [widen(v) for v in scalars]
    b.store(spec.elem(eb, *vals), b.gep(dst, [i], source_etype=mt))
    nxt = b.add(i, L.Constant(I64, 1))
    i.add_incoming(nxt, loop)
    b.cbranch(b.icmp_signed("<", nxt, n), loop, done)
    b.position_at_end(done)
    b.ret_void()


def declare_masked_op(module: L.Module, spec, dtype: DataType, src_dtype=None) -> L.Function:
    """The masked form (mask, repeat_times, repeat strides) of (op, dtype), in a kernel."""
    from .rtfuncs import masked_op_name, masked_op_signature
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


def _symbols():
    from .rtfuncs import RT_FUNCTIONS
    from .rtfuncs import masked_op_name, op_name
    for spec in REGISTRY.values():
        if spec.elem is not None:
            pairs = [(d, None) for d in spec.dtypes] + list(spec.mixed)
            for dtype, src_dtype in pairs:
                yield function_name(spec.name, dtype, src_dtype)
                yield function_name(spec.name, dtype, src_dtype) + "_na"
                yield op_name(spec, dtype, src_dtype)
                yield masked_op_name(spec, dtype, src_dtype)
    for name in RT_FUNCTIONS:
        yield f"asc_rt_{name}"
    from .timing import TM_FUNCTIONS
    for name in TM_FUNCTIONS:
        yield f"asc_tm_{name}"
    yield from _extra_symbols


_extra_symbols: list[str] = []


def build_module() -> L.Module:
    from . import intrinsics, sanitize, timing  # noqa: F401  (register lowerings, @rt functions)
    from .rtfuncs import define_all, define_masked_vector_op, define_vector_op
    module = L.Module(name="asc_runtime")
    timing.define_all(module)
    define_all(module)
    for spec in REGISTRY.values():
        if spec.elem is None:
            continue
        for dtype in spec.dtypes:
            _define(module, spec, dtype)
            _define(module, spec, dtype, noalias=True)
            define_vector_op(module, spec, dtype)
            define_masked_vector_op(module, spec, dtype)
        for dtype, src_dtype in spec.mixed:
            _define(module, spec, dtype, src_dtype=src_dtype)
            _define(module, spec, dtype, noalias=True, src_dtype=src_dtype)
            define_vector_op(module, spec, dtype, src_dtype)
            define_masked_vector_op(module, spec, dtype, src_dtype)
    _extra_symbols.clear()
    for definer in LIBRARY_DEFINERS:
        _extra_symbols.extend(definer(module))
    return module


def ensure_loaded() -> None:
    """Make the library's functions available to kernels, once per process: ``dlopen`` its
    shared library (``RTLD_GLOBAL``) when the cache has one, else load its object code into
    MCJIT; build (and cache) it first if needed."""
    global _loaded
    if _loaded:
        return
    with _lock:
        if _loaded:
            return
        from .. import cachedir, jit, native
        key = f"runtime-{jit.compiler_version()}-{jit.host_target()}"
        so = jit.blob_path(key, ".so")
        entry = jit.load_blob(key)
        if entry is not None and jit.elf_is_sound(entry[0]):
            obj, symbols, meta = entry
        else:
            from . import intrinsics  # noqa: F401  (registers lowerings and library definers)
            module = build_module()
            symbols = list(_symbols())
            obj, _ = jit.emit_object(str(module))
            meta = {}
        # the shared library is loaded only if it is the one linked from this object code
        # (size and SHA-256 recorded when it was linked): a truncated or patched file in the
        # cache is linked again, never dlopen'ed
        if so is not None and (meta.get("so_size") is None or _so_mismatch(so, meta)):
            try:
                so.unlink(missing_ok=True)
                linked = native.link_shared(obj, so, libs=("m",))
            except OSError as exc:
                cachedir.problem(exc, so)
                linked = False
            meta = {"so_sha256": cachedir.file_sha256(so), "so_size": so.stat().st_size} \
                if linked else {}
            jit.store_blob(key, obj, symbols, **meta)
        lib = native.load_shared(so, global_symbols=True) if so is not None and meta else None
        if lib is not None and all(native.symbol_address(lib, n) for n in symbols[:1]):
            _LIBS.append(lib)
            _addresses.update({n: native.symbol_address(lib, n) for n in symbols})
        else:
            import llvmlite.binding as llvm
            engine = jit.load_object_engine(obj)
            _addresses.update({n: engine.get_function_address(n) for n in symbols})
            for name, address in _addresses.items():
                llvm.add_symbol(name, address)
        _loaded = True


def _so_mismatch(so, meta: dict) -> bool:
    """True when the cached shared library is not the file that was linked."""
    from .. import cachedir
    try:
        if so.stat().st_size != meta.get("so_size"):
            return True
    except OSError:
        return True
    return cachedir.file_sha256(so) != meta.get("so_sha256")


_LIBS: list = []
_addresses: dict = {}


def symbol_address(name: str) -> int:
    """The address of one of the library's symbols (functions and globals; 0: none)."""
    ensure_loaded()
    return int(_addresses.get(name) or 0)


def register_with_llvm() -> None:
    """Tell LLVM (MCJIT) where the library's symbols are, when kernels are loaded that way."""
    import llvmlite.binding as llvm
    for name, address in _addresses.items():
        llvm.add_symbol(name, address)


__all__ = ["declare_op", "declare_rt", "ensure_loaded", "function_name", "library_definer",
           "operand_counts", "I1"]
