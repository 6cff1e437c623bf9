"""Codegen and runtime-library functions of the cube unit: data_copy with Nd2NzParams (GM → L1),
load_data (L1/GM → L0A/L0B), mmad (PIPE_M) and fixpipe (L0C → GM on PIPE_FIX). Semantics,
layouts and NumPy references: ``ops/cube.py``.

Each instruction is one library call that checks its parameters (ranges → CubeParamError,
alignment → MisalignedAddressError) and every operand's extent in its memory (the always-on
local range checks), moves or computes the data natively and books its time. mmad widens its
operands into row-major float32 (or int32) scratch (``ctx[CUBE_SCRATCH]``, allocated per core by
the runtime), multiplies with the host BLAS (``blas.call_sgemm``; int8 with an exact native
loop) and adds the result into L0C's NZ layout.
"""
from __future__ import annotations

from llvmlite import ir as L

from ...dsl.types import Memory, PipeID, bfloat16, float16, float32, int8
from ...simulator import abi
from ...simulator import timing_params as TP
from .. import ir
from ..ops.cube import (FIXPIPE_FIELDS, FIXPIPE_ND_MAX_M, LOAD2D_FIELDS, LOAD2D_T_FIELDS,
                        MMAD_FIELDS,
                        ND2NZ_FIELDS, CO2Layout, QuantModes, local_alignment)
from . import runtime_lib
from .blas import call_sgemm
from .core import Codegen, FnBuilder, lowering
from .intrinsics import call_checked, operand
from .rtfuncs import call_rt, call_tm, counted, operand_pointer, rt
from .sanitize import READ, READ_ANY, WRITE, path_pipe
from .types import F16, F32, I1, I8, I16, I32, I64, PTR, f32_to_bf16, intrinsic

E = abi.ErrorCode
ALIGN = local_alignment()
MMAD_KINDS = {float16: 0, bfloat16: 1, float32: 2, int8: 3}
K0_SLOTS = {float16: TP.CUBE_K0_F16, bfloat16: TP.CUBE_K0_F16, float32: TP.CUBE_K0_F32,
            int8: TP.CUBE_K0_INT8}


# ----------------------------------------------------------------------------- helpers
def _checks(fb: FnBuilder, values, fields, site) -> None:
    """Each value within its field's (lowest, highest); else CUBE_PARAM_RANGE (value, highest,
    field index)."""
    b = fb.b
    for idx, (v, (_, lo, hi)) in enumerate(zip(values, fields)):
        bad = b.or_(b.icmp_signed("<", v, fb.i64(lo)), b.icmp_signed(">", v, fb.i64(hi)))
        fb.fail_with(bad, E.CUBE_PARAM_RANGE, site, v, fb.i64(hi), fb.i64(idx))


def _aligned(fb: FnBuilder, addr, mem: Memory, which: int, site) -> None:
    a = ALIGN[mem]
    bad = fb.b.icmp_signed("!=", fb.b.and_(addr, fb.i64(a - 1)), fb.i64(0))
    fb.fail_with(bad, E.CUBE_MISALIGNED, site, addr, fb.i64(a), fb.i64(which + 256 * int(mem)))


def _aligned_l0(fb: FnBuilder, dst_mem, addr, site) -> None:
    """``_aligned`` for a load destination whose memory (L0A or L0B) is a runtime value."""
    with fb.b.if_else(fb.b.icmp_signed("==", dst_mem, fb.i64(int(Memory.L0A)))) as (l0a, l0b):
        with l0a:
            _aligned(fb, addr, Memory.L0A, 0, site)
        with l0b:
            _aligned(fb, addr, Memory.L0B, 0, site)


def _local(fb: FnBuilder, mem: Memory, addr, nbytes, which: int, site) -> L.Value:
    """Check [addr, addr+nbytes) of ``mem`` and return the address (i64) of its start."""
    call_rt(fb, "check_local", fb.i64(int(mem)), addr, nbytes, fb.i64(1), fb.i64(which), site)
    return fb.b.add(fb.ld(abi.MEM_BASE + int(mem)), addr)


def _ptr(fb: FnBuilder, base, off_bytes) -> L.Value:
    return fb.b.inttoptr(fb.b.add(base, off_bytes), PTR)


def _memmove(fb: FnBuilder, dst, src, nbytes) -> None:
    fn = intrinsic(fb.module, "llvm.memmove.p0.p0.i64", L.VoidType(), [PTR, PTR, I64, I1])
    fb.b.call(fn, [dst, src, nbytes, L.Constant(I1, 0)])


def _memset(fb: FnBuilder, dst, nbytes) -> None:
    fn = intrinsic(fb.module, "llvm.memset.p0.i64", L.VoidType(), [PTR, I8, I64, I1])
    fb.b.call(fn, [dst, L.Constant(I8, 0), nbytes, L.Constant(I1, 0)])


def _ceil(fb: FnBuilder, v, d):
    return fb.b.sdiv(fb.b.add(v, fb.b.sub(d, fb.i64(1))), d)


def _sanitizing(fb: FnBuilder):
    """``with _sanitizing(fb):`` emits sanitize-mode bookkeeping only run when it is on."""
    return fb.b.if_then(fb.b.icmp_signed("!=", fb.ld(abi.SANITIZE), fb.i64(0)), likely=False)


def _san(fb: FnBuilder, pipe, mem, addr, nbytes, mode: int, site) -> None:
    """Sanitize mode: record an access of [addr, addr+nbytes) of ``mem`` (an i64 or Memory)."""
    m = fb.i64(int(mem)) if isinstance(mem, Memory) else mem
    call_rt(fb, "san_access", pipe, m, addr, nbytes, fb.i64(mode), site)


