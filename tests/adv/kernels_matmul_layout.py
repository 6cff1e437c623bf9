"""Kernels of the batch-layout Matmul tests: iterate_batch over BSNGD / SBNGD / BNGS1S2
operands, iterate_n_batch into the workspace with get_batch_tensor_c, and get_tensor_c outside
``with mm.iterate()`` (the asynchronous form)."""
from __future__ import annotations

import numpy as np

import ascendc_py as asc
from ascendc_py import host

from kernels_matmul import HOST

GM, ND = asc.TPosition.GM, asc.CubeFormat.ND


def layout_tiling(m, n, k, a_axes, b_axes, c_axes, batch, trans_b=False,
                  in_dtype="float16", out_dtype="float32"):
    """A one-core tiling of a batch matmul with A/B/C layout axes (b, s, n, g, d)."""
    t = host.MultiCoreMatmulTiling(host.get_ascendc_platform())
    t.set_a_type(host.TPosition.GM, host.CubeFormat.ND, HOST[in_dtype], False)
    t.set_b_type(host.TPosition.GM, host.CubeFormat.ND, HOST[in_dtype], trans_b)
    t.set_c_type(host.TPosition.GM, host.CubeFormat.ND, HOST[out_dtype])
    t.set_dim(1)
    t.set_org_shape(m, n, k)
    t.set_shape(m, n, k)
    t.set_a_layout(*a_axes)
    t.set_b_layout(*b_axes)
    t.set_c_layout(*c_axes)
    t.set_batch_num(batch)
    tiling = asc.adv.TCubeTiling()
    t.get_tiling(tiling)
    return tiling


def batch_matrices(x: np.ndarray, layout: str, axes) -> list:
    """The batches (b, n, g order) of an array in ``layout`` with axes (B, S, N, G, D): each
    the S x D matrix as stored."""
    B, S, N, G, D = axes
    out = []
    for b in range(B):
        for n in range(N):
            for g in range(G):
                if layout == "BSNGD":
                    out.append(x.reshape(B, S, N, G, D)[b, :, n, g, :])
                elif layout == "SBNGD":
                    out.append(x.reshape(S, B, N, G, D)[:, b, n, g, :])
                else:
                    out.append(x.reshape(B, N, G, S, D)[b, n, g])
    return out


def layout_kernel(la: str, lb: str, lc: str, trans_b: bool):
    """C = the batches of A @ B by iterate_batch(cg, batch_a, batch_b, False), the operands in
    the named layouts."""
    LA, LB, LC = (getattr(asc.LayoutMode, x) for x in (la, lb, lc))

    @asc.kernel(kernel_type=asc.KernelType.AIC_ONLY)
    def k(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
          tiling: asc.adv.TCubeTiling, batch_a: int, batch_b: int):
        if asc.ascend_is_aic():
            ag = asc.GlobalTensor()
            bg = asc.GlobalTensor()
            cg = asc.GlobalTensor()
            ag.set_global_buffer(a)
            bg.set_global_buffer(b)
            cg.set_global_buffer(c)
            mm = asc.adv.Matmul(asc.adv.MatmulType(GM, ND, ag.dtype, False, LA),
                                asc.adv.MatmulType(GM, ND, bg.dtype, trans_b, LB),
                                asc.adv.MatmulType(GM, ND, cg.dtype, False, LC))
            asc.adv.register_matmul(asc.TPipe(), c, mm, tiling)
            mm.set_tensor_a(ag)
            mm.set_tensor_b(bg, trans_b)
            mm.iterate_batch(cg, batch_a, batch_b, False)
            mm.end()
    return k


def nbatch_kernel(la: str, lb: str, trans_b: bool):
    """iterate_n_batch(loops, batch_a, batch_b) into the workspace ``ws`` (checked directly),
    then ``fetch`` rounds fetched with get_batch_tensor_c (the UB form for even rounds, the
    returned GlobalTensor for odd ones) and copied through UB to ``c``: ``c`` == ``ws``."""
    LA, LB = (getattr(asc.LayoutMode, x) for x in (la, lb))

    @asc.kernel
    def k(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
          ws: asc.GlobalAddress, tiling: asc.adv.TCubeTiling, batch_a: int, batch_b: int,
          loops: int, fetch: int, chunk: int):
        ag = asc.GlobalTensor()
        bg = asc.GlobalTensor()
        cg = asc.GlobalTensor()
        wg = asc.GlobalTensor()
        ag.set_global_buffer(a)
        bg.set_global_buffer(b)
        cg.set_global_buffer(c)
        wg.set_global_buffer(ws)
        pipe = asc.TPipe()
        q = asc.TQue(asc.TPosition.VECIN, 1)
        pipe.init_buffer(que=q, num=1, len=chunk * 4)
        mm = asc.adv.Matmul(asc.adv.MatmulType(GM, ND, ag.dtype, False, LA),
                            asc.adv.MatmulType(GM, ND, bg.dtype, trans_b, LB),
                            asc.adv.MatmulType(GM, ND, cg.dtype, False, asc.LayoutMode.BNGS1S2))
        asc.adv.register_matmul(pipe, ws, mm, tiling)
        if asc.get_block_idx() == 0 and asc.get_sub_block_idx() == 0:
            mm.set_tensor_a(ag)
            mm.set_tensor_b(bg, trans_b)
            mm.set_workspace(wg)
            mm.iterate_n_batch(loops, batch_a, batch_b, False, sync=False)
            mm.wait_iterate_batch()
            for i in range(fetch):
                t = q.alloc_tensor(asc.float32)
                if i % 2 == 0:
                    mm.get_batch_tensor_c(t, batch_a, batch_b, False, False)
                else:
                    g = mm.get_batch_tensor_c(batch_a, batch_b, False, False)
                    asc.data_copy(t, g, chunk)
                asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
                asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
                asc.data_copy(cg[i * chunk:], t, chunk)
                asc.set_flag(asc.HardEvent.MTE3_MTE2, 0)
                asc.wait_flag(asc.HardEvent.MTE3_MTE2, 0)
                q.free_tensor(t)
            mm.end()
    return k


