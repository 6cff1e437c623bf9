"""Golden-value testing for kernel authors (``asc.testing``).

Compare a kernel's output with a golden (reference) result under tolerances that depend on the
output's dtype, and get a report that says how far off it is and where::

    import ascendc_py as asc
    cmp = asc.testing.compare(z, x + y)          # -> Comparison (never raises on mismatch)
    print(cmp)                                   # PASSED/FAILED, rule, max errors, worst index
    asc.testing.assert_close(z, x + y)           # raises AssertionError with that text
    asc.testing.check_kernel(run, golden, x, y)  # golden(x, y) vs run(x, y)

Inputs may be numpy arrays, anything ``numpy.asarray`` accepts, or torch CPU tensors (torch is
only imported when a torch tensor is passed; bfloat16 tensors are widened to float32 exactly).

Definitions (for every element i, computed in float64 from the actual value a and golden g):

* absolute error ``abs_err = |a - g|``;
* relative error ``rel_err = |a - g| / max(|g|, tiny)``, where ``tiny`` is the smallest normal
  number of the comparison dtype (``numpy.finfo(dtype).tiny``; 1 for integers);
* the element *matches* when ``abs_err <= atol`` or ``rel_err <= rtol``. ``atol`` is what keeps
  golden values at or near zero from failing on a relative error that means nothing there;
* NaN matches only NaN (NaN == NaN counts as equal), +inf only +inf and -inf only -inf; a NaN or
  infinity mismatch counts as an infinite error.

Rules, chosen by the comparison dtype (``dtype=`` or else the *actual* array's dtype):

==========  =====================================================  ======  ======
dtype       pass condition                                          rtol    atol
==========  =====================================================  ======  ======
float16     Ascend precision rule: fraction of non-matching         1e-3    1e-5
            elements < 1e-3 (i.e. rel_err > 1e-3 on fewer than
            0.1 % of elements; CANN's "double thousandth" check)
bfloat16    every element matches (torch.testing's bf16 values)    1.6e-2  1e-5
float32     every element matches                                   1e-5    1e-5
float64     every element matches                                   1e-7    1e-12
int*, bool  exact equality (unless rtol/atol are given)             0       0
==========  =====================================================  ======  ======

``rtol``/``atol`` override the defaults; ``fraction=`` overrides the allowed fraction of
non-matching elements (0 = every element must match; 1e-3 is the float16 default). The fp16 rule
tolerates up to 0.1 % of elements being wrong by any amount (except NaN/inf positions, which must
always agree): read ``max_abs_err`` and ``mismatch_fraction`` too. For float16 kernels, compute
the golden in the same dtype and operation order when you can (numpy float16 also rounds after
every operation, as the vector unit does), or pass a wider ``rtol``.
"""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

__all__ = ["Comparison", "compare", "assert_close", "check_kernel", "float16_golden",
           "DEFAULT_TOLERANCES"]

#: mismatching index ranges a Comparison keeps and prints (the count of all is kept too)
MAX_RANGES = 8

#: Default (rtol, atol, allowed mismatch fraction) per comparison dtype name.
DEFAULT_TOLERANCES: dict[str, tuple[float, float, float]] = {
    "float16": (1e-3, 1e-5, 1e-3),
    "bfloat16": (1.6e-2, 1e-5, 0.0),
    "float32": (1e-5, 1e-5, 0.0),
    "float64": (1e-7, 1e-12, 0.0),
}

_ALIASES = {"half": "float16", "fp16": "float16", "float": "float32", "float_": "float32",
            "fp32": "float32", "double": "float64", "fp64": "float64", "bf16": "bfloat16",
            "bool_": "bool"}
_INTEGER_NAMES = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool"}


