"""Semantic analysis of data_copy with DataCopyParams, data_copy_pad: argument checks and IR emission.

Register handlers with ``builtins.function(name)`` (a DSL function) or ``builtins.method(kind,
name)``; imported by ``builtins.py``.
"""
from __future__ import annotations
