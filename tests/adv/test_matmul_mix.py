"""The Matmul's mix-kernel behaviour, with the mix runtime's settings stood in for by patching
the launch (the mix runtime itself is another branch): register_matmul on the AIC of a mix
kernel ends that sub-core's kernel, and CUBE_RATE scales the cube-side occupancy."""
from __future__ import annotations

import numpy as np
import pytest

from ascendc_py.simulator import abi, runtime, timing_params

import kernels_matmul as K


def _launch(m=128, n=256, k=128):
    a = np.ones((m, k), np.float16)
    b = np.ones((k, n), np.float16)
    c, report, tiling = K.run_all(a, b, "float32", dim=1)
    return c, report


@pytest.fixture
def as_mix_core(monkeypatch):
    """Launch every block as the given (kernel mode, core type) sub-core."""
    def use(mode, core_type):
        original = runtime._Core.prepare

        def prepare(self, *args, **kwargs):
            ctx = original(self, *args, **kwargs)
            ctx[abi.KERNEL_MODE] = mode
            ctx[abi.CORE_TYPE] = core_type
            return ctx
        monkeypatch.setattr(runtime._Core, "prepare", prepare)
    return use


def test_register_matmul_ends_the_aic_of_a_mix_kernel(as_mix_core):
    as_mix_core(2, 1)                     # mix kernel, cube sub-core: the matmul server
    c, report = _launch()
    assert not c.any()                    # its kernel ended at register_matmul
    assert "matmul_iterate_all" not in report.instructions


@pytest.mark.parametrize("mode,core_type", [(2, 0), (1, 1), (0, 0)])
def test_other_sub_cores_run_the_matmul(as_mix_core, mode, core_type):
    as_mix_core(mode, core_type)          # a mix AIV, a cube-only AIC, a vector kernel
    c, report = _launch()
    assert (c == 128).all()
    assert report.instructions["matmul_iterate_all"] == 1


def test_cube_rate_scales_the_cube_pipes(monkeypatch):
    _, full = _launch()
    original = timing_params.cost_table

    def half_rate(platform, active, *args, **kwargs):
        table = np.array(original(platform, active, *args, **kwargs))
        table[timing_params.CUBE_RATE] = 0.5   # each AIV of a mix AI Core: half the cube
        return table
    monkeypatch.setattr(timing_params, "cost_table", half_rate)
    _, half = _launch()
    assert half.pipe_busy["M"] == 2 * full.pipe_busy["M"]
    assert half.cycles > 1.5 * full.cycles
