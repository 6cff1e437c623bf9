"""The common frame of the math APIs: argument checks, the temporary buffer, and the chunked
loop that runs an API's float32 body over ``count`` elements.

Temporary-buffer rule (ours; Ascend C documents the interface, not the sizes): an API whose
body needs ``k`` float32 scratch regions works on chunks of ``c`` elements (a multiple of 64,
one 256-byte repeat of float32) with ``(k + 2) * 4 * c`` bytes: region 0 holds the chunk of
the input widened to float32, region 1 the float32 result, regions 2.. the body's scratch.
The smallest buffer is one repeat per region, ``(k + 2) * 256`` bytes; the largest useful one
holds the whole count in one chunk, ``(k + 2) * 4 * align64(count)`` bytes. A larger buffer
means fewer chunks (fewer, longer instructions), as Ascend C's GetXxxMaxMinTmpSize says.
Without a temporary buffer the API takes one of ``(k + 2) * 4 * FRAMEWORK_CHUNK`` bytes that
the compiler reserves in UB (``asc.LocalTensorAuto``: Ascend C's "接口框架申请临时空间").
"""
import ascendc_py as asc

__asc_library__ = True

#: elements per chunk of the framework-allocated temporary buffer
FRAMEWORK_CHUNK = 256
#: elements of one 256-byte float32 repeat: chunks are multiples of it (compare needs whole
#: repeats)
REPEAT = 64


@asc.kernel
def region(t, i, chunk):
    """Float32 scratch region ``i`` (of ``chunk`` elements) of the temporary buffer ``t``."""
    return t[i * chunk:]


@asc.kernel
def mask_region(t, i, chunk):
    """Region ``i`` as a uint8 bit-mask tensor (compare's destination, select's mask)."""
    return t[i * chunk:].reinterpret_cast(asc.uint8)


@asc.kernel
def horner(p, z, coeffs, m):
    """p = polynomial in z with coefficients ``coeffs`` (highest degree first), by Horner's
    rule: one muls + adds, then mul + adds per further coefficient (each rounded to float32)."""
    asc.muls(p, z, coeffs[0], m)
    asc.adds(p, p, coeffs[1], m)
    for i in asc.static_range(2, len(coeffs)):
        asc.mul(p, p, z, m)
        asc.adds(p, p, coeffs[i], m)


@asc.kernel
def element_count(dst, src, count, msg_count):
    """``count``, or all of ``src`` when None; it must fit both tensors."""
    n = src.get_size() if count is None else count
    assert n >= 0 and n <= src.get_size() and n <= dst.get_size(), msg_count
    return n


@asc.kernel
def float_operands(dst, src, msg_dtype):
    assert src.dtype == dst.dtype, msg_dtype
    assert src.dtype == asc.float16 or src.dtype == asc.float32, msg_dtype


@asc.kernel
def scratch(temp_buffer, regions: asc.ConstExpr[int], msg_tmp):
    """The temporary buffer as float32 (the framework's reserved one when None)."""
    if temp_buffer is None:
        buf = asc.LocalTensorAuto(asc.uint8, regions * 4 * FRAMEWORK_CHUNK)
    else:
        assert temp_buffer.dtype == asc.uint8, msg_tmp
        assert temp_buffer.get_size() >= regions * 4 * REPEAT, msg_tmp
        buf = temp_buffer
    return buf.reinterpret_cast(asc.float32)


@asc.kernel
def unary(dst, src, count, temp_buffer, body, msgs, arg=0):
    """Run ``body(out, x, t, m, mc, chunk, arg)`` over ``count`` elements of ``src`` in chunks.

    Each chunk of m elements is widened to float32 in region 0 (``x``), rounded up to whole
    256-byte repeats with zeros (``m`` = ``mc`` = that length for the body: every instruction
    covers whole repeats, costs what m elements would, and reads only bytes written before,
    as sanitize mode checks); the body writes its float32 results to region 1 (``out``), whose
    first m elements go to dst (a round-to-nearest Cast for float16, a Muls by 1 for float32);
    ``t``: the float32 temporary buffer, whose regions 2.. are the body's (``msgs``, from
    ``messages``, carries the API's region count); ``arg``: a compile-time value for the
    body."""
    regions = msgs[3]
    float_operands(dst, src, msgs[0])
    n = element_count(dst, src, count, msgs[1])
    t = scratch(temp_buffer, regions, msgs[2])
    chunk = t.get_size() // regions // REPEAT * REPEAT
    x = region(t, 0, chunk)
    y = region(t, 1, chunk)
    for off in range(0, n, chunk):
        m = min(chunk, n - off)
        mc = (m + REPEAT - 1) // REPEAT * REPEAT
        if m < mc:
            asc.duplicate(x, 0.0, mc)             # the tail of the last repeat: defined
        if src.dtype == asc.float16:
            asc.cast(x, src[off:], asc.RoundMode.CAST_NONE, m)
        else:
            asc.muls(x, src[off:], 1.0, m)
        body(y, x, t, mc, mc, chunk, arg)
        if src.dtype == asc.float16:
            asc.cast(dst[off:], y, asc.RoundMode.CAST_RINT, m)
        else:
            asc.muls(dst[off:], y, 1.0, m)


def messages(api: str, regions: int) -> tuple:
    """The error messages of one API (module constants: assert messages are static), then
    its float32 region count in all (input, result and the body's scratch), which the
    chunked loop sizes the temporary buffer by."""
    return (f"asc.adv.{api}: dst and src must both be float16 or both float32",
            f"asc.adv.{api}: count must be between 0 and the sizes of src and dst",
            f"asc.adv.{api}: temp_buffer must be a uint8 LocalTensor of at least "
            f"{regions * 4 * REPEAT} bytes (ascendc_py.host_adv.get_{api}_max_min_tmp_size "
            f"gives the range)", regions)


# ----------------------------------------------------------------------------- small steps
GT, LT, EQ, NE, GE = (asc.CMPMODE.GT, asc.CMPMODE.LT, asc.CMPMODE.EQ, asc.CMPMODE.NE,
                      asc.CMPMODE.GE)
TT = asc.SELMODE.VSEL_TENSOR_TENSOR_MODE
TS = asc.SELMODE.VSEL_TENSOR_SCALAR_MODE


@asc.kernel
def scalar_of(work):
    """work[0] on the scalar unit, after the vector unit has written it."""
    asc.set_flag(asc.HardEvent.V_S, 0)
    asc.wait_flag(asc.HardEvent.V_S, 0)
    return work.get_value(0)


@asc.kernel
def negate_where_negative(out, v, x, w, mk, m, mc):
    """out = -v where x < 0, else v (w: scratch)."""
    asc.compare_scalar(mk, x, 0.0, LT, mc)
    asc.muls(w, v, -1.0, m)
    asc.select(out, mk, w, v, TT, m)
