"""The binary interface between generated kernel code and the Python runtime.

A compiled kernel is ``int64 entry(int64 *ctx)``. ``ctx`` is one int64 array per simulated
core: a fixed header, then one record per TQue/TBuf, then the flag table. Codegen and the
runtime both read the slot numbers below; nothing else knows the layout.
"""
from __future__ import annotations

import enum

from .. import envvars
from ..dsl.types import EVENT_IDS_PER_EVENT, NUM_PIPES, HardEvent, Memory

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
LOOP_BUDGET = 11     # loop iterations (all loops) left before the kernel is declared hung
CYCLE = 12           # simulated scalar clock (the timing model advances it)
RES0 = 13            # RES0..RES2: results of runtime-library calls (address, bytes, tag)
RES1 = 14
RES2 = 15
MEM_BASE = 16        # + Memory: base address of each local memory
MEM_SIZE = 24        # + Memory: size in bytes
ALLOC_PTR = 32       # + Memory: bump pointer of TPipe.init_buffer
TIMING = 64          # start of the timing model's area (64 slots):
T_SCALAR = 64        #   scalar unit issue clock (cycles)
PIPE_FREE = 65       #   + pipe: cycle the pipe can start its next instruction
PIPE_DONE = 72       #   + pipe: completion cycle of the pipe's latest instruction
PIPE_BUSY = 79       #   + pipe: cycles the pipe was occupied
STALL_FLAG = 86      #   + pipe: cycles the pipe waited on a flag (incl. queue-implied flags)
STALL_SCALAR = 93    #   + pipe: cycles the pipe sat idle waiting for the scalar unit to issue
STALL_QUEUE = 100    #   scalar cycles lost because a pipe's instruction queue was full
COSTS = 101          #   address of the float64 cost table (simulator/timing_params.py)
COUNTERS = 102       #   address of the int64 counters (instructions, elements, bytes)
TRACE_PTR = 103      #   address of the trace buffer (0: tracing off)
TRACE_CAP = 104      #   capacity in events
TRACE_LEN = 105      #   events written
PIPE_COUNT = 106     #   + pipe: instructions issued to the pipe
TRACE_DROPPED = 113  #   events that did not fit
RING_BASE = 114      #   slot number of the per-pipe ring (set by the runtime)
FLAG_TIME_BASE = 115 #   slot number of the flag fire times (set by the runtime)
ERR_D = 116          # which operand of the failing instruction (0 = first)
TIMING_ON = 117      # 1: keep the timing model's books (launch option)
MASK_LO = 118        # vector mask register, lanes 0..63 (normal mode) or the count (counter)
MASK_HI = 119        # vector mask register, lanes 64..127
MASK_MODE = 120      # 0: normal mode, 1: counter mode (set_mask_count)
LENIENT = 121        # 1: GM accesses within GM_SLACK past a buffer are warnings, not faults
GM_SLACK = 122       # bytes of device-like slack after each GM buffer in lenient mode
WARN_PTR = 123       # address of an int64 [cap, 4] array of warnings (site, arg, first, last)
WARN_CAP = 124
WARN_LEN = 125
PRINT_PTR = 126      # address of this block's printf/dump_tensor buffer (0: none); int64 words
                     # [capacity bytes, used bytes, dropped records] then the records
GM_ACCESS = 127      # address of an int64 array (0: none): [number of GM arguments, then one word
                     # per argument]: GM_READ_ONLY, GM_REQUIRES_GRAD set by the runtime, GM_WRITTEN
                     # by instructions whose argument is chosen at run time (simulator/gm_access.py)
