"""Codegen of data_copy with DataCopyParams, data_copy_pad: lowerings (``core.lowering``) and their runtime-library functions
(``rtfuncs.rt`` or ``runtime_lib.library_definer``). Imported by ``intrinsics.py``.
"""
from __future__ import annotations
