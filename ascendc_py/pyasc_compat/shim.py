"""The fake ``asc`` package: pyasc's module layout, backed by ascendc_py.

pyasc programs say ``import asc``, ``import asc.runtime.config as config`` and
``import asc.lib.runtime as rt``. While :func:`ascendc_py.pyasc_compat.install` is active, a
meta-path finder answers every ``asc`` / ``asc.*`` import with a module built here:

``asc``, ``asc.language`` (and pyasc's ``asc.language.<sub>`` modules)
    Views of ``ascendc_py``: every DSL name (``asc.jit``, ``asc.GlobalAddress``, ``asc.add``,
    ``asc.TPosition`` …) is the very object ``ascendc_py`` exports, so kernels compile exactly as
    if they had said ``import ascendc_py as asc``.
``asc.jit``, ``asc.runtime.jit``, ``asc.runtime.launcher``
    pyasc's launch path (:mod:`ascendc_py.pyasc_compat.launch`): ``jit`` makes a kernel of ours
    whose launch compiles for the arguments, then calls ``asc.runtime.launcher.Launcher.run``,
    which runs it on the simulator (pyasc's unit tests mock it and pass ``MockTensor``
    arguments).
``asc.runtime.config``
    :class:`Backend`, :class:`Platform`, :class:`KernelType` with pyasc's member names and values,
    and :func:`set_platform`. pyasc's ``Model`` backend (CANN's CA-model simulator) means our
    simulator; ``NPU`` raises :class:`NoNPUError`, unless ``ASCENDC_PY_PYASC_NPU_AS_MODEL=1``
    (:data:`NPU_AS_MODEL_ENV`; the pytest plugin's ``--pyasc-npu-as-model``) maps it onto Model.
``asc.lib``, ``asc.lib.runtime``
    :func:`current_stream` (a dummy :class:`Stream`; launches here are synchronous),
    ``synchronize``, ``synchronize_device``, ``create_stream``/``destroy_stream``, the device
    queries, ``use_model``/``use_npu``, ``get_soc_version``/``set_soc_version``.
``asc.lib.host``
    The matmul tiling helpers of :mod:`ascendc_py.host` (``MultiCoreMatmulTiling``,
    ``MatmulApiTiling``, ``get_ascendc_platform``, ``TPosition``, ``CubeFormat``, ``DataType``,
    ``MatrixTraverse``) and the math APIs' ``get_<api>_max_min_tmp_size`` queries of
    :mod:`ascendc_py.host_adv`; other names raise a clear AttributeError.

Anything else under ``asc`` raises ModuleNotFoundError naming what this layer provides.
pyasc's own code is not used or needed: only its public names and values are followed.
"""
from __future__ import annotations

import enum
import importlib
import os
import importlib.abc
import importlib.util
import sys
import types
from typing import Any, Callable, Optional, Union

import ascendc_py as _asc
from ascendc_py.simulator import config as _sim_config

from . import launch as _launch

#: Modules this layer provides (pyasc's ``asc.language.*`` modules too: LANGUAGE_MODULES).
PROVIDED = ("asc", "asc.language", "asc.runtime", "asc.runtime.config", "asc.runtime.jit",
            "asc.runtime.launcher", "asc.lib", "asc.lib.runtime", "asc.lib.host")

NO_NPU_MESSAGE = ("pyasc backend NPU needs an Ascend NPU and its driver: no NPU here; use -r Model "
                  "(ascendc_py runs every kernel on its simulator, which is what pyasc's Model "
                  "backend means)")


#: When "1", pyasc's ``Backend.NPU`` means the simulator too (for pyasc's tests that hard-code
#: NPU); see :mod:`ascendc_py.pyasc_compat.npu` for the torch side (``device="npu"``).
NPU_AS_MODEL_ENV = "ASCENDC_PY_PYASC_NPU_AS_MODEL"


def npu_as_model() -> bool:
    """Whether ``Backend.NPU`` is mapped onto the simulator (:data:`NPU_AS_MODEL_ENV`)."""
    return os.environ.get(NPU_AS_MODEL_ENV) == "1"


