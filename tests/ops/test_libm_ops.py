"""The vector ``exp`` and ``ln`` ops against the C library's ``expf`` and ``logf``, bit for bit.

float32 ``exp``/``ln`` are ``codegen/vecmath``'s: glibc's algorithms (2.28+, the FMA build
x86_64 hosts run) inlined into the element loops. On such a host (``libm_ref.glibc_fma_expf``)
a kernel's result must be exactly the C library's bits for every input; here on about 4.3
million float32 inputs each (every special and boundary value, dense runs around each bound,
and every 1021st bit pattern) through the instruction's own loop and through a fused loop, and
on all 65536 float16 inputs (computed in float32 and rounded once to float16). The exhaustive
check over all 2^32 float32 inputs is ``check_libm_exhaustive.py`` (a minute per op; not run
here). Other hosts' libm is another implementation: there the kernels still compute these
algorithms (the tables and special results are checked everywhere) and the libm comparisons
are skipped.
"""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
from decimal import Decimal, getcontext

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler.codegen import vecmath
import libm_ref

TILE = 8192
BLOCKS = 8
HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]

LIBM = {"exp": "expf", "ln": "logf"}

needs_glibc_fma = pytest.mark.skipif(
    not libm_ref.glibc_fma_expf(),
    reason="this host's libm is not glibc >= 2.28's FMA build (the ops compute that algorithm)")


@asc.kernel
def math_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, share: int,
                TILE: asc.ConstExpr[int], OP: asc.ConstExpr[str], FUSED: asc.ConstExpr[bool]):
    """z = OP(x) over this block's ``share`` elements (a multiple of TILE); FUSED: followed by
    a multiplication by 1 (exact), which makes the two a fused run."""
    off = asc.get_block_idx() * share
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x + off, share)
    zg.set_global_buffer(z + off, share)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, TILE)
    c = asc.LocalTensor(x.dtype, asc.TPosition.VECOUT, TILE * 4, TILE)
    p = 0
    while p < share:
        asc.data_copy(a, xg[p:], TILE)
        asc.set_flag(asc.HardEvent.MTE2_V, 0)
        asc.wait_flag(asc.HardEvent.MTE2_V, 0)
        if OP == "exp":
            asc.exp(c, a, TILE)
        else:
            asc.ln(c, a, TILE)
        if FUSED:
            asc.muls(c, c, 1.0, TILE)
        asc.set_flag(asc.HardEvent.V_MTE3, 0)
        asc.wait_flag(asc.HardEvent.V_MTE3, 0)
        asc.data_copy(zg[p:], c, TILE)
        asc.set_flag(asc.HardEvent.MTE3_MTE2, 0)
        asc.wait_flag(asc.HardEvent.MTE3_MTE2, 0)
        p += TILE


