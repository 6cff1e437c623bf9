"""Codegen of AIPP (semantics and timing: ``ops/aipp.py``): ``set_aipp_functions`` charges
its register writes to the scalar unit (sema assigns the ``aipp.*`` variables), and
``load_image_to_local`` calls the runtime function ``asc_rt_aipp_load``, which checks every
source row against its GM argument and the destination against its tensor, converts pixel by
pixel, records the MTE2 write in sanitize mode and charges one GM -> L1 copy."""
from __future__ import annotations

from llvmlite import ir as L

from ...dsl.types import Memory
from ...simulator import abi
from ...simulator import timing_params as TP
from .. import ir
from ..ops.aipp import AippInputFormat
from . import runtime_lib
from .core import Codegen, FnBuilder, lowering
from .intrinsics import call_checked, operand
from .rtfuncs import call_rt, call_tm, counted, rt
from .sanitize import WRITE, path_pipe
from .types import I64, I8, PTR

I16, F32, HALF = L.IntType(16), L.FloatType(), L.HalfType()
L1 = int(Memory.L1)
_REGS = ("arg", "off", "arg1", "off1", "fmt", "f16", "swap_rb", "swap_ax", "swap_uv", "single",
         "csc", "csc_r0", "csc_r1", "csc_r2", "csc_bias", "mean0", "mean1", "mean2", "min0",
         "min1", "min2", "var0", "var1", "var2", "cpad_mode", "cpad_value", "pad0", "pad1",
         "pad2")
_CROP = ("hsize", "vsize", "hstart", "vstart", "src_w", "left", "right")


@lowering("set_aipp_functions")
def lower_set_aipp(cg: Codegen, s: ir.Intrinsic) -> None:
    call_tm(cg, "scalar_access", 1, TP.OP_INDEX["set_aipp_functions"])


def _pick(fb: FnBuilder, k, values):
    """values[k] for an i64 k in 0..len(values)-1."""
    out = values[-1]
    for i in range(len(values) - 2, -1, -1):
        out = fb.b.select(fb.b.icmp_signed("==", k, fb.i64(i)), values[i], out)
    return out


def _field(fb: FnBuilder, word, index: int, bits: int, signed: bool):
    """Field ``index`` of ``bits`` bits of a packed register word, as an i64."""
    b = fb.b
    v = b.and_(b.lshr(word, fb.i64(index * bits)), fb.i64((1 << bits) - 1))
    if signed:
        v = b.sub(b.xor(v, fb.i64(1 << (bits - 1))), fb.i64(1 << (bits - 1)))
    return v


