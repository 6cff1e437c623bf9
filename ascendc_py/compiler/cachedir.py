"""Where ascendc_py keeps compiled kernels and parser tables on disk.

Default: ``$XDG_CACHE_HOME/ascendc_py`` (``~/.cache/ascendc_py``); override with the
``ASCENDC_PY_CACHE_DIR`` environment variable. The directory is created on first use.
"""
from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "ASCENDC_PY_CACHE_DIR"


def cache_dir() -> Path:
    """The cache root, created if missing (read from the environment on every call)."""
    explicit = os.environ.get(ENV_VAR)
    if explicit:
        root = Path(explicit)
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = Path(base) / "ascendc_py"
    root.mkdir(parents=True, exist_ok=True)
    return root
