"""The shipped torch ops' tilings, chosen by ``asc.autotune`` per shape class.

By default every shipped op takes its tiling from a table of autotuned choices shipped in the
package (``tiling_table.py``, made by ``python -m ascendc_py.torch_bridge.tune_tilings``, which
runs ``asc.autotune`` on several shapes spread over each class and keeps the config that is
never far from the fewest cycles on any of them): a first call pays no tuning run.

- element-wise ops (add, leaky_relu, sepia, swiglu and their backward kernels): the tile length,
  among ``elementwise_tiling``'s tile (the largest that fits the UB budget), its half and its
  quarter (multiples of 256), per kernel, dtype and size class (the bit length of the element
  count; classes above the largest tuned one use its choice, classes below the smallest keep
  the largest tile, which then covers a block's share in one tile whichever is chosen);
- ``linear``: the tile of y per block (TM × TN; the K chunk TK stays ``LINEAR_TILES``'s), per
  input element size and class of (M, N, K) (``LINEAR_M_BOUNDS`` ...: a dimension's class is
  the first bound it does not exceed);
- the fused SwiGLU FFN (``swiglu_ffn``): its Matmul's base_m × base_n (``FFN_CANDIDATES``;
  (0, 0) is the tiling helper's own fit to the shape), per input element size and class of
  (M, N, K) (``FFN_M_BOUNDS`` ...: finer than linear's, since the helper's fit changes with
  each dimension); classes past the last bounds are not tuned and keep the helper's fit.
  A class's base is used on a shape only where the helper gives it the split of its own fit
  over the vector cores (``ffn_base``; else the helper's fit runs).
No candidate changes the K steps of a sum (TK and base_k are not tuned), and the result bits
are the default's: the element-wise and linear candidates by construction, the FFN by the
split rule (every vector core then asks the cube for the same block, which the simulator
multiplies with one host BLAS call of the same shape), all checked exactly by
``tune_tilings``. The simulated cycles are the chosen tiling's. The table holds choices for
the platforms it names; on another platform (or a modified ChipConfig) the ops use the
untuned defaults.

``ASCENDC_PY_TORCH_AUTOTUNE=1`` (read at each call) or ``set_enabled(True)``: tune on the
user's own shapes instead, at run time: the first call of an op for a new key runs the
candidates on its arguments (``asc.autotune``, the choice cached in memory and in the compile
cache directory), later calls launch the choice directly. This includes the FFN's base_m ×
base_n (``ffn_tuner``: the helper's own choice first, then fixed ones; they agree within the
dtype's tolerance, not bit for bit: the simulator multiplies each vector core's block with
the host BLAS, whose float32 rounding order can depend on the block's shape; a base shape that
would change base_k or the K split is refused).
"""
from __future__ import annotations

import math
from typing import Optional

from ..envvars import flag as _flag
from ..simulator import config as _config
from .custom_op import elementwise_tiling

ENV_VAR = "ASCENDC_PY_TORCH_AUTOTUNE"
MIN_TILE = 256
LINEAR_M_BOUNDS = (16, 64, 256, 1024)
LINEAR_N_BOUNDS = (64, 256, 1024)
LINEAR_K_BOUNDS = (256,)
#: TM x TN candidates of linear (TM·TN float32 in L0C <= 128 KB), after the default
#: (``LINEAR_TILES``'s, first: a tie keeps it)
LINEAR_CANDIDATES = tuple((tm, tn) for tm in (16, 32, 64, 128, 256) for tn in (64, 128, 256)
                          if tm * tn <= 32768)
#: base_m x base_n candidates of the fused SwiGLU FFN's Matmul; (0, 0), first, is the tiling
#: helper's own choice
FFN_CANDIDATES = ((0, 0),) + tuple((bm, bn) for bm in (16, 32, 64, 128)
                                   for bn in (32, 64, 128, 256))
#: shape classes of the fused SwiGLU FFN's base shape (``ffn_class``); past the last bound of
#: a dimension a shape is not in the table (the helper's fit)
FFN_M_BOUNDS = (4, 16, 64, 256, 1024, 4096)
FFN_N_BOUNDS = (64, 256, 1024, 4096)
FFN_K_BOUNDS = (64, 256, 1024, 4096)

_enabled: Optional[bool] = None
_tuners: dict = {}       # (kernel, default tile) -> Autotuner
_shipped: list = [None, None, {}]   # [platform object, its table or None, lookups]


def set_enabled(on: Optional[bool]) -> None:
    """Turn run-time autotuning on or off for this process (None: follow the environment)."""
    global _enabled
    _enabled = None if on is None else bool(on)


def enabled() -> bool:
    """Whether the ops tune on the user's shapes at run time (else: the shipped table)."""
    if _enabled is not None:
        return _enabled
    return _flag(ENV_VAR)


# ---------------------------------------------------------------------------- shape classes
def size_class(args: dict) -> tuple:
    """The bit length of each tensor argument's element count (run-time tuning's key)."""
    return tuple(int(v.numel()).bit_length() for v in args.values() if hasattr(v, "numel"))