def _detail(names: tuple, record: str, fields) -> tuple:
    return names + ((record,) + tuple(fields),)


# ----------------------------------------------------------------------------- ND2NZ
@rt("dst_mem", "dst_a", "src_arg", "src_off", "esize", "nd", "n", "d", "smat", "sd", "c0s",
    "ns", "dmat", "path", "op")
def cube_nd2nz(fb: FnBuilder, dst_mem, dst_a, src_arg, src_off, esize, nd, n, d, smat, sd,
               c0s, ns, dmat, path, op, site):
    """GM (ND) → L1 (NZ): rows in 32-byte blocks, a partial last block zero-padded."""
    b = fb.b
    _checks(fb, (nd, n, d, smat, sd, c0s, ns, dmat), ND2NZ_FIELDS, site)
    one = fb.i64(1)
    c0 = b.sdiv(fb.i64(32), esize)
    blocks = _ceil(fb, d, c0)
    work = b.and_(b.and_(b.icmp_signed(">", nd, fb.i64(0)), b.icmp_signed(">", n, fb.i64(0))),
                  b.icmp_signed(">", d, fb.i64(0)))
    with b.if_then(work):
        dext = b.add(b.add(b.add(b.mul(b.sub(nd, one), dmat),
                                 b.mul(b.mul(b.sub(n, one), ns), c0)),
                           b.mul(b.mul(b.sub(blocks, one), c0s), c0)), c0)
        dbase = _local(fb, Memory.L1, dst_a, b.mul(dext, esize), 0, site)
        sext = b.add(b.add(b.mul(b.sub(nd, one), smat), b.mul(b.sub(n, one), sd)), d)
        call_rt(fb, "check_gm", src_arg, fb.sat_mul(src_off, esize), b.mul(sext, esize), esize,
                fb.i64(1), site)
        gm = b.load(b.gep(fb.ctx_ptr(abi.GM_PTRS), [src_arg], source_etype=I64), typ=I64)
        sbase = b.add(gm, b.mul(src_off, esize))
        full = b.sdiv(d, c0)
        rem = b.sub(d, b.mul(full, c0))

        def matrix(i):
            def row(j):
                srow = b.add(sbase, b.mul(b.add(b.mul(i, smat), b.mul(j, sd)), esize))
                drow = b.add(dbase, b.mul(b.add(b.mul(i, dmat), b.mul(b.mul(j, ns), c0)), esize))

                def block(kb):
                    _memmove(fb, _ptr(fb, drow, b.mul(b.mul(kb, c0s), fb.i64(32))),
                             _ptr(fb, srow, b.mul(kb, fb.i64(32))), fb.i64(32))
                counted(fb, full, block)
                with b.if_then(b.icmp_signed(">", rem, fb.i64(0))):
                    tail = _ptr(fb, drow, b.mul(b.mul(full, c0s), fb.i64(32)))
                    _memset(fb, tail, fb.i64(32))
                    _memmove(fb, tail, _ptr(fb, srow, b.mul(full, fb.i64(32))),
                             b.mul(rem, esize))
            counted(fb, n, row)
        counted(fb, nd, matrix)
        with _sanitizing(fb):   # the rows written, exactly: one range per column block
            pipe = path_pipe(fb, path)
            call_rt(fb, "san_issue", pipe, site)

            def san_matrix(i):
                def san_block(kb):
                    at = b.mul(b.add(b.mul(i, dmat), b.mul(b.mul(kb, c0s), c0)), esize)
                    with b.if_else(b.icmp_signed("==", ns, one)) as (dense, strided):
                        with dense:
                            _san(fb, pipe, dst_mem, b.add(dst_a, at), b.mul(n, fb.i64(32)),
                                 WRITE, site)
                        with strided:
                            def san_row(j):
                                _san(fb, pipe, dst_mem, b.add(b.add(dst_a, at), b.mul(
                                    b.mul(j, ns), fb.i64(32))), fb.i64(32), WRITE, site)
                            counted(fb, n, san_row)
                counted(fb, blocks, san_block)
            counted(fb, nd, san_matrix)
    nbytes = b.select(work, b.mul(b.mul(b.mul(nd, n), blocks), fb.i64(32)), fb.i64(0))
    call_tm(fb, "dma", path, nbytes, b.mul(nd, n), op, site)   # one burst per source row


def lower_nd2nz(cg: Codegen, s: ir.Intrinsic) -> None:
    """data_copy(dst_l1, src_gm, Nd2NzParams(...)) (called by lower_movement's data_copy)."""
    dst, src = s.args[:2]
    dmem, da, _ = operand(cg, dst)
    _, sarg, soff = operand(cg, src)
    values = [cg._as_i64(cg.expr(e)) for e in s.args[2:]]
    args = [dmem, da, sarg, soff, cg.i64(s.attr("dtype").sizeof())] + values + [
        cg.i64(TP.path_index(Memory.GM, Memory.L1)), cg.i64(TP.OP_INDEX["data_copy"])]
    call_checked(cg, runtime_lib.declare_rt(cg.module, "cube_nd2nz"), args, "data_copy",
                 _detail(("dst", "src"), "Nd2NzParams", ND2NZ_FIELDS), operands=s.args[:2])


# ----------------------------------------------------------------------------- load_data
@rt("dst_mem", "dst_a", "src_mem", "src_a", "src_off", "esize", "start", "repeat", "sstride",
    "sid", "gap", "transpose", "mode", "path", "op")
