"""asc.bilinear_interpolation against ``ops/bilinear.bilinear_reference`` and a direct numpy
formulation: both repeat modes, gathered (permuted, repeated) blocks, block strides, vertical
offsets, count and bit masks; errors at the line; the sanitizer sees the V pipe's accesses; fresh
memory is refilled past what it wrote."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler.ops.bilinear import bilinear_reference
from ascendc_py.simulator import block_runner, runtime

S0, OFF, S1, D = 1024, 256, 256, 2048


@asc.kernel
def bl_kernel(x: asc.GlobalAddress, o: asc.GlobalAddress, y: asc.GlobalAddress,
              z: asc.GlobalAddress, h: int, v: int, MODE: asc.ConstExpr[bool], blk: int,
              voff: int, MASK: asc.ConstExpr[int], m0: int, m1: int, dst_at: asc.ConstExpr[int]):
    xg = asc.GlobalTensor()
    og = asc.GlobalTensor()
    yg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, S0)
    og.set_global_buffer(o, OFF)
    yg.set_global_buffer(y, S1)
    zg.set_global_buffer(z, D)
    a = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, S0)
    b = asc.LocalTensor(asc.uint32, asc.TPosition.VECIN, 4096, OFF)
    c = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 8192, S1)
    d = asc.LocalTensor(asc.float16, asc.TPosition.VECOUT, dst_at, D)
    t = asc.LocalTensor(asc.uint8, asc.TPosition.VECCALC, 65536, 1024)
    asc.data_copy(a, xg, S0)
    asc.data_copy(b, og, OFF)
    asc.data_copy(c, yg, S1)
    asc.data_copy(d, zg, D)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    if MASK == 0:
        asc.bilinear_interpolation(d, a, b, c, m0, h, MODE, blk, voff, v, t)
    else:
        asc.bilinear_interpolation(d, a, b, c, [m0, m1], h, MODE, blk, voff, v, t)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, d, D)


def _inputs(seed, h, v):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-4, 4, S0).astype(np.float16)
    o = (rng.integers(0, S0 // 16, OFF) * 32).astype(np.uint32)      # any block, repeated
    y = rng.uniform(-2, 2, S1).astype(np.float16)
    z = rng.uniform(-1, 1, D).astype(np.float16)
    return x, o, y, z


def _lanes(mask_kind, m0, m1):
    if mask_kind == 0:
        return np.arange(128) < m0
    bits = [(m0 >> i) & 1 for i in range(64)] + [(m1 >> i) & 1 for i in range(64)]
    return np.array(bits, bool)


def _direct(x, o, y, z, h, v, mode, blk, voff, lanes):
    """The documented iteration, written out independently of the reference's loops."""
    out = z.astype(np.float16).copy()
    for it in range(h * v):
        vi, hi = divmod(it, h)
        blocks = np.stack([x[o[8 * it + k] // 2:o[8 * it + k] // 2 + 16] for k in range(8)])
        scale = y[8 * it:8 * it + 8, None] if mode else np.full((8, 1), y[it], np.float16)
        prod = (blocks.astype(np.float32) * scale.astype(np.float32)).astype(np.float16)
        for k in range(8):
            at = vi * voff + k * blk * 16
            sel = lanes[16 * k:16 * k + 16]
            new = prod[k] if hi == 0 else (out[at:at + 16].astype(np.float32)
                                          + prod[k].astype(np.float32)).astype(np.float16)
            out[at:at + 16] = np.where(sel, new, out[at:at + 16])
    return out


CASES = [  # h, v, mode, blk, voff, mask kind, m0, m1
    (2, 2, False, 1, 128, 0, 128, 0),       # pyasc's kernel test's shape
    (3, 1, True, 1, 128, 0, 128, 0),
    (1, 4, True, 2, 256, 0, 100, 0),        # strided blocks, a partial count
    (5, 3, False, 1, 64, 1, 0x0F0F_F0F0_1234_5678, 0x8000_0000_0000_0001),   # overlapping rows
    (4, 2, True, 3, 400, 1, (1 << 64) - 1, 0),
    (0, 3, True, 1, 128, 0, 128, 0),        # h_repeat 0: nothing
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "h%d-v%d-%s-b%d-o%d-m%d" % c[:6])
def test_bilinear(case):
    h, v, mode, blk, voff, mk, m0, m1 = case
    x, o, y, z = _inputs(sum(case[:5]), h, v)
    out = z.copy()
    signed = [w - (1 << 64) if w >= 1 << 63 else w for w in (m0, m1)]   # int64 arguments
    bl_kernel[1](x, o, y, out, h, v, mode, blk, voff, mk, *signed, 16384)
    lanes = _lanes(mk, m0, m1)
    want = bilinear_reference(x, o, y, z, h, v, mode, blk, voff, lanes)
    np.testing.assert_array_equal(out.view(np.uint16), want.view(np.uint16))
    np.testing.assert_array_equal(want.view(np.uint16),
                                  _direct(x, o, y, z, h, v, mode, blk, voff, lanes).view(
                                      np.uint16))


def test_first_horizontal_iteration_writes():
    """NaN in dst before the call does not survive: the first iteration writes."""
    x, o, y, _ = _inputs(3, 2, 2)
    z = np.full(D, np.nan, np.float16)
    bl_kernel[1](x, o, y, z, 2, 2, False, 1, 128, 0, 128, 0, 16384)
    assert not np.isnan(z[:256]).any() and np.isnan(z[256:]).all()


# ----------------------------------------------------------------------------- errors
def _line(fn, marker: str) -> int:
    src, first = inspect.getsourcelines(fn.fn)
    return first + next(i for i, s in enumerate(src) if marker in s)


@asc.kernel
def bad_bl(CASE: asc.ConstExpr[int], k: int):
    a = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, 1024)
    f = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 512)
    b = asc.LocalTensor(asc.uint32, asc.TPosition.VECIN, 4096, 256)
    i = asc.LocalTensor(asc.int32, asc.TPosition.VECIN, 4096, 256)
    c = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 8192, 256)
    d = asc.LocalTensor(asc.float16, asc.TPosition.VECOUT, 16384, 512)
    t = asc.LocalTensor(asc.uint8, asc.TPosition.VECCALC, 65536, 1024)
    asc.duplicate(b.reinterpret_cast(asc.int32), k, 256)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if CASE == 0:
        asc.bilinear_interpolation(f, f, b, f, 64, 1, False, 1, 64, 1, t)  # case-float
    elif CASE == 1:
        asc.bilinear_interpolation(d, a, i, c, 128, 1, False, 1, 128, 1, t)  # case-offsets
    elif CASE == 2:
        asc.bilinear_interpolation(d, a, b, c, 128, 256, False, 1, 128, 1, t)  # case-h
    elif CASE == 3:
        asc.bilinear_interpolation(d, a, b, c, 129, 1, False, 1, 128, 1, t)  # case-mask
    elif CASE == 4:
        asc.bilinear_interpolation(d, a, b, c, 128, 1, False, 1, 128, 1, t)  # case-rt-offset


