"""The vector instructions' library functions: each count-form op and dtype's wrapper
(``asc_op_*``: checks, the element loop, timing; ``asc_opd_*`` without the loop, for fused
runs, ``fusion.py``) and its masked form (``asc_opm_*``: repeats, block and repeat strides,
lane masks). ``runtime_lib.py`` defines them in the runtime library's per-op pieces."""
from __future__ import annotations

from llvmlite import ir as L

from ...dsl.types import PipeID
from ...simulator import abi
from ..ops import Family
from .core import FnBuilder
from .footprint import check_strides, lane_span, operand_end
from .rtfuncs import call_rt, call_tm, cold, counted, lanes_mask
from .types import I1, I64, PTR, memory_type

E = abi.ErrorCode

def op_name(spec, dtype, src_dtype=None) -> str:
    mixed = f"_{src_dtype.name}" if src_dtype is not None and src_dtype != dtype else ""
    return f"asc_op_{spec.name}_{dtype.name}{mixed}"


def op_signature(spec, dtype, src_dtype=None) -> L.FunctionType:
    """``i64 (ptr ctx, i64 dst, i64 src…, U scalar…, i64 count, i64 site)`` (UB addresses; the
    scalar has the source dtype U, which is the dst dtype except for mixed-precision axpy)."""
    from .runtime_lib import operand_counts
    n_src, n_scalar = operand_counts(spec)
    scalar_t = memory_type(src_dtype or dtype)
    return L.FunctionType(I64, [PTR] + [I64] * (1 + n_src) + [scalar_t] * n_scalar
                          + [I64, I64])


def deferred_op_name(spec, dtype) -> str:
    """The instruction without its element loop (``define_vector_op(with_loop=False)``)."""
    return f"asc_opd_{spec.name}_{dtype.name}"


def define_vector_op(module: L.Module, spec, dtype, src_dtype=None,
                     with_loop: bool = True) -> None:
    """Checks, the element loop (``asc_vec_*``) and the timing of one vector instruction.
    ``with_loop`` False: everything but the element loop (``asc_opd_*``), for a run of
    instructions whose loops the kernel then runs as one fused loop (``fusion.py``); the
    loop reads and writes only the operands' data, which nothing else here touches."""
    from ...dsl.types import Memory
    from ...simulator import timing_params as TP
    from .runtime_lib import operand_counts
    n_src, n_scalar = operand_counts(spec)
    func = L.Function(module, op_signature(spec, dtype, src_dtype),
                      name=op_name(spec, dtype, src_dtype) if with_loop
                      else deferred_op_name(spec, dtype))
    func.attributes.add("nounwind")   # optimised (unlike the masked form): it runs per instruction
    fb = FnBuilder(module, func)
    b = fb.b
    args = list(func.args[1:])
    addrs, scalars = args[:1 + n_src], args[1 + n_src:1 + n_src + n_scalar]
    count, site = args[-2], args[-1]
    esize = dtype.sizeof()
    fb.fail_with(b.icmp_signed("<", count, fb.i64(0)), E.NEGATIVE_COUNT, site, count)
    nbytes = fb.sat_mul(count, fb.i64(esize))
    ub = fb.i64(int(Memory.UB))
    base = fb.ld(abi.MEM_BASE + int(Memory.UB))
    sizes = [nbytes] + [fb.sat_mul(count, fb.i64((src_dtype or dtype).sizeof()))] * n_src
    ptrs = []
    for which, addr in enumerate(addrs):
        call_rt(fb, "check_local", ub, addr, sizes[which], fb.i64(1), fb.i64(which), site)
        ptrs.append(b.inttoptr(b.add(base, addr), PTR))
    _san_vector(fb, addrs, sizes, spec, site)
    if with_loop:
        call_element_loop(fb, spec, dtype, ptrs, list(scalars), count, src_dtype)
    # the count form runs in counter mode and leaves the mask reset and the mode normal
    fb.st(abi.MASK_LO, fb.i64(-1))
    fb.st(abi.MASK_HI, fb.i64(-1))
    fb.st(abi.MASK_MODE, fb.i64(0))
    a0 = addrs[1] if n_src >= 1 else addrs[0]
    a1 = addrs[2] if n_src >= 2 else fb.i64(-1)
    call_tm(fb, "vec", TP.OP_INDEX[spec.name], TP.class_index(spec.cost), TP.family(dtype),
            count, esize, a0, a1, site)
    b.ret(fb.i64(0))
    fb.finish()


