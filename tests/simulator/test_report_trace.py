"""The launch Report (fields, text and HTML), the Chrome trace JSON, the PNG timeline and its
command line, and platform selection. Expected numbers are derived by hand from the config."""
from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.simulator.config import ASCEND910B2, ASCEND910B4

CFG = ASCEND910B2
PIPES = ("S", "V", "M", "MTE1", "MTE2", "MTE3", "FIX")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
REPO = Path(__file__).resolve().parents[2]
TILE = 2048  # fp32 elements per tile: 8 KB


@asc.kernel
def report_add(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, n_tiles: int):
    off = asc.get_block_idx() * n_tiles * TILE
    xg = asc.GlobalTensor()
    yg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x + off, n_tiles * TILE)
    yg.set_global_buffer(y + off, n_tiles * TILE)
    zg.set_global_buffer(z + off, n_tiles * TILE)
    pipe = asc.TPipe()
    qx = asc.TQue(asc.TPosition.VECIN, 2)
    qy = asc.TQue(asc.TPosition.VECIN, 2)
    qz = asc.TQue(asc.TPosition.VECOUT, 2)
    pipe.init_buffer(qx, 2, TILE * 4)
    pipe.init_buffer(qy, 2, TILE * 4)
    pipe.init_buffer(qz, 2, TILE * 4)
    for i in range(n_tiles):
        a = qx.alloc_tensor(x.dtype)
        b = qy.alloc_tensor(x.dtype)
        asc.data_copy(a, xg[i * TILE:], TILE)
        asc.data_copy(b, yg[i * TILE:], TILE)
        qx.enque(a)
        qy.enque(b)
        a = qx.deque(x.dtype)
        b = qy.deque(x.dtype)
        c = qz.alloc_tensor(x.dtype)
        asc.add(c, a, b, TILE)
        qz.enque(c)
        qx.free_tensor(a)
        qy.free_tensor(b)
        c = qz.deque(x.dtype)
        asc.data_copy(zg[i * TILE:], c, TILE)
        qz.free_tensor(c)


def kernel_lines(kernel_fn, needle: str) -> list[int]:
    """File line numbers of the lines of a kernel's source that contain ``needle``."""
    src, first = inspect.getsourcelines(inspect.unwrap(getattr(kernel_fn, "fn", kernel_fn)))
    return [first + i for i, line in enumerate(src) if needle in line]


def launch_add(blocks=4, n_tiles=3, **kw):
    n = blocks * n_tiles * TILE
    rng = np.random.default_rng(5)
    x = rng.random(n).astype(np.float32)
    y = rng.random(n).astype(np.float32)
    z = np.zeros_like(x)
    r = report_add[blocks](x, y, z, n_tiles, **kw)
    np.testing.assert_array_equal(z, x + y)
    return r


@pytest.fixture(scope="module")
def traced():
    return launch_add(trace=True)


