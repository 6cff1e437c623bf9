"""``init_const_value``: fill an L1 (A1/B1) or L0A/L0B (A2/B2) tensor with a constant (Ascend C
``InitConstValue``, the A2/A3 form with every InitConstValueParams field).

``InitConstValueParams(repeat_times, block_num, dst_gap, init_value)``: each of ``repeat_times``
repeats writes ``block_num`` consecutive blocks, then skips ``dst_gap`` blocks; a block is 32
bytes in L1 and a 512-byte fractal in L0A/L0B; block ``j`` of repeat ``r`` starts at block
``r·(block_num + dst_gap) + j`` of dst. ``block_num = 0`` writes nothing (the older chips'
form with fixed 512-byte repeats is not modelled). The L1 fill runs on PIPE_MTE2 (its
consumer, load_data, waits with ``HardEvent.MTE2_MTE1``), the L0A/L0B fill on PIPE_MTE1 (mmad
waits with ``MTE1_M``), as the Ascend C C-API documents for ``asc_fill_l1``/``asc_fill_l0a``.
dtypes on A2/A3: half, bfloat16, float, int16, uint16, int32, uint32; ``init_value`` is
converted to the tensor's dtype.
"""
from __future__ import annotations

import numpy as np

from ...dsl.types import (Memory, PipeID, bfloat16, float16, float32, int16, int32, uint16,
                          uint32)
from . import CostClass, Family, OpSpec, register

#: field, lowest, highest (Ascend C docs, A2/A3 with all parameters)
INIT_CONST_FIELDS = (("repeat_times", 0, 32767), ("block_num", 0, 32767), ("dst_gap", 0, 32767))
INIT_CONST_TYPES = (float16, bfloat16, float32, int16, uint16, int32, uint32)
#: bytes of one block by destination memory, and the pipe the fill runs on
BLOCK_BYTES = {Memory.L1: 32, Memory.L0A: 512, Memory.L0B: 512}
FILL_PIPE = {Memory.L1: PipeID.PIPE_MTE2, Memory.L0A: PipeID.PIPE_MTE1,
             Memory.L0B: PipeID.PIPE_MTE1}


def init_const_value_reference(dst: np.ndarray, repeat_times: int, block_num: int, dst_gap: int,
                               init_value, block_bytes: int) -> np.ndarray:
    """``dst`` (flat elements from the tensor's start) after ``init_const_value``; ``block_bytes``
    is 32 for L1, 512 for L0A/L0B. ``init_value`` is given in dst's dtype (bfloat16: its bits
    as uint16)."""
    out = dst.copy()
    per = block_bytes // out.itemsize
    value = np.array(init_value).astype(out.dtype)
    for r in range(int(repeat_times)):
        first = r * (int(block_num) + int(dst_gap)) * per
        out[first:first + int(block_num) * per] = value
    return out


register(OpSpec(
    "init_const_value", Family.SYSTEM, PipeID.PIPE_MTE1, CostClass.DMA, INIT_CONST_TYPES,
    (("dst", "init_const_value_params"),), init_const_value_reference,
    doc="Fill an A1/B1 (L1, 32-byte blocks, PIPE_MTE2) or A2/B2 (L0A/L0B, 512-byte fractals, "
        "PIPE_MTE1) tensor with a constant: InitConstValueParams(repeat_times, block_num, "
        "dst_gap, init_value); repeat r writes block_num blocks from block "
        "r·(block_num + dst_gap).", flops_per_elem=0))
