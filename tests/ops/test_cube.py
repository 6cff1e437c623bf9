"""The cube unit against its NumPy references (ops/cube.py): data_copy with Nd2NzParams,
load_data, mmad and fixpipe on raw layouts over dtypes, odd m/n/k, transposes, repeat/stride
parameters; the canonical matmul flow as a kernel vs numpy matmul (tests/ops/test_cube_flow.py
has the timing and error tests)."""
from __future__ import annotations

import numpy as np
import pytest

from ascendc_py.compiler.ops.cube import (QuantModes, c0_of, fixpipe_reference,
                                          load2d_reference, mmad_reference, nd2nz_reference)
from ascendc_py.dsl.types import bfloat16, float16, float32, int8, int16, uint8

from kernels_cube import (fixpipe_kernel, load2d_kernel, mmad_kernel, nd2nz_kernel)

RNG = np.random.default_rng(7)


def _data(dtype, n):
    if np.dtype(dtype).kind == "f":
        return RNG.standard_normal(n).astype(dtype)
    info = np.iinfo(dtype)
    return RNG.integers(max(info.min, -100), min(info.max, 100), n).astype(dtype)


def _ceil(a, b):
    return -(-a // b)


# ----------------------------------------------------------------------------- ND2NZ
ND2NZ_CASES = [
    (1, 16, 32, 0, 32, 16, 1, 0),        # one aligned matrix
    (1, 16, 23, 0, 32, 16, 1, 0),        # the docs' "continuous" example: d not aligned
    (2, 8, 23, 384, 32, 37, 2, 320),     # the docs' "non-continuous" example
    (1, 30, 70, 0, 70, 32, 1, 0),        # odd rows and columns
    (3, 5, 9, 50, 10, 6, 1, 96),         # several matrices, odd everything
    (0, 5, 9, 0, 10, 6, 1, 0),           # nd_num 0: no-op
    (2, 4, 16, 0, 16, 4, 1, 64),         # src_nd_matrix_stride 0 repeats the first matrix
]


@pytest.mark.parametrize("dtype", [np.float16, np.int8, np.float32, np.int16, np.uint8,
                                   np.int32])
@pytest.mark.parametrize("params", ND2NZ_CASES)
def test_nd2nz(dtype, params):
    esize = np.dtype(dtype).itemsize
    n_l1 = 16384 // esize
    nd, nv, dv, smat, sd, c0s, ns, dmat = params
    x = _data(dtype, max(nd - 1, 0) * smat + max(nv - 1, 0) * sd + dv + 64)
    bg = _data(dtype, n_l1)
    z = np.zeros(n_l1, dtype)
    c0 = 32 // esize
    if dv > sd and nd:
        pytest.skip("rows overlap")
    need = (nd - 1) * dmat + (nv - 1) * ns * c0 + (_ceil(dv, c0) - 1) * c0s * c0 + c0
    if nd and need > n_l1:
        pytest.skip("does not fit")
    nd2nz_kernel[1](x, bg, z, n_l1, *params)
    np.testing.assert_array_equal(z, nd2nz_reference(bg, x, params))


def test_nd2nz_matches_hand_layout():
    """A 30×40 float16 matrix lands in 16×16 fractals, column-major, zero-padded to 32 rows?
    No: rows beyond 30 keep L1's old bytes; the columns 40..47 of each row are zeros."""
    a = np.arange(30 * 40, dtype=np.float16).reshape(30, 40)
    n_l1 = 32 * 48
    bg = np.full(n_l1, 7, np.float16)
    z = np.zeros(n_l1, np.float16)
    nd2nz_kernel[1](a.reshape(-1), bg, z, n_l1, 1, 30, 40, 0, 40, 32, 1, 0)
    frac = z.reshape(3, 32, 16)           # column block kb, row, column in block
    for kb in range(3):
        cols = a[:, kb * 16:kb * 16 + 16]
        np.testing.assert_array_equal(frac[kb, :30, :cols.shape[1]], cols)
        assert (frac[kb, :30, cols.shape[1]:] == 0).all()
        assert (frac[kb, 30:] == 7).all()


# ----------------------------------------------------------------------------- load_data
@pytest.mark.parametrize("dtype", [np.float16, np.int8, np.float32, np.int16])
@pytest.mark.parametrize("to_b", [False, True])
@pytest.mark.parametrize("params", [(0, 4, 1, 0, 0), (1, 4, 2, 2, 0), (0, 3, 0, 1, 0),
                                    (6, 4, 2, 0, 1), (0, 0, 1, 0, 0)])
def test_load2d(dtype, to_b, params):
    start, rep, ss, gap, mode = params
    esize = np.dtype(dtype).itemsize
    n_l1 = 16 * 512 // esize
    n_l0 = 16 * 512 // esize
    x = _data(dtype, n_l1)
    z = np.zeros(n_l0, dtype)
    load2d_kernel[1](x, z, n_l1, n_l0, start, rep, ss, gap, False, mode, to_b, False)
    ref = load2d_reference(np.zeros(n_l0, dtype), x, (start, rep, ss, 0, gap, False, mode))
    np.testing.assert_array_equal(z, ref)


@pytest.mark.parametrize("dtype", [np.float16, np.int16, np.uint16])
@pytest.mark.parametrize("to_b", [False, True])
def test_load2d_transpose(dtype, to_b):
    n = 8 * 256
    x = _data(dtype, n)
    z = np.zeros(n, dtype)
    load2d_kernel[1](x, z, n, n, 1, 3, 2, 1, True, 0, to_b, False)
    ref = load2d_reference(np.zeros(n, dtype), x, (1, 3, 2, 0, 1, True, 0))
    np.testing.assert_array_equal(z, ref)
    # the first fractal out is fractal 1 of x, transposed
    np.testing.assert_array_equal(z[:256].reshape(16, 16), x[256:512].reshape(16, 16).T)


def test_load2d_from_gm():
    n = 8 * 256
    x = _data(np.float16, n)
    z = np.zeros(n, np.float16)
    load2d_kernel[1](x, z, n, n, 2, 3, 1, 0, False, 0, False, True)
    np.testing.assert_array_equal(z, load2d_reference(np.zeros(n, np.float16), x,
                                                      (2, 3, 1, 0, 0, False, 0)))


# ----------------------------------------------------------------------------- mmad
def _mmad_inputs(dt, m, n, k, m2):
    k0 = c0_of(dt)
    mm = max(m, m2)
    na = max(_ceil(mm, 16) * _ceil(k, k0) * 512 // dt.sizeof(), 256)
    nb = _ceil(k, k0) * _ceil(n, 16) * 512 // dt.sizeof()
    nc = _ceil(mm, 16) * _ceil(n, 16) * 256
    np_t = {float16: np.float16, float32: np.float32, int8: np.int8}[dt]
    return _data(np_t, na), _data(np_t, nb), na, nb, nc


MMAD_SHAPES = [(16, 16, 16), (30, 40, 70), (5, 3, 7), (33, 17, 100), (64, 48, 32), (1, 20, 40),
               (2, 1, 1)]


@pytest.mark.parametrize("dt", [float16, float32, int8])
@pytest.mark.parametrize("shape", MMAD_SHAPES)
@pytest.mark.parametrize("init2", [False, True])
def test_mmad_raw(dt, shape, init2):
    m, n, k = shape
    a, b, na, nb, nc = _mmad_inputs(dt, m, n, k, m)
    acc = np.int32 if dt == int8 else np.float32
    bias = np.zeros(_ceil(n, 16) * 16, acc)
    c = np.zeros(nc, acc)
    mmad_kernel[1](a, b, bias, c, na, nb, nc, len(bias), m, n, k, m, init2, False)
    ref = mmad_reference(np.zeros(nc, acc), a, b, m, n, k, dt, init=True)
    ref = mmad_reference(ref, a, b, m, n, k, dt, init=init2)
    if dt == int8:
        np.testing.assert_array_equal(c, ref)
    else:
        np.testing.assert_allclose(c, ref, rtol=2e-6 * k, atol=1e-5 * k)


@pytest.mark.parametrize("dt", [float16, float32, int8])
def test_mmad_bias(dt):
    m, n, k = 20, 37, 45
    a, b, na, nb, nc = _mmad_inputs(dt, m, n, k, m)
    acc = np.int32 if dt == int8 else np.float32
    bias = (_data(np.int16, 48).astype(np.int32) if dt == int8 else _data(np.float32, 48))
    c = np.zeros(nc, acc)
    mmad_kernel[1](a, b, bias, c, na, nb, nc, 48, m, n, k, m, False, True)
    ref = mmad_reference(np.zeros(nc, acc), a, b, m, n, k, dt, bias=bias)
    ref = mmad_reference(ref, a, b, m, n, k, dt, init=False)
    if dt == int8:
        np.testing.assert_array_equal(c, ref)
    else:
        np.testing.assert_allclose(c, ref, rtol=1e-4, atol=1e-4)


def test_mmad_gemv_reads_a_contiguously():
    """m == 1: the cube reads the k elements of A contiguously (GEMV), not as ZZ fractals."""
    k, n = 40, 20
    a, b, na, nb, nc = _mmad_inputs(float16, 1, n, k, 1)
    c = np.zeros(nc, np.float32)
    mmad_kernel[1](a, b, np.zeros(32, np.float32), c, na, nb, nc, 32, 1, n, k, 1, True, False)
    from ascendc_py.compiler.ops.cube import nz_index, zn_to_matrix
    row = a[:k].astype(np.float64) @ zn_to_matrix(b, k, n, float16).astype(np.float64)
    np.testing.assert_allclose(c[nz_index(1, n, 1)][0], row, rtol=1e-5, atol=1e-4)


def test_mmad_bfloat16():
    torch = pytest.importorskip("torch")
    m, n, k = 18, 33, 50
    na = _ceil(m, 16) * _ceil(k, 16) * 256
    nb = _ceil(k, 16) * _ceil(n, 16) * 256
    nc = _ceil(m, 16) * _ceil(n, 16) * 256
    a = torch.randn(na).to(torch.bfloat16)
    b = torch.randn(nb).to(torch.bfloat16)
    c = torch.zeros(nc)
    mmad_kernel[1](a, b, torch.zeros(48), c, na, nb, nc, 48, m, n, k, m, True, False)
    bits = lambda t: t.view(torch.int16).numpy().view(np.uint16)  # noqa: E731
    ref = mmad_reference(np.zeros(nc, np.float32), bits(a), bits(b), m, n, k, bfloat16)
    np.testing.assert_allclose(c.numpy(), ref, rtol=1e-5, atol=1e-4)


# ----------------------------------------------------------------------------- fixpipe
def _fixpipe(dt_in, m, n, k, out_np, quant, relu=False, nz=False, deq=0, nd=(1, 0, 0),
             ss=None, ds=None, ns=None, ms=None, extra=0):
    a, b, na, nb, nc = _mmad_inputs(dt_in, m, n, k, m)
    acc = np.int32 if dt_in == int8 else np.float32
    raw = np.zeros(nc, acc)
    ns = ns if ns is not None else n
    ms = ms if ms is not None else m
    ss = ss if ss is not None else _ceil(m, 16) * 16
    ds = ds if ds is not None else n
    size = nc * 2 + extra
    if out_np == "bf16":   # numpy has no bfloat16: a torch tensor, compared as uint16 bits
        import torch
        zt = torch.zeros(size, dtype=torch.bfloat16)
        fixpipe_kernel[1](a, b, raw, zt, na, nb, nc, m, n, k, ns, ms, ss, ds, deq, *nd, relu,
                          int(quant), nz)
        z = zt.view(torch.int16).numpy().view(np.uint16)
        ref = fixpipe_reference(np.zeros(size, np.uint16), raw, ns, ms, ss, ds, quant, deq,
                                *nd, relu=relu, layout=0 if nz else 1, out_dtype=bfloat16)
        return z, ref, raw
    z = np.zeros(size, out_np)
    fixpipe_kernel[1](a, b, raw, z, na, nb, nc, m, n, k, ns, ms, ss, ds, deq, *nd, relu,
                      int(quant), nz)
    ref = fixpipe_reference(np.zeros(size, out_np), raw, ns, ms, ss, ds, quant, deq, *nd,
                            relu=relu, layout=0 if nz else 1)
    return z, ref, raw


@pytest.mark.parametrize("shape", [(16, 16, 16), (30, 37, 50), (5, 3, 9), (40, 64, 20)])
@pytest.mark.parametrize("relu", [False, True])
def test_fixpipe_nd_f32(shape, relu):
    z, ref, raw = _fixpipe(float16, *shape, np.float32, QuantModes.NoQuant, relu)
    np.testing.assert_array_equal(z, ref)
    m, n, _ = shape
    from ascendc_py.compiler.ops.cube import nz_index
    full = raw[nz_index(m, n, _ceil(m, 16))]
    np.testing.assert_array_equal(z[:m * n].reshape(m, n), np.maximum(full, 0) if relu else full)


@pytest.mark.parametrize("relu", [False, True])
def test_fixpipe_f16_and_bf16(relu):
    z, ref, _ = _fixpipe(float16, 30, 40, 33, np.float16, QuantModes.F322F16, relu)
    np.testing.assert_array_equal(z, ref)
    pytest.importorskip("torch")
    z, ref, raw = _fixpipe(float32, 30, 40, 33, "bf16", QuantModes.F322BF16, relu)
    np.testing.assert_array_equal(z, ref)


def test_fixpipe_int32_and_deqf16():
    z, ref, _ = _fixpipe(int8, 20, 24, 64, np.int32, QuantModes.NoQuant, True)
    np.testing.assert_array_equal(z, ref)
    scale = np.array([0.125], np.float32).view(np.uint32)[0]
    for deq, relu in ((int(scale), False), (int(scale), True), (int(scale) | (1 << 36) | (2 << 32),
                                                                 False)):
        z, ref, _ = _fixpipe(int8, 20, 24, 64, np.float16, QuantModes.DEQF16, relu, deq=deq)
        np.testing.assert_array_equal(z, ref)


def test_fixpipe_nz_and_nd_num():
    z, ref, _ = _fixpipe(float16, 32, 32, 16, np.float32, QuantModes.NoQuant, nz=True,
                         ns=32, ds=40)
    np.testing.assert_array_equal(z, ref)
    # two 16-column halves of L0C as two ND matrices: src_nd_stride 2 fractals, dst apart 700
    z, ref, _ = _fixpipe(float16, 32, 32, 16, np.float32, QuantModes.NoQuant, ns=16, ms=32,
                         nd=(2, 2, 700), ds=20, extra=1000)
    np.testing.assert_array_equal(z, ref)


def test_int16_view_is_not_a_cube_type():
    assert int16 not in (float16, float32, int8) and uint8.bits == 8


# ----------------------------------------------------------------------------- with transpose
@pytest.mark.parametrize("dtype", [np.float16, np.int8, np.float32, np.int32, np.uint8])
@pytest.mark.parametrize("to_b", [False, True])
@pytest.mark.parametrize("params", [(0, 2, 1, 0, 0, 0), (1, 3, 1, 1, 0, 0), (0, 2, 1, 0, 2, 0),
                                    (3, 2, 1, 2, 0, 1), (0, 0, 1, 0, 0, 0)])
def test_load2d_with_transpose(dtype, to_b, params):
    from ascendc_py.compiler.ops.cube import load2d_transpose_reference
    from kernels_cube import load2d_t_kernel
    esize = np.dtype(dtype).itemsize
    n = 16 * 512 // esize
    x = _data(dtype, n)
    z = np.zeros(n, dtype)
    load2d_t_kernel[1](x, z, n, n, *params, to_b)
    np.testing.assert_array_equal(z, load2d_transpose_reference(np.zeros(n, dtype), x, params))


def test_transpose_square_shapes():
    from ascendc_py.compiler.ops.cube import transpose_square
    x8 = np.arange(1024).astype(np.int32).astype(np.int8)
    f0, f1 = transpose_square(x8, 0)
    sq = x8.reshape(32, 32)
    np.testing.assert_array_equal(f0.reshape(16, 32), sq.T[:16])
    x32 = np.arange(256, dtype=np.float32)
    g0, g1 = transpose_square(x32, 0)
    s = np.hstack([x32[:128].reshape(16, 8), x32[128:].reshape(16, 8)])
    np.testing.assert_array_equal(g1.reshape(16, 8), s.T[:, 8:])


@pytest.mark.parametrize("shape", [(16, 32, 32), (20, 70, 40), (1, 40, 9), (33, 64, 100)])
def test_int8_b_kn_through_load_data_with_transpose(shape):
    from kernels_cube import int8_kn_matmul
    M, K, N = shape
    a = RNG.integers(-128, 128, (M, K)).astype(np.int8)
    b = RNG.integers(-128, 128, (K, N)).astype(np.int8)
    c = np.zeros((M, N), np.int32)
    int8_kn_matmul[1](a, b, c, M, K, N)
    np.testing.assert_array_equal(c, a.astype(np.int64) @ b.astype(np.int64))
