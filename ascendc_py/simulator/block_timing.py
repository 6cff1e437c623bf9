"""A block's timing record (``BlockTiming``), made from its core's ctx and counters when a
launch's report is read (``runtime.BlockTiming``; not imported by a launch whose report nobody
reads).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..dsl.types import NUM_PIPES
from . import abi


@dataclass
class BlockTiming:
    """What the timing model recorded for one block (cycles)."""

    block: int
    cycles: int
    pipe_busy: np.ndarray      # per pipe (PipeID order, PIPE_ALL excluded)
    stall_flag: np.ndarray     # per pipe
    stall_scalar: np.ndarray   # per pipe
    stall_queue: int
    counters: np.ndarray       # timing_params counter layout
    scalar_busy: int = 0       # cycles the scalar unit spent issuing (not waiting)
    trace: Optional[np.ndarray] = None
    trace_dropped: int = 0
    hbm_stall: int = 0         # cycles added by sharing HBM/L2 with other cores (contention.py)
    gm_demand: Optional[np.ndarray] = None   # the block's GM demand record (abi layout)


def _block_timing(block: int, ctx: np.ndarray, counters: np.ndarray, trace_buf,
                  demand: Optional[np.ndarray] = None) -> BlockTiming:
    p = slice(0, NUM_PIPES)
    done = ctx[abi.PIPE_DONE:abi.PIPE_DONE + NUM_PIPES]
    cycles = int(max(int(ctx[abi.T_SCALAR]), int(done.max())))
    trace = None
    if trace_buf is not None:
        trace = trace_buf[:int(ctx[abi.TRACE_LEN])].copy()
    return BlockTiming(block, cycles, ctx[abi.PIPE_BUSY:abi.PIPE_BUSY + NUM_PIPES][p].copy(),
                       ctx[abi.STALL_FLAG:abi.STALL_FLAG + NUM_PIPES].copy(),
                       ctx[abi.STALL_SCALAR:abi.STALL_SCALAR + NUM_PIPES].copy(),
                       int(ctx[abi.STALL_QUEUE]), counters.copy(),
                       int(ctx[abi.T_SCALAR] - ctx[abi.STALL_FLAG] - ctx[abi.STALL_QUEUE]),
                       trace, int(ctx[abi.TRACE_DROPPED]), gm_demand=demand)


__all__ = ["BlockTiming"]
