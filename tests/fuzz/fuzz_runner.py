"""The fuzz tests' runner: loading generated kernels from real files, time limits, isolated
processes, and classifying an outcome (``run_case()``: success, a catalogued ``asc.KernelError``,
or a failure: ``InternalCompilerError``, any other exception, a hang).

``python fuzz_runner.py --run-batch FILE`` runs the cases of a JSON file in a fresh process (the
crash guard of test_fuzz_sources.py): it prints ``CASE i`` before and ``RESULT i ...`` after each
case.
"""
from __future__ import annotations

import ast
import hashlib
import importlib.util
import json
import os
import sys
import threading
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import numpy as np

try:
    from .kernel_gen import NP_DTYPES, KernelSpec, random_array
except ImportError:  # run as a script (--run-batch): tests/fuzz is sys.path[0]
    from kernel_gen import NP_DTYPES, KernelSpec, random_array  # type: ignore  (puts the repository on sys.path)

import ascendc_py as asc  # noqa: E402
from ascendc_py.compiler.errors import InternalCompilerError  # noqa: E402

# ----------------------------------------------------------------------------- loading
_LOADED: dict[str, object] = {}
_LOAD_LOCK = threading.Lock()


def kernel_dir() -> Path:
    """Where generated modules are written (one per process; removed at exit)."""
    global _KDIR
    try:
        return _KDIR
    except NameError:
        import atexit
        import shutil
        import tempfile
        _KDIR = Path(tempfile.mkdtemp(prefix="ascendc_py_fuzz_"))
        atexit.register(shutil.rmtree, _KDIR, True)
        return _KDIR


_FRESH = iter(range(1, 1 << 62))


