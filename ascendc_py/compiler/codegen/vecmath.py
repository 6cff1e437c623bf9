"""Branch-free float32 ``exp`` and ``log`` in LLVM IR, bit for bit glibc's ``expf``/``logf``.

The vector ``exp`` and ``ln`` ops compute, for every float32 element, exactly the float that
glibc's ``expf`` and ``logf`` (2.28 and later, x86_64, the FMA build that glibc's ifunc picks
on every CPU with FMA and AVX2) return; checked over all 2^32 inputs each
(``tests/ops/check_libm_exhaustive.py``). Each is straight-line IR for one element, without
branches or calls, so LLVM's loop vectoriser turns an element loop (and a fused loop) into
vector code, the tables read with gathers; a call to the C library kept those loops scalar.

Why these bits on every host. ``llvm.fma`` is exact everywhere (a library call where the CPU
has no FMA), so the functions here do not depend on the host: the ops are defined as these
algorithms. On the host they were written for that is also its libm, bit for bit; glibc's own
non-FMA build of expf differs from its FMA build on 2 of the 2^32 inputs (0x4202422f and
0xc27c65d9, by one ulp), other C libraries may differ more. Before, the result was whatever
the host's libm returned, and on glibc even which symbol version a kernel's object bound to:
``logf@GLIBC_2.2.5`` (fused loops, linked without a version) returns +NaN for negative inputs
where ``logf`` (the runtime library) returns the default NaN.

exp (a table of 2^(j/32) and a cubic, in double precision):

* ``z = x * 32/ln2``; ``k = round(z)`` through the 1.5 * 2^52 shift trick, ``r = z - k``,
  ``|r| <= 1/2``;
* ``s = 2^(k/32)``: the table entry ``T[k mod 32]`` (the bits of 2^(j/32) minus ``j << 47``)
  plus ``k << 47`` in the exponent field;
* ``exp(x) = s * (C0*r^3 + C1*r^2 + C2*r + 1)``, rounded once to float32.

Which operations are fused multiply-adds decides the last bit for some inputs; they are the
ones of glibc's FMA build (read from its machine code): ``z + shift`` and ``z - k`` are fused
with the product ``x * 32/ln2``, and the three polynomial steps are fused (``r*r`` and ``y*s``
are not). Special inputs are selected after the main path, as glibc's slow path returns them:
NaN gives ``x + x`` (quieted), ``x > 0x1.62e42ep6`` +inf, ``x < -0x1.9fe368p6`` +0, ``x <
-0x1.9d1d9ep6`` the smallest subnormal 2^-149; -inf is below every bound (+0), +inf above
(+inf). errno is never set.

log: see ``log_f32``.
"""
from __future__ import annotations

import functools
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
    m = lo + (1 if (2 * lo + 1) ** _N < target << _N else 0)    # < 2^53: 2^(31/32) < 2 - 2^-52
    return (1023 << 52) | (m - (1 << 52))


@functools.lru_cache(maxsize=1)
def exp_table() -> tuple[int, ...]:
    """T[j] = bits(2^(j/32)) - (j << 47): adding ``k << 47`` for any k with k mod 32 == j gives
    the bits of 2^(k/32) (the exponent field absorbs k div 32). Computed when a kernel first
    needs it (~1.3 ms of big-integer roots, which every compile paid at import: issue 14)."""
    return tuple((_pow2_fraction_bits(j) - (j << (52 - EXP_TABLE_BITS))) % (1 << 64)
                 for j in range(_N))


_TABLE_NAME = "vecmath.expf_table"


def _table(module: L.Module) -> L.GlobalVariable:
    g = module.globals.get(_TABLE_NAME)
    if g is None:
        ty = L.ArrayType(I64, _N)
        g = L.GlobalVariable(module, ty, name=_TABLE_NAME)
        g.initializer = L.Constant(ty, list(exp_table()))
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


# ----------------------------------------------------------------------------- log
#: entries of the (1/c, log c) table: the interval [OFF, 2*OFF) of significands in 16 parts
LOG_TABLE_BITS = 4
#: the bits of 0x1.66p-1: significands from it up to twice it share an exponent k
LOG_OFF = 0x3F330000
#: (1/c, log c) per part: c near the part's centre, 1/c chosen so that ``z/c - 1`` is computed
#: nearly exactly and ``log c`` rounded to double has an error below 2^-66 (glibc's data)
LOG_TABLE = tuple((float.fromhex(a), float.fromhex(b)) for a, b in (
    ("0x1.661ec79f8f3bep+0", "-0x1.57bf7808caadep-2"),
    ("0x1.571ed4aaf883dp+0", "-0x1.2bef0a7c06ddbp-2"),
    ("0x1.49539f0f010b0p+0", "-0x1.01eae7f513a67p-2"),
    ("0x1.3c995b0b80385p+0", "-0x1.b31d8a68224e9p-3"),
    ("0x1.30d190c8864a5p+0", "-0x1.6574f0ac07758p-3"),
    ("0x1.25e227b0b8ea0p+0", "-0x1.1aa2bc79c8100p-3"),
    ("0x1.1bb4a4a1a343fp+0", "-0x1.a4e76ce8c0e5ep-4"),
    ("0x1.12358f08ae5bap+0", "-0x1.1973c5a611cccp-4"),
    ("0x1.0953f419900a7p+0", "-0x1.252f438e10c1ep-5"),
    ("0x1.0000000000000p+0", "0x0.0p+0"),
    ("0x1.e608cfd9a47acp-1", "0x1.aa5aa5df25984p-5"),
    ("0x1.ca4b31f026aa0p-1", "0x1.c5e53aa362eb4p-4"),
    ("0x1.b2036576afce6p-1", "0x1.526e57720db08p-3"),
    ("0x1.9c2d163a1aa2dp-1", "0x1.bc2860d224770p-3"),
    ("0x1.886e6037841edp-1", "0x1.1058bc8a07ee1p-2"),
    ("0x1.767dcf5534862p-1", "0x1.4043057b6ee09p-2"),
))
#: ln 2 rounded to double
LN2 = float.fromhex("0x1.62e42fefa39efp-1")
#: log1p(r) ~ r + A2*r^2 + A1*r^3 + A0*r^4 on the parts' |r| < 0x1.23p-5 (glibc's minimax)
LOG_POLY = (float.fromhex("-0x1.00ea348b88334p-2"), float.fromhex("0x1.5575b0be00b6ap-2"),
            float.fromhex("-0x1.ffffef20a4123p-2"))
