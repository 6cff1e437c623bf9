"""asc.profile(): every launch inside the block, attributed to its op; the key-averages table;
one Chrome trace (launches, optionally with nested instructions); no torch needed to import."""
import json
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

import ascendc_py as asc  # noqa: E402
import ascendc_py.torch_bridge.ops as ops  # noqa: E402
from ascendc_py.torch_bridge import kernels  # noqa: E402


def test_collects_every_launch_of_forward_and_backward():
    a = torch.randn(64, 33, requires_grad=True)
    img = torch.rand(2, 3, 8, 8, requires_grad=True)
    ops.swiglu(a, a)                                   # outside: not recorded
    with asc.profile() as prof:
        loss = ops.swiglu(a, a).sum() + ops.sepia(img).sum() + ops.add(a, a).sum()
        loss.backward()
        ops.swiglu(a.detach(), a.detach())
    names = [(e.op, e.kernel) for e in prof.events]
    assert sorted(names) == sorted([
        ("ascendc::swiglu", "swiglu_kernel"), ("ascendc::sepia", "color_matrix_kernel"),
        ("ascendc::add", "add_kernel"), ("ascendc::swiglu_backward", "swiglu_backward_kernel"),
        ("ascendc::sepia_backward", "color_matrix_kernel"), ("ascendc::swiglu", "swiglu_kernel")])
    assert all(e.device_us > 0 and e.host_seconds > 0 and e.cycles > 0 for e in prof.events)
    assert prof.device_time_us == pytest.approx(sum(e.device_us for e in prof.events))
    rows = {(r.op, r.kernel): r for r in prof.key_averages()}
    sw = rows[("ascendc::swiglu", "swiglu_kernel")]
    assert sw.calls == 2 and sw.device_avg_us == pytest.approx(sw.device_us / 2)
    assert [r.device_us for r in prof.key_averages()] == \
        sorted((r.device_us for r in rows.values()), reverse=True)
    # the device timeline: back to back, in launch order
    for prev, cur in zip(prof.events, prof.events[1:]):
        assert cur.device_start_us == pytest.approx(prev.device_start_us + prev.device_us)


def test_device_time_includes_each_launch_overhead():
    """Every launch pays the start-up and completion cost ([C7], config ``LaunchCosts``): the
    profile's device time is the blocks' time plus one overhead per launch, so fusing two
    launches into one saves one overhead."""
    x = torch.randn(4096)
    captured = []
    with asc.profile() as prof:
        observer = asc.profiler.observe(captured.append)
        try:
            ops.add(x, x)
            ops.add(x, x)
        finally:
            asc.profiler.unobserve(observer)
    platform = asc.get_platform(prof.events[0].platform)
    overhead_us = platform.launch.total_ns() / 1e3
    assert len(captured) == 2
    for event, report in zip(prof.events, captured):
        assert report.launch_cycles == round(platform.us_to_cycles(overhead_us))
        assert event.device_us == pytest.approx(report.time_us)
        assert event.device_us == pytest.approx(
            (report.kernel_cycles + report.launch_cycles) / platform.clock_mhz)
    assert prof.device_time_us >= 2 * overhead_us


def test_table():
    x = torch.randn(1000)
    with asc.profile() as prof:
        for _ in range(3):
            ops.leaky_relu(x, 0.1)
        kernels.add_kernel[1](x, x, torch.empty_like(x), 1000, 1008, 1024)   # a direct launch
    text = str(prof)
    assert text == prof.table()
    lines = text.splitlines()
    assert lines[1].split()[:4] == ["Op", "Kernel", "Calls", "Blocks"]
    row = next(line for line in lines if line.startswith("ascendc::leaky_relu"))
    assert row.split()[1:4] == ["leaky_relu_kernel", "3", "1"]
    assert any(line.startswith("-") and "add_kernel" in line for line in lines)  # no op: '-'
    assert "Device time total (simulated, Ascend910B2)" in lines[-1]
    assert "Launches: 4" in lines[-1]
    assert len(prof.table(row_limit=1).splitlines()) == len(lines) - 1
    assert prof.table(sort_by="name").splitlines()[3].startswith("-")
    with pytest.raises(ValueError, match="sort_by"):
        prof.table(sort_by="flops")
    assert repr(prof).startswith("<asc.profile: 4 launches")


def test_chrome_trace(tmp_path):
    x = torch.randn(3000)
    with asc.profile() as prof:
        ops.swiglu(x, x)
        ops.add(x, x)
    path = prof.export_chrome_trace(tmp_path / "sub" / "trace.json")
    data = json.load(open(path))
    spans = [e for e in data["traceEvents"] if e["ph"] == "X"]
    host = [e for e in spans if e["pid"] == "host"]
    device = [e for e in spans if e["pid"].startswith("NPU (simulated")]
    assert [e["name"] for e in host] == ["ascendc::swiglu / swiglu_kernel",
                                         "ascendc::add / add_kernel"]
    assert [e["name"] for e in device] == [e["name"] for e in host]
    assert device[1]["ts"] == pytest.approx(device[0]["ts"] + device[0]["dur"])
    assert host[1]["ts"] >= host[0]["ts"] + host[0]["dur"] * 0.99
    assert device[0]["args"]["kernel"] == "swiglu_kernel" and device[0]["args"]["block_dim"] == 1
    assert data["otherData"]["launches"] == 2


def test_chrome_trace_with_instructions(tmp_path):
    x = torch.randn(2, 3, 4, 4)
    with asc.profile(record_instructions=True) as prof:
        ops.sepia(x)
        ops.add(x, x)
    assert os.environ.get("ASCENDC_PY_TRACE") is None      # restored
    data = json.load(open(prof.export_chrome_trace(tmp_path / "t.json")))
    inst = [e for e in data["traceEvents"] if e.get("cat") == "instruction"]
    assert {"data_copy", "muls", "add"} <= {e["name"] for e in inst}
    kernels_seen = {e["args"]["kernel"] for e in inst}
    assert kernels_seen == {"color_matrix_kernel", "add_kernel"}
    start_add = next(e["ts"] for e in data["traceEvents"]
                     if e.get("cat") == "kernel" and e["args"]["kernel"] == "add_kernel")
    assert all(e["ts"] >= start_add for e in inst if e["args"]["kernel"] == "add_kernel")


def test_nested_and_threaded_profiles():
    import threading
    x = torch.randn(500)
    with asc.profile() as outer:
        ops.add(x, x)
        with asc.profile() as inner:
            threads = [threading.Thread(target=ops.leaky_relu, args=(x, 0.5)) for _ in range(3)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
    assert len(inner) == 3 and len(outer) == 4
    assert {e.op for e in inner.events} == {"ascendc::leaky_relu"}
    with pytest.raises(RuntimeError, match="already recording"):
        with outer:
            with outer:
                pass
    with asc.profile() as empty:
        pass
    assert len(empty) == 0 and "Launches: 0" in empty.table()


def test_asc_profile_does_not_import_torch():
    code = ("import sys, ascendc_py as asc; p = asc.profile(); "
            "from ascendc_py import torch_bridge; q = torch_bridge.profile(); "
            "assert type(p) is type(q) is asc.profile; "
            "print('torch' in sys.modules)")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