@rt("dst", *_REGS, *_CROP, "path", "op")
def aipp_load(fb: FnBuilder, dst, arg, off, arg1, off1, fmt, f16, swap_rb, swap_ax, swap_uv,
              single, csc, csc_r0, csc_r1, csc_r2, csc_bias, mean0, mean1, mean2, min0, min1,
              min2, var0, var1, var2, cpad_mode, cpad_value, pad0, pad1, pad2, hsize, vsize,
              hstart, vstart, src_w, left, right, path, op, site):
    b = fb.b
    one = fb.i64(1)
    is_yuv400 = b.icmp_signed("==", fmt, fb.i64(int(AippInputFormat.YUV400_U8)))
    is_xrgb = b.icmp_signed("==", fmt, fb.i64(int(AippInputFormat.XRGB8888_U8)))
    is_sp = b.icmp_signed("==", fmt, fb.i64(int(AippInputFormat.YUV420SP_U8)))
    in_c = b.select(b.or_(is_yuv400, is_sp), one, b.select(is_xrgb, fb.i64(4), fb.i64(3)))
    out_c = b.select(is_yuv400, one, fb.i64(3))
    esize = b.select(b.icmp_signed("!=", f16, fb.i64(0)), fb.i64(2), one)
    n_c = b.select(b.icmp_signed("==", cpad_mode, fb.i64(0)), b.sdiv(fb.i64(32), esize),
                   fb.i64(4))
    rows = b.select(b.icmp_signed("!=", single, fb.i64(0)), one, vsize)
    width = b.add(b.add(left, hsize), right)
    total = b.mul(b.mul(b.mul(rows, width), n_c), esize)
    call_rt(fb, "check_local", fb.i64(L1), dst, total, one, fb.i64(0), site)
    base = b.add(fb.ld(abi.MEM_BASE + L1), dst)
    gm_ptrs = fb.ctx_ptr(abi.GM_PTRS)
    gm = b.load(b.gep(gm_ptrs, [arg], source_etype=I64), typ=I64)
    base_ch = b.select(b.and_(is_xrgb, b.icmp_signed("!=", swap_ax, fb.i64(0))), one,
                       fb.i64(0))
    rb = b.and_(b.icmp_signed("!=", swap_rb, fb.i64(0)), b.xor(b.or_(is_yuv400, is_sp),
                                                             L.Constant(L.IntType(1), 1)))
    uv_swap = b.icmp_signed("!=", swap_uv, fb.i64(0))
    do_csc = b.icmp_signed("!=", csc, fb.i64(0))
    is16 = b.icmp_signed("!=", f16, fb.i64(0))
    uv_stride = b.mul(b.sdiv(b.add(src_w, one), fb.i64(2)), fb.i64(2))
    uv_first = b.mul(b.sdiv(hstart, fb.i64(2)), fb.i64(2))
    uv_bytes = b.sub(b.mul(b.sdiv(b.add(b.add(hstart, hsize), one), fb.i64(2)), fb.i64(2)),
                     uv_first)
    chan = [fb.alloca_builder.alloca(I64, name=f"aipp_in{k}") for k in range(3)]
    matrix = [[_field(fb, w, c, 16, True) for c in range(3)] for w in (csc_r0, csc_r1, csc_r2)]
    bias_in = [_field(fb, csc_bias, k, 8, False) for k in range(3)]
    bias_out = [_field(fb, csc_bias, 3 + k, 8, False) for k in range(3)]

    def half(bits):
        return b.fpext(b.bitcast(b.trunc(bits, I16), HALF), F32)

    def byte(addr):
        return b.zext(b.load(b.inttoptr(addr, PTR), typ=I8), I64)

    def store(addr, bits):
        with b.if_else(is16) as (h, i8):
            with h:
                b.store(b.trunc(bits, I16), b.inttoptr(addr, PTR))
            with i8:
                b.store(b.trunc(bits, I8), b.inttoptr(addr, PTR))

    def row(i):
        r = b.add(vstart, i)
        start = b.add(off, b.mul(b.add(b.mul(r, src_w), hstart), in_c))
        call_rt(fb, "check_gm", arg, start, b.mul(hsize, in_c), one, one, site)
        src_row = b.add(gm, start)
        uv_row = fb.alloca_builder.alloca(I64, name="aipp_uv_row")
        with b.if_then(is_sp):
            uv_start = b.add(off1, b.add(b.mul(b.sdiv(r, fb.i64(2)), uv_stride), uv_first))
            call_rt(fb, "check_gm", arg1, uv_start, uv_bytes, one, one, site)
            gm1 = b.load(b.gep(gm_ptrs, [arg1], source_etype=I64), typ=I64)
            b.store(b.sub(b.add(gm1, uv_start), uv_first), uv_row)
        drow = b.add(base, b.mul(b.mul(b.mul(i, width), n_c), esize))

        def pixel(j):
            inside = b.and_(b.icmp_signed(">=", j, left),
                            b.icmp_signed("<", j, b.add(left, hsize)))
            with b.if_then(inside):
                c = b.sub(j, left)
                src_px = b.add(src_row, b.mul(c, in_c))
                with b.if_else(is_sp) as (sp, packed):
                    with sp:
                        pair = b.add(b.load(uv_row, typ=I64),
                                     b.mul(b.sdiv(b.add(hstart, c), fb.i64(2)), fb.i64(2)))
                        u, v = byte(pair), byte(b.add(pair, one))
                        b.store(byte(src_px), chan[0])
                        b.store(b.select(uv_swap, v, u), chan[1])
                        b.store(b.select(uv_swap, u, v), chan[2])
                    with packed:
                        for k in range(3):
                            kk = b.select(rb, fb.i64(2 - k), fb.i64(k))
                            b.store(byte(b.add(src_px, b.add(base_ch, kk))), chan[k])
                with b.if_then(do_csc):
                    ins = [b.sub(b.load(chan[k], typ=I64), bias_in[k]) for k in range(3)]
                    outs = []
                    for k in range(3):
                        acc = b.add(b.add(b.mul(matrix[k][0], ins[0]), b.mul(matrix[k][1],
                                                                             ins[1])),
                                    b.mul(matrix[k][2], ins[2]))
                        outs.append(fb.smax(fb.smin(b.add(b.ashr(acc, fb.i64(8)), bias_out[k]),
                                                    fb.i64(255)), fb.i64(0)))
                    for k in range(3):
                        b.store(outs[k], chan[k])
            dpx = b.add(drow, b.mul(b.mul(j, n_c), esize))

            def channel(k):
                slot = fb.alloca_builder.alloca(I64, name="aipp_v")
                b.store(cpad_value, slot)
                with b.if_then(b.icmp_signed("<", k, out_c)):
                    b.store(_pick(fb, k, (pad0, pad1, pad2)), slot)
                    with b.if_then(inside):
                        p = b.load(_pick(fb, k, chan), typ=I64)
                        centred = b.sub(p, _pick(fb, k, (mean0, mean1, mean2)))
                        clamped = fb.smax(fb.smin(centred, fb.i64(127)), fb.i64(-128))
                        value = b.fmul(b.fsub(b.sitofp(centred, F32),
                                              half(_pick(fb, k, (min0, min1, min2)))),
                                       half(_pick(fb, k, (var0, var1, var2))))
                        hbits = b.zext(b.bitcast(b.fptrunc(value, HALF), I16), I64)
                        b.store(b.select(is16, hbits, clamped), slot)
                store(b.add(dpx, b.mul(k, esize)), b.load(slot, typ=I64))
            counted(fb, n_c, channel)
        counted(fb, width, pixel)
    counted(fb, rows, row)
    with b.if_then(b.icmp_signed("!=", fb.ld(abi.SANITIZE), fb.i64(0)), likely=False):
        pipe = path_pipe(fb, path)
        call_rt(fb, "san_issue", pipe, site)
        call_rt(fb, "san_access", pipe, fb.i64(L1), dst, total, fb.i64(WRITE), site)
    call_tm(fb, "dma", path, total, rows, op, site)


@lowering("load_image_to_local")
def lower_load_image(cg: Codegen, s: ir.Intrinsic) -> None:
    dst = s.args[0]
    _, da, _ = operand(cg, dst)
    values = [cg._as_i64(cg.expr(e)) for e in s.args[1:]]
    args = [da] + values + [cg.i64(TP.path_index(Memory.GM, Memory.L1)),
                            cg.i64(TP.OP_INDEX["load_image_to_local"])]
    call_checked(cg, runtime_lib.declare_rt(cg.module, "aipp_load"), args,
                 "load_image_to_local", ("dst", "the image"), operands=(dst,))
