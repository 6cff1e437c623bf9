"""Lowering and library function of the Matmul API (``compiler/ops/matmul.py``).

``matmul_iterate_all`` and ``matmul_get_tensor_c`` lower to ONE call of ``asc_rt_matmul``,
which does the whole job natively:

1. picks the region of C: all of it (iterate_all) or tile ``tile`` in the iterate order (M
   first: tile = mi + ni * m_tiles; N first when ``order`` is 1);
2. checks every operand (GM bounds like data_copy, naming a/b/bias/c and the line; UB range);
3. int8: an exact int32 loop (a float16/int8 C dequantized by the set_quant_* scale);
   otherwise packs op(A) and op(B) of the region into float32
   scratch, multiplies with the host BLAS (``blas.call_sgemm``), adds the bias and rounds once
   to C's dtype (float16 round-to-nearest-even, bfloat16 RNE, float32);
4. writes C (GM row stride ``ldc``; a UB tile row stride base_n when en_sequential_write);
5. times the instruction sequence (``timing_matmul.py``): on an AIV of a mix kernel, by
   sending the request to its AIC, the Matmul server (``lower_mmserver.py``).
"""
from __future__ import annotations

from llvmlite import ir as L

from ...dsl.kernel_types import MODE_MIX, MODE_VECTOR
from ...dsl.types import DataType, Memory, bfloat16, float16, float32, int8, int32
from ...simulator import abi
from ..ops.matmul import A_SCALAR, DTYPE_CODES, MATMUL_ARGS
from . import blas, runtime_lib
from .core import Codegen, FnBuilder, counted_loop, lowering
from .intrinsics import call_checked
from .rtfuncs import call_rt, call_tm, counted, rt
from .types import F32, I32, I64, PTR, convert, intrinsic, memory_type
from . import timing_matmul  # noqa: F401,E402  (registers asc_tm_matmul)
from . import lower_mmserver  # noqa: F401,E402  (registers the Matmul server of mix kernels)

E = abi.ErrorCode
IN_TYPES = (float16, bfloat16, float32)

# ----------------------------------------------------------------------------- element loops
_PACK = L.FunctionType(L.VoidType(), [PTR, I64, I64, I64, I64, PTR])
_STORE = L.FunctionType(L.VoidType(), [PTR, I64, I64, PTR, I64, PTR, I64])
_I8 = L.FunctionType(L.VoidType(), [PTR, I64, I64, PTR, I64, I64, I64, I64, I64, PTR, PTR, I64])
#: the dequantizing int8 products: _I8's operands, then the scalar's bits and the scale vector
_I8_DEQ = L.FunctionType(L.VoidType(), [PTR, I64, I64, PTR, I64, I64, I64, I64, I64, PTR, PTR,
                                        I64, I64, PTR])
#: C dtypes of the dequantizing int8 product
DEQ_TYPES = (float16, int8)


#: (C dtype, bias dtype) pairs of the float store loops
_STORE_PAIRS = ((float16, float32), (float16, float16), (bfloat16, float32),
                (bfloat16, bfloat16), (float32, float32))


def _pack_name(dt: DataType) -> str:
    return f"asc_mm_pack_{dt.name}"


def _store_name(dt: DataType, bias: DataType) -> str:
    return f"asc_mm_store_{dt.name}_{bias.name}"


def _define_pack(module: L.Module, dt: DataType) -> str:
    """``pack(src, ld, trans, rows, cols, dst)``: dst[r, c] (row-major rows x cols, float32) =
    X[r, c] where X is src row-major with row stride ld, or its transpose."""
    func = _declare(module, _pack_name(dt), _PACK)
    func.attributes.add("nounwind")
    src, ld, trans, rows, cols, dst = func.args
    for a in (src, dst):
        a.add_attribute("noalias")
    b = L.IRBuilder(func.append_basic_block("entry"))
    mt = memory_type(dt)
    is_t = b.icmp_signed("!=", trans, L.Constant(I64, 0))

    def row(r):
        def col(c):
            idx = b.select(is_t, b.add(b.mul(c, ld), r), b.add(b.mul(r, ld), c))
            v = b.load(b.gep(src, [idx], source_etype=mt), typ=mt)
            b.store(convert(b, v, dt, float32),
                    b.gep(dst, [b.add(b.mul(r, cols), c)], source_etype=F32))
        counted_loop(b, func, cols, col)
    counted_loop(b, func, rows, row)
    b.ret_void()
    return func.name


