"""The Matmul in mix kernels, run for real on the sub-core runtime: a kernel using the Matmul
API is MIX_AIC_1_2 (pyasc's rule); each block is 1 AIC + 2 AIV, the AIVs number themselves
2 * block + sub-block, register_matmul on the AIC makes it the Matmul server (then its kernel
ends): the AIVs compute the results, but every request is timed on the AIC's cube pipes at the
full rate (``compiler/codegen/lower_mmserver.py``), and the AIV's scalar unit waits for the
result. Cube-only kernels run the Matmul on their AIC too."""
from __future__ import annotations

import json

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler.ops.matmul import matmul_reference
from ascendc_py.dsl.types import PIPE_NAMES
from ascendc_py.simulator.xcore_layout import CROSS_CORE_LATENCY

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
def test_the_aic_of_a_mix_kernel_times_the_aivs_requests(dim):
    """The AIVs compute (had the AIC gone on after register_matmul, block index b <
    used_core_num would have made it run iterate_all too), the AIC's cube pipes do the work:
    the AIVs that sent a request show no cube pipe and a matmul wait, the others idle."""
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
        assert all(_busy(t)[p] > 0 for p in CUBE_PIPES), _busy(t)
    for t in _units(report, "AIV0") + _units(report, "AIV1"):
        computed = 2 * t.block + t.sub < tiling.used_core_num
        assert not any(_busy(t)[p] for p in CUBE_PIPES), (t.label, t.block)
        assert t.mm_waits == int(computed) and (t.mm_wait > 0) == computed, (t.label, t.block)
        assert t.cycles >= t.mm_wait   # (the AIV served second ends with its AIC)


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


def test_the_aic_serves_at_the_full_cube_rate():
    """A mix kernel's request takes the same cube pipe time on its AIC as the cube-only
    kernel's call (MIX_AIC_1_2 and MIX_AIC_1_1 alike): the AIC's cube serves its AIVs in turn
    rather than at a fixed share each."""
    a, b = _ones()
    _, full, tiling = K.run_all(a, b, "float32", dim=1)
    _, mix, _ = K.run_all(a, b, "float32", dim=1, mix=True)
    c = np.zeros((128, 256), np.float32)
    one_one = mm_all_1_1[tiling.used_core_num](a, b, c, np.zeros(256, np.float32), tiling, False)
    assert one_one.kernel_type == "MIX_AIC_1_1" and (c == 128).all()
    for r in (mix, one_one):
        (aic,) = _units(r, "AIC")
        assert {p: _busy(aic)[p] for p in CUBE_PIPES} == {
            p: full.pipe_busy[p] for p in CUBE_PIPES}
        assert r.pipe_busy["M"] == full.pipe_busy["M"]
        # the result reaches the AIV one message latency after its FIX, which was sent one
        # latency after the request
        (aiv0,) = [t for t in r._blocks if t.core_type == 0 and t.sub == 0]
        assert 0 < r.kernel_cycles - full.kernel_cycles <= \
            2 * CROSS_CORE_LATENCY + aiv0.scalar_busy + 10


def test_mix_and_cube_only_matmul_take_about_the_same_time():
    """2048^3 float16 on 24 AI Cores: the mix kernel (48 AIVs, two requests per AIC, served in
    turn at the full rate; only the AICs move GM data, sharing HBM by what they move) and the
    cube-only kernel (24 AICs) are within 10 % of each other."""
    a = np.ones((2048, 2048), np.float16)
    _, cube, _ = K.run_all(a, a, "float32", dim=24)
    c, mix, tiling = K.run_all(a, a, "float32", dim=48, mix=True)
    assert c[0, 0] == c[-1, -1] == 2048 and mix.block_dim == 24
    assert abs(mix.cycles / cube.cycles - 1) < 0.10, (mix.cycles, cube.cycles)
    assert mix.bottleneck in ("M", "MTE2")


def test_served_order_does_not_depend_on_host_threads():
    """The AIC serves its AIVs' requests in (simulated time, sub-block) order: repeated
    launches give the same cycles on every sub-core."""
    m, n, k = 512, 768, 256
    a = np.ones((m, k), np.float16)
    b = np.ones((k, n), np.float16)
    runs = []
    for _ in range(3):
        _, r, _ = K.run_all(a, b, "float32", dim=8, mix=True)
        runs.append([(t.block, t.label, t.cycles, t.mm_wait, tuple(t.pipe_busy.tolist()))
                     for t in r._blocks])
    assert runs[0] == runs[1] == runs[2]


