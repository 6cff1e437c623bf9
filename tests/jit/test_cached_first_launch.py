"""What a cached first launch pays for (issue 14: a new process whose cache holds the kernel).

The runtime library shards a cached kernel calls load from the kernel's bundle with one
``dlopen`` (``runtime_loader.link_bundle``/``load_bundle``), never from a bundle that is not the
file that was linked, and one by one when a shard is missing; the launch imports none of the
modules it does not need (``signal``'s enums, ``mmap``, ``glob``, the blocks' timing records,
``numpy.ma``, the compiler); reading the report does not import ``numpy.ma``. Cross-process
cases run in subprocesses with their own cache directory (``test_cache.warm``)."""
from __future__ import annotations

import json
import os
import pathlib
import pickle
import shutil
import subprocess
import sys

import numpy as np

from ascendc_py.compiler import cachedir
from ascendc_py.simulator import runtime

from test_cache import kernel_files, warm

TESTS = pathlib.Path(__file__).resolve().parents[1]
REPO = TESTS.parent

LAUNCH = """
import json, sys
import numpy as np
import kernels_for_tests as k
from ascendc_py.compiler.codegen import runtime_loader
x = np.arange(4 * 512, dtype=np.float32)
y = np.full(x.size, 0.5, np.float32)
z = np.zeros_like(x)
before = set(sys.modules)
r = k.vadd_kernel[4](x, y, z, 512)
imported = sorted(set(sys.modules) - before)
libs = {id(lib) for lib in runtime_loader._shards.values()}
cycles = r.cycles
print(json.dumps({"origin": r.code_origin, "ok": bool((z == x + y).all()),
                  "loaded": runtime_loader.loaded_shards(), "libraries": len(libs),
                  "imported": imported, "after_report": sorted(set(sys.modules) - before),
                  "cycles": int(cycles), "built_s": runtime_loader.build_seconds()}))
"""

#: modules a cached launch has no use for (the compiler's front end, IR and LLVM included)
NOT_ON_THE_LAUNCH_PATH = ("signal", "mmap", "glob", "numpy.ma", "lark", "llvmlite",
                          "ascendc_py.compiler.ir", "ascendc_py.compiler.sema.analyzer",
                          "ascendc_py.simulator.block_timing",
                          # the Python pool's queue (a dlopen), the fault messages (issue 14)
                          "_queue", "ascendc_py.simulator.faults")


