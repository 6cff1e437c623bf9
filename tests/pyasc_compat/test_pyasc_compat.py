"""pyasc compatibility layer: `import asc` programs run unmodified on the simulator.

The tutorial tests read pyasc's own tutorials from a local copy of hicann/pyasc at test time
(never copied into this project): ``$PYASC_REPO``, either a
bare git directory or a checkout. They are skipped, saying so, when no copy is there.
The other tests use small programs written here.
"""
from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import ascendc_py
from ascendc_py import profiler, pyasc_compat
from ascendc_py.pyasc_compat import launch as pyasc_launch
from ascendc_py.pyasc_compat import shim
from ascendc_py.simulator import config as sim_config

REPO_ROOT = Path(__file__).resolve().parents[2]
PYASC_REPO = Path(os.environ["PYASC_REPO"]) if os.environ.get("PYASC_REPO") else None

TUTORIALS = {
    # tutorial path in pyasc's repository -> the name its success log line uses
    "python/tutorials/01_add/add.py": "add",
    "python/tutorials/02_add_framework/add_framework.py": "add_framework",
}


def _tutorial(rel: str, dest: Path) -> Path:
    """Copy one pyasc tutorial from the local pyasc repository into ``dest`` (a temp dir)."""
    if PYASC_REPO is None or not PYASC_REPO.exists():
        pytest.skip("set PYASC_REPO to a checkout of hicann/pyasc to run these"
                    + (f" ({PYASC_REPO} does not exist)" if PYASC_REPO else ""))
    out = dest / Path(rel).name
    checkout = PYASC_REPO / rel
    if checkout.is_file():
        out.write_bytes(checkout.read_bytes())
        return out
    try:
        text = subprocess.run(["git", "-C", str(PYASC_REPO), "show", f"HEAD:{rel}"],
                              check=True, capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"cannot read {rel} from {PYASC_REPO}: {exc}")
    out.write_bytes(text)
    return out


@pytest.fixture(autouse=True)
def _keep_platform():
    with sim_config.using_platform(sim_config.current_platform()):
        yield


@pytest.fixture
def launches():
    """Reports of every launch made while the test runs."""
    seen = []
    cb = profiler.observe(seen.append)
    yield seen
    profiler.unobserve(cb)


def _clean():
    assert not [m for m in sys.modules if m == "asc" or m.startswith("asc.")]
    assert not any(isinstance(f, shim.AscFinder) for f in sys.meta_path)


