"""Notebook cells for the tests of stale code and of launches after a helper changed
(tests/jit/test_stale_code.py, tests/simulator/test_fast_launch.py): a helper kernel, a
kernel calling it, and running a cell as a notebook does."""
from __future__ import annotations

import linecache

HELPER_CELL = '''
@asc.kernel
def scale(og, n: int):
    for i in range(n):
        og.set_value(i, i * 2)
'''
CALLER_CELL = '''
@asc.kernel
def caller(out: asc.GlobalAddress):
    og = asc.GlobalTensor()
    og.set_global_buffer(out, 4)
    scale(og, 4)
'''


def run_cell(ns: dict, text: str, name: str) -> None:
    """Run ``text`` as a notebook does: registered in linecache under a cell name, executed in
    the notebook's one namespace."""
    linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    exec(compile(text, name, "exec"), ns)  # noqa: S102 - the test's own notebook cells
