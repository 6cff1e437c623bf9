"""Host memory advice for the outputs torch ops allocate (speed only, never a value).

A large ``torch.empty`` is a fresh anonymous mapping whose pages the kernel's first writes
fault in one 4 KiB page at a time: for a 32 MiB output that is 8192 page faults, about as long
as the whole SwiGLU computation (measured: ``torch.empty`` + a copy of 2^23 float32 34 ms,
after ``madvise(MADV_HUGEPAGE)`` 17 ms, numpy's ``np.empty``, which advises the same, 16 ms;
one thread). ``advise_huge_pages`` gives the same advice for the 2 MiB-aligned part of an
output before the kernel writes it, on Linux, for tensors of at least 4 MiB (numpy's
threshold). Where transparent huge pages are off, or on other systems, it does nothing.
"""
from __future__ import annotations

import ctypes
import sys

#: outputs smaller than this are not advised (numpy's threshold for the same advice)
MIN_BYTES = 4 << 20
_HUGE_PAGE = 2 << 20
_MADV_HUGEPAGE = 14
_madvise = None


def _libc_madvise():
    global _madvise
    if _madvise is None:
        fn = False
        if sys.platform.startswith("linux"):
            try:
                fn = ctypes.CDLL(None).madvise
                fn.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
                fn.restype = ctypes.c_int
            except (OSError, AttributeError):
                fn = False
        _madvise = fn
    return _madvise


def advise_huge_pages(tensors) -> None:
    """Ask the OS to back the large, not yet written ``tensors`` (CPU tensors) with huge pages
    (failures are ignored: it is advice)."""
    for t in tensors:
        nbytes = t.numel() * t.element_size()
        if nbytes < MIN_BYTES:
            continue
        madvise = _libc_madvise()
        if not madvise:
            return
        start = t.data_ptr()
        first = (start + _HUGE_PAGE - 1) & ~(_HUGE_PAGE - 1)
        last = (start + nbytes) & ~(_HUGE_PAGE - 1)
        if last > first:
            madvise(first, last - first, _MADV_HUGEPAGE)