def cube_load2d(fb: FnBuilder, dst_mem, dst_a, src_mem, src_a, src_off, esize, start, repeat,
                sstride, sid, gap, transpose, mode, path, op, site):
    """repeat × one 512-byte fractal, src fractal start ± r·src_stride → dst r·(dst_gap+1);
    if_transpose transposes each 16×16 fractal of 16-bit elements."""
    b = fb.b
    _checks(fb, (start, repeat, sstride, sid, gap, transpose, mode), LOAD2D_FIELDS, site)
    tr = b.icmp_signed("!=", transpose, fb.i64(0))
    fb.fail_with(b.and_(tr, b.icmp_signed("!=", esize, fb.i64(2))), E.CUBE_PARAM_RANGE, site,
                 transpose, fb.i64(0), fb.i64(5))
    _aligned_l0(fb, dst_mem, dst_a, site)
    frac = fb.i64(512)
    with b.if_then(b.icmp_signed(">", repeat, fb.i64(0))):
        ext = b.mul(b.add(b.mul(b.sub(repeat, fb.i64(1)), b.add(gap, fb.i64(1))), fb.i64(1)),
                    frac)
        call_rt(fb, "check_local", dst_mem, dst_a, ext, fb.i64(1), fb.i64(0), site)
        dbase = b.add(fb.ld(b.add(fb.i64(abi.MEM_BASE), dst_mem)), dst_a)
        step = b.select(b.icmp_signed("!=", mode, fb.i64(0)), b.sub(fb.i64(0), sstride), sstride)
        pipe = path_pipe(fb, path)
        call_rt(fb, "san_issue", pipe, site)

        def one(r):
            f = b.add(start, b.mul(r, step))
            fb.fail_with(b.icmp_signed("<", f, fb.i64(0)), E.CUBE_PARAM_RANGE, site, f,
                         fb.i64(65535), fb.i64(0))
            soff = fb.sat_add(fb.sat_mul(src_off, esize), b.mul(f, frac))
            sp = operand_pointer(fb, src_mem, src_a, soff, frac, esize, fb.i64(1), fb.i64(1),
                                 site)
            dp = _ptr(fb, dbase, b.mul(b.mul(r, b.add(gap, fb.i64(1))), frac))
            with _sanitizing(fb):   # one fractal read (padding rows allowed), one written
                with b.if_then(b.icmp_signed("!=", src_mem, fb.i64(0))):
                    _san(fb, pipe, src_mem, b.add(src_a, soff), frac, READ_ANY, site)
                _san(fb, pipe, dst_mem, b.add(dst_a, b.mul(b.mul(r, b.add(gap, fb.i64(1))),
                                                           frac)), frac, WRITE, site)
            with b.if_else(tr) as (t, plain):
                with t:
                    def row(i):
                        def col(j):
                            v = b.load(b.gep(sp, [b.add(b.mul(j, fb.i64(16)), i)],
                                             source_etype=I16), typ=I16)
                            b.store(v, b.gep(dp, [b.add(b.mul(i, fb.i64(16)), j)],
                                             source_etype=I16))
                        counted(fb, fb.i64(16), col)
                    counted(fb, fb.i64(16), row)
                with plain:
                    _memmove(fb, dp, sp, frac)
        counted(fb, repeat, one)
    call_tm(fb, "dma", path, b.mul(b.select(b.icmp_signed(">", repeat, fb.i64(0)), repeat,
                                            fb.i64(0)), frac), 1, op, site)


def call_load2d(cg: Codegen, s: ir.Intrinsic, rt_name: str, record: str, checks) -> None:
    """A 2D load_data form: ``rt_name`` called with (dst, src, element size, the record's
    fields, path, op), its run-time checks named after ``record`` (also LoadData2DParamsV2's
    lowering, lower_cube_sparse.py)."""
    dst, src = s.args[:2]
    dmem, da, _ = operand(cg, dst)
    smem, sa, soff = operand(cg, src)
    src_mem = src.memory if isinstance(src, ir.LocalRef) else Memory.GM
    values = [cg._as_i64(cg.expr(e)) for e in s.args[2:]]
    args = [dmem, da, smem, sa, soff, cg.i64(s.attr("dtype").sizeof())] + values + [
        cg.i64(TP.path_index(src_mem, dst.memory)), cg.i64(TP.OP_INDEX[s.op])]
    call_checked(cg, runtime_lib.declare_rt(cg.module, rt_name), args, "load_data",
                 _detail(("dst", "src"), record, checks), operands=s.args[:2])


@lowering("load_data")
def lower_load_data(cg: Codegen, s: ir.Intrinsic) -> None:
    call_load2d(cg, s, "cube_load2d", "LoadData2DParams", LOAD2D_FIELDS)


@rt("dst_mem", "dst_a", "src_a", "esize", "start", "repeat", "sstride", "gap", "frac_gap",
    "mode", "path", "op")
