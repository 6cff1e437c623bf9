"""``asc.Hardware``: the physical memories by Ascend C's name (pyasc ``asc.Hardware``), as
LocalMemAllocator takes them. The values are pyasc's and equal ``Memory``'s (BIAS is the bias
table BT, FIXBUF the fixpipe buffer FB)."""
from __future__ import annotations

import enum

from .types import Memory


class Hardware(enum.IntEnum):
    """Ascend C ``Hardware``: where data physically lives."""

    GM = 0
    UB = 1
    L1 = 2
    L0A = 3
    L0B = 4
    L0C = 5
    BIAS = 6
    FIXBUF = 7
    MAX = 8

    @property
    def memory(self) -> Memory:
        if self in (Hardware.GM, Hardware.MAX):
            raise ValueError(f"Hardware.{self.name} is not a local memory")
        return Memory(int(self))
