"""Launching a kernel: ``kernel[block_dim]`` is a ``Launcher``; calling it binds the arguments,
finds the compiled code and runs every block on the simulator (``simulator/runtime.py``).

A launch whose arguments take the plan's binding (``plan_key``: positional writable numpy arrays
or CPU torch tensors, Python scalars and constants) and that asks for no mode keeps a
``_LaunchPlan`` of its specialisation and block count: the compiled entry with its dependency
guard and the native loop's plan of the run (``block_runner.NativePlan``). Later launches
re-check the plan (``_LaunchPlan.holds``) and reuse it; anything else takes the full path
(``Kernel.bind``, ``Kernel.compiled_for``), which makes the plan.
"""
from __future__ import annotations

import functools
import os
import time
from typing import TYPE_CHECKING, Optional

import numpy as np

from .. import envvars
from ..compiler.errors import user_boundary

if TYPE_CHECKING:
    from .kernel import Kernel

_ABSENT = object()


@functools.lru_cache(maxsize=None)
def launch_names():
    """The launch path's names from the simulator and compiler, imported on first use (not at
    package import: a cached launch never loads the compiler's front end) and then looked up
    without an import statement per launch. Modules, not their functions, where tests and
    tools patch a function (``runtime.run_blocks``)."""
    import ctypes
    from types import SimpleNamespace

    from .. import profiler
    from ..compiler import errors, jit, spec
    from ..simulator import abi, config, fast_launch, gm_access, report, runtime, sanitizer
    from . import kernel_types, types
    return SimpleNamespace(
        modes=_EnvModes(abi),
        profiler=profiler, jit=jit, GMAlignmentError=errors.GMAlignmentError,
        ArgSpec=spec.ArgSpec, config=config, gm_access=gm_access, runtime=runtime,
        sanitizer=sanitizer, Report=report.Report, options_key=kernel_types.options_key,
        FastLaunch=fast_launch.FastLaunch,
        new_gm_arg=functools.partial(tuple.__new__, runtime.GmArg),   # GmArg from a tuple
        addressof=ctypes.addressof, buffer_of=ctypes.c_char.from_buffer,
        bool_=types.bool_, float32=types.float32, int32=types.int32, int64=types.int64)



class _EnvModes:
    """The environment variables a planned launch consults (trace, lenient, sanitize, timing,
    loop budget, time limit), read in one call per launch: their raw values in one pass over
    the mapping ``os.environ`` reads (``envvars``), decoded again only when one changed. A
    change made a moment ago is seen by the next launch, as with ``envvars.get``."""

    NAMES = ("ASCENDC_PY_TRACE", "ASCENDC_PY_LENIENT", "ASCENDC_PY_SANITIZE",
             "ASCENDC_PY_TIMING")

    def __init__(self, abi):
        self.abi = abi
        self.names = self.NAMES + (abi.LOOP_BUDGET_ENV, abi.LAUNCH_TIMEOUT_ENV)
        self.keys = tuple(os.fsencode(n) for n in self.names) if envvars._FAST else None
        self.raw = _ABSENT
        self.value = None

    def read(self) -> tuple:
        """(plain: none of trace, lenient and sanitize is set; timing as the variable says;
        the loop budget; the launch time limit in seconds). Raises what ``abi.loop_budget``
        and ``abi.launch_timeout`` raise for a value they refuse."""
        keys = self.keys
        raw = tuple(map(envvars._DATA.get, keys)) if keys is not None else \
            tuple(envvars.get(n, None) for n in self.names)
        if raw != self.raw:
            self.value = self._decode()
            self.raw = raw
        return self.value

    def _decode(self) -> tuple:
        abi, get = self.abi, envvars.get
        plain = get("ASCENDC_PY_TRACE") in ("", "0") and \
            get("ASCENDC_PY_LENIENT") in ("", "0") and get("ASCENDC_PY_SANITIZE") in ("", "0")
        timing = get("ASCENDC_PY_TIMING", "1") not in ("0", "off", "false")   # (jit.timing_enabled)
        return plain, timing, abi.loop_budget(), abi.launch_timeout()


