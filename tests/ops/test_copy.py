"""asc.copy with CopyRepeatParams (Ascend C Copy: UB -> UB on the vector unit) against its NumPy
reference ``ops/vcopy.copy_reference`` over every dtype, contiguous and bit masks, block strides
(0, 1, 2, 3), repeat sizes (0 .. beyond the 8-bit fields of the arithmetic ops), counter mode,
and the errors a user can cause (dtype, record, field ranges, extents), each at its line; and
the sanitizer sees copy as a PIPE_V reader and writer."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler.ops import REGISTRY
from ascendc_py.compiler.ops.vcopy import copy_reference

N = 8192   # elements of each buffer (16-bit: 16 KB; 32-bit: 32 KB)


@asc.kernel
def copy_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, n: asc.ConstExpr[int],
                dt: asc.ConstExpr, mask: int, repeat: int, dst_blk: int, src_blk: int,
                dst_rep: int, src_rep: int, MODE: asc.ConstExpr[int], LO: asc.ConstExpr[int],
                HI: asc.ConstExpr[int]):
    """MODE 0: contiguous mask ``mask``; 1: bit mask [LO, HI]; 2: bit mask [LO]; 3: counter
    mode with ``mask`` elements."""
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    zg.set_global_buffer(z, n)
    a = asc.LocalTensor(dt, asc.TPosition.VECIN, 0, n)
    c = asc.LocalTensor(dt, asc.TPosition.VECOUT, 65536, n)
    asc.data_copy(a, xg, n)
    asc.data_copy(c, zg, n)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    params = asc.CopyRepeatParams(dst_blk, src_blk, dst_rep, src_rep)
    if MODE == 3:
        asc.set_mask_count()
        asc.set_vector_mask(mask, dtype=dt)
        asc.copy(c, a, mask, repeat, params, is_set_mask=False)
        asc.set_mask_norm()
    elif MODE == 1:
        asc.copy(c, a, [LO, HI], repeat, params)
    elif MODE == 2:
        asc.copy(c, a, [LO], repeat, params)
    else:
        asc.copy(c, a, mask, repeat, params)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, c, n)


DTYPES = [np.float16, np.int16, np.uint16, np.float32, np.int32, np.uint32]
ASC = {np.float16: asc.float16, np.int16: asc.int16, np.uint16: asc.uint16,
       np.float32: asc.float32, np.int32: asc.int32, np.uint32: asc.uint32}


def _inputs(npd, seed):
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2**(8 * np.dtype(npd).itemsize), N, dtype=np.uint64)
    udt = np.uint16 if np.dtype(npd).itemsize == 2 else np.uint32
    x = bits.astype(udt).view(npd)
    z = rng.integers(0, 2**16, N).astype(udt).view(npd)
    return x, z


def _run(npd, mask, repeat, dst_blk=1, src_blk=1, dst_rep=8, src_rep=8, seed=0):
    x, z = _inputs(npd, seed)
    ref = copy_reference(z, x, mask, repeat, dst_blk, src_blk, dst_rep, src_rep)
    if isinstance(mask, list):
        mode, m, lo, hi = (1 if len(mask) == 2 else 2), 1, mask[0], mask[-1]
    else:
        mode, m, lo, hi = 0, mask, 0, 0
    copy_kernel[1](x, z, N, ASC[npd], m, repeat, dst_blk, src_blk, dst_rep, src_rep, mode, lo,
                   hi)
    # compare bits: NaN payloads must move unchanged
    np.testing.assert_array_equal(z.view(np.uint8), ref.view(np.uint8))
    return z


@pytest.mark.parametrize("npd", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("mask,repeat", [(1, 1), (37, 3), ("full", 5), ("full", 0)])
def test_contiguous_mask(npd, mask, repeat):
    lanes = 256 // np.dtype(npd).itemsize
    _run(npd, lanes if mask == "full" else mask, repeat)


@pytest.mark.parametrize("npd", DTYPES, ids=lambda d: np.dtype(d).name)
def test_bit_mask(npd):
    lanes = 256 // np.dtype(npd).itemsize
    if lanes > 64:
        mask = [0x8000_0000_0000_0F0F, 0x1234_5678_9ABC_DEF1]
    else:
        mask = [0xF0F0_0000_FFFF_0001]
        _run(npd, mask + [2**64 - 1], 4)   # a second word is ignored for 32-bit lanes
    _run(npd, mask, 4)


@pytest.mark.parametrize("npd", [np.float16, np.float32], ids=["float16", "float32"])
@pytest.mark.parametrize("dst_blk,src_blk,dst_rep,src_rep", [
    (1, 2, 8, 16),      # gather every other block
    (2, 1, 16, 8),      # scatter to every other block
    (1, 0, 8, 0),       # broadcast block 0 of src to every block of every repeat
    (3, 1, 1, 8),       # dst repeats overlap: later repeats overwrite earlier ones
    (1, 1, 300, 8),     # a repeat size beyond the arithmetic ops' 8-bit field
])
def test_strides(npd, dst_blk, src_blk, dst_rep, src_rep):
    lanes = 256 // np.dtype(npd).itemsize
    repeat = 2 if dst_rep == 300 else 6
    _run(npd, lanes - 5, repeat, dst_blk, src_blk, dst_rep, src_rep)


def test_counter_mode_copies_the_count():
    """Counter mode (set_mask_count + set_vector_mask, is_set_mask=False): the mask register
    holds an element count, repeat_time is ignored; a partial last repeat is copied too."""
    npd, count = np.float32, 64 * 3 + 17
    x, z = _inputs(npd, 3)
    ref = z.copy()
    ref[:count] = x[:count]
    copy_kernel[1](x, z, N, asc.float32, count, 99, 1, 1, 8, 8, 3, 0, 0)
    np.testing.assert_array_equal(z.view(np.uint32), ref.view(np.uint32))


def test_bfloat16_with_torch():
    torch = pytest.importorskip("torch")
    x = torch.randn(N, dtype=torch.bfloat16)
    z = torch.zeros(N, dtype=torch.bfloat16)
    copy_kernel[1](x, z, N, asc.bfloat16, 100, 2, 1, 1, 8, 8, 0, 0, 0)
    ref = copy_reference(np.zeros(N, np.uint16), x.view(torch.int16).numpy().view(np.uint16),
                         100, 2)
    np.testing.assert_array_equal(z.view(torch.int16).numpy().view(np.uint16), ref)


def test_registry_entry():
    spec = REGISTRY["copy"]
    assert spec.pipe.name == "PIPE_V" and len(spec.forms) == 1
    assert {d.name for d in spec.dtypes} == {"uint16", "int16", "float16", "bfloat16", "uint32",
                                             "int32", "float32"}


def test_costs_one_vector_instruction_per_call():
    """One PIPE_V instruction priced by MOV UB->UB (1 cycle per repeat): more repeats, more V
    cycles."""
    x, z = _inputs(np.float32, 1)
    r1 = copy_kernel[1](x, z, N, asc.float32, 64, 4, 1, 1, 8, 8, 0, 0, 0)
    r2 = copy_kernel[1](x, z, N, asc.float32, 64, 64, 1, 1, 8, 8, 0, 0, 0)
    assert r1.instructions["copy"] == 1
    v1, v2 = r1.pipe_busy["V"], r2.pipe_busy["V"]
    assert v2 > v1 > 0
    assert 55 <= v2 - v1 <= 65     # 60 more repeats at 1 cycle each


# ----------------------------------------------------------------------------- errors
def _line(fn, marker: str) -> int:
    src, first = inspect.getsourcelines(fn.fn if hasattr(fn, "fn") else fn)
    return first + next(i for i, s in enumerate(src) if marker in s)


@asc.kernel
def bad_copy(x: asc.GlobalAddress, CASE: asc.ConstExpr[int], rep: int):
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 1024)
    h = asc.LocalTensor(asc.float16, asc.TPosition.VECOUT, 8192, 1024)
    b8 = asc.LocalTensor(asc.int8, asc.TPosition.VECOUT, 16384, 1024)
    c = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, 32768, 1024)
    if CASE == 0:
        asc.copy(h, a, 64, 1, asc.CopyRepeatParams())  # case-dtype
    elif CASE == 1:
        asc.copy(b8, b8, 64, 1, asc.CopyRepeatParams())  # case-int8
    elif CASE == 2:
        asc.copy(c, a, 64, 1, asc.UnaryRepeatParams())  # case-record
    elif CASE == 3:
        p = asc.CopyRepeatParams(1, 1, 4096, 8)  # case-range
        asc.copy(c, a, 64, 1, p)
    elif CASE == 4:
        asc.copy(c, a, 64, 2, asc.CopyRepeatParams(1, 1, rep, 8))  # case-runtime-range
    elif CASE == 5:
        asc.copy(c, a, 64, 32, asc.CopyRepeatParams())  # case-extent


@pytest.mark.parametrize("case,marker,exc,text", [
    (0, "case-dtype", asc.KernelTypeError, "src is float32 but dst is float16"),
    (1, "case-int8", asc.KernelTypeError, "does not support int8"),
    (2, "case-record", asc.KernelTypeError, "must be asc.CopyRepeatParams"),
    (3, "case-range", asc.KernelValueError, "dst_repeat_size is 4096"),
])
def test_compile_errors_name_the_line(case, marker, exc, text):
    with pytest.raises(exc, match=text) as info:
        bad_copy[1](np.zeros(8, np.float32), case, 8)
    assert f":{_line(bad_copy, marker)}:" in str(info.value).splitlines()[0]


def test_repeat_size_past_4095_at_run_time():
    with pytest.raises(asc.StrideRangeError) as info:
        bad_copy[1](np.zeros(8, np.float32), 4, 5000)
    assert f":{_line(bad_copy, 'case-runtime-range')}:" in str(info.value)
    bad_copy[1](np.zeros(8, np.float32), 4, 4095 // 64)    # inside the tensors: fine


def test_copy_past_the_tensor_is_an_extent_error():
    with pytest.raises(asc.TensorExtentError) as info:
        bad_copy[1](np.zeros(8, np.float32), 5, 8)
    assert f":{_line(bad_copy, 'case-extent')}:" in str(info.value)


# ----------------------------------------------------------------------------- sanitizer
@asc.kernel
def racy_copy(x: asc.GlobalAddress, z: asc.GlobalAddress, SYNC: asc.ConstExpr[bool]):
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, 256)
    zg.set_global_buffer(z, 256)
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 256)
    c = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, 1024, 256)
    asc.data_copy(a, xg, 256)  # load
    if SYNC:
        asc.set_flag(asc.HardEvent.MTE2_V, 0)
        asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.copy(c, a, 64, 4, asc.CopyRepeatParams())  # the-copy
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, c, 256)


def test_sanitizer_sees_copy_read_its_source():
    x = np.arange(256, dtype=np.float32)
    z = np.zeros(256, np.float32)
    racy_copy[1](x, z, True, sanitize=True)
    np.testing.assert_array_equal(z, x)
    with pytest.raises(asc.DataRaceError) as info:
        racy_copy[1](x, z, False, sanitize=True)
    first = str(info.value).splitlines()[0]
    assert f":{_line(racy_copy, '# the-copy')}:" in first
    assert f":{_line(racy_copy, '# load')}:" in first
