"""Host-side matmul tiling (pyasc's ``asc.lib.host``; Ascend C's ``matmul_tiling`` API).

    import ascendc_py as asc
    from ascendc_py import host

    t = host.MultiCoreMatmulTiling(host.get_ascendc_platform())
    t.set_a_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT16, False)
    t.set_b_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT16, False)
    t.set_c_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT)
    t.set_dim(24); t.set_org_shape(m, n, k); t.set_shape(m, n, k)
    tiling = asc.adv.TCubeTiling(); t.get_tiling(tiling)

How the tiling is chosen (``get_tiling``):

* base tile: base_m x base_n x base_k = 128 x 256 x 64 for 16-bit inputs (128 x 128 x 32
  float32, 128 x 256 x 128 int8), shrunk to the (16-aligned) problem size; L0A and L0B hold
  two base blocks each (double buffering), L0C one base_m x base_n float32/int32 tile (two when
  they fit: ``db_l0c = 2``). ``set_fix_split`` overrides any of the three (-1: choose).
* core split: M x N is cut into mc x nc single-core blocks (``mc * nc <= dim``), each
  single_core_m x single_core_n (16-aligned; multiples of base_m/base_n when the user fixed
  them), choosing the split whose critical core has the least estimated time: max(cube cycles,
  GM->L1 bytes / 100 B per cycle). No K split (single_core_k = K).
  ``used_core_num = ceil(M / single_core_m) * ceil(N / single_core_n)``.
* L1: A and B panel chunks of step_ka*base_k (step_kb*base_k) along K, two of each in L1
  (``depth_a1 = 2 * step_ka``); when the whole K fits, step = ceil(K / base_k).
  Everything fits ``set_buffer_space`` (default: the platform's L1 512 KB, L0C 128 KB).
* ``iterate_order``: 0 for ``MatrixTraverse.FIRSTM`` (default: M first), 1 for FIRSTN.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Optional

from .adv import TCubeTiling
from .dsl.types import TPosition
from .simulator import config as _config

__all__ = ["TPosition", "CubeFormat", "DataType", "MatrixTraverse", "PlatformAscendC",
           "PlatformAscendCManager", "MatmulApiTiling", "MultiCoreMatmulTiling",
           "get_ascendc_platform", "cube_efficiency", "TilingError"]


class TilingError(ValueError):
    """The requested matmul tiling cannot be built (a fixed base tile does not fit L0, ...)."""


class CubeFormat(enum.IntEnum):
    """Host-side matrix formats (Ascend C ``matmul_tiling::CubeFormat``)."""

    ND = 0
    NZ = 1
    ZN = 2
    ZZ = 3
    NN = 4
    ND_ALIGN = 5
    SCALAR = 6
    VECTOR = 7
    ROW_MAJOR = 8
    COLUMN_MAJOR = 9


class DataType(enum.IntEnum):
    """Host-side element types (Ascend C ``matmul_tiling::DataType``; ge::DataType values)."""

    DT_FLOAT = 0
    DT_FLOAT16 = 1
    DT_INT8 = 2
    DT_INT32 = 3
    DT_UINT8 = 4
    DT_INT16 = 6
    DT_UINT16 = 7
    DT_UINT32 = 8
    DT_INT64 = 9
    DT_UINT64 = 10
    DT_DOUBLE = 11
    DT_BOOL = 12
    DT_BF16 = 27
    DT_BFLOAT16 = 27


_SIZES = {DataType.DT_FLOAT: 4, DataType.DT_FLOAT16: 2, DataType.DT_BF16: 2, DataType.DT_INT8: 1,
          DataType.DT_INT32: 4}
_INPUTS = (DataType.DT_FLOAT16, DataType.DT_BF16, DataType.DT_FLOAT, DataType.DT_INT8)


class MatrixTraverse(enum.IntEnum):
    """Order of the base tiles of C (``iterate_order`` 0: M first, 1: N first)."""

    NOSET = 0
    FIRSTM = 1
    FIRSTN = 2


@dataclass(frozen=True)
class PlatformAscendC:
    """The simulated SoC as Ascend C's tiling sees it: core counts and buffer sizes."""

    chip: _config.ChipConfig

    def get_core_num(self) -> int:
        """Cube cores (AIC): the ``dim`` of a cube kernel."""
        return self.chip.aic_cores

    def get_core_num_aic(self) -> int:
        return self.chip.aic_cores

    def get_core_num_aiv(self) -> int:
        return self.chip.aiv_cores

    def get_core_mem_size(self, name: str) -> int:
        """Bytes of a buffer ("L1", "L0_A"/"L0A", "L0_B", "L0_C", "UB")."""
        return self.chip.memories.get(str(name).replace("_", "")).size

    def get_soc_version(self) -> str:
        return self.chip.name


