"""The host matmul tiling (ascendc_py.host.MultiCoreMatmulTiling): every tiling fits the
buffers, covers the matrix with at most ``dim`` cores, has valid tails, honours fixed splits
and the traverse order, over shapes, dtypes and core counts."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import ascendc_py as asc
from ascendc_py import host

SIZES = {host.DataType.DT_FLOAT16: 2, host.DataType.DT_BF16: 2, host.DataType.DT_FLOAT: 4,
         host.DataType.DT_INT8: 1}
K0 = {1: 32, 2: 16, 4: 8}
OUT = {host.DataType.DT_INT8: host.DataType.DT_INT32}
KB = 1024


def tiling_for(m, n, k, dtype=host.DataType.DT_FLOAT16, dim=24, bias=False, fixed=None,
               traverse=None):
    t = host.MultiCoreMatmulTiling(host.PlatformAscendCManager.get_instance("Ascend910B2"))
    t.set_a_type(host.TPosition.GM, host.CubeFormat.ND, dtype, False)
    t.set_b_type(host.TPosition.GM, host.CubeFormat.ND, dtype, False)
    t.set_c_type(host.TPosition.GM, host.CubeFormat.ND, OUT.get(dtype, host.DataType.DT_FLOAT))
    t.set_bias_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT)
    t.set_dim(dim)
    t.set_org_shape(m, n, k)
    t.set_shape(m, n, k)
    t.enable_bias(bias)
    t.set_buffer_space(-1, -1, -1)
    if fixed:
        t.set_fix_split(*fixed)
    if traverse is not None:
        t.set_traverse(traverse)
    tiling = asc.adv.TCubeTiling()
    assert t.get_tiling(tiling) == 0
    return tiling


def check_invariants(tl, m, n, k, es, dim, bias=False):
    # shapes
    assert (tl.m, tl.n, tl.k_a, tl.k_b, tl.single_core_k) == (m, n, k, k, k)
    # covering: the single-core blocks tile M x N with used_core_num <= dim cores
    mb, nb = -(-m // tl.single_core_m), -(-n // tl.single_core_n)
    assert tl.used_core_num == mb * nb <= dim
    assert tl.single_core_m * mb >= m and tl.single_core_m * (mb - 1) < m
    assert tl.single_core_n * nb >= n and tl.single_core_n * (nb - 1) < n
    # the tails of the last blocks are positive
    assert 0 < m - (mb - 1) * tl.single_core_m <= tl.single_core_m
    assert 0 < n - (nb - 1) * tl.single_core_n <= tl.single_core_n
    # base tiles: fractal-aligned and fitting L0A/L0B (double-buffered) and L0C
    assert tl.base_m % 16 == 0 and tl.base_n % 16 == 0 and tl.base_k % K0[es] == 0
    assert tl.db_l0a == 2 and tl.db_l0b == 2 and tl.db_l0c in (1, 2)
    assert tl.base_m * tl.base_k * es * tl.db_l0a <= 64 * KB
    assert tl.base_k * tl.base_n * es * tl.db_l0b <= 64 * KB
    assert tl.base_m * tl.base_n * 4 * tl.db_l0c <= 128 * KB
    # L1: depth_a1 A blocks + depth_b1 B blocks (+ the bias row) fit 512 KB
    l1 = (tl.depth_a1 * tl.base_m * tl.base_k + tl.depth_b1 * tl.base_k * tl.base_n) * es
    assert l1 + (tl.base_n * 4 if bias else 0) <= 512 * KB
    assert 1 <= tl.step_k_a <= tl.depth_a1 and 1 <= tl.step_k_b <= tl.depth_b1
    assert tl.step_k_a <= -(-k // tl.base_k)
    assert tl.is_bias == int(bias)


@given(m=st.integers(1, 5000), n=st.integers(1, 5000), k=st.integers(1, 5000),
       dtype=st.sampled_from(list(SIZES)), dim=st.integers(1, 48), bias=st.booleans())
def test_tiling_invariants(m, n, k, dtype, dim, bias):
    tl = tiling_for(m, n, k, dtype, dim, bias)
    check_invariants(tl, m, n, k, SIZES[dtype], dim, bias)


@pytest.mark.parametrize("shape", [(4096, 4096, 4096), (1000, 1200, 700), (128, 30720, 64),
                                   (512, 1024, 512), (1, 1, 1), (17, 33, 9)])
def test_tiling_examples(shape):
    tl = tiling_for(*shape)
    check_invariants(tl, *shape, 2, 24)


def test_large_square_uses_every_core_and_the_big_base_tile():
    tl = tiling_for(4096, 4096, 4096)
    assert tl.used_core_num == 24
    assert (tl.base_m, tl.base_n, tl.base_k) == (128, 256, 64)
    assert tl.single_core_m * tl.single_core_n * 24 >= 4096 * 4096


def test_fixed_split_and_traverse_are_honoured():
    # tutorial 05: set_fix_split(256, 128, -1) and FIRSTM over 2 cores
    tl = tiling_for(1024, 640, 256, dim=2, bias=True, fixed=(256, 128, -1),
                    traverse=host.MatrixTraverse.FIRSTM)
    assert (tl.base_m, tl.base_n) == (256, 128)
    assert tl.iterate_order == 0
    assert tl.single_core_m % tl.base_m == 0   # the tutorial's round_m = single_core_m // base_m
    check_invariants(tl, 1024, 640, 256, 2, 2, True)
    tl = tiling_for(1024, 640, 256, dim=2, traverse=host.MatrixTraverse.FIRSTN)
    assert tl.iterate_order == 1


def test_small_shapes_shrink_the_base_tile():
    tl = tiling_for(20, 40, 10, dim=1)
    assert (tl.base_m, tl.base_n, tl.base_k) == (32, 48, 16)
    assert tl.used_core_num == 1


def test_bad_parameters_are_clear_errors():
    t = host.MultiCoreMatmulTiling()
    with pytest.raises(host.TilingError, match="set_shape"):
        t.get_tiling(asc.adv.TCubeTiling())
    t.set_shape(64, 64, 64)
    t.set_fix_split(512, 512, 256)
    with pytest.raises(host.TilingError, match="does not fit"):
        t.get_tiling(asc.adv.TCubeTiling())
    t.set_fix_split(100, -1, -1)
    with pytest.raises(host.TilingError, match="multiples of 16"):
        t.get_tiling(asc.adv.TCubeTiling())
    t = host.MultiCoreMatmulTiling()
    t.set_a_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_INT16, False)
    t.set_b_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_INT16, False)
    t.set_shape(64, 64, 64)
    with pytest.raises(host.TilingError, match="not supported"):
        t.get_tiling(asc.adv.TCubeTiling())
    with pytest.raises(TypeError, match="TCubeTiling"):
        t.get_tiling({})


def test_tcube_tiling_record():
    tl = asc.adv.TCubeTiling(m=3, step_ka=2)
    assert tl.m == 3 and tl.step_k_a == 2 and tl.step_ka == 2 and tl.n == 0
    assert len(tl.values()) == len(asc.adv.TCUBE_TILING_FIELDS) == 49
    with pytest.raises(AttributeError, match="no field 'foo'"):
        tl.foo = 1
    with pytest.raises(ValueError, match="int32"):
        tl.m = 2 ** 40
    assert tl == asc.adv.TCubeTiling(m=3, step_k_a=2)


def test_platform_queries():
    p = host.PlatformAscendCManager.get_instance("Ascend910B2")
    assert p.get_core_num() == 24 and p.get_core_num_aiv() == 48
    assert p.get_core_mem_size("L0_C") == 128 * KB and p.get_core_mem_size("L1") == 512 * KB


# --------------------------------------------------------------------------- pyasc's whole API
def api_tiling(cls=host.MatmulApiTiling, shape=(32, 16, 8)):
    t = cls(host.PlatformAscendCManager.get_instance("Ascend910B1"))
    t.set_shape(*shape)
    return t


def tiled(t):
    tl = asc.adv.TCubeTiling()
    assert t.get_tiling(tl) == 0
    return tl


@pytest.mark.parametrize("cls", [host.MatmulApiTiling, host.MultiCoreMatmulTiling,
                                 host.BatchMatmulTiling])
def test_fix_split_may_cover_a_short_k(cls):
    """set_fix_split(32, 16, 8) on float16 (K0 = 16): base_k 8 is the whole K, which L0
    pads to K0 as the cube does; get_base_* report the fixed split before get_tiling."""
    t = api_tiling(cls)
    assert t.set_fix_split(32, 16, 8) == 0
    assert (t.get_base_m(), t.get_base_n(), t.get_base_k()) == (32, 16, 8)
    tl = tiled(t)
    assert (tl.base_m, tl.base_n, tl.base_k) == (32, 16, 8)
    assert (tl.m, tl.n, tl.k_a, tl.k_b, tl.single_core_k) == (32, 16, 8, 8, 8)
    # a base_k below K0 that does not cover K is an error
    t = api_tiling(cls, (32, 16, 64))
    t.set_fix_split(32, 16, 8)
    with pytest.raises(host.TilingError, match="base_k of 16"):
        t.get_tiling(asc.adv.TCubeTiling())


def test_single_shape_is_honoured_and_splits_k():
    t = api_tiling(host.MultiCoreMatmulTiling, (32, 32, 32))
    assert t.set_single_shape(32, 16, 8) == 0
    tl = tiled(t)
    assert (tl.single_core_m, tl.single_core_n, tl.single_core_k) == (32, 16, 8)
    assert tl.used_core_num == 1 * 2 * 4 and tl.base_k == 8
    assert t.get_single_shape() == (32, 16, 8)
    assert t.get_core_num() == (8, 1, 2)
    # more blocks than cores: a clear error
    t.set_dim(4)
    with pytest.raises(host.TilingError, match="fits 4 cores"):
        t.get_tiling(asc.adv.TCubeTiling())


def test_core_num_and_dim():
    t = api_tiling(host.MultiCoreMatmulTiling, (32, 32, 32))
    t.set_dim(1)
    tiled(t)
    assert t.get_core_num() == (1, 1, 1)
    t = api_tiling(host.MultiCoreMatmulTiling, (4096, 4096, 4096))
    t.set_dim(24)
    tl = tiled(t)
    used, m_dim, n_dim = t.get_core_num()
    assert used == tl.used_core_num == m_dim * n_dim <= 24
    assert m_dim == -(-4096 // tl.single_core_m) and n_dim == -(-4096 // tl.single_core_n)
    with pytest.raises(host.TilingError, match="set_dim"):
        t.set_dim(0)


def test_split_k_align_and_ranges():
    t = api_tiling(host.MultiCoreMatmulTiling, (64, 64, 4096))
    t.set_dim(8)
    assert t.enable_multi_core_split_k(True) is None
    tl = tiled(t)
    k_dim = -(-4096 // tl.single_core_k)
    assert k_dim > 1 and tl.used_core_num == t.get_core_num()[1] * t.get_core_num()[2] * k_dim
    assert tl.used_core_num <= 8 and tl.base_k <= tl.single_core_k
    # without it K stays whole
    t = api_tiling(host.MultiCoreMatmulTiling, (64, 64, 4096))
    t.set_dim(8)
    assert tiled(t).single_core_k == 4096
    # alignment of the single-core block
    t = api_tiling(host.MultiCoreMatmulTiling, (1000, 1000, 64))
    assert t.set_align_split(64, 96, -1) == 0
    tl = tiled(t)
    assert tl.single_core_m % 64 == 0 and tl.single_core_n % 96 == 0
    # single range: bounds on the single-core block
    t = api_tiling(host.MultiCoreMatmulTiling, (1024, 1024, 64))
    assert t.set_single_range(256, 512, -1, 256, 512, -1) == 0
    tl = tiled(t)
    assert (tl.single_core_m, tl.single_core_n) == (256, 512)
    # split range: bounds on the base tile
    t = api_tiling(host.MatmulApiTiling, (1024, 1024, 1024))
    assert t.set_split_range(64, 64, 32, -1, -1, -1) == 0
    tl = tiled(t)
    assert (tl.base_m, tl.base_n, tl.base_k) == (64, 64, 32)


def test_split_range_minimum_is_aligned_up_and_kept():
    t = api_tiling(host.MatmulApiTiling, (1024, 1024, 1024))
    t.set_split_range(-1, -1, -1, 16, 16, 100)
    tl = tiled(t)
    # 100 aligned up to K0 = 16; L0B then holds 2 x 112 x base_n: base_n shrinks, not base_k
    assert (tl.base_m, tl.base_n, tl.base_k) == (128, 128, 112)


def test_double_buffer_and_layouts_and_batches():
    t = api_tiling(host.MatmulApiTiling, (256, 256, 256))
    one = tiled(t)
    assert one.depth_a1 == 2 * one.step_k_a and one.db_l0c in (1, 2)
    assert t.set_double_buffer(False, True, False, True) == 0
    tl = tiled(t)
    assert tl.depth_a1 == tl.step_k_a and tl.depth_b1 == 2 * tl.step_k_b and tl.db_l0c == 1
    t = api_tiling(host.MultiCoreMatmulTiling)
    assert t.set_a_layout(2, 32, 1, 3, 64) == 0
    assert t.set_b_layout(2, 16, 1, 3, 64) == 0
    assert t.set_c_layout(2, 32, 1, 3, 16) == 0
    assert t.set_batch_num(3) == 0
    tl = tiled(t)
    assert (tl.a_layout_info_b, tl.a_layout_info_s, tl.a_layout_info_n, tl.a_layout_info_g,
            tl.a_layout_info_d) == (2, 32, 1, 3, 64)
    assert (tl.b_layout_info_s, tl.c_layout_info_s1, tl.c_layout_info_s2) == (16, 32, 16)
    assert tl.batch_num == 3
    t = api_tiling(host.BatchMatmulTiling, (1, 1, 1))
    assert t.set_batch_info_for_normal(3, 2, 32, 256, 64) == 0
    tl = tiled(t)
    assert (tl.m, tl.n, tl.k_a, tl.batch_num) == (32, 256, 64, 3)
    assert (tl.a_layout_info_b, tl.a_layout_info_s, tl.a_layout_info_d) == (3, 32, 64)
    assert (tl.b_layout_info_b, tl.b_layout_info_s, tl.b_layout_info_d) == (2, 256, 64)
    assert (tl.c_layout_info_b, tl.c_layout_info_s1, tl.c_layout_info_s2) == (3, 32, 256)
    assert t.get_core_num() == (1, 1, 1, 1, 1)
    with pytest.raises(host.TilingError, match="batch count"):
        t.set_batch_num(0)


def test_config_params_mad_type_dequant_and_sparse():
    t = api_tiling(host.MatmulApiTiling, (32, 256, 64))
    params = host.MatmulConfigParams(1, False, host.ScheduleType.OUTER_PRODUCT,
                                     host.MatrixTraverse.FIRSTN, False)
    assert t.set_matmul_config_params(params) is None
    assert tiled(t).iterate_order == 1          # the config's traverse
    assert t.set_matmul_config_params(0, False, host.ScheduleType.INNER_PRODUCT,
                                      host.MatrixTraverse.NOSET) is None
    assert tiled(t).iterate_order == 1          # NOSET keeps the traverse
    with pytest.raises(host.TilingError, match="mm_config_type"):
        t.set_matmul_config_params(5)
    assert t.set_dequant_type(host.DequantType.TENSOR) == 0
    assert t.set_mad_type(host.MatrixMadType.NORMAL) == 0
    tiled(t)
    t.set_mad_type(host.MatrixMadType.HF32)
    with pytest.raises(host.TilingError, match="HF32"):
        t.get_tiling(asc.adv.TCubeTiling())
    t = api_tiling(host.MatmulApiTiling)
    assert t.set_sparse(True) == 0
    with pytest.raises(host.TilingError, match="sparse"):
        t.get_tiling(asc.adv.TCubeTiling())


def test_single_core_tiling_uses_one_core():
    tl = tiled(api_tiling(host.MatmulApiTiling, (4096, 4096, 1024)))
    assert tl.used_core_num == 1 and tl.single_core_m == 4096 and tl.single_core_n == 4096


def test_org_shape_with_distinct_ka_kb():
    t = host.MatmulApiTiling()
    assert t.set_org_shape(32, 16, 8, 4) == 0
    tl = tiled(t)
    assert (tl.m, tl.n, tl.k_a, tl.k_b) == (32, 16, 8, 4)


def test_default_tilings_are_unchanged():
    """The pyasc additions leave the default multi-core tiling as it was (its values feed the
    pinned Matmul timings): a few reference tilings, field by field."""
    assert tiling_for(4096, 4096, 4096).values() == (
        24, 4096, 4096, 4096, 4096, 1024, 688, 4096, 128, 256, 64, 10, 10, 1, 1, 0, 0, 0, 0,
        491520, 131072, 0, 1, 1, 1, 1, 5, 5, 0, 0, 2, 2, 1) + (0,) * 15 + (1,)
    assert tiling_for(1024, 640, 256, dim=2, bias=True, fixed=(256, 128, -1)).values() == (
        2, 1024, 640, 256, 256, 512, 640, 256, 256, 128, 64, 8, 8, 1, 1, 1, 0, 0, 0, 393728,
        131072, 0, 1, 1, 1, 1, 4, 4, 0, 0, 2, 2, 1) + (0,) * 15 + (1,)
    assert tiling_for(17, 33, 9).values() == (
        6, 17, 33, 9, 9, 16, 16, 9, 16, 16, 16, 2, 2, 1, 1, 0, 0, 0, 0, 2048, 2048, 0, 1, 1, 1,
        1, 1, 1, 0, 0, 2, 2, 2) + (0,) * 15 + (1,)