class NoNPUError(RuntimeError):
    """pyasc's ``Backend.NPU`` was asked for; this machine only has the simulator."""

    def __init__(self, message: str = NO_NPU_MESSAGE):
        super().__init__(message)


# --------------------------------------------------------------------------- asc.runtime.config
class Backend(enum.Enum):
    """pyasc's execution backends. ``Backend("Model")`` / ``Backend.Model`` work as in pyasc."""
    Model = "Model"
    NPU = "NPU"


class Platform(enum.Enum):
    """pyasc's SoC names (member names and values as pyasc spells them). The simulator models
    Ascend910B1..B4 (see ``ascendc_py.simulator.config.PLATFORMS``); choosing another raises."""
    Ascend910B1 = "Ascend910B1"
    Ascend910B2 = "Ascend910B2"
    Ascend910B2C = "Ascend910B2C"
    Ascend910B3 = "Ascend910B3"
    Ascend910B4 = "Ascend910B4"
    Ascend910B4_1 = "Ascend910B4-1"
    Ascend910_9362 = "Ascend910_9362"
    Ascend910_9372 = "Ascend910_9372"
    Ascend910_9381 = "Ascend910_9381"
    Ascend910_9382 = "Ascend910_9382"
    Ascend910_9391 = "Ascend910_9391"
    Ascend910_9392 = "Ascend910_9392"


from ..dsl.kernel_types import KernelType  # noqa: E402  (pyasc's names and values)


#: pyasc's default SoC for the Model backend when ``set_platform`` gets none.
DEFAULT_MODEL_PLATFORM = Platform.Ascend910B1


def _to_platform(soc_version: Any) -> Platform:
    if isinstance(soc_version, Platform):
        return soc_version
    if isinstance(soc_version, enum.Enum):
        soc_version = soc_version.value
    try:
        return Platform(soc_version)
    except ValueError:
        known = [p.value for p in Platform]
        raise ValueError(f"unknown platform {soc_version!r}; pyasc's platforms: {known}") from None


def _simulated(platform: Platform):
    """The simulator's ChipConfig for a pyasc Platform, or a clear ValueError."""
    try:
        return _sim_config.get_platform(platform.value)
    except ValueError:
        raise ValueError(f"platform {platform.value} is not simulated by ascendc_py; simulated "
                         f"platforms: {', '.join(_sim_config.PLATFORMS)} (pass one with -v)") \
            from None


def set_platform(backend: Union[Backend, str], soc_version: Optional[Union[Platform, str]] = None,
                 device_id: Optional[int] = None, check: bool = True) -> None:
    """pyasc's ``config.set_platform(backend, soc_version=None, device_id=None, check=True)``.

    ``Model`` selects the simulator with ``soc_version`` (pyasc's default: Ascend910B1) as the
    process-wide launch platform, through ``ascendc_py.simulator.config.set_platform``. ``NPU``
    raises :class:`NoNPUError`. ``device_id`` may only be 0 (the one simulated device);
    ``check`` is accepted and ignored (the simulator is always available).
    """
    backend = Backend(backend.value if isinstance(backend, enum.Enum) else backend)
    if backend is Backend.NPU:
        if not npu_as_model():
            raise NoNPUError()
        backend = Backend.Model
    platform = DEFAULT_MODEL_PLATFORM if soc_version is None else _to_platform(soc_version)
    _simulated(platform)
    if device_id is not None:
        _set_device(device_id)
    _sim_config.set_platform(backend, platform)


# --------------------------------------------------------------------------- asc.lib.runtime
class Stream:
    """A stand-in for an ACL stream. Launches on the simulator finish before they return, so a
    stream has nothing to order: ``kernel[core_num, stream](...)`` ignores it."""

    def __init__(self, device_id: int = 0):
        self.device_id = device_id

    def synchronize(self) -> None:
        """Nothing to wait for: every launch is synchronous."""

    def __repr__(self) -> str:
        return f"<asc.lib.runtime.Stream (simulated device {self.device_id}; synchronous)>"


_DEFAULT_STREAM = Stream()


def current_stream(device_id: Optional[int] = None) -> Stream:
    """The default stream (a dummy; see :class:`Stream`)."""
    return _DEFAULT_STREAM


