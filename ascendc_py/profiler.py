"""Launch observers: ``asc.profile()`` (and anything else) sees every kernel launch.

The launcher calls ``notify(report)`` after each launch; observers registered with ``observe``
receive the ``Report``. ``asc.profile()`` (torch_bridge/profile or ascendc_py.profile) builds
its table and trace on this hook. Observers are per thread-of-control: a list on the module,
guarded by a lock; nothing is recorded when no observer is active.
"""
from __future__ import annotations

from typing import Callable

from .forksafe import ForkSafeLock

_observers: list[Callable] = []
_lock = ForkSafeLock()


def observe(callback: Callable) -> Callable:
    """Start passing every launch's Report to ``callback``; returns it (for ``unobserve``)."""
    with _lock:
        _observers.append(callback)
    return callback


def unobserve(callback: Callable) -> None:
    with _lock:
        if callback in _observers:
            _observers.remove(callback)


def notify(report) -> None:
    """Called by the launcher after every launch."""
    if not _observers:
        return
    with _lock:
        observers = list(_observers)
    for cb in observers:
        cb(report)


def active() -> bool:
    return bool(_observers)
