"""Cross-core synchronisation between sub-cores: cross_core_set_flag / cross_core_wait_flag in
modes 0, 1 and 2, sync_all, their errors (deadlock, counter overflow, flag id, mode), the
watchdog, and their timing (a wait delays the waiter in the report and the trace)."""
from __future__ import annotations

import json
import time

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.simulator import xcore_layout as X
from kernels_for_tests import assert_still_works

MIX = asc.KernelType.MIX_AIC_1_2
N = 64


# ----------------------------------------------------------------------------- producer/consumer
@asc.kernel(kernel_type=MIX)
def k_handoff(ws: asc.GlobalAddress, out: asc.GlobalAddress, work: int):
    """The AIC writes its block's 2*N workspace values with scalar stores (``work`` extra
    rounds first, to make it slow), then signals its AIVs (mode 2); each AIV waits, copies its
    half GM -> UB, doubles it and writes it out."""
    b = asc.get_block_idx()
    if asc.ascend_is_aic():
        wg = asc.GlobalTensor(); wg.set_global_buffer(ws + b * 2 * N, 2 * N)
        for r in range(work):
            wg.set_value(0, float(r))
        for i in range(2 * N):
            wg.set_value(i, float(b * 1000 + i))
        asc.cross_core_set_flag(3, 2, asc.PipeID.PIPE_S)
    else:
        blk = b // 2
        sub = asc.get_sub_block_idx()
        asc.cross_core_wait_flag(3)
        wg = asc.GlobalTensor(); wg.set_global_buffer(ws + blk * 2 * N + sub * N, N)
        og = asc.GlobalTensor(); og.set_global_buffer(out + blk * 2 * N + sub * N, N)
        pipe = asc.TPipe()
        qi = asc.TQue(asc.TPosition.VECIN, 1)
        qo = asc.TQue(asc.TPosition.VECOUT, 1)
        pipe.init_buffer(qi, 1, N * 4)
        pipe.init_buffer(qo, 1, N * 4)
        t = qi.alloc_tensor(asc.float32); asc.data_copy(t, wg, N); qi.enque(t)
        t = qi.deque(asc.float32); o = qo.alloc_tensor(asc.float32)
        asc.muls(o, t, 2.0, N); qo.enque(o); qi.free_tensor(t)
        o = qo.deque(asc.float32); asc.data_copy(og, o, N); qo.free_tensor(o)


def _handoff(blocks: int, work: int = 0, **kw):
    ws = np.zeros(blocks * 2 * N, np.float32)
    out = np.zeros_like(ws)
    report = k_handoff[blocks](ws, out, work, **kw)
    expected = np.concatenate([b * 1000 + np.arange(2 * N) for b in range(blocks)]) * 2
    np.testing.assert_array_equal(out, expected.astype(np.float32))
    return report


@pytest.mark.parametrize("blocks", [1, 3, 30])
def test_aic_produces_aivs_consume(blocks):
    """30 blocks > 24 AI Cores: later blocks run in a second wave."""
    r = _handoff(blocks)
    assert r.kernel_type == "MIX_AIC_1_2"
    assert r.instructions["cross_core_set_flag"] == blocks
    assert r.instructions["cross_core_wait_flag"] == 2 * blocks


def test_handoff_repeats_and_survives_sanitize():
    for _ in range(3):
        _handoff(2)
    _handoff(2, sanitize=True)


@asc.kernel(kernel_type=MIX)
def k_pingpong(ws: asc.GlobalAddress, out: asc.GlobalAddress, rounds: int):
    """Round r: the AIC writes r into both AIVs' slots and signals (flag 1, mode 2); each AIV
    waits, adds its slot into its sum and signals back (flag 2, mode 2); the AIC waits for
    both before the next round (its counter is bumped once both AIVs have set)."""
    b = asc.get_block_idx()
    if asc.ascend_is_aic():
        wg = asc.GlobalTensor(); wg.set_global_buffer(ws + b * 2, 2)
        for r in range(rounds):
            wg.set_value(0, r + 1)
            wg.set_value(1, 10 * (r + 1))
            asc.cross_core_set_flag(1, 2, asc.PipeID.PIPE_S)
            asc.cross_core_wait_flag(2)
    else:
        blk = b // 2
        sub = asc.get_sub_block_idx()
        wg = asc.GlobalTensor(); wg.set_global_buffer(ws + blk * 2 + sub, 1)
        og = asc.GlobalTensor(); og.set_global_buffer(out + blk * 2 + sub, 1)
        total = 0
        for r in range(rounds):
            asc.cross_core_wait_flag(1)
            total += wg.get_value(0)
            asc.cross_core_set_flag(2, 2, asc.PipeID.PIPE_S)
        og.set_value(0, total)


