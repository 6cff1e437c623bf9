"""Compile a kernel specialisation to native code, with an in-memory and an on-disk cache.

Pipeline (named passes, in order): parse → sema → insert_sync → verify → codegen → LLVM O2 → object code →
MCJIT. The disk cache stores the object code and the metadata the runtime needs, keyed by a
typed ``CacheKey``; a new process loads an entry in milliseconds without importing lark. An
entry that fails its checksum or does not load is recompiled, never trusted.
"""
from __future__ import annotations

import contextlib
import ctypes
import gc
import hashlib
import os
import pickle
import threading
import time
from dataclasses import field
from pathlib import Path
from typing import Any, Optional

from .. import envvars
from ..fieldwise import Fieldwise, FrozenFieldwise, fieldwise_dataclass
from ..forksafe import ForkSafeLock
from . import cachedir
from .cachedir import cache_dir
from .errors import InternalCompilerError, KernelCompileError, KernelError

_llvm_lock = ForkSafeLock()


def _end_gc_pause_after_fork() -> None:
    """A compile other threads were running does not go on in a forked child: end its gc
    pause."""
    global _gc_pauses
    if _gc_pauses:
        _gc_pauses = 0
        if _gc_was_enabled:
            gc.enable()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_end_gc_pause_after_fork)
_target_machine = None
_kernel_target_machine = None   # codegen level 0 (see KERNEL_FUNCTION_FAST_CODEGEN)
_engines: list = []  # keep MCJIT engines (and their code) alive for the process
CACHE_FORMAT = 3


def _llvm():
    """llvmlite's binding layer and a TargetMachine for the host CPU (features included,
    so the vectoriser can use AVX2/AVX-512 where the host has them)."""
    import llvmlite.binding as llvm
    global _target_machine, _kernel_target_machine
    if _target_machine is None:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        target = llvm.Target.from_default_triple()
        cpu, features = llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()
        _kernel_target_machine = target.create_target_machine(
            cpu=cpu, features=features, opt=0, reloc="pic", codemodel="default")
        _target_machine = target.create_target_machine(    # PIC: also linkable into a .so
            cpu=cpu, features=features, opt=3, reloc="pic", codemodel="default")
    return llvm, _target_machine


_version_cache: Optional[str] = None
_timing_override: Optional[bool] = None


def set_timing(enabled: Optional[bool]) -> None:
    """Run kernels with (default) or without the timing model's bookkeeping; None: follow
    the ``ASCENDC_PY_TIMING`` environment variable (0 turns it off). Compiled code is the same
    either way: the runtime library skips its timing calls when it is off."""
    global _timing_override
    _timing_override = enabled


def timing_enabled() -> bool:
    if _timing_override is not None:
        return _timing_override
    return envvars.get("ASCENDC_PY_TIMING", "1") not in ("0", "off", "false")


_extent_checks_override: Optional[bool] = None


def set_extent_checks(enabled: Optional[bool]) -> None:
    """For ``make bench`` only: compile kernels without the per-instruction tensor-extent and
    queue-tensor checks (False), to measure what they cost; None restores the default (on).
    Such kernels are a separate cache entry; nothing a user runs should turn this off (an
    instruction could then write past its tensor into a neighbour's, as on hardware)."""
    global _extent_checks_override
    _extent_checks_override = enabled


def extent_checks_enabled() -> bool:
    return _extent_checks_override is not False


_fusion = True


def set_fusion(enabled: bool) -> None:
    """Fuse runs of vector instructions (default; ``codegen/fusion.py``) or lower every
    instruction on its own (a separate cache entry: tests compare the two)."""
    global _fusion
    _fusion = bool(enabled)


def fusion_enabled() -> bool:
    return _fusion


def codegen_variant() -> str:
    """The part of a cache key that says how kernels are generated (read on every launch: it
    imports nothing)."""
    variant = "timed" if extent_checks_enabled() else "timed-no-extent-checks"
    return variant if _fusion else variant + "-unfused"