@dataclass(frozen=True)
class Comparison:
    """The result of comparing an actual array with a golden one.

    ``passed`` tells whether ``rule`` was met; ``worst_index`` is the index (a tuple, ``()`` for
    0-d arrays, None when nothing was compared) of the element that is furthest outside its
    tolerance (or nearest to it when all match). ``bool(cmp)`` is ``cmp.passed``.
    """

    passed: bool
    max_abs_err: float
    max_rel_err: float
    worst_index: Optional[tuple[int, ...]]
    mismatch_fraction: float
    rule: str
    dtype: str
    shape: tuple[int, ...] = ()
    mismatches: int = 0
    size: int = 0
    actual_at_worst: Optional[float] = None
    golden_at_worst: Optional[float] = None
    #: the first runs of consecutive mismatching elements, as [start, stop) flat indices
    mismatch_ranges: tuple[tuple[int, int], ...] = ()
    mismatch_runs: int = 0             #: how many such runs there are in all

    def __bool__(self) -> bool:
        return self.passed

    def __repr__(self) -> str:
        """One readable line (what ``assert cmp`` shows under pytest, which keeps reprs short
        and on one line); ``str(cmp)`` is the full report."""
        head = f"<{'PASSED' if self.passed else 'FAILED'} {self.dtype} {self.shape}"
        if self.worst_index is None:
            return head + (">" if self.passed else f": {self.rule}>")
        if not self.mismatches:
            return head + f": max abs err {self.max_abs_err:.3g}>"
        return (head + f": {self.ranges_text()} ({self.mismatches} of {self.size}); worst "
                f"{self.worst_index}: {self.actual_at_worst!r} vs golden "
                f"{self.golden_at_worst!r}; max abs err {self.max_abs_err:.3g}>")

    def ranges_text(self) -> str:
        """``elements [768, 1000) mismatch``: the mismatching runs (flat, row-major indices
        for arrays of more than one dimension)."""
        if not self.mismatch_ranges:
            return ""
        flat = "flat " if len(self.shape) > 1 else ""
        runs = ", ".join(f"[{a}, {b})" if b - a > 1 else f"{a}" for a, b in self.mismatch_ranges)
        more = self.mismatch_runs - len(self.mismatch_ranges)
        return (f"{flat}element{'s' if self.mismatches > 1 else ''} {runs}"
                + (f" and {more} more run(s)" if more > 0 else "") + " mismatch")

    def __str__(self) -> str:
        head = "PASSED" if self.passed else "FAILED"
        lines = [f"{head}: {self.dtype} comparison, shape {self.shape}", f"  rule: {self.rule}"]
        if self.worst_index is None and not self.passed:
            return "\n".join(lines)
        pct = 100.0 * self.mismatch_fraction
        lines.append(f"  mismatched elements: {self.mismatches} of {self.size} ({pct:.4g} %)")
        if self.mismatch_ranges:
            lines.append(f"  {self.ranges_text()}")
        lines.append(f"  max abs error: {self.max_abs_err:.6g}   max rel error: "
                     f"{self.max_rel_err:.6g}")
        if self.worst_index is not None:
            lines.append(f"  worst element {self.worst_index}: actual {self.actual_at_worst!r}, "
                         f"golden {self.golden_at_worst!r}")
        return "\n".join(lines)


def _dtype_name(dtype: Any) -> str:
    """Normalise a dtype given as str, numpy dtype, torch dtype or DSL dtype to a name."""
    if isinstance(dtype, str):
        name = dtype
    elif isinstance(dtype, np.dtype) or (isinstance(dtype, type) and issubclass(dtype, np.generic)):
        name = np.dtype(dtype).name
    else:
        name = getattr(dtype, "name", None)
        if not isinstance(name, str):
            name = str(dtype)
    name = name.lower().removeprefix("torch.").removeprefix("asc.")
    name = _ALIASES.get(name, name)
    if name not in DEFAULT_TOLERANCES and name not in _INTEGER_NAMES:
        raise ValueError(f"unsupported dtype {dtype!r} for comparison; known: "
                         f"{sorted(DEFAULT_TOLERANCES) + sorted(_INTEGER_NAMES)}")
    return name


