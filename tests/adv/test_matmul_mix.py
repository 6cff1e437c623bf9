"""The Matmul in mix kernels, run for real on the sub-core runtime: a kernel using the Matmul
API is MIX_AIC_1_2 (pyasc's rule); each block is 1 AIC + 2 AIV, the AIVs number themselves
2 * block + sub-block, register_matmul on the AIC ends that sub-core's kernel (it is the matmul
server), and the AIVs execute the Matmul calls with the cube pipes timed at CUBE_RATE 0.5 (two
AIVs share one cube). Cube-only kernels run the Matmul on their AIC at the full rate."""
from __future__ import annotations

import json

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler.ops.matmul import matmul_reference
from ascendc_py.dsl.types import PIPE_NAMES

import kernels_matmul as K

CUBE_PIPES = ("M", "MTE1", "MTE2", "FIX")

#: the mix kernel with one AIV per AI Core: that AIV has the whole cube (CUBE_RATE 1.0)
mm_all_1_1 = asc.kernel(kernel_type=asc.KernelType.MIX_AIC_1_1)(K.mm_all_mix.fn)


def _ones(m=128, n=256, k=128):
    return np.ones((m, k), np.float16), np.ones((k, n), np.float16)


def _units(report, label):
    return [t for t in report._blocks if t.label == label]


def _busy(t) -> dict:
    return dict(zip(PIPE_NAMES, t.pipe_busy.tolist()))


def test_matmul_kernels_are_mix_unless_cube_only():
    a, b = _ones()
    c, mix, _ = K.run_all(a, b, "float32", dim=1, mix=True)
    assert mix.kernel_type == "MIX_AIC_1_2"
    c, cube, _ = K.run_all(a, b, "float32", dim=1)
    assert cube.kernel_type == "AIC_ONLY"
    assert {t.label for t in cube._blocks} == {"AIC"}
    assert {t.label for t in mix._blocks} == {"AIC", "AIV0", "AIV1"}


@pytest.mark.parametrize("dim", [1, 2, 5, 8])
def test_register_matmul_ends_the_aic_of_a_mix_kernel(dim):
    """Only the AIVs compute: the AIC's kernel ended at register_matmul (had it gone on, block
    index b < used_core_num would have made it run iterate_all too)."""
    m, n, k = 200, 300, 64
    rng = np.random.default_rng(dim)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float16)
    c, report, tiling = K.run_all(a, b, "float32", dim=dim, mix=True)
    asc.testing.assert_close(c, matmul_reference(a, b), rtol=1e-4, atol=1e-4)
    assert report.block_dim == K.mix_blocks(tiling)
    assert report.instructions["matmul_iterate_all"] == tiling.used_core_num
    aics = _units(report, "AIC")
    assert len(aics) == report.block_dim
    for t in aics:
        busy = _busy(t)
        assert not any(v for p, v in busy.items() if p != "S"), busy   # only scalar code ran
        assert t.cycles < 1000
    # the AIVs with 2 * block + sub < used_core_num computed, the others idled
    for t in _units(report, "AIV0") + _units(report, "AIV1"):
        computed = 2 * t.block + t.sub < tiling.used_core_num
        assert all((_busy(t)[p] > 0) == computed for p in CUBE_PIPES), (t.label, t.block)


def test_all_sub_cores_of_a_mix_kernel_run_the_matmul_right():
    a, b = _ones()
    c, report, tiling = K.run_all(a, b, "float32", dim=2, mix=True)
    assert (c == 128).all()
    assert report.instructions["matmul_iterate_all"] == tiling.used_core_num == 2
    assert report.block_dim == 1


def test_cube_only_kernel_runs_the_matmul_on_its_aic():
    a, b = _ones()
    c, report, tiling = K.run_all(a, b, "float32", dim=1)
    assert (c == 128).all()
    assert report.instructions["matmul_iterate_all"] == 1
    (aic,) = _units(report, "AIC")
    assert all(_busy(aic)[p] > 0 for p in CUBE_PIPES)


def test_cube_rate_scales_the_cube_pipes():
    """Each AIV of a MIX_AIC_1_2 AI Core has half the cube: the same single-core product takes
    twice the M pipe time on it as on the AIC of a cube-only kernel (or the AIV of 1:1)."""
    a, b = _ones()
    _, full, tiling = K.run_all(a, b, "float32", dim=1)
    _, half, _ = K.run_all(a, b, "float32", dim=1, mix=True)
    c = np.zeros((128, 256), np.float32)
    one_one = mm_all_1_1[tiling.used_core_num](a, b, c, np.zeros(256, np.float32), tiling, False)
    assert one_one.kernel_type == "MIX_AIC_1_1" and (c == 128).all()
    assert half.pipe_busy["M"] == 2 * full.pipe_busy["M"]
    assert half.cycles > 1.5 * full.cycles
    assert one_one.pipe_busy["M"] == full.pipe_busy["M"]
    (aiv0,) = _units(half, "AIV0")
    assert _busy(aiv0)["M"] == half.pipe_busy["M"]
    (aic,) = _units(full, "AIC")
    assert _busy(aic)["M"] == full.pipe_busy["M"]


def test_mix_report_and_trace_show_the_aiv_cube_pipes(tmp_path):
    a, b = _ones()
    c, report, _ = K.run_all(a, b, "float32", dim=2, mix=True, trace=True)
    rows = dict(report.subcore_rows)
    for label in ("AIV0", "AIV1"):
        for pipe in CUBE_PIPES:
            assert f" {pipe} " in rows[f"  {label}"], rows
    events = json.loads(open(report.save_trace(tmp_path / "mix.json")).read())["traceEvents"]
    lanes = {e["tid"] for e in events if e.get("ph") == "X"}
    for label in ("AIV0", "AIV1"):
        for pipe in CUBE_PIPES:
            assert f"{label}.{pipe}" in lanes, lanes
    assert not any(lane.startswith("AIC.") and lane != "AIC.S" for lane in lanes), lanes
    report.plot(tmp_path / "mix.png")
    from ascendc_py.simulator.trace import plot_trace_file
    assert plot_trace_file(tmp_path / "mix.json", tmp_path / "aiv1.png", subcore="AIV1")
    with pytest.raises(ValueError, match=r"sub-core 'AIV2' on core 0 \(it has: AIV0, AIV1\)"):
        plot_trace_file(tmp_path / "mix.json", tmp_path / "x.png", subcore="AIV2")


def test_a_vector_kernel_may_hold_matmul_code_it_never_runs():
    """The check is at run time, like the sub-cores' memory checks: in an explicit AIV_ONLY
    kernel the Matmul under ``asc.ascend_is_aic()`` is dead code (the calling one is a
    CoreMemoryError, tests/adv/test_errors.py)."""
    guarded = asc.kernel(kernel_type=asc.KernelType.AIV_ONLY)(K.mm_all.fn)
    a, b = _ones()
    tiling = K.make_tiling(128, 256, 128, dim=1)
    c = np.zeros((128, 256), np.float32)
    report = guarded[1](a, b, c, np.zeros(256, np.float32), tiling, False, False, False)
    assert report.kernel_type == "AIV_ONLY" and not c.any()
    assert "matmul_iterate_all" not in report.instructions
