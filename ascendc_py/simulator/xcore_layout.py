"""Layout of the shared state of cross-core synchronisation (one int64 array per launch group).

A *group* is the set of sub-cores that run at the same time and may signal each other: one
block's sub-cores (AIC and AIVs), or every sub-core of the launch when the kernel uses
launch-wide synchronisation (``sync_all`` or mode-0 cross-core flags). The native code
(``compiler/codegen/lower_crosscore.py``) reads and writes it under a spin lock (``LOCK``);
the host (``simulator/subcores.py``) fills the header and the units' identities before the run
and writes ``U_DONE`` when a sub-core's kernel returns.

Counters follow Ascend C: every sub-core has one counter per flag id; ``cross_core_wait_flag``
blocks while its own counter is 0, then takes one. A set delivers to receivers' counters:

- mode 0: once every sub-core of the setter's type in the group has set the flag, each of
  them gets one (a barrier of all AIVs, or of all AICs);
- mode 1: once both AIVs of the AI Core have set it, each gets one;
- mode 2: a set on the AIC gives each AIV of its AI Core one; once every AIV of the AI Core
  has set it, the AIC gets one.

Pending arrivals of a barrier and pending counts are rings of ``RING_CAP`` cycle stamps (the
timing model: a wait starts no earlier than the set, or the last arrival of a barrier,
it takes). Flags ``SYNC_AIV_FLAG`` and ``SYNC_ALL_FLAG`` are internal (``sync_all``).
"""
from __future__ import annotations

USER_FLAGS = 11                      # flag ids 0..10 (A2/A3)
SYNC_AIV_FLAG = 11                   # sync_all(): a mode-0 barrier of the AIVs
SYNC_ALL_FLAG = 12                   # sync_all(is_aiv_only=False): a barrier of every sub-core
SERVER_FLAG = 13                     # never set: an idle Matmul server (the AIC of a mix kernel)
                                     # is "blocked" on it for the deadlock scan of cross-core waits
NFLAGS = 14
COUNTER_LIMIT = 16                   # Ascend C: a flag's counter holds at most 16 sets
RING_CAP = 16
RING_SLOTS = 2 + RING_CAP            # head, count, cycle stamps

# barrier kinds (pending arrivals per kind): mode 0, mode 1, mode 2 from an AIV, sync_all(False)
KIND_TYPE, KIND_PAIR, KIND_TO_AIC, KIND_ALL = 0, 1, 2, 3
NKINDS = 4

# header
LOCK = 0
ABORT = 1            # 1: a sub-core of the group faulted; waiters stop
NUNITS = 2
NAIV = 3             # AIVs per block
HAS_AIC = 4
PER_BLOCK = 5
NBLOCKS = 6
YIELD_FN = 7         # address of sched_yield()
SLEEP_FN = 8         # address of usleep(useconds)
LATENCY = 9          # cycles from a cross-core set to the wait it satisfies (timing)
HEADER_SLOTS = 16

# per sub-core record
U_STATE = 0          # 0 running, 1 blocked in a cross-core wait, 2 blocked on a GM flag word
                     # (ib_wait / wait_pre_block: U_WFLAG holds the word's address)
U_DONE = 1           # 1 once its kernel returned (written by the host)
U_WFLAG = 2          # the flag it waits on while blocked
U_TYPE = 3           # 0 AIV, 1 AIC
U_BLOCK = 4          # block index within the group
U_SUB = 5            # sub-block index (AIVs)
U_CNT = 8            # NFLAGS rings: its counters
U_ARR = U_CNT + NFLAGS * RING_SLOTS   # NKINDS * NFLAGS rings: its pending barrier arrivals
# Matmul requests of a mix kernel (``compiler/codegen/lower_mmserver.py``)
U_MM = U_ARR + NKINDS * NFLAGS * RING_SLOTS
U_MM_STATE = U_MM + 0   # AIV: 0 no request, 1 request pending, 2 served; AIC: 1 while serving
U_MM_T = U_MM + 1       # AIV: simulated time of its pending request
U_MM_LB = U_MM + 2      # AIV: none of its later requests comes before this time
U_MM_RESP = U_MM + 3    # AIV: when the served request's result is ready (the AIV's clock)
U_MM_ARGS = U_MM + 4    # AIV: the request's MM_NARGS arguments (``timing_matmul.matmul``'s)
MM_NARGS = 23
UNIT_SLOTS = U_MM_ARGS + MM_NARGS

#: cycles from a cross-core set to the wait it releases: no published figure exists
#: (reference/aicore_params.md §1.6 "cross-core latency: not found"; the CA model charges
#: nothing for same-core flags); an estimate of one trip through the AI Core's flag network
CROSS_CORE_LATENCY = 20


#: GM flag words of ib_set/ib_wait and notify_next_block/wait_pre_block (``ops/ib_sync.py``):
#: after the units, one cycle stamp per flag word index (the simulated time of its last set);
#: a word whose index is at least IB_STAMPS shares the stamp of its index modulo IB_STAMPS
IB_STAMPS = 1024
U_GM_WAIT = 2        # U_STATE of a sub-core blocked on a GM flag word


def unit_base(u: int) -> int:
    return HEADER_SLOTS + u * UNIT_SLOTS


def stamps_base(nunits: int) -> int:
    return HEADER_SLOTS + nunits * UNIT_SLOTS


def state_size(nunits: int) -> int:
    return HEADER_SLOTS + nunits * UNIT_SLOTS + IB_STAMPS


__all__ = ["state_size", "unit_base", "CROSS_CORE_LATENCY", "NFLAGS", "USER_FLAGS"]
