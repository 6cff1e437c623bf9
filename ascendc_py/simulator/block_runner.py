"""Vector launches whose blocks run in the runtime library's native block loop.

``runtime.run_blocks`` sends a vector launch here unless it needs Python between blocks
(sanitize mode, tracing, a kernel that prints, lenient mode). Each host thread of the launch
calls ``asc_run_blocks`` (``compiler/codegen/block_loop.py``) once: it runs blocks until none is
left, so a launch returns to Python once per thread, not once per block. Every block does what
the Python loop of ``runtime.py`` does for it (a fresh ctx from the core's template, fresh local
memories, its own counters and GM demand record), so results and cycles are the same bits.

Host threads: a launch whose blocks took little host time when it last ran (under
``SERIAL_SECONDS`` in all) runs them on the launching thread alone; otherwise pool threads join
it, and one that has not started by the time the launching thread ran out of blocks is
withdrawn (``asc_cancel_thread``) instead of waited for. Which thread runs a block never
changes what it computes.

The blocks' timing records (``runtime.BlockTiming``) are made from the kept ctx headers only
when a report reads them (``NativeLaunch.blocks``).
"""
from __future__ import annotations

import ctypes
import struct
import time

import numpy as np

from . import abi, runtime, timing_params
from ..compiler.ops.atomic import runs_blocks_in_order
from .faults import build_fault

#: a launch runs on the launching thread alone when its blocks last took under this host time
SERIAL_SECONDS = 100e-6
#: False: every launch takes the Python loop of runtime.py (tests compare the two paths)
ENABLED = True
_UNRESOLVED = object()
_native = _UNRESOLVED


def _functions():
    """(run_blocks, cancel_thread, address of the SIGINT handler's counter) or None when the
    runtime library has no block loop (then launches take the Python loop)."""
    global _native
    if _native is _UNRESOLVED:
        from ..compiler.codegen import runtime_loader as rl
        run, cancel = rl.symbol_address("asc_run_blocks"), rl.symbol_address("asc_cancel_thread")
        if run and cancel:
            proto = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p)
            _native = (proto(run), ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p)(cancel),
                       rl.symbol_address(rl.INT_FIRED))
        else:
            _native = None
    return _native


def available() -> bool:
    """Whether launches can use the native block loop."""
    return _functions() is not None


class NativeLaunch(runtime.LaunchResult):
    """A launch's result whose ``blocks`` (BlockTiming per block, in block order) are made from
    the kept ctx headers, counters and GM demand records when first read."""

    def __init__(self, block_dim: int, wall_seconds: float, buf: np.ndarray, layout: "_Layout",
                 timing: bool, output: str = ""):
        self.block_dim, self.wall_seconds, self.output = block_dim, wall_seconds, output
        self._records = (buf, layout, timing)
        self._blocks = None

    @property
    def blocks(self) -> list:
        if self._blocks is None:
            buf, lay, timing = self._records
            headers = buf[lay.headers:lay.counters].reshape(self.block_dim, abi.HEADER_SLOTS)
            counters = buf[lay.counters:lay.demand].reshape(self.block_dim, -1)
            demand = buf[lay.demand:].view(np.float64).reshape(self.block_dim, -1) \
                if timing else None
            self._blocks = [runtime._block_timing(
                b, headers[b], counters[b], None, demand[b] if demand is not None else None)
                for b in range(self.block_dim)]
        return self._blocks

    @blocks.setter
    def blocks(self, value: list) -> None:
        self._blocks = value


class _Layout:
    """Where each part of a launch's one int64 buffer lives (offsets in int64 slots): the job
    record, the GM pointers and sizes and the scalars (written by one assignment), the thread
    records, the blocks' return codes, then per block the ctx header, the counters and the
    float64 GM demand record."""

    def __init__(self, block_dim: int, threads: int, record: int, n_gm: int, n_scalars: int):
        at = abi.JOB_RECORD
        self.gm_ptrs, at = at, at + n_gm
        self.gm_sizes, at = at, at + n_gm
        self.scalars, at = at, at + n_scalars
        self.records, self.record, at = at, record, at + threads * record
        self.rcs, at = at, at + block_dim
        self.headers, at = at, at + block_dim * abi.HEADER_SLOTS
        self.counters, at = at, at + block_dim * timing_params.COUNTER_SLOTS
        self.demand_slots = abi.demand_size(n_gm)
        self.demand, self.size = at, at + block_dim * self.demand_slots


def _layout(compiled, block_dim: int, threads: int, n_gm: int, n_scalars: int) -> _Layout:
    key = (block_dim, threads, n_gm, n_scalars)
    layouts = compiled.__dict__.setdefault("_native_layouts", {})
    layout = layouts.get(key)
    if layout is None:
        if len(layouts) > 64:
            layouts.clear()
        record = abi.thread_record_size(len(compiled.memories))
        layout = layouts[key] = _Layout(block_dim, threads, record, n_gm, n_scalars)
    return layout


_F64 = struct.Struct("<d")
_I64 = struct.Struct("<q")


def _scalar_words(scalar_values) -> list:
    """The scalars' ctx words (floats as their float64 bits), as ``runtime.pack_scalars``."""
    return [_I64.unpack(_F64.pack(float(v)))[0] if dtype.is_float else int(v)
            for v, dtype in scalar_values] or [0]


