"""Host-side matmul tiling (pyasc's ``asc.lib.host``; Ascend C's ``matmul_tiling`` API).

    import ascendc_py as asc
    from ascendc_py import host

    t = host.MultiCoreMatmulTiling(host.get_ascendc_platform())
    t.set_a_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT16, False)
    t.set_b_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT16, False)
    t.set_c_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT)
    t.set_dim(24); t.set_org_shape(m, n, k); t.set_shape(m, n, k)
    tiling = asc.adv.TCubeTiling(); t.get_tiling(tiling)

Three tilings, as pyasc's: ``MatmulApiTiling`` (one core), ``MultiCoreMatmulTiling``
(``set_dim`` cores) and ``BatchMatmulTiling`` (one core, ``batch_num`` products). How the tiling
is chosen (``get_tiling``):

* base tile: base_m x base_n x base_k = 128 x 256 x 64 for 16-bit inputs (128 x 128 x 32
  float32, 128 x 256 x 128 int8), shrunk to the (16-aligned) problem size and within
  ``set_split_range``; L0A and L0B hold two base blocks each (double buffering), L0C one
  base_m x base_n float32/int32 tile (two when they fit and ``set_double_buffer`` allows:
  ``db_l0c = 2``). ``set_fix_split`` overrides any of the three (-1: choose); a fixed base_k
  is a multiple of K0 or covers the whole single-core K (padded to K0 in L0, as the cube does).
* core split (multi-core): M x N is cut into m_dim x n_dim single-core blocks, each
  single_core_m x single_core_n (16-aligned, or multiples of ``set_align_split``'s values and
  of base_m/base_n when the user fixed them, within ``set_single_range``), choosing the split
  whose critical core has the least estimated time: max(cube cycles, GM->L1 bytes / 100 B per
  cycle). K is split too (k_dim > 1) only with ``enable_multi_core_split_k`` or a
  ``set_single_shape`` single_k below K. ``set_single_shape`` fixes the block.
  ``used_core_num = m_dim * n_dim * k_dim <= dim``.
* L1: A and B panel chunks of step_ka*base_k (step_kb*base_k) along K, two of each in L1
  (``depth_a1 = 2 * step_ka``; one with ``set_double_buffer(a=False)``); when the whole K
  fits, step = ceil(K / base_k). Everything fits ``set_buffer_space`` (default: the
  platform's L1 512 KB, L0C 128 KB).
* ``iterate_order``: 0 for ``MatrixTraverse.FIRSTM`` (default: M first), 1 for FIRSTN.
* the layout and batch fields come from ``set_*_layout``, ``set_batch_num`` and
  ``set_batch_info_for_normal``.
"""
from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import Optional

from .adv import TCubeTiling
from .dsl.types import TPosition
from .simulator import config as _config

__all__ = ["TPosition", "CubeFormat", "DataType", "MatrixTraverse", "MatrixMadType",
           "DequantType", "ScheduleType", "MatmulConfigParams", "PlatformAscendC",
           "PlatformAscendCManager", "MatmulApiTiling", "MultiCoreMatmulTiling",
           "BatchMatmulTiling", "get_ascendc_platform", "cube_efficiency", "TilingError"]


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


class MatrixMadType(enum.IntEnum):
    """The cube's multiply mode (``set_mad_type``): NORMAL is what the simulator models; HF32
    (float32 inputs rounded to hf32) and MXMODE are not modelled."""

    NORMAL = 0
    HF32 = 1
    MXMODE = 2


class DequantType(enum.IntEnum):
    """Quantisation mode of the Matmul's output (``set_dequant_type``): one scale for all of C
    (SCALAR, kernel side ``set_quant_scalar``) or a scale per column (TENSOR,
    ``set_quant_vector``)."""

    SCALAR = 0
    TENSOR = 1


class ScheduleType(enum.IntEnum):
    """How the Matmul moves data (``set_matmul_config_params``)."""

    INNER_PRODUCT = 0
    OUTER_PRODUCT = 1
    N_BUFFER_33 = 2


