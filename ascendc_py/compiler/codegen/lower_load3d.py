"""Codegen, runtime-library function and timing of the img2col load (``load_data`` with
``LoadData3DParamsV2`` or ``LoadData3DParamsV2Pro``, one library function for both; the
fmatrix and padding registers; semantics and the NumPy reference: ``ops/load3d.py``).

One library call per instruction: it checks every field (range → CubeParamError naming the
field; C0 alignment and spans → CubeParamError saying the rule), the destination's 512-byte
alignment and the source's 32-byte alignment, the feature map's extent in L1 and the
fractals' extent in L0A/L0B, then writes the fractals 32 bytes (one C0 group of one window) at
a time: a copy of the source pixel's C0 channels, or the pad value.

Timing ("load3d" below): the CA model's rule for Load3D (the reference notes' aicore_params.md
§2, item 4: LOAD2D ``ceil(repeat·512 / BW_L0)`` + 25, LOAD3D + 43): the bytes written at the
path's width (L1 → L0A 256 B/cycle, L1 → L0B 128 B/cycle, §1.5 "Theoretical path widths")
occupy MTE1, and the data is there ``CubeCosts.load3d_latency`` = 43 cycles later.
"""
from __future__ import annotations

from ...dsl.types import Memory, float64
from ...simulator import abi
from ...simulator import timing_params as TP
from .. import ir
from ..ops.load3d import (BOUNDARY_MIN, FMATRIX_FIELDS, LOAD3D_RULES, LOAD3D_V2_FIELDS,
                          REPEAT_FIELDS, V2PRO_FIELDS, V2PRO_PACKING)
from . import runtime_lib
from .core import Codegen, FnBuilder, lowering
from .intrinsics import call_checked, operand
from .lower_cube import _aligned, _aligned_l0, _checks, _memmove, _ptr, _san, _sanitizing
from .lower_movement import _bits, _fill, _value_bits
from .rtfuncs import call_rt, call_tm, counted, rt
from .sanitize import READ_ANY, WRITE, path_pipe
from .timing import _TB, _issue, tm
from .types import F64, I64, convert

E = abi.ErrorCode
_NAMES = tuple(n for n, _, _ in LOAD3D_V2_FIELDS)
#: the site's record: the fields, then one pseudo-field per rule ("rule:<what>:<must be>")
DETAIL_FIELDS = LOAD3D_V2_FIELDS + tuple((f"rule:{name.split(':', 1)[1]}:{text}", 0, 0)
                                         for name, text in LOAD3D_RULES)
_RULE = {name: len(LOAD3D_V2_FIELDS) + i for i, (name, _) in enumerate(LOAD3D_RULES)}


@rt("dst_mem", "dst_a", "src_a", "esize", *_NAMES, "pad_bits", "path", "op", "boundary",
    "repeat_time")