def cube_load2d_t(fb: FnBuilder, dst_mem, dst_a, src_a, esize, start, repeat, sstride, gap,
                  frac_gap, mode, path, op, site):
    """load_data_with_transpose: per repeat one square (16×16 b16; 32×32 b8 from two
    stacked fractals; 16×16 b32 from two side-by-side fractals) transposed into 1 or 2
    fractals (ops/cube.transpose_square)."""
    b = fb.b
    _checks(fb, (start, repeat, sstride, gap, frac_gap, mode), LOAD2D_T_FIELDS, site)
    _aligned_l0(fb, dst_mem, dst_a, site)
    frac = fb.i64(512)
    two = b.icmp_signed("!=", esize, fb.i64(2))
    nfrac = b.select(two, fb.i64(2), fb.i64(1))
    square = b.mul(nfrac, frac)
    with b.if_then(b.icmp_signed(">", repeat, fb.i64(0))):
        last = b.add(b.mul(b.sub(repeat, fb.i64(1)), b.add(gap, fb.i64(1))),
                     b.mul(b.sub(nfrac, fb.i64(1)), b.add(frac_gap, fb.i64(1))))
        call_rt(fb, "check_local", dst_mem, dst_a, b.mul(b.add(last, fb.i64(1)), frac),
                fb.i64(1), fb.i64(0), site)
        dbase = b.add(fb.ld(b.add(fb.i64(abi.MEM_BASE), dst_mem)), dst_a)
        step = b.select(b.icmp_signed("!=", mode, fb.i64(0)), b.sub(fb.i64(0), sstride), sstride)
        pipe = path_pipe(fb, path)
        call_rt(fb, "san_issue", pipe, site)

        def one(r):
            q = b.add(start, b.mul(r, step))
            fb.fail_with(b.icmp_signed("<", q, fb.i64(0)), E.CUBE_PARAM_RANGE, site, q,
                         fb.i64(65535), fb.i64(0))
            sbase = _local(fb, Memory.L1, b.add(src_a, b.mul(q, square)), square, 1, site)
            first_off = b.mul(b.mul(r, b.add(gap, fb.i64(1))), frac)
            other_off = b.add(first_off, b.mul(b.add(frac_gap, fb.i64(1)), frac))
            first = b.add(dbase, first_off)
            other = b.add(dbase, other_off)
            with _sanitizing(fb):   # the square read (padding rows allowed), 1-2 fractals written
                _san(fb, pipe, Memory.L1, b.add(src_a, b.mul(q, square)), square, READ_ANY, site)
                _san(fb, pipe, dst_mem, b.add(dst_a, first_off), frac, WRITE, site)
                with b.if_then(two):
                    _san(fb, pipe, dst_mem, b.add(dst_a, other_off), frac, WRITE, site)
            for es, elem in ((1, I8), (2, I16), (4, I32)):
                with b.if_then(b.icmp_signed("==", esize, fb.i64(es))):
                    k0 = 32 // es

                    def frac_j(j, dst):
                        def row(rr):
                            def col(c):
                                if es == 1:
                                    s_idx = b.add(b.mul(c, fb.i64(32)), b.add(fb.i64(16 * j), rr))
                                elif es == 2:
                                    s_idx = b.add(b.mul(c, fb.i64(16)), rr)
                                else:
                                    half = b.select(b.icmp_signed("<", rr, fb.i64(8)),
                                                    fb.i64(0), fb.i64(128))
                                    s_idx = b.add(half, b.add(b.mul(b.add(fb.i64(8 * j), c),
                                                                    fb.i64(8)),
                                                              b.and_(rr, fb.i64(7))))
                                v = b.load(b.gep(b.inttoptr(sbase, PTR), [s_idx],
                                                 source_etype=elem), typ=elem)
                                d_idx = b.add(b.mul(rr, fb.i64(k0)), c)
                                b.store(v, b.gep(b.inttoptr(dst, PTR), [d_idx],
                                                 source_etype=elem))
                            counted(fb, fb.i64(k0), col)
                        counted(fb, fb.i64(16), row)
                    frac_j(0, first)
                    if es != 2:
                        frac_j(1, other)
        counted(fb, repeat, one)
    moved = b.select(b.icmp_signed(">", repeat, fb.i64(0)), b.mul(repeat, square), fb.i64(0))
    call_tm(fb, "dma", path, moved, 1, op, site)


@lowering("load_data_with_transpose")
def lower_load_data_t(cg: Codegen, s: ir.Intrinsic) -> None:
    dst, src = s.args[:2]
    dmem, da, _ = operand(cg, dst)
    sa = cg.b.sext(cg.expr(src.addr), I64)
    values = [cg._as_i64(cg.expr(e)) for e in s.args[2:]]
    args = [dmem, da, sa, cg.i64(s.attr("dtype").sizeof())] + values + [
        cg.i64(TP.path_index(Memory.L1, dst.memory)),
        cg.i64(TP.OP_INDEX["load_data_with_transpose"])]
    call_checked(cg, runtime_lib.declare_rt(cg.module, "cube_load2d_t"), args,
                 "load_data_with_transpose",
                 _detail(("dst", "src"), "LoadData2dTransposeParams", LOAD2D_T_FIELDS),
                 operands=s.args[:2])


# ----------------------------------------------------------------------------- mmad
def _hf32(fb: FnBuilder, x: L.Value) -> L.Value:
    """x as HF32 when ctx[HF32] turns the mode on (ops/sysctl.hf32_reference), else x."""
    from ..ops.sysctl import HF32_AWAY, HF32_DROPPED_BITS, HF32_ON
    b = fb.b
    state = fb.ld(abi.HF32)
    bits = b.bitcast(x, I32)
    half = 1 << (HF32_DROPPED_BITS - 1)
    odd = b.and_(b.lshr(bits, L.Constant(I32, HF32_DROPPED_BITS)), L.Constant(I32, 1))
    away = b.icmp_signed("!=", b.and_(state, fb.i64(HF32_AWAY)), fb.i64(0))
    add = b.select(away, L.Constant(I32, half), b.add(L.Constant(I32, half - 1), odd))
    rounded = b.and_(b.add(bits, add), L.Constant(I32, ~((1 << HF32_DROPPED_BITS) - 1)))
    special = b.icmp_unsigned("==", b.and_(bits, L.Constant(I32, 0x7F800000)),
                              L.Constant(I32, 0x7F800000))
    on = b.icmp_signed("!=", b.and_(state, fb.i64(HF32_ON)), fb.i64(0))
    return b.bitcast(b.select(b.and_(on, b.xor(special, L.Constant(I1, 1))), rounded, bits), F32)


