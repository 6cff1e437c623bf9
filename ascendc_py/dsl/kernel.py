"""``@asc.kernel`` (alias ``asc.jit``): capture a kernel, specialise, compile and launch it.

``k[block_dim](*args)`` (or pyasc's ``k[block_dim, stream](*args)``) binds the arguments,
derives the specialisation (GM dtypes, scalar types, ConstExpr values), finds the compiled code
(in memory, then on disk, else compiles) and runs every block on the simulator.
"""
from __future__ import annotations

import collections
import enum
import functools
import hashlib
import inspect
import time
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from ..compiler.errors import (BlockDimError, DeviceError, KernelLaunchError,
                               LaunchArgumentError, NonContiguousArrayError, SourceLoc,
                               UnsupportedArrayError, user_boundary, warn_at_user)
from .. import envvars
from . import api
from .launcher import CompiledTable, Launcher, guard_holds, launch_names, plan_key
from .types import DataType, dtype_of_array

RESERVED_LAUNCH_KEYWORDS = ("platform", "trace", "sanitize", "lenient", "stream")
_CONSTANT_TYPES = (bool, int, float, str, DataType, enum.Enum, np.integer, np.floating)


@dataclass(frozen=True)
class _Param:
    name: str
    kind: str  # 'gm', 'const', 'scalar', 'auto'
    annotation: Any
    default: Any


def _classify(annotation) -> str:
    if api.is_constexpr_annotation(annotation):
        return "const"
    if api.is_global_address_annotation(annotation) or annotation in (api.GlobalTensor,):
        return "gm"
    if annotation in (int, float, bool, "int", "float", "bool"):
        return "scalar"
    from ..compiler.sema.structs import struct_kind
    if struct_kind(annotation) is not None:
        return "struct"
    return "auto"


def _is_struct(value) -> bool:
    from ..compiler.sema.structs import struct_kind
    return struct_kind(type(value)) is not None


def _is_array(value) -> bool:
    return isinstance(value, np.ndarray) or type(value).__module__.startswith("torch")


