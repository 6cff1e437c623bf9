"""Make the shipped table of autotuned tilings (``tiling_table.py``) by running ``asc.autotune``.

    python -m ascendc_py.torch_bridge.tune_tilings [--platforms Ascend910B2 ...] [--check]

For each platform (default: every named one) and each shape class of ``autotiling.py``, this
calls the shipped op on a representative shape with run-time tuning on (``asc.autotune`` over
the op's candidates, the same autotuners ``ASCENDC_PY_TORCH_AUTOTUNE=1`` uses), takes the
config with the fewest simulated cycles and checks that it writes exactly the bits of the
default tiling (the FFN: within the dtype's tolerance, see ``autotiling.py``). It then
rewrites those platforms' entries of ``tiling_table.py`` (``--check``: compares and exits 1
when the shipped table differs from what autotune picks now). Representative shapes:
element-wise, ``3 · 2**(c - 2)`` elements for size class ``c`` (the middle of the class); linear and the
FFN, each dimension at its class's bound (``autotiling.class_shape``).
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


def class_size(c: int) -> int:
    """The representative element count of size class ``c`` (its middle)."""
    return 3 << (c - 2)


def _tuned(run, tuners_of):
    """Run ``run()`` with run-time tuning on and fresh autotuners; return the TuneResults."""
    AT._tuners.clear()
    AT.set_enabled(True)
    try:
        run()
    finally:
        AT.set_enabled(None)
    results = [r for t in tuners_of() for r in t.tables.values()]
    AT._tuners.clear()
    return results


def _only(results: list, what: str):
    if len(results) != 1:
        raise RuntimeError(f"tune_tilings {what}: expected one tuning run, got {len(results)}")
    return results[0]


def _same_bits(a, b, what: str) -> None:
    outs = (a,) if isinstance(a, torch.Tensor) else tuple(a)
    refs = (b,) if isinstance(b, torch.Tensor) else tuple(b)
    for x, y in zip(outs, refs):
        if not torch.equal(x.view(torch.uint8), y.view(torch.uint8)):
            raise RuntimeError(f"tune_tilings {what}: the chosen tiling changes result bits")


def tune_elementwise(kernel: str, dtype, c: int) -> int:
    """The tile autotune picks for ``kernel``'s op on size class ``c`` of ``dtype``."""
    call = elementwise_calls()[kernel]
    n = class_size(c)
    best = _only(_tuned(lambda: call(n, dtype),
                        lambda: [t for (k, _), t in AT._tuners.items()
                                 if getattr(k, "__name__", "") == kernel]),
                 f"{kernel} {dtype} n={n}")
    return int(best.best.values["TILE"])


def _cube_inputs(m, n, k, dtype, ffn: bool):
    g = torch.Generator().manual_seed(m * 7 + n * 3 + k)
    x = (torch.rand(m, k, generator=g) - 0.5).to(dtype)
    shape = (k, n) if ffn else (n, k)
    w = ((torch.rand(*shape, generator=g) - 0.5) / k).to(dtype)
    w2 = ((torch.rand(*shape, generator=g) - 0.5) / k).to(dtype)
    return x, w, w2


def tune_linear(dtype, cls: tuple) -> tuple:
    """(TM, TN) autotune picks for linear on the representative shape of class (cm, cn, ck)."""
    ops = _ops()
    m, n, k = (AT.class_shape(c, b) for c, b in zip(cls, (AT.LINEAR_M_BOUNDS,
                                                          AT.LINEAR_N_BOUNDS,
                                                          AT.LINEAR_K_BOUNDS)))
    x, w, b = _cube_inputs(m, n, k, dtype, False)
    b = b[:, 0].contiguous()
    tuned = []
    best = _only(_tuned(lambda: tuned.append(ops.linear(x, w, b)),
                        lambda: [t for key, t in AT._tuners.items() if key[0] == "linear"]),
                 f"linear {dtype} {m}x{n}x{k}")
    choice = (int(best.best.values["TM"]), int(best.best.values["TN"]))
    _same_bits(tuned[0], ops.linear(x, w, b), f"linear {dtype} {m}x{n}x{k}")
    return choice


def tune_ffn(dtype, cls: tuple) -> tuple:
    """(base_m, base_n) autotune picks for swiglu_ffn on class (cm, cn, ck)'s shape; (0, 0):
    the tiling helper's own."""
    ops = _ops()
    m, n, k = (AT.class_shape(c, b) for c, b in zip(cls, (AT.LINEAR_M_BOUNDS,
                                                          AT.LINEAR_N_BOUNDS,
                                                          AT.LINEAR_K_BOUNDS)))
    x, wg, wu = _cube_inputs(m, n, k, dtype, True)
    tuned = []
    best = _only(_tuned(lambda: tuned.append(ops.swiglu_ffn(x, wg, wu)),
                        lambda: [t for key, t in AT._tuners.items() if key == "swiglu_ffn"]),
                 f"swiglu_ffn {dtype} {m}x{n}x{k}")
    choice = (int(best.best.values["BASE_M"]), int(best.best.values["BASE_N"]))
    AT._shipped[:] = [None, None, {}]      # the default tiling, not a stale table's choice
    from . import cube_kernels as CK
    tiling = CK.swiglu_ffn_tiling(m, n, k, CK.host_type(dtype))
    y = torch.empty(m, n, dtype=dtype)
    CK.swiglu_ffn_kernel[-(-tiling.used_core_num // 2)](
        x, wg, wu, y, torch.empty(2 * m * n), tiling)
    from ..testing import assert_close       # (the host BLAS's rounding order: autotiling.py)
    assert_close(tuned[0], y)
    return choice


def cube_classes() -> list:
    return [(cm, cn, ck) for cm in range(len(AT.LINEAR_M_BOUNDS) + 1)
            for cn in range(len(AT.LINEAR_N_BOUNDS) + 1)
            for ck in range(len(AT.LINEAR_K_BOUNDS) + 1)]


def build(platform, log=print) -> dict:
    """The table entry of one platform: every class tuned."""
    from ..simulator.config import using_platform
    out = {"elementwise_max_class": ELEMENTWISE_CLASSES[-1], "elementwise": {}, "linear": {},
           "swiglu_ffn": {}}
    t0 = time.perf_counter()
    with using_platform(platform):
        for kernel in elementwise_calls():
            for dt in ELEMENTWISE_DTYPES:
                for c in ELEMENTWISE_CLASSES:
                    out["elementwise"][f"{kernel}/{AT.dtype_name(dt)}/{c}"] = \
                        tune_elementwise(kernel, dt, c)
            log(f"  {kernel}: {time.perf_counter() - t0:.0f} s")
        for dt in CUBE_DTYPES:
            for cls in cube_classes():
                key = f"{dt.itemsize}/{cls[0]}/{cls[1]}/{cls[2]}"
                out["linear"][key] = tune_linear(dt, cls)
                out["swiglu_ffn"][key] = tune_ffn(dt, cls)
            log(f"  linear, swiglu_ffn {dt}: {time.perf_counter() - t0:.0f} s")
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
    a = p.parse_args(argv)
    table = {}
    for name in a.platforms:
        print(f"tuning the shipped ops' tilings on {name}")
        table[name] = build(PLATFORMS[name])
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
