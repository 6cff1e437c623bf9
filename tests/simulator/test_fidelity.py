"""The timing model against figures measured on a 910B (issue 13): ``make fidelity``'s table.

Every calibrated row (vector cycles per repeat and the cost of a 1-repeat instruction, DMA
bandwidth of one copy per path and size, against msKPP's tables) must be within its tolerance.
"""
from __future__ import annotations

import dataclasses

import pytest

from ascendc_py import fidelity
from ascendc_py.compiler.ops import REGISTRY, CostClass
from ascendc_py.simulator.config import ASCEND910B2


@pytest.fixture(scope="module")
def table():
    return fidelity.rows(ASCEND910B2)


def test_every_calibrated_figure_is_within_its_tolerance(table):
    outside = [f"{r.what}: model {r.model:.2f} vs {r.reference:.2f} ({r.error:+.1%})"
               for r in table if r.calibrated and not r.within]
    assert not outside, "\n".join(outside)
    assert sum(r.calibrated for r in table) >= 90


def test_the_table_covers_every_vector_cost_class():
    probed = {op for op, *_ in fidelity.VECTOR_RATES}
    classes = {REGISTRY[op].cost for op in probed}
    vector_classes = {spec.cost for spec in REGISTRY.values()
                      if spec.pipe is not None and spec.pipe.name == "PIPE_V"
                      and spec.cost not in (CostClass.NONE, CostClass.SYNC, CostClass.SCALAR,
                                            CostClass.DMA, CostClass.CONVERT)}
    assert vector_classes <= classes, vector_classes - classes


def test_dma_rows_cover_every_measured_path_and_are_calibrated(table):
    dma = [r for r in table if r.unit == "GiB/s"]
    probes = {where for where, *_ in fidelity.DMA_BANDWIDTH + fidelity.CUBE_BANDWIDTH}
    assert len(dma) == len(fidelity.DMA_BANDWIDTH) + len(fidelity.CUBE_BANDWIDTH)
    assert all(r.calibrated and r.tolerance == 0.25 for r in dma)
    assert {"GM->UB strided", "GM->UB pad"} <= probes
    # every measured path has rows, but GM->L0B, the twin of GM->L0A
    measured = {(p.src, p.dst) for p in ASCEND910B2.dma.paths() if p.measured}
    assert {tuple(w.split("->")) for w in probes if " " not in w} == measured - {("GM", "L0B")}


def test_a_miscalibrated_dma_config_is_caught():
    # the model before calibration: GM->UB = 347 cycles + bytes at the 128 B/cycle width
    old = dataclasses.replace(ASCEND910B2.dma.gm_to_ub, latency_cycles=347, measured=(),
                              plateau_gib_per_s=0.0)
    wrong = dataclasses.replace(ASCEND910B2, name="dma-uncalibrated", dma=dataclasses.replace(
        ASCEND910B2.dma, gm_to_ub=old))
    rows = {kib: fidelity._copy_gib_per_s("GM->UB", kib, wrong) for kib in (1, 128)}
    assert rows[1] < 7.29 * 0.75 and rows[128] > 78.49 * 1.25


def test_a_miscalibrated_config_is_caught():
    # the figure the model had before calibration: div float32 at the CA table's 2 cycles
    vec = ASCEND910B2.vector
    wrong = dataclasses.replace(ASCEND910B2, name="div-at-2", vector=dataclasses.replace(
        vec, div=dataclasses.replace(vec.div, cycles_per_repeat_f32=2)))
    assert fidelity.vector_rate("div", "float32", wrong) == 2.0
    assert fidelity.vector_rate("div", "float32", ASCEND910B2) == 4.0


def test_the_command_prints_the_table_and_the_summary(capsys):
    assert fidelity.main(["--markdown"]) == 0
    out = capsys.readouterr().out
    assert "| figure | unit | model |" in out and "calibrated figures" in out