def call_element_loop(fb: FnBuilder, spec, dtype, ptrs, scalars, count, src_dtype=None) -> None:
    """Run the element loop over ``count`` elements: the no-alias (vectorised) variant when
    every source is dst itself or does not overlap it, the generic one otherwise."""
    from .runtime_lib import function_name
    b = fb.b
    nbytes = b.mul(count, fb.i64(max(dtype.sizeof(), (src_dtype or dtype).sizeof())))
    d = b.ptrtoint(ptrs[0], I64)
    safe = L.Constant(I1, 1)
    for p in ptrs[1:]:
        s_ = b.ptrtoint(p, I64)
        apart = b.or_(b.icmp_signed("<=", b.add(s_, nbytes), d),
                      b.icmp_signed("<=", b.add(d, nbytes), s_))
        safe = b.and_(safe, b.or_(b.icmp_signed("==", s_, d), apart))
    name = function_name(spec.name, dtype, src_dtype)
    fast, slow = fb.module.globals[name + "_na"], fb.module.globals[name]
    with b.if_else(safe) as (then, otherwise):
        with then:
            b.call(fast, ptrs + scalars + [count])
        with otherwise:
            b.call(slow, ptrs + scalars + [count])


def _san_vector(fb: FnBuilder, addrs, extents, spec, site) -> None:
    """Sanitize mode: the V pipe reads the sources (and dst for axpy), then writes dst. (The
    sanitizer's functions return at once when it is off: the test here saves the calls.)"""
    from ...dsl.types import Memory
    v, ub = fb.i64(int(PipeID.PIPE_V)), fb.i64(int(Memory.UB))
    b = fb.b
    with b.if_then(b.icmp_signed("!=", fb.ld(abi.SANITIZE), fb.i64(0)), likely=False):
        call_rt(fb, "san_issue", v, site)
        reads = list(zip(addrs, extents))[1:]
        if spec.family in (Family.AXPY, Family.TERNARY):   # dst is read too
            reads.append((addrs[0], extents[0]))
        for addr, extent in reads:
            call_rt(fb, "san_access", v, ub, addr, extent, fb.i64(0), site)
        call_rt(fb, "san_access", v, ub, addrs[0], extents[0], fb.i64(1), site)


def masked_op_name(spec, dtype, src_dtype=None) -> str:
    mixed = f"_{src_dtype.name}" if src_dtype is not None and src_dtype != dtype else ""
    return f"asc_opm_{spec.name}_{dtype.name}{mixed}"


MASKED_PARAMS = ("dst", "src0", "src1", "scalar", "is_set", "kind", "lo", "hi", "repeat",
                 "dst_blk", "src0_blk", "src1_blk", "dst_rep", "src0_rep", "src1_rep", "site")


def masked_op_signature(dtype, src_dtype=None) -> L.FunctionType:
    """One signature for every masked vector op of ``dtype`` (unused operands are ignored); the
    scalar has the source dtype."""
    return L.FunctionType(I64, [PTR, I64, I64, I64, memory_type(src_dtype or dtype)] + [I64] * 12)


