"""Kernels defined in IPython cells: under cell magics, and errors that name cells.

A cell magic compiles the cell's body under a name of its own ('<timed exec>' for %%time,
'<magic-timeit>' for %%timeit) that linecache does not know; the kernel's source is found in
the session's cells, matched by its code object. Errors name the cell as IPython does
(``Cell In[N], line L``, the magic lines counted), and IPython's traceback shows no frame of
ascendc_py. The shell is a real ``InteractiveShell`` with an in-memory history.
"""
from __future__ import annotations

import os
import sys

import pytest

pytest.importorskip("IPython", reason="IPython is an optional test dependency (the test extra)")

from IPython.core.interactiveshell import InteractiveShell  # noqa: E402
from IPython.utils.capture import capture_output  # noqa: E402
from traitlets.config import Config  # noqa: E402

from ascendc_py.compiler.errors import PACKAGE_DIR, KernelSyntaxError  # noqa: E402

KERNEL = '''\
@asc.kernel
def fill(x: asc.GlobalAddress, n: int):
    xg = asc.GlobalTensor(); xg.set_global_buffer(x, n)
    for i in range(n):
        xg.set_value(i, i * 3)

out = np.zeros(8, np.int32)
fill[1](out, 8)
print("filled", out.tolist())
print("defined at", fill.def_loc())
'''

BAD_NAME = '''\
@asc.kernel
def bad(x: asc.GlobalAddress, n: int):
    xg = asc.GlobalTensor(); xg.set_global_buffer(x, n)
    xg.set_value(0, not_defined_anywhere)

bad[1](np.zeros(8, np.int32), 8)
'''
BAD_NAME_LINE = 4

OUT_OF_BOUNDS = '''\
@asc.kernel
def overrun(x: asc.GlobalAddress, n: int):
    xg = asc.GlobalTensor(); xg.set_global_buffer(x, n)
    xg.set_value(n + 100, 1)

overrun[1](np.zeros(8, np.int32), 8)
'''
OUT_OF_BOUNDS_LINE = 4


@pytest.fixture(scope="module")
def shell(tmp_path_factory):
    """An InteractiveShell with its profile in a temporary directory and history in memory;
    the interpreter's hooks and __main__ that it replaces are put back afterwards."""
    saved = (sys.displayhook, sys.excepthook, sys.modules.get("__main__"))
    saved_dir = os.environ.get("IPYTHONDIR")
    os.environ["IPYTHONDIR"] = str(tmp_path_factory.mktemp("ipython"))
    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    sh = InteractiveShell.instance(config=config)
    sh.run_line_magic("colors", "nocolor")
    sh.run_cell("import numpy as np\nimport ascendc_py as asc", store_history=True)
    try:
        yield sh
    finally:
        InteractiveShell.clear_instance()
        sys.displayhook, sys.excepthook = saved[0], saved[1]
        if saved[2] is not None:
            sys.modules["__main__"] = saved[2]
        if saved_dir is None:
            os.environ.pop("IPYTHONDIR", None)
        else:
            os.environ["IPYTHONDIR"] = saved_dir


def run(shell, text: str):
    """Run ``text`` as the next notebook cell; (result, what it printed)."""
    with capture_output() as captured:
        result = shell.run_cell(text, store_history=True)
    return result, captured.stdout


@pytest.mark.parametrize("magic,label", [
    ("", "Cell In[{n}], line 1"),
    ("%%time\n", "Cell In[{n}], line 2"),
    ("%%timeit -n1 -r1\n", "Cell In[{n}], line 2"),
    # %%capture runs its body as a cell of its own, which IPython numbers n + 1 (its traceback
    # frames in that body say so too); a magic under it is found in the cell the user sees
    ("%%capture cap\n", "Cell In[{m}], line 1"),
    ("%%capture cap\n%%time\n", "Cell In[{n}], line 3"),
], ids=["plain", "time", "timeit", "capture", "capture-time"])
def test_kernel_defined_and_launched_in_a_cell(shell, magic, label):
    result, printed = run(shell, magic + KERNEL)
    assert result.error_in_exec is None, printed
    if "capture" in magic:
        printed = shell.user_ns["cap"].stdout
    assert f"filled {[i * 3 for i in range(8)]}" in printed, printed
    # where the kernel is defined, named as IPython names the cell (magic lines counted)
    n = result.execution_count
    assert f"defined at {label.format(n=n, m=n + 1)}, column 1\n" in printed, printed


