"""LLVM types for kernel data types, and element-level arithmetic (``ElemBuilder``).

float16 is LLVM ``half``: every operation rounds to float16, as the vector unit does.
bfloat16 has no llvmlite type; it is stored as i16 and converted with round-to-nearest-even.
"""
from __future__ import annotations

from llvmlite import ir as L

from ...dsl.types import DataType, bfloat16, bool_, float16, float32, float64
from . import vecmath

I1, I8, I16, I32, I64 = (L.IntType(n) for n in (1, 8, 16, 32, 64))
F16, F32, F64 = L.HalfType(), L.FloatType(), L.DoubleType()
PTR = L.PointerType()


def llvm_type(dt: DataType) -> L.Type:
    """Storage/compute type of a kernel dtype (bfloat16 is i16 bits)."""
    if dt == bool_:
        return I1
    if dt == float16:
        return F16
    if dt == float32:
        return F32
    if dt == float64:
        return F64
    if dt == bfloat16:
        return I16
    return L.IntType(dt.bits)


def memory_type(dt: DataType) -> L.Type:
    """How an element is held in memory (bool is one byte)."""
    return I8 if dt == bool_ else llvm_type(dt)


def const(dt: DataType, value) -> L.Constant:
    if dt == bfloat16:
        import numpy as np
        bits = int(np.array([value], np.float32).view(np.uint32)[0])
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
        return L.Constant(I16, bits & 0xFFFF)
    if dt.is_float:
        return L.Constant(llvm_type(dt), float(value))
    if dt == bool_:
        return L.Constant(I1, int(bool(value)))
    return L.Constant(llvm_type(dt), int(value))


def counted_loop(b: L.IRBuilder, count, body, name: str = "loop") -> None:
    """Emit ``for i in range(count): body(i)`` at the builder's position (``count`` an i64
    value; nothing runs when it is <= 0); the builder is left after the loop."""
    fn = b.block.function
    before = b.block
    loop = fn.append_basic_block(name)
    after = fn.append_basic_block(name + ".done")
    b.cbranch(b.icmp_signed(">", count, L.Constant(I64, 0)), loop, after)
    b.position_at_end(loop)
    i = b.phi(I64)
    i.add_incoming(L.Constant(I64, 0), before)
    body(i)
    nxt = b.add(i, L.Constant(I64, 1))
    i.add_incoming(nxt, b.block)
    b.cbranch(b.icmp_signed("<", nxt, count), loop, after)
    b.position_at_end(after)


def intrinsic(module: L.Module, name: str, ret: L.Type, args: list[L.Type]) -> L.Function:
    """Declare (once) and return an LLVM intrinsic or libm function."""
    fn = module.globals.get(name)
    if fn is None:
        fn = L.Function(module, L.FunctionType(ret, args), name=name)
    return fn


#: the vector width (bits) the element loops are vectorised for. 256 rather than the full
#: AVX-512 width: on CPUs that split 512-bit operations in two (AMD Zen 4) LLVM's 512-bit
#: float16 loops pair their F16C conversions through vinsertf64x4 and run 5-15 % slower
#: (measured, ns/element over 4096: add float16 0.102 vs 0.088, mul 0.085 vs 0.079, relu
#: 0.134 vs 0.115); float32 loops are as fast either way.
#: LLVM already prefers 256 bits on Intel's AVX-512 CPUs.
ELEMENT_LOOP_VECTOR_BITS = 256


def prefer_vector_width(fn: L.Function, bits: int = ELEMENT_LOOP_VECTOR_BITS) -> None:
    """Ask LLVM's vectoriser to use ``bits``-wide vectors in ``fn`` (the string function
    attribute ``prefer-vector-width``, which llvmlite's attribute list does not know; only the
    generated code's speed depends on it, never a result)."""
    set.add(fn.attributes, f'"prefer-vector-width"="{bits}"')


