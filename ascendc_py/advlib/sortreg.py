"""Ascend C's Concat and Extract, the helpers around Sort, as pyasc's ``asc.adv.concat(dst,
src, tmp, repeat_time)`` and ``asc.adv.extract(dst_value, dst_index, src, repeat_time)``, in
their Atlas A2/A3 meaning (the simulated platform; the 8-element region-proposal form is the
Atlas inference series').

On A2/A3, ``asc.sort`` takes the scores (``concat``) and the uint32 indices as two tensors and
writes 8-byte (score, index) structures (``compiler/ops/sort.py``):

* ``concat``: the documentation says it puts the scores of ``src`` one to one into ``concat``
  for Sort, 16 elements a repeat (repeat_time 0..255). On A2/A3 that is a move of
  ``16 * repeat_time`` elements: here one masked ``copy`` (Ascend C's Copy, a bit move on the
  vector unit) of whole 256-byte repeats and one for the rest. ``tmp`` (same dtype as src; the
  documentation sizes it with GetConcatTmpSize without giving the number) is not needed by a
  move: ``ascendc_py.host_adv.get_concat_tmp_size`` answers 0 and any tmp is accepted (our
  choice).
* ``extract``: the sorted structures' scores into ``dst_value`` and indices into
  ``dst_index`` (uint32); each repeat reads 256 bytes, 32 structures (64 float or 128 half
  elements of src, as documented), repeat_time 0..255. Here two ``gather_mask``
  instructions with built-in patterns (float: lanes 2k for the score; half: lanes 4k; the
  index: the odd uint32 lanes), src0 repeat stride 8 blocks.
"""
import ascendc_py as asc

__asc_library__ = True

M_CONCAT_DTYPE = "asc.adv.concat: concat, src and tmp must be one dtype, float16 or float32"
M_CONCAT_COUNT = ("asc.adv.concat: repeat_time must be 0..255 and 16 * repeat_time elements "
                  "must fit src and concat")
M_EXTRACT_DTYPE = ("asc.adv.extract: dst_value and src must be one dtype, float16 or float32, "
                   "and dst_index uint32")
M_EXTRACT_COUNT = ("asc.adv.extract: repeat_time must be 0..255; 32 * repeat_time sorted "
                   "structures must fit src, dst_value and dst_index")


@asc.kernel
def concat(dst, src, tmp, repeat_time):
    """Ascend C Concat (A2/A3): dst[:16 * repeat_time] = src[:16 * repeat_time], the scores
    that ``asc.sort`` takes (a vector-unit copy)."""
    assert dst.dtype == src.dtype and tmp.dtype == src.dtype, M_CONCAT_DTYPE
    assert src.dtype == asc.float16 or src.dtype == asc.float32, M_CONCAT_DTYPE
    n = 16 * repeat_time
    assert repeat_time >= 0 and repeat_time <= 255, M_CONCAT_COUNT
    assert n <= src.get_size() and n <= dst.get_size(), M_CONCAT_COUNT
    epr = 256 // src.dtype.sizeof()
    full = n // epr
    params = asc.CopyRepeatParams(1, 1, 8, 8)
    if full > 0:
        asc.copy(dst, src, epr, full, params)
    rest = n - full * epr
    if rest > 0:
        asc.copy(dst[full * epr:], src[full * epr:], rest, 1, params)


@asc.kernel
def extract(dst_value, dst_index, src, repeat_time):
    """Ascend C Extract (A2/A3): the scores and uint32 indices of the first
    ``32 * repeat_time`` sorted (score, index) structures of ``src``."""
    assert dst_value.dtype == src.dtype and dst_index.dtype == asc.uint32, M_EXTRACT_DTYPE
    assert src.dtype == asc.float16 or src.dtype == asc.float32, M_EXTRACT_DTYPE
    n = 32 * repeat_time
    assert repeat_time >= 0 and repeat_time <= 255, M_EXTRACT_COUNT
    assert n * 8 <= src.get_size() * src.dtype.sizeof(), M_EXTRACT_COUNT
    assert n <= dst_value.get_size() and n <= dst_index.get_size(), M_EXTRACT_COUNT
    if repeat_time > 0:
        params = asc.GatherMaskParams(1, repeat_time, 8, 0)
        if src.dtype == asc.float32:
            asc.gather_mask(dst_value, src, 1, False, 0, params)
        else:
            asc.gather_mask(dst_value, src, 3, False, 0, params)
        asc.gather_mask(dst_index, src.reinterpret_cast(asc.uint32), 2, False, 0, params)
