"""set_load_data_boundary (Ascend C SetLoadDataBoundary, ops/load3d.py): load_data 3D reads of
the feature map at L1 offsets at or past the boundary wrap to the start of L1; its checks at
the line (compile time for constants, run time through the load)."""
from __future__ import annotations

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler.errors import CubeParamError, KernelCompileError
from ascendc_py.compiler.ops.load3d import load3d_reference, output_size

L1_ELEMS = 2048          # float16: 4096 bytes of L1, the TBuf at the start of L1


@asc.kernel
def boundary_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, n_l0: int, off: int,
                    boundary: int, h: int, w: int, SET: asc.ConstExpr[bool]):
    """z = L0A after a 3x3 img2col (pad 1) of the 1-block map at L1 element ``off``, with
    set_load_data_boundary(boundary) first when SET."""
    xg = asc.GlobalTensor(); xg.set_global_buffer(x)
    zg = asc.GlobalTensor(); zg.set_global_buffer(z)
    pipe = asc.TPipe()
    b1 = asc.TBuf(asc.TPosition.A1)
    b2 = asc.TBuf(asc.TPosition.A2)
    pipe.init_buffer(b1, L1_ELEMS * 2)
    pipe.init_buffer(b2, n_l0 * 2)
    l1 = b1.get(x.dtype)
    l0 = b2.get(x.dtype)
    asc.data_copy(l1, xg, L1_ELEMS)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if SET:
        asc.set_load_data_boundary(boundary)
    asc.load_data(l0, l1[off:], asc.LoadData3DParamsV2([1, 1, 1, 1], h, w, 16, 144, h * w, 0,
                                                       0, 1, 1, 3, 3, 1, 1, False, -1.0))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    for i in range(n_l0):
        zg.set_value(i, l0.get_value(i))


