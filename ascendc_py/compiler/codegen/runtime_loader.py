"""Loading the runtime library (``runtime_lib.py`` generates it): one shard at a time.

The library is built lazily, in shards: a shard holds one piece of it (a vector op for one
dtype, a runtime or timing function, a library definer's functions; ``runtime_lib.closure``)
and is built the first time a kernel calls it, then cached on disk as object code and a shared
object (keyed by the compiler version, the host CPU and the piece). A compiled kernel records
the shards it calls; before it runs they are loaded here, each once per process. A process
that launches only cached kernels ``dlopen``s the shards' shared objects (``RTLD_GLOBAL``,
verified against the size and SHA-256 recorded when they were linked) and resolves a symbol
when it is first asked for; it imports neither llvmlite's IR builder nor the library's
generators. The SIGINT handler lives in the small ``CORE`` shard, whose symbol names are here,
so the Ctrl-C hook (``simulator/interrupts.py``) needs nothing else.
"""
from __future__ import annotations

import os
import sys
import time
from typing import Optional

from ...forksafe import ForkSafeLock

#: the shard every launching process loads: the SIGINT handler (and definers put there)
CORE = "core"
#: the SIGINT handler and its globals (defined by ``interrupt.py``)
INT_HANDLER = "asc_sigint"
#: ``int64 asc_sigint_installed(void)``: 1 when asc_sigint is the process's SIGINT handler
INT_INSTALLED = "asc_sigint_installed"
INT_TABLE, INT_LENGTH, INT_PREVIOUS, INT_PREVIOUS_FLAGS, INT_FIRED = (
    "asc_int_table", "asc_int_len", "asc_int_prev", "asc_int_prev_flags", "asc_int_fired")
INT_GLOBALS = (INT_TABLE, INT_LENGTH, INT_PREVIOUS, INT_PREVIOUS_FLAGS, INT_FIRED)
#: ``int64 asc_bind_args(spec, job, args)``: the fast launches' argument binder (bind_args.py)
BIND_ARGS = "asc_bind_args"

_lock = ForkSafeLock(reentrant=True)

_shards: dict = {}       # piece -> its dlopen'ed shared object, or None (loaded into MCJIT)
_owner: dict = {}        # symbol -> the piece (loaded) that owns it
_addresses: dict = {}    # symbol -> address (resolved, or registered by MCJIT)
_built_before: list = []  # shards built by this process, per ensure_shards call
_building: list = []      # when the shard being built started (empty: none is)
_build_seconds: list = []  # how long each shard this process built took


def build_seconds() -> float:
    """Seconds this process has spent building runtime library shards, one being built
    included (a harness that limits a kernel's run time need not count them)."""
    started = list(_building)
    return sum(_build_seconds) + (time.perf_counter() - started[0] if started else 0.0)


def shard_key(piece: str) -> str:
    """The cache name of a piece's shard (compiler version, host CPU, piece)."""
    from .. import jit
    return f"runtime-{jit.compiler_version()}-{jit.host_target()}-{piece}"


def ensure_loaded() -> None:
    """Load the core shard (the SIGINT handler), once per process; building it first if the
    cache has none. Other shards are loaded by ``ensure_shards`` as kernels need them."""
    ensure_shards((CORE,))


def ensure_shards(pieces) -> None:
    """Make the functions of the shards of ``pieces`` available to kernels: ``dlopen`` each
    shard's shared object (``RTLD_GLOBAL``) when the cache has it, else load its object code
    into MCJIT; build (and cache) the missing ones first, saying so on stderr."""
    if all(piece in _shards for piece in pieces):
        return
    from .. import jit
    with _lock:
        missing = [p for p in dict.fromkeys(pieces) if p not in _shards]
        built, t0 = [], time.perf_counter()
        for piece in missing:
            if not _load_cached(piece):
                if not built and not _built_before:
                    _say(_BUILDING if jit.blob_path("runtime") is not None else _NO_CACHE)
                built.append(piece)
                _building[:] = [time.perf_counter()]
                try:
                    _load_built(piece)
                finally:
                    _build_seconds.append(time.perf_counter() - _building.pop())
        if built:
            _say(f"runtime library: {len(built)} {'more ' if _built_before else ''}"
                 f"part{'s' if len(built) > 1 else ''} built in "
                 f"{time.perf_counter() - t0:.1f} s")
            _built_before.append(len(built))


