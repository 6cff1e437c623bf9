"""The kernel-language front end: source capture and parsing into ``compiler.ast``.

Importing this package does not import lark; the parser is built (or loaded from its table
cache) on the first call to :func:`parse_function`.
"""
from .parse import parse_function
from .source import KernelSource, capture_source

__all__ = ["parse_function", "capture_source", "KernelSource"]
