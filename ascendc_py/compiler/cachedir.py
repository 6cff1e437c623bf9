"""Where ascendc_py keeps compiled kernels and parser tables on disk, and reading them safely.

Default: ``$XDG_CACHE_HOME/ascendc_py`` (``~/.cache/ascendc_py``); override with the
``ASCENDC_PY_CACHE_DIR`` environment variable. The directory is created on first use.

A cache that cannot be used never stops a kernel from compiling: when the directory cannot be
created or written (a file in its place, no permission, a read-only file system, a full disk)
``cache_dir()`` returns None, compiled code stays in memory for the process, and one
``CacheDirectoryWarning`` says why and what to do. Entries are read with ``read_file``, which
never blocks or reads without end on something that is not a regular file (a FIFO, a symlink
to a device) and bounds what it reads; writes happen into a temporary file then an atomic
rename. Problems met on a background thread are reported by the next call on the main thread:
nothing is ever printed from a background thread.
"""
from __future__ import annotations

import errno
import hashlib
import os
import stat
import threading
from pathlib import Path
from typing import Optional

from .. import envvars

ENV_VAR = "ASCENDC_PY_CACHE_DIR"
MAX_ENTRY_BYTES = 1 << 30   # no cache file is larger: a bigger one is not ours

_lock = threading.Lock()
_unusable: dict[str, str] = {}      # cache root -> why it is not used (this process)
_reported: set = set()              # (root, reason) already warned about
_pending: list = []                 # problems seen on other threads, reported later
_usable: dict = {}                  # the variables _root reads -> (root, Path) found usable


def _root() -> Path:
    explicit = os.environ.get(ENV_VAR)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ascendc_py"


def cache_dir() -> Optional[Path]:
    """The cache root, created if missing (read from the environment on every call), or None
    when it cannot be used: then the caller keeps what it built in memory."""
    _report_pending()
    env = (envvars.get(ENV_VAR), envvars.get("XDG_CACHE_HOME"), envvars.get("HOME"))
    known = _usable.get(env)
    if known is not None:
        # a root found usable before: one stat and one access check, no path objects (a
        # launch asks once per runtime library shard it loads)
        path, root = known
        try:
            if path not in _unusable and stat.S_ISDIR(os.stat(path).st_mode) and \
                    os.access(path, os.W_OK | os.X_OK):
                return root
        except OSError:
            pass
    root = _root()
    key = str(root)
    if key in _unusable:
        return None
    try:
        root.mkdir(parents=True, exist_ok=True)
        if not root.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, "not a directory", key)
        if not os.access(root, os.W_OK | os.X_OK):
            raise PermissionError(errno.EACCES, "not writable", key)
    except OSError as exc:
        problem(exc, root)
        return None
    if len(_usable) > 16:
        _usable.clear()
    _usable[env] = (key, root)
    return root


def problem(exc: OSError, path, fatal: bool = True) -> None:
    """Record that the cache at ``path`` failed with ``exc``: one warning (from the main thread),
    and with ``fatal`` the cache is not used again in this process."""
    root = str(_root())
    reason = f"{exc.strerror or type(exc).__name__}" + (f" ({exc.filename})" if getattr(
        exc, "filename", None) else "")
    if exc.errno == errno.ENOSPC:
        reason = "the disk is full"
    with _lock:
        if fatal:
            _unusable[root] = reason
        _pending.append((root, reason))
    _report_pending()


def _report_pending() -> None:
    if threading.current_thread() is not threading.main_thread() or not _pending:
        return
    from .errors import CacheDirectoryWarning, warn_at_user
    with _lock:
        items, _pending[:] = list(_pending), []
    for root, reason in items:
        if (root, reason) in _reported:
            continue
        _reported.add((root, reason))
        warn_at_user(CacheDirectoryWarning(
            f"the compile cache {root} cannot be used: {reason}; compiled kernels are kept in "
            f"memory for this process only (each new process compiles again)",
            hint=f"set {ENV_VAR} to a writable directory (or free space / fix the "
                 f"permissions of this one)"), {})


def read_file(path: Path, limit: int = MAX_ENTRY_BYTES) -> Optional[bytes]:
    """The bytes of the regular file ``path``, or None: missing, not a regular file (a FIFO is
    not waited on, a symlink is not followed), larger than ``limit``, or unreadable."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | \
        getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        chunks, left = [], info.st_size
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 24))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def is_regular_or_missing(path: Path) -> bool:
    """True if ``path`` does not exist or is a regular file (not a FIFO, device or symlink)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except FileNotFoundError:
        return True
    except OSError:
        return False


def file_sha256(path: Path) -> Optional[str]:
    """SHA-256 of a regular file (None: missing or not a regular file)."""
    data = read_file(path)
    return hashlib.sha256(data).hexdigest() if data is not None else None


def write_file(path: Path, data: bytes) -> bool:
    """Write ``data`` to ``path`` atomically (a temporary file, then a rename); False (and one
    warning) when the cache cannot be written."""
    tmp = path.with_name(f"{path.name}.tmp{os.getpid()}.{threading.get_ident()}")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        return True
    except OSError as exc:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass
        problem(exc, path, fatal=exc.errno in (errno.ENOSPC, errno.EROFS, errno.EACCES,
                                                errno.EPERM, errno.ENOTDIR, errno.EDQUOT))
        return False


__all__ = ["cache_dir", "read_file", "write_file", "file_sha256", "problem",
           "is_regular_or_missing", "ENV_VAR"]
