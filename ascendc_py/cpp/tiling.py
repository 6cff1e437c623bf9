"""Tiling structs: a ``struct`` of the file passed to the kernel, read with
``GET_TILING_DATA(name, tiling)`` (the struct is the file's only struct whose name contains
"Tiling", or the one ``GET_TILING_DATA_WITH_STRUCT(Struct, name, tiling)`` names), through a
``(__gm__ Struct *)tiling`` cast, or as a ``Struct *``/``Struct`` kernel parameter.

From Python the argument is an instance of ``module.<Struct>`` (an ``asc.Struct`` made from the
C++ declaration: ``m.AddTilingData(totalLength=..., tileNum=...)``), a dict of its fields, or a
numpy structured scalar/array of one element with those field names. Inside the kernel every
field is a run-time value of its C type (one compiled kernel serves every tiling), as for
``asc.Struct`` parameters of Python kernels.
"""
from __future__ import annotations

from ..compiler.errors import KernelTypeError, SourceLoc
from .ctypes_c import CT
from .lower_expr import E


def tiling_struct(lw, t):
    """The ClassInfo GET_TILING_DATA reads: the file's only struct named *Tiling*."""
    found = [c for c in lw.unit.classes.values() if c.is_struct and "tiling" in c.name.lower()]
    if not found:     # the struct is in a header not given: its fields from their uses
        from .unit import ClassInfo
        info = lw.unit.classes.get("TilingData")
        if info is None:
            info = lw.unit.classes["TilingData"] = ClassInfo("TilingData", None, True)
            info.inferred = True
            info._fields = {}
        return info
    if len(found) != 1:
        names = ", ".join(c.name for c in found) or "none"
        raise KernelTypeError(
            f"GET_TILING_DATA needs the tiling struct: the file must define exactly one struct "
            f"whose name contains 'Tiling' (found: {names})", lw.loc(t),
            hint="or write GET_TILING_DATA_WITH_STRUCT(Struct, name, tiling)")
    return found[0]


def bind_struct_param(lw, e: E, info, t) -> E:
    """Record that the GM_ADDR parameter ``e`` carries a tiling struct ``info``."""
    node = e.node
    pname = getattr(node, "id", None)
    if pname is None or pname not in lw.entry_params:
        raise KernelTypeError("a tiling struct must be read from a GM_ADDR parameter of the "
                              "kernel", lw.loc(t))

    prev = lw.struct_params.get(pname)
    if prev is not None and prev is not info:
        raise KernelTypeError(f"parameter '{pname}' is read as two structs ({prev.name}, "
                              f"{info.name})", lw.loc(t))
    lw.struct_params[pname] = info
    return E(node, CT(info.name, ptr=1, cls=info))


def get_tiling_data(lw, struct_t, args, t) -> E:
    from .lower_expr import Var
    if len(args) != 2 or getattr(args[0], "data", None) != "name":
        raise KernelTypeError("GET_TILING_DATA(name, tiling): a new variable name and the "
                              "tiling parameter", lw.loc(t))
    if struct_t is None:
        info = tiling_struct(lw, t)
    else:
        ct = lw.resolve_type(struct_t) if getattr(struct_t, "data", None) == "type" else \
            lw.lookup(str(struct_t.children[0]), struct_t)
        ct = getattr(ct, "ct", ct)
        info = ct.cls
        if info is None or not info.is_struct:
            raise KernelTypeError("GET_TILING_DATA_WITH_STRUCT needs a struct of this file",
                                  lw.loc(t))
    value = bind_struct_param(lw, lw.expr(args[1]), info, t)
    lw.declare(str(args[0].children[0]), E(value.node, CT(info.name, cls=info)))
    del Var
    return E(None, CT("void"))


def struct_class(info, lw, module_name: str):
    """The ``asc.Struct`` subclass of a C++ struct (fields in declaration order)."""
    import ascendc_py as asc
    fields = {}
    if not info.field_types(lw):
        raise KernelTypeError(f"the kernel reads no field of its tiling struct {info.name}",
                              SourceLoc(lw.file, 1, 1))
    for name, ct in info.field_types(lw).items():
        if ct.name == "TCubeTiling" and not ct.ptr:
            continue            # passed as a kernel parameter of its own (entry.py)
        if not ct.is_scalar or ct.ptr:
            raise KernelTypeError(f"tiling struct {info.name}: field '{name}' has type "
                                  f"{ct.text()}; only scalar fields are supported",
                                  lw.loc(info.tree))
        dtype = getattr(asc, ct.name)
        if ct.name == "float64":
            dtype = asc.float32
        fields[name] = asc.Field(dtype=dtype)      # every field must be given
    if not fields:      # only TCubeTilings: nothing is passed for the struct itself
        return None
    cls = type(info.name, (asc.Struct,), dict(fields, __module__=module_name,
                                             __qualname__=info.name,
                                             __doc__=f"The C++ struct {info.name}."))
    return cls


def to_struct(cls, value, kernel: str, pname: str):
    """A tiling argument from Python as an instance of ``cls`` (see the module docstring)."""
    import numpy as np

    from ..compiler.errors import LaunchArgumentError
    if isinstance(value, cls):
        return value
    if isinstance(value, np.ndarray) and value.dtype.names and value.size == 1:
        value = value.reshape(())[()]
    if isinstance(value, np.void) and value.dtype.names:
        value = {k: value[k].item() for k in value.dtype.names}
    if isinstance(value, dict):
        import ascendc_py as asc   # the TCubeTilings go to their own parameters
        value = {k: v for k, v in value.items() if not isinstance(v, asc.adv.TCubeTiling)}
        try:
            return cls(**value)
        except (TypeError, ValueError, AttributeError) as exc:
            raise LaunchArgumentError(f"{kernel}: tiling argument '{pname}': {exc}") from None
    raise LaunchArgumentError(f"{kernel}: argument '{pname}' is the tiling struct "
                              f"{cls.__name__}: pass module.{cls.__name__}(...), a dict of its "
                              f"fields or a numpy structured scalar, got "
                              f"{type(value).__name__}")
