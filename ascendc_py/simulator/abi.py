"""The binary interface between generated kernel code and the Python runtime.

A compiled kernel is ``int64 entry(int64 *ctx)``. ``ctx`` is one int64 array per simulated
core: a fixed header, then one record per TQue/TBuf, then the flag table. Codegen and the
runtime both read the slot numbers below; nothing else knows the layout.
"""
from __future__ import annotations

import enum

from ..dsl.types import EVENT_IDS_PER_EVENT, HardEvent, Memory

# ----------------------------------------------------------------------------- header slots
ERR_CODE = 0
ERR_SITE = 1
ERR_A = 2
ERR_B = 3
ERR_C = 4
BLOCK_IDX = 5
BLOCK_NUM = 6
SUB_BLOCK_IDX = 7
GM_PTRS = 8          # address of an int64 array: base address of each GM argument
GM_SIZES = 9         # address of an int64 array: byte size of each GM argument
SCALARS = 10         # address of an int64 array: scalar arguments (floats as float64 bits)
LOOP_BUDGET = 11     # while-loop iterations left before the kernel is declared hung
CYCLE = 12           # simulated scalar clock (the timing model advances it)
RES0 = 13            # RES0..RES2: results of runtime-library calls (address, bytes, tag)
RES1 = 14
RES2 = 15
MEM_BASE = 16        # + Memory: base address of each local memory
MEM_SIZE = 24        # + Memory: size in bytes
ALLOC_PTR = 32       # + Memory: bump pointer of TPipe.init_buffer
TIMING = 64          # start of the timing model's area (64 slots)
HEADER_SLOTS = 128

# ----------------------------------------------------------------------------- queue records
QUEUE_SLOTS = 32
Q_BASE, Q_BUF_LEN, Q_STRIDE, Q_NUM, Q_INITED, Q_CURSOR, Q_HEAD, Q_COUNT = range(8)
Q_STATE = 8          # 8 slots: 0 free, 1 allocated, 2 enqueued
Q_FIFO = 16          # 8 slots: buffer indices in enque order
Q_MEM = 24           # the Memory the buffers live in
Q_MAX_BUFFERS = 8

BUF_FREE, BUF_ALLOCATED, BUF_ENQUEUED = 0, 1, 2

NUM_EVENTS = len(HardEvent)
FLAG_SLOTS = NUM_EVENTS * EVENT_IDS_PER_EVENT   # per flag: >0 set, <0 pending waits
NUM_MEMORIES = len(Memory)


def queue_slot(num_queues: int, qid: int, field: int) -> int:
    return HEADER_SLOTS + qid * QUEUE_SLOTS + field


def flag_base(num_queues: int) -> int:
    return HEADER_SLOTS + num_queues * QUEUE_SLOTS


def flag_site_base(num_queues: int) -> int:
    """Per flag: the error-site id of the last wait_flag still pending."""
    return flag_base(num_queues) + FLAG_SLOTS


def ctx_slots(num_queues: int) -> int:
    return flag_site_base(num_queues) + FLAG_SLOTS


class ErrorCode(enum.IntEnum):
    """Why a kernel stopped. The runtime maps each to an exception class and message."""

    OK = 0
    GM_OUT_OF_BOUNDS = 1
    LOCAL_OUT_OF_RANGE = 2
    LOCAL_MISALIGNED = 3
    CAPACITY = 4
    QUEUE_EMPTY = 5
    QUEUE_NO_FREE_BUFFER = 6
    QUEUE_FULL = 7
    QUEUE_FOREIGN_TENSOR = 8
    QUEUE_NOT_INITIALISED = 9
    QUEUE_BAD_STATE = 10
    QUEUE_REINIT = 11
    FLAG_ID_RANGE = 12
    FLAG_DOUBLE_SET = 13
    FLAG_NEVER_SET = 14
    LOOP_LIMIT = 15
    ASSERTION = 16
    ZERO_STEP = 17
    DIVISION_BY_ZERO = 18
    NEGATIVE_COUNT = 19
    BAD_BUFFER_COUNT = 20
