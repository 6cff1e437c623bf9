"""The cube unit end to end: the canonical matmul flow (GM ND → L1 NZ → L0A/L0B → mmad → L0C →
fixpipe → GM ND) as a kernel against numpy matmul over dtypes, odd shapes, several blocks, K in
chunks, bias, float32/float16 output and relu; the PIPE_M timing formula and flag timing; and
the errors a user can make, with their message and line."""
from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler.ops.cube import QuantModes
from ascendc_py.simulator.config import ASCEND910B2

from kernels_cube import matmul_kernel

RNG = np.random.default_rng(3)


def _line(kernel, marker: str) -> int:
    lines, first = inspect.getsourcelines(kernel.fn)
    hits = [i for i, t in enumerate(lines) if marker in t]
    assert len(hits) == 1, (marker, hits)
    return first + hits[0]


def _run(a, b, M, N, K, tiles, bt=False, bias=None, relu=False, out=np.float32, quant=0):
    TM, TN, TK = tiles
    acc = np.int32 if a.dtype == np.int8 else np.float32
    bias_arr = np.zeros(-(-N // 16) * 16 + TN, acc)
    if bias is not None:
        bias_arr[:N] = bias
    c = np.zeros((M, N), out)
    blocks = -(-M // TM) * -(-N // TN)
    report = matmul_kernel[blocks](a, b, bias_arr, c, M, N, K, TM, TN, TK, bt,
                                   bias is not None, relu, quant)
    return c, report


SHAPES = [(16, 16, 16, (16, 16, 16)), (50, 37, 70, (32, 32, 32)), (33, 65, 100, (64, 64, 48)),
          (7, 5, 3, (16, 16, 16)), (17, 18, 19, (16, 16, 16)), (128, 96, 256, (64, 48, 128))]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("bt", [False, True])
def test_matmul_float16(shape, bt):
    M, N, K, tiles = shape
    a = RNG.standard_normal((M, K)).astype(np.float16)
    b = RNG.standard_normal((K, N)).astype(np.float16)
    c, _ = _run(a, np.ascontiguousarray(b.T) if bt else b, M, N, K, tiles, bt)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5 * K)


@pytest.mark.parametrize("shape", SHAPES[1:4])
def test_matmul_float32_and_int8(shape):
    M, N, K, tiles = shape
    a = RNG.standard_normal((M, K)).astype(np.float32)
    b = RNG.standard_normal((N, K)).astype(np.float32)        # B given as N×K
    c, _ = _run(a, b, M, N, K, tiles, bt=True)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.T, rtol=1e-5, atol=1e-5 * K)
    ai = RNG.integers(-128, 128, (M, K)).astype(np.int8)
    bi = RNG.integers(-128, 128, (N, K)).astype(np.int8)
    ci, _ = _run(ai, bi, M, N, K, tiles, bt=True, out=np.int32)
    np.testing.assert_array_equal(ci, ai.astype(np.int64) @ bi.T.astype(np.int64))


def test_matmul_bfloat16():
    torch = pytest.importorskip("torch")
    M, N, K = 40, 30, 50
    a = torch.randn(M, K).to(torch.bfloat16)
    b = torch.randn(K, N).to(torch.bfloat16)
    c = torch.zeros(M, N)
    bias = torch.zeros(64)
    matmul_kernel[4](a, b, bias, c, M, N, K, 32, 16, 32, False, False, False, 0)
    ref = a.double() @ b.double()
    np.testing.assert_allclose(c.numpy(), ref.numpy(), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("relu", [False, True])
def test_matmul_bias_relu_float16_out(relu):
    M, N, K = 45, 70, 90
    a = RNG.standard_normal((M, K)).astype(np.float16)
    b = RNG.standard_normal((K, N)).astype(np.float16)
    bias = RNG.standard_normal(N).astype(np.float32)
    c32, _ = _run(a, b, M, N, K, (32, 32, 32), bias=bias, relu=relu)
    ref = a.astype(np.float64) @ b.astype(np.float64) + bias
    ref = np.maximum(ref, 0) if relu else ref
    np.testing.assert_allclose(c32, ref, rtol=1e-5, atol=1e-4)
    c16, _ = _run(a, b, M, N, K, (32, 32, 32), bias=bias, relu=relu, out=np.float16,
                  quant=int(QuantModes.F322F16))
    np.testing.assert_array_equal(c16, c32.astype(np.float16))   # F322F16 rounds to nearest even


def test_int8_bias_exact():
    M, N, K = 20, 24, 200
    a = RNG.integers(-128, 128, (M, K)).astype(np.int8)
    b = RNG.integers(-128, 128, (N, K)).astype(np.int8)
    bias = RNG.integers(-1000, 1000, N).astype(np.int32)
    c, _ = _run(a, b, M, N, K, (16, 16, 64), bt=True, bias=bias, out=np.int32)
    np.testing.assert_array_equal(c, a.astype(np.int64) @ b.T.astype(np.int64) + bias)


# ----------------------------------------------------------------------------- timing
@asc.kernel
def timed_mmad(x: asc.GlobalAddress, m: int, n: int, k: int, REPS: asc.ConstExpr[int]):
    pipe = asc.TPipe()
    ta = asc.TBuf(asc.TPosition.A2)
    tb = asc.TBuf(asc.TPosition.B2)
    tc = asc.TBuf(asc.TPosition.CO1)
    pipe.init_buffer(ta, 65536)
    pipe.init_buffer(tb, 65536)
    pipe.init_buffer(tc, 131072)
    a = ta.get(x.dtype)
    b = tb.get(x.dtype)
    c = tc.get(asc.int32 if x.dtype == asc.int8 else asc.float32)
    for i in asc.static_range(REPS):
        asc.mmad(c, a, b, asc.MmadParams(m, n, k, 0, False, i == 0))


@pytest.mark.parametrize("dtype,k0", [(np.float16, 16), (np.float32, 4), (np.int8, 32)])
@pytest.mark.parametrize("mnk", [(16, 16, 16), (30, 40, 70), (128, 64, 96), (1, 16, 64)])
def test_pipe_m_busy_is_the_formula(dtype, k0, mnk):
    m, n, k = mnk
    cube = ASCEND910B2.cube
    assert cube.k0(np.dtype(dtype).name) == k0
    report = timed_mmad[1](np.zeros(16, dtype), m, n, k, 3)
    steps = math.ceil(m / 16) * math.ceil(n / 16) * math.ceil(k / k0)
    # the CA formula's fractal steps plus the per-mmad overhead, at least the minimum (msKPP)
    per = max(steps + cube.mmad_issue_cycles, cube.mmad_min_cycles)
    assert per == cube.mmad_occupancy(m, n, k, np.dtype(dtype).name)
    assert report.pipe_busy["M"] == 3 * per
    assert report.instructions["mmad"] == 3
    # the last mmad completes CUBE_LATENCY after it leaves the pipe
    assert report.cycles >= 3 * per + cube.mmad_latency
    assert report.cube_flops == 3 * 2 * m * n * k


@asc.kernel
def flagged_flow(x: asc.GlobalAddress, y: asc.GlobalAddress, WAIT: asc.ConstExpr[bool]):
    """GM → L1 → L0A/L0B → mmad → fixpipe with explicit flags (the simulator.asc example)."""
    xg = asc.GlobalTensor(); xg.set_global_buffer(x)
    yg = asc.GlobalTensor(); yg.set_global_buffer(y)
    a1 = asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, 256)
    b1 = asc.LocalTensor(asc.float16, asc.TPosition.B1, 512, 256)
    a2 = asc.LocalTensor(asc.float16, asc.TPosition.A2, 0, 256)
    b2 = asc.LocalTensor(asc.float16, asc.TPosition.B2, 0, 256)
    c = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, 256)
    asc.data_copy(a1, xg, asc.Nd2NzParams(1, 16, 16, 0, 16, 16, 1, 0))
    asc.data_copy(b1, xg, asc.Nd2NzParams(1, 16, 16, 0, 16, 16, 1, 0))
    asc.set_flag(asc.HardEvent.MTE2_MTE1, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE1, 0)
    asc.load_data(a2, a1, asc.LoadData2DParams(0, 1, 1, 0, 0, False, 0))
    asc.load_data(b2, b1, asc.LoadData2DParams(0, 1, 1, 0, 0, True, 0))
    if WAIT:
        asc.set_flag(asc.HardEvent.MTE1_M, 0)
        asc.wait_flag(asc.HardEvent.MTE1_M, 0)
    asc.mmad(c, a2, b2, asc.MmadParams(16, 16, 16, 0, False, True))
    asc.set_flag(asc.HardEvent.M_FIX, 0)
    asc.wait_flag(asc.HardEvent.M_FIX, 0)
    asc.fixpipe(yg, c, asc.FixpipeParamsV220(16, 16, 16, 16))