def _define_store(module: L.Module, dt: DataType, bias_dt: DataType) -> str:
    """``store(acc, rows, cols, bias|null, bias_dt(unused), dst, ldc)``: dst[r*ldc + c] =
    round(acc[r*cols + c] + bias[c])."""
    func = _declare(module, _store_name(dt, bias_dt), _STORE)
    func.attributes.add("nounwind")
    acc, rows, cols, bias, _unused, dst, ldc = func.args
    b = L.IRBuilder(func.append_basic_block("entry"))
    mt, bt = memory_type(dt), memory_type(bias_dt)
    has_bias = b.icmp_unsigned("!=", b.ptrtoint(bias, I64), L.Constant(I64, 0))
    zero = b.alloca(bt)
    b.store(L.Constant(bt, 0) if bias_dt != float32 else L.Constant(F32, 0.0), zero)

    def row(r):
        def col(c):
            v = b.load(b.gep(acc, [b.add(b.mul(r, cols), c)], source_etype=F32), typ=F32)
            bp = b.select(has_bias, b.gep(bias, [c], source_etype=bt), zero)
            bv = convert(b, b.load(bp, typ=bt), bias_dt, float32)
            b.store(convert(b, b.fadd(v, bv), float32, dt),
                    b.gep(dst, [b.add(b.mul(r, ldc), c)], source_etype=mt))
        counted_loop(b, func, cols, col)
    counted_loop(b, func, rows, row)
    b.ret_void()
    return func.name


def _deq_name(dt: DataType) -> str:
    return f"asc_mm_int8_deq_{dt.name}"


def _define_i8(module: L.Module, deq: DataType = None) -> str:
    """``i8(a, lda, ta, b, ldb, tb, m, n, k, bias|null, dst, ldc)``: exact int32 product. With
    ``deq`` (float16 / int8 C) two more operands, ``(scalar_bits, vector|null)``: each int32
    result is converted to float32, times the scale (the float32 in the low 32 bits of the
    scalar, or of ``vector[column]`` when given), rounded once to nearest even (int8:
    saturated)."""
    func = _declare(module, _deq_name(deq) if deq else "asc_mm_int8", _I8_DEQ if deq else _I8)
    func.attributes.add("nounwind")
    a, lda, ta, bm, ldb, tb, m, n, k, bias, dst, ldc = func.args[:12]
    b = L.IRBuilder(func.append_basic_block("entry"))
    I8 = L.IntType(8)
    a_t = b.icmp_signed("!=", ta, L.Constant(I64, 0))
    b_t = b.icmp_signed("!=", tb, L.Constant(I64, 0))
    has_bias = b.icmp_unsigned("!=", b.ptrtoint(bias, I64), L.Constant(I64, 0))
    acc = b.alloca(I32)

    def row(i):
        def col(j):
            b.store(L.Constant(I32, 0), acc)

            def step(p):
                ai = b.select(a_t, b.add(b.mul(p, lda), i), b.add(b.mul(i, lda), p))
                bi = b.select(b_t, b.add(b.mul(j, ldb), p), b.add(b.mul(p, ldb), j))
                x = b.sext(b.load(b.gep(a, [ai], source_etype=I8), typ=I8), I32)
                y = b.sext(b.load(b.gep(bm, [bi], source_etype=I8), typ=I8), I32)
                b.store(b.add(b.load(acc, typ=I32), b.mul(x, y)), acc)
            counted_loop(b, func, k, step)
            with b.if_then(has_bias):
                bv = b.load(b.gep(bias, [j], source_etype=I32), typ=I32)
                b.store(b.add(b.load(acc, typ=I32), bv), acc)
            at = b.add(b.mul(i, ldc), j)
            if deq is None:
                b.store(b.load(acc, typ=I32), b.gep(dst, [at], source_etype=I32))
                return
            qs, qv = func.args[12:]
            has_vec = b.icmp_unsigned("!=", b.ptrtoint(qv, I64), L.Constant(I64, 0))
            bits = b.select(has_vec, b.load(b.gep(qv, [j], source_etype=I64), typ=I64), qs)
            scale = b.bitcast(b.trunc(bits, I32), F32)
            v = b.fmul(b.sitofp(b.load(acc, typ=I32), F32), scale)
            if deq == int8:
                v = b.call(intrinsic(module, "llvm.rint.f32", F32, [F32]), [v])
            b.store(convert(b, v, float32, deq), b.gep(dst, [at], source_etype=memory_type(deq)))
        counted_loop(b, func, n, col)
    counted_loop(b, func, m, row)
    b.ret_void()
    return func.name


