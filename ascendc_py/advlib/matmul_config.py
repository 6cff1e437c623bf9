"""pyasc's QuantConfig and Matmul configuration records and helpers (``asc.adv.QuantConfig``,
``asc.adv.MatmulConfig``, the ``get_*_config`` functions, ``MatmulShapeParams`` /
``MatmulQuantParams`` / ``MatmulBatchParams`` / ``MatmulFuncParams``); the enums they take are
in ``ascendc_py.adv``.

Plain Python (not a kernel library): every record is a frozen dataclass, usable on the host and
built in kernels as a compile-time value (``compiler/sema/adv.py`` registers a constructor per
name; its arguments must be compile-time). ``asc.adv.Matmul(..., matmul_config=cfg)`` takes one.

What the simulator does with a MatmulConfig (our choice, README "High-level library"): Ascend
C's configs select a scheduling template (NORM, MDL, basic block, IBShare ...), which changes
how Matmul moves data, not what it computes: the result here is the same for every config, and
the timing model prices the tiling's schedule (``compiler/codegen/timing_matmul.py``) whatever
the config. The config is checked (field types and ranges) and kept on the Matmul; its
``iterate_order`` (ORDER_M/ORDER_N, not UNDEF) overrides the tiling's for ``with
mm.iterate()``'s tile order.

The helpers set what Ascend C's documentation of GetNormalConfig, GetMDLConfig,
GetSpecialMDLConfig, GetBasicConfig, GetSpecialBasicConfig, GetIBShareNormConfig and
GetMMConfig says each template is: NORM (do_norm), MDL (do_multi_data_load), SpecialMDL
(do_special_mdl), basic block (do_basic_block with basic_m/n/k), special basic block
(do_special_basic_block with the single-core shape and steps), IBShare (do_ib_share_norm).
"""
from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass
from typing import ClassVar


from ..adv import (BatchMode, BatchOutMode, IterateMode, IterateOrder,  # noqa: E402
                   MatmulConfigMode, ScheduleType)


#: MatmulConfig's fields in pyasc's order with their defaults (pyasc's signature)
MATMUL_CONFIG_FIELDS = (
    ("do_norm", True), ("do_basic_block", False), ("do_multi_data_load", False), ("basic_m", 0),
    ("basic_n", 0), ("basic_k", 0), ("intrinsics_check", False), ("is_n_batch", False),
    ("en_vec_nd2nz", False), ("do_special_basic_block", False), ("do_mte2_preload", 0),
    ("single_core_m", 0), ("single_core_n", 0), ("single_core_k", 0), ("step_m", 0),
    ("step_n", 0), ("base_mn", 0), ("single_core_mn", 0), ("en_unit_flag", True),
    ("is_per_tensor", False), ("has_anti_quant_offset", False), ("do_ib_share_norm", False),
    ("do_special_mdl", False), ("enable_init", True),
    ("batch_mode", BatchMode.BATCH_LESS_THAN_L1), ("enable_end", True),
    ("enable_get_tensor_c", True), ("enable_set_org_shape", True), ("enable_set_bias", True),
    ("enable_set_tail", True), ("enable_quant_vector", True), ("enable_set_define_data", True),
    ("iterate_mode", IterateMode.ITERATE_MODE_DEFAULT), ("enable_reuse", True),
    ("enable_ub_reuse", False), ("enable_l1_cache_ub", False), ("intra_block_part_sum", False),
    ("iterate_order", IterateOrder.UNDEF), ("schedule_type", ScheduleType.INNER_PRODUCT),
    ("enable_double_cache", 0), ("is_bias_batch", True), ("enable_static_pad_zeros", False),
    ("is_partial_output", False), ("enable_mix_dual_master", False), ("is_a2b2_shared", False),
    ("is_enable_channel_split", False), ("enable_kdim_reorder_load", False),
    ("is_co1_shared", False), ("shared_co1_buffer_size", 64 * 1024),
    ("batch_out_mode", BatchOutMode.SINGLE_BATCH))
_ENUMS = {"batch_mode": BatchMode, "iterate_mode": IterateMode, "iterate_order": IterateOrder,
          "schedule_type": ScheduleType, "batch_out_mode": BatchOutMode}