def kernel_op(op: str, x: np.ndarray, fused: bool = False):
    """``op`` of ``x`` (float32 or float16) through ``math_kernel``, padded to whole tiles:
    (result, the launch's report)."""
    per = TILE * BLOCKS
    n = -(-x.size // per) * per
    xp = np.zeros(n, x.dtype)
    xp[:x.size] = x
    z = np.empty_like(xp)
    report = math_kernel[BLOCKS](xp, z, n // BLOCKS, TILE, op, fused)
    return z[:x.size], report


def kernel_exp(x: np.ndarray, fused: bool = False) -> np.ndarray:
    return kernel_op("exp", x, fused)[0]


def _bits(f: float) -> int:
    return int(np.array([f], np.float32).view(np.uint32)[0])


SPECIAL_BITS = [0x00000000, 0x80000000, 0x7F800000, 0xFF800000,      # ±0, ±inf
                0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800001,      # quiet/signalling NaNs
                0x7FBFFFFF, 0xFFFFFFFF, 0x7FC12345, 0xFF812345,      # NaN payloads
                0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF,      # subnormals
                0x00800000, 0x80800000, 0x7F7FFFFF, 0xFF7FFFFF,      # FLT_MIN, FLT_MAX
                0x3F800000, 0xBF800000]


def _runs(centres, half: int = 4096) -> list:
    return [np.arange(-half, half + 1, dtype=np.int64) + _bits(c) for c in centres]


def _unique_bits(runs) -> np.ndarray:
    out = np.concatenate([np.array(SPECIAL_BITS, np.int64)] + runs) % (1 << 32)
    return np.unique(out).astype(np.uint32)


def exp_boundary_bits() -> np.ndarray:
    """Bit patterns of every special input and of dense runs around each bound of expf."""
    centres = [vecmath.OVERFLOW_BOUND, vecmath.UNDERFLOW_BOUND, vecmath.MAY_UNDERFLOW_BOUND,
               88.0, -88.0,                                 # glibc's slow-path test |x| >= 88
               float(np.log(np.float64(2.0) ** -126)),      # results turn subnormal
               float(np.log(np.float64(2.0) ** -149)), float(np.log(np.float64(2.0) ** -150)),
               2.0 ** -24, -(2.0 ** -24), 2.0 ** -25, -(2.0 ** -25),   # exp rounds to 1
               0.5 * np.log(2.0) / 32, -0.5 * np.log(2.0) / 32]        # table index steps
    runs = _runs(centres)
    # every 7th input whose result is subnormal or just above (the bits of [-104, -87])
    runs.append(np.arange(_bits(-87.0), _bits(-104.0) + 1, 7, dtype=np.int64))
    return _unique_bits(runs)


def ln_boundary_bits() -> np.ndarray:
    """Bit patterns of every special input and of dense runs around logf's boundaries: 1, the
    edges of its 16 table parts (significand 0x1.66p-1 * (1 + j/16)... in bits 0x3f330000 +
    j << 19) at three exponents, the subnormal/normal edge, and every 61st subnormal."""
    edges = [0x3F330000 + (j << 19) + (e << 23) for j in range(17) for e in (-1, 0, 5)]
    runs = _runs([1.0, float(np.float32(2.0 ** -126))])
    runs += [np.arange(-512, 513, dtype=np.int64) + e for e in edges]
    runs.append(np.arange(1, 0x800000, 61, dtype=np.int64))
    return _unique_bits(runs)


BOUNDARY_BITS = {"exp": exp_boundary_bits, "ln": ln_boundary_bits}


def test_table_is_two_to_the_j_over_32():
    """T[j] + (j << 47) is 2^(j/32) rounded to the nearest double (checked with 60 digits)."""
    getcontext().prec = 60
    for j, entry in enumerate(vecmath.exp_table()):
        value = np.array([entry + (j << 47)], np.uint64).view(np.float64)[0]
        exact = Decimal(2) ** (Decimal(j) / 32)
        err = abs(Decimal(float(value)) - exact)
        ulp = Decimal(np.spacing(value))
        assert err <= ulp / 2, j
        # no double lies closer
        assert abs(Decimal(float(np.nextafter(value, 3.0))) - exact) > err
        assert abs(Decimal(float(np.nextafter(value, 0.0))) - exact) > err


def test_exp_special_values_everywhere():
    """The special results do not depend on the host's libm."""
    nan_in = np.array([0x7FC00000, 0xFF800001, 0x7F812345], np.uint32).view(np.float32)
    x = np.concatenate([np.array([-np.inf, np.inf, 0.0, -0.0, 89.0, -104.0, -103.5, 1.0],
                                 np.float32), nan_in])
    z = kernel_exp(x)
    assert z[0] == 0 and not np.signbit(z[0])
    assert z[1] == np.inf and z[2] == 1.0 and z[3] == 1.0 and z[4] == np.inf
    assert z[5] == 0 and not np.signbit(z[5])
    assert z[6] == np.float32(2.0 ** -149)
    assert abs(float(z[7]) - np.e) <= float(np.spacing(np.float32(np.e)))
    # NaN in: the same NaN, quieted (x + x)
    assert list(z[8:].view(np.uint32)) == [0x7FC00000, 0xFFC00001, 0x7FC12345]


def test_ln_special_values_everywhere():
    """The special results do not depend on the host's libm."""
    x = np.array([0.0, -0.0, np.inf, -np.inf, -1.0, 1.0, np.nan, 2.0 ** -149], np.float32)
    for fused in (False, True):
        z = kernel_op("ln", x, fused)[0]
        assert list(z[:6].view(np.uint32)) == [0xFF800000, 0xFF800000, 0x7F800000,
                                               0xFFC00000, 0xFFC00000, 0x00000000]
        assert z[6].view(np.uint32) == np.array(np.nan, np.float32).view(np.uint32)
        assert abs(float(z[7]) - (-149 * np.log(2.0))) < 1e-5


@needs_glibc_fma
@pytest.mark.parametrize("fused", [False, True], ids=["own-loop", "fused-loop"])
@pytest.mark.parametrize("op", ["exp", "ln"])
def test_float32_equals_libm(op, fused):
    bits = np.concatenate([BOUNDARY_BITS[op](),
                           np.arange(0, 1 << 32, 1021, dtype=np.uint64).astype(np.uint32)])
    x = bits.view(np.float32)
    assert x.size > 4_000_000
    ours = kernel_op(op, x, fused)[0].view(np.uint32)
    ref = libm_ref.apply(libm_ref.libm_function(LIBM[op]), x).view(np.uint32)
    bad = np.flatnonzero(ours != ref)
    assert bad.size == 0, [f"x=0x{bits[i]:08x}: ours 0x{ours[i]:08x}, {LIBM[op]} "
                           f"0x{ref[i]:08x}" for i in bad[:10]]


@needs_glibc_fma
@pytest.mark.parametrize("op", ["exp", "ln"])
def test_float16_is_libm_rounded_once(op):
    """float16: the float32 function of the widened input, rounded to float16 (all inputs)."""
    x = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    ours = kernel_op(op, x)[0]
    ref = libm_ref.apply(libm_ref.libm_function(LIBM[op]), x.astype(np.float32))
    with np.errstate(over="ignore"):
        ref16 = ref.astype(np.float16)
    nan = np.isnan(ref16)
    assert np.array_equal(np.isnan(ours), nan)
    bad = np.flatnonzero(ours.view(np.uint16)[~nan] != ref16.view(np.uint16)[~nan])
    assert bad.size == 0, bad[:10]


LN_SCRIPT = """
import json
import numpy as np
import test_libm_ops as t
x = np.array([float.fromhex(v) for v in %r], np.float32)
z, report = t.kernel_op("ln", x, fused=True)
print(json.dumps({"origin": report.code_origin, "bits": [int(v) for v in z.view(np.uint32)]}))
"""


def test_fused_ln_of_negative_numbers_is_the_default_nan_in_a_later_process_too():
    """Regression: a fused ``ln`` called ``logf`` from the kernel's own shared object, linked
    without symbol versions, so a later process, which loads the kernel from that object,
    bound ``logf@GLIBC_2.2.5`` and returned +NaN (0x7fc00000) for negative inputs, where the
    process that compiled it (MCJIT) and the unfused ``ln`` returned the default NaN
    (0xffc00000). Now no libm call is left: the same bits either way."""
    from ascendc_py.compiler import jit
    from ascendc_py.compiler.cachedir import cache_dir
    values = [-1.0, -float("inf"), -(2.0 ** -149), -3.0e38]
    x = np.array(values, np.float32)
    here = kernel_op("ln", x, fused=True)[0]
    unfused = kernel_op("ln", x, fused=False)[0]
    jit.wait_for_links()            # the kernel's and the library's shared objects are written
    env = dict(os.environ, ASCENDC_PY_CACHE_DIR=str(cache_dir()),
               PYTHONPATH=os.pathsep.join([str(REPO), str(HERE)]))
    script = LN_SCRIPT % ([float(v).hex() for v in values],)
    proc = subprocess.run([sys.executable, "-c", script], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    later = json.loads(proc.stdout.strip().splitlines()[-1])
    assert later["origin"] == "disk"
    assert later["bits"] == [0xFFC00000] * 4
    for z in (here, unfused):
        assert list(z.view(np.uint32)) == [0xFFC00000] * 4