def dim_class(d: int, bounds: tuple) -> int:
    """The index of the first bound ``d`` does not exceed (len(bounds) past the last)."""
    for i, b in enumerate(bounds):
        if d <= b:
            return i
    return len(bounds)


def mnk_class(m: int, n: int, k: int) -> str:
    return f"{dim_class(m, LINEAR_M_BOUNDS)}/{dim_class(n, LINEAR_N_BOUNDS)}/" \
           f"{dim_class(k, LINEAR_K_BOUNDS)}"


def ffn_class(m: int, n: int, k: int) -> Optional[str]:
    """The FFN's shape class of (M, N, K) ("cm/cn/ck"), None past the last bound of one."""
    c = (dim_class(m, FFN_M_BOUNDS), dim_class(n, FFN_N_BOUNDS), dim_class(k, FFN_K_BOUNDS))
    if c[0] == len(FFN_M_BOUNDS) or c[1] == len(FFN_N_BOUNDS) or c[2] == len(FFN_K_BOUNDS):
        return None
    return "/".join(map(str, c))


def dtype_name(dtype) -> str:
    return str(dtype).removeprefix("torch.")


# ---------------------------------------------------------------------------- the shipped table
def shipped() -> Optional[dict]:
    """The shipped table's entries for the current platform (None when it has none)."""
    chip = _config.current_platform()
    if _shipped[0] is not chip:
        from .tiling_table import TABLE
        entry = TABLE.get(chip.name)
        ok = entry is not None and _config.PLATFORMS.get(chip.name) == chip
        _shipped[:] = [chip, entry if ok else None, {}]
    return _shipped[1]


