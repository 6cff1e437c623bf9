"""Data types and enumerations of the kernel language (pyasc names, Ascend C meaning).

These objects are usable both from host Python (``asc.float16.sizeof()``) and inside kernels,
where the compiler treats them as compile-time values.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class DataType:
    """A scalar element type. ``name`` is pyasc's spelling (``float16``, ``int32`` …)."""

    name: str
    bits: int
    kind: str  # 'int', 'uint', 'float', 'bfloat', 'bool'

    def sizeof(self) -> int:
        """Size of one element in bytes (as Ascend C's ``sizeof(T)``)."""
        return max(self.bits // 8, 1)

    def is_void(self) -> bool:
        """True for ``asc.void`` (pyasc's ``DataType.is_void``)."""
        return self.kind == "void"

    @property
    def is_float(self) -> bool:
        return self.kind in ("float", "bfloat")

    @property
    def is_int(self) -> bool:
        return self.kind in ("int", "uint")

    @property
    def is_signed(self) -> bool:
        return self.kind in ("int", "float", "bfloat")

    @property
    def numpy(self) -> np.dtype:
        """The numpy dtype used to hold this type on the host (bfloat16 is held as uint16)."""
        return np.dtype(_NUMPY_NAMES[self.name])

    def __repr__(self) -> str:
        return f"asc.{self.name}"


int8 = DataType("int8", 8, "int")
int16 = DataType("int16", 16, "int")
int32 = DataType("int32", 32, "int")
int64 = DataType("int64", 64, "int")
uint8 = DataType("uint8", 8, "uint")
uint16 = DataType("uint16", 16, "uint")
uint32 = DataType("uint32", 32, "uint")
uint64 = DataType("uint64", 64, "uint")
float16 = DataType("float16", 16, "float")
float32 = DataType("float32", 32, "float")
float64 = DataType("float64", 64, "float")
bfloat16 = DataType("bfloat16", 16, "bfloat")
bool_ = DataType("bool", 8, "bool")
#: pyasc's ``asc.void``: the type of no value (a function's ``-> asc.void``); no tensor, scalar
#: or cast takes it (the kernel line is an error), so it is not in ALL_DTYPES
void = DataType("void", 0, "void")
half = float16
float_ = float32
double = float64      # pyasc's aliases (asc.language.core.dtype)
int_ = int32

ALL_DTYPES = (int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float32,
              bfloat16, bool_, float64)
DTYPES_BY_NAME = {d.name: d for d in ALL_DTYPES}
DTYPES_BY_NAME.update(half=float16, float_=float32, float=float32, double=float64)

_NUMPY_NAMES = {
    "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
    "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
    "float16": "float16", "float32": "float32", "float64": "float64",
    "bfloat16": "uint16", "bool": "bool",
}
_FROM_NUMPY = {np.dtype(v): DTYPES_BY_NAME[k] for k, v in _NUMPY_NAMES.items() if k != "bfloat16"}


def dtype_of_array(arr) -> DataType | None:
    """The DataType of a numpy array or torch tensor, or None if unsupported."""
    if isinstance(arr, np.ndarray):
        return _FROM_NUMPY.get(arr.dtype)
    torch_dtype = getattr(arr, "dtype", None)
    name = str(torch_dtype)
    if name.startswith("torch."):
        short = name[len("torch."):]
        return {"float16": float16, "half": float16, "float32": float32, "float": float32,
                "bfloat16": bfloat16, "int8": int8, "int16": int16, "int32": int32,
                "int64": int64, "uint8": uint8, "uint16": uint16, "uint32": uint32,
                "uint64": uint64, "bool": bool_, "float64": float64}.get(short)
    try:
        return _FROM_NUMPY.get(np.dtype(torch_dtype))
    except TypeError:
        return None


def as_dtype(value) -> DataType:
    """Accept a DataType, its name, a numpy dtype or a torch dtype."""
    if isinstance(value, DataType):
        return value
    if isinstance(value, str) and value in DTYPES_BY_NAME:
        return DTYPES_BY_NAME[value]
    name = str(value).replace("torch.", "")
    if name in DTYPES_BY_NAME:
        return DTYPES_BY_NAME[name]
    try:
        return _FROM_NUMPY[np.dtype(value)]
    except (TypeError, KeyError):
        raise TypeError(f"not a kernel data type: {value!r}") from None


# ----------------------------------------------------------------------------- enums
class TPosition(enum.IntEnum):
    """Logical buffer positions (Ascend C ``TPosition``) and the memory each maps to."""

    GM = 0
    A1 = 1
    A2 = 2
    B1 = 3
    B2 = 4
    C1 = 5
    C2 = 6
    CO1 = 7
    CO2 = 8
    VECIN = 9
    VECOUT = 10
    VECCALC = 11
    LCM = 12
    SPM = 13
    SHM = 14
    TSCM = 15
    C2PIPE2GM = 16

    @property
    def memory(self) -> "Memory":
        return _POSITION_MEMORY[self]


QuePosition = TPosition


class Memory(enum.IntEnum):
    """Physical memories of an AI Core."""

    GM = 0
    UB = 1
    L1 = 2
    L0A = 3
    L0B = 4
    L0C = 5
    BT = 6
    FB = 7


_POSITION_MEMORY = {
    TPosition.GM: Memory.GM, TPosition.A1: Memory.L1, TPosition.B1: Memory.L1,
    TPosition.C1: Memory.L1, TPosition.A2: Memory.L0A, TPosition.B2: Memory.L0B,
    TPosition.C2: Memory.BT, TPosition.CO1: Memory.L0C, TPosition.CO2: Memory.GM,
    TPosition.VECIN: Memory.UB, TPosition.VECOUT: Memory.UB, TPosition.VECCALC: Memory.UB,
    TPosition.LCM: Memory.UB, TPosition.SPM: Memory.UB, TPosition.SHM: Memory.L1,
    TPosition.TSCM: Memory.L1, TPosition.C2PIPE2GM: Memory.FB,
}


class PipeID(enum.IntEnum):
    """Hardware pipes (instruction queues) of an AI Core."""

    PIPE_S = 0
    PIPE_V = 1
    PIPE_M = 2
    PIPE_MTE1 = 3
    PIPE_MTE2 = 4
    PIPE_MTE3 = 5
    PIPE_FIX = 6
    PIPE_ALL = 7


#: Short names used in reports and traces, indexed by PipeID value (PIPE_ALL excluded).
PIPE_NAMES = ("S", "V", "M", "MTE1", "MTE2", "MTE3", "FIX")
NUM_PIPES = len(PIPE_NAMES)


class HardEvent(enum.IntEnum):
    """``SRC_DST`` synchronisation events between pipes (Ascend C ``HardEvent``)."""

    MTE2_MTE1 = 0
    MTE1_MTE2 = 1
    MTE1_M = 2
    M_MTE1 = 3
    MTE2_V = 4
    V_MTE2 = 5
    MTE3_V = 6
    V_MTE3 = 7
    M_V = 8
    V_M = 9
    V_V = 10
    MTE3_MTE1 = 11
    MTE1_MTE3 = 12
    MTE1_V = 13
    MTE2_M = 14
    M_MTE2 = 15
    V_MTE1 = 16
    M_FIX = 17
    FIX_M = 18
    MTE3_MTE2 = 19
    MTE2_MTE3 = 20
    S_V = 21
    V_S = 22
    S_MTE2 = 23
    MTE2_S = 24
    S_MTE3 = 25
    MTE3_S = 26
    MTE2_FIX = 27
    FIX_MTE2 = 28
    FIX_S = 29
    M_S = 30
    FIX_MTE3 = 31
    MTE1_FIX = 32
    FIX_MTE1 = 33
    FIX_FIX = 34
    S_M = 35
    S_MTE1 = 36
    MTE1_S = 37
    S_FIX = 38

    @property
    def src_pipe(self) -> PipeID:
        return PipeID["PIPE_" + self.name.split("_")[0]]

    @property
    def dst_pipe(self) -> PipeID:
        return PipeID["PIPE_" + self.name.split("_")[1]]


#: Event ids per HardEvent on A2/A3 (0..7).
EVENT_IDS_PER_EVENT = 8


class RoundMode(enum.IntEnum):
    CAST_NONE = 0
    CAST_RINT = 1
    CAST_FLOOR = 2
    CAST_CEIL = 3
    CAST_ROUND = 4
    CAST_TRUNC = 5
    CAST_ODD = 6


class CMPMODE(enum.IntEnum):
    LT = 0
    GT = 1
    EQ = 2
    LE = 3
    GE = 4
    NE = 5


CmpMode = CMPMODE


class SELMODE(enum.IntEnum):
    VSEL_CMPMASK_SPR = 0
    VSEL_TENSOR_SCALAR_MODE = 1
    VSEL_TENSOR_TENSOR_MODE = 2


SelMode = SELMODE


class MaskMode(enum.IntEnum):
    """Vector mask mode: NORMAL (per-repeat lanes) or COUNTER (total element count)."""

    NORMAL = 0
    COUNTER = 1