def create_stream(device_id: Optional[int] = None) -> Stream:
    return Stream(device_id or 0)


def destroy_stream(stream: Stream) -> None:
    """Nothing to release."""


def synchronize(stream: Optional[Stream] = None) -> None:
    """Nothing to wait for: every launch is synchronous."""


def synchronize_device(device_id: Optional[int] = None) -> None:
    """Nothing to wait for: every launch is synchronous."""


def use_model() -> None:
    """The simulator is the only backend; nothing to switch."""


def use_npu() -> None:
    """The simulator stands for the NPU only under :data:`NPU_AS_MODEL_ENV`."""
    if not npu_as_model():
        raise NoNPUError()


def is_model() -> bool:
    return True


def is_available() -> bool:
    return True


def is_initialized() -> bool:
    return True


def device_count() -> int:
    return 1


def current_device() -> int:
    return 0


def default_device() -> int:
    return 0


def _set_device(device_id: int) -> None:
    if device_id != 0:
        raise ValueError(f"device {device_id} does not exist: the simulator is device 0")


def set_device(device_id: int) -> None:
    _set_device(device_id)


def reset_device(device_id: Optional[int] = None) -> None:
    """Nothing to reset."""


def current_platform() -> str:
    """The simulated SoC's name, e.g. ``"Ascend910B1"``."""
    return _sim_config.current_platform().name


def get_soc_version() -> Platform:
    return _to_platform(current_platform())


def set_soc_version(soc_version: Union[Platform, str]) -> None:
    platform = _to_platform(soc_version)
    _simulated(platform)
    _sim_config.set_platform(platform)


# --------------------------------------------------------------------------- module builders
class _AliasModule(types.ModuleType):
    """A module whose unknown attributes come from ``target`` (ascendc_py or one of its parts)."""

    def __init__(self, name: str, target: types.ModuleType, doc: str):
        super().__init__(name, doc)
        object.__setattr__(self, "_target", target)
        # copy the names in, so vars(asc) / `from asc import *` see them; the rest (lazily
        # loaded parts such as asc.testing) come through __getattr__
        for key in _public_names(target):
            setattr(self, key, getattr(target, key))

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            value = getattr(self._target, name)
            if isinstance(value, types.ModuleType) and self.__name__.startswith("asc.language") \
                    and f"{self.__name__}.{name}" not in LANGUAGE_MODULES:
                # one of ascendc_py's modules, which pyasc's module does not have: `from
                # asc.language.basic import dsl` is an ImportError, as with pyasc
                raise AttributeError(name)
            return value
        except AttributeError:
            raise AttributeError(f"module '{self.__name__}' has no attribute '{name}' "
                                 f"(ascendc_py does not provide asc.{name}; see "
                                 f"shared/API.md for the names it implements)") from None

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(_public_names(self._target)))


def _public_names(mod: types.ModuleType) -> list:
    return [n for n in dir(mod)
            if not n.startswith("_") and not isinstance(getattr(mod, n, None), types.ModuleType)]


class _StubModule(types.ModuleType):
    """A module with a few real names; other pyasc names raise an AttributeError saying why."""

    def __init__(self, name: str, doc: str, why: str):
        super().__init__(name, doc)
        object.__setattr__(self, "_why", why)

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(f"{self.__name__}.{name} is not provided by ascendc_py: {self._why}")


def _fill(mod: types.ModuleType, names: dict) -> types.ModuleType:
    for k, v in names.items():
        setattr(mod, k, v)
    mod.__all__ = sorted(names)
    return mod


def _chip_property(name: str, memory: Optional[str] = None, value: int = 0):
    """A pyasc core property (``asc.property(asc.TOTAL_L1_SIZE)``): a compile-time constant of
    the simulated 910B family (every simulated platform has the same buffer sizes)."""
    from ascendc_py.adv import Property
    if memory is not None:
        value = _sim_config.get_platform(DEFAULT_MODEL_PLATFORM.value).memories.get(memory).size
    return Property(name, value)


