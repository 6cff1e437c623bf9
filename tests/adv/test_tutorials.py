"""pyasc's cube tutorials (03 matmul_mix, 04 matmul_cube_only, 05 matmul_leakyrelu) through
``ascendc_py.pyasc_compat``.

They are read from a local copy of hicann/pyasc at test time (``$PYASC_REPO``;
skipped, saying how to enable them, without one), never copied into the project.

Each runs unmodified (``python -m ascendc_py.pyasc_compat <file> -r Model``) and must pass
its own check (an ``assert torch.allclose`` against torch) and log its "run success" line:
04 is a cube-only kernel guarded by ``asc.ascend_is_aic()``; 03 and 05 are mix kernels
launched with ``used_core_num // 2`` blocks whose AIVs number themselves 2*block + sub-block.
"""
from __future__ import annotations

import logging
import os
import subprocess
from pathlib import Path

import pytest

from ascendc_py import pyasc_compat
from ascendc_py.simulator import config as sim_config

PYASC_REPO = Path(os.environ["PYASC_REPO"]) if os.environ.get("PYASC_REPO") else None
TUTORIALS = {
    "mix": "python/tutorials/03_matmul_mix/matmul_mix.py",
    "cube_only": "python/tutorials/04_matmul_cube_only/matmul_cube_only.py",
    "leakyrelu": "python/tutorials/05_matmul_leakyrelu/matmul_leakyrelu.py",
}


def _source(rel: str) -> str:
    if PYASC_REPO is None or not PYASC_REPO.exists():
        pytest.skip("set PYASC_REPO to a checkout of hicann/pyasc to run these"
                    + (f" ({PYASC_REPO} does not exist)" if PYASC_REPO else ""))
    checkout = PYASC_REPO / rel
    if checkout.is_file():
        return checkout.read_text()
    try:
        return subprocess.run(["git", "-C", str(PYASC_REPO), "show", f"HEAD:{rel}"], check=True,
                              capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"cannot read {rel} from {PYASC_REPO}: {exc}")


@pytest.fixture(autouse=True)
def _keep_platform():
    with sim_config.using_platform(sim_config.current_platform()):
        yield


@pytest.mark.parametrize("name", sorted(TUTORIALS))
def test_tutorial_runs_unmodified(name, tmp_path, caplog):
    rel = TUTORIALS[name]
    program = tmp_path / Path(rel).name
    program.write_text(_source(rel))
    with caplog.at_level(logging.INFO):
        assert pyasc_compat.run_program(program, ["-r", "Model"]) == 0
    assert "run success" in caplog.text
