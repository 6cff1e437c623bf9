"""Planned launches whose arguments are bound in native code: the launch path of a training
loop, a golden-test sweep or a benchmark, which launches one kernel again and again with
arguments of the same types.

The launcher's planned path (``dsl/launcher.py``) binds each argument in Python
(``plan_key``), and ``block_runner.run`` packs them into the launch's buffer. Right after the
blocks of a launch have streamed a few megabytes through the CPU's caches, that Python runs
from memory, several times slower than warm (measured: 60-75 us a launch of vadd float16 2^20
against 15 us warm; each numpy attribute, ctypes object or struct pack costs 3-7 us cold). A
``FastLaunch``, made once a launch of a specialisation ran on the native loop, keeps
everything that does not depend on the argument values: the launch buffer's bytes with the
job record and the thread records in place, and a spec of the argument types for the
runtime library's binder (``asc_bind_args``, ``compiler/codegen/bind_args.py``). A launch then
copies the bytes, lets the binder check the argument tuple and write the pointers, sizes and
scalars in one call, and runs the blocks as ``block_runner.run`` does (``_run_pool`` or
``_run_alone``, then ``finish``): the same buffer, the same blocks, the same report.

A CPU torch tensor (exactly ``torch.Tensor``) goes through the binder as its numpy view
(``Tensor.numpy()``: the same memory, about 1 us a tensor), and after the blocks ran, whether
they ran to the end or faulted, the tensors the kernel writes get their autograd version
bumped, as the usual path does (``runtime.run_blocks``). A tensor that requires grad (an
activation autograd saved, in a training step) binds through ``detach()`` where the kernel only
reads it; where the kernel may write it, and for a tensor ``numpy()`` refuses (a bfloat16,
negative, conjugate or meta one), the launch takes the usual path, which decides.

Whatever the fast path does not cover goes the usual way, unchanged: a refused argument (other
types, a read-only or strided array or tensor, another dtype or constant, an int out of range,
a tensor subclass), another loop budget, a launch off the main thread or with the host
pool taken, a SIGINT handler that is not the runtime library's, a changed core or pool, or a
patched ``runtime.run_blocks``/``block_runner.run`` (tests observe launches there). The
binder reads the interpreter's objects at offsets this module finds (``_interpreter``) and
checks once on known objects, binder included (``_self_check``); where they disagree, or the
runtime library has no binder, no FastLaunch is made.
"""
from __future__ import annotations

import ctypes
import threading
import weakref
from typing import Optional

import numpy as np

from . import abi, block_runner, runtime

#: False: no launch takes the fast path (tests compare the two)
ENABLED = True
_UNKNOWN = object()
_binder = _UNKNOWN     # (asc_bind_args as a ctypes function, the spec words it shares) or None
#: numpy's NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_WRITEABLE (checked by _self_check)
_FLAGS_NEEDED = 0x0001 | 0x0400


def _api(name: str) -> int:
    return ctypes.cast(getattr(ctypes.pythonapi, name), ctypes.c_void_p).value


def _interpreter() -> dict:
    """The spec words every binder spec shares (``abi.BIND_*`` below BIND_ENTRIES): the
    interpreter's object offsets (an object's head ends with its type pointer; a tuple's size
    follows the head and its items follow the tuple's basic size; an ndarray's fields follow
    the head in numpy's order), type and C API addresses."""
    from ..compiler.codegen import runtime_loader   # (a launch loads no codegen module)
    head = object.__basicsize__
    words = {
        abi.BIND_OB_TYPE: head - 8, abi.BIND_TUPLE_SIZE: head,
        abi.BIND_TUPLE_ITEMS: tuple.__basicsize__,
        abi.BIND_SIGINT: runtime_loader.symbol_address(runtime_loader.INT_INSTALLED),
        abi.BIND_FIRED: block_runner._functions()[2] or 0,
        abi.BIND_NDARRAY: id(np.ndarray), abi.BIND_DATA: head, abi.BIND_NDIM: head + 8,
        abi.BIND_SHAPE: head + 16, abi.BIND_DESCR: head + 40, abi.BIND_FLAGS: head + 48,
        abi.BIND_FLAGS_NEEDED: _FLAGS_NEEDED,
        abi.BIND_INT: id(int), abi.BIND_FLOAT: id(float), abi.BIND_BOOL: id(bool),
        abi.BIND_TRUE: id(True), abi.BIND_AS_LONG: _api("PyLong_AsLongLongAndOverflow"),
        abi.BIND_AS_DOUBLE: _api("PyFloat_AsDouble"),
        abi.BIND_COMPARE: _api("PyObject_RichCompareBool"), abi.BIND_CLEAR: _api("PyErr_Clear")}
    if not words[abi.BIND_SIGINT]:
        raise LookupError("no asc_sigint_installed")
    return words


