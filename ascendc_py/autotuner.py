"""``@asc.autotune``: choose a kernel's tiling by simulated cycles.

    @asc.autotune(configs=[asc.Config(TILE=1024, BUFS=2), asc.Config(TILE=4096, BUFS=1)],
                  key=["n"])
    @asc.kernel
    def k(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int,
          TILE: asc.ConstExpr[int], BUFS: asc.ConstExpr[int]): ...

    k[8](x, y, n)               # TILE and BUFS come from the chosen config

The first launch for a new key value (the values of the ``key`` arguments, plus the GM
arguments' dtypes and the launch's ``block_dim``) on a platform runs every config on the same
inputs (each starting from the arguments as they were passed), checks that every config writes
the same GM values as the first one that ran (within the dtype's tolerance,
``asc.testing.compare``), picks the one with the fewest simulated cycles, prints a table
(config, cycles, bottleneck pipe, GM bandwidth) and keeps the choice in memory and in the compile
cache directory (``<cache>/autotune/``), keyed by the kernel's code and that of its callees,
the configs, the key value, the platform and the compiler version. It then launches the chosen
config on the arguments and returns its ``Report``. Later launches with that key find the
choice in memory (or, in a new process, on disk) and cost one normal launch.

A config that fails to compile or faults is reported in the table and skipped; it is never
chosen. Simulated cycles are deterministic, so there is no warm-up and no repetition.
"""
from __future__ import annotations

import hashlib
import json
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import numpy as np

from .compiler.errors import KernelError, LaunchArgumentError, user_boundary
from .simulator import config as _config

LAUNCH_KEYWORDS = ("platform", "trace", "sanitize", "lenient", "stream")
TABLE_VERSION = 1


class _Auto:
    """``asc.AUTO``: launch an autotuned kernel with the block_dim of the chosen config."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "asc.AUTO"

    def __reduce__(self):
        return (_Auto, ())


AUTO = _Auto()


class AutotuneError(KernelError):
    """Autotuning could not choose a config: every config failed, or two configs wrote
    different results (the message names them)."""


@dataclass(frozen=True, init=False, eq=False)
class Config:
    """One candidate of ``@asc.autotune`` or ``asc.sweep``: values for the kernel's
    ``ConstExpr`` parameters, and optionally the ``block_dim`` to launch with.

    ``asc.Config(TILE=1024, BUFS=2, block_dim=8)`` or, as Triton spells it,
    ``asc.Config({"TILE": 1024, "BUFS": 2})``. ``pre_hook(args)``, as Triton's: called before
    each launch with this config with the launch's arguments by name (the config's values
    included), a dict it may change, e.g. to make the host tiling struct that goes with the
    config's base shapes (``samples/autotune_matmul.py``)."""

    kwargs: tuple      # ((name, value), ...) in the order given
    block_dim: Optional[int]
    pre_hook: Optional[Callable]

    def __init__(self, kwargs: Optional[dict] = None, *, block_dim: Optional[int] = None,
                 pre_hook: Optional[Callable] = None, **values: Any):
        merged = dict(kwargs or {})
        for k, v in values.items():
            if k in merged:
                raise TypeError(f"Config: '{k}' given twice")
            merged[k] = v
        if block_dim is not None and (isinstance(block_dim, bool) or
                                      not isinstance(block_dim, (int, np.integer)) or
                                      not 1 <= int(block_dim) <= 65535):
            raise TypeError(f"Config: block_dim must be an int in 1..65535, got {block_dim!r}")
        object.__setattr__(self, "kwargs", tuple(merged.items()))
        object.__setattr__(self, "block_dim", None if block_dim is None else int(block_dim))
        object.__setattr__(self, "pre_hook", pre_hook)

    def _identity(self) -> tuple:
        return tuple(sorted(self.kwargs, key=lambda kv: kv[0])), self.block_dim

    def __eq__(self, other) -> bool:
        return isinstance(other, Config) and self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash(repr(self._identity()))

    @property
    def values(self) -> dict:
        """The ConstExpr values as a dict."""
        return dict(self.kwargs)

    def label(self) -> str:
        """``TILE=1024, BUFS=2, block_dim=8``: the config's name in tables and errors."""
        parts = [f"{k}={v!r}" for k, v in self.kwargs]
        if self.block_dim is not None:
            parts.append(f"block_dim={self.block_dim}")
        return ", ".join(parts) or "(defaults)"

    def __repr__(self) -> str:
        return f"Config({self.label()})"