GM_READ_ONLY = 1     #   the argument's memory may not be written (writeable=False, bytes, mmap)
GM_WRITTEN = 2       #   an instruction wrote (or was about to write) the argument
GM_REQUIRES_GRAD = 4  #  a torch tensor that requires grad (with grad mode on): not written
SANITIZE = 128       # 1: sanitize mode (races, uninitialised reads, GM write log)
SAN_PTR = 129        # address of the sanitizer state array (codegen/sanitize.py layout)
SAN_GRAN = 130       # index of the first granule record in that array
POS_LIVE = 131       # + TPosition: tensors currently allocated from TQues at that position
MAX_LIVE_PER_POSITION = 8  # A2/A3: more hangs the NPU (CPU mode aborts)
                     # (POS_LIVE .. POS_LIVE + 16: one slot per TPosition)
BLAS_SGEMM = 148     # address of the host CBLAS sgemm (simulator/blas.py), 0: the library's loop
CORE_TYPE = 149      # 0: this sub-core is a vector core (AIV), 1: a cube core (AIC)
KERNEL_MODE = 150    # 0: vector kernel (AIV only), 1: cube kernel (AIC only), 2: mix (1 AIC : 2 AIV)
SUB_BLOCK_NUM = 151  # vector cores per AI Core in this launch (2 in mix kernels, else 1)
XC_STATE = 152       # cross-core flags: address of the launch group's shared state (0: none;
                     # layout in simulator/xcore_layout.py)
XC_UNIT = 153        #   this sub-core's index in that state
XC_STALL = 154       #   cycles this sub-core's scalar unit waited at cross-core waits (timing)
XC_WAITS = 155       #   cross-core waits (cross_core_wait_flag, sync_all) it executed
XC_TIME = 156        #   scratch: fire time of the latest cross-core set (timing model)
CUBE_SCRATCH = 157   # address of this core's float32 scratch for mmad (operands widened)
CUBE_SCRATCH_SIZE = 158  # its size in bytes
BLAS_THREADS = 159   # address of openblas_set_num_threads_local (0: none); see simulator/blas.py
TWIN_MASK = 160      # tensor windows of the instruction being issued: bit w set = operand w has one
TWIN = 161           # + 2*w, + 2*w + 1: [lo, hi) bytes of the LocalTensor given as operand w
MAX_WINDOWS = 8      #   (operands 0..7; slots 161..176)
TRUNC_SITE = 177     # the latest data_copy the hardware truncated: 1 + its site (0: none),
TRUNC_MEM = 178      #   the destination memory and the bytes [LO, HI) it did not copy
TRUNC_LO = 179       #   (sanitize mode names it when those bytes are read uninitialised)
TRUNC_HI = 180
GM_READ_ARG = 181    # the GM argument of the latest GM source check_gm (whose bytes a DMA reads)
GM_DEMAND = 182      # address of this block's float64 GM demand record (0: none; layout below)
GM_PORT = 183        # this core's GM port, shared by reads and writes (timing_gm.py): the data
                     # phase [start, end) of the latest GM read (183, 184) and write (185, 186)
GM_DEMAND_SHIFT = 187  # log2 of the demand record's window width (the record keeps the width)
MM_STALL = 188       # AIV of a mix kernel: cycles its scalar unit waited for Matmul results (timing)
MM_WAITS = 189       #   Matmul requests it sent to its AIC
LOCAL_REACH = 190    # the end (bytes) of the furthest local-memory range check_local passed in
                     # this block, in any memory: no instruction wrote a local byte at or past it
                     # (the native block loop refills fresh memory only below it)
ATOMIC = 191         # GM write mode of MTE3 copies (set_atomic_*): low byte 0 none, 1 add, 2 max,
                     # 3 min; bits 8..15 the dtype they accumulate in (ops/atomic.py ATOMIC_TYPES)
MRG_SORT = 192       # structures of queues 1..4 the latest mrg_sort wrote, 16 bits each
CMPMASK_LO = 193     # the vector unit's CMPMASK register (set_cmp_mask, compare without dst),
CMPMASK_HI = 194     #   bytes 0..7 and 8..15 (ops/cmpmask.py)
HF32 = 195           # the cube's HF32 mode (set_hf32_mode / set_hf32_trans_mode, ops/sysctl.py):
                     #   bit 0 on, bit 1 ties away from zero (else ties to even)
