"""Codegen of cast, compare, compare_scalar, select: lowerings (``core.lowering``) and their
runtime-library functions (``runtime_lib.library_definer``). Imported by ``intrinsics.py``.

Library functions (defined once by ``define_library``; kernels declare and call them):
* element loops, vectorised at O3 (the mode is a run-time argument: every mode the pair allows
  is computed branch-free and one is selected): ``asc_cvt_<src>_<dst>(ptr dst, ptr src, i64 n,
  i64 mode)``, ``asc_cmpl_<T>[s](ptr dst, ptr src0, ptr src1 | T scalar, i64 nbytes, i64 mode)``
  (one output byte = 8 comparisons), ``asc_sell_<T>[s](ptr dst, ptr sel, ptr src0, ptr src1 | T
  scalar, i64 n, i64 bit_base, i64 wrap)`` (selection bit of element i = (bit_base + i) & wrap);
* instructions ``i64 (ptr ctx, i64 …, i64 site)``: the count and the masked form of each
  (src, dst) cast pair, compare, compare_scalar and select per dtype. They check the operands,
  run the loop (whole contiguous ranges at once; lane by lane when a mask or strides are in
  play) and call the timing model. They are ``optnone``: the work is in the loops, and
  optimising the wrappers would only add to the library's build time.

Conversions are exact and written in integer arithmetic where the hardware rounds (see
``ops/convert.py`` for the semantics): float -> half/bfloat16 truncates the significand and
rounds up from the remainder; int -> float rounds the integer to the target precision the same
way; float -> int rounds with llvm.roundeven/floor/ceil/round/trunc and converts with the
saturating llvm.fpto[su]i.sat (NaN -> 0).
"""
from __future__ import annotations

from llvmlite import ir as L

from ...dsl.types import (CMPMODE, SELMODE, DataType, Memory, PipeID, RoundMode, bfloat16,
                          float16, float32)
from ...simulator import abi
from ...simulator import timing_params as TP
from .. import ir
from ..ops import REGISTRY
from ..ops.convert import CAST_TABLE, COMPARE_TYPES, SELECT_TYPES, compare_modes
from . import runtime_lib
from .core import Codegen, FnBuilder, lowering
from .footprint import check_strides, lane_span, operand_end
from .intrinsics import call_checked
from .rtfuncs import call_rt, call_tm, counted, lanes_mask
from .types import F32, I1, I8, I16, I32, I64, PTR, bf16_to_f32, intrinsic, memory_type

E = abi.ErrorCode
R = RoundMode
UB = int(Memory.UB)

CAST_PARAMS = ("dst", "src", "mode", "count", "site")
CAST_MASKED_PARAMS = ("dst", "src", "mode", "is_set", "kind", "lo", "hi", "repeat", "dst_blk",
                      "src_blk", "dst_rep", "src_rep", "site")
CMP_PARAMS = ("dst", "src0", "src1", "scalar", "mode", "count", "site")
CMP_MASKED_PARAMS = ("dst", "src0", "src1", "scalar", "mode", "repeat", "dst_blk", "src0_blk",
                     "src1_blk", "dst_rep", "src0_rep", "src1_rep", "site")
SEL_PARAMS = ("dst", "sel", "src0", "src1", "scalar", "mode", "count", "site")
SEL_MASKED_PARAMS = ("dst", "sel", "src0", "src1", "scalar", "mode", "is_set", "kind", "lo",
                     "hi", "repeat", "dst_blk", "src0_blk", "src1_blk", "dst_rep", "src0_rep",
                     "src1_rep", "site")


def _signature(params: tuple[str, ...], dtype: DataType | None = None) -> L.FunctionType:
    return L.FunctionType(I64, [PTR] + [memory_type(dtype) if p == "scalar" else I64
                                        for p in params])


def cast_name(src: DataType, dst: DataType, masked: bool) -> str:
    return f"asc_cast{'m' if masked else ''}_{src.name}_{dst.name}"


def compare_name(op: str, dtype: DataType, masked: bool) -> str:
    short = {"compare": "cmp", "compare_scalar": "cmps", "select": "sel"}[op]
    return f"asc_{short}{'m' if masked else ''}_{dtype.name}"


def _declare(module: L.Module, name: str, fnty: L.FunctionType) -> L.Function:
    fn = module.globals.get(name)
    if fn is None:
        fn = L.Function(module, fnty, name=name)
    return fn


# ============================================================================= element code
def _c32(v: int) -> L.Constant:
    return L.Constant(I32, v)


def _c64(v: int) -> L.Constant:
    return L.Constant(I64, v)


def _by_mode(b: L.IRBuilder, mode, values: dict) -> L.Value:
    """``values[mode]`` for the run-time i64 ``mode`` (keys are the modes the loop supports;
    the compiler passes no other)."""
    keys = list(values)
    result = values[keys[-1]]
    for key in reversed(keys[:-1]):
        if values[key] is not result:
            result = b.select(b.icmp_signed("==", mode, L.Constant(I64, int(key))),
                              values[key], result)
    return result


