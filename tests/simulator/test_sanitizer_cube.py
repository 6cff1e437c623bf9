"""Sanitize mode on the cube core: races between MTE2, MTE1, M and FIX in L1, L0A, L0B, L0C and
BT (each missing HardEvent is reported with both lines and the event that fixes it), flags and
TQue operations order them (no false positives, also for padded fractals), uninitialised
reads of L0C/L1/L0A, and the cube and mix samples run clean."""
import importlib
import inspect
import pathlib
import sys

import numpy as np
import pytest

import ascendc_py as asc

SAMPLES = pathlib.Path(__file__).resolve().parents[2] / "samples"
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "ops"))

from kernels_cube import int8_kn_matmul, matmul_kernel  # noqa: E402


def line_of(kernel, marker: str) -> int:
    lines, first = inspect.getsourcelines(kernel.fn)
    hits = [first + i for i, text in enumerate(lines) if marker in text]
    assert len(hits) == 1, (marker, hits)
    return hits[0]


E = asc.HardEvent


@asc.kernel
def cube_flow(x: asc.GlobalAddress, y: asc.GlobalAddress, ITERS: asc.ConstExpr[int],
              SKIP: asc.ConstExpr[int]):
    """ITERS rounds of GM → L1 → L0A/L0B → mmad → L0C → fixpipe on the same buffers, every
    hand-over ordered by a flag except the one SKIP names."""
    xg = asc.GlobalTensor(); xg.set_global_buffer(x)
    yg = asc.GlobalTensor(); yg.set_global_buffer(y)
    a1 = asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, 256)
    b1 = asc.LocalTensor(asc.float16, asc.TPosition.B1, 512, 256)
    a2 = asc.LocalTensor(asc.float16, asc.TPosition.A2, 0, 256)
    b2 = asc.LocalTensor(asc.float16, asc.TPosition.B2, 0, 256)
    c = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, 256)
    for it in range(ITERS):
        asc.data_copy(a1, xg, asc.Nd2NzParams(1, 16, 16, 0, 16, 16, 1, 0))  # copy-a
        asc.data_copy(b1, xg, asc.Nd2NzParams(1, 16, 16, 0, 16, 16, 1, 0))  # copy-b
        if SKIP != 1:
            asc.set_flag(asc.HardEvent.MTE2_MTE1, 0)
            asc.wait_flag(asc.HardEvent.MTE2_MTE1, 0)
        asc.load_data(a2, a1, asc.LoadData2DParams(0, 1, 1, 0, 0, False, 0))  # load-a
        if SKIP != 2:
            asc.set_flag(asc.HardEvent.MTE1_M, 0)
            asc.wait_flag(asc.HardEvent.MTE1_M, 0)
        asc.load_data(b2, b1, asc.LoadData2DParams(0, 1, 1, 0, 0, True, 0))  # load-b
        if SKIP != 2 and SKIP != 3:
            asc.set_flag(asc.HardEvent.MTE1_M, 1)
            asc.wait_flag(asc.HardEvent.MTE1_M, 1)
        asc.mmad(c, a2, b2, asc.MmadParams(16, 16, 16, 0, False, True))  # mmad
        if SKIP != 4:
            asc.set_flag(asc.HardEvent.M_FIX, 0)
            asc.wait_flag(asc.HardEvent.M_FIX, 0)
        asc.fixpipe(yg[it * 256:], c, asc.FixpipeParamsV220(16, 16, 16, 16))  # fixpipe
        if SKIP != 5:   # L0A/L0B reuse: the next load_data after this mmad
            asc.set_flag(asc.HardEvent.M_MTE1, 0)
            asc.wait_flag(asc.HardEvent.M_MTE1, 0)
        if SKIP != 6:   # L0C reuse: the next mmad after this fixpipe
            asc.set_flag(asc.HardEvent.FIX_M, 0)
            asc.wait_flag(asc.HardEvent.FIX_M, 0)
        if SKIP != 7:   # L1 reuse: the next copy-in after these load_data
            asc.set_flag(asc.HardEvent.MTE1_MTE2, 0)
            asc.wait_flag(asc.HardEvent.MTE1_MTE2, 0)


RNG = np.random.default_rng(5)
X = RNG.standard_normal(256).astype(np.float16)


def test_all_flags_run_clean_and_compute():
    y = np.zeros(2 * 256, np.float32)
    cube_flow[1](X, y, 2, 0, sanitize=True)
    m = X.reshape(16, 16).astype(np.float64)
    for it in range(2):
        np.testing.assert_allclose(y[it * 256:(it + 1) * 256].reshape(16, 16), m @ m,
                                   rtol=1e-5, atol=1e-4)


# skip -> (this line, other line, memory, event, what this access does)
CASES = {
    1: ("load-a", "copy-a", "L1", "MTE2_MTE1", "reads data written"),
    2: ("mmad", "load-a", "L0A", "MTE1_M", "reads data written"),
    3: ("mmad", "load-b", "L0B", "MTE1_M", "reads data written"),
    4: ("fixpipe", "mmad", "L0C", "M_FIX", "reads data written"),
    5: ("load-a", "mmad", "L0A", "M_MTE1", "writes data read"),
    6: ("mmad", "fixpipe", "L0C", "FIX_M", "writes data read"),
    7: ("copy-a", "load-a", "L1", "MTE1_MTE2", "writes data read"),
}