PAD_VALUE = 196      # set_pad_value's register (float64 bits) for data_copy_pad GM->UB padding,
PAD_VALUE_SET = 197  #   and whether it was set in this block (ops/sysctl.py)
HEADER_SLOTS = 198
TRACE_FIELDS = 6     # start, occupancy, latency, pipe, site, op
QUEUE_DEPTH = 32     # per-pipe instruction queue (ring of start times)

# ----------------------------------------------------------------------------- GM demand record
# float64 per block (simulator/contention.py reads it after the launch): [DEMAND_WIDTH] window
# width in cycles (starts at DEMAND_BASE_WIDTH, doubles when the block's time outgrows the
# windows), then per window of the block's own time: GM bytes read, GM bytes written, cycles the
# core's GM port was moving data, GM bytes read that L2 served (the Matmul API's own L2 re-read
# model, timing_matmul.py; HBM never sees them); then the bytes DMAs read from each GM argument,
# then each GM
# argument's size (written by the runtime, so the record alone tells the post-pass the footprint).
DEMAND_WINDOWS = 64
DEMAND_BASE_SHIFT = 6
DEMAND_BASE_WIDTH = 1 << DEMAND_BASE_SHIFT
DEMAND_WIDTH = 0
DEMAND_READ = 2
DEMAND_WRITE = DEMAND_READ + DEMAND_WINDOWS
DEMAND_BUSY = DEMAND_WRITE + DEMAND_WINDOWS
DEMAND_L2 = DEMAND_BUSY + DEMAND_WINDOWS
DEMAND_ARGS = DEMAND_L2 + DEMAND_WINDOWS


def demand_size(num_gm_args: int) -> int:
    """float64 slots of a block's GM demand record."""
    return DEMAND_ARGS + 2 * max(1, num_gm_args)

# ----------------------------------------------------------------------------- native block loop
# ``asc_run_blocks(job, thread)`` (compiler/codegen/block_loop.py) runs a launch's blocks on one
# host thread without returning to Python between them; simulator/runtime.py fills the records.
# The job record (int64), one per launch, shared by its threads, at the start of the launch's
# buffer; the arrays it names (JOB_HEADERS ... JOB_SCALARS) are given as byte offsets from it:
JOB_KERNEL = 0       # address of the kernel's entry function ``int64 (int64 *ctx)``
JOB_BLOCK_DIM = 1
JOB_NEXT = 2         # the next block to start: threads take blocks with an atomic add
JOB_STOP = 3         # 1: no further block starts (a block failed, Ctrl-C stopped the launch)
JOB_FIRED = 4        # address of the SIGINT handler's counter (0: none) ...
JOB_FIRED_AT = 5     # ... and its value when the launch started: Ctrl-C stops the loop
JOB_HEADERS = 6      # int64 [block_dim, HEADER_SLOTS]: each block's ctx header after it
JOB_COUNTERS = 7     # int64 [block_dim, JOB_COUNTER_SLOTS] (zeroed): each block's counters
JOB_COUNTER_SLOTS = 8
JOB_DEMAND = 9       # float64 [block_dim, JOB_DEMAND_SLOTS] (zeroed): GM demand records
JOB_DEMAND_SLOTS = 10
JOB_RC = 11          # int64 [block_dim]: each block's return code
JOB_GM_PTRS = 12     # the launch's ctx slots GM_PTRS, GM_SIZES, SCALARS (offsets of their arrays),
JOB_GM_SIZES = 13    #   LOOP_BUDGET, TIMING_ON, GM_ACCESS (written into every block's ctx after
JOB_SCALARS = 14     #   the template)
JOB_LOOP_BUDGET = 15
JOB_TIMING_ON = 16
JOB_GM_ACCESS = 17
JOB_GM_COUNT = 18    # GM arguments (each block's demand record gets their sizes)
JOB_STOP_BUDGET = 19  # 0, or the loop budget a stop wrote (watchdog, Ctrl-C): every block that
                     # starts after it gets it as its LOOP_BUDGET, as the Python loop's do
