"""Matmul extras: iterate_batch over NORMAL-layout batches (explicit counts and strides,
broadcast of the smaller side, set_batch_num, the tiling's layout counts), MatmulConfig and the
get_*_config helpers (host and kernel; same result whatever the config), set_workspace; errors."""
from __future__ import annotations

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler.errors import KernelValueError

from kernels_matmul_batch import batch_kernel, batch_tiling

WS = np.zeros(1024, np.uint8)


def _inputs(batch_a, batch_b, m, n, k, seed=0, dtype=np.float16):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal((batch_a, m, k)) * 2).astype(dtype)
    b = (rng.standard_normal((batch_b, k, n)) * 2).astype(dtype)
    return a, b


def _expected(a, b):
    batch = max(len(a), len(b))
    ra, rb = batch // len(a), batch // len(b)
    return np.stack([a[i // ra].astype(np.float32) @ b[i // rb].astype(np.float32)
                     for i in range(batch)]).astype(np.float32)


def _run(kernel, a, b, tiling, batch_a, batch_b, strides=(0, 0, 0), c_len=None):
    if c_len is None:
        c_len = max(batch_a, batch_b) * a.shape[-2] * b.shape[-1]
    c = np.full(c_len, -1.0, np.float32)
    report = kernel[1](a.ravel(), b.ravel(), c, tiling, WS, batch_a, batch_b, *strides)
    return c, report


@pytest.mark.parametrize("batch_a,batch_b,m,n,k", [(2, 2, 32, 32, 32), (3, 1, 40, 24, 70),
                                                   (1, 4, 17, 33, 16), (2, 4, 64, 64, 64)])
def test_iterate_batch_normal_layout(batch_a, batch_b, m, n, k):
    a, b = _inputs(batch_a, batch_b, m, n, k, seed=m)
    tiling = batch_tiling(batch_a, batch_b, m, n, k)
    c, report = _run(batch_kernel(), a, b, tiling, batch_a, batch_b)
    np.testing.assert_allclose(c.reshape(-1, m, n), _expected(a, b), rtol=1e-6, atol=1e-5)
    assert report.instructions["matmul_iterate_all"] == max(batch_a, batch_b)


def test_batch_costs_scale_with_the_batch_count():
    a, b = _inputs(4, 4, 64, 64, 64)
    tiling = batch_tiling(4, 4, 64, 64, 64)
    _, r1 = _run(batch_kernel(), a[:1], b[:1], tiling, 1, 1)
    _, r4 = _run(batch_kernel(), a, b, tiling, 4, 4)
    assert r4.pipe_busy["M"] == 4 * r1.pipe_busy["M"] > 0


def test_matrix_strides():
    """Batches 100 elements apart in A (padding between them) and C."""
    m, n, k = 16, 16, 16
    rng = np.random.default_rng(3)
    a_pad = (rng.standard_normal(2 * (m * k + 100))).astype(np.float16)
    b = (rng.standard_normal((2, k, n))).astype(np.float16)
    tiling = batch_tiling(2, 2, m, n, k)
    c, _ = _run(batch_kernel(), a_pad, b, tiling, 2, 2, (m * k + 100, 0, m * n + 50),
                c_len=2 * (m * n + 50))
    for i in range(2):
        ai = a_pad[i * (m * k + 100):][:m * k].reshape(m, k).astype(np.float32)
        np.testing.assert_allclose(c[i * (m * n + 50):][:m * n].reshape(m, n),
                                   ai @ b[i].astype(np.float32), rtol=1e-6, atol=1e-5)
    assert (c[m * n:m * n + 50] == -1.0).all()      # the gap of C untouched


@pytest.mark.parametrize("form", ["cube", "layout"])
def test_cube_only_form_takes_the_batch_counts(form):
    a, b = _inputs(2, 1, 32, 48, 32, seed=5)
    tiling = batch_tiling(2, 1, 32, 48, 32)
    c, _ = _run(batch_kernel(form), a, b, tiling, 2, 1)
    np.testing.assert_allclose(c.reshape(-1, 32, 48), _expected(a, b), rtol=1e-6, atol=1e-5)


@pytest.mark.parametrize("config", ["normal", "mdl", "mm", "record"])
def test_configs_do_not_change_the_result(config):
    a, b = _inputs(2, 2, 48, 40, 24, seed=9)
    tiling = batch_tiling(2, 2, 48, 40, 24)
    c0, _ = _run(batch_kernel(), a, b, tiling, 2, 2)
    c1, _ = _run(batch_kernel(config=config), a, b, tiling, 2, 2)
    np.testing.assert_array_equal(c0, c1)


def test_bad_batch_counts_stop_at_the_call():
    a, b = _inputs(3, 2, 16, 16, 16)
    tiling = batch_tiling(3, 2, 16, 16, 16)
    with pytest.raises(asc.KernelAssertionError) as info:
        _run(batch_kernel(), a, b, tiling, 3, 2)
    assert "batch_a and batch_b must be >= 1 and the larger a multiple" in str(info.value)
    assert info.value.loc.file.endswith("kernels_matmul_batch.py")


def test_config_helpers_on_the_host():
    cfg = asc.adv.get_basic_config(64, 128, 32)
    assert cfg.do_basic_block and not cfg.do_norm and (cfg.basic_m, cfg.basic_n) == (64, 128)
    assert asc.adv.get_normal_config().do_norm
    assert asc.adv.get_mdl_config().do_multi_data_load
    assert asc.adv.get_special_mdl_config().do_special_mdl
    assert asc.adv.get_ib_share_norm_config().do_ib_share_norm
    sb = asc.adv.get_special_basic_config(16, 16, 16, 64, 64, 64, 2, 2)
    assert sb.do_special_basic_block and sb.step_m == 2
    mm = asc.adv.get_mm_config(asc.MatmulConfigMode.CONFIG_IBSHARE,
                               asc.adv.MatmulShapeParams(128, 128, 64, 64, 64, 32),
                               asc.adv.MatmulQuantParams(True, False))
    assert mm.do_ib_share_norm and mm.single_core_k == 64 and mm.is_per_tensor
    with pytest.raises(ValueError):
        asc.adv.MatmulConfig(batch_mode=7)
    with pytest.raises(ValueError):
        asc.adv.get_mm_config(asc.adv.MatmulShapeParams(), asc.adv.MatmulShapeParams())


def test_runtime_config_argument_is_an_error():
    @asc.kernel(kernel_type=asc.KernelType.AIC_ONLY)
    def k(a: asc.GlobalAddress, m: int):
        cfg = asc.adv.get_basic_config(m, 16, 16)
    with pytest.raises(KernelValueError, match="compile-time"):
        k[1](np.zeros(16, np.float16), 16)


def test_get_matmul_api_tiling():
    cfg = asc.adv.MatmulConfig(do_norm=True, basic_m=64, basic_n=32, basic_k=16,
                               single_core_m=128, iterate_order=asc.IterateOrder.ORDER_N)
    t = asc.adv.get_matmul_api_tiling(cfg, 524288)
    assert (t.base_m, t.base_n, t.base_k, t.single_core_m, t.iterate_order) == (64, 32, 16, 128, 1)
    assert t.single_core_n == -1 and t.depth_a1 == -1 and t.cfg is cfg
    with pytest.raises(ValueError, match="Norm and MDL"):
        asc.adv.get_matmul_api_tiling(asc.adv.get_basic_config(16, 16, 16))


def test_static_tiling_as_the_matmul_config_in_a_kernel():
    """pyasc's unit test's call, then the Matmul computes with the run-time tiling."""
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
            a_type = asc.adv.MatmulType(position=asc.TPosition.GM, format=asc.CubeFormat.ND,
                                        dtype=asc.float16)
            c_type = asc.adv.MatmulType(position=asc.TPosition.GM, format=asc.CubeFormat.ND,
                                        dtype=asc.float32)
            mm_cfg = asc.adv.MatmulConfig(do_norm=False,
                                          iterate_mode=asc.IterateMode.ITERATE_MODE_DEFAULT,
                                          single_core_mn=0,
                                          schedule_type=asc.ScheduleType.INNER_PRODUCT)
            static = asc.adv.get_matmul_api_tiling(mm_cfg=mm_cfg, l1_size=524288, a_type=a_type,
                                                   b_type=a_type, c_type=c_type,
                                                   bias_type=c_type)
            mm = asc.adv.Matmul(a_type, a_type, c_type, matmul_config=static)
            asc.adv.register_matmul(asc.TPipe(), c, mm, tiling)
            mm.set_tensor_a(ag)
            mm.set_tensor_b(bg)
            mm.set_tail(tiling.m, tiling.n)
            mm.iterate_all(cg)

    a, b = _inputs(1, 1, 32, 48, 64, seed=11)
    tiling = batch_tiling(1, 1, 32, 48, 64)
    c = np.zeros(32 * 48, np.float32)
    k[1](a.ravel(), b.ravel(), c, tiling)
    np.testing.assert_allclose(c.reshape(32, 48), _expected(a, b)[0], rtol=1e-6, atol=1e-5)


def test_sanitize_mode_is_clean():
    a, b = _inputs(2, 2, 32, 32, 32, seed=2)
    tiling = batch_tiling(2, 2, 32, 32, 32)
    c = np.zeros(2 * 32 * 32, np.float32)
    batch_kernel()[1](a.ravel(), b.ravel(), c, tiling, WS, 2, 2, 0, 0, 0, sanitize=True)
    np.testing.assert_allclose(c.reshape(2, 32, 32), _expected(a, b), rtol=1e-6, atol=1e-5)