def candidates(tile: int) -> list:
    """The default tile, its half and its quarter (multiples of 256, at least 256)."""
    out = []
    for t in (tile, tile // 2, tile // 4):
        t = t // MIN_TILE * MIN_TILE
        if t >= MIN_TILE and t not in out:
            out.append(t)
    return out


def elementwise(kernel, n: int, dtype, ub_tiles: int, *, min_per_block: int = 16384):
    """``elementwise_tiling(n, dtype, ub_tiles)`` with the tile of the shipped table for this
    kernel, dtype and size class (with run-time tuning on: the default tile, tuned around by
    ``launcher``)."""
    chip = _config.current_platform()
    if _shipped[0] is chip and _enabled is None and not _flag(ENV_VAR) and type(n) is int:
        found = _shipped[2].get((kernel, n, dtype, ub_tiles, min_per_block))
        if found is not None:                # this call's tiling, looked up before
            return found
    t = elementwise_tiling(n, dtype, ub_tiles, min_per_block=min_per_block)
    if enabled():
        return t
    table = shipped()
    memo = _shipped[2]
    tile = t.tile
    if table is not None:
        cls = min(max(int(n), 1).bit_length(), table["elementwise_max_class"])
        tile = table["elementwise"].get(f"{kernel.__name__}/{dtype_name(dtype)}/{cls}", tile)
        if tile not in candidates(t.tile):
            tile = t.tile
    if len(memo) > 4096:
        memo.clear()
    found = t if tile == t.tile else type(t)(t.block_dim, t.share, tile)
    if type(n) is int:        # (a symbolic size is not hashable: not remembered)
        memo[(kernel, n, dtype, ub_tiles, min_per_block)] = found
    return found


def linear_tiles(m: int, n: int, k: int, esize: int) -> tuple:
    """(TM, TN, TK) of ``linear_kernel`` for x (m×k) @ w.T (k×n) with ``esize``-byte inputs."""
    table = shipped()
    memo = _shipped[2]
    found = memo.get(("linear", m, n, k, esize))
    if found is None:
        from .cube_kernels import LINEAR_TILES
        tm, tn, tk = LINEAR_TILES[esize]
        if table is not None:
            tm, tn = table["linear"].get(f"{esize}/{mnk_class(m, n, k)}", (tm, tn))
        if len(memo) > 4096:
            memo.clear()
        found = memo[("linear", m, n, k, esize)] = (tm, tn, tk)
    return found


def ffn_base(m: int, n: int, k: int, in_type, esize: int) -> tuple:
    """(base_m, base_n) of the fused SwiGLU FFN for x (m×k) @ w (k×n) with ``esize``-byte
    inputs of host ``DataType`` ``in_type``: the shipped table's choice for its class; (0, 0),
    the Matmul tiling helper's own fit, for a class the table does not hold, on a platform it
    does not name, and when the helper would give the table's base another split of this
    shape than its own fit (``cube_kernels.ffn_keeps_split``: the same bits either way)."""
    table = shipped()
    if table is None:
        return (0, 0)
    memo = _shipped[2]
    found = memo.get(("ffn", m, n, k, in_type))
    if found is None:
        cls = ffn_class(m, n, k)
        found = tuple(table.get("ffn", {}).get(f"{esize}/{cls}", (0, 0))) if cls else (0, 0)
        if found != (0, 0):
            from .cube_kernels import ffn_keeps_split
            if not ffn_keeps_split(m, n, k, in_type, found):
                found = (0, 0)
        if len(memo) > 4096:
            memo.clear()
        memo[("ffn", m, n, k, in_type)] = found
    return found


# ---------------------------------------------------------------------------- run-time tuning
def tuner_for(kernel, tile: int):
    """The autotuner of ``kernel`` (whose last parameter is ``TILE``) around ``tile``."""
    found = _tuners.get((kernel, tile))
    if found is None:
        import ascendc_py as asc
        found = _tuners[(kernel, tile)] = asc.autotune(
            configs=[asc.Config(TILE=t) for t in candidates(tile)], key=[size_class],
            print_table=False)(kernel)
    return found


class _Launch:
    """``kernel[block_dim]`` whose call's last argument (the tile) is a default to tune."""

    def __init__(self, kernel, block_dim: int):
        self.kernel = kernel
        self.block_dim = block_dim

    def __call__(self, *args):
        *rest, tile = args
        return tuner_for(self.kernel, int(tile))[self.block_dim](*rest)


def launcher(kernel, block_dim: int):
    """What the shipped ops launch: ``kernel[block_dim]``, or with run-time tuning on, the
    same call with the tile chosen per size class (kernels whose last parameter is TILE)."""
    if enabled() and kernel.params and kernel.params[-1].name == "TILE":
        return _Launch(kernel, block_dim)
    return kernel[block_dim]


def linear_configs(esize: int) -> list:
    """linear's candidates for ``esize``-byte inputs: the default tile first."""
    import ascendc_py as asc
    from .cube_kernels import LINEAR_TILES
    tm, tn, tk = LINEAR_TILES[esize]
    pairs = [(tm, tn)] + [c for c in LINEAR_CANDIDATES if c != (tm, tn)]
    return [asc.Config(TM=a, TN=b, TK=tk) for a, b in pairs]


def linear_tuner(esize: int):
    """``asc.autotune`` of ``linear_kernel`` over ``linear_configs(esize)``, keyed by (M, N,
    K) and the dtypes; every candidate must write the same bits."""
    found = _tuners.get(("linear", esize))
    if found is None:
        import ascendc_py as asc
        from .cube_kernels import linear_kernel
        found = _tuners[("linear", esize)] = asc.autotune(
            configs=linear_configs(esize), key=["M", "N", "K"], print_table=False, rtol=0.0,
            atol=0.0)(linear_kernel)
    return found


def linear_blocks(m: int, n: int):
    """The launch grid of linear for a config's TM and TN."""
    return lambda meta: math.ceil(m / meta["TM"]) * math.ceil(n / meta["TN"])


def linear_bias_pad(n: int) -> int:
    """Bias length that covers every candidate's whole TN tiles (tuning launches)."""
    return math.ceil(n / 256) * 256


def ffn_tuner(keep_split: bool = False):
    """``asc.autotune`` of the fused SwiGLU FFN over ``FFN_CANDIDATES`` (``ffn_tuned``),
    keyed by the shapes and dtypes of x and wg. Candidates agree within the dtype's tolerance
    (their K steps are the same, but the simulator multiplies each vector core's block with
    the host BLAS, whose float32 rounding can depend on the block's shape). ``keep_split``
    (the shipped table's tuning, ``tune_tilings``): a base that would change the helper's
    split runs the helper's own fit instead (``cube_kernels.ffn_tiling``), as ``ffn_base``
    does, and every candidate must write exactly the same bits."""
    name = "swiglu_ffn_split_kept" if keep_split else "swiglu_ffn"
    found = _tuners.get(name)
    if found is None:
        import ascendc_py as asc
        from . import cube_kernels as CK
        exact = {"rtol": 0.0, "atol": 0.0} if keep_split else {}
        found = _tuners[name] = asc.autotune(
            configs=[asc.Config(BASE_M=bm, BASE_N=bn) for bm, bn in FFN_CANDIDATES],
            key=["x", "wg"], print_table=False,
            pre_hook=CK.with_ffn_split_kept if keep_split else CK.with_ffn_tiling, **exact)(
                CK.ffn_tuned_split_kept if keep_split else CK.ffn_tuned)
    return found


def ffn_blocks(m: int, n: int, k: int, in_type, keep_split: bool = False):
    """The launch grid of the fused SwiGLU FFN for a config's base shape (the tiling
    ``ffn_tuner(keep_split)``'s pre_hook makes for it)."""
    from .cube_kernels import ffn_tiling, swiglu_ffn_tiling

    def blocks(meta):
        base = (meta["BASE_M"], meta["BASE_N"])
        if keep_split:
            tiling = ffn_tiling(m, n, k, in_type, base, keep_split=True)
        else:           # (a base ffn_tiling refuses fails in the pre_hook, reported there)
            tiling = swiglu_ffn_tiling(m, n, k, in_type, None if base == (0, 0) else base)
        return -(-tiling.used_core_num // 2)
    return blocks


__all__ = ["set_enabled", "enabled", "launcher", "tuner_for", "candidates", "elementwise",
           "linear_tiles", "ffn_base", "ENV_VAR"]
