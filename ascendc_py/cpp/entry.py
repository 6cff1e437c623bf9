"""Lowering one ``__global__`` entry (``extern "C" __global__ __aicore__ void name(GM_ADDR x,
...)``) to a kernel ``FunctionDef`` and the description of its parameters the launcher binds:
``GM_ADDR``/``__gm__ T *`` parameters take arrays, scalar parameters numbers of their C type,
tiling struct parameters (see ``tiling.py``) structs."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..compiler import ast as A
from .ctypes_c import CT
from .lower_expr import E, Var, call, dtype_node, name, GM_CAST


@dataclass(frozen=True)
class EntryParam:
    name: str
    kind: str          # 'gm', 'scalar', 'struct'
    ct: CT
    struct: Any = None  # ClassInfo of a struct parameter


def lower_entry(lw, f):
    """(FunctionDef, [EntryParam]) of an entry function."""
    from .lower import Frame
    loc = lw.loc(f.tree)
    ret = lw.resolve_type(f.ret, {})
    if ret.name != "void" or ret.ptr:
        raise lw.unsupported(f.tree, "a __global__ function that returns a value")
    lw.entry_params = {}
    kinds = {}
    prologue = []
    for type_tree, pname, default, ptree in f.params:
        if pname is None:
            raise lw.unsupported(ptree, "an unnamed kernel parameter")
        ct = lw.resolve_type(type_tree, {})
        lw.used[pname] = 1
        lw.entry_params[pname] = ct
        ploc = lw.loc(ptree)
        if ct.cls is not None and ct.cls.is_struct and ct.ptr <= 1:
            kinds[pname] = EntryParam(pname, "struct", ct, ct.cls)
            lw.struct_params[pname] = ct.cls
            lw.declare(pname, E(name(pname, ploc), CT(ct.cls.name, ptr=ct.ptr, cls=ct.cls)))
        elif ct.name == "TCubeTiling" and ct.ptr <= 1:
            kinds[pname] = EntryParam(pname, "adv_struct", ct)
            lw.declare(pname, E(name(pname, ploc), CT("TCubeTiling")))
        elif ct.name == "GM_ADDR" or ct.ptr == 1:
            if ct.ptr == 1 and ct.name != "GM_ADDR" and ct.is_scalar is False and \
                    ct.name not in ("uint8", "int8", "void"):
                raise lw.unsupported(ptree, f"kernel parameter of type {ct.text()}")
            kinds[pname] = EntryParam(pname, "gm", ct)
            if ct.ptr == 1 and ct.name not in ("void", "GM_ADDR", "uint8"):
                elem = CT(ct.name)
                prologue.append(A.Assign(ploc, (name(pname, ploc),), call(
                    name(GM_CAST, ploc), [name(pname, ploc), dtype_node(elem, ploc)], ploc)))
                lw.declare(pname, Var(pname, CT(ct.name, ptr=1, gm=True)))
            else:
                lw.declare(pname, Var(pname, CT("GM_ADDR")))
        elif ct.is_scalar:
            kinds[pname] = EntryParam(pname, "scalar", ct)
            lw.declare(pname, Var(pname, ct))
        else:
            raise lw.unsupported(ptree, f"kernel parameter of type {ct.text()}")
    lw.cur = list(prologue)
    lw.frames.append(Frame(f, None, CT("void")))
    try:
        lw.stmts(list(f.body.children))
    finally:
        lw.frames.pop()
    for pname, info in lw.struct_params.items():
        if kinds[pname].kind == "gm":
            kinds[pname] = EntryParam(pname, "struct", kinds[pname].ct, info)
    from .pointers import check_gm_reads
    check_gm_reads(lw)
    for pname in lw.adv_params:     # a TCubeTiling copied word by word (cpp/pointers.py)
        kinds[pname] = EntryParam(pname, "adv_struct", CT("TCubeTiling"))
    body = tuple(lw.cur) or (A.Pass(loc),)
    params = tuple(A.Param(lw.loc(p[3]), p[1], None, None) for p in f.params)
    extra = []
    for py, (owner, field) in lw.adv_fields.items():   # TCubeTiling fields of a tiling struct
        params += (A.Param(loc, py, None, None),)
        extra.append(EntryParam(py, "adv_struct", CT("TCubeTiling"), (owner, field)))
    fdef = A.FunctionDef(loc, f.name, params, body, (), None)
    return fdef, [kinds[p[1]] for p in f.params] + extra
