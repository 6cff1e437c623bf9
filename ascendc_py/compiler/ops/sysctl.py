"""System control, cache maintenance and profiling calls (declarations and enums).

These Ascend C calls steer parts of the chip the simulator does not model (the scalar data
cache, the instruction cache, L2 cache policy, the profiling counters, the SoC's power-on
state, the cube's M/N traversal order). Each is one ``sys_hint`` intrinsic (attribute ``kind``
names the call): sema checks its arguments like any op (enums, integer ranges, a GlobalTensor
that was bound), the lowering checks a GlobalTensor operand's first element at run time (so an
unbound or out-of-range tensor faults at the line, as its address would be used on the NPU) and
charges one scalar-unit instruction (the issue of the instruction; ALU latency 2 cycles,
shared/reference/aicore_params.md "Scalar op latency"; profiling markers cost nothing, as
they are not instructions of the program's pipes). Nothing else changes: the simulator has no
caches whose state could differ, so clean/invalidate/preload and the cache hints cannot change a
result or a cycle.

* ``data_cache_clean_and_invalid(entire_type, [dcci_dst,] dst)``: ``CacheLine`` and ``DcciDst``.
* ``data_cache_preload(src, cache_offset)``: ``cache_offset`` bytes (int16 range, Ascend C's
  ``int16_t``).
* ``icache_preload(pre_fetch_len)``; ``get_icache_preload_status()`` is 0 (no preload pending:
  there is no instruction cache to fill).
* ``data_sync_barrier(MemDsbT)``: every memory access issued before it has completed; the
  simulator's scalar accesses complete when they are issued, so only the issue is charged.
* ``metrics_prof_start()`` / ``metrics_prof_stop()``: profiling markers (no cost).
* ``init_soc_state()``, ``set_mm_layout_transform(bool)``: state the simulator does not model.
* ``GlobalTensor.set_l2_cache_hint(CacheMode, CacheRwMode)``.
* ``check_local_memory_ia(CheckLocalMemoryIAParam)``: arms the NPU's watch of a local-memory
  address range; the simulator checks every access against its tensor and memory anyway, so the
  watch adds nothing (its fields are still range-checked).

Other calls of the family need no runtime work and are resolved by sema (``sema/sysctl.py``):
``get_data_block_size_in_bytes()`` (32), ``get_arch_version`` (220, the DaVinci core version of
Atlas A2, our choice of a number), ``get_program_counter()`` (the call's source line: the
simulator has no instruction addresses; our choice), ``trap()`` (stops the kernel with a
KernelAssertionError naming the line), ``print_time_stamp(desc_id)`` (a printf record
``TimeStamp: desc_id=<id>, cycle=<simulated cycle>``), ``dump_acc_chk_point`` (dump_tensor from
element ``count_off``), ``set/get_sys_workspace`` and ``set/get_hccl_context`` (kernel variables
holding a GlobalAddress).
"""
from __future__ import annotations

import enum

from ...dsl.types import PipeID
from . import CostClass, Family, OpSpec, register


class CacheLine(enum.IntEnum):
    """pyasc's ``asc.CacheLine`` (Ascend C's enum, same values)."""
    SINGLE_CACHE_LINE = 0
    ENTIRE_DATA_CACHE = 1


class DcciDst(enum.IntEnum):
    """pyasc's ``asc.DcciDst``."""
    CACHELINE_ALL = 0
    CACHELINE_UB = 1
    CACHELINE_OUT = 2
    CACHELINE_ATOMIC = 3


class MemDsbT(enum.IntEnum):
    """pyasc's ``asc.MemDsbT`` (the memories data_sync_barrier waits for)."""
    ALL = 0
    DDR = 1
    UB = 2
    SEQ = 3


class CacheMode(enum.IntEnum):
    """pyasc's ``asc.CacheMode`` (GlobalTensor.set_l2_cache_hint)."""
    CACHE_MODE_NORMAL = 0
    CACHE_MODE_DISABLE = 1
    CACHE_MODE_LAST = 2
    CACHE_MODE_PERSISTENT = 4


