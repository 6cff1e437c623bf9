"""Codegen and runtime-library functions of ``load_data_with_sparse``, ``mmad_with_sparse``,
``load_data`` with ``LoadData2DParamsV2`` and fixpipe's pre-quant register
(``set_fix_pipe_pre_quant_flag``; ``set_load_data_padding_value`` is in lower_load3d.py).
Semantics and NumPy references: ``ops/cube_sparse.py``.

The sparse index store (the 2-bit index beside each L0B byte, packed 4 per byte) is a
per-kernel-invocation array made in the kernel's entry block (zeroed there: every block starts
with indices 0), passed to the two sparse instructions by address. Timing: the loads are DMA
moves on their path (the index's 128 bytes per fractal counted with the weight's 512);
mmad_with_sparse is priced as an int8 mmad over the dense K (``ceil(k/2)``), the half the
sparse cube actually multiplies.
"""
from __future__ import annotations

from llvmlite import ir as L

from ...dsl.types import Memory, PipeID
from ...simulator import abi
from ...simulator import timing_params as TP
from .. import ir
from ..ops.cube import MMAD_FIELDS
from ..ops.cube_sparse import INDEX_BYTES, LOAD2D_V2_FIELDS, SPARSE_LOAD_FIELDS
from . import runtime_lib
from .core import Codegen, FnBuilder, lowering
from .intrinsics import call_checked
from .lower_cube import (_aligned, _aligned_l0, _ceil, _checks, _detail, _local, _memmove, _ptr,
                         _san, _sanitizing, call_load2d)
from .rtfuncs import call_rt, call_tm, counted, operand_pointer, rt
from .sanitize import READ, READ_ANY, WRITE, path_pipe
from .types import I1, I8, I16, I32, I64, PTR, intrinsic

E = abi.ErrorCode
_V2_CHECKS = tuple((n, lo, hi) for n, _d, lo, hi in LOAD2D_V2_FIELDS)


def _l0b_size() -> int:
    from ...simulator.config import ASCEND910B2
    return ASCEND910B2.memories.l0b.size


# ----------------------------------------------------------------------------- registers
def index_store(cg: Codegen):
    """The sparse index store's address (i64): made and zeroed in the entry block, once."""
    addr = getattr(cg, "_sparse_index", None)
    if addr is None:
        n = _l0b_size() // 4
        ab = cg.alloca_builder
        arr = ab.alloca(L.ArrayType(I8, n), name="sparse.index")
        fn = intrinsic(cg.module, "llvm.memset.p0.i64", L.VoidType(), [PTR, I8, I64, I1])
        ptr = ab.bitcast(arr, PTR)
        ab.call(fn, [ptr, L.Constant(I8, 0), L.Constant(I64, n), L.Constant(I1, 0)])
        addr = cg._sparse_index = ab.ptrtoint(arr, I64)
    return addr


def _register(cg: Codegen, name: str):
    """An i64 register alloca (entry block, once, starting at 0)."""
    regs = cg.__dict__.setdefault("_cube_regs", {})
    if name not in regs:
        regs[name] = cg.alloca_builder.alloca(I64, name=name)
        cg.alloca_builder.store(cg.i64(0), regs[name])
    return regs[name]


def pre_quant_deq(cg: Codegen, deq, s: ir.Intrinsic):
    """The scalar quant scale of a fixpipe: its own deq_scalar, or for data_copy with
    DataCopyCO12DstParams (attr ``deq_register``) set_fix_pipe_pre_quant_flag's register."""
    if not s.attr("deq_register"):
        return deq
    return cg.b.load(_register(cg, "fixpipe.pre_quant"), typ=I64)


@lowering("set_fix_pipe_pre_quant_flag")
def lower_set_fix_pipe_pre_quant_flag(cg: Codegen, s: ir.Intrinsic) -> None:
    cg.b.store(cg._as_i64(cg.expr(s.args[0])), _register(cg, "fixpipe.pre_quant"))
    cg.scalar_cost(1)


# ----------------------------------------------------------------------------- load_data_with_sparse
@rt("dst_a", "src_a", "idx_a", "store", "start", "repeat", "sstride", "sid", "gap", "transpose",
    "mode", "path", "op")
