"""pyasc's launch path (``asc.jit``, ``asc.runtime.jit``, ``asc.runtime.launcher``) on ours.

pyasc launches ``kernel[core_num](*args)`` in two steps: its JIT function compiles the kernel
for the arguments' types, then ``asc.runtime.launcher.Launcher(options).run(compiled, name,
args)`` runs it. pyasc's unit tests mock ``Launcher.run`` and pass :class:`MockTensor`
placeholders (a dtype, no data), so their kernels are compiled but never run. The same two
steps here:

* :func:`jit` makes a :class:`PyascKernel`: our :class:`ascendc_py.dsl.kernel.Kernel` (the same
  compiler, the same device-function calls) whose launch first compiles for the arguments
  (MockTensor / MockValue included) and then calls ``Launcher.run`` *as looked up at the time
  of the launch* on the ``asc.runtime.launcher`` module, so ``unittest.mock.patch(
  "asc.runtime.launcher.Launcher.run")`` sees the call and nothing runs.
* :meth:`Launcher.run` (not mocked) runs the compiled kernel on the simulator with the
  arguments, exactly as ``ascendc_py``'s ``kernel[n](*args)`` does, and returns its report.
  MockTensor arguments cannot run: a clear error.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..compiler.errors import LaunchArgumentError, user_boundary
from ..dsl import kernel as _kernel
from ..dsl.launcher import launch_names
from ..dsl.types import DataType, as_dtype

__all__ = ["jit", "PyascKernel", "MockTensor", "MockValue", "LaunchOptions", "Launcher",
           "CompiledKernel", "LAUNCHER_MODULE"]

#: The module whose ``Launcher`` class a launch looks up (pyasc's name; tests patch it).
LAUNCHER_MODULE = "asc.runtime.launcher"

#: pyasc's compile options that may also be given at a launch (``kernel[1](x,
#: always_compile=True)``): recompiling gives the same code here, so they change nothing.
_LAUNCH_COMPILE_OPTIONS = ("always_compile",)


class MockTensor:
    """pyasc's ``asc.runtime.jit.MockTensor(dtype)``: a GM argument with a dtype and no data.
    A kernel launched with it is compiled for that dtype; it cannot run (pyasc's unit tests
    mock ``Launcher.run``)."""

    def __init__(self, dtype):
        self.dtype = as_dtype(dtype)

    def __repr__(self) -> str:
        return f"MockTensor({self.dtype!r})"


class MockValue:
    """pyasc's ``asc.runtime.jit.MockValue(dtype)``: a scalar argument with a dtype, no value."""

    def __init__(self, dtype):
        self.dtype = as_dtype(dtype)

    def __repr__(self) -> str:
        return f"MockValue({self.dtype!r})"


def _is_mock(value) -> bool:
    return isinstance(value, (MockTensor, MockValue))


def _placeholder(value):
    """What a mock argument binds as: a one-element array (GM) or a value (scalar) of its
    dtype, so the kernel is specialised for the dtype the mock names (scalars: as a launch
    binds Python values: bool, int32 or int64, float32)."""
    dtype: DataType = value.dtype
    if isinstance(value, MockTensor):
        if dtype.kind == "bfloat":
            import torch
            return torch.zeros(1, dtype=torch.bfloat16)
        return np.zeros(1, dtype=dtype.numpy)
    if dtype.kind == "bool":
        return False
    if dtype.is_float:
        return 0.0
    return 1 << 31 if dtype.bits == 64 else 0     # a value that binds as int64 / int32


@dataclass(frozen=True)
class LaunchOptions:
    """pyasc's launch options: ``kernel[core_num]`` / ``kernel[core_num, stream]``."""

    core_num: int = 0
    stream: Any = None


@dataclass(frozen=True)
class CompiledKernel:
    """What ``Launcher.run`` is given: the kernel, its compiled code for the launch's argument
    types, and the launch's keyword arguments (ours: ``platform``, ``trace``, …)."""

    kernel: "PyascKernel"
    code: Any
    kwargs: dict = field(default_factory=dict)


