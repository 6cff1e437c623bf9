"""The C library's float32 math functions over numpy arrays, for bit-exact comparisons.

``apply(fn_address, x)`` runs ``y[i] = fn(x[i])`` in a small native loop (llvmlite) that calls
the function at that address (bound to a symbol of its own), so nothing between the library
and the comparison can round differently (numpy's ``np.exp`` is not the C library's).
``libm_function("expf")`` is the address ``dlsym`` gives, the default version of the symbol;
``glibc_fma_expf()`` says whether the host's libm is glibc's FMA build (the one whose expf and
logf the vector ``exp`` and ``ln`` ops reproduce).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import platform

import numpy as np
from llvmlite import binding as llvm
from llvmlite import ir as L


@functools.lru_cache(maxsize=None)
def _libm():
    return ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")


def libm_function(name: str) -> int:
    """Address of the C library's ``float name(float)`` (the symbol's default version)."""
    return ctypes.cast(getattr(_libm(), name), ctypes.c_void_p).value


def glibc_version() -> tuple[int, int] | None:
    try:
        text = os.confstr("CS_GNU_LIBC_VERSION") or ""
    except (ValueError, OSError):
        return None
    if not text.startswith("glibc "):
        return None
    major, minor = text.split()[1].split(".")[:2]
    return int(major), int(minor)


def glibc_fma_expf() -> bool:
    """Whether this host's ``expf`` is glibc (>= 2.28) on x86_64 with FMA and AVX2, the build
    its ifunc picks there."""
    version = glibc_version()
    if version is None or version < (2, 28) or platform.machine() not in ("x86_64", "AMD64"):
        return False
    features = llvm.get_host_cpu_features()
    return bool(features.get("fma")) and bool(features.get("avx2"))


@functools.lru_cache(maxsize=None)
def _loop(fn_address: int):
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    f32, i64, ptr = L.FloatType(), L.IntType(64), L.PointerType()
    symbol = f"libm_ref_fn_{fn_address:x}"
    llvm.add_symbol(symbol, fn_address)
    m = L.Module(name="libm_ref")
    m.triple = llvm.get_process_triple()
    f = L.Function(m, L.FunctionType(f32, [f32]), name=symbol)
    fn = L.Function(m, L.FunctionType(L.VoidType(), [ptr, ptr, i64]), name="apply")
    x, y, n = fn.args
    b = L.IRBuilder(fn.append_basic_block("entry"))
    entry = b.block
    loop, done = fn.append_basic_block("loop"), fn.append_basic_block("done")
    b.cbranch(b.icmp_signed(">", n, L.Constant(i64, 0)), loop, done)
    b.position_at_end(loop)
    i = b.phi(i64)
    i.add_incoming(L.Constant(i64, 0), entry)
    v = b.load(b.gep(x, [i], source_etype=f32), typ=f32)
    r = b.call(f, [v])
    b.store(r, b.gep(y, [i], source_etype=f32))
    nxt = b.add(i, L.Constant(i64, 1))
    i.add_incoming(nxt, loop)
    b.cbranch(b.icmp_signed("<", nxt, n), loop, done)
    b.position_at_end(done)
    b.ret_void()
    target = llvm.Target.from_default_triple().create_target_machine()
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(str(m)), target)
    engine.finalize_object()
    addr = engine.get_function_address("apply")
    proto = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)
    return engine, proto(addr)


def apply(fn_address: int, x: np.ndarray) -> np.ndarray:
    """``fn(x[i])`` for every element of the float32 array ``x`` (a new float32 array)."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    y = np.empty_like(x)
    _, call = _loop(fn_address)
    call(x.ctypes.data, y.ctypes.data, x.size)
    return y