def host_is_amd() -> bool:
    """Whether the host CPU is AMD's (``vendor_id`` AuthenticAMD in /proc/cpuinfo; False where
    there is none), read once per process. Only the speed of generated loops depends on it."""
    global _amd
    if _amd is None:
        _amd = False
        try:
            with open("/proc/cpuinfo") as f:
                for line in f:
                    if line.startswith("vendor_id"):
                        _amd = "AuthenticAMD" in line
                        break
        except OSError:
            pass
    return _amd


_amd = None


def tune_fused_loop(fn: L.Function) -> None:
    """Vectoriser settings of a fused element loop (``fusion.py``): ``ELEMENT_LOOP_VECTOR_BITS``
    wide, with LLVM's usual interleaving and vector epilogue; on AMD hosts ``optsize`` too
    (one mask-predicated vector loop, no interleaving or epilogue). Measured per 2048 elements
    of samples/sepia.py's run (5 instructions): on a Zen 4 EPYC optsize made it faster (486 vs
    562 ns float32); on an Intel AVX-512 (AVX512-FP16) Xeon it made it twice as slow (375 vs
    180 ns float32, 250 vs 80-110 ns float16), its per-iteration mask costing more than the
    arithmetic; 512-bit vectors there were no faster (float32 225 ns, float16 81 ns). The torch
    swiglu op's run (muls, exp, adds, div, mul) there: 1.07-1.39 vs 0.82-0.86 ns per element."""
    prefer_vector_width(fn)
    if host_is_amd():
        fn.attributes.add("optsize")


def _suffix(t: L.Type) -> str:
    return {F16: "f16", F32: "f32", F64: "f64"}.get(t) or f"i{t.width}"


def bf16_to_f32(b: L.IRBuilder, v: L.Value) -> L.Value:
    wide = b.shl(b.zext(v, I32), L.Constant(I32, 16))
    return b.bitcast(wide, F32)


def f32_to_bf16(b: L.IRBuilder, v: L.Value) -> L.Value:
    bits = b.bitcast(v, I32)
    lsb = b.and_(b.lshr(bits, L.Constant(I32, 16)), L.Constant(I32, 1))
    rounded = b.add(bits, b.add(L.Constant(I32, 0x7FFF), lsb))
    res = b.trunc(b.lshr(rounded, L.Constant(I32, 16)), I16)
    is_nan = b.fcmp_unordered("uno", v, v)
    return b.select(is_nan, L.Constant(I16, 0x7FC0), res)


def convert(b: L.IRBuilder, v: L.Value, src: DataType, dst: DataType) -> L.Value:
    """Convert a value between kernel dtypes (C semantics; float→int truncates)."""
    if src == dst:
        return v
    if src == bfloat16:
        return convert(b, bf16_to_f32(b, v), float32, dst)
    if dst == bfloat16:
        return f32_to_bf16(b, convert(b, v, src, float32))
    st, dt_ = llvm_type(src), llvm_type(dst)
    if dst == bool_:
        if src.is_float:
            return b.fcmp_unordered("une", v, L.Constant(st, 0.0))
        return b.icmp_unsigned("!=", v, L.Constant(st, 0))
    if src == bool_:
        v = b.zext(v, I32)
        return convert(b, v, DataType("int32", 32, "int"), dst)
    if src.is_float and dst.is_float:
        if src.bits < dst.bits:
            return b.fpext(v, dt_)
        return b.fptrunc(v, dt_)
    if src.is_float:
        # saturating conversion (as Ascend's conversions saturate): out-of-range values clamp
        # to the type's limits and NaN gives 0, never an undefined value
        name = "fptosi" if dst.is_signed else "fptoui"
        fn = intrinsic(b.module, f"llvm.{name}.sat.{_suffix(dt_)}.{_suffix(st)}", dt_, [st])
        return b.call(fn, [v])
    if dst.is_float:
        return b.sitofp(v, dt_) if src.is_signed else b.uitofp(v, dt_)
    if src.bits < dst.bits:
        return b.sext(v, dt_) if src.is_signed else b.zext(v, dt_)
    if src.bits > dst.bits:
        return b.trunc(v, dt_)
    return v


def _int_range(dt: DataType) -> tuple[int, int]:
    if dt.is_signed:
        return -(1 << (dt.bits - 1)), (1 << (dt.bits - 1)) - 1
    return 0, (1 << dt.bits) - 1


