"""Inter-block synchronisation through flag words in a GM workspace (Ascend C ``IBSet`` /
``IBWait`` and ``NotifyNextBlock`` / ``WaitPreBlock``).

The workspace is an int32 GlobalTensor the host initialises to 0; every flag is the first
int32 of its own 32-byte slot (``SLOT_ELEMS`` elements):

- ``ib_set(gm, ub, block_idx, event_id)`` writes 1 into slot ``event_id * cores + block_idx``
  (``cores``: ``get_block_num()``, twice that when ``is_aiv_only=False``, as the Ascend C
  documentation sizes the workspace); ``ib_wait`` with the same arguments blocks until that
  word is positive. A set flag stays set (the word is not cleared by the wait).
- ``notify_next_block(gm, ub)`` adds 1 to slot ``get_block_idx() + 1`` (nothing on the last
  block); ``wait_pre_block(gm, ub)`` on block ``i > 0`` blocks until slot ``i`` is positive,
  then takes one (block 0 has no predecessor and does not wait). Every block must call both
  the same number of times.

Which value a set writes and whether a wait clears it are not defined by the public
documentation: the choices above are ours (README "Inter-block synchronisation"). The UB
workspace is checked (int32, on UB) and not otherwise used. Blocks run at once (like
``sync_all``); a wait no block can satisfy stops the launch with CrossCoreDeadlockError at its
line. Timing: a set fires once all earlier work of the setter is done, the wait ends no earlier
than the set's simulated time plus ``xcore_layout.CROSS_CORE_LATENCY`` (the runtime:
``codegen/lower_ib_sync.py``).
"""
from __future__ import annotations

from . import CostClass, Family, OpSpec, register

SLOT_ELEMS = 8                       # 32 bytes of int32 per flag
KIND_SET, KIND_WAIT, KIND_NOTIFY, KIND_WAIT_PRE = 0, 1, 2, 3
OPS = {"ib_set": KIND_SET, "ib_wait": KIND_WAIT, "notify_next_block": KIND_NOTIFY,
       "wait_pre_block": KIND_WAIT_PRE}

register(OpSpec("ib_set", Family.SYNC, None, CostClass.SYNC, (),
                (("gm_workspace", "ub_workspace", "block_idx", "event_id", "is_aiv_only"),),
                doc="ib_set(gm_workspace, ub_workspace, block_idx, event_id, is_aiv_only=True):"
                    " once this block's earlier work is done, set the GM flag of (block_idx, "
                    "event_id) (int32 slot event_id * cores + block_idx of 32 bytes)",
                flops_per_elem=0))
register(OpSpec("ib_wait", Family.SYNC, None, CostClass.SYNC, (),
                (("gm_workspace", "ub_workspace", "block_idx", "event_id", "is_aiv_only"),),
                doc="ib_wait(gm_workspace, ub_workspace, block_idx, event_id, is_aiv_only="
                    "True): block until the GM flag of (block_idx, event_id) is set",
                flops_per_elem=0))
register(OpSpec("notify_next_block", Family.SYNC, None, CostClass.SYNC, (),
                (("gm_workspace", "ub_workspace"),),
                doc="notify_next_block(gm_workspace, ub_workspace): once this block's earlier "
                    "work is done, release one wait_pre_block of block get_block_idx() + 1",
                flops_per_elem=0))
register(OpSpec("wait_pre_block", Family.SYNC, None, CostClass.SYNC, (),
                (("gm_workspace", "ub_workspace"),),
                doc="wait_pre_block(gm_workspace, ub_workspace): block until the previous block "
                    "has called notify_next_block once more (block 0 does not wait)",
                flops_per_elem=0))
