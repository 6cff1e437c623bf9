"""cast, compare, compare_scalar and select against NumPy (semantics: compiler/ops/convert.py).

Precision: exact (bit for bit; NaN matches any NaN) for every op.

* The registry's cast reference (``cast_reference``) is float64 arithmetic with explicit
  rounding rules; it is itself checked here against two other methods: NumPy's own float16
  conversion (RINT) plus ``nextafter`` neighbours (the directed modes, ROUND, ODD), torch's
  bfloat16 conversion (RINT), and Python integers (int -> float).
* Every allowed (src, dst, RoundMode) triple runs in the count form over special values (+-0,
  +-inf, NaN, max/min, subnormals, ties like +-2.5 and values halfway between two float16s),
  all 65536 bit patterns of 16-bit sources and random data; float32 -> float16/bfloat16 also over
  every float16/bfloat16 boundary (each value, its midpoints and their float32 neighbours).
* The masked form (contiguous and bit masks, counter mode, block and repeat strides, wider and
  narrower operands) against a NumPy model of the addressing, with hypothesis.
* compare / compare_scalar / select against np.packbits(bitorder='little') / np.where, both
  forms; every disallowed (src, dst) pair and RoundMode and the dtype errors, with their line.
"""
from __future__ import annotations

import fractions
import inspect
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ascendc_py as asc
import kernels_convert as K
from ascendc_py.compiler.ops import REGISTRY
from ascendc_py.compiler.ops.convert import (CAST_TABLE, cast_reference, compare_modes,
                                             round_to_format, select_reference)
from ascendc_py.dsl.types import (CMPMODE, SELMODE, RoundMode, bfloat16, float16, float32, int8,
                                  int16, int32, int64, uint8, uint16, uint32)

torch = pytest.importorskip("torch")
R = RoundMode
TRIPLES = [(s, d, m) for (s, d), modes in CAST_TABLE.items() for m in modes]
DTYPES = (int8, uint8, int16, uint16, int32, uint32, int64, float16, float32, bfloat16)
KSRC = inspect.getsource(K)


def hyp(n: int):
    """Hypothesis settings: n examples (more under the `long` profile of `make fuzz`)."""
    return settings(deadline=None, suppress_health_check=list(HealthCheck),
                    max_examples=max(n, settings().max_examples)
                    if settings().max_examples > 200 else n)


def dev(a: np.ndarray, dtype):
    """A launch argument: bfloat16 (held as uint16 bits) becomes a torch bfloat16 tensor."""
    if dtype == bfloat16:
        return torch.from_numpy(np.ascontiguousarray(a, np.uint16).view(np.int16)).view(
            torch.bfloat16)
    return np.ascontiguousarray(a, dtype.numpy)


def host(t, dtype) -> np.ndarray:
    return t.view(torch.int16).numpy().view(np.uint16) if dtype == bfloat16 else t


def is_nan(a: np.ndarray, dtype) -> np.ndarray:
    if dtype == bfloat16:
        return (a & 0x7FFF) > 0x7F80
    return np.isnan(a) if dtype.is_float else np.zeros(a.shape, bool)


def assert_same(got: np.ndarray, exp: np.ndarray, dtype, what: str, inputs=None) -> None:
    """Bitwise equality (-0 differs from +0), any NaN equal to any NaN."""
    g = np.ascontiguousarray(got)
    e = np.ascontiguousarray(exp)
    if dtype.is_float and dtype != bfloat16:
        ui = np.dtype(f"u{g.itemsize}")
        eq = g.view(ui) == e.view(ui)
    else:
        eq = g == e
    bad = ~(eq | (is_nan(g, dtype) & is_nan(e, dtype)))
    if bad.any():
        i = np.flatnonzero(bad)[:5]
        src = f"; inputs {inputs[i]!r}" if inputs is not None else ""
        raise AssertionError(f"{what}: {int(bad.sum())} of {bad.size} differ at {i}: got "
                             f"{g[i]!r}, expected {e[i]!r}{src}")


