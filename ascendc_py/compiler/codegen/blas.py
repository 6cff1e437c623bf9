"""``asc_sgemm``: the runtime library's float32 GEMM, used by the cube unit's products.

``void asc_sgemm(ptr ctx, i64 m, i64 n, i64 k, ptr a, i64 lda, ptr b, i64 ldb, float beta,
ptr c, i64 ldc, i64 trans_a, i64 trans_b)`` computes, row-major, ``C = op(A) @ op(B) + beta *
C`` with ``op(X) = X`` or ``X.T`` (``trans_*`` non-zero). It calls the host BLAS whose address
the runtime stored in ``ctx[abi.BLAS_SGEMM]`` (``simulator/blas.py``) with the calling
thread's BLAS threads set to 1 (``ctx[abi.BLAS_THREADS]``), and falls back to a plain loop when
that slot is 0. Call it from library functions with ``call_sgemm``.
"""
from __future__ import annotations

from llvmlite import ir as L

from ...simulator import abi
from ...simulator.blas import NO_TRANS, ROW_MAJOR, TRANS
from . import runtime_lib
from .core import counted_loop
from .types import F32, I32, I64, PTR

NAME = "asc_sgemm"
SIGNATURE = L.FunctionType(L.VoidType(), [PTR, I64, I64, I64, PTR, I64, PTR, I64, F32, PTR, I64,
                                          I64, I64])
_THREADS = L.FunctionType(I32, [I32])
_CBLAS = L.FunctionType(L.VoidType(), [I32, I32, I32, I64, I64, I64, F32, PTR, I64, PTR, I64,
                                       F32, PTR, I64])


def declare(module: L.Module) -> L.Function:
    """``asc_sgemm`` in ``module`` (declared, or the library's definition)."""
    func = module.globals.get(NAME)
    return func if func is not None else L.Function(module, SIGNATURE, NAME)


def call_sgemm(b: L.IRBuilder, module: L.Module, ctx, m, n, k, a, lda, b_ptr, ldb, beta, c, ldc,
               trans_a=0, trans_b=0) -> None:
    """Emit a call of ``asc_sgemm`` (integers may be Python ints; ``beta`` a float)."""
    def i64(v):
        return L.Constant(I64, v) if isinstance(v, int) else v
    beta = L.Constant(F32, beta) if isinstance(beta, (int, float)) else beta
    b.call(declare(module), [ctx, i64(m), i64(n), i64(k), a, i64(lda), b_ptr, i64(ldb), beta, c,
                             i64(ldc), i64(trans_a), i64(trans_b)])


@runtime_lib.library_definer(shard="lib.sgemm", provides=(NAME,))
def _define(module: L.Module) -> list[str]:
    func = declare(module)
    if not func.is_declaration:
        return [NAME]
    func.attributes.add("nounwind")
    ctx, m, n, k, a, lda, bm, ldb, beta, c, ldc, ta, tb = func.args
    entry = func.append_basic_block("entry")
    b = L.IRBuilder(entry)
    previous = b.alloca(I32)   # stack slots in the entry block, never inside a loop
    acc = b.alloca(F32)
    slot = b.gep(ctx, [L.Constant(I64, abi.BLAS_SGEMM)], source_etype=I64)
    addr = b.load(slot, typ=I64)
    zero = L.Constant(I64, 0)
    with b.if_else(b.icmp_signed("!=", addr, zero)) as (have_blas, no_blas):
        with have_blas:
            fn = b.inttoptr(addr, _CBLAS.as_pointer())
            threads_fn = b.load(b.gep(ctx, [L.Constant(I64, abi.BLAS_THREADS)], source_etype=I64),
                                typ=I64)
            has_threads_fn = b.icmp_signed("!=", threads_fn, zero)
            set_threads = b.inttoptr(threads_fn, _THREADS.as_pointer())
            b.store(L.Constant(I32, 0), previous)
            with b.if_then(has_threads_fn):
                b.store(b.call(set_threads, [L.Constant(I32, 1)]), previous)

            def flag(t):
                return b.select(b.icmp_signed("!=", t, zero), L.Constant(I32, TRANS),
                                L.Constant(I32, NO_TRANS))
            b.call(fn, [L.Constant(I32, ROW_MAJOR), flag(ta), flag(tb), m, n, k,
                        L.Constant(F32, 1.0), a, lda, bm, ldb, beta, c, ldc])
            with b.if_then(has_threads_fn):
                b.call(set_threads, [b.load(previous, typ=I32)])
        with no_blas:
            _fallback(b, func, acc, m, n, k, a, lda, bm, ldb, beta, c, ldc, ta, tb)
    b.ret_void()
    return [NAME]


def _fallback(b, func, acc, m, n, k, a, lda, bm, ldb, beta, c, ldc, ta, tb) -> None:
    """c[i, j] = sum_p A(i, p) * B(p, j) + beta * c[i, j], three plain loops."""
    zero = L.Constant(I64, 0)

    def elem(ptr, ld, trans, r, col):
        idx = b.select(b.icmp_signed("!=", trans, zero), b.add(b.mul(col, ld), r),
                       b.add(b.mul(r, ld), col))
        return b.load(b.gep(ptr, [idx], source_etype=F32), typ=F32)

    def row(i):
        def column(j):
            b.store(L.Constant(F32, 0.0), acc)

            def step(p):
                prod = b.fmul(elem(a, lda, ta, i, p), elem(bm, ldb, tb, p, j))
                b.store(b.fadd(b.load(acc, typ=F32), prod), acc)
            counted_loop(b, func, k, step)
            out = b.gep(c, [b.add(b.mul(i, ldc), j)], source_etype=F32)
            old = b.load(out, typ=F32)
            keep = b.fmul(beta, old)
            res = b.select(b.fcmp_ordered("==", beta, L.Constant(F32, 0.0)),
                           b.load(acc, typ=F32), b.fadd(b.load(acc, typ=F32), keep))
            b.store(res, out)
        counted_loop(b, func, n, column)
    counted_loop(b, func, m, row)
