"""axpy with a float16 source and a float32 destination (Ascend C Axpy<float, half>), in both
call forms, against an independent NumPy model; other mixed pairs are compile errors."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import ascendc_py as asc

N = 512


@asc.kernel
def axpy_mixed(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int, scalar: float,
               MODE: asc.ConstExpr[int], MASK: asc.ConstExpr[int], SRC_REP: asc.ConstExpr[int]):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y)
    s = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, 2 * N)
    d = asc.LocalTensor(y.dtype, asc.TPosition.VECOUT, 8192, N)
    asc.data_copy(s, xg, 2 * N)
    asc.data_copy(d, yg, N)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if MODE == 0:
        asc.axpy(d, s, scalar, n)
    else:
        asc.axpy(d, s, scalar, MASK, n // 64, asc.UnaryRepeatParams(1, 1, 8, SRC_REP))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(yg, d, N)


def model(y0, x, scalar, n, mode, mask, src_rep):
    """Per lane: d = d + float(x) * float(half(scalar)), float32 arithmetic."""
    s = np.float32(np.float16(scalar))
    y = y0.copy()
    if mode == 0:
        y[:n] = y0[:n] + x[:n].astype(np.float32) * s
        return y
    for r in range(n // 64):
        for lane in range(mask):
            src = r * src_rep * 16 + lane   # src blocks hold 16 halves; contiguous within
            y[r * 64 + lane] = y0[r * 64 + lane] + np.float32(x[src]) * s
    return y


@settings(deadline=None, max_examples=25)
@given(n=st.sampled_from([64, 128, 256, 512]), mode=st.sampled_from([0, 1]),
       mask=st.integers(1, 64), src_rep=st.sampled_from([4, 8]),
       scalar=st.floats(-4, 4, allow_nan=False), seed=st.integers(0, 2**16))
def test_axpy_float16_into_float32(n, mode, mask, src_rep, scalar, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(2 * N).astype(np.float16)
    y0 = rng.standard_normal(N).astype(np.float32)
    y = y0.copy()
    axpy_mixed[1](x, y, n, scalar, mode, mask, src_rep)
    np.testing.assert_array_equal(y, model(y0, x, scalar, n, mode, mask, src_rep))


def test_registry_reference_matches():
    from ascendc_py.compiler.ops import REGISTRY
    rng = np.random.default_rng(1)
    x = rng.standard_normal(64).astype(np.float16)
    y0 = rng.standard_normal(64).astype(np.float32)
    ref = REGISTRY["axpy"].reference(y0, x, 0.3)
    np.testing.assert_array_equal(ref, model(y0, x, 0.3, 64, 0, 64, 8))


@asc.kernel
def axpy_bad(x: asc.GlobalAddress, y: asc.GlobalAddress):
    s = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, 64)
    d = asc.LocalTensor(y.dtype, asc.TPosition.VECOUT, 4096, 64)
    asc.axpy(d, s, 1.0, 64)  # <- float32 src into float16 dst


def test_other_mixed_pairs_are_compile_errors():
    with pytest.raises(asc.KernelTypeError) as info:
        axpy_bad[1](np.zeros(64, np.float32), np.zeros(64, np.float16))
    text = str(info.value)
    assert "src is float32 but dst is float16" in text
    assert "test_axpy_mixed.py:" in text.splitlines()[0]
