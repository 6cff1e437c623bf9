"""The host BLAS the cube unit's products run on: numpy's bundled OpenBLAS ``sgemm``.

A float16/bfloat16 product is exact in float32 (11- and 8-bit significands), so the cube's
``float16 x float16 -> float32`` multiply-accumulate is a float32 GEMM of the widened operands;
only the order in which the K products are summed may differ from the hardware's adder tree
(the result differs from any other float32 summation order by float32 rounding only). Native
code calls the function whose address ``sgemm_address()`` returns (stored in ctx slot
``abi.BLAS_SGEMM`` at launch); when no BLAS is found the runtime library's own loop is used.

Signature (CBLAS, 64-bit integers): ``void sgemm(int order, int trans_a, int trans_b, i64 m,
i64 n, i64 k, float alpha, const float *a, i64 lda, const float *b, i64 ldb, float beta,
float *c, i64 ldc)``.
"""
from __future__ import annotations

import ctypes
import functools
import os

ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112

#: exported names of cblas_sgemm with 64-bit integers in the OpenBLAS builds numpy ships
_SYMBOLS = ("scipy_cblas_sgemm64_", "cblas_sgemm64_", "cblas_sgemm_64")
DISABLE_ENV = "ASCENDC_PY_NO_BLAS"


def _candidate_libraries() -> list[str]:
    import numpy
    root = os.path.dirname(os.path.dirname(numpy.__file__))
    found = []
    for folder in (os.path.join(root, "numpy.libs"), os.path.join(root, "numpy", ".libs"),
                   os.path.join(os.path.dirname(numpy.__file__), ".dylibs")):
        try:     # (what glob's "*openblas*" matches; importing glob costs a launch 0.2 ms)
            names = os.listdir(folder)
        except OSError:
            continue
        found += sorted(os.path.join(folder, n) for n in names
                        if "openblas" in n and not n.startswith("."))
    return found


_THREADS_LOCAL = ("openblas_set_num_threads_local",)


@functools.lru_cache(maxsize=1)
def threads_local_address() -> int:
    """Address of OpenBLAS's ``int openblas_set_num_threads_local(int)`` (0: not available).

    ``asc_sgemm`` sets the calling thread's BLAS threads to 1 around each product and restores
    them: the simulated cores already run on one host thread each, and letting every one of
    them also start BLAS threads oversubscribes the CPUs (5× slower on a 2-CPU machine)."""
    if not sgemm_address():
        return 0
    for lib in _keep:
        for name in _THREADS_LOCAL:
            func = getattr(lib, name, None)
            if func is not None:
                return ctypes.cast(func, ctypes.c_void_p).value or 0
    return 0


@functools.lru_cache(maxsize=1)
def sgemm_address() -> int:
    """Address of a 64-bit-integer CBLAS ``sgemm`` in this process, or 0 (none found, or
    ``ASCENDC_PY_NO_BLAS=1``)."""
    if os.environ.get(DISABLE_ENV, "").strip() not in ("", "0"):
        return 0
    for path in _candidate_libraries():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in _SYMBOLS:
            func = getattr(lib, name, None)
            if func is not None:
                _keep.append(lib)
                return ctypes.cast(func, ctypes.c_void_p).value or 0
    return 0


_keep: list = []   # loaded libraries stay loaded for the process


_CORENAME_SYMBOLS = ("scipy_openblas_get_corename64_", "openblas_get_corename64_",
                     "openblas_get_corename")


@functools.lru_cache(maxsize=1)
def host_blas_core() -> str:
    """The CPU kernel family the host BLAS chose (OpenBLAS's core name, e.g. ``Haswell`` or
    ``Zen``), or ``"none"`` without a host BLAS. Cube products sum their K terms in this
    kernel's order, so their float32 rounding (never their exact products) can differ between
    host CPUs of different families."""
    if not sgemm_address():
        return "none"
    for lib in _keep:
        for name in _CORENAME_SYMBOLS:
            func = getattr(lib, name, None)
            if func is not None:
                func.restype = ctypes.c_char_p
                return (func() or b"unknown").decode(errors="replace").strip()
    return "unknown"
