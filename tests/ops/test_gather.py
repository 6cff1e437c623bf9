"""brcb, gatherb, gather, scatter against the registry's NumPy references, bit for bit; their
errors (offsets outside the indexed tensor, misaligned offsets, disallowed dtypes), timing,
sanitize mode and the fresh-memory bookkeeping.

Kernels and the harness live in helpers_gather.py (one compilation per dtype and mask form).
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ascendc_py as asc
from ascendc_py.compiler.ops import REGISTRY, CostClass
from ascendc_py.compiler.ops.gather import GATHER_OPS
from ascendc_py.simulator import block_runner, runtime
from ascendc_py.simulator.config import ASCEND910B2
from helpers_gather import (DST_BYTES, SRC_BYTES, assert_same_bits, make_dst, make_src, run)

MOVE = [np.int16, np.uint16, np.int32, np.uint32, np.float16, np.float32]
WIDE = [np.uint16, np.float32]          # one per element width, for the longer sweeps


def _epr(dtype):
    return 256 // np.dtype(dtype).itemsize


def _case(dtype, seed=0):
    rng = np.random.default_rng(seed)
    return rng, make_src(rng, dtype), make_dst(rng, dtype)


# ----------------------------------------------------------------------------- registry
def test_registry_declares_pyasc_names_and_parameters():
    assert GATHER_OPS == ("brcb", "gatherb", "gather", "scatter")
    assert REGISTRY["brcb"].forms == (("dst", "src0", "repeat_times", "repeat_params"),)
    assert REGISTRY["gatherb"].forms == (("dst", "src0", "offset", "repeat_times",
                                          "repeat_params"),)
    assert REGISTRY["gather"].forms == (
        ("dst", "src", "src_offset", "src_base", "count"),
        ("dst", "src", "src_offset", "src_base", "mask", "repeat_times", "dst_rep_stride"))
    assert REGISTRY["scatter"].forms == (
        ("dst", "src", "dst_offset", "dst_base", "count"),
        ("dst", "src", "dst_offset", "dst_base", "mask", "repeat_times", "src_rep_stride"))
    assert {d.name for d in REGISTRY["gatherb"].dtypes} == {"uint16", "uint32"}
    assert {d.name for d in REGISTRY["gather"].dtypes} == {
        "int16", "uint16", "int32", "uint32", "float16", "bfloat16", "float32"}
    assert REGISTRY["gather"].cost == REGISTRY["scatter"].cost == CostClass.GATHER
    assert REGISTRY["gatherb"].cost == CostClass.GATHERB
    for name in GATHER_OPS + ("BrcbRepeatParams", "GatherRepeatParams"):
        assert callable(getattr(asc, name)), name


# ----------------------------------------------------------------------------- brcb
@pytest.mark.parametrize("dtype", MOVE)
def test_brcb(dtype):
    _, x, z0 = _case(dtype, 1)
    esize = np.dtype(dtype).itemsize
    most = DST_BYTES // 256 - 1
    for repeat, blk, rep in ((1, 1, 8), (3, 1, 8), (5, 2, 17), (4, 0, 3), (0, 1, 8),
                             (7, 1, 0), (most, 1, 8), (2, 3, 1)):
        got, want, _ = run("brcb", x, z0, repeat=repeat, blk=blk, rep=rep)
        assert_same_bits(got, want, f"brcb {dtype.__name__} r={repeat} blk={blk} rep={rep}")
    # block i of repeat r holds copies of src[8r + i]
    got, _, _ = run("brcb", x, z0, repeat=2)
    per = 32 // esize
    assert (got[:16 * per].reshape(16, per) == x[:16, None]).all()


def test_brcb_dst_blk_stride_zero_counts_as_one():
    _, x, z0 = _case(np.float32, 2)
    a, _, _ = run("brcb", x, z0, repeat=3, blk=0, rep=8)
    b, _, _ = run("brcb", x, z0, repeat=3, blk=1, rep=8)
    assert_same_bits(a, b, "blk 0 vs 1")


# ----------------------------------------------------------------------------- gatherb
@pytest.mark.parametrize("dtype", [np.uint16, np.uint32, np.float16, np.int32])
def test_gatherb(dtype):
    rng, x, z0 = _case(dtype, 3)
    for repeat, blk, rep in ((1, 1, 8), (5, 1, 8), (9, 2, 17), (3, 0, 1), (0, 1, 8),
                             (40, 1, 8)):
        offs = rng.integers(0, SRC_BYTES // 32, 8 * max(repeat, 1)) * 32
        got, want, _ = run("gatherb", x, z0, offsets=offs, repeat=repeat, blk=blk, rep=rep)
        assert_same_bits(got, want, f"gatherb {dtype.__name__} r={repeat}")
    offs = np.arange(8)[::-1] * 32 + SRC_BYTES - 8 * 32     # the last 8 blocks, reversed
    got, _, _ = run("gatherb", x, z0, offsets=offs, repeat=1)
    raw = x.view(np.uint8)
    assert (got.view(np.uint8)[:256].reshape(8, 32) == raw[offs[:, None] + np.arange(32)]).all()


# ----------------------------------------------------------------------------- gather/scatter
def _elem_offsets(rng, dtype, n, nbytes, base=0):
    es = np.dtype(dtype).itemsize
    return rng.integers(0, (nbytes - base) // es, n) * es


@pytest.mark.parametrize("dtype", MOVE)
@pytest.mark.parametrize("op", ["gather", "scatter"])
def test_count_form(op, dtype):
    rng, x, z0 = _case(dtype, 4)
    es = np.dtype(dtype).itemsize
    span = SRC_BYTES if op == "gather" else DST_BYTES
    for count, base in ((1, 0), (37, 0), (129, 64), (300, 2 * es), (1000, 0), (0, 0)):
        offs = _elem_offsets(rng, dtype, count, span, base)
        if count > 2:
            offs[-1] = span - base - es          # the tensor's last element
            offs[1] = offs[0]                    # a repeated offset (scatter: the later wins)
        got, want, _ = run(op, x, z0, offsets=offs, count=count, base=base)
        assert_same_bits(got, want, f"{op} {dtype.__name__} count={count} base={base}")


def _masks(dtype):
    epr = _epr(dtype)
    bits = ([0xF0F0F0F0F0F0F0F1, 0x8000000000001234] if epr == 128
            else [0xF0F0F0F0F0F0F0F1])
    return [epr, 1, 37, bits, [2**64 - 1, 2**64 - 1]]


@pytest.mark.parametrize("dtype", WIDE + [np.int32, np.float16])
@pytest.mark.parametrize("op", ["gather", "scatter"])
def test_masked_form(op, dtype):
    rng, x, z0 = _case(dtype, 5)
    span = SRC_BYTES if op == "gather" else DST_BYTES
    epr = _epr(dtype)
    for mask in _masks(dtype):
        for repeat, rep in ((1, 8), (3, 8), (9, 17), (4, 0), (2, 3)):
            offs = _elem_offsets(rng, dtype, repeat * epr, span)
            got, want, _ = run(op + "_masked", x, z0, offsets=offs, mask=mask, repeat=repeat,
                               rep=rep)
            assert_same_bits(got, want, f"{op} {dtype.__name__} mask={mask} r={repeat} "
                                        f"rep={rep}")


@pytest.mark.parametrize("dtype", WIDE)
@pytest.mark.parametrize("op", ["gather", "scatter"])
def test_counter_mode(op, dtype):
    """After set_mask_count the masked form's mask is the element count."""
    rng, x, z0 = _case(dtype, 6)
    span = SRC_BYTES if op == "gather" else DST_BYTES
    for total in (1, 100, 3 * _epr(dtype) + 5):
        offs = _elem_offsets(rng, dtype, total, span)
        got, want, _ = run(op + "_masked", x, z0, offsets=offs, mask=total, repeat=1, rep=8,
                           counter=True)
        assert_same_bits(got, want, f"{op} counter total={total}")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), op=st.sampled_from(["gather", "scatter"]),
       dtype=st.sampled_from(WIDE))