@dataclass
class TuneRow:
    """One config's result: ``cycles`` (None when it failed, ``error`` says why)."""

    config: Config
    block_dim: int
    cycles: Optional[int] = None
    bottleneck: str = ""
    gm_bandwidth_gbps: float = 0.0
    time_us: float = 0.0
    error: str = ""

    def as_dict(self) -> dict:
        return {"config": self.config.label(), "values": [list(kv) for kv in self.config.kwargs],
                "config_block_dim": self.config.block_dim, "block_dim": self.block_dim,
                "cycles": self.cycles, "bottleneck": self.bottleneck,
                "gm_bandwidth_gbps": self.gm_bandwidth_gbps, "time_us": self.time_us,
                "error": self.error}


@dataclass
class TuneResult:
    """The table of one tuning run; ``best`` is the chosen config (fewest cycles)."""

    kernel: str
    platform: str
    key: tuple
    rows: list = field(default_factory=list)
    best: Optional[Config] = None
    best_block_dim: int = 0
    seconds: float = 0.0
    origin: str = "tuned"        # 'tuned' (this process ran the configs) or 'disk'

    def __str__(self) -> str:
        head = (f"autotune {self.kernel} on {self.platform}, {key_label(self.key)}: "
                f"{sum(r.cycles is not None for r in self.rows)} of {len(self.rows)} configs ran "
                f"in {self.seconds:.2f} s" + (" (from the disk cache)"
                                              if self.origin == "disk" else ""))
        width = max([len("config")] + [len(r.config.label()) for r in self.rows])
        lines = [head, f"  {'config':<{width}}  {'block_dim':>9}  {'cycles':>12}  "
                       f"{'bottleneck':<10}  {'GM GB/s':>9}"]
        for r in self.rows:
            mark = "*" if r.config == self.best and r.block_dim == self.best_block_dim else " "
            if r.cycles is None:
                lines.append(f"{mark} {r.config.label():<{width}}  {r.block_dim:>9}  "
                             f"{'skipped':>12}  {r.error}")
            else:
                lines.append(f"{mark} {r.config.label():<{width}}  {r.block_dim:>9}  "
                             f"{r.cycles:>12,}  {r.bottleneck:<10}  "
                             f"{r.gm_bandwidth_gbps:>9.1f}")
        if self.best is not None:
            lines.append(f"  chosen: {self.best.label()} (fewest simulated cycles)")
        return "\n".join(lines)


def _dtype_name(dtype) -> str:
    return str(dtype).removeprefix("torch.")


def key_label(key: tuple) -> str:
    """``n=8192, float32, block_dim 8``: a tuning key as text."""
    parts = []
    for name, value in key:
        if name == "dtypes":
            parts.append("/".join(dict.fromkeys(_dtype_name(d) for d in value)) or "no arrays")
        elif name == "grid":
            parts.append(f"block_dim {value}")
        elif isinstance(value, tuple) and value[:1] == ("array",):
            parts.append(f"{name}: {_dtype_name(value[1])}{list(value[2])}")
        else:
            parts.append(f"{name}={value!r}")
    return ", ".join(parts)


# ---------------------------------------------------------------------------- argument handling
def _is_array(v) -> bool:
    return type(v) is np.ndarray or isinstance(v, np.ndarray) or \
        type(v).__module__.startswith("torch")


def _snapshot(v):
    if isinstance(v, np.ndarray):
        return v.copy()
    return v.detach().clone()


def _restore(dst, src) -> None:
    if isinstance(dst, np.ndarray):
        np.copyto(dst, src)
        return
    import torch
    with torch.no_grad():
        dst.copy_(src)