def _rounded(b: L.IRBuilder, mode: RoundMode, t, rem, half, neg) -> L.Value:
    """The truncated magnitude ``t`` rounded with the static ``mode``, given the dropped bits
    ``rem``, the half-ulp value ``half`` and the sign."""
    inexact = b.icmp_unsigned("!=", rem, L.Constant(rem.type, 0))
    if mode == R.CAST_ODD:
        return b.or_(t, b.zext(inexact, t.type))
    if mode in (R.CAST_RINT, R.CAST_NONE):
        odd = b.trunc(b.and_(t, L.Constant(t.type, 1)), I1)
        tie = b.and_(b.icmp_unsigned("==", rem, half), odd)
        up = b.and_(inexact, b.or_(b.icmp_unsigned(">", rem, half), tie))
    elif mode == R.CAST_ROUND:
        up = b.and_(inexact, b.icmp_unsigned(">=", rem, half))
    elif mode == R.CAST_FLOOR:
        up = b.and_(inexact, neg)
    elif mode == R.CAST_CEIL:
        up = b.and_(inexact, b.xor(neg, L.Constant(I1, 1)))
    else:  # TRUNC
        return t
    return b.add(t, b.zext(up, t.type))


def _apply_rounding(b: L.IRBuilder, modes, mode, t, rem, half, neg) -> L.Value:
    cache: dict = {}
    values = {}
    for m in modes:
        key = R.CAST_RINT if m == R.CAST_NONE else m
        if key not in cache:
            cache[key] = _rounded(b, key, t, rem, half, neg)
        values[m] = cache[key]
    return _by_mode(b, mode, values)


def f32_to_narrow_bits(b: L.IRBuilder, x: L.Value, dst: DataType, modes, mode) -> L.Value:
    """float32 -> float16 or bfloat16 bits (i16), correctly rounded with ``mode``."""
    bits = b.bitcast(x, I32)
    sign = b.lshr(bits, _c32(31))
    neg = b.trunc(sign, I1)
    a = b.and_(bits, _c32(0x7FFFFFFF))
    is_nan = b.icmp_unsigned(">", a, _c32(0x7F800000))
    is_inf = b.icmp_unsigned("==", a, _c32(0x7F800000))
    if dst == bfloat16:
        t, rem, half = b.lshr(a, _c32(16)), b.and_(a, _c32(0xFFFF)), _c32(0x8000)
        inf_bits, nan_bits = 0x7F80, 0x7FC0
    else:
        e = b.lshr(a, _c32(23))
        m = b.and_(a, _c32(0x7FFFFF))
        sub = b.icmp_unsigned("==", e, _c32(0))
        sig = b.select(sub, m, b.or_(m, _c32(0x800000)))
        big_e = b.sub(b.select(sub, _c32(1), e), _c32(127 - 15))  # biased half exponent
        normal = b.icmp_signed(">=", big_e, _c32(1))
        # subnormal half: sig >> (14 - E); shifts of 31 or more leave only sticky bits
        shift = b.select(normal, _c32(13),
                         b.select(b.icmp_signed("<", big_e, _c32(-17)), _c32(31),
                                  b.sub(_c32(14), big_e)))
        base = b.select(normal, b.shl(b.sub(big_e, _c32(1)), _c32(10)), _c32(0))
        t = b.add(base, b.lshr(sig, shift))
        rem = b.and_(sig, b.sub(b.shl(_c32(1), shift), _c32(1)))
        half = b.shl(_c32(1), b.sub(shift, _c32(1)))
        over = b.icmp_signed(">=", big_e, _c32(31))  # |x| >= 65536: above max, not a tie
        t = b.select(over, _c32(0x7BFF), t)
        rem = b.select(over, _c32(0x1001), rem)
        half = b.select(over, _c32(0x1000), half)
        inf_bits, nan_bits = 0x7C00, 0x7E00
    res = _apply_rounding(b, modes, mode, t, rem, half, neg)
    res = b.select(is_nan, _c32(nan_bits), b.select(is_inf, _c32(inf_bits), res))
    return b.trunc(b.or_(res, b.shl(sign, _c32(15))), I16)


def int_to_float(b: L.IRBuilder, module: L.Module, v: L.Value, src: DataType, dst: DataType,
                 modes, mode) -> L.Value:
    """A signed integer rounded to float16/float32 with ``mode`` (exact integer arithmetic)."""
    p = 11 if dst == float16 else 24
    x = b.sext(v, I64) if src.bits < 64 else v
    neg = b.icmp_signed("<", x, _c64(0))
    u = b.select(neg, b.sub(_c64(0), x), x)  # |int64 min| = 2**63 as an unsigned value
    ctlz = intrinsic(module, "llvm.ctlz.i64", I64, [I64, I1])
    n = b.sub(_c64(64), b.call(ctlz, [u, L.Constant(I1, 0)]))
    extra = b.sub(n, _c64(p))
    shift = b.select(b.icmp_signed(">", extra, _c64(0)), extra, _c64(0))
    t = b.lshr(u, shift)
    one = b.shl(_c64(1), shift)
    rem = b.and_(u, b.sub(one, _c64(1)))
    half = b.lshr(one, _c64(1))
    rounded = _apply_rounding(b, modes, mode, t, rem, half, neg)
    f = b.uitofp(b.shl(rounded, shift), memory_type(dst))  # exactly representable
    return b.select(neg, b.fneg(f), f)


_ROUND_FN = {R.CAST_RINT: "roundeven", R.CAST_NONE: "roundeven", R.CAST_FLOOR: "floor",
             R.CAST_CEIL: "ceil", R.CAST_ROUND: "round", R.CAST_TRUNC: "trunc"}


