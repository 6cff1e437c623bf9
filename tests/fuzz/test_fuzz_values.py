"""Run-time-value fuzzing (issue 12, Checks): every instruction family, fed values from the
edges of its fields' ranges, never crashes, hangs, writes outside its memory or raises
anything but a documented error.

``value_kernels.TEMPLATES`` has one kernel per family and call form whose counts, offsets,
strides, masks, repeats, addresses, burst fields, sizes and indices are run-time ``int``
arguments. Most cases attack one field with a value from the edges of its range (0, ±1, the 8-
and 16-bit limits of the hardware fields, and the neighbourhoods of 2^31, 2^32, 2^62 and 2^63,
negative ones included, and a few beyond int64) while the others stay plausible; some take
every field from the plausible middle, some mix the two. Each case launches on 1 or 3 blocks
(one case in four in sanitize mode) in a worker process (value_worker.py) that puts guard bytes
around every GM array and checks the guard zones the simulator keeps around every local memory.
The case fails if the worker crashes (the case it was running is the culprit), does not answer
within ``ASCENDC_PY_FUZZ_TIMEOUT`` seconds (the launch time limit in the worker is 3 s, so a
long instruction must be stopped by the watchdog), raises a class the error catalogue does not
document (or an internal error), reports a run-time fault without a source line, changes a
guard byte or the input array, or (1 block) changes a UB byte outside the kernel's tensors.

``make test`` runs a bounded number of cases; ``make fuzz`` (profile ``long``) 10,000.
"""
from __future__ import annotations

import json
import os
import pathlib
import select
import subprocess
import sys
import tempfile
import time

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from .value_kernels import TEMPLATES

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
PROFILE = settings.get_current_profile_name()
BOUNDED_CASES = 150
TIMEOUT = float(os.environ.get("ASCENDC_PY_FUZZ_TIMEOUT", "10"))

INT64 = (-(1 << 63), (1 << 63) - 1)
#: the neighbourhoods fields are probed at: each of these, then a small step from it
EDGE_BASES = (0, 8, 32, 64, 128, 255, 256, 4096, 65535, 65536, 1 << 31, 1 << 32, 3 << 61,
              1 << 62, 1 << 63, -(1 << 31), -(1 << 32), -(1 << 62), -(1 << 63))
EDGE_STEPS = (-2, -1, 0, 1, 3)
#: a few values outside int64: the launch must refuse them (LaunchArgumentError), not wrap
BEYOND_INT64 = (1 << 63, (1 << 63) + 1, 1 << 64, -(1 << 63) - 1, -(1 << 64))
#: the plausible middle of each field kind (the ranges a real kernel would use, a bit beyond)
PLAUSIBLE = {
    "count": (0, 1100), "offset": (0, 300), "mask": (0, 70), "repeat": (0, 20),
    "blk": (0, 10), "rep": (0, 20), "bits": INT64, "burst": (0, 40), "bytes": (0, 4200),
    "small": (0, 16), "index": (0, 70), "value": (-1000, 1000), "address": (0, 200_000),
}


def edge_value(draw, label: str) -> int:
    """A value near one of EDGE_BASES (clamped to int64), now and then one beyond int64."""
    if draw(st.integers(0, 49), label=f"{label} beyond int64?") == 0:
        return draw(st.sampled_from(BEYOND_INT64), label=label)
    value = draw(st.sampled_from(EDGE_BASES), label=label) + draw(st.sampled_from(EDGE_STEPS))
    return min(max(value, INT64[0]), INT64[1])


def middle_value(draw, kind: str, label: str) -> int:
    if kind == "offset" and draw(st.booleans()):   # often 32-byte aligned, as real offsets are
        return draw(st.integers(0, 20), label=label) * 16
    return draw(st.integers(*PLAUSIBLE[kind]), label=label)


@st.composite
def cases(draw) -> dict:
    """A template and a value for each of its fields. Most cases attack one field (an edge
    value, the others plausible, so that the bad value is not hidden behind another field's
    error); some take every field from the middle (they run, and their writes are checked);
    some draw each field from the edges one time in three."""
    name = draw(st.sampled_from(sorted(TEMPLATES)))
    fields = TEMPLATES[name].fields
    mode = draw(st.sampled_from(("attack one", "attack one", "attack one", "middle", "mixed")))
    attacked = draw(st.integers(0, len(fields) - 1)) if mode == "attack one" else -1
    values = []
    for i, (field, kind) in enumerate(fields):
        edge = i == attacked or (mode == "mixed" and draw(st.integers(0, 2)) == 0)
        values.append(edge_value(draw, field) if edge else middle_value(draw, kind, field))
    blocks = draw(st.sampled_from((1, 1, 3)))
    return {"template": name, "values": values, "blocks": blocks,
            "sanitize": draw(st.integers(0, 3)) == 0}