class Kernel:
    """A kernel function (or a device function it calls). Launch with ``k[block_dim](...)``."""

    def __init__(self, fn, **options):
        if not inspect.isfunction(fn):
            raise TypeError("@asc.kernel decorates a plain Python function")
        self.fn = fn
        self.options = options
        functools.update_wrapper(self, fn)
        self._read_code()
        if options:
            from ..compiler.kernel_kind import check_options
            check_options(options, self.def_loc)

    def _read_code(self) -> None:
        """(Re)read everything derived from the function's code object: its parameters, and
        no source, AST or compiled code yet. Called again when the code object is replaced
        in place (IPython's autoreload assigns ``fn.__code__``)."""
        fn = self.fn
        self._code = fn.__code__
        self._source = None
        self._ast = None
        self._compiled = CompiledTable()   # (specs, codegen variant) -> (compiled, guard)
        self._fast_specs: dict = {}     # _bind_fast: (parameter index, dtype or type) -> spec
        self._launchers: dict = {}      # block_dim -> its Launcher (they keep launch plans)
        self._plan_params = None        # launcher.plan_key: (name, kind, int ok, float ok) each
        sig = inspect.signature(fn)
        for p in sig.parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise TypeError(f"kernel '{fn.__name__}': *args/**kwargs are not supported")
        self.params = tuple(
            _Param(p.name, _classify(p.annotation), p.annotation,
                   p.default if p.default is not inspect.Parameter.empty else _MISSING)
            for p in sig.parameters.values())

    def _sync_code(self) -> None:
        if self.fn.__code__ is not self._code:
            self._read_code()

    # ------------------------------------------------------------------ source and AST
    def source(self):
        self._sync_code()
        if self._source is None:
            from ..compiler.frontend.source import capture_source
            self._source = capture_source(self.fn)
        return self._source

    def parsed(self):
        self._sync_code()
        if self._ast is None:
            from ..compiler.frontend.parse import parse_function
            self._ast = parse_function(self.source())
        return self._ast

    def def_loc(self) -> SourceLoc:
        """Where the function is defined (in the notebook cell it was found in, for a function
        a cell magic compiled under a name of its own, such as ``%%time``'s)."""
        code = self.fn.__code__
        if _compiled_by_cell_magic(code):
            try:
                src = self.source()
                return SourceLoc(src.file, src.first_line, 1)
            except Exception:  # noqa: BLE001 - the code's own name then
                pass
        return SourceLoc(code.co_filename, code.co_firstlineno, 1)

    def fingerprint(self) -> str:
        """``code_fingerprint`` of the function's code; for code a cell magic compiled under a
        name shared by all cells (``'<timed exec>'``), also of the cell its source was found in,
        so a compiled entry names the right cell in its errors."""
        code = self.fn.__code__
        fp = code_fingerprint(code)
        if _compiled_by_cell_magic(code):
            try:
                cell = self.source().file
            except Exception:  # noqa: BLE001 - compiling it reports why
                return fp
            fp = hashlib.sha256(f"{fp}\0{cell}".encode()).hexdigest()
        return fp

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params if p.default is not _MISSING}

    def namespace(self) -> collections.ChainMap:
        """Names the kernel body can read: its closure cells, then its module globals."""
        closure = {}
        if self.fn.__closure__:
            for name, cell in zip(self.fn.__code__.co_freevars, self.fn.__closure__):
                try:
                    closure[name] = cell.cell_contents
                except ValueError:
                    pass
        return collections.ChainMap(closure, self.fn.__globals__)

    def referenced(self) -> list[tuple[str, Any]]:
        """(name, object) for each global or closure name the body mentions, plus the
        attributes it names of referenced modules (``helpers.copy_in``, ``cfg.TILE``) when
        they are kernels or constants."""
        ns = self.namespace()
        code = self.fn.__code__
        found = []
        for name in code.co_names + code.co_freevars:
            obj = ns.get(name, _MISSING)
            if obj is _MISSING:
                continue
            found.append((name, obj))
            if inspect.ismodule(obj):
                for _, path, sub in _module_attributes(obj, code.co_names, name):
                    if isinstance(sub, (Kernel,) + _CONSTANT_TYPES + (tuple,)):
                        found.append((path, sub))
        return found

    def dependency_guard(self) -> tuple:
        """What a compiled entry of this kernel depends on besides constants, as identities
        to re-check on every launch: each kernel function reached (itself and its helpers,
        transitively) with its code object, and each name (global, closure cell or module
        attribute) through which the kernels reach a helper or a module. A helper redefined in
        another notebook cell, a reloaded module, or a code object replaced in place by
        autoreload breaks an identity, so the next launch recompiles."""
        kernels, slots, seen = [], [], set()

        def walk(k: "Kernel") -> None:
            seen.add(k)
            kernels.append((k, k.fn.__code__))
            for container, key, obj in k._reference_slots():
                if isinstance(obj, Kernel) or inspect.ismodule(obj):
                    slots.append((container, key, obj))
                if isinstance(obj, Kernel) and obj not in seen:
                    walk(obj)

        walk(self)
        return tuple(kernels), tuple(slots)

    def _reference_slots(self):
        """(container, key, object) for each global, closure cell and referenced module's
        attribute the body names: ``container`` is a dict (key: the name) or a cell (key:
        None)."""
        code = self.fn.__code__
        cells = dict(zip(code.co_freevars, self.fn.__closure__ or ()))
        globals_ = self.fn.__globals__
        for name in code.co_names + code.co_freevars:
            if name in cells:
                try:
                    obj = cells[name].cell_contents
                except ValueError:
                    continue
                yield cells[name], None, obj
            elif name in globals_:
                obj = globals_[name]
                yield globals_, name, obj
            else:
                continue
            if inspect.ismodule(obj):
                for attrs, path, sub in _module_attributes(obj, code.co_names, name):
                    yield attrs, path.rsplit(".", 1)[1], sub

    def dependencies(self, seen=None) -> tuple[list, list]:
        """(qualname, source hash) of this kernel and its callees, and constants they name."""
        seen = seen if seen is not None else set()
        seen.add(self)
        sources = [(self.fn.__qualname__, self.fingerprint())]
        consts = []
        for name, obj in self.referenced():
            if isinstance(obj, Kernel):
                if obj not in seen:
                    s, c = obj.dependencies(seen)
                    sources += s
                    consts += c
            elif isinstance(obj, _CONSTANT_TYPES + (tuple,)):
                consts.append((f"{self.fn.__qualname__}:{name}", repr(obj)))
        return sources, consts

    # ------------------------------------------------------------------ launching
    @user_boundary
    def __getitem__(self, grid) -> "Launcher":
        if type(grid) is int:
            launcher = self._launchers.get(grid)
            if launcher is not None:
                return launcher
        if isinstance(grid, tuple):
            if not 1 <= len(grid) <= 3:
                raise BlockDimError(f"launch as {self.__name__}[block_dim] or "
                                        f"{self.__name__}[block_dim, stream]")
            block_dim = grid[0]
        else:
            block_dim = grid
        if isinstance(block_dim, bool) or not isinstance(block_dim, (int, np.integer)):
            raise BlockDimError(f"block_dim must be an int, got {block_dim!r}")
        if not 1 <= int(block_dim) <= 65535:
            raise BlockDimError(f"block_dim must be in 1..65535, got {block_dim}")
        launcher = self._launchers.get(int(block_dim))
        if launcher is None:
            if len(self._launchers) > 256:
                self._launchers.clear()
            launcher = self._launchers[int(block_dim)] = Launcher(self, int(block_dim))
        return launcher

    @user_boundary
    def __call__(self, *args, **kwargs):
        raise BlockDimError(f"launch a kernel with {self.__name__}[block_dim](...); device "
                                f"functions can only be called from inside kernels")

    def __repr__(self) -> str:
        return f"<asc.kernel {self.fn.__module__}.{self.fn.__qualname__}>"

    def bind(self, args, kwargs):
        """Specialise: (ArgSpec per parameter, GM arguments, scalar values)."""
        if not kwargs and len(args) == len(self.params):
            bound = self._bind_fast(args)
            if bound is not None:
                return bound
        ArgSpec = launch_names().ArgSpec
        if len(args) > len(self.params):
            raise LaunchArgumentError(f"{self.__name__} takes {len(self.params)} arguments but "
                                    f"{len(args)} were given")
        values = dict(zip((p.name for p in self.params), args))
        for k, v in kwargs.items():
            if k not in {p.name for p in self.params}:
                raise LaunchArgumentError(f"{self.__name__} got an unexpected argument '{k}'")
            if k in values:
                raise LaunchArgumentError(f"{self.__name__} got multiple values for '{k}'")
            values[k] = v
        specs, gm, scalars = [], [], []
        for p in self.params:
            if p.name not in values:
                if p.default is _MISSING:
                    raise LaunchArgumentError(f"{self.__name__} is missing argument '{p.name}'")
                values[p.name] = p.default
            v = values[p.name]
            if p.kind == "const":
                if not isinstance(v, _CONSTANT_TYPES):
                    raise LaunchArgumentError(f"ConstExpr argument '{p.name}' must be a number, "
                                            f"bool, string, dtype or enum, got "
                                            f"{type(v).__name__}")
                specs.append(ArgSpec.of(p.name, "const", value=v))
            elif p.kind == "struct" or (p.kind == "auto" and _is_struct(v)):
                from ..compiler.sema.structs import bind_struct
                spec, fields = bind_struct(self.__name__, p.name, p.annotation, v)
                specs.append(spec)
                scalars.extend(fields)
            elif p.kind == "gm" or (p.kind == "auto" and _is_array(v)):
                arg = _gm_arg(self.__name__, p.name, v)
                specs.append(ArgSpec.of(p.name, "gm", dtype=dtype_of_array(v)))
                gm.append(arg)
            else:
                dtype = _scalar_dtype(self.__name__, p, v)
                specs.append(ArgSpec.of(p.name, "scalar", dtype=dtype))
                scalars.append((v, dtype))
        return tuple(specs), gm, scalars

    def _bind_fast(self, args):
        """``bind`` for the common call: every argument given by position, GM arguments as
        writable C-contiguous numpy arrays or contiguous CPU torch tensors that do not require
        grad, scalars as Python ``int`` (32-bit), ``float`` or ``bool``, constants as ``int``,
        ``float``, ``bool`` or ``str`` (what ``launcher.plan_key`` accepts; its key gives the
        specs). None for anything else: the general path binds it (and raises its errors)."""
        names = launch_names()
        bound = plan_key(self, args, names)
        if bound is None:
            return None
        key, gm, scalars = bound
        specs = []
        cache = self._fast_specs
        for i, (p, k, v) in enumerate(zip(self.params, key, args)):
            spec = cache.get((i, k))
            if spec is None:
                if len(cache) > 4096:
                    cache.clear()
                if type(k) is tuple:                       # a constant: (type, value)
                    spec = names.ArgSpec.of(p.name, "const", value=v)
                elif k is int or k is float or k is bool:  # a scalar: its type
                    spec = names.ArgSpec.of(p.name, "scalar", dtype={
                        int: names.int32, float: names.float32, bool: names.bool_}[k])
                else:                                      # an array: its dtype
                    dtype = dtype_of_array(v)
                    if dtype is None:
                        return None
                    spec = names.ArgSpec.of(p.name, "gm", dtype=dtype)
                cache[(i, k)] = spec
            specs.append(spec)
        return tuple(specs), gm, scalars

    def changed_global(self, read: dict, guard: tuple) -> Optional[str]:
        """The first global a compiled entry read (``read``) whose value has changed since,
        or None; ``guard``: the entry's dependency guard, which holds (``_changed_globals``)."""
        return _changed_globals(read, self, guard)

    def compiled_for(self, specs, platform):
        """The native code for a specialisation: memory cache, then disk, then compile."""
        jit = launch_names().jit
        self._sync_code()
        mem_key = (specs, jit.codegen_variant())
        found = self._compiled.get(mem_key)
        if found is not None:
            entry, guard = found
            if guard_holds(guard):
                changed = _changed_globals(entry.globals_read, self, guard)
                if not changed:
                    return entry, "memory"
                warn_at_user(UserWarning(f"{self.__name__}: global {changed} changed since "
                                         f"the kernel was compiled; recompiling"),
                             self.__dict__.setdefault("_warnings_shown", {}))
            del self._compiled[mem_key]
        guard = self.dependency_guard()
        sources, consts = self.dependencies()
        options_key = launch_names().options_key
        key = jit.CacheKey(f"{self.fn.__module__}.{self.fn.__qualname__}"
                           f"{options_key(self.options)}", tuple(sources),
                           specs, tuple(sorted(consts)), mem_key[1], jit.compiler_version(),
                           jit.host_target())
        origin = "disk"
        compiled = jit.load_cached(key, self.__name__)
        if compiled is not None and (_changed_globals(compiled.globals_read, self) or
                                     not jit.sources_agree(compiled.source_sha256, self)):
            compiled = None
        if compiled is None:
            compiled = jit.compile_kernel(self, specs, key)
            origin = "compiled"
        self._compiled[mem_key] = (compiled, guard)
        return compiled, origin


