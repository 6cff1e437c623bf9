"""Codegen and runtime-library function of ``init_const_value`` (``ops/cube_init.py``): fill
L1 (32-byte blocks, PIPE_MTE2) or L0A/L0B (512-byte fractals, PIPE_MTE1) with a constant, and
the "fill" entry of the timing model."""
from __future__ import annotations

from ...dsl.types import Memory, PipeID
from ...simulator import abi
from ...simulator import timing_params as TP
from .. import ir
from ..ops.cube_init import INIT_CONST_FIELDS
from . import runtime_lib
from .core import Codegen, FnBuilder, lowering
from .intrinsics import call_checked, operand
from .lower_cube import _checks, _detail, _san, _sanitizing
from .lower_movement import _bits, _fill
from .rtfuncs import call_rt, call_tm, counted, rt
from .sanitize import WRITE
from .timing import _TB, _issue, tm

E = abi.ErrorCode
_L1 = int(Memory.L1)


@rt("dst_mem", "dst_a", "esize", "repeat", "blocks", "gap", "bits", "op")
def cube_init_const(fb: FnBuilder, dst_mem, dst_a, esize, repeat, blocks, gap, bits, op, site):
    """Repeat r writes ``blocks`` blocks (32 B in L1, 512 B in L0A/L0B) of the constant
    ``bits`` (the low ``esize`` bytes) from block r·(blocks + gap) of dst."""
    b = fb.b
    _checks(fb, (repeat, blocks, gap), INIT_CONST_FIELDS, site)
    in_l1 = b.icmp_signed("==", dst_mem, fb.i64(_L1))
    block = b.select(in_l1, fb.i64(32), fb.i64(512))
    bad = b.icmp_signed("!=", b.and_(dst_a, b.sub(block, fb.i64(1))), fb.i64(0))
    fb.fail_with(bad, E.CUBE_MISALIGNED, site, dst_a, block, b.mul(dst_mem, fb.i64(256)))
    pipe = b.select(in_l1, fb.i64(int(PipeID.PIPE_MTE2)), fb.i64(int(PipeID.PIPE_MTE1)))
    work = b.and_(b.icmp_signed(">", repeat, fb.i64(0)), b.icmp_signed(">", blocks, fb.i64(0)))
    span = b.mul(b.add(blocks, gap), block)          # bytes from one repeat to the next
    run = b.mul(blocks, block)                       # bytes each repeat writes
    with b.if_then(work):
        ext = b.add(b.mul(b.sub(repeat, fb.i64(1)), span), run)
        call_rt(fb, "check_local", dst_mem, dst_a, ext, fb.i64(1), fb.i64(0), site)
        base = b.add(fb.ld(b.add(fb.i64(abi.MEM_BASE), dst_mem)), dst_a)
        call_rt(fb, "san_issue", pipe, site)

        def one(r):
            at = b.mul(r, span)
            _fill(fb, base, at, b.add(at, run), bits, esize)
            with _sanitizing(fb):
                _san(fb, pipe, dst_mem, b.add(dst_a, at), run, WRITE, site)
        counted(fb, repeat, one)
    written = b.select(work, b.mul(repeat, run), fb.i64(0))
    path = b.select(in_l1, fb.i64(TP.path_index(Memory.GM, Memory.L1)),
                    b.select(b.icmp_signed("==", dst_mem, fb.i64(int(Memory.L0A))),
                             fb.i64(TP.path_index(Memory.L1, Memory.L0A)),
                             fb.i64(TP.path_index(Memory.L1, Memory.L0B))))
    call_tm(fb, "fill", pipe, path, written, op, site)


@tm(5)
def fill(tb: _TB, pipe, path, nbytes, op, site):
    """A local fill on ``pipe``: nbytes at ``path``'s width (no latency, no GM share; an
    estimate: no published figure for InitConstValue)."""
    b = tb.b
    base = b.add(tb.i64(TP.PATH_BASE), b.mul(path, tb.i64(TP.PATH_FIELDS)))
    occ = tb.ceil_i(b.fdiv(tb.f(nbytes), tb.cost(base)))
    occ = b.select(b.icmp_signed(">", nbytes, tb.i64(0)), occ, tb.i64(0))
    tb.count(b.add(tb.i64(TP.ELEM_BASE), op), nbytes)
    _issue(tb, pipe, occ, tb.i64(0), op, site)


@lowering("init_const_value")
def lower_init_const_value(cg: Codegen, s: ir.Intrinsic) -> None:
    dst = s.args[0]
    dmem, da, _ = operand(cg, dst)
    dtype = s.attr("dtype")
    values = [cg._as_i64(cg.expr(e)) for e in s.args[1:4]]
    args = [dmem, da, cg.i64(dtype.sizeof())] + values + [
        _bits(cg, s.args[4], dtype), cg.i64(TP.OP_INDEX["init_const_value"])]
    call_checked(cg, runtime_lib.declare_rt(cg.module, "cube_init_const"), args,
                 "init_const_value", _detail(("dst",), "InitConstValueParams", INIT_CONST_FIELDS),
                 operands=s.args[:1])
