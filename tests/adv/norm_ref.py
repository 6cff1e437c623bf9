"""NumPy replays of the asc.adv norm/activation algorithms (the instruction sequence the
library issues, in its precision), for bit-exact tests."""
from __future__ import annotations

import numpy as np

from ascendc_py.compiler.ops import REGISTRY

from advmath_ref import vexp   # the vector unit's float32 Exp (libm's, not NumPy's)

F32 = np.float32


def _reduce(op, row):
    return REGISTRY[op].reference(np.zeros(16, row.dtype), row, row.size)[0]


def softmax(x, kv=None, stat_dtype=None):
    """(dst, max, sum) of asc.adv.softmax on x [m, k] (rows of k, the first kv valid):
    float32 steps (float16 widened first), dst rounded once, max/sum in stat_dtype, one
    32-byte block per row."""
    m, k = x.shape
    kv = k if kv is None else kv
    st = np.dtype(stat_dtype or x.dtype)
    blk = 32 // st.itemsize
    xf = x.astype(F32)
    dst = np.empty((m, k), F32)
    mx = np.empty((m, blk), st)
    sm = np.empty((m, blk), st)
    for r in range(m):
        mr = _reduce("reduce_max", xf[r, :kv])
        y = (xf[r] + F32(-mr)).astype(F32)
        e = vexp(y)
        s = _reduce("reduce_sum", e[:kv])
        dst[r] = (e / s).astype(F32)
        mx[r] = st.type(mr)
        sm[r] = st.type(s)
    return dst.astype(x.dtype), mx, sm