def plan_key(kernel, args, names):
    """For a launch plan: (key, GM arguments, scalar values) of a call ``Kernel._bind_fast``
    would bind, where the key (one element per argument: a GM argument's dtype, a
    scalar's type, a constant's type and value) determines the specs; None for any other
    call (the full path binds it)."""
    params = kernel._plan_params
    if params is None:
        params = kernel._plan_params = tuple(
            (p.name, p.kind, p.annotation not in (float, "float"),
             p.annotation not in (int, "int")) for p in kernel.params)
    if len(args) != len(params):
        return None
    key, gm, scalars = [], [], []
    gm_arg, addressof, buffer_of = names.new_gm_arg, names.addressof, names.buffer_of
    for (name, kind, int_ok, float_ok), v in zip(params, args):
        t = type(v)
        if t is np.ndarray:
            if kind != "gm" and kind != "auto":
                return None
            try:    # (runtime.address_of, inline; ctypes refuses a read-only, not C-contiguous
                # or empty array: the full path then binds it, or says why it cannot)
                address = addressof(buffer_of(v))
            except (TypeError, ValueError, BufferError):
                return None
            if address % v.itemsize:
                return None
            key.append(v.dtype)
            gm.append(gm_arg((name, address, v.nbytes, v, "", False)))
        elif t.__name__ == "Tensor" and t.__module__ == "torch":
            if kind != "gm" and kind != "auto" or not v.is_cpu or \
                    not v.is_contiguous() or v.is_neg():
                return None
            address, size, nbytes = v.data_ptr(), v.itemsize, v.nbytes
            if not nbytes or address % size:
                return None
            key.append(v.dtype)
            # (gm_access.torch_requires_grad: a tensor autograd tracks now, which the launch
            # may read but not write; runtime.run_blocks leaves a launch that writes one to
            # gm_access.before_launch, which refuses it as the full path does)
            gm.append(gm_arg((name, address, nbytes, v, "", v.requires_grad and
                              names.gm_access.torch_requires_grad(v))))
        elif kind == "const":
            if t is not int and t is not float and t is not bool and t is not str:
                return None
            key.append((t, v))
        elif kind != "scalar" and kind != "auto":
            return None
        elif t is int:
            if not int_ok or not -2147483648 <= v <= 2147483647:
                return None
            key.append(int)
            scalars.append((v, names.int32))
        elif t is float:
            if not float_ok:
                return None
            key.append(float)
            scalars.append((v, names.float32))
        elif t is bool:
            key.append(bool)
            scalars.append((v, names.bool_))
        else:
            return None
    return tuple(key), gm, scalars


def guard_holds(guard: tuple) -> bool:
    """Every kernel still runs the code it was compiled from, and every name through which it
    reaches a helper or module still holds the same object (``Kernel.dependency_guard``)."""
    kernels, slots = guard
    for kernel, code in kernels:
        if kernel.fn.__code__ is not code:
            return False
    for container, key, obj in slots:
        if key is None:
            try:
                if container.cell_contents is not obj:
                    return False
            except ValueError:
                return False
        elif container.get(key, _ABSENT) is not obj:
            return False
    return True


