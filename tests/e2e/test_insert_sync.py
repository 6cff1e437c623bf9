"""Automatic synchronisation (``compiler/insert_sync.py``) and ``asc.LocalTensorAuto``.

A kernel without set_flag/wait_flag between the pipes that share its buffers is a race in
sanitize mode; with the pass on (``auto_sync=True``, ``insert_sync=True``, or LocalTensorAuto)
it is clean, the report names each inserted flag with the line of the access that needed it,
and its timing equals the same kernel with those flags written by hand.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler import errors
from ascendc_py.compiler.insert_sync import sync_enabled

TILE = 256
TILES = 8


@asc.kernel
def vadd_noflags(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress,
                 n_tiles: asc.ConstExpr[int]):
    xg = asc.GlobalTensor()
    yg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    yg.set_global_buffer(y)
    zg.set_global_buffer(z)
    xl = asc.LocalTensor(x.dtype, asc.TPosition.VECCALC, 0, TILE)
    yl = asc.LocalTensor(x.dtype, asc.TPosition.VECCALC, 1024, TILE)
    zl = asc.LocalTensor(x.dtype, asc.TPosition.VECCALC, 2048, TILE)
    for i in range(n_tiles):
        asc.data_copy(xl, xg[i * TILE:], TILE)
        asc.data_copy(yl, yg[i * TILE:], TILE)
        asc.add(zl, xl, yl, TILE)
        asc.data_copy(zg[i * TILE:], zl, TILE)


vadd_auto = asc.kernel(auto_sync=True)(vadd_noflags.fn)


@asc.kernel
def vadd_handflags(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress,
                   n_tiles: asc.ConstExpr[int]):
    xg = asc.GlobalTensor()
    yg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    yg.set_global_buffer(y)
    zg.set_global_buffer(z)
    xl = asc.LocalTensor(x.dtype, asc.TPosition.VECCALC, 0, TILE)
    yl = asc.LocalTensor(x.dtype, asc.TPosition.VECCALC, 1024, TILE)
    zl = asc.LocalTensor(x.dtype, asc.TPosition.VECCALC, 2048, TILE)
    for i in range(n_tiles):
        asc.set_flag(asc.HardEvent.V_MTE2, 7)
        asc.wait_flag(asc.HardEvent.V_MTE2, 7)
        asc.data_copy(xl, xg[i * TILE:], TILE)
        asc.data_copy(yl, yg[i * TILE:], TILE)
        asc.set_flag(asc.HardEvent.MTE2_V, 7)
        asc.wait_flag(asc.HardEvent.MTE2_V, 7)
        asc.set_flag(asc.HardEvent.MTE3_V, 7)
        asc.wait_flag(asc.HardEvent.MTE3_V, 7)
        asc.add(zl, xl, yl, TILE)
        asc.set_flag(asc.HardEvent.V_MTE3, 7)
        asc.wait_flag(asc.HardEvent.V_MTE3, 7)
        asc.data_copy(zg[i * TILE:], zl, TILE)


@asc.kernel
def vadd_tensor_auto(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress,
                     n_tiles: asc.ConstExpr[int]):
    xg = asc.GlobalTensor()
    yg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    yg.set_global_buffer(y)
    zg.set_global_buffer(z)
    for i in range(n_tiles):
        xl = asc.LocalTensorAuto(x.dtype, TILE)
        yl = asc.LocalTensorAuto(x.dtype, [2, TILE // 2])
        zl = asc.LocalTensorAuto(x.dtype, TILE)
        asc.data_copy(xl, xg[i * TILE:], TILE)
        asc.data_copy(yl, yg[i * TILE:], TILE)
        v = yl.get_value(0)
        asc.adds(zl, xl, v, TILE)
        asc.add(zl, zl, yl, TILE)
        asc.data_copy(zg[i * TILE:], zl, TILE)


vadd_tensor_auto_off = asc.kernel(insert_sync=False)(vadd_tensor_auto.fn)


@asc.kernel
def auto_runtime_shape(x: asc.GlobalAddress, n: int, m: asc.ConstExpr[int]):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    a = asc.LocalTensorAuto(x.dtype, (m, n))      # known when the kernel starts
    t = asc.LocalTensorAuto(x.dtype, n * m + 8)
    asc.duplicate(a, 2.0, m * n)
    asc.adds(t, a, 1.0, m * n)
    asc.data_copy(xg, t, m * n)


@asc.kernel
def auto_loop_shape(x: asc.GlobalAddress):
    for i in range(1, 3):
        t = asc.LocalTensorAuto(x.dtype, i * 8)
        asc.duplicate(t, 1.0, 8)


def _data():
    rng = np.random.default_rng(5)
    x = rng.random(TILE * TILES, dtype=np.float32)
    y = rng.random(TILE * TILES, dtype=np.float32)
    return x, y, np.zeros_like(x)


def test_without_flags_is_a_race_in_sanitize_mode():
    x, y, z = _data()
    with pytest.raises(errors.DataRaceError) as info:
        vadd_noflags[1](x, y, z, TILES, sanitize=True)
    assert "test_insert_sync.py" in str(info.value)


def test_default_is_off_for_asc_kernel():
    x, y, z = _data()
    report = vadd_noflags[1](x, y, z, TILES)
    assert report.inserted_sync == []
    assert "set_flag" not in report.instructions


def test_auto_sync_makes_it_clean_and_names_each_flag():
    x, y, z = _data()
    report = vadd_auto[1](x, y, z, TILES, sanitize=True)
    np.testing.assert_array_equal(z, x + y)
    src = Path(__file__).read_text().splitlines()
    first, add, out = (src.index(text) + 1 for text in (
        "        asc.data_copy(xl, xg[i * TILE:], TILE)", "        asc.add(zl, xl, yl, TILE)",
        "        asc.data_copy(zg[i * TILE:], zl, TILE)"))
    assert report.inserted_sync == [f"V->MTE2 at {__file__}:{first}",
                                    f"MTE2->V at {__file__}:{add}",
                                    f"MTE3->V at {__file__}:{add}",
                                    f"V->MTE3 at {__file__}:{out}"]
    assert report.instructions["set_flag"] == 4 * TILES
    assert "insert_sync" in str(report) and "4 flag(s) inserted" in str(report)


def test_timing_equals_the_hand_written_flags():
    x, y, z = _data()
    auto = vadd_auto[1](x, y, z, TILES)
    hand = vadd_handflags[1](x, y, z, TILES)
    assert auto.cycles == hand.cycles
    assert auto.pipe_busy == hand.pipe_busy
    assert auto.stalls == hand.stalls
    assert hand.inserted_sync == []


def test_inserted_flags_in_the_trace(tmp_path):
    x, y, z = _data()
    report = vadd_auto[1](x, y, z, TILES, trace=True)
    path = report.save_trace(tmp_path / "t.json")
    data = json.loads(Path(path).read_text())
    marked = [e for e in data["traceEvents"] if e.get("args", {}).get("insert_sync")]
    assert len(marked) == 3 * TILES      # the two copy-ins' first and the add and the copy-out
    assert {e["args"]["insert_sync"] for e in marked} == {"V->MTE2", "MTE2->V, MTE3->V",
                                                          "V->MTE3"}
    assert data["otherData"]["insert_sync"] == report.inserted_sync


def test_local_tensor_auto_turns_insert_sync_on():
    x, y, z = _data()
    report = vadd_tensor_auto[1](x, y, z, TILES, sanitize=True)
    np.testing.assert_allclose(z, x + y + np.repeat(y[::TILE], TILE), rtol=1e-6)
    pairs = [s.split(" at ")[0] for s in report.inserted_sync]
    assert "MTE2->S" in pairs and "S->V" not in pairs and "MTE2->V" in pairs


def test_local_tensor_auto_with_insert_sync_off_is_a_race():
    x, y, z = _data()
    with pytest.raises(errors.DataRaceError):
        vadd_tensor_auto_off[1](x, y, z, TILES, sanitize=True)


def test_local_tensor_auto_shape_from_scalar_parameters():
    x = np.zeros(64, np.float32)
    report = auto_runtime_shape[1](x, 16, 2, sanitize=True)
    np.testing.assert_array_equal(x[:32], 3.0)
    np.testing.assert_array_equal(x[32:], 0.0)
    assert [s.split(" at ")[0] for s in report.inserted_sync] == ["V->MTE3"]
    with pytest.raises(errors.BufferCapacityError):       # the region is checked at run time
        auto_runtime_shape[1](x, 1 << 20, 2)


def test_local_tensor_auto_shape_known_only_in_a_loop_is_an_error_at_its_line():
    with pytest.raises(errors.KernelValueError) as info:
        auto_loop_shape[1](np.zeros(8, np.float32))
    assert "LocalTensorAuto needs a shape known when the kernel starts" in str(info.value)
    src = Path(__file__).read_text().splitlines()
    line = src.index("        t = asc.LocalTensorAuto(x.dtype, i * 8)") + 1
    assert f"test_insert_sync.py:{line}" in str(info.value)


def test_local_tensor_auto_outside_a_kernel():
    with pytest.raises(RuntimeError, match="inside an @asc.kernel"):
        asc.LocalTensorAuto(asc.float32, 8)


@pytest.mark.parametrize("options, auto, on", [
    ({}, False, None), ({}, True, "LocalTensorAuto"), ({"insert_sync": False}, True, None),
    ({"insert_sync": True}, False, "insert_sync"), ({"auto_sync": True}, False, "auto_sync"),
    ({"auto_sync": False}, False, None), ({"insert_sync": None, "auto_sync": True}, False,
                                          "auto_sync")])
def test_switch(options, auto, on):
    assert sync_enabled(options, auto) == on


PYASC = os.environ.get("PYASC_REPO")


@pytest.mark.skipif(not PYASC, reason="set PYASC_REPO to a checkout of hicann/pyasc to run these")
@pytest.mark.parametrize("path, flags", [
    ("python/test/kernels/insert_sync/test_vadd.py", ["--backend", "Model"]),
    ("python/test/kernels/insert_sync/test_vadd_scalar.py", ["--backend", "Model"]),
    # its copy-in through a VECOUT queue is handed over to the vector unit by a flag the pass
    # inserts (a HandoverError without it; pyasc compiles it with auto_sync on)
    ("python/test/generalization/basic/test_axpy.py", ["--pyasc-npu-as-model"])])
def test_pyasc_corpus_files(path, flags, tmp_path):
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-p", "ascendc_py.pyasc_compat.pytest_plugin",
                           str(Path(PYASC) / path), *flags],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]


def test_pyasc_jit_compiles_with_auto_sync_by_default():
    """pyasc's ``asc.jit`` has ``auto_sync=True`` by default (its CompileOptions); the kernel
    without flags above gets its four flags per tile through it, and none with it off."""
    from ascendc_py.compiler import insert_sync
    from ascendc_py.compiler.sema.analyzer import analyze
    from ascendc_py.pyasc_compat import launch as pyasc_launch
    x, y, z = _data()
    counts = []
    for kernel in (pyasc_launch.jit(vadd_noflags.fn),
                   pyasc_launch.jit(auto_sync=False)(vadd_noflags.fn)):
        specs, _, _ = kernel.bind((x, y, z, TILES), {})
        _, n = insert_sync.insert_sync(
            insert_sync.run(analyze(kernel, specs), kernel).function)
        counts.append((kernel.options["auto_sync"], n))
    # (insert_sync on its output again finds nothing more to insert)
    assert counts == [(True, 0), (False, 4)]