def test_mix_report_and_trace_show_the_cube_pipes_on_the_aic(tmp_path):
    a, b = _ones()
    c, report, _ = K.run_all(a, b, "float32", dim=2, mix=True, trace=True)
    rows = dict(report.subcore_rows)
    for pipe in CUBE_PIPES:
        assert f" {pipe} " in rows["  AIC"], rows
        assert f" {pipe} 0.0 %" not in rows["  AIC"], rows
    for label in ("AIV0", "AIV1"):
        assert "matmul wait" in rows[f"  {label}"] and "(1 requests)" in rows[f"  {label}"]
    (aic,) = _units(report, "AIC")
    for pipe in CUBE_PIPES:    # the report's cube pipe figures are the AIC's
        assert report.pipe_busy[pipe] == _busy(aic)[pipe] > 0
    assert report.bottleneck in CUBE_PIPES
    events = json.loads(open(report.save_trace(tmp_path / "mix.json")).read())["traceEvents"]
    lanes = {e["tid"] for e in events if e.get("ph") == "X"}
    for pipe in CUBE_PIPES:
        assert f"AIC.{pipe}" in lanes, lanes
    assert not any(lane.split(".")[1] in CUBE_PIPES for lane in lanes
                   if lane.startswith("AIV")), lanes
    waits = [e for e in events if e.get("ph") == "X" and e["tid"] in ("AIV0.S", "AIV1.S")]
    assert {e["name"] for e in waits} == {"matmul_iterate_all"} and len(waits) == 2
    report.plot(tmp_path / "mix.png")
    from ascendc_py.simulator.trace import plot_trace_file
    assert plot_trace_file(tmp_path / "mix.json", tmp_path / "aic.png", subcore="AIC")
    with pytest.raises(ValueError, match=r"sub-core 'AIV2' on core 0 \(it has: AIC, AIV0, AIV1\)"):
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


@asc.kernel(kernel_type=asc.KernelType.MIX_AIC_1_2)
def _mm_aiv_registers(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
                      tiling: asc.adv.TCubeTiling, wait_forever: asc.ConstExpr[bool]):
    """register_matmul only on the AIVs: the AIC never serves. With ``wait_forever`` AIV0 waits
    for a flag nobody sets (while the AIC serves)."""
    if asc.ascend_is_aiv() or wait_forever:
        ag, bg, cg = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
        ag.set_global_buffer(a)
        bg.set_global_buffer(b)
        cg.set_global_buffer(c)
        mm = asc.adv.Matmul(
            a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, ag.dtype),
            b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, bg.dtype),
            c=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, cg.dtype))
        asc.adv.register_matmul(asc.TPipe(), c, mm, tiling)
        if wait_forever:
            asc.cross_core_wait_flag(3)
        if asc.get_block_idx() == 0:
            mm.set_tensor_a(ag)
            mm.set_tensor_b(bg)
            mm.iterate_all(cg)
            mm.end()


def test_an_aiv_without_a_serving_aic_times_its_request_itself():
    """The AIC never reached register_matmul (it finished): AIV0's request falls back to its
    own cube pipes at CUBE_RATE 0.5 (twice the AIC's M pipe time), no wait is recorded."""
    a, b = _ones()
    tiling = K.make_tiling(128, 256, 128, dim=1)
    c = np.zeros((128, 256), np.float32)
    report = _mm_aiv_registers[1](a, b, c, tiling, False)
    assert (c == 128).all()
    _, full, _ = K.run_all(a, b, "float32", dim=1)
    (aiv0,) = _units(report, "AIV0")
    assert _busy(aiv0)["M"] == 2 * full.pipe_busy["M"] and aiv0.mm_waits == 0
    (aic,) = _units(report, "AIC")
    assert not any(_busy(aic)[p] for p in CUBE_PIPES)


def test_a_serving_aic_does_not_hide_a_deadlock():
    """The idle server counts as blocked for the deadlock scan: an AIV waiting for a flag only
    it could have got is a CrossCoreDeadlockError, not a hang."""
    a, b = _ones()
    tiling = K.make_tiling(128, 256, 128, dim=1)
    c = np.zeros((128, 256), np.float32)
    with pytest.raises(asc.CrossCoreDeadlockError):
        _mm_aiv_registers[1](a, b, c, tiling, True)
