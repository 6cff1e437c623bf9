"""Codegen of ``transpose`` (semantics and timing: ``ops/transpose.py``) and its runtime
function ``asc_rt_transpose``: it checks the operands (UB range, 32-byte alignment, tensor
extents), records the V pipe's accesses in sanitize mode, permutes the elements and charges one
vector instruction."""
from __future__ import annotations

from llvmlite import ir as L

from ...dsl.types import Memory, PipeID
from ...simulator import abi
from ...simulator import timing_params as TP
from .. import ir
from ..ops.transpose import TransposeType
from . import runtime_lib
from .core import Codegen, FnBuilder, lowering
from .intrinsics import call_checked
from .rtfuncs import call_rt, call_tm, counted, rt
from .types import I64, PTR

T = TransposeType
UB = int(Memory.UB)


def _elems(fb: FnBuilder, esize: int, body) -> None:
    """``body(load, store, es, k)`` specialised for each element size k (1, 2 or 4 bytes; the
    one ``esize`` names runs): ``load(addr)`` / ``store(value, addr)`` on UB byte offsets."""
    b = fb.b
    for k in (1, 2, 4):
        with b.if_then(b.icmp_signed("==", esize, fb.i64(k))):
            t = L.IntType(8 * k)
            ub = fb.ld(abi.MEM_BASE + UB)

            def load(addr, t=t, ub=ub):
                return b.load(b.inttoptr(b.add(ub, addr), PTR), typ=t)

            def store(v, addr, ub=ub):
                b.store(v, b.inttoptr(b.add(ub, addr), PTR))
            body(load, store, fb.i64(k), k)


@rt("dst", "src", "tmp", "tmp_bytes", "n", "c", "h", "w", "kind", "esize", "fam", "op")
def transpose(fb: FnBuilder, dst, src, tmp, tmp_bytes, n, c, h, w, kind, esize, fam, op, site):
    """``kind`` 10: 16 x 16 (in place allowed: the source is read before dst is written);
    11: NCHW -> NHWC; 12: NHWC -> NCHW."""
    b = fb.b
    ub, v = fb.i64(UB), fb.i64(int(PipeID.PIPE_V))
    square = b.icmp_signed("==", kind, fb.i64(int(T.TRANSPOSE_ND2ND_B16)))
    hw = b.mul(h, w)
    count = b.select(square, fb.i64(256), b.mul(b.mul(n, c), hw))
    nbytes = b.mul(count, esize)
    tmp_bytes = b.select(b.icmp_signed(">", count, fb.i64(0)), tmp_bytes, fb.i64(0))  # no-op
    call_rt(fb, "check_local", ub, dst, nbytes, fb.i64(1), fb.i64(0), site)
    call_rt(fb, "check_local", ub, src, nbytes, fb.i64(1), fb.i64(1), site)
    with b.if_then(b.icmp_signed(">", tmp_bytes, fb.i64(0))):
        call_rt(fb, "check_local", ub, tmp, tmp_bytes, fb.i64(1), fb.i64(2), site)
    with b.if_then(b.icmp_signed("!=", fb.ld(abi.SANITIZE), fb.i64(0))):
        call_rt(fb, "san_issue", v, site)
        call_rt(fb, "san_access", v, ub, src, nbytes, fb.i64(0), site)
        with b.if_then(b.icmp_signed(">", tmp_bytes, fb.i64(0))):
            call_rt(fb, "san_access", v, ub, tmp, tmp_bytes, fb.i64(1), site)
        call_rt(fb, "san_access", v, ub, dst, nbytes, fb.i64(1), site)

    def square_16(load, store):
        """Through a 512-byte stack copy, so that dst may be src."""
        t = L.IntType(16)
        buf = fb.alloca_builder.alloca(t, size=fb.i64(256), name="t16")
        counted(fb, fb.i64(256), lambda i: b.store(
            load(b.add(src, b.mul(i, fb.i64(2)))), b.gep(buf, [i], source_etype=t)))

        def row(i):
            def col(j):
                v_ = b.load(b.gep(buf, [b.add(b.mul(j, fb.i64(16)), i)], source_etype=t),
                            typ=t)
                store(v_, b.add(dst, b.mul(b.add(b.mul(i, fb.i64(16)), j), fb.i64(2))))
            counted(fb, fb.i64(16), col)
        counted(fb, fb.i64(16), row)

    def permute(load, store, es, k):
        with b.if_else(square) as (sq, layout):
            with sq:
                if k == 2:        # sema allows only 2-byte dtypes here
                    square_16(load, store)
            with layout:
                to_nhwc = b.icmp_signed("==", kind, fb.i64(int(T.TRANSPOSE_NCHW2NHWC)))

                def one(i):      # i runs over dst elements
                    # dst NHWC index i = ((nn*hw + p)*c + cc); dst NCHW index i = ((nn*c+cc)*hw+p)
                    nn_a, rest_a = b.sdiv(i, b.mul(hw, c)), b.srem(i, b.mul(hw, c))
                    p_a, cc_a = b.sdiv(rest_a, c), b.srem(rest_a, c)
                    cc_b, p_b = b.sdiv(rest_a, hw), b.srem(rest_a, hw)
                    cc = b.select(to_nhwc, cc_a, cc_b)
                    p = b.select(to_nhwc, p_a, p_b)
                    j = b.select(to_nhwc, b.add(b.mul(b.add(b.mul(nn_a, c), cc), hw), p),
                                 b.add(b.mul(b.add(b.mul(nn_a, hw), p), c), cc))
                    store(load(b.add(src, b.mul(j, es))), b.add(dst, b.mul(i, es)))
                counted(fb, count, one)
    _elems(fb, esize, permute)
    # one vector instruction: the 16 x 16 transpose over its 512 bytes, a layout change as two
    # MOV UB->UB passes over the tensor
    moved = b.select(square, count, b.mul(count, fb.i64(2)))
    call_tm(fb, "vec", op, fb.i64(TP.class_index(_cost())), fam, moved, esize, src, fb.i64(-1),
            site)


