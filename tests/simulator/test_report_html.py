"""How a Report looks: repr in a REPL, the notebook HTML, plot() without a path, the offline
HTML page of a launch and of a profile, and the timeline's lanes and the vector peak's dtype."""
from __future__ import annotations

import re
from pathlib import Path
from html.parser import HTMLParser

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.simulator.config import ASCEND910B2

N = 1024


@asc.kernel
def html_scale(x: asc.GlobalAddress, z: asc.GlobalAddress, tiles: int):
    off = asc.get_block_idx() * tiles * N
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x + off, tiles * N)
    zg.set_global_buffer(z + off, tiles * N)
    pipe = asc.TPipe()
    qi = asc.TQue(asc.TPosition.VECIN, 2)
    qo = asc.TQue(asc.TPosition.VECOUT, 2)
    pipe.init_buffer(qi, 2, N * 4)
    pipe.init_buffer(qo, 2, N * 4)
    for i in range(tiles):
        a = qi.alloc_tensor(x.dtype)
        asc.data_copy(a, xg[i * N:], N)
        qi.enque(a)
        a = qi.deque(x.dtype)
        b = qo.alloc_tensor(x.dtype)
        asc.muls(b, a, 2.0, N)
        qo.enque(b)
        qi.free_tensor(a)
        b = qo.deque(x.dtype)
        asc.data_copy(zg[i * N:], b, N)
        qo.free_tensor(b)


def launch(dtype=np.float32, blocks=3, tiles=2, **kw):
    x = np.arange(blocks * tiles * N).astype(dtype)
    z = np.zeros_like(x)
    r = html_scale[blocks](x, z, tiles, **kw)
    np.testing.assert_array_equal(z, x * 2)
    return r


@pytest.fixture(scope="module")
def traced():
    return launch(trace=True)