def cube_load3d(fb: FnBuilder, site, dst_mem, dst_a, src_a, esize, pad_bits, path, op,
                boundary, repeat_time, **f):
    """img2col of the NC1HWC0 map at L1 ``src_a`` into L0A (ZZ) / L0B (ZN) at ``dst_a``;
    with a non-zero ``boundary`` (set_load_data_boundary) reads at L1 offsets at or past it
    wrap to the start of L1."""
    b = fb.b
    i64 = fb.i64
    _checks(fb, tuple(f[n] for n in _NAMES), LOAD3D_V2_FIELDS, site)
    c0 = b.sdiv(i64(32), esize)

    def rule(name, bad, value):
        fb.fail_with(bad, E.CUBE_PARAM_RANGE, site, value, i64(0), i64(_RULE[name]))

    for name in ("channel_size", "k_start_pt", "k_extension"):
        rule(f"align:{name}", b.icmp_signed("!=", b.srem(f[name], c0), i64(0)), f[name])
    fw = b.add(f["filter_w"], b.mul(f["filter_size_w"], i64(256)))
    fh = b.add(f["filter_h"], b.mul(f["filter_size_h"], i64(256)))
    taps = b.mul(fh, fw)
    k_end = b.add(f["k_start_pt"], f["k_extension"])
    rule("span:k_start_pt + k_extension", b.icmp_signed(">", k_end, b.mul(taps, f["channel_size"])),
         k_end)

    def span(l1, pa, pb, flt, dil):   # padded size minus the dilated kernel's extent
        return b.sub(b.add(b.add(l1, pa), pb), b.add(b.mul(dil, b.sub(flt, i64(1))), i64(1)))
    sh_ = span(f["l1_h"], f["pad_top"], f["pad_bottom"], fh, f["dilation_filter_h"])
    sw_ = span(f["l1_w"], f["pad_left"], f["pad_right"], fw, f["dilation_filter_w"])
    rule("span:output size", b.or_(b.icmp_signed("<", sh_, i64(0)),
                                   b.icmp_signed("<", sw_, i64(0))), b.select(
        b.icmp_signed("<", sh_, sw_), sh_, sw_))
    ho_n = b.add(b.sdiv(b.select(b.icmp_signed("<", sh_, i64(0)), i64(0), sh_), f["stride_h"]),
                 i64(1))
    wo_n = b.add(b.sdiv(b.select(b.icmp_signed("<", sw_, i64(0)), i64(0), sw_), f["stride_w"]),
                 i64(1))
    m_end = b.add(f["m_start_pt"], f["m_extension"])
    limit = b.mul(b.sdiv(b.add(b.mul(ho_n, wo_n), i64(15)), i64(16)), i64(16))
    rule("span:m_start_pt + m_extension", b.icmp_signed(">", m_end, limit), m_end)
    _aligned_l0(fb, dst_mem, dst_a, site)
    _aligned(fb, src_a, Memory.L1, 1, site)
    m1 = b.sdiv(b.add(f["m_extension"], i64(15)), i64(16))
    rows = b.mul(m1, i64(16))
    groups = b.sdiv(f["k_extension"], c0)
    written = b.mul(b.mul(m1, groups), i64(512))
    c1 = b.sdiv(f["channel_size"], c0)
    l1h, l1w = f["l1_h"], f["l1_w"]
    fmap = b.mul(b.mul(b.mul(c1, l1h), l1w), i64(32))
    rule("repeat:set_load_data_repeat's repeat_time", b.icmp_signed("!=", repeat_time, i64(1)),
         repeat_time)
    l1_base = fb.ld(abi.MEM_BASE + int(Memory.L1))
    bounded = b.icmp_signed("!=", boundary, i64(0))
    rule("boundary:set_load_data_boundary",
         b.and_(bounded, b.icmp_signed("<", boundary, i64(BOUNDARY_MIN))), boundary)
    rule("boundary:the feature map's L1 start",
         b.and_(bounded, b.icmp_signed(">=", src_a, boundary)), src_a)
    rule("boundary:the feature map's bytes",
         b.and_(bounded, b.icmp_signed(">", fmap, boundary)), fmap)
    # the map's bytes up to the boundary, then (wrapped) from the start of L1
    first = b.select(bounded, b.select(b.icmp_signed(">", b.add(src_a, fmap), boundary),
                                       b.sub(boundary, src_a), fmap), fmap)
    wrapped = b.sub(fmap, first)
    call_rt(fb, "check_local", i64(int(Memory.L1)), src_a, first, i64(1), i64(1), site)
    # the wrapped part, [0, wrapped), lies below src_a (the map is at most the boundary), so
    # inside L1; it is outside the operand's tensor by design (Ascend C reads the start of L1)
    call_rt(fb, "check_local", dst_mem, dst_a, written, i64(1), i64(0), site)
    dbase = b.add(fb.ld(b.add(i64(abi.MEM_BASE), dst_mem)), dst_a)
    pipe = path_pipe(fb, path)
    call_rt(fb, "san_issue", pipe, site)
    with _sanitizing(fb):   # the map (windows need not touch every pixel), the fractals
        _san(fb, pipe, Memory.L1, src_a, first, READ_ANY, site)
        with b.if_then(b.icmp_signed(">", wrapped, i64(0))):
            _san(fb, pipe, Memory.L1, i64(0), wrapped, READ_ANY, site)
        _san(fb, pipe, dst_mem, dst_a, written, WRITE, site)
    to_l0a = b.icmp_signed("==", dst_mem, i64(int(Memory.L0A)))

    def row(i):
        m = b.add(f["m_start_pt"], i)
        hb = b.sub(b.mul(b.sdiv(m, wo_n), f["stride_h"]), f["pad_top"])
        wb = b.sub(b.mul(b.srem(m, wo_n), f["stride_w"]), f["pad_left"])
        frow = b.sdiv(i, i64(16))
        inner = b.mul(b.srem(i, i64(16)), i64(32))

        def group(g):
            kk = b.add(b.sdiv(f["k_start_pt"], c0), g)
            cb = b.sdiv(kk, taps)
            tap = b.srem(kk, taps)
            h = b.add(hb, b.mul(b.sdiv(tap, fw), f["dilation_filter_h"]))
            w = b.add(wb, b.mul(b.srem(tap, fw), f["dilation_filter_w"]))
            inside = b.and_(b.and_(b.icmp_signed(">=", h, i64(0)), b.icmp_signed("<", h, l1h)),
                            b.and_(b.icmp_signed(">=", w, i64(0)), b.icmp_signed("<", w, l1w)))
            frac = b.select(to_l0a, b.add(b.mul(frow, groups), g), b.add(b.mul(g, m1), frow))
            at = b.add(b.mul(frac, i64(512)), inner)
            with b.if_else(inside) as (pixel, pad):
                with pixel:
                    src = b.add(src_a, b.mul(b.add(b.mul(b.add(b.mul(cb, l1h), h), l1w), w),
                                             i64(32)))
                    src = b.select(b.and_(bounded, b.icmp_signed(">=", src, boundary)),
                                   b.sub(src, boundary), src)
                    _memmove(fb, _ptr(fb, dbase, at), _ptr(fb, l1_base, src), i64(32))
                with pad:
                    _fill(fb, dbase, at, b.add(at, i64(32)), pad_bits, esize)
        counted(fb, groups, group)
    counted(fb, rows, row)
    call_tm(fb, "load3d", path, written, op, site)


