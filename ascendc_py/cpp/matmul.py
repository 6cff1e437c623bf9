"""The Matmul API object in C++: ``Matmul<AType, BType, CType[, BiasType]> mm;`` with
``MatmulType<TPosition, CubeFormat, T[, isTrans]>`` arguments (directly or through ``typedef``
/ ``using``), ``REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &tiling)``, and
``TCubeTiling`` kernel parameters whose fields C++ spells in camelCase (``singleCoreM``,
``Ka``) and the DSL in snake_case (``single_core_m``, ``k_a``)."""
from __future__ import annotations

from ..compiler import ast as A
from ..compiler.errors import KernelTypeError
from .ctypes_c import CT
from .lower_expr import E, asc_attr, call, dtype_node
from .names import snake

_ROLES = ("a", "b", "c", "bias")


def tiling_field(field: str) -> str:
    """The DSL name of a TCubeTiling field (``singleCoreM`` -> ``single_core_m``, ``Ka`` ->
    ``k_a``): the names rule against the struct's own field list."""
    from ..adv import TCUBE_TILING_FIELDS
    return snake(field, frozenset(TCUBE_TILING_FIELDS))


def _matmul_type(lw, ct, loc):
    if not isinstance(ct, CT) or ct.name != "MatmulType" or not 3 <= len(ct.args) <= 4:
        raise KernelTypeError("Matmul<...> takes MatmulType<TPosition, CubeFormat, T[, "
                              "isTrans]> arguments", loc)
    pos, fmt, elem = ct.args[:3]
    args = [pos.node, fmt.node, dtype_node(elem, loc)]
    if len(ct.args) == 4:
        args.append(ct.args[3].node)
    return call(asc_attr("adv.MatmulType", loc), args, loc)


def matmul_object(lw, ct: CT, loc):
    """``Matmul<A, B, C[, Bias]> mm;`` as ``asc.adv.Matmul(a=..., b=..., c=..., bias=...)``."""
    if not 3 <= len(ct.args) <= 4:
        raise KernelTypeError("Matmul<AType, BType, CType[, BiasType]> needs 3 or 4 types", loc)
    keywords = tuple(A.Keyword(loc, role, _matmul_type(lw, t, loc))
                     for role, t in zip(_ROLES, ct.args))
    return A.Call(loc, asc_attr("adv.Matmul", loc), (), keywords)


def regist_matmul_obj(lw, args, t) -> E:
    """``REGIST_MATMUL_OBJ(&pipe, workspace, mm, &tiling)``."""
    loc = lw.loc(t)
    if len(args) < 3:
        raise KernelTypeError("REGIST_MATMUL_OBJ(&pipe, workspace, mm, &tiling)", loc)
    values = []
    for a in args:
        if getattr(a, "data", None) == "addr_of":
            a = a.children[-1]
        if getattr(a, "data", None) == "call" and \
                getattr(a.children[0], "data", None) == "name" and \
                str(a.children[0].children[0]) == "GetSysWorkSpacePtr":
            values.append(A.Constant(loc, None))
            continue
        values.append(lw.observed(lw.expr(a), loc).node)
    node = call(asc_attr("adv.register_matmul", loc), values, loc)
    lw.emit(A.ExprStmt(loc, node))
    return E(None, CT("void"))
