"""pyasc's ``asc.adv.softmax`` (Ascend C's SoftMax high-level API), ND format.

Algorithm (Ascend C's documentation, "实现原理", for float): per row of the [m, k] input,
reducemax -> broadcast the row max to one 32-byte data block (the ``max`` output, [m, 32 B]),
sub, exp, reducesum -> broadcast the row sum to one block (the ``sum`` output), div. Here:
ReduceMax over the row (count form), the max read on the scalar unit (V->S flag), Duplicate
into the row's max block, Adds(-max) (== x - max exactly), Exp over every row of the pass,
ReduceSum over the row, Duplicate into the row's sum block and over a float32 row of the
temporary buffer, Div over every row of the pass. float16 (our choice, the docs describe the
float path only): the rows are widened to float32 in the temporary buffer, every step runs in
float32, dst is rounded once (Cast CAST_RINT), max/sum are rounded to their own dtype.

Shape: the tiling's src_m rows of src_k; a tiling whose src_k is 0 (pyasc's default
``SoftmaxTiling()``) takes it from src's ShapeInfo instead (rows: the product of its dimensions
but the last, k: the last, the valid k: the original shape's last), with as many rows per pass
as the temporary buffer holds (our reading of pyasc's use; Ascend C's SoftMax takes the shape
from SoftMaxShapeInfo the same way). Rows are ``src_k`` elements apart (32-byte aligned); with ``ori_src_k`` < ``src_k`` (Ascend
C's SoftMaxShapeInfo.oriSrcK) the reductions see the first ``ori_src_k`` elements of a row,
and the padding of dst is overwritten with exp(pad - max) / sum (the docs: the result
"覆盖dst中对应src补齐位置的数据").

Temporary buffer (our rule, ``ascendc_py.host_adv.get_softmax_min_tmp_size`` / ``max``):
32 bytes for the reduce result, the ReduceMax work area (align8(2 * ceil(k / 64)) float32),
then two float32 [split_m, k] regions for a pass of ``split_m`` rows (the divisor rows, and
for float16 the widened rows; Ascend C's queries take the size of max/sum, not of src, so
float32 src is budgeted the same).
"""
import ascendc_py as asc

from ._core import scalar_of

__asc_library__ = True

#: bytes of the temporary buffer the framework reserves when none is passed
FRAMEWORK_TMP = 32 * 1024

M_DTYPE = ("asc.adv.softmax: src and dst must both be float16 or both float32, sum and max "
           "of one dtype: src's, or float32 for float16 src")
M_SHAPE = ("asc.adv.softmax: tiling.src_m rows of tiling.src_k elements (32-byte aligned rows, "
           "ori_src_k <= src_k) must fit src and dst, and src_m blocks of 32 bytes sum and max")
M_TMP = ("asc.adv.softmax: temp_buffer must be a uint8 LocalTensor large enough for "
         "tiling.split_m rows (ascendc_py.host_adv.get_softmax_min_tmp_size/max give the "
         "range; softmax_tiling_func fits split_m to a buffer)")
M_NZ = "asc.adv.softmax: only the ND format is supported (data_format_nz=False)"
M_EMPTY = ("asc.adv.softmax: tiling.src_k is 0 and src has no ShapeInfo: fill the "
           "SoftmaxTiling with ascendc_py.host_adv.softmax_tiling_func (or build it in the "
           "kernel with src_m, src_k and split_m), or attach src.set_shape_info(asc.ShapeInfo("
           "...)) with the [..., k] shape")


@asc.kernel
def at_least_one(n):
    """max(n, 1) (softmax's parameter ``max`` hides the builtin there)."""
    return max(n, 1)


