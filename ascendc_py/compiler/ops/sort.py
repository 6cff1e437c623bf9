"""The sort family on Atlas A2/A3 (Ascend 910B): ``sort32``, ``mrg_sort``,
``get_mrg_sort_result``, ``get_sort_len`` / ``get_sort_offset`` (semantics from Ascend C's
documentation of Sort32, MrgSort, GetMrgSortResult, GetSortLen/GetSortOffset).

A2 sorts (score, index) structures of 8 bytes: the index (uint32) in the high 4 bytes, the score
in the low 4 (float) or the low 2 (half; the 2 bytes between are reserved: written 0 here, the
documentation does not say what the hardware writes).

* ``sort32(dst, src0, src1, repeat_time)``: each repeat sorts 32 scores of ``src0`` (half or
  float) with their uint32 indices from ``src1``, largest score first, into 32 structures of
  ``dst``; repeat r reads elements 32r.. and writes 256r bytes on. Equal scores keep their
  order (documented: "if i > j, score[j] is taken first"). repeat_time 0..255.
* ``mrg_sort(dst, MrgSortSrcList(...), element_count_list, sorted_num, valid_bit, repeat_time,
  is_exhausted_suspension=False)`` or ``mrg_sort(dst, list, MrgSort4Info(...))``: merges 2, 3 or
  4 sorted queues of structures (valid_bit 0b11, 0b111 or 0b1111; element counts 0..4095) into
  one, largest score first; equal scores: the queue listed first is taken first (the order the
  documentation gives for equal proposals, applied across queues). With exhausted suspension the
  merge stops once a queue is used up; ``get_mrg_sort_result()`` then gives how many structures
  of each queue were written (here: after every mrg_sort, also a full one). repeat_time > 1
  (1..255) is honoured under Ascend C's conditions -- four valid queues of one length, stored
  one after the other, no suspension -- and each repeat then moves sources and destination on
  by the four queues' total; other uses of repeat_time > 1 stop the kernel at the call's line.
  Sources and destination must not overlap (checked at the line).
* ``sort(dst, concat, index, tmp, repeat_time, is_full_sort=False)`` (Ascend C's Sort, A2
  layout): without full sort, each repeat sorts 32 scores as sort32 does; with it, all
  ``32 * repeat_time`` scores are sorted (largest first, equal scores in input order, which is
  what sorting each 32 and merging with the earlier queue first gives). ``tmp`` is scratch
  (Ascend C sizes it with the host query GetSortTmpSize, whose value the documentation does not
  give): here the full sort requires it to hold the ``32 * repeat_time`` structures (our
  choice), and does not change it; dst must not overlap concat or index in the full sort.
* ``get_sort_len(n)`` / ``get_sort_offset(n)``: pyasc lowers both to Ascend C's
  ``GetSortLen<float>`` / ``GetSortOffset<float>``: the float elements n structures take,
  ``n * 8 / 4``.

NaN scores (the documentation is silent): here a NaN orders above every number (NaNs keep
their order among themselves), so the result is always a permutation; -0.0 equals +0.0.

Not on A2: ``proposal_concat``, ``proposal_extract``, ``rp_sort16`` and ``mrg_sort4`` work on
8-element region proposals and exist on the Atlas training series (910) and Atlas inference
series AI Core only; using them is a compile error naming the platform.

Timing. mrg_sort follows the measured VMRGSORT rate (15.6 B/c on a 910B1,
reference/aicore_params.md): 16 cycles per 256 bytes of structures written (four DIV-class
repeats). sort32 and sort are an uncalibrated estimate (Huawei's CA model gives BITSORT 2 (half)
/ 4 (float) cycles per repeat, delay 18, but no measurement exists): one DIV-class repeat, 4
cycles, per 32 scores; the full sort that once per pass, 1 + ceil(log4(repeat_time)) passes.
"""
from __future__ import annotations

import numpy as np

from ...dsl.types import PipeID, float16, float32
from . import CostClass, Family, OpSpec, register

SORT_TYPES = (float16, float32)
STRUCT_BYTES = 8
MAX_QUEUE_LEN = 4095
VALID_BITS = {0b11: 2, 0b111: 3, 0b1111: 4}
#: names pyasc exposes that Ascend C has only on 910 / inference-series AI Core
NOT_ON_A2 = ("proposal_concat", "proposal_extract", "rp_sort16", "mrg_sort4")
MRG4_PARAMS = (("element_lengths", None), ("if_exhausted_suspension", False), ("valid_bit", 15),
               ("repeat_times", 1))