def _equal(a, b) -> bool:
    """Whether two snapshots hold the same values (shape and dtype too; a NaN is unequal)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return type(a) is type(b) and a.dtype == b.dtype and np.array_equal(a, b)
    import torch
    return a.dtype == b.dtype and a.shape == b.shape and bool(torch.equal(a, b))


def _key_part(v) -> Any:
    if _is_array(v):
        return ("array", v.dtype, tuple(v.shape))
    if isinstance(v, (np.integer, np.floating)):
        return v.item()
    return v if isinstance(v, (int, float, bool, str, type(None))) else repr(v)


def _first_line(exc: BaseException) -> str:
    text = str(getattr(exc, "message", "") or exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:200]


_PLATFORM_IDS: dict = {}     # id(chip) -> (chip, its hash): launches ask on every call


def platform_id(chip) -> str:
    """A short stable hash of a ChipConfig (every field): a changed platform re-tunes."""
    found = _PLATFORM_IDS.get(id(chip))
    if found is not None and found[0] is chip:
        return found[1]
    pid = hashlib.sha256(repr(chip).encode()).hexdigest()[:16]
    if len(_PLATFORM_IDS) > 64:
        _PLATFORM_IDS.clear()
    _PLATFORM_IDS[id(chip)] = (chip, pid)
    return pid


def callable_fingerprint(fn, depth: int = 0) -> Any:
    """A description of a hook or pruning function that is the same in every process for the
    same code and different when its code, defaults or captured values change: part of the
    disk cache key, so that two autotuners of one kernel and configs that differ only in a
    ``pre_hook``, a Config's ``pre_hook`` or ``prune_configs_by`` do not share choices. A
    captured value whose repr holds a memory address counts by its type only."""
    if fn is None:
        return None
    import functools
    import marshal
    if isinstance(fn, functools.partial):
        return ("partial", callable_fingerprint(fn.func, depth + 1),
                [_value_fingerprint(a, depth) for a in fn.args],
                sorted((k, _value_fingerprint(v, depth)) for k, v in fn.keywords.items()))
    code = getattr(fn, "__code__", None)
    if code is None:
        target = getattr(fn, "__func__", None)      # a bound method: its function and self
        if target is not None:
            return ("method", callable_fingerprint(target, depth + 1),
                    _value_fingerprint(getattr(fn, "__self__", None), depth))
        return ("object", _repr_fingerprint(fn))
    cells = [c.cell_contents if _cell_full(c) else None for c in (fn.__closure__ or ())]
    return ("function", getattr(fn, "__module__", None), getattr(fn, "__qualname__", None),
            hashlib.sha256(marshal.dumps(code)).hexdigest(),
            [_value_fingerprint(v, depth) for v in (fn.__defaults__ or ())],
            [_value_fingerprint(v, depth) for v in cells])


def _cell_full(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _value_fingerprint(value, depth: int) -> Any:
    if callable(value) and not isinstance(value, type):
        return callable_fingerprint(value, depth + 1) if depth < 4 else type(value).__qualname__
    return _repr_fingerprint(value)


def _repr_fingerprint(value) -> Any:
    try:
        text = repr(value)
    except Exception:                          # a repr that fails: the type alone
        text = " at 0x"
    if " at 0x" in text or len(text) > 10_000:
        return ("value of type", type(value).__module__, type(value).__qualname__)
    return text


def kernel_code_hash(kernel) -> str:
    """A hash of the kernel's code, its callees' code and the constants they read."""
    sources, consts = kernel.dependencies()
    return hashlib.sha256(repr((sorted(sources), sorted(consts),
                                kernel.options)).encode()).hexdigest()


class Autotuner:
    """What ``@asc.autotune`` makes of a kernel: launch it with ``k[block_dim](...)`` (or
    ``k[asc.AUTO]`` when every config carries ``block_dim``, or ``k[lambda meta: ...]`` to
    compute ``block_dim`` from a config's values), passing every argument except the tuned
    ones. ``tables`` holds each key's ``TuneResult``; ``tune(...)`` re-tunes explicitly."""

    def __init__(self, kernel, configs: Sequence[Config], key: Sequence[str],
                 prune_configs_by: Optional[dict] = None, print_table: bool = True,
                 use_disk_cache: bool = True, pre_hook: Optional[Callable] = None,
                 rtol: Optional[float] = None, atol: Optional[float] = None,
                 backend: str = "auto", workers: Optional[int] = None):
        from .dsl.kernel import Kernel
        if backend not in ("auto", "inprocess", "process"):
            raise ValueError(f"autotune: backend must be 'auto', 'inprocess' or 'process', got "
                             f"{backend!r}")
        self.backend = backend
        self.workers = workers
        if not isinstance(kernel, Kernel):
            if callable(kernel) and hasattr(kernel, "__code__"):
                from .dsl.kernel import kernel as make_kernel
                kernel = make_kernel(kernel)
            else:
                raise TypeError("@asc.autotune goes above @asc.kernel: it takes a kernel")
        configs = list(configs)
        if not configs:
            raise ValueError(f"autotune {kernel.__name__}: configs is empty")
        for c in configs:
            if not isinstance(c, Config):
                raise TypeError(f"autotune {kernel.__name__}: configs must be asc.Config, "
                                f"got {c!r}")
        self.kernel = kernel
        self.__name__ = kernel.__name__
        self.__doc__ = kernel.__doc__
        self.configs = configs
        params = {p.name: p for p in kernel.params}
        self.tuned = sorted({k for c in configs for k, _ in c.kwargs})
        for c in configs:
            for name, _ in c.kwargs:
                if name not in params:
                    raise ValueError(f"autotune {kernel.__name__}: {c!r} sets '{name}', which is "
                                     f"not a parameter of the kernel")
            given = {k for k, _ in c.kwargs}
            for name in self.tuned:
                if name not in given and params[name].default is _missing_default():
                    raise ValueError(f"autotune {kernel.__name__}: {c!r} gives no value for "
                                     f"'{name}' and the kernel has no default for it")
        self.key = list(key)
        self.call_params = [p for p in kernel.params if p.name not in self.tuned]
        # the defaults of the trailing call parameters that have one (the fast launch path)
        defaults = []
        for p in reversed(self.call_params):
            if p.default is _missing_default():
                break
            defaults.insert(0, p.default)
        self._first_default = len(self.call_params) - len(defaults)
        self._fast_ok = not any(callable(k) for k in self.key)
        self._call_defaults = [None] * self._first_default + defaults
        for name in self.key:
            if callable(name):
                continue
            if name not in {p.name for p in self.call_params}:
                raise ValueError(f"autotune {kernel.__name__}: key '{name}' is not an argument "
                                 f"of the launch (arguments: "
                                 f"{', '.join(p.name for p in self.call_params)})")
        if prune_configs_by is not None:
            unknown = set(prune_configs_by) - {"perf_model", "top_k", "early_config_prune"}
            if unknown:
                raise ValueError(f"prune_configs_by: unknown entries {sorted(unknown)} (known: "
                                 f"perf_model, top_k, early_config_prune)")
        self.prune_configs_by = prune_configs_by or {}
        self.print_table = print_table
        self.use_disk_cache = use_disk_cache
        self.pre_hook = pre_hook
        self.tolerance = {k: v for k, v in (("rtol", rtol), ("atol", atol)) if v is not None}
        self.tables: dict = {}       # memory key -> TuneResult
        self._chosen: dict = {}      # memory key -> (Config, block_dim)
        self._launchers: dict = {}   # int grid or AUTO -> _TunedLauncher

    def __repr__(self) -> str:
        return f"<asc.autotune of {self.kernel!r}, {len(self.configs)} configs>"

    def __call__(self, *args, **kwargs):
        return self.kernel(*args, **kwargs)    # raises the kernel's "launch with k[...]"

    def __getitem__(self, grid) -> "_TunedLauncher":
        if isinstance(grid, tuple):
            grid = grid[0]
        if type(grid) is int or grid is AUTO:
            found = self._launchers.get(grid)
            if found is None:
                if len(self._launchers) > 256:
                    self._launchers.clear()
                found = self._launchers[grid] = _TunedLauncher(self, grid)
            return found
        return _TunedLauncher(self, grid)

    # ------------------------------------------------------------------ binding
    def _bind(self, args, kwargs) -> tuple[dict, dict]:
        """(argument values by name, launch keywords) of a launch without the tuned names."""
        launch = {k: kwargs.pop(k) for k in list(kwargs) if k in LAUNCH_KEYWORDS}
        names = [p.name for p in self.call_params]
        if len(args) > len(names):
            raise LaunchArgumentError(f"{self.__name__} (autotuned over "
                                      f"{', '.join(self.tuned)}) takes {len(names)} arguments "
                                      f"but {len(args)} were given")
        values = dict(zip(names, args))
        for k, v in kwargs.items():
            if k in self.tuned:
                raise LaunchArgumentError(f"{self.__name__}: '{k}' is chosen by autotune; do not "
                                          f"pass it")
            if k not in names:
                raise LaunchArgumentError(f"{self.__name__} got an unexpected argument '{k}'")
            if k in values:
                raise LaunchArgumentError(f"{self.__name__} got multiple values for '{k}'")
            values[k] = v
        for p in self.call_params:
            if p.name not in values:
                if p.default is _missing_default():
                    raise LaunchArgumentError(f"{self.__name__} is missing argument '{p.name}'")
                values[p.name] = p.default
        return values, launch

    def _full_args(self, values: dict, config: Config) -> tuple:
        named = dict(values)
        named.update(config.kwargs)
        for hook in (self.pre_hook, config.pre_hook):
            if hook is not None:
                hook(named)
        return tuple(named[p.name] if p.name in named else p.default
                     for p in self.kernel.params)

    def _block_dim(self, grid, config: Config) -> int:
        if config.block_dim is not None:
            return config.block_dim
        if grid is AUTO:
            raise LaunchArgumentError(f"{self.__name__}[asc.AUTO]: {config!r} carries no "
                                      f"block_dim; give every config one, or launch with "
                                      f"{self.__name__}[block_dim]")
        if callable(grid):
            grid = grid(dict(config.kwargs))
            if isinstance(grid, tuple):
                grid = grid[0]
        return int(grid)

    def key_of(self, values: dict, grid) -> tuple:
        """The tuning key of a launch: the key arguments' values (arrays by dtype and shape),
        the GM arguments' dtypes and the launch grid."""
        parts = tuple((getattr(name, "__name__", "key"), _key_part(name(values)))
                      if callable(name) else (name, _key_part(values[name]))
                      for name in self.key)
        dtypes = tuple(v.dtype for v in values.values() if _is_array(v))
        g = "AUTO" if grid is AUTO else ("fn" if callable(grid) else int(grid))
        return parts + (("dtypes", dtypes), ("grid", g))

    def code_hash(self) -> str:
        return kernel_code_hash(self.kernel)

    # ------------------------------------------------------------------ tuning
    def pruned_configs(self, values: dict) -> list:
        """The configs to run after ``prune_configs_by`` (Triton's spelling:
        ``early_config_prune(configs, named_args)``, then ``perf_model(**named_args,
        **config_values)`` keeps the ``top_k`` lowest (an int, or a fraction of the configs)."""
        configs = list(self.configs)
        prune = self.prune_configs_by
        if prune.get("early_config_prune"):
            configs = list(prune["early_config_prune"](configs, dict(values)))
        model = prune.get("perf_model")
        if model is not None:
            top_k = prune.get("top_k", len(configs))
            if isinstance(top_k, float) and top_k <= 1.0:
                top_k = max(1, int(len(configs) * top_k))
            est = [(model(**values, **c.values), i) for i, c in enumerate(configs)]
            keep = sorted(est)[:int(top_k)]
            configs = [configs[i] for _, i in sorted(keep, key=lambda e: e[1])]
        if not configs:
            raise AutotuneError(f"autotune {self.__name__}: prune_configs_by left no config")
        return configs

    def tune(self, grid, *args, **kwargs) -> TuneResult:
        """Run every config on these arguments (restored afterwards) and return the table,
        ignoring any cached choice; the choice is then cached as a first launch would."""
        values, launch = self._bind(args, dict(kwargs))
        chip = _chip(launch.get("platform"))
        result = self._run_configs(grid, values, launch, chip)
        self._remember(self.key_of(values, grid), chip, result, write=True)
        return result

    def _run_configs(self, grid, values: dict, launch: dict, chip) -> TuneResult:
        t0 = time.perf_counter()
        key = self.key_of(values, grid)
        configs = self.pruned_configs(values)
        arrays = {n: v for n, v in values.items() if _is_array(v)}
        original = {n: _snapshot(v) for n, v in arrays.items()}
        result = TuneResult(self.__name__, chip.name, key)
        reference = None        # (config, {name: snapshot of what it wrote})
        # the configs run untraced and unsanitized (the chosen one then runs as asked)
        platform_kw = {"platform": launch.get("platform"), "trace": False, "sanitize": False}
        bar = _progress(len(configs), f"autotune {self.__name__}")
        pooled = None
        try:
            if self._use_pool(len(configs)):
                from .sweeper import run_configs_in_pool
                pooled = run_configs_in_pool(self, grid, values, chip, configs,
                                             self._workers(), bar)
            for i, config in enumerate(configs if pooled is None else ()):
                bd = self._block_dim(grid, config)
                row = TuneRow(config, bd)
                result.rows.append(row)
                for n, v in arrays.items():
                    _restore(v, original[n])
                try:
                    report = self.kernel[bd](*self._full_args(values, config), **platform_kw)
                    row.cycles = int(report.cycles)
                    row.bottleneck = report.bottleneck
                    row.gm_bandwidth_gbps = float(report.gm_bandwidth_gbps)
                    row.time_us = float(report.time_us)
                except Exception as exc:  # noqa: BLE001 - reported in the table, never chosen
                    row.error = _first_line(exc)
                    bar.update(None)
                    continue
                written = {n: _snapshot(v) for n, v in arrays.items()}
                if reference is None:
                    reference = (config, written)
                else:
                    _check_same(self.__name__, reference, config, written, self.tolerance,
                                self.kernel.def_loc())
                best = min((r.cycles for r in result.rows if r.cycles is not None))
                bar.update(best)
            for config, out in zip(configs, pooled or ()):   # the pool's, in config order
                row = TuneRow(config, out.get("block_dim", 0), out["cycles"],
                              out.get("bottleneck", ""), out.get("gm_bandwidth_gbps", 0.0),
                              out.get("time_us", 0.0), out["error"])
                result.rows.append(row)
                if row.cycles is None:
                    continue
                if reference is None:
                    reference = (config, out["written"])
                else:
                    _check_same(self.__name__, reference, config, out["written"],
                                self.tolerance, self.kernel.def_loc())
        finally:
            bar.close()
            for n, v in arrays.items():
                _restore(v, original[n])
        ok = [r for r in result.rows if r.cycles is not None]
        result.seconds = time.perf_counter() - t0
        if not ok:
            raise AutotuneError(
                f"autotune {self.__name__}: every config failed on {chip.name}:\n" +
                "\n".join(f"  {r.config.label()}: {r.error}" for r in result.rows),
                self.kernel.def_loc(),
                hint="fix the kernel for at least one config, or remove the failing ones")
        best = min(ok, key=lambda r: r.cycles)     # ties: the first in config order
        result.best, result.best_block_dim = best.config, best.block_dim
        return result

    def _workers(self) -> int:
        import os
        return self.workers or os.cpu_count() or 1

    def _use_pool(self, n_configs: int) -> bool:
        """Whether this tuning run goes to the process pool: ``backend="process"``, or
        "auto" with at least ``POOL_THRESHOLD`` configs and more than one CPU."""
        if self.backend == "process":
            return True
        if self.backend != "auto":
            return False
        from .sweeper import POOL_THRESHOLD
        return n_configs >= POOL_THRESHOLD and self._workers() > 1

    def _remember(self, key, chip, result: TuneResult, write: bool) -> None:
        mem = (key, platform_id(chip))
        self.tables[mem] = result
        self._chosen[mem] = (result.best, result.best_block_dim, self.kernel._code)
        if write and self.use_disk_cache:
            _disk_store(self._disk_path(key, chip), result)

    def _disk_path(self, key, chip):
        from .compiler import jit
        from .compiler.cachedir import cache_dir
        root = cache_dir()
        if root is None:
            return None
        h = hashlib.sha256(repr((TABLE_VERSION, self.kernel.fn.__module__,
                                 self.kernel.fn.__qualname__, self.code_hash(),
                                 [(repr(c), callable_fingerprint(c.pre_hook))
                                  for c in self.configs],
                                 callable_fingerprint(self.pre_hook),
                                 sorted((name, callable_fingerprint(f) if callable(f) else f)
                                        for name, f in self.prune_configs_by.items()),
                                 sorted(self.tolerance.items()), key, repr(chip),
                                 jit.compiler_version())).encode()).hexdigest()[:32]
        return root / "autotune" / f"{h}.json"

    def choose(self, grid, values: dict, launch: dict):
        """(config, block_dim) for a launch: memory, then disk, else tune now."""
        chip = _chip(launch.get("platform"))
        key = self.key_of(values, grid)
        mem = (key, platform_id(chip))
        found = self._chosen.get(mem)
        if found is not None and found[2] is self.kernel.fn.__code__:
            return found[0], found[1]
        path = self._disk_path(key, chip) if self.use_disk_cache else None
        result = _disk_load(path, self.configs, self.__name__, chip.name, key)
        if result is None:
            result = self._run_configs(grid, values, launch, chip)
            if self.print_table:
                print(result)
            self._remember(key, chip, result, write=True)
        else:
            self._remember(key, chip, result, write=False)
        return result.best, result.best_block_dim


class _TunedLauncher:
    """``k[grid]`` of an autotuned kernel."""

    def __init__(self, tuner: Autotuner, grid):
        if grid is not AUTO and not callable(grid) and (
                isinstance(grid, bool) or not isinstance(grid, (int, np.integer))):
            raise LaunchArgumentError(f"block_dim must be an int, asc.AUTO or a function of "
                                      f"the config's values, got {grid!r}")
        self.tuner = tuner
        self.grid = grid
        self._fast: dict = {}    # _fast_key -> (code, launcher, config values by position)

    @user_boundary
    def __call__(self, *args, **kwargs):
        tuner = self.tuner
        fast = None
        if not kwargs and tuner.pre_hook is None:
            n = len(tuner.call_params)
            if tuner._first_default <= len(args) < n:    # the rest have defaults
                args = args + tuple(tuner._call_defaults[len(args):])
            fast = self._fast_key(args)
            hit = self._fast.get(fast) if fast is not None else None
            if hit is not None and hit[0] is tuner.kernel.fn.__code__:
                # a key seen before on this platform: one normal launch
                merged = list(args)
                for i, v in hit[2]:
                    merged.insert(i, v)
                return hit[1](*merged)
        values, launch = tuner._bind(args, dict(kwargs))
        config, bd = tuner.choose(self.grid, values, launch)
        if fast is not None and config.pre_hook is None:
            if len(self._fast) > 256:
                self._fast.clear()
            slots = tuple((i, config.values[p.name]) for i, p in enumerate(tuner.kernel.params)
                          if p.name in tuner.tuned and p.name in config.values)
            if len(slots) == len(tuner.tuned):
                self._fast[fast] = (tuner.kernel.fn.__code__, tuner.kernel[bd], slots)
        return tuner.kernel[bd](*tuner._full_args(values, config), **launch)

    def _fast_key(self, args) -> Optional[tuple]:
        """What decides the choice for a call with every argument by position and no launch
        keyword: each argument's value (arrays: type, dtype and shape; the key arguments
        decide, the others only as the slow path's key does), and the current platform.
        None when an argument is not hashable."""
        tuner = self.tuner
        if len(args) != len(tuner.call_params) or not tuner._fast_ok:
            return None
        parts = []
        for v in args:
            t = type(v)
            if t is np.ndarray or _is_array(v):
                parts.append((t, v.dtype, v.shape))
            elif t is int or t is float or t is bool or t is str:
                parts.append((t, v))
            else:
                return None
        return (platform_id(_config.current_platform()), tuple(parts))


def _missing_default():
    from .dsl.kernel import _MISSING
    return _MISSING


def _chip(platform):
    from .simulator.config import current_platform, get_platform
    return get_platform(platform) if platform is not None else current_platform()


def _check_same(kernel: str, reference, config: Config, written: dict,
                tolerance: dict, loc=None) -> None:
    from .testing import compare
    ref_config, ref = reference
    for name, value in written.items():
        if _equal(value, ref[name]):     # equal values pass under any tolerance; compare()'s
            continue                     # float64 statistics cost seconds on large arrays
        cmp = compare(value, ref[name], **tolerance)
        if not cmp.passed:
            raise AutotuneError(
                f"autotune {kernel}: config {config.label()} writes different values to "
                f"'{name}' than config {ref_config.label()}:\n{cmp}", loc,
                hint="every config must compute the same result; a tiling parameter that "
                     "changes the result is a bug in the kernel (or not a tiling parameter)")


def _disk_store(path, result: TuneResult) -> None:
    if path is None:
        return
    from .compiler.cachedir import write_file
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        return
    data = {"version": TABLE_VERSION, "kernel": result.kernel, "platform": result.platform,
            "key": repr(result.key), "seconds": result.seconds,
            "best": [list(kv) for kv in result.best.kwargs], "best_config_block_dim":
            result.best.block_dim, "best_block_dim": result.best_block_dim,
            "rows": [r.as_dict() for r in result.rows]}
    try:
        write_file(path, json.dumps(data, default=repr).encode())
    except (TypeError, ValueError):
        pass


def _disk_load(path, configs, kernel: str, platform: str, key) -> Optional[TuneResult]:
    """The stored table, or None (missing, unreadable, or naming a config no longer listed)."""
    if path is None:
        return None
    from .compiler.cachedir import read_file
    raw = read_file(path, limit=1 << 24)
    if raw is None:
        return None
    try:
        data = json.loads(raw)
        listed = {c: c for c in configs}

        def config_of(values, bd):
            return listed.get(Config(dict((k, v) for k, v in values), block_dim=bd))

        best = config_of(data["best"], data["best_config_block_dim"])
        if best is None or data.get("version") != TABLE_VERSION:
            return None
        result = TuneResult(kernel, platform, key, best=best,
                            best_block_dim=int(data["best_block_dim"]),
                            seconds=float(data["seconds"]), origin="disk")
        for r in data["rows"]:
            c = config_of(r["values"], r["config_block_dim"])
            if c is None:
                return None
            result.rows.append(TuneRow(c, int(r["block_dim"]), r["cycles"], r["bottleneck"],
                                       float(r["gm_bandwidth_gbps"]), float(r["time_us"]),
                                       r["error"]))
        return result
    except (ValueError, KeyError, TypeError):
        return None


def _progress(total: int, what: str):
    from .sweep_progress import Progress
    return Progress(total, what)


def autotune(configs: Sequence[Config], key: Sequence[str] = (),
             prune_configs_by: Optional[dict] = None, *, print_table: bool = True,
             use_disk_cache: bool = True, pre_hook: Optional[Callable] = None,
             rtol: Optional[float] = None, atol: Optional[float] = None,
             backend: str = "auto", workers: Optional[int] = None) -> Callable:
    """Decorator above ``@asc.kernel``: choose the kernel's ``ConstExpr`` values (and
    optionally ``block_dim``) among ``configs`` by fewest simulated cycles, once per value of
    the ``key`` arguments and platform (a key entry may also be a function of the arguments by
    name, e.g. a size class: ``lambda a: a["n"].bit_length()``). ``prune_configs_by``: Triton's dict
    (``early_config_prune``, ``perf_model``, ``top_k``). ``print_table``: print the table on
    each tuning run (it is kept in ``k.tables`` either way). ``pre_hook(args)``: called
    before every launch like a Config's. ``rtol``/``atol``: the tolerance of the check that
    configs agree (default: the dtype's, ``asc.testing``). ``use_disk_cache=False`` keeps
    choices in memory only. ``backend``: where a tuning run launches the configs: "inprocess",
    "process" (the local process pool of ``asc.sweep``; workers import the kernel, hooks and a
    callable grid by module and name, else the run stays in-process) or "auto" (default:
    the pool from ``asc.sweeper.POOL_THRESHOLD`` configs on, with more than one CPU);
    ``workers``: the pool's size (default: the CPU count). The choice and table are the same
    whichever runs them. See the module docstring."""
    def wrap(kernel) -> Autotuner:
        return Autotuner(kernel, configs, key, prune_configs_by, print_table=print_table,
                         use_disk_cache=use_disk_cache, pre_hook=pre_hook, rtol=rtol,
                         atol=atol, backend=backend, workers=workers)
    return wrap


__all__ = ["AUTO", "Config", "Autotuner", "AutotuneError", "TuneResult", "TuneRow", "autotune"]
