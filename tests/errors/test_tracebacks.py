"""The user's line first, the internals never (issue 11 §4): printed tracebacks of user
mistakes hold no frame from inside the package (in a script, under pytest, for a torch op);
errors inside inlined helpers name the chain of calls; warnings point at the user's launch
line and are shown again when they are new."""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import ascendc_py as asc

REPO = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = str(REPO / "ascendc_py")

KERNELS = '''
import numpy as np
import ascendc_py as asc


@asc.kernel
def fill(t, n: int):
    asc.duplicate(t, 1.0, n)


@asc.kernel
def load_tile(t, n: int):
    fill(t, n)


@asc.kernel
def misspelt(t):
    asc.dupliate(t, 1.0, 8)


@asc.kernel
def runtime_fault(x: asc.GlobalAddress, n: int):
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, 8)
    load_tile(a, n)


@asc.kernel
def compile_error(x: asc.GlobalAddress):
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, 8)
    misspelt(a)
'''

CASES = {
    "runtime": ("runtime_fault[1](np.zeros(8, np.float32), 64)", "TensorExtentError"),
    "compile": ("compile_error[1](np.zeros(8, np.float32))", "UnknownAttributeError"),
    "torch": ("import torch, ascendc_py.torch_bridge.ops\n"
              "torch.ops.ascendc.sepia(torch.zeros(2, 3, 4, 4, dtype=torch.float64))",
              "OpDtypeError"),
}


def run(args, cwd) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), str(cwd)]))
    env.pop("ASCENDC_PY_FULL_TRACEBACK", None)
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=180)


def frames(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip().startswith('File "')]


@pytest.mark.parametrize("case", sorted(CASES))
def test_script_traceback_shows_only_user_frames(case, tmp_path):
    if case == "torch":
        pytest.importorskip("torch")
    (tmp_path / "user_kernels.py").write_text(KERNELS)
    launch, cls = CASES[case]
    (tmp_path / "script.py").write_text(f"from user_kernels import *\n{launch}\n")
    proc = run(["script.py"], tmp_path)
    assert proc.returncode == 1
    err = proc.stderr
    assert cls in err, err
    shown = frames(err)
    assert shown and all(PACKAGE not in f and "site-packages" not in f for f in shown), err
    assert any("script.py" in f for f in shown), err        # the user's launch line


def test_full_tracebacks_on_request(tmp_path):
    (tmp_path / "user_kernels.py").write_text(KERNELS)
    (tmp_path / "script.py").write_text("from user_kernels import *\n"
                                        + CASES["runtime"][0] + "\n")
    env_proc = subprocess.run([sys.executable, "script.py"], cwd=tmp_path, capture_output=True,
                              text=True, timeout=180,
                              env=dict(os.environ, ASCENDC_PY_FULL_TRACEBACK="1",
                                       PYTHONPATH=os.pathsep.join([str(REPO), str(tmp_path)])))
    assert any(PACKAGE in f for f in frames(env_proc.stderr)), env_proc.stderr


def test_pytest_failure_shows_no_internal_frame(tmp_path):
    (tmp_path / "user_kernels.py").write_text(KERNELS)
    (tmp_path / "test_user.py").write_text(textwrap.dedent('''
        from user_kernels import *

        def test_fault():
            runtime_fault[1](np.zeros(8, np.float32), 64)

        def test_compile():
            compile_error[1](np.zeros(8, np.float32))
    '''))
    proc = run(["-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                "test_user.py"], tmp_path)
    out = proc.stdout
    assert "2 failed" in out, out
    assert "TensorExtentError" in out and "UnknownAttributeError" in out, out
    assert PACKAGE not in out and "ascendc_py/" not in out.replace("ascendc_py/compiler", ""), \
        out
    assert "test_user.py:" in out


def test_error_in_an_inlined_helper_names_the_chain(tmp_path, monkeypatch):
    (tmp_path / "chain_kernels.py").write_text(KERNELS)
    monkeypatch.syspath_prepend(str(tmp_path))
    import chain_kernels as ck
    try:
        with pytest.raises(asc.TensorExtentError) as info:
            ck.runtime_fault[1](np.zeros(8, np.float32), 64)
        text = str(info.value)
        assert text.startswith(f"{tmp_path / 'chain_kernels.py'}:8:5: duplicate dst 't'")
        assert ("in fill (chain_kernels.py:8), inlined from load_tile at chain_kernels.py:13, "
                "inlined from runtime_fault at chain_kernels.py:24") in text
        with pytest.raises(asc.UnknownAttributeError) as info:
            ck.compile_error[1](np.zeros(8, np.float32))
        assert "in misspelt (chain_kernels.py:18), inlined from compile_error at " \
               "chain_kernels.py:30" in str(info.value)
    finally:
        sys.modules.pop("chain_kernels", None)


@asc.kernel
def leaves_flag(x: asc.GlobalAddress):
    asc.set_flag(asc.HardEvent.V_MTE3, 1)


def launch_here():
    leaves_flag[1](np.zeros(8, np.float32))   # the line a warning must point at


def test_warnings_point_at_the_launch_line_and_repeat_when_new():
    line = launch_here.__code__.co_firstlineno + 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        launch_here()
        launch_here()                                   # the same warning, same line: once
    flagged = [w for w in caught if issubclass(w.category, asc.FlagLeftSetWarning)]
    assert len(flagged) == 1
    assert flagged[0].filename == __file__ and flagged[0].lineno == line
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        leaves_flag[1](np.zeros(8, np.float32))          # another launch line: shown again
    assert [w for w in caught if issubclass(w.category, asc.FlagLeftSetWarning)]