def test_pingpong_both_directions():
    rounds = 40                                    # far beyond the 16-set counter limit
    ws = np.zeros(4 * 2, np.int32)
    out = np.zeros(4 * 2, np.int32)
    r = k_pingpong[4](ws, out, rounds)
    s = rounds * (rounds + 1) // 2
    np.testing.assert_array_equal(out, np.tile([s, 10 * s], 4))
    assert r.instructions["cross_core_wait_flag"] == 4 * 3 * rounds


# ----------------------------------------------------------------------------- barriers
@asc.kernel
def k_sync_all(out: asc.GlobalAddress):
    """Every block writes its slot, sync_all, then reads every slot: all writes are seen."""
    og = asc.GlobalTensor(); og.set_global_buffer(out, 128)
    b = asc.get_block_idx()
    og.set_value(b, b + 1)
    asc.sync_all()
    s = 0
    for i in range(asc.get_block_num()):
        s += og.get_value(i)
    asc.sync_all()
    og.set_value(b, s)


@pytest.mark.parametrize("blocks", [1, 7, 48])
def test_sync_all_vector(blocks):
    out = np.zeros(128, np.int32)
    r = k_sync_all[blocks](out)
    assert r.kernel_type == "AIV_ONLY"
    np.testing.assert_array_equal(out[:blocks], blocks * (blocks + 1) // 2)
    assert r.instructions["sync_all"] == 2 * blocks


def test_sync_all_with_more_blocks_than_cores_is_a_hang():
    cores = asc.get_platform("Ascend910B2").aiv_cores
    with pytest.raises(asc.CrossCoreDeadlockError, match=f"block_dim {cores + 1} exceeds the "
                                                         f"{cores} vector cores") as info:
        k_sync_all[cores + 1](np.zeros(128, np.int32))
    assert "asc.sync_all()" in str(info.value)


@asc.kernel(kernel_type=MIX)
def k_mix_barriers(out: asc.GlobalAddress):
    """Mode 0 among the AIVs (all blocks), mode 0 among the AICs, mode 1 within each AIV pair,
    then sync_all(is_aiv_only=False) over every sub-core; each phase reads what the others
    wrote before it."""
    og = asc.GlobalTensor(); og.set_global_buffer(out, 256)
    idx = asc.get_block_idx()
    n = asc.get_block_num()
    if asc.ascend_is_aiv():
        og.set_value(idx, idx + 1)                           # AIV slots 0 .. 2n-1
        asc.cross_core_set_flag(4, 0, asc.PipeID.PIPE_S)
        asc.cross_core_wait_flag(4)
        s = 0
        for i in range(2 * n):
            s += og.get_value(i)
        og.set_value(64 + idx, s)                            # sum over every AIV
        pair = idx - asc.get_sub_block_idx()
        og.set_value(128 + idx, (idx + 1) * 100)
        asc.cross_core_set_flag(5, 1, asc.PipeID.PIPE_S)
        asc.cross_core_wait_flag(5, 1)
        other = pair + 1 - asc.get_sub_block_idx()
        og.set_value(160 + idx, og.get_value(128 + other))   # the partner's value
    else:
        og.set_value(192 + idx, idx + 1)
        asc.cross_core_set_flag(6, 0, asc.PipeID.PIPE_S)
        asc.cross_core_wait_flag(6, 0)
        s = 0
        for i in range(n):
            s += og.get_value(192 + i)
        og.set_value(224 + idx, s)                           # sum over every AIC
    asc.sync_all(False)
    og.set_value(250, 1)


def test_mode0_mode1_and_sync_all_in_a_mix_kernel():
    blocks = 5
    out = np.zeros(256, np.int32)
    k_mix_barriers[blocks](out)
    aivs = 2 * blocks
    np.testing.assert_array_equal(out[64:64 + aivs], aivs * (aivs + 1) // 2)
    partner = [(i ^ 1) + 1 for i in range(aivs)]
    np.testing.assert_array_equal(out[160:160 + aivs], np.array(partner) * 100)
    np.testing.assert_array_equal(out[224:224 + blocks], blocks * (blocks + 1) // 2)
    assert out[250] == 1


@asc.kernel(kernel_type=MIX)
def k_aiv_to_aic(out: asc.GlobalAddress):
    """Mode 2 from the AIVs: the AIC's wait is released only once both AIVs have set."""
    og = asc.GlobalTensor(); og.set_global_buffer(out, 16)
    if asc.ascend_is_aiv():
        og.set_value(asc.get_sub_block_idx(), 5 + asc.get_sub_block_idx())
        asc.cross_core_set_flag(7, 2, asc.PipeID.PIPE_S)
    else:
        asc.cross_core_wait_flag(7, 2, asc.PipeID.PIPE_S)
        og.set_value(2, og.get_value(0) + og.get_value(1))


def test_mode2_from_both_aivs_releases_the_aic():
    out = np.zeros(16, np.int32)
    for _ in range(5):
        out[:] = 0
        k_aiv_to_aic[1](out)
        assert out[2] == 11


# ----------------------------------------------------------------------------- errors
@asc.kernel(kernel_type=MIX)
def k_deadlock(out: asc.GlobalAddress):
    if asc.ascend_is_aiv():
        asc.cross_core_wait_flag(5)


@asc.kernel(kernel_type=MIX)
def k_cycle(out: asc.GlobalAddress):
    """Both sides wait first: each waits for the other's set that follows its own wait."""
    if asc.ascend_is_aic():
        asc.cross_core_wait_flag(1)
        asc.cross_core_set_flag(2, 2, asc.PipeID.PIPE_S)
    else:
        asc.cross_core_wait_flag(2)
        asc.cross_core_set_flag(1, 2, asc.PipeID.PIPE_S)


def test_deadlock_is_an_error_at_the_wait_and_the_process_goes_on():
    t0 = time.monotonic()
    with pytest.raises(asc.CrossCoreDeadlockError) as info:
        k_deadlock[3](np.zeros(8, np.float32))
    assert time.monotonic() - t0 < 30
    text = str(info.value)
    assert "cross_core_wait_flag(flag 5) on the AIV0 of block 0 can never be satisfied" in text
    assert "would hang on hardware" in text and "asc.cross_core_wait_flag(5)" in text
    assert isinstance(info.value, asc.SyncError)
    with pytest.raises(asc.CrossCoreDeadlockError) as info:
        k_cycle[2](np.zeros(8, np.float32))
    text = str(info.value)
    assert "on the AIC of block 0" in text and "waiting:" in text
    assert "AIV0 of block 0 (flag 2)" in text
    _handoff(2)
    assert_still_works()


@asc.kernel
def k_sync_partial(out: asc.GlobalAddress):
    """Block 0 skips the barrier: the others can never leave it."""
    if asc.get_block_idx() > 0:
        asc.sync_all()


def test_sync_all_not_reached_by_every_block():
    with pytest.raises(asc.CrossCoreDeadlockError, match="sync_all on the AIV of block 1"):
        k_sync_partial[4](np.zeros(8, np.float32))


@asc.kernel(kernel_type=MIX)
def k_overflow(out: asc.GlobalAddress, n: int):
    if asc.ascend_is_aic():
        for i in range(n):
            asc.cross_core_set_flag(2, 2, asc.PipeID.PIPE_S)
    else:
        for i in range(n):
            asc.cross_core_wait_flag(2)


def test_counter_holds_16_sets():
    """16 pending sets fit (the AIVs may take them later); a 17th overflows."""
    for _ in range(3):
        k_overflow[1](np.zeros(8, np.float32), 16)


@asc.kernel(kernel_type=MIX)
def k_overflow_nowait(out: asc.GlobalAddress):
    if asc.ascend_is_aic():
        for i in range(17):
            asc.cross_core_set_flag(2, 2, asc.PipeID.PIPE_S)  # line checked


def test_counter_overflow_names_the_set():
    with pytest.raises(asc.CrossCoreCounterError) as info:
        k_overflow_nowait[2](np.zeros(8, np.float32))
    text = str(info.value)
    assert "flag 2 on the AIV0 of block 0" in text and "(block 0, AIC)" in text
    assert "# line checked" in text


@asc.kernel(kernel_type=MIX)
def k_flag_runtime(out: asc.GlobalAddress, f: int):
    if asc.ascend_is_aiv():
        asc.cross_core_wait_flag(f)


def test_flag_id_out_of_range_at_run_time():
    with pytest.raises(asc.CrossCoreFlagIdError, match="flag id 11 is out of range 0..10"):
        k_flag_runtime[1](np.zeros(8, np.float32), 11)
    with pytest.raises(asc.CrossCoreFlagIdError, match="flag id -1"):
        k_flag_runtime[1](np.zeros(8, np.float32), -1)


@pytest.mark.parametrize("call, message", [
    ("asc.cross_core_set_flag(11, 0, asc.PipeID.PIPE_V)", "flag_id 11 is out of range 0..10"),
    ("asc.cross_core_wait_flag(-1)", "flag_id -1 is out of range"),
    ("asc.cross_core_set_flag(1, 3, asc.PipeID.PIPE_V)", "mode_id 3 is not 0, 1 or 2"),
    ("asc.cross_core_set_flag(1, n, asc.PipeID.PIPE_V)", "mode_id must be a compile-time"),
    ("asc.cross_core_set_flag(1, 0, asc.PipeID.PIPE_ALL)", "pipe cannot be PIPE_ALL"),
    ("asc.cross_core_set_flag(1, 0, 1.5)", "pipe must be a PipeID"),
    # int pipe ids follow Ascend C's pipe_t numbering (pyasc passes them)
    ("asc.cross_core_set_flag(1, 0, 7)", "pipe 7 is not a pipe of A2/A3"),
    ("asc.cross_core_set_flag(1, 0, 6)", "pipe cannot be PIPE_ALL"),
    ("asc.cross_core_set_flag(1, 0)", "missing argument 'pipe'"),
    ("asc.sync_all(n > 0)", "is_aiv_only must be a compile-time bool"),
])
def test_compile_errors_name_the_line(tmp_path, call, message):
    import importlib.util
    src = tmp_path / "kbad.py"
    src.write_text("import ascendc_py as asc\n\n\n@asc.kernel\n"
                   "def k(x: asc.GlobalAddress, n: int):\n"
                   f"    {call}\n")
    spec = importlib.util.spec_from_file_location("kbad", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with pytest.raises(asc.KernelCompileError, match=message.replace("(", r"\(")) as info:
        mod.k[1](np.zeros(8, np.float32), 1)
    assert info.value.loc.line == 6


@asc.kernel
def k_mode1_vector(out: asc.GlobalAddress):
    asc.cross_core_set_flag(1, 1, asc.PipeID.PIPE_S)


@asc.kernel(kernel_type=MIX)
def k_mode1_aic(out: asc.GlobalAddress):
    if asc.ascend_is_aic():
        asc.cross_core_set_flag(1, 1, asc.PipeID.PIPE_S)


@asc.kernel(kernel_type=asc.KernelType.AIC_ONLY)
def k_mode2_cube(out: asc.GlobalAddress):
    asc.cross_core_set_flag(1, 2, asc.PipeID.PIPE_S)


def test_modes_need_their_partner_cores():
    with pytest.raises(asc.CrossCoreModeError, match="mode 1 synchronises the AIVs of one AI "
                                                     "Core.*AIV_ONLY"):
        k_mode1_vector[2](np.zeros(8, np.float32))
    with pytest.raises(asc.CrossCoreModeError, match="the AIC cannot take part"):
        k_mode1_aic[1](np.zeros(8, np.float32))
    with pytest.raises(asc.CrossCoreModeError, match="AIC_ONLY launch has no AIV"):
        k_mode2_cube[1](np.zeros(8, np.float32))


@asc.kernel(kernel_type=MIX)
def k_fault_while_waiting(out: asc.GlobalAddress):
    """The AIC faults (GM out of bounds) while its AIVs wait for it: the fault is reported,
    not a deadlock."""
    og = asc.GlobalTensor(); og.set_global_buffer(out, 8)
    if asc.ascend_is_aic():
        og.set_value(100, 1.0)
        asc.cross_core_set_flag(1, 2, asc.PipeID.PIPE_S)
    else:
        asc.cross_core_wait_flag(1)


def test_fault_on_one_sub_core_stops_the_waiters():
    with pytest.raises(asc.GMOutOfBoundsError) as info:
        k_fault_while_waiting[2](np.zeros(8, np.float32))
    assert "(block 0, AIC)" in str(info.value)


@asc.kernel(kernel_type=MIX)
def k_spin(out: asc.GlobalAddress, n: int):
    """The AIVs loop 'forever' while the AIC waits for them: only the watchdog ends it (the
    AIC's wait or the AIVs' loop is reported, whichever the watchdog stopped first)."""
    og = asc.GlobalTensor(); og.set_global_buffer(out, 8)
    if asc.ascend_is_aiv():
        while n > 0:            # issues an instruction: re-reads the budget every iteration
            og.set_value(0, 1.0)
        asc.cross_core_set_flag(1, 2, asc.PipeID.PIPE_S)
    else:
        asc.cross_core_wait_flag(1)


def test_watchdog_stops_waits(monkeypatch):
    monkeypatch.setenv("ASCENDC_PY_LAUNCH_TIMEOUT", "1")
    monkeypatch.setenv("ASCENDC_PY_LOOP_BUDGET", str(1 << 60))
    t0 = time.monotonic()
    with pytest.raises(asc.LoopLimitError, match="longer than 1 s") as info:
        k_spin[2](np.zeros(8, np.float32), 1)
    assert time.monotonic() - t0 < 20
    text = str(info.value)
    assert ("while the AIC of block 0 waited here" in text
            and "asc.cross_core_wait_flag(1)" in text) or "(block 0, AIV0)" in text
    monkeypatch.delenv("ASCENDC_PY_LAUNCH_TIMEOUT")
    monkeypatch.delenv("ASCENDC_PY_LOOP_BUDGET")
    _handoff(1)


def test_waiter_stopped_by_the_watchdog_gets_a_clear_message():
    from ascendc_py.dsl.kernel_types import layout
    from ascendc_py.simulator import abi, subcore_faults
    _handoff(1)
    compiled = next(iter(k_handoff._compiled.values()))[0]
    site = next(i for i, s in enumerate(compiled.sites) if s.op == "cross_core_wait_flag")
    ctx = np.zeros(abi.ctx_slots(compiled.num_queues), np.int64)
    ctx[abi.LOOP_BUDGET] = abi.WATCHDOG_BUDGET
    err = subcore_faults.build(compiled, int(abi.ErrorCode.LOOP_LIMIT), site, 0, 0, 0, ctx, 2,
                               "AIV1", None, layout("MIX_AIC_1_2"))
    assert isinstance(err, asc.LoopLimitError)
    assert "while the AIV1 of block 2 waited here" in str(err)
    assert "asc.cross_core_wait_flag(3)" in str(err)


# ----------------------------------------------------------------------------- timing
def test_wait_delays_the_waiter():
    """The AIVs start their copies only after the AIC's set: the slower the AIC, the later
    they finish; the time they waited is the report's cross-core wait."""
    fast = _handoff(1, work=0)
    slow = _handoff(1, work=400)
    rows = dict(slow.subcore_rows)
    assert set(rows) == {"  AIC", "  AIV0", "  AIV1"}
    aic = [t for t in slow._blocks if t.label == "AIC"][0]
    aiv = [t for t in slow._blocks if t.label == "AIV0"][0]
    assert aiv.cross_waits == 1 and aic.cross_waits == 0
    # the AIV waits for the AIC's set (which fires at the end of the AIC's scalar work)
    assert aiv.cross_wait >= aic.cycles - X.CROSS_CORE_LATENCY - 50
    assert aiv.cycles > aic.cycles
    assert slow.cycles - fast.cycles >= 400 * 4 * 0.9      # 400 more scalar stores on the AIC
    assert slow.stalls["cross-core wait"] == aiv.cross_wait
    assert slow.kernel_cycles == max(t.cycles for t in slow._blocks)   # the slowest sub-core
    text = str(slow)
    assert "kernel type               MIX_AIC_1_2" in text
    assert "stall: cross-core wait" in text and "AIV1" in text and "MTE2" in text


def test_timing_of_sync_all_is_the_last_arrival():
    """Every block leaves the barrier when the slowest arrives (+ the cross-core latency)."""
    out = np.zeros(128, np.int32)
    r = k_sync_all[8](out)
    assert r.stalls["cross-core wait"] > 0
    exits = {t.block: t.cycles for t in r._blocks}
    assert max(exits.values()) - min(exits.values()) <= 60


def test_trace_has_a_lane_set_per_sub_core(tmp_path):
    r = _handoff(2, work=50, trace=True)
    path = r.save_trace(tmp_path / "mix.json")
    events = json.load(open(path))["traceEvents"]
    pids = {e["pid"] for e in events}
    assert pids == {"core0", "core1"}
    tids = {e["tid"] for e in events if e.get("ph") == "X"}
    assert {"AIV0.MTE2", "AIV1.MTE3", "AIV0.S", "AIV1.V"} <= tids
    waits = [e for e in events if e.get("ph") == "X" and e["name"] == "cross_core_wait_flag"]
    assert waits and all(e["tid"].endswith(".S") for e in waits)
    assert all(e["args"]["subcore"] in ("AIV0", "AIV1") for e in waits)
    r.plot(tmp_path / "mix.png") if _have_matplotlib() else None


def _have_matplotlib() -> bool:
    import importlib.util
    return importlib.util.find_spec("matplotlib") is not None


def test_active_cores_counts_both_core_types():
    """A mix launch of B blocks runs B AICs and 2B AIVs at once (the report's vector peak counts
    the AIVs)."""
    from ascendc_py.dsl.kernel_types import layout
    from ascendc_py.simulator import subcores
    plat = asc.get_platform("Ascend910B2")
    assert subcores.active_cores(layout("MIX_AIC_1_2"), 4, plat) == (4, 8)
    assert subcores.active_cores(layout("MIX_AIC_1_2"), 100, plat) == (24, 48)
    assert subcores.active_cores(layout("MIX_AIC_1_1"), 5, plat) == (5, 5)
    assert subcores.active_cores(layout("AIC_ONLY"), 30, plat) == (24, 0)
    assert subcores.active_cores(layout("AIV_ONLY"), 60, plat) == (0, 48)


def test_mix_pipeline_sample(tmp_path):
    """samples/mix_pipeline.py: AIC -> workspace -> AIVs with back-pressure, golden-checked."""
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).resolve().parents[2] / "samples" / "mix_pipeline.py"
    spec = importlib.util.spec_from_file_location("mix_pipeline", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for blocks, tiles in ((1, 1), (3, 7), (26, 3)):
        r = mod.main(blocks, tiles)
        assert r.kernel_type == "MIX_AIC_1_2"
        assert r.instructions["cross_core_wait_flag"] == blocks * (2 * tiles + max(tiles - 2, 0))


@asc.kernel
def k_mode0_vector(out: asc.GlobalAddress):
    """Ascend C's mode-0 example: every AIV sets, then waits (a barrier of all AIVs)."""
    og = asc.GlobalTensor(); og.set_global_buffer(out, 128)
    b = asc.get_block_idx()
    for r in range(3):
        og.set_value(b, r * 100 + b)
        asc.cross_core_set_flag(8, 0, asc.PipeID.PIPE_S)
        asc.cross_core_wait_flag(8)
        s = 0
        for i in range(asc.get_block_num()):
            s += og.get_value(i)
        og.set_value(64 + 3 * b + r, s)
        asc.cross_core_set_flag(9, 0, asc.PipeID.PIPE_S)   # nobody rewrites before all read
        asc.cross_core_wait_flag(9)


def test_mode0_barrier_in_a_vector_kernel():
    blocks = 10
    out = np.zeros(128, np.int32)
    r = k_mode0_vector[blocks](out)
    assert r.kernel_type == "AIV_ONLY"
    sums = out[64:64 + 3 * blocks].reshape(blocks, 3)
    for rnd in range(3):
        np.testing.assert_array_equal(sums[:, rnd], rnd * 100 * blocks + blocks * (blocks - 1) // 2)
