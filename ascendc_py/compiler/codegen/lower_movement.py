"""Codegen of data movement: data_copy (count and DataCopyParams forms) and data_copy_pad, with
their runtime-library functions (semantics and timing rule: ``ops/movement.py``).

Each copy is one library call. The library checks every burst (GM bounds per argument, UB range
and 32-byte alignment; the error names the operand and the line), moves it with ``memmove``, and
charges the whole instruction to the DMA path once, with its burst count (``timing.dma``).
"""
from __future__ import annotations

from llvmlite import ir as L

from ...dsl.types import Memory, float64
from ...simulator import abi
from ...simulator import timing_params as TP
from .. import ir
from ..ops.movement import BLOCK, EXT_LIMITS, MAX_PADDING_BYTES, PARAMS_LIMITS
from . import runtime_lib
from .core import Codegen, FnBuilder, lowering
from .intrinsics import call_checked, operand
from .lower_atomic import gm_store
from .rtfuncs import WARN_TRUNCATED, call_tm, counted, operand_pointer, rt, warn
from .sanitize import san_copy_on_path
from .types import F64, I1, I64, PTR, convert, intrinsic

E = abi.ErrorCode
ALIGN = BLOCK


# ----------------------------------------------------------------------------- library helpers
def _memmove(fb: FnBuilder, dst, src, nbytes) -> None:
    fn = intrinsic(fb.module, "llvm.memmove.p0.p0.i64", L.VoidType(), [PTR, PTR, I64, I1])
    fb.b.call(fn, [dst, src, nbytes, L.Constant(I1, 0)])


def _check_fields(fb: FnBuilder, values, limits, site) -> None:
    """Each value must lie in 0..limit (negative: NEGATIVE_COUNT; too large:
    DATA_COPY_PARAM_RANGE with the value, the limit and the field's index)."""
    b = fb.b
    for k, (v, (_, limit)) in enumerate(zip(values, limits)):
        fb.fail_with(b.icmp_signed("<", v, fb.i64(0)), E.NEGATIVE_COUNT, site, v)
        fb.fail_with(b.icmp_signed(">", v, fb.i64(limit)), E.DATA_COPY_PARAM_RANGE, site, v,
                     fb.i64(limit), fb.i64(k))


def _bursts(fb: FnBuilder, count, one) -> None:
    """``one(i, move)`` for every burst: first all checks (``move`` False: only the operand
    pointers, which check the burst), then the moves, so a copy that would fault part-way
    writes nothing."""
    counted(fb, count, lambda i: one(i, False))
    counted(fb, count, lambda i: one(i, True))


def _round_up(fb: FnBuilder, v):
    return fb.b.and_(fb.b.add(v, fb.i64(ALIGN - 1)), fb.i64(~(ALIGN - 1)))


def _per_size(fb: FnBuilder, esize, body) -> None:
    """``body(int type)`` specialised for an element size of 1, 2, 4 or 8 bytes."""
    for k in (1, 2, 4, 8):
        with fb.b.if_then(fb.b.icmp_signed("==", esize, fb.i64(k))):
            body(L.IntType(8 * k))


def _fill(fb: FnBuilder, base, start, end, bits, esize) -> None:
    """Store the low ``esize`` bytes of ``bits`` in every element of bytes [start, end) of
    ``base`` (an i64 address)."""
    b = fb.b

    def body(t):
        value = bits if t.width == 64 else b.trunc(bits, t)
        n = b.sdiv(b.sub(end, start), esize)

        def store(j):
            addr = b.add(base, b.add(start, b.mul(j, esize)))
            b.store(value, b.inttoptr(addr, PTR))
        counted(fb, n, store)
    _per_size(fb, esize, body)


def _load_bits(fb: FnBuilder, addr, esize):
    """The element at address ``addr`` as zero-extended i64 bits."""
    b = fb.b
    slot = fb.alloca_builder.alloca(I64, name="elem")
    b.store(fb.i64(0), slot)

    def body(t):
        v = b.load(b.inttoptr(addr, PTR), typ=t)
        b.store(v if t.width == 64 else b.zext(v, I64), slot)
    _per_size(fb, esize, body)
    return b.load(slot, typ=I64)


