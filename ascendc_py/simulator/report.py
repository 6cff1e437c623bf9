"""The result of a launch: how long the kernel would take on the modeled chip, and why.

Blocks map to cores round-robin (block b runs on core b mod cores); blocks beyond the core count
run in later waves on the same cores, so a core's time is the sum of its blocks' times (each
including its share of HBM contention, ``contention.py``) and the chip time is the slowest
core's plus the launch overhead (config ``LaunchCosts``). Pipe figures (busy, stalls) are those
of that critical core.
"""
from __future__ import annotations

from dataclasses import field, fields
from typing import Optional

import numpy as np

from ..compiler.ops import REGISTRY
from ..dsl.types import PIPE_NAMES
from ..fieldwise import Fieldwise, fieldwise_dataclass
from . import timing_params as TP

STALL_CAUSES = ("flag wait", "queue full", "scalar issue", "HBM contention")


#: ops whose element counter holds cube multiply-accumulates (m·n·k per call)
CUBE_MAC_OPS = ("mmad", "matmul_iterate_all", "matmul_get_tensor_c")


def cube_flops_of(counters) -> int:
    """2 × the multiply-accumulates the cube ran, from a launch's summed counters."""
    return 2 * sum(int(counters[TP.ELEM_BASE + TP.OP_INDEX[name]]) for name in CUBE_MAC_OPS
                   if name in TP.OP_INDEX)


