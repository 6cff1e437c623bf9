"""Never run stale code (issue 11 §1): redefined and reloaded helpers, code replaced in place,
files edited after import, functions compiled from another text, cache entries recorded from
another source."""
from __future__ import annotations

import importlib
import itertools
import os
import linecache
import pathlib
import sys
import warnings

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler.errors import KernelSyntaxError, SourceChangedError
from notebook_cells import CALLER_CELL, HELPER_CELL, run_cell
from test_cache import run_script, warm

_CELLS = itertools.count()


@pytest.fixture()
def notebook():
    ns = {"asc": asc, "__name__": "notebook_under_test"}
    names: list[str] = []

    def run(text: str) -> None:
        # unique across the xdist workers sharing the session's cache: a cell name another
        # worker also used would find that worker's entry on disk, without reading the source
        name = f"<notebook-cell-{os.getpid()}-{next(_CELLS)}>"
        names.append(name)
        run_cell(ns, text, name)

    yield ns, run
    for name in names:
        linecache.cache.pop(name, None)


def launch(kernel) -> list[int]:
    out = np.zeros(4, np.int32)
    kernel[1](out)
    return out.tolist()


def test_helper_redefined_in_another_cell_is_used(notebook):
    ns, run = notebook
    run(HELPER_CELL)
    run(CALLER_CELL)
    assert launch(ns["caller"]) == [0, 2, 4, 6]
    run(HELPER_CELL.replace("i * 2", "i * 3"))            # the helper's cell, edited and re-run
    assert launch(ns["caller"]) == [0, 3, 6, 9]
    assert ns["caller"][1](np.zeros(4, np.int32)).code_origin == "memory"


def test_helper_code_replaced_in_place_is_used(notebook):
    """IPython's autoreload assigns the new code object to the old function."""
    ns, run = notebook
    run(HELPER_CELL)
    run(CALLER_CELL)
    assert launch(ns["caller"]) == [0, 2, 4, 6]
    helper = ns["scale"]
    new_ns = {"asc": asc}
    run_cell(new_ns, HELPER_CELL.replace("i * 2", "i * 3"), "<autoreloaded-helper>")
    try:
        helper.fn.__code__ = new_ns["scale"].fn.__code__
        assert launch(ns["caller"]) == [0, 3, 6, 9]
    finally:
        linecache.cache.pop("<autoreloaded-helper>", None)


HELPER_MODULE = '''
import ascendc_py as asc


@asc.kernel
def scale(og, n: int):
    for i in range(n):
        og.set_value(i, i * FACTOR)
'''


@pytest.fixture()
def module_dir(tmp_path, monkeypatch):
    # no bytecode for the test's modules: an edit within a second of the import that keeps the
    # file's size would have importlib.reload load the stale .pyc (checked by size and mtime
    # in whole seconds), which ascendc_py then rightly refuses as not the file's text
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in ("stale_helpers", "stale_user"):
        sys.modules.pop(name, None)


def write_module(path: pathlib.Path, factor: int) -> None:
    path.write_text(HELPER_MODULE.replace("FACTOR", str(factor)))
    linecache.checkcache(str(path))
    importlib.invalidate_caches()


def test_reloaded_helper_module_is_used(module_dir, notebook):
    """A caller that reaches the helper as ``helpers.scale`` runs the reloaded helper; one
    that did ``from helpers import scale`` keeps the function object it imported, as Python
    does."""
    ns, run = notebook
    path = module_dir / "stale_helpers.py"
    write_module(path, 2)
    ns["helpers"] = importlib.import_module("stale_helpers")
    ns["old_scale"] = ns["helpers"].scale
    run(CALLER_CELL.replace("scale(og, 4)", "helpers.scale(og, 4)"))
    run(CALLER_CELL.replace("def caller", "def caller_from").replace("scale(og", "old_scale(og"))
    assert launch(ns["caller"]) == [0, 2, 4, 6]
    assert launch(ns["caller_from"]) == [0, 2, 4, 6]
    write_module(path, 3)
    importlib.reload(ns["helpers"])
    assert launch(ns["caller"]) == [0, 3, 6, 9]
    assert launch(ns["caller_from"]) == [0, 2, 4, 6]   # compiled before the edit: unchanged


