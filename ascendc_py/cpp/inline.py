"""Inlining a call of one of the file's functions or methods at its call site.

The callee's parameters are bound to the arguments (a by-value parameter the body assigns gets
a variable of its own, converted to the parameter's type; others name the argument directly),
its template parameters to explicit or deduced arguments, ``this`` to the object, and its body
is lowered in place. A value-returning function stores its result in a variable the call
expression then reads.
"""
from __future__ import annotations

from ..compiler import ast as A
from ..compiler.errors import ArgumentError, KernelTypeError, RecursiveCallError
from .ctypes_c import CT
from .lower_expr import E, Const, Obj, Var, name

MAX_DEPTH = 48


def _assigned_params(body, names: set) -> set:
    """Parameter names the body assigns (=, op=, ++, --) or passes where a method may fill
    them."""
    out = set()

    def walk(t):
        if not hasattr(t, "data"):
            return
        if t.data in ("assignment", "aug_assignment"):
            tgt = t.children[0]
            if getattr(tgt, "data", None) == "name" and str(tgt.children[0]) in names:
                out.add(str(tgt.children[0]))
        elif t.data in ("pre_incdec", "post_incdec"):
            tgt = t.children[1] if t.data == "pre_incdec" else t.children[0]
            if getattr(tgt, "data", None) == "name" and str(tgt.children[0]) in names:
                out.add(str(tgt.children[0]))
        for c in t.children:
            walk(c)
    walk(body)
    return out


def _choose(funcs, nargs: int, lw, t):
    for f in funcs:
        required = sum(1 for p in f.params if p[2] is None and p[1] is not None)
        if required <= nargs <= len(f.params):
            return f
    f = funcs[0]
    raise ArgumentError(f"{f.name}() takes {len(f.params)} arguments but {nargs} were given",
                        lw.loc(t))


def _deduce(lw, type_tree, arg: E, names: set, bound: dict) -> None:
    """Bind template type parameters that a parameter's type names directly (``T``) or as
    the element type of a tensor (``LocalTensor<T>``) from the argument's C type."""
    base = next((c for c in type_tree.children if getattr(c, "data", None) == "named_type"),
                None)
    if base is None:
        return
    ident = str(base.children[0])
    if ident in names and ident not in bound and arg.ct.name not in ("?", "void"):
        bound[ident] = CT(arg.ct.name, arg.ct.args, cls=arg.ct.cls)
        return
    targs = base.children[1]
    if targs is not None and arg.ct.args:
        for k, a in enumerate(targs.children):
            if getattr(a, "data", None) == "type":
                inner = next((c for c in a.children if getattr(c, "data", None) ==
                              "named_type"), None)
                if inner is not None and str(inner.children[0]) in names and \
                        k < len(arg.ct.args) and isinstance(arg.ct.args[k], CT):
                    bound.setdefault(str(inner.children[0]), arg.ct.args[k])
            elif getattr(a, "data", None) == "name" and str(a.children[0]) in names and \
                    k < len(arg.ct.args) and isinstance(arg.ct.args[k], CT):
                bound.setdefault(str(a.children[0]), arg.ct.args[k])