def test_count_form_random(data, op, dtype):
    es = np.dtype(dtype).itemsize
    span = SRC_BYTES if op == "gather" else DST_BYTES
    count = data.draw(st.integers(0, 700), "count")
    base = data.draw(st.integers(0, 64), "base") * es
    offs = data.draw(st.lists(st.integers(0, (span - base) // es - 1), min_size=count,
                              max_size=count), "offsets")
    _, x, z0 = _case(dtype, 7)
    got, want, _ = run(op, x, z0, offsets=np.array(offs, np.int64) * es, count=count,
                       base=base)
    assert_same_bits(got, want, f"{op} count={count} base={base}")


# ----------------------------------------------------------------------------- run-time errors
def _line_of(op):
    import inspect
    import helpers_gather
    src, first = inspect.getsourcelines(helpers_gather.run_op)
    call = "asc.gatherb(" if op == "gatherb" else f"asc.{op.split('_')[0]}("
    hits = [first + i for i, text in enumerate(src) if call in text]
    return hits[1] if op.endswith("masked") else hits[0]


@pytest.mark.parametrize("op", ["gather", "gather_masked", "scatter", "scatter_masked"])
def test_offset_past_the_tensor_stops_at_the_line(op):
    _, x, z0 = _case(np.float32, 8)
    span = SRC_BYTES if op.startswith("gather") else DST_BYTES
    offs = np.zeros(64, np.int64)
    offs[5] = span                     # one element past the end
    kw = dict(count=64) if not op.endswith("masked") else dict(mask=64, repeat=1)
    with pytest.raises(asc.TensorExtentError) as info:
        run(op, x, z0, offsets=offs, **kw)
    assert f"helpers_gather.py:{_line_of(op)}" in str(info.value)
    assert "src" in str(info.value) if op.startswith("gather") else "dst" in str(info.value)


def test_base_pushes_offsets_past_the_tensor():
    _, x, z0 = _case(np.float16, 9)
    offs = np.array([SRC_BYTES - 2], np.int64)
    run("gather", x, z0, offsets=offs, count=1)                 # the last element: fine
    with pytest.raises(asc.TensorExtentError):
        run("gather", x, z0, offsets=offs, count=1, base=2)


def test_gatherb_block_past_the_tensor():
    _, x, z0 = _case(np.uint16, 10)
    offs = np.full(8, SRC_BYTES - 32, np.int64)
    run("gatherb", x, z0, offsets=offs, repeat=1)
    offs[7] = SRC_BYTES
    with pytest.raises(asc.TensorExtentError) as info:
        run("gatherb", x, z0, offsets=offs, repeat=1)
    assert f"helpers_gather.py:{_line_of('gatherb')}" in str(info.value)


@pytest.mark.parametrize("op,bad", [("gather", 3), ("scatter", 2), ("gatherb", 16)])
def test_misaligned_offset(op, bad):
    _, x, z0 = _case(np.float32, 11)
    offs = np.zeros(8, np.int64)
    offs[2] = bad
    kw = dict(repeat=1) if op == "gatherb" else dict(count=8)
    with pytest.raises(asc.ValueRangeError, match=f"{op}: offset 2 is {bad} bytes"):
        run(op, x, z0, offsets=offs, **kw)


def test_repeat_and_mask_ranges_at_run_time():
    _, x, z0 = _case(np.float16, 12)
    with pytest.raises(asc.RepeatRangeError):
        run("brcb", x, z0, repeat=256)
    with pytest.raises(asc.KernelRuntimeError, match="mask"):
        run("gather_masked", x, z0, offsets=np.zeros(8), mask=129, repeat=1)


@asc.kernel
def brcb_same(z: asc.GlobalAddress):
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 256)
    t = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, 256)
    asc.duplicate(t, 1.0, 256)
    asc.brcb(t, t, 1, asc.BrcbRepeatParams())
    asc.data_copy(zg, t, 256)