@runtime_lib.library_definer(shard="lib.matmul")
def _define_loops(module: L.Module) -> list[str]:
    names = [_define_pack(module, dt) for dt in IN_TYPES]
    for dt, bias_dt in _STORE_PAIRS:
        names.append(_define_store(module, dt, bias_dt))
    names.append(_define_i8(module))
    names.extend(_define_i8(module, dt) for dt in DEQ_TYPES)
    return names


def _declare(module: L.Module, name: str, ftype: L.FunctionType) -> L.Function:
    fn = module.globals.get(name)
    return fn if fn is not None else L.Function(module, ftype, name)


def _malloc(module: L.Module) -> tuple[L.Function, L.Function]:
    m = module.globals.get("malloc") or L.Function(module, L.FunctionType(PTR, [I64]), "malloc")
    f = module.globals.get("free") or L.Function(module, L.FunctionType(L.VoidType(), [PTR]),
                                                 "free")
    return m, f


#: multiply-adds of one chunk of a Matmul call's product (see ``matmul``): ~0.1 s on a host core
CHUNK_MACS = 1 << 27


# ----------------------------------------------------------------------------- the library call
def _esize_of(fb: FnBuilder, code) -> L.Value:
    """Bytes per element of a dtype code (0 f16, 1 bf16, 2 f32, 3 int8, 4 int32)."""
    b = fb.b
    v = fb.i64(2)
    for c, size in ((2, 4), (3, 1), (4, 4)):
        v = b.select(b.icmp_signed("==", code, fb.i64(c)), fb.i64(size), v)
    return v


def _gm_pointer(fb: FnBuilder, arg, first, extent, esize, which, site) -> L.Value:
    """Check elements [first, first + extent) of GM argument ``arg``; a pointer to ``first``."""
    b = fb.b
    call_rt(fb, "check_gm", arg, fb.sat_mul(first, esize), fb.sat_mul(extent, esize), esize,
            fb.i64(which), site)
    base = b.load(b.gep(fb.ctx_ptr(abi.GM_PTRS), [arg], source_etype=I64), typ=I64)
    return b.inttoptr(b.add(base, b.mul(first, esize)), PTR)


