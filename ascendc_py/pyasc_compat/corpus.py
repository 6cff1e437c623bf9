"""pyasc's own test corpus, run unmodified on the simulator, counted and grouped.

    python -m ascendc_py.pyasc_compat.corpus [--repo DIR] [CORPUS ...]

``DIR`` (default ``$PYASC_REPO``) is a checkout of hicann/pyasc. Each corpus is one pytest run
of pyasc's files in a subprocess with :mod:`ascendc_py.pyasc_compat.pytest_plugin` (nothing is
copied; nothing is written into the checkout: no cache, no bytecode). The report gives, per
corpus, the cases that pass, fail and are skipped, the files whose every case passes, and the
failures grouped by what is missing: the pyasc name (``asc.set_atomic_add``,
``LocalTensor.set_size``, ``asc.adv.softmax``) or the construct (the error's message with its
numbers elided). Groups of files under ``adv/`` belong to pyasc's high-level library.

Corpora (:data:`CORPORA`): ``kernels`` (python/test/kernels, Model backend), ``generalization``
and ``generalization-lenient`` (python/test/generalization with ``--pyasc-npu-as-model``, strict
and lenient GM bounds), ``lib-host`` (python/test/unit/lib/host) and ``language``
(python/test/unit/language: compile-only under their mocked launcher). pyasc's tutorials are
programs, not pytest files: ``tests/pyasc_compat`` and ``tests/adv/test_tutorials.py`` run them.
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

__all__ = ["Corpus", "CORPORA", "Result", "run_corpus", "group_key", "is_deliberate", "main",
           "REPO_ENV"]

#: The environment variable naming a checkout of hicann/pyasc.
REPO_ENV = "PYASC_REPO"
PLUGIN = "ascendc_py.pyasc_compat.pytest_plugin"


@dataclass(frozen=True)
class Corpus:
    """One pytest run over a directory of pyasc's repository."""

    name: str
    path: str                 # inside the repository
    options: tuple = ()       # plugin / conftest options
    doc: str = ""


CORPORA = {c.name: c for c in (
    Corpus("kernels", "python/test/kernels", ("--backend", "Model"),
           "pyasc's kernel tests on the Model backend (their conftest's --backend Model)"),
    Corpus("generalization", "python/test/generalization", ("--pyasc-npu-as-model",),
           "the generalization tests (they hard-code Backend.NPU): NPU mapped onto Model, "
           "strict GM bounds"),
    Corpus("generalization-lenient", "python/test/generalization",
           ("--pyasc-npu-as-model", "--lenient"),
           "the same with lenient GM bounds (device-like slack past the end of a buffer)"),
    Corpus("lib-host", "python/test/unit/lib/host", (),
           "the host tiling tests (asc.lib.host)"),
    Corpus("language", "python/test/unit/language", (),
           "one kernel per language API, compiled under their mocked Launcher.run"),
)}


@dataclass
class Result:
    """The outcome of one corpus run."""

    corpus: Corpus
    passed: list = field(default_factory=list)      # node ids
    failed: dict = field(default_factory=dict)      # node id -> first line of the failure
    skipped: list = field(default_factory=list)
    seconds: float = 0.0
    returncode: int = 0
    output: str = ""

    @property
    def total(self) -> int:
        return len(self.passed) + len(self.failed) + len(self.skipped)

    def files(self) -> dict:
        """file -> [passed, failed, skipped] case counts."""
        out: dict = collections.defaultdict(lambda: [0, 0, 0])
        for ids, slot in ((self.passed, 0), (self.failed, 1), (self.skipped, 2)):
            for node in ids:
                out[node.split("::")[0]][slot] += 1
        return dict(out)

    def passing_files(self) -> list:
        """Files with at least one case that passed and none that failed."""
        return sorted(f for f, (p, fl, _) in self.files().items() if p and not fl)

    def groups(self) -> list:
        """[(key, [node ids])] of the failures, the largest group first."""
        by: dict = collections.defaultdict(list)
        for node, message in self.failed.items():
            by[group_key(message)].append(node)
        return sorted(by.items(), key=lambda kv: (-len(kv[1]), kv[0]))


_ATTR_PATTERNS = (
    (re.compile(r"'(?:asc|ascendc_py)' has no attribute '(\w+)'"), "asc.{0}"),
    (re.compile(r"module 'asc' has no attribute '(\w+)'"), "asc.{0}"),
    (re.compile(r"'(?:asc\.adv|ascendc_py\.adv)' has no attribute '(\w+)'"), "asc.adv.{0}"),
    (re.compile(r"(asc\.[\w.]+)\.(\w+) is not provided by ascendc_py"), "{0}.{1}"),
    (re.compile(r"^(\w+)(?:\[[^\]]*\]|\([^)]*\))? has no attribute '(\w+)' in kernels"),
     "{0}.{1}"),
    (re.compile(r"'(\w+)' object has no attribute '(\w+)'"), "{0}.{1}"),
    (re.compile(r"cannot import name '(\w+)' from '([\w.]+)'"), "{1}.{0}"),
)


def group_key(message: str) -> str:
    """What a failure says is missing: a pyasc name (``asc.X``, ``Type.method``) or the error
    class and message with file positions, numbers and quoted values elided."""
    line = message.strip().splitlines()[0] if message.strip() else "(no message)"
    collection = line.startswith("collection failure: ")
    line = re.sub(r"^collection failure: ", "", line)
    line = re.sub(r"^[\w.]*?(\w+(?:Error|Exception)): ", r"\1: ", line)
    body = re.sub(r"^\w+: ", "", line)
    body = re.sub(r"\S+\.py:\d+:\d+: ", "", body)
    for pattern, fmt in _ATTR_PATTERNS:
        m = pattern.search(body)
        if m:
            return "missing " + fmt.format(*m.groups())
    line = re.sub(r"\S+\.py:\d+:\d+: ", "", line)
    line = re.sub(r"\d+", "N", line)
    return ("collection failure: " if collection else "") + line[:140]


