"""What a kernel file declares: classes and structs, functions, constants, enums, type aliases
and the ``__global__`` entry points, collected from the parse tree before any lowering."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ..compiler.errors import SourceLoc


def loc_of(file: str, t) -> SourceLoc:
    """The SourceLoc of a lark tree or token."""
    from .lexer import place_of
    if hasattr(t, "meta"):
        m = t.meta
        if getattr(m, "empty", True):
            return SourceLoc(file, 1, 1)
        f, line = place_of(file, m.line)
        end_line = place_of(file, m.end_line)[1] if m.end_line else line
        return SourceLoc(f, line, m.column, end_line, m.end_column)
    if hasattr(t, "line") and t.line is not None:
        f, line = place_of(file, t.line)
        return SourceLoc(f, line, t.column, line, t.end_column or t.column + len(str(t)))
    return SourceLoc(file, 1, 1)


@dataclass
class FuncInfo:
    name: str
    ret: Any                    # the type tree (None for constructors)
    params: list                # (type tree, name or None, default tree or None, tree)
    body: Any                   # block tree or None (a declaration)
    tree: Any
    cls: Optional["ClassInfo"] = None
    tparams: list = field(default_factory=list)   # (kind, name, default tree)
    specs: tuple = ()

    @property
    def is_global(self) -> bool:
        return "__global__" in self.specs


@dataclass
class ClassInfo:
    name: str
    tree: Any
    is_struct: bool
    tparams: list = field(default_factory=list)
    members: list = field(default_factory=list)   # (type tree, name, init tree, tree)
    methods: dict = field(default_factory=dict)    # name -> [FuncInfo]
    ctors: list = field(default_factory=list)
    statics: dict = field(default_factory=dict)    # name -> (type tree, init tree, tree)
    _fields: Optional[dict] = None
    inferred: bool = False       # a tiling struct whose declaration the file does not have
    bases: list = field(default_factory=list)      # ClassInfo of base classes, in order

    def field_types(self, lowerer) -> dict:
        """name -> CT of a plain struct's fields (resolved once)."""
        if self._fields is None:
            self._fields = {n: lowerer.resolve_type(tt, {}) for tt, n, _, _ in self.members}
        return self._fields


@dataclass
class Unit:
    file: str
    classes: dict = field(default_factory=dict)
    funcs: dict = field(default_factory=dict)       # name -> [FuncInfo]
    consts: dict = field(default_factory=dict)      # name -> (type tree, init tree, tree)
    enums: dict = field(default_factory=dict)       # name -> {member: value}
    aliases: dict = field(default_factory=dict)     # name -> type tree
    entries: list = field(default_factory=list)     # FuncInfo of __global__ functions
    order: list = field(default_factory=list)       # constant names in definition order


def _tok(t) -> bool:
    return t is not None and not hasattr(t, "data")


def specs_of(type_tree) -> tuple:
    """The specifier words (``__global__``, ``constexpr`` ...) at the front of a type."""
    return tuple(str(c.children[0]) for c in type_tree.children
                 if hasattr(c, "data") and c.data == "spec")


def params_of(params_tree, unsupported=None) -> list:
    """(type tree, name or None, default tree or None, tree) per parameter."""
    out = []
    for p in params_tree.children:
        if p is None:
            continue
        type_tree, ident, array, default = p.children
        if array is not None and unsupported is not None:
            raise unsupported(p, "array parameter")
        out.append((type_tree, str(ident) if ident is not None else None, default, p))
    return out


