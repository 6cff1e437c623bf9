"""Codegen of reduce_*, whole_reduce_*, block_reduce_*, pair_reduce_sum: lowerings (``core.lowering``) and their runtime-library functions
(``rtfuncs.rt`` or ``runtime_lib.library_definer``). Imported by ``intrinsics.py``.
"""
from __future__ import annotations