# ----------------------------------------------------------------------------- data_copy
@rt("path", "dst_mem", "dst_a", "dst_off", "src_mem", "src_a", "src_off", "count", "esize", "op")
def data_copy(fb: FnBuilder, path, dst_mem, dst_a, dst_off, src_mem, src_a, src_off, count,
              esize, op, site):
    """Contiguous copy of ``count`` elements; whole 32-B blocks only (the tail is dropped, as
    the hardware does). Operand offsets are in elements."""
    b = fb.b
    fb.fail_with(b.icmp_signed("<", count, fb.i64(0)), E.NEGATIVE_COUNT, site, count)
    requested = fb.sat_mul(count, esize)
    nbytes = b.and_(requested, fb.i64(~(ALIGN - 1)))
    with b.if_then(b.icmp_signed("!=", nbytes, requested)):   # in every mode: O(1)
        warn(fb, WARN_TRUNCATED, site, requested, nbytes)  # hardware drops the tail
        # sanitize mode names the truncation when the missing tail is read later
        fb.st(abi.TRUNC_SITE, b.add(site, fb.i64(1)))
        fb.st(abi.TRUNC_MEM, dst_mem)
        fb.st(abi.TRUNC_LO, b.add(dst_a, b.add(fb.sat_mul(dst_off, esize), nbytes)))
        fb.st(abi.TRUNC_HI, b.add(dst_a, b.add(fb.sat_mul(dst_off, esize), requested)))
    dst = operand_pointer(fb, dst_mem, dst_a, fb.sat_mul(dst_off, esize), nbytes, esize,
                          fb.i64(0), fb.i64(1), site)
    src = operand_pointer(fb, src_mem, src_a, fb.sat_mul(src_off, esize), nbytes, esize,
                          fb.i64(1), fb.i64(1), site)
    gm_store(fb, dst_mem, dst, src, nbytes, site)   # a plain memmove unless set_atomic_*
    san_copy_on_path(fb, path, dst_mem, dst_a, fb.sat_mul(dst_off, esize), src_mem, src_a,
                     fb.sat_mul(src_off, esize), nbytes, site)
    call_tm(fb, "dma", path, nbytes, 1, op, site)


@rt("path", "dst_mem", "dst_a", "dst_off", "src_mem", "src_a", "src_off", "count", "length",
    "src_gap", "dst_gap", "esize", "op")
def data_copy_blocks(fb: FnBuilder, path, dst_mem, dst_a, dst_off, src_mem, src_a, src_off,
                     count, length, src_gap, dst_gap, esize, op, site):
    """DataCopyParams: ``count`` bursts of ``length`` 32-B blocks, gaps in 32-B blocks."""
    b = fb.b
    _check_fields(fb, (count, length, src_gap, dst_gap), PARAMS_LIMITS, site)
    burst = b.mul(length, fb.i64(ALIGN))
    count = b.select(b.icmp_signed("==", length, fb.i64(0)), fb.i64(0), count)  # NOP

    def one(i, move):
        soff = fb.sat_add(fb.sat_mul(src_off, esize), b.mul(i, b.mul(b.add(length, src_gap),
                                                          fb.i64(ALIGN))))
        doff = fb.sat_add(fb.sat_mul(dst_off, esize), b.mul(i, b.mul(b.add(length, dst_gap),
                                                          fb.i64(ALIGN))))
        d = operand_pointer(fb, dst_mem, dst_a, doff, burst, esize, fb.i64(0), fb.i64(1), site)
        s = operand_pointer(fb, src_mem, src_a, soff, burst, esize, fb.i64(1), fb.i64(1), site)
        if move:
            gm_store(fb, dst_mem, d, s, burst, site)
            san_copy_on_path(fb, path, dst_mem, dst_a, doff, src_mem, src_a, soff, burst, site)
    _bursts(fb, count, one)
    call_tm(fb, "dma", path, b.mul(count, burst), count, op, site)