# ============================================================================ report fields
def test_report_fields(traced):
    r = traced
    blocks, n_tiles = 4, 3
    nbytes = TILE * 4
    calls = blocks * n_tiles
    assert r.kernel == "report_add" and r.block_dim == blocks
    assert r.platform == "Ascend910B2" and r.clock_mhz == CFG.clock_mhz
    assert isinstance(r.cycles, int) and r.cycles > 0
    assert r.time_us == pytest.approx(r.cycles / CFG.clock_mhz)
    assert tuple(r.pipe_busy) == PIPES and set(r.pipe_busy_pct) == set(PIPES)
    for p in PIPES:
        assert r.pipe_busy_pct[p] == pytest.approx(100 * r.pipe_busy[p] / r.cycles)
    assert r.bottleneck in r.pipe_busy
    assert set(r.stalls) == {"flag wait", "queue full", "scalar issue", "HBM contention"}
    assert all(isinstance(v, int) and v >= 0 for v in r.stalls.values())
    # every call counted once, over all blocks
    assert r.instructions == {"data_copy": 3 * calls, "add": calls, "alloc_tensor": 3 * calls,
                              "enque": 3 * calls, "deque": 3 * calls, "free_tensor": 3 * calls}
    assert r.bytes_moved == {"GM->UB": 2 * calls * nbytes, "UB->GM": calls * nbytes}
    assert r.flops == calls * TILE  # one add per element
    # 4 blocks on 4 cores, one wave; the chip time is the slowest core
    assert (r.cores_used, r.waves, len(r.core_cycles)) == (4, 1, 4)
    assert r.kernel_cycles == max(r.core_cycles) == r.core_cycles[r.critical_core]
    assert r.cycles == r.kernel_cycles + r.launch_cycles
    # busy cycles of the critical core, from the config's DMA rule (one core's measured curves;
    # HBM sharing between cores is settled after the launch and does not change pipe busy)
    dx = CFG.dma.copy_cycles("GM", "UB", nbytes)
    d3 = CFG.dma.copy_cycles("UB", "GM", nbytes)
    v = (nbytes // 256) * 2  # x and y buffers a multiple of 512 B apart: bank conflict, 2 c/rep
    # copy-ins share the core's GM port with the copy-outs: each is longer by at most the
    # overlap with a copy-out's data phase
    out_data = d3 - CFG.dma.ub_to_gm.latency_cycles
    assert n_tiles * 2 * dx <= r.pipe_busy["MTE2"] <= n_tiles * (2 * dx + out_data)
    assert r.pipe_busy["MTE3"] == n_tiles * d3
    assert r.pipe_busy["V"] == n_tiles * v
    assert r.pipe_busy["M"] == r.pipe_busy["MTE1"] == r.pipe_busy["FIX"] == 0
    assert r.bottleneck == "MTE2"
    seconds = r.cycles / (CFG.clock_mhz * 1e6)
    assert r.gm_bandwidth_gbps == pytest.approx(3 * calls * nbytes / seconds / 1e9)
    assert r.peak_gm_bandwidth_gbps == pytest.approx(CFG.gm.hbm_chip_bytes_per_cycle
                                                     * CFG.clock_mhz / 1e3)


def test_counts_for_manual_flags():
    r = flags_kernel[2](np.zeros(2 * 1024, np.float32), 1024, 5)
    assert r.instructions == {"data_copy": 10, "set_flag": 10, "wait_flag": 10, "abs": 10,
                              "pipe_barrier": 2}
    assert r.bytes_moved == {"GM->UB": 2 * 5 * 4096}


@asc.kernel
def flags_kernel(x: asc.GlobalAddress, n: int, reps: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x + asc.get_block_idx() * n, n)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    for i in range(reps):
        asc.data_copy(a, xg, n)
        asc.set_flag(asc.HardEvent.MTE2_V, 0)
        asc.wait_flag(asc.HardEvent.MTE2_V, 0)
        asc.abs(a, a, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)


def test_report_text_and_html(traced):
    text = str(traced)
    assert "report_add[4]" in text and "Ascend910B2" in text
    assert f"{traced.cycles:,} cycles" in text and "MTE2" in text and "bottleneck" in text
    html = traced._repr_html_()
    assert html.startswith("<div class='ascpy'>") and html.endswith("</div>")
    assert "report_add[4]" in html and "<tr>" in html


# ============================================================================ trace JSON
def test_trace_json_fields(traced, tmp_path):
    path = traced.save_trace(tmp_path / "sub" / "trace.json")
    with open(path) as f:
        data = json.load(f)
    evs = data["traceEvents"]
    xs = [e for e in evs if e["ph"] == "X"]
    assert len(xs) == 4 * 3 * 4  # blocks x tiles x (2 copies in, add, copy out)
    copy_lines = kernel_lines(report_add, "asc.data_copy(")
    add_lines = kernel_lines(report_add, "asc.add(")
    assert len(copy_lines) == 3 and len(add_lines) == 1
    fname = Path(__file__).name
    by_lane: dict = {}
    for e in xs:
        for key in ("name", "ph", "pid", "tid", "ts", "dur", "args"):
            assert key in e
        assert e["tid"] in PIPES
        assert isinstance(e["ts"], (int, float)) and isinstance(e["dur"], (int, float))
        file, line = e["args"]["code"].rsplit(":", 1)
        assert file.endswith(fname)
        assert int(line) in (copy_lines if e["name"] == "data_copy" else add_lines)
        occ, lat = e["args"]["occupancy_cycles"], e["args"]["latency_cycles"]
        assert e["dur"] * CFG.clock_mhz == pytest.approx(max(occ, 1))
        assert lat == (CFG.vector.simple.latency_f32 if e["name"] == "add" else 0)
        assert e["tid"] == ("V" if e["name"] == "add" else
                            "MTE3" if int(line) == copy_lines[2] else "MTE2")
        by_lane.setdefault((e["pid"], e["tid"]), []).append(e)
    # one process per core, pid names the core; each pipe lane runs in order without overlap
    assert {pid for pid, _ in by_lane} == {f"core{c}.veccore0" for c in range(4)}
    for lane in by_lane.values():
        lane.sort(key=lambda e: e["ts"])
        for a, b in zip(lane, lane[1:]):
            assert a["ts"] + a["dur"] <= b["ts"] + 1e-9
    names = {(e["pid"], e["args"]["name"]) for e in evs if e.get("name") == "thread_name"}
    assert ("core0.veccore0", "MTE2") in names
    assert data["otherData"]["platform"] == "Ascend910B2"
    # the whole trace fits inside the launch
    end = max(e["ts"] + e["dur"] for e in xs)
    assert end <= traced.time_us + 1e-9


def test_trace_of_waves_is_sequential_per_core(tmp_path):
    """Blocks 0 and 48 share core 0: block 48's events come after block 0's."""
    r = flags_kernel[49](np.zeros(49 * 256, np.float32), 256, 1, trace=True)
    data = json.loads(Path(r.save_trace(tmp_path / "w.json")).read_text())
    core0 = [e for e in data["traceEvents"] if e["ph"] == "X" and e["pid"] == "core0.veccore0"]
    first = [e for e in core0 if e["args"]["block"] == 0]
    second = [e for e in core0 if e["args"]["block"] == 48]
    assert len(first) == len(second) == 2
    assert min(e["ts"] for e in second) >= max(e["ts"] + e["dur"] for e in first)
    assert r.kernel_cycles == r.core_cycles[0] and r.waves == 2


def test_trace_needs_trace_flag(tmp_path, monkeypatch):
    monkeypatch.delenv("ASCENDC_PY_TRACE", raising=False)
    r = flags_kernel[1](np.zeros(256, np.float32), 256, 1)
    with pytest.raises(ValueError, match="trace=True"):
        r.save_trace(tmp_path / "none.json")
    monkeypatch.setenv("ASCENDC_PY_TRACE", "1")
    r = flags_kernel[1](np.zeros(256, np.float32), 256, 1)
    data = json.loads(Path(r.save_trace(tmp_path / "env.json")).read_text())
    assert sum(e["ph"] == "X" for e in data["traceEvents"]) == 2


# ============================================================================ PNG and CLI
def test_plot_writes_png(traced, tmp_path):
    pytest.importorskip("matplotlib")
    for core in (None, 3):
        out = Path(traced.plot(tmp_path / f"t{core}.png", core=core))
        assert out.read_bytes()[:8] == PNG_SIGNATURE and out.stat().st_size > 1000


def test_trace_cli_draws_png(traced, tmp_path):
    pytest.importorskip("matplotlib")
    trace = traced.save_trace(tmp_path / "trace.json")
    out = tmp_path / "out.png"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(REPO)] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])))
    proc = subprocess.run([sys.executable, "-m", "ascendc_py.simulator.trace", trace, "-o",
                           str(out), "--core", "0"], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes()[:8] == PNG_SIGNATURE
    assert str(out) in proc.stdout


# ============================================================================ platforms
@asc.kernel
def compute_bound(x: asc.GlobalAddress, n: int, reps: int):
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECCALC, 0, n)
    b = asc.LocalTensor(x.dtype, asc.TPosition.VECCALC, 65536, n)
    for i in range(reps):
        asc.exp(b, a, n)