def _load_elem(fb: FnBuilder, base, idx, kind: int) -> L.Value:
    """Element ``idx`` of an L0A/L0B operand as float32 (kinds 0..2) or int32 (kind 3)."""
    b = fb.b
    p = b.inttoptr(base, PTR)
    if kind == 0:
        return b.fpext(b.load(b.gep(p, [idx], source_etype=F16), typ=F16), F32)
    if kind == 1:
        v = b.load(b.gep(p, [idx], source_etype=I16), typ=I16)
        return b.bitcast(b.shl(b.zext(v, I32), L.Constant(I32, 16)), F32)
    if kind == 2:
        return _hf32(fb, b.load(b.gep(p, [idx], source_etype=F32), typ=F32))
    return b.sext(b.load(b.gep(p, [idx], source_etype=I8), typ=I8), I32)


@rt("c_a", "a_a", "b_a", "bias_a", "m", "n", "k", "unit_flag", "source", "init", "kind", "op")
def cube_mmad(fb: FnBuilder, c_a, a_a, b_a, bias_a, m, n, k, unit_flag, source, init, kind, op,
              site):
    """L0C (NZ) = L0A (ZZ) @ L0B (ZN) [+ L0C | + bias]; see ops/cube.py."""
    b = fb.b
    _checks(fb, (m, n, k, unit_flag, source, init), MMAD_FIELDS, site)
    has_bias = b.icmp_signed(">=", bias_a, fb.i64(0))
    fb.fail_with(b.and_(b.xor(has_bias, L.Constant(I1, 1)),
                        b.icmp_signed("!=", source, fb.i64(0))),
                 E.CUBE_PARAM_RANGE, site, source, fb.i64(0), fb.i64(4))
    _aligned(fb, c_a, Memory.L0C, 0, site)
    _aligned(fb, a_a, Memory.L0A, 1, site)
    _aligned(fb, b_a, Memory.L0B, 2, site)
    with b.if_then(has_bias):
        _aligned(fb, bias_a, Memory.BT, 3, site)
    zero, one, sixteen = fb.i64(0), fb.i64(1), fb.i64(16)
    work = b.and_(b.and_(b.icmp_signed(">", m, zero), b.icmp_signed(">", n, zero)),
                  b.icmp_signed(">", k, zero))
    with b.if_then(work):
        esize = b.select(b.icmp_signed("==", kind, fb.i64(3)), one,
                         b.select(b.icmp_signed("==", kind, fb.i64(2)), fb.i64(4), fb.i64(2)))
        k0 = b.sdiv(fb.i64(32), esize)
        m1, n1, k1 = _ceil(fb, m, sixteen), _ceil(fb, n, sixteen), _ceil(fb, k, k0)
        gemv = b.icmp_signed("==", m, one)
        a_ext = b.select(gemv, b.mul(k, esize), b.mul(b.mul(m1, k1), fb.i64(512)))
        c_base = _local(fb, Memory.L0C, c_a, b.mul(b.mul(m1, n1), fb.i64(1024)), 0, site)
        a_base = _local(fb, Memory.L0A, a_a, a_ext, 1, site)
        b_base = _local(fb, Memory.L0B, b_a, b.mul(b.mul(k1, n1), fb.i64(512)), 2, site)
        bias_base = fb.alloca_builder.alloca(I64, name="bias_base")
        b.store(zero, bias_base)
        with b.if_then(has_bias):
            b.store(_local(fb, Memory.BT, bias_a, b.mul(n, fb.i64(4)), 3, site), bias_base)
        with _sanitizing(fb):   # reads A, B (bias; C when accumulating), then writes C
            m_pipe = fb.i64(int(PipeID.PIPE_M))
            c_bytes = b.mul(b.mul(m1, n1), fb.i64(1024))
            call_rt(fb, "san_issue", m_pipe, site)
            _san(fb, m_pipe, Memory.L0A, a_a, a_ext, READ, site)
            _san(fb, m_pipe, Memory.L0B, b_a, b.mul(b.mul(k1, n1), fb.i64(512)), READ, site)
            with b.if_then(has_bias):
                _san(fb, m_pipe, Memory.BT, bias_a, b.mul(n, fb.i64(4)), READ, site)
            with b.if_then(b.and_(b.icmp_signed("==", init, zero),
                                  b.xor(has_bias, L.Constant(I1, 1)))):
                _san(fb, m_pipe, Memory.L0C, c_a, c_bytes, READ, site)
            _san(fb, m_pipe, Memory.L0C, c_a, c_bytes, WRITE, site)
        mp, np_ = b.mul(m1, sixteen), b.mul(n1, sixteen)
        scratch = fb.ld(abi.CUBE_SCRATCH)
        sa = scratch
        sb = b.add(sa, b.mul(fb.ld(abi.MEM_SIZE + int(Memory.L0A)), fb.i64(4)))
        sc = b.add(sb, b.mul(fb.ld(abi.MEM_SIZE + int(Memory.L0B)), fb.i64(4)))

        def a_index(i, p):
            zz = b.add(b.add(b.mul(b.add(b.mul(b.ashr(i, fb.i64(4)), k1), b.sdiv(p, k0)),
                                   b.mul(sixteen, k0)),
                             b.mul(b.and_(i, fb.i64(15)), k0)), b.srem(p, k0))
            return b.select(gemv, p, zz)

        def b_index(p, j):
            return b.add(b.add(b.mul(b.add(b.mul(b.sdiv(p, k0), n1), b.ashr(j, fb.i64(4))),
                                     b.mul(sixteen, k0)),
                               b.mul(b.and_(j, fb.i64(15)), k0)), b.srem(p, k0))

        def c_index(i, j):
            return b.add(b.add(b.mul(b.add(b.mul(b.ashr(j, fb.i64(4)), m1), b.ashr(i, fb.i64(4))),
                                     fb.i64(256)), b.mul(b.and_(i, fb.i64(15)), sixteen)),
                         b.and_(j, fb.i64(15)))

        for kind_v in range(4):
            is_int = kind_v == 3
            et = I32 if is_int else F32
            ezero = L.Constant(et, 0) if is_int else L.Constant(F32, 0.0)
            with b.if_then(b.icmp_signed("==", kind, fb.i64(kind_v))):
                def gather_a(i):
                    def col(p):
                        v = _load_elem(fb, a_base, a_index(i, p), kind_v)
                        v = b.select(b.icmp_signed("<", i, m), v, ezero)
                        b.store(v, b.gep(b.inttoptr(sa, PTR), [b.add(b.mul(i, k), p)],
                                         source_etype=et))
                    counted(fb, k, col)
                counted(fb, mp, gather_a)

                def gather_b(p):   # float: k × np row-major; int: transposed, np × k
                    def col(j):
                        v = _load_elem(fb, b_base, b_index(p, j), kind_v)
                        v = b.select(b.icmp_signed("<", j, n), v, ezero)
                        at = b.add(b.mul(j, k), p) if is_int else b.add(b.mul(p, np_), j)
                        b.store(v, b.gep(b.inttoptr(sb, PTR), [at], source_etype=et))
                    counted(fb, np_, col)
                counted(fb, k, gather_b)
        with b.if_else(b.icmp_signed("==", kind, fb.i64(3))) as (ints, floats):
            with ints:
                _write_c(fb, True, mp, np_, n, k, sa, sb, sc, c_base, c_index, has_bias,
                         b.load(bias_base, typ=I64), init)
            with floats:
                call_sgemm(b, fb.module, fb.ctx, mp, np_, k, b.inttoptr(sa, PTR), k,
                           b.inttoptr(sb, PTR), np_, 0.0, b.inttoptr(sc, PTR), np_)
                _write_c(fb, False, mp, np_, n, k, sa, sb, sc, c_base, c_index, has_bias,
                         b.load(bias_base, typ=I64), init)
    call_tm(fb, "cube", op, m, n, k, b.select(b.icmp_signed("==", kind, fb.i64(3)),
                                              fb.i64(TP.CUBE_K0_INT8),
                                              b.select(b.icmp_signed("==", kind, fb.i64(2)),
                                                       fb.i64(TP.CUBE_K0_F32),
                                                       fb.i64(TP.CUBE_K0_F16))), site)