def _to_numpy(x: Any) -> tuple[np.ndarray, str]:
    """(array, dtype name) for a numpy array, array-like or torch tensor.

    torch is never imported here: a torch tensor can only exist if its caller imported torch.
    """
    _reject_report(x)
    torch = sys.modules.get("torch")  # a torch tensor implies torch is already imported
    if torch is not None and isinstance(x, torch.Tensor):
        t = x.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        name = _dtype_name(t.dtype)
        if t.dtype == torch.bfloat16:
            t = t.to(torch.float32)  # exact: bfloat16 is a truncated float32
        return t.resolve_conj().resolve_neg().numpy(), name
    arr = np.asarray(x)
    if arr.dtype.name == "bfloat16":  # e.g. ml_dtypes arrays
        return arr.astype(np.float32), "bfloat16"
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"cannot compare arrays of dtype {arr.dtype} (need bool, int or float)")
    return arr, _dtype_name(arr.dtype)


def _reject_report(x: Any) -> None:
    """A launch's Report where an array was expected: the launcher returned what
    ``kernel[n](...)`` returns instead of the output it wrote."""
    report_mod = sys.modules.get("ascendc_py.simulator.report")
    if report_mod is not None and isinstance(x, report_mod.Report):
        raise TypeError(
            f"got the launch Report of {x.kernel}[{x.block_dim}], not an array: a launch "
            "kernel[n](...) returns its Report and writes its outputs into the arrays you "
            "passed; return that output array from your launcher (for example "
            "'k[8](x, z); return z')")


def _runs(bad: np.ndarray) -> tuple[tuple[tuple[int, int], ...], int]:
    """The first MAX_RANGES runs of True in the flat mask ``bad`` as [start, stop), and how
    many runs there are."""
    flat = bad.reshape(-1).astype(np.int8)
    edges = np.flatnonzero(np.diff(np.concatenate(([0], flat, [0]))))
    starts, stops = edges[0::2], edges[1::2]
    return tuple((int(a), int(b)) for a, b in zip(starts[:MAX_RANGES], stops[:MAX_RANGES])), \
        int(len(starts))


def _fmt(x: float) -> str:
    return f"{x:g}"