_LOG_TABLE_NAME = "vecmath.logf_table"


def _log_table(module: L.Module) -> L.GlobalVariable:
    g = module.globals.get(_LOG_TABLE_NAME)
    if g is None:
        ty = L.ArrayType(F64, 2 * len(LOG_TABLE))
        g = L.GlobalVariable(module, ty, name=_LOG_TABLE_NAME)
        g.initializer = L.Constant(ty, [v for pair in LOG_TABLE for v in pair])
        g.global_constant = True
        g.linkage = "internal"
        g.align = 64
    return g


def _i32(v: int) -> L.Constant:
    return L.Constant(I32, v)


def log_f32(b: L.IRBuilder, module: L.Module, x: L.Value) -> L.Value:
    """Natural log of a float32 value, bit for bit glibc's ``logf`` (2.28+, FMA build); no
    branches.

    x = 2^k * z with z in [0x1.66p-1, 0x1.66p0) (a positive subnormal x is scaled by 2^23
    first), z in part i of 16 with (1/c, log c) from the table:
    ``log x = log1p(z/c - 1) + log c + k*ln2``, log1p by a quartic in r = z/c - 1. Fused as in
    glibc's FMA build: ``r = z*(1/c) - 1``, ``log c + k*ln2``, the two polynomial steps and
    the final ``r^2*p + (r + log c + k*ln2)``; ``r*r`` and that last sum are not. Special
    inputs: ±0 give -inf, +inf itself, negative numbers (-inf too) and NaNs ``(x-x)/(x-x)``
    (the default NaN, a NaN input quieted). (x = 1 gives +0 through the main path: table
    entry 9 is exactly (1, 0).)"""
    ix0 = b.bitcast(x, I32)
    subnormal = b.icmp_unsigned("<", b.sub(ix0, _i32(1)), _i32(0x7FFFFF))
    scaled = b.sub(b.bitcast(b.fmul(x, _f(2.0 ** 23)), I32), _i32(23 << 23))
    ix = b.select(subnormal, scaled, ix0)
    tmp = b.sub(ix, _i32(LOG_OFF))
    i = b.and_(b.lshr(tmp, _i32(23 - LOG_TABLE_BITS)), _i32(len(LOG_TABLE) - 1))
    k = b.ashr(tmp, _i32(23))
    iz = b.sub(ix, b.and_(tmp, _i32(0xFF800000)))
    table = _log_table(module)
    at = b.shl(b.zext(i, I64), L.Constant(I64, 1))
    invc = b.load(b.gep(table, [L.Constant(I64, 0), at], inbounds=True), typ=F64)
    at1 = b.or_(at, L.Constant(I64, 1))
    logc = b.load(b.gep(table, [L.Constant(I64, 0), at1], inbounds=True), typ=F64)
    z = b.fpext(b.bitcast(iz, F32), F64)
    r = _fma(b, module, z, invc, _d(-1.0))
    y0 = _fma(b, module, b.sitofp(k, F64), _d(LN2), logc)
    a0, a1, a2 = (_d(c) for c in LOG_POLY)
    r2 = b.fmul(r, r)
    y = _fma(b, module, r, a1, a2)
    y = _fma(b, module, r2, a0, y)
    res = b.fptrunc(_fma(b, module, r2, y, b.fadd(r, y0)), F32)
    zero = b.icmp_unsigned("==", b.shl(ix0, _i32(1)), _i32(0))
    negative = b.icmp_signed("<", ix0, _i32(0))
    invalid = b.and_(b.not_(zero), b.or_(negative, b.fcmp_unordered("uno", x, x)))
    diff = b.fsub(x, x)
    res = b.select(b.icmp_unsigned("==", ix0, _i32(0x7F800000)), x, res)
    res = b.select(invalid, b.fdiv(diff, diff), res)
    return b.select(zero, _f(-math.inf), res)


#: the float32 math functions of ``ElemBuilder.call_math`` computed here, by name
FLOAT32 = {"exp": exp_f32, "log": log_f32}
