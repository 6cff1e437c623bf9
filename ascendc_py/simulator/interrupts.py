"""Ctrl-C while a block runs in native code on the launching thread.

The runtime library's ``asc_sigint`` (``compiler/codegen/interrupt.py``) is put in front of the
process's SIGINT handler with ``sigaction`` before each launch that runs blocks on the
launching thread (a syscall when someone replaced it since; nothing otherwise). It stops every
simulated core listed in ``TABLE`` — the ctx of each host thread's cores, added when a core is
created and removed when it is dropped — then calls the handler it replaced, so Python raises
KeyboardInterrupt as soon as the native call returns. Where this cannot be set up (not Linux,
no runtime library symbol) ``available()`` is False and launches run every block on pool
threads, the launching thread waiting where KeyboardInterrupt reaches it (``runtime.py``).
"""
from __future__ import annotations

import ctypes
import functools
import sys
import threading
import weakref
from typing import Optional

import numpy as np

SIGINT = 2
SA_SIGINFO, SA_ONSTACK, SA_RESETHAND = 0x4, 0x08000000, 0x80000000
TABLE_SIZE = 1024
#: the ctx address of every live simulated core (0: a free entry); read by asc_sigint
TABLE = np.zeros(TABLE_SIZE, np.int64)
_lock = threading.Lock()


class _SigAction(ctypes.Structure):
    """glibc's ``struct sigaction`` on Linux (x86-64 and AArch64)."""

    _fields_ = [("handler", ctypes.c_void_p), ("mask", ctypes.c_ulong * 16),
                ("flags", ctypes.c_int), ("restorer", ctypes.c_void_p)]


@functools.lru_cache(maxsize=1)
def _setup() -> Optional[tuple]:
    """(libc.sigaction, the runtime library's symbol addresses, our handler's address) once
    the runtime library's globals point at TABLE, or None where the hook cannot work."""
    if not sys.platform.startswith("linux") or ctypes.sizeof(_SigAction) != 152:
        return None
    from ..compiler.codegen import runtime_loader as rl
    rl.ensure_loaded()
    address = {n: rl.symbol_address(n) for n in (rl.INT_HANDLER,) + rl.INT_GLOBALS}
    if not all(address.values()):
        return None
    installed = rl.symbol_address(rl.INT_INSTALLED)
    global _installed
    _installed = ctypes.CFUNCTYPE(ctypes.c_int64)(installed) if installed else None
    try:
        sigaction = ctypes.CDLL(None, use_errno=True).sigaction
    except (OSError, AttributeError):
        return None
    sigaction.argtypes = [ctypes.c_int, ctypes.POINTER(_SigAction), ctypes.POINTER(_SigAction)]
    ctypes.c_int64.from_address(address[rl.INT_TABLE]).value = TABLE.ctypes.data
    ctypes.c_int64.from_address(address[rl.INT_LENGTH]).value = TABLE_SIZE
    return sigaction, address, address[rl.INT_HANDLER]


def available() -> bool:
    """True when blocks may run on the launching thread (Ctrl-C still stops them)."""
    return _setup() is not None


_query = _SigAction()          # install()'s scratch struct for the current handler (under _lock)
_query_ref = ctypes.byref(_query)


_installed = None   # the runtime library's asc_sigint_installed (set by _setup)


def install() -> bool:
    """Put asc_sigint in front of the current SIGINT handler (if it is not there already);
    False if that is not possible (then run blocks off the launching thread). Called before
    every launch that runs blocks on the launching thread: one sigaction query in native code
    when nothing changed (~0.5 us)."""
    setup = _setup()
    if setup is None:
        return False
    if _installed is not None and _installed():
        return True
    sigaction, address, ours = setup
    with _lock:
        if sigaction(SIGINT, None, _query_ref) != 0:
            return False
        if _query.handler == ours:
            return True
        from ..compiler.codegen import runtime_loader as rl
        ctypes.c_int64.from_address(address[rl.INT_PREVIOUS]).value = _query.handler or 0
        ctypes.c_int64.from_address(address[rl.INT_PREVIOUS_FLAGS]).value = _query.flags
        new = _SigAction()
        new.handler = ours
        new.mask = _query.mask
        new.flags = (_query.flags | SA_SIGINFO | SA_ONSTACK) & ~SA_RESETHAND
        return sigaction(SIGINT, ctypes.byref(new), None) == 0


def track(owner, ctx: np.ndarray) -> None:
    """List ``ctx`` (a simulated core's) in TABLE while ``owner`` lives."""
    with _lock:
        free = np.flatnonzero(TABLE == 0)
        if not len(free):
            return          # more cores than entries: those rely on the pool-thread path
        slot = int(free[0])
        TABLE[slot] = ctx.ctypes.data
    weakref.finalize(owner, _untrack, slot, ctx.ctypes.data)


def _untrack(slot: int, address: int) -> None:
    with _lock:
        if TABLE[slot] == address:
            TABLE[slot] = 0


__all__ = ["available", "install", "track", "TABLE"]
