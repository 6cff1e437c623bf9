"""A notebook run by a real Jupyter kernel (nbclient + ipykernel), as a user's notebook runs:
a kernel defined in one cell and launched in another, the report displayed as rich HTML, a
helper redefined in a later cell taking effect, a compile error naming the cell and line with
no package frame, and ``report.plot()`` displaying a figure inline. Skips when nbclient,
nbformat or ipykernel is not installed (they come with the ``test`` extra)."""
from __future__ import annotations

import os
import pathlib

import pytest

nbformat = pytest.importorskip("nbformat", reason="pip install nbformat nbclient ipykernel")
nbclient = pytest.importorskip("nbclient", reason="pip install nbformat nbclient ipykernel")
pytest.importorskip("ipykernel", reason="pip install nbformat nbclient ipykernel")

REPO = pathlib.Path(__file__).resolve().parents[2]

CELLS = [
    """import numpy as np
import ascendc_py as asc

@asc.kernel
def scale(dst, src, n: int):
    asc.muls(dst, src, 2.0, n)""",
    """@asc.kernel
def nb_scale(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int):
    xg = asc.GlobalTensor(); zg = asc.GlobalTensor()
    xg.set_global_buffer(x, n); zg.set_global_buffer(z, n)
    pipe = asc.TPipe(); buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, 2 * 1024 * 4)
    t = buf.get(x.dtype)
    asc.data_copy(t, xg, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    scale(t[1024:], t, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(zg, t[1024:], n)""",
    """x = np.arange(1024, dtype=np.float32); z = np.zeros_like(x)
report = nb_scale[1](x, z, 1024)
assert (z == 2 * x).all()
report""",
    """@asc.kernel
def scale(dst, src, n: int):
    asc.muls(dst, src, 3.0, n)
report = nb_scale[1](x, z, 1024)
print("tripled:", bool((z == 3 * x).all()))""",
    """@asc.kernel
def nb_broken(x: asc.GlobalAddress):
    asc.no_such_op(x)
nb_broken[1](x)""",
    """fig = report.plot()
fig""",
]


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in CELLS]
    env_cache = tmp_path_factory.mktemp("cache")
    old = {k: os.environ.get(k) for k in ("ASCENDC_PY_CACHE_DIR", "PYTHONPATH")}
    os.environ["ASCENDC_PY_CACHE_DIR"] = str(env_cache)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), old["PYTHONPATH"]]))
    try:
        client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                         allow_errors=True,
                                         resources={"metadata": {"path": str(REPO)}})
        client.execute()
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return nb


def outputs(nb, index):
    return nb.cells[index].outputs


def test_report_displays_as_rich_html(executed):
    (out,) = [o for o in outputs(executed, 2) if o.output_type == "execute_result"]
    html = out.data["text/html"]
    assert "nb_scale[1]" in html and "bottleneck" in html and "<table" in html
    assert "Report(" not in out.data["text/plain"]          # the summary, not a dataclass dump


def test_helper_redefined_in_a_later_cell_takes_effect(executed):
    text = "".join(o.get("text", "") for o in outputs(executed, 3))
    assert "tripled: True" in text


def test_compile_error_names_the_cell_line_and_no_package_frame(executed):
    (err,) = [o for o in outputs(executed, 4) if o.output_type == "error"]
    trace = "\n".join(err.traceback)
    assert "no_such_op" in err.evalue and "line 3" in trace
    assert "ascendc_py/compiler" not in trace and "site-packages" not in trace


def test_plot_displays_a_figure_inline(executed):
    kinds = [k for o in outputs(executed, 5) for k in o.get("data", {})]
    assert "image/png" in kinds