JOB_RECORD = 20
# The thread record (int64), one per host thread of the launch:
THREAD_STATE = 0     # THREAD_WAITING, THREAD_RUNNING or THREAD_CANCELLED (atomic)
THREAD_FAULT = 1     # 1 + the block that failed on this thread (0: none); the ctx keeps its state
THREAD_WARNED = 2    # 1 + a block that left warnings in the ctx's buffer (0: none): the loop
                     # returns after it so that they are collected, then is called again
THREAD_CTX = 3       # address of the thread's ctx (ctx slots int64)
THREAD_TEMPLATE = 4  # address of its ctx template: copied into the ctx before every block
THREAD_CTX_SLOTS = 5
THREAD_MEMORIES = 6  # how many local memories, then (base address, bytes) of each
THREAD_DIRTY = 7     # address of the core's int64 per memory: the bytes from its start that may
                     # differ from FRESH_MEMORY_BYTE (every byte after them holds it)
THREAD_MEMORY = 8
THREAD_WAITING, THREAD_RUNNING, THREAD_CANCELLED = 0, 1, 2


def thread_record_size(memories: int) -> int:
    """int64 slots of a thread record with ``memories`` local memories."""
    return THREAD_MEMORY + 2 * memories


# The host-thread pool's record (int64, one per process; simulator/block_runner.py): its worker
# threads wait in ``asc_pool_serve`` for ``asc_pool_launch`` to offer them a launch's thread
# records (compiler/codegen/block_loop.py).
POOL_GEN = 0         # bumped by every launch that offers work; idle workers sleep on its low
                     # 32 bits (futex)
POOL_SPIN = 1        # ns a thread spins (pause instructions) before it sleeps: a worker after a
                     # launch, the launching thread waiting for a worker
POOL_SLOTS = 2       # then per worker (POOL_SLOT words): its state (a futex word), the job
POOL_SLOT = 3        # record's address and its thread record's address
SLOT_STATE, SLOT_JOB, SLOT_RECORD = 0, 1, 2
POOL_IDLE, POOL_OFFERED, POOL_RUNNING, POOL_SLEEPING = 0, 1, 2, 3


def pool_record_size(workers: int) -> int:
    """int64 slots of the pool record of ``workers`` worker threads."""
    return POOL_SLOTS + POOL_SLOT * workers


# The argument binder's spec (int64, one per planned launch signature; simulator/fast_launch.py):
# ``asc_bind_args(spec, job, args)`` (compiler/codegen/bind_args.py) checks a launch's argument
# tuple against it and writes the GM pointers, sizes and scalars into the job record. Byte
# offsets of the interpreter's objects and addresses of its types and C API functions are
# filled in at run time (and checked there on known objects before first use).
BIND_COUNT = 0         # how many arguments the tuple must hold
BIND_OB_TYPE = 1       # byte offset of an object's type pointer
BIND_TUPLE_SIZE = 2    # byte offsets of a tuple's size and of its first item
BIND_TUPLE_ITEMS = 3
BIND_SIGINT = 4        # address of asc_sigint_installed (0: no check): 0 from it refuses
BIND_FIRED = 5         # address of the SIGINT handler's counter (0: none): into JOB_FIRED_AT
BIND_NDARRAY = 6       # address of numpy.ndarray, then byte offsets in an array object of its
BIND_DATA = 7          #   data pointer, ndim (int32), shape pointer, dtype pointer and flags
BIND_NDIM = 8          #   (int32)
BIND_SHAPE = 9
BIND_DESCR = 10
BIND_FLAGS = 11
BIND_FLAGS_NEEDED = 12  # flags every array needs (C-contiguous, writeable)
BIND_INT = 13          # addresses of int, float and bool, of True, and of
BIND_FLOAT = 14        #   PyLong_AsLongLongAndOverflow, PyFloat_AsDouble,
BIND_BOOL = 15         #   PyObject_RichCompareBool and PyErr_Clear
BIND_TRUE = 16
BIND_AS_LONG = 17
BIND_AS_DOUBLE = 18
BIND_COMPARE = 19
BIND_CLEAR = 20
BIND_ENTRIES = 24      # then BIND_ENTRY words per argument: its kind and A..D
BIND_ENTRY = 5
# kinds: an array (A its dtype's address, B its itemsize, C and D the job slots of its pointer
# and size); an int32, float or bool scalar (C its job slot: the int, the float64's bits, 0/1);
# a constant (A its type's address, B the address of the value it must equal)
BIND_ARRAY, BIND_INT32, BIND_FLOAT64, BIND_BOOL_, BIND_CONST = 1, 2, 3, 4, 5
BIND_WRONG_COUNT, BIND_NO_HANDLER = -1, -2   # besides 1 + the index of an argument refused