class _Spec:
    """A binder spec: the shared words, then one entry per argument (``abi.BIND_ENTRY``
    words), with the objects its addresses name kept alive."""

    def __init__(self, shared: dict, entries: list, keep: list):
        self.words = np.zeros(abi.bind_spec_size(len(entries)), np.int64)
        for slot, value in shared.items():
            self.words[slot] = value
        self.words[abi.BIND_COUNT] = len(entries)
        for i, entry in enumerate(entries):
            at = abi.BIND_ENTRIES + i * abi.BIND_ENTRY
            self.words[at:at + len(entry)] = entry
        self.address = self.words.ctypes.data
        self.keep = keep


def _functions():
    """(asc_bind_args through ctypes with the GIL held, the shared spec words) or None."""
    global _binder
    if _binder is _UNKNOWN:
        _binder = None
        try:
            from ..compiler.codegen import runtime_loader
            if block_runner._functions() is None:
                return None
            address = runtime_loader.symbol_address(runtime_loader.BIND_ARGS)
            if not address:
                return None
            bind = ctypes.PYFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p,
                                     ctypes.py_object)(address)
            shared = _interpreter()
            if _self_check(bind, shared):
                _binder = (bind, shared)
        except (LookupError, AttributeError, OSError, ValueError):
            _binder = None
    return _binder


def _self_check(bind, shared: dict) -> bool:
    """Whether the binder, with these offsets, binds and refuses known arguments exactly as
    ``plan_key`` does (else the fast path stays off in this process)."""
    f16 = np.arange(6, dtype=np.float16).reshape(2, 3)
    f32 = np.arange(5, dtype=np.float32)
    entries = [(abi.BIND_ARRAY, id(f16.dtype), 2, 30, 31),
               (abi.BIND_ARRAY, id(f32.dtype), 4, 32, 33),
               (abi.BIND_INT32, 0, 0, 34, 0), (abi.BIND_FLOAT64, 0, 0, 35, 0),
               (abi.BIND_BOOL_, 0, 0, 36, 0), (abi.BIND_CONST, id(int), id(8192), 0, 0),
               (abi.BIND_CONST, id(str), id("gelu"), 0, 0)]
    spec = _Spec({**shared, abi.BIND_SIGINT: 0}, entries, [f16.dtype, f32.dtype])
    job = np.zeros(40, np.int64)

    def bound(*args) -> int:
        job[:] = 0
        return bind(spec.address, job.ctypes.data, args)

    good = (f16, f32, -7, 2.5, True, int("8192"), "".join(["ge", "lu"]))   # (equal, not same)
    if bound(*good) != 0 or list(job[30:37]) != [
            f16.ctypes.data, 12, f32.ctypes.data, 20, -7,
            int(np.float64(2.5).view(np.int64)), 1]:
        return False
    read_only = f32.copy()
    read_only.flags.writeable = False
    refused = {1: [(f32, f32), (f16.T, f32), (f16[:0], f32)],
               2: [(f16, read_only), (f16, f32[::2]), (f16, f32.view(np.int32)),
                   (f16, f32.tolist())],
               3: [(f16, f32, 2 ** 31), (f16, f32, True), (f16, f32, 1.0)],
               4: [(f16, f32, 1, 2)], 5: [(f16, f32, 1, 2.0, 1)],
               6: [(f16, f32, 1, 2.0, False, 8191)],
               7: [(f16, f32, 1, 2.0, False, 8192, "relu")]}
    for index, cases in refused.items():
        for head in cases:
            if bound(*(head + good[len(head):])) != index:
                return False
    return bound(*good[:-1]) == abi.BIND_WRONG_COUNT


def _threads(plan, pool) -> int:
    """The host threads ``block_runner.run`` runs a launch of ``plan`` on now, with ``pool``
    (its workers as they are) or None."""
    threads = block_runner.host_threads(plan.compiled, plan.block_dim)
    return threads if pool is None or threads == 1 else min(threads, len(pool.cores) + 1)


