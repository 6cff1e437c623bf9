"""Native-loop references for ``make bench``: the same arithmetic as our kernels, in numba.

Issue 14 measures our kernels against the best native CPU loop of the same work. For each case
there is a serial ``@njit`` loop and a ``@njit(parallel=True)`` one (``prange`` over the outer
axis); ``best()`` times both once and keeps the faster (on a 2-vCPU machine the parallel one can
be the slower by far, so neither is assumed). Every loop computes in the inputs' dtype in the
kernels' order: sepia ``(R*cr + G*cg) + B*cb`` per output channel, vadd ``x + y``, and
``silu(a) * b`` as ``a / (1 + exp(-a)) * b``.

numba is an optional benchmark dependency (the ``bench`` extra; ``make bench`` installs it);
without it ``available()`` is False and the bench says so instead of printing a numba column.
"""
from __future__ import annotations

import time
from typing import Callable, Optional

import numpy as np

try:
    import numba
except ImportError:      # optional: the bench prints a note instead
    numba = None


def available() -> bool:
    """Whether numba could be imported."""
    return numba is not None


def missing_note() -> str:
    return ("numba references: skipped, numba is not installed "
            "(pip install -e '.[bench]' or make bench installs it)")


def best(make_call: Callable[[str], Callable[[], object]], tries: int = 5) -> tuple[str, Callable]:
    """Of the variants ``make_call(name)`` returns a zero-argument call for, the faster one
    (median of ``tries`` calls after a warm-up call that compiles it): (name, call)."""
    timings = {}
    calls = {}
    for name in ("njit", "njit(parallel)"):
        call = make_call(name)
        call()                                    # compile, not timed
        samples = []
        for _ in range(tries):
            t0 = time.perf_counter()
            call()
            samples.append(time.perf_counter() - t0)
        timings[name] = float(np.median(samples))
        calls[name] = call
    name = min(timings, key=timings.get)
    return name, calls[name]


# numba cannot take ``range``/``prange`` as values: each loop's source is compiled twice
def _factory(body: str, name: str) -> dict:
    """Serial and parallel njit functions from one loop source whose outer loop is
    ``for ... in LOOP(...)``."""
    if numba is None:
        return {}
    out = {}
    for label, loop, kwargs in (("njit", "range", {}),
                                ("njit(parallel)", "numba.prange", {"parallel": True})):
        scope = {"np": np, "numba": numba}
        exec(body.replace("LOOP", loop), scope)        # noqa: S102 - our own fixed source
        out[label] = numba.njit(**kwargs)(scope[name])
    return out


_SEPIA_SRC = '''
def sepia(img, coefs, out):
    n, _, h, w = img.shape
    for b in LOOP(n):
        for i in range(h):
            for j in range(w):
                r = img[b, 0, i, j]
                g = img[b, 1, i, j]
                bl = img[b, 2, i, j]
                for o in range(3):
                    out[b, o, i, j] = (r * coefs[o, 0] + g * coefs[o, 1]) + bl * coefs[o, 2]
'''

_VADD_SRC = '''
def vadd(x, y, out):
    n = x.shape[0]
    chunk = 65536
    for c in LOOP((n + chunk - 1) // chunk):
        for i in range(c * chunk, min(n, (c + 1) * chunk)):
            out[i] = x[i] + y[i]
'''

_SILU_MUL_SRC = '''
def silu_mul(a, b, out):
    rows, cols = a.shape
    one = np.float32(1.0)
    for r in LOOP(rows):
        for c in range(cols):
            v = a[r, c]
            out[r, c] = v / (one + np.exp(-v)) * b[r, c]
'''

SEPIA = _factory(_SEPIA_SRC, "sepia")
VADD = _factory(_VADD_SRC, "vadd")
SILU_MUL = _factory(_SILU_MUL_SRC, "silu_mul")


def _allocating(fn: Callable, *inputs) -> Callable[[], np.ndarray]:
    """A call that allocates the output like the first input, runs ``fn(*inputs, out)`` and
    returns ``out`` (what ``x + y`` in numpy and torch do)."""
    def call():
        out = np.empty_like(inputs[0])
        fn(*inputs, out)
        return out
    return call


def sepia_call(img: np.ndarray, coefs) -> Optional[tuple[str, Callable]]:
    """(variant, call) of the faster numba sepia over ``img`` (N, 3, H, W); the call allocates
    its output as the other implementations do. None without numba."""
    if not SEPIA:
        return None
    c = np.asarray(coefs, dtype=img.dtype)
    return best(lambda v: _allocating(SEPIA[v], img, c))


def vadd_call(x: np.ndarray, y: np.ndarray) -> Optional[tuple[str, Callable]]:
    """(variant, call) of the faster numba ``x + y``; None without numba."""
    if not VADD:
        return None
    return best(lambda v: _allocating(VADD[v], x, y))


def silu_mul_call(a: np.ndarray, b: np.ndarray) -> Optional[tuple[str, Callable]]:
    """(variant, call) of the faster numba ``silu(a) * b`` on 2-D float32; None without numba."""
    if not SILU_MUL:
        return None
    return best(lambda v: _allocating(SILU_MUL[v], a, b))
