"""The command line: ``python -m ascendc_py`` or the console script ``ascendc-py``.

    ascendc-py run FILE.py [--sanitize] [--trace DIR] [--platform P] [-- ARGS...]
    ascendc-py trace FILE.json [--core N] [--subcore AIC] [-o PNG]
    ascendc-py cache info | cache clear
    ascendc-py platforms [NAME]
    ascendc-py doctor

Exit codes: 0 success; 1 the command ran and failed (a kernel error, a failed check, a script
that raised); 2 a usage error (unknown command or option, a missing file, an unknown platform);
130 interrupted (Ctrl-C); ``run`` passes on the exit code of a script that calls ``sys.exit``.
"""
from __future__ import annotations

import argparse
import os
import sys
import traceback
from pathlib import Path
from typing import Optional

PROG = "ascendc-py"
USAGE_ERROR = 2

#: names in the compile cache root that are this package's (``cache clear`` removes only these)
CACHE_KINDS = (("kernels", "compiled kernels"), ("runtime-", "runtime library parts"),
               ("lark_tables_", "parser tables"))


class UsageError(Exception):
    """A mistake in the command line or its arguments (exit code 2)."""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG, description="ascendc_py: Ascend C-style kernels in Python on a simulated "
        "Ascend AI Core. Run kernel scripts, draw traces, manage the compile cache, list the "
        "machine models, check the installation.",
        epilog="exit codes: 0 ok, 1 failed, 2 usage error, 130 interrupted")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    run = sub.add_parser("run", help="run a kernel script with these settings",
                         description="Run FILE.py as __main__ with every launch sanitized, "
                         "traced or on another platform. The options of run come before FILE;"
                         " everything after FILE goes to the script.")
    run.add_argument("file", metavar="FILE.py")
    run.add_argument("--sanitize", action="store_true",
                     help="run every launch in sanitize mode (ASCENDC_PY_SANITIZE=1)")
    run.add_argument("--trace", metavar="DIR",
                     help="record every launch's trace and write it to DIR as "
                          "NNN_<kernel>.json (Perfetto, chrome://tracing, 'ascendc-py trace')")
    run.add_argument("--platform", metavar="P",
                     help="the default platform of the launches (see 'ascendc-py platforms')")
    run.add_argument("args", nargs=argparse.REMAINDER, help="arguments of the script")

    tr = sub.add_parser("trace", help="draw a timeline from a trace JSON",
                        description="Draw the pipe timeline of one core of a trace JSON "
                        "(report.save_trace or 'run --trace').")
    tr.add_argument("file", metavar="FILE.json")
    tr.add_argument("--core", type=int, default=0, metavar="N", help="the core (default 0)")
    tr.add_argument("--subcore", default=None, metavar="LABEL",
                    help="cube/mix traces: AIC, AIV0 or AIV1 (default: the one ending last)")
    tr.add_argument("-o", "--output", metavar="PNG",
                    help="the picture to write (default FILE.coreN.png)")

    cache = sub.add_parser("cache", help="show or clear the compile cache",
                           description="The compile cache (ASCENDC_PY_CACHE_DIR, else "
                           "$XDG_CACHE_HOME/ascendc_py or ~/.cache/ascendc_py).")
    cache.add_argument("action", choices=("info", "clear"))

    plat = sub.add_parser("platforms", help="list the machine models and their key figures")
    plat.add_argument("name", nargs="?", help="describe this platform in full")

    sub.add_parser("doctor", help="check the installation and say what to fix")
    return p


def main(argv: Optional[list] = None) -> int:
    """Entry point of ``python -m ascendc_py`` and ``ascendc-py``; returns the exit code."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except UsageError as exc:
        parser.print_usage(sys.stderr)
        print(f"{PROG} {args.command}: error: {exc}", file=sys.stderr)
        return USAGE_ERROR
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130


# ----------------------------------------------------------------------------- run
def cmd_run(args) -> int:
    path = Path(args.file)
    if not path.is_file():
        raise UsageError(f"no such file: {args.file}")
    if args.platform:
        from .simulator.config import get_platform, set_platform
        try:
            set_platform(get_platform(args.platform))
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    if args.sanitize:
        os.environ["ASCENDC_PY_SANITIZE"] = "1"
    saver = None
    if args.trace:
        os.environ["ASCENDC_PY_TRACE"] = "1"
        saver = _TraceSaver(Path(args.trace))
        from . import profiler
        profiler.observe(saver)
    script_args = args.args[1:] if args.args[:1] == ["--"] else args.args
    sys.argv = [str(path)] + list(script_args)
    sys.path.insert(0, str(path.resolve().parent))
    import runpy
    try:
        runpy.run_path(str(path), run_name="__main__")
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if exc.code is not None and not isinstance(exc.code, int):
            print(exc.code, file=sys.stderr)
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # noqa: BLE001 - the script's error, shown from its own frames
        _print_script_error(exc, path)
        code = 1
    finally:
        if saver is not None:
            from . import profiler
            profiler.unobserve(saver)
    if saver is not None:
        print(f"{PROG}: wrote {len(saver.written)} trace(s) to {args.trace}"
              + (f" ({saver.failed} launch(es) without events)" if saver.failed else ""),
              file=sys.stderr)
    return code


class _TraceSaver:
    """A launch observer writing every launch's trace JSON into a directory."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.written: list[str] = []
        self.failed = 0

    def __call__(self, report) -> None:
        name = f"{len(self.written) + self.failed:03d}_{report.kernel}.json"
        try:
            self.written.append(report.save_trace(self.directory / name))
        except ValueError:      # a launch that recorded nothing (trace=False passed)
            self.failed += 1