def _compiled_by_cell_magic(code) -> bool:
    """Code compiled under a pseudo file name that no file and no linecache entry holds (a cell
    magic's ``'<timed exec>'``): its source is looked for in the notebook's cells."""
    name = code.co_filename
    if not name.startswith("<"):
        return False      # a file: no need to load the notebook support (the front end)
    from ..compiler.frontend.notebook import is_unregistered_name
    return is_unregistered_name(name)


def _changed_globals(read: dict, kernel: Kernel, guard: Optional[tuple] = None
                     ) -> Optional[str]:
    """The first global a compiled kernel read whose value has changed, or None. ``guard``:
    the entry's dependency guard, which was just found to hold: the namespace each global is
    read from is then the one found the last time under that guard (namespaces read live)."""
    cache = {}
    if guard is not None:
        by_guard = kernel.__dict__.setdefault("_namespaces", {})
        found = by_guard.get(id(guard))
        if found is None or found[0] is not guard:
            if len(by_guard) > 64:
                by_guard.clear()
            found = by_guard[id(guard)] = (guard, cache)
        cache = found[1]
    for path, old in read.items():
        owner, name = path
        ns = cache.get(owner, _MISSING)
        if ns is _MISSING:
            ns = cache[owner] = _namespace_for(owner, kernel)
        if ns is None:
            continue
        cur = ns.get(name)
        try:
            # NaN never equals itself: a NaN that is still NaN has not changed
            same = type(cur) is type(old) and (cur == old or (cur != cur and old != old))
        except Exception:  # noqa: BLE001
            same = False
        if not same:
            return name
    return None