class Worker:
    """A long-lived worker process running cases; restarted after a crash or a hang."""

    def __init__(self):
        self.proc = None
        self.stderr = None

    def start(self):
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(HERE)])
        env["ASCENDC_PY_LAUNCH_TIMEOUT"] = "3"
        self.stderr = tempfile.TemporaryFile("w+")    # a pipe nobody reads could fill up
        self.proc = subprocess.Popen([sys.executable, str(HERE / "value_worker.py")], env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr, text=True, cwd=REPO)

    def stderr_tail(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read()[-3000:]

    def stop(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def run(self, case: dict, timeout: float) -> dict:
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        self.proc.stdin.write(json.dumps(case) + "\n")
        self.proc.stdin.flush()
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.proc.stdout], [], [], max(left, 0))
            if ready:
                line = self.proc.stdout.readline()
                if line:
                    return json.loads(line)
                self.proc.wait()
                err = self.stderr_tail()
                code = self.proc.returncode
                self.proc = None
                return {"outcome": f"CRASH (exit status {code})", "crash": err}
            if left <= 0:
                self.stop()
                return {"outcome": "HANG", "crash": f"no answer within {timeout} s"}


WORKER = Worker()


@pytest.fixture(scope="module", autouse=True)
def _worker():
    """One worker per test process; its first case compiles the runtime library."""
    WORKER.run({"template": "binary_count", "values": [8, 0, 0, 0], "blocks": 1,
                "sanitize": False}, timeout=600)
    yield
    WORKER.stop()


def check(case: dict) -> None:
    result = WORKER.run(case, TIMEOUT + 30 if case["blocks"] > 1 else TIMEOUT + 10)
    what = f"case {json.dumps(case)} -> {result}"
    outcome = result["outcome"]
    event(f"{case['template']}: {outcome}")
    assert "crash" not in result, f"the worker crashed or hung: {what}"
    assert result["documented"], f"undocumented exception: {what}"
    assert not result["message"], f"run-time fault without a source line: {what}"
    assert result["gm_guards"], f"a guard byte around a GM array changed: {what}"
    assert result["input_intact"], f"the read-only input changed: {what}"
    assert not result["local_guards"], f"a write outside a local memory: {what}"
    assert not result["outside_tensors"], f"a write past the kernel's tensors: {what}"


@pytest.mark.fuzz
@settings(max_examples=BOUNDED_CASES if PROFILE == "default" else settings().max_examples,
          deadline=None, suppress_health_check=list(HealthCheck), print_blob=True)
@given(case=cases())
@example(case={"template": "binary_masked", "values": [64, 2, -1, 1, 1, 8, 8, 8], "blocks": 1,
               "sanitize": False})                                       # issue 12 item 1
@example(case={"template": "reduce_count", "values": [1 << 62, 0, 0], "blocks": 1,
               "sanitize": False})                                       # issue 12 item 2
@example(case={"template": "copy_count", "values": [(1 << 63) - 1, 0, 0, 8], "blocks": 1,
               "sanitize": False})                                       # issue 12 item 2
@example(case={"template": "duplicate_count", "values": [(1 << 32) + 8, 0], "blocks": 1,
               "sanitize": False})                                       # issue 12 item 2
@example(case={"template": "scalar_access", "values": [(1 << 62) + 3, -(1 << 63) + 5, 0, 1],
               "blocks": 1, "sanitize": False})                          # issue 12 item 2
@example(case={"template": "static_tensor", "values": [1 << 32, 64, 64], "blocks": 1,
               "sanitize": False})                                       # issue 12 item 2
@example(case={"template": "mask_counter_mode", "values": [1 << 40, 1], "blocks": 1,
               "sanitize": False})                                       # issue 12 item 6
def test_runtime_values_never_crash_hang_or_corrupt(case):
    check(case)
