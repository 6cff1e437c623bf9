"""Statement forms of the C++ subset kept apart from ``lower.py``: ``#pragma unroll`` loops,
``do``/``while``, ``switch``, objects built by a constructor with arguments (``K op(x);``),
local structs and local arrays of scalars. ``self`` is a ``lower.Lowerer``."""
from __future__ import annotations

from ..compiler import ast as A
from ..compiler.errors import KernelTypeError
from . import ctypes_c as C
from .ctypes_c import CT
from .lower_expr import Const, Obj, Var


class ControlMixin:
    """Statement handlers (``s_<rule>``) and declaration helpers."""

    def s_unroll_for(self, s) -> None:
        """``#pragma unroll`` before ``for (int i = a; i < b; i++)`` with constant bounds:
        the body once per value of ``i`` (a compile-time constant in each copy)."""
        from .loops import range_form
        init_t, cond_t, incr_t, body_t = s.children[1].children
        form = range_form(self, init_t, cond_t, incr_t, body_t) \
            if init_t is not None and init_t.data == "var_decl" else None
        if form is None or not (form[2].is_const and form[3].is_const):
            raise self.unsupported(s, "#pragma unroll on a loop without constant bounds")
        name_, ct, start, stop, step = form
        if len(range(start.const, stop.const, step)) > 4096:
            raise self.unsupported(s, "#pragma unroll of more than 4096 iterations")
        for v in range(start.const, stop.const, step):
            self.scopes.append({name_: Const(v, ct)})
            saved = getattr(self, "_incr", None)
            self._incr = None
            try:
                for st in self.body_of(body_t):
                    if isinstance(st, (A.Break, A.Continue)):
                        raise self.unsupported(s, "break/continue in an unrolled loop")
                    self.emit(st)
            finally:
                self._incr = saved
                self.scopes.pop()

    def s_do_stmt(self, s) -> None:
        body_t, cond_t = s.children
        loc = self.loc(s)
        saved = self.cur
        self.cur = []
        cond = self.truth(self.expr(cond_t), loc)
        check = self.cur + [A.If(loc, A.UnaryOp(loc, "not", cond.node), (A.Break(loc),), ())]
        self.cur = saved
        saved_incr = getattr(self, "_incr", None)
        self._incr = check
        body = self.body_of(body_t)
        self._incr = saved_incr
        self.emit(A.While(loc, A.Constant(loc, True), body + tuple(check), ()))

    def s_obj_decl(self, s) -> None:
        """``K op(x, y);``: an object built by the constructor that takes these arguments, or
        a scalar initialised from one value (``int32_t n(4);``)."""
        type_tree, ident, args_t = s.children
        ct = self.resolve_type(type_tree)
        args = [a for a in args_t.children if a is not None] if args_t is not None else []
        if ct.cls is not None and not ct.cls.is_struct and ct.ptr == 0:
            self.declare(str(ident), self.make_object(ct, str(ident), s, args))
            return
        if ct.is_scalar and len(args) == 1:
            from lark import Tree
            return self.declare_var(str(ident), ct, Tree("init_assign", [args[0]]), s)
        raise self.unsupported(s, f"constructing a {ct.text()} with arguments in a "
                                  f"declaration")

    def local_struct(self, ct: CT, ident: str, t) -> Obj:
        """``S s;``: a local struct of the file, one variable per field (unset until
        assigned)."""
        members = {}
        for fname, fct in ct.cls.field_types(self).items():
            if not fct.is_scalar or fct.ptr:
                raise self.unsupported(t, f"a local struct with the field '{fname}' of type "
                                          f"{fct.text()}")
            members[fname] = Var(self.fresh(f"{ident}.{fname}"), fct)
        return Obj(ct.cls, members, {}, ident)