@lowering("data_copy")
def lower_data_copy(cg: Codegen, s: ir.Intrinsic) -> None:
    if s.attr("form") == "nd2nz":   # GM -> L1 with Nd2NzParams: the cube's copy (lower_cube.py)
        from .lower_cube import lower_nd2nz
        lower_nd2nz(cg, s)
        return
    dst_ref, src_ref = s.args[:2]
    dtype = s.attr("dtype")
    mems = [r.memory if isinstance(r, ir.LocalRef) else Memory.GM for r in (src_ref, dst_ref)]
    head = [cg.i64(TP.path_index(*mems)), *operand(cg, dst_ref), *operand(cg, src_ref)]
    tail = [cg.i64(dtype.sizeof()), cg.i64(TP.OP_INDEX["data_copy"])]
    values = [cg._as_i64(cg.expr(e)) for e in s.args[2:]]
    name = "data_copy_blocks" if s.attr("form") == "params" else "data_copy"
    call_checked(cg, runtime_lib.declare_rt(cg.module, name), head + values + tail,
                 "data_copy", ("dst", "src"), operands=s.args[:2])


# ----------------------------------------------------------------------------- data_copy_pad
@rt("path", "dst_mem", "dst_a", "dst_off", "src_mem", "src_a", "src_off", "count", "length",
    "src_gap", "dst_gap", "is_pad", "left", "right", "pad_bits", "esize", "op")
def data_copy_pad(fb: FnBuilder, path, dst_mem, dst_a, dst_off, src_mem, src_a, src_off, count,
                  length, src_gap, dst_gap, is_pad, left, right, pad_bits, esize, op, site):
    """DataCopyExtParams: ``count`` bursts of ``length`` BYTES. GM→UB pads each burst in UB to
    32 B (left/right padding elements, then dummies); UB→GM writes exactly ``length`` bytes.
    GM-side gaps are in bytes, UB-side gaps in 32-B blocks."""
    b = fb.b
    _check_fields(fb, (count, length, src_gap, dst_gap), EXT_LIMITS, site)
    fb.fail_with(b.icmp_signed("!=", b.srem(length, esize), fb.i64(0)),
                 E.DATA_COPY_PARAM_RANGE, site, length, esize, fb.i64(1))
    lbytes, rbytes = b.mul(left, esize), b.mul(right, esize)
    for k, v in ((5, lbytes), (6, rbytes)):
        fb.fail_with(b.icmp_signed("<", v, fb.i64(0)), E.NEGATIVE_COUNT, site, v)
        fb.fail_with(b.icmp_signed(">", v, fb.i64(MAX_PADDING_BYTES)),
                     E.DATA_COPY_PARAM_RANGE, site, v, fb.i64(MAX_PADDING_BYTES), fb.i64(k))
    count = b.select(b.icmp_signed("==", length, fb.i64(0)), fb.i64(0), count)  # NOP
    to_gm = b.icmp_signed("==", dst_mem, fb.i64(int(Memory.GM)))
    with b.if_else(to_gm) as (out, into):
        with out:
            unit = _round_up(fb, length)

            def one_out(i, move):
                soff = fb.sat_add(fb.sat_mul(src_off, esize),
                             b.mul(i, b.add(unit, b.mul(src_gap, fb.i64(ALIGN)))))
                doff = fb.sat_add(fb.sat_mul(dst_off, esize), b.mul(i, b.add(length, dst_gap)))
                d = operand_pointer(fb, dst_mem, dst_a, doff, length, esize, fb.i64(0),
                                    fb.i64(0), site)
                s = operand_pointer(fb, src_mem, src_a, soff, length, esize, fb.i64(1),
                                    fb.i64(1), site)
                if move:
                    gm_store(fb, dst_mem, d, s, length, site)
                    san_copy_on_path(fb, path, dst_mem, dst_a, doff, src_mem, src_a, soff,
                                     length, site)
            _bursts(fb, count, one_out)
        with into:
            unit = _round_up(fb, b.add(b.add(lbytes, length), rbytes))
            pad = b.icmp_signed("!=", is_pad, fb.i64(0))
            no_padding = b.and_(b.icmp_signed("==", left, fb.i64(0)),
                                b.icmp_signed("==", right, fb.i64(0)))

            def one_in(i, move):
                soff = fb.sat_add(fb.sat_mul(src_off, esize), b.mul(i, b.add(length, src_gap)))
                doff = fb.sat_add(fb.sat_mul(dst_off, esize),
                             b.mul(i, b.add(unit, b.mul(dst_gap, fb.i64(ALIGN)))))
                d = operand_pointer(fb, dst_mem, dst_a, doff, unit, esize, fb.i64(0),
                                    fb.i64(1), site)
                s = operand_pointer(fb, src_mem, src_a, soff, length, esize, fb.i64(1),
                                    fb.i64(0), site)
                if not move:
                    return
                base = b.ptrtoint(d, I64)
                _memmove(fb, b.inttoptr(b.add(base, lbytes), PTR), s, length)
                san_copy_on_path(fb, path, dst_mem, dst_a, doff, src_mem, src_a, soff, unit,
                                 site)
                with b.if_then(pad):
                    _fill(fb, base, fb.i64(0), lbytes, pad_bits, esize)
                # dummies: the padding value, or (no paddings, no is_pad) the first element
                with b.if_then(b.or_(pad, no_padding)):
                    first = _load_bits(fb, base, esize)
                    _fill(fb, base, b.add(lbytes, length), unit, b.select(pad, pad_bits, first),
                          esize)
            _bursts(fb, count, one_in)
    call_tm(fb, "dma", path, b.mul(count, _round_up(fb, length)), count, op, site)


