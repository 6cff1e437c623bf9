"""Make the shipped table of autotuned tilings (``tiling_table.py``) by running ``asc.autotune``.

    python -m ascendc_py.torch_bridge.tune_tilings [--platforms Ascend910B2 ...] [--check]

For each platform (default: every named one) and each shape class of ``autotiling.py``, this
calls the shipped op on shapes spread over the class (``class_sizes``: three element counts,
``cube_shapes``: five matrix shapes) with run-time tuning on (``asc.autotune`` over the op's
candidates, the same autotuners ``ASCENDC_PY_TORCH_AUTOTUNE=1`` uses; for the fused SwiGLU
FFN, ``ffn_shapes``: six spread shapes and the common FFN shapes of the class, through
``autotiling.ffn_tuner(keep_split=True)``, the table's rule), chooses from autotune's tables
the config whose worst ratio of cycles to a shape's fewest is smallest (``pick``; ties keep
the default, the first config), and checks that it writes exactly the bits of the default
tiling on each shape. It then rewrites those platforms' entries of ``tiling_table.py``
(``--check``: compares and exits 1 when the shipped table differs from what autotune picks
now; ``--only ffn``: tunes only the FFN's classes, keeping the other entries).
"""
from __future__ import annotations

import argparse
import pathlib
import pprint
import sys
import time

import torch

from . import autotiling as AT

ELEMENTWISE_CLASSES = range(9, 25)
ELEMENTWISE_DTYPES = (torch.float32, torch.float16)
CUBE_DTYPES = (torch.float16, torch.float32)
TABLE_PATH = pathlib.Path(__file__).with_name("tiling_table.py")


def _ops():
    from . import ops
    return ops


def elementwise_calls() -> dict:
    """kernel name -> a function running the shipped op on n elements of a dtype."""
    ops = _ops()

    def r(n, dt, count=1):
        g = torch.Generator().manual_seed(n)
        return [torch.randn(n, generator=g).to(dt) for _ in range(count)]
    return {
        "add_kernel": lambda n, dt: ops.add(*r(n, dt, 2)),
        "leaky_relu_kernel": lambda n, dt: ops.leaky_relu(*r(n, dt), 0.1),
        "leaky_relu_backward_kernel": lambda n, dt: ops.leaky_relu_backward(*r(n, dt, 2), 0.1),
        "color_matrix_kernel": lambda n, dt: ops.sepia(r(3 * n, dt)[0].reshape(1, 3, 1, n)),
        "swiglu_kernel": lambda n, dt: ops.swiglu(*r(n, dt, 2)),
        "swiglu_backward_kernel": lambda n, dt: ops.swiglu_backward(*r(n, dt, 3)),
    }


def class_sizes(c: int) -> tuple:
    """Three element counts spread over size class ``c`` (5/8, 6/8 and 7/8 of 2**c)."""
    return tuple(f << (c - 3) for f in (5, 6, 7))


def dim_sizes(c: int, bounds: tuple) -> tuple:
    """Three sizes spread over class ``c`` of a matrix dimension: 10 %, 55 % and 100 % of the
    way from the previous bound to the class's bound (past the last: 1.1, 1.5 and 2 times
    it)."""
    if c >= len(bounds):
        return tuple(int(bounds[-1] * f) for f in (1.1, 1.5, 2.0))
    lo = bounds[c - 1] if c else 0
    return tuple(max(1, round(lo + (bounds[c] - lo) * f)) for f in (0.1, 0.55, 1.0))


def cube_shapes(cls: tuple) -> list:
    """The five (m, n, k) of a linear class: the four corners of (m, n) at the middle K,
    and the middle of (m, n) at the largest K."""
    (m0, m1, m2), (n0, n1, n2), (k0, k1, k2) = (
        dim_sizes(c, b) for c, b in zip(cls, (AT.LINEAR_M_BOUNDS, AT.LINEAR_N_BOUNDS,
                                              AT.LINEAR_K_BOUNDS)))
    return [(m0, n0, k1), (m0, n2, k1), (m2, n0, k1), (m2, n2, k1), (m1, n1, k2)]