def load_module(source: str, fresh: bool = False):
    """Write ``source`` to a real file and import it (cached by content unless ``fresh``: a new
    module, so its kernels compile again and a replayed case behaves as the first time)."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    with _LOAD_LOCK:
        mod = None if fresh else _LOADED.get(digest)
        if mod is not None:
            return mod
        name = f"fz_{digest}" + (f"_{next(_FRESH)}" if fresh else "")
        path = kernel_dir() / f"{name}.py"
        path.write_text(source)
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SyntaxWarning)
                spec.loader.exec_module(mod)
        except BaseException:
            del sys.modules[name]
            raise
        if not fresh:
            _LOADED[digest] = mod
        return mod


def crumb_path() -> Path:
    """Where the case being run is written (per pytest-xdist worker): if the process dies in a
    case, this file names it."""
    import tempfile
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    return Path(tempfile.gettempdir()) / f"ascendc_py_fuzz_last_case.{worker}.txt"


class breadcrumb:
    """``with breadcrumb(text):`` keeps ``text`` in ``crumb_path()`` while the block runs."""

    def __init__(self, text: str):
        self.text = text

    def __enter__(self):
        try:
            crumb_path().write_text(self.text)
        except OSError:
            pass

    def __exit__(self, *exc):
        crumb_path().unlink(missing_ok=True)
        return False


def load_kernel(source: str, name: str = "fz_kernel", fresh: bool = False):
    return getattr(load_module(source, fresh), name)


# ----------------------------------------------------------------------------- running a case
# seconds a case may take (compile + launch; they take well under 1 s) before it is a hang
CASE_TIMEOUT = float(os.environ.get("ASCENDC_PY_FUZZ_TIMEOUT", "10"))
# the simulator's own watchdog stops a launch well before the harness would call it a hang
os.environ.setdefault("ASCENDC_PY_LAUNCH_TIMEOUT", str(max(0.5, CASE_TIMEOUT / 3)))


class Hang(Exception):
    """A case that did not finish in time. ``ended``: how the kernel ended once the harness
    aborted it (see ``abort_running_kernels``), or "" if it could not be stopped."""

    def __init__(self, message: str, ended: str = ""):
        super().__init__(message)
        self.ended = ended


# Aborting a hung kernel. Native code cannot be interrupted, and a daemon thread stuck in a
# launch would keep a core busy for the rest of the session, so on a timeout the harness makes
# the running blocks fault at their next instruction: the while-loop budget in each simulated
# core's ctx is set to 0 (the next while iteration raises LoopLimitError), then the size of every
# local memory to -1 (the next local access, even of 0 bytes, raises LocalOutOfRangeError). This
# only relies on the simulator's ABI; if its internals change, the abort is skipped and the hang
# is still reported.
_CTXS: dict = {}


def _track_contexts() -> None:
    try:
        from ascendc_py.simulator import runtime
        core = runtime._Core
    except (ImportError, AttributeError):
        return
    if getattr(core.prepare, "_fuzz_tracked", False):
        return
    original = core.prepare

    def prepare(self, *args, **kwargs):
        ctx = original(self, *args, **kwargs)
        _CTXS[id(ctx)] = ctx   # one ctx per host thread, reused across launches
        return ctx

    prepare._fuzz_tracked = True
    core.prepare = prepare


def abort_running_kernels(stage: str) -> bool:
    try:
        from ascendc_py.dsl.types import Memory
        from ascendc_py.simulator import abi
        budget, mem_size = abi.LOOP_BUDGET, abi.MEM_SIZE
    except (ImportError, AttributeError):
        return False
    for ctx in list(_CTXS.values()):
        if stage == "loops":
            ctx[budget] = 0
        else:
            for mem in Memory:
                if mem != Memory.GM:
                    ctx[mem_size + int(mem)] = -1   # even a 0-byte access is out of range
    return bool(_CTXS)


def call_with_timeout(fn, timeout: float = CASE_TIMEOUT):
    """Run fn() in a daemon thread (native code cannot be interrupted by a signal); raise Hang
    if it has not finished after ``timeout`` seconds (after trying to abort it). Time spent
    building the runtime library's shards (once, when a kernel first calls them) is not
    counted."""
    from ascendc_py.compiler.codegen.runtime_loader import build_seconds
    _track_contexts()
    box: dict = {}

    def target():
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller
            box["error"] = exc

    th = threading.Thread(target=target, daemon=True, name="fuzz-case")
    start, built = time.monotonic(), build_seconds()
    th.start()
    th.join(timeout)
    while th.is_alive():
        left = start + timeout + (build_seconds() - built) - time.monotonic()
        if left <= 0:
            break
        th.join(left)
    if th.is_alive():
        ended = ""
        # first only the while-loop budget (a loop that never ends ends with LoopLimitError),
        # then the local memories (anything else that issues instructions)
        for stage in ("loops", "memory"):
            if not abort_running_kernels(stage):
                break
            th.join(3 if stage == "loops" else 30)
            if not th.is_alive():
                err = box.get("error")
                ended = type(err).__name__ if err is not None else "returned"
                break
        raise Hang(f"no result after {timeout:.0f} s; " +
                   (f"aborted by the harness, it then ended with {ended}" if ended else
                    "the harness could not abort it (its thread is still running)"), ended)
    if "error" in box:
        raise box["error"]
    return box.get("value")


@dataclass(frozen=True)
class Arg:
    kind: str                  # in | out | scalar | const
    dtype: str = "float32"
    size: int = 0
    value: object = None
    dist: str = "sym"


@dataclass(frozen=True)
class Recipe:
    """How to launch a kernel of a (possibly edited) module."""

    kernel: str
    blocks: int
    args: tuple
    seed: int = 0

    def build(self) -> list:
        rng = np.random.default_rng(self.seed)
        out = []
        for a in self.args:
            if a.kind == "in":
                out.append(random_array(rng, a.size, NP_DTYPES[a.dtype],
                                        "int" if a.dtype.startswith("int") else a.dist))
            elif a.kind == "out":
                out.append(np.zeros(a.size, NP_DTYPES[a.dtype]))
            else:
                out.append(a.value)
        return out


def recipe_for(spec: KernelSpec, blocks: Optional[int] = None) -> Recipe:
    blocks = spec.blocks[0] if blocks is None else blocks
    n = blocks * spec.per_block
    args = [Arg("in", spec.dtype, n, dist=d) for d in spec.inputs]
    args.append(Arg("out", spec.dtype, n * len(spec.observed)))
    args += [Arg("scalar", value=s.value) for s in spec.scalars if not s.literal]
    return Recipe("fz_kernel", blocks, tuple(args), spec.seed)


@dataclass(frozen=True)
class Case:
    source: str
    recipe: Recipe
    base: str = ""
    edits: tuple = ()
    strict: bool = False      # a repro: its failure is never excused as a known bug
    timeout: float = 0.0      # seconds before it counts as a hang (0: CASE_TIMEOUT)


@dataclass
class Outcome:
    status: str                # ok | error | skip | fail
    detail: str = ""
    error_class: str = ""
    warnings: tuple = ()

    @property
    def failed(self) -> bool:
        return self.status == "fail"


def python_valid(source: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # SyntaxWarning: 'tuple' object is not callable …
        try:
            compile(source, "<fuzz>", "exec")
        except (SyntaxError, ValueError):
            return False
    return True


# ----------------------------------------------------------------------------- risky constants
# Compile-time folding of ``a ** b`` or ``a << b`` with a huge b runs in C with the GIL held (or
# allocates gigabytes): nothing in the process can time it out. Such cases run in a separate
# process (``run_isolated``), killed if they take too long.
_CAP = 1 << 70
RISKY_POW_EXPONENT = 1 << 20
RISKY_SHIFT = 1 << 27


def _cap(v: int) -> int:
    return max(-_CAP, min(_CAP, v))


def _safe_int(node, env: dict) -> Optional[int]:
    """The value of an integer constant expression (capped at 2**70 in magnitude, computed
    without ever building a huge number); None if it is not one."""
    if isinstance(node, ast.Constant):
        return _cap(node.value) if type(node.value) is int else None
    if isinstance(node, ast.Name):
        return env.get(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _safe_int(node.operand, env)
        return None if v is None else (-v if isinstance(node.op, ast.USub) else v)
    if not isinstance(node, ast.BinOp):
        return None
    a, b = _safe_int(node.left, env), _safe_int(node.right, env)
    if a is None or b is None:
        return None
    op = node.op
    if isinstance(op, ast.Add):
        return _cap(a + b)
    if isinstance(op, ast.Sub):
        return _cap(a - b)
    if isinstance(op, ast.Mult):
        return _cap(a * b)
    if isinstance(op, (ast.FloorDiv, ast.Mod)) and b:
        return _cap(a // b if isinstance(op, ast.FloorDiv) else a % b)
    if isinstance(op, ast.Pow) and b >= 0:
        return _cap(a ** b) if b <= 256 or abs(a) <= 1 and b <= _CAP else _CAP
    if isinstance(op, ast.LShift) and b >= 0:
        return _cap(a << b) if b <= 256 else _CAP
    if isinstance(op, ast.RShift) and b >= 0:
        return a >> min(b, 256)
    return None


def risky_constants(source: str) -> str:
    """Why compiling ``source`` may fold a gigantic constant ('' if it may not)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ""
    env: dict = {}
    for node in ast.walk(tree):   # flow-insensitive: every simple NAME = <int expression>
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name):
            v = _safe_int(node.value, env)
            if v is not None:
                env[node.targets[0].id] = v
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Pow, ast.LShift)):
            e = _safe_int(node.right, env)
            limit = RISKY_POW_EXPONENT if isinstance(node.op, ast.Pow) else RISKY_SHIFT
            if e is not None and e >= limit:
                return (f"constant {'**' if isinstance(node.op, ast.Pow) else '<<'} by "
                        f"{ast.unparse(node.right)} at line {node.lineno}")
    return ""