def compare(actual: Any, golden: Any, *, dtype: Any = None, rtol: Optional[float] = None,
            atol: Optional[float] = None, fraction: Optional[float] = None) -> Comparison:
    """Compare ``actual`` with ``golden`` under the dtype's rule (see the module docstring).

    ``dtype`` selects the rule (default: the actual array's dtype); ``rtol``, ``atol`` and
    ``fraction`` (allowed fraction of non-matching elements) override its defaults. Never raises
    on a mismatch: read ``.passed`` or use ``assert_close``. Shapes must be equal.
    """
    a_arr, a_name = _to_numpy(actual)
    g_arr, _ = _to_numpy(golden)
    name = _dtype_name(dtype) if dtype is not None else a_name
    if a_arr.shape != g_arr.shape:
        return Comparison(passed=False, max_abs_err=math.inf, max_rel_err=math.inf,
                          worst_index=None, mismatch_fraction=1.0, dtype=name,
                          shape=tuple(a_arr.shape), size=int(a_arr.size),
                          rule=f"shapes differ: actual {tuple(a_arr.shape)} vs golden "
                               f"{tuple(g_arr.shape)}")

    integer = name in _INTEGER_NAMES
    d_rtol, d_atol, d_frac = (0.0, 0.0, 0.0) if integer else DEFAULT_TOLERANCES[name]
    rtol = d_rtol if rtol is None else float(rtol)
    atol = d_atol if atol is None else float(atol)
    exact = integer and rtol == 0 and atol == 0  # integers with explicit tolerances use them
    frac = d_frac if fraction is None else float(fraction)
    if rtol < 0 or atol < 0 or not 0.0 <= frac <= 1.0:
        raise ValueError(f"need rtol >= 0, atol >= 0 and 0 <= fraction <= 1; got "
                         f"rtol={rtol}, atol={atol}, fraction={frac}")
    tiny = 1.0 if integer else float(np.finfo(np.float32 if name == "bfloat16" else name).tiny)

    a = a_arr.astype(np.float64)
    g = g_arr.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        finite = np.isfinite(a) & np.isfinite(g)
        both_nan = np.isnan(a) & np.isnan(g)
        special_ok = both_nan | (~finite & (a == g))  # NaN==NaN, +inf==+inf, -inf==-inf
        abs_err = np.where(finite, np.abs(a - g), np.where(special_ok, 0.0, np.inf))
        rel_err = np.where(finite, abs_err / np.maximum(np.abs(g), tiny), abs_err)
    if exact:
        # exact comparison in the original integer types (float64 loses int64 precision)
        ok = (np.asarray(a_arr) == np.asarray(g_arr)) if a_arr.dtype.kind in "biu" and \
            g_arr.dtype.kind in "biu" else (abs_err == 0)
        score = np.where(ok, 0.0, np.maximum(abs_err, np.finfo(np.float64).tiny))
    else:
        ok = (abs_err <= atol) | (rel_err <= rtol)
        tol = np.maximum(atol, rtol * np.maximum(np.abs(g), tiny))
        with np.errstate(divide="ignore", invalid="ignore"):
            score = np.where(tol > 0, abs_err / tol, np.where(abs_err > 0, np.inf, 0.0))
    ok = np.asarray(ok, dtype=bool)
    n = int(a.size)
    bad = int(n - np.count_nonzero(ok))
    mismatch_fraction = bad / n if n else 0.0
    passed = bad == 0 or (frac > 0 and mismatch_fraction < frac)

    if exact:
        rule = f"{name}: exact equality"
    elif frac > 0:
        rule = (f"{name}: fraction of elements with |a-g| > max(atol={_fmt(atol)}, "
                f"rtol={_fmt(rtol)}*|g|) must be < {_fmt(frac)}")
        if name == "float16" and fraction is None and rtol == 1e-3:
            rule += " (Ascend float16 precision rule)"
    else:
        rule = (f"{name}: every element within max(atol={_fmt(atol)}, rtol={_fmt(rtol)}*|g|)")
    if not exact:
        rule += "; NaN and inf positions must match"

    if n == 0:
        return Comparison(passed=True, max_abs_err=0.0, max_rel_err=0.0, worst_index=None,
                          mismatch_fraction=0.0, rule=rule, dtype=name, shape=tuple(a.shape))
    flat = int(np.argmax(score))
    worst = tuple(int(i) for i in np.unravel_index(flat, a.shape))
    ranges, runs = _runs(~ok) if bad else ((), 0)
    return Comparison(
        passed=bool(passed), max_abs_err=float(abs_err.max()), max_rel_err=float(rel_err.max()),
        worst_index=worst, mismatch_fraction=float(mismatch_fraction), rule=rule, dtype=name,
        shape=tuple(a.shape), mismatches=bad, size=n,
        actual_at_worst=a_arr.reshape(-1)[flat].item(),
        golden_at_worst=g_arr.reshape(-1)[flat].item(), mismatch_ranges=ranges,
        mismatch_runs=runs)


def assert_close(actual: Any, golden: Any, *, msg: Optional[str] = None,
                 **kw: Any) -> Comparison:
    """``compare(actual, golden, **kw)``; raise ``AssertionError`` with its report on failure.

    Returns the Comparison when it passes. ``msg`` is prefixed to the failure text.
    """
    __tracebackhide__ = True  # noqa: F841 - pytest shows the caller's line
    result = compare(actual, golden, **kw)
    if not result.passed:
        text = f"{msg}\n{result}" if msg else str(result)
        raise AssertionError(text + _sanitize_hint())
    return result


