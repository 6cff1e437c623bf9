"""Type conversion, comparison and selection: cast, compare, compare_scalar, select (declarations)."""
from __future__ import annotations