class Launcher:
    """``kernel[block_dim]``: call it with the kernel's arguments to run it.

    A launch whose arguments take the fast bind (``plan_key``) and that asks for no
    option (no trace, sanitize or lenient mode, the default platform) reuses a ``_LaunchPlan``
    of its specialisation: the compiled entry with its dependency guard and everything of the
    run that does not depend on the argument values. The plan is re-checked on every launch
    (the kernel's code and helpers, the globals it read, the platform, the codegen variant,
    the kernel's table of compiled entries); any change takes the full path, which compiles,
    warns and makes a new plan as a first launch would."""

    def __init__(self, kernel: "Kernel", block_dim: int):
        self.kernel = kernel
        self.block_dim = block_dim
        self._plans: dict = {}     # (plan_key, codegen variant) -> _LaunchPlan
        #: codegen variant -> the FastLaunch of its last planned launch (fast_launch.py)
        self._fast: dict = {}

    @user_boundary
    def __call__(self, *args, platform=None, trace=None, sanitize=None, lenient=False,
                 **kwargs):
        t0 = time.perf_counter()
        names = launch_names()
        if kwargs or platform is not None or trace is not None or sanitize is not None or \
                lenient:
            return self._launch(names, args, kwargs, platform, trace, sanitize, lenient, t0)
        plain, timing, budget, time_limit = names.modes.read()
        sanitizer = names.sanitizer
        # (sanitizer.sanitizer_enabled and jit.timing_enabled, their environment variables
        # read above with the others)
        if not plain or sanitizer._scoped.get() or sanitizer._override:
            return self._launch(names, args, kwargs, platform, trace, sanitize, lenient, t0)
        kernel = self.kernel
        chip = names.config._current                # (config.current_platform())
        jit = names.jit
        override = jit._timing_override
        if override is not None:
            timing = override
        variant = jit.codegen_variant()
        fast = self._fast.get(variant)
        result = None
        if fast is not None and fast.launch_plan.holds(kernel, chip, variant):
            # arguments of the types of the last planned launch: bound in native code
            sanitizer.note_launch(False)
            t1 = time.perf_counter()
            result = fast.run(args, timing, budget, time_limit)
            compiled = fast.launch_plan.compiled
        if result is None:
            bound = plan_key(kernel, args, names)
            if bound is None:
                return self._launch(names, args, kwargs, platform, trace, sanitize, lenient, t0)
            key, gm, scalars = bound
            plan = self._plans.get((key, variant))
            if plan is None or not plan.holds(kernel, chip, variant):
                return self._launch(names, args, kwargs, platform, trace, sanitize, lenient,
                                    t0, plan_key=(key, variant))
            sanitizer.note_launch(False)
            t1 = time.perf_counter()
            compiled = plan.compiled
            try:
                result = names.runtime.run_blocks(
                    compiled, chip, self.block_dim, gm, scalars, timing=timing,
                    plan=plan.native, budget=budget, time_limit=time_limit)
            except Exception as fault:  # what the blocks printed before the fault
                if getattr(fault, "output", ""):
                    print(fault.output, end="")
                raise
            if plan.fast is not False:
                self._fast[variant] = names.FastLaunch.after_usual_launch(
                    plan, kernel._plan_params, args, chip, budget, fast)
            if result.output:
                return self._finish(names, compiled, chip, result, False, "memory", t0, t1)
        report = names.Report.of_launch(self.kernel.__name__, chip, result, compiled,
                                        time.perf_counter() - t1, t1 - t0, "memory", False)
        if names.profiler._observers:
            names.profiler.notify(report)
        return report

    def _launch(self, names, args, kwargs, platform, trace, sanitize, lenient, t0,
                plan_key=None):
        """Every launch the plan does not serve: bind in full, find or compile the code, run;
        ``plan_key``: keep a plan of this specialisation for the next launch."""
        config = names.config
        chip = config.get_platform(platform) if platform is not None else \
            config.current_platform()
        if trace is None:
            trace = envvars.flag("ASCENDC_PY_TRACE")
        if not lenient:
            lenient = envvars.flag("ASCENDC_PY_LENIENT")
        sanitize = names.sanitizer.sanitizer_enabled(sanitize)
        names.sanitizer.note_launch(sanitize)
        specs, gm, scalars = self.kernel.bind(args, kwargs)
        compiled, origin = self.kernel.compiled_for(specs, chip)
        native = None
        if plan_key is not None:
            plan = _LaunchPlan.make(self.kernel, specs, compiled, chip, self.block_dim, gm,
                                    scalars, names)
            if plan is not None:
                if len(self._plans) > 64:
                    self._plans.clear()
                self._plans[plan_key] = plan
                native = plan.native
        return self._run(names, compiled, chip, gm, scalars, bool(trace), bool(lenient),
                         sanitize, native, origin, t0)

    def _run(self, names, compiled, chip, gm, scalars, trace: bool, lenient: bool,
             sanitize: bool, native, origin: str, t0: float):
        """Run the blocks, print what they printed, and return the (pending) report."""
        t1 = time.perf_counter()
        try:
            result = names.runtime.run_blocks(
                compiled, chip, self.block_dim, gm, scalars, trace=trace,
                timing=names.jit.timing_enabled(), lenient=lenient, sanitize=sanitize,
                plan=native)
        except Exception as fault:  # what the blocks printed before the fault
            if getattr(fault, "output", ""):
                print(fault.output, end="")
            raise
        return self._finish(names, compiled, chip, result, sanitize, origin, t0, t1)

    def _finish(self, names, compiled, chip, result, sanitize: bool, origin: str, t0: float,
                t1: float):
        """Print what the blocks printed; the launch's (pending) report, told to the
        profiler's observers."""
        if result.output:  # printf/dump_tensor text, blocks in order
            print(result.output, end="")
        report = names.Report.of_launch(self.kernel.__name__, chip, result, compiled,
                                        time.perf_counter() - t1, t1 - t0, origin,
                                        bool(sanitize))
        names.profiler.notify(report)
        return report


