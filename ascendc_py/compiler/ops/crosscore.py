"""Cross-core synchronisation between the sub-cores of a launch (split architecture, A2/A3).

``cross_core_set_flag(flag_id, mode_id, pipe)`` / ``cross_core_wait_flag(flag_id[, mode_id,
pipe])`` (Ascend C ``CrossCoreSetFlag<modeId, pipe>(flagId)`` / ``CrossCoreWaitFlag(flagId)``)
and ``sync_all()`` (``SyncAll<isAIVOnly>()``, the hard form). Semantics, counters and timing:
``simulator/xcore_layout.py``; the library functions are in ``codegen/lower_crosscore.py``.
"""
from __future__ import annotations

from . import CostClass, Family, OpSpec, register

MAX_FLAG_ID = 10     # flag ids 0..10 on A2/A3
MODES = (0, 1, 2)

register(OpSpec("cross_core_set_flag", Family.SYNC, None, CostClass.SYNC, (),
                (("flag_id", "mode_id", "pipe"),),
                doc="Signal cross-core flag flag_id (0..10) once all earlier work of pipe is "
                    "done. mode_id 0: barrier of every core of this type in the launch; 1: of "
                    "the two AIVs of this AI Core; 2: AIC -> both AIVs of its AI Core, or (once "
                    "both AIVs set it) AIVs -> AIC.", flops_per_elem=0))
register(OpSpec("cross_core_wait_flag", Family.SYNC, None, CostClass.SYNC, (),
                (("flag_id", "mode_id", "pipe"),),
                doc="Block this sub-core until its counter of cross-core flag flag_id is "
                    "non-zero, then take one (later instructions wait).", flops_per_elem=0))
register(OpSpec("sync_all", Family.SYNC, None, CostClass.SYNC, (), (("is_aiv_only",),),
                doc="Barrier of every vector core of the launch (is_aiv_only=True, the "
                    "default) or of every sub-core (False).", flops_per_elem=0))
