"""Kernels for tests/ops/test_convert.py (cast, compare, compare_scalar, select).

The compiler reads kernel source with ``inspect``, so they live in a real module. The rounding,
comparison and selection modes are compile-time strings (ConstExpr) turned into the enum by an
if/elif chain, so each (dtypes, mode) pair is one compilation and launches only change sizes,
masks and strides. Tensors are static LocalTensors at fixed UB addresses.
"""
from __future__ import annotations

import ascendc_py as asc

TILE = 4096          # elements per tile of cast_kernel (8-byte types: 32 KB)
OUT = 96 * 1024      # UB byte address of the destination of the masked kernels
SRC1 = 48 * 1024     # UB byte address of the second source
SEL = 144 * 1024     # UB byte address of select's sel_mask


@asc.kernel
def cast_count(c, a, n, MODE):
    if MODE == "CAST_NONE":
        asc.cast(c, a, asc.RoundMode.CAST_NONE, n)
    elif MODE == "CAST_RINT":
        asc.cast(c, a, asc.RoundMode.CAST_RINT, n)
    elif MODE == "CAST_FLOOR":
        asc.cast(c, a, asc.RoundMode.CAST_FLOOR, n)
    elif MODE == "CAST_CEIL":
        asc.cast(c, a, asc.RoundMode.CAST_CEIL, n)
    elif MODE == "CAST_ROUND":
        asc.cast(c, a, asc.RoundMode.CAST_ROUND, n)
    elif MODE == "CAST_TRUNC":
        asc.cast(c, a, asc.RoundMode.CAST_TRUNC, n)
    else:
        asc.cast(c, a, asc.RoundMode.CAST_ODD, n)


@asc.kernel
def cast_masked(c, a, mask, repeat, params, MODE):
    if MODE == "CAST_NONE":
        asc.cast(c, a, asc.RoundMode.CAST_NONE, mask, repeat, params)
    elif MODE == "CAST_RINT":
        asc.cast(c, a, asc.RoundMode.CAST_RINT, mask, repeat, params)
    elif MODE == "CAST_FLOOR":
        asc.cast(c, a, asc.RoundMode.CAST_FLOOR, mask, repeat, params)
    elif MODE == "CAST_CEIL":
        asc.cast(c, a, asc.RoundMode.CAST_CEIL, mask=mask, repeat_times=repeat,
                 repeat_params=params)
    elif MODE == "CAST_ROUND":
        asc.cast(c, a, asc.RoundMode.CAST_ROUND, mask, repeat, params)
    elif MODE == "CAST_TRUNC":
        asc.cast(c, a, asc.RoundMode.CAST_TRUNC, mask, repeat, params)
    else:
        asc.cast(c, a, asc.RoundMode.CAST_ODD, mask, repeat, params)


@asc.kernel
def cast_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int, MODE: asc.ConstExpr[str]):
    """z = cast(x) tile by tile (n a multiple of TILE)."""
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    zg.set_global_buffer(z, n)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, TILE)
    c = asc.LocalTensor(z.dtype, asc.TPosition.VECOUT, 64 * 1024, TILE)
    for t in range(n // TILE):
        asc.data_copy(a, xg[t * TILE:], TILE)
        cast_count(c, a, TILE, MODE)
        asc.data_copy(zg[t * TILE:], c, TILE)


@asc.kernel
def cast_masked_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, nx: int, nz: int, m0, m1,
                       repeat: int, dst_blk: int, src_blk: int, dst_rep: int, src_rep: int,
                       MODE: asc.ConstExpr[str], WORDS: asc.ConstExpr[int],
                       COUNTER: asc.ConstExpr[bool]):
    """The masked form over whole UB images of x and z (z's untouched lanes come back)."""
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, nx)
    zg.set_global_buffer(z, nz)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, nx)
    c = asc.LocalTensor(z.dtype, asc.TPosition.VECOUT, OUT, nz)
    asc.data_copy(a, xg, nx)
    asc.data_copy(c, zg, nz)
    params = asc.UnaryRepeatParams(dst_blk, src_blk, dst_rep, src_rep)
    if COUNTER:
        asc.set_mask_count()
    if WORDS == 0:
        cast_masked(c, a, m0, repeat, params, MODE)
    elif WORDS == 1:
        cast_masked(c, a, [m0], repeat, params, MODE)
    else:
        cast_masked(c, a, [m0, m1], repeat, params, MODE)
    if COUNTER:
        asc.set_mask_norm()
    asc.data_copy(zg, c, nz)