class FastLaunch:
    """A planned launch's specialisation with its arguments bound natively (module
    docstring). ``launch_plan``: the launcher's ``_LaunchPlan``; ``run`` returns the launch's
    result or None for a launch it does not take."""

    __slots__ = ("launch_plan", "plan", "spec", "lay", "scalars", "pool", "own", "own_template",
                 "own_words", "ready", "bytes_off", "bytes_on", "budget", "bind", "tensor_type",
                 "tensors", "bump")

    @classmethod
    def after_usual_launch(cls, launch_plan, params, args, platform, budget: int,
                           kept: Optional["FastLaunch"]):
        """The FastLaunch a launcher keeps after a launch of ``launch_plan`` with ``args`` ran
        the usual way (``kept``: the one it had): the plan's own for the host threads the
        launch asks for now while it still fits the cores, pool and loop budget, else a new
        one (``launch_plan.fast``: {host threads asked for: FastLaunch}, or False once the
        fast path can never serve the plan). Launches from other threads change nothing."""
        if threading.get_ident() != runtime._MAIN_IDENT or launch_plan.native is None:
            return kept
        plan = launch_plan.native
        asked = block_runner.host_threads(plan.compiled, plan.block_dim)
        made = launch_plan.fast
        if made is None:
            made = launch_plan.fast = {}
        fast = made.get(asked)
        if fast is None or not fast.current(budget):
            fast = cls.make(launch_plan, params, args, platform, budget)
            if fast is False:
                launch_plan.fast = False
                return None
            if fast is not None:
                made[asked] = fast
        return fast

    @classmethod
    def make(cls, launch_plan, params, args, platform, budget: int) -> Optional["FastLaunch"]:
        """The FastLaunch of a launch that has just run on the planned path with ``args``
        (``params``: the kernel's ``_plan_params``; ``budget``: its loop budget); False where
        the fast path can never serve launches of this specialisation with arguments of
        these types, None where it cannot now (another thread, the pool taken)."""
        plan = launch_plan.native
        if not ENABLED or threading.get_ident() != runtime._MAIN_IDENT:
            return None
        functions = _functions()
        if functions is None or plan is None or not plan.direct:
            return False
        kinds, keep, gm, scalars = [], [], 0, 0
        tensor_type, tensors, gm_at = None, [], []
        for position, ((name, kind, int_ok, float_ok), v) in enumerate(zip(params, args)):
            t = type(v)
            if t.__name__ == "Tensor" and t.__module__ == "torch":
                try:       # (a dtype numpy has no view of can never bind here)
                    v = v.detach().numpy()
                except (RuntimeError, TypeError, ValueError):
                    return False
                tensor_type = t
                tensors.append(position)
                t = type(v)
            if t is np.ndarray:
                kinds.append((abi.BIND_ARRAY, id(v.dtype), v.itemsize, gm))
                keep.append(v.dtype)
                gm_at.append(position)
                gm += 1
            elif kind == "const":
                kinds.append((abi.BIND_CONST, id(t), id(v), None))
                keep.append(v)
            elif t is int or t is float or t is bool:
                kinds.append(({int: abi.BIND_INT32, float: abi.BIND_FLOAT64,
                               bool: abi.BIND_BOOL_}[t], 0, 0, scalars))
                scalars += 1
            else:
                return False
        if len(kinds) != len(args) or max(1, gm) != plan.n_gm:
            return False
        fast = cls()
        fast.launch_plan, fast.plan = launch_plan, plan
        fast.bind = functions[0]
        fast.tensor_type, fast.tensors = tensor_type, tuple(tensors)
        #: the argument positions of the tensors the kernel may write (plan.written: GM index)
        fast.bump = tuple(p for p in (gm_at[i] for i in plan.written if i < len(gm_at))
                          if p in tensors)
        fast.scalars, fast.budget = scalars, budget
        if not fast._ready(platform):
            return None
        lay = fast.lay      # (where the GM pointers and scalars go: the same in every layout)
        entries = []
        for kind, a, b, index in kinds:
            if kind == abi.BIND_ARRAY:
                entries.append((kind, a, b, lay.gm_ptrs + index, lay.gm_sizes + index))
            elif kind == abi.BIND_CONST:
                entries.append((kind, a, b, 0, 0))
            else:
                entries.append((kind, 0, 0, lay.scalars + index, 0))
        fast.spec = _Spec(functions[1], entries, keep)
        return fast

    def _ready(self, platform) -> bool:
        """Find the threads, cores and buffer bytes of the next launch (as
        ``block_runner.run`` would: False where it would not run the blocks here)."""
        plan, compiled = self.plan, self.plan.compiled
        native = block_runner._functions()
        pool = None
        if block_runner.host_threads(compiled, plan.block_dim) > 1:
            if native[4] is None:
                return False
            pool = block_runner._pool or block_runner._host_pool(native[5])
        threads = _threads(plan, pool)
        lay = plan.layouts.get(threads) or plan.layout(threads, self.scalars)
        if pool is not None and not pool.lock.acquire(False):
            return False
        try:
            own, ready, records = block_runner.thread_records(
                compiled, platform, plan, lay, pool, self.budget)
        finally:
            if pool is not None:
                pool.lock.release()
        made = []
        for timing in (False, True):   # (the timing mode changes one job word, not the cores)
            buf = bytearray(records)   # (the binder writes the arguments and the SIGINT count)
            lay.pack_job(buf, 0, self.budget, timing, 0, [0] * (lay.records - abi.JOB_RECORD))
            made.append(bytes(buf))
        self.lay, self.pool, self.own_words, self.ready = lay, pool, own.native_words, ready
        #: the launching thread's core (weakly: the thread keeps its cores, a few per thread)
        #: and its template for this launch, which ``run`` makes current again after
        #: launches of other kernels
        self.own, self.own_template = weakref.ref(own), own.current_template()
        self.bytes_off, self.bytes_on = made
        return True

    def current(self, budget: int) -> bool:
        """Whether the launches the usual path runs now would find this one's cores, pool
        and loop budget (else the launcher makes a new one)."""
        own = getattr(runtime._thread_cores, "core", None)
        return budget == self.budget and own is not None and \
            own.native_words is self.own_words and \
            _threads(self.plan, self.pool) == self.lay.threads and (
                self.pool is None or (self.pool.ready is self.ready and
                                      block_runner._pool is self.pool))

    def run(self, args, timing: bool, budget: int, time_limit):
        """Run a launch with ``args`` as ``block_runner.run`` would; None: not taken (the
        caller takes the usual path)."""
        plan = self.plan
        if budget != self.budget or not ENABLED or \
                not block_runner.ENABLED or runtime.run_blocks is not runtime._RUN_BLOCKS or \
                block_runner.run is not block_runner._RUN or \
                threading.get_ident() != runtime._MAIN_IDENT:
            return None
        compiled, lay, pool = plan.compiled, self.lay, self.pool
        if _threads(plan, pool) != lay.threads:
            return None
        if pool is not None and (block_runner._pool is not pool or
                                 not pool.lock.acquire(False)):
            return None
        try:
            # launches of other kernels since may have made another core, template or set
            # of workers' cores current: this launch's are made current again, as the usual
            # path would find them (the template and the workers' ready tuple are held here,
            # so the arrays their records name are alive)
            own = self.own()
            if own is None:
                return None
            if own.native_words is not self.own_words:
                own.use(self.own_template)
            if getattr(runtime._thread_cores, "core", None) is not own:
                runtime._thread_cores.core = own
            if pool is not None and pool.ready is not self.ready:
                pool.ready = self.ready
            given = args
            if self.tensors:
                args = self._views(args)
                if args is None:
                    return None
            buf = lay.fresh(self.bytes_on if timing else self.bytes_off)
            base = ctypes.addressof(buf)
            if self.bind(self.spec.address, base, args):
                return None
            stop = runtime.LaunchStop(buf)
            native = block_runner._native
            t0 = block_runner.time.perf_counter()
            try:
                if pool is not None:
                    faults, warnings = block_runner._run_pool(
                        plan, lay, buf, base, lay.threads, stop, native, pool, own, self.ready,
                        time_limit)
                else:
                    faults, warnings = block_runner._run_alone(plan, lay, buf, base, stop,
                                                               native, own, time_limit)
            finally:   # (whether the blocks ran to the end or faulted, as the usual path)
                if self.bump:
                    self._bump(given)
            wall = block_runner.time.perf_counter() - t0
        finally:
            if pool is not None:
                pool.lock.release()
        return block_runner.finish(compiled, buf, lay, faults, warnings, wall, timing)

    def _views(self, args) -> Optional[tuple]:
        """``args`` with each tensor the spec binds as an array replaced by its numpy view
        (of its ``detach()`` when it requires grad and the kernel only reads it); None when
        one is a tensor subclass, requires grad where the kernel may write it, or ``numpy()``
        refuses it (the usual path then binds the launch, or says why it cannot)."""
        args = list(args)
        tensor_type = self.tensor_type
        try:
            for position in self.tensors:
                v = args[position]
                if type(v) is tensor_type:
                    if v.requires_grad:
                        if position in self.bump:   # (the usual path decides, by grad mode)
                            return None
                        v = v.detach()              # (read only: the same memory)
                    args[position] = v.numpy()
                elif type(v) is not np.ndarray:
                    return None
        except (RuntimeError, TypeError, ValueError, IndexError):
            return None
        return tuple(args)

    def _bump(self, given) -> None:
        """Bump the autograd version of the tensors among the launch's arguments ``given``
        that the kernel may write (``runtime.run_blocks`` does the same)."""
        written = [v for v in (given[p] for p in self.bump) if type(v) is not np.ndarray]
        if written:
            runtime._increment_version(written)

__all__ = ["ENABLED", "FastLaunch"]
