"""``asc.sweep``: run a grid of configs × shapes × platforms and tabulate the simulated cost.

    res = asc.sweep(sepia_kernel, [asc.Config(TILE=t, BUFS=b) for t in (512, 1024, 2048)
                                   for b in (1, 2)],
                    args=(img, out, 4, 224 * 224), block_dim=8,
                    platforms=["Ascend910B2", "Ascend910B4"])
    res.rows            # a pandas DataFrame when pandas is installed, else a list of dicts
    res.plot("out/sepia_sweep.png")

Each row: the shape label, platform, config (its label and one column per ConstExpr value),
``block_dim``, ``cycles``, ``time_us``, ``bottleneck``, ``gm_bandwidth_gbps``, ``gm_bytes``,
``flops`` (vector) and ``cube_flops``, ``roofline_cycles`` (the platform's lower bound for that
traffic and arithmetic: the larger of GM bytes / HBM bandwidth and FLOPs / peak rate, on the
whole chip), ``bound`` ('memory' or 'compute': which limit that is), ``roofline_fraction``
(roofline_cycles / cycles) and ``error`` (empty, or why the config failed: failed configs are
rows too, with ``cycles`` None).

Backends (``backend=``): ``"inprocess"``; ``"process"``, a local process pool (forkserver
start, or spawn where there is none: never fork, the launching process has native threads);
``"ray"`` or a Ray address (``"ray://host:10001"``, ``"auto"``-style addresses are passed to
``ray.init``); ``"auto"`` (default) runs in-process below ``POOL_THRESHOLD`` tasks and in the
process pool from there on. Workers resolve the kernel by module and qualified name (a kernel
defined at module level of an importable module or of the script being run) and keep their
compiled kernels between batches and sweeps (the pool stays up until the process exits); the
rows are the same whichever backend ran them (simulated cycles are deterministic).
"""
from __future__ import annotations

import atexit
import hashlib
import importlib
import importlib.util
import math
import os
import pickle
import sys
import warnings
from typing import Any, Callable, Optional, Sequence

from .autotuner import AUTO, Autotuner, Config, _first_line, _is_array, _restore, _snapshot
from .sweep_progress import Progress

POOL_THRESHOLD = 64        # tasks from which "auto" uses the process pool
RAY_BATCHES_PER_CPU = 4    # Ray: about this many batches per cluster CPU ...
RAY_MIN_BATCH = 8          # ... of at least this many launches (well above Ray's ~1 ms a task)

ROW_KEYS = ("shape", "platform", "config", "block_dim", "cycles", "time_us", "bottleneck",
            "gm_bandwidth_gbps", "gm_bytes", "flops", "cube_flops", "roofline_cycles", "bound",
            "roofline_fraction", "error")


# ---------------------------------------------------------------------------- the job
class _Job:
    """Everything a worker needs to run tasks: picklable (the kernel by reference)."""

    def __init__(self, kernel, configs, shapes, args, block_dim, platforms, pre_hook=None):
        self.kernel = kernel            # a Kernel in-process; (module, qualname, file) pickled
        self.configs = configs
        self.shapes = shapes            # list of labels
        self.args = args                # callable(shape) or {label: tuple}
        self.block_dim = block_dim
        self.platforms = platforms      # list of ChipConfig
        self.pre_hook = pre_hook
        self._tuner = None
        self._made: dict = {}

    def tuner(self) -> Autotuner:
        if self._tuner is None:
            self._tuner = Autotuner(self.kernel, self.configs, (), print_table=False,
                                    use_disk_cache=False, pre_hook=self.pre_hook)
        return self._tuner

    def args_for(self, si: int) -> tuple:
        """The shape's arguments, made once (one shape's at a time), its arrays restored to
        what they were made as before every launch, so each run starts from the same data
        whichever worker runs it after whichever other run."""
        found = self._made.get(si)
        if found is None:
            label = self.shapes[si]
            made = self.args(label) if callable(self.args) else self.args[label]
            made = tuple(made) if isinstance(made, (tuple, list)) else (made,)
            found = (made, {i: _snapshot(v) for i, v in enumerate(made) if _is_array(v)})
            self._made = {si: found}
            return made
        made, original = found
        for i, v in original.items():
            _restore(made[i], v)
        return made

    def run(self, task: tuple) -> dict:
        si, pi, ci = task
        tuner = self.tuner()
        config = self.configs[ci]
        chip = self.platforms[pi]
        row = {"shape": _label(self.shapes[si]), "platform": chip.name,
               "config": config.label()}
        row.update({k: v for k, v in config.kwargs})
        row.update({k: None for k in ROW_KEYS if k not in row})
        row["error"] = ""
        from .simulator.config import using_platform
        try:
            # the platform is the current one while the args function and hooks run (a host
            # tiling reads its core count)
            with using_platform(chip):
                values, launch = tuner._bind(self.args_for(si), {})
                bd = tuner._block_dim(self.block_dim, config)
                row["block_dim"] = bd
                report = tuner.kernel[bd](*tuner._full_args(values, config), platform=chip,
                                          trace=False, sanitize=False)
                row.update(_metrics(report, chip))
        except Exception as exc:  # noqa: BLE001 - a failed config is a row saying why
            row["error"] = _first_line(exc)
        return row

    def __getstate__(self):
        state = dict(self.__dict__)
        state["kernel"] = _kernel_ref(self.kernel)
        state["_tuner"] = None
        state["_made"] = {}
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.kernel = _resolve_kernel(*state["kernel"])