class ElemBuilder:
    """Element arithmetic for one dtype, used by the op registry's ``elem`` functions."""

    def __init__(self, b: L.IRBuilder, module: L.Module, dtype: DataType):
        self.b, self.module, self.dtype = b, module, dtype
        self.t = llvm_type(dtype)
        self.is_float = dtype.is_float

    def _intr(self, name: str, *args):
        t = args[0].type
        fn = intrinsic(self.module, f"llvm.{name}.{_suffix(t)}", t, [a.type for a in args])
        return self.b.call(fn, args)

    def add(self, a, c):
        return self.b.fadd(a, c) if self.is_float else self.b.add(a, c)

    def sub(self, a, c):
        return self.b.fsub(a, c) if self.is_float else self.b.sub(a, c)

    def mul(self, a, c):
        return self.b.fmul(a, c) if self.is_float else self.b.mul(a, c)

    def div(self, a, c):
        return self.b.fdiv(a, c)

    def max(self, a, c):
        if self.is_float:
            return self._intr("maximum", a, c)
        return self._intr("smax" if self.dtype.is_signed else "umax", a, c)

    def min(self, a, c):
        if self.is_float:
            return self._intr("minimum", a, c)
        return self._intr("smin" if self.dtype.is_signed else "umin", a, c)

    def abs(self, a):
        if self.is_float:
            return self._intr("fabs", a)
        return self._intr("abs", a, L.Constant(I1, 0))

    def one(self, a):
        return L.Constant(a.type, 1.0 if self.is_float else 1)

    def axpy(self, d, a, s):
        """d + a * s; float16 is computed in float32 and rounded once (as the reference)."""
        if d.type == F16 and a.type == F16:
            wide = [self.b.fpext(v, F32) if v.type == F16 else v for v in (d, a, s)]
            res = self.b.fadd(wide[0], self.b.fmul(wide[1], wide[2]))
            return self.b.fptrunc(res, F16)
        return self.add(d, self.mul(a, s))

    def rsqrt(self, a):
        """1 / sqrt(a), computed in float32 for float16 and rounded once."""
        wide = self.b.fpext(a, F32) if a.type == F16 else a
        root = self._intr("sqrt", wide)
        res = self.b.fdiv(L.Constant(wide.type, 1.0), root)
        return self.b.fptrunc(res, F16) if a.type == F16 else res

    def shift(self, a, count, left: bool):
        """Shift by a scalar count; counts outside [0, bits) give 0 (or the sign, right)."""
        width = L.Constant(a.type, a.type.width)
        big = self.b.icmp_unsigned(">=", count, width)
        safe = self.b.select(big, L.Constant(a.type, 0), count)
        if left:
            return self.b.select(big, L.Constant(a.type, 0), self.b.shl(a, safe))
        if self.dtype.is_signed:
            sign = self.b.ashr(a, L.Constant(a.type, a.type.width - 1))
            return self.b.select(big, sign, self.b.ashr(a, safe))
        return self.b.select(big, L.Constant(a.type, 0), self.b.lshr(a, safe))

    def zero(self, a):
        return L.Constant(a.type, 0.0 if self.is_float else 0)

    def ge_zero(self, a):
        if self.is_float:
            return self.b.fcmp_ordered(">=", a, self.zero(a))
        return self.b.icmp_signed(">=", a, self.zero(a))

    def select(self, cond, a, c):
        return self.b.select(cond, a, c)

    def call_math(self, name: str, a):
        """exp/log/sqrt… computed in float32 for float16 inputs and rounded back. float32 exp
        and log are ``vecmath``'s (glibc's expf and logf, inline and vectorisable); sqrt is
        LLVM's intrinsic (an exact IEEE operation)."""
        if a.type == F16:
            wide = self.b.fpext(a, F32)
            return self.b.fptrunc(self.call_math(name, wide), F16)
        if a.type == F32 and name in vecmath.FLOAT32:
            return vecmath.FLOAT32[name](self.b, self.module, a)
        return self._intr(name, a)
