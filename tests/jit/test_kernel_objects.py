"""A split kernel module is emitted as two object files (``jit.emit_kernel_object``): the
kernel function at codegen level 0, the helpers at full codegen with hidden symbols. Both are
stored in the cache entry and checked before LLVM sees them."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ascendc_py.compiler import jit
from ascendc_py.compiler.scalar_loops import has_scalar_loop
from ascendc_py.compiler.codegen.core import generate
from ascendc_py.compiler.codegen.timing import TimingEmitter
from ascendc_py.compiler.sema.analyzer import analyze

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def _sepia_texts(monkeypatch):
    monkeypatch.syspath_prepend(str(SAMPLES))
    from sepia import sepia_kernel
    img = np.zeros((1, 3, 16, 16), np.float32)
    specs = sepia_kernel.bind((img, img, 1, 256), {})[0]
    cg = generate(analyze(sepia_kernel, specs).function, TimingEmitter())
    return jit.kernel_module_texts(cg.module, cg.entry_name), cg.entry_name


def test_kernel_function_and_helpers_are_separate_objects(monkeypatch):
    texts, entry = _sepia_texts(monkeypatch)
    obj, times, more = jit.emit_kernel_object(*texts, entry)
    assert set(times) == {"llvm_parse", "optimize", "emit"}
    assert len(more) == 1 and jit.elf_is_sound(obj) and jit.elf_is_sound(more[0])
    helpers = texts[2]      # (loading runs in every compiled launch: tests/e2e)
    assert helpers and all(name.encode() in more[0] for name in helpers)
    assert entry.encode() in obj and entry.encode() not in more[0]


def test_one_object_when_fast_codegen_is_off(monkeypatch):
    texts, entry = _sepia_texts(monkeypatch)
    monkeypatch.setattr(jit, "KERNEL_FUNCTION_FAST_CODEGEN", False)
    obj, _times, more = jit.emit_kernel_object(*texts, entry)
    assert more == [] and jit.elf_is_sound(obj)


def test_an_entry_with_a_damaged_helper_object_is_not_trusted(tmp_path, monkeypatch):
    path = tmp_path / "k.kernel"
    monkeypatch.setattr(jit, "_entry_path", lambda key, create=True: path)
    texts, entry = _sepia_texts(monkeypatch)
    obj, _times, more = jit.emit_kernel_object(*texts, entry)
    jit._write_entry(path, obj, {"entry_name": entry, "more_objects": [more[0][:200]],
                                 "runtime_shards": []})
    assert jit.load_cached(None, "k") is None
    assert not path.exists()


SCALAR_LOOP = """define i64 @k(ptr %ctx, i64 %n) {
entry:
  br label %loop
loop:                                             ; preds = %loop, %entry
  %i = phi i64 [ 0, %entry ], [ %j, %loop ]
  %j = add i64 %i, 1
  %c = icmp slt i64 %j, %n
  br i1 %c, label %loop, label %done
done:                                             ; preds = %loop
  ret i64 %j
}
"""


def test_a_kernel_function_with_a_scalar_loop_keeps_full_codegen():
    assert has_scalar_loop(SCALAR_LOOP)
    calling = SCALAR_LOOP.replace("  %j = add i64 %i, 1\n",
                                  "  %j = add i64 %i, 1\n  call void @asc_f(ptr %ctx)\n")
    assert not has_scalar_loop(calling)
    intrinsic = SCALAR_LOOP.replace("%j = add i64 %i, 1",
                                    "%j = call i64 @llvm.smin.i64(i64 %i, i64 1)")
    assert has_scalar_loop(intrinsic)
    # blocks laid out out of order: an edge to an earlier block that is not a loop
    straight = ("define i64 @k() {\nentry:\n  br label %b\nret:\n  ret i64 0\n"
                "b:\n  br label %ret\n}\n")
    assert not has_scalar_loop(straight)


def test_samples_kernels_get_fast_codegen_and_a_scalar_loop_does_not(monkeypatch):
    texts, entry = _sepia_texts(monkeypatch)
    mod = jit.optimize_kernel_module(*texts, entry)
    assert not has_scalar_loop(str(mod.get_function(entry)))
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "codegen"))
    from test_codegen import scalar_loop
    specs = scalar_loop.bind((np.zeros(8, np.int32), 10), {})[0]
    cg = generate(analyze(scalar_loop, specs).function, TimingEmitter())
    mod = jit.optimize_kernel_module(*jit.kernel_module_texts(cg.module, cg.entry_name),
                                     cg.entry_name)
    assert has_scalar_loop(str(mod.get_function(cg.entry_name)))
