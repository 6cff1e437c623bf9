"""The runtime library's float32 GEMM (``asc_sgemm``): host BLAS and the fallback loop."""
import ctypes

import numpy as np
import pytest

from ascendc_py.compiler.codegen import runtime_lib
from ascendc_py.simulator import abi, blas

_PROTO = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                          ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64,
                          ctypes.c_float, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                          ctypes.c_int64)


def _sgemm(use_blas: bool, a, b, c, beta, ta, tb):
    runtime_lib.ensure_loaded()
    fn = _PROTO(runtime_lib.symbol_address("asc_sgemm"))
    ctx = np.zeros(abi.HEADER_SLOTS, np.int64)
    ctx[abi.BLAS_SGEMM] = blas.sgemm_address() if use_blas else 0
    m, n = c.shape
    k = a.shape[0] if ta else a.shape[1]
    fn(ctx.ctypes.data, m, n, k, a.ctypes.data, a.shape[1], b.ctypes.data, b.shape[1],
       beta, c.ctypes.data, n, int(ta), int(tb))


@pytest.mark.parametrize("use_blas", [True, False])
@pytest.mark.parametrize("ta,tb", [(0, 0), (1, 0), (0, 1), (1, 1)])
@pytest.mark.parametrize("beta", [0.0, 1.0])
def test_sgemm_matches_numpy(use_blas, ta, tb, beta):
    if use_blas and not blas.sgemm_address():
        pytest.skip("no host BLAS in this numpy build")
    rng = np.random.default_rng(3)
    m, n, k = 17, 33, 29
    a = rng.standard_normal((k, m) if ta else (m, k)).astype(np.float32)
    b = rng.standard_normal((n, k) if tb else (k, n)).astype(np.float32)
    c = rng.standard_normal((m, n)).astype(np.float32)
    want = (a.T if ta else a).astype(np.float64) @ (b.T if tb else b) + beta * c
    _sgemm(use_blas, a, b, c, beta, ta, tb)
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-4)


def test_numpy_ships_a_blas():
    # numpy's wheels bundle OpenBLAS; the cube's products rely on it for speed
    assert blas.sgemm_address() != 0