def compiler_version() -> str:
    """A fingerprint of the compiler's own source files (name, size, modification time): any
    change invalidates cached kernels and the runtime library. Cheap: stats, no reads."""
    global _version_cache
    if _version_cache is None:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        parts = [str(CACHE_FORMAT)]
        for sub in ("compiler", "simulator", "dsl"):
            found, todo = [], [(os.path.join(root, sub), sub)]
            while todo:     # os.scandir: a quarter of os.walk's time (a launch pays for it)
                directory, rel = todo.pop()
                with os.scandir(directory) as entries:
                    for e in entries:
                        name = e.name
                        if name.endswith(".py") and e.is_file():
                            st = e.stat()
                            found.append((f"{rel}/{name}", f"{st.st_size}:{st.st_mtime_ns};"))
                        elif name != "__pycache__" and e.is_dir(follow_symlinks=False):
                            todo.append((e.path, f"{rel}/{name}"))
            found.sort()
            parts += [f"{rel}:{tail}" for rel, tail in found]
        _version_cache = hashlib.sha256("".join(parts).encode()).hexdigest()[:16]
    return _version_cache


def host_target() -> str:
    """The host CPU for cache keys (read from the OS, so a cached launch needs no LLVM)."""
    from .native import host_id
    return host_id()


@fieldwise_dataclass(frozen=True)   # (repr, eq, hash: FrozenFieldwise's; __init__ compiled when used)
class CacheKey(FrozenFieldwise):
    """Everything a compiled kernel depends on."""

    kernel: str                                # module.qualname
    sources: tuple[tuple[str, str], ...]       # (qualname, sha256) of the kernel and callees
    specs: tuple                               # ArgSpec per argument (dtypes, ConstExpr values)
    globals_read: tuple[tuple[str, str], ...]  # (name, repr(value)) of constants referenced
    timing: str
    compiler: str
    target: str

    def digest(self) -> str:
        return hashlib.sha256(repr(self).encode()).hexdigest()[:40]


@fieldwise_dataclass                # (repr, eq: Fieldwise's; __init__ compiled when used)
class CompiledKernel(Fieldwise):
    """Native code of one specialisation plus what the runtime needs to run and explain it."""

    name: str
    entry_name: str
    address: int
    sites: list
    gm_args: tuple
    scalar_args: tuple
    num_queues: int
    queue_names: list
    globals_read: dict
    memories: tuple = ()
    kernel_type: str = "AIV_ONLY"               # dsl.kernel_types.KernelType member name
    source_sha256: Optional[dict] = None        # qualified name -> SHA-256 of its source text
    gm_writes: Any = None                       # spec.GmWrites: the GM arguments it may write
    compile_seconds: float = 0.0
    from_disk: bool = False
    stage_seconds: dict = field(default_factory=dict)

    def __post_init__(self):
        self.cfunc = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p)(self.address)


# Kernel modules are optimised in two parts. The kernel function itself (scalar control flow and
# calls into the runtime library, a few hundred instructions) gets LLVM's function
# simplification pipeline at KERNEL_FUNCTION_LEVEL, without the module pipeline's vectorisers,
# which find nothing in it: every loop of a kernel function calls the runtime library or
# touches its atomic loop budget. The module's other functions (the fused element loops and the
# reduction and conversion helpers, where the element work runs) are optimised on their own by
# the full O2 pipeline with vectorisation, then linked back in and made internal again. Results
# cannot differ from any other pipeline: no pass may change an IEEE result without fast-math
# flags, which codegen never sets. The runtime library's shards keep O3.
# The kernel function's machine code is generated at LLVM's codegen level 0 (FastISel, fast
# register allocation, no machine-level optimisation; its IR is optimised as above first), in
# an object file of its own; the helpers get the host's full codegen in a second object file
# (hidden symbols, so kernels' helpers never meet). That halves the object emission of a kernel
# module. The kernel function only sequences calls into the runtime library and the helpers, so
# the run time it adds is small (callgrind, a haswell build, one sepia float32 (4,3,224,224)
# launch: the kernel function's own instructions 128k -> 162k, +1.4% of the launch's native
# instructions), and IEEE results are the same at every codegen level. A kernel function with a
# loop that calls nothing (``has_scalar_loop``) keeps full codegen, and a module that is not
# split is one object at full codegen.
KERNEL_SPEED_LEVEL = 2
KERNEL_FUNCTION_LEVEL = 1
KERNEL_FUNCTION_FAST_CODEGEN = True


