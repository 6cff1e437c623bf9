"""Every element-wise vector op of the registry against its NumPy reference.

One kernel per family (binary, unary, scalar, duplicate) selects the op with a ConstExpr string
and an if/elif chain, so each (op, dtype) is one compilation and every launch after that only
changes runtime sizes. Each family manages its UB differently (static LocalTensors, TQue, TBuf)
so the ops are also checked on tensors from each source.

Precision rules. Each result is checked against ``spec.reference`` and against an independent
formula computed in float64 (or 64-bit ints) and rounded once to the dtype ("exact" below):
* exact (0 ulp) for integer ops and for the float ops that are exact in IEEE arithmetic
  (add sub mul max min adds muls maxs mins leaky_relu abs relu duplicate); float16 arithmetic
  rounds to float16 after every op, which the reference reproduces (float32 has >= 2p+2 bits
  for p = 11, so computing in float32 and rounding once equals float16 arithmetic);
* bitwise and/or/not and shifts (counts >= the width give 0, or the sign for >> of signed
  types): exact;
* div, sqrt, reciprocal: <= 1 ulp from both (IEEE rounds them correctly; 1 ulp of slack for the
  vector unit's implementation); rsqrt = 1/sqrt: float32 <= 2 ulp from exact (two roundings),
  <= 1 ulp from the reference and for float16;
* exp and ln: <= 1 ulp from the exact value for float32 and float16 (libm-quality float32,
  float16 computed in float32 and rounded once). NumPy's own float32 exp/log (which
  ``spec.reference`` uses for float32) are up to 4 ulp off (measured: log 4, exp 2), so against
  ``spec.reference`` the float32 bound is 1 + 4 = 5 ulp.
Infinities and NaNs must match exactly in every case.
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ascendc_py as asc
from ascendc_py.compiler.ops import REGISTRY, Family, vector_ops
from kernels_for_tests import assert_equal_values, assert_within_ulp

UB_BYTES_PER_TENSOR = 32 * 1024  # per-block tensor cap used by these tests (3 tensors fit in UB)


# ----------------------------------------------------------------------------- kernels
@asc.kernel
def binary_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress,
                  block_length: int, OP: asc.ConstExpr[str]):
    """z = OP(x, y), static LocalTensors at fixed UB addresses."""
    off = asc.get_block_idx() * block_length
    xg = asc.GlobalTensor()
    yg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x + off, block_length)
    yg.set_global_buffer(y + off, block_length)
    zg.set_global_buffer(z + off, block_length)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, block_length)
    b = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, UB_BYTES_PER_TENSOR, block_length)
    c = asc.LocalTensor(x.dtype, asc.TPosition.VECOUT, 2 * UB_BYTES_PER_TENSOR, block_length)
    asc.data_copy(a, xg, block_length)
    asc.data_copy(b, yg, block_length)
    if OP == "add":
        asc.add(c, a, b, block_length)
    elif OP == "sub":
        asc.sub(c, a, b, block_length)
    elif OP == "mul":
        asc.mul(c, a, b, block_length)
    elif OP == "div":
        asc.div(c, a, b, block_length)
    elif OP == "max":
        asc.max(c, a, b, block_length)
    elif OP == "min":
        asc.min(c, a, b, block_length)
    elif OP == "bitwise_and":
        asc.bitwise_and(c, a, b, block_length)
    elif OP == "bitwise_or":
        asc.bitwise_or(c, a, b, block_length)
    elif OP == "add_relu":
        asc.add_relu(c, a, b, block_length)
    elif OP == "sub_relu":
        asc.sub_relu(c, a, b, block_length)
    else:
        asc.static_assert(False, "unknown binary op")
    asc.data_copy(zg, c, block_length)


@asc.kernel
def unary_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, block_length: int,
                 OP: asc.ConstExpr[str]):
    """z = OP(x), through a VECIN and a VECOUT TQue of depth 1."""
    off = asc.get_block_idx() * block_length
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x + off, block_length)
    zg.set_global_buffer(z + off, block_length)
    pipe = asc.TPipe()
    qi = asc.TQue(asc.TPosition.VECIN, 1)
    qo = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(qi, 1, block_length * x.dtype.sizeof())
    pipe.init_buffer(qo, 1, block_length * x.dtype.sizeof())
    a = qi.alloc_tensor(x.dtype)
    asc.data_copy(a, xg, block_length)
    qi.enque(a)
    a = qi.deque(x.dtype)
    c = qo.alloc_tensor(x.dtype)
    if OP == "exp":
        asc.exp(c, a, block_length)
    elif OP == "ln":
        asc.ln(c, a, block_length)
    elif OP == "abs":
        asc.abs(c, a, block_length)
    elif OP == "sqrt":
        asc.sqrt(c, a, block_length)
    elif OP == "relu":
        asc.relu(c, a, block_length)
    elif OP == "reciprocal":
        asc.reciprocal(c, a, block_length)
    elif OP == "rsqrt":
        asc.rsqrt(c, a, block_length)
    elif OP == "bitwise_not":
        asc.bitwise_not(c, a, block_length)
    else:
        asc.static_assert(False, "unknown unary op")
    qo.enque(c)
    qi.free_tensor(a)
    c = qo.deque(x.dtype)
    asc.data_copy(zg, c, block_length)
    qo.free_tensor(c)


@asc.kernel
def scalar_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, block_length: int, scalar,
                  OP: asc.ConstExpr[str]):
    """z = OP(x, scalar), both tensors carved out of one TBuf."""
    off = asc.get_block_idx() * block_length
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x + off, block_length)
    zg.set_global_buffer(z + off, block_length)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, 2 * block_length * x.dtype.sizeof())
    t = buf.get(x.dtype)
    a = t
    c = t[block_length:]
    asc.data_copy(a, xg, block_length)
    if OP == "adds":
        asc.adds(c, a, scalar, block_length)
    elif OP == "muls":
        asc.muls(c, a, scalar, block_length)
    elif OP == "maxs":
        asc.maxs(c, a, scalar, block_length)
    elif OP == "mins":
        asc.mins(c, a, scalar, block_length)
    elif OP == "leaky_relu":
        asc.leaky_relu(c, a, scalar, block_length)
    elif OP == "shift_left":
        asc.shift_left(c, a, scalar, block_length)
    elif OP == "shift_right":
        asc.shift_right(c, a, scalar, block_length)
    else:
        asc.static_assert(False, "unknown scalar op")
    asc.data_copy(zg, c, block_length)


@asc.kernel
def duplicate_kernel(z: asc.GlobalAddress, block_length: int, scalar):
    """z[:] = scalar through a VECOUT TQue."""
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z + asc.get_block_idx() * block_length, block_length)
    pipe = asc.TPipe()
    qo = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(qo, 1, block_length * z.dtype.sizeof())
    c = qo.alloc_tensor(z.dtype)
    asc.duplicate(c, scalar, block_length)
    qo.enque(c)
    c = qo.deque(z.dtype)
    asc.data_copy(zg, c, block_length)
    qo.free_tensor(c)


ISSUE_OPS = {"add", "sub", "mul", "div", "max", "min", "adds", "muls", "maxs", "mins",
             "leaky_relu", "exp", "ln", "abs", "sqrt", "relu", "duplicate"}
FAMILY_OPS = {
    Family.BINARY: {"add", "sub", "mul", "div", "max", "min", "bitwise_and", "bitwise_or",
                    "add_relu", "sub_relu"},
    Family.UNARY: {"exp", "ln", "abs", "sqrt", "relu", "reciprocal", "rsqrt", "bitwise_not"},
    Family.SCALAR: {"adds", "muls", "maxs", "mins", "leaky_relu", "shift_left", "shift_right"},
    Family.DUPLICATE: {"duplicate"},
}


def test_registry_has_every_issue_op_and_the_kernels_cover_it():
    """Ops of these four families with a count form must have a branch here; other families
    (axpy, cast, …) and ops with only the masked form (copy: tests/ops/test_copy.py) have
    kernels of their own shape and are tested elsewhere."""
    names = {s.name for s in vector_ops()}
    assert ISSUE_OPS <= names, ISSUE_OPS - names
    for spec in vector_ops():
        if spec.family in FAMILY_OPS and "count" in spec.forms[0]:
            assert spec.name in FAMILY_OPS[spec.family], (
                f"vector op {spec.name} ({spec.family}) has no branch in this file's kernels")
            assert spec.reference is not None and spec.dtypes


def test_dtypes_follow_ascend_c():
    d = {s.name: {t.name for t in s.dtypes} for s in vector_ops()}
    for name in ("add", "sub", "mul", "max", "min", "adds", "muls", "maxs", "mins"):
        assert d[name] == {"float16", "float32", "int16", "int32"}, name
    for name in ("div", "exp", "ln", "sqrt", "abs", "leaky_relu"):
        assert d[name] == {"float16", "float32"}, name
    assert d["relu"] == {"float16", "float32", "int32"}
    assert {"float16", "float32", "int16", "int32", "bfloat16"} <= d["duplicate"]


# ----------------------------------------------------------------------------- references
def independent(name: str, dtype, *args):
    """An independent formula: computed in float64 (or Python-width ints) and rounded once."""
    npd = np.dtype(dtype)
    if name == "duplicate":
        return np.full(np.shape(args[0]), args[1]).astype(npd)
    if name in ("add_relu", "sub_relu"):   # the sum or difference in the dtype, then relu
        op = np.add if name == "add_relu" else np.subtract
        wide = [np.asarray(a).astype(np.int64 if npd.kind in "iu" else np.float64) for a in args]
        with np.errstate(all="ignore"):       # integers wrap, floats may overflow to inf
            r = op(*wide).astype(npd)
        return np.maximum(r, npd.type(0))
    if npd.kind in "iu":
        wide = [np.asarray(a).astype(np.int64) for a in args]
        f = {"add": np.add, "adds": np.add, "sub": np.subtract, "mul": np.multiply,
             "muls": np.multiply, "max": np.maximum, "maxs": np.maximum, "min": np.minimum,
             "mins": np.minimum, "relu": lambda a: np.maximum(a, 0),
             "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
             "bitwise_not": np.invert,
             # counts >= the width: << gives 0, >> gives the sign (Ascend C semantics)
             "shift_left": lambda a, s: a << s if s < 64 else 0 * a,
             "shift_right": lambda a, s: a >> min(s, 63)}[name]
        return f(*wide).astype(npd)
    wide = [np.asarray(a, dtype=np.float64) for a in args]
    with np.errstate(all="ignore"):
        f = {"add": np.add, "adds": np.add, "sub": np.subtract, "mul": np.multiply,
             "muls": np.multiply, "div": np.divide, "max": np.maximum, "maxs": np.maximum,
             "min": np.minimum, "mins": np.minimum, "exp": np.exp, "ln": np.log, "abs": np.abs,
             "sqrt": np.sqrt, "relu": lambda a: np.maximum(a, 0.0),
             "reciprocal": lambda a: 1.0 / a, "rsqrt": lambda a: 1.0 / np.sqrt(a),
             "leaky_relu": lambda a, s: np.where(a >= 0, a, a * s)}[name]
        return f(*wide).astype(npd)


def max_ulp(name: str, dtype) -> tuple[int, int]:
    """Documented bounds (see the module docstring): (vs exact, vs spec.reference)."""
    if name in ("div", "sqrt", "reciprocal"):
        return 1, 1
    if name == "rsqrt":  # 1/sqrt(x): two roundings in float32, one in float16
        return (2, 1) if np.dtype(dtype) == np.float32 else (1, 1)
    if name in ("exp", "ln"):
        return (1, 5) if np.dtype(dtype) == np.float32 else (1, 1)
    return 0, 0


def check(name: str, got: np.ndarray, *inputs):
    """Kernel vs the registry reference and vs the independent float64 formula."""
    spec = REGISTRY[name]
    with np.errstate(all="ignore"):
        ref = np.asarray(spec.reference(*inputs))
    exact = independent(name, got.dtype, *inputs)
    tol_exact, tol_ref = max_ulp(name, got.dtype)
    what = f"{name} {got.dtype}"
    assert ref.dtype == got.dtype, (ref.dtype, got.dtype)
    if got.dtype.kind == "f" and tol_ref:
        assert_within_ulp(got, exact, tol_exact, what + " vs float64 formula")
        assert_within_ulp(got, ref, tol_ref, what + " vs spec.reference")
    else:
        assert_equal_values(got, exact, what + " vs float64 formula")
        assert_equal_values(got, ref, what + " vs spec.reference")


# ----------------------------------------------------------------------------- input data
FLOAT_SPECIALS = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-7, -1e-7, 3e38, 65504.0]


def make_input(rng, n: int, dtype, name: str, specials=(), scale=1.0) -> np.ndarray:
    npd = np.dtype(dtype)
    if npd.kind in "iu":
        info = np.iinfo(npd)
        return rng.integers(info.min, info.max, n, endpoint=True).astype(npd)
    x = rng.standard_normal(n) * scale
    if name in ("ln", "sqrt", "rsqrt"):
        x = np.abs(x)
    if name == "exp":
        x = np.clip(x, -20, 20)
    x = x.astype(npd)
    with np.errstate(over="ignore"):
        for pos, value in specials:
            x[int(pos * n) % n] = npd.type(value)
    return x


def scalar_for(name: str, dtype, raw: float):
    """A scalar exactly representable in the dtype (the op converts it, as Ascend C does)."""
    npd = np.dtype(dtype)
    if name in ("shift_left", "shift_right"):       # counts 0 .. width + 3
        return int(abs(raw) * 1000) % (npd.itemsize * 8 + 4)
    if npd.kind in "iu":
        info = np.iinfo(npd)
        return int(np.clip(int(raw * info.max), info.min, info.max))
    return float(npd.type(raw))


def run_case(name: str, dtype, blocks: int, per_block: int, rng, specials=(), scale=1.0,
             raw_scalar=0.37):
    spec = REGISTRY[name]
    n = blocks * per_block
    if spec.family == Family.BINARY:
        x = make_input(rng, n, dtype, name, specials, scale)
        y = make_input(rng, n, dtype, name, specials[::-1], scale)
        z = np.zeros(n, dtype)
        binary_kernel[blocks](x, y, z, per_block, name)
        check(name, z, x, y)
    elif spec.family == Family.UNARY:
        x = make_input(rng, n, dtype, name, specials, scale)
        z = np.zeros(n, dtype)
        unary_kernel[blocks](x, z, per_block, name)
        check(name, z, x)
    elif spec.family == Family.SCALAR:
        x = make_input(rng, n, dtype, name, specials, scale)
        s = scalar_for(name, dtype, raw_scalar)
        z = np.zeros(n, dtype)
        scalar_kernel[blocks](x, z, per_block, s, name)
        check(name, z, x, s)
    else:
        s = scalar_for(name, dtype, raw_scalar)
        z = np.zeros(n, dtype)
        duplicate_kernel[blocks](z, per_block, s)
        check(name, z, z.copy(), s)


CASES = [pytest.param(spec.name, dt.numpy, id=f"{spec.name}-{dt.name}")
         for spec in vector_ops() if spec.family in FAMILY_OPS and "count" in spec.forms[0]
         for dt in spec.dtypes if dt.name != "bfloat16"]  # bfloat16: torch, test_language.py


@pytest.mark.parametrize("name,dtype", CASES)
def test_fixed_sizes(name, dtype):
    """Odd multiples of 32 B (1, 3, 5 blocks of 32 B), 4096 + 32 elements, 1/3/8 blocks."""
    per32 = 32 // np.dtype(dtype).itemsize
    rng = np.random.default_rng(zlib.crc32(f"{name}{dtype}".encode()))
    for per_block in (per32, 3 * per32, 5 * per32, 4096 + 32):
        for blocks in (1, 3, 8):
            run_case(name, dtype, blocks, per_block, rng, specials=[(0.5, 1.0)])


def _examples(n: int) -> int:
    """n examples normally; the `long` hypothesis profile (make fuzz) raises it."""
    return max(n, settings().max_examples) if settings().max_examples > 200 else n


@pytest.mark.fuzz
@pytest.mark.parametrize("name,dtype", CASES)
@settings(deadline=None, max_examples=_examples(8),
          suppress_health_check=[HealthCheck.too_slow])
@given(blocks=st.sampled_from([1, 2, 3, 5, 8]),
       units=st.integers(1, 64),
       seed=st.integers(0, 2**32 - 1),
       scale=st.sampled_from([1.0, 1e-3, 100.0]),
       raw_scalar=st.floats(-2.0, 2.0, allow_nan=False, width=32),
       specials=st.lists(st.tuples(st.floats(0, 1), st.sampled_from(FLOAT_SPECIALS)),
                         max_size=6))
def test_random(name, dtype, blocks, units, seed, scale, raw_scalar, specials):
    """Hypothesis picks block count, per-block length (a multiple of 32 B), data and specials."""
    per_block = units * 32 // np.dtype(dtype).itemsize
    if np.dtype(dtype).kind in "iu":
        specials = []
    run_case(name, dtype, blocks, per_block, np.random.default_rng(seed), specials, scale,
             raw_scalar)


def test_count_shorter_than_tensor_leaves_the_rest_untouched():
    """An op with count < tensor length writes only the first count elements."""
    n, count = 64, 24  # float32: 24 elements = 96 B, a multiple of 32 B
    x = np.arange(n, dtype=np.float32)
    z = np.full(n, -5.0, np.float32)

    @asc.kernel
    def partial(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int, count: int):
        xg = asc.GlobalTensor()
        zg = asc.GlobalTensor()
        xg.set_global_buffer(x, n)
        zg.set_global_buffer(z, n)
        a = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, n)
        c = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, 4096, n)
        asc.data_copy(a, xg, n)
        asc.duplicate(c, -1.0, n)
        asc.muls(c, a, 2.0, count)
        asc.data_copy(zg, c, n)

    partial[1](x, z, n, count)
    np.testing.assert_array_equal(z[:count], x[:count] * 2)
    np.testing.assert_array_equal(z[count:], -1.0)


def test_float16_rounds_after_every_op():
    """(a + b) - b in float16 loses what float16 cannot hold; float32 would give a back."""
    a = np.full(16, 1.0, np.float16)
    b = np.full(16, 2048.0, np.float16)  # ulp(2048) = 2 in float16: 2049 rounds to 2048
    out = np.zeros(16, np.float16)

    @asc.kernel
    def add_sub(a: asc.GlobalAddress, b: asc.GlobalAddress, out: asc.GlobalAddress):
        ag = asc.GlobalTensor()
        bg = asc.GlobalTensor()
        og = asc.GlobalTensor()
        ag.set_global_buffer(a, 16)
        bg.set_global_buffer(b, 16)
        og.set_global_buffer(out, 16)
        ta = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, 16)
        tb = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 32, 16)
        tc = asc.LocalTensor(asc.float16, asc.TPosition.VECOUT, 64, 16)
        asc.data_copy(ta, ag, 16)
        asc.data_copy(tb, bg, 16)
        asc.add(tc, ta, tb, 16)
        asc.sub(tc, tc, tb, 16)
        asc.data_copy(og, tc, 16)

    add_sub[1](a, b, out)
    np.testing.assert_array_equal(out, np.zeros(16, np.float16))
