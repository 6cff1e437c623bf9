"""Semantic analysis of printf, dump_tensor: argument checks and IR emission.

Register handlers with ``builtins.function(name)`` (a DSL function) or ``builtins.method(kind,
name)``; imported by ``builtins.py``.
"""
from __future__ import annotations
