"""``irtext.module_text`` prints exactly llvmlite's ``str(module)``: kernel modules of the
samples (with fused loops, reductions, conversions, cube and cross-core code) and runtime
library pieces of every kind."""
from __future__ import annotations

import contextlib
import importlib
import io
from pathlib import Path

import pytest

from ascendc_py.compiler.codegen import core, irtext, runtime_lib

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


@pytest.mark.parametrize("sample", ["sepia", "layernorm", "softmax", "add_flags",
                                    "mix_pipeline", "matmul_leaky_relu"])
def test_kernel_modules_print_as_llvmlite_prints_them(sample, monkeypatch):
    monkeypatch.syspath_prepend(str(SAMPLES))
    modules = []
    real = core.generate

    def generate(fn, timing=None):
        cg = real(fn, timing)
        modules.append(cg.module)
        return cg

    monkeypatch.setattr(core, "generate", generate)
    monkeypatch.setenv("ASCENDC_PY_TRACE", "0")
    module = importlib.import_module(sample)
    for kernel in vars(module).values():      # compile again even if cached
        if hasattr(kernel, "_compiled"):
            monkeypatch.setattr(kernel, "_compiled", {})
    from ascendc_py.compiler import jit
    monkeypatch.setattr(jit, "load_cached", lambda key, name: None)
    with contextlib.redirect_stdout(io.StringIO()):
        module.main()
    assert modules
    for m in modules:
        fast = irtext.module_text(m)
        assert fast == str(m)


def test_runtime_library_pieces_print_as_llvmlite_prints_them():
    pieces = sorted(set(runtime_lib._static_index().values()) | set(runtime_lib._DEFINER_PIECES))
    chosen = [p for p in pieces if not p.startswith("vec.")]
    chosen += [p for p in pieces if p.startswith("vec.")][::25]   # a spread of vector ops
    for piece in chosen:
        module = runtime_lib._generate(piece)
        assert irtext.module_text(module) == str(module), piece