def emit_object(module_text, speed_level: int = 3) -> tuple[bytes, dict]:
    """Parse, verify, optimise (LLVM's pipeline of ``speed_level``, with vectorisation) and
    emit object code (``module_text``: LLVM IR text, or a module llvmlite's binding layer has
    parsed)."""
    llvm, tm = _llvm()
    times = {}
    t0 = time.perf_counter()
    mod = _parse_module(module_text)
    t1 = time.perf_counter()
    _module_pipeline(mod, speed_level)
    t2 = time.perf_counter()
    obj = tm.emit_object(mod)
    times.update(llvm_parse=t1 - t0, optimize=t2 - t1, emit=time.perf_counter() - t2)
    return obj, times


def _parse_module(module_text):
    llvm, tm = _llvm()
    mod = llvm.parse_assembly(module_text) if isinstance(module_text, str) else module_text
    mod.triple = tm.triple
    mod.data_layout = str(tm.target_data)
    mod.verify()
    return mod


def _module_pipeline(mod, speed_level: int) -> None:
    llvm, tm = _llvm()
    pto = llvm.create_pipeline_tuning_options(speed_level=speed_level)
    pto.loop_vectorization = True
    pto.slp_vectorization = True
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(mod, pb)


def kernel_module_texts(module, entry_name: str) -> tuple[str, Optional[str], Optional[list]]:
    """The LLVM IR texts of a kernel module (an llvmlite ``ir.Module``) split for
    ``optimize_kernel_module``: (the kernel function ``entry_name`` with the other functions
    declared; the other functions defined with external linkage and the kernel declared, or
    None when there are none; the names of the functions to make internal again after
    linking). A module that defines global variables is not split: (its text, None, None)."""
    helper_text, internal = helper_module_text(module, entry_name)
    return kernel_function_text(module, entry_name, internal), helper_text, internal


def helper_module_text(module, entry_name: str) -> tuple[Optional[str], Optional[list]]:
    """The first half of ``kernel_module_texts``: (the helpers' text or None, the names to
    make internal again, or None when the module is not split)."""
    from llvmlite import ir as L
    if any(isinstance(g, L.GlobalVariable) for g in module.globals.values()):
        return None, None
    helpers = [f for f in module.functions if f.name != entry_name and f.blocks]
    if not helpers:
        return None, []
    internal = [f.name for f in helpers if f.linkage == "internal"]
    with _printing(module, entry_name, helpers_defined=True) as text:
        return text(), internal


def kernel_function_text(module, entry_name: str, internal: Optional[list]) -> str:
    """The second half of ``kernel_module_texts``: the kernel function's text (``internal``
    from ``helper_module_text``; None: the whole module's)."""
    if internal is None:
        from .codegen.irtext import module_text
        return module_text(module)
    with _printing(module, entry_name, helpers_defined=False) as text:
        return text()


@contextlib.contextmanager
def _printing(module, entry_name: str, helpers_defined: bool):
    """Print ``module`` with either its helpers (every function but the kernel) defined, with
    external linkage, and the kernel declared, or the kernel defined and the helpers declared;
    the module is restored afterwards."""
    from .codegen.irtext import module_text
    helpers = [f for f in module.functions if f.name != entry_name and f.blocks]
    entry = module.get_global(entry_name)
    saved = [(f, f.blocks, f.linkage) for f in helpers + [entry]]
    try:
        for f in helpers:
            f.linkage = ""
            if not helpers_defined:
                f.blocks = []
        if helpers_defined:
            entry.blocks = []
        yield lambda: module_text(module)
    finally:
        for f, blocks, linkage in saved:
            f.blocks, f.linkage = blocks, linkage