def test_platform_changes_time_by_clock_ratio():
    # same vector costs on both chips, so the cycles match and only the clock differs
    assert ASCEND910B4.vector == CFG.vector and ASCEND910B4.clock_mhz != CFG.clock_mhz
    x = np.zeros(8, np.float32)
    r2 = compute_bound[1](x, 8192, 20, platform="Ascend910B2")
    r4 = compute_bound[1](x, 8192, 20, platform="Ascend910B4")
    # 20 exps of 128 fp32 repeats at 2 c/rep, back to back on V, + one latency
    t = CFG.vector.transcendental
    assert r2.kernel_cycles == pytest.approx(20 * 128 * t.cycles_per_repeat_f32 + t.latency_f32,
                                             abs=20)
    assert r2.bottleneck == "V"
    assert r4.kernel_cycles == r2.kernel_cycles
    assert (r4.platform, r4.clock_mhz) == ("Ascend910B4", ASCEND910B4.clock_mhz)
    # the launch overhead is the same time on both (nanoseconds), the blocks' cycles scale
    assert r4.launch_cycles / CFG.launch.total_ns() == pytest.approx(ASCEND910B4.clock_mhz / 1e3,
                                                                     abs=1e-3)
    kernel_us = [r.kernel_cycles / r.clock_mhz for r in (r2, r4)]
    assert kernel_us[1] / kernel_us[0] == pytest.approx(CFG.clock_mhz / ASCEND910B4.clock_mhz)
    assert r4.time_us == pytest.approx(kernel_us[1] + r4.launch_cycles / r4.clock_mhz)