def _write_c(fb: FnBuilder, is_int, mp, np_, n, k, sa, sb, sc, c_base, c_index, has_bias,
             bias_base, init) -> None:
    """L0C[i, j] = product (+ bias[j] | + old unless init); int32 saturates."""
    b = fb.b
    keep_old = b.and_(b.icmp_signed("==", init, fb.i64(0)), b.xor(has_bias, L.Constant(I1, 1)))
    cptr, bptr = b.inttoptr(c_base, PTR), b.inttoptr(bias_base, PTR)
    acc = fb.alloca_builder.alloca(I32, name="dot")

    def row(i):
        def col(j):
            slot = b.gep(cptr, [c_index(i, j)], source_etype=I32 if is_int else F32)
            in_n = b.icmp_signed("<", j, n)
            if is_int:
                b.store(L.Constant(I32, 0), acc)

                def step(p):
                    x = b.load(b.gep(b.inttoptr(sa, PTR), [b.add(b.mul(i, k), p)],
                                     source_etype=I32), typ=I32)
                    y = b.load(b.gep(b.inttoptr(sb, PTR), [b.add(b.mul(j, k), p)],
                                     source_etype=I32), typ=I32)
                    b.store(b.add(b.load(acc, typ=I32), b.mul(x, y)), acc)
                counted(fb, k, step)
                v = b.sext(b.load(acc, typ=I32), I64)
                bias = b.select(b.and_(has_bias, in_n), b.sext(b.load(
                    b.gep(bptr, [b.select(in_n, j, fb.i64(0))], source_etype=I32), typ=I32),
                    I64), fb.i64(0))
                old = b.select(keep_old, b.sext(b.load(slot, typ=I32), I64), fb.i64(0))
                v = b.add(b.add(v, bias), old)
                v = b.select(b.icmp_signed(">", v, fb.i64(2 ** 31 - 1)), fb.i64(2 ** 31 - 1), v)
                v = b.select(b.icmp_signed("<", v, fb.i64(-2 ** 31)), fb.i64(-2 ** 31), v)
                b.store(b.trunc(v, I32), slot)
            else:
                v = b.load(b.gep(b.inttoptr(sc, PTR), [b.add(b.mul(i, np_), j)],
                                 source_etype=F32), typ=F32)
                with b.if_then(b.and_(has_bias, in_n)):
                    bv = b.load(b.gep(bptr, [j], source_etype=F32), typ=F32)
                    b.store(b.fadd(v, bv), slot)
                with b.if_then(b.xor(b.and_(has_bias, in_n), L.Constant(I1, 1))):
                    old = b.load(slot, typ=F32)
                    b.store(b.select(keep_old, b.fadd(v, old), v), slot)
        counted(fb, np_, col)
    counted(fb, mp, row)