def run(compiled, platform, block_dim: int, gm_args, scalar_values, timing: bool,
        access) -> runtime.LaunchResult:
    """Run every block of a vector launch natively; raise the first failing block's fault."""
    run_blocks, cancel_thread, fired = _functions()
    num_queues = compiled.num_queues
    costs = timing_params.cost_table(platform)
    budget = abi.loop_budget()
    own_thread = runtime.runs_blocks_itself()
    serial = block_dim == 1 or runs_blocks_in_order(compiled) or \
        compiled.__dict__.get("_block_seconds", 1.0) * block_dim < SERIAL_SECONDS
    threads = 1 if serial else min(runtime.WORKERS, block_dim)
    scalars = _scalar_words(scalar_values)
    n_gm = max(1, len(gm_args))
    lay = _layout(compiled, block_dim, threads, n_gm, len(scalars))

    buf = np.zeros(lay.size, np.int64)
    base = runtime.address_of(buf)
    gm_words = [a.address for a in gm_args] + [a.nbytes for a in gm_args] if gm_args else [0, 0]
    buf[:lay.records] = [
        compiled.address, block_dim, 0, 0, fired,
        ctypes.c_int64.from_address(fired).value if fired else 0,
        base + 8 * lay.headers, base + 8 * lay.counters, timing_params.COUNTER_SLOTS,
        base + 8 * lay.demand, lay.demand_slots, base + 8 * lay.rcs,
        base + 8 * lay.gm_ptrs, base + 8 * lay.gm_sizes, base + 8 * lay.scalars, budget,
        int(timing), runtime.address_of(access) if access is not None else 0, n_gm, 0] + gm_words \
        + scalars
    faults: dict[int, np.ndarray] = {}    # block -> the ctx it failed with
    warnings: list[np.ndarray] = []
    stop = runtime.LaunchStop(buf)
    keys = compiled.__dict__.setdefault("_core_keys", {})
    core_key = keys.get(platform)
    if core_key is None:
        core_key = keys[platform] = runtime.core_key(platform, abi.ctx_slots(num_queues),
                                                     compiled.memories)

    def share(i: int) -> None:
        """This host thread's part of the launch: blocks until none is left."""
        core = runtime._core_for_thread(core_key, platform)
        core._template(costs, num_queues, budget)
        at = lay.records + i * lay.record
        record = buf[at:at + lay.record]
        record[1:] = core.native_record[1:]       # all but the state (asc_cancel_thread's)
        stop.register(core.ctx)
        while True:
            run_blocks(base, base + 8 * at)
            if record[abi.THREAD_WARNED]:
                warnings.append(core.warnings[:int(core.ctx[abi.WARN_LEN])].copy())
                record[abi.THREAD_WARNED] = 0
            elif record[abi.THREAD_FAULT] or buf[abi.JOB_STOP] or buf[abi.JOB_NEXT] >= block_dim:
                break
            elif fired:    # Ctrl-C: Python's handler has run by now; if it did not raise, go on
                buf[abi.JOB_FIRED_AT] = ctypes.c_int64.from_address(fired).value
            else:
                break
        if record[abi.THREAD_FAULT]:
            faults[int(record[abi.THREAD_FAULT]) - 1] = core.ctx.copy()

    t0 = time.perf_counter()
    watch = runtime._WATCHDOG.watch(stop)
    try:
        if own_thread and threads == 1:
            share(0)       # (Ctrl-C: the SIGINT handler stopped its blocks, nothing else runs)
        else:
            own = (lambda: share(0)) if own_thread else None
            futures = [(i, runtime._executor().submit(share, i))
                       for i in range(1 if own_thread else 0, threads)]

            def no_further_block():
                buf[abi.JOB_STOP] = 1

            runtime.run_and_wait(own, [_waiter(cancel_thread, base + 8 * (
                lay.records + i * lay.record), f, own is not None) for i, f in futures], stop,
                no_further_block)
    finally:
        runtime._WATCHDOG.forget(watch)
    wall = time.perf_counter() - t0
    if faults:
        block = min(faults)
        ctx = faults[block]
        site = int(ctx[abi.ERR_SITE])
        site_info = compiled.sites[site] if 0 <= site < len(compiled.sites) else None
        fault = build_fault(int(buf[lay.rcs + block]), site_info, int(ctx[abi.ERR_A]),
                            int(ctx[abi.ERR_B]), int(ctx[abi.ERR_C]), compiled, block, ctx)
        fault.output = ""
        raise fault
    if warnings:
        from . import sanitizer
        sanitizer.emit_warnings(compiled, np.concatenate(warnings))
    compiled._block_seconds = wall * threads / block_dim
    return NativeLaunch(block_dim, wall, buf, lay, timing)


def _waiter(cancel_thread, record_address: int, future, withdraw: bool):
    """``wait(timeout)`` for ``runtime.run_and_wait``: True at once for a helper thread that is
    withdrawn before it began (only once the launching thread ran out of blocks: ``withdraw``),
    else the helper's result."""
    def wait(timeout):
        if withdraw and cancel_thread(record_address) != abi.THREAD_RUNNING:
            return True
        return future.result(timeout)
    return wait