class _ModuleNs:
    """A module's attributes, read live."""

    def __init__(self, obj):
        self.obj = obj

    def get(self, name):
        return getattr(self.obj, name, _MISSING)


class _LiveNs:
    """What ``Kernel.namespace()`` holds (closure cells, then module globals), read live."""

    def __init__(self, fn):
        self.cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
        self.globals = fn.__globals__

    def get(self, name):
        cell = self.cells.get(name)
        if cell is not None:
            try:
                return cell.cell_contents
            except ValueError:
                pass
        return self.globals.get(name, _MISSING)


def _namespace_for(owner: str, kernel: Kernel, seen=None):
    seen = seen if seen is not None else set()
    if kernel in seen:
        return None
    seen.add(kernel)
    fn = kernel.fn
    if owner == f"{fn.__module__}.{fn.__qualname__}":
        return _LiveNs(fn)
    for name, obj in kernel.referenced():
        if isinstance(obj, Kernel):
            found = _namespace_for(owner, obj, seen)
            if found is not None:
                return found
        elif owner == getattr(obj, "__name__", None) and inspect.ismodule(obj):
            return _ModuleNs(obj)
    return None


def _gm_arg(kernel: str, name: str, v):
    names = launch_names()
    GmArg, read_only_reason = names.runtime.GmArg, names.gm_access.read_only_reason
    dtype = dtype_of_array(v)
    if isinstance(v, np.ndarray):
        if dtype is None:
            raise UnsupportedArrayError(f"{kernel}: argument '{name}' has unsupported dtype {v.dtype}")
        if not v.flags.c_contiguous:
            raise NonContiguousArrayError(f"{kernel}: argument '{name}' is not contiguous; pass "
                                    f"np.ascontiguousarray({name})")
        address = v.ctypes.data
        _check_alignment(kernel, name, address, v.itemsize)
        return GmArg(name, address, v.nbytes, v, read_only_reason(v))
    if type(v).__module__.startswith("torch"):
        if dtype is None:
            raise UnsupportedArrayError(f"{kernel}: argument '{name}' has unsupported dtype {v.dtype}")
        if v.device.type != "cpu":
            raise DeviceError(f"{kernel}: argument '{name}' is on {v.device}; the "
                                    f"simulator runs on CPU tensors")
        if not v.is_contiguous():
            raise NonContiguousArrayError(f"{kernel}: argument '{name}' is not contiguous; pass "
                                    f"{name}.contiguous()")
        if v.is_neg():      # (a lazy negation: its memory holds the values' negatives)
            raise UnsupportedArrayError(
                f"{kernel}: argument '{name}' is a lazily negated view (its negative bit is "
                f"set, as on the imaginary part of a conjugate): its memory holds the "
                f"negatives of its values, which the kernel would read; pass "
                f"{name}.resolve_neg()")
        _check_alignment(kernel, name, v.data_ptr(), v.element_size())
        return GmArg(name, v.data_ptr(), v.numel() * v.element_size(), v,
                     requires_grad=names.gm_access.torch_requires_grad(v))
    raise UnsupportedArrayError(f"{kernel}: argument '{name}' must be a numpy array or torch "
                            f"tensor, got {type(v).__name__}")