@pytest.mark.parametrize("skip", sorted(CASES))
def test_missing_flag_is_a_race_naming_both_lines_memory_and_event(skip):
    this, other, mem, event, what = CASES[skip]
    y = np.zeros(2 * 256, np.float32)
    with pytest.raises(asc.DataRaceError) as info:
        cube_flow[1](X, y, 2, skip, sanitize=True)
    text = str(info.value)
    first = text.splitlines()[0]
    assert f":{line_of(cube_flow, '# ' + this)}:" in first
    assert f":{line_of(cube_flow, '# ' + other)}:" in first
    assert f"({mem} bytes [" in first and what in first
    a, b = event.split("_")
    assert f"on pipe {b} " in first and f"by pipe {a} " in first
    assert f"HardEvent.{event}" in text


def test_without_sanitize_the_missing_flag_still_runs():
    y = np.zeros(2 * 256, np.float32)
    cube_flow[1](X, y, 2, 2)


@pytest.mark.parametrize("shape", [(16, 16, 16, (16, 16, 16)), (7, 5, 3, (16, 16, 16)),
                                   (50, 37, 70, (32, 32, 32)), (33, 65, 100, (64, 64, 48))])
@pytest.mark.parametrize("bt", [False, True])
@pytest.mark.parametrize("bias", [False, True])
def test_tque_matmul_flow_is_clean(shape, bt, bias):
    """The TQue flow (A1/B1/C1 → A2/B2/C2 → CO1) with padded fractals (m, n, k not multiples
    of 16: rows L1 never receives are read as padding) has no race and no uninitialised read."""
    M, N, K, (TM, TN, TK) = shape
    a = RNG.standard_normal((M, K)).astype(np.float16)
    b = RNG.standard_normal((K, N)).astype(np.float16)
    bv = np.zeros(-(-N // 16) * 16 + TN, np.float32)
    bv[:N] = RNG.standard_normal(N)
    c = np.zeros((M, N), np.float32)
    blocks = -(-M // TM) * -(-N // TN)
    matmul_kernel[blocks](a, np.ascontiguousarray(b.T) if bt else b, bv, c, M, N, K, TM, TN, TK,
                          bt, bias, False, 0, sanitize=True)
    ref = a.astype(np.float64) @ b.astype(np.float64) + (bv[:N] if bias else 0)
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5 * K)


def test_int8_transposing_load_is_clean():
    M, K, N = 20, 40, 50
    a = RNG.integers(-128, 128, (M, K)).astype(np.int8)
    b = RNG.integers(-128, 128, (K, N)).astype(np.int8)
    c = np.zeros((M, N), np.int32)
    int8_kn_matmul[1](a, b, c, M, K, N, sanitize=True)
    np.testing.assert_array_equal(c, a.astype(np.int64) @ b.astype(np.int64))


@asc.kernel
def unfilled(x: asc.GlobalAddress, y: asc.GlobalAddress, CASE: asc.ConstExpr[int]):
    xg = asc.GlobalTensor(); xg.set_global_buffer(x)
    yg = asc.GlobalTensor(); yg.set_global_buffer(y)
    a1 = asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, 256)
    a2 = asc.LocalTensor(asc.float16, asc.TPosition.A2, 0, 256)
    b2 = asc.LocalTensor(asc.float16, asc.TPosition.B2, 0, 256)
    c = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, 256)
    if CASE == 0:
        asc.fixpipe(yg, c, asc.FixpipeParamsV220(16, 16, 16, 16))  # fixpipe-only
    if CASE == 1:
        asc.load_data(a2, a1, asc.LoadData2DParams(0, 1, 1, 0, 0, False, 0))  # load-unfilled
    if CASE >= 2:
        asc.load_data(a2, xg, asc.LoadData2DParams(0, 1, 1, 0, 0, False, 0))
        if CASE == 3:
            asc.load_data(b2, xg, asc.LoadData2DParams(0, 1, 1, 0, 0, False, 0))
        asc.set_flag(asc.HardEvent.MTE2_M, 0)
        asc.wait_flag(asc.HardEvent.MTE2_M, 0)
        # CASE 2: B never loaded; CASE 3: accumulates into an L0C nothing wrote
        asc.mmad(c, a2, b2, asc.MmadParams(16, 16, 16, 0, False, False))  # mmad-acc


@pytest.mark.parametrize("case,marker,mem", [(0, "fixpipe-only", "L0C"),
                                             (1, "load-unfilled", "L1"),
                                             (2, "mmad-acc", "L0B"), (3, "mmad-acc", "L0C")])
