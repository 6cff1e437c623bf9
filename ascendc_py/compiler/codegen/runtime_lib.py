"""The native runtime library: one vectorised loop per (vector op, dtype), built once.

Kernels do not carry their own copies of the element loops: codegen declares
``asc_vec_<op>_<dtype>`` and calls it, and this module provides the definitions. The library is
generated from the op registry with llvmlite, optimised at O3, cached on disk as object code
(keyed by the compiler version and host CPU) and loaded once per process; its symbols are
registered with ``llvm.add_symbol`` so every kernel's object code links against it. This keeps
per-kernel compile time small (the kernel module holds only control flow and calls).
"""
from __future__ import annotations

from llvmlite import ir as L

from ...dsl.types import DataType
from ..ops import REGISTRY, Family
from .types import I1, I64, PTR, ElemBuilder, convert, memory_type, prefer_vector_width

from .runtime_loader import ensure_loaded, register_with_llvm, symbol_address  # noqa: F401

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
    from .rtfuncs import deferred_op_name, masked_op_name, op_name
    for spec in REGISTRY.values():
        if spec.elem is not None:
            pairs = [(d, None) for d in spec.dtypes] + list(spec.mixed)
            for dtype, src_dtype in pairs:
                yield function_name(spec.name, dtype, src_dtype)
                yield function_name(spec.name, dtype, src_dtype) + "_na"
                yield op_name(spec, dtype, src_dtype)
                yield masked_op_name(spec, dtype, src_dtype)
            for dtype in spec.dtypes:
                yield deferred_op_name(spec, dtype)
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
            define_vector_op(module, spec, dtype, with_loop=False)
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


__all__ = ["declare_op", "declare_rt", "ensure_loaded", "function_name", "library_definer",
           "operand_counts", "register_with_llvm", "symbol_address", "I1"]