def _round_f32(b: L.IRBuilder, module: L.Module, x: L.Value, modes, mode) -> L.Value:
    """float32 rounded to an integral value (llvm.roundeven/floor/ceil/round/trunc)."""
    values = {}
    calls: dict = {}
    for m in modes:
        name = _ROUND_FN[m]
        if name not in calls:
            calls[name] = b.call(intrinsic(module, f"llvm.{name}.f32", F32, [F32]), [x])
        values[m] = calls[name]
    return _by_mode(b, mode, values)


def cast_elem(b: L.IRBuilder, module: L.Module, v: L.Value, src: DataType, dst: DataType,
              modes, mode) -> L.Value:
    """One element of ``asc.cast`` (values in memory representation: bfloat16 as i16 bits);
    ``mode`` is a run-time i64 among ``modes``."""
    dt = memory_type(dst)
    if dst.is_float and src.is_int:
        if src.bits <= 8 or (src.bits == 16 and dst == float32):   # exact
            return b.sitofp(v, dt) if src.is_signed else b.uitofp(v, dt)
        return int_to_float(b, module, v, src, dst, modes, mode)
    if src.is_int and dst.is_int:                # widening (exact) or saturating narrowing
        if dst.bits > src.bits:
            return b.sext(v, dt)
        st = v.type
        lo = L.Constant(st, -(1 << (dst.bits - 1)))
        hi = L.Constant(st, (1 << (dst.bits - 1)) - 1)
        smax = intrinsic(module, f"llvm.smax.i{st.width}", st, [st, st])
        smin = intrinsic(module, f"llvm.smin.i{st.width}", st, [st, st])
        return b.trunc(b.call(smin, [b.call(smax, [v, lo]), hi]), dt)
    x = bf16_to_f32(b, v) if src == bfloat16 else v   # bfloat16 -> float32 is exact
    if src == float16:
        if dst == float32:
            return b.fpext(v, F32)
        x = b.fpext(v, F32)
    if dst.is_int:
        r = _round_f32(b, module, x, modes, mode)
        kind = "fptosi" if dst.is_signed else "fptoui"
        fn = intrinsic(module, f"llvm.{kind}.sat.i{dst.bits}.f32", dt, [F32])
        return b.call(fn, [r])
    if dst == float32:
        return x if src == bfloat16 else _round_f32(b, module, x, modes, mode)
    bits = f32_to_narrow_bits(b, x, dst, modes, mode)
    return bits if dst == bfloat16 else b.bitcast(bits, dt)


_CMP_OPS = {CMPMODE.LT: "<", CMPMODE.GT: ">", CMPMODE.EQ: "==", CMPMODE.LE: "<=",
            CMPMODE.GE: ">=", CMPMODE.NE: "!="}


def compare_elem(b: L.IRBuilder, dtype: DataType, mode: CMPMODE, x, y) -> L.Value:
    """Ordered float comparisons (NaN: false) except NE (unordered: NaN != anything)."""
    op = _CMP_OPS[CMPMODE(mode)]
    if dtype.is_float:
        return (b.fcmp_unordered if op == "!=" else b.fcmp_ordered)(op, x, y)
    return b.icmp_signed(op, x, y)


# ============================================================================= element loops
def _loop_function(module: L.Module, name: str, args: list[L.Type], n_index: int, body) -> str:
    """``void name(args…)`` running ``body(b, args, i)`` for i in range(args[n_index])."""
    fn = L.Function(module, L.FunctionType(L.VoidType(), args), name=name)
    fn.attributes.add("nounwind")
    fn.attributes.add("noinline")  # called from several places: keep one copy (compile time)
    entry, loop, done = (fn.append_basic_block(x) for x in ("entry", "loop", "done"))
    b = L.IRBuilder(entry)
    n = fn.args[n_index]
    b.cbranch(b.icmp_signed(">", n, _c64(0)), loop, done)
    b.position_at_end(loop)
    i = b.phi(I64)
    i.add_incoming(_c64(0), entry)
    body(b, list(fn.args), i)
    nxt = b.add(i, _c64(1))
    i.add_incoming(nxt, b.block)
    b.cbranch(b.icmp_signed("<", nxt, n), loop, done)
    b.position_at_end(done)
    b.ret_void()
    return name


def _elem_ptr(b, p, i, dtype):
    return b.gep(p, [i], source_etype=memory_type(dtype))


def cast_loop_name(src, dst) -> str:
    return f"asc_cvt_{src.name}_{dst.name}"


def _define_cast_loop(module, src, dst, modes) -> str:
    """``asc_cvt_<src>_<dst>(ptr dst, ptr src, i64 n, i64 mode)``."""
    def body(b, a, i):
        v = b.load(_elem_ptr(b, a[1], i, src), typ=memory_type(src))
        b.store(cast_elem(b, module, v, src, dst, modes, a[3]), _elem_ptr(b, a[0], i, dst))
    return _loop_function(module, cast_loop_name(src, dst), [PTR, PTR, I64, I64], 2, body)


def compare_loop_name(dtype, scalar: bool) -> str:
    return f"asc_cmpl_{dtype.name}{'s' if scalar else ''}"


