"""Semantic analysis of the system control, cache and profiling calls (``ops/sysctl.py`` says
what each one does on the simulator and why).

The cache, hint and SoC-state calls become one ``sys_hint`` intrinsic each (lowered by
``codegen/lower_sysctl.py``); the rest are resolved here: constants, ``trap`` (a failing
``kernel_assert``), ``print_time_stamp`` (a ``printf`` record), ``dump_acc_chk_point`` (a
``dump_tensor`` of the tensor from ``count_off``) and the system-workspace / HCCL-context
registers (kernel variables holding a GlobalAddress, set to "no address" when the kernel starts:
a GlobalTensor bound to an address that was never set faults at its first access, GM_UNSET).
"""
from __future__ import annotations

from ...dsl.types import bool_, int32, int64, uint8, uint32
from .. import ir
from ..errors import ConstantRangeError, KernelTypeError, OperandKindError
from ..ops.sysctl import (ARCH_VERSION, CHECK_IA_FIELDS, DATA_BLOCK_BYTES, CacheLine, CacheMode,
                          CacheRwMode, DcciDst, MemDsbT)
from . import scalars as S
from .builtins import bind_args, function, method, subscript_local, want_enum, want_int
from .values import ConstV, GmAddrV, GmTensorV, LocalTensorV, NoneV, StructV

#: HCCL context slots (Ascend C: index 0 or 1, one per communication domain)
HCCL_CONTEXTS = 2


def _hint(an, kind: str, loc, operand=None) -> NoneV:
    args = (operand.ref(),) if operand is not None else ()
    an.emit(ir.Intrinsic("sys_hint", args, (), loc, (("kind", kind),)))
    return NoneV()


def _bound_gm(v, what: str, loc) -> GmTensorV:
    if not isinstance(v, GmTensorV):
        raise OperandKindError(f"{what} must be a GlobalTensor, got {v.describe()}", loc)
    if v.dtype is None:
        raise OperandKindError(f"{what}: call set_global_buffer on the GlobalTensor first", loc)
    return v


def _const_range(v, what: str, lo: int, hi: int, loc) -> None:
    if isinstance(v, ConstV) and not lo <= int(v.value) <= hi:
        raise ConstantRangeError(f"{what} must be in {lo}..{hi}, got {int(v.value)}", loc)


def _no_args(name: str, args, kwargs, loc) -> None:
    if args or kwargs:
        raise KernelTypeError(f"asc.{name}() takes no arguments", loc)


# ----------------------------------------------------------------------------- caches
@function("data_cache_clean_and_invalid")
def _dcci(an, args, kwargs, loc):
    name = "asc.data_cache_clean_and_invalid()"
    if len(args) == 3 or "dcci_dst" in kwargs or (len(args) == 2 and "dst" in kwargs):
        b = bind_args(name, ("entire_type", "dcci_dst", "dst"), args, kwargs, loc)
        want_enum(b["dcci_dst"], DcciDst, "dcci_dst", loc)
    else:
        b = bind_args(name, ("entire_type", "dst"), args, kwargs, loc)
    want_enum(b["entire_type"], CacheLine, "entire_type", loc)
    return _hint(an, "data_cache_clean_and_invalid", loc,
                 _bound_gm(b["dst"], "data_cache_clean_and_invalid dst", loc))


@function("data_cache_preload")
def _dc_preload(an, args, kwargs, loc):
    b = bind_args("asc.data_cache_preload()", ("src", "cache_offset"), args, kwargs, loc)
    src = _bound_gm(b["src"], "data_cache_preload src", loc)
    want_int(b["cache_offset"], "data_cache_preload cache_offset", loc, int64)
    _const_range(b["cache_offset"], "data_cache_preload cache_offset (int16 bytes)",
                 -2**15, 2**15 - 1, loc)
    return _hint(an, "data_cache_preload", loc, src)