@dataclass(frozen=True)
class MatmulConfigParams:
    """Ascend C's ``MatmulConfigParams`` (``set_matmul_config_params(params)``)."""

    mm_config_type: int = 1
    enable_l1_cache_ub: bool = False
    schedule_type: ScheduleType = ScheduleType.INNER_PRODUCT
    traverse: MatrixTraverse = MatrixTraverse.NOSET
    en_vec_nd2nz: bool = False


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
    """Single-core tiling (``matmul_tiling::MatmulApiTiling``): one core computes the whole
    ``set_shape`` product. The setters return 0 as Ascend C's do (``set_matmul_config_params``
    returns None); a request that cannot be tiled raises :class:`TilingError` in
    ``get_tiling``."""

    _multi_core = False

    def __init__(self, platform: Optional[PlatformAscendC] = None):
        self.platform = platform if platform is not None else get_ascendc_platform()
        self.a, self.b = _Operand(), _Operand()
        self.c = _Operand(dtype=DataType.DT_FLOAT)
        self.bias = _Operand(dtype=DataType.DT_FLOAT)
        self.dim = 1
        self.org = (0, 0, 0, 0)   # M, N, Ka, Kb
        self.shape = (0, 0, 0)
        self.single = (-1, -1, -1)        # set_single_shape (multi-core only)
        self.single_range = (-1,) * 6     # set_single_range: max m, n, k, min m, n, k
        self.align = (-1, -1, -1)         # set_align_split
        self.split_k = False              # enable_multi_core_split_k
        self.has_bias = False
        self.buffer = (-1, -1, -1)   # L1, L0C, UB bytes (-1: the whole buffer)
        self.traverse = MatrixTraverse.FIRSTM
        self.fixed = (-1, -1, -1)
        self.base_range = (-1,) * 6       # set_split_range: max base m, n, k, min base m, n, k
        self.double_buffer = (True, True, True, True)   # A, B, C, bias
        self.nd2nz = (True, True)
        self.mad_type = MatrixMadType.NORMAL
        self.dequant = DequantType.SCALAR
        self.config = MatmulConfigParams()
        self.sparse = False
        self.layouts = {"a": (0,) * 5, "b": (0,) * 5, "c": (0,) * 5}
        self.batch_num = 1
        self.base = (0, 0, 0)
        self.core_split = (0, 0, 0, 0)    # used cores, m_dim, n_dim, k_dim (after get_tiling)
        self.single_shape = (0, 0, 0)

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

    def set_org_shape(self, org_m: int, org_n: int, org_ka: int, org_kb: Optional[int] = None
                      ) -> int:
        """The whole matrices (their row strides): A is M x Ka, B is Kb x N."""
        self.org = (int(org_m), int(org_n), int(org_ka), int(org_ka if org_kb is None else org_kb))
        return 0

    def set_shape(self, m: int, n: int, k: int) -> int:
        """The product to compute (the whole of the org shape, or a part of it)."""
        self.shape = (int(m), int(n), int(k))
        return 0

    def enable_bias(self, is_bias_in: bool = False) -> int:
        self.has_bias = bool(is_bias_in)
        return 0

    def set_bias(self, is_bias_in: bool = False) -> int:
        return self.enable_bias(is_bias_in)

    def set_buffer_space(self, l1_size: int = -1, l0c_size: int = -1, ub_size: int = -1,
                         bt_size: int = -1) -> int:
        """Bytes of L1 / L0C / UB the Matmul may use (-1: the whole buffer). The bias table
        size is accepted; the bias row is counted in L1."""
        self.buffer = (int(l1_size), int(l0c_size), int(ub_size))
        return 0

    def set_traverse(self, traverse) -> int:
        self.traverse = MatrixTraverse(int(traverse))
        return 0

    def set_fix_split(self, base_m: int = -1, base_n: int = -1, base_k: int = -1) -> int:
        """Fix base_m / base_n / base_k (-1: let get_tiling choose). base_m and base_n must be
        multiples of 16; base_k a multiple of the cube's K0 (16 for 16-bit inputs, 8 float32,
        32 int8) or the whole single-core K (padded to K0 in L0A/L0B, as the cube does)."""
        self.fixed = (int(base_m), int(base_n), int(base_k))
        return 0

    def set_split_range(self, max_base_m: int = -1, max_base_n: int = -1, max_base_k: int = -1,
                        min_base_m: int = -1, min_base_n: int = -1, min_base_k: int = -1) -> int:
        """Bounds for the base tile get_tiling chooses (-1: no bound); bounds that are not
        fractal-aligned are aligned up (to 16, or K0 for base_k)."""
        self.base_range = tuple(int(v) for v in (max_base_m, max_base_n, max_base_k,
                                                 min_base_m, min_base_n, min_base_k))
        return 0

    def set_double_buffer(self, a: bool, b: bool, c: bool, bias: bool, trans_nd2nz: bool = True,
                          trans_nz2nd: bool = True) -> int:
        """Double buffering of A and B in L1 (``depth_a1 = 2 * step_k_a`` when on, else
        ``step_k_a``) and of C in L0C (``db_l0c``). The ND<->NZ flags are recorded (only ND is
        supported)."""
        self.double_buffer = (bool(a), bool(b), bool(c), bool(bias))
        self.nd2nz = (bool(trans_nd2nz), bool(trans_nz2nd))
        return 0

    def set_mad_type(self, mad_type) -> int:
        """NORMAL; HF32 / MXMODE are not modelled (get_tiling raises)."""
        self.mad_type = MatrixMadType(int(mad_type))
        return 0

    def set_dequant_type(self, dequant_type) -> int:
        """Recorded for the kernel side (``set_quant_scalar`` / ``set_quant_vector``); it
        changes no TCubeTiling field here."""
        self.dequant = DequantType(int(dequant_type))
        return 0

    def set_sparse(self, is_sparse_in: bool = False) -> int:
        """Sparse Matmul (4:2 structured A) is not modelled: get_tiling raises when set."""
        self.sparse = bool(is_sparse_in)
        return 0

    def _layout(self, which: str, b: int, s: int, n: int, g: int, d: int) -> int:
        self.layouts[which] = tuple(int(v) for v in (b, s, n, g, d))
        return 0

    def set_a_layout(self, b: int, s: int, n: int, g: int, d: int) -> int:
        """A's B/S/N/G/D axes (BSNGD, SBNGD, BNGS1S2 layouts): the ``a_layout_info_*`` fields."""
        return self._layout("a", b, s, n, g, d)

    def set_b_layout(self, b: int, s: int, n: int, g: int, d: int) -> int:
        """B's B/S/N/G/D axes: the ``b_layout_info_*`` fields."""
        return self._layout("b", b, s, n, g, d)

    def set_c_layout(self, b: int, s: int, n: int, g: int, d: int) -> int:
        """C's B/S1/N/G/S2 axes: the ``c_layout_info_*`` fields (pyasc's (b, s, n, g, d))."""
        return self._layout("c", b, s, n, g, d)

    def set_batch_num(self, batch: int) -> int:
        """The number of batches of an ``iterate_batch`` (max of A's and B's): ``batch_num``."""
        if int(batch) < 1:
            raise TilingError(f"set_batch_num({batch}): the batch count must be >= 1")
        self.batch_num = int(batch)
        return 0

    def set_batch_info_for_normal(self, batch_a: int, batch_b: int, m: int, n: int, k: int
                                  ) -> int:
        """NORMAL layout batches: A is batch_a x M x K, B batch_b x K x N, C max x M x N. Sets
        the shape, batch_num and the layout fields (A: b, s=M, d=K; B: b, s=N, d=K; C: b,
        s1=M, s2=N; n = g = 1)."""
        batch_a, batch_b, m, n, k = (int(v) for v in (batch_a, batch_b, m, n, k))
        if min(batch_a, batch_b, m, n, k) < 1:
            raise TilingError(f"set_batch_info_for_normal({batch_a}, {batch_b}, {m}, {n}, {k}): "
                              f"every value must be >= 1")
        self.set_shape(m, n, k)
        self.set_batch_num(max(batch_a, batch_b))
        self._layout("a", batch_a, m, 1, 1, k)
        self._layout("b", batch_b, n, 1, 1, k)
        self._layout("c", max(batch_a, batch_b), m, 1, 1, n)
        return 0

    def set_matmul_config_params(self, mm_config_type=1, enable_l1_cache_ub: bool = False,
                                 schedule_type=ScheduleType.INNER_PRODUCT,
                                 traverse=MatrixTraverse.NOSET, en_vec_nd2nz: bool = False
                                 ) -> None:
        """``set_matmul_config_params(mm_config_type, enable_l1_cache_ub, schedule_type,
        traverse, en_vec_nd2nz)`` or ``(MatmulConfigParams(...))``; returns None as Ascend C's
        void function. A traverse other than NOSET is ``set_traverse``; the rest is recorded
        (only config type 0 or 1 is valid)."""
        if isinstance(mm_config_type, MatmulConfigParams):
            params = mm_config_type
        else:
            params = MatmulConfigParams(int(mm_config_type), bool(enable_l1_cache_ub),
                                        ScheduleType(int(schedule_type)),
                                        MatrixTraverse(int(traverse)), bool(en_vec_nd2nz))
        if params.mm_config_type not in (0, 1):
            raise TilingError(f"set_matmul_config_params: mm_config_type must be 0 or 1, got "
                              f"{params.mm_config_type}")
        self.config = params
        if params.traverse != MatrixTraverse.NOSET:
            self.traverse = params.traverse

    def get_base_m(self) -> int:
        """base_m of the last get_tiling (before one: the fixed split, else 0)."""
        return self.base[0] or max(self.fixed[0], 0)

    def get_base_n(self) -> int:
        return self.base[1] or max(self.fixed[1], 0)

    def get_base_k(self) -> int:
        return self.base[2] or max(self.fixed[2], 0)

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
        if self.mad_type != MatrixMadType.NORMAL:
            raise TilingError(f"set_mad_type({self.mad_type.name}): only MatrixMadType.NORMAL "
                              f"is modelled by the simulator")
        if self.sparse:
            raise TilingError("set_sparse(True): sparse Matmul is not modelled by the simulator")
        return _SIZES[self.a.dtype]

    def get_tiling(self, tiling: TCubeTiling) -> int:
        """Fill ``tiling`` (an ``asc.adv.TCubeTiling``); returns 0. Raises TilingError when
        the parameters cannot be tiled (e.g. a fixed base tile that does not fit L0)."""
        if not isinstance(tiling, TCubeTiling):
            raise TypeError(f"get_tiling needs an asc.adv.TCubeTiling, got {type(tiling).__name__}")
        es = self._check_types()
        k0 = _K0[es]
        m, n, k = self.shape
        om, on, oka, okb = self.org
        if min(m, n, k) <= 0:
            if min(om, on, oka) <= 0:
                raise TilingError("set_shape(m, n, k) / set_org_shape first (positive sizes)")
            m, n, k = om, on, oka
        if min(om, on, oka) <= 0:
            om, on, oka, okb = m, n, k, k
        l1, l0a, l0b, l0c = self._sizes()
        sk_fixed = self._fixed_single_k(k)
        base_m, base_n, base_k = self._base(m, n, sk_fixed or k, es, l0a, l0b, l0c)
        sm, sn, sk, used, dims = self._split(m, n, k, es, base_m, base_n, base_k)
        base_m, base_n = min(base_m, _align(sm, 16)), min(base_n, _align(sn, 16))
        if self.fixed[2] <= 0 and sk < k:      # K split over cores: a base step within it
            base_k = min(base_k, sk)
        if self.fixed[0] > 0:
            base_m = self.fixed[0]
        if self.fixed[1] > 0:
            base_n = self.fixed[1]
        if base_k % k0 and base_k < sk:
            raise TilingError(f"base_k {base_k} is not a multiple of {k0} and does not cover the "
                              f"single-core K {sk}")
        pk = _align(base_k, k0)           # base_k as L0A/L0B hold it (padded to K0)
        ksteps = _ceil(sk, base_k)
        a_blk, b_blk = base_m * pk * es, pk * base_n * es
        bias_bytes = base_n * 4 if self.has_bias else 0
        room = l1 - bias_bytes
        db_a, db_b, db_c = self.double_buffer[:3]
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
        depth_a, depth_b = (depth if db_a else step), (depth if db_b else step)
        c_blk = base_m * base_n * 4
        db_l0c = 2 if db_c and 2 * c_blk <= l0c else 1
        values = dict(
            used_core_num=used, m=om, n=on, k_a=oka, k_b=okb, single_core_m=sm,
            single_core_n=sn, single_core_k=sk, base_m=base_m, base_n=base_n, base_k=base_k,
            depth_a1=depth_a, depth_b1=depth_b, step_m=1, step_n=1, is_bias=int(self.has_bias),
            trans_length=0, iterate_order=1 if self.traverse == MatrixTraverse.FIRSTN else 0,
            share_mode=0, share_l1_size=depth_a * a_blk + depth_b * b_blk + bias_bytes,
            share_l0c_size=c_blk * db_l0c,
            share_ub_size=0, step_k_a=step, step_k_b=step, db_l0a=2, db_l0b=2,
            db_l0c=db_l0c, batch_m=1, batch_n=1, single_batch_m=1,
            single_batch_n=1, batch_num=self.batch_num)
        for which, names in _LAYOUT_FIELDS.items():
            values.update(zip(names, self.layouts[which]))
        for key, value in values.items():
            setattr(tiling, key, value)
        self.base = (base_m, base_n, base_k)
        self.core_split = (used, *dims)
        self.single_shape = (sm, sn, sk)
        return 0

    def _fixed_single_k(self, k: int) -> int:
        return 0

    def _base(self, m, n, k, es, l0a, l0b, l0c):
        k0 = _K0[es]
        dm, dn, dk = {1: (128, 256, 128), 2: (128, 256, 64), 4: (128, 128, 32)}[es]
        fm, fn, fk = self.fixed
        xm, xn, xk, im, in_, ik = self.base_range
        dm, dn, dk = (min(d, _align(x, a)) if x > 0 else d
                      for d, x, a in ((dm, xm, 16), (dn, xn, 16), (dk, xk, k0)))
        base_m = fm if fm > 0 else min(dm, _align(m, 16))
        base_n = fn if fn > 0 else min(dn, _align(n, 16))
        base_k = fk if fk > 0 else min(dk, _align(k, k0))
        if fm <= 0 and im > 0:
            base_m = max(base_m, _align(im, 16))
        if fn <= 0 and in_ > 0:
            base_n = max(base_n, _align(in_, 16))
        if fk <= 0 and ik > 0:
            base_k = max(base_k, _align(ik, k0))
        if base_m % 16 or base_n % 16 or (base_k % k0 and base_k < k):
            raise TilingError(f"set_fix_split({fm}, {fn}, {fk}): base_m and base_n must be "
                              f"multiples of 16 and base_k of {k0} (or the whole K, {k})")
        pk = _align(base_k, k0)
        # shrink what the user did not fix, down to the split range's minimum (default one
        # fractal), until the buffers hold it
        lo_m, lo_n = max(16, _align(im, 16)), max(16, _align(in_, 16))
        lo_k = max(k0, _align(ik, k0))
        while base_m * pk * es * 2 > l0a or pk * base_n * es * 2 > l0b:
            if fk <= 0 and base_k > lo_k:
                base_k = pk = max(lo_k, base_k // 2 // k0 * k0)
            elif fn <= 0 and base_n > lo_n and pk * base_n * es * 2 > l0b:
                base_n = max(lo_n, base_n // 2 // 16 * 16)
            elif fm <= 0 and base_m > lo_m:
                base_m = max(lo_m, base_m // 2 // 16 * 16)
            else:
                raise TilingError(f"base tile {base_m}x{base_n}x{base_k} does not fit L0A/L0B "
                                  f"({l0a}/{l0b} bytes, double-buffered)")
        while base_m * base_n * 4 > l0c:
            if fn <= 0 and base_n > lo_n:
                base_n = max(lo_n, base_n // 2 // 16 * 16)
            elif fm <= 0 and base_m > lo_m:
                base_m = max(lo_m, base_m // 2 // 16 * 16)
            else:
                raise TilingError(f"base tile {base_m}x{base_n} does not fit L0C ({l0c} bytes)")
        return base_m, base_n, base_k

    def _split(self, m, n, k, es, base_m, base_n, base_k):
        """(single_core_m, single_core_n, single_core_k, used cores, (m_dim, n_dim, k_dim)):
        one core computes the whole product."""
        return m, n, k, 1, (1, 1, 1)


class MultiCoreMatmulTiling(MatmulApiTiling):
    """Multi-core tiling (``matmul_tiling::MultiCoreMatmulTiling``): ``set_dim(cores)`` splits
    M x N (and K with ``enable_multi_core_split_k``) over up to that many cores (see the module
    docstring)."""

    _multi_core = True

    def __init__(self, platform: Optional[PlatformAscendC] = None):
        super().__init__(platform)
        self.dim = self.platform.get_core_num()

    def set_dim(self, dim: int) -> int:
        """The number of cores the product may use."""
        if int(dim) < 1:
            raise TilingError(f"set_dim({dim}): the core count must be >= 1")
        self.dim = int(dim)
        return 0

    def set_single_shape(self, single_m: int = -1, single_n: int = -1, single_k: int = -1
                         ) -> int:
        """Fix the single-core block (-1: choose). A single_k below K splits K over cores (each
        core's C block is a partial sum the kernel accumulates, e.g. with atomic add)."""
        self.single = (int(single_m), int(single_n), int(single_k))
        return 0

    def set_single_range(self, max_m: int = -1, max_n: int = -1, max_k: int = -1,
                         min_m: int = -1, min_n: int = -1, min_k: int = -1) -> int:
        """Bounds for the single-core block get_tiling chooses (-1: none)."""
        self.single_range = tuple(int(v) for v in (max_m, max_n, max_k, min_m, min_n, min_k))
        return 0

    def set_align_split(self, align_m: int, align_n: int, align_k: int) -> int:
        """Make single_core_m / _n / _k multiples of these (-1 or 0: choose)."""
        self.align = (int(align_m), int(align_n), int(align_k))
        return 0

    def enable_multi_core_split_k(self, flag: bool) -> None:
        """Let get_tiling split K over cores too (off by default; each core then produces a
        partial sum of its C block, which the kernel must accumulate in GM)."""
        self.split_k = bool(flag)

    def get_single_shape(self) -> tuple:
        """(single_core_m, single_core_n, single_core_k) of the last get_tiling."""
        return self.single_shape

    def get_core_num(self) -> tuple:
        """(used cores, m_dim, n_dim) of the last get_tiling: the cores the product uses and
        how many single-core blocks M and N are cut into."""
        used, m_dim, n_dim, _ = self.core_split
        return used, m_dim, n_dim

    def _fixed_single_k(self, k: int) -> int:
        return min(self.single[2], k) if self.single[2] > 0 else 0

    def _split(self, m, n, k, es, base_m, base_n, base_k):
        """(single_core_m, single_core_n, single_core_k, used cores, (m_dim, n_dim, k_dim))
        with the least critical-core time within the fixed shape, ranges and alignments."""
        fm, fn, _ = self.fixed
        am = base_m if fm > 0 else 16
        an = base_n if fn > 0 else 16
        user_align = [a if a > 0 else 0 for a in self.align]
        if user_align[0]:
            am = _lcm(am, user_align[0])
        if user_align[1]:
            an = _lcm(an, user_align[1])
        k0 = _K0[es]
        xm, xn, xk, im, in_, ik = self.single_range
        best = None
        for mc in range(1, self.dim + 1):
            sm = self._single(m, mc, am, self.single[0], xm, im)
            if sm is None:
                continue
            for nc in range(1, self.dim // mc + 1):
                sn = self._single(n, nc, an, self.single[1], xn, in_)
                if sn is None:
                    continue
                for sk in self._k_candidates(k, user_align[2], self.dim // (mc * nc), xk, ik):
                    dims = (_ceil(m, sm), _ceil(n, sn), _ceil(k, sk))
                    used = dims[0] * dims[1] * dims[2]
                    if used > self.dim:
                        continue
                    cube = _ceil(sm, 16) * _ceil(sn, 16) * _ceil(sk, k0)
                    loads = sk * es * (sm * _ceil(sn, base_n) + sn * _ceil(sm, base_m))
                    est = max(cube, loads / 100.0)
                    key = (est, used, sm + sn)
                    if best is None or key < best[0]:
                        best = (key, sm, sn, sk, used, dims)
        if best is None:
            raise TilingError(f"no single-core block of {m}x{n}x{k} fits {self.dim} cores within "
                              f"the fixed single shape {self.single}, range {self.single_range} "
                              f"and alignment {self.align}")
        return best[1:]

    @staticmethod
    def _single(size, parts, align, fixed, hi, lo):
        """The single-core size along M or N for ``parts`` blocks (aligned), the fixed size,
        or None outside the range asked for."""
        if fixed > 0:
            return min(fixed, size)
        s = _align(_ceil(size, parts), align)
        if (hi > 0 and s > hi) or (lo > 0 and s < lo):
            return None
        return s

    def _k_candidates(self, k, align, cores, hi, lo):
        if self.single[2] > 0:
            return [min(self.single[2], k)]
        if not self.split_k and hi <= 0:
            return [k]
        out = []
        for parts in range(1, max(cores, 1) + 1 if self.split_k else 2):
            s = _align(_ceil(k, parts), align) if align else _ceil(k, parts)
            s = min(s, k)
            if (hi > 0 and s > hi) or (lo > 0 and s < lo) or s in out:
                continue
            out.append(s)
        return out or [k]


class BatchMatmulTiling(MatmulApiTiling):
    """Batch tiling (``matmul_tiling::BatchMatmulTiling``): one core computes ``batch_num``
    products of the ``set_shape`` size (``set_batch_num`` / ``set_batch_info_for_normal``,
    the layouts of ``set_*_layout``), each tiled as by MatmulApiTiling."""

    def get_core_num(self) -> tuple:
        """(used cores, m_dim, n_dim, batch_core_m, batch_core_n) of the last get_tiling: one
        core, which holds every batch of A and of B."""
        used, m_dim, n_dim, _ = self.core_split
        return used, m_dim, n_dim, 1, 1


def _lcm(a: int, b: int) -> int:
    return a * b // math.gcd(a, b)


_K0 = {1: 32, 2: 16, 4: 8}
_LAYOUT_FIELDS = {
    "a": ("a_layout_info_b", "a_layout_info_s", "a_layout_info_n", "a_layout_info_g",
          "a_layout_info_d"),
    "b": ("b_layout_info_b", "b_layout_info_s", "b_layout_info_n", "b_layout_info_g",
          "b_layout_info_d"),
    "c": ("c_layout_info_b", "c_layout_info_s1", "c_layout_info_n", "c_layout_info_g",
          "c_layout_info_s2"),
}


def cube_efficiency(report, m: int, n: int, k: int, dtype="float16", cores: int = None) -> float:
    """Fraction of the modeled cube peak a launch reached: m*n*k MACs in ``report.cycles``
    against ``cores`` (default: all AIC of the report's platform) x m0*n0*k0(dtype) MACs per
    cycle. Works for a launch on a modified config (``ASCEND910B2.replace(name=...)``) too."""
    chip = getattr(report, "_chip", None) or _config.get_platform(report.platform)
    cores = chip.aic_cores if cores is None else cores
    peak = chip.cube.macs_per_cycle(dtype) * cores
    return (m * n * k) / (report.cycles * peak) if report.cycles else 0.0


# NCHW/NHWC <-> NC1HWC0 and FracZ (conv19; host_layout.py)
from .host_layout import (c0_for, fracz_to_oihw, nc1hwc0_to_nchw, nc1hwc0_to_nhwc,  # noqa: E402
                          nchw_to_nc1hwc0, nhwc_to_nc1hwc0, oihw_to_fracz)
__all__ += ["c0_for", "nchw_to_nc1hwc0", "nhwc_to_nc1hwc0", "nc1hwc0_to_nchw",
            "nc1hwc0_to_nhwc", "oihw_to_fracz", "fracz_to_oihw"]