def optimized_helper_module(helper_text: str):
    """The helpers' module (``helper_module_text``) parsed and optimised by the O2 pipeline
    with vectorisation."""
    helpers = _parse_module(helper_text)
    _module_pipeline(helpers, KERNEL_SPEED_LEVEL)
    return helpers


def optimize_kernel_module(kernel_text: str, helper_text: Optional[str],
                           internal: Optional[list],
                           entry_name: str, times: Optional[dict] = None):
    """Parse and optimise a kernel module split by ``kernel_module_texts`` (see
    KERNEL_FUNCTION_LEVEL); returns the linked llvmlite binding module. ``times`` gets
    ``llvm_parse`` and ``optimize``."""
    llvm, tm = _llvm()
    t0 = time.perf_counter()
    mod = _parse_module(kernel_text)
    t1 = time.perf_counter()
    if internal is None:             # not split: the whole module through the O2 pipeline
        _module_pipeline(mod, KERNEL_SPEED_LEVEL)
    else:
        pb = llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options(
            speed_level=KERNEL_FUNCTION_LEVEL))
        pb.getFunctionPassManager().run(mod.get_function(entry_name), pb)
        if helper_text is not None:
            mod.link_in(optimized_helper_module(helper_text))
            for name in internal:
                mod.get_function(name).linkage = "internal"
    if times is not None:
        times.update(llvm_parse=t1 - t0, optimize=time.perf_counter() - t1)
    return mod


def emit_kernel_object(kernel_text: str, helper_text: Optional[str],
                       internal: Optional[list], entry_name: str) -> tuple[bytes, dict, list]:
    """The object code of a kernel module split by ``kernel_module_texts``: (the object file
    that defines the kernel function, the seconds of the stages (``llvm_parse``, ``optimize``,
    ``emit``), the other object files it needs: the helpers', see
    KERNEL_FUNCTION_FAST_CODEGEN)."""
    llvm, tm = _llvm()
    times: dict = {}
    if internal is None or not KERNEL_FUNCTION_FAST_CODEGEN:
        mod = optimize_kernel_module(kernel_text, helper_text, internal, entry_name, times)
        t0 = time.perf_counter()
        obj = tm.emit_object(mod)
        times["emit"] = time.perf_counter() - t0
        return obj, times, []
    t0 = time.perf_counter()
    mod = _parse_module(kernel_text)
    t1 = time.perf_counter()
    pb = llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options(
        speed_level=KERNEL_FUNCTION_LEVEL))
    pb.getFunctionPassManager().run(mod.get_function(entry_name), pb)
    helpers = optimized_helper_module(helper_text) if helper_text is not None else None
    t2 = time.perf_counter()
    from .scalar_loops import has_scalar_loop
    kernel_tm = tm if has_scalar_loop(str(mod.get_function(entry_name))) else \
        _kernel_target_machine
    obj = kernel_tm.emit_object(mod)
    more = []
    if helpers is not None:
        for f in helpers.functions:
            if not f.is_declaration:
                f.visibility = "hidden"
        more.append(tm.emit_object(helpers))
    times.update(llvm_parse=t1 - t0, optimize=t2 - t1, emit=time.perf_counter() - t2)
    return obj, times, more


def load_object_engine(obj: bytes, more: tuple = ()):
    """Load object code (``obj``, then the objects ``more`` it calls) into a new MCJIT engine
    kept alive for the process."""
    llvm, tm = _llvm()
    from .codegen import runtime_lib
    runtime_lib.register_with_llvm()
    with _llvm_lock:
        backing = llvm.parse_assembly("")
        engine = llvm.create_mcjit_compiler(backing, tm)
        for code in (obj, *more):
            engine.add_object_file(llvm.ObjectFileRef.from_data(code))
        engine.finalize_object()
        _engines.append(engine)
    return engine


