"""The compile cache: reuse across processes, corrupt entries, changed globals, the cache
directory. Cross-process tests run small scripts in subprocesses with their own cache dir."""
from __future__ import annotations

import hashlib
import json
import os
import pathlib
import pickle
import shutil
import subprocess
import sys
import warnings

import numpy as np
import pytest

import ascendc_py as asc
import kernels_for_tests as kft
from ascendc_py.compiler import jit
from ascendc_py.compiler.cachedir import cache_dir

TESTS = pathlib.Path(__file__).resolve().parents[1]
REPO = TESTS.parent

FACTOR = 3   # a module constant read by scaled_kernel; a test changes it

# ----------------------------------------------------------------------------- subprocess helper
VADD_SCRIPT = """
import json
import numpy as np
import kernels_for_tests as k
x = np.arange(4 * 512, dtype=np.float32)
y = np.full(x.size, 0.5, np.float32)
z = np.zeros_like(x)
r = k.vadd_kernel[4](x, y, z, 512)
print(json.dumps({"origin": r.code_origin, "ok": bool((z == x + y).all())}))
"""


def run_script(script: str, cache, extra_env=None, cwd=None) -> dict:
    """Run ``script`` in a fresh interpreter; return the JSON it prints on its last line.
    The run must be clean: exit code 0, no traceback and no warning on stderr."""
    env = {k: v for k, v in os.environ.items() if k != "ASCENDC_PY_CACHE_DIR"}
    # no bytecode for the scripts' modules: a test that edits one within a second of its last
    # import, keeping its size, would otherwise have Python run the stale .pyc (its check is
    # the source's size and mtime in whole seconds), and the kernel with it
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(TESTS)] + ([str(cwd)] if cwd else []))
    if cache is not None:
        env["ASCENDC_PY_CACHE_DIR"] = str(cache)
    env.update(extra_env or {})
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=120, cwd=cwd or REPO)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "Warning" not in proc.stderr, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def kernel_files(cache: pathlib.Path) -> list[pathlib.Path]:
    return sorted((cache / "kernels").glob("*.kernel"))


def warm(cache: pathlib.Path) -> pathlib.Path:
    """Seed a fresh cache dir with this session's parser tables and runtime library (not its
    kernel entries), so a subprocess pays only for its own kernel (~0.3 s, not ~4 s)."""
    x = np.zeros(kft.TILE, np.float32)
    kft.vadd_kernel[1](x, x, x.copy(), kft.TILE)   # makes sure both files exist here
    jit.wait_for_links()                           # the runtime library's shared objects too
    cache.mkdir(parents=True, exist_ok=True)
    for f in cache_dir().iterdir():
        if f.is_file():
            shutil.copy(f, cache / f.name)
    return cache


# ----------------------------------------------------------------------------- across processes
def test_second_process_loads_from_disk(tmp_path):
    cache = warm(tmp_path / "cache")
    assert run_script(VADD_SCRIPT, cache) == {"origin": "compiled", "ok": True}
    assert len(kernel_files(cache)) == 1
    assert run_script(VADD_SCRIPT, cache) == {"origin": "disk", "ok": True}
    assert len(kernel_files(cache)) == 1


HEAVY_MODULES_SCRIPT = VADD_SCRIPT.replace("print(json.dumps({", """import sys
heavy = sorted({m.split('.')[0] for m in sys.modules} & {'lark', 'llvmlite'})
print(json.dumps({"heavy": heavy, """)


REPEATED_LAUNCHES_SCRIPT = """
import json, sys
import numpy as np
import kernels_for_tests as k
x = np.arange(4 * 512, dtype=np.float32)
y = np.full(x.size, 0.5, np.float32)
z = np.zeros_like(x)
for _ in range(5):
    r = k.vadd_kernel[4](x, y, z, 512)
heavy = sorted({m.split('.')[0] for m in sys.modules} & {'lark', 'llvmlite'})
fast = [f for f in k.vadd_kernel[4]._fast.values() if f is not None]
print(json.dumps({"heavy": heavy, "fast": len(fast), "ok": bool((z == x + y).all())}))
"""


def test_repeated_launches_from_the_disk_cache_import_neither_lark_nor_llvmlite(tmp_path):
    """The fast launches (simulator/fast_launch.py) find the runtime library's binder by name:
    the process that launched from the cache loads no codegen module for them."""
    cache = warm(tmp_path / "cache")
    run_script(VADD_SCRIPT, cache)
    assert run_script(REPEATED_LAUNCHES_SCRIPT, cache) == {"heavy": [], "fast": 1, "ok": True}


def test_a_new_process_imports_lark_and_llvmlite_only_when_it_compiles(tmp_path):
    """A launch from the disk cache needs neither the parser nor LLVM; a compile in a process
    whose cache holds the parser tables (as after any first use) needs LLVM but not lark."""
    cache = warm(tmp_path / "cache")
    assert list(cache.glob("lark_tables_*.fast"))
    compiled = run_script(HEAVY_MODULES_SCRIPT, cache)
    assert compiled == {"heavy": ["llvmlite"], "origin": "compiled", "ok": True}
    assert run_script(HEAVY_MODULES_SCRIPT, cache) == {"heavy": [], "origin": "disk", "ok": True}