def test_flags_order_the_cube_pipes():
    x = RNG.standard_normal(256).astype(np.float16)
    y = np.zeros(256, np.float32)
    r = flagged_flow[1](x, y, True, trace=True)
    m = x.reshape(16, 16).astype(np.float64)
    np.testing.assert_allclose(y.reshape(16, 16), m @ m, rtol=1e-5, atol=1e-4)
    trace = r._blocks[0].trace           # start, occupancy, latency, pipe, site, op
    pipes = {int(p) for p in trace[:, 3]}
    assert {int(asc.PipeID.PIPE_M), int(asc.PipeID.PIPE_MTE1), int(asc.PipeID.PIPE_FIX),
            int(asc.PipeID.PIPE_MTE2)} <= pipes
    m_start = trace[trace[:, 3] == int(asc.PipeID.PIPE_M)][0, 0]
    mte1_end = max(t[0] + t[1] + t[2] for t in trace if t[3] == int(asc.PipeID.PIPE_MTE1))
    assert m_start >= mte1_end           # MTE1_M: the mmad starts after the loads completed
    early = flagged_flow[1](x, y, False)
    # without the MTE1_M flag the mmad does not wait for the loads: the launch is shorter
    assert early.cycles < r.cycles
    mte2_done = ASCEND910B2.dma.gm_to_l1.latency_cycles
    assert r.cycles > mte2_done + ASCEND910B2.dma.l0c_to_gm.latency_cycles


