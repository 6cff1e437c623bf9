"""Read-only GM arguments (issue 12 item 3): a numpy array with writeable=False, one over a
``bytes`` object and a read-only np.memmap may be read by a kernel; a kernel that writes one is
refused at launch when an instruction names it at compile time (ReadOnlyArgumentError at that
instruction's line), and faults at the instruction, before writing, when the written argument is
chosen at run time (ReadOnlyWriteError). Nothing is ever written to such an argument."""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ascendc_py as asc

import kernels_access as K

N = K.N
HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]


def read_only(values) -> np.ndarray:
    a = np.array(values)
    a.flags.writeable = False
    return a


def over_bytes(n: int, dtype=np.float32) -> np.ndarray:
    return np.frombuffer(bytes(n * np.dtype(dtype).itemsize), dtype)


def line_of(kernel, marker: str) -> int:
    """The source line of ``kernel`` that ends with ``# <marker>``."""
    import inspect
    lines, first = inspect.getsourcelines(kernel.fn)
    return next(first + i for i, text in enumerate(lines) if text.rstrip().endswith(marker))


def compiled(kernel):
    return next(iter(kernel._compiled.values()))[0]


# ----------------------------------------------------------------------------- the write set
def test_write_sets_name_the_written_arguments():
    x = np.arange(2 * N, dtype=np.float32)
    K.copy_out[2](x, np.zeros_like(x))
    w = compiled(K.copy_out).gm_writes
    assert [(a, op) for a, op, _ in w.static] == [(1, "data_copy")]
    assert not w.checks_at_run_time
    assert w.static[0][2].line == line_of(K.copy_out, "# the write")
    K.pick_out[1](x, np.zeros_like(x), np.zeros_like(x), 0)
    w = compiled(K.pick_out).gm_writes
    assert w.static == () and w.run_time == (1, 2) and not w.untraced


@pytest.mark.parametrize("kernel, op", [(K.set_out, "set_value"), (K.pad_out, "data_copy_pad")])
def test_every_kind_of_gm_write_is_in_the_write_set(kernel, op):
    x = np.arange(N, dtype=np.float32)
    y = np.zeros(N, np.float32)
    kernel[1](x, y)
    assert [(a, o) for a, o, _ in compiled(kernel).gm_writes.static] == [(1, op)]


# ----------------------------------------------------------------------------- reading is fine
@pytest.mark.parametrize("make", [read_only, lambda v: np.frombuffer(
    np.asarray(v, np.float32).tobytes(), np.float32)], ids=["writeable=False", "bytes"])
def test_read_only_inputs_are_read(make):
    x = make(np.arange(2 * N, dtype=np.float32))
    y = np.zeros(2 * N, np.float32)
    K.copy_out[2](x, y)
    np.testing.assert_array_equal(y, np.arange(2 * N, dtype=np.float32))


def test_read_only_memmap_input_is_read(tmp_path):
    path = tmp_path / "x.bin"
    np.arange(N, dtype=np.float32).tofile(path)
    x = np.memmap(path, np.float32, "r")
    y = np.zeros(N, np.float32)
    K.copy_out[1](x, y)
    np.testing.assert_array_equal(y, np.arange(N, dtype=np.float32))


# ----------------------------------------------------------------------------- refused at launch
@pytest.mark.parametrize("kernel", [K.copy_out, K.set_out, K.pad_out])
def test_writing_a_read_only_argument_is_refused_at_launch(kernel):
    x = np.arange(N, dtype=np.float32)
    y = read_only(np.full(N, 5.0, np.float32))
    with pytest.raises(asc.ReadOnlyArgumentError) as info:
        kernel[1](x, y)
    e = info.value
    assert "argument 'y' is a numpy array with writeable=False" in e.message
    assert "the kernel writes it" in e.message and "nothing was run" in e.message
    assert e.loc.line == line_of(kernel, "# the write")
    assert "np.array(y)" in e.hint
    assert (y == 5.0).all()


def test_a_bytes_object_is_never_written():
    data = bytes(N * 4)
    y = np.frombuffer(data, np.float32)
    with pytest.raises(asc.ReadOnlyArgumentError, match="immutable bytes object"):
        K.copy_out[1](np.ones(N, np.float32), y)
    assert data == bytes(N * 4)


def test_cube_fixpipe_into_a_read_only_argument_is_refused():
    z = read_only(np.zeros(256, np.float32))
    with pytest.raises(asc.ReadOnlyArgumentError) as info:
        K.fixpipe_out[1](z)
    assert "(fixpipe)" in info.value.message
    assert info.value.loc.line == line_of(K.fixpipe_out, "# the write")