@function("icache_preload")
def _ic_preload(an, args, kwargs, loc):
    b = bind_args("asc.icache_preload()", ("pre_fetch_len",), args, kwargs, loc)
    want_int(b["pre_fetch_len"], "icache_preload pre_fetch_len", loc, int64)
    _const_range(b["pre_fetch_len"], "icache_preload pre_fetch_len", 0, 2**63 - 1, loc)
    return _hint(an, "icache_preload", loc)


@function("get_icache_preload_status")
def _ic_status(an, args, kwargs, loc):
    _no_args("get_icache_preload_status", args, kwargs, loc)
    return ConstV(0, int64)


@method(GmTensorV, "set_l2_cache_hint")
def _l2_hint(an, gt, name, args, kwargs, loc):
    b = bind_args("set_l2_cache_hint()", ("mode", "rw_mode"), args, kwargs, loc,
                  {"mode": ConstV(int(CacheMode.CACHE_MODE_NORMAL), int32),
                   "rw_mode": ConstV(int(CacheRwMode.RW), int32)})
    for key, enum_class in (("mode", CacheMode), ("rw_mode", CacheRwMode)):
        v = b[key]
        if isinstance(v, ConstV) and int(v.value) in enum_class._value2member_map_:
            continue
        want_enum(v, enum_class, f"set_l2_cache_hint {key}", loc)
    return _hint(an, "set_l2_cache_hint", loc, _bound_gm(gt, "set_l2_cache_hint", loc))


# ----------------------------------------------------------------------------- barriers, SoC
@function("data_sync_barrier")
def _dsb(an, args, kwargs, loc):
    b = bind_args("asc.data_sync_barrier()", ("arg0",), args, kwargs, loc)
    want_enum(b["arg0"], MemDsbT, "data_sync_barrier's memory", loc)
    return _hint(an, "data_sync_barrier", loc)


for _kind in ("metrics_prof_start", "metrics_prof_stop", "init_soc_state"):
    def _marker(an, args, kwargs, loc, _kind=_kind):
        _no_args(_kind, args, kwargs, loc)
        return _hint(an, _kind, loc)
    function(_kind)(_marker)


@function("set_mm_layout_transform")
def _mm_layout(an, args, kwargs, loc):
    b = bind_args("asc.set_mm_layout_transform()", ("mm_layout_mode",), args, kwargs, loc)
    S.truth(b["mm_layout_mode"], loc)
    return _hint(an, "set_mm_layout_transform", loc)


def _hf32(which: str, param: str):
    def handler(an, args, kwargs, loc):
        b = bind_args(f"asc.set_hf32_{which}()", (param,), args, kwargs, loc)
        flag = S.to_expr(S.truth(b[param], loc), int64)
        an.emit(ir.Intrinsic("set_hf32", (flag,), (), loc, (("which", which),)))
        return NoneV()
    return handler


@function("set_pad_value")
def _set_pad_value(an, args, kwargs, loc):
    from ...dsl.types import TPosition, float64
    b = bind_args("asc.set_pad_value()", ("padding_value", "pos"), args, kwargs, loc,
                  {"pos": NoneV()})
    if not isinstance(b["pos"], NoneV):
        pos = want_enum(b["pos"], TPosition, "set_pad_value's pos", loc)
        if pos not in (TPosition.VECIN, TPosition.VECOUT):   # (omitted: Ascend C's MAX)
            raise KernelTypeError(f"set_pad_value's pos must be TPosition.VECIN or VECOUT "
                                  f"(data_copy_pad's GM->UB destinations; omit it for both), "
                                  f"got {pos.name}", loc)
    value = S.to_expr(S.cast(b["padding_value"], float64, loc), float64)
    an.emit(ir.Intrinsic("set_pad_value", (value,), (), loc))
    return NoneV()


function("set_hf32_mode")(_hf32("mode", "hf32_mode"))
function("set_hf32_trans_mode")(_hf32("trans_mode", "trans_mode"))


