"""Local memory starts fresh for every block (issue 11 §2): UB, L1 and the L0 buffers hold
0xFF bytes (float NaN, integer -1) when a block starts, whatever an earlier block or launch
left there and whichever host thread runs the block. (Before, a kernel reading UB it never
wrote got an earlier launch's data.)"""
from __future__ import annotations

import numpy as np

from ascendc_py.simulator.runtime import FRESH_MEMORY_BYTE

import kernels_access as K

N = K.N


def test_the_fill_byte_is_nan_and_minus_one():
    assert FRESH_MEMORY_BYTE == 0xFF
    assert np.isnan(np.frombuffer(bytes([0xFF] * 4), np.float32)).all()
    assert (np.frombuffer(bytes([0xFF] * 4), np.int32) == -1).all()


def test_nothing_carries_over_from_an_earlier_launch():
    y = np.zeros(8 * N, np.int32)
    for _ in range(2):
        K.ub_store[8](y, 5)                  # every host thread's UB now holds 5s
        assert (y == 5).all()
        K.ub_peek[8](y, 0)                   # the same buffers, never written
        assert (y == -1).all()


def test_nothing_carries_over_between_blocks_of_one_launch():
    """More blocks than host threads: odd blocks run on threads whose UB an even block
    filled with 7 just before."""
    y = np.zeros(16 * N, np.int32)
    K.ub_store_then_peek[16](y)
    blocks = y.reshape(16, N)
    assert (blocks[0::2] == 7).all()
    assert (blocks[1::2] == -1).all()


def test_a_fresh_l0c_reads_as_nan():
    z = np.zeros(256, np.float32)
    K.fixpipe_out[1](z)
    assert np.isnan(z).all()
    assert (z.view(np.uint32) == 0xFFFFFFFF).all()
