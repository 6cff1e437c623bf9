"""Kernel templates for the run-time-value fuzzer (test_fuzz_values.py): one per instruction
family and call form, each taking every count, offset, stride, mask, repeat, address, burst
field and index of its instruction as a run-time ``int`` argument, so that the fuzzer can pass
any value, including ones no compile-time check would let through.

``TEMPLATES`` names each template's kernel, its GM arrays (dtype, elements; ``x`` is read, ``y``
written) and its fields, each with the kind of hardware field it feeds (``FIELD_KINDS`` in
test_fuzz_values.py draws values from the edges of that kind's range and from the plausible
middle). Local tensors are static (``LocalTensor(dtype, pos, byte_addr, length)``) or come from
a TBuf, so that every operand has a known length the checks must respect.
"""
from __future__ import annotations

from dataclasses import dataclass

import ascendc_py as asc

F32 = asc.float32
UB = asc.TPosition.VECCALC
TILE = 1024          # elements of most UB tensors (4 KiB of float32)
# byte addresses of four UB tensors of TILE float32, 4 KiB apart: the gaps between them must
# still hold the fresh-memory pattern after a launch (a write past a tensor lands in one)
A0, A1, A2, A3 = 0, 8192, 16384, 24576


# ----------------------------------------------------------------------------- vector ops
@asc.kernel
def binary_count(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int, od: int, o0: int, o1: int):
    a = asc.LocalTensor(F32, UB, A0, TILE)
    asc.duplicate(a, 1.5, TILE)
    b = asc.LocalTensor(F32, UB, A1, TILE)
    asc.duplicate(b, 2.5, TILE)
    c = asc.LocalTensor(F32, UB, A2, TILE)
    asc.add(c[od:], a[o0:], b[o1:], n)


@asc.kernel
def binary_masked(x: asc.GlobalAddress, y: asc.GlobalAddress, mask: int, rep: int, db: int,
                  s0b: int, s1b: int, dr: int, s0r: int, s1r: int):
    a = asc.LocalTensor(F32, UB, A0, TILE)
    asc.duplicate(a, 1.5, TILE)
    b = asc.LocalTensor(F32, UB, A1, TILE)
    asc.duplicate(b, 2.5, TILE)
    c = asc.LocalTensor(F32, UB, A2, TILE)
    asc.mul(c, a, b, mask, rep, asc.BinaryRepeatParams(db, s0b, s1b, dr, s0r, s1r))


@asc.kernel
def binary_bitmask(x: asc.GlobalAddress, y: asc.GlobalAddress, hi: int, lo: int, rep: int,
                   db: int, dr: int):
    a = asc.LocalTensor(asc.float16, UB, A0, 2 * TILE)
    asc.duplicate(a, 1.5, 2 * TILE)
    c = asc.LocalTensor(asc.float16, UB, A2, 2 * TILE)
    asc.sub(c, a, a, [hi, lo], rep, asc.BinaryRepeatParams(db, 1, 1, dr, 8, 8))


@asc.kernel
def unary_count(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int, od: int, os: int):
    a = asc.LocalTensor(F32, UB, A0, TILE)
    asc.duplicate(a, 1.5, TILE)
    c = asc.LocalTensor(F32, UB, A2, TILE)
    asc.exp(c[od:], a[os:], n)


@asc.kernel
def unary_masked(x: asc.GlobalAddress, y: asc.GlobalAddress, mask: int, rep: int, db: int,
                 sb: int, dr: int, sr: int):
    a = asc.LocalTensor(F32, UB, A0, TILE)
    asc.duplicate(a, 1.5, TILE)
    c = asc.LocalTensor(F32, UB, A2, TILE)
    asc.abs(c, a, mask, rep, asc.UnaryRepeatParams(db, sb, dr, sr))


@asc.kernel
def scalar_count(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int, od: int, os: int,
                 s: int):
    a = asc.LocalTensor(asc.int32, UB, A0, TILE)
    asc.duplicate(a, 3, TILE)
    c = asc.LocalTensor(asc.int32, UB, A2, TILE)
    asc.adds(c[od:], a[os:], s, n)


