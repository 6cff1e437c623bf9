"""Compiled code as shared libraries: a cached kernel loads with ``dlopen`` in a millisecond,
without importing llvmlite.

When the host has a C compiler driver (``cc``/``gcc``/``clang``) the JIT links each object file
(position-independent code) into a ``.so`` next to its cache entry; the runtime library is
loaded with ``RTLD_GLOBAL`` first so kernels resolve its symbols. Without a linker everything
falls back to LLVM's MCJIT (slower first launch, same code).
"""
from __future__ import annotations

import ctypes
import functools
import hashlib
import os
from pathlib import Path
from typing import Optional


@functools.lru_cache(maxsize=1)
def linker() -> Optional[str]:
    """The C compiler driver used to link shared objects, or None (env ASCENDC_PY_NO_LINK=1
    forces the MCJIT path)."""
    import shutil
    if os.environ.get("ASCENDC_PY_NO_LINK", "") not in ("", "0"):
        return None
    for name in ("cc", "gcc", "clang"):
        path = shutil.which(name)
        if path:
            return path
    return None


@functools.lru_cache(maxsize=1)
def host_id() -> str:
    """The host CPU as a cache-key string (architecture, model and feature flags), read
    without LLVM."""
    model, flags = "", ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and not model:
                    model = line.split(":", 1)[1].strip()
                elif line.startswith("flags") and not flags:
                    flags = line.split(":", 1)[1].strip()
                if model and flags:
                    break
    except OSError:
        pass
    digest = hashlib.sha256(flags.encode()).hexdigest()[:12]
    return f"{os.uname().machine}|{model}|{digest}"


def link_shared(obj: bytes, target: Path, libs: tuple = (), more: tuple = (),
                flags: tuple = ()) -> bool:
    """Link object code (``obj``, then the objects ``more``, with the linker ``flags``) into
    the shared library ``target`` (atomically); False on failure."""
    import subprocess
    import tempfile
    cc = linker()
    if cc is None:
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        o_paths = [Path(tmp) / f"code{k}.o" for k in range(1 + len(more))]
        so_path = Path(tmp) / "code.so"
        for o_path, code in zip(o_paths, (obj, *more)):
            o_path.write_bytes(code)
        cmd = [cc, "-shared", *flags, "-o", str(so_path), *map(str, o_paths)] + \
            [f"-l{lib}" for lib in libs]
        try:
            done = subprocess.run(cmd, capture_output=True, timeout=60)
        except (OSError, subprocess.SubprocessError):
            return False
        if done.returncode != 0 or not so_path.exists():
            return False
        os.replace(so_path, target)
    return True


def load_shared(path: Path, global_symbols: bool = False) -> Optional[ctypes.CDLL]:
    """dlopen a shared library (None if it cannot be loaded)."""
    try:
        mode = ctypes.RTLD_GLOBAL if global_symbols else ctypes.RTLD_LOCAL
        return ctypes.CDLL(os.fspath(path), mode=mode)
    except OSError:
        return None


def symbol_address(lib: ctypes.CDLL, name: str) -> int:
    return ctypes.cast(getattr(lib, name), ctypes.c_void_p).value or 0
