"""Locks a forked child gets fresh.

A lock another thread held when the process forked stays held in the child, where that thread
does not exist: the child's first use would wait forever (torch DataLoader workers and
``multiprocessing`` fork after launches and compiles). ``ForkSafeLock`` is used like
``threading.Lock`` (``with lock:``); after a fork, every one of them holds a new lock in the child.
"""
from __future__ import annotations

import os
import threading
import weakref


class ForkSafeLock:
    """A ``threading.Lock`` (``threading.RLock`` with ``reentrant=True``) replaced by a new one
    in a forked child."""

    __slots__ = ("_new", "_lock", "__weakref__")

    def __init__(self, reentrant: bool = False):
        self._new = threading.RLock if reentrant else threading.Lock
        self._lock = self._new()
        _LOCKS.add(self)

    def __enter__(self):
        return self._lock.__enter__()

    def __exit__(self, *exc) -> None:
        self._lock.__exit__(*exc)

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        return self._lock.acquire(blocking, timeout)

    def release(self) -> None:
        self._lock.release()


_LOCKS: "weakref.WeakSet[ForkSafeLock]" = weakref.WeakSet()


def _renew_after_fork() -> None:
    for lock in list(_LOCKS):
        lock._lock = lock._new()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_renew_after_fork)

__all__ = ["ForkSafeLock"]
