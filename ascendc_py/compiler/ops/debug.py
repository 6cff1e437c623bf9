"""Debug printing: printf, dump_tensor (declarations)."""
from __future__ import annotations