@lowering("mmad")
def lower_mmad(cg: Codegen, s: ir.Intrinsic) -> None:
    dst, fm, flt, bias = s.args[:4]
    addr = [cg.b.sext(cg.expr(r.addr), I64) for r in (dst, fm, flt)]
    addr.append(cg.b.sext(cg.expr(bias.addr), I64) if bias is not None else cg.i64(-1))
    values = [cg._as_i64(cg.expr(e)) for e in s.args[4:]]
    dtype = s.attr("dtype")
    args = addr + values + [cg.i64(MMAD_KINDS[dtype]), cg.i64(TP.OP_INDEX["mmad"])]
    call_checked(cg, runtime_lib.declare_rt(cg.module, "cube_mmad"), args, "mmad",
                 _detail(("dst", "fm", "filter", "bias"), "MmadParams", MMAD_FIELDS),
                 operands=s.args[:4])


# ----------------------------------------------------------------------------- fixpipe
def _convert_store(fb: FnBuilder, sptr, dptr, quant, relu, deq, src_int) -> None:
    """One L0C element → GM, by quant mode (ops/cube.convert_l0c)."""
    b = fb.b
    relu_on = b.icmp_signed("!=", relu, fb.i64(0))
    with b.if_else(b.icmp_signed("!=", src_int, fb.i64(0))) as (ints, floats):
        with ints:
            x = b.load(sptr, typ=I32)
            with b.if_else(b.icmp_signed("==", quant, fb.i64(int(QuantModes.DEQF16)))) as (
                    deq_mode, plain):
                with deq_mode:
                    mcb = b.icmp_signed("!=", b.and_(b.lshr(deq, fb.i64(36)), fb.i64(1)),
                                        fb.i64(0))
                    shift = b.add(b.and_(b.lshr(deq, fb.i64(32)), fb.i64(15)), fb.i64(1))
                    wide = b.sext(x, I64)
                    sh = b.ashr(wide, shift)
                    sh = b.select(b.icmp_signed(">", sh, fb.i64(32767)), fb.i64(32767), sh)
                    sh = b.select(b.icmp_signed("<", sh, fb.i64(-32768)), fb.i64(-32768), sh)
                    f = b.sitofp(b.select(mcb, sh, wide), F32)
                    scale = b.bitcast(b.trunc(b.and_(deq, fb.i64(0xFFFFE000)), I32), F32)
                    neg_scale = b.select(relu_on, L.Constant(F32, 0.0), scale)
                    f = b.fmul(f, b.select(b.fcmp_ordered(">=", f, L.Constant(F32, 0.0)), scale,
                                           neg_scale))
                    f = b.select(b.fcmp_ordered(">", f, L.Constant(F32, 65504.0)),
                                 L.Constant(F32, 65504.0), f)
                    f = b.select(b.fcmp_ordered("<", f, L.Constant(F32, -65504.0)),
                                 L.Constant(F32, -65504.0), f)
                    b.store(b.fptrunc(f, F16), dptr)
                with plain:
                    neg = b.and_(relu_on, b.icmp_signed("<", x, L.Constant(I32, 0)))
                    b.store(b.select(neg, L.Constant(I32, 0), x), dptr)
        with floats:
            x = b.load(sptr, typ=F32)
            neg = b.and_(relu_on, b.fcmp_ordered("<", x, L.Constant(F32, 0.0)))
            x = b.select(neg, L.Constant(F32, 0.0), x)
            with b.if_then(b.icmp_signed("==", quant, fb.i64(int(QuantModes.NoQuant)))):
                b.store(x, dptr)
            with b.if_then(b.icmp_signed("==", quant, fb.i64(int(QuantModes.F322F16)))):
                b.store(b.fptrunc(x, F16), dptr)
            with b.if_then(b.icmp_signed("==", quant, fb.i64(int(QuantModes.F322BF16)))):
                b.store(f32_to_bf16(b, x), dptr)


@rt("dst_arg", "dst_off", "src_a", "n_size", "m_size", "src_stride", "dst_stride", "deq",
    "nd_num", "src_nd_stride", "dst_nd_stride", "relu", "unit_flag", "split", "quant", "layout",
    "src_int", "es", "path", "op")