def _tuned(run, tuners_of):
    """Run ``run()`` with run-time tuning on and fresh autotuners; return the one TuneResult."""
    AT._tuners.clear()
    AT.set_enabled(True)
    try:
        run()
    finally:
        AT.set_enabled(None)
    results = [r for t in tuners_of() for r in t.tables.values()]
    AT._tuners.clear()
    if len(results) != 1:
        raise RuntimeError(f"tune_tilings: expected one tuning run, got {len(results)}")
    return results[0]


def pick(results: list):
    """The class's choice from autotune's tables of its shapes: the config whose worst ratio
    of cycles to a shape's fewest is smallest (a config that failed on a shape is out); ties
    go to the first in config order, the default."""
    configs = [r.config for r in results[0].rows]
    best, best_score = None, None
    for c in configs:
        score = 0.0
        for res in results:
            row = next(r for r in res.rows if r.config == c)
            if row.cycles is None:
                score = None
                break
            fewest = min(r.cycles for r in res.rows if r.cycles is not None)
            score = max(score, row.cycles / fewest)
        if score is not None and (best_score is None or score < best_score):
            best, best_score = c, score
    return best


def _same_bits(a, b, what: str) -> None:
    outs = (a,) if isinstance(a, torch.Tensor) else tuple(a)
    refs = (b,) if isinstance(b, torch.Tensor) else tuple(b)
    for x, y in zip(outs, refs):
        if not torch.equal(x.view(torch.uint8), y.view(torch.uint8)):
            raise RuntimeError(f"tune_tilings {what}: the chosen tiling changes result bits")


def tune_elementwise(kernel: str, dtype, c: int) -> int:
    """The tile chosen for ``kernel``'s op on size class ``c`` of ``dtype``."""
    call = elementwise_calls()[kernel]

    def tuners():
        return [t for (k, _), t in AT._tuners.items() if getattr(k, "__name__", "") == kernel]
    results = [_tuned(lambda: call(n, dtype), tuners) for n in class_sizes(c)]
    return int(pick(results).values["TILE"])


def _linear_inputs(m, n, k, dtype):
    g = torch.Generator().manual_seed(m * 7 + n * 3 + k)
    x = (torch.rand(m, k, generator=g) - 0.5).to(dtype)
    w = ((torch.rand(n, k, generator=g) - 0.5) / k).to(dtype)
    b = torch.rand(n, generator=g).to(dtype)
    return x, w, b


def _with_config(tuner_key, make, config, run):
    """``run()``'s result with run-time tuning on and ``config`` the only candidate of the
    autotuner ``make()`` makes (stored as ``autotiling._tuners[tuner_key]``)."""
    from ..autotuner import Autotuner
    AT._tuners.clear()
    full = make()
    AT._tuners[tuner_key] = Autotuner(full.kernel, [config], full.key, print_table=False,
                                      use_disk_cache=False, pre_hook=full.pre_hook)
    AT.set_enabled(True)
    try:
        return run()
    finally:
        AT.set_enabled(None)
        AT._tuners.clear()


def tune_linear(dtype, cls: tuple) -> tuple:
    """(TM, TN) chosen for linear on class (cm, cn, ck): the same bits as the default."""
    ops = _ops()
    key = ("linear", dtype.itemsize)
    results, inputs = [], []
    for m, n, k in cube_shapes(cls):
        inputs.append(_linear_inputs(m, n, k, dtype))
        results.append(_tuned(lambda: ops.linear(*inputs[-1]), lambda: [AT._tuners[key]]))
    best = pick(results)
    make = lambda: AT.linear_tuner(dtype.itemsize)  # noqa: E731
    for args in inputs:
        _same_bits(_with_config(key, make, best, lambda: ops.linear(*args)),
                   _with_config(key, make, results[0].rows[0].config,
                                lambda: ops.linear(*args)),
                   f"linear {dtype} class {cls}")
    return int(best.values["TM"]), int(best.values["TN"])


