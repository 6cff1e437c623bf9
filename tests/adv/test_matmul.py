"""asc.adv.Matmul against NumPy: float16/bfloat16/float32/int8 inputs, float32/float16/bfloat16/
int32 outputs, transposed A/B, bias, shapes that are not multiples of the base tile, many
cores, iterate + get_tensor_c in both iterate orders, set_org_shape strides.

``mm_all`` and ``mm_org`` are cube-only kernels (AIC_ONLY, one AIC per block); ``mm_tiles`` and
``mm_tiles_gm`` are mix kernels (MIX_AIC_1_2: the tiling's cores are AIVs, two per block)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ascendc_py as asc
from ascendc_py import host
from ascendc_py.compiler.ops.matmul import matmul_reference

import kernels_matmul as K

SLOW = settings(deadline=None, max_examples=12, suppress_health_check=[HealthCheck.too_slow])
F32_TOL = dict(rtol=1e-4, atol=1e-4)   # float32 sums in another order than numpy's


def _inputs(m, n, k, dtype, trans_a=False, trans_b=False, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == np.int8:
        a = rng.integers(-128, 128, (m, k)).astype(np.int8)
        b = rng.integers(-128, 128, (k, n)).astype(np.int8)
    else:
        a = rng.uniform(-1, 1, (m, k)).astype(dtype)
        b = rng.uniform(-1, 1, (k, n)).astype(dtype)
    sa = np.ascontiguousarray(a.T) if trans_a else a
    sb = np.ascontiguousarray(b.T) if trans_b else b
    return a, b, sa, sb


@pytest.mark.parametrize("out", ["float32", "float16"])
@pytest.mark.parametrize("trans_a,trans_b", [(False, False), (True, False), (False, True),
                                             (True, True)])
def test_float16_transposes_and_outputs(out, trans_a, trans_b):
    m, n, k = 200, 300, 150
    a, b, sa, sb = _inputs(m, n, k, np.float16, trans_a, trans_b)
    c, report, tiling = K.run_all(sa, sb, out, trans_a=trans_a, trans_b=trans_b)
    golden = matmul_reference(a, b, out_dtype=np.dtype(out))
    asc.testing.assert_close(c, golden, **(F32_TOL if out == "float32" else {}))
    assert tiling.used_core_num > 1


@SLOW
@given(m=st.integers(1, 300), n=st.integers(1, 300), k=st.integers(1, 300),
       dim=st.integers(1, 24), with_bias=st.booleans(), seed=st.integers(0, 99))
def test_float16_odd_shapes_many_cores(m, n, k, dim, with_bias, seed):
    a, b, _, _ = _inputs(m, n, k, np.float16, seed=seed)
    bias = np.random.default_rng(seed).uniform(-1, 1, n).astype(np.float32) if with_bias \
        else None
    c, _, tiling = K.run_all(a, b, "float32", bias=bias, dim=dim)
    asc.testing.assert_close(c, matmul_reference(a, b, bias), **F32_TOL)
    assert tiling.used_core_num <= dim


def test_float32_inputs():
    a, b, _, _ = _inputs(130, 70, 45, np.float32)
    c, _, _ = K.run_all(a, b, "float32", dim=4)
    asc.testing.assert_close(c, matmul_reference(a, b), **F32_TOL)


@pytest.mark.parametrize("trans_b", [False, True])
def test_int8_is_exact(trans_b):
    a, b, sa, sb = _inputs(77, 140, 300, np.int8, trans_b=trans_b)
    bias = np.random.default_rng(1).integers(-1000, 1000, 140).astype(np.int32)
    c, _, _ = K.run_all(sa, sb, "int32", bias=bias, trans_b=trans_b, dim=6)
    np.testing.assert_array_equal(c, matmul_reference(a, b, bias))


def test_bfloat16_in_and_out():
    torch = pytest.importorskip("torch")
    g = torch.Generator().manual_seed(0)
    a = (torch.rand((96, 64), generator=g) - 0.5).to(torch.bfloat16)
    b = (torch.rand((64, 80), generator=g) - 0.5).to(torch.bfloat16)
    bias = (torch.rand(80, generator=g) - 0.5).to(torch.bfloat16)
    c, _, _ = K.run_all(a, b, "bfloat16", bias=bias, dim=3)
    golden = (a.float() @ b.float() + bias.float()).to(torch.bfloat16)
    # one rounding of a float32 sum: at most one bfloat16 ulp from torch's rounding
    diff = (c.float() - golden.float()).abs()
    assert float((diff / golden.float().abs().clamp_min(1e-3)).max()) <= 2 ** -7
    c32, _, _ = K.run_all(a, b, "float32", dim=3)
    asc.testing.assert_close(c32.astype(np.float32) if isinstance(c32, np.ndarray) else c32,
                             (a.float() @ b.float()).numpy(), **F32_TOL)


def test_float16_output_rounds_to_nearest_even():
    # products whose float32 sums sit exactly between two float16 values
    a = np.array([[1.0, 2.0 ** -11]], np.float16)            # 1 + 2**-11: a float16 tie
    b = np.array([[1.0], [1.0]], np.float16)
    c, _, _ = K.run_all(a, b, "float16", dim=1)
    assert c[0, 0] == np.float16(1.0)                      # tie -> even
    a = np.array([[1.0 + 2.0 ** -10, 2.0 ** -11]], np.float16)
    c, _, _ = K.run_all(a, b, "float16", dim=1)
    assert c[0, 0] == np.float16(1.0 + 2.0 ** -9)           # tie -> even (upwards)


@pytest.mark.parametrize("traverse", [host.MatrixTraverse.FIRSTM, host.MatrixTraverse.FIRSTN])
def test_iterate_get_tensor_c_order(traverse):
    m, n, k = 512, 512, 96
    a, b, _, _ = _inputs(m, n, k, np.float16, seed=3)
    tiling = K.make_tiling(m, n, k, dim=2, fixed=(128, 128, -1), traverse=traverse)
    assert tiling.single_core_m % 128 == 0 and tiling.single_core_n % 128 == 0
    c = np.zeros((m, n), np.float32)
    report = K.mm_tiles[K.mix_blocks(tiling)](a, b, c, tiling)
    assert report.kernel_type == "MIX_AIC_1_2"
    asc.testing.assert_close(c, matmul_reference(a, b), **F32_TOL)
    tiles = (tiling.single_core_m // 128) * (tiling.single_core_n // 128)
    assert report.instructions["matmul_get_tensor_c"] == tiles * tiling.used_core_num


def test_get_tensor_c_to_gm_with_tails():
    m, n, k = 300, 290, 70
    a, b, _, _ = _inputs(m, n, k, np.float16, seed=4)
    tiling = K.make_tiling(m, n, k, dim=4)
    assert tiling.used_core_num == 4
    c = np.zeros((m, n), np.float32)
    K.mm_tiles_gm[K.mix_blocks(tiling)](a, b, c, tiling)
    asc.testing.assert_close(c, matmul_reference(a, b), **F32_TOL)


def test_set_org_shape_sub_matrix():
    big_a = np.random.default_rng(5).uniform(-1, 1, (64, 100)).astype(np.float16)
    big_b = np.random.default_rng(6).uniform(-1, 1, (100, 90)).astype(np.float16)
    m, n, k = 40, 50, 60
    tiling = K.make_tiling(m, n, k, dim=1)
    c = np.zeros((m, 90), np.float32)    # row stride of C is the org N (90)
    report = K.mm_org[1](big_a, big_b, c, tiling, m, n, k, 100, 90)
    assert report.kernel_type == "AIC_ONLY"
    golden = matmul_reference(big_a[:m, :k], big_b[:k, :n])
    asc.testing.assert_close(c[:, :n], golden, **F32_TOL)
    assert not c[:, n:].any()


def test_report_shows_cube_pipes_and_counts():
    a, b, _, _ = _inputs(256, 512, 256, np.float16)
    c, report, tiling = K.run_all(a, b, "float32", dim=1)
    assert report.kernel_type == "AIC_ONLY"
    for pipe in ("M", "MTE1", "MTE2", "FIX"):
        assert report.pipe_busy[pipe] > 0
    # M busy = the mmads of every base tile and base_k step, each occupying the cube for its
    # fractal steps ceil(rows/16)*ceil(cols/16)*ceil(kj/16) + the per-mmad overhead, at least
    # the minimum (CubeCosts.mmad_occupancy)
    cube = asc.current_platform().cube
    expected = 0
    for mi in range(-(-256 // tiling.base_m)):
        rows = min(tiling.base_m, 256 - mi * tiling.base_m)
        for ni in range(-(-512 // tiling.base_n)):
            cols = min(tiling.base_n, 512 - ni * tiling.base_n)
            for kj in range(0, 256, tiling.base_k):
                expected += cube.mmad_occupancy(rows, cols, min(tiling.base_k, 256 - kj),
                                                "float16")
    assert report.pipe_busy["M"] == expected
    assert report.instructions["matmul_iterate_all"] == 1
    assert report.bytes_moved["L1->L0A"] > 0 and report.bytes_moved["L0C->GM"] == 256 * 512 * 4


def test_sanitize_mode_is_clean():
    """UB tiles are recorded as written by the producer (V) side of their queue, GM rows in
    the write log: the tutorial-05 structure and multi-block mix kernels (two AIVs writing
    disjoint parts of C in each block) and cube-only iterate_all run clean."""
    m, n, k = 256, 256, 48
    a, b, _, _ = _inputs(m, n, k, np.float16, seed=8)
    tiling = K.make_tiling(m, n, k, dim=2, fixed=(128, 128, -1))
    c = np.zeros((m, n), np.float32)
    K.mm_tiles[K.mix_blocks(tiling)](a, b, c, tiling, sanitize=True)
    asc.testing.assert_close(c, matmul_reference(a, b), **F32_TOL)
    tiling = K.make_tiling(300, 290, 70, dim=4)
    a, b, _, _ = _inputs(300, 290, 70, np.float16, seed=9)
    c = np.zeros((300, 290), np.float32)
    K.mm_tiles_gm[K.mix_blocks(tiling)](a, b, c, tiling, sanitize=True)
    asc.testing.assert_close(c, matmul_reference(a, b), **F32_TOL)
    bias = np.random.default_rng(9).uniform(-1, 1, 290).astype(np.float32)
    c, _, _ = K.run_all(a, b, "float32", bias=bias, dim=4, sanitize=True)
    asc.testing.assert_close(c, matmul_reference(a, b, bias), **F32_TOL)


def test_trace_has_the_cube_pipes(tmp_path):
    import json
    from ascendc_py.simulator.trace import plot_trace_file
    a, b, _, _ = _inputs(256, 256, 256, np.float16)
    tiling = K.make_tiling(256, 256, 256, dim=1)
    c = np.zeros((256, 256), np.float32)
    report = K.mm_all[1](a, b, c, np.zeros(256, np.float32), tiling, False, False, False,
                         trace=True)
    events = json.loads(open(report.save_trace(tmp_path / "mm.json")).read())
    events = events["traceEvents"] if isinstance(events, dict) else events
    lanes = {e["tid"] for e in events if e.get("ph") == "X"}
    for pipe in ("M", "MTE1", "MTE2", "FIX"):   # the cube-only kernel's AIC lanes
        assert f"AIC.{pipe}" in lanes
    assert not any(lane.startswith("AIV") for lane in lanes)
    report.plot(tmp_path / "mm.png")
    assert (tmp_path / "mm.png").stat().st_size > 0
    plot_trace_file(tmp_path / "mm.json", tmp_path / "mm_file.png")   # the trace CLI's path
    assert (tmp_path / "mm_file.png").stat().st_size > 0
    from ascendc_py.simulator.trace import main as trace_cli
    assert trace_cli([str(tmp_path / "mm.json"), "-o", str(tmp_path / "cli.png"),
                      "--subcore", "AIC"]) == 0
    assert (tmp_path / "cli.png").stat().st_size > 0
    with pytest.raises(SystemExit) as exit_:            # a usage error, not a traceback
        trace_cli([str(tmp_path / "mm.json"), "--subcore", "AIV0"])
    assert exit_.value.code == 2