@rt(*MATMUL_ARGS)
def matmul(fb: FnBuilder, site, **a):
    b = fb.b
    z, one = fb.i64(0), fb.i64(1)

    smax, smin, ceil_div = fb.smax, fb.smin, fb.ceil_div

    m, n, k = smax(a["m"], z), smax(a["n"], z), smax(a["k"], z)
    # a vector kernel (explicit AIV_ONLY / MIX_AIV_*) has no cube unit and no matmul server:
    # on hardware its requests would never be served
    fb.st(abi.ERR_D, fb.i64(255 + 256 * int(Memory.L1)))
    fb.fail_with(b.icmp_signed("==", fb.ld(abi.KERNEL_MODE), fb.i64(MODE_VECTOR)),
                 E.MEMORY_NOT_ON_CORE, site, fb.i64(int(Memory.L1)), fb.ld(abi.CORE_TYPE))
    # operands the kernel never set (e.g. set_tensor_a only in one branch)
    scalar = {key: b.icmp_signed("==", a[key], fb.i64(A_SCALAR))    # set_tensor_a/b(scalar)
              for key in ("a_arg", "b_arg")}
    for which, key in ((0, "a_arg"), (1, "b_arg")):
        fb.st(abi.ERR_D, fb.i64(which))
        missing = b.and_(b.icmp_signed("<", a[key], z), b.not_(scalar[key]))
        fb.fail_with(missing, E.MATMUL_OPERAND_MISSING, site)
    # an unfilled TCubeTiling (all zeros) would otherwise compute nothing, silently
    bad_base = b.or_(b.or_(b.icmp_signed("<=", a["base_m"], z),
                           b.icmp_signed("<=", a["base_n"], z)),
                     b.icmp_signed("<=", a["base_k"], z))
    fb.st(abi.ERR_D, fb.i64(4))
    fb.fail_with(bad_base, E.MATMUL_OPERAND_MISSING, site)
    # a block larger than the whole matrix: single_core_m/n rounded up by the tiling, and no
    # set_tail for the edge (CANN requires it: the hardware would read and write past A and C)
    fb.st(abi.ERR_D, fb.i64(5))
    fb.fail_with(b.or_(b.icmp_signed(">", m, a["org_m"]), b.icmp_signed(">", n, a["org_n"])),
                 E.MATMUL_OPERAND_MISSING, site, m, n, b.add(b.mul(a["org_m"], fb.i64(1 << 32)),
                                                             a["org_n"]))
    # int8 inputs with a float16/int8 C need a dequant scale (set_quant_* not run on this path)
    fb.st(abi.ERR_D, fb.i64(6))
    fb.fail_with(b.and_(b.icmp_signed("==", a["a_dt"], fb.i64(DTYPE_CODES[int8])),
                        b.and_(b.icmp_signed("!=", a["c_dt"], fb.i64(DTYPE_CODES[int32])),
                               b.icmp_signed("==", a["quant_mode"], z))),
                 E.MATMUL_OPERAND_MISSING, site)
    # the region of C: rows [r0, r0+tm), columns [c0, c0+tn)
    tiled = b.icmp_signed("!=", a["mode"], z)
    m_tiles = ceil_div(m, a["base_m"])
    n_tiles = ceil_div(n, a["base_n"])
    n_first = b.icmp_signed("==", a["order"], one)
    tile = a["tile"]
    mi = b.select(n_first, b.sdiv(tile, smax(n_tiles, one)), b.srem(tile, smax(m_tiles, one)))
    ni = b.select(n_first, b.srem(tile, smax(n_tiles, one)), b.sdiv(tile, smax(m_tiles, one)))
    r0 = b.select(tiled, fb.sat_mul(mi, a["base_m"]), z)
    c0 = b.select(tiled, fb.sat_mul(ni, a["base_n"]), z)
    tm = b.select(tiled, smax(smin(a["base_m"], b.sub(m, r0)), z), m)
    tn = b.select(tiled, smax(smin(a["base_n"], b.sub(n, c0)), z), n)
    empty = b.or_(b.icmp_signed("<=", tm, z), b.icmp_signed("<=", tn, z))
    with b.if_then(empty):
        b.ret(z)
    lda, ldb, ldc = a["lda"], a["ldb"], a["ldc"]
    ta = b.icmp_signed("!=", a["trans_a"], z)
    tb = b.icmp_signed("!=", a["trans_b"], z)
    es_in = _esize_of(fb, a["a_dt"])
    es_c = _esize_of(fb, a["c_dt"])
    es_bias = _esize_of(fb, a["bias_dt"])
    kk = smax(k, one)
    # leading dimensions at least the rows they step over (as BLAS requires): the extents
    # below then bound every element the product reads or writes
    # an NZ C (c_nz): 16-column blocks of ldc rows each, row-major inside a block; the region
    # starts at (rf, cf) of that layout
    nz = b.icmp_signed("!=", a["c_nz"], z)
    placed = b.and_(tiled, b.icmp_signed("==", a["seq"], z))
    rf, cf = b.select(placed, r0, z), b.select(placed, c0, z)
    sixteen = fb.i64(16)

    def nz_at(r, c, ldc=ldc):
        return b.add(b.add(b.mul(b.mul(b.sdiv(c, sixteen), ldc), sixteen), b.mul(r, sixteen)),
                     b.srem(c, sixteen))
    c_rows = b.select(nz, b.add(rf, tm), tn)
    for ld, rows in ((lda, b.select(ta, tm, kk)), (ldb, b.select(tb, kk, tn)), (ldc, c_rows)):
        fb.st(abi.ERR_D, fb.i64(4))
        fb.fail_with(b.icmp_signed("<", ld, rows), E.VALUE_RANGE, site, ld, rows,
                     fb.i64((1 << 63) - 1))
    sat_add, sat_mul = fb.sat_add, fb.sat_mul
    # A: rows r0.. of op(A); B: columns c0.. of op(B)
    a_first = sat_add(a["a_off"], b.select(ta, r0, sat_mul(r0, lda)))
    a_ext = b.select(ta, sat_add(sat_mul(b.sub(kk, one), lda), tm),
                     sat_add(sat_mul(b.sub(tm, one), lda), kk))
    a_ext = b.select(b.icmp_signed(">", k, z), a_ext, z)
    b_first = sat_add(a["b_off"], b.select(tb, sat_mul(c0, ldb), c0))
    b_ext = b.select(tb, sat_add(sat_mul(b.sub(tn, one), ldb), kk),
                     sat_add(sat_mul(b.sub(kk, one), ldb), tn))
    b_ext = b.select(b.icmp_signed(">", k, z), b_ext, z)
    ptrs = []
    for which, key, first, ext in ((0, "a_arg", a_first, a_ext), (1, "b_arg", b_first, b_ext)):
        slot = fb.alloca_builder.alloca(I64, name=key)
        b.store(z, slot)
        with b.if_then(b.not_(scalar[key])):    # a scalar matrix reads no GM
            b.store(b.ptrtoint(_gm_pointer(fb, a[key], first, ext, es_in, which, site), I64),
                    slot)
        ptrs.append(b.inttoptr(b.load(slot, typ=I64), PTR))
    pa, pb = ptrs
    has_bias = b.icmp_signed(">=", a["bias_arg"], z)
    bias_slot = fb.alloca_builder.alloca(I64, name="bias")
    b.store(z, bias_slot)
    with b.if_then(has_bias):
        with b.if_else(b.icmp_signed("==", a["bias_mem"], z)) as (gm, local):
            with gm:
                pbias = _gm_pointer(fb, a["bias_arg"], sat_add(a["bias_off"], c0), tn, es_bias,
                                    2, site)
                b.store(b.ptrtoint(pbias, I64), bias_slot)
            with local:     # set_bias(LocalTensor): bias_arg is its byte address
                fb.st(abi.ERR_D, fb.i64(2))
                fb.fail_with(b.icmp_signed(">", b.add(c0, tn), a["bias_size"]), E.TENSOR_EXTENT,
                             site, sat_mul(c0, es_bias), sat_mul(b.add(c0, tn), es_bias),
                             sat_mul(a["bias_size"], es_bias))
                addr = sat_add(a["bias_arg"], sat_mul(c0, es_bias))
                call_rt(fb, "check_local", a["bias_mem"], addr, sat_mul(tn, es_bias), one,
                        fb.i64(2), site)
                base = fb.ld(b.add(fb.i64(abi.MEM_BASE), a["bias_mem"]))
                b.store(b.add(base, addr), bias_slot)
    pbias = b.inttoptr(b.load(bias_slot, typ=I64), PTR)
    # C: GM (c_a = argument) or a local memory (c_a = byte address); non-sequential tiles land
    # at their place in C
    nz_first = nz_at(rf, cf)
    c_first = sat_add(a["c_off"], b.select(nz, nz_first, b.select(placed, sat_add(
        sat_mul(r0, ldc), c0), z)))
    c_ext = b.select(nz, b.add(b.sub(nz_at(b.add(rf, b.sub(tm, one)), b.add(cf, b.sub(tn, one))),
                                     nz_first), one),
                     sat_add(sat_mul(b.sub(tm, one), ldc), tn))
    c_slot = fb.alloca_builder.alloca(I64, name="c")
    with b.if_else(b.icmp_signed("==", a["c_mem"], z)) as (gm, local):
        with gm:
            b.store(b.ptrtoint(_gm_pointer(fb, a["c_a"], c_first, c_ext, es_c, 3, site), I64),
                    c_slot)
        with local:
            addr = sat_add(a["c_a"], sat_mul(c_first, es_c))
            fb.st(abi.ERR_D, fb.i64(3))
            fb.fail_with(b.or_(b.icmp_signed("<", c_first, z),
                               b.icmp_signed(">", sat_add(c_first, c_ext), a["c_size"])),
                         E.TENSOR_EXTENT, site, sat_mul(c_first, es_c),
                         sat_mul(sat_add(c_first, c_ext), es_c), sat_mul(a["c_size"], es_c))
            call_rt(fb, "check_local", a["c_mem"], addr, sat_mul(c_ext, es_c), one, fb.i64(3),
                    site)
            base = fb.ld(b.add(fb.i64(abi.MEM_BASE), a["c_mem"]))
            b.store(b.add(base, addr), c_slot)
    pc_out = b.inttoptr(b.load(c_slot, typ=I64), PTR)
    # NZ: the product goes to an ND scratch (row stride tn), then is scattered into the blocks
    malloc, free = _malloc(fb.module)
    scratch = b.call(malloc, [b.select(nz, b.add(b.mul(b.mul(tm, tn), es_c), one), one)])
    pc = b.select(nz, scratch, pc_out)
    ldc_nd = ldc
    ldc = b.select(nz, tn, ldc)
    # the dequant scale vector (set_quant_vector): the uint64 scales of columns c0..c0+tn
    quant_slot = fb.alloca_builder.alloca(I64, name="quant")
    b.store(z, quant_slot)
    with b.if_then(b.icmp_signed("==", a["quant_mode"], fb.i64(2))):
        pq = _gm_pointer(fb, a["quant_arg"], sat_add(a["quant_off"], c0), tn, fb.i64(8), 5, site)
        b.store(b.ptrtoint(pq, I64), quant_slot)
    pquant = b.inttoptr(b.load(quant_slot, typ=I64), PTR)
    # the arithmetic, in chunks of rows of C (about 2**27 multiply-adds each): between chunks
    # the call stops if the launch is being stopped (watchdog, Ctrl-C), so even a product of
    # whole GM matrices cannot keep a launch running
    module = fb.module
    chunk = smax(b.sdiv(fb.i64(CHUNK_MACS), smax(b.mul(tn, kk), one)), one)

    def rows(ci):
        fb.fail_with(b.icmp_signed("<", b.load_atomic(fb.slot_ptr(abi.LOOP_BUDGET), "monotonic",
                                                      8, typ=I64), z), E.LOOP_LIMIT, site)
        r = b.mul(ci, chunk)
        cm = smin(chunk, b.sub(tm, r))
        pa_r = b.inttoptr(b.add(b.ptrtoint(pa, I64), b.mul(b.select(ta, r, b.mul(r, lda)),
                                                          es_in)), PTR)
        pc_r = b.inttoptr(b.add(b.ptrtoint(pc, I64), b.mul(b.mul(r, ldc), es_c)), PTR)
        with b.if_else(b.icmp_signed("==", a["a_dt"], fb.i64(DTYPE_CODES[int8]))) as (i8, fl):
            with i8:
                ops = [pa_r, lda, a["trans_a"], pb, ldb, a["trans_b"], cm, tn, k, pbias, pc_r,
                       ldc]
                with b.if_then(b.icmp_signed("==", a["c_dt"], fb.i64(DTYPE_CODES[int32]))):
                    b.call(_declare(module, "asc_mm_int8", _I8), ops)
                for dt in DEQ_TYPES:
                    with b.if_then(b.icmp_signed("==", a["c_dt"], fb.i64(DTYPE_CODES[dt]))):
                        b.call(_declare(module, _deq_name(dt), _I8_DEQ), ops + [a["quant_scalar"],
                                                                              pquant])
            with fl:
                _float_product(fb, a, pa_r, pb, pbias, pc_r, cm, tn, k, lda, ldb, ldc)
    counted(fb, ceil_div(tm, chunk), rows)
    with b.if_else(nz) as (to_nz, to_nd):
        with to_nz:
            _scatter_nz(fb, a, scratch, pc_out, c_first, rf, cf, tm, tn, es_c, nz_at, nz_first,
                        site)
        with to_nd:
            _sanitize(fb, a, c_first, tm, tn, ldc_nd, es_c, site)
    b.call(free, [scratch])
    # books: one instruction, m*n*k MACs; then the timing of the instruction sequence
    counters = fb.ctx_ptr(abi.COUNTERS)
    from ...simulator import timing_params as TP
    for base_, v in ((TP.COUNT_BASE, one), (TP.ELEM_BASE, b.mul(b.mul(tm, tn), k))):
        p = b.gep(counters, [b.add(fb.i64(base_), a["op"])], source_etype=I64)
        b.store(b.add(b.load(p, typ=I64), v), p)
    targs = (tm, tn, k, m, n, a["base_m"], a["base_n"], a["base_k"], a["depth_a1"],
             a["depth_b1"], a["step_ka"], a["step_kb"], a["order"], a["db_l0c"], a["a_dt"],
             a["c_dt"], a["c_mem"], a["org_m"], a["org_n"], a["org_k"], a["cores"], a["op"])
    # on an AIV of a mix kernel the request is timed by its AIC (lower_mmserver.py)
    on_aiv = b.and_(b.icmp_signed("==", fb.ld(abi.KERNEL_MODE), fb.i64(MODE_MIX)),
                    b.icmp_signed("==", fb.ld(abi.CORE_TYPE), fb.i64(0)))
    on_aiv = b.and_(on_aiv, b.icmp_signed("!=", fb.ld(abi.XC_STATE), fb.i64(0)))
    with b.if_else(on_aiv) as (request, own):
        with request:
            call_rt(fb, "mm_request", *targs, site)
        with own:
            call_tm(fb, "matmul", *targs, site, fb.i64(0))


