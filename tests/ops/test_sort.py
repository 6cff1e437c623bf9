"""The A2 sort family: asc.sort32, asc.mrg_sort (list and MrgSort4Info forms, exhausted
suspension, repeats), asc.get_mrg_sort_result, asc.get_sort_len / get_sort_offset, against
``ops/sort.py``'s references and numpy's stable sort, over half and float, with ties and NaN;
errors at the line (compile time and run time), the 910-only names refused naming the platform,
the sanitizer sees the V pipe's accesses, and fresh local memory is refilled past what the ops
wrote."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler.ops.sort import (merge_passes, mrg_sort_reference, sort32_reference,
                                          sort_reference)
from ascendc_py.simulator import block_runner, runtime

UB_FAR = 192 * 1024 - 8192


@asc.kernel
def s32_kernel(x: asc.GlobalAddress, idx: asc.GlobalAddress, z: asc.GlobalAddress,
               n: asc.ConstExpr[int], rep: int, at: asc.ConstExpr[int]):
    xg = asc.GlobalTensor()
    ig = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    ig.set_global_buffer(idx, n)
    zg.set_global_buffer(z, 2 * n)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    b = asc.LocalTensor(asc.uint32, asc.TPosition.VECIN, 32768, n)
    c = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, at, 2 * n)
    asc.data_copy(a, xg, n)
    asc.data_copy(b, ig, n)
    asc.data_copy(c, zg, 2 * n)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.sort32(c.reinterpret_cast(x.dtype), a, b, rep)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, c, 2 * n)


def _scores(npd, n, seed, ties=True, nan=False):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n).astype(npd)
    if ties:
        x[rng.integers(0, n, n // 4)] = npd(0.5)
        x[rng.integers(0, n, 3)] = npd(-0.0)
        x[rng.integers(0, n, 3)] = npd(0.0)
    if nan:
        x[rng.integers(0, n, 4)] = np.nan
        x[1] = np.inf
        x[2] = -np.inf
    return x


def _split(z, npd):
    """(scores, indices) of 8-byte structures in float32 array z; half: the low 2 bytes."""
    words = z.view(np.uint32)
    idx = words[1::2]
    if npd == np.float32:
        return z[0::2].copy(), idx
    low = (words[0::2] & 0xFFFF).astype(np.uint16).view(np.float16)
    assert not (words[0::2] >> 16).any()          # the reserved 2 bytes are written 0
    return low, idx


def _same(a, b):
    np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))


@pytest.mark.parametrize("npd", [np.float16, np.float32], ids=["half", "float"])
@pytest.mark.parametrize("rep,nan", [(1, False), (3, False), (4, True), (7, True)])
def test_sort32(npd, rep, nan):
    n = 32 * 8
    x = _scores(npd, n, rep, nan=nan)
    idx = np.random.default_rng(rep).permutation(n).astype(np.uint32)
    z = np.full(2 * n, -7.0, np.float32)
    s32_kernel[1](x, idx, z, n, rep, 65536)
    s, i = _split(z[:64 * rep], npd)
    ws, wi = sort32_reference(x, idx, rep)
    _same(s, ws)
    np.testing.assert_array_equal(i, wi)
    np.testing.assert_array_equal(z[64 * rep:], -7.0)      # past the repeats: untouched
    for r in range(rep):          # numpy's own stable descending sort where no NaN is present
        blk = x[32 * r:32 * r + 32]
        if not np.isnan(blk).any():
            order = np.argsort(-blk.astype(np.float64), kind="stable")
            np.testing.assert_array_equal(wi[32 * r:32 * r + 32], idx[32 * r:][order])


def test_sort32_ties_keep_order_and_nan_first():
    x = np.array([1, 2, 2, np.nan, 1, 3, np.nan, 2] * 4, np.float32)
    idx = np.arange(32, dtype=np.uint32)
    z = np.zeros(64 * 8, np.float32)
    s32_kernel[1](np.pad(x, (0, 224)), np.pad(idx, (0, 224)), z, 256, 1, 65536)
    s, i = _split(z[:64], np.float32)
    assert np.isnan(s[:8]).all() and list(i[:8]) == [3, 6, 11, 14, 19, 22, 27, 30]
    assert list(i[8:12]) == [5, 13, 21, 29]
    assert list(i[12:24]) == [1, 2, 7, 9, 10, 15, 17, 18, 23, 25, 26, 31]


def test_sort32_repeat_zero_writes_nothing():
    z = np.full(512, -7.0, np.float32)
    s32_kernel[1](np.ones(256, np.float32), np.arange(256, dtype=np.uint32), z, 256, 0, 65536)
    np.testing.assert_array_equal(z, -7.0)


# ----------------------------------------------------------------------------- mrg_sort
@asc.kernel
def mrg_kernel(q: asc.GlobalAddress, z: asc.GlobalAddress, res: asc.GlobalAddress,
               n: asc.ConstExpr[int], c1: int, c2: int, c3: int, c4: int, valid: int, rep: int,
               EXH: asc.ConstExpr[bool], FORM: asc.ConstExpr[int], DT: asc.ConstExpr[int]):
    qg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    rg = asc.GlobalTensor()
    qg.set_global_buffer(q, 2 * n)
    zg.set_global_buffer(z, 2 * n)
    rg.set_global_buffer(res, 8)
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 2 * n)
    c = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, 65536, 2 * n)
    r = asc.LocalTensor(asc.int32, asc.TPosition.VECOUT, 131072, 8)
    asc.data_copy(a, qg, 2 * n)
    asc.data_copy(c, zg, 2 * n)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    if DT == 2:
        h = a.reinterpret_cast(asc.float16)
        lst = asc.MrgSortSrcList(asc.float16, h, h[c1 * 4:], h[(c1 + c2) * 4:],
                                 h[(c1 + c2 + c3) * 4:])
        d = c.reinterpret_cast(asc.float16)
    else:
        lst = asc.MrgSortSrcList(asc.float32, a, a[c1 * 2:], a[(c1 + c2) * 2:],
                                 a[(c1 + c2 + c3) * 2:])
        d = c
    if FORM == 0:
        asc.mrg_sort(d, lst, [c1, c2, c3, c4], [0, 0, 0, 0], valid, rep, EXH)
    else:
        asc.mrg_sort(d, lst, asc.MrgSort4Info([c1, c2, c3, c4], EXH, valid, rep))
    m1, m2, m3, m4 = asc.get_mrg_sort_result()
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    r.set_value(0, m1)
    r.set_value(1, m2)
    r.set_value(2, m3)
    r.set_value(3, m4)
    r.set_value(4, asc.get_sort_len(c1))
    r.set_value(5, asc.get_sort_offset(c2))
    r.set_value(6, 0)
    r.set_value(7, 0)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(zg, c, 2 * n)
    asc.data_copy(rg, r, 8)


def _build(npd, counts, seed, nan=False):
    rng = np.random.default_rng(seed)
    queues, structs, base = [], [], 0
    for c in counts:
        s = _scores(npd, max(c, 4), int(rng.integers(1 << 30)), nan=nan)[:c]
        key = np.where(np.isnan(s), -np.inf, -s.astype(np.float64))
        order = np.argsort(key, kind="stable")
        s = s[order]
        i = np.arange(base, base + c, dtype=np.uint32)
        queues.append((s, i))
        w = np.zeros(2 * c, np.uint32)
        if npd == np.float32:
            w[0::2] = s.view(np.uint32)
        else:
            w[0::2] = s.view(np.uint16).astype(np.uint32)
        w[1::2] = i
        structs.append(w)
        base += c
    return queues, np.concatenate(structs).view(np.float32)


N = 512


def _run(npd, counts, valid, rep=1, exh=False, form=0, nan=False, seed=0):
    queues, q = _build(npd, counts, seed, nan)
    qa = np.zeros(2 * N, np.float32)
    qa[:q.size] = q
    z = np.full(2 * N, -7.0, np.float32)
    res = np.zeros(8, np.int32)
    mrg_kernel[1](qa, z, res, N, *counts, valid, rep, exh, form, 2 if npd == np.float16 else 4)
    return queues, z, res


@pytest.mark.parametrize("npd", [np.float16, np.float32], ids=["half", "float"])
@pytest.mark.parametrize("counts,valid", [((32, 32, 32, 32), 15), ((5, 17, 0, 0), 3),
                                          ((13, 1, 40, 0), 7), ((7, 0, 33, 2), 15),
                                          ((100, 3, 64, 31), 15)])
@pytest.mark.parametrize("form", [0, 1], ids=["list", "info"])
def test_mrg_sort(npd, counts, valid, form):
    queues, z, res = _run(npd, counts, valid, form=form, nan=npd == np.float32, seed=sum(counts))
    nq = {3: 2, 7: 3, 15: 4}[valid]
    ws, wi, used = mrg_sort_reference(queues[:nq])
    total = sum(counts[:nq])
    s, i = _split(z[:2 * total], npd)
    _same(s, ws)
    np.testing.assert_array_equal(i, wi)
    np.testing.assert_array_equal(z[2 * total:], -7.0)
    assert list(res[:nq]) == list(counts[:nq]) == used
    assert res[4] == 2 * counts[0] and res[5] == 2 * counts[1]   # GetSortLen<float>


def test_mrg_sort_ties_take_the_earlier_queue():
    counts = (4, 4, 4, 4)
    queues, q = _build(np.float32, counts, 0)
    w = q.view(np.uint32).copy()
    w[0::2] = np.float32(1.0).view(np.uint32)          # every score equal
    qa = np.zeros(2 * N, np.float32)
    qa[:w.size] = w.view(np.float32)
    z = np.zeros(2 * N, np.float32)
    mrg_kernel[1](qa, z, np.zeros(8, np.int32), N, *counts, 15, 1, False, 0, 4)
    assert list(z.view(np.uint32)[1:32:2]) == list(range(16))


@pytest.mark.parametrize("form", [0, 1], ids=["list", "info"])
def test_mrg_sort_exhausted_suspension(form):
    counts = (6, 20, 20, 20)
    queues, z, res = _run(np.float32, counts, 15, exh=True, form=form, seed=3)
    ws, wi, used = mrg_sort_reference(queues, exhausted=True)
    assert min(c - u for c, u in zip(counts, used)) == 0 and sum(used) < sum(counts)
    s, i = _split(z[:2 * sum(used)], np.float32)
    _same(s, ws)
    np.testing.assert_array_equal(i, wi)
    np.testing.assert_array_equal(z[2 * sum(used):], -7.0)
    assert list(res[:4]) == used


def test_mrg_sort_repeats():
    """Two repeats of four contiguous queues of 32: each repeat moves on by 128 structures."""
    counts = (32, 32, 32, 32)
    q1, s1 = _build(np.float32, counts, 1)
    q2, s2 = _build(np.float32, counts, 2)
    qa = np.zeros(2 * N, np.float32)
    qa[:512] = np.concatenate([s1, s2])
    z = np.zeros(2 * N, np.float32)
    mrg_kernel[1](qa, z, np.zeros(8, np.int32), N, *counts, 15, 2, False, 1, 4)
    for r, qs in enumerate((q1, q2)):
        ws, wi, _ = mrg_sort_reference(qs)
        s, i = _split(z[256 * r:256 * (r + 1)], np.float32)
        _same(s, ws)
        np.testing.assert_array_equal(i, wi)


# ----------------------------------------------------------------------------- errors
def _line(fn, marker: str) -> int:
    src, first = inspect.getsourcelines(fn.fn)
    return first + next(i for i, s in enumerate(src) if marker in s)


@asc.kernel
def bad_sort(CASE: asc.ConstExpr[int], k: int):
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 4096)
    c = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, 32768, 4096)
    ix = asc.LocalTensor(asc.uint32, asc.TPosition.VECIN, 65536, 4096)
    ii = asc.LocalTensor(asc.int32, asc.TPosition.VECIN, 98304, 4096)
    lst = asc.MrgSortSrcList(asc.float32, a, a[64:], a[128:], a[192:])
    two = asc.MrgSortSrcList(asc.float32, a, a[64:])
    if CASE == 0:
        asc.sort32(ii, ii, ix, 1)  # case-int
    elif CASE == 1:
        asc.sort32(c, a, ii, 1)  # case-index
    elif CASE == 2:
        asc.sort32(c, a, ix, 256)  # case-repeat
    elif CASE == 3:
        asc.mrg_sort(c, lst, [32, 32, 32, 32], [0, 0, 0, 0], 5, 1)  # case-valid
    elif CASE == 4:
        asc.mrg_sort(c, two, [32, 32, 0, 0], [0, 0, 0, 0], 7, 1)  # case-missing
    elif CASE == 5:
        asc.mrg_sort(c, lst, [4096, 32, 32, 32], [0, 0, 0, 0], 15, 1)  # case-len
    elif CASE == 6:
        asc.proposal_concat(c, a, 1, 0)  # case-910
    elif CASE == 7:
        asc.mrg_sort4(c, lst, asc.MrgSort4Info([32, 32, 32, 32]))  # case-mrg4
    elif CASE == 8:
        asc.mrg_sort(c, lst, [32, 32, 32, k], [0, 0, 0, 0], 15, 2)  # case-rt-repeat
    elif CASE == 9:
        asc.mrg_sort(a[k * 64:], lst, [32, 32, 32, 32], [0, 0, 0, 0], 15, 1)  # case-rt-overlap
    elif CASE == 10:
        asc.sort32(c, a, ix, k)  # case-rt-rep32
    elif CASE == 11:
        asc.rp_sort16(c, a, 1)  # case-rp16
    elif CASE == 12:
        asc.sort(c, a, ii, a[2048:], 2, True)  # case-sort-index
    elif CASE == 13:
        asc.sort(c, a, ix, a[4096 - k:], 4, True)  # case-sort-tmp
    elif CASE == 14:
        asc.sort(a[k:], a, ix, c, 4, True)  # case-sort-overlap
    elif CASE == 15:
        asc.sort(c, a, ix, c, 4, k == 1)  # case-sort-flag


@pytest.mark.parametrize("case,marker,exc,text", [
    (0, "case-int", asc.KernelTypeError, "does not support int32"),
    (1, "case-index", asc.KernelTypeError, "must be uint32"),
    (2, "case-repeat", asc.KernelValueError, "repeat_time is 256"),
    (3, "case-valid", asc.KernelValueError, "valid_bit is 5"),
    (4, "case-missing", asc.KernelTypeError, "has no src3"),
    (5, "case-len", asc.KernelValueError, "is 4096"),
    (6, "case-910", asc.KernelTypeError, "not available on Ascend 910B .Atlas A2/A3."),
    (7, "case-mrg4", asc.KernelTypeError, "asc.mrg_sort4 is not available"),
    (11, "case-rp16", asc.KernelTypeError, "asc.rp_sort16 is not available"),
    (12, "case-sort-index", asc.KernelTypeError, "index must be uint32"),
    (15, "case-sort-flag", asc.KernelTypeError, "is_full_sort must be True or False"),
])
def test_compile_errors_name_the_line(case, marker, exc, text):
    with pytest.raises(exc, match=text) as info:
        bad_sort[1](case, 2)
    assert f":{_line(bad_sort, marker)}:" in str(info.value).splitlines()[0]


@pytest.mark.parametrize("case,marker,k,ok,text", [
    (8, "case-rt-repeat", 16, 32, "above 1 only with four valid queues of one length"),
    (9, "case-rt-overlap", 0, 32, "overlaps dst"),
    (10, "case-rt-rep32", 300, 3, "repeat_time must be in 0..255"),
    (13, "case-sort-tmp", 64, 256, "tmp must hold the 32 \\* repeat_time sorted structures"),
    (14, "case-sort-overlap", 64, 2048, "dst overlaps concat or index"),
])
def test_runtime_checks_name_the_line(case, marker, k, ok, text):
    with pytest.raises(asc.KernelRuntimeError, match=text) as info:
        bad_sort[1](case, k)
    assert f":{_line(bad_sort, marker)}:" in str(info.value)
    bad_sort[1](case, ok)      # the same call with valid values runs


# ----------------------------------------------------------------------------- sanitizer
@asc.kernel
def racy_sort(x: asc.GlobalAddress, idx: asc.GlobalAddress, z: asc.GlobalAddress,
              SYNC: asc.ConstExpr[bool]):
    xg = asc.GlobalTensor()
    ig = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)
    ig.set_global_buffer(idx, 64)
    zg.set_global_buffer(z, 128)
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 64)
    ix = asc.LocalTensor(asc.uint32, asc.TPosition.VECIN, 1024, 64)
    c = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, 4096, 128)
    m = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, 8192, 128)
    asc.data_copy(ix, ig, 64)
    asc.data_copy(a, xg, 64)  # load
    if SYNC:
        asc.set_flag(asc.HardEvent.MTE2_V, 0)
        asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.sort32(c, a, ix, 2)  # the-sort
    asc.mrg_sort(m, asc.MrgSortSrcList(asc.float32, c, c[64:]),
                 asc.MrgSort4Info([32, 32, 0, 0], False, 3, 1))
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, m, 128)


def test_sanitizer_sees_sort():
    x = np.random.default_rng(5).standard_normal(64).astype(np.float32)
    z = np.zeros(128, np.float32)
    racy_sort[1](x, np.arange(64, dtype=np.uint32), z, True, sanitize=True)
    np.testing.assert_array_equal(z[0::2], np.sort(x)[::-1])
    np.testing.assert_array_equal(z.view(np.uint32)[1::2], np.argsort(-x, kind="stable"))
    with pytest.raises(asc.DataRaceError) as info:
        racy_sort[1](x, np.arange(64, dtype=np.uint32), z, False, sanitize=True)
    assert f":{_line(racy_sort, '# the-sort')}:" in str(info.value).splitlines()[0]


# ----------------------------------------------------------------------------- fresh memory
@asc.kernel
def peek(z: asc.GlobalAddress, at: asc.ConstExpr[int], n: asc.ConstExpr[int]):
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, n)
    t = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, at, n)
    asc.data_copy(zg, t, n)


@asc.kernel
def sort_far(x: asc.GlobalAddress, idx: asc.GlobalAddress, at: asc.ConstExpr[int],
             MERGE: asc.ConstExpr[bool]):
    """sort32 (or sort32 then mrg_sort) into UB at byte ``at``; nothing else touches it."""
    xg = asc.GlobalTensor()
    ig = asc.GlobalTensor()
    xg.set_global_buffer(x, 256)
    ig.set_global_buffer(idx, 256)
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 256)
    b = asc.LocalTensor(asc.uint32, asc.TPosition.VECIN, 1024, 256)
    # placed without a size: placing them reaches no byte, only the ops' writes do
    c = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, 4096 if MERGE else at)
    d = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, at)
    asc.data_copy(a, xg, 256)
    asc.data_copy(b, ig, 256)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.sort32(c, a, b, 8)
    if MERGE:
        asc.mrg_sort(d, asc.MrgSortSrcList(asc.float32, c, c[64:], c[128:], c[192:]),
                     asc.MrgSort4Info([32, 32, 32, 32], False, 15, 2))


@pytest.mark.parametrize("merge", [False, True], ids=["sort32", "mrg_sort"])
def test_fresh_memory_is_refilled_past_what_the_sort_wrote(merge, monkeypatch):
    """The op writes 2 KB near the end of UB and only it reaches there: the core's dirty count
    covers it (check_local), no byte past the count changed, and the next launch on this
    thread reads those bytes fresh."""
    monkeypatch.setattr(block_runner, "SERIAL_SECONDS", 1e9)
    sort_far[1](np.ones(256, np.float32), np.arange(256, dtype=np.uint32), UB_FAR, merge)
    core = runtime._thread_cores.core
    assert int(core.dirty[0]) == UB_FAR + 2048
    for k, (_, (_, view)) in enumerate(core.memories.items()):
        assert (view[int(core.dirty[k]):] == runtime.FRESH_MEMORY_BYTE).all()
    out = np.zeros(512, np.float32)
    peek[1](out, UB_FAR, 512)
    assert (out.view(np.uint8) == runtime.FRESH_MEMORY_BYTE).all()


def test_timing_charges_the_sort():
    x = np.ones(256, np.float32)
    z = np.zeros(512, np.float32)
    r1 = s32_kernel[1](x, np.arange(256, dtype=np.uint32), z, 256, 1, 65536)
    r8 = s32_kernel[1](x, np.arange(256, dtype=np.uint32), z, 256, 8, 65536)
    assert r8.pipe_busy["V"] > r1.pipe_busy["V"] > 0


# ----------------------------------------------------------------------------- sort
@asc.kernel
def sort_kernel(x: asc.GlobalAddress, idx: asc.GlobalAddress, z: asc.GlobalAddress,
                n: asc.ConstExpr[int], rep: int, FULL: asc.ConstExpr[bool]):
    xg = asc.GlobalTensor()
    ig = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    ig.set_global_buffer(idx, n)
    zg.set_global_buffer(z, 2 * n)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    b = asc.LocalTensor(asc.uint32, asc.TPosition.VECIN, 32768, n)
    c = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, 65536, 2 * n)
    t = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 131072, 2 * n)
    asc.data_copy(a, xg, n)
    asc.data_copy(b, ig, n)
    asc.data_copy(c, zg, 2 * n)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.sort(c.reinterpret_cast(x.dtype), a, b, t.reinterpret_cast(x.dtype), rep, FULL)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, c, 2 * n)


@pytest.mark.parametrize("npd", [np.float16, np.float32], ids=["half", "float"])
@pytest.mark.parametrize("rep", [1, 2, 5, 16])
@pytest.mark.parametrize("full", [False, True], ids=["per32", "full"])
def test_sort(npd, rep, full):
    n = 512
    x = _scores(npd, n, rep + 10 * full, nan=npd == np.float32)
    idx = np.random.default_rng(rep).permutation(n).astype(np.uint32)
    z = np.full(2 * n, -7.0, np.float32)
    sort_kernel[1](x, idx, z, n, rep, full)
    s, i = _split(z[:64 * rep], npd)
    ws, wi = sort_reference(x, idx, rep, full)
    _same(s, ws)
    np.testing.assert_array_equal(i, wi)
    np.testing.assert_array_equal(z[64 * rep:], -7.0)
    if full and npd == np.float16:     # no NaN here: numpy's stable descending sort
        order = np.argsort(-x[:32 * rep].astype(np.float64), kind="stable")
        np.testing.assert_array_equal(i, idx[order])


def test_full_sort_is_sort32_then_merges():
    """The full sort gives what sort32 per 32 and a 4-way mrg_sort of the sorted 32s give."""
    x = _scores(np.float32, 128, 9)
    idx = np.arange(128, dtype=np.uint32)
    s, i = sort32_reference(x, idx, 4)
    queues = [(s[32 * k:32 * k + 32], i[32 * k:32 * k + 32]) for k in range(4)]
    ms, mi, _ = mrg_sort_reference(queues)
    fs, fi = sort_reference(x, idx, 4, True)
    _same(ms, fs)
    np.testing.assert_array_equal(mi, fi)


def test_full_sort_costs_more_than_per32():
    x = np.ones(512, np.float32)
    idx = np.arange(512, dtype=np.uint32)
    z = np.zeros(1024, np.float32)
    r0 = sort_kernel[1](x, idx, z, 512, 16, False)
    r1 = sort_kernel[1](x, idx, z, 512, 16, True)
    assert r1.pipe_busy["V"] > r0.pipe_busy["V"]
    assert merge_passes(16) == 3 and merge_passes(1) == 1 and merge_passes(5) == 3


def test_mrg_sort_is_priced_at_the_measured_rate():
    """VMRGSORT ≈ 15.6 B/c measured: 128 structures (1 KB) occupy PIPE_V 64 cycles."""
    counts = (32, 32, 32, 32)
    _, q = _build(np.float32, counts, 0)
    qa = np.zeros(2 * N, np.float32)
    qa[:q.size] = q
    r = mrg_kernel[1](qa, np.zeros(2 * N, np.float32), np.zeros(8, np.int32), N, *counts, 15,
                      1, False, 0, 4)
    assert r.pipe_busy["V"] == 64
