"""A fused run leaves out the queue-tensor checks other instructions of the run make
(``fusion.redundant_uses``), and nothing a user can see changes: every error is raised by the
same instruction with the same message (the sites it names included) as with fusion off,
where every instruction checks every operand."""
from __future__ import annotations

import inspect
import re

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler import jit
from ascendc_py.compiler.codegen import fusion

N = 64


@asc.kernel
def queue_run(x: asc.GlobalAddress, z: asc.GlobalAddress, CASE: asc.ConstExpr[int]):
    """One fused run over VECIN tensor a and VECOUT tensor o. CASE 1: a's copy-in is not
    handed over; 2: a is freed before the run; 3: o is copied out with no hand-over."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, N)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, N)
    pipe = asc.TPipe()
    qi = asc.TQue(asc.TPosition.VECIN, 1)
    qo = asc.TQue(asc.TPosition.VECOUT, 1)
    tb = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(qi, 1, N * 4)
    pipe.init_buffer(qo, 1, N * 4)
    pipe.init_buffer(tb, N * 4)
    t = tb.get(asc.float32)
    a = qi.alloc_tensor(asc.float32)
    asc.data_copy(a, xg, N)
    if CASE != 1:
        qi.enque(a)
        a = qi.deque(asc.float32)
    o = qo.alloc_tensor(asc.float32)
    if CASE == 2:
        qi.free_tensor(a)
    asc.duplicate(t, 1.5, N)
    asc.muls(o, t, 2.0, N)      # o-first
    asc.adds(a, a, 1.0, N)      # a-first-read
    asc.muls(a, t, 3.0, N)      # a-middle-write
    asc.add(o, o, a, N)
    asc.muls(a, o, 0.5, N)      # a-last-write
    asc.add(o, o, a, N)
    asc.muls(o, o, 2.0, N)      # o-last-write
    if CASE == 3:
        asc.data_copy(zg, o, N)  # copy-out-without-hand-over
    qo.enque(o)
    o = qo.deque(asc.float32)
    asc.data_copy(zg, o, N)
    qo.free_tensor(o)
    if CASE != 2:
        qi.free_tensor(a)


@asc.kernel
def writes_before_the_first_read(x: asc.GlobalAddress, z: asc.GlobalAddress):
    """a's copy-in is not handed over; the run writes a twice before it first reads it, so
    the error names the second write's site (the one the read sees)."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, N)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, N)
    pipe = asc.TPipe()
    qi = asc.TQue(asc.TPosition.VECIN, 1)
    tb = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(qi, 1, N * 4)
    pipe.init_buffer(tb, N * 4)
    t = tb.get(asc.float32)
    a = qi.alloc_tensor(asc.float32)
    asc.data_copy(a, xg, N)
    asc.duplicate(t, 1.5, N)
    asc.muls(a, t, 2.0, N)      # first-write
    asc.muls(a, t, 3.0, N)      # second-write
    asc.add(t, t, a, N)         # read
    asc.muls(a, t, 4.0, N)      # third-write
    asc.data_copy(zg, t, N)
    qi.free_tensor(a)


def line(kernel, marker: str) -> int:
    lines, first = inspect.getsourcelines(kernel.fn)
    return first + next(i for i, t in enumerate(lines) if t.rstrip().endswith(f"# {marker}"))


def launch(kernel, fused: bool, *const):
    x = np.arange(N, dtype=np.float32)
    z = np.zeros(N, np.float32)
    fusion.set_enabled(fused)
    try:
        kernel[1](x, z, *const)
    except asc.KernelError as e:
        return type(e), str(e)
    finally:
        fusion.set_enabled(True)
    return None, z


def test_a_run_that_checks_out_computes_what_the_unfused_one_does():
    (kind, z), (kind_plain, plain) = launch(queue_run, True, 0), launch(queue_run, False, 0)
    assert kind is None and kind_plain is None
    np.testing.assert_array_equal(z, plain)


@pytest.mark.parametrize("case,error,marker,named", [
    (1, asc.HandoverError, "a-first-read", "data_copy at line"),
    (2, asc.UseAfterFreeError, "a-first-read", "after free_tensor at line"),
    (3, asc.HandoverError, "copy-out-without-hand-over", "muls at line {o-last-write}"),
])
def test_errors_are_the_unfused_errors(case, error, marker, named):
    fused, plain = launch(queue_run, True, case), launch(queue_run, False, case)
    assert fused == plain
    kind, text = fused
    assert kind is error or issubclass(kind, error), text
    assert f":{line(queue_run, marker)}:" in text.splitlines()[0], text
    named = named.replace("{o-last-write}", str(line(queue_run, "o-last-write")))
    assert named in text, text


def test_the_first_read_names_the_write_it_sees():
    fused = launch(writes_before_the_first_read, True)
    assert fused == launch(writes_before_the_first_read, False)
    kind, text = fused
    assert issubclass(kind, asc.HandoverError), text
    assert f":{line(writes_before_the_first_read, 'read')}:" in text.splitlines()[0], text
    assert f"muls at line {line(writes_before_the_first_read, 'second-write')}" in text, text


def _queue_checks(text: str) -> int:
    """Operand checks in the kernel's IR: one per tensor_use call, three per tensor_uses call
    (an unused slot passes tag -1)."""
    single = len(re.findall(r"call i64 @\"?asc_rt_tensor_use\"?\(", text))
    grouped = re.findall(r"call i64 @\"?asc_rt_tensor_uses\"?\(([^)]*)\)", text)
    return single + sum(3 - args.count("i64 -1,") for args in grouped)


def test_the_run_checks_each_queue_tensor_use_once():
    """19 queue-tensor uses are checked unfused (those of the TBuf tensor t too: its tag is
    only known to be -1, untracked, at run time); fused, the run leaves out 10 of its uses:
    the reads of t, a and o after their first, and the writes of a and o but their first use
    and last write (no read sees those writes' sites: each comes after the first read)."""
    specs = queue_run.bind((np.zeros(N, np.float32), np.zeros(N, np.float32), 0), {})[0]
    fused = jit.llvm_ir_text(queue_run, specs)
    fusion.set_enabled(False)
    try:
        plain = jit.llvm_ir_text(queue_run, specs)
    finally:
        fusion.set_enabled(True)
    assert re.search(r"asc_fused_", fused) and "asc_fused_" not in plain
    assert (_queue_checks(plain), _queue_checks(fused)) == (19, 9)