def _check_fields(obj, enums: dict) -> None:
    for f in dataclasses.fields(obj):
        v = getattr(obj, f.name)
        if f.name in enums:
            try:
                object.__setattr__(obj, f.name, enums[f.name](int(v)))
            except (ValueError, TypeError):
                raise ValueError(f"{type(obj).__name__}.{f.name} must be a "
                                 f"{enums[f.name].__name__} member, got {v!r}") from None
        elif isinstance(f.default, bool):
            if not isinstance(v, (bool, int)) or int(v) not in (0, 1):
                raise ValueError(f"{type(obj).__name__}.{f.name} must be a bool, got {v!r}")
            object.__setattr__(obj, f.name, bool(v))
        elif isinstance(f.default, int):
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 2 ** 32:
                raise ValueError(f"{type(obj).__name__}.{f.name} must be an int in [0, 2**32), "
                                 f"got {v!r}")


def _record(name: str, fields: tuple, doc: str, enums: dict = None) -> type:
    """A frozen dataclass record of ``fields`` ((name, default), ...) checked on creation."""
    enums = enums or {}

    def __post_init__(self):
        _check_fields(self, enums)
    ns = {"__annotations__": {f: type(d).__mro__[-2] if isinstance(d, enum.Enum) else type(d)
                              for f, d in fields},
          "__doc__": doc, "__module__": "ascendc_py.adv", "__post_init__": __post_init__,
          "asc_name": f"adv.{name}"}
    ns["__annotations__"]["asc_name"] = ClassVar[str]
    ns.update({f: d for f, d in fields})
    return dataclass(frozen=True)(type(name, (), ns))


MatmulConfig = _record("MatmulConfig", MATMUL_CONFIG_FIELDS, """pyasc ``asc.adv.MatmulConfig``
    (Ascend C's MatmulConfig): the template and switches of a Matmul, a compile-time record
    (every field keyword, pyasc's names and defaults). Passed as
    ``asc.adv.Matmul(a, b, c, bias, matmul_config=cfg)``; see ascendc_py/advlib/
    matmul_config.py for what the simulator does with it.""", _ENUMS)
MatmulShapeParams = _record("MatmulShapeParams", (
    ("single_core_m", 0), ("single_core_n", 0), ("single_core_k", 0), ("basic_m", 0),
    ("basic_n", 0), ("basic_k", 0)), "pyasc ``asc.adv.MatmulShapeParams`` (for get_mm_config).")
MatmulQuantParams = _record("MatmulQuantParams", (
    ("is_per_tensor", False), ("has_anti_quant_offset", False)),
    "pyasc ``asc.adv.MatmulQuantParams`` (for get_mm_config).")
MatmulBatchParams = _record("MatmulBatchParams", (
    ("is_b_batch", False), ("batch_mode", BatchMode.BATCH_LESS_THAN_L1),
    ("is_bias_batch", False)), "pyasc ``asc.adv.MatmulBatchParams`` (for get_mm_config).",
    {"batch_mode": BatchMode})
MatmulFuncParams = _record("MatmulFuncParams", (
    ("intrinsics_limit", False), ("en_vec_nd2_nz", False), ("enable_double_cache", False),
    ("enable_l1_cache", False), ("do_mte2_pre_load", 0), ("iterate_order", IterateOrder.ORDER_M),
    ("schedule_type", ScheduleType.INNER_PRODUCT), ("enable_reuse", True),
    ("enable_ub_reuse", False), ("is_partial_output", False), ("is_a2_b2_shared", False),
    ("is_enable_channel_split", False), ("enable_kdim_reorder_load", False)),
    "pyasc ``asc.adv.MatmulFuncParams`` (for get_mm_config).",
    {"iterate_order": IterateOrder, "schedule_type": ScheduleType})


