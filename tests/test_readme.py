"""The README's promises: every ```python block runs, and every repository path it names exists.

A block runs as a script in a fresh interpreter (kernels need their source in a file), in a
temporary working directory. An HTML comment on the line before a block changes that:

* ``<!-- readme-test: continues -->``: the block runs after the block before it, in the same
  script (it uses the names that one defined);
* ``<!-- readme-test: setup: CODE -->``: CODE (one line) runs first, hidden from the reader;
* ``<!-- readme-test: skip: REASON -->``: not runnable as printed; the reason is the skip
  message.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
MARK = re.compile(r"<!-- readme-test: (continues|setup: (.*?)|skip: (.*?)) -->\s*$")

#: paths the README names that are not in this repository, and why
ELSEWHERE = {
    "examples/00_basic_matmul": "a directory of pyasc's repository",
    "zzc0721/torch-performance-test-data": "a GitHub repository",
}
#: prefixes of paths the README names as outputs (make demo, the profiling example)
OUTPUTS = ("out/",)


def _blocks() -> list[tuple[int, str, str, str]]:
    """(line, kind, extra, code) per ```python block: kind is run, continues, setup or skip."""
    lines = README.read_text(encoding="utf-8").splitlines()
    out = []
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```python":
            start = i + 1
            j = start
            while lines[j].strip() != "```":
                j += 1
            m = MARK.match(lines[i - 1].strip()) if i else None
            kind, extra = "run", ""
            if m:
                kind = m.group(1).split(":")[0]
                extra = m.group(2) or m.group(3) or ""
            out.append((start, kind, extra, "\n".join(lines[start:j]) + "\n"))
            i = j
        i += 1
    return out


def _scripts() -> list[tuple[str, str, str]]:
    """(id, script, skip reason) per chain of blocks."""
    chains: list[list] = []
    for line, kind, extra, code in _blocks():
        if kind == "continues" and chains:
            chains[-1][1] += f"\n# --- README.md line {line}\n" + code
            chains[-1][2].append(line)
            continue
        prefix = extra + "\n" if kind == "setup" else ""
        chains.append([line, prefix + f"# --- README.md line {line}\n" + code, [line],
                       extra if kind == "skip" else ""])
    return [("lines-" + "-".join(map(str, lines)), script, skip)
            for _, script, lines, skip in chains]


SCRIPTS = _scripts()


def test_blocks_found():
    kinds = [k for _, k, _, _ in _blocks()]
    assert len(kinds) >= 10 and kinds.count("run") + kinds.count("setup") >= 4
    assert all(extra for _, k, extra, _ in _blocks() if k in ("skip", "setup"))


@pytest.mark.parametrize("script_id,script,skip", SCRIPTS, ids=[s[0] for s in SCRIPTS])
def test_python_block_runs(script_id, script, skip, tmp_path):
    if skip:
        pytest.skip(f"README block marked not runnable: {skip}")
    path = tmp_path / "readme_block.py"
    path.write_text(script, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(REPO)] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])),
        MPLBACKEND="Agg")
    env.pop("ASCENDC_PY_SANITIZE", None)
    p = subprocess.run([sys.executable, str(path)], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=600)
    assert p.returncode == 0, f"{script_id}:\n{p.stderr[-3000:]}"


def _named_paths() -> set[str]:
    """Repository-looking paths in backticks and in markdown links."""
    text = README.read_text(encoding="utf-8")
    tokens = set()
    spans = re.findall(r"`([^`\n]+)`", text) + re.findall(r"\]\(([^)\s]+)\)", text)
    top = {p.name for p in REPO.iterdir()}
    package = {p.name for p in (REPO / "ascendc_py").iterdir() if p.is_dir()}
    for span in spans:
        for tok in re.split(r"[\s,()]+", span):
            tok = tok.strip("'\".,:;")
            if "/" not in tok or "://" in tok or tok.startswith("/") or \
                    not re.fullmatch(r"[\w./-]+", tok):
                continue
            first = tok.split("/")[0]
            if first in top or first in package or first in ("shared", "out") or \
                    re.search(r"\.(py|md|json|toml|lark|txt)$", tok):
                tokens.add(tok)
    return tokens


def test_every_named_path_exists():
    files = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True,
                           text=True).stdout.split()
    if not files:
        pytest.skip("not a git checkout")
    dirs = {str(Path(f).parents[i]) for f in files for i in range(len(Path(f).parents) - 1)}
    missing = []
    for tok in sorted(_named_paths()):
        if tok in ELSEWHERE or tok.startswith(OUTPUTS):
            continue
        p = tok.rstrip("/")
        if p in files or p in dirs or any(f.endswith("/" + p) for f in files) or \
                any(d.endswith("/" + p) for d in dirs):
            continue
        missing.append(tok)
    assert not missing, f"README names paths that do not exist: {missing}"
