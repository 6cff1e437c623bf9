"""Matmul dequantization (set_quant_scalar / set_quant_vector): int8 A @ B -> float16 or int8 C
= round(float32(acc) * scale), scale the float32 in the low 32 bits of each uint64 (Ascend C's
SetQuantScalar example: the bits of 0.1), per matrix or per column; errors."""
from __future__ import annotations

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler.errors import KernelValueError
from ascendc_py.compiler.ops.matmul import matmul_reference

from kernels_matmul import make_tiling
from kernels_matmul_batch import quant_kernel


def bits(scale) -> np.ndarray:
    return np.asarray(scale, np.float32).view(np.uint32).astype(np.uint64)


def _inputs(m, n, k, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.integers(-128, 128, (m, k)).astype(np.int8),
            rng.integers(-128, 128, (k, n)).astype(np.int8))


@pytest.mark.parametrize("out", ["float16", "int8"])
@pytest.mark.parametrize("shape", [(64, 48, 96), (33, 70, 17)])
def test_quant_scalar(out, shape):
    m, n, k = shape
    a, b = _inputs(m, n, k, seed=m)
    scale = np.float32(0.1) if out == "float16" else np.float32(1 / 300)
    tiling = make_tiling(m, n, k, "int8", out, dim=1)
    c = np.zeros((m, n), np.dtype(out))
    report = quant_kernel()[1](a, b, c, np.zeros(n, np.uint64), tiling, int(bits(scale)), 1)
    want = matmul_reference(a, b, out_dtype=np.dtype(out), quant=scale)
    np.testing.assert_array_equal(c.view(np.uint8), want.view(np.uint8))
    acc = a.astype(np.int64) @ b.astype(np.int64)
    if out == "int8":
        assert (c == np.clip(np.rint(acc * np.float64(scale)), -128, 127)).mean() > 0.99
        assert (np.abs(acc * scale) > 127).any() and c.max() == 127     # saturation
    assert report.instructions["matmul_iterate_all"] == 1


def test_quant_vector_per_column():
    m, n, k = 40, 64, 32
    a, b = _inputs(m, n, k, seed=7)
    scales = np.linspace(0.001, 0.05, n).astype(np.float32)
    tiling = make_tiling(m, n, k, "int8", "float16", dim=1)
    c = np.zeros((m, n), np.float16)
    quant_kernel("vector")[1](a, b, c, bits(scales), tiling, 0, 1)
    want = matmul_reference(a, b, out_dtype=np.float16, quant=scales)
    np.testing.assert_array_equal(c.view(np.uint16), want.view(np.uint16))


def test_missing_scale_on_a_path_stops():
    a, b = _inputs(16, 16, 16)
    tiling = make_tiling(16, 16, 16, "int8", "float16", dim=1)
    c = np.zeros((16, 16), np.float16)
    quant_kernel("branch")[1](a, b, c, np.zeros(16, np.uint64), tiling, int(bits(0.5)), 1)
    with pytest.raises(asc.MatmulStateError, match="need a dequant scale"):
        quant_kernel("branch")[1](a, b, c, np.zeros(16, np.uint64), tiling, 0, 0)


def test_static_errors():
    @asc.kernel(kernel_type=asc.KernelType.AIC_ONLY)
    def no_scale(a: asc.GlobalAddress, c: asc.GlobalAddress, tiling: asc.adv.TCubeTiling):
        ag = asc.GlobalTensor()
        ag.set_global_buffer(a)
        cg = asc.GlobalTensor()
        cg.set_global_buffer(c)
        mm = asc.adv.Matmul(a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.int8),
                            b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.int8),
                            c=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND,
                                                 asc.float16))
        asc.adv.register_matmul(asc.TPipe(), c, mm, tiling)
        mm.set_tensor_a(ag)
        mm.set_tensor_b(ag)
        mm.iterate_all(cg)

    @asc.kernel(kernel_type=asc.KernelType.AIC_ONLY)
    def float_quant(a: asc.GlobalAddress):
        mm = asc.adv.Matmul(a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND,
                                                 asc.float16),
                            b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND,
                                                 asc.float16),
                            c=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND,
                                                 asc.float32))
        mm.set_quant_scalar(3)

    tiling = make_tiling(16, 16, 16, "int8", "float16", dim=1)
    with pytest.raises(KernelValueError, match="set_quant_scalar"):
        no_scale[1](np.zeros(256, np.int8), np.zeros(256, np.float16), tiling)
    float_quant[1](np.zeros(16, np.float16))   # accepted and ignored: test_matmul_hooks.py


def test_sanitize_mode_is_clean():
    a, b = _inputs(16, 16, 16, seed=3)
    tiling = make_tiling(16, 16, 16, "int8", "float16", dim=1)
    c = np.zeros((16, 16), np.float16)
    scales = np.full(16, 0.25, np.float32)
    quant_kernel("vector")[1](a, b, c, bits(scales), tiling, 0, 1, sanitize=True)
    want = matmul_reference(a, b, out_dtype=np.float16, quant=scales)
    np.testing.assert_array_equal(c.view(np.uint16), want.view(np.uint16))
