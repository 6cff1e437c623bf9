"""Host side of the checks: warnings the native code recorded, and sanitize-mode state.

Turn sanitize mode on per launch (``k[n](..., sanitize=True)``), for the process
(``asc.set_sanitizer(True)``) or with ``ASCENDC_PY_SANITIZE=1``. The native side
(``compiler/codegen/sanitize.py``) finds data races between pipes and uninitialised UB reads as
the kernel runs (UB on vector cores; L1, L0A, L0B, L0C and BT on the cube core); here we
allocate its state, find GM bytes written by two blocks, and turn the
recorded warning records into ``KernelWarning``s that name the kernel line.
"""
from __future__ import annotations

import contextlib
import contextvars
import threading
from typing import Optional

import numpy as np

from ..compiler import errors as err
from ..dsl.types import EVENT_IDS_PER_EVENT, HardEvent
from .. import envvars
from . import abi

WARNINGS_CAP = 4096
WARN_FIELDS = 5                      # kind, site, a, b, c (compiler/codegen/rtfuncs.warn)
WARN_GM_SLACK, WARN_TRUNCATED, WARN_LATE_SET, WARN_FLAG_LEFT_SET = 0, 1, 2, 3
WARN_TENSOR_SLACK, WARN_LENIENT_ASSERT = 4, 5
GM_WRITE_LOG_CAP = 1 << 16

_override: Optional[bool] = None


def set_sanitizer(enabled: Optional[bool]) -> None:
    """Turn sanitize mode on or off for every launch (None: follow ASCENDC_PY_SANITIZE)."""
    global _override
    _override = enabled


_scoped: contextvars.ContextVar = contextvars.ContextVar("ascendc_py_sanitize", default=None)
_last_launch = threading.local()


@contextlib.contextmanager
def sanitizing(enabled: bool = True):
    """Launches in this block (this thread or task) run with sanitize mode ``enabled`` unless
    a launch passes ``sanitize=`` itself (``asc.testing.check_kernel`` uses it)."""
    token = _scoped.set(bool(enabled))
    try:
        yield
    finally:
        _scoped.reset(token)


def sanitizer_enabled(requested: Optional[bool] = None) -> bool:
    """Whether a launch runs in sanitize mode: its ``sanitize=`` argument, else an enclosing
    ``sanitizing()`` block, else ``set_sanitizer``, else ``ASCENDC_PY_SANITIZE``."""
    if requested is not None:
        return bool(requested)
    if _scoped.get() is not None:
        return _scoped.get()
    if _override is not None:
        return _override
    return envvars.flag("ASCENDC_PY_SANITIZE")


def note_launch(sanitized: bool) -> None:
    """Remember how this thread's latest launch ran (asc.testing's failure hint reads it)."""
    _last_launch.sanitized = bool(sanitized)


def last_launch_sanitized() -> Optional[bool]:
    """Whether this thread's latest launch ran in sanitize mode (None: no launch yet)."""
    return getattr(_last_launch, "sanitized", None)


class SanitizerState:
    """One host thread's sanitizer arrays for one core shape, reused across blocks and launches.

    ``mem_bytes`` (Memory -> bytes): the local memories shadowed — those of the core's type the
    kernel uses (UB on a vector core; L1, L0A, L0B, L0C, BT on the cube core), 8 int64 per
    32-byte granule."""

    def __init__(self, ctx_slots: int, mem_bytes: dict):
        from ..compiler.codegen.sanitize import granule_layout, state_size
        self.size = state_size(ctx_slots, mem_bytes)
        self.state = np.zeros(self.size, np.int64)
        self.layout = granule_layout(ctx_slots, mem_bytes)
        self.gm_log = np.zeros((GM_WRITE_LOG_CAP, 4), np.int64)
        self.key = (ctx_slots, tuple(sorted((int(m), n) for m, n in mem_bytes.items())))

    def attach(self, ctx: np.ndarray, ctx_slots: int) -> None:
        from ..compiler.codegen import sanitize as S
        self.state[:] = 0
        self.state[S.GMW_PTR] = self.gm_log.ctypes.data
        self.state[S.GMW_CAP] = GM_WRITE_LOG_CAP
        for mem, (base, count) in self.layout.items():
            self.state[S.MEM_GBASE + int(mem)] = base
            self.state[S.MEM_GCOUNT + int(mem)] = count
        ctx[abi.SANITIZE] = 1
        ctx[abi.SAN_PTR] = self.state.ctypes.data
        ctx[abi.SAN_GRAN] = S.granules_base(ctx_slots)

    def gm_writes(self) -> np.ndarray:
        from ..compiler.codegen import sanitize as S
        return self.gm_log[:int(self.state[S.GMW_LEN])].copy()