ISOLATED_GRACE = 5.0   # seconds an isolated case may take beyond its timeout


def run_isolated(case: Case, timeout: float) -> Outcome:
    """Run one case in a fresh ``--run-batch`` process; kill it ``timeout`` + a grace after
    it is ready (Hang), report a death by signal (Crash)."""
    import queue
    import subprocess
    import tempfile
    import time
    fd, path = tempfile.mkstemp(suffix=".json", dir=kernel_dir())
    with os.fdopen(fd, "w") as f:
        json.dump([case_to_json(case)], f)
    err = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen([sys.executable, __file__, "--run-batch", path, "--isolated"],
                            stdout=subprocess.PIPE, stderr=err, text=True)
    lines: queue.Queue = queue.Queue()

    def reader():
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=reader, daemon=True).start()
    deadline, ready = time.monotonic() + 120, False
    while True:
        try:
            line = lines.get(timeout=max(0.05, deadline - time.monotonic()))
        except queue.Empty:
            break
        if line is None:
            break
        if line.startswith("READY"):
            ready, deadline = True, time.monotonic() + timeout + ISOLATED_GRACE
        elif line.startswith("RESULT "):
            r = json.loads(line[7:])
            proc.wait()
            err.close()
            return Outcome(r["status"], r["detail"], r["class"])
    if proc.poll() is None:
        proc.kill()
        proc.wait()
        err.close()
        what = "after it was ready" if ready else "(it never got ready)"
        return Outcome("fail", f"hang: no result {timeout + ISOLATED_GRACE:.0f} s {what}; the "
                       f"process was killed", "Hang(isolated)")
    err.seek(0)
    tail = err.read()[-3000:]
    err.close()
    return Outcome("fail", f"crash: the process running the case died with status "
                   f"{proc.returncode}\n{tail}", "Crash")