class _Checker(HTMLParser):
    """Collects tags and checks that every non-void element closes in order."""

    VOID = {"img", "meta", "br", "hr", "link", "input"}

    def __init__(self):
        super().__init__()
        self.stack, self.tags, self.errors, self.urls = [], [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.urls += [v for k, v in attrs if k in ("src", "href") and v]
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack.pop() != tag:
            self.errors.append(tag)


def parse(text: str) -> _Checker:
    c = _Checker()
    c.feed(text)
    c.close()
    assert not c.errors and not c.stack, (c.errors, c.stack)
    return c


def test_repr_is_the_summary(traced):
    text = repr(traced)
    assert "Report(kernel=" not in text and len(text) < 400
    assert text.startswith(f"<Report html_scale[3] on Ascend910B2: {traced.cycles:,} cycles")
    assert f"bottleneck {traced.bottleneck}" in text and "MTE2" in text
    assert repr([traced]).count("<Report") == 1


def test_notebook_html(traced):
    html = traced._repr_html_()
    c = parse(html)
    assert "html_scale[3]" in html
    # one busy bar per pipe that worked; the bottleneck's is marked
    assert html.count("class='track'") == sum(1 for v in traced.pipe_busy.values() if v)
    assert "class='bar hot'" in html
    # the critical core's timeline, inline
    assert len(re.findall(r"src='data:image/png;base64,", html)) == 1
    assert c.tags.count("details") >= 3 and "instructions per op" in html
    assert all(u.startswith("data:") for u in c.urls)


def test_notebook_html_without_trace_says_how(monkeypatch):
    monkeypatch.delenv("ASCENDC_PY_TRACE", raising=False)
    html = launch()._repr_html_()
    parse(html)
    assert "<img" not in html and "trace=True" in html


def test_plot_without_path_returns_a_figure_with_only_used_lanes(traced):
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure
    fig = traced.plot()
    assert isinstance(fig, Figure)
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    # a vector kernel: no empty scalar lane, no empty cube lanes
    assert labels == ["V", "MTE2", "MTE3"]


def test_plot_in_ipython_displays_inline(traced):
    pytest.importorskip("matplotlib")
    IPython = pytest.importorskip("IPython")
    from IPython.core.interactiveshell import InteractiveShell
    shell = InteractiveShell.instance()
    shell.user_ns["r"] = traced
    shell.run_cell("fig = r.plot()", store_history=False)
    data, _ = shell.display_formatter.format(shell.user_ns["fig"])
    assert data["image/png"][:4] == b"\x89PNG", IPython.__version__


def test_float32_kernel_reports_the_float32_peak():
    """A float32 kernel's vector peak is half the float16 one (256 B per repeat), and says so
    (it read "peak (fp16)" whatever the dtype)."""
    f16 = launch(np.float16)
    f32 = launch(np.float32)
    full = ASCEND910B2.peak_vector_tops_f16 * 1e12 * 3 / ASCEND910B2.aiv_cores
    assert f16.peak_flops_per_s == pytest.approx(full)
    assert f32.peak_flops_per_s == pytest.approx(full / 2)
    row = dict(f32.rows())["vector FLOP/s"]
    assert row.endswith("peak (float32)") and "fp16" not in row
    assert dict(f16.rows())["vector FLOP/s"].endswith("peak (float16)")


def test_save_html_is_self_contained(traced, tmp_path):
    pytest.importorskip("matplotlib")
    path = traced.save_html(tmp_path / "sub" / "report.html")
    text = open(path, encoding="utf-8").read()
    assert text.startswith("<!DOCTYPE html>")
    c = parse(text)
    assert "script" not in c.tags and all(u.startswith("data:") for u in c.urls)
    assert "http://" not in text and "https://" not in text
    assert "3 cores" in text or len(re.findall("data:image/png", text)) == 1
    # the per-op table: calls over all blocks
    for op in ("data_copy", "muls", "enque"):
        assert re.search(rf"<td>{op}</td><td>[\w/]+</td><td class='n'>"
                         rf"{traced.instructions[op]:,}</td>", text), op


def test_profile_save_html(tmp_path):
    pytest.importorskip("matplotlib")
    with asc.profile(record_instructions=True) as prof:
        launch(blocks=1)
        launch(blocks=2)
    path = prof.save_html(tmp_path / "prof.html")
    text = open(path, encoding="utf-8").read()
    c = parse(text)
    assert all(u.startswith("data:") for u in c.urls)
    assert "2 launches" in text and text.count("data:image/png") == 2
    assert "html_scale[2] report" in text
    parse(prof._repr_html_())


def test_op_table_pipe_is_where_the_op_ran(traced):
    """Regression: the per-op table called data_copy an S (scalar) op, since the registry gives a
    DMA op no pipe, and showed 0 traced cycles for an untraced launch."""
    from ascendc_py.simulator.report_html import op_rows
    rows = {name: (pipe, cycles) for name, pipe, _, cycles in op_rows(traced)}
    assert rows["data_copy"][0] == "MTE2/MTE3" and rows["data_copy"][1] > 0
    assert rows["muls"][0] == "V"
    plain = {name: (pipe, cycles) for name, pipe, _, cycles in op_rows(launch())}
    assert plain["data_copy"] == ("MTE (by path)", None)
    assert plain["enque"] == ("S", None)
    assert "<td class='n'>—</td>" in launch()._repr_html_()


def test_plot_of_an_untraced_launch_draws_pipe_busy(tmp_path):
    """Regression: report.plot() of a launch without trace=True raised a bare ValueError from
    inside the package; it draws the pipe-busy bars and says how to record a timeline."""
    pytest.importorskip("matplotlib")
    r = launch()
    fig = r.plot()
    ax = fig.axes[0]
    assert "trace=True" in ax.get_title()
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        name for name in r.pipe_busy if r.pipe_busy[name]]
    path = r.plot(tmp_path / "busy.png")
    assert Path(path).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