# ----------------------------------------------------------------------------- TQue alignment
@asc.kernel
def two_l0a_buffers(x: asc.GlobalAddress, y: asc.GlobalAddress):
    xg = asc.GlobalTensor(); xg.set_global_buffer(x)
    yg = asc.GlobalTensor(); yg.set_global_buffer(y)
    pipe = asc.TPipe()
    q1 = asc.TQue(asc.TPosition.A2, 1)
    q2 = asc.TQue(asc.TPosition.A2, 1)
    pipe.init_buffer(q1, 1, 100)          # rounded up to a 512-byte fractal
    pipe.init_buffer(q2, 1, 512)
    t1 = q1.alloc_tensor(asc.float16)
    t2 = q2.alloc_tensor(asc.float16)
    yg.set_value(0, t2.get_phy_addr())
    asc.load_data(t2, xg, asc.LoadData2DParams(0, 1, 0, 0, 0, False, 0))
    q1.free_tensor(t1)
    q2.free_tensor(t2)


def test_tque_buffers_on_l0a_are_fractal_aligned():
    y = np.zeros(4, np.float16)
    two_l0a_buffers[1](np.zeros(256, np.float16), y)
    assert y[0] == 512


# ----------------------------------------------------------------------------- random shapes
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(deadline=None, max_examples=25, suppress_health_check=[HealthCheck.too_slow])
@given(M=st.integers(1, 90), N=st.integers(1, 90), K=st.integers(1, 150),
       tiles=st.sampled_from([(32, 32, 32), (16, 48, 64), (64, 16, 48)]),
       bt=st.booleans(), bias=st.booleans(), seed=st.integers(0, 2 ** 16))
def test_matmul_random_shapes(M, N, K, tiles, bt, bias, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    bv = rng.standard_normal(N).astype(np.float32) if bias else None
    c, _ = _run(a, np.ascontiguousarray(b.T) if bt else b, M, N, K, tiles, bt, bv)
    ref = a.astype(np.float64) @ b.astype(np.float64) + (bv if bias else 0)
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=2e-5 * K)