def test_brcb_src_and_dst_at_one_address():
    with pytest.raises(asc.ValueRangeError, match="same UB address"):
        brcb_same[1](np.zeros(256, np.float32))


# ----------------------------------------------------------------------------- compile errors
def _compile_error(body: str, cls=asc.KernelTypeError):
    src = ("def k(x: asc.GlobalAddress):\n"
           "    a = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, 1024)\n"
           "    u = asc.LocalTensor(asc.uint32, asc.TPosition.VECIN, 4096, 1024)\n"
           "    i = asc.LocalTensor(asc.int8, asc.TPosition.VECIN, 8192, 1024)\n"
           "    f = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 12288, 1024)\n"
           f"    {body}\n")
    ns = {"asc": asc}
    import linecache
    name = f"<gather-test-{abs(hash(body))}>"
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)
    exec(compile(src, name, "exec"), ns)
    kernel = asc.kernel(ns["k"])
    with pytest.raises(cls) as info:
        kernel[1](np.zeros(8, np.float16))
    assert ":6:" in str(info.value), str(info.value)
    return str(info.value)


@pytest.mark.parametrize("body,message", [
    ("asc.gatherb(a, a, u, 1, asc.GatherRepeatParams())", "does not support float16"),
    ("asc.gather(i, i, u, 0, 32)", "does not support int8"),
    ("asc.scatter(a, f, u, 0, 32)", "src is float32 but dst is float16"),
    ("asc.gather(a, a, a, 0, 32)", "must be a uint32 LocalTensor"),
    ("asc.brcb(a, a, 1, asc.GatherRepeatParams())", "must be asc.BrcbRepeatParams"),
    ("asc.gatherb(u, u, u, 1, asc.BrcbRepeatParams())", "must be asc.GatherRepeatParams"),
    ("asc.gather(a, a, u, 0, 0, 8)", "missing"),
])
def test_compile_errors_name_the_line(body, message):
    assert message in _compile_error(body)