@fieldwise_dataclass    # (repr, eq: Fieldwise's; __init__ compiled when first used)
class Report(Fieldwise):
    """Returned by every launch ``k[block_dim](...)``; ``print(report)`` shows a table.

    Timing (cycle-approximate, see the README's timing model section): ``cycles`` and
    ``time_us`` (at the platform clock) of the whole launch, ``pipe_busy`` (pipe name → busy
    cycles on the critical core), ``pipe_busy_pct``, ``bottleneck`` (the busiest pipe),
    ``stalls`` (cause → cycles: pipes waiting on flags, queue-implied flags and barriers,
    summed over pipes; the scalar unit blocked by a full instruction queue; the bottleneck pipe
    idle because the scalar unit had not issued its next instruction; the cores' GM transfers
    delayed by sharing HBM and L2 with the other cores, "HBM contention", ``contention.py``),
    ``launch_cycles`` (the launch's start-up and completion cost, included in ``cycles``;
    config ``LaunchCosts``), ``instructions`` (op → count over all blocks),
    ``bytes_moved`` (path → bytes), ``gm_bandwidth_gbps`` against ``peak_gm_bandwidth_gbps``,
    ``flops`` and ``flops_per_s`` against ``peak_flops_per_s``. Host side: ``wall_seconds``
    (running the blocks), ``prepare_seconds`` (binding and finding or compiling the code;
    ``code_origin`` is 'memory', 'disk' or 'compiled'), ``stage_seconds`` (compile stages).
    ``output``: the text of the kernel's printf/dump_tensor calls, blocks in order (the launch
    also prints it).
    """

    kernel: str
    block_dim: int
    platform: str
    clock_mhz: float = 0.0
    cycles: int = 0
    time_us: float = 0.0
    pipe_busy: dict = field(default_factory=dict)
    pipe_busy_pct: dict = field(default_factory=dict)
    bottleneck: str = ""
    stalls: dict = field(default_factory=dict)
    instructions: dict = field(default_factory=dict)
    bytes_moved: dict = field(default_factory=dict)
    gm_bandwidth_gbps: float = 0.0
    peak_gm_bandwidth_gbps: float = 0.0
    flops: int = 0
    flops_per_s: float = 0.0
    peak_flops_per_s: float = 0.0      #: vector peak for elements of ``vector_dtype``
    cube_flops: int = 0                #: 2 × the MACs of every mmad (all blocks)
    cube_flops_per_s: float = 0.0
    peak_cube_flops_per_s: float = 0.0  #: float16 cube peak of the cores used
    cores_used: int = 0
    waves: int = 0
    launch_cycles: int = 0             #: start-up + completion cost of the launch (in cycles)
    core_cycles: list = field(default_factory=list)
    critical_core: int = 0
    wall_seconds: float = 0.0
    prepare_seconds: float = 0.0
    code_origin: str = ""
    compile_seconds: float = 0.0
    stage_seconds: dict = field(default_factory=dict)
    output: str = ""
    trace_dropped: int = 0
    kernel_type: str = "AIV_ONLY"   # the launch's KernelType (dsl/kernel_types.py)
    sanitized: bool = False         # the launch ran in sanitize mode
    subcore_rows: list = field(default_factory=list)  # (label, text) per sub-core, mix/cube
    vector_dtype: str = "float16"   # the narrowest GM dtype: the vector peak's element size
    _blocks: list = field(default_factory=list, repr=False)
    _sites: list = field(default_factory=list, repr=False)
    _layout: object = field(default=None, repr=False)  # SubcoreLayout of sub-core launches
    _cores: int = field(default=0, repr=False)
    _chip: object = field(default=None, repr=False)   # the ChipConfig the launch ran on

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_launch(cls, **launch) -> "Report":
        """The report of a launch, computed when a field is first read: a launch whose report
        nobody reads (a training loop, a sweep) pays nothing for it. Takes the keyword
        arguments of ``build``."""
        report = cls.__new__(cls)
        report.__dict__["_pending"] = launch
        return report

    @classmethod
    def of_launch(cls, kernel: str, platform, result, compiled, wall_seconds: float,
                  prepare_seconds: float, code_origin: str, sanitized: bool) -> "Report":
        """``from_launch`` for the launcher: the same report, pending as one tuple (a launch
        whose report nobody reads builds no keyword dict either)."""
        report = cls.__new__(cls)
        report.__dict__["_pending"] = (kernel, platform, result, compiled, wall_seconds,
                                       prepare_seconds, code_origin, sanitized)
        return report

    def __getattr__(self, name: str):
        # only reached for attributes the instance does not have yet: the fields of a report
        # that from_launch left pending
        pending = self.__dict__.get("_pending")
        if pending is None or name.startswith("__"):
            raise AttributeError(f"'Report' object has no attribute '{name}'")
        del self.__dict__["_pending"]
        self.__dict__.update(type(self).build(**self.launch_arguments(pending)).__dict__)
        return getattr(self, name)

    @staticmethod
    def launch_arguments(pending) -> dict:
        """The keyword arguments of ``build`` of a pending report (``of_launch`` keeps them
        as a tuple, ``from_launch`` as a dict)."""
        if not isinstance(pending, tuple):
            return dict(pending)
        kernel, platform, result, compiled, wall, prepare, origin, sanitized = pending
        return dict(kernel=kernel, platform=platform, result=result, compiled=compiled,
                    wall_seconds=wall, prepare_seconds=prepare, code_origin=origin,
                    sanitized=sanitized, compile_seconds=compiled.compile_seconds,
                    stage_seconds=dict(compiled.stage_seconds))

    def __getstate__(self) -> dict:
        """Pickled with every field computed (a pending report holds native code)."""
        if "_pending" in self.__dict__:
            self.kernel     # noqa: B018 - computes the pending fields
        return dict(self.__dict__)

    @classmethod
    def build(cls, *, kernel: str, platform, result, compiled, **host) -> "Report":
        """Every field of the report of a launch, computed now."""
        from .contention import settle_launch
        settle_launch(result, platform)   # the cores' sharing of HBM and L2 (once per launch)
        if getattr(result, "subcores", False):   # cube/mix kernels, cross-core sync
            from .subcore_report import from_subcore_launch
            report = from_subcore_launch(cls, kernel=kernel, platform=platform, result=result,
                                         compiled=compiled, **host)
        else:
            report = cls._from_blocks(kernel=kernel, platform=platform, result=result,
                                      compiled=compiled, **host)
        layout = getattr(result, "layout", None)
        report._add_launch_overhead(platform, mix=getattr(layout, "kind", "") == "mix")
        report._chip = platform
        report._peak_for_dtype(getattr(compiled, "gm_args", ()))
        return report

    def _peak_for_dtype(self, gm_args) -> None:
        """The vector unit does 256 B per repeat: its peak in elements per cycle halves for
        4-byte elements. Take the narrowest (2 bytes or more) dtype of the kernel's GM
        arguments as the one its vector work runs in (a float32 kernel is measured against the
        float32 peak, not the float16 one)."""
        sizes = [(dt.sizeof(), dt.name) for _, dt in gm_args
                 if hasattr(dt, "sizeof") and dt.sizeof() >= 2]
        if not sizes:
            return
        size, name = min(sizes)
        self.vector_dtype = name
        self.peak_flops_per_s *= 2.0 / size

    def _add_launch_overhead(self, platform, mix: bool) -> None:
        """Add the launch's start-up and completion cost ([C7]; config ``LaunchCosts``) to the
        device time, its own row "launch overhead"; rates follow the longer time. A launch
        run with timing off (its blocks kept no GM demand record) pays nothing."""
        if not any(t.gm_demand is not None for t in self._blocks):
            return
        if STALL_CAUSES[-1] not in self.stalls:   # sub-core launches: the critical core's
            self.stalls[STALL_CAUSES[-1]] = self._critical_hbm_stall()
        self.launch_cycles = int(round(platform.us_to_cycles(
            platform.launch.total_ns(mix) / 1e3)))
        old = self.cycles / (self.clock_mhz * 1e6)
        self.cycles += self.launch_cycles
        seconds = self.cycles / (self.clock_mhz * 1e6)
        self.time_us = seconds * 1e6
        for name in ("gm_bandwidth_gbps", "flops_per_s", "cube_flops_per_s"):
            setattr(self, name, getattr(self, name) * old / seconds)
        self.pipe_busy_pct = {k: 100.0 * v / self.cycles for k, v in self.pipe_busy.items()}

    def _critical_hbm_stall(self) -> int:
        """HBM contention cycles of the critical core: per block, its most delayed unit."""
        ncores = max(len(self.core_cycles), 1)
        per_block: dict[int, int] = {}
        for t in self._blocks:
            if t.block % ncores == self.critical_core:
                per_block[t.block] = max(per_block.get(t.block, 0), t.hbm_stall)
        return sum(per_block.values())

    @classmethod
    def _from_blocks(cls, *, kernel: str, platform, result, compiled, **host) -> "Report":
        ncores = platform.aiv_cores
        blocks = result.blocks
        core_cycles = [0] * min(ncores, max(result.block_dim, 1))
        per_core: dict[int, list] = {}
        for bt in blocks:
            core = bt.block % ncores
            core_cycles[core] += bt.cycles
            per_core.setdefault(core, []).append(bt)
        critical = int(np.argmax(core_cycles)) if core_cycles else 0
        cycles = max(core_cycles) if core_cycles else 0
        crit_blocks = per_core.get(critical, [])
        busy = sum((bt.pipe_busy for bt in crit_blocks), np.zeros(len(PIPE_NAMES), np.int64))
        stall_flag = sum((bt.stall_flag for bt in crit_blocks), np.zeros(len(PIPE_NAMES), np.int64))
        stall_scalar = sum((bt.stall_scalar for bt in crit_blocks),
                           np.zeros(len(PIPE_NAMES), np.int64))
        stall_queue = sum(bt.stall_queue for bt in crit_blocks)
        stall_hbm = sum(bt.hbm_stall for bt in crit_blocks)
        counters = sum((bt.counters for bt in blocks), np.zeros(TP.COUNTER_SLOTS, np.int64))
        busy[0] = sum(bt.scalar_busy for bt in crit_blocks)  # issuing, not waiting
        pipe_busy = {name: int(busy[i]) for i, name in enumerate(PIPE_NAMES)}
        pct = {k: (100.0 * v / cycles if cycles else 0.0) for k, v in pipe_busy.items()}
        hw_pipes = {k: v for k, v in pipe_busy.items() if k != "S"}
        bottleneck = max(hw_pipes, key=hw_pipes.get) if any(hw_pipes.values()) else "S"
        if pipe_busy["S"] > 1.5 * max(hw_pipes.values(), default=0):
            bottleneck = "S"
        ops = list(REGISTRY)
        instructions = {ops[i]: int(counters[TP.COUNT_BASE + i])
                        for i in range(TP.NUM_OPS) if counters[TP.COUNT_BASE + i]}
        bytes_moved = {f"{s}->{d}": int(counters[TP.BYTES_BASE + p])
                       for p, (s, d) in enumerate(TP.PATHS) if counters[TP.BYTES_BASE + p]}
        flops = sum(int(counters[TP.ELEM_BASE + i]) * REGISTRY[name].flops_per_elem
                    for i, name in enumerate(ops) if REGISTRY[name].elem is not None)
        seconds = cycles / (platform.clock_mhz * 1e6) if cycles else 0.0
        cube_flops = cube_flops_of(counters)
        gm_bytes = sum(v for k, v in bytes_moved.items() if "GM" in k)
        used = min(result.block_dim, ncores)
        return cls(
            kernel=kernel, block_dim=result.block_dim, platform=platform.name,
            clock_mhz=platform.clock_mhz, cycles=int(cycles), time_us=seconds * 1e6,
            pipe_busy=pipe_busy, pipe_busy_pct=pct, bottleneck=bottleneck,
            stalls={"flag wait": int(stall_flag.sum()), "queue full": int(stall_queue),
                    "scalar issue": int(stall_scalar[PIPE_NAMES.index(bottleneck)])
                    if bottleneck != "S" else 0, "HBM contention": int(stall_hbm)},
            instructions=instructions, bytes_moved=bytes_moved,
            gm_bandwidth_gbps=(gm_bytes / seconds / 1e9) if seconds else 0.0,
            peak_gm_bandwidth_gbps=platform.hbm_gbps, flops=int(flops),
            flops_per_s=(flops / seconds) if seconds else 0.0,
            peak_flops_per_s=platform.peak_vector_tops_f16 * 1e12 * used / ncores,
            cube_flops=cube_flops, cube_flops_per_s=(cube_flops / seconds) if seconds else 0.0,
            peak_cube_flops_per_s=2.0 * platform.cube.macs_per_cycle("float16")
            * platform.clock_mhz * 1e6 * used,
            cores_used=used, waves=-(-result.block_dim // ncores), core_cycles=core_cycles,
            critical_core=critical, trace_dropped=sum(bt.trace_dropped for bt in blocks),
            output=getattr(result, "output", ""),
            _blocks=blocks, _sites=list(compiled.sites), **host)

    @property
    def kernel_cycles(self) -> int:
        """The blocks' time on the critical core: ``cycles`` without the launch overhead."""
        return self.cycles - self.launch_cycles

    @property
    def inserted_sync(self) -> list[str]:
        """The synchronisation the insert_sync pass added to this kernel (README "Automatic
        synchronisation"): one ``"MTE2->V at file.py:17"`` per set_flag/wait_flag pair or
        barrier, naming the line of the access that needed it."""
        from ..compiler.errors import place
        return [f"{site.detail[1]} at {place(site.loc.file, site.loc.line)}"
                for site in self._sites
                if site.op in ("set_flag", "pipe_barrier") and len(site.detail) == 2
                and site.detail[0] == "insert_sync" and site.loc is not None]

    @property
    def unchecked(self) -> tuple[str, ...]:
        """What this launch did not check (empty in sanitize mode): the checks that need
        per-byte bookkeeping run only with ``sanitize=True``."""
        if self.sanitized:
            return ()
        return UNCHECKED_WITHOUT_SANITIZE

    # ------------------------------------------------------------------ presentation
    def rows(self) -> list[tuple[str, str]]:
        """The report as (label, value) rows (used by __str__ and the HTML view)."""
        rows = [("kernel", f"{self.kernel}[{self.block_dim}] on {self.platform} "
                           f"@ {self.clock_mhz:.0f} MHz"),
                ("device time", f"{self.cycles:,} cycles = {self.time_us:,.2f} us "
                                f"({self.cores_used} cores, {self.waves} wave(s))"),
                ("bottleneck", f"{self.bottleneck} pipe")]
        if self.kernel_type != "AIV_ONLY":
            rows.insert(1, ("kernel type", self.kernel_type))
        for name in PIPE_NAMES:
            if self.pipe_busy.get(name):
                rows.append((f"  {name} busy", f"{self.pipe_busy[name]:>12,} cycles "
                                               f"{self.pipe_busy_pct[name]:6.1f} %"))
        for cause in STALL_CAUSES + tuple(c for c in self.stalls if c not in STALL_CAUSES):
            rows.append((f"  stall: {cause}", f"{self.stalls.get(cause, 0):>12,} cycles"))
        if self.launch_cycles:
            rows.append(("  launch overhead", f"{self.launch_cycles:>12,} cycles = "
                                              f"{self.launch_cycles / self.clock_mhz:.2f} us "
                                              f"(start-up and completion)"))
        if self.subcore_rows:
            rows.append(("sub-cores", f"of core {self.critical_core} (the critical one)"))
            rows.extend(self.subcore_rows)
        if self.bytes_moved:
            rows.append(("bytes moved", ", ".join(f"{k} {_bytes(v)}"
                                                   for k, v in self.bytes_moved.items())))
        rows.append(("GM bandwidth", f"{self.gm_bandwidth_gbps:,.1f} GB/s of "
                                     f"{self.peak_gm_bandwidth_gbps:,.0f} GB/s peak"))
        if self.peak_flops_per_s:     # (a cube-only kernel has no vector unit)
            rows.append(("vector FLOP/s", f"{self.flops_per_s / 1e9:,.1f} GFLOP/s of "
                                          f"{self.peak_flops_per_s / 1e9:,.0f} GFLOP/s peak "
                                          f"({self.vector_dtype})"))
        if self.cube_flops:
            rows.append(("cube FLOP/s", f"{self.cube_flops_per_s / 1e9:,.1f} GFLOP/s of "
                                        f"{self.peak_cube_flops_per_s / 1e9:,.0f} GFLOP/s peak "
                                        f"(fp16, {self.cores_used} cores)"))
        if self.instructions:
            rows.append(("instructions", ", ".join(f"{k} {v:,}"
                                                    for k, v in sorted(self.instructions.items()))))
        inserted = self.inserted_sync
        if inserted:
            rows.append(("insert_sync", f"{len(inserted)} flag(s) inserted: "
                                        f"{', '.join(inserted)}"))
        rows.append(("host", f"run {self.wall_seconds * 1e3:.2f} ms, prepare "
                             f"{self.prepare_seconds * 1e3:.2f} ms (code from "
                             f"{self.code_origin})"))
        if self.trace_dropped:
            rows.append(("trace", f"{self.trace_dropped:,} events did not fit the buffer"))
        if self.unchecked:
            rows.append(("not checked", f"{', '.join(self.unchecked)}: run with sanitize=True"))
        rows.append(("timing model", MODEL_CONFIDENCE))
        return rows

    def __str__(self) -> str:
        width = max(len(k) for k, _ in self.rows())
        text = "\n".join(f"{k:<{width}}  {v}" for k, v in self.rows())
        return text + (f"\n--- kernel output ---\n{self.output}" if self.output else "")

    def __repr__(self) -> str:
        """The readable summary (a REPL's view); ``print(report)`` shows every row."""
        from .report_html import summary
        return summary(self)

    def _repr_html_(self) -> str:
        """A notebook's view: the rows, per-pipe busy bars, the critical core's timeline (a
        traced launch) and collapsible details (``simulator/report_html.py``)."""
        from .report_html import fragment
        return fragment(self)

    def save_html(self, path) -> str:
        """Write a self-contained HTML page (no network needed to open it): the summary, the
        timeline of every core (a launch with trace=True), the per-op table."""
        from .report_html import save_report
        return save_report(self, path)

    # ------------------------------------------------------------------ trace and picture
    def save_trace(self, path) -> str:
        """Write a Chrome Trace Event JSON (launch with trace=True to record events)."""
        from .trace import write_chrome_trace
        return write_chrome_trace(self, path)

    def plot(self, path=None, core: Optional[int] = None):
        """The timeline (one lane per pipe that ran instructions) of ``core`` (default: the
        critical core). With ``path``, write the picture there (PNG, or the format of its
        suffix) and return the path; without, return the matplotlib Figure (a notebook
        displays it inline). A launch that recorded no trace (``trace=True``) has no timeline:
        it gets each pipe's busy share instead, titled with how to record one."""
        from .report_html import traced
        from .trace import plot_busy, plot_timeline
        if not traced(self):
            return plot_busy(self, path)
        return plot_timeline(self, path, self.critical_core if core is None else core)


#: how far to trust the times, in one line of every report (README "Timing fidelity")
MODEL_CONFIDENCE = ("simulated, not measured: vector rates and single-core DMA costs "
                    "calibrated to msKPP's 910B1 measurements (within 10 % and 25 %); HBM "
                    "and L2 sharing between cores, L2 reuse and launch cost follow published "
                    "figures but are not calibrated (make fidelity)")

#: what a launch without sanitize mode does not check (README "Sanitize mode")
UNCHECKED_WITHOUT_SANITIZE = ("races between pipes byte by byte", "uninitialised reads",
                              "blocks writing the same GM bytes")


# The fields a pending report computes on first access must not be found on the class (the
# dataclass keeps their defaults in __init__), or reading one would not reach __getattr__.
for _f in fields(Report):
    if _f.name in Report.__dict__:
        delattr(Report, _f.name)
del _f


def _bytes(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)
