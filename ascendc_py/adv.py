"""``asc.adv``: the high-level Matmul API (pyasc's ``asc.adv`` names, Ascend C's meaning).

Host side::

    tiling = asc.adv.TCubeTiling()                 # filled by ascendc_py.host's tiling helper
    MultiCoreMatmulTiling(get_ascendc_platform()) ... .get_tiling(tiling)
    kernel[tiling.used_core_num](a, b, c, tiling)  # a TCubeTiling argument: flattened to ints

Kernel side (``tiling: asc.adv.TCubeTiling`` parameter; ``tiling.m``, ``tiling.base_n`` … are
runtime integers)::

    mm = asc.adv.Matmul(a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.float16),
                        b=..., c=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND,
                        asc.float32), bias=...)
    asc.adv.register_matmul(pipe, workspace, mm, tiling)
    mm.set_tensor_a(a_gm); mm.set_tensor_b(b_gm); mm.set_bias(bias_gm); mm.set_tail(tm, tn)
    mm.iterate_all(c_gm)                           # or: with mm.iterate() as count:
    mm.end()                                       #         mm.get_tensor_c(ub_tile)

The compiler side lives in ``compiler/sema/adv.py`` (the Matmul object), ``compiler/sema/
structs.py`` (struct kernel parameters) and ``compiler/codegen/lower_matmul.py`` (the native
computation and its timing).
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, ClassVar

from .dsl.api import Builtin, _KernelClass
from .dsl.types import DataType, TPosition


class CubeFormat(enum.IntEnum):
    """Layout of a matrix operand (pyasc ``asc.CubeFormat``). The simulator supports ND
    (row-major) operands; NZ is accepted by the type but rejected by Matmul."""

    ND = 0
    NZ = 1


class LayoutMode(enum.IntEnum):
    """pyasc's ``LayoutMode``: how batch matmul's batches are laid out (``iterate_batch``,
    ``iterate_n_batch``). NONE (one matrix) and NORMAL (batches one after another: A
    batch_a x M x K, B batch_b x K x N, C batch x M x N); BSNGD ([B, S, N, G, D]), SBNGD
    ([S, B, N, G, D]) and BNGS1S2 ([B, N, G, S1, S2]), their axes from the tiling's
    ``*_layout_info_*`` fields (``compiler/sema/adv_batch.py``)."""

    NONE = 0
    NORMAL = 1
    BSNGD = 2
    SBNGD = 3
    BNGS1S2 = 4


# The enums of pyasc's Matmul configuration (also asc.<name>); the config records and helpers
# are in advlib/matmul_config.py, loaded on first use (building them costs ~5 ms of import).
class BatchMode(enum.IntEnum):
    """pyasc ``asc.BatchMode``: how batch matmul's batches relate to L1."""

    NONE = 0
    BATCH_LESS_THAN_L1 = 1
    BATCH_LARGE_THAN_L1 = 2
    SINGLE_LARGE_THAN_L1 = 3


class IterateMode(enum.IntEnum):
    """pyasc ``asc.IterateMode``: the iterate calls a Matmul is compiled for (a bit set)."""

    ITERATE_MODE_NORMAL = 0b00000001
    ITERATE_MODE_ALL = 0b00000010
    ITERATE_MODE_BATCH = 0b00000100
    ITERATE_MODE_N_BATCH = 0b00001000
    ITERATE_MODE_DEFAULT = 0b11111111


class IterateOrder(enum.IntEnum):
    """pyasc ``asc.IterateOrder``: the order of C's base tiles (M first, N first, the tiling's)."""

    ORDER_M = 0
    ORDER_N = 1
    UNDEF = 2


class ScheduleType(enum.IntEnum):
    """pyasc ``asc.ScheduleType``."""

    INNER_PRODUCT = 0
    OUTER_PRODUCT = 1


class BatchOutMode(enum.IntEnum):
    """pyasc ``asc.BatchOutMode``."""

    SINGLE_BATCH = 0
    MULTI_BATCH = 1
    DYNAMIC = 2


class MatmulConfigMode(enum.IntEnum):
    """pyasc ``asc.MatmulConfigMode``: the template ``get_mm_config`` builds."""

    CONFIG_NORM = 1
    CONFIG_MDL = 2
    CONFIG_SPECIALMDL = 3
    CONFIG_IBSHARE = 4


#: the names advlib/matmul_config.py serves through asc.adv (records, then helpers)
CONFIG_NAMES = ("MatmulConfig", "MatmulShapeParams", "MatmulQuantParams", "MatmulBatchParams",
                "MatmulFuncParams", "get_normal_config", "get_mdl_config",
                "get_special_mdl_config", "get_basic_config", "get_special_basic_config",
                "get_ib_share_norm_config", "get_mm_config", "QuantConfig",
                "get_matmul_api_tiling", "MatmulApiStaticTiling", "CONFIG_HELPERS",
                "CONFIG_RECORDS")


