"""The shipped element-wise torch ops with their tile length chosen by ``asc.autotune``.

Off by default: ``ASCENDC_PY_TORCH_AUTOTUNE=1`` (read at each call) or ``set_enabled(True)``
turns it on. Then an op's launcher, instead of launching its kernel with the tile that
``elementwise_tiling`` computed (the largest that fits the UB budget), launches it through an
autotuner over that tile and its halves and quarters (multiples of 256 elements), keyed by
the size class of the op's tensors (the bit length of each tensor's element count), their
dtypes, the block count and the platform. The first call in a class runs the candidates, checks
that they write the same values and keeps the one with the fewest simulated cycles (in memory
and in the compile cache directory); later calls launch it directly. The results are the same
bits whichever tile runs (element-wise arithmetic, no reductions); the simulated cycles are
those of the chosen tile, which is why it is off by default: the shipped ops' reports (and the
pinned torch samples) stay those of the fixed tiling. The Matmul-based ops (linear, the fused
SwiGLU FFN) are not tuned: their base_k sets the order of the K sums, so another base tile
changes result bits.
"""
from __future__ import annotations

from typing import Optional

from .. import envvars

ENV_VAR = "ASCENDC_PY_TORCH_AUTOTUNE"
MIN_TILE = 256

_enabled: Optional[bool] = None
_tuners: dict = {}       # (kernel, default tile) -> Autotuner


def set_enabled(on: Optional[bool]) -> None:
    """Turn autotuned tiles on or off for this process (None: follow the environment)."""
    global _enabled
    _enabled = None if on is None else bool(on)


def enabled() -> bool:
    if _enabled is not None:
        return _enabled
    return envvars.flag(ENV_VAR)


def size_class(args: dict) -> tuple:
    """The bit length of each tensor argument's element count."""
    return tuple(int(v.numel()).bit_length() for v in args.values() if hasattr(v, "numel"))


def candidates(tile: int) -> list:
    """The default tile, its half and its quarter (multiples of 256, at least 256)."""
    out = []
    for t in (tile, tile // 2, tile // 4):
        t = t // MIN_TILE * MIN_TILE
        if t >= MIN_TILE and t not in out:
            out.append(t)
    return out


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
    """What the shipped ops launch: ``kernel[block_dim]``, or with autotuned tiles on, the
    same call with the tile chosen per size class (kernels whose last parameter is TILE)."""
    if enabled() and kernel.params and kernel.params[-1].name == "TILE":
        return _Launch(kernel, block_dim)
    return kernel[block_dim]


__all__ = ["set_enabled", "enabled", "launcher", "tuner_for", "candidates", "ENV_VAR"]