def _define_compare_loop(module, dtype, scalar: bool) -> str:
    """``asc_cmpl_<T>[s](ptr dst, ptr src0, ptr src1 | T scalar, i64 nbytes, i64 mode)``: one
    output byte per 8 elements (an <8 x i1> comparison bitcast to i8: bit b = element 8k+b)."""
    mt = memory_type(dtype)
    vt = L.VectorType(mt, 8)
    align = dtype.sizeof()

    def body(b, a, k):
        first = b.mul(k, _c64(8))
        x = b.load(_elem_ptr(b, a[1], first, dtype), typ=vt, align=align)
        if scalar:
            one = b.insert_element(L.Constant(vt, None), a[2], L.Constant(I32, 0))
            y = b.shuffle_vector(one, L.Constant(vt, None), L.Constant(L.VectorType(I32, 8),
                                                                       [0] * 8))
        else:
            y = b.load(_elem_ptr(b, a[2], first, dtype), typ=vt, align=align)
        bits = _by_mode(b, a[4], {m: compare_elem(b, dtype, m, x, y)
                                  for m in compare_modes(dtype)})
        b.store(b.bitcast(bits, I8), b.gep(a[0], [k], source_etype=I8))
    return _loop_function(module, compare_loop_name(dtype, scalar),
                          [PTR, PTR, mt if scalar else PTR, I64, I64], 3, body)


def select_loop_name(dtype, scalar: bool) -> str:
    return f"asc_sell_{dtype.name}{'s' if scalar else ''}"


def _define_select_loop(module, dtype, scalar: bool) -> str:
    mt = memory_type(dtype)

    def body(b, a, i):
        dst, sel, s0, s1, _, base, wrap = a
        bit = b.and_(b.add(base, i), wrap)
        byte = b.load(b.gep(sel, [b.lshr(bit, _c64(3))], source_etype=I8), typ=I8)
        on = b.trunc(b.lshr(byte, b.trunc(b.and_(bit, _c64(7)), I8)), I1)
        x = b.load(_elem_ptr(b, s0, i, dtype), typ=mt)
        y = s1 if scalar else b.load(_elem_ptr(b, s1, i, dtype), typ=mt)
        b.store(b.select(on, x, y), _elem_ptr(b, dst, i, dtype))
    return _loop_function(module, select_loop_name(dtype, scalar),
                          [PTR, PTR, PTR, mt if scalar else PTR, I64, I64, I64], 4, body)


# ============================================================================= instruction helpers
def _begin(module, name, params, dtype=None):
    func = L.Function(module, _signature(params, dtype), name=name)
    func.attributes.add("nounwind")
    # the work is in the (optimised) element loops; the instruction wrapper only checks and
    # dispatches, so it is not optimised (this keeps the library's build time down)
    func.attributes.add("noinline")
    func.attributes.add("optnone")
    fb = FnBuilder(module, func)
    return fb, dict(zip(params, func.args[1:]))


def _end(fb) -> None:
    fb.b.ret(fb.i64(0))
    fb.finish()


def _ptr(fb: FnBuilder, addr):
    return fb.b.inttoptr(fb.b.add(fb.ld(abi.MEM_BASE + UB), addr), PTR)


def _register_or_ub(fb: FnBuilder, base, addr):
    """A pointer to ``addr``: into the CMPMASK register (``ops/cmpmask.py``) when the operand's
    address ``base`` is -1 (compare without dst, select's register forms), else into UB."""
    b = fb.b
    reg = b.add(b.ptrtoint(fb.slot_ptr(abi.CMPMASK_LO), I64), b.sub(addr, base))
    return b.inttoptr(b.select(b.icmp_signed("==", base, fb.i64(-1)), reg,
                               b.add(fb.ld(abi.MEM_BASE + UB), addr)), PTR)


def _check(fb: FnBuilder, addr, nbytes, which: int, site) -> None:
    """Check an operand (operand 0 is the destination, checked first) and, in sanitize mode,
    record the V pipe's access: a new instruction, then a write of dst and reads of sources."""
    call_rt(fb, "check_local", fb.i64(UB), addr, nbytes, fb.i64(1), fb.i64(which), site)
    v = fb.i64(int(PipeID.PIPE_V))
    if which == 0:
        call_rt(fb, "san_issue", v, site)
    call_rt(fb, "san_access", v, fb.i64(UB), addr, nbytes, fb.i64(int(which == 0)), site)


def _reset_mask(fb: FnBuilder) -> None:
    """The count forms run in counter mode and leave the mask reset and the mode normal."""
    fb.st(abi.MASK_LO, fb.i64(-1))
    fb.st(abi.MASK_HI, fb.i64(-1))
    fb.st(abi.MASK_MODE, fb.i64(0))