@asc.kernel
def async_tiles(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
                ws: asc.GlobalAddress, tiling: asc.adv.TCubeTiling, extra: int):
    """mm.iterate(sync=False), then get_tensor_c outside the `with`: the first tile returned
    as a GlobalTensor of the workspace, the others written to their places in C; ``extra``
    more calls than there are tiles."""
    ag = asc.GlobalTensor()
    bg = asc.GlobalTensor()
    cg = asc.GlobalTensor()
    wg = asc.GlobalTensor()
    ag.set_global_buffer(a)
    bg.set_global_buffer(b)
    cg.set_global_buffer(c)
    wg.set_global_buffer(ws)
    mm = asc.adv.Matmul(asc.adv.MatmulType(GM, ND, ag.dtype), asc.adv.MatmulType(GM, ND, bg.dtype),
                        asc.adv.MatmulType(GM, ND, cg.dtype))
    asc.adv.register_matmul(asc.TPipe(), ws, mm, tiling)
    if asc.get_block_idx() == 0 and asc.get_sub_block_idx() == 0:
        mm.set_tensor_a(ag)
        mm.set_tensor_b(bg)
        mm.set_workspace(wg)
        mm.iterate(sync=False)
        tiles = (tiling.single_core_m // tiling.base_m) * (tiling.single_core_n // tiling.base_n)
        first = mm.get_tensor_c(0, False, False)
        for i in range(tiles - 1 + extra):
            mm.get_tensor_c(cg, sync=False)   # <- extra
        mm.end()


@asc.kernel
def tile_gm_and_ub(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
                   c2: asc.GlobalAddress, tiling: asc.adv.TCubeTiling):
    """get_tensor_c(c_gm, optional_tensor=ub) (GetTensorC(gm, co2Local)) of a one-tile C: the
    tile to C and to UB; the UB copy goes to ``c2``."""
    ag = asc.GlobalTensor()
    bg = asc.GlobalTensor()
    cg = asc.GlobalTensor()
    c2g = asc.GlobalTensor()
    ag.set_global_buffer(a)
    bg.set_global_buffer(b)
    cg.set_global_buffer(c)
    c2g.set_global_buffer(c2)
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 1)
    pipe.init_buffer(que=q, num=1, len=tiling.base_m * tiling.base_n * 4)
    mm = asc.adv.Matmul(asc.adv.MatmulType(GM, ND, ag.dtype), asc.adv.MatmulType(GM, ND, bg.dtype),
                        asc.adv.MatmulType(GM, ND, cg.dtype))
    asc.adv.register_matmul(pipe, c, mm, tiling)
    if asc.get_block_idx() == 0 and asc.get_sub_block_idx() == 0:
        mm.set_tensor_a(ag)
        mm.set_tensor_b(bg)
        with mm.iterate() as count:
            t = q.alloc_tensor(asc.float32)
            mm.get_tensor_c(cg, optional_tensor=t)
            q.enque(t)
            t = q.deque(asc.float32)
            asc.data_copy(c2g, t, tiling.base_m * tiling.base_n)
            q.free_tensor(t)
        mm.end()


def const_kernel(full: bool):
    """iterate_all with a get_matmul_api_tiling config (base 32 x 32 x 32, single-core shape
    64 x 64 x 64 when ``full``): register_matmul without a tiling when full, else with the
    run-time ``tiling`` (which must agree)."""

    @asc.kernel(kernel_type=asc.KernelType.AIC_ONLY)
    def k(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
          tiling: asc.adv.TCubeTiling):
        if asc.ascend_is_aic():
            ag = asc.GlobalTensor()
            bg = asc.GlobalTensor()
            cg = asc.GlobalTensor()
            ag.set_global_buffer(a)
            bg.set_global_buffer(b)
            cg.set_global_buffer(c)
            at = asc.adv.MatmulType(GM, ND, asc.float16)
            bt = asc.adv.MatmulType(GM, ND, asc.float16)
            ct = asc.adv.MatmulType(GM, ND, asc.float32)
            if full:
                cfg = asc.adv.get_mm_config(asc.MatmulConfigMode.CONFIG_NORM,
                                            asc.adv.MatmulShapeParams(64, 64, 64, 32, 32, 32))
            else:
                cfg = asc.adv.get_mm_config(asc.MatmulConfigMode.CONFIG_NORM,
                                            asc.adv.MatmulShapeParams(0, 0, 0, 32, 32, 32))
            static = asc.adv.get_matmul_api_tiling(cfg, 524288, at, bt, ct)
            mm = asc.adv.Matmul(at, bt, ct, matmul_config=static)
            if full:
                asc.adv.register_matmul(asc.TPipe(), c, mm)
            else:
                asc.adv.register_matmul(asc.TPipe(), c, mm, tiling)   # <- agree
            mm.set_tensor_a(ag)
            mm.set_tensor_b(bg)
            mm.iterate_all(cg)
            mm.end()
    return k
