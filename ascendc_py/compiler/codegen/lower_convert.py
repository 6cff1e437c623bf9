"""Codegen of cast, compare, compare_scalar, select: lowerings (``core.lowering``) and their runtime-library functions
(``rtfuncs.rt`` or ``runtime_lib.library_definer``). Imported by ``intrinsics.py``.
"""
from __future__ import annotations