def _bits(cg: Codegen, e, dtype):
    """A value of ``dtype`` as zero-extended i64 bits (floats bit-cast)."""
    return _value_bits(cg, cg.expr(e), dtype)


def _value_bits(cg: Codegen, v, dtype):
    """An LLVM value of ``dtype`` as zero-extended i64 bits (floats bit-cast; bfloat16 is
    already its i16 bits, codegen/types.py)."""
    if isinstance(v.type, (L.HalfType, L.FloatType, L.DoubleType)):
        v = cg.b.bitcast(v, L.IntType(dtype.bits))
    return v if v.type.width == 64 else cg.b.zext(v, I64)


def _pad_register(cg: Codegen, is_pad, pad_bits, dtype):
    """(is_pad, padding bits) with set_pad_value's register (ctx[PAD_VALUE], ops/sysctl.py):
    while it is set, a copy whose params say is_pad=False pads with the register's value,
    converted to the copy's dtype as a run-time scalar cast does; is_pad=True keeps the params'
    value."""
    b = cg.b
    use = b.and_(b.icmp_signed("!=", cg.ld(abi.PAD_VALUE_SET), cg.i64(0)),
                 b.icmp_signed("==", is_pad, cg.i64(0)))
    value = convert(b, b.bitcast(cg.ld(abi.PAD_VALUE), F64), float64, dtype)
    bits = _value_bits(cg, value, dtype)
    return b.select(use, cg.i64(1), is_pad), b.select(use, bits, pad_bits)


@lowering("data_copy_pad")
def lower_data_copy_pad(cg: Codegen, s: ir.Intrinsic) -> None:
    dst_ref, src_ref = s.args[:2]
    dtype = s.attr("dtype")
    mems = [r.memory if isinstance(r, ir.LocalRef) else Memory.GM for r in (src_ref, dst_ref)]
    args = [cg.i64(TP.path_index(*mems)), *operand(cg, dst_ref), *operand(cg, src_ref)]
    values = [cg._as_i64(cg.expr(e)) for e in s.args[2:9]]
    pad_bits = _bits(cg, s.args[9], dtype)
    if mems[0] == Memory.GM and mems[1] != Memory.GM:       # GM -> UB pads
        values[4], pad_bits = _pad_register(cg, values[4], pad_bits, dtype)
    args += values + [pad_bits, cg.i64(dtype.sizeof()), cg.i64(TP.OP_INDEX["data_copy_pad"])]
    call_checked(cg, runtime_lib.declare_rt(cg.module, "data_copy_pad"), args, "data_copy_pad",
                 ("dst", "src"), operands=s.args[:2])