def _sanitize_hint() -> str:
    """A line for a failed comparison when this thread's latest launch ran without sanitize
    mode: races and uninitialised reads give wrong numbers that only it explains."""
    from .simulator.sanitizer import last_launch_sanitized
    if last_launch_sanitized() is False:
        return ("\n  hint: the kernel ran without sanitize mode; run it with sanitize=True "
                "(or asc.testing.check_kernel, which does) to check races between pipes and "
                "reads of memory nothing wrote")
    return ""


def check_kernel(run: Callable[..., Any], golden: Callable[..., Any], *inputs: Any,
                 sanitize: bool = True, **kw: Any) -> Any:
    """Run ``golden(*inputs)`` then ``run(*inputs)`` and ``assert_close`` their results.

    ``golden`` runs first, so a ``run`` that writes into its arguments cannot change the golden
    inputs. The kernels ``run`` launches run in sanitize mode (races between pipes,
    uninitialised reads, blocks writing the same GM bytes) unless ``sanitize=False`` or a
    launch says otherwise. If both return a tuple/list of outputs, they are compared pairwise
    and a tuple of Comparisons is returned; otherwise one Comparison. ``kw`` goes to
    ``compare`` (``dtype``, ``rtol``, ``atol``, ``fraction``, ``msg``).
    """
    __tracebackhide__ = True  # noqa: F841 - pytest shows the caller's line
    from .simulator.sanitizer import sanitizing
    expected = golden(*inputs)
    with sanitizing(sanitize):
        got = run(*inputs)
    name = getattr(run, "__name__", "kernel")
    for value in (got if isinstance(got, (tuple, list)) else (got,)):
        try:
            _reject_report(value)
        except TypeError as exc:
            raise TypeError(f"{name} returned {exc.args[0].removeprefix('got ')}") from None
    msg = kw.pop("msg", None)
    if isinstance(expected, (tuple, list)) and isinstance(got, (tuple, list)):
        if len(expected) != len(got):
            raise AssertionError(f"{name} returned {len(got)} outputs, golden {len(expected)}")
        return tuple(assert_close(g, e, msg=f"{msg or name}: output {i}", **kw)
                     for i, (g, e) in enumerate(zip(got, expected)))
    return assert_close(got, expected, msg=msg or f"{name} vs golden", **kw)


def float16_golden(fn: Callable[..., Any], *inputs: Any) -> Any:
    """``fn(*inputs)`` computed in float16 with rounding after every operation, as the vector
    unit computes a float16 kernel: the float inputs become float16 numpy arrays (numpy
    rounds each float16 operation's result to float16; Python numbers stay weak and do not
    widen it), so a correct float16 kernel matches the golden under the Ascend rule where a
    float32 golden computed in one go can differ by more than the float16 rtol.

    ``fn`` uses numpy operations on its arguments (``x * 2.0 + y``, ``np.exp(x)``); its
    result (an array or a tuple/list of arrays) must still be float16: an operation that
    widened it (a float32 array or numpy float32/float64 scalar in ``fn``) is a TypeError.
    Integer inputs are passed unchanged; torch tensors are converted to numpy first.
    """
    __tracebackhide__ = True  # noqa: F841
    args = []
    for x in inputs:
        if isinstance(x, (int, float)) and not isinstance(x, bool):
            args.append(x)         # Python numbers stay weakly typed
            continue
        arr, _ = _to_numpy(x)
        args.append(arr.astype(np.float16) if arr.dtype.kind == "f" else arr)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        out = fn(*args)
    for i, o in enumerate(out if isinstance(out, (tuple, list)) else (out,)):
        dtype = np.asarray(o).dtype
        if dtype != np.float16:
            which = f"output {i} " if isinstance(out, (tuple, list)) else ""
            raise TypeError(f"float16_golden: {getattr(fn, '__name__', 'fn')} returned {which}"
                            f"as {dtype}: an operation widened it (a float32/float64 array or "
                            "numpy scalar in it); use Python numbers or float16 values so every "
                            "operation rounds to float16")
    return out