# ----------------------------------------------------------------------------- TCubeTiling
#: Every field of Ascend C's TCubeTiling, in pyasc's snake_case spelling and order.
TCUBE_TILING_FIELDS = (
    "used_core_num", "m", "n", "k_a", "k_b", "single_core_m", "single_core_n", "single_core_k",
    "base_m", "base_n", "base_k", "depth_a1", "depth_b1", "step_m", "step_n", "is_bias",
    "trans_length", "iterate_order", "share_mode", "share_l1_size", "share_l0c_size",
    "share_ub_size", "batch_m", "batch_n", "single_batch_m", "single_batch_n", "step_k_a",
    "step_k_b", "depth_a_l1_cache_ub", "depth_b_l1_cache_ub", "db_l0a", "db_l0b", "db_l0c",
    "a_layout_info_b", "a_layout_info_s", "a_layout_info_n", "a_layout_info_g",
    "a_layout_info_d", "b_layout_info_b", "b_layout_info_s", "b_layout_info_n",
    "b_layout_info_g", "b_layout_info_d", "c_layout_info_b", "c_layout_info_s1",
    "c_layout_info_n", "c_layout_info_g", "c_layout_info_s2", "batch_num",
)
_ALIASES = {"step_ka": "step_k_a", "step_kb": "step_k_b"}