class _TuneJob:
    """An autotune run's configs for the process pool: ``run(i)`` launches config ``i`` on
    the arguments as they were passed and returns its figures and what it wrote to the GM
    arrays (the launching process checks that the configs agree, in config order)."""

    def __init__(self, tuner: Autotuner, grid, values: dict, chip):
        self.kernel = tuner.kernel
        self.configs = list(tuner.configs)
        self.key = list(tuner.key)
        self.pre_hook = tuner.pre_hook
        self.grid = grid
        self.values = values
        self.chip = chip
        self._tuner = None
        self._original = None

    def run(self, ci: int) -> dict:
        if self._tuner is None:
            self._tuner = Autotuner(self.kernel, self.configs, self.key, print_table=False,
                                    use_disk_cache=False, pre_hook=self.pre_hook)
            self._original = {n: _snapshot(v) for n, v in self.values.items() if _is_array(v)}
        tuner, config = self._tuner, self.configs[ci]
        for n, v in self._original.items():
            _restore(self.values[n], v)
        out = {"ci": ci, "cycles": None, "error": "", "written": None}
        try:
            bd = tuner._block_dim(self.grid, config)
            out["block_dim"] = bd
            report = tuner.kernel[bd](*tuner._full_args(self.values, config), platform=self.chip,
                                      trace=False, sanitize=False)
            out.update(cycles=int(report.cycles), bottleneck=report.bottleneck,
                       gm_bandwidth_gbps=float(report.gm_bandwidth_gbps),
                       time_us=float(report.time_us))
            out["written"] = {n: _snapshot(self.values[n]) for n in self._original}
        except Exception as exc:  # noqa: BLE001 - reported in the table, never chosen
            out["error"] = _first_line(exc)
        return out

    def __getstate__(self):
        state = dict(self.__dict__)
        state["kernel"] = _kernel_ref(self.kernel)
        state["_tuner"] = None
        state["_original"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.kernel = _resolve_kernel(*state["kernel"])


def run_configs_in_pool(tuner: Autotuner, grid, values: dict, chip, configs: list,
                        workers: int, bar: Progress) -> Optional[list]:
    """Launch ``configs`` (those of ``tuner``, maybe pruned) in the process pool: their
    results in config order, or None when the run cannot be sent to workers (a kernel not at
    module level, a lambda hook or grid: the caller runs in-process)."""
    job = _TuneJob(tuner, grid, values, chip)
    index = {c: i for i, c in enumerate(job.configs)}
    try:
        pickle.dumps(job)
    except Exception:  # noqa: BLE001 - not shareable: in-process
        return None
    return _run_pool(job, [index[c] for c in configs], workers, bar)


def _label(shape) -> Any:
    return shape if isinstance(shape, (int, float, str)) else repr(shape)


def _metrics(report, chip) -> dict:
    """The row's figures from a launch report and the platform's roofline."""
    gm_bytes = int(sum(v for k, v in report.bytes_moved.items() if "GM" in k))
    flops, cube = int(report.flops), int(report.cube_flops)
    hz = chip.clock_mhz * 1e6
    memory_s = gm_bytes / (chip.hbm_gbps * 1e9) if chip.hbm_gbps else 0.0
    vector_s = flops / (chip.peak_vector_tops_f16 * 1e12) if chip.peak_vector_tops_f16 else 0.0
    cube_s = cube / (chip.peak_cube_tflops_f16 * 1e12) if chip.peak_cube_tflops_f16 else 0.0
    compute_s = vector_s + cube_s
    roof = max(memory_s, compute_s) * hz
    cycles = int(report.cycles)
    return {"cycles": cycles, "time_us": float(report.time_us),
            "bottleneck": report.bottleneck,
            "gm_bandwidth_gbps": float(report.gm_bandwidth_gbps), "gm_bytes": gm_bytes,
            "flops": flops, "cube_flops": cube, "roofline_cycles": float(roof),
            "bound": "memory" if memory_s >= compute_s else "compute",
            "roofline_fraction": float(roof / cycles) if cycles else 0.0}


def _kernel_ref(kernel) -> tuple:
    fn = kernel.fn
    module = fn.__module__
    mod = sys.modules.get(module)
    path = getattr(mod, "__file__", None)
    if "<locals>" in fn.__qualname__ or (module == "__main__" and not path):
        raise _NotShareable(f"{kernel.__name__} is not defined at module level of a file")
    return module, fn.__qualname__, path, list(sys.path)


class _NotShareable(Exception):
    pass


def _resolve_kernel(module: str, qualname: str, path: Optional[str], sys_path: list):
    from .dsl.kernel import Kernel
    for p in sys_path:
        if p not in sys.path:
            sys.path.append(p)
    mods = []
    if module in sys.modules:
        mods.append(sys.modules[module])
    if module != "__main__":
        mods.append(importlib.import_module(module))
    elif path:
        name = "__asc_sweep_main__"
        mod = sys.modules.get(name)
        if mod is None:
            spec = importlib.util.spec_from_file_location(name, path)
            mod = importlib.util.module_from_spec(spec)
            sys.modules[name] = mod
            spec.loader.exec_module(mod)   # the script's `if __name__ == "__main__"` stays off
        mods.append(mod)
    for mod in mods:
        obj = mod
        try:
            for part in qualname.split("."):
                obj = getattr(obj, part)
        except AttributeError:
            continue
        obj = getattr(obj, "kernel", obj) if isinstance(obj, Autotuner) else obj
        if isinstance(obj, Kernel):
            return obj
    raise RuntimeError(f"sweep worker: kernel {module}.{qualname} not found")


# ---------------------------------------------------------------------------- workers
_WORKER_JOBS: dict = {}


def _job_blob(job: "_Job") -> bytes:
    """The job pickled with the launching process's import path: a worker extends its own
    with it before unpickling (the args function and the kernel live in the user's modules)."""
    return pickle.dumps((list(sys.path), pickle.dumps(job)))


def _worker_batch(job_id: str, blob: bytes, tasks: list) -> list:
    """Run a batch of tasks in a worker process (the job is unpickled once per worker)."""
    job = _WORKER_JOBS.get(job_id)
    if job is None:
        if len(_WORKER_JOBS) > 4:
            _WORKER_JOBS.clear()
        sys_path, inner = pickle.loads(blob)
        for p in sys_path:
            if p not in sys.path:
                sys.path.append(p)
        job = _WORKER_JOBS[job_id] = pickle.loads(inner)
    return [job.run(t) for t in tasks]


_POOL = {"pool": None, "workers": 0}


def _pool(workers: int):
    """The process pool (kept for later sweeps: its workers keep their compiled kernels)."""
    from concurrent.futures import ProcessPoolExecutor
    import multiprocessing as mp
    if _POOL["pool"] is not None and _POOL["workers"] == workers:
        return _POOL["pool"]
    shutdown_pool()
    method = "forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn"
    _POOL["pool"] = ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context(method))
    _POOL["workers"] = workers
    return _POOL["pool"]


