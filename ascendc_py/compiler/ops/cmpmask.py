"""The vector unit's CMPMASK register (declarations): set_cmp_mask, get_cmp_mask, and the forms
of compare and select that use it (their semantics are compare's and select's,
``ops/convert.py``; the register forms are lowered by ``codegen/lower_convert.py``).

The register is 16 bytes per core (ctx slots ``abi.CMPMASK_LO``/``CMPMASK_HI``), zero when a
block starts (our choice: the docs do not give an initial value).

* ``set_cmp_mask(src)``: the first 16 bytes of the UB tensor ``src`` (16-byte aligned, as the
  current docs require) into the register; ``get_cmp_mask(dst)``: the register into the first
  16 bytes of ``dst``. Each is one V-pipe instruction of one repeat (timed as a simple vector
  op: shared/reference/aicore_params.md, unary ops ≈1 cycle per repeat), reading or writing
  16 bytes of UB in sanitize mode.
* ``compare(src0, src1, cmp_mode, mask, repeat_params)`` (no dst, no repeat count): one repeat;
  its 256/sizeof(T) result bits go to the register (bits 0..127 for half, 0..63 for float and
  int32, the rest cleared). As in compare's masked form, the mask is checked but every lane is
  compared (it is reserved on A2/A3).
* ``select(dst, src0, src1, repeat_times, repeat_params, sel_mode=VSEL_CMPMASK_SPR)``: the
  selection bits are the register's (reused by every repeat); ``sel_mode=VSEL_TENSOR_TENSOR_MODE``:
  the register's low 32 bits are the UB byte address of the selection mask (consumed
  continuously). ``select(dst, sel_mask, src0, repeat_times, repeat_params)``: tensor/scalar
  mode, the scalar is the register's first element (what ``set_cmp_mask(src1)`` loads). The
  register forms use the vector mask register as set_vector_mask left it.
"""
from __future__ import annotations

from ...dsl.types import PipeID, int8, int16, int32, int64, uint8, uint16, uint32, uint64, \
    float16, float32, bfloat16
from . import CostClass, Family, OpSpec, register

CMPMASK_BYTES = 16
ALL_TYPES = (int8, uint8, int16, uint16, int32, uint32, int64, uint64, float16, bfloat16,
             float32)


def set_cmp_mask_reference(src) -> bytes:
    """The register after ``set_cmp_mask(src)``: src's first 16 bytes."""
    return bytes(src.view("uint8")[:CMPMASK_BYTES])


def get_cmp_mask_reference(register: bytes, dst):
    """``dst`` after ``get_cmp_mask(dst)``: its first 16 bytes are the register."""
    import numpy as np
    out = dst.copy()
    out.view(np.uint8)[:CMPMASK_BYTES] = np.frombuffer(register, np.uint8)
    return out


register(OpSpec("set_cmp_mask", Family.SYSTEM, PipeID.PIPE_V, CostClass.SIMPLE, ALL_TYPES,
                (("src",),), set_cmp_mask_reference, None,
                "set_cmp_mask(src): 16 bytes of UB into the CMPMASK register (select's "
                "register forms read it)", flops_per_elem=0))
register(OpSpec("get_cmp_mask", Family.SYSTEM, PipeID.PIPE_V, CostClass.SIMPLE, ALL_TYPES,
                (("dst",),), get_cmp_mask_reference, None,
                "get_cmp_mask(dst): the CMPMASK register into 16 bytes of UB (after compare "
                "without dst)", flops_per_elem=0))
