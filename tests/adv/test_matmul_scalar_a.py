"""Matmul.set_tensor_a(scalar) (Ascend C's SetTensorA(aScalar)): every element of A is the
scalar rounded to A's dtype, so each row of C is scalar * (column sums of B) (+ bias): the
documented use is a reduce-sum of B along K. Checked bit-exactly against matmul_reference on an
explicit A of that value; errors at the line."""
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
def scalar_a(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
             tiling: asc.adv.TCubeTiling, value: float, mode: int, m: int, n: int, k: int):
    ag = asc.GlobalTensor()
    ag.set_global_buffer(a)
    bg = asc.GlobalTensor()
    bg.set_global_buffer(b)
    cg = asc.GlobalTensor()
    cg.set_global_buffer(c)
    mm = asc.adv.Matmul(a=GM16, b=GM16, c=GM32)
    asc.adv.register_matmul(asc.TPipe(), c, mm, tiling)
    if mode == 1:
        mm.set_tensor_a(8)
    elif mode == 0:
        mm.set_tensor_a(value)
    else:
        mm.set_tensor_a(ag)        # the same product with A in GM
    mm.set_tensor_b(bg)
    mm.set_tail(m, n, k)
    mm.iterate_all(cg)


@pytest.mark.parametrize("shape", [(1, 48, 64), (16, 32, 33), (5, 70, 17)])
@pytest.mark.parametrize("value,mode", [(1.0, 0), (0.1, 0), (-3.3, 0), (8.0, 1)])
def test_scalar_a(shape, value, mode):
    m, n, k = shape
    rng = np.random.default_rng(k)
    b = rng.standard_normal((k, n)).astype(np.float16)
    a = np.full((m, k), np.float16(value))      # rounded to A's dtype (0.1 -> 0.0999755859375)
    tiling = make_tiling(m, n, k, "float16", "float32", dim=1)
    c = np.zeros((m, n), np.float32)
    scalar_a[1](np.zeros(1, np.float16), b, c, tiling, value, mode, m, n, k)
    c_gm = np.zeros((m, n), np.float32)
    scalar_a[1](a, b, c_gm, tiling, 0.0, 2, m, n, k)
    np.testing.assert_array_equal(c.view(np.uint32), c_gm.view(np.uint32))
    np.testing.assert_allclose(c, matmul_reference(a, b), rtol=1e-4, atol=1e-4)
    assert (c == c[0]).all()                     # every row: value * the column sums of B
    if value == 1.0:
        np.testing.assert_allclose(c[0], b.astype(np.float32).sum(0), rtol=1e-5, atol=1e-5)


def test_int8_scalar_a_is_an_error_at_the_line():
    @asc.kernel(kernel_type=asc.KernelType.AIC_ONLY)
    def int8_scalar(c: asc.GlobalAddress):
        mm = asc.adv.Matmul(a=GM8, b=GM8, c=GMI32)
        mm.set_tensor_a(3)

    with pytest.raises(DtypeError, match="float16 or float32 A") as info:
        int8_scalar[1](np.zeros(4, np.int32))
    assert "mm.set_tensor_a(3)" in str(info.value)
