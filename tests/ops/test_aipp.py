"""AIPP: asc.set_aipp_functions + asc.load_image_to_local against ``ops/aipp.aipp_reference``
over the formats (RGB888, XRGB8888, YUV400, YUV420SP), both output dtypes, swaps,
colour-space conversion, data type conversion, left/right and channel padding, single-line
reads; the reference against a direct per-pixel formulation; errors at the line; the registers
as run-time state; the sanitizer and the timing see the copy; data_copy is unaffected."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler.errors import (ConstantRangeError, KernelAssertionError,
                                        KernelTypeError, UnsupportedConstructError)
from ascendc_py.compiler.ops.aipp import AippInputFormat as F, aipp_reference
from ascendc_py.simulator import runtime

H, W = 6, 10
OUT = 8192
IN_C = {F.RGB888_U8: 3, F.XRGB8888_U8: 4, F.YUV400_U8: 1, F.YUV420SP_U8: 1}
YUV2RGB = ([[256, 0, 359], [256, -88, -183], [256, 454, 0]], (0, 128, 128), (0, 0, 0))
RGB2YUV = ([[77, 150, 29], [-43, -85, 128], [128, -107, -21]], (0, 0, 0), (16, 128, 128))


def _line(fn, marker: str) -> int:
    lines, start = inspect.getsourcelines(fn.fn)
    return start + next(i for i, ln in enumerate(lines) if marker in ln)


def make(fmt, dtype, rb=False, ax=False, uv=False, single=False, csc=None, mean=(0, 0, 0),
         min_=(0.0, 0.0, 0.0), var=(1.0, 1.0, 1.0), pads=(0, 0, 0), cmode=0, cval=0):
    """A cube kernel: set_aipp_functions with these (compile-time) registers, then
    load_image_to_local of a run-time crop into L1, copied out to GM."""
    m, bi, bo = csc if csc else ([[0] * 3] * 3, (0, 0, 0), (0, 0, 0))
    two = fmt == F.YUV420SP_U8

    @asc.kernel
    def k(img: asc.GlobalAddress, uvp: asc.GlobalAddress, out: asc.GlobalAddress, hs: int,
          vs: int, h0: int, v0: int, w: int, left: int, right: int):
        g = asc.GlobalTensor()
        g.set_global_buffer(img)
        g1 = asc.GlobalTensor()
        g1.set_global_buffer(uvp)
        og = asc.GlobalTensor()
        og.set_global_buffer(out)
        cfg = asc.AippParams(
            dtype, swap_params=asc.AippSwapParams(is_swap_rb=rb, is_swap_uv=uv, is_swap_ax=ax),
            single_line_params=asc.AippSingleLineParams(single),
            dtc_params=asc.AippDataTypeConvParams(mean[0], mean[1], mean[2], min_[0], min_[1],
                                                  min_[2], var[0], var[1], var[2]),
            padding_params=asc.AippPaddingParams(0, pads[0], pads[1], pads[2]),
            c_padding_params=asc.AippChannelPaddingParams(cmode, cval),
            csc_params=asc.AippColorSpaceConvParams(
                csc is not None, m[0][0], m[0][1], m[0][2], m[1][0], m[1][1], m[1][2], m[2][0],
                m[2][1], m[2][2], bi[0], bi[1], bi[2], bo[0], bo[1], bo[2]))
        if two:
            asc.set_aipp_functions(g, g1, fmt, cfg)
        else:
            asc.set_aipp_functions(g, fmt, cfg)
        dst = asc.LocalTensor(dtype, asc.TPosition.A1, 0, OUT)
        asc.load_image_to_local(dst, asc.LoadImageToLocalParams(hs, vs, h0, v0, w, 0, 0, left,
                                                                right))
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        asc.data_copy(og, dst, OUT)
    return k


CASES = {
    "rgb-int8-swap-mean-pad-cpad4": (F.RGB888_U8, asc.int8, dict(
        rb=True, mean=(100, 3, 250), pads=(-5, 6, 7), cmode=1, cval=9)),
    "rgb-f16-plain": (F.RGB888_U8, asc.float16, dict()),
    "rgb-f16-csc-rgb2yuv": (F.RGB888_U8, asc.float16, dict(csc=RGB2YUV)),
    "xrgb-f16-ax-rb-min-var": (F.XRGB8888_U8, asc.float16, dict(
        ax=True, rb=True, min_=(1.5, 0, -2), var=(0.1, 2, 0.003))),
    "xrgb-int8-keeps-xrg": (F.XRGB8888_U8, asc.int8, dict()),
    "yuv400-f16-single-line": (F.YUV400_U8, asc.float16, dict(
        single=True, var=(1 / 255, 1, 1), cval=0.5, pads=(2.5, 0, 0))),
    "yuv400-int8-cpad32": (F.YUV400_U8, asc.int8, dict(mean=(128, 0, 0), cval=-1)),
    "yuv420sp-int8-uv-swap-csc": (F.YUV420SP_U8, asc.int8, dict(
        uv=True, csc=YUV2RGB, mean=(128, 128, 128))),
    "yuv420sp-f16-no-csc": (F.YUV420SP_U8, asc.float16, dict(var=(0.5, 0.25, 2))),
}
CROPS = [(5, 4, 3, 1, 2, 1), (W, H, 0, 0, 0, 0), (1, 1, W - 1, H - 1, 3, 0)]


def _images(seed: int, fmt):
    rng = np.random.default_rng(seed)
    img = rng.integers(0, 256, H * W * IN_C[fmt], dtype=np.uint8)
    uvp = rng.integers(0, 256, (H // 2) * W, dtype=np.uint8)
    return img, uvp


@pytest.mark.parametrize("crop", CROPS, ids=["crop", "whole", "corner"])
@pytest.mark.parametrize("name", list(CASES))
def test_load_image_to_local(name, crop):
    fmt, dtype, kw = CASES[name]
    img, uvp = _images(len(name), fmt)
    np_dtype = np.int8 if dtype == asc.int8 else np.float16
    out = np.zeros(OUT, np_dtype)
    hs, vs, h0, v0, left, right = crop
    make(fmt, dtype, **kw)[1](img, uvp, out, hs, vs, h0, v0, W, left, right)
    ref = aipp_reference(
        img, fmt, np_dtype, horiz_size=hs, vert_size=vs, horiz_start_pos=h0,
        vert_start_pos=v0, src_horiz_size=W, left_pad_size=left, right_pad_size=right, uv=uvp,
        swap_rb=kw.get("rb", False), swap_ax=kw.get("ax", False), swap_uv=kw.get("uv", False),
        single_line=kw.get("single", False), csc=kw.get("csc"), mean=kw.get("mean", (0, 0, 0)),
        min_=kw.get("min_", (0.0, 0.0, 0.0)), var=kw.get("var", (1.0, 1.0, 1.0)),
        padding_values=kw.get("pads", (0, 0, 0)), c_padding_mode=kw.get("cmode", 0),
        c_padding_value=kw.get("cval", 0))
    np.testing.assert_array_equal(out[:ref.size].view(np.uint8), ref.view(np.uint8))
    assert (out[ref.size:].view(np.uint8) == runtime.FRESH_MEMORY_BYTE).all()  # untouched


def test_reference_against_a_per_pixel_formulation():
    """RGB888 -> int8, R/B swapped, mean, left padding, channels padded to 4."""
    img, _ = _images(3, F.RGB888_U8)
    pix = img.reshape(H, W, 3)
    ref = aipp_reference(img, F.RGB888_U8, np.int8, horiz_size=3, vert_size=2,
                         horiz_start_pos=1, vert_start_pos=2, src_horiz_size=W,
                         left_pad_size=1, swap_rb=True, mean=(10, 20, 30),
                         padding_values=(-1, -2, -3), c_padding_mode=1, c_padding_value=5)
    want = []
    for r in range(2):
        want += [-1, -2, -3, 5]
        for c in range(3):
            p = pix[2 + r, 1 + c]
            want += [max(-128, min(127, int(p[2]) - 10)), max(-128, min(127, int(p[1]) - 20)),
                     max(-128, min(127, int(p[0]) - 30)), 5]
    assert ref.tolist() == want
    # YUV -> RGB of a grey pixel (U = V = 128) is (Y, Y, Y)
    y = np.full(4, 77, np.uint8)
    uv = np.full(2, 128, np.uint8)
    rgb = aipp_reference(y, F.YUV420SP_U8, np.float16, horiz_size=2, vert_size=2,
                         src_horiz_size=2, uv=uv, csc=YUV2RGB, c_padding_mode=1)
    assert rgb.reshape(4, 4)[:, :3].tolist() == [[77.0] * 3] * 4


def test_data_copy_is_not_aipp():
    """pyasc's generalization test: set_aipp_functions, then an ordinary data_copy."""
    @asc.kernel
    def k(x: asc.GlobalAddress, z: asc.GlobalAddress):
        xg = asc.GlobalTensor()
        xg.set_global_buffer(x, 96)
        zg = asc.GlobalTensor()
        zg.set_global_buffer(z, 96)
        asc.set_aipp_functions(xg, asc.AippInputFormat.RGB888_U8, asc.AippParams(
            dtype=asc.int8, swap_params=asc.AippSwapParams(is_swap_rb=True)))
        t = asc.LocalTensor(asc.uint8, asc.TPosition.VECIN, 0, 96)
        asc.data_copy(t, xg, 96)
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        asc.data_copy(zg, t, 96)

    x = np.arange(96, dtype=np.uint8)
    z = np.zeros(96, np.uint8)
    k[1](x, z)
    np.testing.assert_array_equal(z, x)