_BUILDING = ("building the runtime library, once (the parts kernels call, when first called; "
             "later processes load them from the cache) ...")
_NO_CACHE = "building the runtime library (no usable cache: in every process) ..."


def _say(message: str) -> None:
    print(f"ascendc_py: {message}", file=sys.stderr, flush=True)


def _load_cached(piece: str) -> bool:
    """Load a piece's shard from the cache (linking its shared object again if it is missing,
    or is not the file that was linked); False when the cache has no sound object code."""
    from .. import jit, native
    key = shard_key(piece)
    entry = jit.load_blob(key)
    if entry is None:
        return False
    obj, symbols, meta = entry
    so = jit.blob_path(key, ".so")
    # the shared object is loaded only if it is the one linked from this object code (size
    # and SHA-256 recorded when it was linked): a truncated or patched file in the cache is
    # linked again, never dlopen'ed
    if so is not None and (meta.get("so_size") is None or _so_mismatch(so, meta)):
        if not jit.elf_is_sound(obj):
            return False
        meta = _link(key, obj, symbols, so)
    lib = native.load_shared(so, global_symbols=True) if so is not None and meta.get(
        "so_size") is not None else None
    if lib is not None and all(native.symbol_address(lib, n) for n in symbols[:1]):
        _shards[piece] = lib      # symbols are looked up when first asked for (dlsym)
        _owner.update(dict.fromkeys(symbols, piece))
    elif not jit.elf_is_sound(obj):   # (checked before LLVM's object loader sees it)
        return False
    else:
        _load_into_mcjit(piece, obj, symbols)
    return True


def link_bundle(pieces: list, target) -> Optional[dict]:
    """Link the cached shards of ``pieces`` (``CORE`` first) into the one shared object
    ``target``, for a kernel's cache entry: a new process then loads the runtime library the
    kernel calls with one ``dlopen`` (``load_bundle``). A shard holds its own copy of every
    piece it calls, so a definition may repeat: the first one linked serves, as the first
    shard loaded does when they are loaded one by one. Returns what ``load_bundle`` needs
    (the pieces, the symbols each owns, the bundle's size and SHA-256), or None when a shard
    is not cached or the link fails."""
    from .. import cachedir, jit, native
    objs, symbols = [], {}
    for piece in pieces:
        entry = jit.load_blob(shard_key(piece))
        if entry is None or not entry[1] or not jit.elf_is_sound(entry[0]):
            return None
        objs.append(entry[0])
        symbols[piece] = list(entry[1])
    if not native.link_shared(objs[0], target, libs=("m",), more=tuple(objs[1:]),
                              flags=("-Wl,--allow-multiple-definition",)):
        return None
    try:
        size = target.stat().st_size
    except OSError:
        return None
    return {"pieces": list(pieces), "symbols": symbols, "so_size": size,
            "so_sha256": cachedir.file_sha256(target)}