def sort_key(scores: np.ndarray) -> np.ndarray:
    """An ascending float64 key whose stable argsort gives the hardware's order (descending
    scores, NaN first, ties by position)."""
    s = scores.astype(np.float64)
    key = -s
    key[np.isnan(s)] = -np.inf
    key[(s == 0)] = 0.0           # -0.0 == +0.0
    key[np.isinf(s) & (s > 0)] = -np.finfo(np.float64).max   # +inf after NaN
    return key


def sort32_reference(scores: np.ndarray, index: np.ndarray, repeat: int):
    """(sorted scores, their indices), 32 * repeat each, per repeat of 32."""
    out_s, out_i = [], []
    for r in range(repeat):
        s, i = scores[32 * r:32 * r + 32], index[32 * r:32 * r + 32]
        order = np.argsort(sort_key(s), kind="stable")
        out_s.append(s[order])
        out_i.append(i[order])
    return np.concatenate(out_s), np.concatenate(out_i)


def mrg_sort_reference(queues, exhausted: bool = False):
    """``queues``: list of (scores, indices) each sorted. Returns (scores, indices, consumed
    per queue)."""
    pos = [0] * len(queues)
    out_s, out_i = [], []
    total = sum(len(q[0]) for q in queues)
    keys = [sort_key(q[0]) for q in queues]
    for _ in range(total):
        best = None
        for k, q in enumerate(queues):
            if pos[k] < len(q[0]) and (best is None or keys[k][pos[k]] < keys[best][pos[best]]):
                best = k
        out_s.append(queues[best][0][pos[best]])
        out_i.append(queues[best][1][pos[best]])
        pos[best] += 1
        if exhausted and pos[best] == len(queues[best][0]):
            break
    dtype = queues[0][0].dtype
    return np.array(out_s, dtype), np.array(out_i, np.uint32), pos


register(OpSpec("sort32", Family.SYSTEM, PipeID.PIPE_V, CostClass.DIV, SORT_TYPES,
                (("dst", "src0", "src1", "repeat_time"),), sort32_reference, None,
                "sort32(dst, src0, src1, repeat_time): 32 (score, uint32 index) pairs a repeat, "
                "largest score first, into 8-byte structures (A2)", 0))
register(OpSpec("mrg_sort", Family.SYSTEM, PipeID.PIPE_V, CostClass.DIV, SORT_TYPES,
                (("dst", "sort_list", "element_count_list", "sorted_num", "valid_bit",
                  "repeat_time", "is_exhausted_suspension"), ("dst", "sort_list", "params")),
                mrg_sort_reference, None,
                "mrg_sort(dst, MrgSortSrcList(...), counts, sorted_num, valid_bit, repeat_time"
                "[, is_exhausted_suspension]) / mrg_sort(dst, list, MrgSort4Info(...)): merge "
                "2-4 sorted queues of (score, index) structures (A2)", 0))
def sort_reference(scores: np.ndarray, index: np.ndarray, repeat: int, full: bool = False):
    """``sort``: sort32 per repeat, or (``full``) all 32 * repeat scores at once."""
    if not full:
        return sort32_reference(scores, index, repeat)
    n = 32 * repeat
    order = np.argsort(sort_key(scores[:n]), kind="stable")
    return scores[:n][order], index[:n][order]


def merge_passes(repeat: int) -> int:
    """Passes of the full sort: the sort32 pass and the 4-way merges of the sorted 32s."""
    passes, runs = 1, repeat
    while runs > 1:
        runs, passes = (runs + 3) // 4, passes + 1
    return passes


register(OpSpec("sort", Family.SYSTEM, PipeID.PIPE_V, CostClass.DIV, SORT_TYPES,
                (("dst", "concat", "index", "tmp", "repeat_time", "is_full_sort"),),
                sort_reference, None,
                "sort(dst, concat, index, tmp, repeat_time, is_full_sort=False): 32 scores a "
                "repeat sorted with their indices, or all of them (A2 layout)", 0))
register(OpSpec("get_mrg_sort_result", Family.SYSTEM, None, CostClass.SCALAR, (), ((),),
                None, None, "get_mrg_sort_result(): structures of each queue the latest "
                "mrg_sort wrote", 0))