@tm(4)
def load3d(tb: _TB, path, nbytes, op, site):
    """One img2col load: ``nbytes`` written at ``path``'s theoretical width on its pipe (MTE1),
    complete LOAD3D_LATENCY cycles later (the CA model's Load3D rule)."""
    b = tb.b
    base = b.add(tb.i64(TP.PATH_BASE), b.mul(path, tb.i64(TP.PATH_FIELDS)))
    occ = tb.ceil_i(b.fdiv(tb.f(nbytes), tb.cost(base)))
    moves = b.icmp_signed(">", nbytes, tb.i64(0))
    occ = b.select(moves, occ, tb.i64(0))
    lat = b.select(moves, tb.ceil_i(tb.cost(TP.LOAD3D_LATENCY)), tb.i64(0))
    tb.count(b.add(tb.i64(TP.ELEM_BASE), op), nbytes)
    tb.count(b.add(tb.i64(TP.BYTES_BASE), path), nbytes)
    pipe = b.fptosi(tb.cost(b.add(base, tb.i64(2))), tb.i64(0).type)
    _issue(tb, pipe, occ, lat, op, site)


def _boundary(cg: Codegen):
    """The Load3D boundary register's alloca (made in the entry block once: every block starts
    with no boundary)."""
    reg = getattr(cg, "_load3d_boundary", None)
    if reg is None:
        reg = cg._load3d_boundary = cg.alloca_builder.alloca(I64, name="load3d.boundary")
        cg.alloca_builder.store(cg.i64(0), reg)
    return reg


def _repeat(cg: Codegen) -> dict:
    """The Load3Dv2 repeat register's allocas (entry block, once: LoadDataRepeatParam's
    defaults)."""
    regs = getattr(cg, "_load3d_repeat", None)
    if regs is None:
        regs = cg._load3d_repeat = {}
        for name, default, _lo, _hi in REPEAT_FIELDS:
            regs[name] = cg.alloca_builder.alloca(I64, name=f"load3d.{name}")
            cg.alloca_builder.store(cg.i64(default), regs[name])
    return regs