def collect(tree, file: str, unsupported) -> Unit:
    """A Unit from the tree of a whole file; ``unsupported(tree, construct)`` makes the error
    for a construct outside the subset."""
    unit = Unit(file)

    def func_info(t, cls=None, tparams=()) -> FuncInfo:
        type_tree, ident, params, _const, *rest = t.children
        body = rest[0] if rest else None          # a declaration ends in ';'

        return FuncInfo(str(ident), type_tree, params_of(params, unsupported), body, t, cls,
                        list(tparams),
                        specs_of(type_tree))

    def tparams_of(t) -> list:
        out = []
        for p in t.children[:-1]:
            if p is None:
                continue
            if p.data == "tparam_type":
                out.append(("type", str(p.children[0]), p.children[1]))
            else:
                out.append(("value", str(p.children[1]), p.children[2], p.children[0]))
        return out

    def class_info(t, tparams=()) -> ClassInfo:
        name = next(str(c) for c in t.children if _tok(c) and c.type == "TYPE")
        info = ClassInfo(name, t, _declared_struct(file, name), list(tparams))
        bases = []
        for m in t.children:
            if not hasattr(m, "data"):
                continue
            d = m.data
            if d == "type":
                bases.append(m)
                continue
            if d == "var_decl":
                type_tree = m.children[0]
                if "static" in specs_of(type_tree) or "constexpr" in specs_of(type_tree):
                    for dcl in m.children[1:]:       # static constexpr: a class constant
                        ident, init = _declarator(dcl, unsupported)
                        if init is None or "constexpr" not in specs_of(type_tree) and \
                                "const" not in specs_of(type_tree):
                            raise unsupported(dcl, "static class member that is not a "
                                                   "constexpr constant")
                        info.statics[ident] = (type_tree, init, dcl)
                    continue
                for dcl in m.children[1:]:
                    ident, init = _declarator(dcl, unsupported)
                    info.members.append((type_tree, ident, init, dcl))
            elif d == "func_def":
                f = func_info(m, info)
                info.methods.setdefault(f.name, []).append(f)
                info.is_struct = False
            elif d == "ctor_def":
                params = next(c for c in m.children if hasattr(c, "data") and
                              c.data == "params")
                body = m.children[-1] if getattr(m.children[-1], "data", None) == "block" \
                    else None
                inits = [c for c in m.children if hasattr(c, "data") and c.data == "mem_init"]
                f = FuncInfo(name, None, params_of(params), body, m, info)
                f.mem_inits = inits
                info.ctors.append(f)
                info.is_struct = False
            elif d == "dtor_def":
                info.is_struct = False
            elif d == "template_def":
                raise unsupported(m, "member template")
            elif d in ("using_alias", "typedef"):
                raise unsupported(m, "type alias inside a class")
        for b in bases:
            _inherit(info, b, unit, unsupported)
        return info

    def top(t, tparams=()):
        d = t.data
        if d in ("using_ns", "empty"):
            return
        if d == "namespace_def":
            for c in t.children[1:]:
                top(c)
            return
        if d == "extern_c":
            for c in t.children[1:]:
                if c is not None:
                    top(c)
            return
        if d == "template_def":
            inner = t.children[-1]
            top(inner, tparams_of(t))
            return
        if d == "class_def":
            info = class_info(t, tparams)
            unit.classes[info.name] = info
            return
        if d == "method_def":     # void K::Init(...) { ... }: the body of a declared method
            type_tree, cls_name, _targs, ident, params, _const, body = t.children
            info = unit.classes.get(str(cls_name))
            if info is None:
                raise unsupported(t, f"a method of '{cls_name}', a class this file does not "
                                     f"define")
            f = FuncInfo(str(ident), type_tree, params_of(params, unsupported), body, t, info,
                         [], specs_of(type_tree))
            decls = info.methods.setdefault(f.name, [])
            for k, g in enumerate(decls):
                if g.body is None and len(g.params) == len(f.params):
                    decls[k] = f
                    return
            decls.append(f)
            return
        if d == "ctor_out":        # K::K(...) : a(x) { ... }: a constructor's definition
            cls_name = next(str(c) for c in t.children if _tok(c) and c.type == "TYPE")
            info = unit.classes.get(cls_name)
            if info is None:
                raise unsupported(t, f"a constructor of '{cls_name}', a class this file does "
                                     f"not define")
            params = next(c for c in t.children if hasattr(c, "data") and c.data == "params")
            f = FuncInfo(cls_name, None, params_of(params, unsupported), t.children[-1], t,
                         info)
            f.mem_inits = [c for c in t.children if hasattr(c, "data") and c.data == "mem_init"]
            for k, g in enumerate(info.ctors):
                if g.body is None and len(g.params) == len(f.params):
                    info.ctors[k] = f
                    return
            info.ctors.append(f)
            return
        if d == "func_def":
            f = func_info(t, None, tparams)
            if f.is_global:
                if tparams:
                    raise unsupported(t, "template __global__ function")
                unit.entries.append(f)
            elif f.body is not None:
                unit.funcs.setdefault(f.name, []).append(f)
            return
        if d == "var_decl":
            type_tree = t.children[0]
            for dcl in t.children[1:]:
                ident, init, dims = _declarator(dcl, unsupported, arrays=True)
                if dims and "constexpr" not in specs_of(type_tree) and \
                        "const" not in specs_of(type_tree):
                    raise unsupported(dcl, "a global array that is not constexpr")
                if init is None:
                    raise unsupported(dcl, "global variable without a value")
                unit.consts[ident] = (type_tree, init, dcl)
                unit.order.append(ident)
            return
        if d == "using_alias":
            unit.aliases[str(t.children[0])] = t.children[1]
            return
        if d == "typedef":
            unit.aliases[str(t.children[1])] = t.children[0]
            return
        if d == "enum_def":
            _enum(t, unit, unsupported)
            return
        raise unsupported(t, d.replace("_", " "))

    for t in tree.children:
        top(t)
    return unit


