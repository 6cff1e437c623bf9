"""Ascend C's activation APIs Gelu, FasterGelu, Silu, SwiGLU and GeGLU as ``asc.adv.gelu``,
``faster_gelu``, ``silu``, ``swiglu`` and ``geglu`` (pyasc's naming style; pyasc has none
of them).

Formulas (Ascend C's documentation and its samples' READMEs): Gelu(x) = x / (1 +
e^(-1.59576912 (x + 0.044715 x^3))) (the tanh approximation, "化简后可得"); FasterGelu: the
docs show its formula as an image only; we take FastGelu's published definition (x / (1 +
e^(-1.702|x|)) e^(0.851 (x - |x|)), MindSpore's FastGelu for Ascend) in its simplified, equal
form x / (1 + e^(-1.702 x)) (our reading); Silu(x) = x / (1 + e^(-x)); SwiGLU: dst = src0 *
Swish(src1), Swish(x) = x / (1 + e^(-beta x)), beta = scalar_value; GeGLU: dst = src0 *
GELU(src1) in the docs' form x1 / (1 + e^(a (x1^3 + b x1))), a = -0.0713548162726,
b = 22.363860002236. The instruction order of each is ours (listed in each body); float16 is
widened to float32, computed in float32 and rounded once (our choice, as the math APIs).

Temporary buffer: the frame of the math APIs (``_core.unary``: regions 0/1 the widened input
and the result, none more for these bodies: the result region is their scratch); SwiGLU and
GeGLU use four float32 regions (src0, src1, result, scratch) per chunk of a multiple of 64
elements: at least 4 * 256 bytes, at most 16 * align64(count) bytes.
"""
import ascendc_py as asc

from ._core import (REPEAT, element_count, float_operands, messages, region, scratch,
                    unary)

__asc_library__ = True

#: float32 regions of each API's temporary buffer in all: input and result plus the body's
#: scratch for one input (the math APIs' rule), the two inputs, the result and one scratch
#: region for swiglu/geglu (``binary``); host_adv's tmp-size queries read it too
REGIONS = {"gelu": 2, "faster_gelu": 2, "silu": 2, "swiglu": 4, "geglu": 4}
GELU_K = -1.59576912
GELU_C = 0.044715
FASTER_GELU_K = -1.702
GEGLU_A = -0.0713548162726
GEGLU_B = 22.363860002236

M_GELU = messages("gelu", REGIONS["gelu"])
M_FASTER_GELU = messages("faster_gelu", REGIONS["faster_gelu"])
M_SILU = messages("silu", REGIONS["silu"])
M_SWIGLU = messages("swiglu", REGIONS["swiglu"])
M_GEGLU = messages("geglu", REGIONS["geglu"])


# ----------------------------------------------------------------------------- one input
@asc.kernel
def _gelu_body(out, x, t, m, mc, chunk, arg):
    asc.mul(out, x, x, m)                     # x^2
    asc.mul(out, out, x, m)                   # x^3
    asc.muls(out, out, GELU_C, m)
    asc.add(out, out, x, m)                   # x + 0.044715 x^3
    asc.muls(out, out, GELU_K, m)
    asc.exp(out, out, m)
    asc.adds(out, out, 1.0, m)
    asc.div(out, x, out, m)


@asc.kernel
def _sigmoid_scaled_body(out, x, t, m, mc, chunk, k):
    """out = x / (1 + e^(k x))."""
    asc.muls(out, x, k, m)
    asc.exp(out, out, m)
    asc.adds(out, out, 1.0, m)
    asc.div(out, x, out, m)


@asc.kernel
def gelu(dst, src, count=None, temp_buffer=None, high_precision=False,
         high_performance=False):
    """Ascend C Gelu: dst = src / (1 + e^(-1.59576912 (src + 0.044715 src^3))) (float16,
    float32; float16 in float32). ``high_precision``/``high_performance`` change nothing here
    (every path computes in float32)."""
    unary(dst, src, count, temp_buffer, _gelu_body, M_GELU)


@asc.kernel
def faster_gelu(dst, src, count=None, temp_buffer=None, high_precision=False,
                high_performance=False):
    """Ascend C FasterGelu: dst = src / (1 + e^(-1.702 src)) (float16 in float32)."""
    unary(dst, src, count, temp_buffer, _sigmoid_scaled_body, M_FASTER_GELU,
          FASTER_GELU_K)