@function("CheckLocalMemoryIAParam")
def _check_ia_param(an, args, kwargs, loc):
    names = tuple(n for n, _, _ in CHECK_IA_FIELDS)
    defaults = {n: ConstV(d, bool_ if isinstance(d, bool) else int32)
                for n, d, _ in CHECK_IA_FIELDS}
    b = bind_args("asc.CheckLocalMemoryIAParam()", names, args, kwargs, loc, defaults)
    fields = []
    for n, _, limits in CHECK_IA_FIELDS:
        if limits is None:
            fields.append((n, S.truth(b[n], loc)))
        else:
            want_int(b[n], f"CheckLocalMemoryIAParam.{n}", loc, int64)
            _const_range(b[n], f"CheckLocalMemoryIAParam.{n}", *limits, loc)
            fields.append((n, b[n]))
    return StructV("CheckLocalMemoryIAParam", tuple(fields))


@function("check_local_memory_ia")
def _check_ia(an, args, kwargs, loc):
    b = bind_args("asc.check_local_memory_ia()", ("check_params",), args, kwargs, loc)
    p = b["check_params"]
    if not (isinstance(p, StructV) and p.kind == "CheckLocalMemoryIAParam"):
        raise KernelTypeError(f"asc.check_local_memory_ia needs an asc.CheckLocalMemoryIAParam"
                              f"(...), got {p.describe()}", loc)
    return _hint(an, "check_local_memory_ia", loc)


# ----------------------------------------------------------------------------- queries
@function("get_data_block_size_in_bytes")
def _block_bytes(an, args, kwargs, loc):
    _no_args("get_data_block_size_in_bytes", args, kwargs, loc)
    return ConstV(DATA_BLOCK_BYTES, int32)


@function("get_arch_version")
def _arch_version(an, args, kwargs, loc):
    """pyasc's get_arch_version(core_version): Ascend C writes the version into its argument;
    Python cannot, so the version is also the call's value."""
    b = bind_args("asc.get_arch_version()", ("core_version",), args, kwargs, loc)
    want_int(b["core_version"], "get_arch_version core_version", loc, int64)
    return ConstV(ARCH_VERSION, uint32)


@function("get_program_counter")
def _pc(an, args, kwargs, loc):
    _no_args("get_program_counter", args, kwargs, loc)
    return ConstV(int(loc.line), int64)


@function("trap")
def _trap(an, args, kwargs, loc):
    _no_args("trap", args, kwargs, loc)
    an.emit(ir.Intrinsic("kernel_assert", (ir.Const(0, bool_),), (), loc,
                         (("msg", "asc.trap(): the kernel trapped"),)))
    return NoneV()


# ----------------------------------------------------------------------------- debug output
@function("print_time_stamp")
def _time_stamp(an, args, kwargs, loc):
    b = bind_args("asc.print_time_stamp()", ("desc_id",), args, kwargs, loc)
    desc = want_int(b["desc_id"], "print_time_stamp desc_id", loc, uint32)
    _const_range(b["desc_id"], "print_time_stamp desc_id", 0, 2**32 - 1, loc)
    segments = (("text", "TimeStamp: desc_id="), ("conv", "", "u", "u", "uint32"),
                ("text", ", cycle="), ("conv", "", "d", "i", "int64"), ("text", "\n"))
    an.emit(ir.Intrinsic("printf", (desc, ir.Special("system_cycle")), (), loc,
                         (("segments", segments),)))
    return NoneV()


