"""``asc.DataFormat`` (pyasc's names and values): the data layout a ShapeInfo records."""
from __future__ import annotations

import enum


class DataFormat(enum.IntEnum):
    """Ascend C ``DataFormat``."""

    ND = 0
    NZ = 1
    NCHW = 2
    NC1HWC0 = 3
    NHWC = 4
