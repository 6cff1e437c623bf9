"""The command line (python -m ascendc_py / ascendc-py): run, trace, cache, platforms, doctor;
--help, usage errors and exit codes. Each test runs the CLI in a subprocess."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PNG = b"\x89PNG\r\n\x1a\n"

SCRIPT = textwrap.dedent('''
    import sys
    import numpy as np
    import ascendc_py as asc
    from ascendc_py.simulator.sanitizer import last_launch_sanitized

    @asc.kernel
    def cli_scale(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int):
        xg = asc.GlobalTensor()
        zg = asc.GlobalTensor()
        xg.set_global_buffer(x + asc.get_block_idx() * n, n)
        zg.set_global_buffer(z + asc.get_block_idx() * n, n)
        a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
        asc.data_copy(a, xg, n)
        asc.set_flag(asc.HardEvent.MTE2_V, 0)
        asc.wait_flag(asc.HardEvent.MTE2_V, 0)
        asc.muls(a, a, 3.0, n)
        asc.set_flag(asc.HardEvent.V_MTE3, 0)
        asc.wait_flag(asc.HardEvent.V_MTE3, 0)
        asc.data_copy(zg, a, n)

    if __name__ == "__main__":
        x = np.arange(512, dtype=np.float32)
        z = np.zeros_like(x)
        r = cli_scale[2](x, z, 256)
        assert (z == 3 * x).all()
        print("platform", r.platform, "sanitized", last_launch_sanitized(), "argv", sys.argv[1:])
        if "fail" in sys.argv:
            raise ValueError("the script failed")
        if "exit3" in sys.argv:
            sys.exit(3)
''')


def cli(*args, cwd=None, env=None):
    e = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(REPO)] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])))
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "ascendc_py", *args], capture_output=True,
                          text=True, cwd=cwd, env=e, timeout=300)


@pytest.fixture()
def script(tmp_path):
    path = tmp_path / "k.py"
    path.write_text(SCRIPT)
    return path


def test_help_and_usage_errors():
    p = cli("--help")
    assert p.returncode == 0 and "run" in p.stdout and "doctor" in p.stdout
    for sub in ("run", "trace", "cache", "platforms", "doctor"):
        h = cli(sub, "--help")
        assert h.returncode == 0 and h.stdout.startswith("usage: ascendc-py " + sub), sub
    p = cli()
    assert p.returncode == 2 and "usage:" in p.stderr
    p = cli("bogus")
    assert p.returncode == 2 and "invalid choice: 'bogus'" in p.stderr
    p = cli("run", "missing.py")
    assert p.returncode == 2 and "no such file: missing.py" in p.stderr
    p = cli("cache", "wipe")
    assert p.returncode == 2 and "invalid choice" in p.stderr


def test_run_with_settings(script, tmp_path):
    p = cli("run", "--sanitize", "--platform", "910B4", str(script), "a", "--b")
    assert p.returncode == 0, p.stderr
    assert "platform Ascend910B4 sanitized True argv ['a', '--b']" in p.stdout
    p = cli("run", str(script))
    assert p.returncode == 0 and "platform Ascend910B2 sanitized False" in p.stdout
    p = cli("run", "--platform", "910B9", str(script))
    assert p.returncode == 2 and "unknown platform '910B9'" in p.stderr


def test_run_exit_codes_and_errors(script):
    p = cli("run", str(script), "exit3")
    assert p.returncode == 3
    p = cli("run", str(script), "fail")
    assert p.returncode == 1 and "ValueError: the script failed" in p.stderr
    assert "runpy" not in p.stderr and "cli.py" not in p.stderr    # the script's frames only
    assert f'File "{script}"' in p.stderr


def test_run_trace_then_draw(script, tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "traces"
    p = cli("run", "--trace", str(out), str(script))
    assert p.returncode == 0, p.stderr
    files = sorted(out.iterdir())
    assert [f.name for f in files] == ["000_cli_scale.json"]
    assert "wrote 1 trace(s)" in p.stderr
    events = json.loads(files[0].read_text())["traceEvents"]
    assert sum(e["ph"] == "X" for e in events) == 2 * 3   # per block: 2 copies, 1 muls
    png = tmp_path / "t.png"
    p = cli("trace", str(files[0]), "--core", "1", "-o", str(png))
    assert p.returncode == 0 and png.read_bytes()[:8] == PNG and str(png) in p.stdout
    p = cli("trace", str(files[0]), "--core", "7")
    assert p.returncode == 2 and "no events for core 7" in p.stderr
    p = cli("trace", str(tmp_path / "none.json"))
    assert p.returncode == 2 and "no such file" in p.stderr


def test_cache_info_and_clear(script, tmp_path):
    cache = tmp_path / "cache"
    env = {"ASCENDC_PY_CACHE_DIR": str(cache)}
    assert cli("run", str(script), env=env).returncode == 0
    (cache / "notes.txt").write_text("not ours")
    p = cli("cache", "info", env=env)
    assert p.returncode == 0 and str(cache) in p.stdout
    assert "compiled kernels:" in p.stdout and "parser tables:" in p.stdout
    assert "other files" in p.stdout
    p = cli("cache", "clear", env=env)
    assert p.returncode == 0 and "removed" in p.stdout
    assert [f.name for f in cache.iterdir()] == ["notes.txt"]   # only ours removed


def test_platforms():
    p = cli("platforms")
    assert p.returncode == 0
    for name in ("Ascend910B1", "Ascend910B2 *", "Ascend910B3", "Ascend910B4"):
        assert name in p.stdout
    p = cli("platforms", "910b4")
    assert p.returncode == 0 and p.stdout.startswith("Ascend910B4")
    assert cli("platforms", "nope").returncode == 2


def test_doctor(tmp_path):
    p = cli("doctor", env={"ASCENDC_PY_CACHE_DIR": str(tmp_path / "c")})
    assert p.returncode == 0, p.stdout + p.stderr
    for name in ("python", "llvmlite", "lark", "parser tables", "kernel launch",
                 "matplotlib (optional)", "torch (optional)"):
        assert name in p.stdout
    assert "all required checks passed" in p.stdout


def test_doctor_reports_a_broken_install(tmp_path):
    """A module that cannot be imported is a FAIL with the fix, and exit code 1."""
    (tmp_path / "llvmlite").mkdir()
    (tmp_path / "llvmlite" / "__init__.py").write_text("raise ImportError('broken build')")
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from ascendc_py import doctor; "
            "sys.exit(1 if doctor.check_llvmlite()[0] == 'FAIL' else 0)")
    p = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                       text=True, cwd=REPO, timeout=120)
    assert p.returncode == 1, p.stderr


def test_console_script_is_declared():
    text = (REPO / "pyproject.toml").read_text()
    assert 'ascendc-py = "ascendc_py.cli:main"' in text
    from ascendc_py.cli import main
    assert callable(main)


def test_run_ctrl_c_exits_130(tmp_path):
    import signal
    import time
    script = tmp_path / "slow.py"
    script.write_text("import time\nprint('ready', flush=True)\ntime.sleep(60)\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(REPO)] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])))
    p = subprocess.Popen([sys.executable, "-m", "ascendc_py", "run", str(script)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert p.stdout.readline().strip() == "ready"
        time.sleep(0.2)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 130 and "interrupted" in err
