"""Semantic analysis of reduce_*, whole_reduce_*, block_reduce_*, pair_reduce_sum: argument checks and IR emission.

Register handlers with ``builtins.function(name)`` (a DSL function) or ``builtins.method(kind,
name)``; imported by ``builtins.py``.
"""
from __future__ import annotations