def _scatter_nz(fb: FnBuilder, a, scratch, pc, c_first, rf, cf, tm, tn, es_c, nz_at, nz_first,
                site) -> None:
    """Copy the tm x tn ND product (row stride tn) to its NZ places (row r, column c of the
    region at ``nz_at(rf + r, cf + c) - nz_first`` elements from ``pc``); in sanitize mode
    record each written row segment of a 16-column block."""
    from ...dsl.types import PipeID
    b = fb.b
    module = fb.module
    memcpy = module.globals.get("llvm.memcpy.p0.p0.i64") or L.Function(
        module, L.FunctionType(L.VoidType(), [PTR, PTR, I64, L.IntType(1)]),
        "llvm.memcpy.p0.p0.i64")
    sixteen = fb.i64(16)

    def row(r):
        def col(c):
            src = b.inttoptr(b.add(b.ptrtoint(scratch, I64), b.mul(b.add(b.mul(r, tn), c), es_c)),
                             PTR)
            at = b.sub(nz_at(b.add(rf, r), b.add(cf, c)), nz_first)
            dst = b.inttoptr(b.add(b.ptrtoint(pc, I64), b.mul(at, es_c)), PTR)
            b.call(memcpy, [dst, src, es_c, L.Constant(L.IntType(1), 0)])
        counted(fb, tn, col)
    counted(fb, tm, row)
    s_pipe = fb.i64(int(PipeID.PIPE_V))
    with b.if_then(b.icmp_signed("!=", fb.ld(abi.SANITIZE), fb.i64(0))):
        call_rt(fb, "san_issue", s_pipe, site)
        first_blk = b.sdiv(cf, sixteen)
        blocks = b.add(b.sub(b.sdiv(b.add(cf, b.sub(tn, fb.i64(1))), sixteen), first_blk),
                       fb.i64(1))

        def srow(r):
            def blk(j):
                lo = fb.smax(cf, b.mul(b.add(first_blk, j), sixteen))
                hi = fb.smin(b.add(cf, tn), b.mul(b.add(b.add(first_blk, j), fb.i64(1)), sixteen))
                start = b.mul(b.add(c_first, b.sub(nz_at(b.add(rf, r), lo), nz_first)), es_c)
                _san_c_write(fb, a, s_pipe, start, b.mul(b.sub(hi, lo), es_c), site)
            counted(fb, blocks, blk)
        counted(fb, tm, srow)