def _write(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return path


# --------------------------------------------------------------------------- pyasc's tutorials
@pytest.mark.parametrize("rel", list(TUTORIALS))
def test_tutorial_runs_and_passes_its_own_check(rel, tmp_path, caplog, launches):
    program = _tutorial(rel, tmp_path)
    argv_before, platform_before = list(sys.argv), sim_config.current_platform()
    with caplog.at_level(logging.INFO):
        assert pyasc_compat.run_program(program, []) == 0
    assert f"[INFO] Sample {TUTORIALS[rel]} run success." in caplog.text
    # its kernel ran on 8 blocks of pyasc's default Model platform
    assert [(r.kernel, r.block_dim, r.platform) for r in launches] == \
        [("vadd_kernel", 8, "Ascend910B1")]
    assert launches[0].cycles > 0
    _clean()
    assert sys.argv == argv_before
    assert sim_config.current_platform() is platform_before


@pytest.mark.parametrize("rel", list(TUTORIALS))
def test_tutorial_platform_option(rel, tmp_path, caplog, launches):
    program = _tutorial(rel, tmp_path)
    with caplog.at_level(logging.INFO):
        assert pyasc_compat.run_program(program, ["-r", "Model", "-v", "Ascend910B4"]) == 0
    assert f"[INFO] Sample {TUTORIALS[rel]} run success." in caplog.text
    assert [r.platform for r in launches] == ["Ascend910B4"]


def test_tutorial_npu_backend_is_a_clear_error(tmp_path):
    program = _tutorial("python/tutorials/01_add/add.py", tmp_path)
    with pytest.raises(pyasc_compat.NoNPUError, match=r"no NPU here; use -r Model"):
        pyasc_compat.run_program(program, ["-r", "NPU"])
    _clean()


def test_tutorial_unsimulated_platform_is_a_clear_error(tmp_path):
    program = _tutorial("python/tutorials/01_add/add.py", tmp_path)
    with pytest.raises(ValueError, match=r"Ascend910_9382 is not simulated.*Ascend910B1"):
        pyasc_compat.run_program(program, ["-v", "Ascend910_9382"])
    _clean()


def _cli(*args, cwd):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(REPO_ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    return subprocess.run([sys.executable, "-m", "ascendc_py.pyasc_compat", *args], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=600)


def test_command_line_runs_tutorial(tmp_path):
    program = _tutorial("python/tutorials/02_add_framework/add_framework.py", tmp_path)
    proc = _cli(program.name, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "[INFO] Sample add_framework run success." in proc.stderr


def test_command_line_npu_backend(tmp_path):
    program = _tutorial("python/tutorials/01_add/add.py", tmp_path)
    proc = _cli(str(program), "-r", "NPU", cwd=tmp_path)
    assert proc.returncode == 1
    assert "no NPU here; use -r Model" in proc.stderr
    assert "Traceback" not in proc.stderr


# --------------------------------------------------------------------------- the runner
def test_command_line_usage_and_errors(tmp_path):
    proc = _cli(cwd=tmp_path)
    assert proc.returncode == 2 and "usage:" in proc.stderr
    proc = _cli("--help", cwd=tmp_path)
    assert proc.returncode == 0 and "--lenient" in proc.stdout
    proc = _cli("--bogus", "x.py", cwd=tmp_path)
    assert proc.returncode == 2 and "unknown option --bogus" in proc.stderr
    proc = _cli("missing.py", cwd=tmp_path)
    assert proc.returncode == 2 and "no such file" in proc.stderr


def test_command_line_passes_argv_and_lenient(tmp_path):
    _write(tmp_path, "prog.py", """
        import os, sys
        assert sys.argv[1:] == ["-r", "Model", "--x"], sys.argv
        sys.exit(0 if os.environ.get("ASCENDC_PY_LENIENT") == "1" else 7)
    """)
    assert _cli("--lenient", "prog.py", "-r", "Model", "--x", cwd=tmp_path).returncode == 0
    assert _cli("prog.py", "-r", "Model", "--x", cwd=tmp_path).returncode == 7


def test_run_program_own_kernel(tmp_path, launches):
    """A small program in pyasc's style (written here) runs as __main__ with its argv."""
    program = _write(tmp_path, "scale.py", """
        import sys
        import numpy as np
        import asc
        import asc.runtime.config as config
        import asc.lib.runtime as rt

        @asc.jit
        def scale(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int):
            xg = asc.GlobalTensor(); xg.set_global_buffer(x + asc.get_block_idx() * n, n)
            zg = asc.GlobalTensor(); zg.set_global_buffer(z + asc.get_block_idx() * n, n)
            a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
            b = asc.LocalTensor(x.dtype, asc.TPosition.VECOUT, n * x.dtype.sizeof(), n)
            asc.data_copy(a, xg, n)
            asc.set_flag(asc.HardEvent.MTE2_V, 0); asc.wait_flag(asc.HardEvent.MTE2_V, 0)
            asc.add(b, a, a, n)
            asc.set_flag(asc.HardEvent.V_MTE3, 0); asc.wait_flag(asc.HardEvent.V_MTE3, 0)
            asc.data_copy(zg, b, n)

        if __name__ == "__main__":
            config.set_platform(config.Backend(sys.argv[1]), config.Platform(sys.argv[2]))
            x = np.arange(4 * 256, dtype=np.float32)
            z = np.zeros_like(x)
            scale[4, rt.current_stream()](x, z, 256)
            rt.synchronize()
            sys.exit(0 if np.array_equal(z, 2 * x) else 3)
    """)
    assert pyasc_compat.run_program(program, ["Model", "Ascend910B3"]) == 0
    assert [(r.kernel, r.block_dim, r.platform) for r in launches] == \
        [("scale", 4, "Ascend910B3")]
    _clean()


def test_run_program_exit_status_and_exceptions(tmp_path):
    assert pyasc_compat.run_program(_write(tmp_path, "a.py", "import sys; sys.exit(4)")) == 4
    assert pyasc_compat.run_program(_write(tmp_path, "b.py", "import sys; sys.exit()")) == 0
    assert pyasc_compat.run_program(_write(tmp_path, "c.py", "raise SystemExit('bye')")) == 1
    with pytest.raises(AssertionError, match="boom"):
        pyasc_compat.run_program(_write(tmp_path, "d.py", "assert False, 'boom'"))
    _clean()
    with pytest.raises(FileNotFoundError):
        pyasc_compat.run_program(tmp_path / "missing.py")


def test_run_program_restores_process_state(tmp_path):
    _write(tmp_path, "helper_mod_for_pyasc_test.py", "VALUE = 41\n")
    program = _write(tmp_path, "main.py", """
        import os, sys
        import asc.runtime.config as config
        import helper_mod_for_pyasc_test as h
        assert sys.path[0] == os.path.dirname(os.path.abspath(__file__))
        assert __name__ == "__main__"
        config.set_platform("Model", "Ascend910B4")
        sys.exit(0 if h.VALUE == 41 and "ASCENDC_PY_LENIENT" not in os.environ else 1)
    """)
    argv, path, env = list(sys.argv), list(sys.path), os.environ.get("ASCENDC_PY_LENIENT")
    platform = sim_config.current_platform()
    main_module = sys.modules["__main__"]
    assert pyasc_compat.run_program(program) == 0
    assert sys.argv == argv and sys.path == path
    assert os.environ.get("ASCENDC_PY_LENIENT") == env
    assert sim_config.current_platform() is platform
    assert "helper_mod_for_pyasc_test" not in sys.modules
    assert sys.modules["__main__"] is main_module
    _clean()


def test_run_program_lenient_sets_and_restores_env(tmp_path, monkeypatch):
    monkeypatch.delenv("ASCENDC_PY_LENIENT", raising=False)
    program = _write(tmp_path, "p.py", """
        import os, sys
        sys.exit(0 if os.environ.get("ASCENDC_PY_LENIENT") == "1" else 9)
    """)
    assert pyasc_compat.run_program(program, lenient=True) == 0
    assert "ASCENDC_PY_LENIENT" not in os.environ
    assert pyasc_compat.run_program(program) == 9


# --------------------------------------------------------------------------- the shim modules
def test_install_maps_asc_onto_ascendc_py():
    with pyasc_compat.install():
        import asc
        import asc.language.basic
        import asc.lib.runtime as rt
        import asc.runtime.config as config
        # asc.jit is pyasc's launch path (compile, then asc.runtime.launcher) on our Kernel
        assert asc.jit is pyasc_launch.jit and asc.kernel is ascendc_py.kernel
        assert asc.runtime.jit.jit is pyasc_launch.jit
        assert asc.GlobalAddress is ascendc_py.GlobalAddress
        assert asc.add is ascendc_py.add and asc.TPosition is ascendc_py.TPosition
        assert asc.float16 is ascendc_py.float16
        assert asc.language.basic.data_copy is ascendc_py.data_copy
        assert asc.language.add is ascendc_py.add
        # `import asc` alone makes these reachable, as with pyasc
        assert asc.runtime.config is config and asc.lib.runtime is rt
        assert "add" in dir(asc) and "add" in asc.__all__
        star: dict = {}
        exec("from asc import *", star)
        assert star["add"] is ascendc_py.add and star["jit"] is pyasc_launch.jit
        with pytest.raises(AttributeError, match="no attribute 'no_such_op'"):
            asc.no_such_op  # noqa: B018
        with pytest.raises(ModuleNotFoundError, match="asc.codegen.*provides"):
            import asc.codegen  # noqa: F401
    _clean()


def test_install_shadows_and_restores_an_existing_asc(monkeypatch):
    import types
    other = types.ModuleType("asc")
    monkeypatch.setitem(sys.modules, "asc", other)
    with pyasc_compat.install():
        import asc
        assert asc is not other and asc.add is ascendc_py.add
        with pyasc_compat.install():  # nested: same mapping
            import asc as again
            assert again is asc
        assert sys.modules["asc"] is asc
    assert sys.modules["asc"] is other


def test_backend_enum_like_pyasc():
    assert list(shim.Backend.__members__) == ["Model", "NPU"]
    assert shim.Backend("Model") is shim.Backend.Model
    assert shim.Backend(shim.Backend.NPU) is shim.Backend.NPU
    assert "Model" in shim.Backend.__members__
    with pytest.raises(ValueError):
        shim.Backend("GPU")


def test_platform_enum_like_pyasc():
    values = [p.value for p in shim.Platform]
    assert values[:5] == ["Ascend910B1", "Ascend910B2", "Ascend910B2C", "Ascend910B3",
                          "Ascend910B4"]
    assert shim.Platform("Ascend910B4-1") is shim.Platform.Ascend910B4_1
    assert shim.Platform.Ascend910_9382.value == "Ascend910_9382"
    assert shim.KernelType.AIV_ONLY.value == 0


def test_set_platform():
    shim.set_platform(shim.Backend.Model, None)          # pyasc's Model default
    assert sim_config.current_platform().name == "Ascend910B1"
    shim.set_platform("Model", shim.Platform.Ascend910B4)
    assert sim_config.current_platform().name == "Ascend910B4"
    shim.set_platform(shim.Backend.Model, "Ascend910B3", device_id=0, check=False)
    assert sim_config.current_platform().name == "Ascend910B3"
    with pytest.raises(ValueError, match="Ascend910B2C is not simulated"):
        shim.set_platform("Model", shim.Platform.Ascend910B2C)
    with pytest.raises(ValueError, match="unknown platform 'Ascend999'"):
        shim.set_platform("Model", "Ascend999")
    with pytest.raises(ValueError, match="device 3 does not exist"):
        shim.set_platform("Model", "Ascend910B1", device_id=3)
    with pytest.raises(ValueError):
        shim.set_platform("GPU")
    assert sim_config.current_platform().name == "Ascend910B3"


def test_npu_backend_raises():
    with pytest.raises(shim.NoNPUError, match=r"no NPU here; use -r Model"):
        shim.set_platform(shim.Backend.NPU)
    with pytest.raises(shim.NoNPUError, match=r"no NPU here; use -r Model"):
        shim.set_platform("NPU", shim.Platform.Ascend910B1)
    with pytest.raises(RuntimeError, match=r"no NPU here"):
        shim.use_npu()


def test_lib_runtime():
    with pyasc_compat.install():
        import asc.lib.runtime as rt
        s = rt.current_stream()
        assert isinstance(s, rt.Stream) and rt.current_stream() is s
        assert s.synchronize() is None and rt.synchronize() is None
        assert rt.synchronize(s) is None and rt.synchronize_device() is None
        t = rt.create_stream()
        assert isinstance(t, rt.Stream) and t is not s
        rt.destroy_stream(t)
        rt.use_model()
        assert rt.is_model() and rt.is_available() and rt.is_initialized()
        assert rt.device_count() == 1 and rt.current_device() == 0
        rt.set_device(0)
        rt.set_soc_version("Ascend910B4")
        assert rt.current_platform() == "Ascend910B4"
        assert rt.get_soc_version() is shim.Platform.Ascend910B4
        with pytest.raises(AttributeError, match="malloc is not provided by ascendc_py"):
            rt.malloc  # noqa: B018
        import asc.lib.host as host
        from ascendc_py import host as our_host
        assert host.MultiCoreMatmulTiling is our_host.MultiCoreMatmulTiling
        assert host.BatchMatmulTiling is our_host.BatchMatmulTiling
        with pytest.raises(AttributeError, match="TilingKey is not provided"):
            host.TilingKey  # noqa: B018
    _clean()