@pytest.mark.parametrize("case,marker,exc,text", [
    (0, "case-float", asc.KernelTypeError, "does not support float32"),
    (1, "case-offsets", asc.KernelTypeError, "src0_offset must be uint32"),
    (2, "case-h", asc.KernelValueError, "h_repeat is 256"),
    (3, "case-mask", asc.KernelValueError, "mask 129"),
])
def test_compile_errors_name_the_line(case, marker, exc, text):
    with pytest.raises(exc, match=text) as info:
        bad_bl[1](case, 0)
    assert f":{_line(bad_bl, marker)}:" in str(info.value).splitlines()[0]


@pytest.mark.parametrize("k,text", [(16, "misaligned|32"), (4096, "src0 block|outside")])
def test_offsets_are_checked_at_the_line(k, text):
    """An offset that is not a block start, or one past src0, stops the kernel at the call."""
    with pytest.raises(asc.KernelRuntimeError, match=text) as info:
        bad_bl[1](4, k)
    assert f":{_line(bad_bl, 'case-rt-offset')}:" in str(info.value)
    bad_bl[1](4, 64)


# ----------------------------------------------------------------------------- sanitizer
@asc.kernel
def racy_bl(x: asc.GlobalAddress, o: asc.GlobalAddress, y: asc.GlobalAddress,
            z: asc.GlobalAddress, SYNC: asc.ConstExpr[bool]):
    xg = asc.GlobalTensor()
    og = asc.GlobalTensor()
    yg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, S0)
    og.set_global_buffer(o, OFF)
    yg.set_global_buffer(y, S1)
    zg.set_global_buffer(z, 256)
    a = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, S0)
    b = asc.LocalTensor(asc.uint32, asc.TPosition.VECIN, 4096, OFF)
    c = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 8192, S1)
    d = asc.LocalTensor(asc.float16, asc.TPosition.VECOUT, 16384, 256)
    t = asc.LocalTensor(asc.uint8, asc.TPosition.VECCALC, 65536, 1024)
    asc.data_copy(b, og, OFF)
    asc.data_copy(c, yg, S1)
    asc.data_copy(a, xg, S0)  # load
    if SYNC:
        asc.set_flag(asc.HardEvent.MTE2_V, 0)
        asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.bilinear_interpolation(d, a, b, c, 128, 2, False, 1, 128, 2, t)  # the-op
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, d, 256)


