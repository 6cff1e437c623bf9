"""pyasc's ``asc.adv.rmsnorm`` (Ascend C's RmsNorm high-level API).

Formula (Ascend C's documentation): for the [B, S, H] input, per row of H,
``dst = src / sqrt(mean(src^2) + epsilon) * gamma``; the tiling carries
``reciprocalOfHLength`` (1/H as float32), so the mean is the row sum times it. The instruction
sequence is ours (the docs give the formula only): per pass of ``main_bs_length`` rows,
Mul (x*x), per row ReduceSum over the original_h_length valid elements (the sum read on the
scalar unit after a V->S flag) and Duplicate of it over the row, then over the pass Muls by
reciprocal_of_h_length, Adds epsilon, Sqrt, Div (x by it), and per row Mul by gamma. float16
(our choice): src and gamma are widened to float32, every step runs in float32 and dst is
rounded once (Cast CAST_RINT); epsilon is converted to float32.

Temporary buffer (our rule, ``ascendc_py.host_adv.get_rms_norm_max_min_tmp_size``): 64 bytes
(the reduce result and work area), for float16 the widened gamma (H float32), then per pass of
``main_bs_length`` rows one float32 [rows, H] region (two for float16: the widened rows too).
"""
import ascendc_py as asc

from ._core import scalar_of

__asc_library__ = True

#: bytes of the temporary buffer the framework reserves when none is passed
FRAMEWORK_TMP = 32 * 1024

M_DTYPE = "asc.adv.rmsnorm: dst, src and gamma must all be float16 or all float32"
M_SHAPE = ("asc.adv.rmsnorm: tiling.b_length * s_length rows of tiling.h_length elements "
           "(32-byte aligned rows, original_h_length <= h_length) must fit src and dst, and "
           "h_length elements gamma")
M_TMP = ("asc.adv.rmsnorm: temp_buffer must be a uint8 LocalTensor large enough for "
         "tiling.main_bs_length rows (ascendc_py.host_adv.get_rms_norm_max_min_tmp_size gives "
         "the range; get_rms_norm_tiling_info fits main_bs_length to a buffer)")


@asc.kernel
def rmsnorm(dst, src, gamma, epsilon, tiling, temp_buffer=None, basic_block=False):
    """Ascend C RmsNorm: dst = src / sqrt(mean(src^2) + epsilon) * gamma over each row of H of
    src viewed as [tiling.b_length * tiling.s_length, tiling.h_length] (the mean over the first
    tiling.original_h_length elements, times tiling.reciprocal_of_h_length). ``tiling``: an
    ``asc.adv.RmsNormTiling`` kernel parameter from
    ``ascendc_py.host_adv.get_rms_norm_tiling_info``; ``temp_buffer``: uint8, enough for
    tiling.main_bs_length rows (the framework's reserved 32 KiB when None); ``basic_block``
    changes nothing (a performance hint)."""
    assert src.dtype == dst.dtype and gamma.dtype == src.dtype, M_DTYPE
    assert src.dtype == asc.float16 or src.dtype == asc.float32, M_DTYPE
    half = src.dtype == asc.float16
    m = tiling.b_length * tiling.s_length
    h = tiling.h_length
    hv = tiling.original_h_length
    assert m >= 0 and h >= 0 and hv >= 0 and hv <= h, M_SHAPE
    assert (h * src.dtype.sizeof()) % 32 == 0, M_SHAPE
    assert m * h <= src.get_size() and m * h <= dst.get_size(), M_SHAPE
    assert h <= gamma.get_size(), M_SHAPE
    if temp_buffer is None:
        tb = asc.LocalTensorAuto(asc.uint8, FRAMEWORK_TMP)
    else:
        assert temp_buffer.dtype == asc.uint8, M_TMP
        tb = temp_buffer
    t = tb.reinterpret_cast(asc.float32)
    sm = tiling.main_bs_length
    assert sm >= 1 or m == 0, M_TMP
    gw = h if half else 0                       # the widened gamma
    regions = 2 if half else 1
    assert (16 + gw + regions * sm * h) * 4 <= tb.get_size(), M_TMP
    red = t
    work = t[8:]
    w = t[16 + gw:]                              # x*x, then the divisor rows
    g = widened_gamma(gamma, t, h)
    eps = epsilon
    r_h = tiling.reciprocal_of_h_length
    for r0 in range(0, m, max(sm, 1)):            # (sm is 0 only when m is)
        rows = min(sm, m - r0)
        n = rows * h
        x = pass_rows(src, t[16 + gw + sm * h:], r0 * h, n)      # float32 rows of the pass
        y = pass_out(dst, x, r0 * h)
        asc.mul(w, x, x, n)
        for i in range(rows):
            asc.reduce_sum(red, w[i * h:], work, hv)
            total = scalar_of(red)
            asc.duplicate(w[i * h:], total, h)
        asc.muls(w, w, r_h, n)
        asc.adds(w, w, eps, n)
        asc.sqrt(w, w, n)
        asc.div(y, x, w, n)
        for i in range(rows):
            asc.mul(y[i * h:], y[i * h:], g, h)
        if half:
            asc.cast(dst[r0 * h:], y, asc.RoundMode.CAST_RINT, n)


@asc.kernel
def widened_gamma(gamma, t, h):
    """gamma as float32: itself, or (float16) widened into t[16:]."""
    if gamma.dtype == asc.float16:
        g = t[16:]
        asc.cast(g, gamma, asc.RoundMode.CAST_NONE, h)
    else:
        g = gamma
    return g


@asc.kernel
def pass_rows(src, x, off, n):
    """The pass's rows as float32: src itself, or (float16) widened into x."""
    if src.dtype == asc.float16:
        asc.cast(x, src[off:], asc.RoundMode.CAST_NONE, n)
        r = x
    else:
        r = src[off:]
    return r


@asc.kernel
def pass_out(dst, x, off):
    """Where the pass's float32 result goes: dst (float32), or in place over x (float16)."""
    if dst.dtype == asc.float16:
        r = x
    else:
        r = dst[off:]
    return r