def ffn_dim_sizes(c: int, bounds: tuple, first: int) -> tuple:
    """Three sizes spread geometrically over class ``c`` of an FFN dimension (``first``: the
    low end of class 0): a quarter and 60 % of the way in log scale, and the bound itself."""
    lo, hi = (bounds[c - 1] if c else first), bounds[c]
    return tuple(max(lo + 1 if c else 1, round(lo * (hi / lo) ** f)) for f in (0.25, 0.6)) + (hi,)


#: (M, N, K) of common FFN calls (the README's benchmark, samples, LLM-like projections), tuned
#: in their classes besides the spread shapes: a fixed base shape can win on every spread
#: shape of a class and still lose on one of these (float32 (128, 3072, 768): 60 % more
#: cycles with the 32 x 64 that six spread shapes chose)
FFN_COMMON_SHAPES = ((2048, 2816, 1024), (300, 700, 200), (8, 1024, 512), (32, 64, 32),
                     (1, 4096, 4096), (128, 3072, 768))


def ffn_shapes(cls: tuple) -> list:
    """The (m, n, k) an FFN class is tuned on: the four corners of (m, n) at the middle K, the
    middle of (m, n) at the smallest and the largest K, and the ``FFN_COMMON_SHAPES`` in it."""
    (m0, m1, m2), (n0, n1, n2), (k0, k1, k2) = (
        ffn_dim_sizes(c, b, f) for c, b, f in zip(cls, (AT.FFN_M_BOUNDS, AT.FFN_N_BOUNDS,
                                                        AT.FFN_K_BOUNDS), (1, 16, 16)))
    name = "/".join(map(str, cls))
    return [(m0, n0, k1), (m0, n2, k1), (m2, n0, k1), (m2, n2, k1), (m1, n1, k0),
            (m1, n1, k2)] + [s for s in FFN_COMMON_SHAPES if AT.ffn_class(*s) == name]


def ffn_classes() -> list:
    """Every FFN class inside the last bounds (those past them are not tuned)."""
    return [(cm, cn, ck) for cm in range(len(AT.FFN_M_BOUNDS))
            for cn in range(len(AT.FFN_N_BOUNDS)) for ck in range(len(AT.FFN_K_BOUNDS))]


def _ffn_inputs(m, n, k, dtype):
    g = torch.Generator().manual_seed(m * 7 + n * 3 + k)
    x = (torch.rand(m, k, generator=g) - 0.5).to(dtype)
    wg = ((torch.rand(k, n, generator=g) - 0.5) / k ** 0.5).to(dtype)
    wu = ((torch.rand(k, n, generator=g) - 0.5) / k ** 0.5).to(dtype)
    return x, wg, wu


def _ffn_run(tuner, args):
    """Launch the FFN through ``tuner`` on (x, wg, wu); the output."""
    from .cube_kernels import host_type
    x, wg, wu = args
    (m, k), n = x.shape, wg.shape[1]
    y = torch.empty(m, n, dtype=x.dtype)
    tuner[AT.ffn_blocks(m, n, k, host_type(x.dtype), keep_split=True)](
        x, wg, wu, y, torch.empty(2 * m * n, dtype=torch.float32), None)
    return y


def tune_ffn(dtype, cls: tuple) -> tuple:
    """(base_m, base_n) chosen for the fused SwiGLU FFN on class (cm, cn, ck): ``pick`` over
    autotune's tables of ``ffn_shapes(cls)`` with the table's rule (``ffn_tuner(keep_split=
    True)``: a base that changes the helper's split runs its own fit on that shape, and every
    config must write the same bits); the choice's bits are checked again against (0, 0)."""
    key = "swiglu_ffn_split_kept"
    make = lambda: AT.ffn_tuner(keep_split=True)  # noqa: E731
    results, inputs = [], []
    for m, n, k in ffn_shapes(cls):
        inputs.append(_ffn_inputs(m, n, k, dtype))
        results.append(_tuned(lambda: _ffn_run(make(), inputs[-1]), lambda: [AT._tuners[key]]))
    best = pick(results)
    default = results[0].rows[0].config
    if best != default:
        for args in inputs:
            _same_bits(_with_config(key, make, best, lambda: _ffn_run(make(), args)),
                       _with_config(key, make, default, lambda: _ffn_run(make(), args)),
                       f"swiglu_ffn {dtype} class {cls}")
    return int(best.values["BASE_M"]), int(best.values["BASE_N"])


