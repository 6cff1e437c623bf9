"""Binding a C++ kernel's launch arguments: parameter kinds for the launcher, tiling structs
given as dicts or numpy structured scalars, and scalar parameters of C types other than
``int32_t``/``float``/``bool`` (checked against the C type's range, passed in that type)."""
from __future__ import annotations

import numpy as np

from ..compiler.errors import LaunchArgumentError


def api_params(entry_params, structs) -> tuple:
    """``Kernel.params`` of a C++ entry."""
    from ..dsl import api
    from ..dsl.kernel import _MISSING, _Param
    out = []
    for p in entry_params:
        if p.kind == "gm":
            out.append(_Param(p.name, "gm", api.GlobalAddress, _MISSING))
        elif p.kind == "struct":
            out.append(_Param(p.name, "struct", structs[p.name], _MISSING))
        elif p.kind == "adv_struct":
            import ascendc_py as asc
            out.append(_Param(p.name, "struct", getattr(asc.adv, p.ct.name), _MISSING))
        else:
            simple = {"int32": int, "float32": float, "bool_": bool}.get(p.ct.name)
            if simple is not None:
                out.append(_Param(p.name, "scalar", simple, _MISSING))
            else:
                out.append(_Param(p.name, "cscalar", p.ct, _MISSING))
    return tuple(out)


def _c_scalar(kernel: str, name: str, ct, v):
    import ascendc_py as asc
    dtype = getattr(asc, ct.name)
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer,
                                                             np.floating)):
        raise LaunchArgumentError(f"{kernel}: argument '{name}' is a {ct.text()}; got "
                                  f"{type(v).__name__}")
    if ct.is_float:
        return float(v), dtype if ct.name != "float64" else asc.float32
    if not isinstance(v, (int, np.integer)):
        raise LaunchArgumentError(f"{kernel}: argument '{name}' is a {ct.text()}; got the "
                                  f"float {v!r}")
    bits = ct.bits
    lo, hi = (0, (1 << bits) - 1) if ct.unsigned else (-(1 << (bits - 1)),
                                                       (1 << (bits - 1)) - 1)
    if not lo <= int(v) <= hi:
        raise LaunchArgumentError(f"{kernel}: argument '{name}' = {v} does not fit "
                                  f"{ct.text()} ({lo}..{hi})")
    return int(v), dtype


def _adv_fields(cls) -> tuple:
    from ..adv import STRUCT_PARAMS
    return next(f for c, f in STRUCT_PARAMS.values() if c is cls)


def bind_cpp_args(kernel, super_bind, args, kwargs):
    from ..compiler.spec import ArgSpec
    from ..dsl.struct import leaves
    from .tiling import to_struct
    names = [p.name for p in kernel.params]
    args = list(args)
    hidden = [p for p in kernel.entry_params if p.kind == "adv_struct" and p.struct]
    if hidden and len(args) + len(kwargs) != len(names) - len(hidden):
        raise LaunchArgumentError(f"{kernel.__name__} takes {len(names) - len(hidden)} "
                                  f"arguments but {len(args) + len(kwargs)} were given")
    if hidden and kwargs:
        raise LaunchArgumentError(f"{kernel.__name__}: pass the arguments by position")
    if hidden:     # the TCubeTilings of a tiling struct: kernel parameters of their own
        for p in hidden:
            owner, field = p.struct
            value = args[names.index(owner)]
            if not isinstance(value, dict) or field not in value:
                raise LaunchArgumentError(f"{kernel.__name__}: the tiling argument '{owner}' "
                                          f"must be a dict with the asc.adv.TCubeTiling "
                                          f"'{field}' and the other fields")
            args.append(value[field])
    for i, p in enumerate(kernel.params):     # a tiling struct of TCubeTilings only
        if p.name in getattr(kernel, "containers", ()) and i < len(args):
            args[i] = np.zeros(32, np.uint8)
    for i, p in enumerate(kernel.params):     # None for a GM_ADDR the kernel does not read
        if p.kind == "gm" and i < len(args) and args[i] is None and \
                p.name not in kernel.gm_read:
            args[i] = np.zeros(32, np.uint8)
    for i, p in enumerate(kernel.params):
        if p.kind != "struct" or p.annotation.__module__.startswith("ascendc_py.adv"):
            continue
        if i < len(args):
            args[i] = to_struct(p.annotation, args[i], kernel.__name__, p.name)
        elif p.name in kwargs:
            kwargs = dict(kwargs)
            kwargs[p.name] = to_struct(p.annotation, kwargs[p.name], kernel.__name__, p.name)
    specs, gm, scalars = super_bind(tuple(args), kwargs)
    if not any(p.kind == "cscalar" for p in kernel.params):
        return specs, gm, scalars
    values = dict(zip(names, args))
    values.update(kwargs)
    specs, scalars = list(specs), list(scalars)
    k = 0
    for i, p in enumerate(kernel.params):
        if p.kind == "struct":
            k += len(leaves(p.annotation)) if hasattr(p.annotation, "struct_fields") else \
                len(_adv_fields(p.annotation))
        elif p.kind == "cscalar":
            v, dtype = _c_scalar(kernel.__name__, p.name, p.annotation, values[p.name])
            scalars[k] = (v, dtype)
            specs[i] = ArgSpec.of(p.name, "scalar", dtype=dtype)
            k += 1
        elif p.kind == "scalar":
            k += 1
    return tuple(specs), gm, scalars