def inline_call(lw, funcs, this: Obj, targs, args, t) -> E:
    from .lower import Frame
    loc = lw.loc(t)
    f = _choose(funcs, len(args), lw, t)
    if f.body is None:
        raise KernelTypeError(f"{f.name}() is declared but not defined in this file", loc)
    if any(fr.func is f for fr in lw.frames):
        raise RecursiveCallError(f"recursive call of {f.name}() is not supported", loc)
    if len(lw.frames) > MAX_DEPTH:
        raise RecursiveCallError("functions are nested too deeply", loc)
    values = [lw.expr(a) for a in args]
    tenv = dict(this.tenv) if this is not None else {}
    explicit = lw.template_values(targs)
    tnames = {p[1] for p in f.tparams if p[0] == "type"}
    for p, v in zip(f.tparams, explicit):
        tenv[p[1]] = v if isinstance(v, CT) else Const(v.const, v.ct)
    deduced: dict = {}
    for (type_tree, pname, _, _), v in zip(f.params, values):
        _deduce(lw, type_tree, v, tnames - set(tenv), deduced)
    tenv.update(deduced)
    for p in f.tparams:
        if p[1] not in tenv:
            if p[2] is None:
                raise KernelTypeError(f"cannot deduce template parameter '{p[1]}' of "
                                      f"{f.name}(); give it: {f.name}<...>(...)", loc)
            tenv[p[1]] = lw.resolve_type(p[2], tenv) if p[0] == "type" else \
                Const(lw.expr(p[2]).const, lw.expr(p[2]).ct)
    names = {p[1] for p in f.params if p[1]}
    assigned = _assigned_params(f.body, names)
    scope: dict = {}
    for i, (type_tree, pname, default, ptree) in enumerate(f.params):
        v = values[i] if i < len(values) else None
        pct = lw.resolve_type(type_tree, tenv)
        if v is None:
            saved = lw.tenv
            lw.tenv = tenv
            v = lw.expr(default)
            lw.tenv = saved
        if pname is None:
            continue
        if isinstance(v.const, Obj):
            scope[pname] = v.const
            continue
        if v.ref is not None and v.node is None:     # a local array or word pointer
            scope[pname] = v
            continue
        if pct.is_scalar:
            v = lw.convert(v, pct, loc)
        elif pct.ptr and pct.cls is not None:     # a tiling struct pointer
            scope[pname] = v
            continue
        if v.is_const and pname not in assigned:
            scope[pname] = Const(v.const, v.ct)
            continue
        if isinstance(v.node, A.Name) and (pname not in assigned or pct.ref):
            scope[pname] = Var(v.node.id, v.ct if v.ct.name != "?" else pct,
                               v.st if v.st != (v.ct.name if v.ct.is_scalar else None)
                               else None) if pct.ref else v
            continue
        if v.node is None:
            raise KernelTypeError(f"cannot pass this argument to {f.name}()", loc)
        py = lw.fresh(pname)
        lw.emit(A.Assign(loc, (name(py, loc),), v.node))
        scope[pname] = Var(py, pct if pct.name not in ("auto", "?") else v.ct)
    ret_ct = lw.resolve_type(f.ret, tenv) if f.ret is not None else CT("void")
    ret_py = None if ret_ct.name == "void" and not ret_ct.ptr else lw.fresh(f"{f.name}.ret")
    saved = (lw.scopes, lw.this, lw.tenv, getattr(lw, "_incr", None))
    lw.scopes, lw.this, lw.tenv = [scope], this, tenv
    lw._incr = None
    lw.frames.append(Frame(f, ret_py, ret_ct))
    try:
        if f.ret is None and this is not None and f.cls is not None:     # a constructor
            construct_bases(lw, this, f.cls, getattr(f, "mem_inits", ()), t)
        for mi in getattr(f, "mem_inits", ()):      # K(...) : member(value), ... { body }
            if f.cls is None or str(mi.children[0]) not in {b.name for b in f.cls.bases}:
                _member_init(lw, this, mi)
        lw.stmts(list(f.body.children))
    finally:
        lw.frames.pop()
        lw.scopes, lw.this, lw.tenv, lw._incr = saved
    if ret_py is None:
        return E(None, CT("void"))
    st = ret_ct.name if ret_ct.is_scalar else None
    return E(name(ret_py, loc), ret_ct, st)


def construct_bases(lw, obj: Obj, cls, mem_inits, t) -> None:
    """Run the base classes' constructors (``D(...) : B(args)``, else B's default one)."""
    for base in cls.bases:
        mi = next((m for m in mem_inits if str(m.children[0]) == base.name), None)
        if mi is not None:
            args = [a for a in mi.children[1].children if a is not None] \
                if mi.children[1] is not None else []
        else:
            args = []
        if base.ctors:
            saved = (lw.scopes, lw.this)
            if mi is None:
                lw.scopes = [{}]
            inline_call(lw, base.ctors, obj, None, args, mi if mi is not None else t)
            lw.scopes, lw.this = saved
        else:
            construct_bases(lw, obj, base, [], t)


def _member_init(lw, obj: Obj, mi) -> None:
    ident, args_t = str(mi.children[0]), mi.children[1]
    args = [a for a in args_t.children if a is not None] if args_t is not None else []
    b = obj.members.get(ident)
    if isinstance(b, Var) and b.ct.is_scalar and not args:      # a(): value-initialised
        lw.assign_member(obj, ident, lw.const_e(0, b.ct, lw.loc(mi)), mi)
    elif len(args) == 1:
        lw.assign_member(obj, ident, lw.expr(args[0]), mi)
    else:
        raise lw.unsupported(mi, f"initialising the member '{ident}' from {len(args)} values")


__all__ = ["inline_call"]
