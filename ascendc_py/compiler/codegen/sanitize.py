"""Sanitize mode: data races between pipes, uninitialised local reads, GM write logs.

Happens-before is tracked with vector clocks (one per pipe, ``VC[p][q]``): every instruction on
pipe p ticks ``VC[p][p]``; instructions also see all scalar work issued before them (program
order of the scalar unit); ``set_flag``/``enque``/``free_tensor`` snapshot the source pipe's
clock into the event's record and ``wait_flag``/``deque``/``alloc_tensor`` join it into the
destination pipe's clock; ``pipe_barrier(PIPE_ALL)`` joins every clock. Local memory is
shadowed at 32-byte granularity: the last write (pipe, clock, site) and, per pipe, the last
read, packed into 8 int64 per granule; each memory the core uses (UB; L1, L0A, L0B, L0C, BT,
FB on the cube core) has its own run of records, found through the state header. An access by pipe p conflicts with an earlier access by pipe q unless ``VC[p][q]`` has
reached the earlier access's clock: that is a data race, reported with both source lines and
the HardEvent that would order them.

All functions are runtime-library functions (``@rt``) and return at once when sanitize mode is
off (``ctx[SANITIZE] == 0``). The state array (``ctx[SAN_PTR]``) is laid out as below; the
runtime allocates it (``simulator/runtime.py``).
"""
from __future__ import annotations

from llvmlite import ir as L

from ...dsl.types import NUM_PIPES, PipeID
from ...simulator import abi
from .core import FnBuilder
from .rtfuncs import rt
from .types import I1, I64, PTR

E = abi.ErrorCode
VC = 0                  # NUM_PIPES x NUM_PIPES clocks
GMW_PTR, GMW_CAP, GMW_LEN = 50, 51, 52   # log of GM writes: [arg, start, end, site]
MEM_GBASE = 53          # [Memory] index of the memory's first granule record (0: not tracked)
MEM_GCOUNT = 64         # [Memory] its number of granules
SYNC_VC = 72            # per ctx slot used as an event record: NUM_PIPES clocks
GRANULE = 32
# A granule record: the last write (clock << W_CLOCK | site << W_SITE | pipe), then per pipe the
# last read (clock << R_CLOCK | site); 0: never. Clocks start at 1 (san_issue ticks first).
G_FIELDS = 1 + NUM_PIPES
G_WRITE, G_READ = 0, 1
W_SITE, W_CLOCK, R_CLOCK = 4, 28, 24
SITE_MASK = (1 << 24) - 1
READ, WRITE, READ_ANY = 0, 1, 2   # READ_ANY: uninitialised only if no granule was written
S = int(PipeID.PIPE_S)


def sync_vc_base(ctx_slots: int) -> int:
    return SYNC_VC


def granules_base(ctx_slots: int) -> int:
    return SYNC_VC + ctx_slots * NUM_PIPES


