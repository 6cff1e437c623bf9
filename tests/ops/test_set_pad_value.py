"""set_pad_value: the padding register of data_copy_pad GM->UB. While it is set, a copy whose
DataCopyPadExtParams say is_pad=False pads (left, right and the dummies to the 32-byte block)
with its value converted to the copy's dtype as a run-time scalar cast does (to nearest for
floats, toward zero and saturating for integers); is_pad=True keeps the params' padding_value; it
lasts for the rest of the block (a new block starts without it). Against
``data_copy_pad_reference`` with the register's value as an explicit pad."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler.ops.movement import data_copy_pad_reference

N = 64


@asc.kernel
def pad_copy(x: asc.GlobalAddress, z: asc.GlobalAddress, rows: int, row_len: int, left: int,
             right: int, is_pad: int, set_in_block0: int, value: float):
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, N)
    zg.set_global_buffer(z + asc.get_block_idx() * N, N)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECIN)
    pipe.init_buffer(buf, N * 8)
    t = buf.get(x.dtype)
    asc.duplicate(t, asc.number(-5, x.dtype), N)       # what unspecified padding leaves
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if set_in_block0 and asc.get_block_idx() == 0:
        asc.set_pad_value(value)
    asc.data_copy_pad(t, xg, asc.DataCopyExtParams(rows, row_len * x.dtype.sizeof(), 0, 0, 0),
                      asc.DataCopyPadExtParams(x.dtype, is_pad != 0, left, right, 9))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(zg, t, N)


def run(dtype, rows, row_len, left, right, is_pad, set_reg, value=37.0, blocks=1):
    x = (np.arange(N) + 1).astype(dtype)
    z = np.zeros(blocks * N, dtype)
    pad_copy[blocks](x, z, rows, row_len, left, right, is_pad, set_reg, value)
    return x, z.reshape(blocks, N)


def expected(x, rows, row_len, left, right, pad):
    start = np.full(N, -5).astype(x.dtype)
    return data_copy_pad_reference(start, x, (rows, row_len * x.itemsize, 0, 0), pad)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.int16, np.int32, np.uint16])
@pytest.mark.parametrize("rows, row_len, left, right", [(1, 7, 0, 1), (2, 5, 1, 2), (2, 3, 0, 0)])
def test_register_pads_a_copy_without_is_pad(dtype, rows, row_len, left, right):
    if np.dtype(dtype).itemsize * (left + right + row_len) > 32 * 2 or \
            np.dtype(dtype).itemsize * max(left, right) > 32:
        pytest.skip("paddings past 32 bytes")
    x, z = run(dtype, rows, row_len, left, right, 0, 1)
    want = expected(x, rows, row_len, left, right, (True, left, right, dtype(37)))
    np.testing.assert_array_equal(z[0], want)


@pytest.mark.parametrize("dtype", [np.float16, np.int32])
def test_is_pad_keeps_the_params_value(dtype):
    x, z = run(dtype, 2, 5, 1, 2, 1, 1)
    np.testing.assert_array_equal(z[0], expected(x, 2, 5, 1, 2, (True, 1, 2, dtype(9))))


def test_without_the_register_nothing_changes():
    x, z = run(np.float32, 2, 5, 1, 2, 0, 0)
    np.testing.assert_array_equal(z[0], expected(x, 2, 5, 1, 2, (False, 1, 2, 0)))
    x, z = run(np.float32, 2, 5, 0, 0, 0, 0)         # no paddings: dummies repeat the first
    np.testing.assert_array_equal(z[0], expected(x, 2, 5, 0, 0, None))


def test_value_converts_as_a_store_and_lasts_only_for_its_block():
    x, z = run(np.float16, 1, 7, 0, 1, 0, 1, value=2.2, blocks=2)
    np.testing.assert_array_equal(z[0], expected(x, 1, 7, 0, 1, (True, 0, 1, np.float16(2.2))))
    np.testing.assert_array_equal(z[1], expected(x, 1, 7, 0, 1, (False, 0, 1, 0)))
    x, z = run(np.int16, 1, 7, 0, 1, 0, 1, value=-7.9)     # toward zero, as a scalar cast
    assert z[0][7] == -7
    x, z = run(np.int16, 1, 7, 0, 1, 0, 1, value=70000.0)  # and saturating
    assert z[0][7] == 32767


def test_pos_outside_the_gm_to_ub_destinations_is_an_error_at_its_line():
    def k(x: asc.GlobalAddress):
        asc.set_pad_value(37, asc.TPosition.A1)
    with pytest.raises(asc.KernelError) as e:
        asc.kernel(k)[1](np.zeros(8, np.float32))
    assert e.value.loc.line == inspect.getsourcelines(k)[1] + 1
    assert "TPosition.VECIN or VECOUT" in str(e.value)


def test_pyasc_forms_compile():
    @asc.kernel
    def k(x: asc.GlobalAddress):
        asc.set_pad_value(37)
        asc.set_pad_value(37, asc.TPosition.VECIN)
        asc.set_pad_value(1.5, pos=asc.TPosition.VECOUT)
    k[1](np.zeros(8, np.float32))
