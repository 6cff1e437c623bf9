"""make bench's torch.compile column: the table and JSON carry it, and where torch.compile cannot
run it is n/a with a reason line, never a failure (benchmarks/compiled_refs.py)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import _harness as H  # noqa: E402
import compiled_refs  # noqa: E402


def _run_module():
    spec = importlib.util.spec_from_file_location("bench_run_for_tests", BENCH / "run.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _case(**ms) -> H.CaseResult:
    return H.CaseResult("case x", {k: H.Timing([v / 1e3] * 3) for k, v in ms.items()},
                        target=1.5, against="torch")


def _row(table: str) -> list:
    header, _, row = table.splitlines()[:3]
    return header, row


def test_table_has_torch_compile_column_and_ratio():
    table = H.case_table([_case(ours=2.0, torch=4.0, **{"torch.compile": 0.5}, numpy=8.0)])
    header, row = _row(table)
    assert "torch.compile (ms)" in header and "ours/torch.compile" in header
    cells = row.split()
    # ours/torch 0.50, ours/torch.compile 4.00, ours/numpy 0.25; the target is still on torch
    assert cells[-7:] == ["0.50", "4.00", "0.25", "ours/torch", "<=", "1.5", "PASS"]
    assert "0.500 (0.500)" in row


def test_table_says_na_without_torch_compile_and_keeps_the_verdict():
    table = H.case_table([_case(ours=2.0, torch=1.0, numpy=8.0)])
    header, row = _row(table)
    cols = header.split("  ")
    cols = [c.strip() for c in cols if c.strip()]
    cells = [c.strip() for c in row.split("  ") if c.strip()]
    assert len(cells) == len(cols)
    assert cells[cols.index("torch.compile (ms)")] == "n/a"
    assert cells[cols.index("ours/torch.compile")] == "n/a"
    assert cells[-1] == "MISS"          # ours/torch = 2 > 1.5, unaffected by the new column


def test_json_has_torch_compile():
    run = _run_module()
    with_tc = _case(ours=2.0, torch=4.0, **{"torch.compile": 1.0})
    without = _case(ours=2.0, torch=4.0)
    out = run._to_json([with_tc, without], [], [], [])
    assert out["cases"][0]["median_ms"]["torch.compile"] == pytest.approx(1.0)
    assert out["cases"][0]["ratio_torch_compile"] == pytest.approx(2.0)
    assert "torch.compile" not in out["cases"][1]["median_ms"]
    assert out["cases"][1]["ratio_torch_compile"] != out["cases"][1]["ratio_torch_compile"]


@pytest.fixture
def fresh_notes():
    compiled_refs.notes()
    yield
    compiled_refs.set_enabled(True)
    compiled_refs.notes()


def test_failing_compile_is_na_with_its_reason(fresh_notes):
    torch = pytest.importorskip("torch")

    def no_compiler(gm, example_inputs):
        raise RuntimeError("no C++ compiler on this host")

    def add(a, b):
        return a + b

    x = torch.ones(4)
    call, first = compiled_refs.compiled_call("vadd test", add, x, x, backend=no_compiler)
    assert call is None and first is None
    (line,) = compiled_refs.notes()
    assert line.startswith("torch.compile: n/a for vadd test: ")
    assert "no C++ compiler on this host" in line
    assert compiled_refs.notes() == []          # reported once


def test_switched_off_is_na(fresh_notes):
    compiled_refs.set_enabled(False)
    call, _ = compiled_refs.compiled_call("sepia test", lambda t: t, object())
    assert call is None
    assert compiled_refs.notes() == ["torch.compile: n/a for sepia test: switched off "
                                     "(--no-torch-compile)"]


def test_working_compile_gives_a_timed_call_and_its_output(fresh_notes):
    torch = pytest.importorskip("torch")

    def mul_add(a, b):
        return a * b + 1

    a, b = torch.arange(6.0), torch.full((6,), 2.0)
    # the "eager" backend runs dynamo's graph without inductor: no C++ compile, fast
    call, first = compiled_refs.compiled_call("mul_add test", mul_add, a, b, backend="eager")
    assert torch.equal(first, mul_add(a, b))
    assert torch.equal(call(), mul_add(a, b))
    lines = compiled_refs.notes()
    assert len(lines) == 1 and lines[0].startswith("torch.compile: 1 function(s) compiled in ")