@asc.kernel
def silu(dst, src, count=None, temp_buffer=None, is_reuse_source=False):
    """Ascend C Silu: dst = src / (1 + e^(-src)) (float16 in float32). Ascend C's Silu takes no
    temporary buffer; ``temp_buffer`` is accepted here (the framework's otherwise)."""
    unary(dst, src, count, temp_buffer, _sigmoid_scaled_body, M_SILU, -1.0)


# ----------------------------------------------------------------------------- two inputs
@asc.kernel
def _swiglu_body(out, x0, x1, w, m, beta):
    asc.muls(out, x1, -beta, m)
    asc.exp(out, out, m)
    asc.adds(out, out, 1.0, m)
    asc.div(out, x1, out, m)                  # Swish(x1)
    asc.mul(out, x0, out, m)


@asc.kernel
def _geglu_body(out, x0, x1, w, m, arg):
    asc.mul(out, x1, x1, m)
    asc.mul(out, out, x1, m)                  # x1^3
    asc.muls(w, x1, GEGLU_B, m)
    asc.add(out, out, w, m)                 # x1^3 + b x1
    asc.muls(out, out, GEGLU_A, m)
    asc.exp(out, out, m)
    asc.adds(out, out, 1.0, m)
    asc.div(out, x1, out, m)                  # GELU(x1)
    asc.mul(out, x0, out, m)


@asc.kernel
def binary(dst, src0, src1, count, temp_buffer, body, msgs, arg=0.0):
    """Run ``body(out, x0, x1, w, m, arg)`` over ``count`` elements in chunks: src0/src1
    widened to float32 in regions 0/1 (the last chunk's tail zero-filled to a whole repeat),
    the result in region 2 narrowed into dst (Cast CAST_RINT for float16), region 3 (``w``)
    the body's scratch."""
    float_operands(dst, src0, msgs[0])
    float_operands(dst, src1, msgs[0])
    n = element_count(dst, src0, count, msgs[1])
    n = element_count(dst, src1, n, msgs[1])
    t = scratch(temp_buffer, msgs[3], msgs[2])
    chunk = t.get_size() // msgs[3] // REPEAT * REPEAT
    x0 = region(t, 0, chunk)
    x1 = region(t, 1, chunk)
    y = region(t, 2, chunk)
    w = region(t, 3, chunk)
    for off in range(0, n, chunk):
        m = min(chunk, n - off)
        mc = (m + REPEAT - 1) // REPEAT * REPEAT
        if m < mc:
            asc.duplicate(x0, 0.0, mc)
            asc.duplicate(x1, 0.0, mc)
        if dst.dtype == asc.float16:
            asc.cast(x0, src0[off:], asc.RoundMode.CAST_NONE, m)
            asc.cast(x1, src1[off:], asc.RoundMode.CAST_NONE, m)
        else:
            asc.muls(x0, src0[off:], 1.0, m)
            asc.muls(x1, src1[off:], 1.0, m)
        body(y, x0, x1, w, mc, arg)
        if dst.dtype == asc.float16:
            asc.cast(dst[off:], y, asc.RoundMode.CAST_RINT, m)
        else:
            asc.muls(dst[off:], y, 1.0, m)


@asc.kernel
def swiglu(dst, src0, src1, scalar_value, count=None, temp_buffer=None,
           is_reuse_source=False):
    """Ascend C SwiGLU: dst = src0 * src1 / (1 + e^(-scalar_value * src1)) (float16 in
    float32; scalar_value is Swish's beta)."""
    binary(dst, src0, src1, count, temp_buffer, _swiglu_body, M_SWIGLU, scalar_value)


@asc.kernel
def geglu(dst, src0, src1, count=None, temp_buffer=None, is_reuse_source=False):
    """Ascend C GeGLU: dst = src0 * GELU(src1), GELU(x) = x / (1 + e^(a (x^3 + b x))) with the
    docs' a = -0.0713548162726, b = 22.363860002236 (float16 in float32)."""
    binary(dst, src0, src1, count, temp_buffer, _geglu_body, M_GEGLU)
