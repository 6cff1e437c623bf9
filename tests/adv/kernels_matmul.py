"""Kernels and launch helpers of the Matmul tests (tests/adv)."""
from __future__ import annotations

import numpy as np

import ascendc_py as asc
from ascendc_py import host

HOST = {"float16": host.DataType.DT_FLOAT16, "bfloat16": host.DataType.DT_BF16,
        "float32": host.DataType.DT_FLOAT, "int8": host.DataType.DT_INT8,
        "int32": host.DataType.DT_INT32}


def make_tiling(m, n, k, in_dtype="float16", out_dtype="float32", dim=24, bias=False,
                fixed=None, traverse=None, trans_a=False, trans_b=False):
    t = host.MultiCoreMatmulTiling(host.get_ascendc_platform())
    t.set_a_type(host.TPosition.GM, host.CubeFormat.ND, HOST[in_dtype], trans_a)
    t.set_b_type(host.TPosition.GM, host.CubeFormat.ND, HOST[in_dtype], trans_b)
    t.set_c_type(host.TPosition.GM, host.CubeFormat.ND, HOST[out_dtype])
    t.set_dim(dim)
    t.set_org_shape(m, n, k)
    t.set_shape(m, n, k)
    t.enable_bias(bias)
    if fixed:
        t.set_fix_split(*fixed)
    if traverse is not None:
        t.set_traverse(traverse)
    tiling = asc.adv.TCubeTiling()
    t.get_tiling(tiling)
    return tiling


@asc.kernel
def offsets(tiling: asc.adv.TCubeTiling, trans_a: bool, trans_b: bool):
    """The tutorials' calc_offsets: this core's A/B/C/bias offsets and tails."""
    block = asc.get_block_idx()
    m_blocks = tiling.m.ceildiv(tiling.single_core_m)
    m_index = block % m_blocks
    n_index = block // m_blocks
    off_a = m_index * tiling.k_a * tiling.single_core_m
    if trans_a:
        off_a = m_index * tiling.single_core_m
    off_b = n_index * tiling.single_core_n
    if trans_b:
        off_b = n_index * tiling.k_b * tiling.single_core_n
    off_c = m_index * tiling.n * tiling.single_core_m + n_index * tiling.single_core_n
    tail_m = tiling.m - m_index * tiling.single_core_m
    if tail_m >= tiling.single_core_m:
        tail_m = tiling.single_core_m
    tail_n = tiling.n - n_index * tiling.single_core_n
    if tail_n >= tiling.single_core_n:
        tail_n = tiling.single_core_n
    return off_a, off_b, off_c, n_index * tiling.single_core_n, tail_m, tail_n


@asc.kernel(kernel_type=asc.KernelType.AIC_ONLY)
def mm_all(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
           bias: asc.GlobalAddress, tiling: asc.adv.TCubeTiling, trans_a: asc.ConstExpr[bool],
           trans_b: asc.ConstExpr[bool], with_bias: asc.ConstExpr[bool]):
    """Matmul.iterate_all over the tiling's cores on the AIC of a cube-only kernel (tutorial
    04's structure: one block per AI Core, the work under ``asc.ascend_is_aic()``)."""
    if asc.ascend_is_aic():
        off_a, off_b, off_c, off_bias, tail_m, tail_n = offsets(tiling, trans_a, trans_b)
        ag = asc.GlobalTensor()
        bg = asc.GlobalTensor()
        cg = asc.GlobalTensor()
        biasg = asc.GlobalTensor()
        ag.set_global_buffer(a + off_a)
        bg.set_global_buffer(b + off_b)
        cg.set_global_buffer(c + off_c)
        biasg.set_global_buffer(bias + off_bias)
        pipe = asc.TPipe()
        mm = asc.adv.Matmul(
            a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, ag.dtype, trans_a),
            b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, bg.dtype, trans_b),
            c=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, cg.dtype),
            bias=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, biasg.dtype))
        asc.adv.register_matmul(pipe, c, mm, tiling)
        if asc.get_block_idx() < tiling.used_core_num:
            mm.set_tensor_a(ag, trans_a)
            mm.set_tensor_b(bg, trans_b)
            if with_bias:
                mm.set_bias(biasg)
            mm.set_tail(tail_m, tail_n)
            mm.iterate_all(cg)
            mm.end()