def _san_c_write(fb: FnBuilder, a, s_pipe, start, nbytes, site) -> None:
    """Sanitize mode: ``nbytes`` of C from byte ``start`` recorded as written: in GM's write
    log, or as a write of pipe ``s_pipe`` to C's local memory."""
    b = fb.b
    with b.if_else(b.icmp_signed("==", a["c_mem"], fb.i64(0))) as (gm, local):
        with gm:
            call_rt(fb, "san_gm_write", a["c_a"], start, nbytes, site)
        with local:
            call_rt(fb, "san_access", s_pipe, a["c_mem"], b.add(a["c_a"], start), nbytes,
                    fb.i64(1), site)


def _sanitize(fb: FnBuilder, a, c_first, tm, tn, ldc, es_c, site) -> None:
    """Sanitize mode: record C's rows as written. A UB tile is recorded as written by the V
    pipe (the producer side of a vector queue: alloc_tensor orders it after the tile's previous
    readers, enque/deque orders its consumers after it); GM rows go to the write log
    (overlapping blocks)."""
    from ...dsl.types import PipeID
    b = fb.b
    s_pipe = fb.i64(int(PipeID.PIPE_V))
    with b.if_then(b.icmp_signed("!=", fb.ld(abi.SANITIZE), fb.i64(0))):
        call_rt(fb, "san_issue", s_pipe, site)
        row_bytes = b.mul(tn, es_c)

        def row(r):
            _san_c_write(fb, a, s_pipe, b.mul(b.add(c_first, b.mul(r, ldc)), es_c), row_bytes,
                         site)
        counted(fb, tm, row)


