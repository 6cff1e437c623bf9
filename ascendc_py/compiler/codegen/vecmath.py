"""Branch-free float32 ``exp`` in LLVM IR, bit for bit the C library's ``expf`` of glibc 2.28+.

The vector ``exp`` op computes, for every float32 element, exactly the float that glibc's
``expf`` (2.28 and later, x86_64 with FMA, the variant its ifunc picks on every CPU since
Haswell) returns; this was checked over all 2^32 inputs (see the README). It is written here as
straight-line IR of one element, without branches or calls, so that LLVM's loop vectoriser turns
an element loop into vector code (the 32-entry table is read with a gather), where a call to
``expf`` keeps the loop scalar and costs a call per element.

The algorithm (the one glibc documents: a table of 2^(i/32) and a cubic polynomial, evaluated
in double precision):

* ``z = x * 32/ln2``; ``k = round(z)`` through the 1.5 * 2^52 shift trick, ``r = z - k``,
  ``|r| <= 1/2``;
* ``s = 2^(k/32)``: the table entry ``T[k mod 32]`` (the bits of 2^(j/32) minus ``j << 47``)
  plus ``k << 47`` in the exponent field;
* ``exp(x) = s * (C0*r^3 + C1*r^2 + C2*r + 1)``, rounded once to float32.

Which operations are fused multiply-adds decides the last bit for some inputs; they are the
ones of glibc's FMA build: ``z + shift`` and ``z - k`` are fused with the product
``x * 32/ln2``, and the three polynomial steps are fused (``r*r`` and ``y*s`` are not).
``llvm.fma`` is exact on every host (a library call where the CPU has no FMA), so these bits do
not depend on the host: the op is defined as this algorithm everywhere.

Special inputs are selected after the main path, as glibc's slow path returns them: NaN gives
``x + x`` (quieted), ``x > 0x1.62e42ep6`` (ln of FLT_MAX rounded up) +inf, ``x < -0x1.9fe368p6``
(below ln 2^-150) +0, ``x < -0x1.9d1d9ep6`` the smallest subnormal 2^-149; -inf is below every
bound (+0), +inf above (+inf). errno is never set.
"""
from __future__ import annotations

import math

from llvmlite import ir as L

#: entries of the 2^(j/32) table
EXP_TABLE_BITS = 5
_N = 1 << EXP_TABLE_BITS

#: 32/ln2 rounded to double (0x1.71547652b82fep+0 * 32)
INV_LN2_N = float.fromhex("0x1.71547652b82fep+5")
#: 1.5 * 2^52: adding it rounds a double of magnitude < 2^51 to an integer (ties to even)
SHIFT = float.fromhex("0x1.8p+52")
#: the cubic's coefficients for r in units of 1/32 (glibc's minimax ones for exp2 on
#: [-1/64, 1/64], scaled by 32^-3, 32^-2 and 32^-1): C0*r^3 + C1*r^2 + C2*r + 1
POLY = (float.fromhex("0x1.c6af84b912394p-20"), float.fromhex("0x1.ebfce50fac4f3p-13"),
        float.fromhex("0x1.62e42ff0c52d6p-6"))
#: the largest float32 whose exp is finite (the next one is above ln FLT_MAX): above it, +inf
OVERFLOW_BOUND = float.fromhex("0x1.62e42ep6")
#: below (under ln 2^-150): +0; from there up to MAY_UNDERFLOW_BOUND (ln 2^-149): 2^-149
UNDERFLOW_BOUND = float.fromhex("-0x1.9fe368p6")
MAY_UNDERFLOW_BOUND = float.fromhex("-0x1.9d1d9ep6")
SMALLEST_SUBNORMAL = 2.0 ** -149

I32, I64 = L.IntType(32), L.IntType(64)
F32, F64 = L.FloatType(), L.DoubleType()


