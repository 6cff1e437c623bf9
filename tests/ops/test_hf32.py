"""HF32 mode (set_hf32_mode / set_hf32_trans_mode, ``ops/sysctl.py``): float32 mmad operands are
read rounded to HF32 by the mode's rounding, against ``hf32_reference`` and mmad's reference."""
from __future__ import annotations

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler.ops.cube import mmad_reference
from ascendc_py.compiler.ops.sysctl import hf32_reference
from ascendc_py.dsl.types import float32

M = N = 16
K = 8        # one 16 x 8 float32 fractal of A (ZZ), one 8 x 16 of B (ZN)


@asc.kernel
def hf32_mmad(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress, on: int,
              away: int, OFF_AFTER: asc.ConstExpr[int]):
    ag = asc.GlobalTensor(); ag.set_global_buffer(a)
    bg = asc.GlobalTensor(); bg.set_global_buffer(b)
    cg = asc.GlobalTensor(); cg.set_global_buffer(c)
    pipe = asc.TPipe()
    ta = asc.TBuf(asc.TPosition.A2)
    tb = asc.TBuf(asc.TPosition.B2)
    tc = asc.TBuf(asc.TPosition.CO1)
    pipe.init_buffer(ta, 512)
    pipe.init_buffer(tb, 512)
    pipe.init_buffer(tc, 1024)
    l0a = ta.get(asc.float32)
    l0b = tb.get(asc.float32)
    l0c = tc.get(asc.float32)
    asc.load_data(l0a, ag, asc.LoadData2DParams(0, 1, 1, 0, 0, False, 0))
    asc.load_data(l0b, bg, asc.LoadData2DParams(0, 1, 1, 0, 0, False, 0))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.set_hf32_mode(on != 0)
    asc.set_hf32_trans_mode(away != 0)
    if OFF_AFTER:
        asc.set_hf32_mode(False)
    asc.mmad(l0c, l0a, l0b, asc.MmadParams(M, N, K, 0, False, True))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.fixpipe(cg, l0c, asc.FixpipeParamsV220(N, M, M, M * 16 * 4 // 32, asc.QuantModes.NoQuant),
                asc.FixpipeConfig.cfg_nz())


def _inputs(seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(128).astype(np.float32)
    b = rng.standard_normal(128).astype(np.float32)
    return a, b


@pytest.mark.parametrize("on,away,off_after", [(0, 0, 0), (1, 0, 0), (1, 1, 0), (1, 1, 1)])
def test_mmad_reads_hf32_operands(on, away, off_after):
    a, b = _inputs(on + 2 * away)
    c = np.zeros(256, np.float32)
    hf32_mmad[1](a, b, c, on, away, off_after)
    used = on and not off_after
    ra, rb = (hf32_reference(a, bool(away)), hf32_reference(b, bool(away))) if used else (a, b)
    want = mmad_reference(np.zeros(256, np.float32), ra, rb, M, N, K, float32)
    np.testing.assert_allclose(c, want, rtol=1e-6, atol=1e-6)
    other = mmad_reference(np.zeros(256, np.float32), *((a, b) if used else
                                                        (hf32_reference(a), hf32_reference(b))),
                           M, N, K, float32)
    assert np.abs(other - c).max() > 1e-4            # the rounding is visible in the result


def test_rounding_modes_on_ties():
    one = 1.0 + 2.0 ** -10                       # exactly representable in HF32
    tie_even = np.float32(1.0 + 2.0 ** -11)          # halfway between 1 and one: to even (1)
    tie_odd = np.float32(one + 2.0 ** -11)           # halfway between one and 1 + 2**-9
    x = np.array([tie_even, tie_odd, -tie_even, np.inf, -np.inf, 3.0], np.float32)
    even = hf32_reference(x)
    away = hf32_reference(x, away=True)
    assert list(even[:3]) == [1.0, np.float32(1 + 2.0 ** -9), -1.0]
    assert list(away[:3]) == [np.float32(one), np.float32(1 + 2.0 ** -9), -np.float32(one)]
    assert list(even[3:]) == [np.inf, -np.inf, 3.0] and np.isnan(hf32_reference([np.nan]))[0]


@pytest.mark.parametrize("away", [0, 1])
def test_the_cube_rounds_ties_like_the_reference(away):
    """B = identity on the first 8 columns: C[i, j] is A[i, j] as the cube read it."""
    tie = np.float32(1.0 + 2.0 ** -11)
    a = np.full(128, tie, np.float32)
    a[::3] = np.float32(-(1.0 + 3 * 2.0 ** -11))     # ties with an odd kept bit
    eye = np.zeros((K, N), np.float32)
    eye[np.arange(K), np.arange(K)] = 1.0
    # ZN layout of a single 8 x 16 fractal: element (p, j) at j * 8 + p
    b = eye.T.reshape(-1).copy()
    c = np.zeros(256, np.float32)
    hf32_mmad[1](a, b, c, 1, away, 0)
    want = mmad_reference(np.zeros(256, np.float32), hf32_reference(a, bool(away)), b, M, N, K,
                          float32)
    np.testing.assert_array_equal(c, want)
