"""Reductions: reduce_*, whole_reduce_*, block_reduce_*, pair_reduce_sum (declarations)."""
from __future__ import annotations