def check_block_overlaps(compiled, logs: dict[int, np.ndarray], names=None) -> None:
    """Raise BlockOverlapError if two blocks wrote the same bytes of one GM argument
    (``names``: key -> how to call the writer, e.g. 'block 2 (AIV1)'; default 'block <key>').
    Two writes that both accumulate (set_atomic_*: logged with site ``-1 - site``) are not a
    race; an atomic write and a plain one of another block are."""
    rows = [(int(arg), int(start), int(end), block, int(site))
            for block, log in logs.items() for arg, start, end, site in log.tolist()
            if end > start]
    rows.sort()
    furthest: dict[tuple, tuple] = {}   # (arg, atomic) -> the write reaching furthest
    for arg, start, end, block, site in rows:
        atomic = site < 0
        site = -1 - site if atomic else site
        prev = None
        for kind in ((False,) if atomic else (False, True)):
            p = furthest.get((arg, kind))
            if p is not None and start < p[0] and p[1] != block:
                prev = p
                break
        if prev is not None:
            other_end, other_block, other_site = prev
            name = compiled.gm_args[arg][0] if 0 <= arg < len(compiled.gm_args) else f"#{arg}"
            this = _site(compiled, site)
            other = _site(compiled, other_site)
            if names:
                first, second = names[other_block], names[block]
                both = f"{first} and {second}" if first != second else f"{first} (twice)"
            else:
                first, both = f"block {other_block}", f"blocks {other_block} and {block}"
            where = f" (the other write: {first} at {other.loc})" if other else ""
            raise err.BlockOverlapError(
                f"{both} both write bytes [{start}, "
                f"{min(end, other_end)}) of global argument '{name}'{where}; the result depends "
                f"on which block runs last", this.loc if this else None,
                hint="give each block its own slice of the output (offset by get_block_idx())")
        mine = furthest.get((arg, atomic))
        if mine is None or end > mine[0]:
            furthest[(arg, atomic)] = (end, block, site)


def _site(compiled, site: int):
    return compiled.sites[site] if 0 <= site < len(compiled.sites) else None


def _flag_name(flag: int) -> str:
    event, eid = divmod(int(flag), EVENT_IDS_PER_EVENT)
    try:
        return f"{HardEvent(event).name} id {eid}"
    except ValueError:
        return f"flag {flag}"


def emit_warnings(compiled, records: np.ndarray) -> None:
    """One KernelWarning per (kind, kernel line), widest range first seen, issued at the
    user's launch line (``errors.warn_at_user``, with the compiled kernel's registry)."""
    merged: dict[tuple, list] = {}
    for kind, site, a, b, c in records.tolist():
        key = (kind, site, a)
        if key in merged and kind in (WARN_GM_SLACK, WARN_TENSOR_SLACK):
            merged[key][1] = min(merged[key][1], b)
            merged[key][2] = max(merged[key][2], c)
        else:
            merged.setdefault(key, [a, b, c])
    for (kind, site, _), (a, b, c) in sorted(merged.items()):
        info = _site(compiled, site)
        loc = info.loc if info else None
        op = info.op if info else "access"
        if kind == WARN_GM_SLACK:
            name = compiled.gm_args[a][0] if 0 <= a < len(compiled.gm_args) else f"#{a}"
            w = err.GMOutOfBoundsWarning(
                f"{op} touches elements up to [{b}, {c}) of global argument '{name}', past the "
                f"end of its buffer (lenient mode: allowed into the device slack, results inside "
                f"the buffer are unaffected)", loc,
                hint="strict mode (the default) reports this as an error; size the tail tile")
        elif kind == WARN_TENSOR_SLACK:
            w = _tensor_slack(info, op, loc, a, b, c)
        elif kind == WARN_LENIENT_ASSERT:
            msg = (info.detail[0] if info and info.detail else "a length past the buffer")
            msg = msg.split(" (")[0]
            w = err.TensorExtentWarning(
                f"{msg} (lenient mode: allowed, as the device does not check it; the tensor now "
                f"reaches into the buffers after it)", loc,
                hint="strict mode (the default) stops the kernel here")
        elif kind == WARN_TRUNCATED:
            w = err.TruncatedCopyWarning(
                f"{op} of {a} bytes is not a multiple of 32: the hardware copies only {b} bytes",
                loc, hint="copy whole 32-byte blocks and handle the tail with data_copy_pad")
        elif kind == WARN_LATE_SET:
            w = err.LateSetWarning(
                f"wait_flag {_flag_name(a)} is satisfied only by a set_flag later in program "
                f"order; the hardware reorders nothing: the waiting pipe stalls until then", loc,
                hint="issue the set_flag before the wait_flag")
        else:
            w = err.FlagLeftSetWarning(
                f"flag {_flag_name(a)} is still set when the kernel ends (a set_flag without "
                f"its wait_flag)", loc, hint="pair every set_flag with a wait_flag")
        err.warn_at_user(w, compiled.__dict__.setdefault("_warnings_shown", {}))


def _tensor_slack(info, op: str, loc, packed: int, first: int, end: int):
    """The lenient-mode warning of an operand past its LocalTensor (check_local's record:
    ``packed`` = operand + 256·memory + 65536·tensor bytes; bytes [first, end) relative to the
    tensor)."""
    from .faults import _memory_name
    which, mem, size = packed % 256, (packed // 256) % 256, packed // 65536
    names = [d for d in (info.detail if info else ()) if isinstance(d, str)]
    what = names[which] if which < len(names) else (names[0] if names else "operand")
    tensors = getattr(info, "tensors", ()) or ()
    t = tensors[which] if which < len(tensors) else None
    esize = t.esize if t is not None else 1
    unit = "elements" if t is not None else "bytes"
    name = f" '{t.name}'" if t is not None and t.name else ""
    return err.TensorExtentWarning(
        f"{op} {what}{name} uses {unit} [{first // esize}, {-(-end // esize)}) of a tensor of "
        f"{size // esize} {unit} in {_memory_name(mem)} (lenient mode: allowed, as on the "
        f"device, which uses the bytes of whatever buffer follows)", loc,
        hint="strict mode (the default) stops the kernel here with a TensorExtentError")