def bind_spec_size(arguments: int) -> int:
    """int64 slots of the binder's spec for ``arguments`` arguments."""
    return BIND_ENTRIES + BIND_ENTRY * arguments


# ----------------------------------------------------------------------------- queue records
QUEUE_SLOTS = 80
Q_BASE, Q_BUF_LEN, Q_STRIDE, Q_NUM, Q_INITED, Q_CURSOR, Q_HEAD, Q_COUNT = range(8)
Q_STATE = 8          # 8 slots: 0 free, 1 allocated, 2 enqueued
Q_FIFO = 16          # 8 slots: buffer indices in enque order
Q_MEM = 24           # the Memory the buffers live in
Q_READY = 32         # 8 slots: cycle each buffer's enque (producer's set) fired
Q_FREED = 40         # 8 slots: cycle each buffer's free_tensor (consumer's set) fired
Q_GEN = 48           # 8 slots: generation of each buffer (bumped by free_tensor)
Q_WRITER = 56        # 8 slots: bit mask of the pipes that wrote the buffer since its hand-over
Q_WSITE = 64         # 8 slots: the error site of the latest of those writes (not the S pipe's)
Q_FREE_SITE = 72     # 8 slots: the site of the buffer's last free_tensor
Q_MAX_BUFFERS = 8

# A queue tensor's tag: generation << TAG_GEN_SHIFT | queue id << 8 | buffer index (-1: a
# static LocalTensor or a TBuf's). A tensor used after its buffer was freed has a stale
# generation.
TAG_GEN_SHIFT = 16
TAG_GEN_MASK = (1 << 14) - 1

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


def flag_time_base(num_queues: int) -> int:
    """Per flag: the cycle its last set_flag fired (timing model)."""
    return flag_site_base(num_queues) + FLAG_SLOTS


def flag_waiter_base(num_queues: int) -> int:
    """Per flag: the pipe of the wait_flag pending on it (sanitize mode's happens-before)."""
    return flag_time_base(num_queues) + FLAG_SLOTS


def ring_base(num_queues: int) -> int:
    """Per pipe: QUEUE_DEPTH start cycles of the latest instructions (queue-full model)."""
    return flag_waiter_base(num_queues) + FLAG_SLOTS