def define_masked_vector_op(module: L.Module, spec, dtype, src_dtype=None) -> None:
    """The masked form: ``repeat`` iterations of 8 blocks of 32 B per operand, lanes chosen by
    the mask (contiguous count or bit mask; in counter mode the mask is the element count),
    block and repeat strides in 32-B blocks. Masked-off lanes leave dst untouched."""
    from ...dsl.types import Memory
    from ...simulator import timing_params as TP
    from .runtime_lib import function_name, operand_counts
    n_src, n_scalar = operand_counts(spec)
    func = L.Function(module, masked_op_signature(dtype, src_dtype),
                      name=masked_op_name(spec, dtype, src_dtype))
    cold(func)
    fb = FnBuilder(module, func)
    b = fb.b
    a = dict(zip(MASKED_PARAMS, func.args[1:]))
    site = a["site"]
    esize = dtype.sizeof()
    epr, epb = 256 // esize, 32 // esize
    counter = b.icmp_signed("!=", fb.ld(abi.MASK_MODE), fb.i64(0))
    # the mask register: set from the arguments unless is_set_mask is false
    with b.if_then(b.icmp_signed("!=", a["is_set"], fb.i64(0))):
        contiguous = b.icmp_signed("==", a["kind"], fb.i64(0))
        m = a["lo"]
        bad_m = b.and_(b.and_(contiguous, b.xor(counter, L.Constant(I1, 1))),
                       b.or_(b.icmp_signed("<", m, fb.i64(1)),
                             b.icmp_signed(">", m, fb.i64(epr))))
        fb.fail_with(bad_m, E.MASK_RANGE, site, m, fb.i64(epr))
        hi_arg = a["hi"] if epr > 64 else fb.i64(0)
        empty = b.and_(b.icmp_signed("!=", a["kind"], fb.i64(0)),
                       b.icmp_signed("==", b.or_(a["lo"], hi_arg), fb.i64(0)))
        fb.fail_with(b.and_(empty, b.xor(counter, L.Constant(I1, 1))), E.MASK_RANGE, site,
                     fb.i64(0), fb.i64(epr))
        c_lo, c_hi = lanes_mask(fb, m)
        use_contig = b.and_(contiguous, b.xor(counter, L.Constant(I1, 1)))
        fb.st(abi.MASK_LO, b.select(use_contig, c_lo, a["lo"]))
        fb.st(abi.MASK_HI, b.select(use_contig, c_hi, b.select(counter, fb.i64(0), hi_arg)))
    lo, hi = fb.ld(abi.MASK_LO), fb.ld(abi.MASK_HI)
    repeat = a["repeat"]
    bad_r = b.and_(b.xor(counter, L.Constant(I1, 1)),
                   b.or_(b.icmp_signed("<", repeat, fb.i64(0)),
                         b.icmp_signed(">", repeat, fb.i64(255))))
    fb.fail_with(bad_r, E.REPEAT_RANGE, site, repeat)
    total = lo  # counter mode: the element count
    fb.fail_with(b.and_(counter, b.icmp_signed("<", total, fb.i64(0))), E.NEGATIVE_COUNT, site,
                 total)
    repeats = b.select(counter, fb.ceil_div(total, fb.i64(epr)), repeat)
    # (name, address, block stride, repeat stride, element size): a repeat covers ``epr``
    # lanes of the widest type; a narrower source (mixed axpy) uses fewer of its blocks
    ssize = (src_dtype or dtype).sizeof()
    operands = [("dst", a["dst"], a["dst_blk"], a["dst_rep"], esize)]
    if n_src >= 1:
        operands.append(("src0", a["src0"], a["src0_blk"], a["src0_rep"], ssize))
    if n_src >= 2:
        operands.append(("src1", a["src1"], a["src1_blk"], a["src1_rep"], ssize))
    ub = fb.i64(int(Memory.UB))
    base = fb.ld(abi.MEM_BASE + int(Memory.UB))
    contiguous_layout = L.Constant(I1, 1)
    extents = []
    check_strides(fb, site, [(w, o[2], o[3]) for w, o in enumerate(operands)],
                  spec.max_repeat_stride)
    span = lane_span(fb, counter, lo, hi, total, repeats, epr)
    for which, (_, addr, blk, rep, ek) in enumerate(operands):
        bpr = epr * ek // 32  # blocks of this operand per repeat
        extent = operand_end(fb, repeats, blk, rep, span, ek)
        extents.append(extent)
        call_rt(fb, "check_local", ub, addr, extent, fb.i64(1), fb.i64(which), site)
        contiguous_layout = b.and_(contiguous_layout, b.and_(
            b.icmp_signed("==", blk, fb.i64(1)), b.icmp_signed("==", rep, fb.i64(bpr))))
    _san_vector(fb, [o[1] for o in operands], extents, spec, site)
    full = b.and_(b.icmp_signed("==", lo, fb.i64(-1)),
                  b.icmp_signed("==", hi, fb.i64(-1)) if epr > 64 else L.Constant(I1, 1))
    fast = b.and_(contiguous_layout, b.or_(counter, full))
    count = b.select(counter, total, b.mul(repeats, fb.i64(epr)))
    scalars = [a["scalar"]] if n_scalar else []
    with b.if_else(fast) as (then, otherwise):
        with then:  # whole repeats over contiguous data: the vectorised loop
            ptrs = [b.inttoptr(b.add(base, o[1]), PTR) for o in operands]
            call_element_loop(fb, spec, dtype, ptrs, scalars, count, src_dtype)
        with otherwise:
            def per_repeat(r):
                left = b.sub(total, b.mul(r, fb.i64(epr)))
                r_lo, r_hi = lanes_mask(fb, left)
                m_lo = b.select(counter, r_lo, lo)
                m_hi = b.select(counter, r_hi, hi)

                loop = module.globals[function_name(spec.name, dtype, src_dtype)]
                block_bits = fb.i64((1 << epb) - 1)

                def block_ptrs(i, j):
                    lane = b.add(b.mul(i, fb.i64(epb)), j)  # lanes i*epb.. are contiguous in
                    out = []                                 # every operand's block
                    for _, addr, blk, rep, ek in operands:
                        per = fb.i64(32 // ek)
                        off = b.add(b.mul(b.add(b.mul(r, rep), b.mul(b.sdiv(lane, per), blk)),
                                          fb.i64(32)), b.mul(b.srem(lane, per), fb.i64(ek)))
                        out.append(b.inttoptr(b.add(base, b.add(addr, off)), PTR))
                    return out

                def per_block(i):
                    # this block's lanes: a whole active block is one call of the element loop,
                    # otherwise one call per active lane (all element code lives in the loop)
                    first = b.mul(i, fb.i64(epb))
                    low = b.icmp_signed("<", first, fb.i64(64))
                    word = b.select(low, m_lo, m_hi)
                    shift = b.and_(b.select(low, first, b.sub(first, fb.i64(64))), fb.i64(63))
                    bits = b.and_(b.lshr(word, shift), block_bits)
                    with b.if_else(b.icmp_signed("==", bits, block_bits)) as (whole, part):
                        with whole:
                            b.call(loop, block_ptrs(i, fb.i64(0)) + scalars + [fb.i64(epb)])
                        with part:
                            def per_lane(j):
                                bit = b.and_(b.lshr(bits, j), fb.i64(1))
                                with b.if_then(b.icmp_signed("!=", bit, fb.i64(0))):
                                    b.call(loop, block_ptrs(i, j) + scalars + [fb.i64(1)])
                            counted(fb, fb.i64(epb), per_lane)
                counted(fb, fb.i64(8), per_block)
            counted(fb, repeats, per_repeat)
    a0 = operands[1][1] if n_src >= 1 else operands[0][1]
    a1 = operands[2][1] if n_src >= 2 else fb.i64(-1)
    call_tm(fb, "vec", TP.OP_INDEX[spec.name], TP.class_index(spec.cost), TP.family(dtype),
            count, esize, a0, a1, site)
    b.ret(fb.i64(0))
    fb.finish()


__all__ = ["op_name", "op_signature", "deferred_op_name", "define_vector_op", "masked_op_name",
           "masked_op_signature", "define_masked_vector_op"]
