"""The kernel modules' LLVM pipeline (jit.KERNEL_SPEED_LEVEL, cheaper than O3) must give the
machine code O3 gives: checked on a sample kernel by comparing the emitted objects (the same
was checked on every sample kernel by disassembling both when the level was chosen)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ascendc_py.compiler import jit
from ascendc_py.compiler.codegen.core import generate
from ascendc_py.compiler.codegen.timing import TimingEmitter
from ascendc_py.compiler.sema.analyzer import analyze

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def test_kernel_pipeline_gives_o3_machine_code(monkeypatch):
    monkeypatch.syspath_prepend(str(SAMPLES))
    from sepia import sepia_kernel
    img = np.zeros((1, 3, 16, 16), np.float32)
    specs = sepia_kernel.bind((img, img, 1, 256), {})[0]
    text = str(generate(analyze(sepia_kernel, specs).function, TimingEmitter()).module)
    assert jit.KERNEL_SPEED_LEVEL < 3
    fast, _ = jit.emit_object(text, jit.KERNEL_SPEED_LEVEL)
    full, _ = jit.emit_object(text, 3)
    assert fast == full