def cube_fixpipe(fb: FnBuilder, dst_arg, dst_off, src_a, n_size, m_size, src_stride, dst_stride,
                 deq, nd_num, src_nd_stride, dst_nd_stride, relu, unit_flag, split, quant,
                 layout, src_int, es, path, op, site):
    """L0C (NZ) → GM, NZ2ND (layout ROW_MAJOR) or NZ2NZ, converting each element."""
    b = fb.b
    _checks(fb, (n_size, m_size, src_stride, dst_stride, nd_num, src_nd_stride, dst_nd_stride),
            FIXPIPE_FIELDS, site)
    nz = b.icmp_signed("==", layout, fb.i64(int(CO2Layout.NZ)))
    fb.fail_with(b.and_(b.xor(nz, L.Constant(I1, 1)),
                        b.icmp_signed(">", m_size, fb.i64(FIXPIPE_ND_MAX_M))),
                 E.CUBE_PARAM_RANGE, site, m_size, fb.i64(FIXPIPE_ND_MAX_M), fb.i64(1))
    _aligned(fb, src_a, Memory.L0C, 1, site)
    zero, one, sixteen = fb.i64(0), fb.i64(1), fb.i64(16)
    nd = b.select(nz, one, nd_num)
    work = b.and_(b.and_(b.icmp_signed(">", n_size, zero), b.icmp_signed(">", m_size, zero)),
                  b.icmp_signed(">", nd, zero))
    n1 = _ceil(fb, n_size, sixteen)
    with b.if_then(work):
        sext = b.add(b.add(b.mul(b.mul(b.sub(nd, one), src_nd_stride), fb.i64(256)),
                           b.mul(b.mul(b.sub(n1, one), src_stride), sixteen)),
                     b.mul(m_size, sixteen))
        sbase = _local(fb, Memory.L0C, src_a, b.mul(sext, fb.i64(4)), 1, site)
        with _sanitizing(fb):   # per matrix and 16-column block: m_size rows of 64 bytes
            fix = path_pipe(fb, path)
            call_rt(fb, "san_issue", fix, site)

            def san_matrix(t):
                def san_block(kb):
                    at = b.add(b.mul(b.mul(t, src_nd_stride), fb.i64(256)),
                               b.mul(b.mul(kb, src_stride), sixteen))
                    _san(fb, fix, Memory.L0C, b.add(src_a, b.mul(at, fb.i64(4))),
                         b.mul(m_size, fb.i64(64)), READ, site)
                counted(fb, n1, san_block)
            counted(fb, nd, san_matrix)
        gm = b.load(b.gep(fb.ctx_ptr(abi.GM_PTRS), [dst_arg], source_etype=I64), typ=I64)
        dbase = b.add(gm, b.mul(dst_off, es))
        with b.if_else(nz) as (to_nz, to_nd):
            with to_nz:
                dext = b.add(b.mul(b.mul(b.sub(n1, one), dst_stride), fb.i64(32)),
                             b.mul(b.mul(m_size, sixteen), es))
                call_rt(fb, "check_gm", dst_arg, fb.sat_mul(dst_off, es), dext, es, zero, site)

                def row(i):
                    def block(kb):
                        def elem(e):
                            s = b.add(b.add(b.mul(b.mul(kb, src_stride), sixteen),
                                            b.mul(i, sixteen)), e)
                            d = b.add(b.mul(b.mul(kb, dst_stride), fb.i64(32)),
                                      b.mul(b.add(b.mul(i, sixteen), e), es))
                            _convert_store(fb, _ptr(fb, sbase, b.mul(s, fb.i64(4))),
                                           _ptr(fb, dbase, d), quant, relu, deq, src_int)
                        counted(fb, sixteen, elem)
                        call_rt(fb, "san_gm_write", dst_arg, b.add(b.mul(dst_off, es), b.add(
                            b.mul(b.mul(kb, dst_stride), fb.i64(32)),
                            b.mul(b.mul(i, sixteen), es))), b.mul(sixteen, es), site)
                    counted(fb, n1, block)
                counted(fb, m_size, row)
            with to_nd:
                dext = b.add(b.add(b.mul(b.sub(nd, one), dst_nd_stride),
                                   b.mul(b.sub(m_size, one), dst_stride)), n_size)
                call_rt(fb, "check_gm", dst_arg, fb.sat_mul(dst_off, es), b.mul(dext, es), es, zero,
                        site)

                def matrix(t):
                    def row(i):
                        drow = b.add(b.mul(t, dst_nd_stride), b.mul(i, dst_stride))

                        def col(j):
                            s = b.add(b.add(b.add(b.mul(b.mul(t, src_nd_stride), fb.i64(256)),
                                                  b.mul(b.mul(b.ashr(j, fb.i64(4)), src_stride),
                                                        sixteen)),
                                            b.mul(i, sixteen)), b.and_(j, fb.i64(15)))
                            _convert_store(fb, _ptr(fb, sbase, b.mul(s, fb.i64(4))),
                                           _ptr(fb, dbase, b.mul(b.add(drow, j), es)), quant,
                                           relu, deq, src_int)
                        counted(fb, n_size, col)
                        call_rt(fb, "san_gm_write", dst_arg, b.mul(b.add(dst_off, drow), es),
                                b.mul(n_size, es), site)
                    counted(fb, m_size, row)
                counted(fb, nd, matrix)
    moved = b.select(nz, b.mul(b.mul(m_size, b.mul(n1, sixteen)), es),
                     b.mul(b.mul(b.mul(nd, m_size), n_size), es))
    call_tm(fb, "dma", path, b.select(work, moved, zero), 1, op, site)


@lowering("fixpipe")
def lower_fixpipe(cg: Codegen, s: ir.Intrinsic) -> None:
    dst, src = s.args[:2]
    _, darg, doff = operand(cg, dst)
    sa = cg.b.sext(cg.expr(src.addr), I64)
    values = [cg._as_i64(cg.expr(e)) for e in s.args[2:]]
    from .lower_cube_sparse import pre_quant_deq   # set_fix_pipe_pre_quant_flag's register
    values[4] = pre_quant_deq(cg, values[4], s)
    args = [darg, doff, sa] + values + [
        cg.i64(s.attr("quant")), cg.i64(s.attr("layout")),
        cg.i64(int(s.attr("src_dtype").is_int)), cg.i64(s.attr("dtype").sizeof()),
        cg.i64(TP.path_index(Memory.L0C, Memory.GM)), cg.i64(TP.OP_INDEX["fixpipe"])]
    call_checked(cg, runtime_lib.declare_rt(cg.module, "cube_fixpipe"), args, "fixpipe",
                 _detail(("dst", "src"), "FixpipeParamsV220", FIXPIPE_FIELDS), operands=s.args[:2])
