"""Kernels of the Matmul extras: batch matmul (iterate_batch, set_batch_num, NORMAL layout),
MatmulConfig and the get_*_config helpers, set_workspace."""
from __future__ import annotations

import ascendc_py as asc
from ascendc_py import host

from kernels_matmul import HOST


def batch_tiling(batch_a, batch_b, m, n, k, in_dtype="float16", out_dtype="float32"):
    """A one-core tiling of NORMAL-layout batches (A batch_a x M x K, B batch_b x K x N)."""
    t = host.MultiCoreMatmulTiling(host.get_ascendc_platform())
    t.set_a_type(host.TPosition.GM, host.CubeFormat.ND, HOST[in_dtype], False)
    t.set_b_type(host.TPosition.GM, host.CubeFormat.ND, HOST[in_dtype], False)
    t.set_c_type(host.TPosition.GM, host.CubeFormat.ND, HOST[out_dtype])
    t.set_dim(1)
    t.set_org_shape(m, n, k)
    t.set_shape(m, n, k)
    t.set_a_layout(batch_a, m, 1, 1, k)
    t.set_b_layout(batch_b, k, 1, 1, n)
    t.set_c_layout(max(batch_a, batch_b), m, 1, 1, n)
    t.set_batch_num(max(batch_a, batch_b))
    tiling = asc.adv.TCubeTiling()
    t.get_tiling(tiling)
    return tiling


def batch_kernel(form="explicit", config="none"):
    """C = the batches of A @ B by Matmul.iterate_batch: ``form`` "explicit" passes batch_a and
    batch_b (and strides sa/sb/sc, 0 = contiguous), "cube" the cube-only form after
    set_batch_num, "layout" the cube-only form with the tiling's layout counts; ``config``
    names a get_*_config helper (or "record" for a MatmulConfig built in the kernel)."""

    @asc.kernel(kernel_type=asc.KernelType.AIC_ONLY)
    def k(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
          tiling: asc.adv.TCubeTiling, ws: asc.GlobalAddress, batch_a: int, batch_b: int,
          sa: int, sb: int, sc: int):
        if asc.ascend_is_aic():
            ag = asc.GlobalTensor()
            bg = asc.GlobalTensor()
            cg = asc.GlobalTensor()
            ag.set_global_buffer(a)
            bg.set_global_buffer(b)
            cg.set_global_buffer(c)
            pipe = asc.TPipe()
            at = asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, ag.dtype, False,
                                    asc.LayoutMode.NORMAL)
            bt = asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, bg.dtype, False,
                                    asc.LayoutMode.NORMAL)
            ct = asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, cg.dtype, False,
                                    asc.LayoutMode.NORMAL)
            if config == "normal":
                mm = asc.adv.Matmul(at, bt, ct, matmul_config=asc.adv.get_normal_config(
                    batch_loop=True, iterate_order=asc.IterateOrder.ORDER_N))
            elif config == "mdl":
                mm = asc.adv.Matmul(at, bt, ct, matmul_config=asc.adv.get_mdl_config())
            elif config == "mm":
                mm = asc.adv.Matmul(at, bt, ct, matmul_config=asc.adv.get_mm_config(
                    asc.MatmulConfigMode.CONFIG_MDL,
                    asc.adv.MatmulBatchParams(True, asc.BatchMode.BATCH_LESS_THAN_L1, False)))
            elif config == "record":
                mm = asc.adv.Matmul(at, bt, ct, matmul_config=asc.adv.MatmulConfig(
                    do_norm=False, do_basic_block=True, basic_m=16, basic_n=16, basic_k=16))
            else:
                mm = asc.adv.Matmul(at, bt, ct)
            asc.adv.register_matmul(pipe, ws, mm, tiling)
            mm.set_workspace(ws)
            mm.set_tensor_a(ag)
            mm.set_tensor_b(bg)
            if form == "explicit":
                mm.iterate_batch(cg, batch_a, batch_b, False, sa, sb, sc)
            elif form == "cube":
                mm.set_batch_num(batch_a, batch_b)
                mm.iterate_batch(cg, False, 0, False)
            else:
                mm.iterate_batch(cg, False, 0, False)
            mm.end()
    return k


def quant_kernel(mode="scalar"):
    """int8 A @ B -> C (float16 or int8) dequantized by Matmul.set_quant_scalar(bits) or
    set_quant_vector(q_gm) ("scalar" / "vector"; "branch": the scalar set only when flag)."""

    @asc.kernel(kernel_type=asc.KernelType.AIC_ONLY)
    def k(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
          q: asc.GlobalAddress, tiling: asc.adv.TCubeTiling, bits: int, flag: int):
        if asc.ascend_is_aic():
            ag = asc.GlobalTensor()
            bg = asc.GlobalTensor()
            cg = asc.GlobalTensor()
            qg = asc.GlobalTensor()
            ag.set_global_buffer(a)
            bg.set_global_buffer(b)
            cg.set_global_buffer(c)
            qg.set_global_buffer(q)
            mm = asc.adv.Matmul(
                a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, ag.dtype),
                b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, bg.dtype),
                c=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, cg.dtype))
            asc.adv.register_matmul(asc.TPipe(), c, mm, tiling)
            if mode == "vector":
                mm.set_quant_vector(qg)
            elif mode == "branch":
                if flag:
                    mm.set_quant_scalar(bits)
            else:
                mm.set_quant_scalar(bits)
            mm.set_tensor_a(ag)
            mm.set_tensor_b(bg)
            mm.set_tail(tiling.m, tiling.n)
            mm.iterate_all(cg)
            mm.end()
    return k