@asc.kernel
def registers_at_run_time(img: asc.GlobalAddress, out: asc.GlobalAddress, swap: int):
    g = asc.GlobalTensor()
    g.set_global_buffer(img)
    og = asc.GlobalTensor()
    og.set_global_buffer(out)
    if swap > 0:
        asc.set_aipp_functions(g, asc.AippInputFormat.RGB888_U8, asc.AippParams(
            asc.int8, swap_params=asc.AippSwapParams(True),
            c_padding_params=asc.AippChannelPaddingParams(1, 0)))
    else:
        asc.set_aipp_functions(g, asc.AippInputFormat.RGB888_U8, asc.AippParams(
            asc.int8, c_padding_params=asc.AippChannelPaddingParams(1, 0)))
    dst = asc.LocalTensor(asc.int8, asc.TPosition.A1, 0, 64)
    asc.load_image_to_local(dst, asc.LoadImageToLocalParams(2, 1, 0, 0, 2))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(og, dst, 64)


def test_the_registers_are_run_time_state():
    img = np.array([1, 2, 3, 4, 5, 6], np.uint8)
    for swap, want in ((1, [3, 2, 1, 0, 6, 5, 4, 0]), (0, [1, 2, 3, 0, 4, 5, 6, 0])):
        out = np.zeros(64, np.int8)
        registers_at_run_time[1](img, out, swap)
        assert out[:8].tolist() == want


