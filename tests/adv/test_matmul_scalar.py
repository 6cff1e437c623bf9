"""Matmul.set_tensor_a/b(scalar) (Ascend C's SetTensorA(aScalar) / SetTensorB(bScalar)):
every element of that matrix is the scalar rounded to its dtype, so C is the other matrix's
sums along K times the scalar (the documented use: a reduce-sum along K). Checked bit-exactly
against the same product with the matrix in GM; errors at the line."""
from __future__ import annotations

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler.errors import DtypeError
from ascendc_py.compiler.ops.matmul import matmul_reference

from kernels_matmul import make_tiling

GM16 = asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.float16)
GM32 = asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.float32)
GM8 = asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.int8)
GMI32 = asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.int32)


@asc.kernel(kernel_type=asc.KernelType.AIC_ONLY)
def scalar_mm(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
              tiling: asc.adv.TCubeTiling, value: float, sa: int, sb: int, m: int, n: int,
              k: int):
    """sa / sb: 0 the matrix from GM, 1 set_tensor_x(value), 2 set_tensor_x(8)."""
    ag = asc.GlobalTensor()
    ag.set_global_buffer(a)
    bg = asc.GlobalTensor()
    bg.set_global_buffer(b)
    cg = asc.GlobalTensor()
    cg.set_global_buffer(c)
    mm = asc.adv.Matmul(a=GM16, b=GM16, c=GM32)
    asc.adv.register_matmul(asc.TPipe(), c, mm, tiling)
    if sa == 2:
        mm.set_tensor_a(8)
    elif sa == 1:
        mm.set_tensor_a(value)
    else:
        mm.set_tensor_a(ag)
    if sb == 2:
        mm.set_tensor_b(8)
    elif sb == 1:
        mm.set_tensor_b(value)
    else:
        mm.set_tensor_b(bg)
    mm.set_tail(m, n, k)
    mm.iterate_all(cg)


@pytest.mark.parametrize("shape", [(1, 48, 64), (16, 32, 33), (5, 70, 17)])
@pytest.mark.parametrize("value,mode", [(1.0, 1), (0.1, 1), (-3.3, 1), (8.0, 2)])
@pytest.mark.parametrize("side", ["a", "b"])
def test_scalar_matrix(shape, value, mode, side):
    m, n, k = shape
    rng = np.random.default_rng(k)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    if side == "a":
        a = np.full((m, k), np.float16(value))  # rounded to the dtype (0.1 -> 0.0999755859375)
    else:
        b = np.full((k, n), np.float16(value))
    tiling = make_tiling(m, n, k, "float16", "float32", dim=1)
    sa, sb = (mode, 0) if side == "a" else (0, mode)
    c = np.zeros((m, n), np.float32)
    scalar_mm[1](a if side == "b" else np.zeros(1, np.float16),
                 b if side == "a" else np.zeros(1, np.float16), c, tiling, value, sa, sb, m, n, k)
    c_gm = np.zeros((m, n), np.float32)
    scalar_mm[1](a, b, c_gm, tiling, 0.0, 0, 0, m, n, k)
    np.testing.assert_array_equal(c.view(np.uint32), c_gm.view(np.uint32))
    np.testing.assert_allclose(c, matmul_reference(a, b), rtol=1e-4, atol=1e-4)
    if side == "a":
        assert (c == c[0]).all()                # every row: value * the column sums of B
    else:
        assert (c == c[:, :1]).all()            # every column: value * the row sums of A
    if value == 1.0 and side == "a":
        np.testing.assert_allclose(c[0], b.astype(np.float32).sum(0), rtol=1e-5, atol=1e-5)


def test_both_scalar():
    m, n, k = 4, 8, 20
    c = np.zeros((m, n), np.float32)
    scalar_mm[1](np.zeros(1, np.float16), np.zeros(1, np.float16), c,
                 make_tiling(m, n, k, "float16", "float32", dim=1), 0.5, 1, 2, m, n, k)
    np.testing.assert_array_equal(c, np.full((m, n), 0.5 * 8 * k, np.float32))


def test_int8_scalar_is_an_error_at_the_line():
    @asc.kernel(kernel_type=asc.KernelType.AIC_ONLY)
    def int8_scalar(c: asc.GlobalAddress):
        mm = asc.adv.Matmul(a=GM8, b=GM8, c=GMI32)
        mm.set_tensor_b(3)

    with pytest.raises(DtypeError, match="float16 or float32 B") as info:
        int8_scalar[1](np.zeros(4, np.int32))
    assert "mm.set_tensor_b(3)" in str(info.value)