def _mask_state(fb: FnBuilder, a: dict, epr: int):
    """Set the mask register from the arguments (unless is_set is 0) and return (counter, lo,
    hi, total, repeats), as the masked vector ops do (``vector_ops.define_masked_vector_op``)."""
    b = fb.b
    site = a["site"]
    not_ = lambda v: b.xor(v, L.Constant(I1, 1))  # noqa: E731
    counter = b.icmp_signed("!=", fb.ld(abi.MASK_MODE), fb.i64(0))
    with b.if_then(b.icmp_signed("!=", a["is_set"], fb.i64(0))):
        contiguous = b.icmp_signed("==", a["kind"], fb.i64(0))
        m = a["lo"]
        bad = b.and_(b.and_(contiguous, not_(counter)),
                     b.or_(b.icmp_signed("<", m, fb.i64(1)), b.icmp_signed(">", m, fb.i64(epr))))
        fb.fail_with(bad, E.MASK_RANGE, site, m, fb.i64(epr))
        hi_arg = a["hi"] if epr > 64 else fb.i64(0)
        lo_arg = a["lo"] if epr >= 64 else b.and_(a["lo"], fb.i64((1 << epr) - 1))
        empty = b.and_(b.icmp_signed("!=", a["kind"], fb.i64(0)),
                       b.icmp_signed("==", b.or_(lo_arg, hi_arg), fb.i64(0)))
        fb.fail_with(b.and_(empty, not_(counter)), E.MASK_RANGE, site, fb.i64(0), fb.i64(epr))
        c_lo, c_hi = lanes_mask(fb, m)
        use_contig = b.and_(contiguous, not_(counter))
        fb.st(abi.MASK_LO, b.select(use_contig, c_lo, b.select(counter, a["lo"], lo_arg)))
        fb.st(abi.MASK_HI, b.select(use_contig, c_hi, b.select(counter, fb.i64(0), hi_arg)))
    lo, hi = fb.ld(abi.MASK_LO), fb.ld(abi.MASK_HI)
    repeat = a["repeat"]
    bad_r = b.and_(not_(counter), b.or_(b.icmp_signed("<", repeat, fb.i64(0)),
                                        b.icmp_signed(">", repeat, fb.i64(255))))
    fb.fail_with(bad_r, E.REPEAT_RANGE, site, repeat)
    total = lo
    fb.fail_with(b.and_(counter, b.icmp_signed("<", total, fb.i64(0))), E.NEGATIVE_COUNT, site,
                 total)
    repeats = b.select(counter, fb.ceil_div(total, fb.i64(epr)), repeat)
    low = (1 << min(epr, 64)) - 1
    low = low - (1 << 64) if low >= 1 << 63 else low
    full = b.icmp_signed("==", b.and_(lo, fb.i64(low)), fb.i64(low))
    if epr > 64:
        full = b.and_(full, b.icmp_signed("==", hi, fb.i64(-1)))
    return counter, lo, hi, total, repeats, full


def _lane_address(fb: FnBuilder, addr, blk, rep, r, j, esize: int):
    """UB byte address of lane j of repeat r of an operand of element size ``esize``."""
    b = fb.b
    epb = 32 // esize
    block = b.udiv(j, fb.i64(epb))
    off = b.add(b.mul(b.add(b.mul(r, rep), b.mul(block, blk)), fb.i64(32)),
                b.mul(b.urem(j, fb.i64(epb)), fb.i64(esize)))
    return b.add(addr, off)


def _for_active_lanes(fb: FnBuilder, counter, lo, hi, total, repeats, epr: int, body) -> None:
    """``body(r, j)`` for every lane j of every repeat r that the mask enables."""
    b = fb.b

    def per_repeat(r):
        r_lo, r_hi = lanes_mask(fb, b.sub(total, b.mul(r, fb.i64(epr))))
        m_lo = b.select(counter, r_lo, lo)
        m_hi = b.select(counter, r_hi, hi)

        def per_lane(j):
            low = b.icmp_signed("<", j, fb.i64(64))
            word = b.select(low, m_lo, m_hi)
            shift = b.and_(b.select(low, j, b.sub(j, fb.i64(64))), fb.i64(63))
            with b.if_then(b.icmp_signed("!=", b.and_(b.lshr(word, shift), fb.i64(1)),
                                         fb.i64(0))):
                body(r, j)
        counted(fb, fb.i64(epr), per_lane)
    counted(fb, repeats, per_repeat)


def _timing(fb, op: str, dtype, count, esize: int, a0, a1, site) -> None:
    spec = REGISTRY[op]
    call_tm(fb, "vec", TP.OP_INDEX[op], TP.class_index(spec.cost), TP.family(dtype), count,
            esize, a0, a1, site)


# ============================================================================= cast instructions
def _cast_timing_dtype(src: DataType, dst: DataType) -> DataType:
    if src.is_float and (not dst.is_float or src.bits >= dst.bits):
        return src
    return dst if dst.is_float else src


