"""The object files of a split kernel module, and its LLVM half on a worker thread.

``kernel_function_object`` and ``helper_object`` emit the two objects of a module split by
``jit.kernel_module_texts`` (``jit.emit_kernel_object`` emits both in turn).

LLVM releases the GIL while it works (llvmlite calls it through ``ctypes``; its own lock lets
one thread at a time into LLVM), so a kernel module's LLVM work (parse, optimise, emit: about a
third of a cold compile, issue 14) runs on a worker thread while the compiling thread prints the
kernel function's text, finds and loads the runtime library's shards and builds the cache
entry's metadata. The worker emits the helpers' object first (their text is printed before it
starts), then the kernel function's, from the texts and with the functions
``jit.emit_kernel_object`` uses, so the object code is the same as emitting them in turn. On a
machine with no idle CPU the two threads take turns, at the cost of a thread start (~0.1 ms).
"""
from __future__ import annotations

import threading
import time
from typing import Optional


def kernel_function_object(kernel_text: str, entry_name: str) -> tuple[bytes, dict]:
    """The kernel function's object file of a split module (``kernel_module_texts``): LLVM's
    function pipeline of KERNEL_FUNCTION_LEVEL, then codegen level 0 unless the function has a
    scalar loop (see KERNEL_FUNCTION_FAST_CODEGEN); (the object, its stages' seconds)."""
    from . import jit
    llvm, tm = jit._llvm()
    t0 = time.perf_counter()
    mod = jit._parse_module(kernel_text)
    t1 = time.perf_counter()
    pb = llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options(
        speed_level=jit.KERNEL_FUNCTION_LEVEL))
    pb.getFunctionPassManager().run(mod.get_function(entry_name), pb)
    t2 = time.perf_counter()
    from .scalar_loops import has_scalar_loop
    kernel_tm = tm if has_scalar_loop(str(mod.get_function(entry_name))) else \
        jit._kernel_target_machine
    obj = kernel_tm.emit_object(mod)
    return obj, dict(llvm_parse=t1 - t0, optimize=t2 - t1, emit=time.perf_counter() - t2)


def helper_object(helper_text: str) -> tuple[bytes, dict]:
    """The helpers' object file of a split module (``helper_module_text``): the O2 pipeline
    with vectorisation, full codegen, hidden symbols; (the object, its stages' seconds)."""
    from . import jit
    llvm, tm = jit._llvm()
    t0 = time.perf_counter()
    helpers = jit._parse_module(helper_text)
    t1 = time.perf_counter()
    jit._module_pipeline(helpers, jit.KERNEL_SPEED_LEVEL)
    t2 = time.perf_counter()
    for f in helpers.functions:
        if not f.is_declaration:
            f.visibility = "hidden"
    obj = tm.emit_object(helpers)
    return obj, dict(llvm_parse=t1 - t0, optimize=t2 - t1, emit=time.perf_counter() - t2)


class KernelObjects:
    """One split kernel module's objects (``jit.kernel_module_texts``), emitted on a worker
    thread: ``start`` with the helpers' text, ``kernel_text`` when the kernel function's is
    printed, ``result`` for ``(object, stage seconds, more objects)`` as
    ``jit.emit_kernel_object`` returns them (an error on the worker is raised there)."""

    def __init__(self, helper_text: Optional[str], entry_name: str):
        self._helper_text = helper_text
        self._entry_name = entry_name
        self._kernel_text: Optional[str] = None
        self._text_ready = threading.Event()
        self._out: dict = {}
        self._thread = threading.Thread(target=self._run, name="asc-llvm", daemon=True)

    def start(self) -> "KernelObjects":
        self._thread.start()
        return self

    def kernel_text(self, text: Optional[str]) -> None:
        """Hand the worker the kernel function's text (None: the compile failed before it was
        printed; the worker stops after the helpers)."""
        self._kernel_text = text
        self._text_ready.set()

    def _run(self) -> None:
        try:
            more, times = [], dict(llvm_parse=0.0, optimize=0.0, emit=0.0)
            if self._helper_text is not None:
                obj, helper_times = helper_object(self._helper_text)
                more.append(obj)
                for name, seconds in helper_times.items():
                    times[name] += seconds
            self._text_ready.wait()
            if self._kernel_text is None:
                return
            obj, kernel_times = kernel_function_object(self._kernel_text, self._entry_name)
            for name, seconds in kernel_times.items():
                times[name] += seconds
            self._out["result"] = (obj, times, more)
        except BaseException as exc:  # noqa: BLE001 - raised on the compiling thread
            self._out["error"] = exc

    def result(self) -> tuple[bytes, dict, list]:
        """Wait for the worker; ``(object, stage seconds, more objects)``, plus ``llvm_wait``
        in the stage seconds: how long the compiling thread waited here."""
        t0 = time.perf_counter()
        self._thread.join()
        wait = time.perf_counter() - t0
        if "error" in self._out:
            raise self._out["error"]
        obj, times, more = self._out["result"]
        times["llvm_wait"] = wait
        return obj, times, more

    def abandon(self) -> None:
        """The compile failed on the compiling thread: let the worker finish and exit."""
        if not self._text_ready.is_set():
            self.kernel_text(None)


__all__ = ["KernelObjects", "helper_object", "kernel_function_object"]
