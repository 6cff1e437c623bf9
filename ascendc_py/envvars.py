"""Reading the package's environment variables on the launch path, cheaply.

A launch consults several variables (``ASCENDC_PY_TRACE``, ``ASCENDC_PY_SANITIZE``,
``ASCENDC_PY_LOOP_BUDGET`` …) and must still see a change made a moment ago (tests and users set
them between launches). ``os.environ.get`` encodes the name and decodes the value on every call
(~1 µs); on POSIX ``get`` looks the pre-encoded name up in the mapping ``os.environ`` itself
reads, so it returns exactly what ``os.environ.get`` would, at a fraction of the cost.
"""
from __future__ import annotations

import os

_DATA = getattr(os.environ, "_data", None)
_FAST = os.name == "posix" and isinstance(_DATA, dict)
_KEYS: dict[str, bytes] = {}


def get(name: str, default: str = "") -> str:
    """``os.environ.get(name, default)``."""
    if not _FAST:
        return os.environ.get(name, default)
    key = _KEYS.get(name)
    if key is None:
        key = _KEYS[name] = os.fsencode(name)
    raw = _DATA.get(key)
    return default if raw is None else os.fsdecode(raw)


def flag(name: str) -> bool:
    """Whether ``name`` is set to something other than "" or "0"."""
    return get(name) not in ("", "0")