_libraries: list = []  # dlopen'ed kernel libraries, kept alive for the process


def _load_object(obj: bytes, entry_name: str, shards, so_path: Optional[Path] = None,
                 bundle: Optional[dict] = None, more: tuple = ()) -> int:
    """Load a kernel, the runtime library's ``shards`` it calls first (all at once from the
    entry's ``bundle`` of them when it can be used, ``runtime_loader.load_bundle``): from its
    shared library when there is one (``dlopen``, no LLVM), else into MCJIT."""
    from . import native
    from .codegen.runtime_loader import CORE, ensure_shards, load_bundle
    if bundle is not None and so_path is not None:
        load_bundle(_bundle_path(so_path), bundle)
    ensure_shards([CORE, *shards])    # the core shard too: every launch needs it
    if so_path is not None and so_path.exists():
        lib = native.load_shared(so_path)
        if lib is not None:
            address = native.symbol_address(lib, entry_name)
            if address:
                _libraries.append(lib)
                return address
    address = load_object_engine(obj, more).get_function_address(entry_name)
    if not address:
        raise InternalCompilerError(f"compiled kernel has no entry point {entry_name}")
    return address


def blob_name(name: str, suffix: str = ".bin") -> str:
    """The file name of the cached binary ``name`` in the cache directory."""
    return f"{name.replace('/', '_').replace('|', '_')}{suffix}"


def blob_path(name: str, suffix: str = ".bin") -> Optional[Path]:
    """Where the cached binary ``name`` (the runtime library) lives; None: no usable cache."""
    root = cache_dir()
    return None if root is None else root / blob_name(name, suffix)


def load_blob(name: str) -> Optional[tuple[bytes, list, dict]]:
    """A checksummed binary, its symbol list and its other metadata from the cache directory,
    or None if missing or corrupt."""
    path = blob_path(name)
    entry = _read_entry(path) if path is not None else None
    if entry is None:
        return None
    obj, meta = entry
    if meta.get("name") != name or not isinstance(meta.get("symbols"), list):
        return None
    return obj, meta["symbols"], meta


def store_blob(name: str, data: bytes, symbols: list, **extra) -> None:
    path = blob_path(name)
    if path is not None:
        _write_entry(path, data, {"name": name, "symbols": list(symbols), **extra})


# ----------------------------------------------------------------------------- disk cache
def _entry_path(key: CacheKey, create: bool = True) -> Optional[Path]:
    """Where the entry of ``key`` lives; ``create``: make its folder if missing (for a write;
    a lookup need not: a missing folder holds no entry)."""
    root = cache_dir()
    if root is None:
        return None
    d = root / "kernels"
    if create:
        try:
            d.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            cachedir.problem(exc, d)
            return None
    return d / f"{key.digest()}.kernel"


def _so_path(entry: Path) -> Path:
    return entry.with_suffix(".so")


def _bundle_path(entry: Path) -> Path:
    """The shared object of the runtime library shards the kernel of ``entry`` calls, linked
    together (``runtime_loader.link_bundle``)."""
    return entry.with_suffix(".rt.so")


def _write_entry(path: Path, obj: bytes, meta: dict) -> None:
    payload = pickle.dumps((obj, meta), protocol=pickle.HIGHEST_PROTOCOL)
    cachedir.write_file(path, hashlib.sha256(payload).digest() + payload)


def _read_entry(path: Path) -> Optional[tuple[bytes, dict]]:
    blob = cachedir.read_file(path)
    if blob is None:
        return None
    digest, payload = blob[:32], blob[32:]
    if len(blob) < 33 or hashlib.sha256(payload).digest() != digest:
        return None
    try:
        obj, meta = pickle.loads(payload)
    except Exception:  # noqa: BLE001 - any unpickling failure means a corrupt entry
        return None
    if not isinstance(obj, bytes) or not isinstance(meta, dict):
        return None
    return obj, meta