@function("dump_acc_chk_point")
def _dump_acc(an, args, kwargs, loc):
    b = bind_args("asc.dump_acc_chk_point()", ("tensor", "index", "count_off", "dump_size"),
                  args, kwargs, loc)
    t = b["tensor"]
    if isinstance(t, GmTensorV):
        _bound_gm(t, "dump_acc_chk_point tensor", loc)
        off = want_int(b["count_off"], "dump_acc_chk_point count_off", loc, int64)
        size = ir.Select(ir.Cmp("lt", t.size, ir.Const(0, int64)), ir.Const(-1, int64),
                         ir.Bin("sub", t.size, off, int64), int64)
        t = GmTensorV(t.dtype, t.arg, ir.Bin("add", t.offset, off, int64), size, t.arg_name)
    elif isinstance(t, LocalTensorV):
        t = subscript_local(an, t, b["count_off"], loc)
    else:
        raise KernelTypeError(f"asc.dump_acc_chk_point needs a LocalTensor or GlobalTensor, "
                              f"got {t.describe()}", loc)
    for key in ("count_off", "dump_size"):
        _const_range(b[key], f"dump_acc_chk_point {key}", 0, 2**31 - 1, loc)
    desc = want_int(b["index"], "dump_acc_chk_point index", loc, int64)
    count = want_int(b["dump_size"], "dump_acc_chk_point dump_size", loc, int64)
    position = "GM" if isinstance(t, GmTensorV) else t.memory.name
    an.emit(ir.Intrinsic("dump_tensor", (t.ref(), desc, count), (), loc,
                         (("dtype", t.dtype), ("position", position))))
    return NoneV()


# ----------------------------------------------------------------------------- address registers
def _register(an, key: str, loc) -> tuple:
    regs = getattr(an, "sysctl_registers", None)
    if regs is None:
        regs = an.sysctl_registers = {}
    if key not in regs:
        arg, off = ir.Var(f"{key}.arg", int32), ir.Var(f"{key}.off", int64)
        an.prologue.append(ir.Assign(arg, ir.Const(-1, int32), loc))
        an.prologue.append(ir.Assign(off, ir.Const(0, int64), loc))
        regs[key] = (arg, off, ["?"])
    return regs[key]


def _store(an, key: str, addr, what: str, loc) -> None:
    if not isinstance(addr, GmAddrV):
        raise OperandKindError(f"{what} needs a GlobalAddress, got {addr.describe()}", loc)
    arg, off, name = _register(an, key, loc)
    nbytes = ir.Bin("mul", addr.offset, ir.Const(addr.dtype.sizeof(), int64), int64)
    an.emit(ir.Assign(arg, addr.arg, loc))
    an.emit(ir.Assign(off, nbytes, loc))
    name[0] = addr.arg_name


def _load(an, key: str, loc) -> GmAddrV:
    arg, off, name = _register(an, key, loc)
    return GmAddrV(uint8, ir.Load(arg), ir.Load(off), name[0])


def _hccl_index(v, loc) -> int:
    if not isinstance(v, ConstV) or v.dtype.is_float:
        raise KernelTypeError(f"the HCCL context index must be a compile-time integer, got "
                              f"{v.describe()}", loc)
    i = int(v.value)
    if not 0 <= i < HCCL_CONTEXTS:
        raise ConstantRangeError(f"the HCCL context index must be 0 or 1, got {i}", loc)
    return i


@function("set_sys_workspace")
def _set_ws(an, args, kwargs, loc):
    b = bind_args("asc.set_sys_workspace()", ("workspace",), args, kwargs, loc)
    _store(an, "sys_workspace", b["workspace"], "asc.set_sys_workspace", loc)
    return NoneV()


@function("get_sys_workspace")
def _get_ws(an, args, kwargs, loc):
    _no_args("get_sys_workspace", args, kwargs, loc)
    return _load(an, "sys_workspace", loc)


@function("set_hccl_context")
def _set_hccl(an, args, kwargs, loc):
    b = bind_args("asc.set_hccl_context()", ("index", "context"), args, kwargs, loc)
    i = _hccl_index(b["index"], loc)
    _store(an, f"hccl_context{i}", b["context"], "asc.set_hccl_context", loc)
    return NoneV()


@function("get_hccl_context")
def _get_hccl(an, args, kwargs, loc):
    b = bind_args("asc.get_hccl_context()", ("index",), args, kwargs, loc)
    return _load(an, f"hccl_context{_hccl_index(b['index'], loc)}", loc)