def shutdown_pool(wait: bool = True) -> None:
    """Stop the sweep's worker processes (they are started again when needed)."""
    pool = _POOL["pool"]
    _POOL["pool"] = None
    if pool is not None:
        pool.shutdown(wait=wait, cancel_futures=True)


atexit.register(shutdown_pool)


def _batches(tasks: list, n_batches: int) -> list:
    size = max(1, math.ceil(len(tasks) / max(1, n_batches)))
    return [tasks[i:i + size] for i in range(0, len(tasks), size)]


def _run_inprocess(job: _Job, tasks: list, bar: Progress) -> list:
    rows = []
    for t in tasks:
        row = job.run(t)
        rows.append(row)
        bar.update(row["cycles"])
    return rows


def _run_pool(job: _Job, tasks: list, workers: int, bar: Progress) -> list:
    from concurrent.futures import as_completed
    blob = _job_blob(job)
    job_id = hashlib.sha256(blob).hexdigest()
    pool = _pool(workers)
    # small batches at first keep every worker busy to the end; the pickled job goes with
    # each, and a worker unpickles it once
    batches = _batches(tasks, workers * 4)
    futures = {pool.submit(_worker_batch, job_id, blob, b): i for i, b in enumerate(batches)}
    out: list = [None] * len(batches)
    try:
        for f in as_completed(futures):
            rows = f.result()
            out[futures[f]] = rows
            bar.update(min((r["cycles"] for r in rows if r["cycles"] is not None),
                           default=None), n=len(rows))
    except BaseException:
        # Ctrl-C (which the workers got too) or a worker that died: this pool is not reused
        for f in futures:
            f.cancel()
        shutdown_pool(wait=False)
        raise
    return [r for rows in out for r in rows]