def _meta_to_compiled(name: str, address: int, meta: dict, **kw) -> CompiledKernel:
    return CompiledKernel(name=name, entry_name=meta["entry_name"], address=address,
                          sites=meta["sites"], gm_args=meta["gm_args"],
                          scalar_args=meta["scalar_args"], num_queues=meta["num_queues"],
                          queue_names=meta["queue_names"], globals_read=meta["globals_read"],
                          memories=meta["memories"],
                          kernel_type=meta.get("kernel_type", "AIV_ONLY"),
                          source_sha256=meta.get("source_sha256"),
                          gm_writes=meta["gm_writes"], **kw)


def elf_is_sound(obj: bytes) -> bool:
    """Structural check of a 64-bit little-endian ELF relocatable object (header, section
    table, section, symbol and relocation bounds) before it reaches LLVM, whose object loader
    trusts its input and can crash the process on a malformed file."""
    import struct
    try:
        if len(obj) < 64 or obj[:4] != b"\x7fELF" or obj[4] != 2 or obj[5] != 1:
            return False
        (e_type, _machine, _version, _entry, _phoff, shoff, _flags, ehsize, _phentsize,
         _phnum, shentsize, shnum, shstrndx) = struct.unpack_from("<HHIQQQIHHHHHH", obj, 16)
        if e_type != 1 or ehsize != 64 or shentsize != 64 or not 0 < shnum < 65535:
            return False
        if shoff + shnum * 64 > len(obj) or shstrndx >= shnum:
            return False
        sections = [struct.unpack_from("<IIQQQQIIQQ", obj, shoff + 64 * i) for i in range(shnum)]
        for (_name, sh_type, _f, _addr, off, size, link, info, _align, entsize) in sections:
            if sh_type != 8 and off + size > len(obj):          # 8: NOBITS
                return False
            if link >= shnum:
                return False
            if sh_type == 2:                                      # SYMTAB
                if entsize != 24 or size % 24:
                    return False
                strtab = sections[link]
                for k in range(size // 24):
                    st_name, _i, _o, st_shndx, _v, _s = struct.unpack_from("<IBBHQQ", obj,
                                                                           off + 24 * k)
                    if st_name >= max(strtab[5], 1) or (st_shndx < 0xff00 and
                                                         st_shndx >= shnum):
                        return False
            if sh_type in (4, 9):                                 # RELA, REL
                if info >= shnum or entsize not in (16, 24) or size % max(entsize, 1):
                    return False
        return True
    except (struct.error, IndexError, TypeError):
        return False


def _remove(path: Path) -> None:
    """Delete a bad cache file (a FIFO or a symlink in its place included); never raises."""
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass


def load_cached(key: CacheKey, name: str) -> Optional[CompiledKernel]:
    """The cached compiled kernel for ``key``, or None (missing, corrupt or unloadable)."""
    path = _entry_path(key, create=False)
    if path is None:
        return None
    entry = _read_entry(path)
    if entry is None:
        if os.path.lexists(path):
            _remove(path)
        return None
    obj, meta = entry
    more = meta.get("more_objects", ())
    if not (isinstance(more, (list, tuple)) and all(isinstance(m, bytes) for m in more)
            and all(map(elf_is_sound, (obj, *more)))):
        _remove(path)
        return None
    so = _so_path(path)
    if os.path.lexists(so) and meta.get("so_sha256") != cachedir.file_sha256(so):
        _remove(so)  # a library that is not the one we linked is not trusted
    try:
        address = _load_object(obj, meta["entry_name"], list(meta["runtime_shards"]), so,
                               meta.get("runtime_bundle"), tuple(more))
        return _meta_to_compiled(name, address, meta, from_disk=True)
    except Exception:  # noqa: BLE001 - a bad entry is recompiled, never trusted
        _remove(path)
        _remove(so)
        _remove(_bundle_path(path))
        return None


_gc_lock = ForkSafeLock()
_gc_pauses = 0                 # compiles in progress (on any thread) with the collector paused
_gc_was_enabled = False


@contextlib.contextmanager
def gc_paused():
    """Pause Python's cyclic garbage collector while compiling: the pipeline allocates tens of
    thousands of long-lived objects (AST, IR, llvmlite values), which trigger young and full
    collections that scan every object of the process (tens of ms in a fresh process). What a
    compile leaves unreachable is collected after it, as usual; nested and concurrent compiles
    restore the collector's state once, when the last one ends."""
    global _gc_pauses, _gc_was_enabled
    with _gc_lock:
        if _gc_pauses == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_pauses += 1
    try:
        yield
    finally:
        with _gc_lock:
            was_paused, _gc_pauses = _gc_pauses > 0, max(_gc_pauses - 1, 0)
            if was_paused and _gc_pauses == 0 and _gc_was_enabled:
                gc.enable()


def compile_kernel(kernel, specs, key: CacheKey) -> CompiledKernel:
    """Run the whole pipeline for one specialisation and store the result on disk."""
    with gc_paused():
        return _compile_kernel(kernel, specs, key)


def _compile_kernel(kernel, specs, key: CacheKey) -> CompiledKernel:
    from . import gm_writes, insert_sync
    from . import ir as kir
    from . import kernel_kind
    from .codegen.core import generate
    from .sema.analyzer import analyze

    times: dict[str, float] = {}
    t0 = time.perf_counter()
    try:
        kernel.parsed()
        t1 = time.perf_counter()
        times["parse"] = t1 - t0
        result = analyze(kernel, specs)
        t2 = time.perf_counter()
        times["sema"] = t2 - t1
        result = insert_sync.run(result, kernel)   # named pass: automatic synchronisation
        kir.verify(result.function)
        t3 = time.perf_counter()
        times["verify"] = t3 - t2
        from .codegen.timing import TimingEmitter
        cg = generate(result.function, TimingEmitter())
        texts = kernel_module_texts(cg.module, cg.entry_name)
        t4 = time.perf_counter()
        times["codegen"] = t4 - t3
        _llvm()
        t5 = time.perf_counter()
        times["llvm_init"] = t5 - t4
        shards = runtime_shards(cg.module)
        obj, llvm_times, more = emit_kernel_object(*texts, cg.entry_name)
        times.update(llvm_times)
        t4 = time.perf_counter()
        from .codegen.runtime_loader import CORE, ensure_shards
        ensure_shards([CORE, *shards])   # built the first time a kernel calls them (once)
        t5 = time.perf_counter()
        times["runtime_library"] = t5 - t4
        address = _load_object(obj, cg.entry_name, shards, more=tuple(more))
        times["load"] = time.perf_counter() - t5
        entry = _entry_path(key)
    except KernelError:
        raise
    except Exception as exc:  # noqa: BLE001 - never show an LLVM/lark stack to the user
        raise InternalCompilerError(f"internal compiler error while compiling "
                                    f"'{kernel.__name__}': {type(exc).__name__}: {exc}",
                                    kernel.def_loc()) from exc
    meta = dict(entry_name=cg.entry_name, sites=cg.sites, gm_args=result.function.gm_args,
                scalar_args=result.function.scalar_args,
                num_queues=result.function.num_queues, queue_names=result.queue_names,
                globals_read=result.globals_read,
                memories=kir.memories_used(result.function),
                kernel_type=kernel_kind.kernel_type(result.function,
                                                    getattr(kernel, "options", {})),
                source_sha256=source_hashes(kernel),
                gm_writes=gm_writes.analyze(result.function), runtime_shards=shards,
                more_objects=list(more))
    _link_in_background(obj, entry, meta)
    return _meta_to_compiled(kernel.__name__, address, meta,
                             compile_seconds=time.perf_counter() - t0, stage_seconds=times)


def runtime_shards(module) -> list:
    """The runtime library's shards a kernel module calls (the pieces that define the
    ``asc_*`` symbols it declares), which must be loaded before the kernel."""
    from .codegen import runtime_lib
    shards = set()
    for g in module.globals.values():
        if g.name.startswith("asc_") and getattr(g, "is_declaration", False):
            piece = runtime_lib.piece_of(g.name)
            if piece is None:
                raise InternalCompilerError(f"no runtime library function {g.name}")
            shards.add(piece)
    return sorted(shards)


def source_hashes(kernel) -> dict:
    """{qualified name: SHA-256 of the source text} of the kernel and of every helper whose
    source this process has read (all that were compiled into it)."""
    kernels, _ = kernel.dependency_guard()
    return {f"{k.fn.__module__}.{k.fn.__qualname__}": k._source.sha256 for k, _ in kernels
            if k._source is not None}


def sources_agree(recorded: dict, kernel) -> bool:
    """False when a kernel or helper whose source this process has read was compiled, by the
    entry that recorded ``recorded``, from a different text: such an entry is never used."""
    if not isinstance(recorded, dict):
        return False
    return all(recorded.get(name, sha) == sha for name, sha in source_hashes(kernel).items())


def _link_in_background(obj: bytes, entry: Path, meta: dict) -> None:
    """Write the cache entry, then link its shared library (for fast loads in new processes)
    on a background thread, so compiling does not wait for the system linker."""
    def work():
        from . import native
        from .codegen import runtime_loader as rl
        try:
            so = _so_path(entry)
            if native.link_shared(obj, so, more=tuple(meta.get("more_objects", ()))):
                meta["so_sha256"] = cachedir.file_sha256(so)
                bundle = rl.link_bundle([rl.CORE, *meta["runtime_shards"]], _bundle_path(entry))
                if bundle is not None:
                    meta["runtime_bundle"] = bundle
            _write_entry(entry, obj, meta)
        except OSError as exc:   # reported by the next call on the main thread
            cachedir.problem(exc, entry)
        except Exception:  # noqa: BLE001 - a failed link only costs a later recompile
            pass

    if entry is not None:
        in_background(work)


_link_threads: list = []


def in_background(work) -> None:
    """Run ``work`` (linking a shared library) on a background thread that the process waits
    for at exit (``ASCENDC_PY_LINK_SYNC=1``: right now); ``wait_for_links`` waits for it."""
    def guarded():
        try:
            work()
        except OSError as exc:   # reported by the next call on the main thread
            cachedir.problem(exc, exc.filename or ".", fatal=False)
        except Exception:  # noqa: BLE001 - a failed link only costs a later link or compile
            pass

    if _background_links_enabled():
        t = threading.Thread(target=guarded, name="asc-link", daemon=False)
        t.start()
        _link_threads.append(t)
    else:
        guarded()


def _background_links_enabled() -> bool:
    return os.environ.get("ASCENDC_PY_LINK_SYNC", "") in ("", "0")


def wait_for_links() -> None:
    """Wait until cache entries being linked in the background are written (tests, exit)."""
    while _link_threads:
        _link_threads.pop().join()


def llvm_ir_text(kernel, specs, optimized: bool = False) -> str:
    """The LLVM IR of a specialisation (for debugging and tests); ``optimized``: after the
    kernel pipeline (``optimize_kernel_module``)."""
    from . import ir as kir
    from .codegen.core import generate
    from .sema.analyzer import analyze

    from . import insert_sync
    result = insert_sync.run(analyze(kernel, specs), kernel)
    kir.verify(result.function)
    cg = generate(result.function)
    if not optimized:
        return str(cg.module)
    return str(optimize_kernel_module(*kernel_module_texts(cg.module, cg.entry_name),
                                      cg.entry_name))


__all__ = ["CacheKey", "CompiledKernel", "compile_kernel", "load_cached", "compiler_version",
           "KernelCompileError"]