def test_file_edited_after_import_is_an_error(module_dir):
    """The old function object, the new text: compiling either silently would run code the
    user is not running (and cache it under the wrong key)."""
    path = module_dir / "stale_helpers.py"
    write_module(path, 2)
    helpers = importlib.import_module("stale_helpers")
    write_module(path, 3)
    with pytest.raises(SourceChangedError) as err:
        helpers.scale.source()
    assert "the source of 'scale' in" in str(err.value)
    assert "stale_helpers.py" in str(err.value) and "reload" in str(err.value)
    write_module(path, 2)                                   # reverted: it matches again
    assert "i * 2" in helpers.scale.source().text


EDIT_SCRIPT = '''
import json, pathlib, sys, importlib, linecache
import numpy as np
import ascendc_py as asc
import stale_user
edit = sys.argv[1] if len(sys.argv) > 1 else ""
if edit:
    p = pathlib.Path("stale_user.py")
    p.write_text(p.read_text().replace("i * 2", "i * " + edit))
    linecache.checkcache(str(p))
out = np.zeros(4, np.int32)
try:
    r = stale_user.k[1](out)
    print(json.dumps({"origin": r.code_origin, "out": out.tolist()}))
except asc.KernelError as e:
    print(json.dumps({"error": type(e).__name__}))
'''
USER_MODULE = '''
import ascendc_py as asc


@asc.kernel
def k(out: asc.GlobalAddress):
    og = asc.GlobalTensor()
    og.set_global_buffer(out, 4)
    for i in range(4):
        og.set_value(i, i * 2)
'''


def test_edit_then_revert_never_caches_the_edit_under_the_old_key(tmp_path):
    """Issue 11's reproducer: import, edit the file (x2 -> x3), launch, revert; every later
    process used to run x3 "from disk"."""
    cache = warm(tmp_path / "cache")
    (tmp_path / "stale_user.py").write_text(USER_MODULE)
    script = EDIT_SCRIPT.replace("sys.argv[1] if len(sys.argv) > 1 else \"\"", '"3"')
    assert run_script(script, cache, cwd=tmp_path) == {"error": "SourceChangedError"}
    (tmp_path / "stale_user.py").write_text(USER_MODULE)
    plain = EDIT_SCRIPT.replace("sys.argv[1] if len(sys.argv) > 1 else \"\"", '""')
    assert run_script(plain, cache, cwd=tmp_path) == {"origin": "compiled", "out": [0, 2, 4, 6]}
    assert run_script(plain, cache, cwd=tmp_path) == {"origin": "disk", "out": [0, 2, 4, 6]}


def test_function_compiled_from_another_text_under_a_file_name(tmp_path):
    """``exec(compile(src, "name.py", "exec"))`` where name.py holds a different kernel."""
    path = tmp_path / "other_kernel.py"
    path.write_text(USER_MODULE.replace("i * 2", "i * 5"))
    ns: dict = {}
    exec(compile(USER_MODULE, str(path), "exec"), ns)  # noqa: S102
    with pytest.raises(SourceChangedError):
        launch(ns["k"])
    ns2: dict = {}
    exec(compile(USER_MODULE, str(tmp_path / "missing.py"), "exec"), ns2)  # noqa: S102
    with pytest.raises(KernelSyntaxError, match="cannot read the source"):
        launch(ns2["k"])


def test_entry_recorded_from_another_source_is_not_used(notebook, monkeypatch):
    """A cache entry records the SHA-256 of every source it was compiled from; when this
    process has read a kernel's source and it differs, the entry is recompiled."""
    from ascendc_py.compiler import jit
    ns, run = notebook
    run(HELPER_CELL)
    run(CALLER_CELL)
    assert launch(ns["caller"]) == [0, 2, 4, 6]
    real_load = jit.load_cached

    def load_tampered(key, name):
        compiled = real_load(key, name)
        if compiled is not None:
            compiled.source_sha256 = {k: "0" * 64 for k in compiled.source_sha256}
        return compiled

    monkeypatch.setattr(jit, "load_cached", load_tampered)
    ns["caller"]._compiled.clear()                         # as in a new process: from disk
    assert ns["caller"][1](np.zeros(4, np.int32)).code_origin == "compiled"
    monkeypatch.setattr(jit, "load_cached", real_load)
    jit.wait_for_links()                                   # the recompiled entry is written
    ns["caller"]._compiled.clear()
    assert ns["caller"][1](np.zeros(4, np.int32)).code_origin == "disk"