@asc.kernel
def compare_by_name(c, a, b, s, n, MODE, SCALAR):
    if SCALAR:
        if MODE == "LT":
            asc.compare_scalar(c, a, s, asc.CMPMODE.LT, n)
        elif MODE == "GT":
            asc.compare_scalar(c, a, s, asc.CMPMODE.GT, n)
        elif MODE == "EQ":
            asc.compare_scalar(c, a, s, asc.CMPMODE.EQ, n)
        elif MODE == "LE":
            asc.compare_scalar(c, a, s, asc.CMPMODE.LE, n)
        elif MODE == "GE":
            asc.compare_scalar(c, a, s, asc.CMPMODE.GE, n)
        else:
            asc.compare_scalar(c, a, s, asc.CMPMODE.NE, n)
    elif MODE == "LT":
        asc.compare(c, a, b, asc.CMPMODE.LT, n)
    elif MODE == "GT":
        asc.compare(c, a, b, asc.CMPMODE.GT, n)
    elif MODE == "EQ":
        asc.compare(c, a, b, asc.CMPMODE.EQ, n)
    elif MODE == "LE":
        asc.compare(c, a, b, asc.CMPMODE.LE, n)
    elif MODE == "GE":
        asc.compare(c, a, b, asc.CMPMODE.GE, n)
    else:
        asc.compare(dst=c, src0=a, src1=b, cmp_mode=asc.CMPMODE.NE, count=n)


@asc.kernel
def compare_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, n: int,
                   scalar, MODE: asc.ConstExpr[str], SCALAR: asc.ConstExpr[bool]):
    """z (uint8, n / 8 bytes) = compare(x, y | scalar) over n elements."""
    xg = asc.GlobalTensor()
    yg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    yg.set_global_buffer(y, n)
    zg.set_global_buffer(z, n // 8)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    b = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, SRC1, n)
    c = asc.LocalTensor(asc.uint8, asc.TPosition.VECOUT, OUT, n // 8)
    asc.data_copy(a, xg, n)
    asc.data_copy(b, yg, n)
    compare_by_name(c, a, b, scalar, n, MODE, SCALAR)
    asc.data_copy(zg, c, n // 8)


@asc.kernel
def compare_masked_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress,
                          nx: int, nz: int, scalar, mask, repeat: int, s0_blk: int, s1_blk: int,
                          s0_rep: int, s1_rep: int, SCALAR: asc.ConstExpr[bool]):
    """compare (LT) / compare_scalar (GE) masked forms over UB images of x, y and z."""
    xg = asc.GlobalTensor()
    yg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, nx)
    yg.set_global_buffer(y, nx)
    zg.set_global_buffer(z, nz)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, nx)
    b = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, SRC1, nx)
    c = asc.LocalTensor(asc.uint8, asc.TPosition.VECOUT, OUT, nz)
    asc.data_copy(a, xg, nx)
    asc.data_copy(b, yg, nx)
    asc.data_copy(c, zg, nz)
    if SCALAR:
        asc.compare_scalar(c, a, scalar, asc.CMPMODE.GE, mask, repeat,
                           asc.UnaryRepeatParams(1, s0_blk, 8, s0_rep))
    else:
        asc.compare(c, a, b, asc.CMPMODE.LT, mask, repeat,
                    asc.BinaryRepeatParams(1, s0_blk, s1_blk, 8, s0_rep, s1_rep))
    asc.data_copy(zg, c, nz)


@asc.kernel
def select_by_name(c, sel, a, b, s, n, MODE):
    if MODE == "VSEL_CMPMASK_SPR":
        asc.select(c, sel, a, b, asc.SELMODE.VSEL_CMPMASK_SPR, n)
    elif MODE == "VSEL_TENSOR_TENSOR_MODE":
        asc.select(c, sel, a, b, asc.SELMODE.VSEL_TENSOR_TENSOR_MODE, n)
    else:
        asc.select(c, sel, a, s, sel_mode=asc.SelMode.VSEL_TENSOR_SCALAR_MODE, count=n)


