"""Atomic accumulation on GM writes: ``set_atomic_add/max/min(dtype)``, ``set_atomic_type(dtype)``
and ``set_atomic_none()`` (Ascend C SetAtomicAdd/Max/Min/Type/None).

While a mode is set, every copy that writes GM from UB (``data_copy`` in all its forms and
``data_copy_pad`` UB -> GM, on MTE3) does a read-modify-write in the mode's dtype instead of a
store: ``gm[i] = gm[i] + src[i]`` (add), ``max(gm[i], src[i])`` or ``min(gm[i], src[i])``,
rounded once to the dtype (float16/bfloat16/float32 round to nearest even; integers wrap).
``set_atomic_type`` changes the dtype and keeps the mode; ``set_atomic_none`` restores plain
stores. Each core has its own mode register; a launch starts with none. The GM bytes are read
as the atomic dtype whatever the copy's own dtype (the register decides, as on the hardware).

Order across blocks (a choice; the hardware gives none): a vector kernel that sets an atomic
mode runs its blocks one after another in block order, so block 0's writes accumulate first and
the float sums are the same bits on every run. Cube and mix kernels, whose sub-cores must run
together, accumulate under a lock in arrival order (integer add and max/min do not depend on
it; float add may differ in the last bit between runs).

The sanitizer does not call two blocks' atomic writes of the same GM bytes a race (that is what
atomics are for); a plain write overlapping another block's write, atomic or not, still is.
Timing: the mode switch is one scalar instruction; the copies cost what a plain copy costs (the
reference tables give no figure for the read-modify-write).
"""
from __future__ import annotations

import enum

import numpy as np

from ...dsl.types import PipeID, bfloat16, float16, float32, int8, int16, int32
from . import CostClass, Family, OpSpec, register

#: dtypes SetAtomicAdd/Max/Min accept on A2/A3; the code stored in ctx is index + 1, which is
#: also the AtomicDtype value of SetStoreAtomicConfig
ATOMIC_TYPES = (float32, float16, int16, int32, int8, bfloat16)
MODES = {"none": 0, "add": 1, "max": 2, "min": 3}


class AtomicDtype(enum.IntEnum):
    """pyasc's ``asc.AtomicDtype`` (Ascend C's, same values): the dtype of
    ``set_store_atomic_config``; ATOMIC_NONE switches accumulation off."""

    ATOMIC_NONE = 0
    ATOMIC_F32 = 1
    ATOMIC_F16 = 2
    ATOMIC_S16 = 3
    ATOMIC_S32 = 4
    ATOMIC_S8 = 5
    ATOMIC_BF16 = 6


class AtomicOp(enum.IntEnum):
    """pyasc's ``asc.AtomicOp``: only the sum exists."""

    ATOMIC_SUM = 0


def atomic_reference(gm: np.ndarray, src: np.ndarray, mode: str) -> np.ndarray:
    """What a GM write of ``src`` leaves where ``gm`` was, under ``mode`` (arrays of the atomic
    dtype; float16/float32 computed in float64 and rounded once, integers wrap)."""
    if mode == "none":
        return src.copy()
    if np.issubdtype(gm.dtype, np.integer):
        wide = gm.astype(np.int64), src.astype(np.int64)
    else:
        wide = gm.astype(np.float64), src.astype(np.float64)
    with np.errstate(all="ignore"):
        out = {"add": np.add, "max": np.maximum, "min": np.minimum}[mode](*wide)
    return out.astype(gm.dtype)


def _switch(name: str, mode: str, doc: str) -> None:
    register(OpSpec(name, Family.SYSTEM, PipeID.PIPE_S, CostClass.SCALAR, ATOMIC_TYPES, (),
                    (lambda gm, src, _m=mode: atomic_reference(gm, src, _m)), None, doc,
                    flops_per_elem=0))


_switch("set_atomic_add", "add", "set_atomic_add(dtype): GM writes of MTE3 copies add to GM")
_switch("set_atomic_max", "max", "set_atomic_max(dtype): GM writes keep the larger value")
_switch("set_atomic_min", "min", "set_atomic_min(dtype): GM writes keep the smaller value")
_switch("set_atomic_none", "none", "set_atomic_none(): GM writes store again")
register(OpSpec("set_atomic_type", Family.SYSTEM, PipeID.PIPE_S, CostClass.SCALAR, ATOMIC_TYPES,
                (), atomic_reference, None, "set_atomic_type(dtype): the atomic mode's dtype",
                flops_per_elem=0))
register(OpSpec("set_store_atomic_config", Family.SYSTEM, PipeID.PIPE_S, CostClass.SCALAR,
                ATOMIC_TYPES, (), (lambda gm, src, _m="add": atomic_reference(gm, src, _m)),
                None, "set_store_atomic_config(AtomicDtype, AtomicOp): atomic add in that dtype "
                "(ATOMIC_NONE: off)", flops_per_elem=0))
register(OpSpec("get_store_atomic_config", Family.SYSTEM, PipeID.PIPE_S, CostClass.SCALAR, (),
                (), None, None, "get_store_atomic_config() -> (AtomicDtype value, AtomicOp "
                "value): 0 when no mode is set; the op is 0 for add (1 max, 2 min)",
                flops_per_elem=0))


def runs_blocks_in_order(compiled) -> bool:
    """Whether a launch of ``compiled`` must run its blocks one after another in block order:
    it sets an atomic accumulation mode (see the module docstring). Cached on the kernel."""
    cached = compiled.__dict__.get("_atomic_in_order")
    if cached is None:
        cached = compiled._atomic_in_order = any(
            s.op in ("set_atomic_add", "set_atomic_max", "set_atomic_min", "set_atomic_type",
                     "set_store_atomic_config")
            for s in compiled.sites)
    return cached
