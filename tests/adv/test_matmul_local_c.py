"""Matmul.iterate_all(local_c) (Ascend C's IterateAll(ubCmatrix)): the whole single-core C into a
UB LocalTensor, row-major with row stride N, then copied out by the kernel; C is the same bits
as iterate_all into GM. Errors at the line."""
from __future__ import annotations

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler.errors import DtypeError, KernelValueError

import kernels_matmul as K

GM16 = asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.float16)


@asc.kernel
def local_c(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
            tiling: asc.adv.TCubeTiling, to_ub: bool):
    ag = asc.GlobalTensor()
    ag.set_global_buffer(a)
    bg = asc.GlobalTensor()
    bg.set_global_buffer(b)
    cg = asc.GlobalTensor()
    cg.set_global_buffer(c)
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECOUT, 1)
    size = tiling.m * tiling.n
    pipe.init_buffer(que=q, num=1, len=size * 4)
    mm = asc.adv.Matmul(a=GM16, b=GM16,
                        c=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.float32))
    asc.adv.register_matmul(pipe, c, mm, tiling)
    if asc.get_block_idx() == 0:
        mm.set_tensor_a(ag)
        mm.set_tensor_b(bg)
        if to_ub:
            t = q.alloc_tensor(asc.float32)
            mm.iterate_all(t)
            q.enque(t)
            t = q.deque(asc.float32)
            asc.data_copy(cg, t, count=size)
            q.free_tensor(t)
        else:
            mm.iterate_all(cg)
        mm.end()


@pytest.mark.parametrize("shape", [(32, 64, 48), (16, 48, 70)])
def test_iterate_all_into_ub(shape):
    m, n, k = shape
    rng = np.random.default_rng(m + k)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    tiling = K.make_tiling(m, n, k, dim=1)
    assert (tiling.single_core_m, tiling.single_core_n) == (m, n)
    c_ub = np.zeros((m, n), np.float32)
    local_c[1](a, b, c_ub, tiling, True)
    c_gm = np.zeros((m, n), np.float32)
    local_c[1](a, b, c_gm, tiling, False)
    np.testing.assert_array_equal(c_ub.view(np.uint32), c_gm.view(np.uint32))
    assert np.abs(c_gm).sum() > 0


def test_errors_at_the_line():
    @asc.kernel
    def wrong_dtype(c: asc.GlobalAddress):
        pipe = asc.TPipe()
        q = asc.TQue(asc.TPosition.VECOUT, 1)
        pipe.init_buffer(que=q, num=1, len=1024)
        mm = asc.adv.Matmul(a=GM16, b=GM16, c=GM16)
        t = q.alloc_tensor(asc.float32)
        mm.iterate_all(t)

    @asc.kernel
    def gm_option(c: asc.GlobalAddress):
        pipe = asc.TPipe()
        q = asc.TQue(asc.TPosition.VECOUT, 1)
        pipe.init_buffer(que=q, num=1, len=1024)
        mm = asc.adv.Matmul(a=GM16, b=GM16, c=GM16)
        t = q.alloc_tensor(asc.float16)
        mm.iterate_all(t, en_sequential_write=True)

    for kernel, err, line in ((wrong_dtype, DtypeError, "mm.iterate_all(t)"),
                              (gm_option, KernelValueError, "en_sequential_write=True)")):
        with pytest.raises(err) as info:
            kernel[1](np.zeros(16, np.float16))
        assert line in str(info.value)
