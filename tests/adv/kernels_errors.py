"""Kernels with one Matmul / struct-parameter mistake each; the faulty line ends with ``# <-``."""
from __future__ import annotations

import ascendc_py as asc

F16, F32 = asc.float16, asc.float32


@asc.kernel
def MT(position, dtype):  # noqa: N802 - a MatmulType in ND format (module IntEnums fold to ints)
    return asc.adv.MatmulType(position, asc.CubeFormat.ND, dtype)


@asc.kernel
def unknown_field(a: asc.GlobalAddress, tiling: asc.adv.TCubeTiling):
    x = tiling.base_q  # <-
    if x > 0:
        pass


@asc.kernel
def iterate_before_set_a(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
                         tiling: asc.adv.TCubeTiling):
    ag = asc.GlobalTensor()
    ag.set_global_buffer(a)
    cg = asc.GlobalTensor()
    cg.set_global_buffer(c)
    mm = asc.adv.Matmul(a=MT(asc.TPosition.GM, F16), b=MT(asc.TPosition.GM, F16),
                        c=MT(asc.TPosition.GM, F32))
    asc.adv.register_matmul(asc.TPipe(), c, mm, tiling)
    mm.iterate_all(cg)  # <-
    mm.set_tensor_a(ag)


@asc.kernel
def iterate_before_register(a: asc.GlobalAddress, c: asc.GlobalAddress,
                            tiling: asc.adv.TCubeTiling):
    ag = asc.GlobalTensor()
    ag.set_global_buffer(a)
    cg = asc.GlobalTensor()
    cg.set_global_buffer(c)
    mm = asc.adv.Matmul(a=MT(asc.TPosition.GM, F16), b=MT(asc.TPosition.GM, F16),
                        c=MT(asc.TPosition.GM, F32))
    mm.set_tensor_a(ag)
    mm.set_tensor_b(ag)
    mm.iterate_all(cg)  # <-


@asc.kernel
def wrong_a_dtype(a: asc.GlobalAddress, tiling: asc.adv.TCubeTiling):
    ag = asc.GlobalTensor()
    ag.set_global_buffer(a)
    mm = asc.adv.Matmul(a=MT(asc.TPosition.GM, F16), b=MT(asc.TPosition.GM, F16),
                        c=MT(asc.TPosition.GM, F32))
    mm.set_tensor_a(ag)  # <-


@asc.kernel
def unsupported_c_dtype(a: asc.GlobalAddress):
    mm = asc.adv.Matmul(a=MT(asc.TPosition.GM, F16), b=MT(asc.TPosition.GM, F16),  # <-
                        c=MT(asc.TPosition.GM, asc.int32))


@asc.kernel
def a_in_l1(a: asc.GlobalAddress):
    mm = asc.adv.Matmul(a=MT(asc.TPosition.A1, F16),  # <-
                        b=MT(asc.TPosition.GM, F16), c=MT(asc.TPosition.GM, F32))


@asc.kernel
def iterate_all_to_ub_type(a: asc.GlobalAddress, c: asc.GlobalAddress,
                           tiling: asc.adv.TCubeTiling):
    ag = asc.GlobalTensor()
    ag.set_global_buffer(a)
    cg = asc.GlobalTensor()
    cg.set_global_buffer(c)
    mm = asc.adv.Matmul(a=MT(asc.TPosition.GM, F16), b=MT(asc.TPosition.GM, F16),
                        c=MT(asc.TPosition.VECCALC, F32))
    asc.adv.register_matmul(asc.TPipe(), c, mm, tiling)
    mm.set_tensor_a(ag)
    mm.set_tensor_b(ag)
    mm.iterate_all(cg)  # <-


@asc.kernel
def get_tensor_c_outside(a: asc.GlobalAddress, c: asc.GlobalAddress,
                         tiling: asc.adv.TCubeTiling):
    ag = asc.GlobalTensor()
    ag.set_global_buffer(a)
    cg = asc.GlobalTensor()
    cg.set_global_buffer(c)
    mm = asc.adv.Matmul(a=MT(asc.TPosition.GM, F16), b=MT(asc.TPosition.GM, F16),
                        c=MT(asc.TPosition.GM, F32))
    asc.adv.register_matmul(asc.TPipe(), c, mm, tiling)
    mm.set_tensor_a(ag)
    mm.set_tensor_b(ag)
    mm.get_tensor_c(cg)  # <-


@asc.kernel
def with_not_iterate(a: asc.GlobalAddress):
    with asc.get_block_idx() as x:  # <-
        pass


@asc.kernel
def register_without_tiling_struct(a: asc.GlobalAddress, n: int):
    mm = asc.adv.Matmul(a=MT(asc.TPosition.GM, F16), b=MT(asc.TPosition.GM, F16),
                        c=MT(asc.TPosition.GM, F32))
    asc.adv.register_matmul(asc.TPipe(), a, mm, n)  # <-


@asc.kernel
def set_bias_without_type(a: asc.GlobalAddress, c: asc.GlobalAddress):
    cg = asc.GlobalTensor()
    cg.set_global_buffer(c)
    # no bias type: the bias is C's (BIAS_TYPE = C_TYPE), and float16 is no bias of int8 inputs
    mm = asc.adv.Matmul(a=MT(asc.TPosition.GM, asc.int8), b=MT(asc.TPosition.GM, asc.int8),
                        c=MT(asc.TPosition.GM, F16))
    mm.set_bias(cg)  # <-


@asc.kernel
def c_too_small(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
                tiling: asc.adv.TCubeTiling):
    ag = asc.GlobalTensor()
    ag.set_global_buffer(a)
    bg = asc.GlobalTensor()
    bg.set_global_buffer(b)
    cg = asc.GlobalTensor()
    cg.set_global_buffer(c)
    mm = asc.adv.Matmul(a=MT(asc.TPosition.GM, F16), b=MT(asc.TPosition.GM, F16),
                        c=MT(asc.TPosition.GM, F32))
    asc.adv.register_matmul(asc.TPipe(), c, mm, tiling)
    mm.set_tensor_a(ag)
    mm.set_tensor_b(bg)
    mm.iterate_all(cg)  # <-


#: c_too_small's code in explicit vector kernels: no cube unit, no AIC to serve the Matmul
matmul_in_aiv_only = asc.kernel(kernel_type=asc.KernelType.AIV_ONLY)(c_too_small.fn)
matmul_in_mix_aiv_1_0 = asc.kernel(kernel_type=asc.KernelType.MIX_AIV_1_0)(c_too_small.fn)