def _inherit(info: ClassInfo, base_t, unit: Unit, unsupported) -> None:
    """``class D : public B``: D gets B's members, constants and the methods it does not
    declare itself (C++ hides a base's overloads by name); B's constructors run first."""
    named = next((c for c in base_t.children if getattr(c, "data", None) == "named_type"), None)
    if named is None or len(named.children) != 2 or named.children[1] is not None:
        raise unsupported(base_t, "a template or qualified base class")
    base = unit.classes.get(str(named.children[0]))
    if base is None:
        raise unsupported(base_t, f"a base class '{named.children[0]}' this file does not "
                                  f"define")
    if base.tparams:
        raise unsupported(base_t, "a template base class")
    inherited = {m[1] for m in base.members}
    for m in info.members:
        if m[1] in inherited:
            raise unsupported(m[3], f"a member '{m[1]}' that hides one of the base class "
                                    f"{base.name}")
    info.members[:0] = base.members
    for k, v in base.statics.items():
        info.statics.setdefault(k, v)
    for k, fs in base.methods.items():
        info.methods.setdefault(k, fs)         # the base's list: later definitions show
    info.bases.append(base)
    if base.methods or base.ctors:
        info.is_struct = False


def _declared_struct(file: str, name: str) -> bool:
    """Whether the file declares ``name`` with ``struct`` (a plain record) not ``class``."""
    import linecache
    import re
    from .lexer import INCLUDED
    text = "".join("".join(linecache.getlines(f)) for f in [file] + INCLUDED.get(file, []))
    return re.search(r"\bstruct\s+%s\b" % re.escape(name), text) is not None


def _declarator(dcl, unsupported, arrays=False):
    """(name, init tree) of a declarator; pointer declarators are refused, and arrays unless
    ``arrays`` (then the name, init and the number of dimensions)."""
    kids = dcl.children
    if any(hasattr(c, "data") and c.data == "ptr" for c in kids):
        raise unsupported(dcl, "pointer variable declarator (put the * in the type)")
    ident = next(c for c in kids if _tok(c) and c.type == "IDENT")
    after = kids[kids.index(ident) + 1:]
    if arrays:
        return str(ident), after[-1] if after else None, max(len(after) - 1, 0)
    if len(after) > 1:
        raise unsupported(dcl, "array variable (only constexpr arrays at file scope)")
    init = after[0] if after else None
    return str(ident), init


def _enum(t, unit: Unit, unsupported) -> None:
    from .ctypes_c import int_literal
    name = next(str(c) for c in t.children if _tok(c) and c.type in ("IDENT", "TYPE"))
    values, nxt = {}, 0
    for e in t.children:
        if not hasattr(e, "data") or e.data != "enumerator":
            continue
        ident, value = e.children
        if value is not None:
            if value.data != "int_lit":
                raise unsupported(value, "enumerator value that is not an integer literal")
            nxt = int_literal(str(value.children[0]))[0]
        values[str(ident)] = nxt
        nxt += 1
    unit.enums[name] = values
    for k, v in values.items():   # unscoped enumerators are names too
        unit.consts.setdefault(k, ("enum", v, t))
        unit.order.append(k)