@asc.kernel
def select_masked_by_name(c, sel, a, b, s, mask, repeat, params, MODE):
    if MODE == "VSEL_CMPMASK_SPR":
        asc.select(c, sel, a, b, asc.SELMODE.VSEL_CMPMASK_SPR, mask, repeat, params)
    elif MODE == "VSEL_TENSOR_TENSOR_MODE":
        asc.select(c, sel, a, b, asc.SELMODE.VSEL_TENSOR_TENSOR_MODE, mask, repeat, params)
    else:
        asc.select(c, sel, a, s, asc.SELMODE.VSEL_TENSOR_SCALAR_MODE, mask, repeat, params)


@asc.kernel
def select_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, m: asc.GlobalAddress,
                  z: asc.GlobalAddress, nx: int, nm: int, nz: int, scalar, count: int, m0, m1,
                  repeat: int, d_blk: int, s0_blk: int, s1_blk: int, d_rep: int, s0_rep: int,
                  s1_rep: int, MODE: asc.ConstExpr[str], MASKED: asc.ConstExpr[int]):
    """z = select(m, x, y | scalar): count form (MASKED 0) or masked form with a contiguous
    mask (1) or a bit mask of MASKED - 1 words; z's untouched elements come back."""
    xg = asc.GlobalTensor()
    yg = asc.GlobalTensor()
    mg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, nx)
    yg.set_global_buffer(y, nx)
    mg.set_global_buffer(m, nm)
    zg.set_global_buffer(z, nz)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, nx)
    b = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, SRC1, nx)
    sel = asc.LocalTensor(m.dtype, asc.TPosition.VECIN, SEL, nm)
    c = asc.LocalTensor(z.dtype, asc.TPosition.VECOUT, OUT, nz)
    asc.data_copy(a, xg, nx)
    asc.data_copy(b, yg, nx)
    asc.data_copy(sel, mg, nm)
    asc.data_copy(c, zg, nz)
    params = asc.BinaryRepeatParams(d_blk, s0_blk, s1_blk, d_rep, s0_rep, s1_rep)
    if MASKED == 0:
        select_by_name(c, sel, a, b, scalar, count, MODE)
    elif MASKED == 1:
        select_masked_by_name(c, sel, a, b, scalar, m0, repeat, params, MODE)
    elif MASKED == 2:
        select_masked_by_name(c, sel, a, b, scalar, [m0], repeat, params, MODE)
    else:
        select_masked_by_name(c, sel, a, b, scalar, [m0, m1], repeat, params, MODE)
    asc.data_copy(zg, c, nz)


@asc.kernel
def cast_tail_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, nx: int, nz: int, count: int,
                     MODE: asc.ConstExpr[str]):
    """cast count elements (any count) over UB images of x and z."""
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, nx)
    zg.set_global_buffer(z, nz)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, nx)
    c = asc.LocalTensor(z.dtype, asc.TPosition.VECOUT, OUT, nz)
    asc.data_copy(a, xg, nx)
    asc.data_copy(c, zg, nz)
    cast_count(c, a, count, MODE)
    asc.data_copy(zg, c, nz)


@asc.kernel
def cast_preset_mask_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int, hi, lo):
    """float32 -> float16 (RINT), two repeats with a mask set beforehand (is_set_mask=False)."""
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    zg.set_global_buffer(z, n)
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, n)
    c = asc.LocalTensor(asc.float16, asc.TPosition.VECOUT, OUT, n)
    asc.data_copy(a, xg, n)
    asc.data_copy(c, zg, n)
    asc.set_vector_mask(hi, lo, dtype=asc.float32)
    asc.cast(c, a, asc.RoundMode.CAST_RINT, 0, 2, asc.UnaryRepeatParams(1, 1, 4, 8),
             is_set_mask=False)
    asc.reset_mask()
    asc.data_copy(zg, c, n)
