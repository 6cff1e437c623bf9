"""Run a compiled kernel over its blocks on the simulated cores.

GM is the caller's buffers (numpy arrays or torch CPU tensors, zero-copy). Each simulated core
gets its own local memories and ctx array; blocks run natively on up to ``os.cpu_count()``
host threads (ctypes releases the GIL). The first failing block (lowest index) raises.
"""
from __future__ import annotations

import concurrent.futures
import itertools
import os
import struct
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from ..dsl.types import Memory
from . import abi
from .faults import build_fault

_pool = None
_pool_lock = threading.Lock()
WORKERS = max(1, min(os.cpu_count() or 1, 8))


def _executor() -> concurrent.futures.ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = concurrent.futures.ThreadPoolExecutor(WORKERS, thread_name_prefix="asc-core")
        return _pool


@dataclass(frozen=True)
class GmArg:
    """One GM kernel argument: its address and size in bytes (the array stays referenced)."""

    name: str
    address: int
    nbytes: int
    owner: object


def local_memory_sizes(platform) -> dict[Memory, int]:
    """Bytes of each core-local memory on ``platform``."""
    m = platform.memories
    return {Memory.UB: m.ub.size, Memory.L1: m.l1.size, Memory.L0A: m.l0a.size,
            Memory.L0B: m.l0b.size, Memory.L0C: m.l0c.size, Memory.BT: m.bias_table.size,
            Memory.FB: m.fixpipe_buffer.size}


class _Core:
    """Per-host-thread state of one simulated core: local memories and a ctx array."""

    def __init__(self, platform, ctx_slots: int, memories):
        self.ctx = np.zeros(ctx_slots, np.int64)
        self.memories = {}
        sizes = local_memory_sizes(platform)
        for mem in memories:
            size = sizes[mem]
            buf = np.zeros(size + 64, np.uint8)
            offset = (-buf.ctypes.data) % 64
            self.memories[mem] = (buf, buf[offset:offset + size])

    def prepare(self, block: int, block_num: int, gm_ptrs, gm_sizes, scalars) -> np.ndarray:
        ctx = self.ctx
        ctx[:] = 0
        ctx[abi.BLOCK_IDX] = block
        ctx[abi.BLOCK_NUM] = block_num
        ctx[abi.GM_PTRS] = gm_ptrs.ctypes.data
        ctx[abi.GM_SIZES] = gm_sizes.ctypes.data
        ctx[abi.SCALARS] = scalars.ctypes.data
        ctx[abi.LOOP_BUDGET] = 1 << 31
        for mem, (_, view) in self.memories.items():
            view[:] = 0
            ctx[abi.MEM_BASE + int(mem)] = view.ctypes.data
            ctx[abi.MEM_SIZE + int(mem)] = view.size
        return ctx


@dataclass
class LaunchResult:
    """What the runtime measured: host wall time and the per-block ctx arrays' summaries."""

    block_dim: int
    wall_seconds: float
    block_ctx: list = field(default_factory=list)


def pack_scalars(values) -> np.ndarray:
    out = np.zeros(max(len(values), 1), np.int64)
    for i, (v, dtype) in enumerate(values):
        if dtype.is_float:
            out[i] = struct.unpack("<q", struct.pack("<d", float(v)))[0]
        else:
            out[i] = int(v)
    return out


def run_blocks(compiled, platform, block_dim: int, gm_args: list[GmArg], scalar_values,
               keep_ctx: bool = False) -> LaunchResult:
    """Run every block; raise the first block's fault (if any) as a KernelRuntimeError."""
    ctx_slots = abi.ctx_slots(compiled.num_queues)
    gm_ptrs = np.array([a.address for a in gm_args] or [0], np.int64)
    gm_sizes = np.array([a.nbytes for a in gm_args] or [0], np.int64)
    scalars = pack_scalars(scalar_values)
    counter = itertools.count()
    abort = threading.Event()
    errors: dict[int, tuple] = {}
    kept: dict[int, np.ndarray] = {}

    def worker():
        core = _Core(platform, ctx_slots, compiled.memories)
        while not abort.is_set():
            block = next(counter)
            if block >= block_dim:
                return
            ctx = core.prepare(block, block_dim, gm_ptrs, gm_sizes, scalars)
            rc = compiled.cfunc(ctx.ctypes.data)
            if rc != 0:
                errors[block] = (int(rc), int(ctx[abi.ERR_SITE]), int(ctx[abi.ERR_A]),
                                 int(ctx[abi.ERR_B]), int(ctx[abi.ERR_C]), ctx.copy())
                abort.set()
                return
            if keep_ctx:
                kept[block] = ctx.copy()

    t0 = time.perf_counter()
    nworkers = min(WORKERS, block_dim)
    if nworkers <= 1:
        worker()
    else:
        futures = [_executor().submit(worker) for _ in range(nworkers)]
        for f in futures:
            f.result()
    wall = time.perf_counter() - t0
    if errors:
        block = min(errors)
        code, site, a, b, c, ctx = errors[block]
        site_info = compiled.sites[site] if 0 <= site < len(compiled.sites) else None
        raise build_fault(code, site_info, a, b, c, compiled, block, ctx)
    return LaunchResult(block_dim, wall, [kept[k] for k in sorted(kept)])


__all__ = ["GmArg", "LaunchResult", "run_blocks", "Memory"]