@pytest.mark.parametrize("body,message", [
    ("asc.brcb(a, f.reinterpret_cast(asc.float16), 256, asc.BrcbRepeatParams())",
     "repeat_times is 256"),
    ("asc.gather(a, a, u, -2, 32)", "src_base is -2"),
    ("asc.brcb(a, a, 1, asc.BrcbRepeatParams(70000, 8))", "dst_blk_stride is 70000"),
    ("asc.scatter(a, a, u, 0, 128, 1, 256)", "src_rep_stride is 256"),
])
def test_constant_ranges_name_the_line(body, message):
    assert message in _compile_error(body, asc.KernelValueError)


# ----------------------------------------------------------------------------- timing
def _busy_alone(op, dtype, **kw):
    """V-pipe busy cycles of the op alone (the kernel's other V work: none)."""
    _, x, z0 = _case(dtype, 13)
    return run(op, x, z0, **kw)[2].pipe_busy["V"]


def test_timing_per_class():
    vec = ASCEND910B2.vector
    least = vec.min_instruction_cycles
    assert _busy_alone("brcb", np.float16, repeat=40) == 40 * vec.simple.cycles_per_repeat_f16
    assert _busy_alone("brcb", np.float32, repeat=2) == least
    assert _busy_alone("gatherb", np.uint16, offsets=np.zeros(160), repeat=20) == \
        20 * vec.gatherb.cycles_per_repeat_f16
    # gather/scatter: ~5.3 elements per cycle whatever the width (msKPP VGATHER)
    assert _busy_alone("gather", np.float16, offsets=np.zeros(1280), count=1280) == 10 * 24
    assert _busy_alone("gather", np.float32, offsets=np.zeros(640), count=640) == 10 * 12
    assert _busy_alone("scatter_masked", np.uint16, offsets=np.zeros(256), mask=128, repeat=2,
                       rep=8) == 2 * 24
    assert vec.gather.cycles_per_repeat_f16 == 24 and vec.gather.cycles_per_repeat_f32 == 12


