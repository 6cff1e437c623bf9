"""The insert_sync pass on the kernel IR: what it inserts where, and that kernels which
synchronise themselves get nothing."""
from __future__ import annotations

import contextlib
import importlib
import io
from pathlib import Path

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler import insert_sync, ir
from ascendc_py.compiler.sema.analyzer import analyze

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def _inserted(kernel, *args):
    specs, _, _ = kernel.bind(args, {})
    fn = insert_sync.run(analyze(kernel, specs), kernel).function
    out = []

    def walk(stmts, depth):
        for s in stmts:
            if isinstance(s, ir.Intrinsic) and s.attr(insert_sync.ATTR):
                out.append((s.op, s.attr(insert_sync.ATTR), int(s.args[1].value)
                            if s.op != "pipe_barrier" else None, depth))
            for child in ("then", "orelse", "body", "pre"):
                if getattr(s, child, None):
                    walk(getattr(s, child), depth + 1)
    walk(fn.body, 0)
    ir.verify(fn)
    return out


@asc.kernel(auto_sync=True)
def war_in_loop(x: asc.GlobalAddress, z: asc.GlobalAddress):
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    zg.set_global_buffer(z)
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, 64)
    b = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 256, 64)
    asc.set_flag(asc.HardEvent.V_MTE2, 7)     # the kernel's own flag names id 7
    asc.wait_flag(asc.HardEvent.V_MTE2, 7)
    for i in range(4):
        asc.data_copy(a, xg[i * 64:], 64)      # next iteration: after V read a (WAR)
        asc.muls(b, a, 2.0, 64)                # next iteration: after MTE3 read b (WAR)
        asc.data_copy(zg[i * 64:], b, 64)


@asc.kernel(auto_sync=True)
def branch_join(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int):
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    zg.set_global_buffer(z)
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, 64)
    asc.data_copy(a, xg, 64)
    if n > 0:
        asc.set_flag(asc.HardEvent.MTE2_V, 0)
        asc.wait_flag(asc.HardEvent.MTE2_V, 0)
        asc.muls(a, a, 2.0, 64)
    asc.adds(a, a, 1.0, 64)                   # ordered on one path only: a flag here
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, a, 64)                  # ordered on every path: nothing


def test_loop_carried_write_after_read_and_a_free_event_id():
    got = _inserted(war_in_loop, np.zeros(256, np.float32), np.zeros(256, np.float32))
    pairs = [(op, pair, eid) for op, pair, eid, _ in got if op == "set_flag"]
    # V_MTE2's id 7 is the kernel's own: the pass takes 6
    # and the next iteration's muls writes b after MTE3 read it (WAR): MTE3->V
    assert pairs == [("set_flag", "V->MTE2", 6), ("set_flag", "MTE2->V", 7),
                     ("set_flag", "MTE3->V", 7), ("set_flag", "V->MTE3", 7)]
    assert all(depth == 2 for *_, depth in got)          # inside the loop (kernel Block, for)


def test_branches_join():
    got = _inserted(branch_join, np.zeros(64, np.float32), np.zeros(64, np.float32), 1)
    assert [(op, pair) for op, pair, _, _ in got if op == "set_flag"] == [("set_flag",
                                                                           "MTE2->V")]


def test_the_hand_written_flags_pass_through_unchanged():
    specs, _, _ = war_in_loop.bind((np.zeros(256, np.float32), np.zeros(256, np.float32)), {})
    before = analyze(war_in_loop, specs).function
    after, n = insert_sync.insert_sync(before)
    assert n == 4
    own = [s for s in after.body[0].body if isinstance(s, ir.Intrinsic)
           and s.op in ("set_flag", "wait_flag") and not s.attr(insert_sync.ATTR)]
    assert len(own) == 2


@pytest.mark.parametrize("sample", ["add_tque", "add_flags", "leaky_relu", "sepia", "softmax",
                                    "layernorm"])
def test_samples_that_synchronise_themselves_get_nothing(sample, monkeypatch):
    """With the pass forced on, the samples' kernels (which synchronise themselves) get no
    flag. (samples/mix_pipeline.py gets one, MTE3->MTE2 before its L1 copy-in: the pass sees
    a TQue's two buffers as one, and the kernel orders the older one by a flag waited for
    from the third tile on.)"""
    log = []
    real = insert_sync.insert_sync

    def counting(fn):
        out, n = real(fn)
        log.append(n)
        return out, n
    monkeypatch.setattr(insert_sync, "insert_sync", counting)
    monkeypatch.syspath_prepend(str(SAMPLES))
    from ascendc_py.compiler import jit
    monkeypatch.setattr(jit, "load_cached", lambda key, name: None)   # compile: run the pass
    mod = importlib.import_module(sample)
    for k in vars(mod).values():     # the pass on: another cache key, so they compile again
        if isinstance(k, asc.Kernel):
            monkeypatch.setattr(k, "options", {**k.options, "auto_sync": True})
            monkeypatch.setattr(k, "_compiled", {})
    with contextlib.redirect_stdout(io.StringIO()):
        mod.main()
    assert log and not any(log)


@asc.kernel(auto_sync=True)
def break_path(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int):
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    zg.set_global_buffer(z)
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, 64)
    for i in range(4):
        asc.data_copy(a, xg, 64)
        if i == n:
            break
        asc.muls(a, a, 2.0, 64)     # on the path that does not break, V wrote a last
    asc.data_copy(zg, a, 64)        # after a break, MTE2 wrote it last: both flags


def test_a_break_path_counts_after_the_loop():
    got = _inserted(break_path, np.zeros(64, np.float32), np.zeros(64, np.float32), 2)
    after_loop = sorted(pair for op, pair, _, depth in got if op == "set_flag" and depth == 1)
    assert after_loop == ["MTE2->MTE3", "V->MTE3"]
