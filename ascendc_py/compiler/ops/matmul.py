"""The high-level Matmul API (``asc.adv.Matmul``): its data-moving calls as intrinsics.

Each call that moves or computes data is ONE intrinsic whose library function does the whole
job natively (``compiler/codegen/lower_matmul.py``): reads A and B (float16, bfloat16, float32 or
int8; transposed or not; row strides from the original shapes), multiplies with the host BLAS
(float32 accumulation; int8 exactly into int32), adds the bias and converts to C's dtype.
Its timing is the instruction sequence Ascend C's Matmul issues for the tiling
(``compiler/codegen/timing_matmul.py``), charged to the M, MTE1, MTE2 and FIX pipes.

Supported dtypes (A/B -> C, bias): float16/bfloat16 -> float32, float16/bfloat16 (bias
float32 or the input dtype); float32 -> float32; int8 -> int32 (bias int32); int8 -> float16 or
int8 with a dequant scale (``set_quant_scalar`` / ``set_quant_vector``: C = round(float32(acc) *
scale), scale the float32 in the low 32 bits of each uint64, one per matrix or per column).
"""
from __future__ import annotations

import numpy as np

from ...dsl.types import PipeID, bfloat16, float16, float32, int8, int32
from . import CostClass, Family, OpSpec, register

#: input dtype -> allowed C dtypes
MATMUL_TYPES = {float16: (float32, float16), bfloat16: (float32, bfloat16),
                float32: (float32,), int8: (int32, float16, int8)}
#: input dtype -> allowed bias dtypes
BIAS_TYPES = {float16: (float32, float16), bfloat16: (float32, bfloat16), float32: (float32,),
              int8: (int32,)}


def nz_layout(c: np.ndarray, rows: int = None) -> np.ndarray:
    """C (m x n, ND) in the NZ format the Matmul writes: ceil(n / 16) blocks of 16 columns, each
    ``rows`` (default m rounded up to 16) rows of 16 elements, flat; padding stays 0."""
    m, n = c.shape
    rows = rows if rows is not None else -(-m // 16) * 16
    nb = -(-n // 16)
    out = np.zeros((nb, rows, 16), c.dtype)
    for j in range(nb):
        w = min(16, n - 16 * j)
        out[j, :m, :w] = c[:, 16 * j:16 * j + w]
    return out.reshape(-1)


def matmul_reference(a: np.ndarray, b: np.ndarray, bias=None, out_dtype=np.float32,
                     trans_a: bool = False, trans_b: bool = False, quant=None) -> np.ndarray:
    """C = op(A) @ op(B) (+ bias) as the cube computes it: float32 (int8: int32) accumulation,
    one rounding to the output dtype. bfloat16 arrays are given as uint16 bit patterns.
    ``quant`` (int8 inputs, float16/int8 C): the dequant scales, one float32 or one per column:
    C = round(float32(acc) * scale) (float16: nearest even; int8: nearest even, saturated)."""
    def as_f32(x):
        x = np.asarray(x)
        if x.dtype == np.uint16:  # bfloat16 bits
            return (x.astype(np.uint32) << 16).view(np.float32)
        return x.astype(np.float32)
    a2 = a.T if trans_a else a
    b2 = b.T if trans_b else b
    if np.asarray(a).dtype == np.int8:
        c = a2.astype(np.int64) @ b2.astype(np.int64)
        if bias is not None:
            c = c + np.asarray(bias).reshape(1, -1).astype(np.int64)
        c = c.astype(np.int32)
        if quant is None:
            return c
        v = (c.astype(np.float32) * np.asarray(quant, np.float32).reshape(1, -1)).astype(
            np.float32)
        if np.dtype(out_dtype) == np.int8:
            return np.clip(np.rint(v), -128, 127).astype(np.int8)
        return v.astype(np.float16)
    c = as_f32(a2) @ as_f32(b2)
    if bias is not None:
        c = c + as_f32(bias).reshape(1, -1)
    return c.astype(out_dtype)


_DTYPES = (float16, bfloat16, float32, int8)
register(OpSpec("matmul_register", Family.SYSTEM, PipeID.PIPE_S, CostClass.SCALAR, (), (),
                doc="register_matmul: bind a Matmul to its tiling; in a mix kernel the AIC "
                    "becomes the matmul server (its kernel ends here).", flops_per_elem=0))
register(OpSpec("matmul_iterate_all", Family.SYSTEM, PipeID.PIPE_M, CostClass.NONE, _DTYPES,
                (("tensor", "en_atomic"),), reference=matmul_reference,
                doc="Matmul.iterate_all(c_gm): the whole single-core C (tail_m x tail_n) = A @ B "
                    "(+ bias) to GM, row stride N.", flops_per_elem=0))
register(OpSpec("matmul_get_tensor_c", Family.SYSTEM, PipeID.PIPE_M, CostClass.NONE, _DTYPES,
                (("tensor", "en_atomic", "en_sequential_write"),), reference=matmul_reference,
                doc="Matmul.get_tensor_c(ub) inside `with mm.iterate() as count`: the count-th "
                    "base_m x base_n tile of C (row-major, row stride base_n) into UB.",
                flops_per_elem=0))

#: Operands of matmul_iterate_all / matmul_get_tensor_c, in order (all integer expressions; the
#: library function takes them as i64). ``mode`` 0: the whole C (iterate_all), 1: tile ``tile``.
#: dtype codes: see DTYPE_CODES. ``bias_arg`` -1: no bias. ``c_mem`` 0: GM (c_a = argument),
#: else a local memory (c_a = byte address). ``seq``: get_tensor_c's en_sequential_write.
#: ``quant_mode`` 0: none, 1: ``quant_scalar`` (uint64 bits), 2: the uint64 vector at GM argument
#: ``quant_arg`` + ``quant_off`` (one per column of C). ``a/b_scalar``: see A_SCALAR.
MATMUL_ARGS = ("mode", "a_arg", "a_off", "a_dt", "b_arg", "b_off", "b_dt", "bias_arg", "bias_off",
               "bias_dt", "c_mem", "c_a", "c_off", "c_size", "c_dt", "m", "n", "k", "lda", "ldb",
               "ldc", "trans_a", "trans_b", "tile", "seq", "base_m", "base_n", "base_k",
               "depth_a1", "depth_b1", "step_ka", "step_kb", "order", "db_l0c", "org_m", "org_n",
               "org_k", "cores", "op", "quant_mode", "quant_scalar", "quant_arg", "quant_off",
               "a_scalar", "b_scalar", "bias_mem", "bias_size", "c_nz")
#: ``c_nz`` 1: C in NZ format: blocks of 16 columns, each ``ldc`` rows (the destination's
#: row count rounded up to 16) of 16 elements, one block after another
#: ``bias_mem`` 0: the bias is GM argument ``bias_arg`` (+ ``bias_off``); else a local memory
#: (UB / L1): ``bias_arg`` is its byte address, ``bias_size`` the tensor's elements
#: ``a_arg`` / ``b_arg`` of a scalar A or B (``set_tensor_a/b(scalar)``): every element of the
#: matrix is the float32 whose bits are ``a_scalar`` / ``b_scalar`` (the scalar rounded to the
#: matrix's dtype first)
A_SCALAR = -2
DTYPE_CODES = {float16: 0, bfloat16: 1, float32: 2, int8: 3, int32: 4}