# ----------------------------------------------------------------------------- sanitize
@pytest.mark.parametrize("op", ["brcb", "gatherb", "gather", "scatter_masked"])
def test_sanitize_sees_the_reads_and_writes(op):
    """Without flags between the copies and the op the V pipe races MTE2 (on src, the offsets)
    or MTE3 (on dst); with them the run is clean and gives the same bits."""
    _, x, z0 = _case(np.uint32, 14)
    kw = {"brcb": dict(repeat=4), "gatherb": dict(repeat=2, offsets=np.arange(16) * 32),
          "gather": dict(count=100, offsets=np.arange(100) * 4),
          "scatter_masked": dict(mask=64, repeat=2, offsets=np.arange(128) * 4)}[op]
    plain, want, _ = run(op, x, z0, **kw)
    clean, _, _ = run(op, x, z0, sanitize=True, **kw)
    assert_same_bits(clean, want, op)
    with pytest.raises(asc.DataRaceError):
        run(op, x, z0, sync=False, sanitize=True, **kw)


@asc.kernel
def scatter_unwritten(z: asc.GlobalAddress, o: asc.GlobalAddress):
    """gather from UB bytes nothing wrote: sanitize mode calls it an uninitialised read."""
    zg = asc.GlobalTensor()
    og = asc.GlobalTensor()
    zg.set_global_buffer(z, 64)
    og.set_global_buffer(o, 64)
    src = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 4096)
    dst = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, 16384, 64)
    off = asc.LocalTensor(asc.uint32, asc.TPosition.VECIN, 32768, 64)
    asc.duplicate(src, 1.0, 64)                       # only the first 256 bytes of src
    asc.data_copy(off, og, 64)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.gather(dst, src, off, 0, 64)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, dst, 64)


def test_sanitize_checks_each_gathered_element():
    z = np.zeros(64, np.float32)
    scatter_unwritten[1](z, np.arange(64, dtype=np.uint32) * 4, sanitize=True)
    np.testing.assert_array_equal(z, 1.0)
    far = np.arange(64, dtype=np.uint32) * 4
    far[9] = 8000                                     # a byte duplicate never wrote
    with pytest.raises(asc.UninitializedReadError):
        scatter_unwritten[1](z, far, sanitize=True)


# ----------------------------------------------------------------------------- fresh memory
@asc.kernel
def scatter_far(x: asc.GlobalAddress, o: asc.GlobalAddress, z: asc.GlobalAddress,
                AT: asc.ConstExpr[int], N: asc.ConstExpr[int]):
    """scatter 64 float32 into a tensor of N elements at UB byte AT, by offsets from GM."""
    xg = asc.GlobalTensor()
    og = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)
    og.set_global_buffer(o, 64)
    zg.set_global_buffer(z, 8)
    src = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 64)
    off = asc.LocalTensor(asc.uint32, asc.TPosition.VECIN, 256, 64)
    dst = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, AT, N)
    asc.data_copy(src, xg, 64)
    asc.data_copy(off, og, 64)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.scatter(dst, src, off, 0, 64)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, dst, 8)


def test_fresh_memory_counts_what_scatter_and_gather_reach(monkeypatch):
    """check_local sees the highest byte an indexed write reaches: after a scatter far into UB
    the core's dirty count covers it and every byte past the count is fresh; the next launch
    reads fresh bytes there."""
    monkeypatch.setattr(block_runner, "SERIAL_SECONDS", 1e9)   # every block on this thread
    at, n = 64 * 1024, 24 * 1024
    offs = np.arange(64, dtype=np.uint32) * 4
    offs[63] = (n - 1) * 4                                      # the tensor's last element
    scatter_far[1](np.arange(64, dtype=np.float32), offs, np.zeros(8, np.float32), at, n)
    core = runtime._thread_cores.core
    assert max(int(d) for d in core.dirty) >= at + n * 4
    for mem_k, (mem, (_, view)) in enumerate(core.memories.items()):
        rest = view[int(core.dirty[mem_k]):]
        assert (rest == runtime.FRESH_MEMORY_BYTE).all(), mem
    # the next launch reads the bytes the scatter wrote without writing them: fresh again
    z = np.zeros(64, np.float32)
    peek_far[1](z, at + (n - 64) * 4)
    assert (z.view(np.uint8) == runtime.FRESH_MEMORY_BYTE).all()