class CompiledTable(dict):
    """A kernel's compiled entries, (specs, codegen variant) -> (compiled, guard), with a
    version that every change bumps (launch plans hold the version they were made at: a
    removed or replaced entry, or a cleared table, retires them)."""

    version = 0

    def _changed(self) -> None:
        self.version += 1

    def __setitem__(self, key, value) -> None:
        self._changed()
        super().__setitem__(key, value)

    def __delitem__(self, key) -> None:
        self._changed()
        super().__delitem__(key)

    def clear(self) -> None:
        self._changed()
        super().clear()

    def pop(self, *args):
        self._changed()
        return super().pop(*args)

    def popitem(self):
        self._changed()
        return super().popitem()

    def setdefault(self, key, default=None):
        self._changed()
        return super().setdefault(key, default)

    def update(self, *args, **kwargs) -> None:
        self._changed()
        super().update(*args, **kwargs)


class _LaunchPlan:
    """What launches of one specialisation on one block count share and need not compute
    again: the compiled entry found for it and its dependency guard, the platform and codegen
    variant it was found under, and the native loop's plan of the run (``block_runner``).
    ``holds`` re-checks on each launch everything that could make the entry stale."""

    __slots__ = ("compiled", "code", "table", "version", "guard", "platform", "variant",
                 "native", "fast")

    @classmethod
    def make(cls, kernel: "Kernel", specs, compiled, chip, block_dim: int, gm, scalars,
             names) -> "Optional[_LaunchPlan]":
        """The plan of a launch that ``compiled_for`` has just served (None when the kernel's
        table does not hold the entry, or is not a CompiledTable (a test put a plain dict
        there): nothing to re-check it against)."""
        table = kernel._compiled
        version = getattr(table, "version", None)
        found = table.get((specs, names.jit.codegen_variant()))
        if version is None or found is None or found[0] is not compiled:
            return None
        plan = cls()
        plan.compiled, plan.guard = found
        plan.code = kernel.fn.__code__
        plan.table, plan.version = table, version
        plan.platform, plan.variant = chip, names.jit.codegen_variant()
        plan.native, plan.fast = None, None
        if getattr(compiled, "kernel_type", "AIV_ONLY") == "AIV_ONLY":
            plan.native = names.runtime._native_loop().plan_for(compiled, chip, block_dim,
                                                                scalars, len(gm))
        return plan

    def holds(self, kernel: "Kernel", chip, variant: str) -> bool:
        """Whether the plan's entry is still the one a full lookup would return now."""
        if kernel.fn.__code__ is not self.code or kernel._compiled is not self.table or \
                self.table.version != self.version or chip is not self.platform or \
                variant != self.variant:
            return False
        if not guard_holds(self.guard):
            return False
        read = self.compiled.globals_read
        return not read or kernel.changed_global(read, self.guard) is None
