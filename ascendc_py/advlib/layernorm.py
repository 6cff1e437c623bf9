"""Ascend C's LayerNorm high-level API ([B, S, H] form: output, mean, variance) as
``asc.adv.layernorm`` in pyasc's naming style.

Algorithm (Ascend C's documentation, "实现原理", float ND, m = the length of H): mean =
ReduceSum(Muls(x, 1/m)); variance = ReduceSum(Muls(Mul(x - mean, x - mean), 1/m)); the
variance broadcast over the row then Adds(eps), Ln, Muls (by -1/2), Exp gives 1/sqrt(var +
eps), which multiplies (x - mean), then gamma, then plus beta. Here m is original_h_length
(the valid part of a row; the reductions cover it, the elementwise steps the whole aligned
row), x - mean is Adds(-mean) (the same value), mean and variance are read on the scalar unit
after a V->S flag to drive Adds and the Duplicate of the variance. float16 (our choice, the docs
show the float path): x, gamma and beta are widened to float32 and every step runs in float32;
output, mean and variance are rounded once (Cast CAST_RINT) at the end.

Temporary buffer (our rule, ``ascendc_py.host_adv.get_layer_norm_max_min_tmp_size``), float32
elements: 16 (the reduce result/work), then for float16 2 * align8(B*S) (mean and variance)
and 2 * H (gamma, beta), then per pass of ``one_tmp_size / H`` rows 2 (float32) or 3
(float16) regions of ``one_tmp_size`` elements.
"""
import ascendc_py as asc

from ._core import scalar_of

__asc_library__ = True

#: bytes of the temporary buffer the framework reserves when none is passed
FRAMEWORK_TMP = 48 * 1024

M_DTYPE = ("asc.adv.layernorm: output, output_mean, output_variance, input_x, gamma and beta "
           "must all be float16 or all float32")
M_SHAPE = ("asc.adv.layernorm: tiling.b_length * s_length rows of tiling.h_length elements "
           "(32-byte aligned rows, original_h_length <= h_length) must fit input_x and output, "
           "b_length * s_length elements output_mean and output_variance, h_length gamma and "
           "beta")
M_TMP = ("asc.adv.layernorm: temp_buffer must be a uint8 LocalTensor large enough for "
         "tiling.one_tmp_size (ascendc_py.host_adv.get_layer_norm_max_min_tmp_size gives the "
         "range; get_layer_norm_nd_tiling_info fits one_tmp_size to a buffer)")


@asc.kernel
def widen(src, t, n):
    """src as float32: itself, or (float16) widened into t."""
    if src.dtype == asc.float16:
        asc.cast(t, src, asc.RoundMode.CAST_NONE, n)
        r = t
    else:
        r = src
    return r


@asc.kernel
def stats_dst(out, t):
    """Where the per-row means/variances go: out (float32), or the float32 region t."""
    if out.dtype == asc.float16:
        r = t
    else:
        r = out
    return r


@asc.kernel
def layernorm(output, output_mean, output_variance, input_x, gamma, beta, epsilon, tiling,
              temp_buffer=None, is_reuse_source=False):
    """Ascend C LayerNorm over each row of H of input_x viewed as [tiling.b_length *
    tiling.s_length, tiling.h_length]: output = (x - mean) / sqrt(variance + epsilon) * gamma +
    beta, output_mean/output_variance the per-row statistics over the first
    tiling.original_h_length elements. ``tiling``: an ``asc.adv.LayerNormTiling`` kernel
    parameter from ``ascendc_py.host_adv.get_layer_norm_nd_tiling_info`` (its b/s/h lengths,
    original_h_length and one_tmp_size, the float32 elements of one region: rows per pass
    times H); ``temp_buffer``: uint8 (the framework's reserved 48 KiB when None)."""
    dt = input_x.dtype
    assert dt == asc.float16 or dt == asc.float32, M_DTYPE
    assert output.dtype == dt and gamma.dtype == dt and beta.dtype == dt, M_DTYPE
    assert output_mean.dtype == dt and output_variance.dtype == dt, M_DTYPE
    half = dt == asc.float16
    m = tiling.b_length * tiling.s_length
    h = tiling.h_length
    hv = tiling.original_h_length
    assert m >= 0 and h >= 0 and hv >= 0 and hv <= h, M_SHAPE
    assert (h * dt.sizeof()) % 32 == 0, M_SHAPE
    assert m * h <= input_x.get_size() and m * h <= output.get_size(), M_SHAPE
    assert m <= output_mean.get_size() and m <= output_variance.get_size(), M_SHAPE
    assert h <= gamma.get_size() and h <= beta.get_size(), M_SHAPE
    if temp_buffer is None:
        tb = asc.LocalTensorAuto(asc.uint8, FRAMEWORK_TMP)
    else:
        assert temp_buffer.dtype == asc.uint8, M_TMP
        tb = temp_buffer
    t = tb.reinterpret_cast(asc.float32)
    one = tiling.one_tmp_size
    sm = one // h if h > 0 else 0
    sa = (m + 7) // 8 * 8 if half else 0        # float16: mean/variance kept in float32
    gb = 2 * h if half else 0
    regions = 3 if half else 2
    assert sm >= 1 or m == 0, M_TMP
    assert (16 + 2 * sa + gb + regions * sm * h) * 4 <= tb.get_size(), M_TMP
    red = t
    work = t[8:]
    mean_t = stats_dst(output_mean, t[16:])
    var_t = stats_dst(output_variance, t[16 + sa:])
    g = widen(gamma, t[16 + 2 * sa:], h)
    b = widen(beta, t[16 + 2 * sa + h:], h)
    base = 16 + 2 * sa + gb
    d = t[base:]                                 # x - mean, then the output rows (float16)
    w = t[base + sm * h:]                        # scratch rows
    inv_m = 1.0 / max(hv, 1)
    for r0 in range(0, m, max(sm, 1)):            # (sm is 0 only when m is)
        rows = min(sm, m - r0)
        n = rows * h
        x = widen(input_x[r0 * h:], t[base + 2 * sm * h:], n)
        asc.muls(w, x, inv_m, n)
        for i in range(rows):
            asc.reduce_sum(mean_t[r0 + i:], w[i * h:], work, hv)
            mean = scalar_of(mean_t[r0 + i:])
            asc.adds(d[i * h:], x[i * h:], -mean, h)
        asc.mul(w, d, d, n)
        asc.muls(w, w, inv_m, n)
        for i in range(rows):
            asc.reduce_sum(var_t[r0 + i:], w[i * h:], work, hv)
            var = scalar_of(var_t[r0 + i:])
            asc.duplicate(w[i * h:], var, h)
        asc.adds(w, w, epsilon, n)
        asc.ln(w, w, n)
        asc.muls(w, w, -0.5, n)
        asc.exp(w, w, n)                         # 1 / sqrt(variance + eps)
        y = stats_dst(output[r0 * h:], d)
        asc.mul(y, d, w, n)
        for i in range(rows):
            asc.mul(y[i * h:], y[i * h:], g, h)
            asc.add(y[i * h:], y[i * h:], b, h)
        if half:
            asc.cast(output[r0 * h:], y, asc.RoundMode.CAST_RINT, n)
    if half:
        asc.cast(output_mean, mean_t, asc.RoundMode.CAST_RINT, m)
        asc.cast(output_variance, var_t, asc.RoundMode.CAST_RINT, m)