@pytest.mark.parametrize("shape", ["nested", "method", "mangled", "future"])
def test_source_check_accepts_unedited_functions_of_every_shape(tmp_path, module_dir, shape):
    """No false alarm: closures, class members, name mangling and future imports compile to
    the same code from the file as at import."""
    texts = {
        "nested": '''
import ascendc_py as asc
def make(n_factor):
    @asc.kernel
    def k(out: asc.GlobalAddress):
        og = asc.GlobalTensor()
        og.set_global_buffer(out, 4)
        og.set_value(0, n_factor)
    return k
K = make(7)
''',
        "method": '''
import ascendc_py as asc
class Holder:
    @staticmethod
    def raw(out: asc.GlobalAddress):
        og = asc.GlobalTensor()
        og.set_global_buffer(out, 4)
        og.set_value(0, 7)
K = asc.kernel(Holder.raw)
''',
        "mangled": '''
import ascendc_py as asc
class Holder:
    @staticmethod
    def raw(out: asc.GlobalAddress):
        __seven = 7
        og = asc.GlobalTensor()
        og.set_global_buffer(out, 4)
        og.set_value(0, __seven)
K = asc.kernel(Holder.raw)
''',
        "future": '''
from __future__ import annotations
import ascendc_py as asc
@asc.kernel
def k(out: asc.GlobalAddress):
    og = asc.GlobalTensor()
    og.set_global_buffer(out, 4)
    og.set_value(0, 7)
K = k
''',
    }
    name = f"shape_{shape}"
    (tmp_path / f"{name}.py").write_text(texts[shape])
    mod = importlib.import_module(name)
    try:
        out = np.zeros(4, np.int32)
        mod.K[1](out)
        assert out[0] == 7
    finally:
        sys.modules.pop(name, None)


WARNING_MODULE = '''
import ascendc_py as asc


def never_called():
    return 1[0]          # Python warns when it compiles this file (SyntaxWarning)


@asc.kernel
def warned_k(out: asc.GlobalAddress):
    g = asc.GlobalTensor()
    g.set_global_buffer(out, 8)
    g.set_value(0, 2.0)
'''


def test_the_source_check_does_not_repeat_pythons_warnings(module_dir):
    """Python warned about the file when it imported it; checking the kernel's source against
    its code compiles the file again, silently (a fuzzed source found the repeat)."""
    (module_dir / "warned_module.py").write_text(WARNING_MODULE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        mod = importlib.import_module("warned_module")
    out = np.zeros(8, np.float32)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        mod.warned_k[1](out)
    assert [w for w in seen if issubclass(w.category, SyntaxWarning)] == []
    assert out[0] == 2.0


def test_reloaded_helper_reached_through_a_package_attribute_chain(module_dir, notebook):
    """``pkg.sub.scale`` (a helper two module attributes down, as ``asc.adv.<api>`` is): its
    source is part of the caller's key and its identity part of the guard, so a reloaded
    submodule runs the new helper (before, the chain stopped at the first module: the caller
    kept the old code)."""
    ns, run = notebook
    pkg = module_dir / "stale_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from . import sub\n")
    write_module(pkg / "sub.py", 2)
    ns["stale_pkg"] = importlib.import_module("stale_pkg")
    try:
        run(CALLER_CELL.replace("scale(og, 4)", "stale_pkg.sub.scale(og, 4)"))
        assert launch(ns["caller"]) == [0, 2, 4, 6]
        write_module(pkg / "sub.py", 3)
        importlib.reload(ns["stale_pkg"].sub)
        assert launch(ns["caller"]) == [0, 3, 6, 9]
    finally:
        for name in ("stale_pkg", "stale_pkg.sub"):
            sys.modules.pop(name, None)


def test_a_nan_global_does_not_recompile_every_launch(notebook):
    """A module-level NaN constant read by a kernel is unchanged while it stays NaN (NaN never
    equals itself: before, every launch took it for a changed global and recompiled)."""
    ns, run = notebook
    ns["FILL"] = float("nan")
    run('''
@asc.kernel
def fill(out: asc.GlobalAddress):
    og = asc.GlobalTensor()
    og.set_global_buffer(out, 4)
    for i in range(4):
        og.set_value(i, FILL)
''')
    out = np.zeros(4, np.float32)
    ns["fill"][1](out)
    assert np.isnan(out).all()
    assert ns["fill"][1](out).code_origin == "memory"
    ns["FILL"] = 1.5
    with pytest.warns(UserWarning, match="global FILL changed"):
        ns["fill"][1](out)
    assert out.tolist() == [1.5] * 4
