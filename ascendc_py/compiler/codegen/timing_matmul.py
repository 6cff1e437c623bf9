"""Timing of one Matmul call (``asc_tm_matmul``): the instruction sequence Ascend C's Matmul
issues for the tiling, scheduled analytically on the sub-core's pipes (native code, no Python).

For each base tile of the region (rows x cols <= base_m x base_n, in the iterate order) and each
base_k step of K:

* MTE2 (GM -> L1): an A panel chunk (rows x step_ka*base_k) every step_ka steps and a B chunk
  (step_kb*base_k x cols) every step_kb steps. A chunk's L1 slot is double-buffered when
  ``depth >= 2*step`` (it waits until MTE1 has moved the chunk two before to L0), else
  single.
  When the whole K of a panel fits L1 (``ceil(K/base_k) <= depth``) the panel stays resident
  while consecutive tiles share it (B across tiles of one column in M-first order, A in
  N-first order). Occupancy = bytes / the core's read rate (below); the GM latency is added to
  the chunk's ready time only (many requests are outstanding).
* MTE1 (L1 -> L0A/L0B): rows x kj and kj x cols at the path widths, waiting for the chunks and
  for the M pipe to free the L0 buffer used two steps before (db_l0a = db_l0b = 2); +LOAD2D
  latency before the mmad may start.
* M: one mmad of max(ceil(rows/16)*ceil(cols/16)*ceil(kj/k0) + CUBE_ISSUE, CUBE_MIN) cycles (k0
  by input dtype; ``CubeCosts.mmad_occupancy``); the first
  step of a tile waits for L0C: the FIX of the previous tile (db_l0c = 1) or of the one before
  (db_l0c = 2).
* FIX (L0C -> GM, or to the UB tile through the L2-resident workspace): rows x cols x
  sizeof(C) after the last step's mmad latency.

GM read model: a chunk moves at one core's read rate, the GM -> L1 path's measured plateau
capped by the per-core L2 read rate (``L2_READ``; every GM byte reaches the core through L2),
whichever of L2 and HBM serves it, through the core's GM port, which it shares with the FIX
writes (``timing_gm.gm_transfer``). Sharing between cores is not part of this estimate: each
chunk's bytes are recorded in the block's GM demand record over the cycles they occupy, and
after the launch ``simulator/contention.py`` shares the chip's HBM and L2 bandwidth between the
cores that move data at that time (a core that computes holds no share). The launch's first
reads of A and B (their unique bytes, (M*K + K*N) x size, shared evenly by the ``used_core_num``
cores; a tile call gets its share by area) come from HBM; every other read is a re-read of a
panel already read in this launch. Re-reads hit L2 (recorded as L2 traffic, which HBM never
sees; misses are HBM demand) by an LRU reuse-distance argument over the tile order (Mattson et
al., "Evaluation techniques for storage hierarchies", IBM Systems Journal 9(2), 1970: an LRU
cache of C bytes hits exactly the references whose reuse distance, the distinct bytes touched
since the previous use, is below C). All ``cores`` sweep their blocks at once, so between two
uses of a panel chunk the chip touches about
* for the operand consecutive tiles share (B in M-first order, A in N-first): one tile of every
  core, ``near = cores x (A panel + B panel + C tile)`` (panels of the call's K);
* for the other one (a sweep of the block's tiles passes before it comes back): the whole of
  that operand plus the shared panels in flight plus the C tiles written meanwhile,
  ``far = |A| + cores x B panel + cores x m_tiles x C tile`` (M-first; mirrored in N-first);
each capped by the footprint F = A + B + C. A re-read with distance D hits with the fraction
``min(1, L2_SIZE / D)``: 1 while it fits, then falling smoothly rather than in a step, since
the true distances spread around the estimate (cores are not in lockstep, the first and last
tiles of a sweep differ); when F fits L2 everything hits. The reads are recorded against no
GM argument, so the contention pass's own re-read model does not count them a second time.
C writes (FIX to GM) move at one core's L0C -> GM plateau and are HBM demand like any GM
write; FIX to the UB (through the L2-resident workspace) moves at the path width and is not.
The report's ``bytes_moved["GM->L1"]`` (and so its GM bandwidth) counts the HBM bytes: first
reads plus missed re-reads.
All occupancies are divided by ``CUBE_RATE`` (1 on an AIC; an AIV of a mix AI Core times a call
itself only when its AIC serves no requests, at 0.5). The call is synchronous (``serve`` 0):
the scalar unit continues after the last FIX (``sync=True``, the default of
iterate_all/get_tensor_c). With ``serve`` 1 (the AIC of a mix kernel serving an AIV's request,
``lower_mmserver.py``) the AIC's scalar goes on at once and the result's time goes to
``ctx[XC_TIME]``.
"""
from __future__ import annotations