def load_bundle(path, bundle: dict) -> bool:
    """Load the shards of a cached kernel from its bundle (``link_bundle``) with one ``dlopen``
    (``RTLD_GLOBAL``): only in a process that has loaded none of them yet, while every one of
    them is still cached, and only if the bundle is the file that was linked (size and
    SHA-256; one that is not is deleted, never loaded). False: nothing was loaded (the
    caller loads the shards one by one, ``ensure_shards``)."""
    from .. import cachedir, jit, native
    try:
        pieces, symbols = list(bundle["pieces"]), bundle["symbols"]
        size, sha = bundle["so_size"], bundle["so_sha256"]
    except (KeyError, TypeError):
        return False
    with _lock:
        root = cachedir.cache_dir()
        if root is None or any(p in _shards for p in pieces):
            return False
        folder = str(root)
        for piece in pieces:     # (a shard deleted from the cache is built again instead)
            if not os.path.isfile(os.path.join(folder, jit.blob_name(shard_key(piece)))):
                return False
        try:
            if path.stat().st_size != size or cachedir.file_sha256(path) != sha:
                path.unlink()    # not the bundle that was linked: never loaded
                return False
        except OSError:
            return False
        lib = native.load_shared(path, global_symbols=True)
        if lib is None or not all(native.symbol_address(lib, symbols[p][0])
                                  for p in (pieces[0], pieces[-1])):   # (the file is verified)
            return False
        for piece in pieces:
            _shards[piece] = lib       # symbols are looked up when first asked for (dlsym)
            _owner.update(dict.fromkeys(symbols[piece], piece))
    return True


def _load_built(piece: str) -> None:
    """Build a piece's shard, load it into MCJIT (this process) and cache it: the object code
    now, its shared object (for later processes) linked on a background thread."""
    from .. import jit, native
    from .runtime_lib import shard_object
    obj, symbols = shard_object(piece)
    key = shard_key(piece)
    jit.store_blob(key, obj, symbols)
    so = jit.blob_path(key, ".so")
    if so is not None and native.linker() is not None:
        jit.in_background(lambda: _link(key, obj, symbols, so))
    _load_into_mcjit(piece, obj, symbols)


def _link(key: str, obj: bytes, symbols: list, so) -> dict:
    """Link a shard's shared object and record it (size, SHA-256) with its object code; the
    recorded metadata ({} when it could not be linked)."""
    from .. import cachedir, jit, native
    try:
        so.unlink(missing_ok=True)
        linked = native.link_shared(obj, so, libs=("m",))
    except OSError as exc:
        cachedir.problem(exc, so)
        linked = False
    size = None
    if linked:
        try:
            size = so.stat().st_size
        except OSError:
            linked = False
    meta = {"so_sha256": cachedir.file_sha256(so), "so_size": size} if linked else {}
    jit.store_blob(key, obj, symbols, **meta)
    return meta


def _load_into_mcjit(piece: str, obj: bytes, symbols: list) -> None:
    import llvmlite.binding as llvm
    from .. import jit
    engine = jit.load_object_engine(obj)
    for name in symbols:
        address = _addresses[name] = engine.get_function_address(name) or \
            engine.get_global_value_address(name)
        llvm.add_symbol(name, address)
    _shards[piece] = None
    _owner.update(dict.fromkeys(symbols, piece))


def _so_mismatch(so, meta: dict) -> bool:
    """True when the cached shared object is not the file that was linked."""
    from .. import cachedir
    try:
        if so.stat().st_size != meta.get("so_size"):
            return True
    except OSError:
        return True
    return cachedir.file_sha256(so) != meta.get("so_sha256")


def symbol_address(name: str) -> int:
    """The address of one of the library's symbols (functions and globals; 0: none), its
    shard loaded (built) first if needed."""
    if name not in _owner:
        ensure_loaded()
    if name not in _owner:
        from . import runtime_lib
        piece = runtime_lib.piece_of(name)
        if piece is None:
            return 0
        ensure_shards((piece,))
    return _resolve(name)


def _resolve(name: str) -> int:
    """A loaded symbol's address (0: not loaded)."""
    address = _addresses.get(name)
    if address is None:
        lib = _shards.get(_owner.get(name))
        if lib is None:
            return 0
        from .. import native
        address = _addresses[name] = int(native.symbol_address(lib, name) or 0)
    return address


def register_with_llvm() -> None:
    """Tell LLVM (MCJIT) where the loaded shards' symbols are, before a kernel is loaded that
    way."""
    import llvmlite.binding as llvm
    for name in list(_owner):
        address = _resolve(name)
        if address:
            llvm.add_symbol(name, address)


def loaded_shards() -> list:
    """The pieces whose shards this process has loaded (for tests)."""
    return sorted(_shards)
