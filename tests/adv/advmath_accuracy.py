"""float64 truths and the error measure of the accuracy tests (and of the README table)."""
from __future__ import annotations

import math

import numpy as np
import torch

TRUTH = {
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh,
    "acosh": np.arccosh, "atanh": np.arctanh, "floor": np.floor, "ceil": np.ceil,
    "round": np.rint, "trunc": np.trunc, "frac": lambda x: x - np.trunc(x), "sign": np.sign,
    "log": np.log, "exp": np.exp,
    "erf": lambda x: torch.special.erf(torch.from_numpy(x)).numpy(),
    "erfc": lambda x: torch.special.erfc(torch.from_numpy(x)).numpy(),
    "lgamma": lambda x: torch.lgamma(torch.from_numpy(x)).numpy(),
    "digamma": lambda x: torch.special.digamma(torch.from_numpy(x)).numpy(),
}
#: accuracy domains: where float32 results are finite and not overflowing
ACC_DOMAIN = {"sin": (-100, 100), "cos": (-100, 100), "tan": (-1.5, 1.5), "asin": (-1, 1),
              "acos": (-1, 1), "atan": (-50, 50), "sinh": (-80, 80), "cosh": (-80, 80),
              "tanh": (-12, 12), "asinh": (-1e4, 1e4), "acosh": (1, 1e4), "atanh": (-0.999, 0.999),
              "log": (1e-3, 1e4), "exp": (-80, 80), "erf": (-6, 6), "erfc": (-4, 9),
              "lgamma": (0.01, 50), "digamma": (0.01, 50), "floor": (-1e3, 1e3),
              "ceil": (-1e3, 1e3), "round": (-1e3, 1e3), "trunc": (-1e3, 1e3),
              "frac": (-1e3, 1e3), "sign": (-10, 10)}


def ulp(v: np.ndarray, dtype) -> np.ndarray:
    """One unit in the last place of |v| in ``dtype`` (normal range; the smallest subnormal
    spacing below it)."""
    fi = np.finfo(dtype)
    e = np.floor(np.log2(np.maximum(np.abs(v), fi.tiny)))
    return np.exp2(e - fi.nmant)


def errors(got: np.ndarray, x: np.ndarray, api: str, dtype):
    """(max error in ulps of dtype, max absolute error, max relative error) of ``got``
    against the float64 truth of ``x``."""
    truth = np.asarray(TRUTH[api](x.astype(np.float64)), np.float64)
    g = got.astype(np.float64)
    fin = np.isfinite(truth) & (np.abs(truth) < float(np.finfo(dtype).max))
    d = np.abs(g[fin] - truth[fin])
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(truth[fin] != 0, d / np.abs(truth[fin]), d)
    return (float(np.max(d / ulp(truth[fin], dtype))), float(np.max(d)), float(np.max(rel)))


def sample(api: str, dtype, n: int, seed: int = 7) -> np.ndarray:
    lo, hi = ACC_DOMAIN[api]
    rng = np.random.default_rng(seed)
    return rng.uniform(lo, hi, n).astype(dtype)