class CacheRwMode(enum.IntEnum):
    """pyasc's ``asc.CacheRwMode``."""
    READ = 1
    WRITE = 2
    RW = 3


#: kind → scalar instructions charged (the figure: one issue, aicore_params.md)
HINT_COST = {"data_cache_clean_and_invalid": 1, "data_cache_preload": 1, "icache_preload": 1,
             "data_sync_barrier": 1, "metrics_prof_start": 0, "metrics_prof_stop": 0,
             "init_soc_state": 1, "set_mm_layout_transform": 1, "set_l2_cache_hint": 0,
             "check_local_memory_ia": 1}

#: CheckLocalMemoryIAParam's fields in pyasc's order: (name, default, (lo, hi) or None for bool)
CHECK_IA_FIELDS = (("enable_bit", 0, (0, 255)), ("start_addr", 0, (0, 2**32 - 1)),
                   ("end_addr", 0, (0, 2**32 - 1)), ("is_scalar_read", False, None),
                   ("is_scalar_write", False, None), ("is_vector_read", False, None),
                   ("is_vector_write", False, None), ("is_mte_read", False, None),
                   ("is_mte_write", False, None), ("is_enable", False, None))

ARCH_VERSION = 220
DATA_BLOCK_BYTES = 32

HF32_ON, HF32_AWAY = 1, 2          # bits of ctx[abi.HF32]
HF32_DROPPED_BITS = 13             # float32 keeps 23 mantissa bits, HF32 10 (as TF32: our reading)


def hf32_reference(x, away: bool = False):
    """float32 values rounded to HF32 (1 sign, 8 exponent, 10 mantissa bits) as the cube reads
    them in HF32 mode: to nearest, ties to even or (``away``) away from zero; inf and NaN kept.
    The docs name the rounding modes but not HF32's width; 10 mantissa bits is our reading."""
    import numpy as np
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    half = 1 << (HF32_DROPPED_BITS - 1)
    keep = bits >> HF32_DROPPED_BITS
    add = half if away else (half - 1) + (keep & 1)
    rounded = ((bits + add) >> HF32_DROPPED_BITS) << HF32_DROPPED_BITS
    special = (bits & 0x7F800000) == 0x7F800000
    out = np.where(special, bits, rounded).astype(np.uint32)
    return out.view(np.float32)


register(OpSpec("set_hf32", Family.SYSTEM, PipeID.PIPE_S, CostClass.SCALAR, (),
                (("value",),), hf32_reference, None,
                "set_hf32_mode(bool) / set_hf32_trans_mode(bool) (attr which): float32 mmad "
                "operands are read rounded to HF32 while the mode is on (ties to even, or away "
                "from zero with the trans mode); one scalar instruction", flops_per_elem=0))
register(OpSpec("set_pad_value", Family.SYSTEM, PipeID.PIPE_S, CostClass.SCALAR, (),
                (("value",),), None, None,
                "set_pad_value(value[, pos]): the padding register of data_copy_pad GM->UB. "
                "While it is set, a data_copy_pad whose DataCopyPadExtParams has is_pad=False "
                "fills its left/right paddings and dummies with the value, converted to the "
                "copy's dtype as a run-time scalar cast does (is_pad=True keeps the params' "
                "padding_value); "
                "one scalar instruction", flops_per_elem=0))
register(OpSpec("sys_hint", Family.SYSTEM, PipeID.PIPE_S, CostClass.SCALAR, (),
                (("kind", "operand"),), None, None,
                "cache maintenance, cache hints, profiling markers and SoC state calls "
                "(attr kind): argument and operand checks, the cost of one scalar issue "
                "(profiling markers and L2 hints: none); no other effect on a simulator "
                "without caches", flops_per_elem=0))
