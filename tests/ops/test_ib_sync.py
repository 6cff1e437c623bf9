"""Inter-block synchronisation through GM flags (``ops/ib_sync.py``): ib_set / ib_wait and
notify_next_block / wait_pre_block order blocks that run at once, write their flag words where
the workspace layout says, time the waiter from the setter, stop a wait nobody can satisfy
with an error at its line (never a hang), and reject bad workspaces at compile time."""
from __future__ import annotations

import time

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.simulator import xcore_layout as X

N = 64


@asc.kernel
def k_chain(ws: asc.GlobalAddress, acc: asc.GlobalAddress, rounds: int):
    """``rounds`` times: wait for the previous block, fold this block's index into acc, tell
    the next one. Without the order the result would depend on which block runs first."""
    g = asc.GlobalTensor(); g.set_global_buffer(ws)
    a = asc.GlobalTensor(); a.set_global_buffer(acc)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, 32)
    ub = buf.get(asc.int32)
    b = asc.get_block_idx()
    for _ in range(rounds):
        asc.wait_pre_block(g, ub)
        for i in range(4):
            a.set_value(i, a.get_value(i) * 3 + b + i)
        asc.notify_next_block(g, ub)


@pytest.mark.parametrize("blocks", [1, 2, 6])
def test_wait_pre_block_orders_the_blocks(blocks):
    ws = np.zeros(blocks * 8, np.int32)
    acc = np.zeros(8, np.int32)
    r = k_chain[blocks](ws, acc, 1)
    exp = np.zeros(4, np.int64)
    for b in range(blocks):
        exp = exp * 3 + b + np.arange(4)
    np.testing.assert_array_equal(acc[:4], exp)
    assert not ws.any()                       # every notify was taken by a wait
    assert r.instructions["wait_pre_block"] == blocks
    assert r.instructions["notify_next_block"] == blocks
    assert r.kernel_type == "AIV_ONLY"


def test_notify_writes_the_successors_slot():
    """Block b's notify adds one to the int32 at element 8 * (b + 1); the last block writes
    nothing; a wait takes one."""
    @asc.kernel
    def k(ws: asc.GlobalAddress):
        g = asc.GlobalTensor(); g.set_global_buffer(ws)
        pipe = asc.TPipe()
        buf = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf, 32)
        ub = buf.get(asc.int32)
        asc.notify_next_block(g, ub)
        asc.notify_next_block(g, ub)

    ws = np.zeros(4 * 8, np.int32)
    k[3](ws)
    np.testing.assert_array_equal(ws.reshape(4, 8)[:, 0], [0, 2, 2, 0])
    assert not ws.reshape(4, 8)[:, 1:].any()


@asc.kernel
def k_handoff(ws: asc.GlobalAddress, out: asc.GlobalAddress, work: int, event: int):
    """Block 0 writes 42 (after ``work`` extra stores) and sets its flag for ``event``; the
    others wait for it and read what it wrote."""
    g = asc.GlobalTensor(); g.set_global_buffer(ws)
    o = asc.GlobalTensor(); o.set_global_buffer(out)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, 32)
    ub = buf.get(asc.int32)
    b = asc.get_block_idx()
    if b == 0:
        for r in range(work):
            o.set_value(0, r)
        o.set_value(0, 42)
        asc.ib_set(g, ub, block_idx=0, event_id=event)
    else:
        asc.ib_wait(g, ub, block_idx=0, event_id=event)
        o.set_value(b, o.get_value(0) + b)


@pytest.mark.parametrize("blocks,event", [(2, 0), (4, 1), (3, 2)])
def test_ib_set_releases_ib_wait(blocks, event):
    ws = np.zeros(blocks * (event + 1) * 8, np.int32)
    out = np.zeros(blocks, np.int32)
    r = k_handoff[blocks](ws, out, 300, event)
    np.testing.assert_array_equal(out, 42 + np.arange(blocks))
    words = ws.reshape(-1, 8)
    assert words[event * blocks, 0] == 1                  # slot event * cores + block_idx
    assert words[:, 0].sum() == 1 and not words[:, 1:].any()
    assert r.instructions["ib_set"] == 1 and r.instructions["ib_wait"] == blocks - 1