class TCubeTiling:
    """Ascend C's matmul tiling record (all int32 fields, 0 by default).

    On the host it is a plain mutable record (``tiling.base_m = 128``; ``get_tiling`` of
    ``ascendc_py.host.MultiCoreMatmulTiling`` fills it). As a kernel parameter annotation
    (``tiling: asc.adv.TCubeTiling``) the launcher passes its fields as int32 scalar arguments
    and the kernel reads them as runtime integers (``tiling.single_core_m``). ``step_ka`` /
    ``step_kb`` are accepted as aliases of ``step_k_a`` / ``step_k_b``.
    """

    asc_name: ClassVar[str] = "adv.TCubeTiling"
    FIELDS: ClassVar[tuple[str, ...]] = TCUBE_TILING_FIELDS
    __slots__ = TCUBE_TILING_FIELDS

    def __init__(self, **fields: int):
        for name in TCUBE_TILING_FIELDS:
            object.__setattr__(self, name, 0)
        for name, value in fields.items():
            setattr(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        name = _ALIASES.get(name, name)
        if name not in TCUBE_TILING_FIELDS:
            raise AttributeError(f"TCubeTiling has no field '{name}'; fields: "
                                 f"{', '.join(TCUBE_TILING_FIELDS)}")
        value = int(value)
        if not -(2 ** 31) <= value < 2 ** 31:
            raise ValueError(f"TCubeTiling.{name} = {value} does not fit int32")
        object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> int:
        if name in _ALIASES:
            return getattr(self, _ALIASES[name])
        raise AttributeError(f"TCubeTiling has no field '{name}'; fields: "
                             f"{', '.join(TCUBE_TILING_FIELDS)}")

    def values(self) -> tuple[int, ...]:
        """The field values in declaration order (how a kernel argument is passed)."""
        return tuple(getattr(self, n) for n in TCUBE_TILING_FIELDS)

    def as_dict(self) -> dict[str, int]:
        return {n: getattr(self, n) for n in TCUBE_TILING_FIELDS}

    def __eq__(self, other) -> bool:
        return isinstance(other, TCubeTiling) and self.values() == other.values()

    def __hash__(self):
        return hash(self.values())

    def __repr__(self) -> str:
        main = ("used_core_num", "m", "n", "k_a", "single_core_m", "single_core_n",
                "single_core_k", "base_m", "base_n", "base_k", "depth_a1", "depth_b1", "step_m",
                "step_n", "step_k_a", "step_k_b", "is_bias", "iterate_order", "db_l0c")
        return "TCubeTiling(" + ", ".join(f"{n}={getattr(self, n)}" for n in main) + ", ...)"


def _tiling_struct(name: str, fields: tuple, doc: str, floats: tuple = ()) -> type:
    """A pyasc tiling record (``asc.Struct`` with int32 fields, float32 for ``floats``, all 0
    by default): a mutable host record and a struct kernel parameter whose fields the kernel
    reads as run-time values."""
    from .dsl.struct import Field, Struct
    from .dsl.types import float32, int32
    body = {f: Field(dtype=float32 if f in floats else int32,
                     default=0.0 if f in floats else 0) for f in fields}
    body.update(__doc__=doc, __module__=__name__, asc_name=f"adv.{name}")
    return type(name, (Struct,), body)


#: Ascend C's SoftMaxTiling fields in pyasc's spelling and order.
SOFTMAX_TILING_FIELDS = (
    "src_m", "src_k", "src_size", "out_max_m", "out_max_k", "out_max_size", "split_m",
    "split_k", "split_size", "reduce_m", "reduce_k", "reduce_size", "range_m", "tail_m",
    "tail_split_size", "tail_reduce_size")
SoftmaxTiling = _tiling_struct("SoftmaxTiling", SOFTMAX_TILING_FIELDS, """Ascend C's
    SoftMaxTiling (pyasc ``asc.adv.SoftmaxTiling``): filled on the host by
    ``ascendc_py.host_adv.softmax_tiling_func(src_shape, data_type_size,
    local_work_space_size)``, passed as a kernel parameter (``tiling: asc.adv.SoftmaxTiling``)
    to ``asc.adv.softmax``, which reads src_m, src_k and split_m (rows per pass).""")

#: Ascend C's RmsNormTiling fields in pyasc's spelling and order.
RMSNORM_TILING_FIELDS = (
    "b_length", "s_length", "h_length", "original_h_length", "reciprocal_of_h_length",
    "main_bsh_length", "main_bs_length", "main_bs_length_align", "loop_round",
    "input_tail_pos", "tail_bsh_length", "tail_bs_length")
RmsNormTiling = _tiling_struct("RmsNormTiling", RMSNORM_TILING_FIELDS, """Ascend C's
    RmsNormTiling (pyasc ``asc.adv.RmsNormTiling``; reciprocal_of_h_length is float32, the
    others int32): filled on the host by ``ascendc_py.host_adv.get_rms_norm_tiling_info``,
    passed as a kernel parameter (``tiling: asc.adv.RmsNormTiling``) to ``asc.adv.rmsnorm``.""",
    floats=("reciprocal_of_h_length",))


#: The LayerNormTiling fields of Ascend C's documentation that we use (its [B, S, H] form),
#: in pyasc's snake_case; the meanings of the buffer fields are ours (see host_adv).
LAYERNORM_TILING_FIELDS = (
    "b_length", "s_length", "h_length", "original_h_length", "input_x_size", "mean_var_size",
    "number_of_tmp_buf", "mean_tmp_tensor_pos", "mean_tmp_tensor_size",
    "variance_tmp_tensor_pos", "variance_tmp_tensor_size", "tmp_buf_size", "one_tmp_size")
LayerNormTiling = _tiling_struct("LayerNormTiling", LAYERNORM_TILING_FIELDS, """Ascend C's
    LayerNormTiling (the fields its documentation shows, in pyasc's spelling; not in pyasc):
    filled on the host by ``ascendc_py.host_adv.get_layer_norm_nd_tiling_info``, passed as a
    kernel parameter (``tiling: asc.adv.LayerNormTiling``) to ``asc.adv.layernorm``.""")


#: the asc.Struct tiling records, constructible in kernels too (``asc.adv.SoftmaxTiling(...)``)
TILING_STRUCTS = (SoftmaxTiling, RmsNormTiling, LayerNormTiling)


#: Struct types a kernel parameter may be annotated with (name -> (class, field names)).
STRUCT_PARAMS: dict[str, tuple[type, tuple[str, ...]]] = {
    "TCubeTiling": (TCubeTiling, TCUBE_TILING_FIELDS),
}


def struct_param_kind(annotation: Any):
    """The STRUCT_PARAMS key of a kernel parameter annotation, or None."""
    if isinstance(annotation, type):
        for key, (cls, _) in STRUCT_PARAMS.items():
            if annotation is cls:
                return key
        return None
    if isinstance(annotation, str):
        tail = annotation.split(".")[-1].strip()
        return tail if tail in STRUCT_PARAMS else None
    return None


# ----------------------------------------------------------------------------- Matmul types
@dataclass(frozen=True)
class MatmulType:
    """One operand of a Matmul: position, format, dtype, transposed (pyasc ``MatmulType``).
    Usable inside kernels (a compile-time value) and on the host."""

    position: TPosition
    format: CubeFormat
    dtype: DataType
    is_trans: bool = False
    layout: LayoutMode = LayoutMode.NONE
    asc_name: ClassVar[str] = "adv.MatmulType"


class Matmul(_KernelClass):
    """``asc.adv.Matmul(a=MatmulType, b=MatmulType, c=MatmulType, bias=None)``: the
    high-level matrix multiply C = A @ B (+ bias); ``matmul_config=`` takes an
    ``asc.adv.MatmulConfig`` (or a ``get_*_config`` / ``get_matmul_api_tiling`` result).
    Kernel-only. Methods: ``set_tensor_a``, ``set_tensor_b``, ``set_bias``, ``disable_bias``,
    ``set_tail``, ``set_org_shape``, ``set_single_shape``, ``iterate_all``, ``iterate`` (a
    ``with`` block, or a bare call whose tiles ``get_tensor_c`` then fetches),
    ``get_tensor_c``, ``async_get_tensor_c``, ``iterate_batch``, ``iterate_n_batch``,
    ``get_batch_tensor_c``, ``set_batch_num``, ``set_quant_scalar``, ``set_quant_vector``,
    ``set_workspace``, ``set_sparse_index``, ``end``."""

    asc_name = "adv.Matmul"


@dataclass(frozen=True)
class Property:
    """A platform constant read in kernels with ``asc.property(...)`` (pyasc core properties)."""

    name: str
    value: int


#: Bytes of one C0 block (32 on A2/A3): ``asc.property(asc.DEFAULT_C0_SIZE)``.
DEFAULT_C0_SIZE = Property("DEFAULT_C0_SIZE", 32)
property = Builtin("property", "asc.property(prop): the value of a platform property such as "  # noqa: A001
                   "asc.DEFAULT_C0_SIZE (32 bytes on 910B)")

#: (library use) ``asc.adv.shape_rows(t)``: (rows, k, original k) of a LocalTensor's ShapeInfo:
#: the product of the shape's dimensions but the last, the last one and the original shape's
#: last one; (0, 0, 0) when no ShapeInfo with dimensions is attached. Compile-time where the
#: ShapeInfo's values are.
shape_rows = Builtin("adv.shape_rows", "shape_rows(local_tensor): (rows, last dimension, "
                     "original last dimension) of its ShapeInfo; zeros without one")

register_matmul = Builtin(
    "adv.register_matmul",
    "register_matmul(pipe, workspace, matmul, tiling): bind a Matmul to its tiling. In a mix "
    "kernel the cube core (AIC) becomes the matmul server here: its own kernel ends.")

# The math functions (pyasc's asc.adv.acos ... asc.adv.axpy): kernel-language device functions
# of the library package ascendc_py.advlib, inlined by the kernels that call them. Loaded on
# first use (importing the library costs ~15 ms, which `import ascendc_py` does not pay).
MATH_APIS = ("acos", "acosh", "asin", "asinh", "atan", "atanh", "ceil", "cos", "cosh", "digamma",
             "erf", "erfc", "exp", "floor", "frac", "lgamma", "log", "round", "sign", "sin",
             "sinh", "tan", "tanh", "trunc", "power", "xor", "axpy")

#: The norm/activation APIs of the library (module of ascendc_py.advlib -> names), loaded
#: on first use like the math functions.
LIBRARY_APIS = {"softmax": ("softmax",), "normalization": ("rmsnorm",),
                "layernorm": ("layernorm",), "quant": ("quant",),
                "sortreg": ("concat", "extract"),
                "activation": ("gelu", "faster_gelu", "silu", "swiglu", "geglu")}
_LIBRARY_NAMES = {n: mod for mod, names in LIBRARY_APIS.items() for n in names}

__all__ = ["CubeFormat", "LayoutMode", "Property", "DEFAULT_C0_SIZE", "property", "TCubeTiling", "MatmulType", "Matmul", "register_matmul",
           "TCUBE_TILING_FIELDS", "SoftmaxTiling", "SOFTMAX_TILING_FIELDS",
           "RmsNormTiling", "RMSNORM_TILING_FIELDS",
           "LayerNormTiling", "LAYERNORM_TILING_FIELDS",
           "MatmulConfig", "MatmulShapeParams", "MatmulQuantParams", "MatmulBatchParams",
           "MatmulFuncParams", "BatchMode", "BatchOutMode", "IterateMode", "IterateOrder",
           "ScheduleType", "MatmulConfigMode"] + list(CONFIG_NAMES[:-2]) + \
    list(MATH_APIS) + sorted(_LIBRARY_NAMES)


def __getattr__(name: str):
    if name in MATH_APIS:
        from .advlib import math as _math
        for api in MATH_APIS:                 # bind them all: later lookups are plain
            globals()[api] = getattr(_math, api)
        return globals()[name]
    if name in CONFIG_NAMES:
        from .advlib import matmul_config as _config
        for n in CONFIG_NAMES:
            globals()[n] = getattr(_config, n)
        return globals()[name]
    if name in _LIBRARY_NAMES:
        import importlib
        mod = importlib.import_module(f".advlib.{_LIBRARY_NAMES[name]}", __package__)
        globals()[name] = getattr(mod, name)
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(MATH_APIS) | set(_LIBRARY_NAMES) | set(CONFIG_NAMES))
