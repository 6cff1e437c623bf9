"""Kernels that misuse the asc.adv math functions (each marked line is where the error must
point)."""
from __future__ import annotations

import ascendc_py as asc


@asc.kernel
def wrong_dtype(x: asc.GlobalAddress):
    a = asc.LocalTensor(asc.int16, asc.TPosition.VECIN, 0, 256)
    c = asc.LocalTensor(asc.int16, asc.TPosition.VECOUT, 1024, 256)
    asc.adv.tanh(c, a, 256)  # <-


@asc.kernel
def tmp_not_uint8(x: asc.GlobalAddress):
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 256)
    c = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, 1024, 256)
    t = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 2048, 4096)
    asc.adv.sin(c, a, 256, t)  # <-


@asc.kernel
def mixed_dtypes(x: asc.GlobalAddress):
    a = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, 256)
    c = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, 1024, 256)
    asc.adv.erf(c, a)  # <-


@asc.kernel
def small_tmp(n: int, tmp_bytes: int):
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 1024)
    c = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, 4096, 1024)
    t = asc.LocalTensor(asc.uint8, asc.TPosition.VECCALC, 8192, tmp_bytes)
    asc.duplicate(a, 0.5, 1024)
    asc.adv.tanh(c, a, n, t)  # <-


@asc.kernel
def apply_atan(dst, src, n, tmp):
    asc.adv.atan(dst, src, n, tmp)  # <-


@asc.kernel
def count_beyond_in_helper(n: int):
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 1024)
    c = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, 4096, 512)
    t = asc.LocalTensor(asc.uint8, asc.TPosition.VECCALC, 8192, 4096)
    asc.duplicate(a, 0.5, 1024)
    apply_atan(c, a, n, t)


@asc.kernel
def bad_taylor_level(x: asc.GlobalAddress):
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 256)
    c = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, 1024, 256)
    asc.adv.exp(c, a, 256, 40)  # <-


@asc.kernel
def xor_on_floats(x: asc.GlobalAddress):
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 256)
    c = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, 1024, 256)
    asc.adv.xor(c, a, a, 256)  # <-
