"""Strided and padded data movement: data_copy with DataCopyParams, data_copy_pad (declarations)."""
from __future__ import annotations