def _float_product(fb: FnBuilder, a, pa, pb, pbias, pc, tm, tn, k, lda, ldb, ldc) -> None:
    b = fb.b
    module = fb.module
    malloc, free = _malloc(module)
    four = fb.i64(4)
    kk = b.select(b.icmp_signed(">", k, fb.i64(0)), k, fb.i64(0))
    fa = b.call(malloc, [b.add(b.mul(b.mul(tm, kk), four), four)])
    fbm = b.call(malloc, [b.add(b.mul(b.mul(kk, tn), four), four)])
    fc = b.call(malloc, [b.add(b.mul(b.mul(tm, tn), four), four)])
    mats = ((pa, lda, "trans_a", tm, kk, fa, "a"), (pb, ldb, "trans_b", kk, tn, fbm, "b"))
    for code, dt in ((0, float16), (1, bfloat16), (2, float32)):
        with b.if_then(b.icmp_signed("==", a["a_dt"], fb.i64(code))):
            pack = _declare(module, _pack_name(dt), _PACK)
            for src, ld, trans, rows, cols, dst, which in mats:
                scalar = b.icmp_signed("==", a[f"{which}_arg"], fb.i64(A_SCALAR))
                with b.if_else(scalar) as (fill, packed):
                    with fill:      # every element is the scalar (its float32 bits)
                        value = b.bitcast(b.trunc(a[f"{which}_scalar"], I32), F32)

                        def put(i, dst=dst, value=value):
                            b.store(value, b.gep(dst, [i], source_etype=F32))
                        counted(fb, b.mul(rows, cols), put)
                    with packed:
                        b.call(pack, [src, ld, a[trans], rows, cols, dst])
    zero_k = b.icmp_signed("==", kk, fb.i64(0))
    with b.if_else(zero_k) as (empty, full):
        with empty:
            memset = module.globals.get("llvm.memset.p0.i64") or L.Function(
                module, L.FunctionType(L.VoidType(), [PTR, L.IntType(8), I64, L.IntType(1)]),
                "llvm.memset.p0.i64")
            b.call(memset, [fc, L.Constant(L.IntType(8), 0), b.mul(b.mul(tm, tn), four),
                            L.Constant(L.IntType(1), 0)])
        with full:
            blas.call_sgemm(b, module, fb.ctx, tm, tn, kk, fa, kk, fbm, tn, 0.0, fc, tn)
    for dt, bias_dt in _STORE_PAIRS:
        cond = b.and_(b.icmp_signed("==", a["c_dt"], fb.i64(DTYPE_CODES[dt])),
                      b.icmp_signed("==", a["bias_dt"], fb.i64(DTYPE_CODES[bias_dt])))
        with b.if_then(cond):
            store = _declare(module, _store_name(dt, bias_dt), _STORE)
            b.call(store, [fc, tm, tn, pbias, fb.i64(0), pc, ldc])
    for p in (fa, fbm, fc):
        b.call(free, [p])


