"""The kernel modules' LLVM pipeline (``jit.kernel_module_texts`` / ``optimize_kernel_module``):
the kernel function gets the function simplification pipeline, the other functions (fused element
loops, helpers) the full O2 pipeline with vectorisation in a module of their own, and are linked
back in as internal functions. (Kernel speed against the whole-module O2 pipeline was measured
when this was chosen: the same within noise on sepia, layernorm, softmax and scalar loops.)"""
from __future__ import annotations

import re
from pathlib import Path

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir as L

from ascendc_py.compiler import jit
from ascendc_py.compiler.codegen.core import generate
from ascendc_py.compiler.codegen.timing import TimingEmitter
from ascendc_py.compiler.sema.analyzer import analyze

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def _sepia(monkeypatch):
    monkeypatch.syspath_prepend(str(SAMPLES))
    from sepia import sepia_kernel
    img = np.zeros((1, 3, 16, 16), np.float32)
    specs = sepia_kernel.bind((img, img, 1, 256), {})[0]
    return generate(analyze(sepia_kernel, specs).function, TimingEmitter())


def _defined(text: str) -> set:
    return set(re.findall(r'^define [^@]*@"?([\w.]+)"?\(', text, re.M))


def test_split_texts_leave_the_module_unchanged(monkeypatch):
    cg = _sepia(monkeypatch)
    before = str(cg.module)
    kernel_text, helper_text, internal = jit.kernel_module_texts(cg.module, cg.entry_name)
    assert str(cg.module) == before
    assert _defined(kernel_text) == {cg.entry_name}
    helpers = _defined(helper_text)
    assert helpers and cg.entry_name not in helpers
    assert sorted(internal) == sorted(helpers)   # all of them are internal in the kernel module
    assert " internal " not in "".join(ln for ln in helper_text.splitlines()
                                       if ln.startswith("define"))


def test_helpers_are_vectorised_and_internal_after_linking(monkeypatch):
    cg = _sepia(monkeypatch)
    texts = jit.kernel_module_texts(cg.module, cg.entry_name)
    mod = jit.optimize_kernel_module(*texts, cg.entry_name)
    fused = [f for f in mod.functions if f.name.startswith("asc_fused_") and not
             f.is_declaration]
    assert fused and all(f.linkage == llvm.Linkage.internal for f in fused)
    loops = [str(f) for f in fused if f.name.endswith("_loop")]
    assert loops and all("x float>" in text for text in loops)    # vector instructions
    kernel = str(mod.get_function(cg.entry_name))
    assert "alloca" not in kernel                                  # variables in registers
    obj, _times, more = jit.emit_kernel_object(*texts, cg.entry_name)
    assert jit.elf_is_sound(obj) and more and all(map(jit.elf_is_sound, more))


def test_module_with_global_variables_is_not_split():
    module = L.Module("g")
    cell = L.GlobalVariable(module, L.IntType(64), name="cell")
    cell.initializer = L.Constant(L.IntType(64), 0)
    fn = L.Function(module, L.FunctionType(L.IntType(64), []), name="asc_kernel_k")
    helper = L.Function(module, L.FunctionType(L.IntType(64), []), name="helper")
    helper.linkage = "internal"
    b = L.IRBuilder(helper.append_basic_block("entry"))
    b.ret(b.load(cell))
    b = L.IRBuilder(fn.append_basic_block("entry"))
    b.ret(b.call(helper, []))
    text, helper_text, internal = jit.kernel_module_texts(module, "asc_kernel_k")
    assert text == str(module) and helper_text is None and internal is None
    mod = jit.optimize_kernel_module(text, helper_text, internal, "asc_kernel_k")
    assert mod.get_function("asc_kernel_k") is not None