def _expected(fmap, h, w):
    params = (1, 1, 1, 1, h, w, 16, 144, h * w, 0, 0, 1, 1, 3, 3, 1, 1, 0, 0, 0, 0, -1.0)
    n_l0 = -(-h * w // 16) * 16 * 144
    return load3d_reference(np.zeros(n_l0, np.float16), fmap, params), n_l0


@pytest.mark.parametrize("h,w,off", [(5, 7, 768), (4, 4, 896)])
def test_reads_past_the_boundary_wrap_to_the_start_of_l1(h, w, off):
    rng = np.random.default_rng(h * w)
    fmap = rng.standard_normal(h * w * 16).astype(np.float16)
    boundary = 2048                        # bytes: the map starts below it and runs past it
    first = (boundary - off * 2) // 2      # elements before the boundary
    assert 0 < first < fmap.size
    x = np.full(L1_ELEMS, 7.0, np.float16)
    x[off:off + first] = fmap[:first]
    x[:fmap.size - first] = fmap[first:]   # the rest, from L1 offset 0
    want, n_l0 = _expected(fmap, h, w)
    z = np.zeros(n_l0, np.float16)
    boundary_kernel[1](x, z, n_l0, off, boundary, h, w, True)
    assert np.array_equal(z.view(np.uint16), want.view(np.uint16))
    # without the boundary the same L1 reads straight on: a different (unwrapped) result
    z0 = np.zeros(n_l0, np.float16)
    boundary_kernel[1](x, z0, n_l0, off, boundary, h, w, False)
    assert not np.array_equal(z0, want)
    unwrapped = x[off:off + fmap.size]
    assert np.array_equal(z0.view(np.uint16), _expected(unwrapped, h, w)[0].view(np.uint16))


def test_zero_boundary_is_no_boundary():
    h, w, off = 5, 7, 768
    x = np.random.default_rng(1).standard_normal(L1_ELEMS).astype(np.float16)
    want, n_l0 = _expected(x[off:off + h * w * 16], h, w)
    z = np.zeros(n_l0, np.float16)
    boundary_kernel[1](x, z, n_l0, off, 0, h, w, True)
    assert np.array_equal(z.view(np.uint16), want.view(np.uint16))


@pytest.mark.parametrize("boundary,off,match", [
    (512, 0, "0 \\(none\\) or at least 1024"),           # below the minimum
    (1024, 512, "below the boundary"),                    # the map starts at/after it
    (1536, 0, "at most the boundary"),                    # 7x16x32 B = 3584 > 1536
])
def test_runtime_errors_name_the_load_line(boundary, off, match):
    h, w = 7, 16
    n_l0 = -(-h * w // 16) * 16 * 144
    x = np.zeros(L1_ELEMS, np.float16)
    with pytest.raises(CubeParamError, match=match) as e:
        boundary_kernel[1](x, np.zeros(n_l0, np.float16), n_l0, off, boundary, h, w, True)
    assert "load_data" in str(e.value) and "test_load3d_boundary.py" in str(e.value)


def test_constant_out_of_range_is_a_compile_error_at_the_line():
    @asc.kernel
    def bad():
        asc.set_load_data_boundary(1000)
    with pytest.raises(KernelCompileError, match="0 \\(none\\) or 1024") as e:
        bad[1]()
    assert "asc.set_load_data_boundary(1000)" in str(e.value)


# ----------------------------------------------------------------------------- set_load_data_repeat
@asc.kernel
def repeat_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, n_l0: int, times: int,
                  SET: asc.ConstExpr[bool]):
    """z = L0A after a 3x3 img2col (pad 1) of a 5x7 map, after set_load_data_repeat when SET."""
    xg = asc.GlobalTensor(); xg.set_global_buffer(x)
    zg = asc.GlobalTensor(); zg.set_global_buffer(z)
    pipe = asc.TPipe()
    b1 = asc.TBuf(asc.TPosition.A1)
    b2 = asc.TBuf(asc.TPosition.A2)
    pipe.init_buffer(b1, L1_ELEMS * 2)
    pipe.init_buffer(b2, n_l0 * 2)
    l1 = b1.get(x.dtype)
    l0 = b2.get(x.dtype)
    asc.data_copy(l1, xg, L1_ELEMS)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if SET:
        asc.set_load_data_repeat(asc.LoadDataRepeatParam(repeat_time=times, repeat_stride=8,
                                                         repeat_mode=1))
    asc.load_data(l0, l1, asc.LoadData3DParamsV2([1, 1, 1, 1], 5, 7, 16, 144, 35, 0, 0, 1, 1,
                                                 3, 3, 1, 1, False, -1.0))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    for i in range(n_l0):
        zg.set_value(i, l0.get_value(i))


def test_one_repeat_is_the_plain_load_and_more_are_an_error_at_the_load():
    x = np.random.default_rng(3).standard_normal(L1_ELEMS).astype(np.float16)
    want, n_l0 = _expected(x[:5 * 7 * 16], 5, 7)
    for set_it in (False, True):
        z = np.zeros(n_l0, np.float16)
        repeat_kernel[1](x, z, n_l0, 1, set_it)
        assert np.array_equal(z.view(np.uint16), want.view(np.uint16))
    with pytest.raises(CubeParamError, match="repeat_time.*not modelled") as e:
        repeat_kernel[1](x, np.zeros(n_l0, np.float16), n_l0, 4, True)
    assert "asc.load_data(l0, l1" in str(e.value)


def test_repeat_param_constant_out_of_range_is_a_compile_error():
    @asc.kernel
    def bad():
        asc.set_load_data_repeat(asc.LoadDataRepeatParam(1, 8, 2))
    with pytest.raises(KernelCompileError, match="repeat_mode = 2 is out of range 0..1"):
        bad[1]()

    @asc.kernel
    def not_a_record():
        asc.set_load_data_repeat(4)
    with pytest.raises(KernelCompileError, match="LoadDataRepeatParam"):
        not_a_record[1]()
