"""The simulated cores a host thread runs blocks on: their local memories, ctx array and ctx
templates, kept per thread and per core shape (``runtime.py`` runs the blocks on them;
``block_runner.py`` keeps the pool's workers' cores the same way, ``kept_core``).

Each host thread keeps a core per core shape (``core_key``: ctx slots, local memories and their
sizes), up to ``CORES_PER_THREAD``, and each core its ctx templates per (costs, queue count,
loop budget), up to ``TEMPLATES_PER_CORE``, as ``CoreTemplate``s: kernels launched in turn (a
training step's ops) find theirs again, the same objects, so the launch plans and thread-record
templates made for them stay valid.
"""
from __future__ import annotations

import threading
import weakref
from collections import namedtuple
from typing import Optional

import numpy as np

from ..dsl.types import Memory
from . import abi, blas, interrupts, sanitizer, timing_params


def local_memory_sizes(platform) -> dict[Memory, int]:
    """Bytes of each core-local memory on ``platform``."""
    m = platform.memories
    return {Memory.UB: m.ub.size, Memory.L1: m.l1.size, Memory.L0A: m.l0a.size,
            Memory.L0B: m.l0b.size, Memory.L0C: m.l0c.size, Memory.BT: m.bias_table.size,
            Memory.FB: m.fixpipe_buffer.size}


_thread_cores = threading.local()
#: the memories of a cube core (AIC): a core with any of them gets a scratch buffer for mmad
CUBE_MEMORIES = frozenset((Memory.L1, Memory.L0A, Memory.L0B, Memory.L0C, Memory.BT,
                           Memory.FB))
#: the byte every local memory holds when a block starts (float NaN, integer -1)
FRESH_MEMORY_BYTE = 0xFF


#: guard bytes before and after every local memory and cube scratch buffer, holding GUARD_BYTE:
#: the run-time-value fuzzer (tests/fuzz) checks after each case that no instruction wrote there
GUARD_BYTES = 256
GUARD_BYTE = 0x5A
_CORES: "weakref.WeakSet[_Core]" = weakref.WeakSet()