def cube_load_sparse(fb: FnBuilder, dst_a, src_a, idx_a, store, start, repeat, sstride, sid, gap,
                     transpose, mode, path, op, site):
    """repeat × (one 512-byte int8 fractal L1 → L0B, its 128 index bytes L1 → the store)."""
    b = fb.b
    i64 = fb.i64
    _checks(fb, (start, repeat, sstride, sid, gap, transpose, mode), SPARSE_LOAD_FIELDS, site)
    _aligned(fb, dst_a, Memory.L0B, 0, site)
    _aligned(fb, src_a, Memory.L1, 1, site)
    _aligned(fb, idx_a, Memory.L1, 2, site)
    frac, ib = i64(512), i64(INDEX_BYTES)
    with b.if_then(b.icmp_signed(">", repeat, i64(0))):
        ext = b.mul(b.add(b.mul(b.sub(repeat, i64(1)), b.add(gap, i64(1))), i64(1)), frac)
        dbase = _local(fb, Memory.L0B, dst_a, ext, 0, site)
        l1 = fb.ld(abi.MEM_BASE + int(Memory.L1))
        step = b.select(b.icmp_signed("!=", mode, i64(0)), b.sub(i64(0), sstride), sstride)
        pipe = path_pipe(fb, path)
        call_rt(fb, "san_issue", pipe, site)

        def one(r):
            f = b.add(start, b.mul(r, step))
            fb.fail_with(b.icmp_signed("<", f, i64(0)), E.CUBE_PARAM_RANGE, site, f,
                         i64(65535), i64(0))
            soff, ioff = b.add(src_a, b.mul(f, frac)), b.add(idx_a, b.mul(f, ib))
            call_rt(fb, "check_local", i64(int(Memory.L1)), soff, frac, i64(1), i64(1), site)
            call_rt(fb, "check_local", i64(int(Memory.L1)), ioff, ib, i64(1), i64(2), site)
            doff = b.mul(b.mul(r, b.add(gap, i64(1))), frac)
            with _sanitizing(fb):
                _san(fb, pipe, Memory.L1, soff, frac, READ_ANY, site)
                _san(fb, pipe, Memory.L1, ioff, ib, READ_ANY, site)
                _san(fb, pipe, Memory.L0B, b.add(dst_a, doff), frac, WRITE, site)
            _memmove(fb, _ptr(fb, dbase, doff), _ptr(fb, l1, soff), frac)
            _memmove(fb, _ptr(fb, store, b.ashr(b.add(dst_a, doff), i64(2))), _ptr(fb, l1, ioff),
                     ib)
        counted(fb, repeat, one)
    moved = b.mul(b.select(b.icmp_signed(">", repeat, i64(0)), repeat, i64(0)), i64(640))
    call_tm(fb, "dma", path, moved, 1, op, site)


@lowering("load_data_with_sparse")
def lower_load_data_with_sparse(cg: Codegen, s: ir.Intrinsic) -> None:
    dst, src, idx = s.args[:3]
    addrs = [cg.b.sext(cg.expr(r.addr), I64) for r in (dst, src, idx)]
    values = [cg._as_i64(cg.expr(e)) for e in s.args[3:]]
    args = addrs + [index_store(cg)] + values + [
        cg.i64(TP.path_index(Memory.L1, Memory.L0B)),
        cg.i64(TP.OP_INDEX["load_data_with_sparse"])]
    call_checked(cg, runtime_lib.declare_rt(cg.module, "cube_load_sparse"), args,
                 "load_data_with_sparse",
                 _detail(("dst", "src", "idx"), "LoadData2DParams", SPARSE_LOAD_FIELDS),
                 operands=s.args[:3])


