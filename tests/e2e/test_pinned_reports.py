"""The samples' results and simulated times, pinned bit for bit.

Every launch a sample's ``main()`` makes is recorded: the kernel, its block count, a SHA-256 of
every GM argument's bytes after the run and of every argument it never writes before the run
(the results are compared when those inputs are the same; results of launches whose products ran
on the host BLAS only when its CPU kernel family is the one the pins were made with, see
``simulator.blas.host_blas_core``), and the timing model's figures
(cycles, per-pipe busy and stall cycles, instruction counts, bytes moved). They must equal
``pinned_reports.json``: a change to checks, speed or structure never changes a result bit or
a simulated cycle of a correct kernel. A change that is meant to alter the timing model or a
sample regenerates the file on purpose:

    ASCENDC_PY_UPDATE_PINS=1 .venv/bin/python -m pytest tests/e2e/test_pinned_reports.py

and says why in its commit message.
"""
from __future__ import annotations

import ctypes
import hashlib
import importlib
import json
import os
import pathlib
import sys

import pytest

from ascendc_py import profiler
from ascendc_py.simulator import blas, runtime

ROOT = pathlib.Path(__file__).resolve().parents[2]
SAMPLES_DIR = ROOT / "samples"
PINS = pathlib.Path(__file__).with_name("pinned_reports.json")
SAMPLE_NAMES = sorted(p.stem for p in SAMPLES_DIR.glob("*.py") if p.stem != "run_all")
#: instructions whose products run on the host BLAS (summation order of its CPU kernel)
BLAS_INSTRUCTIONS = {"mmad"}
UPDATE = os.environ.get("ASCENDC_PY_UPDATE_PINS", "") not in ("", "0")


def _report_fields(report) -> dict:
    return {"cycles": int(report.cycles), "pipe_busy": dict(report.pipe_busy),
            "stalls": {k: int(v) for k, v in report.stalls.items()},
            "instructions": dict(report.instructions),
            "bytes_moved": {k: int(v) for k, v in report.bytes_moved.items()},
            "core_cycles": [int(c) for c in report.core_cycles]}


@pytest.fixture()
def recorded(monkeypatch):
    """Every launch in order: kernel, blocks, GM digests (from run_blocks) and report."""
    launches: list[dict] = []
    real_run_blocks = runtime.run_blocks

    def digests(gm_args) -> list:
        return [hashlib.sha256(ctypes.string_at(a.address, a.nbytes)).hexdigest()[:16]
                for a in gm_args]

    def run_and_hash(compiled, platform, block_dim, gm_args, *args, **kwargs):
        # the inputs: arguments the kernel never writes (an output's bytes before the run are
        # whatever np.empty left there)
        w = compiled.gm_writes
        written = set(range(len(gm_args))) if w is None or w.untraced else \
            {i for i, *_ in w.static} | set(w.run_time)
        before = digests([a for i, a in enumerate(gm_args) if i not in written])
        result = real_run_blocks(compiled, platform, block_dim, gm_args, *args, **kwargs)
        launches.append({"kernel": compiled.name, "block_dim": block_dim, "gm_in": before,
                         "gm": digests(gm_args)})
        return result

    def on_report(report):
        launches[-1].update(_report_fields(report))
        if BLAS_INSTRUCTIONS & set(report.instructions) or any(
                name.startswith("matmul_") for name in report.instructions):
            launches[-1]["host_blas"] = blas.host_blas_core()

    monkeypatch.setattr(runtime, "run_blocks", run_and_hash)
    profiler.observe(on_report)
    sys.path.insert(0, str(SAMPLES_DIR))
    try:
        yield launches
    finally:
        sys.path.remove(str(SAMPLES_DIR))
        profiler.unobserve(on_report)


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_sample_results_and_cycles_are_pinned(name, recorded, capsys):
    importlib.import_module(name).main()
    capsys.readouterr()
    pins = json.loads(PINS.read_text()) if PINS.exists() else {}
    if UPDATE:
        pins[name] = recorded
        PINS.write_text(json.dumps(pins, indent=1, sort_keys=True) + "\n")
        return
    assert name in pins, f"no pins for sample {name}: regenerate {PINS.name} (see docstring)"
    want = pins[name]
    assert len(recorded) == len(want), "the sample makes a different number of launches"
    for k, (got, exp) in enumerate(zip(recorded, want)):
        fields = set(got) | set(exp)
        if got["gm_in"] != exp["gm_in"]:
            # inputs computed on the host by torch (torch_model's nn.Linear) differ between
            # CPUs (the BLAS kernels of another instruction set sum in another order): the
            # results of different inputs cannot be pinned, the simulated time still is
            fields -= {"gm_in", "gm"}
        if got.get("host_blas") != exp.get("host_blas"):
            # cube products summed by another CPU kernel family of the host BLAS: the same
            # exact products, another float32 rounding order; the simulated time is still pinned
            fields -= {"gm", "host_blas"}
        differing = {f: (got.get(f), exp.get(f)) for f in fields if got.get(f) != exp.get(f)}
        assert not differing, f"launch {k} ({exp['kernel']}) differs from the pinned report: " \
                              f"{differing}"