def test_is_aiv_only_false_doubles_the_cores_of_the_layout():
    @asc.kernel
    def k(ws: asc.GlobalAddress):
        g = asc.GlobalTensor(); g.set_global_buffer(ws)
        pipe = asc.TPipe()
        buf = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf, 32)
        ub = buf.get(asc.int32)
        asc.ib_set(g, ub, asc.get_block_idx(), 1, False)
        asc.ib_wait(g, ub, 0, 1, is_aiv_only=False)

    with pytest.raises(asc.GMOutOfBoundsError, match=r"elements \[32, 33\)"):
        k[2](np.zeros(4 * 8, np.int32))       # cores = 2 * 2: event 1 starts at slot 4
    ws = np.zeros(8 * 8, np.int32)
    k[2](ws)
    np.testing.assert_array_equal(ws.reshape(8, 8)[:, 0], [0, 0, 0, 0, 1, 1, 0, 0])


def test_the_wait_ends_at_the_setters_time():
    """The slower the setter, the later the waiters go on; their stall is a cross-core wait."""
    fast = k_handoff[2](np.zeros(16, np.int32), np.zeros(2, np.int32), 0, 0)
    slow = k_handoff[2](np.zeros(16, np.int32), np.zeros(2, np.int32), 400, 0)
    setter = [t for t in slow._blocks if t.block == 0][0]
    waiter = [t for t in slow._blocks if t.block == 1][0]
    assert waiter.cross_waits == 1 and setter.cross_waits == 0
    assert waiter.cycles > setter.cycles
    assert waiter.cross_wait >= setter.cycles - X.CROSS_CORE_LATENCY - 100
    assert slow.cycles - fast.cycles >= 400 * 4 * 0.9
    assert slow.stalls["cross-core wait"] == waiter.cross_wait


def test_runs_under_the_sanitizer():
    out = np.zeros(3, np.int32)
    k_handoff[3](np.zeros(24, np.int32), out, 5, 0, sanitize=True)
    np.testing.assert_array_equal(out, [42, 43, 44])
    acc = np.zeros(8, np.int32)
    k_chain[3](np.zeros(24, np.int32), acc, 1, sanitize=True)


@asc.kernel
def k_never_set(ws: asc.GlobalAddress):
    g = asc.GlobalTensor(); g.set_global_buffer(ws)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, 32)
    ub = buf.get(asc.int32)
    asc.ib_wait(g, ub, 1, 0)


def test_a_wait_nobody_sets_is_a_deadlock_error_at_its_line():
    t0 = time.monotonic()
    with pytest.raises(asc.CrossCoreDeadlockError) as info:
        k_never_set[2](np.zeros(16, np.int32))
    assert time.monotonic() - t0 < 30
    text = str(info.value)
    assert "ib_wait (GM flag word 1)" in text and "can never be satisfied" in text
    assert "asc.ib_wait(g, ub, 1, 0)" in text and "waiting:" in text
    assert "hang on hardware" in text


def test_unbalanced_notify_is_a_deadlock_error():
    """Block 1 waits twice, block 0 notifies once."""
    t0 = time.monotonic()
    with pytest.raises(asc.CrossCoreDeadlockError) as info:
        k_chain_unbalanced[2](np.zeros(16, np.int32))
    assert time.monotonic() - t0 < 30
    assert "wait_pre_block on the" in str(info.value)
    assert "asc.wait_pre_block(g, ub)" in str(info.value)
    out = np.zeros(2, np.int32)
    k_handoff[2](np.zeros(16, np.int32), out, 0, 0)       # the process goes on
    np.testing.assert_array_equal(out, [42, 43])


@asc.kernel
def k_chain_unbalanced(ws: asc.GlobalAddress):
    g = asc.GlobalTensor(); g.set_global_buffer(ws)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, 32)
    ub = buf.get(asc.int32)
    if asc.get_block_idx() == 0:
        asc.notify_next_block(g, ub)
    else:
        asc.wait_pre_block(g, ub)
        asc.wait_pre_block(g, ub)


def test_more_blocks_than_cores_is_a_hang_error():
    cores = asc.get_platform("Ascend910B2").aiv_cores
    with pytest.raises(asc.CrossCoreDeadlockError, match=f"block_dim {cores + 1} exceeds"):
        k_never_set[cores + 1](np.zeros((cores + 1) * 8, np.int32))


