"""Batch matmul layouts (BSNGD, SBNGD, BNGS1S2), iterate_n_batch with get_batch_tensor_c, and
get_tensor_c outside ``with mm.iterate()``, against NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import ascendc_py as asc

from kernels_matmul import make_tiling
from kernels_matmul_layout import (async_tiles, batch_matrices, layout_kernel, layout_tiling,
                                   nbatch_kernel)


def _arr(rng, size):
    return (rng.standard_normal(size) * 2).astype(np.float16)


def _case(la, lb, lc, trans_b, M, N, K, B=2, NH=1, G=3, GB=None, seed=0):
    """Inputs and the expected C of C[j] = A[j] @ op(B[j // (G / GB)]) over (b, n, g)."""
    GB = G if GB is None else GB
    rng = np.random.default_rng(seed)
    a_axes = (B, M, NH, G, K)
    b_axes = (B, N, NH, GB, K) if trans_b else (B, K, NH, GB, N)
    c_axes = (B, M, NH, G, N)
    a, b = _arr(rng, int(np.prod(a_axes))), _arr(rng, int(np.prod(b_axes)))
    am, bm = batch_matrices(a, la, a_axes), batch_matrices(b, lb, b_axes)
    want = []
    for j, x in enumerate(am):
        y = bm[j // (G // GB)].astype(np.float32)
        want.append(x.astype(np.float32) @ (y.T if trans_b else y))
    tiling = layout_tiling(M, N, K, a_axes, b_axes, c_axes, len(am), trans_b)
    return a, b, want, c_axes, tiling, len(am), len(bm)


@pytest.mark.parametrize("la,lb,lc,trans_b", [
    ("BSNGD", "BSNGD", "BNGS1S2", True),       # Ascend C's documented example
    ("BSNGD", "BSNGD", "BSNGD", False),
    ("SBNGD", "SBNGD", "SBNGD", True),
    ("BNGS1S2", "BSNGD", "BNGS1S2", False),
    ("SBNGD", "BNGS1S2", "BSNGD", True)])
def test_iterate_batch_layouts(la, lb, lc, trans_b):
    M, N, K = 24, 40, 32
    a, b, want, c_axes, tiling, ba, bb = _case(la, lb, lc, trans_b, M, N, K, seed=len(la + lc))
    c = np.full(int(np.prod(c_axes)), -7.0, np.float32)
    report = layout_kernel(la, lb, lc, trans_b)[1](a, b, c, tiling, ba, bb)
    got = batch_matrices(c, lc, c_axes)
    for j, w in enumerate(want):
        np.testing.assert_allclose(got[j], w, rtol=1e-6, atol=1e-5, err_msg=f"batch {j}")
    assert report.instructions["matmul_iterate_all"] == len(want)


def test_broadcast_of_b_over_the_groups():
    """Grouped heads: A has G = 4 groups per head, B one (batch_b = batch_a / 4)."""
    M, N, K = 16, 32, 48
    a, b, want, c_axes, tiling, ba, bb = _case("BSNGD", "BSNGD", "BNGS1S2", True, M, N, K,
                                               NH=2, G=4, GB=1, seed=11)
    assert (ba, bb) == (16, 4)
    c = np.zeros(int(np.prod(c_axes)), np.float32)
    layout_kernel("BSNGD", "BSNGD", "BNGS1S2", True)[1](a, b, c, tiling, ba, bb)
    for j, w in enumerate(batch_matrices(c, "BNGS1S2", c_axes)):
        np.testing.assert_allclose(w, want[j], rtol=1e-6, atol=1e-5)


def test_layout_costs_as_many_cube_products_as_normal_batches():
    """A layout changes where the batches are, not the cube work: the M pipe is busy as long
    as for the same batches laid out one after another."""
    M, N, K = 32, 32, 64
    a, b, want, c_axes, tiling, ba, bb = _case("BSNGD", "BSNGD", "BSNGD", False, M, N, K)
    c = np.zeros(int(np.prod(c_axes)), np.float32)
    r_layout = layout_kernel("BSNGD", "BSNGD", "BSNGD", False)[1](a, b, c, tiling, ba, bb)
    an = np.concatenate([x.ravel() for x in batch_matrices(a, "BSNGD", (2, M, 1, 3, K))])
    bn = np.concatenate([x.ravel() for x in batch_matrices(b, "BSNGD", (2, K, 1, 3, N))])
    r_normal = layout_kernel("NORMAL", "NORMAL", "NORMAL", False)[1](an, bn, c.copy(), tiling,
                                                                    ba, bb)
    assert r_layout.pipe_busy["M"] == r_normal.pipe_busy["M"] > 0
    assert r_layout.instructions["matmul_iterate_all"] == 6


def test_missing_layout_axes_stop_at_the_call():
    M, N, K = 16, 16, 16
    a, b, want, c_axes, _, ba, bb = _case("BSNGD", "BSNGD", "BSNGD", False, M, N, K)
    tiling = make_tiling(M, N, K, dim=1)           # no set_a_layout: the axes are 0
    with pytest.raises(asc.KernelAssertionError, match="a_layout_info_"):
        layout_kernel("BSNGD", "BSNGD", "BSNGD", False)[1](a, b, np.zeros(1024, np.float32),
                                                           tiling, ba, bb)


def test_batches_past_the_layout_stop_at_the_call():
    M, N, K = 16, 16, 16
    a, b, want, c_axes, tiling, ba, bb = _case("BSNGD", "BSNGD", "BSNGD", False, M, N, K)
    with pytest.raises(asc.KernelAssertionError, match="past the end of A's BSNGD"):
        layout_kernel("BSNGD", "BSNGD", "BSNGD", False)[1](
            a, b, np.zeros(4096, np.float32), tiling, 2 * ba, 2 * bb)


@pytest.mark.parametrize("la,lb,trans_b", [("BSNGD", "BSNGD", True), ("SBNGD", "BSNGD", False)])
def test_iterate_n_batch_and_get_batch_tensor_c(la, lb, trans_b):
    """3 batches of A and B per round, 2 rounds: the workspace holds the 6 products one after
    another; get_batch_tensor_c hands them out round by round (UB and GlobalTensor forms)."""
    M, N, K = 16, 32, 32
    a, b, want, c_axes, tiling, ba, bb = _case(la, lb, "BNGS1S2", trans_b, M, N, K, seed=4)
    ws = np.full(ba * M * N + 64, -3.0, np.float32)
    c = np.zeros(ba * M * N, np.float32)
    report = nbatch_kernel(la, lb, trans_b)[1](a, b, c, ws, tiling, 3, 3, 2, 2, 3 * M * N,
                                               sanitize=True)
    expect = np.concatenate([w.ravel() for w in want])
    np.testing.assert_allclose(ws[:ba * M * N], expect, rtol=1e-6, atol=1e-5)
    assert (ws[ba * M * N:] == -3.0).all()
    np.testing.assert_array_equal(c, ws[:ba * M * N])
    assert report.instructions["matmul_iterate_all"] == 6


def test_get_batch_tensor_c_past_the_rounds_stops():
    M, N, K = 16, 32, 32
    a, b, want, c_axes, tiling, ba, bb = _case("BSNGD", "BSNGD", "BNGS1S2", True, M, N, K)
    ws = np.zeros(ba * M * N, np.float32)
    with pytest.raises(asc.KernelAssertionError, match="no round of an iterate_n_batch left"):
        nbatch_kernel("BSNGD", "BSNGD", True)[1](a, b, np.zeros(ba * M * N, np.float32), ws,
                                                 tiling, 3, 3, 1, 2, 3 * M * N)


def _async_inputs():
    rng = np.random.default_rng(2)
    m, n, k = 64, 64, 32
    a = _arr(rng, (m, k))
    b = _arr(rng, (k, n))
    tiling = make_tiling(m, n, k, dim=1, fixed=(32, 32, -1))
    return a, b, tiling, a.astype(np.float32) @ b.astype(np.float32)


def test_get_tensor_c_outside_iterate_takes_the_pending_tiles():
    a, b, tiling, want = _async_inputs()
    assert (tiling.base_m, tiling.base_n, tiling.single_core_m) == (32, 32, 64)
    c = np.full(want.shape, -1.0, np.float32)
    ws = np.zeros(32 * 32, np.float32)
    report = async_tiles[1](a, b, c, ws, tiling, 0)
    # tile 0 (rows 0..31, columns 0..31 in the M-first order) went to the workspace only
    np.testing.assert_allclose(ws.reshape(32, 32), want[:32, :32], rtol=1e-6, atol=1e-5)
    assert (c[:32, :32] == -1.0).all()
    np.testing.assert_allclose(c[32:, :], want[32:, :], rtol=1e-6, atol=1e-5)
    np.testing.assert_allclose(c[:32, 32:], want[:32, 32:], rtol=1e-6, atol=1e-5)
    assert report.instructions["matmul_get_tensor_c"] == 4


def test_get_tensor_c_past_the_pending_tiles_stops_at_its_line():
    a, b, tiling, want = _async_inputs()
    with pytest.raises(asc.KernelAssertionError, match="none is pending") as info:
        async_tiles[1](a, b, np.zeros(want.shape, np.float32), np.zeros(1024, np.float32),
                       tiling, 1)
    assert "# <- extra" in str(info.value)


def test_get_tensor_c_writes_gm_and_the_optional_ub_tensor():
    """Regression: the optional_tensor of get_tensor_c(gm, optional_tensor=ub) was ignored."""
    from kernels_matmul_layout import tile_gm_and_ub
    rng = np.random.default_rng(8)
    a, b = _arr(rng, (32, 32)), _arr(rng, (32, 32))
    tiling = make_tiling(32, 32, 32, dim=1, fixed=(32, 32, -1))
    c, c2 = np.zeros((32, 32), np.float32), np.zeros((32, 32), np.float32)
    tile_gm_and_ub[1](a, b, c, c2, tiling)
    want = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(c, want, rtol=1e-6, atol=1e-5)
    np.testing.assert_array_equal(c2, c)


def test_full_constant_tiling_needs_no_run_time_tiling():
    from kernels_matmul_layout import const_kernel
    rng = np.random.default_rng(6)
    a, b = _arr(rng, (64, 64)), _arr(rng, (64, 64))
    c = np.zeros((64, 64), np.float32)
    report = const_kernel(True)[1](a, b, c, asc.adv.TCubeTiling())   # an all-zero tiling
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-6,
                               atol=1e-5)
    assert report.instructions["matmul_iterate_all"] == 1


def test_partial_constant_tiling_must_agree_with_the_run_time_one():
    from kernels_matmul_layout import const_kernel
    rng = np.random.default_rng(6)
    a, b = _arr(rng, (64, 64)), _arr(rng, (64, 64))
    good = make_tiling(64, 64, 64, dim=1, fixed=(32, 32, 32))
    c = np.zeros((64, 64), np.float32)
    const_kernel(False)[1](a, b, c, good)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-6,
                               atol=1e-5)
    bad = make_tiling(64, 64, 64, dim=1, fixed=(64, 32, 32))
    with pytest.raises(asc.KernelAssertionError, match="base_m differs from the constant") as e:
        const_kernel(False)[1](a, b, c, bad)
    assert "# <- agree" in str(e.value)


def test_get_matmul_api_tiling_full_and_l1_checks():
    cfg = asc.adv.get_mm_config(asc.MatmulConfigMode.CONFIG_MDL,
                                asc.adv.MatmulShapeParams(128, 64, 256, 64, 32, 32))
    t = asc.adv.get_matmul_api_tiling(cfg, 524288)
    assert (t.m, t.n, t.k_a, t.k_b) == (128, 64, 256, 256)
    assert (t.base_m, t.base_n, t.base_k, t.used_core_num, t.depth_a1) == (64, 32, 32, 1, 2)
    assert t.a_layout_info_b == -1 and t.cfg is cfg
    mt = asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.float16)
    t2 = asc.adv.get_matmul_api_tiling(cfg, mt, mt, mt, mt, 524288)   # pyasc's jit order
    assert t2 == t
    with pytest.raises(ValueError, match="need 12288 bytes of L1"):
        asc.adv.get_matmul_api_tiling(cfg, 4096, mt, mt, mt)