def state_size(ctx_slots: int, mem_bytes: dict) -> int:
    """Slots of the state array for the tracked memories ``mem_bytes`` (Memory -> bytes)."""
    return granules_base(ctx_slots) + sum(n // GRANULE + 1 for n in mem_bytes.values()) * G_FIELDS


def granule_layout(ctx_slots: int, mem_bytes: dict) -> dict:
    """Memory -> (first granule record index, granules): where each memory's shadow lies."""
    out, at = {}, granules_base(ctx_slots)
    for mem in sorted(mem_bytes, key=int):
        count = mem_bytes[mem] // GRANULE + 1
        out[mem] = (at, count)
        at += count * G_FIELDS
    return out


def _off(fb: FnBuilder):
    """Return early (0) unless sanitize mode is on; then the state array pointer."""
    b = fb.b
    with b.if_then(b.icmp_signed("==", fb.ld(abi.SANITIZE), fb.i64(0)), likely=True):
        b.ret(fb.i64(0))
        b.position_at_end(fb.func.append_basic_block("dead"))
    return b.inttoptr(fb.ld(abi.SAN_PTR), PTR)


def _slot(fb: FnBuilder, base, index):
    return fb.b.gep(base, [index], source_etype=I64)


def _ld(fb, base, index):
    return fb.b.load(_slot(fb, base, index), typ=I64)


def _st(fb, base, index, value):
    fb.b.store(value, _slot(fb, base, index))


def _vc(fb, pipe, q):
    return fb.b.add(fb.b.mul(pipe, fb.i64(NUM_PIPES)), q)


def _fail(fb: FnBuilder, cond, code, site, a, b_, c, d) -> None:
    """fail_with, also recording ``d`` (the granule's byte address) in ctx[ERR_D]."""
    with fb.b.if_then(cond, likely=False):
        fb.st(abi.ERR_D, d)
    fb.fail_with(cond, code, site, a, b_, c)


@rt("pipe")
def san_issue(fb: FnBuilder, pipe, site):
    """An instruction enters ``pipe``: it sees the scalar unit's work so far; tick its clock."""
    st = _off(fb)
    b = fb.b
    scalar_now = _ld(fb, st, fb.i64(S * NUM_PIPES + S))
    with b.if_then(b.icmp_signed("!=", pipe, fb.i64(S))):
        _st(fb, st, _vc(fb, pipe, fb.i64(S)), scalar_now)
    own = _vc(fb, pipe, pipe)
    _st(fb, st, own, b.add(_ld(fb, st, own), fb.i64(1)))


@rt("pipe", "mem", "addr", "nbytes", "write")
def san_access(fb: FnBuilder, pipe, mem, addr, nbytes, write, site):
    """Check and record an access of [addr, addr+nbytes) of local memory ``mem`` (UB, L1, L0A,
    L0B, L0C, BT: whichever this core has and the kernel uses). ``write``: READ, WRITE or
    READ_ANY (a read of whole fractals some of whose rows are padding: it is uninitialised only
    if none of its granules was written)."""
    st = _off(fb)
    b = fb.b
    in_table = b.and_(b.icmp_signed(">", mem, fb.i64(0)), b.icmp_signed("<", mem, fb.i64(8)))
    safe_mem = b.select(in_table, mem, fb.i64(0))
    gbase = _ld(fb, st, b.add(fb.i64(MEM_GBASE), safe_mem))
    count = _ld(fb, st, b.add(fb.i64(MEM_GCOUNT), safe_mem))
    first = b.sdiv(addr, fb.i64(GRANULE))
    last = b.sdiv(b.sub(b.add(addr, nbytes), fb.i64(1)), fb.i64(GRANULE))
    skip = b.or_(b.or_(b.xor(in_table, L.Constant(I1, 1)), b.icmp_signed("==", gbase, fb.i64(0))),
                 b.or_(b.icmp_signed("<=", nbytes, fb.i64(0)),
                       b.or_(b.icmp_signed("<", addr, fb.i64(0)),
                             b.icmp_signed(">=", last, count))))
    with b.if_then(skip):
        b.ret(fb.i64(0))
        b.position_at_end(fb.func.append_basic_block("dead"))
    clock = _ld(fb, st, _vc(fb, pipe, pipe))
    is_write = b.icmp_signed("==", write, fb.i64(WRITE))
    strict = b.icmp_signed("==", write, fb.i64(READ))
    any_written = fb.alloca_builder.alloca(I64, name="any_written")
    b.store(fb.i64(0), any_written)
    mem_code = b.mul(mem, fb.i64(4))
    pre = b.block
    head = fb.func.append_basic_block("gran")
    done = fb.func.append_basic_block("gran.end")
    b.branch(head)
    b.position_at_end(head)
    g = b.phi(I64)
    g.add_incoming(first, pre)
    rec = b.add(gbase, b.mul(g, fb.i64(G_FIELDS)))
    gaddr = b.mul(g, fb.i64(GRANULE))
    w = _ld(fb, st, b.add(rec, fb.i64(G_WRITE)))
    never = b.icmp_signed("==", w, fb.i64(0))
    b.store(b.or_(b.load(any_written, typ=I64), b.zext(b.xor(never, L.Constant(I1, 1)), I64)),
            any_written)
    wpipe = b.and_(w, fb.i64(15))
    wclock = b.lshr(w, fb.i64(W_CLOCK))
    wsite = b.and_(b.lshr(w, fb.i64(W_SITE)), fb.i64(SITE_MASK))
    # uninitialised read: nothing has written this granule
    _fail(fb, b.and_(strict, never), E.UNINITIALIZED_READ, site, gaddr, pipe, mem, gaddr)
    # the last write by another pipe must have happened before (RAW, WAW)
    seen = _ld(fb, st, _vc(fb, pipe, wpipe))
    racy = b.and_(b.and_(b.icmp_signed("!=", wpipe, pipe), b.xor(never, L.Constant(I1, 1))),
                  b.icmp_signed("<", seen, wclock))
    kind = b.select(is_write, fb.i64(2), fb.i64(0))
    _fail(fb, racy, E.DATA_RACE, site, wsite, b.add(b.mul(wpipe, fb.i64(16)), pipe),
          b.add(mem_code, kind), gaddr)
    with b.if_else(is_write) as (then, otherwise):
        with then:
            # earlier reads by other pipes must have happened before this write (WAR)
            for q in range(NUM_PIPES):
                r = _ld(fb, st, b.add(rec, fb.i64(G_READ + q)))
                rclock = b.lshr(r, fb.i64(R_CLOCK))
                seen_q = _ld(fb, st, _vc(fb, pipe, fb.i64(q)))
                war = b.and_(b.icmp_signed("!=", pipe, fb.i64(q)),
                             b.and_(b.icmp_signed("!=", r, fb.i64(0)),
                                    b.icmp_signed("<", seen_q, rclock)))
                _fail(fb, war, E.DATA_RACE, site, b.and_(r, fb.i64(SITE_MASK)),
                      b.add(fb.i64(q * 16), pipe), b.add(mem_code, fb.i64(1)), gaddr)
            packed = b.or_(b.or_(b.shl(clock, fb.i64(W_CLOCK)),
                                 b.shl(b.and_(site, fb.i64(SITE_MASK)), fb.i64(W_SITE))), pipe)
            _st(fb, st, b.add(rec, fb.i64(G_WRITE)), packed)
        with otherwise:
            packed = b.or_(b.shl(clock, fb.i64(R_CLOCK)), b.and_(site, fb.i64(SITE_MASK)))
            _st(fb, st, b.add(b.add(rec, fb.i64(G_READ)), pipe), packed)
    nxt = b.add(g, fb.i64(1))
    g.add_incoming(nxt, b.block)
    b.cbranch(b.icmp_signed("<=", nxt, last), head, done)
    b.position_at_end(done)
    lenient = b.icmp_signed("==", write, fb.i64(READ_ANY))
    nothing = b.icmp_signed("==", b.load(any_written, typ=I64), fb.i64(0))
    first_addr = b.mul(first, fb.i64(GRANULE))
    _fail(fb, b.and_(lenient, nothing), E.UNINITIALIZED_READ, site, first_addr, pipe,
          b.add(mem, b.mul(b.add(b.sub(last, first), fb.i64(1)), fb.i64(256))), first_addr)


@rt("pipe", "slot")
def san_set(fb: FnBuilder, pipe, slot, site):
    """set_flag / enque / free_tensor: the event carries ``pipe``'s clock."""
    st = _off(fb)
    b = fb.b
    for q in range(NUM_PIPES):
        v = _ld(fb, st, _vc(fb, pipe, fb.i64(q)))
        _st(fb, st, b.add(fb.i64(SYNC_VC + q), b.mul(slot, fb.i64(NUM_PIPES))), v)


@rt("pipe", "slot")
def san_wait(fb: FnBuilder, pipe, slot, site):
    """wait_flag / deque / alloc_tensor: ``pipe`` has seen everything the event carries."""
    st = _off(fb)
    b = fb.b
    for q in range(NUM_PIPES):
        mine = _vc(fb, pipe, fb.i64(q))
        theirs = _ld(fb, st, b.add(fb.i64(SYNC_VC + q), b.mul(slot, fb.i64(NUM_PIPES))))
        cur = _ld(fb, st, mine)
        _st(fb, st, mine, b.select(b.icmp_signed(">", theirs, cur), theirs, cur))


@rt("pipe")
def san_barrier(fb: FnBuilder, pipe, site):
    """pipe_barrier(PIPE_ALL): every pipe (and the scalar unit) has seen everything."""
    st = _off(fb)
    b = fb.b
    with b.if_then(b.icmp_signed("==", pipe, fb.i64(int(PipeID.PIPE_ALL)))):
        for q in range(NUM_PIPES):
            best = fb.i64(0)
            for p in range(NUM_PIPES):
                v = _ld(fb, st, fb.i64(p * NUM_PIPES + q))
                best = b.select(b.icmp_signed(">", v, best), v, best)
            for p in range(NUM_PIPES):
                _st(fb, st, fb.i64(p * NUM_PIPES + q), best)


@rt("arg", "start", "nbytes")
def san_gm_write(fb: FnBuilder, arg, start, nbytes, site):
    """Log a GM write so overlapping writes of different blocks can be found after the run. A
    write under an atomic mode (set_atomic_*) is logged with site ``-1 - site``."""
    st = _off(fb)
    b = fb.b
    n = _ld(fb, st, fb.i64(GMW_LEN))
    atomic = b.icmp_signed("!=", b.and_(fb.ld(abi.ATOMIC), fb.i64(255)), fb.i64(0))
    tagged = b.select(atomic, b.sub(fb.i64(-1), site), site)
    with b.if_then(b.icmp_signed("<", n, _ld(fb, st, fb.i64(GMW_CAP)))):
        log = b.inttoptr(_ld(fb, st, fb.i64(GMW_PTR)), PTR)
        for k, v in enumerate((arg, start, b.add(start, nbytes), tagged)):
            fb.b.store(v, fb.b.gep(log, [b.add(b.mul(n, fb.i64(4)), fb.i64(k))],
                                   source_etype=I64))
        _st(fb, st, fb.i64(GMW_LEN), b.add(n, fb.i64(1)))


@rt("pipe", "dst_mem", "dst_a", "dst_off", "src_mem", "src_a", "src_off", "nbytes")
def san_copy(fb: FnBuilder, pipe, dst_mem, dst_a, dst_off, src_mem, src_a, src_off, nbytes,
             site):
    """A copy on ``pipe``: reads its local source, writes its local destination, logs a GM
    destination. Operands as in data_copy (mem 0 = GM: a = argument; else a = byte address);
    offsets in bytes."""
    from .rtfuncs import call_rt
    _off(fb)
    b = fb.b
    call_rt(fb, "san_issue", pipe, site)
    with b.if_then(b.icmp_signed("!=", src_mem, fb.i64(0))):
        call_rt(fb, "san_access", pipe, src_mem, b.add(src_a, src_off), nbytes, fb.i64(0), site)
    with b.if_else(b.icmp_signed("!=", dst_mem, fb.i64(0))) as (local, gm):
        with local:
            call_rt(fb, "san_access", pipe, dst_mem, b.add(dst_a, dst_off), nbytes, fb.i64(1),
                    site)
        with gm:
            call_rt(fb, "san_gm_write", dst_a, dst_off, nbytes, site)


def san_copy_on_path(fb: FnBuilder, path, dst_mem, dst_a, dst_off, src_mem, src_a, src_off,
                     nbytes, site) -> None:
    """From a copy in the library: sanitize one burst, on the pipe the DMA path runs on (read
    from the cost table, so the path→pipe map lives in one place)."""
    from .rtfuncs import call_rt
    b = fb.b
    with b.if_then(b.icmp_signed("!=", fb.ld(abi.SANITIZE), fb.i64(0))):
        pipe = path_pipe(fb, path)
        call_rt(fb, "san_copy", pipe, dst_mem, dst_a, dst_off, src_mem, src_a, src_off, nbytes,
                site)


def path_pipe(fb: FnBuilder, path) -> L.Value:
    """The pipe a DMA path runs on (from the cost table: the path→pipe map lives in one place)."""
    from ...simulator import timing_params as TP
    b = fb.b
    table = fb.ctx_ptr(abi.COSTS)
    slot = b.add(fb.i64(TP.PATH_BASE + 2), b.mul(path, fb.i64(TP.PATH_FIELDS)))
    return b.fptosi(b.load(b.gep(table, [slot], source_etype=L.DoubleType()),
                           typ=L.DoubleType()), I64)


def san_call(fb: FnBuilder, name: str, *args) -> None:
    """From a library function: call a sanitizer function and pass its failure on."""
    from .rtfuncs import call_rt
    call_rt(fb, name, *args)


__all__ = ["san_call", "state_size", "granules_base", "granule_layout", "path_pipe", "GMW_PTR",
           "GMW_CAP", "GMW_LEN", "READ", "WRITE", "READ_ANY"]