from llvmlite import ir as L

from ...dsl.types import PipeID
from ...simulator import abi
from ...simulator import timing_params as TP
from .rtfuncs import counted
from .timing import _TB, plateau_rate, tm
from .timing_gm import GM_NONE, GM_READS, GM_WRITES, gm_transfer
from .types import F64, I64

_M, _MTE1, _MTE2, _FIX = (int(p) for p in (PipeID.PIPE_M, PipeID.PIPE_MTE1, PipeID.PIPE_MTE2,
                                           PipeID.PIPE_FIX))


def _path(a: str, b: str) -> int:
    return TP.PATH_BASE + TP.PATHS.index((a, b)) * TP.PATH_FIELDS


@tm(24)
def matmul(tb: _TB, tm_, tn, k, m, n, base_m, base_n, base_k, depth_a1, depth_b1, step_ka,
           step_kb, order, db_l0c, a_dt, c_dt, c_mem, org_m, org_n, org_k, cores, op, site,
           serve):
    b = tb.b
    z, one = tb.i64(0), tb.i64(1)
    f0 = L.Constant(F64, 0.0)

    smax, smin, ceil_div = tb.smax, tb.smin, tb.ceil_div

    def fmin(x, y):
        return b.select(b.fcmp_ordered("<", x, y), x, y)

    def var(init, t=I64):
        slot = tb.alloca_builder.alloca(t)
        b.store(init, slot)
        return slot

    def ld(slot, t=I64):
        return b.load(slot, typ=t)

    def cyc(x):  # f64 cycles -> i64, divided by the cube share
        return tb.ceil_i(b.fdiv(x, rate))

    rate = tb.cost(TP.CUBE_RATE)
    rate = b.select(b.fcmp_ordered(">", rate, f0), rate, L.Constant(F64, 1.0))
    es_in = b.select(b.icmp_signed("==", a_dt, tb.i64(2)), tb.i64(4),
                     b.select(b.icmp_signed("==", a_dt, tb.i64(3)), one, tb.i64(2)))
    es_c = b.select(b.icmp_signed("==", c_dt, z), tb.i64(2),
                    b.select(b.icmp_signed("==", c_dt, one), tb.i64(2),
                             b.select(b.icmp_signed("==", c_dt, tb.i64(3)), one, tb.i64(4))))
    k0 = b.select(b.icmp_signed("==", a_dt, tb.i64(2)), tb.cost(TP.CUBE_K0_F32),
                  b.select(b.icmp_signed("==", a_dt, tb.i64(3)), tb.cost(TP.CUBE_K0_INT8),
                           tb.cost(TP.CUBE_K0_F16)))
    k0 = b.fptosi(k0, I64)
    m0 = b.fptosi(tb.cost(TP.CUBE_M0), I64)
    n0 = b.fptosi(tb.cost(TP.CUBE_N0), I64)
    cube_lat = tb.ceil_i(tb.cost(TP.CUBE_LATENCY))
    # GM model: every read moves at one core's read rate (GM -> L1 plateau, capped by the
    # per-core L2 read rate), whether HBM or L2 serves it; HBM and L2 bandwidth are shared
    # between the cores after the launch (contention.py)
    gm_l1 = _path("GM", "L1")
    lat_gm = tb.ceil_i(tb.cost(gm_l1 + 1))
    footprint = b.add(b.mul(b.add(b.mul(org_m, org_k), b.mul(org_k, org_n)), es_in),
                      b.mul(b.mul(org_m, org_n), es_c))
    read_rate = fmin(plateau_rate(tb, TP.PATHS.index(("GM", "L1"))), tb.cost(TP.L2_READ))
    f_one = L.Constant(F64, 1.0)

    def hit_within(dist):
        """The fraction of re-reads with reuse distance about ``dist`` bytes that hit L2:
        min(1, L2_SIZE / dist), and 1 whenever the whole footprint fits (module docstring)."""
        d = smin(dist, footprint)
        return fmin(f_one, b.fdiv(tb.cost(TP.L2_SIZE), tb.f(smax(d, one))))

    # reuse distances over the tile order (module docstring): the operand consecutive tiles
    # share comes back after one tile of every core; the other one after a sweep of the block
    cores1 = smax(cores, one)
    panel_a = b.mul(b.mul(smin(base_m, tm_), k), es_in)
    panel_b = b.mul(b.mul(k, smin(base_n, tn)), es_in)
    c_tile = b.mul(b.mul(base_m, base_n), es_c)
    near = b.mul(cores1, b.add(b.add(panel_a, panel_b), c_tile))
    far_a = b.add(b.add(b.mul(b.mul(org_m, org_k), es_in), b.mul(cores1, panel_b)),
                  b.mul(b.mul(cores1, ceil_div(tm_, base_m)), c_tile))
    far_b = b.add(b.add(b.mul(b.mul(org_k, org_n), es_in), b.mul(cores1, panel_a)),
                  b.mul(b.mul(cores1, ceil_div(tn, base_n)), c_tile))
    m_first = b.icmp_signed("!=", order, one)
    hit_a = hit_within(b.select(m_first, far_a, near))
    hit_b = hit_within(b.select(m_first, near, far_b))
    unique = b.mul(b.add(b.mul(org_m, org_k), b.mul(org_k, org_n)), es_in)
    area = b.fdiv(tb.f(b.mul(tm_, tn)), tb.f(smax(b.mul(m, n), one)))
    first_left = var(b.fmul(b.fdiv(tb.f(unique), tb.f(smax(cores, one))), area), F64)
    w_l0a = tb.cost(_path("L1", "L0A"))
    w_l0b = tb.cost(_path("L1", "L0B"))
    lat_l1 = tb.ceil_i(tb.cost(_path("L1", "L0A") + 1))
    l0c_gm = _path("L0C", "GM")
    to_gm = b.icmp_signed("==", c_mem, z)
    # C to GM at one core's L0C -> GM rate (HBM demand); to the UB through the L2-resident
    # workspace at the path width (not HBM demand)
    w_fix = b.select(to_gm, plateau_rate(tb, TP.PATHS.index(("L0C", "GM"))), tb.cost(l0c_gm))
    fix_kind = b.select(to_gm, tb.i64(GM_WRITES), tb.i64(GM_NONE))
    lat_fix = tb.ceil_i(tb.cost(l0c_gm + 1))

    t0 = tb.ld(abi.T_SCALAR)
    clock = {p: var(tb.max(t0, tb.ld(abi.PIPE_FREE + p))) for p in (_M, _MTE1, _MTE2, _FIX)}
    busy = {p: var(z) for p in (_M, _MTE1, _MTE2, _FIX)}
    moved = {key: var(z) for key in ("GM_L1", "L1_L0A", "L1_L0B", "L0C_OUT")}
    fix_end1, fix_end2, fix_done = var(z), var(z), var(z)
    a_end1, a_end2, b_end1, b_end2 = var(z), var(z), var(z), var(z)   # L1 slot releases
    ready_a, ready_b = var(z), var(z)
    last_mi, last_ni = var(tb.i64(-1)), var(tb.i64(-1))
    m_tiles, n_tiles = ceil_div(tm_, base_m), ceil_div(tn, base_n)
    ksteps = b.select(b.icmp_signed(">", k, z), ceil_div(k, base_k), z)
    step_ka = smax(step_ka, one)
    step_kb = smax(step_kb, one)
    a_res = b.icmp_signed("<=", ksteps, depth_a1)
    b_res = b.icmp_signed("<=", ksteps, depth_b1)
    a_two = b.icmp_signed(">=", depth_a1, b.mul(step_ka, tb.i64(2)))
    b_two = b.icmp_signed(">=", depth_b1, b.mul(step_kb, tb.i64(2)))
    n_first = b.icmp_signed("==", order, one)

    def load(rows_or_cols, ck, end1, end2, two, ready, hit):
        """One MTE2 chunk: waits for its L1 slot, charges the bytes, sets the ready time
        (re-reads hit L2 with the fraction ``hit``)."""
        nbytes = b.mul(b.mul(rows_or_cols, ck), es_in)
        fb_ = tb.f(nbytes)
        first = fmin(fb_, ld(first_left, F64))
        b.store(b.fsub(ld(first_left, F64), first), first_left)
        # bytes that come from HBM: the first reads and the re-reads that miss L2
        hbm = tb.ceil_i(b.fadd(first, b.fmul(b.fsub(fb_, first),
                                            b.fsub(L.Constant(F64, 1.0), hit))))
        slot_free = b.select(two, ld(end2), ld(end1))
        start = tb.max(ld(clock[_MTE2]), slot_free)
        # through the core's GM port (shared with the FIX writes), recorded as HBM and L2
        # demand, not counted against a GM argument (the L2 re-reads are modelled here)
        dur = gm_transfer(tb, tb.i64(GM_READS), start, z, cyc(b.fdiv(fb_, read_rate)), nbytes,
                          l2_bytes=b.sub(nbytes, hbm), per_arg=False)
        b.store(b.add(start, dur), clock[_MTE2])
        b.store(b.add(ld(busy[_MTE2]), dur), busy[_MTE2])
        b.store(b.add(b.add(start, dur), lat_gm), ready)
        tb.trace(start, dur, lat_gm, tb.i64(_MTE2), site, op)
        b.store(b.add(ld(moved["GM_L1"]), hbm), moved["GM_L1"])

    def tile(t):
        mi = b.select(n_first, b.sdiv(t, smax(n_tiles, one)), b.srem(t, smax(m_tiles, one)))
        ni = b.select(n_first, b.srem(t, smax(n_tiles, one)), b.sdiv(t, smax(m_tiles, one)))
        rows = smin(base_m, b.sub(tm_, b.mul(mi, base_m)))
        cols = smin(base_n, b.sub(tn, b.mul(ni, base_n)))
        keep_a = b.and_(a_res, b.icmp_signed("==", mi, ld(last_mi)))
        keep_b = b.and_(b_res, b.icmp_signed("==", ni, ld(last_ni)))
        b.store(mi, last_mi)
        b.store(ni, last_ni)
        l0c_free = b.select(b.icmp_signed(">=", db_l0c, tb.i64(2)), ld(fix_end2), ld(fix_end1))
        rel1, rel2 = var(z), var(z)     # M ends of the last two steps (L0A/L0B buffers)

        def step(j):
            kj = smin(base_k, b.sub(k, b.mul(j, base_k)))
            for keep, stp, end1, end2, two, ready, extent, hit in (
                    (keep_a, step_ka, a_end1, a_end2, a_two, ready_a, rows, hit_a),
                    (keep_b, step_kb, b_end1, b_end2, b_two, ready_b, cols, hit_b)):
                boundary = b.icmp_signed("==", b.srem(j, stp), z)
                with b.if_then(b.and_(boundary, b.xor(keep, L.Constant(keep.type, 1)))):
                    # the previous chunk is fully scheduled: its L1 slot frees once MTE1 has
                    # moved its last step to L0
                    b.store(ld(end1), end2)
                    b.store(ld(clock[_MTE1]), end1)
                    ck = smin(b.mul(stp, base_k), b.sub(k, b.mul(j, base_k)))
                    load(extent, ck, end1, end2, two, ready, hit)
            la = b.mul(b.mul(rows, kj), es_in)
            lb = b.mul(b.mul(kj, cols), es_in)
            d1 = cyc(b.fadd(b.fdiv(tb.f(la), w_l0a), b.fdiv(tb.f(lb), w_l0b)))
            s1 = tb.max(tb.max(ld(clock[_MTE1]), ld(rel2)), tb.max(ld(ready_a), ld(ready_b)))
            b.store(b.add(s1, d1), clock[_MTE1])
            tb.trace(s1, d1, lat_l1, tb.i64(_MTE1), site, op)
            b.store(b.add(ld(busy[_MTE1]), d1), busy[_MTE1])
            b.store(b.add(ld(moved["L1_L0A"]), la), moved["L1_L0A"])
            b.store(b.add(ld(moved["L1_L0B"]), lb), moved["L1_L0B"])
            fractals = b.mul(b.mul(ceil_div(rows, m0), ceil_div(cols, n0)), ceil_div(kj, k0))
            # an mmad's occupancy (CubeCosts.mmad_occupancy): its steps + the per-mmad overhead,
            # at least the minimum
            steps = b.fadd(tb.f(fractals), tb.cost(TP.CUBE_ISSUE))
            least = tb.cost(TP.CUBE_MIN)
            dm = cyc(b.select(b.fcmp_ordered("<", steps, least), least, steps))
            sm = tb.max(ld(clock[_M]), b.add(b.add(s1, d1), lat_l1))
            sm = b.select(b.icmp_signed("==", j, z), tb.max(sm, l0c_free), sm)
            b.store(b.add(sm, dm), clock[_M])
            tb.trace(sm, dm, cube_lat, tb.i64(_M), site, op)
            b.store(b.add(ld(busy[_M]), dm), busy[_M])
            b.store(ld(rel1), rel2)
            b.store(b.add(sm, dm), rel1)

        counted(tb, ksteps, step)
        out = b.mul(b.mul(rows, cols), es_c)
        sf = tb.max(ld(clock[_FIX]), b.add(ld(clock[_M]), cube_lat))
        sf = tb.max(sf, l0c_free)    # the tile's L0C was free only from l0c_free on
        df = gm_transfer(tb, fix_kind, sf, z, cyc(b.fdiv(tb.f(out), w_fix)), out,
                         per_arg=False)
        b.store(b.add(sf, df), clock[_FIX])
        tb.trace(sf, df, lat_fix, tb.i64(_FIX), site, op)
        b.store(b.add(ld(busy[_FIX]), df), busy[_FIX])
        b.store(ld(fix_end1), fix_end2)
        b.store(b.add(sf, df), fix_end1)
        b.store(b.add(b.add(sf, df), lat_fix), fix_done)
        b.store(b.add(ld(moved["L0C_OUT"]), out), moved["L0C_OUT"])

    counted(tb, b.mul(m_tiles, n_tiles), tile)
    # the pipes' books
    for p in (_M, _MTE1, _MTE2, _FIX):
        tb.st(abi.PIPE_FREE + p, ld(clock[p]))
        done = ld(clock[p])
        if p == _FIX:
            done = ld(fix_done)
        elif p == _M:
            done = b.add(done, cube_lat)
        tb.st(abi.PIPE_DONE + p, tb.max(tb.ld(abi.PIPE_DONE + p), done))
        tb.add_slot(abi.PIPE_BUSY + p, ld(busy[p]))
        tb.add_slot(abi.PIPE_COUNT + p, one)
    # synchronous call: the scalar unit waits for the last FIX (a stall, not issue work); a
    # server (the AIC of a mix kernel) goes on to the next request: the result's time goes to
    # ctx[XC_TIME] for the requester
    with b.if_else(b.icmp_signed("==", serve, z)) as (direct, served):
        with direct:
            tb.st(abi.T_SCALAR, tb.max(t0, ld(fix_done)))
            tb.add_slot(abi.STALL_FLAG + int(PipeID.PIPE_S), smax(b.sub(ld(fix_done), t0), z))
        with served:
            tb.st(abi.XC_TIME, tb.max(t0, ld(fix_done)))
    for key, (src, dst) in (("GM_L1", ("GM", "L1")), ("L1_L0A", ("L1", "L0A")),
                            ("L1_L0B", ("L1", "L0B")), ("L0C_OUT", ("L0C", "GM"))):
        tb.count(tb.i64(TP.BYTES_BASE + TP.PATHS.index((src, dst))), ld(moved[key]))