# ----------------------------------------------------------------------------- inputs
F32_SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 3.4028235e38, -3.4028235e38, 1.17549435e-38,
                1e-45, -1e-45, 3e-45, 2.0 ** -130, 2.0 ** -24, 2.0 ** -25, -2.0 ** -25,
                3 * 2.0 ** -25, 2.0 ** -25 * (1 + 2.0 ** -23), 2.0 ** -25 * (1 - 2.0 ** -24),
                2.0 ** -14, 2.0 ** -14 * (1 - 2.0 ** -11), 65504.0, 65519.996, 65520.0, 65536.0,
                -65520.0, 1e5, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.5, -3.5, 0.49999997, 1e-8,
                1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11, -(1 + 2.0 ** -11), 1 + 2.0 ** -8,
                1 + 3 * 2.0 ** -8, 2049.0, 2051.0, 127.5, -128.5, 128.0, 255.5, 256.0, -1.0,
                32767.5, -32768.5, 32768.0, 2.0 ** 31, -2.0 ** 31, 2.0 ** 31 - 128, 2.0 ** 63,
                -2.0 ** 63, 1e20, -1e20, 16777217.0, 3.3895314e38, 3.3961776e38]


def ints_with_all_lengths(rng, n: int, bits: int) -> np.ndarray:
    """Signed integers of every bit length (so int -> float rounding sees every shift)."""
    length = rng.integers(0, bits, n)
    mag = rng.integers(0, 2 ** 62, n, dtype=np.int64) >> (62 - np.minimum(length, 62))
    v = np.where(rng.random(n) < 0.5, -mag, mag)
    lo, hi = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    specials = [0, 1, -1, lo, hi, lo + 1, hi - 1, 2 ** 24 + 1, 2 ** 24 + 3, -(2 ** 24 + 1),
                2 ** 25 + 2, 2 ** 25 + 6, 2 ** 11 + 1, 2 ** 12 + 2, 2 ** 12 + 6, -(2 ** 11 + 1)]
    specials = [s for s in specials if lo <= s <= hi]
    return np.concatenate([np.array(specials, np.int64), v]).astype(f"i{bits // 8}")


