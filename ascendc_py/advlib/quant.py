"""Ascend C's AscendQuant (per tensor) as pyasc's ``asc.adv.quant(dst, src, scale, offset,
count=None, temp_buffer=None, reuse_source=False, config=None)``.

Algorithm (Ascend C's documentation of AscendQuant, "实现原理", every step a vector
instruction): a float32 src is first converted to half (Cast, round to nearest even); then
tmp = Muls(src_half, scale) and tmp = Adds(tmp, offset), both in half (the float scale/offset
converted to half, the documentation's step 1); then dst = Cast(tmp) to int8 rounding to
nearest even ("四舍六入五成双"). So dst = int8(rint(half(half(half(x) * scale) + offset))).
The int8 Cast saturates (values beyond [-128, 127] clamp, as the simulator's Cast does; the
documentation does not say).

Temporary buffer (ours; pyasc's tests size it with GetAscendQuantMaxMinTmpSize's numbers):
the half intermediate of a chunk of ``c`` elements (c a multiple of 32: int8 slices stay
32-byte aligned): ``2 * c`` bytes. At least 512 bytes (256 elements), at most
``max(512, 2 * align32(count))`` bytes (the whole count in one chunk). ``config``
(``asc.adv.QuantConfig``): ``calc_count`` (> 0) is the count when ``count`` is None;
``work_local_size`` (> 0) bytes of temp_buffer are used (at most its size, at least 512);
``scale_count``/``offset_count`` describe per-channel scale/offset tensors, which this scalar
form does not take: they must be 0 or 1 (our choice). ``reuse_source`` changes nothing.
"""
import ascendc_py as asc

__asc_library__ = True

#: half elements of one 256-byte repeat; chunks are multiples of CHUNK_ALIGN elements
HALF_REPEAT = 128
CHUNK_ALIGN = 32
#: the smallest temporary buffer in bytes (two repeats of half)
MIN_TMP = 512
#: half elements of the framework's temporary buffer (when temp_buffer is None)
FRAMEWORK_CHUNK = 1024

M_DTYPE = "asc.adv.quant: dst must be int8 and src float16 or float32"
M_COUNT = "asc.adv.quant: count must be between 0 and the sizes of src and dst"
M_TMP = (f"asc.adv.quant: temp_buffer must be a uint8 LocalTensor of at least {MIN_TMP} bytes "
         f"(ascendc_py.host_adv.get_ascend_quant_max_min_tmp_size gives the range)")
M_CONFIG = ("asc.adv.quant: QuantConfig.work_local_size must be 0 or between 512 and the "
            "temp_buffer's size; scale_count and offset_count must be 0 or 1 (per-tensor "
            "quantization)")


@asc.kernel
def _work(temp_buffer, config):
    """The temporary buffer as half, cut to config.work_local_size bytes when that is set."""
    if temp_buffer is None:
        buf = asc.LocalTensorAuto(asc.uint8, 2 * FRAMEWORK_CHUNK)
    else:
        assert temp_buffer.dtype == asc.uint8, M_TMP
        assert temp_buffer.get_size() >= MIN_TMP, M_TMP
        buf = temp_buffer
    size = buf.get_size()
    if config is not None:
        assert config.scale_count <= 1 and config.offset_count <= 1, M_CONFIG
        if config.work_local_size > 0:
            assert config.work_local_size >= MIN_TMP, M_CONFIG
            assert config.work_local_size <= size, M_CONFIG
            size = config.work_local_size
    return buf.reinterpret_cast(asc.float16), size // 2 // CHUNK_ALIGN * CHUNK_ALIGN


@asc.kernel
def quant(dst, src, scale, offset, count=None, temp_buffer=None, reuse_source=False,
          config=None):
    """Ascend C AscendQuant, per tensor: dst (int8) = round_half_even(src * scale + offset)
    computed in half (a float32 src is converted to half first), over ``count`` elements
    (all of src when None; ``config.calc_count`` when that is set and count is None)."""
    assert dst.dtype == asc.int8, M_DTYPE
    assert src.dtype == asc.float16 or src.dtype == asc.float32, M_DTYPE
    if count is None:
        if config is not None and config.calc_count > 0:
            n = config.calc_count
        else:
            n = src.get_size()
    else:
        n = count
    assert n >= 0 and n <= src.get_size() and n <= dst.get_size(), M_COUNT
    t, chunk = _work(temp_buffer, config)
    for off in range(0, n, chunk):
        m = min(chunk, n - off)
        if src.dtype == asc.float32:
            asc.cast(t, src[off:], asc.RoundMode.CAST_RINT, m)
            asc.muls(t, t, scale, m)
        else:
            asc.muls(t, src[off:], scale, m)
        asc.adds(t, t, offset, m)
        asc.cast(dst[off:], t, asc.RoundMode.CAST_RINT, m)
