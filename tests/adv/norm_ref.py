"""NumPy replays of the asc.adv norm/activation algorithms (the instruction sequence the
library issues, in its precision), for bit-exact tests."""
from __future__ import annotations

import numpy as np

from ascendc_py.compiler.ops import REGISTRY

from advmath_ref import vexp, vln   # the vector unit's float32 Exp, Ln (libm's)

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


def rmsnorm(x, gamma, eps, hv=None):
    """dst of asc.adv.rmsnorm on x [rows, h] (the first hv of a row valid): float32 steps
    (float16 widened first): x*x, ReduceSum, times float32(1/hv), + eps, Sqrt, x / it, * gamma,
    dst rounded once."""
    m, h = x.shape
    hv = h if hv is None else hv
    xf = x.astype(F32)
    g = gamma.astype(F32)
    r_h = F32(1.0) / F32(hv)
    out = np.empty((m, h), F32)
    for r in range(m):
        sq = (xf[r] * xf[r]).astype(F32)
        s = _reduce("reduce_sum", sq[:hv])
        w = np.sqrt(F32(s) * r_h + F32(eps), dtype=F32)
        out[r] = ((xf[r] / w).astype(F32) * g).astype(F32)
    return out.astype(x.dtype)


def layernorm(x, gamma, beta, eps, hv=None):
    """(output, mean, variance) of asc.adv.layernorm on x [rows, h] (the first hv of a row
    valid), the documented steps in float32: mean = ReduceSum(x * (1/hv)), d = x - mean,
    variance = ReduceSum(d * d * (1/hv)), rstd = Exp(Ln(variance + eps) * -0.5),
    out = d * rstd * gamma + beta; float16 widened first, results rounded once."""
    m, h = x.shape
    hv = h if hv is None else hv
    xf = x.astype(F32)
    g = gamma.astype(F32)
    b = beta.astype(F32)
    inv = F32(1.0) / F32(hv)
    out = np.empty((m, h), F32)
    mean = np.empty(m, F32)
    var = np.empty(m, F32)
    for r in range(m):
        mean[r] = _reduce("reduce_sum", (xf[r] * inv).astype(F32)[:hv])
        d = (xf[r] + F32(-mean[r])).astype(F32)
        sq = ((d * d).astype(F32) * inv).astype(F32)
        var[r] = _reduce("reduce_sum", sq[:hv])
        w = np.full(h, var[r], F32) + F32(eps)
        rstd = vexp((vln(w) * F32(-0.5)).astype(F32))
        out[r] = ((((d * rstd).astype(F32)) * g).astype(F32) + b).astype(F32)
    return out.astype(x.dtype), mean.astype(x.dtype), var.astype(x.dtype)


def _sig_div(x, e):
    """x / (1 + e) in float32 (Adds then Div)."""
    return (x / (e + F32(1.0)).astype(F32)).astype(F32)


def activation(api, x, y=None, beta=1.0):
    """asc.adv.<api> replayed: the library's instruction order in float32 (float16 widened
    first, rounded once)."""
    xf = x.astype(F32)
    if api == "gelu":
        t = ((xf * xf).astype(F32) * xf).astype(F32)
        t = ((t * F32(0.044715)).astype(F32) + xf).astype(F32)
        out = _sig_div(xf, vexp((t * F32(-1.59576912)).astype(F32)))
    elif api == "faster_gelu":
        out = _sig_div(xf, vexp((xf * F32(-1.702)).astype(F32)))
    elif api == "silu":
        out = _sig_div(xf, vexp((xf * F32(-1.0)).astype(F32)))
    elif api == "swiglu":
        yf = y.astype(F32)
        sw = _sig_div(yf, vexp((yf * F32(-beta)).astype(F32)))
        out = (xf * sw).astype(F32)
    elif api == "geglu":
        yf = y.astype(F32)
        t = ((yf * yf).astype(F32) * yf).astype(F32)
        t = (t + (yf * F32(22.363860002236)).astype(F32)).astype(F32)
        g = _sig_div(yf, vexp((t * F32(-0.0713548162726)).astype(F32)))
        out = (xf * g).astype(F32)
    else:
        raise ValueError(api)
    return out.astype(x.dtype)
