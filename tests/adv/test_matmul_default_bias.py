"""A Matmul created without a bias MatmulType takes C's (Ascend C's template default
BIAS_TYPE = C_TYPE): set_bias then wants a bias of C's dtype, and C is the same bits as with the
bias type given explicitly. A C dtype that is no bias of the inputs is an error at the line."""
from __future__ import annotations

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler.errors import DtypeError
from ascendc_py.compiler.ops.matmul import matmul_reference

from kernels_matmul import make_tiling

GM16 = asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.float16)
GM32 = asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.float32)


@asc.kernel(kernel_type=asc.KernelType.AIC_ONLY)
def biased(a: asc.GlobalAddress, b: asc.GlobalAddress, bias: asc.GlobalAddress,
           c: asc.GlobalAddress, tiling: asc.adv.TCubeTiling, explicit: bool):
    ag = asc.GlobalTensor()
    ag.set_global_buffer(a)
    bg = asc.GlobalTensor()
    bg.set_global_buffer(b)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(bias)
    cg = asc.GlobalTensor()
    cg.set_global_buffer(c)
    if explicit:
        mm = asc.adv.Matmul(a=GM16, b=GM16, c=GM32, bias=GM32)
        asc.adv.register_matmul(asc.TPipe(), c, mm, tiling)
        mm.set_tensor_a(ag)
        mm.set_tensor_b(bg)
        mm.set_bias(zg)
        mm.iterate_all(cg)
    else:
        mm2 = asc.adv.Matmul(a=GM16, b=GM16, c=GM32)
        asc.adv.register_matmul(asc.TPipe(), c, mm2, tiling)
        mm2.set_tensor_a(ag)
        mm2.set_tensor_b(bg)
        mm2.set_bias(zg)
        mm2.iterate_all(cg)


def test_bias_type_defaults_to_c():
    m, n, k = 32, 48, 40
    rng = np.random.default_rng(11)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    bias = rng.standard_normal(n).astype(np.float32)
    tiling = make_tiling(m, n, k, dim=1, bias=True)
    c0, c1 = np.zeros((m, n), np.float32), np.zeros((m, n), np.float32)
    biased[1](a, b, bias, c0, tiling, False)
    biased[1](a, b, bias, c1, tiling, True)
    np.testing.assert_array_equal(c0.view(np.uint32), c1.view(np.uint32))
    np.testing.assert_allclose(c0, matmul_reference(a, b, bias), rtol=1e-4, atol=1e-4)


def test_c_dtype_that_is_no_bias_is_an_error_at_the_line():
    @asc.kernel(kernel_type=asc.KernelType.AIC_ONLY)
    def int8_bias(z: asc.GlobalAddress):
        zg = asc.GlobalTensor()
        zg.set_global_buffer(z)
        mm = asc.adv.Matmul(a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.int8),
                            b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.int8),
                            c=GM16)
        mm.set_bias(zg)

    with pytest.raises(DtypeError, match="bias is C's float16") as info:
        int8_bias[1](np.zeros(16, np.float16))
    assert "mm.set_bias(zg)" in str(info.value)


@asc.kernel
def ub_bias(a: asc.GlobalAddress, b: asc.GlobalAddress, bias: asc.GlobalAddress,
            c: asc.GlobalAddress, tiling: asc.adv.TCubeTiling, local: bool):
    """set_bias from a UB LocalTensor (Ascend C's SetBias(LocalTensor)) or from GM."""
    ag = asc.GlobalTensor()
    ag.set_global_buffer(a)
    bg = asc.GlobalTensor()
    bg.set_global_buffer(b)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(bias)
    cg = asc.GlobalTensor()
    cg.set_global_buffer(c)
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 1)
    pipe.init_buffer(que=q, num=1, len=tiling.n * 4)
    mm = asc.adv.Matmul(a=GM16, b=GM16, c=GM32, bias=GM32)
    asc.adv.register_matmul(pipe, c, mm, tiling)
    if asc.get_block_idx() == 0:
        mm.set_tensor_a(ag)
        mm.set_tensor_b(bg)
        if local:
            t = q.alloc_tensor(asc.float32)
            asc.data_copy(t, zg, count=tiling.n)
            q.enque(t)
            t = q.deque(asc.float32)
            mm.set_bias(t)
            mm.iterate_all(cg)
            q.free_tensor(t)
        else:
            mm.set_bias(zg)
            mm.iterate_all(cg)
        mm.end()


def test_bias_from_ub_is_the_gm_bias():
    m, n, k = 16, 64, 24
    rng = np.random.default_rng(12)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    bias = rng.standard_normal(n).astype(np.float32)
    tiling = make_tiling(m, n, k, dim=1, bias=True)
    c0, c1 = np.zeros((m, n), np.float32), np.zeros((m, n), np.float32)
    ub_bias[1](a, b, bias, c0, tiling, True)
    ub_bias[1](a, b, bias, c1, tiling, False)
    np.testing.assert_array_equal(c0.view(np.uint32), c1.view(np.uint32))
    np.testing.assert_allclose(c0, matmul_reference(a, b, bias), rtol=1e-4, atol=1e-4)


def test_short_ub_bias_stops_at_the_line():
    @asc.kernel
    def short_bias(a: asc.GlobalAddress, c: asc.GlobalAddress, tiling: asc.adv.TCubeTiling):
        ag = asc.GlobalTensor()
        ag.set_global_buffer(a)
        cg = asc.GlobalTensor()
        cg.set_global_buffer(c)
        pipe = asc.TPipe()
        q = asc.TQue(asc.TPosition.VECIN, 1)
        pipe.init_buffer(que=q, num=1, len=64)
        mm = asc.adv.Matmul(a=GM16, b=GM16, c=GM32, bias=GM32)
        asc.adv.register_matmul(pipe, c, mm, tiling)
        if asc.get_block_idx() == 0:
            mm.set_tensor_a(ag)
            mm.set_tensor_b(ag)
            t = q.alloc_tensor(asc.float32)
            mm.set_bias(t)
            mm.iterate_all(cg)

    m = n = k = 32
    with pytest.raises(asc.KernelError) as info:
        short_bias[1](np.zeros(m * k, np.float16), np.zeros(m * n, np.float32),
                      make_tiling(m, n, k, dim=1, bias=True))
    assert "mm.iterate_all(cg)" in str(info.value)
