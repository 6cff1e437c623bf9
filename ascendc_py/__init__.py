"""ascendc_py: Ascend C-style kernels in Python, compiled to native code and run on a simulated
Ascend AI Core.

    import ascendc_py as asc

    @asc.kernel
    def add(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, n: int): ...

    report = add[8](x, y, z, n)

Names follow pyasc (hicann/pyasc) so kernels move between the two.
"""
from __future__ import annotations

from .compiler.errors import (BufferCapacityError, GMOutOfBoundsError, KernelCompileError,
                              KernelError, KernelLaunchError, KernelNameError,
                              KernelRuntimeError, KernelSyntaxError, KernelTypeError,
                              KernelValueError, LocalMemoryError, LoopLimitError, QueueError,
                              SourceLoc, SyncError)
from .dsl.api import (BUILTINS as _BUILTINS, ConstExpr, GlobalAddress, GlobalTensor, LocalTensor,
                      LocalTensorAuto,
                      TBuf, TPipe, TQue, ceildiv)
from .dsl.kernel import Kernel, kernel, jit
from .dsl.kernel_types import KernelType
from .dsl.struct import Field, KnownTypes, Struct, StructField  # pyasc core.struct / dtype
from .dsl.types import (CMPMODE, SELMODE, CmpMode, DataType, HardEvent, MaskMode, PipeID,
                        QuePosition,
                        RoundMode, SelMode, TPosition, bfloat16, bool_, float16, float32,
                        float64, float_, half, int8, int16, int32, int64, uint8, uint16, uint32,
                        uint64, double, int_, void)
from .simulator.config import current_platform, get_platform, set_platform
from . import adv  # noqa: E402  (asc.adv: Matmul, TCubeTiling, MatmulType)
from .adv import DEFAULT_C0_SIZE, CubeFormat, property  # noqa: A004
from .adv import (BatchMode, BatchOutMode, IterateMode, IterateOrder, LayoutMode,  # noqa: E402
                  MatmulConfigMode, ScheduleType)  # pyasc's asc.<enum> names (issue 16)
from .simulator.sanitizer import set_sanitizer

globals().update(_BUILTINS)


def _export_error_classes():
    from .compiler import errors as _errors
    for _name, _obj in vars(_errors).items():
        if isinstance(_obj, type) and issubclass(_obj, (_errors.KernelError,
                                                         _errors.KernelWarning)):
            globals()[_name] = _obj
    globals()["CacheDirectoryWarning"] = _errors.CacheDirectoryWarning


_export_error_classes()

from .compiler.errors import install_excepthook as _install_excepthook  # noqa: E402

_install_excepthook()

from .dsl.module_hint import SubmoduleHint as _SubmoduleHint  # noqa: E402

_SubmoduleHint.install()     # import ascendc_py.tesing -> did you mean ascendc_py.testing?

__version__ = "0.1.0"


_TUNING = {"autotune": "autotuner", "Config": "autotuner", "AUTO": "autotuner",
           "AutotuneError": "autotuner", "sweep": "sweeper"}


def __getattr__(name):
    # heavy or optional submodules load on first use
    if name == "testing":
        import importlib
        return importlib.import_module(f"{__name__}.testing")
    if name == "profile": from .torch_bridge.profile import profile; return profile  # noqa
    if name == "cpp": import importlib; return importlib.import_module(f"{__name__}.cpp")  # noqa: E702 (C++ kernels)
    if name in _TUNING:      # autotuning and sweeps (autotuner.py, sweeper.py), loaded on use
        import importlib
        return getattr(importlib.import_module(f"{__name__}.{_TUNING[name]}"), name)
    import os
    here = os.path.dirname(__file__)
    if os.path.isfile(os.path.join(here, name + ".py")) or os.path.isdir(os.path.join(here, name)):
        # a submodule not imported yet (``from ascendc_py import x`` asks here first): no hint,
        # whose suggestions import the compiler's front end (a cached launch ran 6.6x the
        # instructions: tests/jit/test_cached_first_launch.py)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from .dsl.suggest import module_attribute_error
    raise module_attribute_error(__name__, name, [*globals(), "testing", "profile", "cpp",
                                                  *_TUNING])