# ----------------------------------------------------------------------------- quant
@dataclass(frozen=True)
class QuantConfig:
    """pyasc ``asc.adv.QuantConfig(calc_count=0, offset_count=0, scale_count=0,
    work_local_size=0)`` (Ascend C's AscendQuantConfig): a compile-time record, built in
    kernels or on the host, passed as ``config=`` to ``asc.adv.quant``. calc_count (> 0): the
    count when quant's count is None; work_local_size (> 0): bytes of temp_buffer used;
    scale_count/offset_count: 0 or 1 (the scalar, per-tensor form; see advlib/quant.py)."""

    calc_count: int = 0
    offset_count: int = 0
    scale_count: int = 0
    work_local_size: int = 0
    asc_name: ClassVar[str] = "adv.QuantConfig"

    def __post_init__(self):
        for name in ("calc_count", "offset_count", "scale_count", "work_local_size"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 2 ** 32:
                raise ValueError(f"QuantConfig.{name} must be an int in [0, 2**32), got {v!r}")


QuantConfig.__module__ = "ascendc_py.adv"


# ----------------------------------------------------------------------------- helpers
def get_normal_config(intrinsics_limit=False, batch_loop=False, is_vec_nd2_nz=False,
                      bmm_mode=BatchMode.BATCH_LESS_THAN_L1, is_msg_reuse=True,
                      iterate_order=IterateOrder.ORDER_M,
                      schedule_type=ScheduleType.INNER_PRODUCT, en_unit_flag=True):
    """Ascend C GetNormalConfig: the NORM template (do_norm)."""
    return MatmulConfig(do_norm=True, intrinsics_check=intrinsics_limit, is_n_batch=batch_loop,
                        en_vec_nd2nz=is_vec_nd2_nz, batch_mode=bmm_mode,
                        enable_reuse=is_msg_reuse, iterate_order=iterate_order,
                        schedule_type=schedule_type, en_unit_flag=en_unit_flag)


def get_mdl_config(intrinsics_limit=False, batch_loop=False, do_mte2_preload=0,
                   is_vec_nd2_nz=False, is_per_tensor=False, has_anti_quant_offset=False,
                   en_unit_flag=False, is_msg_reuse=True, enable_ub_reuse=True,
                   enable_l1_cache_ub=False, enable_mix_dual_master=False,
                   enable_kdim_reorder_load=False):
    """Ascend C GetMDLConfig: the MDL template (do_multi_data_load: several base blocks of
    A/B moved to L1 at once)."""
    return MatmulConfig(do_norm=False, do_multi_data_load=True,
                        intrinsics_check=intrinsics_limit, is_n_batch=batch_loop,
                        do_mte2_preload=do_mte2_preload, en_vec_nd2nz=is_vec_nd2_nz,
                        is_per_tensor=is_per_tensor, has_anti_quant_offset=has_anti_quant_offset,
                        en_unit_flag=en_unit_flag, enable_reuse=is_msg_reuse,
                        enable_ub_reuse=enable_ub_reuse, enable_l1_cache_ub=enable_l1_cache_ub,
                        enable_mix_dual_master=enable_mix_dual_master,
                        enable_kdim_reorder_load=enable_kdim_reorder_load)


def get_special_mdl_config(intrinsics_limit=False, batch_loop=False, do_mte2_pre_load=0,
                           is_vec_nd2_nz=False, is_per_tensor=False,
                           has_anti_quant_offset=False):
    """Ascend C GetSpecialMDLConfig: the SpecialMDL template (do_special_mdl)."""
    return MatmulConfig(do_norm=False, do_special_mdl=True, intrinsics_check=intrinsics_limit,
                        is_n_batch=batch_loop, do_mte2_preload=do_mte2_pre_load,
                        en_vec_nd2nz=is_vec_nd2_nz, is_per_tensor=is_per_tensor,
                        has_anti_quant_offset=has_anti_quant_offset)


def get_basic_config(basic_m, basic_n, basic_k, intrinsics_limit=False, batch_loop=False,
                     bmm_mode=BatchMode.BATCH_LESS_THAN_L1):
    """Ascend C GetBasicConfig: the basic-block template with base blocks basic_m x basic_n x
    basic_k."""
    return MatmulConfig(do_norm=False, do_basic_block=True, basic_m=basic_m, basic_n=basic_n,
                        basic_k=basic_k, intrinsics_check=intrinsics_limit,
                        is_n_batch=batch_loop, batch_mode=bmm_mode)


def get_special_basic_config(basic_m, basic_n, basic_k, single_core_m, single_core_n,
                             single_core_k, step_m, step_n, intrinsics_limit=False,
                             batch_loop=False, bmm_mode=BatchMode.BATCH_LESS_THAN_L1):
    """Ascend C GetSpecialBasicConfig: the special basic-block template (base and single-core
    shapes and steps fixed at compile time)."""
    return MatmulConfig(do_norm=False, do_special_basic_block=True, basic_m=basic_m,
                        basic_n=basic_n, basic_k=basic_k, single_core_m=single_core_m,
                        single_core_n=single_core_n, single_core_k=single_core_k,
                        step_m=step_m, step_n=step_n, intrinsics_check=intrinsics_limit,
                        is_n_batch=batch_loop, batch_mode=bmm_mode)


def get_ib_share_norm_config(intrinsics_limit=False, batch_loop=False, is_vec_nd2_nz=False,
                             bmm_mode=BatchMode.BATCH_LESS_THAN_L1, is_double_cache=False,
                             en_unit_flag=True):
    """Ascend C GetIBShareNormConfig: the IBShare template (A or B shared in L1 by the AIVs of
    one AIC)."""
    return MatmulConfig(do_norm=False, do_ib_share_norm=True, intrinsics_check=intrinsics_limit,
                        is_n_batch=batch_loop, en_vec_nd2nz=is_vec_nd2_nz, batch_mode=bmm_mode,
                        enable_double_cache=int(bool(is_double_cache)),
                        en_unit_flag=en_unit_flag)


def get_mm_config(*params):
    """Ascend C GetMMConfig: a config from a MatmulConfigMode (NORM when none) and any of
    MatmulShapeParams, MatmulQuantParams, MatmulBatchParams, MatmulFuncParams (in any order;
    each kind at most once)."""
    mode, fields, seen = MatmulConfigMode.CONFIG_NORM, {}, set()
    for p in params:
        kind = type(p)
        if kind in seen:
            raise ValueError(f"get_mm_config: {kind.__name__} given twice")
        seen.add(kind)
        if isinstance(p, MatmulConfigMode):
            mode = p
        elif isinstance(p, MatmulShapeParams):
            fields.update(dataclasses.asdict(p))
        elif isinstance(p, MatmulQuantParams):
            fields.update(dataclasses.asdict(p))
        elif isinstance(p, MatmulBatchParams):
            fields.update(is_n_batch=p.is_b_batch, batch_mode=p.batch_mode,
                          is_bias_batch=p.is_bias_batch)
        elif isinstance(p, MatmulFuncParams):
            fields.update(intrinsics_check=p.intrinsics_limit, en_vec_nd2nz=p.en_vec_nd2_nz,
                          enable_double_cache=int(p.enable_double_cache),
                          enable_l1_cache_ub=p.enable_l1_cache,
                          do_mte2_preload=p.do_mte2_pre_load, iterate_order=p.iterate_order,
                          schedule_type=p.schedule_type, enable_reuse=p.enable_reuse,
                          enable_ub_reuse=p.enable_ub_reuse,
                          is_partial_output=p.is_partial_output,
                          is_a2b2_shared=p.is_a2_b2_shared,
                          is_enable_channel_split=p.is_enable_channel_split,
                          enable_kdim_reorder_load=p.enable_kdim_reorder_load)
        else:
            raise ValueError(f"get_mm_config takes a MatmulConfigMode and Matmul*Params records, "
                             f"got {p!r}")
    mode = MatmulConfigMode(mode)
    fields.update(do_norm=mode == MatmulConfigMode.CONFIG_NORM,
                  do_multi_data_load=mode == MatmulConfigMode.CONFIG_MDL,
                  do_special_mdl=mode == MatmulConfigMode.CONFIG_SPECIALMDL,
                  do_ib_share_norm=mode == MatmulConfigMode.CONFIG_IBSHARE)
    return MatmulConfig(**fields)


# ----------------------------------------------------------------------------- static tiling
def _static_tiling_class():
    from ..adv import TCUBE_TILING_FIELDS
    fields = tuple((f, -1) for f in TCUBE_TILING_FIELDS + ("mx_type_para",))
    ns = {"__annotations__": {f: int for f, _ in fields}, "__module__": "ascendc_py.adv",
          "__doc__": """pyasc ``asc.adv.MatmulApiStaticTiling`` (Ascend C's MatmulApiStaticTiling):
    what ``get_matmul_api_tiling`` knows at compile time: TCubeTiling's fields (and
    mx_type_para), -1 where unknown, and the MatmulConfig ``cfg`` it came from.""",
          "asc_name": "adv.MatmulApiStaticTiling"}
    ns["__annotations__"].update(asc_name=ClassVar[str], cfg="MatmulConfig")
    ns.update({f: d for f, d in fields})
    ns["cfg"] = dataclasses.field(default_factory=MatmulConfig)
    return dataclass(frozen=True)(type("MatmulApiStaticTiling", (), ns))


MatmulApiStaticTiling = _static_tiling_class()


#: the fields a full constantization fixes beyond the config's (our choice: Ascend C does not
#: document how it derives them from l1_size): one core, the single-core shape as the whole
#: shape, one base block of K per L1 load, double-buffered A1/B1 and L0C off, M-first order
_FULL_DEFAULTS = {"used_core_num": 1, "depth_a1": 2, "depth_b1": 2, "step_k_a": 1,
                  "step_k_b": 1, "step_m": 1, "step_n": 1, "db_l0c": 1, "iterate_order": 0,
                  "is_bias": 0, "trans_length": 0, "share_mode": 0, "share_l1_size": 0,
                  "share_l0c_size": 0, "share_ub_size": 0}


def get_matmul_api_tiling(mm_cfg, l1_size=None, a_type=None, b_type=None, c_type=None,
                          bias_type=None):
    """Ascend C GetMatmulApiTiling (Norm and MDL templates, as documented for A2).

    Partial constants (basic_m/n/k set): base_m/n/k, plus single_core_*/step_m/n when set and
    iterate_order unless UNDEF; the other fields -1 (the run-time tiling of register_matmul
    gives them and is still required). Full constants (basic_m/n/k and single_core_m/n/k all
    set): also m = single_core_m, n = single_core_n, k_a = k_b = single_core_k and the
    ``_FULL_DEFAULTS`` above; then ``asc.adv.register_matmul(pipe, workspace, mm)`` needs no
    tiling (Ascend C's null tiling pointer). Either way a run-time tiling given as well must
    hold the same base and single-core values (checked when the Matmul first computes, as the
    docs require them to agree). ``l1_size`` (default the platform's L1, also accepted after
    the types as in pyasc's in-kernel signature) must hold one double-buffered base block of A
    and B at the input size: ValueError otherwise. Passed as ``asc.adv.Matmul(...,
    matmul_config=static_tiling)``."""
    if getattr(l1_size, "asc_name", "") == "adv.MatmulType":
        # pyasc's jit signature: (mm_cfg, a_type, b_type, c_type, bias_type, l1_size)
        l1_size, a_type, b_type, c_type, bias_type = bias_type, l1_size, a_type, b_type, c_type
    if not isinstance(mm_cfg, MatmulConfig):
        raise ValueError(f"get_matmul_api_tiling: mm_cfg must be a MatmulConfig, got {mm_cfg!r}")
    if mm_cfg.do_basic_block or mm_cfg.do_special_basic_block or mm_cfg.do_ib_share_norm or \
            mm_cfg.do_special_mdl:
        raise ValueError("get_matmul_api_tiling: only the Norm and MDL templates are "
                         "constantized (as documented for A2)")
    if l1_size is not None and (not isinstance(l1_size, int) or l1_size <= 0):
        raise ValueError(f"get_matmul_api_tiling: l1_size must be a positive int, got "
                         f"{l1_size!r}")
    for name, t in (("a_type", a_type), ("b_type", b_type), ("c_type", c_type),
                    ("bias_type", bias_type)):
        if t is not None and getattr(t, "asc_name", "") != "adv.MatmulType":
            raise ValueError(f"get_matmul_api_tiling: {name} must be a MatmulType, got {t!r}")
    known = {}
    for field, value in (("base_m", mm_cfg.basic_m), ("base_n", mm_cfg.basic_n),
                         ("base_k", mm_cfg.basic_k), ("single_core_m", mm_cfg.single_core_m),
                         ("single_core_n", mm_cfg.single_core_n),
                         ("single_core_k", mm_cfg.single_core_k), ("step_m", mm_cfg.step_m),
                         ("step_n", mm_cfg.step_n)):
        if value > 0:
            known[field] = value
    if mm_cfg.iterate_order != IterateOrder.UNDEF:
        known["iterate_order"] = int(mm_cfg.iterate_order)
    if all(f in known for f in ("base_m", "base_n", "base_k")):
        from ..simulator import config as _platforms
        size = a_type.dtype.sizeof() if a_type is not None else 2
        need = 2 * (known["base_m"] + known["base_n"]) * known["base_k"] * size
        avail = l1_size if l1_size is not None else \
            _platforms.current_platform().memories.get("L1").size
        if need > avail:
            raise ValueError(f"get_matmul_api_tiling: double-buffered base blocks of A and B "
                             f"need {need} bytes of L1, l1_size is {avail}")
    if full_constant(known):
        for field, value in _FULL_DEFAULTS.items():
            known.setdefault(field, value)
        known.update(m=known["single_core_m"], n=known["single_core_n"],
                     k_a=known["single_core_k"], k_b=known["single_core_k"])
    return MatmulApiStaticTiling(cfg=mm_cfg, **known)


def full_constant(fields) -> bool:
    """Whether base_m/n/k and single_core_m/n/k are all known (> 0)."""
    get = fields.get if isinstance(fields, dict) else (lambda f, d=-1: getattr(fields, f, d))
    return all(get(f, -1) > 0 for f in ("base_m", "base_n", "base_k", "single_core_m",
                                        "single_core_n", "single_core_k"))


#: the helpers by name (each also an asc.adv name callable in kernels)
CONFIG_HELPERS = (get_normal_config, get_mdl_config, get_special_mdl_config, get_basic_config,
                  get_special_basic_config, get_ib_share_norm_config, get_mm_config,
                  get_matmul_api_tiling)
for _h in CONFIG_HELPERS:
    _h.asc_name = f"adv.{_h.__name__}"
#: the records constructible in kernels
CONFIG_RECORDS = (MatmulConfig, MatmulShapeParams, MatmulQuantParams, MatmulBatchParams,
                  MatmulFuncParams)