@asc.kernel
def no_config(out: asc.GlobalAddress):
    og = asc.GlobalTensor()
    og.set_global_buffer(out)
    dst = asc.LocalTensor(asc.int8, asc.TPosition.A1, 0, 64)
    asc.load_image_to_local(dst, asc.LoadImageToLocalParams(2, 1, 0, 0, 2))  # no-config
    asc.data_copy(og, dst, 64)


@asc.kernel
def wrong_dtype(img: asc.GlobalAddress, out: asc.GlobalAddress, top: int):
    g = asc.GlobalTensor()
    g.set_global_buffer(img)
    og = asc.GlobalTensor()
    og.set_global_buffer(out)
    asc.set_aipp_functions(g, asc.AippInputFormat.YUV400_U8, asc.AippParams(asc.int8))
    dst = asc.LocalTensor(asc.int8, asc.TPosition.A1, 0, 64)
    half = asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, 32)
    if top > 0:
        asc.load_image_to_local(dst, asc.LoadImageToLocalParams(2, 1, 0, 0, 2, top))  # top
    else:
        asc.load_image_to_local(half, asc.LoadImageToLocalParams(2, 1, 0, 0, 2))  # dtype
    asc.data_copy(og, dst, 64)


@asc.kernel
def past_the_image(img: asc.GlobalAddress, out: asc.GlobalAddress, rows: int):
    g = asc.GlobalTensor()
    g.set_global_buffer(img)
    og = asc.GlobalTensor()
    og.set_global_buffer(out)
    asc.set_aipp_functions(g, asc.AippInputFormat.YUV400_U8, asc.AippParams(asc.int8))
    dst = asc.LocalTensor(asc.int8, asc.TPosition.A1, 0, 1024)
    asc.load_image_to_local(dst, asc.LoadImageToLocalParams(4, rows, 0, 0, 4))  # past
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(og, dst, 1024)


def test_run_time_errors_name_the_line():
    out = np.zeros(1024, np.int8)
    with pytest.raises(KernelAssertionError, match="no set_aipp_functions ran") as info:
        no_config[1](out)
    assert info.value.loc.line == _line(no_config, "# no-config")
    img = np.zeros(16, np.uint8)
    with pytest.raises(KernelAssertionError, match="dst is float16 but the AippParams dtype") as info:
        wrong_dtype[1](img, out, 0)
    assert info.value.loc.line == _line(wrong_dtype, "# dtype")
    with pytest.raises(KernelAssertionError, match="top/bottom padding") as info:
        wrong_dtype[1](img, out, 1)
    assert info.value.loc.line == _line(wrong_dtype, "# top")
    past_the_image[1](img, out, 4)                       # 4 rows of 4 pixels: the whole image
    with pytest.raises(asc.GMOutOfBoundsError, match="load_image_to_local") as info:
        past_the_image[1](img, out, 5)
    assert info.value.loc.line == _line(past_the_image, "# past")


