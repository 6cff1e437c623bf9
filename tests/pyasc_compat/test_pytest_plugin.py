"""The pytest plugin (``-p ascendc_py.pyasc_compat.pytest_plugin``) and pyasc's launch path
(``asc.jit`` -> ``asc.runtime.launcher.Launcher.run``, ``MockTensor``), on small test files in
pyasc's style written here (no copy of pyasc needed; ``test_corpus.py`` runs pyasc's own)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from unittest import mock

import numpy as np
import pytest

import ascendc_py
from ascendc_py import pyasc_compat
from ascendc_py.compiler.errors import LaunchArgumentError, UnknownAttributeError
from ascendc_py.pyasc_compat import launch, shim
from ascendc_py.simulator import config as sim_config

REPO_ROOT = Path(__file__).resolve().parents[2]
PLUGIN = "ascendc_py.pyasc_compat.pytest_plugin"


@pytest.fixture(autouse=True)
def _keep_platform():
    with sim_config.using_platform(sim_config.current_platform()):
        yield


def _pytest(directory: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONPATH=os.pathsep.join(
        [str(REPO_ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    env.pop(shim.NPU_AS_MODEL_ENV, None)
    env.pop(pyasc_compat.LENIENT_ENV, None)
    return subprocess.run([sys.executable, "-m", "pytest", "-p", PLUGIN, "-p", "no:cacheprovider",
                           "-p", "no:xdist", "-q", "-rA", *args, str(directory)],
                          cwd=directory, env=env, capture_output=True, text=True, timeout=600)


def _write(directory: Path, name: str, source: str) -> Path:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source))
    return path


# --------------------------------------------------------------------------- in process
def test_mock_tensor_compiles_without_running():
    """A launch with MockTensor arguments compiles for the mock's dtype, then calls
    asc.runtime.launcher.Launcher.run as looked up at launch time (the mock sees it)."""
    with pyasc_compat.install():
        import asc
        from asc.runtime.jit import MockTensor

        @asc.jit
        def k(x: asc.GlobalAddress, y: asc.GlobalAddress):
            xg = asc.GlobalTensor()
            xg.set_global_buffer(x)
            a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, 64)
            asc.data_copy(a, xg, 64)

        with mock.patch("asc.runtime.launcher.Launcher.run", return_value=None) as run:
            assert k[1](MockTensor(asc.float16), MockTensor(asc.int32)) is None
            assert run.call_count == 1
            compiled, name, args = run.call_args.args
            assert name == "k" and isinstance(compiled, launch.CompiledKernel)
            assert [type(a).__name__ for a in args] == ["MockTensor", "MockTensor"]
        specs = [key[0] for key in k._compiled]
        assert [(s.name, s.dtype) for s in specs[0]] == [("x", asc.float16), ("y", asc.int32)]
        # not mocked: a MockTensor cannot run
        with pytest.raises(LaunchArgumentError, match="can only be compiled, not run"):
            k[1](MockTensor(asc.float16), MockTensor(asc.int32))


def test_mocked_launch_still_reports_compile_errors():
    with pyasc_compat.install():
        import asc
        from asc.runtime.jit import MockTensor

        @asc.jit
        def bad(x: asc.GlobalAddress):
            asc.no_such_builtin(x)

        with mock.patch("asc.runtime.launcher.Launcher.run", return_value=None) as run:
            with pytest.raises(UnknownAttributeError, match="no_such_builtin"):
                bad[1](MockTensor(asc.float32))
            assert run.call_count == 0


def test_real_launch_goes_through_launcher_run():
    with pyasc_compat.install():
        import asc
        import asc.runtime.launcher as launcher

        @asc.jit
        def twice(x: asc.GlobalAddress, z: asc.GlobalAddress, n: asc.ConstExpr[int]):
            xg, zg = asc.GlobalTensor(), asc.GlobalTensor()
            xg.set_global_buffer(x)
            zg.set_global_buffer(z)
            a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
            asc.data_copy(a, xg, n)
            asc.set_flag(asc.HardEvent.MTE2_V, 0)
            asc.wait_flag(asc.HardEvent.MTE2_V, 0)
            asc.add(a, a, a, n)
            asc.set_flag(asc.HardEvent.V_MTE3, 0)
            asc.wait_flag(asc.HardEvent.V_MTE3, 0)
            asc.data_copy(zg, a, n)

        x = np.arange(64, dtype=np.float32)
        z = np.zeros_like(x)
        seen = []
        real_run = launcher.Launcher.run

        def spy(self, kernel, name, args):
            seen.append((self.options.core_num, name, len(args)))
            return real_run(self, kernel, name, args)

        with mock.patch.object(launcher.Launcher, "run", spy):
            report = twice[1, None](x, z, n=64)
        assert seen == [(1, "twice", 3)]
        assert np.array_equal(z, 2 * x) and report.cycles > 0
        assert isinstance(twice, ascendc_py.dsl.kernel.Kernel)


def test_shim_names_and_import_errors():
    with pyasc_compat.install():
        import asc
        from asc.language.core.properties import TOTAL_L1_SIZE
        assert TOTAL_L1_SIZE.value == 512 * 1024 and asc.TOTAL_L0C_SIZE.value == 128 * 1024
        assert asc.ONE_BLK_SIZE.value == 32 and asc.range is range
        with pytest.raises(ImportError, match="cannot import name 'NoSuchName'"):
            from asc.language.core.struct import NoSuchName  # noqa: F401
        with pytest.raises(ModuleNotFoundError, match="asc.language.nosuch"):
            import asc.language.nosuch  # noqa: F401
        import asc.runtime.launcher as launcher
        assert launcher.LaunchOptions(8).core_num == 8


def test_npu_as_model_maps_backend_and_torch_device(monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.delenv(shim.NPU_AS_MODEL_ENV, raising=False)
    from ascendc_py.pyasc_compat.npu import npu_as_model
    with pytest.raises(shim.NoNPUError):
        shim.set_platform(shim.Backend.NPU)
    with npu_as_model():
        shim.set_platform(shim.Backend.NPU, "Ascend910B3")
        assert sim_config.current_platform().name == "Ascend910B3"
        t = torch.zeros(3, device="npu")
        u = torch.randint(0, 5, (2,), dtype=torch.int32, device="npu:0")
        assert t.device.type == "cpu" and u.device.type == "cpu"
        assert t.to("npu").device.type == "cpu"
    assert shim.NPU_AS_MODEL_ENV not in os.environ
    with pytest.raises(RuntimeError):
        torch.zeros(3, device="npu")


# --------------------------------------------------------------------------- the plugin
def test_plugin_runs_unit_style_tests_with_mocked_launcher(tmp_path):
    """pyasc's unit/language style: a conftest patches asc.runtime.launcher.Launcher.run;
    kernels get MockTensor arguments; each is compiled (a compile error fails its test)."""
    _write(tmp_path, "conftest.py", """
        import pytest
        from unittest.mock import patch

        @pytest.fixture
        def mock_launcher_run():
            with patch("asc.runtime.launcher.Launcher.run", return_value=None) as mock:
                yield mock
    """)
    _write(tmp_path, "lang/test_ops.py", """
        import asc
        from asc.runtime import config
        from asc.runtime.jit import MockTensor

        def setup_function():
            config.set_platform(config.Backend.Model, check=False)

        def test_compiles(mock_launcher_run):
            @asc.jit
            def kernel_abs(x: asc.GlobalAddress) -> None:
                a = asc.LocalTensor(dtype=asc.float16, pos=asc.TPosition.VECIN, addr=0,
                                    tile_size=128)
                asc.abs(a, a, count=128)

            kernel_abs[1](MockTensor(asc.float16))
            assert mock_launcher_run.call_count == 1

        def test_compile_error(mock_launcher_run):
            @asc.jit
            def kernel_bad() -> None:
                asc.not_an_op()

            kernel_bad[1]()
            assert mock_launcher_run.call_count == 1
    """)
    _write(tmp_path, "other/test_ops.py", """
        def test_same_basename_elsewhere():
            pass
    """)
    proc = _pytest(tmp_path)
    out = proc.stdout + proc.stderr
    assert "PASSED lang/test_ops.py::test_compiles" in out, out
    assert "FAILED lang/test_ops.py::test_compile_error" in out and "not_an_op" in out, out
    assert "PASSED other/test_ops.py::test_same_basename_elsewhere" in out, out
    assert "pyasc programs run on ascendc_py's simulator" in out


def test_plugin_npu_as_model_and_lenient(tmp_path):
    """pyasc's generalization style: Backend.NPU and device='npu', and a tail copy past the
    end of the buffers."""
    _write(tmp_path, "conftest.py", """
        import pytest
        from asc.runtime import config

        def pytest_addoption(parser):
            parser.addoption("--backend", default=config.Backend.Model)

        @pytest.fixture
        def backend(request):
            return request.config.getoption("--backend")
    """)
    _write(tmp_path, "test_gen.py", """
        import pytest
        import torch
        import asc
        import asc.runtime.config as config
        import asc.lib.runtime as rt

        @asc.jit
        def double(x: asc.GlobalAddress, z: asc.GlobalAddress, tile: asc.ConstExpr[int]):
            xg, zg = asc.GlobalTensor(), asc.GlobalTensor()
            xg.set_global_buffer(x)
            zg.set_global_buffer(z)
            a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, tile)
            asc.data_copy(a, xg, tile)
            asc.set_flag(asc.HardEvent.MTE2_V, 0)
            asc.wait_flag(asc.HardEvent.MTE2_V, 0)
            asc.add(a, a, a, tile)
            asc.set_flag(asc.HardEvent.V_MTE3, 0)
            asc.wait_flag(asc.HardEvent.V_MTE3, 0)
            asc.data_copy(zg, a, tile)

        @pytest.mark.parametrize("size", [64, 40])
        @pytest.mark.parametrize("backend", [config.Backend.NPU])
        def test_double(size, backend):
            config.set_platform(backend)
            device = "npu" if config.Backend(backend) == config.Backend.NPU else "cpu"
            x = torch.randn((size,), dtype=torch.float32, device=device)
            z = torch.zeros_like(x)
            double[1, rt.current_stream()](x, z, 64)
            assert torch.allclose(z, 2 * x)

        def test_model_backend_option(backend):
            assert config.Backend(backend) is config.Backend.Model
            config.set_platform(backend)
    """)
    plain = _pytest(tmp_path, "--backend", "Model")
    out = plain.stdout + plain.stderr
    assert "FAILED test_gen.py::test_double[Backend.NPU-64]" in out and "no NPU here" in out
    assert "PASSED test_gen.py::test_model_backend_option" in out, out
    mapped = _pytest(tmp_path, "--pyasc-npu-as-model")
    out = mapped.stdout + mapped.stderr
    assert "--pyasc-npu-as-model: Backend.NPU is mapped onto the Model backend" in out, out
    assert "PASSED test_gen.py::test_double[Backend.NPU-64]" in out, out
    assert "FAILED test_gen.py::test_double[Backend.NPU-40]" in out    # strict GM bounds
    assert "GMOutOfBoundsError" in out
    lenient = _pytest(tmp_path, "--pyasc-npu-as-model", "--lenient")
    out = lenient.stdout + lenient.stderr
    assert lenient.returncode == 0, out
    assert "PASSED test_gen.py::test_double[Backend.NPU-40]" in out
    assert "--lenient: GM bounds are lenient" in out


def test_runner_npu_as_model(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    monkeypatch.delenv(shim.NPU_AS_MODEL_ENV, raising=False)
    program = _write(tmp_path, "npu_prog.py", """
        import sys, torch
        import asc.runtime.config as config
        config.set_platform(config.Backend.NPU)
        x = torch.ones(4, device="npu")
        sys.exit(0 if x.device.type == "cpu" else 5)
    """)
    assert pyasc_compat.run_program(program, npu_as_model=True) == 0
    assert shim.NPU_AS_MODEL_ENV not in os.environ
    with pytest.raises(shim.NoNPUError):
        pyasc_compat.run_program(program)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(REPO_ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    proc = subprocess.run([sys.executable, "-m", "ascendc_py.pyasc_compat", "--npu-as-model",
                           str(program)], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr


def test_mock_value_and_bfloat16_mock_tensor_bind_their_dtypes():
    with pyasc_compat.install():
        import asc
        from asc.runtime.jit import MockTensor, MockValue

        @asc.jit
        def k(x: asc.GlobalAddress, n: int, f: float):
            xg = asc.GlobalTensor()
            xg.set_global_buffer(x)

        with mock.patch("asc.runtime.launcher.Launcher.run") as run:
            k[1](MockTensor(asc.bfloat16), MockValue(asc.int64), MockValue(asc.float32))
            assert run.call_count == 1
        (specs, _), = k._compiled
        assert [(s.kind, s.dtype) for s in specs] == [
            ("gm", asc.bfloat16), ("scalar", asc.int64), ("scalar", asc.float32)]