def test_set_platform_sets_default():
    before = asc.current_platform()
    x = np.zeros(8, np.float32)
    try:
        asc.set_platform("Ascend910B4")
        r = compute_bound[1](x, 4096, 2)
        assert r.platform == "Ascend910B4" and r.clock_mhz == ASCEND910B4.clock_mhz
        asc.set_platform("Model", "Ascend910B2")  # pyasc's (backend, platform) spelling
        assert compute_bound[1](x, 4096, 2).platform == "Ascend910B2"
        asc.set_platform("Ascend910B4")
        assert compute_bound[1](x, 4096, 2, platform="Ascend910B2").platform == "Ascend910B2"
    finally:
        asc.set_platform(before)
    assert asc.current_platform() is before


# ============================================================================ scalar accounting
@asc.kernel
def barrier_serialised(x: asc.GlobalAddress, n: int, reps: int, use_flags: asc.ConstExpr[int]):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    b = asc.LocalTensor(x.dtype, asc.TPosition.VECCALC, 65536, n)
    for i in range(reps):
        asc.data_copy(a, xg, n)
        if use_flags:
            asc.set_flag(asc.HardEvent.MTE2_S, 0)
            asc.wait_flag(asc.HardEvent.MTE2_S, 0)
        else:
            asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        asc.exp(b, a, n)
        if use_flags:
            asc.set_flag(asc.HardEvent.V_S, 0)
            asc.wait_flag(asc.HardEvent.V_S, 0)
        else:
            asc.pipe_barrier(asc.PipeID.PIPE_ALL)


def test_scalar_waiting_on_flags_is_a_stall_not_busy():
    # fp16, 16384 elements: copy 347 + 32768/128 = 603 cycles, exp 128 reps x 4 = 512 (+27)
    x = np.zeros(16384, np.float16)
    r = barrier_serialised[1](x, 16384, 10, 1)
    assert r.pipe_busy["S"] < 0.05 * r.kernel_cycles
    assert r.stalls["flag wait"] > 0.9 * r.kernel_cycles
    assert r.bottleneck == "MTE2"


def test_scalar_waiting_in_barrier_is_not_busy():
    x = np.zeros(16384, np.float16)
    flags = barrier_serialised[1](x, 16384, 10, 1)
    r = barrier_serialised[1](x, 16384, 10, 0)
    assert r.cycles == pytest.approx(flags.cycles, abs=40)   # the same schedule
    assert r.pipe_busy["S"] < 0.05 * r.cycles
    assert r.bottleneck == "MTE2"


def test_a_report_is_computed_when_first_read_and_equals_the_eager_one():
    x, y, z = (np.ones(2 * TILE, np.float32) for _ in range(3))
    report = report_add[2](x, y, z, 1)
    assert "_pending" in report.__dict__          # nothing computed for an unread report
    pending = type(report).launch_arguments(report.__dict__["_pending"])
    eager = type(report).build(**pending)
    assert report.cycles == eager.cycles > 0      # the first read computes every field
    assert "_pending" not in report.__dict__
    assert report == eager and str(report) == str(eager)


def test_a_pending_report_pickles_with_its_fields():
    import pickle
    x, y, z = (np.ones(TILE, np.float32) for _ in range(3))
    report = report_add[1](x, y, z, 1)
    copy = pickle.loads(pickle.dumps(report))
    assert copy.cycles == report.cycles and copy.instructions == report.instructions
    with pytest.raises(AttributeError):
        report.no_such_field      # noqa: B018