def test_the_watchdog_stops_a_wait(monkeypatch):
    """What Ctrl-C and the launch timeout use: the waiter leaves its poll loop."""
    @asc.kernel
    def k_spin(ws: asc.GlobalAddress, n: int):
        g = asc.GlobalTensor(); g.set_global_buffer(ws)
        pipe = asc.TPipe()
        buf = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf, 32)
        ub = buf.get(asc.int32)
        if asc.get_block_idx() == 0:
            s = 0
            for i in range(n):
                s += i
            asc.ib_set(g, ub, 0, 0)
        else:
            asc.ib_wait(g, ub, 0, 0)

    monkeypatch.setenv("ASCENDC_PY_LAUNCH_TIMEOUT", "1")
    monkeypatch.setenv("ASCENDC_PY_LOOP_BUDGET", str(1 << 60))
    t0 = time.monotonic()
    with pytest.raises(asc.LoopLimitError, match="longer than 1 s"):
        k_spin[2](np.zeros(16, np.int32), 1 << 40)
    assert time.monotonic() - t0 < 20


def test_block_idx_out_of_range_at_run_time():
    @asc.kernel
    def k(ws: asc.GlobalAddress, blk: int):
        g = asc.GlobalTensor(); g.set_global_buffer(ws)
        pipe = asc.TPipe()
        buf = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf, 32)
        ub = buf.get(asc.int32)
        asc.ib_set(g, ub, blk, 0)

    with pytest.raises(asc.ValueRangeError, match="block_idx") as info:
        k[2](np.zeros(16, np.int32), 2)
    assert "asc.ib_set(g, ub, blk, 0)" in str(info.value)


@pytest.mark.parametrize("decl,call,message", [
    ("g = asc.GlobalTensor(); g.set_global_buffer(ws)", "asc.ib_set(g, ub, 0, 0)",
     "gm_workspace must hold int32"),
    ("g = asc.GlobalTensor(); g.set_global_buffer(wi)", "asc.ib_wait(g, g, 0, 0)",
     "ub_workspace must be a UB LocalTensor"),
    ("g = asc.GlobalTensor(); g.set_global_buffer(wi)", "asc.ib_set(g, ub, -1, 0)",
     "block_idx -1 is negative"),
    ("g = asc.GlobalTensor(); g.set_global_buffer(wi)", "asc.ib_wait(g, ub, 0, 0, flag)",
     "is_aiv_only must be a compile-time bool"),
])
def test_compile_errors_name_the_line(tmp_path, decl, call, message):
    src = tmp_path / "kib.py"
    src.write_text(
        "import ascendc_py as asc\n\n"
        "@asc.kernel\n"
        "def kib(ws: asc.GlobalAddress, wi: asc.GlobalAddress, flag: bool):\n"
        "    pipe = asc.TPipe()\n"
        "    buf = asc.TBuf(asc.TPosition.VECCALC)\n"
        "    pipe.init_buffer(buf, 64)\n"
        "    ub = buf.get(asc.int32)\n"
        "    small = asc.LocalTensor(dtype=asc.int32, pos=asc.TPosition.VECIN, addr=64, "
        "tile_size=4)\n"
        f"    {decl}\n"
        f"    {call}\n")
    import importlib.util
    spec = importlib.util.spec_from_file_location("kib", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with pytest.raises(asc.KernelError) as info:
        mod.kib[1](np.zeros(8, np.float32), np.zeros(8, np.int32), True)
    text = str(info.value)
    assert message in text and f"kib.py:11" in text and call in text


def test_a_small_ub_workspace_is_an_error_at_the_line():
    @asc.kernel
    def k(ws: asc.GlobalAddress):
        g = asc.GlobalTensor(); g.set_global_buffer(ws)
        small = asc.LocalTensor(dtype=asc.int32, pos=asc.TPosition.VECIN, addr=0, tile_size=4)
        asc.notify_next_block(g, small)

    with pytest.raises(asc.ValueRangeError, match="ub_workspace size") as info:
        k[2](np.zeros(16, np.int32))
    assert "asc.notify_next_block(g, small)" in str(info.value)