def _pow2_fraction_bits(j: int) -> int:
    """The bits of 2^(j/32) rounded to the nearest double (0 <= j < 32), in integers only:
    the 53-bit significand m is the 32nd root of 2^(52*32 + j), rounded up when
    (m + 1/2)^32 < 2^(52*32 + j) (an exact tie cannot happen: 2^(j/32) is irrational)."""
    target = 1 << (52 * _N + j)
    lo, hi = 1 << 52, 1 << 53                 # 2^52 <= m < 2^53
    while hi - lo > 1:                        # floor of the 32nd root, by bisection
        mid = (lo + hi) // 2
        if mid ** _N <= target:
            lo = mid
        else:
            hi = mid
    m = lo + (1 if (2 * lo + 1) ** _N < target << _N else 0)
    return (1023 << 52) | (m - (1 << 52)) if m < 1 << 53 else 1024 << 52


def exp_table() -> tuple[int, ...]:
    """T[j] = bits(2^(j/32)) - (j << 47): adding ``k << 47`` for any k with k mod 32 == j gives
    the bits of 2^(k/32) (the exponent field absorbs k div 32)."""
    return tuple((_pow2_fraction_bits(j) - (j << (52 - EXP_TABLE_BITS))) % (1 << 64)
                 for j in range(_N))


_EXP_TABLE = exp_table()
_TABLE_NAME = "vecmath.expf_table"


def _table(module: L.Module) -> L.GlobalVariable:
    g = module.globals.get(_TABLE_NAME)
    if g is None:
        ty = L.ArrayType(I64, _N)
        g = L.GlobalVariable(module, ty, name=_TABLE_NAME)
        g.initializer = L.Constant(ty, list(_EXP_TABLE))
        g.global_constant = True
        g.linkage = "internal"
        g.align = 64
    return g


def _fma(b: L.IRBuilder, module: L.Module, x, y, z):
    fn = module.globals.get("llvm.fma.f64")
    if fn is None:
        fn = L.Function(module, L.FunctionType(F64, [F64, F64, F64]), name="llvm.fma.f64")
    return b.call(fn, [x, y, z])


def _d(v: float) -> L.Constant:
    return L.Constant(F64, v)


def _f(v: float) -> L.Constant:
    return L.Constant(F32, v)


def exp_f32(b: L.IRBuilder, module: L.Module, x: L.Value) -> L.Value:
    """e ** x of a float32 value, bit for bit glibc's ``expf`` (FMA build); no branches."""
    xd = b.fpext(x, F64)
    inv = _d(INV_LN2_N)
    shifted = _fma(b, module, inv, xd, _d(SHIFT))       # round(x*32/ln2) + SHIFT, one rounding
    ki = b.bitcast(shifted, I64)
    kd = b.fsub(shifted, _d(SHIFT))
    r = _fma(b, module, inv, xd, b.fneg(kd))            # x*32/ln2 - k, one rounding
    j = b.and_(ki, L.Constant(I64, _N - 1))
    entry = b.load(b.gep(_table(module), [L.Constant(I64, 0), j], inbounds=True), typ=I64)
    s = b.bitcast(b.add(entry, b.shl(ki, L.Constant(I64, 52 - EXP_TABLE_BITS))), F64)
    c0, c1, c2 = (_d(c) for c in POLY)
    z = _fma(b, module, r, c0, c1)
    r2 = b.fmul(r, r)
    y = _fma(b, module, r, c2, _d(1.0))
    y = _fma(b, module, z, r2, y)
    res = b.fptrunc(b.fmul(y, s), F32)
    res = b.select(b.fcmp_ordered("<", x, _f(MAY_UNDERFLOW_BOUND)), _f(SMALLEST_SUBNORMAL), res)
    res = b.select(b.fcmp_ordered("<", x, _f(UNDERFLOW_BOUND)), _f(0.0), res)
    res = b.select(b.fcmp_ordered(">", x, _f(OVERFLOW_BOUND)), _f(math.inf), res)
    return b.select(b.fcmp_unordered("uno", x, x), b.fadd(x, x), res)