def _cost():
    from ..ops import REGISTRY
    return REGISTRY["transpose"].cost


@lowering("transpose")
def lower_transpose(cg: Codegen, s: ir.Intrinsic) -> None:
    dtype = s.attr("dtype")
    dst, src, tmp = s.args[:3]
    addr = (lambda r: cg.b.sext(cg.expr(r.addr), I64) if r is not None else cg.i64(-1))
    args = [addr(dst), addr(src), addr(tmp)] + [cg._as_i64(cg.expr(e)) for e in s.args[3:8]]
    # order of the rt params: tmp_bytes comes right after tmp
    args = args[:3] + [args[7]] + args[3:7]
    args += [cg.i64(s.attr("kind")), cg.i64(dtype.sizeof()), cg.i64(TP.family(dtype)),
             cg.i64(TP.OP_INDEX["transpose"])]
    call_checked(cg, runtime_lib.declare_rt(cg.module, "transpose"), args, "transpose",
                 ("dst", "src", "shared_tmp_buffer"), operands=s.args[:3])


# ----------------------------------------------------------------------------- trans_data_to_5hd
_ADDR = tuple(f"d{k}" for k in range(16)) + tuple(f"s{k}" for k in range(16))


@rt("dtab", "stab", *_ADDR, "dst_high", "src_high", "repeat", "dst_rep", "src_rep", "esize",
    "fam", "op")
