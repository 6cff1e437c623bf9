"""The compile cache never crashes, hangs or stops compiling (issue 12 items 5 and 8): a
truncated or patched runtime library is linked again, never loaded; a cache directory that is
a file, a full disk, a FIFO or a symlink to /dev/zero in place of an entry degrade to the
in-memory cache with one CacheDirectoryWarning; background link threads print nothing. Each
case runs in a fresh interpreter with a timeout (the bugs were crashes and hangs)."""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

from test_cache import VADD_SCRIPT, kernel_files, warm

TESTS = pathlib.Path(__file__).resolve().parents[1]
REPO = TESTS.parent


def run(script: str, cache, extra_env=None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "ASCENDC_PY_CACHE_DIR"}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(TESTS)])
    env["ASCENDC_PY_CACHE_DIR"] = str(cache)
    env.update(extra_env or {})
    return subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=180, cwd=REPO)


def result(proc) -> dict:
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def runtime_library(cache: pathlib.Path) -> pathlib.Path:
    """The shared object of a runtime library shard the vadd kernel calls (its add loop), of
    this compiler version (a developer's cache directory also holds earlier versions' shards)."""
    from ascendc_py.compiler import jit
    from ascendc_py.compiler.codegen.runtime_loader import shard_key
    so = cache / jit.blob_path(shard_key("vec.add.float32"), ".so").name
    assert so.is_file(), sorted(p.name for p in cache.glob("runtime-*vec.add*"))
    return so


@pytest.mark.parametrize("damage", ["truncated", "patched", "garbage"])
def test_a_damaged_runtime_library_is_linked_again(tmp_path, damage):
    cache = warm(tmp_path / "cache")
    so = runtime_library(cache)
    data = bytearray(so.read_bytes())
    if damage == "truncated":
        so.write_bytes(bytes(data[:len(data) // 3]))
    elif damage == "patched":     # a valid ELF with different code: dlopen would accept it
        at = len(data) // 2
        data[at:at + 64] = b"\xcc" * 64    # int3: SIGTRAP if executed
        so.write_bytes(bytes(data))
    else:
        so.write_bytes(os.urandom(len(data)))
    assert result(run(VADD_SCRIPT, cache))["ok"]
    assert result(run(VADD_SCRIPT, cache))["ok"]      # the relinked library loads next time


def test_cache_directory_that_is_a_file(tmp_path):
    bad = tmp_path / "not_a_dir"
    bad.write_text("a file where the cache should be")
    proc = run(VADD_SCRIPT + "\nr = k.vadd_kernel[4](x, y, z, 512)\n"
               "print(json.dumps({'origin': r.code_origin, 'ok': bool((z == x + y).all())}))\n",
               bad)
    out = result(proc)
    assert out == {"origin": "memory", "ok": True}           # compiled, then kept in memory
    assert proc.stderr.count("CacheDirectoryWarning") == 1, proc.stderr
    assert "cannot be used" in proc.stderr and "ASCENDC_PY_CACHE_DIR" in proc.stderr
    assert bad.read_text() == "a file where the cache should be"


FULL_DISK = """
import errno, os
real_open = open
def full(path, mode="r", *a, **kw):
    if "w" in mode and str(path).startswith(os.environ["ASCENDC_PY_CACHE_DIR"]):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))
    return real_open(path, mode, *a, **kw)
import builtins
builtins.open = full
os.environ["ASCENDC_PY_LINK_SYNC"] = "1"
""" + VADD_SCRIPT


def test_a_full_disk_costs_only_the_cache(tmp_path):
    proc = run(FULL_DISK, tmp_path / "cache")
    assert result(proc)["ok"]
    assert proc.stderr.count("CacheDirectoryWarning") == 1, proc.stderr
    assert "the disk is full" in proc.stderr


@pytest.mark.parametrize("kind", ["fifo", "dev_zero"])
def test_special_files_in_place_of_entries_never_hang(tmp_path, kind):
    cache = warm(tmp_path / "cache")
    assert result(run(VADD_SCRIPT, cache))["origin"] == "compiled"
    victims = kernel_files(cache) + sorted(cache.glob("lark_tables_*"))
    for path in victims:
        path.unlink()
        if kind == "fifo":
            os.mkfifo(path)
        else:
            path.symlink_to("/dev/zero")
    out = result(run(VADD_SCRIPT, cache))
    assert out == {"origin": "compiled", "ok": True}
    assert result(run(VADD_SCRIPT, cache)) == {"origin": "disk", "ok": True}


BROKEN_LINK = """
import ascendc_py.compiler.native as native
def broken(*a, **kw):
    raise OSError(5, "Input/output error", "linker")
native.link_shared = broken
""" + VADD_SCRIPT + """
import ascendc_py.compiler.jit as jit
jit.wait_for_links()
r = k.vadd_kernel[4](x, y, z, 512)
"""


def test_background_link_failures_print_nothing_from_their_thread(tmp_path):
    cache = warm(tmp_path / "cache")
    proc = run(BROKEN_LINK, cache)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "Exception in thread" not in proc.stderr
