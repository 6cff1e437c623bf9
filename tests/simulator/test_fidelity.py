"""The timing model against figures measured on a 910B (issue 13): ``make fidelity``'s table.

Every calibrated row (vector cycles per repeat and the cost of a 1-repeat instruction, against
msKPP's tables) must be within its tolerance; the DMA rows are printed but not calibrated yet.
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
    assert sum(r.calibrated for r in table) >= 40


def test_the_table_covers_every_vector_cost_class():
    probed = {op for op, *_ in fidelity.VECTOR_RATES}
    classes = {REGISTRY[op].cost for op in probed}
    vector_classes = {spec.cost for spec in REGISTRY.values()
                      if spec.pipe is not None and spec.pipe.name == "PIPE_V"
                      and spec.cost not in (CostClass.NONE, CostClass.SYNC, CostClass.SCALAR,
                                            CostClass.DMA, CostClass.CONVERT)}
    assert vector_classes <= classes, vector_classes - classes


def test_dma_rows_are_measured_and_marked_uncalibrated(table):
    dma = [r for r in table if r.unit == "GiB/s"]
    assert {r.what.split()[0] for r in dma} == {"GM->UB", "UB->GM", "GM->L1"}
    assert all(r.model > 0 and not r.calibrated for r in dma)


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
