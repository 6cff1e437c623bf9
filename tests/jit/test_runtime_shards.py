"""The runtime library is built lazily, in shards: a fresh cache builds only the shards a kernel
calls (and the small core shard), a kernel records them, and a new process loads them (from the
cache, or built again when missing) before the kernel; library definers still work as an API.
Cross-process cases run in subprocesses with their own cache directory."""
from __future__ import annotations

import json
import os
import pathlib
import pickle
import shutil
import subprocess
import sys

import pytest

from ascendc_py.compiler import jit
from ascendc_py.compiler.cachedir import cache_dir
from ascendc_py.compiler.codegen import runtime_lib

TESTS = pathlib.Path(__file__).resolve().parents[1]
REPO = TESTS.parent

VADD = """
import json
import numpy as np
import kernels_for_tests as k
from ascendc_py.compiler.codegen import runtime_loader
x = np.arange(4 * 512, dtype=np.float32)
y = np.full(x.size, 0.5, np.float32)
z = np.zeros_like(x)
r = k.vadd_kernel[4](x, y, z, 512)
print(json.dumps({"origin": r.code_origin, "ok": bool((z == x + y).all()),
                  "loaded": runtime_loader.loaded_shards(),
                  "built_s": runtime_loader.build_seconds()}))
"""


def run(script: str, cache: pathlib.Path, extra_env=None) -> tuple[dict, str]:
    """Run ``script`` in a fresh interpreter: (the JSON of its last line, its stderr)."""
    env = {k: v for k, v in os.environ.items() if k != "ASCENDC_PY_CACHE_DIR"}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(TESTS)])
    env["ASCENDC_PY_CACHE_DIR"] = str(cache)
    env.update(extra_env or {})
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=300, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and "Warning" not in proc.stderr, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


def fresh_cache(path: pathlib.Path) -> pathlib.Path:
    """A cache directory with this session's parser tables only: no runtime library at all."""
    from ascendc_py.compiler.frontend import parse
    path.mkdir(parents=True)
    parse.get_parser()     # makes sure the session's cache holds the parser tables
    for f in cache_dir().glob("lark_tables_*"):
        shutil.copy(f, path / f.name)
    return path


def shards_in(cache: pathlib.Path) -> set:
    """The pieces whose shards (object code) the cache holds."""
    from ascendc_py.compiler.codegen.runtime_loader import shard_key
    tag = shard_key("").replace("/", "_").replace("|", "_")
    return {f.name[len(tag):-len(".bin")] for f in cache.glob("runtime-*.bin")
            if f.name.startswith(tag)}


def recorded_shards(cache: pathlib.Path) -> list:
    (entry,) = (cache / "kernels").glob("*.kernel")
    _obj, meta = pickle.loads(entry.read_bytes()[32:])
    return meta["runtime_shards"]


@pytest.fixture(scope="module")
def first_run(tmp_path_factory):
    """A fresh cache after one process compiled and ran the vadd kernel: (cache, output,
    stderr). Shared by the tests below (each copies it before changing it): building the
    shards of a fresh cache is the costly part."""
    cache = fresh_cache(tmp_path_factory.mktemp("shards") / "cache")
    out, err = run(VADD, cache)
    return cache, out, err


def test_a_fresh_cache_builds_only_the_shards_the_kernel_calls(first_run):
    cache, out, err = first_run
    assert out["origin"] == "compiled" and out["ok"]
    assert "building the runtime library, once" in err and out["built_s"] > 0
    needed = recorded_shards(cache)
    assert "vec.add.float32" in needed and "rt.kernel_end" in needed
    assert shards_in(cache) == set(needed) | {runtime_lib.CORE}
    assert not any(p.startswith(("vec.mul", "lib.")) for p in shards_in(cache))
    assert set(out["loaded"]) == set(needed) | {runtime_lib.CORE}


def test_a_cached_kernel_launches_in_a_new_process_with_its_shards(first_run, tmp_path):
    cache = tmp_path / "cache"
    shutil.copytree(first_run[0], cache)
    out, err = run(VADD, cache)
    assert out["origin"] == "disk" and out["ok"]
    assert "building" not in err and out["built_s"] == 0   # all came from the cache
    assert set(out["loaded"]) == set(recorded_shards(cache)) | {runtime_lib.CORE}
    for f in cache.glob("runtime-*-vec.add.float32.*"):
        f.unlink()                                     # a shard the kernel calls is gone
    out, err = run(VADD, cache)
    assert out["origin"] == "disk" and out["ok"]       # it is built again, before the kernel
    assert "1 part built" in err


def test_without_a_linker_shards_and_kernels_load_into_mcjit(tmp_path):
    cache = fresh_cache(tmp_path / "cache")
    no_link = {"ASCENDC_PY_NO_LINK": "1"}
    assert run(VADD, cache, no_link)[0]["ok"]
    assert not list(cache.glob("runtime-*.so"))
    out, _ = run(VADD, cache, no_link)
    assert out["origin"] == "disk" and out["ok"]


DEFINER = """
import ctypes, json
from llvmlite import ir as L
from ascendc_py.compiler.codegen import runtime_lib, runtime_loader

def answer(name, value):
    def define(module):
        fn = L.Function(module, L.FunctionType(L.IntType(64), []), name=name)
        L.IRBuilder(fn.append_basic_block()).ret(L.Constant(L.IntType(64), value))
        return [name]
    return define

runtime_lib.library_definer(answer("asc_test_core_answer", 42))
runtime_lib.library_definer(answer("asc_test_own_answer", 7), shard="lib.test_answer")

def call(name):
    return ctypes.CFUNCTYPE(ctypes.c_int64)(runtime_loader.symbol_address(name))()

print(json.dumps({"core": call("asc_test_core_answer"), "own": call("asc_test_own_answer"),
                  "piece": runtime_lib.piece_of("asc_test_own_answer"),
                  "loaded": runtime_loader.loaded_shards()}))
"""


def test_library_definers_land_in_the_core_shard_or_their_own(tmp_path):
    out, _ = run(DEFINER, fresh_cache(tmp_path / "cache"))
    assert (out["core"], out["own"]) == (42, 7)
    assert out["piece"] == "lib.test_answer"
    assert out["loaded"] == [runtime_lib.CORE, "lib.test_answer"]


def test_a_kernel_records_the_pieces_that_define_what_it_calls():
    for name in ("asc_op_add_float16", "asc_opm_add_float16", "asc_vec_add_float16_na"):
        assert runtime_lib.piece_of(name) == "vec.add.float16"
    assert runtime_lib.piece_of("asc_rt_kernel_end") == "rt.kernel_end"
    assert runtime_lib.piece_of("asc_sgemm") == "lib.sgemm"
    assert runtime_lib.piece_of("asc_no_such_function") is None
    pieces = runtime_lib.closure("vec.add.float16")
    assert pieces[0] == "vec.add.float16" and "rt.check_local" in pieces
    assert not any(p.startswith("vec.") for p in pieces[1:])


@pytest.mark.parametrize("piece", ["rt.alloc_tensor", "vec.muls.float32"])
def test_a_shard_is_its_piece_linked_with_the_pieces_it_calls(piece):
    obj, symbols = runtime_lib.shard_object(piece)
    assert jit.elf_is_sound(obj)
    assert symbols == list(runtime_lib.piece_ir(piece)[1])
    assert all(runtime_lib.piece_of(s) == piece for s in symbols)