def _guarded(size: int, fill: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A 64-byte aligned buffer of ``size`` bytes holding ``fill``, inside GUARD_BYTES of
    GUARD_BYTE each side: (the whole allocation, the usable view). Each byte is written once."""
    buf = np.empty(size + 2 * GUARD_BYTES + 64, np.uint8)
    offset = GUARD_BYTES + (-(buf.ctypes.data + GUARD_BYTES)) % 64
    buf[:offset] = GUARD_BYTE
    buf[offset + size:] = GUARD_BYTE
    view = buf[offset:offset + size]
    view.fill(fill)
    return buf, view


def local_guard_damage() -> list[str]:
    """Which guard zones around the simulated cores' local memories (and cube scratch) of
    this process no longer hold GUARD_BYTE: an instruction wrote outside its memory. For
    tests; empty when memory safety held."""
    damage = []
    for core in list(_CORES):
        buffers = [(mem.name, view) for mem, (_, view) in core.memories.items()]
        if core.cube_scratch is not None:
            buffers.append(("cube scratch", core.cube_scratch))
        for name, view in buffers:
            base = view.base if view.base is not None else view
            start = view.ctypes.data - base.ctypes.data
            before, after = base[start - GUARD_BYTES:start], \
                base[start + view.size:start + view.size + GUARD_BYTES]
            for side, zone in (("before", before), ("after", after)):
                if (zone != GUARD_BYTE).any():
                    damage.append(f"{name}: {side} the memory, "
                                  f"{int((zone != GUARD_BYTE).sum())} byte(s) changed")
    return damage


def core_key(platform, ctx_slots: int, memories) -> tuple:
    """What a host thread's simulated core must match to serve a launch: (ctx slots, local
    memories, their sizes on ``platform``)."""
    return (ctx_slots, tuple(memories), tuple(sorted(local_memory_sizes(platform).items())))


def ready_core(key: tuple, platform, costs, num_queues: int, loop_budget: int) -> "_Core":
    """This host thread's core (``_core_for_thread``) with its ctx template for these costs,
    queue count and loop budget (``_Core._template``): what the native block loop runs on."""
    core = getattr(_thread_cores, "core", None)
    if core is None or core.key != key:
        core = _core_for_thread(key, platform)
    if core._template_costs is not costs or core._template_key != (num_queues, loop_budget):
        core._template(costs, num_queues, loop_budget)
    return core


#: the simulated cores a host thread keeps, one per core shape (``core_key``), so that launches
#: of kernels of different shapes in turn (a training step's ops) each find theirs; past this
#: many the thread starts afresh
CORES_PER_THREAD = 8


def kept_core(cores: dict, key: tuple, platform) -> "_Core":
    """The core of shape ``key`` (``core_key``) in ``cores`` (a host thread's, or a pool
    worker's: shape -> core), made there if missing; past ``CORES_PER_THREAD`` shapes the
    dict starts afresh."""
    core = cores.get(key)
    if core is None:
        if len(cores) >= CORES_PER_THREAD:
            cores.clear()
        core = cores[key] = _Core(platform, key[0], key[1])
        core.key = key
    return core


def _core_for_thread(key: tuple, platform) -> "_Core":
    """This host thread's simulated core of shape ``key`` (``kept_core``), made the thread's
    current one."""
    core = getattr(_thread_cores, "core", None)
    if core is not None and core.key == key:
        return core
    cores = getattr(_thread_cores, "cores", None)
    if cores is None:
        cores = _thread_cores.cores = {}
    core = _thread_cores.core = kept_core(cores, key, platform)
    return core


class _Core:
    """Per-host-thread state of one simulated core: local memories and a ctx array."""

    def sanitizer(self, ctx_slots: int, platform) -> "sanitizer.SanitizerState":
        shadowed = {m: view.size for m, (_, view) in self.memories.items() if m != Memory.GM}
        key = (ctx_slots, tuple(sorted((int(m), n) for m, n in shadowed.items())))
        if self._sanitizer is None or self._sanitizer.key != key:
            self._sanitizer = sanitizer.SanitizerState(ctx_slots, shadowed)
        return self._sanitizer

    def __init__(self, platform, ctx_slots: int, memories):
        self.ctx = np.zeros(ctx_slots, np.int64)
        interrupts.track(self, self.ctx)   # Ctrl-C stops it even while native code runs
        self.warnings = np.zeros((sanitizer.WARNINGS_CAP, sanitizer.WARN_FIELDS), np.int64)
        self._sanitizer = None
        self._template_key: Optional[tuple] = None
        self._template_ctx: Optional[np.ndarray] = None
        self._template_costs: Optional[np.ndarray] = None
        self.native_record: Optional[np.ndarray] = None   # block_runner's thread record
        self.native_words: tuple = ()                      # ... its words but the first
        #: (id(costs), num_queues, loop budget) -> a CoreTemplate: the templates built, so
        #: that kernels in turn find theirs (the same objects: plans made for one stay valid)
        self._templates: dict = {}
        self.counters = np.zeros(timing_params.COUNTER_SLOTS, np.int64)
        self.memories = {}
        sizes = local_memory_sizes(platform)
        for mem in memories:     # fresh, as every block finds them (so the first needs no fill)
            self.memories[mem] = _guarded(sizes[mem], FRESH_MEMORY_BYTE)
        # per memory, the bytes from its start that may not hold FRESH_MEMORY_BYTE (none
        # yet): the native block loop refills only those (block_loop.py)
        self.dirty = np.zeros(max(len(self.memories), 1), np.int64)
        # mmad widens its operands here (ctx CUBE_SCRATCH): 4 B per L0A/L0B byte, plus L0C;
        # only cores with a cube's memories have one (a vector core's first launch would
        # otherwise fill 640 KB it never uses)
        self.cube_scratch = _guarded(4 * (sizes[Memory.L0A] + sizes[Memory.L0B])
                                     + sizes[Memory.L0C] + 64)[1] \
            if CUBE_MEMORIES.intersection(memories) else None
        _CORES.add(self)

    def prepare(self, block: int, block_num: int, gm_ptrs, gm_sizes, scalars, costs,
                num_queues: int, trace_buf) -> np.ndarray:
        """This core's ctx for running ``block``, and its local memories made fresh."""
        ctx = self.ctx
        np.copyto(ctx, self._template(costs, num_queues, abi.loop_budget()))
        ctx[abi.BLOCK_IDX] = block
        ctx[abi.BLOCK_NUM] = block_num
        ctx[abi.GM_PTRS] = gm_ptrs.ctypes.data
        ctx[abi.GM_SIZES] = gm_sizes.ctypes.data
        ctx[abi.SCALARS] = scalars.ctypes.data
        self.counters.fill(0)
        # this block's own GM demand record (timing_gm.py; settled by contention.py): a new
        # array per block, since the block's timing keeps it
        self.demand = np.zeros(abi.demand_size(len(gm_sizes)), np.float64)
        self.demand[abi.DEMAND_WIDTH] = abi.DEMAND_BASE_WIDTH
        self.demand[abi.DEMAND_ARGS + len(gm_sizes):abi.DEMAND_ARGS + 2 * len(gm_sizes)] = \
            gm_sizes
        ctx[abi.GM_DEMAND] = self.demand.ctypes.data
        ctx[abi.GM_DEMAND_SHIFT] = abi.DEMAND_BASE_SHIFT
        if trace_buf is not None:
            ctx[abi.TRACE_PTR] = trace_buf.ctypes.data
            ctx[abi.TRACE_CAP] = trace_buf.shape[0]
        for k, (_, view) in enumerate(self.memories.values()):
            # every block starts with its local memories filled with FRESH_MEMORY_BYTE (NaN
            # for floats, -1 for integers): nothing carries over from an earlier block or
            # launch, so a kernel that reads bytes it never wrote gets the same recognisable
            # values whichever host thread ran it (sanitize mode reports such reads)
            view.fill(FRESH_MEMORY_BYTE)
            self.dirty[k] = view.size     # what this block writes is not tracked here
        return ctx

    def _template(self, costs, num_queues: int, loop_budget: int) -> np.ndarray:
        """The ctx slots that are the same for every block this core runs with these costs,
        queue count and loop budget (everything else zero), built once (kept per costs, queue
        count and budget: ``TEMPLATES_PER_CORE``) and copied per block; it becomes the core's
        current template (``use``)."""
        key = (num_queues, loop_budget)
        if self._template_costs is not costs or self._template_key != key:
            kept = self._templates.get((id(costs), num_queues, loop_budget))
            if kept is not None and kept.costs is costs:
                self.use(kept)
                return self._template_ctx
            self._template_costs = costs      # (cost tables are kept: timing_params)
            t = np.zeros_like(self.ctx)
            t[abi.SUB_BLOCK_NUM] = 1          # vector kernels: one AIV per block, CORE_TYPE 0
            t[abi.LOOP_BUDGET] = loop_budget
            t[abi.MASK_LO] = t[abi.MASK_HI] = -1  # reset_mask: every lane
            t[abi.COSTS] = costs.ctypes.data
            t[abi.BLAS_SGEMM] = blas.sgemm_address()
            t[abi.BLAS_THREADS] = blas.threads_local_address()
            if self.cube_scratch is not None:
                t[abi.CUBE_SCRATCH] = self.cube_scratch.ctypes.data
                t[abi.CUBE_SCRATCH_SIZE] = self.cube_scratch.size
            t[abi.COUNTERS] = self.counters.ctypes.data
            t[abi.WARN_PTR] = self.warnings.ctypes.data
            t[abi.WARN_CAP] = sanitizer.WARNINGS_CAP
            t[abi.GM_DEMAND_SHIFT] = abi.DEMAND_BASE_SHIFT
            t[abi.RING_BASE] = abi.ring_base(num_queues)
            t[abi.FLAG_TIME_BASE] = abi.flag_time_base(num_queues)
            for mem, (_, view) in self.memories.items():
                t[abi.MEM_BASE + int(mem)] = view.ctypes.data
                t[abi.MEM_SIZE + int(mem)] = view.size
            self._template_ctx, self._template_key = t, key
            self.native_record = self._native_record(t)
            self.native_words = tuple(int(w) for w in self.native_record[1:])
            if len(self._templates) >= TEMPLATES_PER_CORE:
                self._templates.clear()
            self._templates[(id(costs), num_queues, loop_budget)] = self.current_template()
        return self._template_ctx

    def current_template(self) -> "CoreTemplate":
        """The current template and thread record, to ``use`` again later (whoever keeps it
        keeps the arrays its record's addresses name alive)."""
        return CoreTemplate(self._template_costs, self._template_key, self._template_ctx,
                            self.native_record, self.native_words)

    def use(self, kept: "CoreTemplate") -> None:
        """Make ``kept`` (``current_template``, of this core) the current template again."""
        self._template_costs, self._template_key, self._template_ctx = \
            kept.costs, kept.key, kept.ctx
        self.native_record, self.native_words = kept.record, kept.words

    def _native_record(self, template: np.ndarray) -> np.ndarray:
        """This core's thread record for the native block loop (``abi.THREAD_*``), copied into
        each launch's records: its ctx, the template, its local memories."""
        r = np.zeros(abi.thread_record_size(len(self.memories)), np.int64)
        r[abi.THREAD_CTX] = self.ctx.ctypes.data
        r[abi.THREAD_TEMPLATE] = template.ctypes.data
        r[abi.THREAD_CTX_SLOTS] = template.size
        r[abi.THREAD_MEMORIES] = len(self.memories)
        r[abi.THREAD_DIRTY] = self.dirty.ctypes.data
        for k, (_, view) in enumerate(self.memories.values()):
            r[abi.THREAD_MEMORY + 2 * k] = view.ctypes.data
            r[abi.THREAD_MEMORY + 2 * k + 1] = view.size
        return r


#: the ctx templates a core keeps (``_Core._template``); past this many it starts afresh
TEMPLATES_PER_CORE = 8


CoreTemplate = namedtuple("CoreTemplate", ("costs", "key", "ctx", "record", "words"))
CoreTemplate.__doc__ = """A core's ctx template for one (costs, queue count, loop budget) and its
thread record for the native block loop: ``costs``, ``key`` (num_queues, loop budget), the
template ``ctx``, the ``record`` and its ``words`` but the first (``_Core.current_template``)."""


__all__ = ["CoreTemplate", "core_key", "kept_core", "local_memory_sizes", "ready_core"]