@asc.kernel
def peek_far(z: asc.GlobalAddress, AT: asc.ConstExpr[int]):
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 64)
    t = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, AT, 64)
    asc.data_copy(zg, t, 64)


def assert_fresh_beyond_dirty():
    """This thread's core: every byte past its dirty count holds FRESH_MEMORY_BYTE."""
    core = runtime._thread_cores.core
    for k, (mem, (_, view)) in enumerate(core.memories.items()):
        rest = view[int(core.dirty[k]):]
        assert (rest == runtime.FRESH_MEMORY_BYTE).all(), mem


@asc.kernel
def far_writes(x: asc.GlobalAddress, o: asc.GlobalAddress, z: asc.GlobalAddress,
               SEL: asc.ConstExpr[int], AT: asc.ConstExpr[int], N: asc.ConstExpr[int]):
    """One op writing a tensor of N float32 at UB byte AT that nothing else touches (but 8
    elements copied out)."""
    xg = asc.GlobalTensor()
    og = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, 2048)
    og.set_global_buffer(o, 8192)
    zg.set_global_buffer(z, 8)
    src = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 2048)
    off = asc.LocalTensor(asc.uint32, asc.TPosition.VECIN, 8192, 8192)
    dst = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, AT, N)
    asc.data_copy(src, xg, 2048)
    asc.data_copy(off, og, 8192)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    if SEL == 0:
        asc.brcb(dst, src, 100, asc.BrcbRepeatParams(1, 8))
    elif SEL == 1:
        asc.gatherb(dst.reinterpret_cast(asc.uint32), src.reinterpret_cast(asc.uint32), off,
                    100, asc.GatherRepeatParams(1, 8))
    elif SEL == 2:
        asc.gather(dst, src, off, 0, 8000)
    elif SEL == 3:
        asc.scatter(dst, src, off, 0, 2048)
    else:
        asc.repeat_reduce_sum(dst, src, 32, 64, 1, 1, 200, 8)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, dst, 8)


#: SEL -> the bytes from dst its op writes up to
FAR_REACH = {0: 100 * 256, 1: 100 * 256, 2: 8000 * 4, 3: 8191 * 4 + 4, 4: 31 * 200 * 4 + 4}


def _far_offsets(sel):
    if sel == 3:
        return np.arange(8192, dtype=np.uint32)[::-1].copy() * 4    # reaches the last element
    return (np.arange(8192, dtype=np.uint32) * 32) % 8192


@pytest.mark.parametrize("sel", sorted(FAR_REACH))
def test_every_op_leaves_no_byte_changed_past_the_count(sel, monkeypatch):
    """Each op's writes stay inside what check_local saw: with dst exactly as long as the op
    writes, the core's dirty count covers them and every byte past it is fresh; one element
    shorter, the op stops at the line before writing (so no lowering can write past the
    bytes it checked)."""
    monkeypatch.setattr(block_runner, "SERIAL_SECONDS", 1e9)   # every block on this thread
    at, n = 96 * 1024, FAR_REACH[sel] // 4
    args = (np.ones(2048, np.float32), _far_offsets(sel), np.zeros(8, np.float32), sel, at)
    far_writes[1](*args, n)
    core = runtime._thread_cores.core
    assert max(int(d) for d in core.dirty) >= at + FAR_REACH[sel]
    assert_fresh_beyond_dirty()
    with pytest.raises(asc.TensorExtentError):
        far_writes[1](*args, n - 1)
    assert_fresh_beyond_dirty()
