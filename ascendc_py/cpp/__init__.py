"""Ascend C kernels written in C++ (the kernel side of the programming guide's subset),
compiled through the same pipeline as Python kernels: ``asc.cpp.load(path_or_source)``.

See README "C++ kernels" and ``loader.py``.
"""
from .loader import CppKernel, CppModule, load

__all__ = ["load", "CppModule", "CppKernel"]
