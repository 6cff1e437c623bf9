"""Loading the runtime library (``runtime_lib.py`` builds it): the cached-launch half.

A process that launches only cached kernels loads the library's shared object from the cache
(verified against the size and SHA-256 recorded when it was linked) and resolves a symbol when
it is first asked for; it imports neither llvmlite's IR builder nor the library's generators,
which ``ensure_loaded`` brings in only when the cache has no library for this compiler version
and CPU and it must be built. The SIGINT handler's symbol names live here too, so the Ctrl-C
hook (``simulator/interrupts.py``) needs nothing else.
"""
from __future__ import annotations

import os
import threading

#: the SIGINT handler and its globals (defined by ``interrupt.py``)
INT_HANDLER = "asc_sigint"
INT_TABLE, INT_LENGTH, INT_PREVIOUS, INT_PREVIOUS_FLAGS, INT_FIRED = (
    "asc_int_table", "asc_int_len", "asc_int_prev", "asc_int_prev_flags", "asc_int_fired")
INT_GLOBALS = (INT_TABLE, INT_LENGTH, INT_PREVIOUS, INT_PREVIOUS_FLAGS, INT_FIRED)

_lock = threading.Lock()


def _new_lock_after_fork() -> None:
    """A lock another thread held when the process forked stays held in the child: replace it."""
    global _lock
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_lock_after_fork)
_loaded = False
_symbol_names: list = []


def ensure_loaded() -> None:
    """Make the library's functions available to kernels, once per process: ``dlopen`` its
    shared library (``RTLD_GLOBAL``) when the cache has one, else load its object code into
    MCJIT; build (and cache) it first if needed."""
    global _loaded
    if _loaded:
        return
    with _lock:
        if _loaded:
            return
        from .. import cachedir, jit, native
        key = f"runtime-{jit.compiler_version()}-{jit.host_target()}"
        so = jit.blob_path(key, ".so")
        entry = jit.load_blob(key)
        if entry is not None and jit.elf_is_sound(entry[0]):
            obj, symbols, meta = entry
        else:
            obj, symbols = _build(cached=so is not None)
            meta = {}
        # the shared library is loaded only if it is the one linked from this object code
        # (size and SHA-256 recorded when it was linked): a truncated or patched file in the
        # cache is linked again, never dlopen'ed
        if so is not None and (meta.get("so_size") is None or _so_mismatch(so, meta)):
            try:
                so.unlink(missing_ok=True)
                linked = native.link_shared(obj, so, libs=("m",))
            except OSError as exc:
                cachedir.problem(exc, so)
                linked = False
            meta = {"so_sha256": cachedir.file_sha256(so), "so_size": so.stat().st_size} \
                if linked else {}
            jit.store_blob(key, obj, symbols, **meta)
        lib = native.load_shared(so, global_symbols=True) if so is not None and meta else None
        _symbol_names[:] = symbols
        if lib is not None and all(native.symbol_address(lib, n) for n in symbols[:1]):
            _LIBS.append(lib)     # symbols are looked up when first asked for (dlsym)
        else:
            import llvmlite.binding as llvm
            engine = jit.load_object_engine(obj)
            _addresses.update({n: engine.get_function_address(n) for n in symbols})
            for name, address in _addresses.items():
                llvm.add_symbol(name, address)
        _loaded = True


def _build(cached: bool) -> tuple[bytes, list]:
    """Generate and compile the library (several seconds): (object code, symbol names). Says
    so on stderr, since a user's first launch waits for it."""
    import sys
    import time
    from .. import jit
    from . import intrinsics  # noqa: F401  (registers lowerings and library definers)
    from .runtime_lib import _symbols, build_module
    print("ascendc_py: building the runtime library of vector loops and timing functions "
          + ("(once for this compiler version and CPU; later processes load it from the "
             "cache) ..." if cached else "(no usable cache: in every process) ..."),
          file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    module = build_module()
    symbols = list(_symbols())
    obj, _ = jit.emit_object(str(module))
    print(f"ascendc_py: runtime library built in {time.perf_counter() - t0:.1f} s",
          file=sys.stderr, flush=True)
    return obj, symbols


def _so_mismatch(so, meta: dict) -> bool:
    """True when the cached shared library is not the file that was linked."""
    from .. import cachedir
    try:
        if so.stat().st_size != meta.get("so_size"):
            return True
    except OSError:
        return True
    return cachedir.file_sha256(so) != meta.get("so_sha256")


_LIBS: list = []
_addresses: dict = {}


def symbol_address(name: str) -> int:
    """The address of one of the library's symbols (functions and globals; 0: none)."""
    ensure_loaded()
    return _resolve(name)


def _resolve(name: str) -> int:
    """A symbol's address once the library is loaded (or while ``ensure_loaded`` loads it)."""
    address = _addresses.get(name)
    if address is None:
        from .. import native
        address = _addresses[name] = int(native.symbol_address(_LIBS[0], name) or 0) \
            if _LIBS else 0
    return address


def register_with_llvm() -> None:
    """Tell LLVM (MCJIT) where the library's symbols are, when kernels are loaded that way
    (compiling a kernel: only then are all of them resolved). Called by ``ensure_loaded``
    itself, so it must not wait for it."""
    import llvmlite.binding as llvm
    for name in _symbol_names:
        address = _resolve(name)
        if address:
            llvm.add_symbol(name, address)