def _flip_bytes(path: pathlib.Path) -> None:
    data = bytearray(path.read_bytes())
    mid = len(data) // 2
    data[mid:mid + 16] = bytes(b ^ 0xFF for b in data[mid:mid + 16])
    path.write_bytes(bytes(data))


def _valid_checksum_bad_object(path: pathlib.Path) -> None:
    """Keep the checksum valid but make the object code garbage (the loader must reject it)."""
    blob = path.read_bytes()
    obj, meta = pickle.loads(blob[32:])
    payload = pickle.dumps((b"\x7fELF" + b"\x00" * 60 + obj[64:128], meta))
    path.write_bytes(hashlib.sha256(payload).digest() + payload)


CORRUPTIONS = {
    "flipped bytes": _flip_bytes,
    "empty file": lambda p: p.write_bytes(b""),
    "truncated": lambda p: p.write_bytes(p.read_bytes()[:100]),
    "zeros": lambda p: p.write_bytes(b"\x00" * 4096),
}


def test_corrupt_entry_is_recompiled_silently(tmp_path):
    cache = warm(tmp_path / "cache")
    assert run_script(VADD_SCRIPT, cache)["origin"] == "compiled"
    for what, corrupt in CORRUPTIONS.items():
        (entry,) = kernel_files(cache)
        corrupt(entry)
        assert run_script(VADD_SCRIPT, cache) == {"origin": "compiled", "ok": True}, what
    assert run_script(VADD_SCRIPT, cache) == {"origin": "disk", "ok": True}


def test_entry_with_valid_checksum_but_bad_object_code_is_recompiled(tmp_path):
    cache = warm(tmp_path / "cache")
    run_script(VADD_SCRIPT, cache)
    (entry,) = kernel_files(cache)
    _valid_checksum_bad_object(entry)
    assert run_script(VADD_SCRIPT, cache) == {"origin": "compiled", "ok": True}


@pytest.mark.slow
def test_every_cache_file_corrupted(tmp_path):
    """Kernel entries, the runtime library and the parser tables: all rebuilt silently
    (rebuilding the runtime library takes ~10 s)."""
    cache = tmp_path / "cache"
    run_script(VADD_SCRIPT, cache)
    files = [p for p in cache.rglob("*") if p.is_file()]
    assert len(files) >= 2
    for p in files:
        _flip_bytes(p)
    assert run_script(VADD_SCRIPT, cache) == {"origin": "compiled", "ok": True}


def test_cache_dir_honours_the_environment(tmp_path):
    cache = warm(tmp_path / "my cache dir")
    run_script(VADD_SCRIPT, cache)
    assert kernel_files(cache)
    script = ("import json; from ascendc_py.compiler.cachedir import cache_dir; "
              "print(json.dumps(str(cache_dir())))")
    assert run_script(script, cache) == str(cache)


def test_default_cache_dir_is_under_xdg_cache_home(tmp_path):
    xdg = tmp_path / "xdg"
    warm(xdg / "ascendc_py")
    run_script(VADD_SCRIPT, None, {"XDG_CACHE_HOME": str(xdg)})
    assert kernel_files(xdg / "ascendc_py")


def test_this_session_uses_the_environment_cache_dir():
    assert str(cache_dir()) == os.environ["ASCENDC_PY_CACHE_DIR"]


# ----------------------------------------------------------------------------- source changes
MODULE = '''
import ascendc_py as asc


@asc.kernel
def helper(v):
    return v * HELPER_FACTOR


@asc.kernel
def main_kernel(out: asc.GlobalAddress):
    og = asc.GlobalTensor()
    og.set_global_buffer(out, 8)
    og.set_value(0, helper(MAIN_VALUE))


HELPER_FACTOR = 1
'''
MODULE_SCRIPT = """
import json
import numpy as np
import editable_kernels as m
out = np.zeros(8, np.int32)
r = m.main_kernel[1](out)
print(json.dumps({"origin": r.code_origin, "value": int(out[0])}))
"""


def test_edited_kernel_callee_or_global_recompiles(tmp_path):
    cache = warm(tmp_path / "cache")
    mod = tmp_path / "editable_kernels.py"

    def run():
        return run_script(MODULE_SCRIPT, cache, cwd=tmp_path)

    mod.write_text(MODULE.replace("MAIN_VALUE", "7"))
    assert run() == {"origin": "compiled", "value": 7}
    assert run() == {"origin": "disk", "value": 7}
    mod.write_text(MODULE.replace("MAIN_VALUE", "8"))             # the kernel changed
    assert run() == {"origin": "compiled", "value": 8}
    mod.write_text(mod.read_text().replace("v * HELPER_FACTOR", "v * HELPER_FACTOR + 100"))
    assert run() == {"origin": "compiled", "value": 108}          # only the callee changed
    mod.write_text(mod.read_text().replace("HELPER_FACTOR = 1", "HELPER_FACTOR = 2"))
    assert run() == {"origin": "compiled", "value": 116}          # a global the callee reads


