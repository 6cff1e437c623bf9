"""A Matmul whose C type is CubeFormat.NZ writes C in the fractal layout the cube produces:
blocks of 16 columns, each (rows rounded up to 16) x 16 elements row-major, one block after
another (``ops/matmul.py``'s ``nz_layout``). iterate_all to GM and get_tensor_c tiles (GM at
their place, UB sequential), checked bit-exactly against the same Matmul with an ND C."""
from __future__ import annotations

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler.ops.matmul import matmul_reference, nz_layout

from kernels_matmul import make_tiling

GM16 = asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.float16)
C_ND = asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.float32)
C_NZ = asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.NZ, asc.float32)


@asc.kernel(kernel_type=asc.KernelType.AIC_ONLY)
def mm_all(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
           tiling: asc.adv.TCubeTiling, nz: bool, tiles: bool, m: int, n: int, k: int):
    ag = asc.GlobalTensor()
    ag.set_global_buffer(a)
    bg = asc.GlobalTensor()
    bg.set_global_buffer(b)
    cg = asc.GlobalTensor()
    cg.set_global_buffer(c)
    if nz:
        mm = asc.adv.Matmul(a=GM16, b=GM16, c=C_NZ)
        asc.adv.register_matmul(asc.TPipe(), c, mm, tiling)
        mm.set_tensor_a(ag)
        mm.set_tensor_b(bg)
        mm.set_tail(m, n, k)
        if tiles:
            with mm.iterate() as count:
                mm.get_tensor_c(cg)
        else:
            mm.iterate_all(cg)
    else:
        mm2 = asc.adv.Matmul(a=GM16, b=GM16, c=C_ND)
        asc.adv.register_matmul(asc.TPipe(), c, mm2, tiling)
        mm2.set_tensor_a(ag)
        mm2.set_tensor_b(bg)
        mm2.set_tail(m, n, k)
        mm2.iterate_all(cg)


def test_nz_layout_reference():
    c = np.arange(20 * 40, dtype=np.float32).reshape(20, 40)
    z = nz_layout(c)
    assert z.size == 3 * 32 * 16
    assert z[0] == c[0, 0] and z[16] == c[1, 0] and z[15] == c[0, 15]
    assert z[32 * 16] == c[0, 16] and z[2 * 32 * 16 + 20 * 16 + 7] == 0    # padding
    assert z[2 * 32 * 16 + 19 * 16 + 7] == c[19, 39]


@pytest.mark.parametrize("shape", [(32, 48, 64), (20, 40, 33), (128, 256, 64)])
@pytest.mark.parametrize("tiles", [False, True])
def test_nz_c(shape, tiles):
    m, n, k = shape
    rng = np.random.default_rng(m + n)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    tiling = make_tiling(m, n, k, dim=1, fixed=(32, 64, -1) if tiles else None)
    c_nd = np.zeros((m, n), np.float32)
    mm_all[1](a, b, c_nd, tiling, False, False, m, n, k)
    c_nz = np.zeros(nz_layout(c_nd).size, np.float32)
    mm_all[1](a, b, c_nz, tiling, True, tiles, m, n, k, sanitize=True)
    np.testing.assert_array_equal(c_nz.view(np.uint32), nz_layout(c_nd).view(np.uint32))
    np.testing.assert_allclose(c_nd, matmul_reference(a, b), rtol=1e-4, atol=1e-4)


def test_nz_c_too_small_names_c():
    m, n, k = 20, 40, 16
    tiling = make_tiling(m, n, k, dim=1)
    with pytest.raises(asc.GMOutOfBoundsError) as info:
        mm_all[1](np.zeros((m, k), np.float16), np.zeros((k, n), np.float16),
                  np.zeros(m * n, np.float32), tiling, True, False, m, n, k)
    assert "mm.iterate_all(cg)" in str(info.value)