@asc.kernel
def work_floats(k):
    """float32 elements of ReduceMax's work area for a row of k (count form, no index)."""
    return (2 * ((k + 63) // 64) + 7) // 8 * 8


@asc.kernel
def softmax(dst, sum, max, src, tiling, temp_buffer=None, reuse_source=False,  # noqa: A002
            basic_block=False, data_format_nz=False, ori_src_k=None):
    """Ascend C SoftMax over the rows of src viewed as [tiling.src_m, tiling.src_k]:
    dst = exp(src - rowmax) / rowsum; max and sum get each row's value repeated over one
    32-byte block. ``tiling``: an ``asc.adv.SoftmaxTiling`` (a kernel parameter, filled by
    ``ascendc_py.host_adv.softmax_tiling_func``); its src_m, src_k and split_m (rows per pass)
    are used. ``ori_src_k``: the valid elements of a row (default src_k). ``temp_buffer``:
    uint8, enough for split_m rows (``softmax_tiling_func`` fits split_m to its size; the
    framework's reserved 32 KiB when None). ``reuse_source``/``basic_block`` change nothing
    (performance hints)."""
    assert not data_format_nz, M_NZ
    assert src.dtype == dst.dtype, M_DTYPE
    assert src.dtype == asc.float16 or src.dtype == asc.float32, M_DTYPE
    assert sum.dtype == max.dtype, M_DTYPE
    assert sum.dtype == src.dtype or sum.dtype == asc.float32, M_DTYPE
    half = src.dtype == asc.float16
    info_m, info_k, info_kv = asc.adv.shape_rows(src)
    m = tiling.src_m
    k = tiling.src_k
    kv = k if ori_src_k is None else ori_src_k
    sm = tiling.split_m
    if k == 0:                                   # a zero tiling: the shape from src's ShapeInfo
        m = info_m
        k = info_k
        kv = info_kv if ori_src_k is None else ori_src_k
        sm = -1                                  # rows per pass: what the buffer holds
    assert k > 0, M_EMPTY
    blk = 32 // sum.dtype.sizeof()               # elements of one 32-byte block of max/sum
    assert m >= 0 and k >= 0 and kv >= 0 and kv <= k, M_SHAPE
    assert (k * src.dtype.sizeof()) % 32 == 0, M_SHAPE
    assert m * k <= src.get_size() and m * k <= dst.get_size(), M_SHAPE
    assert m * blk <= sum.get_size() and m * blk <= max.get_size(), M_SHAPE
    if temp_buffer is None:
        tb = asc.LocalTensorAuto(asc.uint8, FRAMEWORK_TMP)
    else:
        assert temp_buffer.dtype == asc.uint8, M_TMP
        tb = temp_buffer
    t = tb.reinterpret_cast(asc.float32)
    wk = work_floats(k)
    if sm < 0:
        sm = min(m, (tb.get_size() // 4 - 8 - wk) // (2 * k))
    assert sm >= 1 or m == 0, M_TMP
    assert (8 + wk + 2 * sm * k) * 4 <= tb.get_size(), M_TMP
    red = t
    work = t[8:]
    w = t[8 + wk:]                               # divisor rows
    x = w                                        # float16: the widened rows (next region)
    if half:
        x = t[8 + wk + sm * k:]
    for r0 in range(0, m, at_least_one(sm)):      # (sm is 0 only when m is)
        rows = min(sm, m - r0)
        n = rows * k
        if half:
            asc.cast(x, src[r0 * k:], asc.RoundMode.CAST_NONE, n)
        for i in range(rows):
            if half:
                xi = x[i * k:]
            else:
                xi = src[(r0 + i) * k:]
            asc.reduce_max(red, xi, work, kv)
            row_max = scalar_of(red)
            asc.duplicate(max[(r0 + i) * blk:], row_max, blk)
            if half:
                asc.adds(xi, xi, -row_max, k)
            else:
                asc.adds(dst[(r0 + i) * k:], xi, -row_max, k)
        if half:
            y = x
        else:
            y = dst[r0 * k:]
        asc.exp(y, y, n)
        for i in range(rows):
            asc.reduce_sum(red, y[i * k:], work, kv)
            row_sum = scalar_of(red)
            asc.duplicate(sum[(r0 + i) * blk:], row_sum, blk)
            asc.duplicate(w[i * k:], row_sum, k)
        asc.div(y, y, w, n)
        if half:
            asc.cast(dst[r0 * k:], y, asc.RoundMode.CAST_RINT, n)