def test_sanitizer_sees_bilinear():
    x, o, y, _ = _inputs(8, 2, 2)
    z = np.zeros(256, np.float16)
    racy_bl[1](x, o, y, z, True, sanitize=True)
    want = bilinear_reference(x, o, y, np.zeros(256, np.float16), 2, 2, False)
    np.testing.assert_array_equal(z.view(np.uint16), want.view(np.uint16))
    with pytest.raises(asc.DataRaceError) as info:
        racy_bl[1](x, o, y, z, False, sanitize=True)
    assert f":{_line(racy_bl, '# the-op')}:" in str(info.value).splitlines()[0]


# ----------------------------------------------------------------------------- fresh memory
@asc.kernel
def bl_far(x: asc.GlobalAddress, o: asc.GlobalAddress, y: asc.GlobalAddress,
           at: asc.ConstExpr[int]):
    """bilinear_interpolation into UB at byte ``at``; nothing else reaches there."""
    xg = asc.GlobalTensor()
    og = asc.GlobalTensor()
    yg = asc.GlobalTensor()
    xg.set_global_buffer(x, S0)
    og.set_global_buffer(o, OFF)
    yg.set_global_buffer(y, S1)
    a = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, S0)
    b = asc.LocalTensor(asc.uint32, asc.TPosition.VECIN, 4096, OFF)
    c = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 8192, S1)
    d = asc.LocalTensor(asc.float16, asc.TPosition.VECOUT, at)      # placed without a size
    t = asc.LocalTensor(asc.uint8, asc.TPosition.VECCALC, 12288, 32)
    asc.data_copy(a, xg, S0)
    asc.data_copy(b, og, OFF)
    asc.data_copy(c, yg, S1)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.bilinear_interpolation(d, a, b, c, 128, 2, True, 1, 128, 4, t)


@asc.kernel
def peek(z: asc.GlobalAddress, at: asc.ConstExpr[int], n: asc.ConstExpr[int]):
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, n)
    t = asc.LocalTensor(asc.float16, asc.TPosition.VECCALC, at, n)
    asc.data_copy(zg, t, n)


def test_fresh_memory_is_refilled_past_what_it_wrote(monkeypatch):
    monkeypatch.setattr(block_runner, "SERIAL_SECONDS", 1e9)
    at = 192 * 1024 - 4096
    x, o, y, _ = _inputs(1, 2, 4)
    bl_far[1](x, o, y, at)
    core = runtime._thread_cores.core
    assert int(core.dirty[0]) == at + 4 * 256            # four vertical rows of 256 bytes
    for k, (_, (_, view)) in enumerate(core.memories.items()):
        assert (view[int(core.dirty[k]):] == runtime.FRESH_MEMORY_BYTE).all()
    out = np.zeros(512, np.float16)
    peek[1](out, at, 512)
    assert (out.view(np.uint8) == runtime.FRESH_MEMORY_BYTE).all()


def test_timing_charges_each_horizontal_iteration():
    x, o, y, z = _inputs(2, 4, 4)
    r1 = bl_kernel[1](x, o, y, z.copy(), 1, 1, False, 1, 128, 0, 128, 0, 16384)
    r16 = bl_kernel[1](x, o, y, z.copy(), 4, 4, False, 1, 128, 0, 128, 0, 16384)
    assert r16.pipe_busy["V"] > r1.pipe_busy["V"] > 0