@asc.kernel
def scalar_masked(x: asc.GlobalAddress, y: asc.GlobalAddress, mask: int, rep: int, db: int,
                  sb: int, dr: int, sr: int):
    a = asc.LocalTensor(F32, UB, A0, TILE)
    asc.duplicate(a, 1.5, TILE)
    c = asc.LocalTensor(F32, UB, A2, TILE)
    asc.muls(c, a, 2.0, mask, rep, asc.UnaryRepeatParams(db, sb, dr, sr))


@asc.kernel
def shift_count(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int, s: int):
    a = asc.LocalTensor(asc.int16, UB, A0, 2 * TILE)
    asc.duplicate(a, 3, 2 * TILE)
    c = asc.LocalTensor(asc.int16, UB, A2, 2 * TILE)
    asc.shift_left(c, a, s, n)


@asc.kernel
def duplicate_count(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int, od: int):
    c = asc.LocalTensor(F32, UB, A2, TILE)
    asc.duplicate(c[od:], 7.0, n)


@asc.kernel
def duplicate_masked(x: asc.GlobalAddress, y: asc.GlobalAddress, mask: int, rep: int, db: int,
                     dr: int):
    c = asc.LocalTensor(F32, UB, A2, TILE)
    asc.duplicate(c, 7.0, mask, rep, db, dr)


@asc.kernel
def axpy_count(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int, od: int, os: int):
    a = asc.LocalTensor(F32, UB, A0, TILE)
    asc.duplicate(a, 1.5, TILE)
    c = asc.LocalTensor(F32, UB, A2, TILE)
    asc.axpy(c[od:], a[os:], 0.5, n)


@asc.kernel
def cast_count(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int, od: int, os: int):
    a = asc.LocalTensor(F32, UB, A0, TILE)
    asc.duplicate(a, 1.5, TILE)
    h = asc.LocalTensor(asc.float16, UB, A2, TILE)
    asc.cast(h[od:], a[os:], asc.RoundMode.CAST_NONE, n)


@asc.kernel
def cast_masked(x: asc.GlobalAddress, y: asc.GlobalAddress, mask: int, rep: int, db: int,
                sb: int, dr: int, sr: int):
    a = asc.LocalTensor(F32, UB, A0, TILE)
    asc.duplicate(a, 1.5, TILE)
    h = asc.LocalTensor(asc.float16, UB, A2, TILE)
    asc.cast(h, a, asc.RoundMode.CAST_NONE, mask, rep, asc.UnaryRepeatParams(db, sb, dr, sr))