# ----------------------------------------------------------------------------- mmad_with_sparse
@rt("c_a", "a_a", "b_a", "store", "m", "n", "k", "unit_flag", "source", "init", "op")
def cube_mmad_sparse(fb: FnBuilder, c_a, a_a, b_a, store, m, n, k, unit_flag, source, init, op,
                     site):
    """L0C (NZ, int32) (+)= A (L0A ZZ, m × k) @ densified B (L0B ZN, ceil(k/2) × n) through
    the index store."""
    b = fb.b
    i64 = fb.i64
    _checks(fb, (m, n, k, unit_flag, source, init), MMAD_FIELDS, site)
    fb.fail_with(b.icmp_signed("!=", source, i64(0)), E.CUBE_PARAM_RANGE, site, source, i64(0),
                 i64(4))
    _aligned(fb, c_a, Memory.L0C, 0, site)
    _aligned(fb, a_a, Memory.L0A, 1, site)
    _aligned(fb, b_a, Memory.L0B, 2, site)
    zero, sixteen = i64(0), i64(16)
    kd = b.sdiv(b.add(k, i64(1)), i64(2))
    work = b.and_(b.and_(b.icmp_signed(">", m, zero), b.icmp_signed(">", n, zero)),
                  b.icmp_signed(">", k, zero))
    with b.if_then(work):
        m1, n1 = _ceil(fb, m, sixteen), _ceil(fb, n, sixteen)
        k1, kd1 = _ceil(fb, k, i64(32)), _ceil(fb, kd, i64(32))
        gemv = b.icmp_signed("==", m, i64(1))
        a_ext = b.select(gemv, k, b.mul(b.mul(m1, k1), i64(512)))
        b_ext = b.mul(b.mul(kd1, n1), i64(512))
        c_ext = b.mul(b.mul(m1, n1), i64(1024))
        c_base = _local(fb, Memory.L0C, c_a, c_ext, 0, site)
        a_base = _local(fb, Memory.L0A, a_a, a_ext, 1, site)
        b_base = _local(fb, Memory.L0B, b_a, b_ext, 2, site)
        with _sanitizing(fb):
            m_pipe = i64(int(PipeID.PIPE_M))
            call_rt(fb, "san_issue", m_pipe, site)
            _san(fb, m_pipe, Memory.L0A, a_a, a_ext, READ, site)
            _san(fb, m_pipe, Memory.L0B, b_a, b_ext, READ, site)
            with b.if_then(b.icmp_signed("==", init, zero)):
                _san(fb, m_pipe, Memory.L0C, c_a, c_ext, READ, site)
            _san(fb, m_pipe, Memory.L0C, c_a, c_ext, WRITE, site)
        acc = fb.alloca_builder.alloca(I64, name="sparse.dot")
        aptr, bptr = b.inttoptr(a_base, PTR), b.inttoptr(b_base, PTR)
        cptr, sptr = b.inttoptr(c_base, PTR), b.inttoptr(store, PTR)

        def row(i):
            def col(j):
                b.store(zero, acc)
                live = b.and_(b.icmp_signed("<", i, m), b.icmp_signed("<", j, n))

                def step(p):
                    bi = b.add(b.add(b.mul(b.add(b.mul(b.sdiv(p, i64(32)), n1),
                                                 b.ashr(j, i64(4))), i64(512)),
                                     b.mul(b.and_(j, i64(15)), i64(32))), b.srem(p, i64(32)))
                    at = b.add(b_a, bi)
                    packed = b.zext(b.load(b.gep(sptr, [b.ashr(at, i64(2))], source_etype=I8),
                                           typ=I8), I64)
                    sel = b.and_(b.lshr(packed, b.mul(b.and_(at, i64(3)), i64(2))), i64(3))
                    c = b.add(b.mul(b.sdiv(p, i64(2)), i64(4)), sel)
                    ok = b.and_(live, b.icmp_signed("<", c, k))
                    with b.if_then(ok):
                        zz = b.add(b.add(b.mul(b.add(b.mul(b.ashr(i, i64(4)), k1),
                                                     b.sdiv(c, i64(32))), i64(512)),
                                         b.mul(b.and_(i, i64(15)), i64(32))), b.srem(c, i64(32)))
                        ai = b.select(gemv, c, zz)
                        x = b.sext(b.load(b.gep(aptr, [ai], source_etype=I8), typ=I8), I64)
                        y = b.sext(b.load(b.gep(bptr, [bi], source_etype=I8), typ=I8), I64)
                        b.store(b.add(b.load(acc, typ=I64), b.mul(x, y)), acc)
                counted(fb, kd, step)
                ci = b.add(b.add(b.mul(b.add(b.mul(b.ashr(j, i64(4)), m1), b.ashr(i, i64(4))),
                                       i64(256)), b.mul(b.and_(i, i64(15)), sixteen)),
                           b.and_(j, i64(15)))
                slot = b.gep(cptr, [ci], source_etype=I32)
                old = b.select(b.icmp_signed("==", init, zero),
                               b.sext(b.load(slot, typ=I32), I64), zero)
                v = b.add(b.load(acc, typ=I64), old)
                v = b.select(b.icmp_signed(">", v, i64(2 ** 31 - 1)), i64(2 ** 31 - 1), v)
                v = b.select(b.icmp_signed("<", v, i64(-2 ** 31)), i64(-2 ** 31), v)
                b.store(b.trunc(v, I32), slot)
            counted(fb, b.mul(n1, sixteen), col)
        counted(fb, b.mul(m1, sixteen), row)
    call_tm(fb, "cube", op, m, n, kd, i64(TP.CUBE_K0_INT8), site)


