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