def _check_alignment(kernel: str, name: str, address: int, itemsize: int) -> None:
    """GM addresses must be multiples of the element size, as the MTE requires."""
    if itemsize > 1 and address % itemsize:
        raise launch_names().GMAlignmentError(f"{kernel}: argument '{name}' starts at address {address:#x}, "
                               f"not a multiple of its element size {itemsize}",
                               hint=f"pass an aligned copy, e.g. np.ascontiguousarray or "
                                    f"{name}.copy()")


def _scalar_dtype(kernel: str, p: _Param, v) -> DataType:
    names = launch_names()
    bool_, float32, int32, int64 = names.bool_, names.float32, names.int32, names.int64
    if _is_array(v):
        raise LaunchArgumentError(f"{kernel}: argument '{p.name}' is declared as a scalar "
                                f"but an array was passed")
    if isinstance(v, (bool, np.bool_)):
        return bool_
    if isinstance(v, (int, np.integer)):
        if p.annotation in (float, "float"):
            try:
                float(v)
            except OverflowError:
                raise LaunchArgumentError(f"{kernel}: argument '{p.name}' is an integer of "
                                          f"{len(str(abs(int(v))))} digits, too large for a "
                                          f"float") from None
            return float32
        v = int(v)
        if -(2 ** 31) <= v < 2 ** 31:
            return int32
        if -(2 ** 63) <= v < 2 ** 63:
            return int64
        raise LaunchArgumentError(f"{kernel}: argument '{p.name}' = {_short(v)} does not fit "
                                  f"in 64 bits")
    if isinstance(v, (float, np.floating)):
        if p.annotation in (int, "int"):
            raise LaunchArgumentError(f"{kernel}: argument '{p.name}' is declared int but "
                                    f"{v!r} was passed")
        return float32
    raise LaunchArgumentError(f"{kernel}: argument '{p.name}' must be an int, float or bool, got "
                            f"{type(v).__name__}")