@asc.kernel
def compare_select(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int, m: int, os: int):
    a = asc.LocalTensor(F32, UB, A0, TILE)
    asc.duplicate(a, 1.5, TILE)
    b = asc.LocalTensor(F32, UB, A1, TILE)
    asc.duplicate(b, 2.5, TILE)
    c = asc.LocalTensor(F32, UB, A2, TILE)
    bits = asc.LocalTensor(asc.uint8, UB, A3, TILE // 8)
    asc.compare(bits, a[os:], b, asc.CMPMODE.LT, n)
    asc.select(c, bits, a, b, asc.SELMODE.VSEL_TENSOR_TENSOR_MODE, m)


@asc.kernel
def compare_masked(x: asc.GlobalAddress, y: asc.GlobalAddress, mask: int, rep: int, s0b: int,
                   s0r: int):
    a = asc.LocalTensor(F32, UB, A0, TILE)
    asc.duplicate(a, 1.5, TILE)
    b = asc.LocalTensor(F32, UB, A1, TILE)
    asc.duplicate(b, 2.5, TILE)
    bits = asc.LocalTensor(asc.uint8, UB, A3, TILE // 8)
    asc.compare(bits, a, b, asc.CMPMODE.GE, mask, rep,
                asc.BinaryRepeatParams(1, s0b, 1, 8, s0r, 8))


# ----------------------------------------------------------------------------- reductions
@asc.kernel
def reduce_count(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int, os: int, which: int):
    a = asc.LocalTensor(F32, UB, A0, TILE)
    asc.duplicate(a, 1.5, TILE)
    d = asc.LocalTensor(F32, UB, A3, 16)
    w = asc.LocalTensor(F32, UB, A2, TILE)
    if which % 3 == 0:
        asc.reduce_sum(d, a[os:], w, n)
    elif which % 3 == 1:
        asc.reduce_max(d, a[os:], w, n)
    else:
        asc.reduce_min(d, a[os:], w, n)


@asc.kernel
def whole_reduce(x: asc.GlobalAddress, y: asc.GlobalAddress, mask: int, rep: int, dr: int,
                 sb: int, sr: int, which: int):
    a = asc.LocalTensor(F32, UB, A0, TILE)
    asc.duplicate(a, 1.5, TILE)
    d = asc.LocalTensor(F32, UB, A3, 256)
    if which % 3 == 0:
        asc.whole_reduce_sum(d, a, mask, rep, dr, sb, sr)
    elif which % 3 == 1:
        asc.whole_reduce_max(d, a, mask, rep, dr, sb, sr)
    else:
        asc.whole_reduce_min(d, a, mask, rep, dr, sb, sr)


@asc.kernel
def block_reduce(x: asc.GlobalAddress, y: asc.GlobalAddress, rep: int, mask: int, dr: int,
                 sb: int, sr: int, which: int):
    a = asc.LocalTensor(F32, UB, A0, TILE)
    asc.duplicate(a, 1.5, TILE)
    d = asc.LocalTensor(F32, UB, A3, 256)
    if which % 3 == 0:
        asc.block_reduce_sum(d, a, rep, mask, dr, sb, sr)
    elif which % 3 == 1:
        asc.block_reduce_max(d, a, rep, mask, dr, sb, sr)
    else:
        asc.pair_reduce_sum(d, a, rep, mask, dr, sb, sr)


# ----------------------------------------------------------------------------- masks
@asc.kernel
def mask_counter_mode(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int, rep: int):
    a = asc.LocalTensor(F32, UB, A0, TILE)
    asc.duplicate(a, 1.5, TILE)
    c = asc.LocalTensor(F32, UB, A2, TILE)
    asc.set_mask_count()
    asc.set_vector_mask(n, dtype=asc.float32)
    asc.adds(c, a, 1.0, 64, rep, asc.UnaryRepeatParams(1, 1, 8, 8), is_set_mask=False)
    asc.set_mask_norm()
    asc.reset_mask()


# ----------------------------------------------------------------------------- data movement
@asc.kernel
def copy_count(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int, ol: int, og: int, m: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y)
    a = asc.LocalTensor(F32, UB, A0, TILE)
    asc.data_copy(a[ol:], xg[og:], n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(yg[og:], a[ol:], m)


@asc.kernel
def copy_bursts(x: asc.GlobalAddress, y: asc.GlobalAddress, cnt: int, ln: int, ss: int,
                ds: int, out_ss: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y)
    a = asc.LocalTensor(F32, UB, A0, TILE)
    asc.data_copy(a, xg, asc.DataCopyParams(cnt, ln, ss, ds))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(yg, a, asc.DataCopyParams(cnt, ln, ds, out_ss))


@asc.kernel
def copy_pad(x: asc.GlobalAddress, y: asc.GlobalAddress, cnt: int, ln: int, ss: int, ds: int,
             left: int, right: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y)
    a = asc.LocalTensor(F32, UB, A0, TILE)
    asc.data_copy_pad(a, xg, asc.DataCopyExtParams(cnt, ln, ss, ds, 0),
                      asc.DataCopyPadExtParams(True, left, right, 0.0))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy_pad(yg, a, asc.DataCopyExtParams(cnt, ln, ds, ss, 0))


@asc.kernel
def gm_window(x: asc.GlobalAddress, y: asc.GlobalAddress, off: int, size: int, n: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x + off, size)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y)
    a = asc.LocalTensor(F32, UB, A0, TILE)
    asc.data_copy(a, xg, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(yg, a, n)


# ----------------------------------------------------------------------------- scalar access
@asc.kernel
def scalar_access(x: asc.GlobalAddress, y: asc.GlobalAddress, i: int, j: int, k: int, v: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y)
    a = asc.LocalTensor(asc.int32, UB, A0, 64)
    a.set_value(i, v)
    yg.set_value(k, xg.get_value(j) + a.get_value(i))


@asc.kernel
def static_tensor(x: asc.GlobalAddress, y: asc.GlobalAddress, addr: int, length: int, n: int):
    a = asc.LocalTensor(F32, UB, addr, length)
    asc.duplicate(a, 1.0, n)


@asc.kernel
def tbuf_sizes(x: asc.GlobalAddress, y: asc.GlobalAddress, nbytes: int, length: int, n: int):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, nbytes)
    t = buf.get(F32, length)
    asc.duplicate(t, 2.0, n)


@asc.kernel
def queue_sizes(x: asc.GlobalAddress, y: asc.GlobalAddress, num: int, nbytes: int, n: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 2)
    pipe.init_buffer(q, num, nbytes)
    t = q.alloc_tensor(F32)
    asc.data_copy(t, xg, n)
    q.enque(t)
    u = q.deque(F32)
    q.free_tensor(u)


@asc.kernel
def dump_count(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int, off: int):
    a = asc.LocalTensor(F32, UB, A0, 64)
    asc.duplicate(a, 1.0, 64)
    asc.dump_tensor(a[off:], 7, n)


# ----------------------------------------------------------------------------- cube unit
@asc.kernel
def cube_load(x: asc.GlobalAddress, y: asc.GlobalAddress, start: int, rep: int, ss: int,
              gap: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    pipe = asc.TPipe()
    b1 = asc.TBuf(asc.TPosition.A1)
    b2 = asc.TBuf(asc.TPosition.A2)
    pipe.init_buffer(b1, 8192)
    pipe.init_buffer(b2, 4096)
    l1 = b1.get(asc.float16)
    l0 = b2.get(asc.float16)
    asc.data_copy(l1, xg, 4096)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.load_data(l0, l1, asc.LoadData2DParams(start, rep, ss, 0, gap, False, 0))


@asc.kernel
def cube_nd2nz(x: asc.GlobalAddress, y: asc.GlobalAddress, nd: int, nv: int, dv: int,
               smat: int, sd: int, c0s: int, ns: int, dmat: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    pipe = asc.TPipe()
    b1 = asc.TBuf(asc.TPosition.A1)
    pipe.init_buffer(b1, 8192)
    l1 = b1.get(asc.float16)
    asc.data_copy(l1, xg, asc.Nd2NzParams(nd, nv, dv, smat, sd, c0s, ns, dmat))


@asc.kernel
def cube_mmad_fixpipe(x: asc.GlobalAddress, y: asc.GlobalAddress, m: int, n: int, k: int,
                      ns: int, ms: int, ss: int, ds: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y)
    pipe = asc.TPipe()
    ta = asc.TBuf(asc.TPosition.A2)
    tb = asc.TBuf(asc.TPosition.B2)
    tc = asc.TBuf(asc.TPosition.CO1)
    pipe.init_buffer(ta, 2048)
    pipe.init_buffer(tb, 2048)
    pipe.init_buffer(tc, 4096)
    l0a = ta.get(asc.float16)
    l0b = tb.get(asc.float16)
    l0c = tc.get(F32)
    asc.load_data(l0a, xg, asc.LoadData2DParams(0, 2, 1, 0, 0, False, 0))
    asc.load_data(l0b, xg, asc.LoadData2DParams(0, 2, 1, 0, 0, False, 0))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.mmad(l0c, l0a, l0b, asc.MmadParams(m, n, k, 0, False, True))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.fixpipe(yg, l0c, asc.FixpipeParamsV220(ns, ms, ss, ds))


@asc.kernel
def cube_init_const(x: asc.GlobalAddress, y: asc.GlobalAddress, rep: int, blocks: int,
                    gap: int):
    pipe = asc.TPipe()
    b1 = asc.TBuf(asc.TPosition.A1)
    pipe.init_buffer(b1, 8192)
    l1 = b1.get(asc.float16)
    asc.init_const_value(l1, asc.InitConstValueParams(rep, blocks, gap, 1.0))


@dataclass(frozen=True)
class Template:
    """One fuzzed kernel: its run-time fields as (name, kind) in argument order, its GM arrays
    ((dtype name, elements) for x and y) and the UB byte ranges (start, length) of the tensors
    it may write (None: not checked; its tensors come from a TPipe or the cube's memories).
    Every other UB byte must still hold the fresh-memory pattern after a 1-block launch: an
    instruction never writes past the tensor it was given."""

    kernel: object
    fields: tuple
    gm: tuple
    ub_writes: object


def _t(kernel, *fields, gm=(("float32", 4096), ("float32", 4096)), writes=None) -> Template:
    return Template(kernel, tuple(f.split(":") for f in fields), gm, writes)


F16_GM = (("float16", 4096), ("float32", 4096))
IN = ((A0, 4 * TILE), (A1, 4 * TILE))  # the input tensors a, b (filled by duplicate)
C = IN + ((A2, 4 * TILE),)             # ... and the usual destination tensor c
TEMPLATES = {t.kernel.__name__: t for t in (
    _t(binary_count, "n:count", "od:offset", "o0:offset", "o1:offset", writes=C),
    _t(binary_masked, "mask:mask", "rep:repeat", "db:blk", "s0b:blk", "s1b:blk", "dr:rep",
       "s0r:rep", "s1r:rep", writes=C),
    _t(binary_bitmask, "hi:bits", "lo:bits", "rep:repeat", "db:blk", "dr:rep", writes=C),
    _t(unary_count, "n:count", "od:offset", "os:offset", writes=C),
    _t(unary_masked, "mask:mask", "rep:repeat", "db:blk", "sb:blk", "dr:rep", "sr:rep",
       writes=C),
    _t(scalar_count, "n:count", "od:offset", "os:offset", "s:value", writes=C),
    _t(scalar_masked, "mask:mask", "rep:repeat", "db:blk", "sb:blk", "dr:rep", "sr:rep",
       writes=C),
    _t(shift_count, "n:count", "s:value", writes=C),
    _t(duplicate_count, "n:count", "od:offset", writes=C),
    _t(duplicate_masked, "mask:mask", "rep:repeat", "db:blk", "dr:rep", writes=C),
    _t(axpy_count, "n:count", "od:offset", "os:offset", writes=C),
    _t(cast_count, "n:count", "od:offset", "os:offset", writes=IN + ((A2, 2 * TILE),)),
    _t(cast_masked, "mask:mask", "rep:repeat", "db:blk", "sb:blk", "dr:rep", "sr:rep",
       writes=IN + ((A2, 2 * TILE),)),
    _t(compare_select, "n:count", "m:count", "os:offset", writes=C + ((A3, TILE // 8),)),
    _t(compare_masked, "mask:mask", "rep:repeat", "s0b:blk", "s0r:rep",
       writes=IN + ((A3, TILE // 8),)),
    _t(reduce_count, "n:count", "os:offset", "which:small",
       writes=((A0, 4 * TILE), (A2, 4 * TILE), (A3, 64))),
    _t(whole_reduce, "mask:mask", "rep:repeat", "dr:rep", "sb:blk", "sr:rep", "which:small",
       writes=((A0, 4 * TILE), (A3, 1024))),
    _t(block_reduce, "rep:repeat", "mask:mask", "dr:rep", "sb:blk", "sr:rep", "which:small",
       writes=((A0, 4 * TILE), (A3, 1024))),
    _t(mask_counter_mode, "n:count", "rep:repeat", writes=C),
    _t(copy_count, "n:count", "ol:offset", "og:offset", "m:count", writes=((A0, 4 * TILE),)),
    _t(copy_bursts, "cnt:burst", "ln:burst", "ss:burst", "ds:burst", "out_ss:burst",
       writes=((A0, 4 * TILE),)),
    _t(copy_pad, "cnt:burst", "ln:bytes", "ss:bytes", "ds:burst", "left:small", "right:small",
       writes=((A0, 4 * TILE),)),
    _t(gm_window, "off:offset", "size:count", "n:count", writes=((A0, 4 * TILE),)),
    _t(scalar_access, "i:index", "j:index", "k:index", "v:value", writes=((A0, 256),)),
    _t(static_tensor, "addr:address", "length:count", "n:count"),
    _t(tbuf_sizes, "nbytes:bytes", "length:count", "n:count"),
    _t(queue_sizes, "num:small", "nbytes:bytes", "n:count"),
    _t(dump_count, "n:count", "off:offset", writes=((A0, 256),)),
    _t(cube_load, "start:small", "rep:repeat", "ss:small", "gap:small", gm=F16_GM),
    _t(cube_nd2nz, "nd:small", "nv:count", "dv:count", "smat:count", "sd:count", "c0s:count",
       "ns:small", "dmat:count", gm=F16_GM),
    _t(cube_mmad_fixpipe, "m:small", "n:small", "k:small", "ns:small", "ms:small", "ss:small",
       "ds:small", gm=F16_GM),
    _t(cube_init_const, "rep:repeat", "blocks:small", "gap:small", gm=F16_GM),
)}