def _run_ray(job: _Job, tasks: list, address: Optional[str], bar: Progress) -> list:
    try:
        import ray
    except ImportError as exc:
        raise ImportError("backend='ray' needs Ray: pip install 'ascendc_py[ray]'") from exc
    if not ray.is_initialized():
        kwargs = {"include_dashboard": False, "log_to_driver": False}
        if address:
            kwargs["address"] = address
        else:       # a local instance, on the loopback address
            kwargs["_node_ip_address"] = "127.0.0.1"
            kwargs["runtime_env"] = {"env_vars": {
                k: v for k, v in os.environ.items() if k.startswith("ASCENDC_PY_")}}
        ray.init(**kwargs)
    remote = ray.remote(_worker_batch)
    blob = _job_blob(job)
    job_id = hashlib.sha256(blob).hexdigest()
    blob_ref = ray.put(blob)
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    n_batches = min(cpus * RAY_BATCHES_PER_CPU, max(1, len(tasks) // RAY_MIN_BATCH))
    batches = _batches(tasks, n_batches)
    refs = [remote.remote(job_id, blob_ref, b) for b in batches]
    index = {r: i for i, r in enumerate(refs)}
    out: list = [None] * len(refs)
    pending = list(refs)
    try:
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for r in ready:
                rows = ray.get(r)
                out[index[r]] = rows
                bar.update(min((x["cycles"] for x in rows if x["cycles"] is not None),
                               default=None), n=len(rows))
    except BaseException:
        for r in pending:
            ray.cancel(r, force=True)
        raise
    return [r for rows in out for r in rows]


# ---------------------------------------------------------------------------- the API
def sweep(kernel, configs: Sequence, *, args, shapes: Optional[Sequence] = None,
          block_dim: Any = None, platforms: Optional[Sequence] = None,
          backend: str = "auto", workers: Optional[int] = None,
          progress: Optional[bool] = None, pre_hook: Optional[Callable] = None
          ) -> "SweepResult":
    """Launch ``kernel`` for every config × shape × platform; return a ``SweepResult``.

    - ``kernel``: an ``@asc.kernel`` (or an ``@asc.autotune`` one: its kernel is swept).
    - ``configs``: ``asc.Config``s (or dicts) of ConstExpr values, each optionally with
      ``block_dim``.
    - ``args``: the launch arguments without the configs' parameters: a tuple (one shape), a
      dict ``{label: tuple}``, or a function ``args(shape) -> tuple`` called for each of
      ``shapes`` (in a worker, so large inputs are made there rather than sent).
    - ``block_dim``: for configs without one (an int, or a function of a config's values).
    - ``platforms``: names or ChipConfigs (default: the current platform).
    - ``backend``: "auto", "inprocess", "process", "ray" or a Ray address; ``workers``: the
      process pool's size (default: the CPU count).
    - ``progress``: None shows a bar for runs longer than about a second.
    - ``pre_hook(args)``: called before each launch, as ``@asc.autotune``'s (default: the
      autotuned kernel's own).
    """
    from .simulator.config import current_platform, get_platform
    tuned = kernel.kernel if isinstance(kernel, Autotuner) else kernel
    if pre_hook is None and isinstance(kernel, Autotuner):
        pre_hook = kernel.pre_hook
    configs = [c if isinstance(c, Config) else Config(dict(c)) for c in configs]
    if not configs:
        raise ValueError("sweep: configs is empty")
    if callable(args) and not isinstance(args, (tuple, list, dict)):
        if shapes is None:
            raise ValueError("sweep: args is a function of the shape; give shapes=[...]")
        shape_list, arg_src = list(shapes), args
    elif isinstance(args, dict):
        shape_list, arg_src = list(args), dict(args)
    else:
        if shapes is not None:
            raise ValueError("sweep: shapes=[...] needs args to be a function of the shape")
        shape_list, arg_src = ["args"], {"args": tuple(args)}
    if block_dim is None:
        missing = [c for c in configs if c.block_dim is None]
        if missing:
            raise ValueError(f"sweep {tuned.__name__}: {missing[0]!r} carries no block_dim; give "
                             f"block_dim= or give every config one")
    chips = [get_platform(p) for p in (platforms or [current_platform()])]
    job = _Job(tuned, configs, shape_list, arg_src, block_dim if block_dim is not None else AUTO,
               chips, pre_hook)
    job.tuner()          # configs checked against the kernel's parameters here
    tasks = [(si, pi, ci) for si in range(len(shape_list)) for pi in range(len(chips))
             for ci in range(len(configs))]
    workers = workers or os.cpu_count() or 1
    if backend == "auto":
        backend = "process" if len(tasks) >= POOL_THRESHOLD and workers > 1 else "inprocess"
    if backend in ("process", "ray") or backend.startswith("ray://") or ":" in backend:
        try:
            pickle.dumps(job)
        except _NotShareable as exc:
            warnings.warn(f"sweep: running in-process: {exc} (workers import kernels by "
                          f"module and name)", stacklevel=2)
            backend = "inprocess"
        except Exception as exc:  # noqa: BLE001 - a lambda args function or pre_hook
            warnings.warn(f"sweep: running in-process: the sweep cannot be sent to workers "
                          f"({type(exc).__name__}: {exc}); define the args function and "
                          f"hooks at module level", stacklevel=2)
            backend = "inprocess"
    bar = Progress(len(tasks), f"sweep {tuned.__name__}", enabled=progress)
    try:
        if backend == "inprocess":
            rows = _run_inprocess(job, tasks, bar)
        elif backend == "process":
            rows = _run_pool(job, tasks, workers, bar)
        elif backend == "ray" or backend.startswith("ray://") or ":" in backend:
            rows = _run_ray(job, tasks, None if backend == "ray" else backend, bar)
        else:
            raise ValueError(f"sweep: unknown backend {backend!r} (inprocess, process, ray, "
                             f"a Ray address, or auto)")
    finally:
        bar.close()
    return SweepResult(tuned.__name__, rows, [c.label() for c in configs], chips)


class SweepResult:
    """The rows of a sweep. ``rows``: a pandas DataFrame when pandas is installed, else the
    list of dicts (``records`` is always that list); ``best()``: the fastest row per shape and
    platform; ``plot(path)``: cycles per config against the roofline (``sweep_plot.py``)."""

    def __init__(self, kernel: str, records: list, config_labels: list, chips: list):
        self.kernel = kernel
        self.records = records
        self.config_labels = config_labels
        self.chips = chips

    @property
    def rows(self):
        try:
            import pandas as pd
        except ImportError:
            return self.records
        return pd.DataFrame.from_records(self.records)

    def __len__(self) -> int:
        return len(self.records)

    def best(self) -> list:
        """The row with the fewest cycles for each (shape, platform)."""
        out: dict = {}
        for r in self.records:
            if r["cycles"] is None:
                continue
            k = (r["shape"], r["platform"])
            if k not in out or r["cycles"] < out[k]["cycles"]:
                out[k] = r
        return list(out.values())

    def table(self) -> str:
        """The rows as text: one line a run."""
        width = max([6] + [len(r["config"]) for r in self.records])
        lines = [f"{'shape':<10} {'platform':<12} {'config':<{width}} {'block_dim':>9} "
                 f"{'cycles':>12} {'bottleneck':<10} {'GM GB/s':>9} {'roofline':>9}"]
        for r in self.records:
            if r["cycles"] is None:
                lines.append(f"{str(r['shape']):<10} {r['platform']:<12} "
                             f"{r['config']:<{width}} {str(r['block_dim']):>9} "
                             f"{'failed':>12} {r['error']}")
                continue
            lines.append(f"{str(r['shape']):<10} {r['platform']:<12} {r['config']:<{width}} "
                         f"{r['block_dim']:>9} {r['cycles']:>12,} {r['bottleneck']:<10} "
                         f"{r['gm_bandwidth_gbps']:>9.1f} {100 * r['roofline_fraction']:>8.1f}%")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()

    def plot(self, path=None):
        """A figure (matplotlib): cycles per config for each shape and platform with the
        roofline lower bound as a dashed line, and each run on the platform's roofline
        (attained FLOP/s against FLOP per GM byte). Saved to ``path`` when given; returns the
        path (or the Figure without one)."""
        from .sweep_plot import plot_sweep
        return plot_sweep(self, path)


__all__ = ["sweep", "SweepResult", "shutdown_pool", "POOL_THRESHOLD"]