@lowering("mmad_with_sparse")
def lower_mmad_with_sparse(cg: Codegen, s: ir.Intrinsic) -> None:
    addrs = [cg.b.sext(cg.expr(r.addr), I64) for r in s.args[:3]]
    values = [cg._as_i64(cg.expr(e)) for e in s.args[3:]]
    args = addrs + [index_store(cg)] + values + [cg.i64(TP.OP_INDEX["mmad_with_sparse"])]
    call_checked(cg, runtime_lib.declare_rt(cg.module, "cube_mmad_sparse"), args,
                 "mmad_with_sparse", _detail(("dst", "fm", "filter"), "MmadParams", MMAD_FIELDS),
                 operands=s.args[:3])


# ----------------------------------------------------------------------------- LoadData2DParamsV2
@rt("dst_mem", "dst_a", "src_mem", "src_a", "src_off", "esize", "ms", "ks", "mstep", "kstep",
    "sstride", "dstride", "transpose", "sid", "path", "op")
def cube_load2d_v2(fb: FnBuilder, dst_mem, dst_a, src_mem, src_a, src_off, esize, ms, ks, mstep,
                   kstep, sstride, dstride, transpose, sid, path, op, site):
    """mstep × kstep fractals: src (m, k) at (k·src_stride + m)·512 → dst (i·dst_stride + j)."""
    b = fb.b
    i64 = fb.i64
    _checks(fb, (ms, ks, mstep, kstep, sstride, dstride, transpose, sid), _V2_CHECKS, site)
    tr = b.icmp_signed("!=", transpose, i64(0))
    fb.fail_with(b.and_(tr, b.icmp_signed("!=", esize, i64(2))), E.CUBE_PARAM_RANGE, site,
                 transpose, i64(0), i64(6))
    _aligned_l0(fb, dst_mem, dst_a, site)
    frac = i64(512)
    count = b.mul(mstep, kstep)
    with b.if_then(b.icmp_signed(">", count, i64(0))):
        last = b.add(b.mul(b.sub(mstep, i64(1)), dstride), kstep)
        call_rt(fb, "check_local", dst_mem, dst_a, b.mul(last, frac), i64(1), i64(0), site)
        dbase = b.add(fb.ld(b.add(i64(abi.MEM_BASE), dst_mem)), dst_a)
        pipe = path_pipe(fb, path)
        call_rt(fb, "san_issue", pipe, site)

        def rows(i):
            def cols(j):
                f = b.add(b.mul(b.add(ks, j), sstride), b.add(ms, i))
                fb.fail_with(b.icmp_signed("<", f, i64(0)), E.CUBE_PARAM_RANGE, site, f,
                             i64(2 ** 31 - 1), i64(4))
                soff = fb.sat_add(fb.sat_mul(src_off, esize), b.mul(f, frac))
                sp = operand_pointer(fb, src_mem, src_a, soff, frac, esize, i64(1), i64(1), site)
                doff = b.mul(b.add(b.mul(i, dstride), j), frac)
                dp = _ptr(fb, dbase, doff)
                with _sanitizing(fb):
                    with b.if_then(b.icmp_signed("!=", src_mem, i64(0))):
                        _san(fb, pipe, src_mem, b.add(src_a, soff), frac, READ_ANY, site)
                    _san(fb, pipe, dst_mem, b.add(dst_a, doff), frac, WRITE, site)
                with b.if_else(tr) as (t, plain):
                    with t:
                        def r16(x):
                            def c16(y):
                                v = b.load(b.gep(sp, [b.add(b.mul(y, i64(16)), x)],
                                                 source_etype=I16), typ=I16)
                                b.store(v, b.gep(dp, [b.add(b.mul(x, i64(16)), y)],
                                                 source_etype=I16))
                            counted(fb, i64(16), c16)
                        counted(fb, i64(16), r16)
                    with plain:
                        _memmove(fb, dp, sp, frac)
            counted(fb, kstep, cols)
        counted(fb, mstep, rows)
    moved = b.mul(b.select(b.icmp_signed(">", count, i64(0)), count, i64(0)), frac)
    call_tm(fb, "dma", path, moved, 1, op, site)


@lowering("load_data_2d_v2")
def lower_load_data_2d_v2(cg: Codegen, s: ir.Intrinsic) -> None:
    call_load2d(cg, s, "cube_load2d_v2", "LoadData2DParamsV2", _V2_CHECKS)