def _short(v: int) -> str:
    text = str(v)
    return text if len(text) <= 24 else f"{text[:12]}…({len(text)} digits)"


def code_fingerprint(code) -> str:
    """A stable hash of a function's compiled code: bytecode, constants, names and line/column
    table, so any edit of the kernel (including moving it to other lines) changes it, without
    reading the source file."""
    h = hashlib.sha256()

    def feed(c):
        h.update(repr((c.co_filename, c.co_name, c.co_firstlineno, c.co_names, c.co_varnames,
                       c.co_freevars, c.co_argcount, c.co_kwonlyargcount)).encode())
        h.update(c.co_code)
        h.update(getattr(c, "co_linetable", b"") or b"")
        for k in c.co_consts:
            if hasattr(k, "co_code"):
                feed(k)
            else:
                h.update(repr((type(k).__name__, k)).encode())

    feed(code)
    return h.hexdigest()


class _Missing:
    def __repr__(self):
        return "<missing>"


_MISSING = _Missing()


def kernel(fn=None, **options):
    """Decorator: make ``fn`` a kernel (or device function). ``@asc.kernel`` or
    ``@asc.kernel(kernel_type=...)``; pyasc's options are accepted."""
    if fn is None:
        return lambda f: Kernel(f, **options)
    return Kernel(fn, **options)


jit = kernel


def _module_attributes(module, names, path: str, seen=None):
    """(vars dict, dotted path, object) for each attribute a body names of a referenced module,
    following module attributes down (``asc.adv.tanh``, ``pkg.sub.helper``): the names are the
    code's ``co_names``, so only chains the body can spell are walked, each module once."""
    seen = set() if seen is None else seen
    seen.add(id(module))
    attrs = vars(module)
    for attr in names:
        if attr not in attrs:
            # a name the module loads on first use (a module __getattr__, as asc.adv's library
            # functions): load it, or the cache key would miss the library's source
            # a name the module loads on first use (a module __getattr__ serving a name of its
            # __all__, as asc.adv's library functions), or one it forwards to the module it
            # stands for (``_target``: the pyasc shim's ``asc``): without it the cache key
            # would miss the library's source
            target = attrs.get("_target")
            if inspect.ismodule(target) and id(target) not in seen and attr in vars(target):
                yield from _module_attributes(target, names, path, seen)
                continue
            if "__getattr__" not in attrs or attr not in attrs.get("__all__", ()):
                continue
            getattr(module, attr)
            if attr not in attrs:
                continue
        sub = attrs[attr]
        yield attrs, f"{path}.{attr}", sub
        if inspect.ismodule(sub) and id(sub) not in seen:
            yield from _module_attributes(sub, names, f"{path}.{attr}", seen)