def _define_cast(module, src: DataType, dst: DataType, loop) -> list[str]:
    es, ed = src.sizeof(), dst.sizeof()
    wide = max(es, ed)
    tdt = _cast_timing_dtype(src, dst)
    # count form
    fb, a = _begin(module, cast_name(src, dst, False), CAST_PARAMS)
    b, count, site = fb.b, a["count"], a["site"]
    fb.fail_with(b.icmp_signed("<", count, fb.i64(0)), E.NEGATIVE_COUNT, site, count)
    _check(fb, a["dst"], fb.sat_mul(count, fb.i64(ed)), 0, site)
    _check(fb, a["src"], fb.sat_mul(count, fb.i64(es)), 1, site)
    b.call(loop, [_ptr(fb, a["dst"]), _ptr(fb, a["src"]), count, a["mode"]])
    _reset_mask(fb)
    _timing(fb, "cast", tdt, count, wide, a["src"], fb.i64(-1), site)
    _end(fb)
    # masked form
    epr = 256 // wide
    fb, a = _begin(module, cast_name(src, dst, True), CAST_MASKED_PARAMS)
    b, site = fb.b, a["site"]
    counter, lo, hi, total, repeats, full = _mask_state(fb, a, epr)
    ops = (("dst", ed, 0), ("src", es, 1))
    contiguous = L.Constant(I1, 1)
    check_strides(fb, site, [(w, a[f"{n}_blk"], a[f"{n}_rep"]) for n, _, w in ops])
    span = lane_span(fb, counter, lo, hi, total, repeats, epr)
    for name, esize, which in ops:
        blocks = epr * esize // 32
        blk, rep = a[f"{name}_blk"], a[f"{name}_rep"]
        _check(fb, a[name], operand_end(fb, repeats, blk, rep, span, esize), which, site)
        contiguous = b.and_(contiguous, b.and_(b.icmp_signed("==", blk, fb.i64(1)),
                                               b.icmp_signed("==", rep, fb.i64(blocks))))
    count = b.select(counter, total, b.mul(repeats, fb.i64(epr)))
    with b.if_else(b.and_(contiguous, b.or_(counter, full))) as (fast, slow):
        with fast:
            b.call(loop, [_ptr(fb, a["dst"]), _ptr(fb, a["src"]), count, a["mode"]])
        with slow:
            def lane(r, j):
                ptrs = [_ptr(fb, _lane_address(fb, a[name], a[f"{name}_blk"], a[f"{name}_rep"],
                                               r, j, esize)) for name, esize, _ in ops]
                b.call(loop, ptrs + [fb.i64(1), a["mode"]])
            _for_active_lanes(fb, counter, lo, hi, total, repeats, epr, lane)
    _timing(fb, "cast", tdt, count, wide, a["src"], fb.i64(-1), site)
    _end(fb)
    return [cast_name(src, dst, False), cast_name(src, dst, True)]