@asc.kernel
def mm_all_mix(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
               bias: asc.GlobalAddress, tiling: asc.adv.TCubeTiling,
               with_bias: asc.ConstExpr[bool]):
    """The same as a mix kernel (MIX_AIC_1_2, inferred from the Matmul calls; tutorial 03's
    structure): no guard, the AIC's kernel ends at register_matmul (it serves the AIVs), each
    AIV (block index 2 * block + sub-block) computes its single-core block."""
    off_a, off_b, off_c, off_bias, tail_m, tail_n = offsets(tiling, False, False)
    ag = asc.GlobalTensor()
    bg = asc.GlobalTensor()
    cg = asc.GlobalTensor()
    biasg = asc.GlobalTensor()
    ag.set_global_buffer(a + off_a)
    bg.set_global_buffer(b + off_b)
    cg.set_global_buffer(c + off_c)
    biasg.set_global_buffer(bias + off_bias)
    mm = asc.adv.Matmul(
        a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, ag.dtype),
        b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, bg.dtype),
        c=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, cg.dtype),
        bias=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, biasg.dtype))
    asc.adv.register_matmul(asc.TPipe(), c, mm, tiling)
    if asc.get_block_idx() < tiling.used_core_num:
        mm.set_tensor_a(ag)
        mm.set_tensor_b(bg)
        if with_bias:
            mm.set_bias(biasg)
        mm.set_tail(tail_m, tail_n)
        mm.iterate_all(cg)
        mm.end()


def mix_blocks(tiling) -> int:
    """Blocks of a MIX_AIC_1_2 launch: the tiling's cores are AIVs, two per AI Core."""
    return -(-tiling.used_core_num // 2)


@asc.kernel
def mm_tiles(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
             tiling: asc.adv.TCubeTiling):
    """A mix kernel (tutorial 05's structure; launch with mix_blocks): each AIV runs
    mm.iterate() + get_tensor_c into a UB tile, copied to C at the tile's place in the tiling's
    iterate order (shapes multiples of the base tile)."""
    off_a, off_b, off_c, off_bias, tail_m, tail_n = offsets(tiling, False, False)
    ag = asc.GlobalTensor()
    bg = asc.GlobalTensor()
    cg = asc.GlobalTensor()
    ag.set_global_buffer(a + off_a)
    bg.set_global_buffer(b + off_b)
    cg.set_global_buffer(c + off_c)
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(que=q, num=1, len=tiling.base_m * tiling.base_n * c.dtype.sizeof())
    mm = asc.adv.Matmul(
        a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, ag.dtype),
        b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, bg.dtype),
        c=asc.adv.MatmulType(asc.TPosition.VECCALC, asc.CubeFormat.ND, cg.dtype))
    asc.adv.register_matmul(pipe, c, mm, tiling)
    if asc.get_block_idx() < tiling.used_core_num:
        mm.set_tensor_a(ag)
        mm.set_tensor_b(bg)
        m_tiles = tiling.single_core_m // tiling.base_m
        n_tiles = tiling.single_core_n // tiling.base_n
        with mm.iterate() as count:
            t = q.alloc_tensor(c.dtype)
            mm.get_tensor_c(t, en_sequential_write=True)
            q.enque(t)
            t = q.deque(c.dtype)
            start = count % m_tiles * tiling.base_m * tiling.n + count // m_tiles * tiling.base_n
            if tiling.iterate_order == 1:
                start = (count // n_tiles * tiling.base_m * tiling.n
                         + count % n_tiles * tiling.base_n)
            params = asc.DataCopyParams(
                block_count=tiling.base_m,
                block_len=tiling.base_n * c.dtype.sizeof() // asc.property(asc.DEFAULT_C0_SIZE),
                src_stride=0,
                dst_stride=(tiling.n - tiling.base_n) * c.dtype.sizeof() // 32)
            asc.data_copy(cg[start:], t, repeat_params=params)
            q.free_tensor(t)
        mm.end()


@asc.kernel
def mm_tiles_gm(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
                tiling: asc.adv.TCubeTiling):
    """A mix kernel (launch with mix_blocks): with mm.iterate() + get_tensor_c(c_gm) each tile
    lands at its place in C (tails too)."""
    off_a, off_b, off_c, off_bias, tail_m, tail_n = offsets(tiling, False, False)
    ag = asc.GlobalTensor()
    bg = asc.GlobalTensor()
    cg = asc.GlobalTensor()
    ag.set_global_buffer(a + off_a)
    bg.set_global_buffer(b + off_b)
    cg.set_global_buffer(c + off_c)
    mm = asc.adv.Matmul(
        a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, ag.dtype),
        b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, bg.dtype),
        c=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, cg.dtype))
    asc.adv.register_matmul(asc.TPipe(), c, mm, tiling)
    if asc.get_block_idx() < tiling.used_core_num:
        mm.set_tensor_a(ag)
        mm.set_tensor_b(bg)
        mm.set_tail(tail_m, tail_n)
        with mm.iterate() as count:
            mm.get_tensor_c(cg)