# ----------------------------------------------------------------------------- lowering
def _i64_arg(cg: Codegen, v) -> L.Value:
    """An operand as i64: integers widened, a float (``a_scalar``) as its float32 bits."""
    if not isinstance(v, int) and isinstance(v.type, (L.FloatType, L.HalfType, L.DoubleType)):
        if not isinstance(v.type, L.FloatType):
            v = cg.b.fpext(v, F32) if isinstance(v.type, L.HalfType) else cg.b.fptrunc(v, F32)
        return cg.b.zext(cg.b.bitcast(v, I32), I64)
    return cg._as_i64(v)


@lowering("matmul_iterate_all", "matmul_get_tensor_c")
def lower_matmul(cg: Codegen, s) -> None:
    args = [_i64_arg(cg, cg.expr(e)) for e in s.args]
    call_checked(cg, runtime_lib.declare_rt(cg.module, "matmul"), args, s.op,
                 ("a", "b", "bias", "c", "tiling", "quant vector"))


@lowering("matmul_register")
def lower_register(cg: Codegen, s) -> None:
    """The result is 1 on the cube core (AIC) of a mix kernel: it becomes the matmul server
    (``lower_mmserver.mm_serve``: it times its AIVs' requests until they finish), then its
    kernel ends."""
    mode = cg.ld(abi.KERNEL_MODE)
    core = cg.ld(abi.CORE_TYPE)
    server = cg.b.and_(cg.b.icmp_signed("==", mode, cg.i64(MODE_MIX)),
                       cg.b.icmp_signed("==", core, cg.i64(1)))
    server = cg.b.and_(server, cg.b.icmp_signed("!=", cg.ld(abi.XC_STATE), cg.i64(0)))
    with cg.b.if_then(server):
        call_checked(cg, runtime_lib.declare_rt(cg.module, "mm_serve"), [], s.op, ())
    (res,) = s.results
    cg.b.store(cg.b.zext(server, I64), cg.var(res))
    cg.scalar_cost(1)