def cube_classes() -> list:
    return [(cm, cn, ck) for cm in range(len(AT.LINEAR_M_BOUNDS) + 1)
            for cn in range(len(AT.LINEAR_N_BOUNDS) + 1)
            for ck in range(len(AT.LINEAR_K_BOUNDS) + 1)]


def build(platform, log=print, only=("elementwise", "linear", "ffn"), keep=None) -> dict:
    """The table entry of one platform: every class of the kinds in ``only`` tuned (the
    others' entries taken from ``keep``, the shipped entry)."""
    from ..simulator.config import using_platform
    out = {"elementwise_max_class": ELEMENTWISE_CLASSES[-1], "elementwise": {}, "linear": {},
           "ffn": {}}
    out.update({kind: v for kind, v in (keep or {}).items() if kind not in only})
    t0 = time.perf_counter()
    with using_platform(platform):
        for kernel in elementwise_calls() if "elementwise" in only else ():
            for dt in ELEMENTWISE_DTYPES:
                for c in ELEMENTWISE_CLASSES:
                    out["elementwise"][f"{kernel}/{AT.dtype_name(dt)}/{c}"] = \
                        tune_elementwise(kernel, dt, c)
            log(f"  {kernel}: {time.perf_counter() - t0:.0f} s")
        for dt in CUBE_DTYPES if "linear" in only else ():
            for cls in cube_classes():
                key = f"{dt.itemsize}/{cls[0]}/{cls[1]}/{cls[2]}"
                out["linear"][key] = tune_linear(dt, cls)
            log(f"  linear {dt}: {time.perf_counter() - t0:.0f} s")
        for dt in CUBE_DTYPES if "ffn" in only else ():
            for cls in ffn_classes():
                out["ffn"][f"{dt.itemsize}/{cls[0]}/{cls[1]}/{cls[2]}"] = tune_ffn(dt, cls)
            log(f"  swiglu_ffn {dt}: {time.perf_counter() - t0:.0f} s")
    return out


def render(table: dict) -> str:
    return ('"""Autotuned tilings of the shipped torch ops per platform and shape class '
            '(``autotiling.py``).\n\nGenerated by ``python -m ascendc_py.torch_bridge.'
            'tune_tilings``: do not edit by hand.\n"""\n\nTABLE = ' +
            pprint.pformat(table, width=99, sort_dicts=True) + "\n")


def main(argv=None) -> int:
    from ..simulator.config import PLATFORMS
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--platforms", nargs="*", default=list(PLATFORMS))
    p.add_argument("--check", action="store_true",
                   help="compare with the shipped table instead of writing it")
    p.add_argument("--only", nargs="*", default=["elementwise", "linear", "ffn"],
                   choices=["elementwise", "linear", "ffn"],
                   help="tune only these kinds (the others keep their shipped entries)")
    a = p.parse_args(argv)
    from .tiling_table import TABLE as shipped
    table = {}
    for name in a.platforms:
        print(f"tuning the shipped ops' tilings on {name}")
        table[name] = build(PLATFORMS[name], only=a.only, keep=shipped.get(name))
    if a.check:
        from .tiling_table import TABLE
        stale = sorted(name for name in table if TABLE.get(name) != table[name])
        print("shipped table is stale for: " + ", ".join(stale) if stale else "up to date")
        return 1 if stale else 0
    from .tiling_table import TABLE
    TABLE_PATH.write_text(render({**TABLE, **table}))     # other platforms' entries kept
    print(f"wrote {TABLE_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