def _print_script_error(exc: BaseException, path: Path) -> None:
    """The script's traceback without this module's and runpy's frames (a kernel error is its
    own message: the kernel line, no frames)."""
    from .compiler.errors import KernelError
    if isinstance(exc, KernelError):
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return
    tb = exc.__traceback__
    script = os.path.abspath(path)
    first = tb
    while first is not None and os.path.abspath(first.tb_frame.f_code.co_filename) != script:
        first = first.tb_next            # this module's and runpy's frames
    traceback.print_exception(type(exc), exc, first or tb, file=sys.stderr)


# ----------------------------------------------------------------------------- trace
def cmd_trace(args) -> int:
    if not Path(args.file).is_file():
        raise UsageError(f"no such file: {args.file}")
    from .simulator.trace import plot_trace_file
    out = args.output or os.path.splitext(args.file)[0] + f".core{args.core}.png"
    try:
        print(plot_trace_file(args.file, out, args.core, args.subcore))
    except ImportError as exc:
        print(f"{PROG} trace: error: {exc}", file=sys.stderr)
        return 1
    except (ValueError, KeyError) as exc:      # not a trace, no such core or sub-core
        raise UsageError(str(exc)) from None
    return 0


# ----------------------------------------------------------------------------- cache
def _cache_root() -> Path:
    from .compiler import cachedir
    return cachedir._root()


def _size(path: Path) -> tuple[int, int]:
    """(files, bytes) under ``path``."""
    if path.is_file():
        return 1, path.stat().st_size
    files = nbytes = 0
    for dirpath, _, names in os.walk(path):
        for n in names:
            try:
                nbytes += os.stat(os.path.join(dirpath, n)).st_size
                files += 1
            except OSError:
                pass
    return files, nbytes


def _kind(name: str) -> Optional[str]:
    for prefix, label in CACHE_KINDS:
        if name == prefix or (prefix.endswith(("-", "_")) and name.startswith(prefix)):
            return label
    return None


def cmd_cache(args) -> int:
    from .simulator.report import _bytes
    root = _cache_root()
    print(f"cache directory: {root}"
          + ("" if os.environ.get("ASCENDC_PY_CACHE_DIR") else
             " (set ASCENDC_PY_CACHE_DIR to use another)"))
    if not root.is_dir():
        print("  empty (it does not exist yet)")
        return 0
    entries = sorted(root.iterdir())
    if args.action == "info":
        totals: dict[str, list] = {}
        for entry in entries:
            label = _kind(entry.name) or "other files (not ascendc_py's; left alone by clear)"
            files, nbytes = _size(entry)
            t = totals.setdefault(label, [0, 0])
            t[0] += files
            t[1] += nbytes
        for label, (files, nbytes) in totals.items():
            print(f"  {label}: {files} file(s), {_bytes(nbytes)}")
        if not totals:
            print("  empty")
        return 0
    import shutil
    removed = [0, 0]
    for entry in entries:
        if _kind(entry.name) is None:
            continue
        files, nbytes = _size(entry)
        try:
            shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
        except OSError as exc:
            print(f"{PROG} cache: error: cannot remove {entry}: {exc}", file=sys.stderr)
            return 1
        removed[0] += files
        removed[1] += nbytes
    print(f"  removed {removed[0]} file(s), {_bytes(removed[1])}")
    return 0


# ----------------------------------------------------------------------------- platforms
def cmd_platforms(args) -> int:
    from .simulator.config import PLATFORMS, current_platform, get_platform
    if args.name:
        try:
            print(get_platform(args.name).describe())
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        return 0
    current = current_platform().name
    head = ("platform", "AIC+AIV", "clock", "HBM", "L2", "UB/core", "vector fp16", "cube fp16")
    rows = [head]
    for cfg in PLATFORMS.values():
        rows.append((cfg.name + (" *" if cfg.name == current else ""),
                     f"{cfg.aic_cores}+{cfg.aiv_cores}", f"{cfg.clock_mhz:g} MHz",
                     f"{cfg.hbm_gbps:,.0f} GB/s", f"{cfg.gm.l2_size / 2**20:g} MB",
                     f"{cfg.ub_capacity() // 1024} KB", f"{cfg.peak_vector_tops_f16:.1f} TOPS",
                     f"{cfg.peak_cube_tflops_f16:.0f} TFLOPS"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    for r in rows:
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                        for i, (c, w) in enumerate(zip(r, widths))).rstrip())
    print(f"* the default (asc.set_platform, launch platform=); "
          f"'{PROG} platforms NAME' describes one in full")
    return 0


# ----------------------------------------------------------------------------- doctor
def cmd_doctor(args) -> int:
    from .doctor import run_checks
    failed = run_checks(print)
    return 1 if failed else 0


COMMANDS = {"run": cmd_run, "trace": cmd_trace, "cache": cmd_cache, "platforms": cmd_platforms,
            "doctor": cmd_doctor}