_DELIBERATE = (
    re.compile(r"^(collection failure: )?ascendc_py\.[\w.]+(Error|Warning)\b"),  # ours, at a line
    re.compile(r"^(collection failure: )?AttributeError: .*(module 'asc' has no attribute|"
               r"is not provided by ascendc_py)"),
    re.compile(r"^(collection failure: )?(ImportError|ModuleNotFoundError): "
               r"(cannot import name|No module named 'asc)"),
)


def is_deliberate(message: str) -> bool:
    """Whether a failure is an error ascendc_py raises on purpose (a KernelError naming the
    kernel's line, a missing ``asc`` name, a TilingError, no NPU) rather than a wrong result
    (a failed check of the test) or an internal exception."""
    return any(p.search(message) for p in _DELIBERATE)


def _node_id(case: ET.Element) -> str:
    classname = case.get("classname", "")
    name = case.get("name", "")
    file = case.get("file")
    if not file:
        parts = classname.split(".")
        # python.test.unit.language.basic.test_mm -> python/test/unit/language/basic/test_mm.py
        file = "/".join(parts) + ".py" if parts and parts[0] else ""
    collection = any(child.get("message") == "collection failure" for child in case)
    return file if collection or not name else f"{file}::{name}"


def _message(bad: ET.Element) -> str:
    """The failure's first line; for a collection error (message "collection failure") the
    exception line of its traceback."""
    message = bad.get("message") or ""
    if message in ("", "collection failure"):
        lines = [ln[1:].strip() for ln in (bad.text or "").splitlines() if ln.startswith("E ")]
        errors = [ln for ln in lines if re.match(r"[\w.]*(Error|Exception)\b", ln)]
        if errors or lines:
            return "collection failure: " + (errors or lines)[-1]
    return message


def parse_junit(path: Path, corpus: Corpus) -> Result:
    result = Result(corpus)
    for case in ET.parse(path).iter("testcase"):
        node = _node_id(case)
        tags = {child.tag: child for child in case}
        bad = tags.get("failure") if "failure" in tags else tags.get("error")
        if bad is not None:
            result.failed[node] = _message(bad)
        elif "skipped" in tags:
            result.skipped.append(node)
        else:
            result.passed.append(node)
    return result


def pytest_command(corpus: Corpus, repo: Path, junit: Path, extra: Sequence[str] = (),
                   nodes: Sequence[str] = ()) -> list:
    targets = [str(repo / n) for n in nodes] or [str(repo / corpus.path)]
    return [sys.executable, "-m", "pytest", "-p", PLUGIN, "-p", "no:cacheprovider",
            "-p", "no:xdist", "-q", "--continue-on-collection-errors", "-o",
            "junit_family=xunit1", f"--junitxml={junit}", *corpus.options, *extra, *targets]


def run_corpus(corpus: Corpus, repo: Path, extra: Sequence[str] = (),
               timeout: float = 1800, nodes: Sequence[str] = ()) -> Result:
    """Run one corpus (or just ``nodes`` of it, ids as :class:`Result` gives them) in a
    subprocess (pyasc's checkout is only read) and parse its results."""
    import time
    repo = Path(repo)
    if not (repo / corpus.path).is_dir():
        raise FileNotFoundError(f"{repo / corpus.path} does not exist: {REPO_ENV} must name a "
                                f"checkout of hicann/pyasc")
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    package_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(
        [package_root] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    with tempfile.TemporaryDirectory(prefix="pyasc_corpus_") as tmp:
        junit = Path(tmp) / "junit.xml"
        start = time.perf_counter()
        proc = subprocess.run(pytest_command(corpus, repo, junit, extra, nodes), cwd=tmp, env=env,
                              capture_output=True, text=True, timeout=timeout)
        seconds = time.perf_counter() - start
        if not junit.exists():
            raise RuntimeError(f"pytest wrote no report for {corpus.name} (exit "
                               f"{proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
        result = parse_junit(junit, corpus)
    result.seconds, result.returncode = seconds, proc.returncode
    result.output = proc.stdout + proc.stderr
    return result


def format_result(result: Result, examples: int = 1) -> str:
    c = result.corpus
    lines = [f"== {c.name}: {c.path} {' '.join(c.options)}".rstrip(),
             f"   {len(result.passed)} passed, {len(result.failed)} failed, "
             f"{len(result.skipped)} skipped of {result.total} cases "
             f"({result.seconds:.1f} s); files passing: {len(result.passing_files())} of "
             f"{len(result.files())}"]
    for key, nodes in result.groups():
        adv = " [adv]" if all("/adv/" in n for n in nodes) else ""
        shown = ", ".join(n.split("/")[-1] for n in nodes[:examples])
        lines.append(f"   {len(nodes):4d}  {key}{adv}   e.g. {shown}")
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ascendc_py.pyasc_compat.corpus",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("corpora", nargs="*", choices=[[], *CORPORA], metavar="CORPUS",
                        help=f"corpora to run (default: all): {', '.join(CORPORA)}")
    parser.add_argument("--repo", default=os.environ.get(REPO_ENV),
                        help=f"a checkout of hicann/pyasc (default: ${REPO_ENV})")
    parser.add_argument("--examples", type=int, default=1, help="node ids shown per group")
    args = parser.parse_args(argv)
    if not args.repo:
        parser.error(f"set {REPO_ENV} or pass --repo: a checkout of hicann/pyasc")
    for name in args.corpora or list(CORPORA):
        print(format_result(run_corpus(CORPORA[name], Path(args.repo)), args.examples),
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