@pytest.mark.parametrize("mix", [False, True], ids=["cube", "mix"])
def test_matmul_into_a_read_only_argument_is_refused(mix):
    sys.path.insert(0, str(HERE.parent / "adv"))
    try:
        import kernels_matmul as M
    finally:
        sys.path.remove(str(HERE.parent / "adv"))
    a = read_only(np.ones((32, 32), np.float16))
    b = read_only(np.ones((32, 32), np.float16))
    tiling = M.make_tiling(32, 32, 32, dim=1)
    c = read_only(np.zeros((32, 32), np.float32))
    bias = np.zeros(32, np.float32)
    kernel = M.mm_all_mix if mix else M.mm_all
    extra = (False,) if mix else (False, False, False)
    with pytest.raises(asc.ReadOnlyArgumentError, match="argument 'c' .*matmul_iterate_all"):
        kernel[1](a, b, c, bias, tiling, *extra)
    assert (c == 0).all()
    c = np.zeros((32, 32), np.float32)
    kernel[1](a, b, c, bias, tiling, *extra)       # read-only A and B are read
    assert (c == 32).all()


# ----------------------------------------------------------------------------- run-time choice
def test_a_write_chosen_at_run_time_faults_before_writing():
    x = read_only(np.arange(4 * N, dtype=np.float32))
    y = np.zeros(4 * N, np.float32)
    data = bytes(4 * N * 4)
    z = np.frombuffer(data, np.float32)
    K.pick_out[4](x, y, z, 0)                                  # writes y: fine
    expect = np.arange(4 * N, dtype=np.float32)
    expect[3::N] = expect[::N]
    np.testing.assert_array_equal(y, expect)
    with pytest.raises(asc.ReadOnlyWriteError) as info:
        K.pick_out[4](x, y, z, 1)
    e = info.value
    assert "data_copy would write global argument 'z', which was passed read-only" in e.message
    assert "stopped before writing" in e.message
    assert e.loc.line == line_of(K.pick_out, "# the chosen write")
    assert data == bytes(4 * N * 4)


def test_read_only_memmap_is_never_written_nor_a_crash(tmp_path):
    """The issue's SIGSEGV (and lenient mode's copy-back of staged arguments into a read-only
    mapping): run in a fresh interpreter, so a crash fails only this test."""
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(HERE)!r})
        import numpy as np
        import ascendc_py as asc
        import kernels_access as K
        path = {str(tmp_path / "y.bin")!r}
        np.zeros(K.N, np.float32).tofile(path)
        y = np.memmap(path, np.float32, "r")
        try:
            K.copy_out[1](np.ones(K.N, np.float32), y)
        except asc.ReadOnlyArgumentError as e:
            print("refused:", e.message)
        z = np.memmap(path, np.float32, "r")
        try:
            K.pick_out[1](np.ones(K.N, np.float32), np.zeros(K.N, np.float32), z, 1)
        except asc.ReadOnlyWriteError as e:
            print("faulted:", e.message)
        out = np.zeros(K.N, np.float32)
        K.copy_out[1](np.memmap(path, np.float32, "r"), out, lenient=True)  # no copy-back
        print("lenient read:", bool((out == 0).all()))
        print("unchanged:", bool((np.fromfile(path, np.float32) == 0).all()))
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=300, cwd=REPO, env=dict(os.environ))
    assert run.returncode == 0, run.stderr[-2000:]
    assert "refused: copy_out: argument 'y' is a read-only np.memmap" in run.stdout
    assert "faulted: data_copy would write global argument 'z'" in run.stdout
    assert "lenient read: True" in run.stdout
    assert "unchanged: True" in run.stdout


def test_the_analysis_follows_variables_through_cycles():
    """A variable assigned from another in a loop (a GlobalTensor handed around) keeps every
    argument either can hold: the least fixed point, not the first value seen."""
    from ascendc_py.compiler import gm_writes, ir
    from ascendc_py.dsl.types import int32
    v, w = ir.Var("v", int32), ir.Var("w", int32)
    loc = None
    body = (ir.Assign(v, ir.Load(w), loc), ir.Assign(v, ir.Const(2, int32), loc),
            ir.Assign(w, ir.Load(v), loc), ir.Assign(w, ir.Const(3, int32), loc))
    fn = ir.Function("f", body, loc, (("a", None),) * 4, ())
    t = gm_writes.ArgumentTargets(fn)
    assert t.of(ir.Load(w)) == {2, 3} and t.of(ir.Load(v)) == {2, 3}
    assert t.known(ir.Load(w)) is None and t.known(ir.Const(1, int32)) == 1
    assert t.of(ir.Load(ir.Var("never", int32))) is None


@asc.kernel
def set_on_one_path(x: asc.GlobalAddress, y: asc.GlobalAddress, flag: int):
    g = asc.GlobalTensor()
    if flag > 0:
        g.set_global_buffer(y, 8)
    g.set_value(0, 5.0)


def test_global_tensor_set_only_on_a_path_not_taken_faults_and_writes_nothing():
    """Before: the GlobalTensor's argument index was an undefined variable (here it wrote
    'y' anyway); now it starts unset and an access before set_global_buffer ran faults."""
    x, y = np.zeros(8, np.float32), np.zeros(8, np.float32)
    set_on_one_path[1](x, y, 1)
    assert y[0] == 5.0
    y[:] = 0
    with pytest.raises(asc.GlobalTensorUnsetError, match="set_global_buffer has not run"):
        set_on_one_path[1](x, y, 0)
    assert not x.any() and not y.any()