class PlatformAscendCManager:
    """pyasc's ``PlatformAscendCManager.get_instance(soc)``."""

    @staticmethod
    def get_instance(soc_version: Optional[str] = None) -> PlatformAscendC:
        chip = _config.get_platform(soc_version) if soc_version else _config.current_platform()
        return PlatformAscendC(chip)


def get_ascendc_platform() -> PlatformAscendC:
    """The platform launches currently run on (``asc.set_platform`` / pyasc's set_platform)."""
    return PlatformAscendC(_config.current_platform())


@dataclass
class _Operand:
    pos: TPosition = TPosition.GM
    fmt: CubeFormat = CubeFormat.ND
    dtype: DataType = DataType.DT_FLOAT16
    trans: bool = False


def _align(x: int, a: int) -> int:
    return -(-x // a) * a


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


class MatmulApiTiling:
    """Single-core tiling (``matmul_tiling::MatmulApiTiling``): ``set_dim`` is 1."""

    def __init__(self, platform: Optional[PlatformAscendC] = None):
        self.platform = platform if platform is not None else get_ascendc_platform()
        self.a, self.b = _Operand(), _Operand()
        self.c = _Operand(dtype=DataType.DT_FLOAT)
        self.bias = _Operand(dtype=DataType.DT_FLOAT)
        self.dim = 1
        self.org = (0, 0, 0, 0)   # M, N, Ka, Kb
        self.shape = (0, 0, 0)
        self.has_bias = False
        self.buffer = (-1, -1, -1)   # L1, L0C, UB bytes (-1: the whole buffer)
        self.traverse = MatrixTraverse.FIRSTM
        self.fixed = (-1, -1, -1)
        self.base = (0, 0, 0)

    # ------------------------------------------------------------------ setters (pyasc names)
    def _set(self, which: str, pos, fmt, dtype, trans=False) -> int:
        op = _Operand(TPosition(int(pos)), CubeFormat(int(fmt)), DataType(int(dtype)), bool(trans))
        setattr(self, which, op)
        return 0

    def set_a_type(self, pos, type, data_type, is_trans: bool = False) -> int:  # noqa: A002
        return self._set("a", pos, type, data_type, is_trans)

    def set_b_type(self, pos, type, data_type, is_trans: bool = False) -> int:  # noqa: A002
        return self._set("b", pos, type, data_type, is_trans)

    def set_c_type(self, pos, type, data_type) -> int:  # noqa: A002
        return self._set("c", pos, type, data_type)

    def set_bias_type(self, pos, type, data_type) -> int:  # noqa: A002
        return self._set("bias", pos, type, data_type)

    def set_dim(self, dim: int) -> int:
        if int(dim) < 1:
            raise TilingError(f"set_dim({dim}): the core count must be >= 1")
        self.dim = int(dim)
        return 0

    def set_org_shape(self, org_m: int, org_n: int, org_ka: int, org_kb: Optional[int] = None
                      ) -> int:
        self.org = (int(org_m), int(org_n), int(org_ka), int(org_ka if org_kb is None else org_kb))
        return 0

    def set_shape(self, m: int, n: int, k: int) -> int:
        self.shape = (int(m), int(n), int(k))
        return 0

    def set_single_shape(self, m: int = -1, n: int = -1, k: int = -1) -> int:
        return self.set_shape(m, n, k)

    def enable_bias(self, is_bias_in: bool = False) -> int:
        self.has_bias = bool(is_bias_in)
        return 0

    def set_bias(self, is_bias_in: bool = False) -> int:
        return self.enable_bias(is_bias_in)

    def set_buffer_space(self, l1_size: int = -1, l0c_size: int = -1, ub_size: int = -1,
                         bt_size: int = -1) -> int:
        self.buffer = (int(l1_size), int(l0c_size), int(ub_size))
        return 0

    def set_traverse(self, traverse) -> int:
        self.traverse = MatrixTraverse(int(traverse))
        return 0

    def set_fix_split(self, base_m: int = -1, base_n: int = -1, base_k: int = -1) -> int:
        self.fixed = (int(base_m), int(base_n), int(base_k))
        return 0

    def get_base_m(self) -> int:
        return self.base[0]

    def get_base_n(self) -> int:
        return self.base[1]

    def get_base_k(self) -> int:
        return self.base[2]

    # ------------------------------------------------------------------ the tiling
    def _sizes(self):
        mem = self.platform.chip.memories
        l1 = self.buffer[0] if self.buffer[0] > 0 else mem.get("L1").size
        l0c = self.buffer[1] if self.buffer[1] > 0 else mem.get("L0C").size
        return l1, mem.get("L0A").size, mem.get("L0B").size, l0c

    def _check_types(self) -> int:
        if self.a.dtype != self.b.dtype:
            raise TilingError(f"A is {self.a.dtype.name} but B is {self.b.dtype.name}")
        if self.a.dtype not in _INPUTS:
            raise TilingError(f"matmul inputs of {self.a.dtype.name} are not supported; use "
                              f"{', '.join(d.name for d in _INPUTS)}")
        for op, name in ((self.a, "A"), (self.b, "B"), (self.c, "C")):
            if op.fmt != CubeFormat.ND:
                raise TilingError(f"{name} format {op.fmt.name}: only CubeFormat.ND is supported")
        return _SIZES[self.a.dtype]

    def get_tiling(self, tiling: TCubeTiling) -> int:
        """Fill ``tiling`` (an ``asc.adv.TCubeTiling``); returns 0. Raises TilingError when
        the parameters cannot be tiled (e.g. a fixed base tile that does not fit L0)."""
        if not isinstance(tiling, TCubeTiling):
            raise TypeError(f"get_tiling needs an asc.adv.TCubeTiling, got {type(tiling).__name__}")
        es = self._check_types()
        m, n, k = self.shape
        om, on, oka, okb = self.org
        if min(m, n, k) <= 0:
            if min(om, on, oka) <= 0:
                raise TilingError("set_shape(m, n, k) / set_org_shape first (positive sizes)")
            m, n, k = om, on, oka
        if min(om, on, oka) <= 0:
            om, on, oka, okb = m, n, k, k
        l1, l0a, l0b, l0c = self._sizes()
        base_m, base_n, base_k = self._base(m, n, k, es, l0a, l0b, l0c)
        sm, sn, used = self._split(m, n, k, es, base_m, base_n, base_k)
        base_m, base_n = min(base_m, _align(sm, 16)), min(base_n, _align(sn, 16))
        if self.fixed[0] > 0:
            base_m = self.fixed[0]
        if self.fixed[1] > 0:
            base_n = self.fixed[1]
        ksteps = _ceil(k, base_k)
        a_blk, b_blk = base_m * base_k * es, base_k * base_n * es
        bias_bytes = base_n * 4 if self.has_bias else 0
        room = l1 - bias_bytes
        if ksteps * (a_blk + b_blk) * 2 <= room:
            step, depth = ksteps, 2 * ksteps
        elif ksteps * (a_blk + b_blk) <= room:
            step, depth = ksteps, ksteps
        else:
            step = max(1, room // (2 * (a_blk + b_blk)))
            depth = 2 * step
            if room < a_blk + b_blk:
                raise TilingError(f"L1 ({l1} bytes) cannot hold one base block of A and B "
                                  f"({a_blk + b_blk} bytes)")
        c_blk = base_m * base_n * 4
        values = dict(
            used_core_num=used, m=om, n=on, k_a=oka, k_b=okb, single_core_m=sm,
            single_core_n=sn, single_core_k=k, base_m=base_m, base_n=base_n, base_k=base_k,
            depth_a1=depth, depth_b1=depth, step_m=1, step_n=1, is_bias=int(self.has_bias),
            trans_length=0, iterate_order=1 if self.traverse == MatrixTraverse.FIRSTN else 0,
            share_mode=0, share_l1_size=depth * (a_blk + b_blk) + bias_bytes,
            share_l0c_size=c_blk * (2 if 2 * c_blk <= l0c else 1),
            share_ub_size=0, step_k_a=step, step_k_b=step, db_l0a=2, db_l0b=2,
            db_l0c=2 if 2 * c_blk <= l0c else 1, batch_m=1, batch_n=1, single_batch_m=1,
            single_batch_n=1, batch_num=1)
        for key, value in values.items():
            setattr(tiling, key, value)
        self.base = (base_m, base_n, base_k)
        return 0

    def _base(self, m, n, k, es, l0a, l0b, l0c):
        k0 = {1: 32, 2: 16, 4: 8}[es]
        dm, dn, dk = {1: (128, 256, 128), 2: (128, 256, 64), 4: (128, 128, 32)}[es]
        fm, fn, fk = self.fixed
        base_m = fm if fm > 0 else min(dm, _align(m, 16))
        base_n = fn if fn > 0 else min(dn, _align(n, 16))
        base_k = fk if fk > 0 else min(dk, _align(k, k0))
        if base_m % 16 or base_n % 16 or base_k % k0:
            raise TilingError(f"set_fix_split({fm}, {fn}, {fk}): base_m and base_n must be "
                              f"multiples of 16 and base_k of {k0}")
        # shrink what the user did not fix until the buffers hold it
        while base_m * base_k * es * 2 > l0a or base_k * base_n * es * 2 > l0b:
            if fk <= 0 and base_k > k0:
                base_k = max(k0, base_k // 2 // k0 * k0)
            elif fn <= 0 and base_n > 16 and base_k * base_n * es * 2 > l0b:
                base_n = max(16, base_n // 2 // 16 * 16)
            elif fm <= 0 and base_m > 16:
                base_m = max(16, base_m // 2 // 16 * 16)
            else:
                raise TilingError(f"base tile {base_m}x{base_n}x{base_k} does not fit L0A/L0B "
                                  f"({l0a}/{l0b} bytes, double-buffered)")
        while base_m * base_n * 4 > l0c:
            if fn <= 0 and base_n > 16:
                base_n = max(16, base_n // 2 // 16 * 16)
            elif fm <= 0 and base_m > 16:
                base_m = max(16, base_m // 2 // 16 * 16)
            else:
                raise TilingError(f"base tile {base_m}x{base_n} does not fit L0C ({l0c} bytes)")
        return base_m, base_n, base_k

    def _split(self, m, n, k, es, base_m, base_n, base_k):
        """(single_core_m, single_core_n, used cores) with the least critical-core time."""
        fm, fn, _ = self.fixed
        am = base_m if fm > 0 else 16
        an = base_n if fn > 0 else 16
        k0 = {1: 32, 2: 16, 4: 8}[es]
        best = None
        for mc in range(1, self.dim + 1):
            sm = _align(_ceil(m, mc), am)
            for nc in range(1, self.dim // mc + 1):
                sn = _align(_ceil(n, nc), an)
                used = _ceil(m, sm) * _ceil(n, sn)
                if used > self.dim:
                    continue
                cube = _ceil(sm, 16) * _ceil(sn, 16) * _ceil(k, k0)
                loads = k * es * (sm * _ceil(sn, base_n) + sn * _ceil(sm, base_m))
                est = max(cube, loads / 100.0)
                key = (est, used, sm + sn)
                if best is None or key < best[0]:
                    best = (key, sm, sn, used)
        return best[1], best[2], best[3]


class MultiCoreMatmulTiling(MatmulApiTiling):
    """Multi-core tiling (``matmul_tiling::MultiCoreMatmulTiling``): ``set_dim(cores)`` splits
    M x N over up to that many cores (see the module docstring)."""

    def __init__(self, platform: Optional[PlatformAscendC] = None):
        super().__init__(platform)
        self.dim = self.platform.get_core_num()

    def set_single_range(self, *args) -> int:
        return 0


def cube_efficiency(report, m: int, n: int, k: int, dtype="float16", cores: int = None) -> float:
    """Fraction of the modeled cube peak a launch reached: m*n*k MACs in ``report.cycles``
    against ``cores`` (default: all AIC of the report's platform) x m0*n0*k0(dtype) MACs per
    cycle. Works for a launch on a modified config (``ASCEND910B2.replace(name=...)``) too."""
    chip = getattr(report, "_chip", None) or _config.get_platform(report.platform)
    cores = chip.aic_cores if cores is None else cores
    peak = chip.cube.macs_per_cycle(dtype) * cores
    return (m * n * k) / (report.cycles * peak) if report.cycles else 0.0