def run(cache: pathlib.Path, extra_env=None) -> tuple[dict, str]:
    env = {k: v for k, v in os.environ.items() if k != "ASCENDC_PY_CACHE_DIR"}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(TESTS)])
    env["ASCENDC_PY_CACHE_DIR"] = str(cache)
    env.update(extra_env or {})
    proc = subprocess.run([sys.executable, "-c", LAUNCH], env=env, capture_output=True,
                          text=True, timeout=300, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and "Warning" not in proc.stderr, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


def entry_meta(cache: pathlib.Path) -> dict:
    (entry,) = kernel_files(cache)
    return pickle.loads(entry.read_bytes()[32:])[1]


def bundle_file(cache: pathlib.Path) -> pathlib.Path:
    (entry,) = kernel_files(cache)
    return entry.with_suffix(".rt.so")


def test_a_cached_launch_loads_its_shards_from_the_kernels_bundle(tmp_path):
    cache = warm(tmp_path / "cache")
    compiled, _ = run(cache)
    assert compiled["origin"] == "compiled" and compiled["ok"]
    bundle = entry_meta(cache)["runtime_bundle"]
    assert bundle["pieces"][0] == "core" and set(bundle["pieces"][1:]) == set(
        entry_meta(cache)["runtime_shards"])
    assert bundle_file(cache).stat().st_size == bundle["so_size"]
    cached, err = run(cache)
    assert cached["origin"] == "disk" and cached["ok"] and cached["built_s"] == 0
    assert cached["libraries"] == 1                       # one dlopen for every shard
    assert cached["loaded"] == sorted(bundle["pieces"])
    assert cached["cycles"] == compiled["cycles"]         # the same code, the same report


def test_a_bundle_that_is_not_the_linked_file_is_deleted_not_loaded(tmp_path):
    cache = warm(tmp_path / "cache")
    compiled, _ = run(cache)
    path = bundle_file(cache)
    data = bytearray(path.read_bytes())
    at = len(data) // 2
    data[at:at + 64] = b"\xcc" * 64          # a valid ELF with other code: int3 if executed
    path.write_bytes(bytes(data))
    cached, _ = run(cache)
    assert cached["origin"] == "disk" and cached["ok"] and cached["cycles"] == compiled["cycles"]
    assert cached["libraries"] == len(cached["loaded"]) > 1    # the shards one by one
    assert not path.exists()
    again, _ = run(cache)                    # (the entry still names it: one by one again)
    assert again["origin"] == "disk" and again["ok"]


def test_a_shard_missing_from_the_cache_is_built_again_not_taken_from_the_bundle(tmp_path):
    cache = warm(tmp_path / "cache")
    run(cache)
    for f in cache.glob("runtime-*-vec.add.float32.*"):
        f.unlink()
    cached, err = run(cache)
    assert cached["origin"] == "disk" and cached["ok"]
    assert "1 part built" in err and cached["libraries"] > 1


def test_a_cached_launch_imports_only_what_it_needs(tmp_path):
    cache = warm(tmp_path / "cache")
    run(cache)
    cached, _ = run(cache)
    assert cached["origin"] == "disk"
    for name in NOT_ON_THE_LAUNCH_PATH:
        assert not any(m == name or m.startswith(name + ".") for m in cached["imported"]), name
    # reading the report computes it (the blocks' timing records, HBM contention): still no
    # numpy.ma (np.unique imports it) nor anything of the compiler
    assert "ascendc_py.simulator.block_timing" in cached["after_report"]
    for name in ("numpy.ma", "lark", "llvmlite", "signal", "glob"):
        assert not any(m == name or m.startswith(name + ".") for m in cached["after_report"])


def test_the_cache_root_is_checked_again_on_every_call(tmp_path, monkeypatch):
    first, second = tmp_path / "a", tmp_path / "b"
    monkeypatch.setenv(cachedir.ENV_VAR, str(first))
    assert cachedir.cache_dir() == first and first.is_dir()
    monkeypatch.setenv(cachedir.ENV_VAR, str(second))
    assert cachedir.cache_dir() == second and second.is_dir()
    shutil.rmtree(first)
    monkeypatch.setenv(cachedir.ENV_VAR, str(first))
    assert cachedir.cache_dir() == first and first.is_dir()     # made again
    shutil.rmtree(first)
    first.write_text("a file where the cache directory was")
    try:
        import warnings
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            assert cachedir.cache_dir() is None
    finally:
        cachedir._unusable.pop(str(first), None)


def test_a_new_core_starts_fresh_inside_intact_guards():
    from ascendc_py.dsl.types import Memory
    from ascendc_py.simulator import config
    core = runtime._Core(config.current_platform(), 64, (Memory.UB, Memory.L1))
    assert core.dirty.tolist() == [0, 0]          # nothing for the first block to refill
    for mem, (buf, view) in core.memories.items():
        assert view.ctypes.data % 64 == 0
        assert (view == runtime.FRESH_MEMORY_BYTE).all(), mem
        start = view.ctypes.data - buf.ctypes.data
        assert start >= runtime.GUARD_BYTES
        assert (buf[:start] == runtime.GUARD_BYTE).all()
        assert (buf[start + view.size:] == runtime.GUARD_BYTE).all()
    scratch = runtime._Core(config.current_platform(), 64, (Memory.L0A, Memory.L0B,
                                                           Memory.L0C)).cube_scratch
    assert scratch is not None and not scratch.any()      # mmad's scratch starts zeroed
    assert not runtime.local_guard_damage()


def test_block_timing_is_still_reachable_through_runtime():
    from ascendc_py.simulator.block_timing import BlockTiming
    assert runtime.BlockTiming is BlockTiming
    from ascendc_py.simulator.runtime import _block_timing   # (subcores.py imports it)
    ctx = np.zeros(4096, np.int64)
    timing = _block_timing(3, ctx, np.zeros(8, np.int64), None)
    assert isinstance(timing, BlockTiming) and timing.block == 3 and timing.cycles == 0