@asc.kernel(matmul_cube_only=True)
def mm_org(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
           tiling: asc.adv.TCubeTiling, m: int, n: int, k: int, lda: int, ldb: int):
    """One cube core (pyasc's matmul_cube_only=True): a sub-matrix product with set_org_shape
    giving the row strides."""
    if asc.ascend_is_aic():
        ag = asc.GlobalTensor()
        bg = asc.GlobalTensor()
        cg = asc.GlobalTensor()
        ag.set_global_buffer(a)
        bg.set_global_buffer(b)
        cg.set_global_buffer(c)
        mm = asc.adv.Matmul(
            a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, ag.dtype),
            b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, bg.dtype),
            c=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, cg.dtype))
        asc.adv.register_matmul(asc.TPipe(), c, mm, tiling)
        mm.set_org_shape(m, ldb, lda)
        mm.set_tensor_a(ag)
        mm.set_tensor_b(bg)
        mm.set_tail(m, n, k)
        mm.iterate_all(cg)


def run_all(a, b, out_dtype, bias=None, trans_a=False, trans_b=False, dim=24, in_dtype=None,
            mix=False, **launch):
    """C = op(a) @ op(b) (+ bias) with the cube-only mm_all (``dim`` AICs), or with ``mix`` the
    mix kernel mm_all_mix (``dim`` AIVs, two per block; no transposes); ``a``/``b`` are stored
    transposed when asked."""
    if trans_a:
        k, m = a.shape
    else:
        m, k = a.shape
    n = b.shape[0] if trans_b else b.shape[1]
    in_name = in_dtype or str(a.dtype).replace("torch.", "")
    tiling = make_tiling(m, n, k, in_name, out_dtype, dim, bias is not None, trans_a=trans_a,
                         trans_b=trans_b)
    np_out = {"float32": np.float32, "float16": np.float16, "int32": np.int32}
    if out_dtype == "bfloat16":
        import torch
        c = torch.zeros((m, n), dtype=torch.bfloat16)
    else:
        c = np.zeros((m, n), np_out[out_dtype])
    with_bias = bias is not None
    if bias is None:
        bias = np.zeros(n, np.int32 if in_name == "int8" else np.float32)
    if mix:
        assert not (trans_a or trans_b)
        report = mm_all_mix[mix_blocks(tiling)](a, b, c, bias, tiling, with_bias, **launch)
    else:
        report = mm_all[tiling.used_core_num](a, b, c, bias, tiling, trans_a, trans_b, with_bias,
                                              **launch)
    return c, report, tiling
