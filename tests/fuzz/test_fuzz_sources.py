"""Fuzzing with malformed kernels: random edits of the samples' kernels and of generated ones.

Every compile and launch must end in success or in a catalogued error (an ``asc.KernelError``
other than ``InternalCompilerError``) or warning (``asc.KernelWarning``). Anything else — another
exception type, a warning of another class from the compiler, a hang (no result after
``ASCENDC_PY_FUZZ_TIMEOUT`` seconds, default 10) or a crash of the process — is a failure that
prints the offending source. Cases run in-process; a bounded number of batches also run in a
fresh process so that a segfault is reported with its source instead of killing the test worker,
and so does every case that folds a gigantic constant (``fuzz_runner.risky_constants``: the fold
runs in C with the GIL held, so only killing the process stops it). Edits that leave invalid
Python are skipped (Python rejects them before the compiler sees them).

Known bugs: each gets a minimal repro below, run as an explicit ``@example``, and an entry in
``KNOWN_BUGS`` (so that random cases hitting it are counted with ``--hypothesis-show-statistics``
but do not fail the run, while the fuzzer keeps looking for new ones); the repro is
``strict`` and fails until the bug is fixed (its ``@example`` is marked ``xfail``; when the
bug is fixed, remove the mark and the entry). BUG-1, 2, 3, 5, 6, 7 and 8 are fixed; their
repros stay as regression examples.
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from . import fuzz_runner as runner
from . import source_edits as edits
from .fuzz_runner import Arg, Case, Recipe  # noqa: F401
from .source_edits import Edit  # noqa: F401  (for pasted cases)

PROFILE = settings.get_current_profile_name()


def examples(bounded: int, long_divisor: int = 1) -> int:
    """``bounded`` under the default profile (make test); the profile's count otherwise."""
    if PROFILE == "default":
        return bounded
    return max(bounded, settings().max_examples // long_divisor)


FUZZ_SETTINGS = dict(deadline=None, suppress_health_check=list(HealthCheck), print_blob=True)


# ----------------------------------------------------------------------------- known bugs
# Known bugs, each a description -> a matcher of failed outcomes. None is open: BUG-1..3 and
# BUG-5..7, found by this fuzzer, are fixed and their repros below are plain examples (BUG-6:
# constant folding let OverflowError/ZeroDivisionError/complex results out as
# InternalCompilerError; BUG-7: folding 3 ** (2 ** 40) never finished; BUG-8: a float constant
# outside the float32 range gave a NumPy RuntimeWarning from sema/scalars.py).
KNOWN_BUGS: dict = {}


def known_bug(out: runner.Outcome):
    return next((name for name, match in KNOWN_BUGS.items() if match(out)), None)


F32_8 = Recipe("k", 1, (Arg("in", "float32", 64),))
BUG1 = Case('''import ascendc_py as asc

COEF = (0.5, 0.25)


@asc.kernel
def k(x: asc.GlobalAddress):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 8)
    xg.set_value(0, COEF[2])
''', F32_8, "BUG-1 repro", strict=True)
BUG2 = Case('''import ascendc_py as asc


@asc.kernel
def k(x: asc.GlobalAddress):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.C2PIPE2GM, 1)
    pipe.init_buffer(q, 1, 256)
    t = q.alloc_tensor(asc.float32)
    asc.data_copy(t, xg, 64)
''', F32_8, "BUG-2 repro", strict=True)
BUG3 = Case('''import ascendc_py as asc


@asc.kernel
def k(x: asc.GlobalAddress):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 8)
    t = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 8)
    done = 0
    while done < 8:                 # 'done += 8' forgotten: LoopLimitError
        asc.data_copy(t, xg, 8)
''', F32_8, "BUG-3 repro", strict=True, timeout=3.0)
BUG5 = Case('''import ascendc_py as asc


@asc.kernel
def k(x: asc.GlobalAddress):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 8)
    t = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 8)
    for i in range(2**40):           # LoopLimitError long before
        asc.data_copy(t, xg, 8)
''', F32_8, "BUG-5 repro", strict=True, timeout=3.0)


BUG6_INT = Case('''import ascendc_py as asc


@asc.kernel
def k(x: asc.GlobalAddress):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 8)
    xg.set_value(0, 10 ** 5000)
''', F32_8, "BUG-6 repro (int)", strict=True)
BUG6_FLOAT = Case('''import ascendc_py as asc


@asc.kernel
def k(x: asc.GlobalAddress):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 8)
    xg.set_value(0, 2.0 ** 5000)
''', F32_8, "BUG-6 repro (float)", strict=True)
BUG7 = Case('''import ascendc_py as asc


@asc.kernel
def k(x: asc.GlobalAddress):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 8)
    xg.set_value(0, 3 ** (2 ** 40))
''', F32_8, "BUG-7 repro", strict=True, timeout=2.0)

BUG8 = Case('''import ascendc_py as asc


@asc.kernel
def k(x: asc.GlobalAddress):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 8)
    xg.set_value(0, 1e308)
''', F32_8, "BUG-8 repro", strict=True)

@pytest.fixture(scope="module", autouse=True)
def _runtime_library():
    from ascendc_py.compiler.codegen.runtime_lib import ensure_loaded
    ensure_loaded()


def describe(case: Case) -> str:
    return (f"\n--- base: {case.base}; edits: {case.edits!r}\n--- launch: {case.recipe!r}\n"
            f"--- source ---\n{case.source}")


def judge(case: Case, out: runner.Outcome) -> None:
    """Fail on a failed outcome unless it is a known bug (and the case is not a repro)."""
    if not out.failed:
        return
    bug = known_bug(out)
    if bug is not None and not case.strict:
        event(f"known bug: {bug.split(':')[0]}")
        return
    pytest.fail(f"{out.error_class}: {out.detail}{describe(case)}")


@pytest.mark.parametrize("name", [b[0] for b in edits.sample_bases()])
def test_unedited_bases_run_cleanly(name):
    """The recipes are right: every base kernel runs without error before any edit."""
    _, source, recipe = next(b for b in edits.sample_bases() if b[0] == name)
    out = runner.run_case(Case(source, recipe, name))
    assert out.status == "ok", out.detail


@pytest.mark.fuzz
@settings(max_examples=examples(30), **FUZZ_SETTINGS)
@given(case=edits.malformed_cases())
@example(case=BUG1)
@example(case=BUG2)
@example(case=BUG3)
@example(case=BUG5)
@example(case=BUG6_INT)
@example(case=BUG6_FLOAT)
@example(case=BUG7)
@example(case=BUG8)
def test_malformed_kernel_fails_cleanly(case):
    out = runner.run_case(case)
    event(f"{out.status}:{out.error_class}" if out.error_class else out.status)
    judge(case, out)


BATCH = 6


@pytest.mark.fuzz
@settings(max_examples=examples(2, long_divisor=100), **FUZZ_SETTINGS)
@given(cases=st.lists(edits.malformed_cases(), min_size=BATCH, max_size=BATCH))
def test_malformed_kernels_in_a_subprocess(cases, tmp_path_factory):
    """The crash guard: a batch of cases in a fresh interpreter; a signal death or a timeout
    names the case that was running."""
    path = tmp_path_factory.mktemp("fuzz_batch") / "cases.json"
    path.write_text(json.dumps([runner.case_to_json(c) for c in cases]))
    timeout = 120 + BATCH * (runner.CASE_TIMEOUT + 40)
    try:
        proc = subprocess.run([sys.executable, runner.__file__, "--run-batch", str(path)],
                              capture_output=True, text=True, timeout=timeout)
        stdout, stderr = proc.stdout, proc.stderr
        rc, why = proc.returncode, f"exit status {proc.returncode}"
    except subprocess.TimeoutExpired as exc:
        out, err = exc.stdout or b"", exc.stderr or b""
        stdout = out.decode() if isinstance(out, bytes) else out
        stderr = err.decode() if isinstance(err, bytes) else err
        rc, why = None, f"no exit after {timeout:.0f} s"
    started, finished = [], {}
    for line in stdout.splitlines():
        if line.startswith("CASE "):
            started.append(int(line.split()[1]))
        elif line.startswith("RESULT "):
            r = json.loads(line[7:])
            finished[r["i"]] = r
    for i, r in finished.items():
        judge(cases[i], runner.Outcome(r["status"], r["detail"], r["class"]))
    if rc != 0:
        running = [i for i in started if i not in finished]
        culprit = describe(cases[running[-1]]) if running else "\n(no case was running)"
        pytest.fail(f"the subprocess died ({why}) while running a case{culprit}\n"
                    f"{stderr[-3000:]}")
