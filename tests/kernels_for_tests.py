"""Kernels and helpers shared by several test files.

Kernels live in this real file because the compiler reads their source with ``inspect``.
``tests/`` is on ``sys.path`` (pytest puts the rootdir-level conftest's directory there), so test
files import this module as ``kernels_for_tests``.
"""
from __future__ import annotations

import numpy as np

import ascendc_py as asc

TILE = 256  # elements per tile of vadd_kernel


@asc.kernel
def vadd_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress,
                block_length: int):
    """z = x + y with one TQue per operand; block_length must be a multiple of TILE."""
    off = asc.get_block_idx() * block_length
    xg = asc.GlobalTensor()
    yg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x + off, block_length)
    yg.set_global_buffer(y + off, block_length)
    zg.set_global_buffer(z + off, block_length)
    pipe = asc.TPipe()
    qx = asc.TQue(asc.TPosition.VECIN, 1)
    qy = asc.TQue(asc.TPosition.VECIN, 1)
    qz = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(qx, 1, TILE * x.dtype.sizeof())
    pipe.init_buffer(qy, 1, TILE * x.dtype.sizeof())
    pipe.init_buffer(qz, 1, TILE * x.dtype.sizeof())
    for i in range(block_length // TILE):
        a = qx.alloc_tensor(x.dtype)
        b = qy.alloc_tensor(x.dtype)
        asc.data_copy(a, xg[i * TILE:], TILE)
        asc.data_copy(b, yg[i * TILE:], TILE)
        qx.enque(a)
        qy.enque(b)
        a = qx.deque(x.dtype)
        b = qy.deque(x.dtype)
        c = qz.alloc_tensor(x.dtype)
        asc.add(c, a, b, TILE)
        qz.enque(c)
        qx.free_tensor(a)
        qy.free_tensor(b)
        c = qz.deque(x.dtype)
        asc.data_copy(zg[i * TILE:], c, TILE)
        qz.free_tensor(c)


def assert_still_works(dtype=np.float32, blocks: int = 4) -> None:
    """Launch a correct kernel and check its result (the process survived a kernel fault)."""
    n = blocks * TILE * 2
    rng = np.random.default_rng(123)
    x = rng.standard_normal(n).astype(dtype)
    y = rng.standard_normal(n).astype(dtype)
    z = np.full(n, 7, dtype)
    vadd_kernel[blocks](x, y, z, n // blocks)
    np.testing.assert_array_equal(z, (x.astype(np.float64) + y).astype(dtype))


# ----------------------------------------------------------------------------- float comparison
def _ordered_bits(a: np.ndarray) -> np.ndarray:
    """Map floats to integers whose differences count ulps (monotonic, -0 == +0)."""
    a = np.ascontiguousarray(a)
    if a.dtype == np.float16:
        bits = a.view(np.int16).astype(np.int64)
        sign = np.int64(1 << 15)
    elif a.dtype == np.float32:
        bits = a.view(np.int32).astype(np.int64)
        sign = np.int64(1 << 31)
    else:
        raise TypeError(a.dtype)
    return np.where(bits < 0, -(bits + sign), bits)


def ulp_distance(actual: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Per-element distance in units in the last place; NaN vs NaN counts as 0."""
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    dist = np.abs(_ordered_bits(actual) - _ordered_bits(expected))
    both_nan = np.isnan(actual) & np.isnan(expected)
    return np.where(both_nan, 0, dist)


def assert_within_ulp(actual: np.ndarray, expected: np.ndarray, max_ulp: int, what: str = ""):
    """Every element within ``max_ulp`` ulps; infinities and NaNs must match exactly."""
    dist = ulp_distance(actual, expected)
    nan_mismatch = np.isnan(actual) != np.isnan(expected)
    inf_mismatch = np.isinf(actual) != np.isinf(expected)
    bad = (dist > max_ulp) | nan_mismatch | inf_mismatch
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise AssertionError(f"{what}: {int(bad.sum())} of {bad.size} elements off by more than "
                             f"{max_ulp} ulp; first at {i}: got {actual[i]!r}, expected "
                             f"{expected[i]!r} ({int(dist[i])} ulp)")


def assert_equal_values(actual: np.ndarray, expected: np.ndarray, what: str = "") -> None:
    """Exact equality (NaN equals NaN, -0.0 equals 0.0) with the first mismatch reported."""
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    np.testing.assert_array_equal(actual, expected, err_msg=what)


SHIFT = 0  # read by add_shift; tests/jit/test_cache.py changes it to check launch detection


@asc.kernel
def add_shift(v):
    """A device function reading a module constant of this (callee's) module."""
    return v + SHIFT