def _compile_error(body: str):
    src = ("import ascendc_py as asc\n"
           "@asc.kernel\n"
           "def k(img: asc.GlobalAddress, uv: asc.GlobalAddress):\n"
           "    g = asc.GlobalTensor()\n"
           "    g.set_global_buffer(img)\n"
           "    g1 = asc.GlobalTensor()\n"
           "    g1.set_global_buffer(uv)\n"
           f"    {body}\n")
    return src


@pytest.mark.parametrize("body, exc, text", [
    ("asc.set_aipp_functions(g, asc.AippInputFormat.YUV400_U8, asc.AippParams(asc.int8, "
     "csc_params=asc.AippColorSpaceConvParams(True)))", UnsupportedConstructError,
     "colour-space conversion"),
    ("asc.set_aipp_functions(g, asc.AippInputFormat.RGB888_U8, asc.AippParams(asc.int8, "
     "padding_params=asc.AippPaddingParams(2)))", UnsupportedConstructError, "padding mode 2"),
    ("asc.set_aipp_functions(g, g1, asc.AippInputFormat.RGB888_U8, asc.AippParams(asc.int8))",
     KernelTypeError, "one source"),
    ("asc.set_aipp_functions(g, asc.AippInputFormat.YUV420SP_U8, asc.AippParams(asc.int8))",
     KernelTypeError, "two sources"),
    ("asc.set_aipp_functions(g, asc.AippInputFormat.RGB888_U8, asc.AippParams(asc.float32))",
     KernelTypeError, "int8 or asc.float16"),
    ("asc.set_aipp_functions(g, asc.AippInputFormat.RGB888_U8, asc.AippParams(asc.int8, "
     "dtc_params=asc.AippDataTypeConvParams(300)))", ConstantRangeError, "dtc_mean_ch0 is 300"),
    ("asc.set_aipp_functions(g, asc.AippInputFormat.RGB888_U8, asc.AippParams(asc.int8, "
     "padding_params=asc.AippPaddingParams(0, 200)))", ConstantRangeError, "-128..127"),
])
def test_compile_errors_name_the_line(tmp_path, body, exc, text):
    path = tmp_path / "aipp_bad.py"
    path.write_text(_compile_error(body))
    import importlib.util
    spec = importlib.util.spec_from_file_location("aipp_bad", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with pytest.raises(exc, match=text) as info:
        mod.k[1](np.zeros(64, np.uint8), np.zeros(64, np.uint8))
    assert info.value.loc.line == 8


@asc.kernel
def handed_over(img: asc.GlobalAddress, out: asc.GlobalAddress, hs: int, vs: int,
                SYNC: asc.ConstExpr[bool]):
    g = asc.GlobalTensor()
    g.set_global_buffer(img)
    og = asc.GlobalTensor()
    og.set_global_buffer(out)
    asc.set_aipp_functions(g, asc.AippInputFormat.RGB888_U8, asc.AippParams(asc.float16))
    dst = asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, hs * vs * 16)
    asc.load_image_to_local(dst, asc.LoadImageToLocalParams(hs, vs, 0, 0, W))
    if SYNC:
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(og, dst, hs * vs * 16)  # the-read


def test_sanitizer_and_timing_see_the_copy():
    img, _ = _images(0, F.RGB888_U8)
    out = np.zeros(H * W * 16, np.float16)
    small = handed_over[1](img, out, 2, 1, True, sanitize=True)
    big = handed_over[1](img, out, W, H, True, sanitize=True)
    ref = aipp_reference(img, F.RGB888_U8, np.float16, horiz_size=W, vert_size=H,
                         src_horiz_size=W)
    np.testing.assert_array_equal(out.view(np.uint16), ref.view(np.uint16))
    assert big.pipe_busy["MTE2"] > small.pipe_busy["MTE2"] > 0
    with pytest.raises(asc.DataRaceError) as info:
        handed_over[1](img, out, 2, 1, False, sanitize=True)
    assert f":{_line(handed_over, '# the-read')}:" in str(info.value).splitlines()[0]