def cast_inputs(src, seed: int) -> np.ndarray:
    """Specials, every 16-bit pattern and random data, padded to a multiple of TILE."""
    rng = np.random.default_rng(seed)
    if src.bits <= 16:   # every bit pattern (tiled up to 65536 for 8-bit types)
        pats = np.arange(65536, dtype=np.uint32) & ((1 << src.bits) - 1)
        return pats.astype(np.uint16 if src.bits == 16 else np.uint8).view(
            np.uint16 if src == bfloat16 else src.numpy)
    if src.is_int:
        x = ints_with_all_lengths(rng, 2 * K.TILE, src.bits)
    else:
        with np.errstate(over="ignore"):
            parts = [np.array(F32_SPECIALS, np.float32),
                     (rng.standard_normal(1500) * rng.choice([1e-6, 1, 1e3, 1e5, 1e9], 1500)),
                     rng.integers(-70000, 70000, 1500) / 2,
                     rng.integers(0, 2 ** 32, 1500, dtype=np.uint64).astype(np.uint32).view(
                         np.float32)]
            x = np.concatenate([p.astype(np.float32) for p in parts])
    reps = -(-x.size // K.TILE) * K.TILE
    return np.resize(x, reps)


def boundary_inputs(dst) -> np.ndarray:
    """float32 values on every float16 (bfloat16) boundary: each value, its midpoints with both
    neighbours and the float32 numbers next to those."""
    if dst == bfloat16:
        hi = np.arange(65536, dtype=np.uint32) << 16
        low = np.array([0, 1, 0x7FFF, 0x8000, 0x8001, 0xFFFF], np.uint32)
        return (hi[:, None] | low[None, :]).ravel().view(np.float32)
    h = np.arange(65536, dtype=np.uint16).view(np.float16)
    h = h[np.isfinite(h)].astype(np.float32)
    with np.errstate(over="ignore"):
        up = np.nextafter(h.astype(np.float16), np.float16(np.inf)).astype(np.float32)
    mid = ((h.astype(np.float64) + up) / 2).astype(np.float32)   # exact in float32
    mid = mid[np.isfinite(mid)]
    vals = [h, mid]
    for v in (h, mid):
        vals += [np.nextafter(v, np.float32(np.inf)), np.nextafter(v, np.float32(-np.inf))]
    x = np.concatenate(vals + [np.array([65520.0, 65519.996, 70000.0], np.float32)])
    return np.resize(x, -(-x.size // K.TILE) * K.TILE)


def run_cast(src, dst, mode: RoundMode, x: np.ndarray) -> np.ndarray:
    z = dev(np.zeros(x.size, np.uint16 if dst == bfloat16 else dst.numpy), dst)
    K.cast_kernel[1](dev(x, src), z, x.size, mode.name)
    return host(z, dst)


# ----------------------------------------------------------------------------- the reference itself
def neighbour_reference(x: np.ndarray, mode: RoundMode) -> np.ndarray:
    """float32 -> float16 with NumPy's conversion (RINT) and nextafter for the other modes."""
    with np.errstate(all="ignore"):
        h = x.astype(np.float16)
        xd, hd = x.astype(np.float64), h.astype(np.float64)
        fl = np.where(hd > xd, np.nextafter(h, np.float16(-np.inf)), h)
        ce = np.where(hd < xd, np.nextafter(h, np.float16(np.inf)), h)
        tie = ((fl.astype(np.float64) + ce) / 2 == xd) & (fl != ce)
    return {R.CAST_RINT: h, R.CAST_NONE: h, R.CAST_FLOOR: fl, R.CAST_CEIL: ce,
            R.CAST_TRUNC: np.where(xd < 0, ce, fl),
            R.CAST_ROUND: np.where(tie, np.where(xd < 0, fl, ce), h),
            R.CAST_ODD: np.where((fl == ce) | (fl.view(np.uint16) & 1 == 1), fl, ce)}[mode]


@pytest.mark.parametrize("mode", CAST_TABLE[(float32, float16)], ids=lambda m: m.name)
def test_reference_float_to_half_matches_numpy_neighbours(mode):
    x = np.concatenate([boundary_inputs(float16), cast_inputs(float32, 1)])
    assert_same(cast_reference(x, float32, float16, mode), neighbour_reference(x, mode),
                float16, f"reference {mode.name}", x)


def test_reference_rint_matches_numpy_and_torch():
    x = np.concatenate([boundary_inputs(bfloat16), cast_inputs(float32, 2)])
    got = cast_reference(x, float32, bfloat16, R.CAST_RINT)
    want = torch.from_numpy(x).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
    assert_same(got, want, bfloat16, "bfloat16 RINT vs torch", x)
    i = ints_with_all_lengths(np.random.default_rng(3), 4000, 32)
    assert_same(cast_reference(i, int32, float32, R.CAST_RINT), i.astype(np.float32), float32,
                "int32 RINT vs numpy", i)


@pytest.mark.parametrize("mode", CAST_TABLE[(int64, float32)], ids=lambda m: m.name)
def test_reference_int64_to_float_matches_fractions(mode):
    """Python integers + the float32 neighbours found with nextafter and exact comparisons."""
    vals = ints_with_all_lengths(np.random.default_rng(4), 300, 64)
    got = cast_reference(vals, int64, float32, mode)
    for v, g in zip(vals.tolist(), got):
        f = np.float32(float(v))
        lo = f if fractions.Fraction(float(f)) <= v else np.nextafter(f, np.float32(-np.inf))
        hi = lo if fractions.Fraction(float(lo)) == v else np.nextafter(lo, np.float32(np.inf))
        d_lo, d_hi = v - fractions.Fraction(float(lo)), fractions.Fraction(float(hi)) - v
        if mode == R.CAST_RINT:
            want = lo if d_lo < d_hi or (d_lo == d_hi and not lo.view(np.uint32) & 1) else hi
        elif mode == R.CAST_ROUND:
            want = lo if d_lo < d_hi or (d_lo == d_hi and v < 0) else hi
        else:
            want = {R.CAST_FLOOR: lo, R.CAST_CEIL: hi,
                    R.CAST_TRUNC: lo if v >= 0 else hi}[mode]
        assert g == want, (v, g, want, mode)


# ----------------------------------------------------------------------------- cast, count form
@pytest.mark.parametrize("src,dst,mode", TRIPLES,
                         ids=[f"{s.name}-{d.name}-{m.name[5:]}" for s, d, m in TRIPLES])
def test_cast_count_form(src, dst, mode):
    x = cast_inputs(src, zlib.crc32(f"{src.name}{dst.name}".encode()))
    got = run_cast(src, dst, mode, x)
    assert_same(got, cast_reference(x, src, dst, mode), dst,
                f"cast {src.name}->{dst.name} {mode.name}", x)
    if mode in (R.CAST_RINT, R.CAST_NONE) and (src, dst) in ((float32, float16),
                                                              (float16, float32)):
        with np.errstate(over="ignore"):
            assert_same(got, x.astype(dst.numpy), dst, "vs numpy astype", x)


@pytest.mark.parametrize("dst", [float16, bfloat16])
def test_cast_float_to_narrow_float_on_every_boundary(dst):
    x = boundary_inputs(dst)
    for mode in CAST_TABLE[(float32, dst)]:
        assert_same(run_cast(float32, dst, mode, x), cast_reference(x, float32, dst, mode), dst,
                    f"float32->{dst.name} {mode.name}", x)


def test_cast_semantics_spot_checks():
    """The documented choices, on values where the modes differ."""
    x = np.resize(np.array([2.5, -2.5, 0.5, 1.5, np.nan, 3e9, -3e9, 65520.0, 70000.0, -70000.0,
                            1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11], np.float32), K.TILE)
    to_int = {m: run_cast(float32, int32, m, x)[:7] for m in CAST_TABLE[(float32, int32)]}
    big = 2 ** 31 - 1
    assert to_int[R.CAST_RINT].tolist() == [2, -2, 0, 2, 0, big, -big - 1]
    assert to_int[R.CAST_ROUND].tolist() == [3, -3, 1, 2, 0, big, -big - 1]
    assert to_int[R.CAST_FLOOR].tolist()[:4] == [2, -3, 0, 1]
    assert to_int[R.CAST_CEIL].tolist()[:4] == [3, -2, 1, 2]
    assert to_int[R.CAST_TRUNC].tolist()[:4] == [2, -2, 0, 1]
    h = {m: run_cast(float32, float16, m, x)[7:12] for m in CAST_TABLE[(float32, float16)]}
    assert h[R.CAST_NONE].tolist()[:3] == [np.inf, np.inf, -np.inf]        # NONE = RINT
    assert h[R.CAST_TRUNC].tolist()[:3] == [65504.0, 65504.0, -65504.0]
    assert h[R.CAST_FLOOR].tolist()[:3] == [65504.0, 65504.0, -np.inf]
    assert h[R.CAST_ODD].tolist() == [65504.0, 65504.0, -65504.0, 1.0009765625, 1.0009765625]
    assert h[R.CAST_RINT].tolist()[3:] == [1.0, 1.001953125]               # ties to even
    assert h[R.CAST_ROUND].tolist()[3:] == [1.0009765625, 1.001953125]     # ties away


@pytest.mark.fuzz
@hyp(30)
@given(triple=st.sampled_from(TRIPLES), count=st.integers(0, 1000), seed=st.integers(0, 2 ** 31))
def test_cast_count_form_any_count(triple, count, seed):
    """Any count (not only whole blocks or repeats); the rest of dst is untouched."""
    src, dst, mode = triple
    nx, nz = 1024, 1024
    x = np.resize(cast_inputs(src, seed)[np.random.default_rng(seed).permutation(1024)], nx)
    z0 = np.resize(cast_inputs(dst, 5), nz)
    z = dev(z0.copy(), dst)
    K.cast_tail_kernel[1](dev(x, src), z, nx, nz, count, mode.name)
    want = z0.copy()
    want[:count] = cast_reference(x[:count], src, dst, mode)
    assert_same(host(z, dst), want, dst, f"cast {src.name}->{dst.name} {mode.name} n={count}")


def test_cast_mask_set_beforehand():
    """is_set_mask=False uses the mask of set_vector_mask (lanes of the wider type, float32)."""
    n = 256
    x = np.arange(n, dtype=np.float32) + 0.5
    z = np.full(n, -1.0, np.float16)
    lo = 0x0F0F_0000_FFFF_0001
    K.cast_preset_mask_kernel[1](x, z, n, 0, lo)
    lanes = np.flatnonzero([(lo >> k) & 1 for k in range(64)])
    want = np.full(n, -1.0, np.float16)
    for r in range(2):   # src repeat stride 8 blocks (64 floats), dst 4 blocks (64 halves)
        want[r * 64 + lanes] = x[r * 64 + lanes].astype(np.float16)
    np.testing.assert_array_equal(z, want)


# ----------------------------------------------------------------------------- cast, masked form
def lane_offsets(r: int, j: np.ndarray, blk: int, rep: int, esize: int) -> np.ndarray:
    """Element index of lane j of repeat r (32-byte blocks of the operand's own type)."""
    epb = 32 // esize
    return (r * rep + (j // epb) * blk) * epb + j % epb


def mask_lanes(epr: int, words, m0: int, m1: int) -> np.ndarray:
    if words == 0:
        return np.arange(m0)
    bits = [(m0 >> k) & 1 for k in range(64)] + [(m1 >> k) & 1 for k in range(64)]
    return np.flatnonzero(np.array(bits[:epr]))


def signed64(w: int) -> int:
    return w - (1 << 64) if w >= 1 << 63 else w


@pytest.mark.fuzz
@hyp(60)
@given(data=st.data(), triple=st.sampled_from(TRIPLES))
def test_cast_masked_form(data, triple):
    src, dst, mode = triple
    es, ed = src.sizeof(), dst.sizeof()
    epr = 256 // max(es, ed)
    blocks = {"src": epr * es // 32, "dst": epr * ed // 32}
    repeat = data.draw(st.integers(0, 4), "repeat")
    counter = data.draw(st.booleans(), "counter")
    words = 0 if counter else data.draw(st.sampled_from([0, 1 + (epr > 64)]), "words")
    if counter:
        m0, m1 = data.draw(st.integers(0, 4 * epr), "count"), 0
        repeats = -(-m0 // epr)
    elif words == 0:
        m0, m1, repeats = data.draw(st.integers(1, epr), "mask"), 0, repeat
    else:
        m0 = data.draw(st.integers(1, 2 ** min(epr, 64) - 1), "lo")
        m1 = data.draw(st.integers(0, 2 ** 64 - 1), "hi") if words == 2 else 0
        repeats = repeat
    s_blk, d_blk = data.draw(st.integers(1, 2), "src_blk"), data.draw(st.integers(1, 2), "dst_blk")
    s_rep = data.draw(st.integers(0, 2 * blocks["src"] + 2), "src_rep")
    d_rep = data.draw(st.integers((blocks["dst"] - 1) * d_blk + 1, 2 * blocks["dst"] + 2),
                      "dst_rep")
    nx = max(((repeats * s_rep + 7 * s_blk + 1) * 32) // es, 32)
    nz = max(((repeats * d_rep + 7 * d_blk + 1) * 32) // ed, 32)
    x = cast_inputs(src, data.draw(st.integers(0, 2 ** 31), "seed"))[:nx]
    x = np.resize(x, nx)
    z0 = np.resize(cast_inputs(dst, 7), nz)
    z = dev(z0.copy(), dst)
    K.cast_masked_kernel[1](dev(x, src), z, nx, nz, signed64(m0), signed64(m1), repeat, d_blk,
                            s_blk, d_rep, s_rep, mode.name, words, counter)
    want = z0.copy()
    for r in range(repeats):
        lanes = (np.arange(min(epr, m0 - r * epr)) if counter
                 else mask_lanes(epr, words, m0, m1))
        si = lane_offsets(r, lanes, s_blk, s_rep, es)
        want[lane_offsets(r, lanes, d_blk, d_rep, ed)] = cast_reference(x[si], src, dst, mode)
    assert_same(host(z, dst), want, dst, f"masked cast {src.name}->{dst.name} {mode.name}")


# ----------------------------------------------------------------------------- cast errors
def mode_line(mode: RoundMode) -> int:
    """Line in kernels_convert.py of cast_count's call with ``mode``."""
    lines, first = inspect.getsourcelines(K.cast_count.fn)
    hits = [first + i for i, t in enumerate(lines) if f"RoundMode.{mode.name}, n)" in t]
    assert len(hits) == 1
    return hits[0]


def compile_cast(src, dst, mode: RoundMode):
    x = dev(np.zeros(64, np.uint16 if src == bfloat16 else src.numpy), src)
    z = dev(np.zeros(64, np.uint16 if dst == bfloat16 else dst.numpy), dst)
    return K.cast_kernel[1](x, z, 0, mode.name)


BAD_PAIRS = [(s, d) for s in DTYPES for d in DTYPES if (s, d) not in CAST_TABLE]
BAD_MODES = [(s, d, m) for (s, d), ms in CAST_TABLE.items() for m in RoundMode if m not in ms]


@pytest.mark.parametrize("src,dst", BAD_PAIRS, ids=[f"{s.name}-{d.name}" for s, d in BAD_PAIRS])
def test_cast_disallowed_pair(src, dst):
    with pytest.raises(asc.KernelTypeError) as info:
        compile_cast(src, dst, R.CAST_NONE)
    err = info.value
    assert err.loc.line == mode_line(R.CAST_NONE) and err.loc.file == K.__file__
    text = str(err)
    assert f"from {src.name} to {dst.name} is not supported" in text, text
    targets = [d.name for (s, d) in CAST_TABLE if s == src]
    assert (f"converts to {', '.join(targets)}" if targets else "not a cast source") in text
    if (src, dst) == (int32, float16):
        assert "SetDeqScale" in text


@pytest.mark.parametrize("src,dst,mode", BAD_MODES,
                         ids=[f"{s.name}-{d.name}-{m.name[5:]}" for s, d, m in BAD_MODES])
def test_cast_disallowed_round_mode(src, dst, mode):
    with pytest.raises(asc.KernelTypeError) as info:
        compile_cast(src, dst, mode)
    err = info.value
    assert err.loc.line == mode_line(mode)
    allowed = ", ".join(m.name for m in CAST_TABLE[(src, dst)])
    assert (f"from {src.name} to {dst.name} does not support RoundMode.{mode.name}"
            in str(err)) and f"allowed: {allowed}" in str(err), str(err)


def test_cast_argument_errors():
    @asc.kernel
    def bad(x: asc.GlobalAddress, z: asc.GlobalAddress, WHAT: asc.ConstExpr[int]):
        a = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 64)
        c = asc.LocalTensor(asc.float16, asc.TPosition.VECOUT, 1024, 64)
        if WHAT == 0:
            asc.cast(c, a, 1, 64)
        elif WHAT == 1:
            asc.cast(c, a, asc.CMPMODE.LT, 64)
        else:
            asc.cast(c, a, asc.RoundMode.CAST_RINT, 128, 1, 5)
    first = inspect.getsourcelines(bad.fn)[1]
    for what, line, words in ((0, 5, "RoundMode member"), (1, 7, "RoundMode member"),
                              (2, 9, "UnaryRepeatParams")):
        with pytest.raises(asc.KernelTypeError) as info:
            bad[1](np.zeros(8, np.float32), np.zeros(8, np.float32), what)
        assert info.value.loc.line == first + line and words in str(info.value), str(info.value)


# ----------------------------------------------------------------------------- compare
CMP_CASES = [(d, m, s) for d in (float16, float32, int32) for m in compare_modes(d)
             for s in (False, True)]


def compare_inputs(dtype, n: int, rng):
    if dtype == int32:
        x, y = rng.integers(-3, 4, n), rng.integers(-3, 4, n)
    else:
        vals = np.array([0.0, -0.0, 1.0, -1.0, 2.5, np.inf, -np.inf, np.nan, 1e-7])
        x, y = rng.choice(vals, n), rng.choice(vals, n)
    return x.astype(dtype.numpy), y.astype(dtype.numpy)


@pytest.mark.parametrize("dtype,mode,scalar", CMP_CASES,
                         ids=[f"{d.name}-{m.name}-{'s' if s else 't'}" for d, m, s in CMP_CASES])
def test_compare_count_form(dtype, mode, scalar):
    rng = np.random.default_rng(zlib.crc32(f"{dtype.name}{mode.name}{scalar}".encode()))
    for n in (256, 1024 + 256):  # n / 8 bytes of output: whole 32-byte blocks to copy out
        x, y = compare_inputs(dtype, n, rng)
        s = 1 if dtype == int32 else float(rng.choice([1.0, 0.0, np.nan, np.inf]))
        z = np.full(n // 8, 0xA5, np.uint8)
        K.compare_kernel[1](x, y, z, n, s, mode.name, scalar)
        other = dtype.numpy.type(s) if scalar else y
        assert_same(z, REGISTRY["compare"].reference(x, other, mode), uint8, "ref", x)
        with np.errstate(invalid="ignore"):
            bits = {CMPMODE.LT: x < other, CMPMODE.GT: x > other, CMPMODE.EQ: x == other,
                    CMPMODE.LE: x <= other, CMPMODE.GE: x >= other, CMPMODE.NE: x != other}[mode]
        np.testing.assert_array_equal(z, np.packbits(bits, bitorder="little"))


@pytest.mark.fuzz
@hyp(25)
@given(dtype=st.sampled_from([float16, float32]), scalar=st.booleans(), repeat=st.integers(0, 4),
       mask=st.integers(1, 64), s0_blk=st.integers(1, 3), s1_blk=st.integers(0, 2),
       s0_rep=st.integers(0, 24), s1_rep=st.integers(0, 24), seed=st.integers(0, 2 ** 31))
def test_compare_masked_form(dtype, scalar, repeat, mask, s0_blk, s1_blk, s0_rep, s1_rep, seed):
    """Every lane of each repeat is compared (the mask is reserved on A2/A3); repeat r writes
    its bits packed at byte r * 256 / sizeof(T) / 8."""
    es = dtype.sizeof()
    epr = 256 // es
    nx = (max(repeat - 1, 0) * 24 + 7 * 3 + 1) * 32 // es
    x, y = compare_inputs(dtype, nx, np.random.default_rng(seed))
    nz = 128
    z = np.full(nz, 0x5A, np.uint8)
    K.compare_masked_kernel[1](x, y, z, nx, nz, 1.0, mask, repeat, s0_blk, s1_blk, s0_rep,
                               s1_rep, scalar)
    want = np.full(nz, 0x5A, np.uint8)
    for r in range(repeat):
        lanes = np.arange(epr)
        a = x[lane_offsets(r, lanes, s0_blk, s0_rep, es)]
        bits = a >= dtype.numpy.type(1.0) if scalar else a < y[
            lane_offsets(r, lanes, s1_blk, s1_rep, es)]
        want[r * epr // 8:(r + 1) * epr // 8] = np.packbits(bits, bitorder="little")
    np.testing.assert_array_equal(z, want)


def test_compare_errors():
    @asc.kernel
    def bad(x: asc.GlobalAddress, n: int, WHAT: asc.ConstExpr[int]):
        a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, 256)
        c = asc.LocalTensor(asc.uint8, asc.TPosition.VECOUT, 2048, 256)
        f = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, 4096, 256)
        if WHAT == 0:
            asc.compare(c, a, a, asc.CMPMODE.LT, 64)
        elif WHAT == 1:
            asc.compare(f, a, a, asc.CMPMODE.EQ, 64)
        elif WHAT == 2:
            asc.compare(c, a, a, asc.CMPMODE.EQ, 48)
        elif WHAT == 3:
            asc.compare(c, a, f, asc.CMPMODE.EQ, 64)
        elif WHAT == 4:
            asc.compare_scalar(c, a, 1.0, asc.RoundMode.CAST_RINT, 64)
        else:
            asc.compare(c, a, a, asc.CMPMODE.GE, n)
    first = inspect.getsourcelines(bad.fn)[1]
    cases = [(np.int32, 0, asc.KernelTypeError, 6, ["int32", "only CMPMODE.EQ", "LT"]),
             (np.int16, 0, asc.KernelTypeError, 6, ["int16", "supported: float16, float32"]),
             (np.float32, 1, asc.KernelTypeError, 8, ["dst must be", "uint8", "float32"]),
             (np.float32, 2, asc.KernelValueError, 10, ["192 bytes", "multiple of 256", "64"]),
             (np.float16, 3, asc.KernelTypeError, 12, ["src1 is float32", "float16"]),
             (np.float32, 4, asc.KernelTypeError, 14, ["CMPMODE member"])]
    for npd, what, cls, line, words in cases:
        with pytest.raises(cls) as info:
            bad[1](np.zeros(256, npd), 64, what)
        text = str(info.value)
        assert info.value.loc.line == first + line and all(w in text for w in words), text
    bad[1](np.zeros(256, np.float32), 128, 5)          # a run-time count: checked at run time
    with pytest.raises(asc.KernelRuntimeError) as info:
        bad[1](np.zeros(256, np.float32), 72, 5)
    assert info.value.loc.line == first + 16 and "multiple of 256 bytes" in str(info.value)


# ----------------------------------------------------------------------------- select
def select_case(dtype, mode, mdtype, rng, n: int, masked: int = 0, m0=0, m1=0, repeat=0,
                strides=(1, 1, 1, 8, 8, 8)):
    es = dtype.sizeof()
    nx = -(-max(n, 64) // 32) * 32
    x = rng.standard_normal(nx).astype(dtype.numpy)
    y = rng.standard_normal(nx).astype(dtype.numpy)
    nm = 4096 // mdtype.sizeof()
    m = rng.integers(0, 2 ** (8 * mdtype.sizeof()), nm, dtype=np.uint64).astype(mdtype.numpy)
    z = np.full(nx, -7.0, dtype.numpy)
    scalar = 0.5
    K.select_kernel[1](x, y, m, z, nx, nm, nx, scalar, n, signed64(m0), signed64(m1), repeat,
                       *strides, mode.name, masked)
    other = scalar if mode == SELMODE.VSEL_TENSOR_SCALAR_MODE else y
    if not masked:
        want = np.full(nx, -7.0, dtype.numpy)
        want[:n] = select_reference(m, x[:n], other if np.ndim(other) == 0 else y[:n], mode)
        return z, want
    epr = 256 // es
    bits = np.unpackbits(m.view(np.uint8), bitorder="little")
    want = np.full(nx, -7.0, dtype.numpy)
    d_blk, s0_blk, s1_blk, d_rep, s0_rep, s1_rep = strides
    for r in range(repeat):
        lanes = mask_lanes(epr, 0 if masked == 1 else masked - 1, m0, m1)
        sel = bits[lanes if mode == SELMODE.VSEL_CMPMASK_SPR else r * epr + lanes] != 0
        a = x[lane_offsets(r, lanes, s0_blk, s0_rep, es)]
        b = other if np.ndim(other) == 0 else y[lane_offsets(r, lanes, s1_blk, s1_rep, es)]
        want[lane_offsets(r, lanes, d_blk, d_rep, es)] = np.where(sel, a, b)
    return z, want


SEL_CASES = [(d, m, u) for d in (float16, float32) for m in SELMODE
             for u in ((uint8, asc.uint16, asc.uint64) if d == float32 else (asc.uint32,))]


@pytest.mark.parametrize("dtype,mode,mdtype", SEL_CASES,
                         ids=[f"{d.name}-{m.name}-{u.name}" for d, m, u in SEL_CASES])
def test_select_count_form(dtype, mode, mdtype):
    rng = np.random.default_rng(zlib.crc32(f"{dtype.name}{mode.name}".encode()))
    for n in (1, 37, 256 // dtype.sizeof() * 3 + 5, 1000):
        z, want = select_case(dtype, mode, mdtype, rng, n)
        assert_same(z, want, dtype, f"select {mode.name} n={n}")


@pytest.mark.fuzz
@hyp(40)
@given(data=st.data(), dtype=st.sampled_from([float16, float32]), mode=st.sampled_from(SELMODE),
       repeat=st.integers(0, 3), seed=st.integers(0, 2 ** 31))
def test_select_masked_form(data, dtype, mode, repeat, seed):
    epr = 256 // dtype.sizeof()
    kind = data.draw(st.sampled_from([1, 2 + (epr > 64)]), "mask kind")
    if kind == 1:
        m0, m1 = data.draw(st.integers(1, epr), "mask"), 0
    else:
        m0 = data.draw(st.integers(1, 2 ** 64 - 1), "lo")
        m1 = data.draw(st.integers(0, 2 ** 64 - 1), "hi") if epr > 64 else 0
    d_blk, s0_blk, s1_blk = (data.draw(st.integers(1, 2), n) for n in ("d", "s0", "s1"))
    strides = (d_blk, s0_blk, s1_blk, data.draw(st.integers(7 * d_blk + 1, 16), "d_rep"),
               data.draw(st.integers(0, 16), "s0_rep"), data.draw(st.integers(0, 16), "s1_rep"))
    z, want = select_case(dtype, mode, asc.uint8, np.random.default_rng(seed), 3 * epr * 2,
                          kind, m0, m1, repeat, strides)
    assert_same(z, want, dtype, f"masked select {mode.name}")


def test_select_errors():
    @asc.kernel
    def bad(x: asc.GlobalAddress, WHAT: asc.ConstExpr[int]):
        a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, 128)
        m = asc.LocalTensor(asc.uint8, asc.TPosition.VECIN, 1024, 128)
        f = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 2048, 128)
        if WHAT == 0:
            asc.select(a, m, a, a, asc.SELMODE.VSEL_TENSOR_TENSOR_MODE, 64)
        elif WHAT == 1:
            asc.select(a, m, a, 1.0, asc.SELMODE.VSEL_CMPMASK_SPR, 64)
        elif WHAT == 2:
            asc.select(a, m, a, a, asc.SELMODE.VSEL_TENSOR_SCALAR_MODE, 64)
        elif WHAT == 3:
            asc.select(a, a, a, a, asc.SELMODE.VSEL_TENSOR_TENSOR_MODE, 64)
        else:
            asc.select(a, m, a, f, asc.SELMODE.VSEL_TENSOR_TENSOR_MODE, 64)
    first = inspect.getsourcelines(bad.fn)[1]
    cases = [(np.int32, 0, 6, ["int32", "supported: float16, float32"]),
             (np.float32, 1, 8, ["takes a LocalTensor src1", "VSEL_TENSOR_SCALAR_MODE"]),
             (np.float32, 2, 10, ["takes a scalar src1"]),
             (np.float32, 3, 12, ["sel_mask must be", "uint8"]),
             (np.float16, 4, 14, ["src1 is float32"])]
    for npd, what, line, words in cases:
        with pytest.raises(asc.KernelTypeError) as info:
            bad[1](np.zeros(128, npd), what)
        text = str(info.value)
        assert info.value.loc.line == first + line and all(w in text for w in words), text


# ----------------------------------------------------------------------------- timing, registry
def test_timing_and_registry():
    x = np.resize(np.float32([1.5, -2.5]), 2 * K.TILE)
    z = np.zeros(x.size, np.float16)
    report = K.cast_kernel[1](x, z, x.size, "CAST_RINT")
    assert report.instructions.get("cast") == 2 and report.pipe_busy["V"] > 0
    for name in ("cast", "compare", "compare_scalar", "select"):
        spec = REGISTRY[name]
        assert spec.reference is not None and spec.doc and callable(getattr(asc, name))
    assert REGISTRY["cast"].cost.name == "CONVERT" and REGISTRY["select"].cost.name == "SIMPLE"