@lowering("set_load_data_repeat")
def lower_set_load_data_repeat(cg: Codegen, s: ir.Intrinsic) -> None:
    regs = _repeat(cg)
    for (name, *_), e in zip(REPEAT_FIELDS, s.args):
        cg.b.store(cg._as_i64(cg.expr(e)), regs[name])
    cg.scalar_cost(1)


@lowering("set_load_data_boundary")
def lower_set_load_data_boundary(cg: Codegen, s: ir.Intrinsic) -> None:
    cg.b.store(cg._as_i64(cg.expr(s.args[0])), _boundary(cg))
    cg.scalar_cost(1)


def _registers(cg: Codegen) -> dict:
    """The fmatrix (l1_h, l1_w, pads) and padding-value (float64 bits) registers' allocas
    (entry block, once: every block starts with them 0)."""
    regs = getattr(cg, "_load3d_regs", None)
    if regs is None:
        regs = cg._load3d_regs = {}
        for name in FMATRIX_FIELDS + ("pad_value",):
            regs[name] = cg.alloca_builder.alloca(I64, name=f"load3d.{name}")
            cg.alloca_builder.store(cg.i64(0), regs[name])
    return regs


@lowering("set_load_data_padding_value")
def lower_set_load_data_padding_value(cg: Codegen, s: ir.Intrinsic) -> None:
    cg.b.store(cg.b.bitcast(cg.expr(s.args[0]), I64), _registers(cg)["pad_value"])
    cg.scalar_cost(1)


def _v2pro_values(cg: Codegen, s: ir.Intrinsic) -> tuple:
    """(the 21 LoadData3DParamsV2 values, pad bits) of a V2Pro load: the window fields decoded
    from ext_config / filter_config, the map from the fmatrix register, the pad value from the
    padding register (converted to the load's dtype)."""
    b = cg.b
    dtype = s.attr("dtype")
    v = dict(zip((n for n, _ in V2PRO_FIELDS), (cg._as_i64(cg.expr(e)) for e in s.args[2:])))
    for word, name, lo, width in V2PRO_PACKING:
        v[name] = b.and_(b.lshr(v[word], cg.i64(lo)), cg.i64((1 << width) - 1))
    regs = _registers(cg)
    for name in FMATRIX_FIELDS:
        v[name] = b.load(regs[name], typ=I64)
    value = convert(b, b.bitcast(b.load(regs["pad_value"], typ=I64), F64), float64, dtype)
    return [v[n] for n in _NAMES], _value_bits(cg, value, dtype)


@lowering("load_data_3d")
def lower_load_data_3d(cg: Codegen, s: ir.Intrinsic) -> None:
    dst, src = s.args[:2]
    dmem, da, _ = operand(cg, dst)
    sa = cg.b.sext(cg.expr(src.addr), dmem.type)
    dtype = s.attr("dtype")
    pro = s.attr("form") == "v2pro"
    if pro:
        values, pad_bits = _v2pro_values(cg, s)
    else:   # Ascend C's default IsResetLoad3dConfig: the fmatrix and padding registers first
        values = [cg._as_i64(cg.expr(e)) for e in s.args[2:2 + len(_NAMES)]]
        pad_bits = _bits(cg, s.args[2 + len(_NAMES)], dtype)
        regs = _registers(cg)
        for name in FMATRIX_FIELDS:
            cg.b.store(values[_NAMES.index(name)], regs[name])
        pad = convert(cg.b, cg.expr(s.args[2 + len(_NAMES)]), dtype, float64)
        cg.b.store(cg.b.bitcast(pad, I64), regs["pad_value"])
    args = [dmem, da, sa, cg.i64(dtype.sizeof())] + values + [
        pad_bits, cg.i64(TP.path_index(Memory.L1, dst.memory)),
        cg.i64(TP.OP_INDEX["load_data_3d"]),
        cg.b.load(_boundary(cg)), cg.b.load(_repeat(cg)["repeat_time"])]
    record = ("LoadData3DParamsV2Pro (its packed words and the fmatrix/padding registers)"
              if pro else "LoadData3DParamsV2")
    call_checked(cg, runtime_lib.declare_rt(cg.module, "cube_load3d"), args, "load_data",
                 ("dst", "src", (record,) + DETAIL_FIELDS), operands=s.args[:2])
