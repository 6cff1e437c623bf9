"""The run-time-value fuzzer's worker process (started by test_fuzz_values.py).

It reads one case per line on stdin (JSON: template name, field values, block count, sanitize)
and answers one JSON line per case on stdout: the outcome (``"ok"`` or the exception's class),
whether that class is documented (an ``asc.KernelError`` catalogued in docs/errors.md, not an
internal error), and what the memory probes saw: guard bytes around every GM array, the
guard zones around every simulated local memory, and the read-only input unchanged. A case
that crashes the process is reported by the parent, which sees the worker die in its middle.
"""
from __future__ import annotations

import json
import os
import pathlib
import sys
import traceback
import warnings

import numpy as np

import ascendc_py as asc
from ascendc_py.simulator import runtime
from ascendc_py.simulator.abi import Memory

from value_kernels import TEMPLATES

GM_GUARD = 4096          # guard bytes before and after every GM array
GUARD_BYTE = 0xA5
CATALOGUE = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "errors.md").read_text()


def documented(exc: BaseException) -> bool:
    """A class users are told about: a catalogued KernelError that is not a compiler bug."""
    name = type(exc).__name__
    return (isinstance(exc, asc.KernelError) and not isinstance(exc, asc.InternalCompilerError)
            and f"`{name}`" in CATALOGUE)


def guarded_array(dtype: str, n: int, fill) -> tuple[np.ndarray, np.ndarray]:
    """(the whole allocation with guards, the array the kernel sees)."""
    itemsize = np.dtype(dtype).itemsize
    raw = np.full(n * itemsize + 2 * GM_GUARD, GUARD_BYTE, np.uint8)
    view = raw[GM_GUARD:GM_GUARD + n * itemsize].view(dtype)
    view[:] = fill(n).astype(dtype)
    return raw, view


def guards_intact(raw: np.ndarray) -> bool:
    return bool((raw[:GM_GUARD] == GUARD_BYTE).all() and (raw[-GM_GUARD:] == GUARD_BYTE).all())


def run_case(case: dict) -> dict:
    template = TEMPLATES[case["template"]]
    (xd, xn), (yd, yn) = template.gm
    x_raw, x = guarded_array(xd, xn, lambda n: np.arange(n) % 7 - 3)
    y_raw, y = guarded_array(yd, yn, lambda n: np.zeros(n))
    x_before = x.copy()
    asc.set_sanitizer(bool(case["sanitize"]))
    for ub in ub_views():
        ub.fill(runtime.FRESH_MEMORY_BYTE)   # what an earlier case left is not this one's
    out = {"outcome": "ok", "documented": True, "message": ""}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")    # truncation and similar warnings are expected
            template.kernel[case["blocks"]](x, y, *case["values"])
    except Exception as exc:  # noqa: BLE001 - classified below
        out["outcome"] = type(exc).__name__
        out["documented"] = documented(exc)
        if not out["documented"]:
            out["message"] = "".join(traceback.format_exception(exc))[-4000:]
        elif isinstance(exc, asc.KernelRuntimeError) and getattr(exc, "loc", None) is None:
            out["message"] = f"no source line in: {exc}"
    finally:
        asc.set_sanitizer(None)
    out["gm_guards"] = guards_intact(x_raw) and guards_intact(y_raw)
    out["input_intact"] = bool(np.array_equal(x.view(np.uint8), x_before.view(np.uint8)))
    out["local_guards"] = runtime.local_guard_damage()
    out["outside_tensors"] = outside_tensors(template, case) if case["blocks"] == 1 else ""
    return out


def ub_views() -> list:
    return [core.memories[Memory.UB][1] for core in list(runtime._CORES)
            if Memory.UB in core.memories]


def outside_tensors(template, case) -> str:
    """UB bytes a 1-block launch (run on this thread) changed outside the tensors its kernel
    may write; empty when none (or when the template's tensors are not known)."""
    core = getattr(runtime._thread_cores, "core", None)
    if template.ub_writes is None or core is None or Memory.UB not in core.memories:
        return ""
    ub = core.memories[Memory.UB][1]
    allowed = np.zeros(ub.size, bool)
    for start, length in template.ub_writes:
        allowed[start:start + length] = True
    changed = np.flatnonzero((ub != runtime.FRESH_MEMORY_BYTE) & ~allowed)
    if changed.size == 0:
        return ""
    return f"{changed.size} UB byte(s) written outside the kernel's tensors, first at {changed[0]}"


def main() -> None:
    # answers go to the original stdout; what kernels print (dump_tensor, printf) goes nowhere
    answers = os.fdopen(os.dup(1), "w")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    sys.stdout = open(os.devnull, "w")
    for line in sys.stdin:
        case = json.loads(line)
        answers.write(json.dumps(run_case(case)) + "\n")
        answers.flush()


if __name__ == "__main__":
    main()