def _pyasc_names() -> dict:
    """pyasc names of ``asc`` / ``asc.language`` that map onto existing ascendc_py objects
    (no new semantics): pyasc's ``asc.range`` is a runtime loop, which ``range`` is in a
    kernel here; its properties are platform constants ``asc.property`` reads."""
    return {"jit": _launch.jit,    # pyasc's launch path: compile, then asc.runtime.launcher
            "range": range,
            "ONE_BLK_SIZE": _chip_property("ONE_BLK_SIZE", value=32),
            "TOTAL_L1_SIZE": _chip_property("TOTAL_L1_SIZE", "L1"),
            "TOTAL_L0C_SIZE": _chip_property("TOTAL_L0C_SIZE", "L0C")}


def _make_asc(name: str) -> types.ModuleType:
    mod = _AliasModule(name, _asc, "pyasc's asc package, backed by ascendc_py")
    for key, value in _pyasc_names().items():
        setattr(mod, key, value)
    mod.__all__ = _public_names(_asc) + sorted(set(_pyasc_names()) - set(_public_names(_asc)))
    return mod


def _make_language(name: str) -> types.ModuleType:
    sub = name.split(".")[2] if name.count(".") >= 2 else None
    target = _asc
    if sub is not None and isinstance(getattr(_asc, sub, None), types.ModuleType):
        target = getattr(_asc, sub)  # e.g. asc.language.adv -> ascendc_py.adv once it exists
    mod = _AliasModule(name, target, f"pyasc's {name}, backed by {target.__name__}")
    mod.__all__ = _public_names(target)
    if target is _asc:
        for key, value in _pyasc_names().items():
            if key != "jit":
                setattr(mod, key, value)
        mod.__all__ += sorted(set(_pyasc_names()) - {"jit"} - set(mod.__all__))
    return mod


def _make_runtime(name: str) -> types.ModuleType:
    return _fill(types.ModuleType(name, "pyasc's asc.runtime (see asc.runtime.config)"), {})


def _make_runtime_jit(name: str) -> types.ModuleType:
    return _fill(types.ModuleType(name, "pyasc's asc.runtime.jit (see pyasc_compat.launch)"),
                 {"jit": _launch.jit, "JITFunction": _launch.PyascKernel,
                  "MockTensor": _launch.MockTensor, "MockValue": _launch.MockValue})


def _make_runtime_launcher(name: str) -> types.ModuleType:
    return _fill(types.ModuleType(name, "pyasc's asc.runtime.launcher: Launcher.run runs a "
                                        "compiled kernel on the simulator"),
                 {"Launcher": _launch.Launcher, "LaunchOptions": _launch.LaunchOptions,
                  "CompiledKernel": _launch.CompiledKernel})


def _make_config(name: str) -> types.ModuleType:
    return _fill(types.ModuleType(name, "pyasc's asc.runtime.config: the simulator is the Model "
                                        "backend"),
                 {"Backend": Backend, "Platform": Platform, "KernelType": KernelType,
                  "set_platform": set_platform})


def _make_lib(name: str) -> types.ModuleType:
    return _fill(types.ModuleType(name, "pyasc's asc.lib"), {})


_RUNTIME_NAMES: dict = {f.__name__: f for f in (
    current_stream, create_stream, destroy_stream, synchronize, synchronize_device, use_model,
    use_npu, is_model, is_available, is_initialized, device_count, current_device,
    default_device, set_device, reset_device, current_platform, get_soc_version,
    set_soc_version)}
_RUNTIME_NAMES["Stream"] = Stream


def _make_lib_runtime(name: str) -> types.ModuleType:
    mod = _StubModule(name, "pyasc's asc.lib.runtime: a synchronous simulator with one device",
                      "kernels launch with kernel[core_num](...) on host tensors, so pyasc's "
                      "device memory, binary registration and ACL calls have no counterpart")
    return _fill(mod, dict(_RUNTIME_NAMES))


