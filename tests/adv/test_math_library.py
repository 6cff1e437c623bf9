"""The math functions as library code: the names pyasc has, the instructions they issue (the
timing model prices them, the report counts them), and a changed library helper recompiles
the kernels that use it."""
from __future__ import annotations

import numpy as np

import ascendc_py as asc
from ascendc_py.advlib import hyperbolic
from ascendc_py.advlib.math import MATH_APIS

from kernels_advmath import unary_kernel

PYASC_MATH = ("acos", "acosh", "asin", "asinh", "atan", "atanh", "ceil", "cos", "cosh",
              "digamma", "erf", "erfc", "exp", "floor", "frac", "lgamma", "log", "round", "sign",
              "sin", "sinh", "tan", "tanh", "trunc", "power", "xor", "axpy")


def test_every_pyasc_math_name_is_a_kernel_function():
    assert sorted(MATH_APIS) == sorted(PYASC_MATH) == sorted(asc.adv.MATH_APIS)
    for name in PYASC_MATH:
        fn = getattr(asc.adv, name)
        assert isinstance(fn, asc.Kernel), name
        assert fn.fn.__doc__, name


def test_pyasc_layout_reaches_them():
    from ascendc_py import pyasc_compat
    with pyasc_compat.install():
        import asc
        import asc.language.adv as adv
        assert asc.adv.tanh is tanh_of_ascendc_py() and adv.erf is asc.adv.erf


def tanh_of_ascendc_py():
    return asc.adv.tanh


def test_cycles_grow_with_chunks_and_instructions_are_vector_ones():
    """A smaller temporary buffer means more chunks: more instructions, more cycles, all on
    the vector pipe (the report counts each instruction the library issued)."""
    x = np.linspace(-3, 3, 1024).astype(np.float32)
    k = unary_kernel("tanh")
    z = np.zeros_like(x)
    one_chunk = k[1](x, z, 1024, 1024, 7 * 4 * 1024)
    many = k[1](x, z, 1024, 1024, 7 * 256)              # 16 chunks of 64 elements
    assert sum(many.instructions.values()) > sum(one_chunk.instructions.values())
    assert many.instructions["exp"] == 16 and one_chunk.instructions["exp"] == 1
    assert many.instructions["select"] == 2 * 16
    assert many.kernel_cycles > one_chunk.kernel_cycles
    assert one_chunk.pipe_busy["V"] > 0


@asc.kernel
def _double_body(out, x, t, m, mc, chunk, arg):
    asc.muls(out, x, 2.0, m)


def test_a_changed_library_helper_is_recompiled(monkeypatch):
    """asc.adv.tanh reaches hyperbolic._tanh_body through module attributes: replacing the
    helper changes what the kernel runs (and restoring it brings the old code back)."""
    x = np.linspace(-2, 2, 1024).astype(np.float32)
    k = unary_kernel("tanh")
    z = np.zeros_like(x)
    k[1](x, z, 1024, 1024, 4096)
    np.testing.assert_allclose(z, np.tanh(x), rtol=1e-6, atol=1e-7)
    monkeypatch.setattr(hyperbolic, "_tanh_body", _double_body)
    k[1](x, z, 1024, 1024, 4096)
    np.testing.assert_array_equal(z, 2 * x)
    monkeypatch.undo()
    k[1](x, z, 1024, 1024, 4096)
    np.testing.assert_allclose(z, np.tanh(x), rtol=1e-6, atol=1e-7)


def test_the_library_loads_on_first_use():
    """`import ascendc_py` does not import the library's kernel modules (their import cost; the
    package itself holds the plain Matmul config records, imported by asc.adv); asc.adv.<api>
    does."""
    import subprocess
    import sys
    code = ("import sys, ascendc_py as asc; "
            "assert not [m for m in sys.modules if m.startswith('ascendc_py.advlib.') and "
            "m != 'ascendc_py.advlib.matmul_config']; "
            "f = asc.adv.tanh; assert 'ascendc_py.advlib.special' in sys.modules; "
            "assert asc.adv.erf.fn.__module__ == 'ascendc_py.advlib.special'; "
            "assert 'lgamma' in dir(asc.adv)")
    subprocess.run([sys.executable, "-c", code], check=True)