class Launcher:
    """pyasc's ``asc.runtime.launcher.Launcher``: runs a compiled kernel on the simulator."""

    def __init__(self, options: LaunchOptions):
        self.options = options

    def run(self, kernel: CompiledKernel, function_name: str, user_args: tuple):
        """Run ``kernel`` with ``user_args`` on ``options.core_num`` blocks; the launch's
        report (pyasc returns None; a pyasc program ignores it)."""
        mocks = [a for a in user_args if _is_mock(a)]
        if mocks:
            raise LaunchArgumentError(
                f"{function_name}: {mocks[0]!r} has a dtype but no data, so the kernel can only "
                f"be compiled, not run (pyasc's unit tests mock asc.runtime.launcher.Launcher.run "
                f"for this)")
        launch = _kernel.Launcher(kernel.kernel, self.options.core_num)
        return launch(*user_args, **kernel.kwargs)


class PyascKernel(_kernel.Kernel):
    """A kernel made by pyasc's ``asc.jit``: launches go through ``asc.runtime.launcher``."""

    @user_boundary
    def __getitem__(self, grid) -> "_PyascLaunch":
        checked = super().__getitem__(grid)   # the same block_dim checks and errors
        stream = grid[1] if isinstance(grid, tuple) and len(grid) > 1 else None
        return _PyascLaunch(self, LaunchOptions(checked.block_dim, stream))

    def __repr__(self) -> str:
        return f"<asc.jit {self.fn.__module__}.{self.fn.__qualname__}>"


class _PyascLaunch:
    """``kernel[core_num]``: compile for the arguments, then ``Launcher(options).run``."""

    def __init__(self, kernel: PyascKernel, options: LaunchOptions):
        self.kernel = kernel
        self.options = options

    @user_boundary
    def __call__(self, *args, **kwargs):
        for name in _LAUNCH_COMPILE_OPTIONS:
            kwargs.pop(name, None)
        ours = {k: kwargs.pop(k) for k in list(kwargs) if k in _kernel.RESERVED_LAUNCH_KEYWORDS}
        bind_args = tuple(_placeholder(a) if _is_mock(a) else a for a in args)
        bind_kwargs = {k: _placeholder(v) if _is_mock(v) else v for k, v in kwargs.items()}
        specs, _, _ = self.kernel.bind(bind_args, bind_kwargs)
        names = launch_names()
        platform = ours.get("platform")
        chip = names.config.get_platform(platform) if platform is not None else \
            names.config.current_platform()
        code, _ = self.kernel.compiled_for(specs, chip)
        launcher_cls = _launcher_class()
        all_args = args + tuple(kwargs.values()) if not kwargs else self._positional(args, kwargs)
        return launcher_cls(self.options).run(CompiledKernel(self.kernel, code, ours),
                                              self.kernel.__name__, all_args)

    def _positional(self, args, kwargs) -> tuple:
        """The arguments in parameter order (pyasc binds keywords before it launches)."""
        values = dict(zip((p.name for p in self.kernel.params), args))
        values.update(kwargs)
        out = []
        for p in self.kernel.params:
            if p.name in values:
                out.append(values[p.name])
            elif p.default is not _kernel._MISSING:
                out.append(p.default)
        return tuple(out)


def _launcher_class():
    """``asc.runtime.launcher.Launcher`` as it is now (patched by a test, or ours)."""
    module = sys.modules.get(LAUNCHER_MODULE)
    return getattr(module, "Launcher", Launcher) if module is not None else Launcher


def jit(fn=None, **options):
    """pyasc's ``asc.jit`` / ``asc.runtime.jit.jit``: ``@asc.jit`` or ``@asc.jit(**options)``
    (``kernel_type``, ``matmul_cube_only``, ``insert_sync``, …, as ``ascendc_py.jit``), with
    pyasc's default ``auto_sync=True`` (automatic synchronisation, ``compiler/insert_sync.py``)."""
    options.setdefault("auto_sync", True)
    if fn is None:
        return lambda f: PyascKernel(f, **options)
    return PyascKernel(fn, **options)