def run_case(case: Case, timeout: float = 0.0, isolate: bool = True) -> Outcome:
    """Compile and launch one case. ``fail``: an InternalCompilerError, an exception that is not
    an asc.KernelError, a warning that is not an asc.KernelWarning, or a hang. A case that
    folds gigantic constants (``risky_constants``) runs in a separate process if ``isolate``."""
    timeout = timeout or case.timeout or CASE_TIMEOUT
    if not python_valid(case.source):
        return Outcome("skip", "not valid Python")
    reason = risky_constants(case.source) if isolate else ""
    if reason:
        out = run_isolated(case, timeout)
        out.detail = f"(run in a separate process: {reason})\n{out.detail}"
        return out
    with breadcrumb(f"{case.recipe!r}\n{case.source}"):
        return _run_in_process(case, timeout)


def _run_in_process(case: Case, timeout: float) -> Outcome:
    try:
        mod = load_module(case.source, fresh=True)
    except Exception as exc:  # noqa: BLE001 - a module-level Python error, not the compiler's
        if isinstance(exc, asc.KernelError):
            return Outcome("error", str(exc), type(exc).__name__)
        return Outcome("skip", f"import: {type(exc).__name__}: {exc}")
    kern = getattr(mod, case.recipe.kernel, None)
    if kern is None:
        return Outcome("skip", "kernel not defined")
    args = case.recipe.build()
    caught: list = []

    def launch():
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                return kern[case.recipe.blocks](*args)
            finally:
                caught.extend(w)

    try:
        call_with_timeout(launch, timeout)
        outcome = Outcome("ok")
    except Hang as exc:
        return Outcome("fail", f"hang: {exc}", f"Hang({exc.ended})" if exc.ended else "Hang")
    except InternalCompilerError as exc:
        return Outcome("fail", f"InternalCompilerError: {exc}\n{_cause(exc)}",
                       "InternalCompilerError")
    except asc.KernelError as exc:
        outcome = Outcome("error", str(exc), type(exc).__name__)
    except BaseException as exc:  # noqa: BLE001 - exactly what the fuzzer looks for
        import traceback
        return Outcome("fail", "".join(traceback.format_exception(exc)), type(exc).__name__)
    outcome.warnings = tuple(f"{w.category.__name__}: {w.message}" for w in caught)
    foreign = [w for w in caught if not issubclass(w.category, asc.KernelWarning)
               and ("ascendc_py" in str(w.filename) or "fz_" in str(w.filename))]
    if foreign:
        return Outcome("fail", "non-catalogued warning: " + "; ".join(
            f"{w.category.__name__}: {w.message} ({w.filename}:{w.lineno})" for w in foreign),
            foreign[0].category.__name__, outcome.warnings)
    return outcome


def _cause(exc: BaseException) -> str:
    import traceback
    c = exc.__cause__
    return "".join(traceback.format_exception(c)) if c is not None else ""

# ----------------------------------------------------------------------------- subprocess runner
def case_to_json(case: Case) -> dict:
    r = case.recipe
    return {"source": case.source, "base": case.base, "timeout": case.timeout,
            "recipe": {"kernel": r.kernel, "blocks": r.blocks, "seed": r.seed,
                       "args": [[a.kind, a.dtype, a.size, a.value, a.dist] for a in r.args]}}


def case_from_json(d: dict) -> Case:
    r = d["recipe"]
    args = tuple(Arg(k, dt, n, v, dist) for k, dt, n, v, dist in r["args"])
    return Case(d["source"], Recipe(r["kernel"], r["blocks"], args, r["seed"]), d.get("base", ""),
                timeout=d.get("timeout", 0.0))


def run_batch_file(path: str, isolated: bool = False) -> int:
    """Run the cases of a JSON file one after another, printing progress lines (see the module
    doc). The runtime library is loaded first, outside any case's time limit (then ``READY``).
    ``isolated``: this process is itself the separate process of ``run_isolated``."""
    with open(path) as f:
        cases = [case_from_json(d) for d in json.load(f)]
    from ascendc_py.compiler.codegen.runtime_lib import ensure_loaded
    ensure_loaded()
    print("READY", flush=True)
    for i, case in enumerate(cases):
        print(f"CASE {i}", flush=True)
        out = run_case(case, isolate=not isolated)
        print("RESULT " + json.dumps({"i": i, "status": out.status, "class": out.error_class,
                                      "detail": out.detail[-4000:]}), flush=True)
    return 0


if __name__ == "__main__":
    if len(sys.argv) in (3, 4) and sys.argv[1] == "--run-batch":
        sys.exit(run_batch_file(sys.argv[2], sys.argv[3:] == ["--isolated"]))
    print(__doc__)
