"""The specialisation of a kernel launch: one ``ArgSpec`` per kernel parameter.

Kept in its own small module so that finding a cached kernel never imports the compiler's
front end or semantic analysis.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from ..dsl.types import DataType


@dataclass(frozen=True)
class ArgSpec:
    """How one kernel argument is specialised: 'gm' (dtype), 'scalar' (dtype) or 'const'."""

    name: str
    kind: str
    dtype: Optional[DataType] = None
    value: Any = None