def trans5hd(fb: FnBuilder, **a):
    """VNCHWCONV (``ops/transpose.py``): addresses in the arguments, or (``dtab`` >= 0) read as
    uint64 from the two address tensors at UB offsets dtab and stab."""
    dtab, stab = a["dtab"], a["stab"]
    dst_high, src_high, repeat = a["dst_high"], a["src_high"], a["repeat"]
    dst_rep, src_rep, esize, fam, op, site = (a[k] for k in ("dst_rep", "src_rep", "esize", "fam",
                                                              "op", "site"))
    b = fb.b
    ub, v = fb.i64(UB), fb.i64(int(PipeID.PIPE_V))
    base = fb.ld(abi.MEM_BASE + UB)
    fb.fail_with(b.or_(b.icmp_signed("<", repeat, fb.i64(0)),
                       b.icmp_signed(">", repeat, fb.i64(255))),
                 abi.ErrorCode.REPEAT_RANGE, site, repeat)
    sanitize = b.icmp_signed("!=", fb.ld(abi.SANITIZE), fb.i64(0))
    with b.if_then(sanitize):
        call_rt(fb, "san_issue", v, site)
    addrs = fb.alloca_builder.alloca(I64, size=fb.i64(32), name="addrs")
    table = b.icmp_signed(">=", dtab, fb.i64(0))
    with b.if_else(table) as (tab, lst):
        with tab:
            for which, t in ((0, dtab), (1, stab)):
                call_rt(fb, "check_local", ub, t, fb.i64(128), fb.i64(1), fb.i64(which), site)
                with b.if_then(sanitize):
                    call_rt(fb, "san_access", v, ub, t, fb.i64(128), fb.i64(0), site)
            for k in range(16):
                for i, t in enumerate((dtab, stab)):
                    val = b.load(b.inttoptr(b.add(base, b.add(t, fb.i64(8 * k))), PTR), typ=I64)
                    b.store(val, b.gep(addrs, [fb.i64(16 * i + k)], source_etype=I64))
        with lst:
            for k, name in enumerate(_ADDR):
                b.store(a[name], b.gep(addrs, [fb.i64(k)], source_etype=I64))
    addr = (lambda k: b.load(b.gep(addrs, [k], source_etype=I64), typ=I64))
    one = b.icmp_signed("==", repeat, fb.i64(1))
    blocks = fb.alloca_builder.alloca(I64, size=fb.i64(64), name="blocks")   # 512 bytes
    buf = b.inttoptr(b.ptrtoint(blocks, I64), PTR)     # untyped: read back as i8/i16/i32
    d_off16 = b.select(b.icmp_signed("!=", dst_high, fb.i64(0)), fb.i64(16), fb.i64(0))
    s_off16 = b.select(b.icmp_signed("!=", src_high, fb.i64(0)), fb.i64(16), fb.i64(0))
    dst_bytes = b.select(b.icmp_signed("==", esize, fb.i64(1)), fb.i64(16), fb.i64(32))

    def per_repeat(r):
        step = b.select(one, fb.i64(1), r)
        so, do = b.mul(b.mul(step, src_rep), fb.i64(32)), b.mul(b.mul(step, dst_rep), fb.i64(32))

        def gather(k):
            at = b.add(addr(b.add(k, fb.i64(16))), so)
            call_rt(fb, "check_local", ub, at, fb.i64(32), fb.i64(1), fb.i64(2), site)
            with b.if_then(sanitize):
                call_rt(fb, "san_access", v, ub, at, fb.i64(32), fb.i64(0), site)
            src_p = b.inttoptr(b.add(base, at), PTR)
            for q in range(4):      # 32 bytes as 4 x i64
                val = b.load(b.gep(src_p, [fb.i64(q)], source_etype=I64), typ=I64)
                b.store(val, b.gep(buf, [b.add(b.mul(k, fb.i64(32)), fb.i64(8 * q))],
                                   source_etype=L.IntType(8)))
        counted(fb, fb.i64(16), gather)

        def scatter(k):
            block = b.add(addr(k), do)
            call_rt(fb, "check_local", ub, block, fb.i64(32), fb.i64(1), fb.i64(3), site)
            part = b.add(block, b.select(b.icmp_signed("==", esize, fb.i64(1)), d_off16,
                                         fb.i64(0)))    # 8-bit: the half block written
            with b.if_then(sanitize):
                call_rt(fb, "san_access", v, ub, part, dst_bytes, fb.i64(1), site)
            dst_p = b.inttoptr(b.add(base, part), PTR)
            for es in (1, 2, 4):
                t = L.IntType(8 * es)
                with b.if_then(b.icmp_signed("==", esize, fb.i64(es))):
                    for j in range(16 if es < 4 else 8):
                        if es == 4:    # dst block k = 2 * kk + h: element j of source 8h + j
                            kk, h = b.sdiv(k, fb.i64(2)), b.srem(k, fb.i64(2))
                            at = b.add(b.mul(b.add(b.mul(h, fb.i64(8)), fb.i64(j)),
                                             fb.i64(32)), b.mul(kk, fb.i64(4)))
                        elif es == 2:  # dst block k: element k of each source j
                            at = b.add(fb.i64(32 * j), b.mul(k, fb.i64(2)))
                        else:          # a half block: byte k (+16) of each source j
                            at = b.add(fb.i64(32 * j), b.add(s_off16, k))
                        val = b.load(b.gep(buf, [at], source_etype=L.IntType(8)), typ=t)
                        b.store(val, b.gep(dst_p, [fb.i64(j)], source_etype=t))
        counted(fb, fb.i64(16), scatter)
    counted(fb, repeat, per_repeat)
    moved = b.sdiv(b.mul(repeat, fb.i64(512)), esize)
    call_tm(fb, "vec", op, fb.i64(TP.class_index(_cost())), fam, moved, esize, fb.i64(0),
            fb.i64(-1), site)


@lowering("trans_data_to_5hd")
def lower_trans5hd(cg: Codegen, s: ir.Intrinsic) -> None:
    dtype = s.attr("dtype")
    dref, sref = s.args[:2]
    tabs = [cg.b.sext(cg.expr(r.addr), I64) if r is not None else cg.i64(-1)
            for r in (dref, sref)]
    rest = [cg._as_i64(cg.expr(e)) for e in s.args[2:]]
    args = tabs + rest + [cg.i64(dtype.sizeof()), cg.i64(TP.family(dtype)),
                          cg.i64(TP.OP_INDEX["trans_data_to_5hd"])]
    # operands 0 and 1: the address tensors (windowed); 2 and 3: the blocks they name
    call_checked(cg, runtime_lib.declare_rt(cg.module, "trans5hd"), args, "trans_data_to_5hd",
                 ("dst_list", "src_list", "a source block", "a destination block"),
                 operands=(dref, sref) if dref is not None else ())