def test_uninitialised_cube_reads_are_reported(case, marker, mem):
    y = np.zeros(256, np.float32)
    with pytest.raises(asc.UninitializedReadError) as info:
        unfilled[1](X, y, case, sanitize=True)
    first = str(info.value).splitlines()[0]
    assert f":{line_of(unfilled, '# ' + marker)}:" in first
    assert f"reads {mem} bytes [0, " in first and "nothing has written" in first


@pytest.mark.parametrize("name", ["linear", "matmul", "swiglu_ffn", "matmul_leaky_relu",
                                  "mix_pipeline"])
def test_cube_and_mix_samples_run_clean(name):
    sys.path.insert(0, str(SAMPLES))
    asc.set_sanitizer(True)
    try:
        importlib.import_module(name).main()
    finally:
        asc.set_sanitizer(None)
        sys.path.remove(str(SAMPLES))


@asc.kernel
def bias_and_queues(x: asc.GlobalAddress, bias: asc.GlobalAddress, y: asc.GlobalAddress,
                    SKIP: asc.ConstExpr[int]):
    """A and B through A1/B1 → A2/B2 TQues, the bias through C1 → C2 (BiasTable); SKIP 1: the
    A1 tensor is used without enque/deque; SKIP 2: no MTE1_M between the bias copy and mmad."""
    xg = asc.GlobalTensor(); xg.set_global_buffer(x)
    sg = asc.GlobalTensor(); sg.set_global_buffer(bias)
    yg = asc.GlobalTensor(); yg.set_global_buffer(y)
    pipe = asc.TPipe()
    qa1 = asc.TQue(asc.TPosition.A1, 1)
    qa2 = asc.TQue(asc.TPosition.A2, 1)
    qb2 = asc.TQue(asc.TPosition.B2, 1)
    qc = asc.TQue(asc.TPosition.CO1, 1)
    pipe.init_buffer(qa1, 1, 512)
    pipe.init_buffer(qa2, 1, 512)
    pipe.init_buffer(qb2, 1, 512)
    pipe.init_buffer(qc, 1, 1024)
    s1 = asc.LocalTensor(asc.float32, asc.TPosition.C1, 4096, 16)
    bt = asc.LocalTensor(asc.float32, asc.TPosition.C2, 0, 16)
    asc.data_copy(s1, sg, 16)
    asc.set_flag(asc.HardEvent.MTE2_MTE1, 1)
    asc.wait_flag(asc.HardEvent.MTE2_MTE1, 1)
    a1 = qa1.alloc_tensor(asc.float16)
    asc.data_copy(a1, xg, asc.Nd2NzParams(1, 16, 16, 0, 16, 16, 1, 0))  # copy-a1
    if SKIP != 1:
        qa1.enque(a1)
        a1 = qa1.deque(asc.float16)
    a2 = qa2.alloc_tensor(asc.float16)
    asc.load_data(a2, a1, asc.LoadData2DParams(0, 1, 1, 0, 0, False, 0))  # load-a2
    qa2.enque(a2)
    b2 = qb2.alloc_tensor(asc.float16)
    asc.load_data(b2, a1, asc.LoadData2DParams(0, 1, 1, 0, 0, True, 0))
    qb2.enque(b2)
    qa1.free_tensor(a1)
    asc.data_copy(bt, s1, 16)  # bias-copy (after the queues' events: only MTE1_M orders it)
    if SKIP != 2:
        asc.set_flag(asc.HardEvent.MTE1_M, 2)
        asc.wait_flag(asc.HardEvent.MTE1_M, 2)
    a2 = qa2.deque(asc.float16)
    b2 = qb2.deque(asc.float16)
    c = qc.alloc_tensor(asc.float32)
    asc.mmad(c, a2, b2, bt, asc.MmadParams(16, 16, 16))  # mmad-bias
    qa2.free_tensor(a2)
    qb2.free_tensor(b2)
    qc.enque(c)
    c = qc.deque(asc.float32)
    asc.fixpipe(yg, c, asc.FixpipeParamsV220(16, 16, 16, 16))
    qc.free_tensor(c)


def test_queues_and_bias_table_run_clean():
    bias = np.arange(16, dtype=np.float32)
    y = np.zeros(256, np.float32)
    bias_and_queues[1](X, bias, y, 0, sanitize=True)
    m = X.reshape(16, 16).astype(np.float64)
    np.testing.assert_allclose(y.reshape(16, 16), m @ m + bias, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("skip,this,other,mem,event", [
    (1, "load-a2", "copy-a1", "L1", "MTE2_MTE1"), (2, "mmad-bias", "bias-copy", "BT", "MTE1_M")])
def test_queue_misuse_and_bias_table_races(skip, this, other, mem, event):
    with pytest.raises(asc.DataRaceError) as info:
        bias_and_queues[1](X, np.zeros(16, np.float32), np.zeros(256, np.float32), skip,
                           sanitize=True)
    first = str(info.value).splitlines()[0]
    assert f":{line_of(bias_and_queues, '# ' + this)}:" in first
    assert f":{line_of(bias_and_queues, '# ' + other)}:" in first
    assert f"({mem} bytes [" in first and f"HardEvent.{event}" in str(info.value)