def ctx_slots(num_queues: int) -> int:
    return ring_base(num_queues) + NUM_PIPES * QUEUE_DEPTH


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
    MASK_RANGE = 21
    REPEAT_RANGE = 22
    DATA_COPY_PARAM_RANGE = 23  # a DataCopy(Ext)Params/padding field outside its legal range
    DATA_RACE = 24
    UNINITIALIZED_READ = 25
    TOO_MANY_LIVE_TENSORS = 26
    CUBE_PARAM_RANGE = 27       # a cube parameter (Nd2Nz/LoadData2D/Mmad/Fixpipe) out of range
    CUBE_MISALIGNED = 28        # a cube operand not on its memory's alignment (L0A/L0B 512 B)
    MATMUL_OPERAND_MISSING = 29  # a Matmul call without its A/B matrix or with a bad tiling
    # sub-cores and cross-core synchronisation (40..49)
    XCORE_FLAG_RANGE = 40       # cross-core flag id outside 0..10
    XCORE_OVERFLOW = 41         # more than 16 sets pending on a cross-core flag counter
    XCORE_DEADLOCK = 42         # a cross-core wait no sub-core of the launch can satisfy
    XCORE_ABORTED = 43          # a cross-core wait stopped because another sub-core faulted
    XCORE_MODE = 44             # a cross-core mode whose partner cores this launch lacks
    MEMORY_NOT_ON_CORE = 45     # an instruction touched a local memory this sub-core lacks
    # operand extents and value ranges (50..59)
    TENSOR_EXTENT = 50          # an operand runs past the LocalTensor it was given
    VALUE_RANGE = 51            # a run-time value outside the range its use allows
    STRIDE_RANGE = 52           # a block/repeat stride outside its hardware field
    USE_AFTER_FREE = 53         # a queue tensor used after free_tensor returned its buffer
    NO_HANDOVER = 54            # a queue tensor another pipe wrote, used with no hand-over
    GM_UNSET = 55               # a GlobalTensor used before its set_global_buffer ran
    # launch arguments (60..69)
    READ_ONLY_WRITE = 60        # an instruction would write a GM argument that may not be written


LOOP_BUDGET_ENV = "ASCENDC_PY_LOOP_BUDGET"
DEFAULT_LOOP_BUDGET = 1 << 25


def loop_budget() -> int:
    """Iterations a block's loops may run in all before LoopLimitError (``ASCENDC_PY_LOOP_BUDGET``
    overrides the default of 2**25; a positive integer)."""
    raw = envvars.get(LOOP_BUDGET_ENV)
    return _LOOP_BUDGETS.get(raw) or _loop_budget(raw)


_LOOP_BUDGETS: dict = {}    # the variable's text -> its budget (read on every launch)


def _loop_budget(raw: str) -> int:
    if len(_LOOP_BUDGETS) > 64:
        _LOOP_BUDGETS.clear()
    _LOOP_BUDGETS[raw] = value = _parse_loop_budget(raw.strip())
    return value


def _parse_loop_budget(raw: str) -> int:
    try:
        value = int(raw) if raw else DEFAULT_LOOP_BUDGET
    except ValueError:
        value = DEFAULT_LOOP_BUDGET
    return value if 0 < value < 1 << 62 else DEFAULT_LOOP_BUDGET


LAUNCH_TIMEOUT_ENV = "ASCENDC_PY_LAUNCH_TIMEOUT"
DEFAULT_LAUNCH_TIMEOUT = 60.0
WATCHDOG_BUDGET = -(1 << 62)   # written into LOOP_BUDGET when a launch runs out of time
INTERRUPT_BUDGET = WATCHDOG_BUDGET + (1 << 40)   # ... when Ctrl-C stops it (same effect)


def stopped_by_interrupt(budget: int) -> bool:
    """A loop budget a stop wrote: True for Ctrl-C, False for the time limit."""
    return budget > WATCHDOG_BUDGET + (1 << 39)


def launch_timeout() -> float:
    """Seconds a launch may run before its loops are stopped (``ASCENDC_PY_LAUNCH_TIMEOUT``,
    default 60; 0 turns the watchdog off)."""
    raw = envvars.get(LAUNCH_TIMEOUT_ENV).strip()
    try:
        value = float(raw) if raw else DEFAULT_LAUNCH_TIMEOUT
    except ValueError:
        value = DEFAULT_LAUNCH_TIMEOUT
    return value if value == value and value >= 0 else DEFAULT_LAUNCH_TIMEOUT
