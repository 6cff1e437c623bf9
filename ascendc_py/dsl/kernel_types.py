"""Kernel types: which sub-cores of an AI Core a launch runs, as pyasc's ``KernelType``.

On Ascend 910B (A2/A3, the split architecture) an AI Core is one cube core (AIC: L1, L0A, L0B,
L0C, BiasTable, Fixpipe buffer; pipes M, MTE1, MTE2, FIX) and two vector cores (AIV: UB; pipes
V, MTE2, MTE3), each with its own scalar unit. A kernel's type says which of them run it:

==================  ==========  =====================================================
KernelType          kind        sub-cores per block
==================  ==========  =====================================================
AIV_ONLY            vector      1 AIV (``block_dim`` up to the chip's AIV count)
MIX_AIV_1_0         vector      1 AIV (an AIV kernel that uses cross-core flags)
MIX_AIV_HARD_SYNC   vector      1 AIV
AIC_ONLY            cube        1 AIC (``block_dim`` up to the chip's AI Core count)
MIX_AIC_1_0         cube        1 AIC (a cube kernel that uses cross-core flags)
MIX_AIC_HARD_SYNC   cube        1 AIC
MIX_AIC_1_1         mix         1 AIC + 1 AIV
MIX_AIC_1_2         mix         1 AIC + 2 AIV (the usual fused cube + vector kernel)
==================  ==========  =====================================================

``@asc.kernel(kernel_type=asc.KernelType.MIX_AIC_1_2)`` chooses one; without it the compiler
infers it from what the kernel uses (``compiler/kernel_kind.py``).
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Optional

from .types import Memory


class KernelType(enum.Enum):
    """pyasc's kernel types (``asc.runtime.config.KernelType``), same names and values."""

    AIV_ONLY = 0
    AIC_ONLY = 1
    MIX_AIV_HARD_SYNC = 2
    MIX_AIC_HARD_SYNC = 3
    MIX_AIV_1_0 = 4
    MIX_AIC_1_0 = 5
    MIX_AIC_1_1 = 6
    MIX_AIC_1_2 = 7


#: ctx[abi.KERNEL_MODE] values
MODE_VECTOR, MODE_CUBE, MODE_MIX = 0, 1, 2


@dataclass(frozen=True)
class SubcoreLayout:
    """The sub-cores one block of a launch runs on: an AIC or not, and how many AIVs."""

    kernel_type: str        # KernelType member name
    has_aic: bool
    n_aiv: int

    @property
    def kind(self) -> str:
        """'vector', 'cube' or 'mix'."""
        if self.has_aic and self.n_aiv:
            return "mix"
        return "cube" if self.has_aic else "vector"

    @property
    def mode(self) -> int:
        """The value of ctx[abi.KERNEL_MODE]."""
        return {"vector": MODE_VECTOR, "cube": MODE_CUBE, "mix": MODE_MIX}[self.kind]

    @property
    def per_block(self) -> int:
        """Sub-cores per block."""
        return int(self.has_aic) + self.n_aiv

    def units(self) -> list[tuple[int, int]]:
        """(core type: 0 AIV / 1 AIC, sub-block index) of each sub-core of a block, the AIC
        first."""
        out = [(1, 0)] if self.has_aic else []
        return out + [(0, s) for s in range(self.n_aiv)]

    @staticmethod
    def label(core_type: int, sub: int, n_aiv: int) -> str:
        """'AIC', 'AIV' (one per block) or 'AIV0'/'AIV1'."""
        if core_type == 1:
            return "AIC"
        return "AIV" if n_aiv <= 1 else f"AIV{sub}"


_LAYOUTS = {
    KernelType.AIV_ONLY: (False, 1), KernelType.MIX_AIV_1_0: (False, 1),
    KernelType.MIX_AIV_HARD_SYNC: (False, 1),
    KernelType.AIC_ONLY: (True, 0), KernelType.MIX_AIC_1_0: (True, 0),
    KernelType.MIX_AIC_HARD_SYNC: (True, 0),
    KernelType.MIX_AIC_1_1: (True, 1), KernelType.MIX_AIC_1_2: (True, 2),
}


def layout(kernel_type: str) -> SubcoreLayout:
    """The sub-core layout of a kernel type (by member name)."""
    has_aic, n_aiv = _LAYOUTS[KernelType[kernel_type]]
    return SubcoreLayout(kernel_type, has_aic, n_aiv)


def parse_kernel_type(value: Any) -> Optional[KernelType]:
    """A ``kernel_type=`` option as a KernelType: a member of ours or of any enum with the same
    member names (pyasc's), a member name, or an int value; None stays None. Anything else is a
    ValueError naming the accepted values."""
    if value is None:
        return None
    if isinstance(value, KernelType):
        return value
    if isinstance(value, enum.Enum):
        value = value.name
    if isinstance(value, str):
        name = value.rsplit(".", 1)[-1].upper()
        if name.startswith("KERNEL_TYPE_"):
            name = name[len("KERNEL_TYPE_"):]
        if name in KernelType.__members__:
            return KernelType[name]
    elif isinstance(value, int) and not isinstance(value, bool):
        try:
            return KernelType(value)
        except ValueError:
            pass
    raise ValueError(f"kernel_type={value!r} is not a kernel type; use one of "
                     f"{', '.join('asc.KernelType.' + k.name for k in KernelType)}")


def options_key(options: Any) -> str:
    """The part of a kernel's options that changes its compiled code or metadata, for cache
    keys ('' when none is given, so keys of plain kernels stay as they were)."""
    parts = []
    kt = parse_kernel_type(options.get("kernel_type")) if "kernel_type" in options else None
    if kt is not None:
        parts.append(f"kernel_type={kt.name}")
    if options.get("matmul_cube_only"):
        parts.append("matmul_cube_only")
    for name in ("insert_sync", "auto_sync"):     # compiler/insert_sync.py
        if options.get(name) is not None:
            parts.append(f"{name}={bool(options[name])}")
    return f"[{','.join(parts)}]" if parts else ""


#: memories of the cube core (AIC) and of a vector core (AIV)
AIC_MEMORIES = frozenset({Memory.L1, Memory.L0A, Memory.L0B, Memory.L0C, Memory.BT, Memory.FB})
AIV_MEMORIES = frozenset({Memory.UB})
#: ops that synchronise sub-cores (they need the sub-core runtime even in vector kernels)
SUBCORE_SYNC_OPS = ("cross_core_set_flag", "cross_core_wait_flag", "sync_all")
#: inter-block sync through GM flags (compiler/ops/ib_sync.py): every block runs at once
IB_SYNC_OPS = ("ib_set", "ib_wait", "notify_next_block", "wait_pre_block")


def needs_subcores(kernel_type: str, memories, ops) -> bool:
    """Whether a compiled kernel runs on the sub-core runtime (``simulator/subcores.py``):
    a cube or mix kernel, or one that uses cube memories, Matmul calls or cross-core sync.
    Plain vector kernels take the runtime's fast path."""
    if layout(kernel_type).kind != "vector" or set(memories) & AIC_MEMORIES:
        return True
    return any(op in SUBCORE_SYNC_OPS or op in IB_SYNC_OPS or op.startswith("matmul_")
               for op in ops)


__all__ = ["KernelType", "SubcoreLayout", "layout", "parse_kernel_type", "MODE_VECTOR",
           "MODE_CUBE", "MODE_MIX", "options_key",
           "AIC_MEMORIES", "AIV_MEMORIES", "SUBCORE_SYNC_OPS", "IB_SYNC_OPS", "needs_subcores"]
