"""torch.compile references for ``make bench``: each case's torch eager formula, compiled.

Issue 14 measures our kernels beside torch eager, torch.compile, numpy and numba. For every case
with a torch eager formula, ``compiled_call`` compiles that same function with
``torch.compile(fn, dynamic=False)`` (inductor; on CPU it writes C++ and builds it with the
host's compiler, caching in inductor's default cache directory or ``TORCHINDUCTOR_CACHE_DIR``) and
makes its first call, which compiles: that is warm-up, never timed. The result is a
zero-argument call timed like the other implementations, plus its first output, which the case
checks against torch eager.

torch.compile is a reference only (no target compares with it). It must never make the bench
fail: where it cannot run (torch absent, no C++ compiler, any exception while compiling or on
the first call, or switched off with ``run.py --no-torch-compile``) the call is None, the table
says n/a, and ``notes()`` gives one line per reason saying why.
"""
from __future__ import annotations

import time
from typing import Callable, Optional

_ENABLED = True
_FAILED: dict = {}          # reason -> [case names]
_SECONDS: list = []         # wall time of each compile (torch.compile + first call)


def set_enabled(flag: bool) -> None:
    """Switch torch.compile references on or off (``run.py --no-torch-compile``)."""
    global _ENABLED
    _ENABLED = bool(flag)


def _short(exc: BaseException) -> str:
    """The exception in one line: its type and its message's first line, joined with the
    lines after it while they end in ':' (dynamo's "backend=... raised:" then the cause)."""
    lines = [ln.strip() for ln in str(exc).strip().splitlines() if ln.strip()] or [""]
    text = lines[0]
    for more in lines[1:4]:
        if not text.endswith(":"):
            break
        text += " " + more
    return f"{type(exc).__name__}: {text[:300]}"


def _fail(case: str, reason: str) -> None:
    _FAILED.setdefault(reason, []).append(case)


def compiled_call(case: str, eager: Callable, *args, backend: str = "inductor"
                  ) -> tuple[Optional[Callable[[], object]], object]:
    """``(call, first output)`` of ``torch.compile(eager, dynamic=False)`` applied to ``args``,
    or ``(None, None)`` when it cannot run (the reason is kept for ``notes()``). The compile and
    the first call happen here, untimed; ``case`` names the case in the note."""
    if not _ENABLED:
        _fail(case, "switched off (--no-torch-compile)")
        return None, None
    try:
        import torch
    except ImportError:
        _fail(case, "torch is not installed")
        return None, None
    t0 = time.perf_counter()
    try:
        compiled = torch.compile(eager, dynamic=False, backend=backend)
        first = compiled(*args)
    except Exception as exc:  # noqa: BLE001 - any failure means n/a, never a failed bench
        _fail(case, _short(exc))
        return None, None
    _SECONDS.append(time.perf_counter() - t0)
    return (lambda: compiled(*args)), first


def compile_seconds() -> float:
    """Total wall time spent compiling (torch.compile and first calls) so far, in seconds."""
    return sum(_SECONDS)


def notes() -> list:
    """One line per reason torch.compile was n/a, naming the cases, then forgets them; plus the
    time its compiles took (empty when nothing was compiled)."""
    out = [f"torch.compile: n/a for {', '.join(cases)}: {reason}"
           for reason, cases in _FAILED.items()]
    if _SECONDS:
        out.append(f"torch.compile: {len(_SECONDS)} function(s) compiled in "
                   f"{sum(_SECONDS):.1f} s before timing (not timed; inductor's on-disk cache "
                   f"makes later runs faster)")
    _FAILED.clear()
    _SECONDS.clear()
    return out
