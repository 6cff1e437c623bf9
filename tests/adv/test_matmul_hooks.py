"""Matmul calls that carry data for Ascend C's user callbacks or for a dequant stage the
Matmul's types do not have: set_self_define_data / set_user_def_info (checked, recorded, read by
nothing: there are no callbacks) and set_quant_scalar / set_quant_vector on a float Matmul
(accepted, ignored). C must be the plain product; misuse is an error at the line."""
from __future__ import annotations

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler.errors import KernelValueError, OperandKindError
from ascendc_py.compiler.ops.matmul import matmul_reference

from kernels_matmul import make_tiling


F16 = asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.float16)
F32 = asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.float32)


@asc.kernel(kernel_type=asc.KernelType.AIC_ONLY)
def hooked(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
           q: asc.GlobalAddress, tiling: asc.adv.TCubeTiling, word: int):
    ag = asc.GlobalTensor()
    ag.set_global_buffer(a)
    bg = asc.GlobalTensor()
    bg.set_global_buffer(b)
    cg = asc.GlobalTensor()
    cg.set_global_buffer(c)
    qg = asc.GlobalTensor()
    qg.set_global_buffer(q)
    mm = asc.adv.Matmul(a=F16, b=F16, c=F16)
    asc.adv.register_matmul(asc.TPipe(), c, mm, tiling)
    mm.set_self_define_data(q)
    mm.set_self_define_data(word)
    mm.set_self_define_data(qg)
    mm.set_user_def_info(q)
    mm.set_quant_scalar(word)
    mm.set_quant_vector(qg)
    mm.set_tensor_a(ag)
    mm.set_tensor_b(bg)
    mm.iterate_all(cg)


def test_hooks_and_float_quant_leave_c_the_plain_product():
    m, n, k = 32, 48, 64
    rng = np.random.default_rng(5)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.zeros((m, n), np.float16)
    q = np.full(n, np.float32(0.5).view(np.uint32), np.uint64)
    tiling = make_tiling(m, n, k, "float16", "float16", dim=1)
    hooked[1](a, b, c, q, tiling, int(np.float32(0.25).view(np.uint32)))
    want = matmul_reference(a, b, out_dtype=np.float16)
    np.testing.assert_array_equal(c.view(np.uint16), want.view(np.uint16))


def _errors():
    @asc.kernel(kernel_type=asc.KernelType.AIC_ONLY)
    def late(a: asc.GlobalAddress):
        ag = asc.GlobalTensor()
        ag.set_global_buffer(a)
        mm = asc.adv.Matmul(a=F16, b=F16, c=F32)
        mm.set_tensor_a(ag)
        mm.set_self_define_data(a)      # after set_tensor_a

    @asc.kernel(kernel_type=asc.KernelType.AIC_ONLY)
    def bad_info(a: asc.GlobalAddress):
        mm = asc.adv.Matmul(a=F16, b=F16, c=F32)
        mm.set_user_def_info(3)         # not an address

    @asc.kernel(kernel_type=asc.KernelType.AIC_ONLY)
    def bad_data(a: asc.GlobalAddress):
        mm = asc.adv.Matmul(a=F16, b=F16, c=F32)
        mm.set_self_define_data(1.5)    # not a data word

    return late, bad_info, bad_data


@pytest.mark.parametrize("which,err,match,line", [
    (0, KernelValueError, "before set_tensor_a", "mm.set_self_define_data(a)"),
    (1, OperandKindError, "set_user_def_info tiling_ptr must be", "mm.set_user_def_info(3)"),
    (2, Exception, "data_ptr", "mm.set_self_define_data(1.5)"),
])
def test_errors_at_the_line(which, err, match, line):
    kernel = _errors()[which]
    with pytest.raises(err, match=match) as info:
        kernel[1](np.zeros(16, np.float16))
    assert line in str(info.value)