# ============================================================================= compare instructions
def _define_compare(module, op: str, dtype: DataType, loop) -> list[str]:
    scalar = op == "compare_scalar"
    es = dtype.sizeof()
    epr, epb = 256 // es, 32 // es

    def operands(fb, a, dst_addr, s0_addr, s1_addr):
        ptrs = [_register_or_ub(fb, a["dst"], dst_addr), _ptr(fb, s0_addr)]
        return ptrs + [a["scalar"] if scalar else _ptr(fb, s1_addr)]

    # count form: whole repeats only (the compiler rejects other counts)
    fb, a = _begin(module, compare_name(op, dtype, False), CMP_PARAMS, dtype)
    b, site = fb.b, a["site"]
    fb.fail_with(b.icmp_signed("<", a["count"], fb.i64(0)), E.NEGATIVE_COUNT, site, a["count"])
    count = b.mul(b.sdiv(a["count"], fb.i64(epr)), fb.i64(epr))
    _check(fb, a["dst"], b.sdiv(count, fb.i64(8)), 0, site)
    _check(fb, a["src0"], fb.sat_mul(count, fb.i64(es)), 1, site)
    if not scalar:
        _check(fb, a["src1"], fb.sat_mul(count, fb.i64(es)), 2, site)
    b.call(loop, operands(fb, a, a["dst"], a["src0"], a["src1"])
           + [b.sdiv(count, fb.i64(8)), a["mode"]])
    _timing(fb, op, dtype, count, es, a["src0"], fb.i64(-1) if scalar else a["src1"], site)
    _end(fb)
    # masked form: the mask is reserved on A2/A3 (every lane is compared)
    fb, a = _begin(module, compare_name(op, dtype, True), CMP_MASKED_PARAMS, dtype)
    b, site, repeats = fb.b, a["site"], a["repeat"]
    fb.fail_with(b.or_(b.icmp_signed("<", repeats, fb.i64(0)),
                       b.icmp_signed(">", repeats, fb.i64(255))), E.REPEAT_RANGE, site, repeats)
    with b.if_else(b.icmp_signed("==", a["dst"], fb.i64(-1))) as (register, ub):
        with register:      # compare without dst: one repeat's bits into CMPMASK
            fb.st(abi.CMPMASK_LO, fb.i64(0))
            fb.st(abi.CMPMASK_HI, fb.i64(0))
            call_rt(fb, "san_issue", fb.i64(int(PipeID.PIPE_V)), site)
        with ub:
            _check(fb, a["dst"], b.mul(repeats, fb.i64(epr // 8)), 0, site)
    srcs = ("src0",) if scalar else ("src0", "src1")
    contiguous = L.Constant(I1, 1)
    check_strides(fb, site, [(w, a[f"{n}_blk"], a[f"{n}_rep"])
                             for w, n in enumerate(srcs, start=1)])
    every_lane = (fb.i64(epr - 1), fb.i64(epr - 1))   # the mask is reserved: all lanes
    for which, name in enumerate(srcs, start=1):
        blk, rep = a[f"{name}_blk"], a[f"{name}_rep"]
        _check(fb, a[name], operand_end(fb, repeats, blk, rep, every_lane, es), which, site)
        contiguous = b.and_(contiguous, b.and_(b.icmp_signed("==", blk, fb.i64(1)),
                                               b.icmp_signed("==", rep, fb.i64(8))))
    with b.if_else(contiguous) as (fast, slow):
        with fast:
            b.call(loop, operands(fb, a, a["dst"], a["src0"], a["src1"])
                   + [b.mul(repeats, fb.i64(epr // 8)), a["mode"]])
        with slow:
            def per_repeat(r):
                def per_block(i):
                    out = b.add(a["dst"], b.add(b.mul(r, fb.i64(epr // 8)),
                                                b.mul(i, fb.i64(epb // 8))))
                    ins = [b.add(a[n], b.mul(b.add(b.mul(r, a[f"{n}_rep"]),
                                                   b.mul(i, a[f"{n}_blk"])), fb.i64(32)))
                           for n in ("src0", "src1")]
                    b.call(loop, operands(fb, a, out, *ins) + [fb.i64(epb // 8), a["mode"]])
                counted(fb, fb.i64(8), per_block)
            counted(fb, repeats, per_repeat)
    _timing(fb, op, dtype, b.mul(repeats, fb.i64(epr)), es, a["src0"],
            fb.i64(-1) if scalar else a["src1"], site)
    _end(fb)
    return [compare_name(op, dtype, False), compare_name(op, dtype, True)]


# ============================================================================= select instructions
def _define_select(module, dtype: DataType, tensor_loop, scalar_loop) -> list[str]:
    es = dtype.sizeof()
    epr = 256 // es
    mode0 = int(SELMODE.VSEL_CMPMASK_SPR)
    mode1 = int(SELMODE.VSEL_TENSOR_SCALAR_MODE)

    def run(fb, a, dst, sel, s0, s1, n, bit_base, wrap):
        b = fb.b
        is_scalar = b.icmp_signed("==", a["mode"], fb.i64(mode1))
        common = [_ptr(fb, dst), _register_or_ub(fb, a["sel"], sel), _ptr(fb, s0)]
        with b.if_else(is_scalar) as (with_scalar, with_tensor):
            with with_scalar:
                b.call(scalar_loop, common + [a["scalar"], n, bit_base, wrap])
            with with_tensor:
                b.call(tensor_loop, common + [_ptr(fb, s1), n, bit_base, wrap])

    def checks(fb, a, nbytes, sel_bytes):
        site = a["site"]
        is_tensor = fb.b.icmp_signed("!=", a["mode"], fb.i64(mode1))
        _check(fb, a["dst"], nbytes("dst"), 0, site)
        with fb.b.if_then(fb.b.icmp_signed("!=", a["sel"], fb.i64(-1))):  # -1: CMPMASK
            _check(fb, a["sel"], sel_bytes, 1, site)
        _check(fb, a["src0"], nbytes("src0"), 2, site)
        with fb.b.if_then(is_tensor):
            _check(fb, a["src1"], nbytes("src1"), 3, site)

    def wrap_of(fb, a):
        is0 = fb.b.icmp_signed("==", a["mode"], fb.i64(mode0))
        return fb.b.select(is0, fb.i64(epr - 1), fb.i64(-1))

    # count form
    fb, a = _begin(module, compare_name("select", dtype, False), SEL_PARAMS, dtype)
    b, site, count = fb.b, a["site"], a["count"]
    fb.fail_with(b.icmp_signed("<", count, fb.i64(0)), E.NEGATIVE_COUNT, site, count)
    is0 = b.icmp_signed("==", a["mode"], fb.i64(mode0))
    sel_bits = b.select(is0, b.select(b.icmp_signed(">", count, fb.i64(epr)), fb.i64(epr), count),
                        count)
    checks(fb, a, lambda _: fb.sat_mul(count, fb.i64(es)), fb.ceil_div(sel_bits, fb.i64(8)))
    run(fb, a, a["dst"], a["sel"], a["src0"], a["src1"], count, fb.i64(0), wrap_of(fb, a))
    _reset_mask(fb)
    _timing(fb, "select", dtype, count, es, a["src0"], a["src1"], site)
    _end(fb)
    # masked form
    fb, a = _begin(module, compare_name("select", dtype, True), SEL_MASKED_PARAMS, dtype)
    b, site = fb.b, a["site"]
    counter, lo, hi, total, repeats, full = _mask_state(fb, a, epr)
    is0 = b.icmp_signed("==", a["mode"], fb.i64(mode0))
    sel_bytes = b.select(is0, b.select(b.icmp_signed(">", repeats, fb.i64(0)),
                                       fb.i64(epr // 8), fb.i64(0)),
                         b.mul(repeats, fb.i64(epr // 8)))
    check_strides(fb, site, [(w, a[f"{n}_blk"], a[f"{n}_rep"])
                             for w, n in ((0, "dst"), (2, "src0"), (3, "src1"))])
    span = lane_span(fb, counter, lo, hi, total, repeats, epr)
    checks(fb, a, lambda n: operand_end(fb, repeats, a[f"{n}_blk"], a[f"{n}_rep"], span, es),
           sel_bytes)
    contiguous = L.Constant(I1, 1)
    for n in ("dst", "src0", "src1"):
        contiguous = b.and_(contiguous, b.and_(b.icmp_signed("==", a[f"{n}_blk"], fb.i64(1)),
                                               b.icmp_signed("==", a[f"{n}_rep"], fb.i64(8))))
    count = b.select(counter, total, b.mul(repeats, fb.i64(epr)))
    wrap = wrap_of(fb, a)
    with b.if_else(b.and_(contiguous, b.or_(counter, full))) as (fast, slow):
        with fast:
            run(fb, a, a["dst"], a["sel"], a["src0"], a["src1"], count, fb.i64(0), wrap)
        with slow:
            def lane(r, j):
                addr = {n: _lane_address(fb, a[n], a[f"{n}_blk"], a[f"{n}_rep"], r, j, es)
                        for n in ("dst", "src0", "src1")}
                bit = b.add(b.mul(r, fb.i64(epr)), j)
                run(fb, a, addr["dst"], a["sel"], addr["src0"], addr["src1"], fb.i64(1), bit,
                    wrap)
            _for_active_lanes(fb, counter, lo, hi, total, repeats, epr, lane)
    _timing(fb, "select", dtype, count, es, a["src0"], a["src1"], site)
    _end(fb)
    return [compare_name("select", dtype, False), compare_name("select", dtype, True)]


# ============================================================================= the library
@runtime_lib.library_definer(shard="lib.convert")
def define_library(module: L.Module) -> list[str]:
    names: list[str] = []
    for (src, dst), modes in CAST_TABLE.items():
        names.append(_define_cast_loop(module, src, dst, modes))
        names += _define_cast(module, src, dst, module.globals[names[-1]])
    for op in ("compare", "compare_scalar"):
        for dtype in COMPARE_TYPES:
            names.append(_define_compare_loop(module, dtype, op == "compare_scalar"))
            names += _define_compare(module, op, dtype, module.globals[names[-1]])
    for dtype in SELECT_TYPES:
        tensor_loop = module.globals[_define_select_loop(module, dtype, False)]
        scalar_loop = module.globals[_define_select_loop(module, dtype, True)]
        names += [tensor_loop.name, scalar_loop.name]
        names += _define_select(module, dtype, tensor_loop, scalar_loop)
    return names


# ============================================================================= lowerings
def _addr(cg: Codegen, ref) -> L.Value:
    return cg.b.sext(cg.expr(ref.addr), I64) if ref is not None else cg.i64(-1)


def _ints(cg: Codegen, exprs) -> list:
    return [cg._as_i64(cg.expr(e)) for e in exprs]


@lowering("cast")
def lower_cast(cg: Codegen, s: ir.Intrinsic) -> None:
    src, dst = s.attr("src"), s.attr("dst")
    masked = s.attr("form") == "masked"
    params = CAST_MASKED_PARAMS if masked else CAST_PARAMS
    fn = _declare(cg.module, cast_name(src, dst, masked), _signature(params))
    args = [_addr(cg, s.args[0]), _addr(cg, s.args[1]), cg.i64(s.attr("round_mode"))]
    call_checked(cg, fn, args + _ints(cg, s.args[2:]), "cast", ("dst", "src"),
                 operands=s.args[:2])


def _check_compare_count(cg: Codegen, op: str, dtype: DataType, count_e) -> L.Value:
    count = cg._as_i64(cg.expr(count_e))
    if not isinstance(count_e, ir.Const):
        bad = cg.b.icmp_signed("!=", cg.b.and_(cg.b.mul(count, cg.i64(dtype.sizeof())),
                                               cg.i64(255)), cg.i64(0))
        cg.fail_if(bad, E.ASSERTION, op, count, detail=(
            f"asc.{op}: count x sizeof({dtype.name}) must be a multiple of 256 bytes (whole "
            f"repeats of {256 // dtype.sizeof()} elements, as Ascend C requires)",))
    return count


@lowering("compare", "compare_scalar")
def lower_compare(cg: Codegen, s: ir.Intrinsic) -> None:
    dtype = s.attr("dtype")
    masked = s.attr("form") == "masked"
    scalar = s.op == "compare_scalar"
    dst, src0, other = s.args[:3]
    params = CMP_MASKED_PARAMS if masked else CMP_PARAMS
    fn = _declare(cg.module, compare_name(s.op, dtype, masked), _signature(params, dtype))
    sval = cg.expr(other) if scalar else L.Constant(memory_type(dtype), 0)
    head = [_addr(cg, dst), _addr(cg, src0), cg.i64(-1) if scalar else _addr(cg, other), sval,
            cg.i64(s.attr("cmp_mode"))]
    if masked:
        rest = _ints(cg, s.args[3:])
    else:
        rest = [_check_compare_count(cg, s.op, dtype, s.args[3])]
    call_checked(cg, fn, head + rest, s.op, ("dst", "src0", "src1"), operands=s.args[:3])


@lowering("select")
def lower_select(cg: Codegen, s: ir.Intrinsic) -> None:
    dtype = s.attr("dtype")
    masked = s.attr("form") == "masked"
    dst, sel, src0, src1, scalar = s.args[:5]
    params = SEL_MASKED_PARAMS if masked else SEL_PARAMS
    fn = _declare(cg.module, compare_name("select", dtype, masked), _signature(params, dtype))
    sval = cg.expr(scalar) if scalar is not None else L.Constant(memory_type(dtype), 0)
    sel_addr = _addr(cg, sel)
    register = s.attr("cmpmask")            # select's register forms (ops/cmpmask.py)
    if register == "scalar":                # mode 1: src1 is CMPMASK's first element
        bits = cg.b.trunc(cg.ld(abi.CMPMASK_LO), L.IntType(dtype.bits))
        sval = cg.b.bitcast(bits, memory_type(dtype))
    elif register == "addr":                # mode 2: CMPMASK holds sel_mask's UB address
        sel_addr = cg.b.and_(cg.ld(abi.CMPMASK_LO), cg.i64(0xFFFFFFFF))
    args = [_addr(cg, dst), sel_addr, _addr(cg, src0), _addr(cg, src1), sval,
            cg.i64(s.attr("sel_mode"))] + _ints(cg, s.args[5:])
    call_checked(cg, fn, args, "select", ("dst", "sel_mask", "src0", "src1"),
                 operands=s.args[:4])