HELPERS = '''
import ascendc_py as asc

LIMIT = 10


@asc.kernel
def helper(v):
    return min(v * 2, LIMIT)
'''
USER = '''
import ascendc_py as asc
import edit_helpers as h


@asc.kernel
def user_kernel(out: asc.GlobalAddress):
    og = asc.GlobalTensor()
    og.set_global_buffer(out, 8)
    og.set_value(0, h.helper(4))
'''
USER_SCRIPT = MODULE_SCRIPT.replace("editable_kernels", "edit_user").replace("main_kernel",
                                                                            "user_kernel")


def test_callee_reached_through_a_module_attribute_is_part_of_the_key(tmp_path):
    """`helpers.helper(...)`: editing the helper, or a constant it reads, recompiles."""
    cache = warm(tmp_path / "cache")
    (tmp_path / "edit_helpers.py").write_text(HELPERS)
    (tmp_path / "edit_user.py").write_text(USER)

    def run():
        return run_script(USER_SCRIPT, cache, cwd=tmp_path)

    assert run() == {"origin": "compiled", "value": 8}
    assert run() == {"origin": "disk", "value": 8}
    (tmp_path / "edit_helpers.py").write_text(HELPERS.replace("v * 2", "v * 3"))
    assert run() == {"origin": "compiled", "value": 10}
    (tmp_path / "edit_helpers.py").write_text(HELPERS.replace("v * 2", "v * 3")
                                              .replace("LIMIT = 10", "LIMIT = 11"))
    assert run() == {"origin": "compiled", "value": 11}


# ----------------------------------------------------------------------------- in process
@asc.kernel
def scaled_kernel(out: asc.GlobalAddress, v: int):
    og = asc.GlobalTensor()
    og.set_global_buffer(out, 8)
    og.set_value(0, v * FACTOR)
    og.set_value(1, kft.add_shift(v))


def test_changed_global_is_detected_at_launch(monkeypatch):
    out = np.zeros(8, np.int32)
    scaled_kernel[1](out, 5)
    assert out[:2].tolist() == [15, 5]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert scaled_kernel[1](out, 5).code_origin == "memory"
    monkeypatch.setattr(sys.modules[__name__], "FACTOR", 4)
    with pytest.warns(UserWarning, match="FACTOR"):
        r = scaled_kernel[1](out, 5)
    assert r.code_origin in ("compiled", "disk") and out[:2].tolist() == [20, 5]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert scaled_kernel[1](out, 6).code_origin == "memory"
    assert out[0] == 24


def test_changed_global_of_a_callee_module_is_detected(monkeypatch):
    out = np.zeros(8, np.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # FACTOR may differ from an earlier test's compile
        scaled_kernel[1](out, 2)
    monkeypatch.setattr(kft, "SHIFT", 40)
    with pytest.warns(UserWarning, match="SHIFT"):
        scaled_kernel[1](out, 2)
    assert out[1] == 42


def test_constexpr_values_get_their_own_entries():
    @asc.kernel
    def per_value(out: asc.GlobalAddress, K: asc.ConstExpr[int]):
        og = asc.GlobalTensor()
        og.set_global_buffer(out, 8)
        og.set_value(0, K)

    out = np.zeros(8, np.int32)
    origins = []
    for k in (11, 12, 13, 11):
        origins.append(per_value[1](out, k).code_origin)
        assert out[0] == k
    assert origins[3] == "memory" and "memory" not in origins[:3]


def test_constexpr_values_of_other_types_are_other_specialisations():
    # 1, 1.0 and True compare equal in Python; as compile-time constants they are different
    # values (an int, a float, a bool), so each gets its own compiled code
    @asc.kernel
    def store(out: asc.GlobalAddress, K: asc.ConstExpr):
        og = asc.GlobalTensor()
        og.set_global_buffer(out, 8)
        og.set_value(0, K / 2)

    out = np.zeros(8, np.float32)
    origins = [store[1](out, k).code_origin for k in (1, 1.0, True, 1.0)]
    assert "memory" not in origins[:3] and origins[3] == "memory"


def test_argspecs_are_interned_and_pickle_without_their_hash():
    import pickle

    from ascendc_py.compiler.spec import ArgSpec
    a = ArgSpec.of("x", "const", value=3)
    assert ArgSpec.of("x", "const", value=3) is a and hash(a) == hash(ArgSpec("x", "const",
                                                                              value=3))
    assert ArgSpec.of("x", "const", value=3.0) != a
    assert "_hash" not in pickle.loads(pickle.dumps(a)).__dict__
    assert pickle.loads(pickle.dumps(a)) == a