def _make_lib_host(name: str) -> types.ModuleType:
    from ascendc_py import host, host_adv
    mod = _StubModule(name, "pyasc's asc.lib.host: the matmul tiling helpers (ascendc_py.host) "
                            "and the math APIs' tmp-size queries (ascendc_py.host_adv)",
                      "ascendc_py.host provides the matmul tiling (MultiCoreMatmulTiling, "
                      "MatmulApiTiling) and the platform queries, ascendc_py.host_adv the "
                      "get_<math api>_max_min_tmp_size queries")
    names = {k: getattr(host, k) for k in host.__all__}
    names.update({k: getattr(host_adv, k) for k in host_adv.__all__})
    return _fill(mod, names)


_BUILDERS: dict = {
    "asc": _make_asc,
    "asc.language": _make_language,
    "asc.runtime": _make_runtime,
    "asc.runtime.config": _make_config,
    "asc.runtime.jit": _make_runtime_jit,
    "asc.runtime.launcher": _make_runtime_launcher,
    "asc.lib": _make_lib,
    "asc.lib.runtime": _make_lib_runtime,
    "asc.lib.host": _make_lib_host,
}

#: Submodules ``import asc`` loads too, as pyasc's ``import asc`` does, so that
#: ``asc.runtime.config`` and ``asc.lib.runtime`` are reachable as attributes.
_EAGER = ("asc.language", "asc.runtime", "asc.runtime.jit", "asc.runtime.launcher",
          "asc.runtime.config", "asc.lib", "asc.lib.runtime")


#: pyasc's modules under ``asc.language`` (its package layout): importing one of them gives
#: the view of ascendc_py; any other ``asc.language.*`` name is a ModuleNotFoundError, so that
#: ``from asc.language.core.struct import Name`` of a name we lack is an ImportError.
LANGUAGE_MODULES = frozenset("asc.language." + m for m in (
    "adv", "adv.activation", "adv.math", "adv.matmul", "adv.normalization", "adv.quantization",
    "adv.sort", "adv.tiling", "adv.types", "adv.utils", "basic", "basic.block_sync",
    "basic.cache", "basic.common", "basic.data_copy", "basic.determine_compute_sync",
    "basic.dump_tensor", "basic.fixpipe", "basic.list_tensor", "basic.mm", "basic.proposal",
    "basic.scalar", "basic.set_atomic", "basic.sys_var", "basic.utils", "basic.vec_binary",
    "basic.vec_binary_scalar", "basic.vec_brcb", "basic.vec_cmpsel", "basic.vec_duplicate",
    "basic.vec_gather", "basic.vec_gather_mask", "basic.vec_reduce", "basic.vec_scatter",
    "basic.vec_ternary_scalar", "basic.vec_transpose", "basic.vec_unary", "basic.vec_vconv",
    "core", "core.aipp_types", "core.array", "core.constexpr", "core.dtype", "core.enums",
    "core.ir_value", "core.memory_allocator", "core.ops", "core.properties", "core.range",
    "core.struct", "core.tensor", "core.types", "core.utils", "fwk", "fwk.tpipe", "fwk.utils"))


def is_asc_name(fullname: str) -> bool:
    return fullname == "asc" or fullname.startswith("asc.")


def builder_for(fullname: str) -> Optional[Callable[[str], types.ModuleType]]:
    if fullname in _BUILDERS:
        return _BUILDERS[fullname]
    if fullname in LANGUAGE_MODULES:
        return _make_language
    return None


class AscFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Meta-path finder and loader for ``asc`` and ``asc.*`` (put first on ``sys.meta_path``, so
    an installed pyasc is shadowed while it is active)."""

    def find_spec(self, fullname, path=None, target=None):
        if not is_asc_name(fullname):
            return None
        if builder_for(fullname) is None:
            raise ModuleNotFoundError(
                f"No module named '{fullname}': ascendc_py's pyasc compatibility layer provides "
                f"{', '.join(PROVIDED)} and pyasc's asc.language.* modules", name=fullname)
        return importlib.util.spec_from_loader(fullname, self, is_package=True)

    def create_module(self, spec):
        return builder_for(spec.name)(spec.name)

    def exec_module(self, module):
        if module.__name__ == "asc":
            # Make the module visible before loading its children (importlib does the same for a
            # package whose __init__ imports submodules).
            sys.modules["asc"] = module
            for sub in _EAGER:
                importlib.import_module(sub)