def test_layouts_run_clean_in_sanitize_mode():
    M, N, K = 24, 40, 32
    a, b, want, c_axes, tiling, ba, bb = _case("BSNGD", "BSNGD", "BSNGD", True, M, N, K)
    c = np.zeros(int(np.prod(c_axes)), np.float32)
    layout_kernel("BSNGD", "BSNGD", "BSNGD", True)[1](a, b, c, tiling, ba, bb, sanitize=True)
    for j, w in enumerate(batch_matrices(c, "BSNGD", c_axes)):
        np.testing.assert_allclose(w, want[j], rtol=1e-6, atol=1e-5)


def test_a_sparse_matmul_does_not_compute():
    GMp, NDp = asc.TPosition.GM, asc.CubeFormat.ND

    @asc.kernel(matmul_cube_only=True)
    def k(a: asc.GlobalAddress, idx: asc.GlobalAddress, c: asc.GlobalAddress,
          tiling: asc.adv.TCubeTiling):
        ag = asc.GlobalTensor()
        ig = asc.GlobalTensor()
        cg = asc.GlobalTensor()
        ag.set_global_buffer(a)
        ig.set_global_buffer(idx)
        cg.set_global_buffer(c)
        t = asc.adv.MatmulType(GMp, NDp, asc.float16)
        mm = asc.adv.Matmul(t, t, asc.adv.MatmulType(GMp, NDp, asc.float32))
        asc.adv.register_matmul(asc.TPipe(), c, mm, tiling)
        mm.set_tensor_a(ag)
        mm.set_tensor_b(ag)
        mm.set_sparse_index(ig)
        mm.iterate_all(cg)
    with pytest.raises(asc.UnsupportedConstructError, match="set_sparse_index"):
        k[1](np.zeros(256, np.float16), np.zeros(64, np.uint8), np.zeros(256, np.float32),
             make_tiling(16, 16, 16, dim=1))