@pytest.mark.parametrize("magic", ["", "%%time\n", "%%timeit -n1 -r1\n", "%%time\n\n"],
                         ids=["plain", "time", "timeit", "time-blank-line"])
def test_compile_error_names_the_cell_and_line(shell, magic):
    result, printed = run(shell, magic + BAD_NAME)
    err = result.error_in_exec
    assert type(err).__name__ == "UndefinedNameError", printed
    where = f"Cell In[{result.execution_count}], line {BAD_NAME_LINE + magic.count(chr(10))}"
    assert str(err).startswith(where), str(err)
    assert "xg.set_value(0, not_defined_anywhere)" in str(err)     # the excerpt, from the cell
    assert where in printed


@pytest.mark.parametrize("text,line", [(BAD_NAME, BAD_NAME_LINE),
                                       (OUT_OF_BOUNDS, OUT_OF_BOUNDS_LINE)],
                         ids=["compile-error", "run-time-fault"])
@pytest.mark.parametrize("magic", ["", "%%time\n"], ids=["plain", "time"])
def test_ipython_traceback_shows_no_frame_of_the_package(shell, magic, text, line):
    result, printed = run(shell, magic + text)
    assert result.error_in_exec is not None
    assert "Traceback" in printed
    assert PACKAGE_DIR not in printed, printed
    assert "user_entry_point" not in printed and "errors.py" not in printed, printed
    n = result.execution_count
    assert f"{type(result.error_in_exec).__name__}: Cell In[{n}], line " \
           f"{line + magic.count(chr(10))}" in printed, printed


def test_helper_redefined_in_a_later_cell_is_used(shell):
    helper = '''%%time
@asc.kernel
def put(xg, n: int):
    for i in range(n):
        xg.set_value(i, VALUE)
'''
    caller = '''
@asc.kernel
def use_put(x: asc.GlobalAddress, n: int):
    xg = asc.GlobalTensor(); xg.set_global_buffer(x, n)
    put(xg, n)

res = np.zeros(4, np.int32)
use_put[1](res, 4)
'''
    for cell in (helper.replace("VALUE", "7"), caller):
        result, printed = run(shell, cell)
        assert result.error_in_exec is None, printed
    assert shell.user_ns["res"].tolist() == [7] * 4
    # the helper's cell, edited and re-run under the magic: the next launch uses the new text,
    # not the older cell that defines a function of the same name at the same line
    result, printed = run(shell, helper.replace("VALUE", "9 + i"))
    assert result.error_in_exec is None, printed
    result, printed = run(shell, "res = np.zeros(4, np.int32)\nuse_put[1](res, 4)\n")
    assert result.error_in_exec is None, printed
    assert shell.user_ns["res"].tolist() == [9, 10, 11, 12]
    # an error in the helper names its newest cell (line 5: the magic line counted)
    result, printed = run(shell, helper.replace("VALUE", "undefined_value"))
    n_helper = result.execution_count
    result, printed = run(shell, "use_put[1](np.zeros(4, np.int32), 4)\n")
    assert f"Cell In[{n_helper}], line 5" in str(result.error_in_exec), printed


def test_text_that_does_not_compile_to_the_code_is_never_taken(shell):
    # a %%time cell defines 'twin' at line 2 of its body ...
    result, printed = run(shell, "%%time\n" + KERNEL.replace("fill", "twin"))
    assert result.error_in_exec is None, printed
    # ... and a function of the same name, at the same line of a text no cell holds, is not
    # compiled from that cell's text
    other = KERNEL.replace("fill", "twin").replace("i * 3", "i * 4")
    result, printed = run(shell, f"%%time\nexec({other!r})\n")
    err = result.error_in_exec
    assert isinstance(err, KernelSyntaxError), printed
    assert "cannot read the source of kernel 'twin'" in str(err)


def test_same_kernel_in_two_magic_cells_names_each_cell(shell):
    """Code compiled under '<timed exec>' is the same in two cells with the same text: the
    compiled entry of the first cell must not name that cell in the second's fault."""
    for _ in range(2):
        result, printed = run(shell, "%%time\n" + OUT_OF_BOUNDS)
        n = result.execution_count
        assert str(result.error_in_exec).startswith(
            f"Cell In[{n}], line {OUT_OF_BOUNDS_LINE + 1}"), printed
