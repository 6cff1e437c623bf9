"""Statement forms of the C++ subset kept apart from ``lower.py``: ``#pragma unroll`` loops,
``do``/``while``, ``switch``, objects built by a constructor with arguments (``K op(x);``),
local structs and local arrays of scalars. ``self`` is a ``lower.Lowerer``."""
from __future__ import annotations

from dataclasses import dataclass

from ..compiler import ast as A
from ..compiler.errors import KernelTypeError
from . import ctypes_c as C
from .ctypes_c import CT
from .lower_expr import E, Const, Obj, Var, name

#: the most elements a local array indexed at run time may have (a compare per element)
MAX_SELECT = 256


@dataclass
class Arr:
    """A local array of scalars: one kernel variable per element."""
    elems: list
    ct: CT


@dataclass(frozen=True)
class ArrRef:
    arr: Arr


class ControlMixin:
    """Statement handlers (``s_<rule>``) and declaration helpers."""

    def s_unroll_for(self, s) -> None:
        """``#pragma unroll`` before ``for (int i = a; i < b; i++)`` with constant bounds:
        the body once per value of ``i`` (a compile-time constant in each copy)."""
        from .loops import range_form
        from .pointers import names_pointer, unrolled_for
        if names_pointer(self, s.children[1].children):    # unrolled anyway
            return unrolled_for(self, s.children[1])
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

    def assign_struct(self, dst: Obj, value: E, t) -> None:
        """``s = other;`` for a local struct: every field from the other struct's."""
        loc = self.loc(t)
        src = value.const if isinstance(value.const, Obj) else None
        if src is None and (value.node is None or value.ct.cls is not dst.cls):
            raise KernelTypeError(f"cannot assign {value.ct.text()} to a {dst.cls.name}", loc)
        if src is not None and src.cls is not dst.cls:
            raise KernelTypeError(f"cannot assign a {src.cls.name} to a {dst.cls.name}", loc)
        for fname in dst.members:
            v = self.binding_value(src.members[fname], t) if src is not None else \
                self.member_of(value, fname, t)
            self.assign_member(dst, fname, v, t)

    # ------------------------------------------------------------------ local arrays
    def declare_array(self, ident: str, ct: CT, dcl, const: bool) -> None:
        """``T a[N] = {...};`` / ``T a[N];`` / ``T a[] = {...};`` with T a scalar type: a
        constexpr/const array with constant values is a compile-time table; any other is
        one variable per element (a brace list's missing elements are zero, as in C; an
        array without one starts at zero, as we chose: C leaves it indeterminate)."""
        kids = dcl.children
        after = kids[[k for k, c in enumerate(kids) if getattr(c, "type", "") == "IDENT"][0]
                     + 1:]
        dim_trees, init = after[:-1], after[-1]
        if not ct.is_scalar or ct.ptr:
            raise self.unsupported(dcl, f"a local array of {ct.text()}")
        sizes = []
        for k, d in enumerate(dim_trees):
            if d is None:
                if k or init is None:
                    raise self.unsupported(dcl, "an array dimension without a size")
                sizes.append(None)
                continue
            e = self.expr(d)
            if not e.is_const or not isinstance(e.const, int) or e.const <= 0:
                raise self.unsupported(d, "an array size that is not a positive compile-time "
                                          "constant")
            sizes.append(e.const)
        if init is not None and init.data == "init_assign":
            init = init.children[0]
        if init is not None and getattr(init, "data", None) != "brace_list":
            raise self.unsupported(dcl, "initialising an array from a value")
        if const and init is not None and self.constant_items(init):
            self._array_init = True
            try:
                e = self.array_value(init, ct)
            finally:
                self._array_init = False
            self.declare(ident, Const(self.pad(e.const, sizes, ct, dcl), ct))
            return
        if len(sizes) != 1:
            raise self.unsupported(dcl, "a local array of more than one dimension that is "
                                        "not a constexpr table")
        items = [a for a in init.children if a is not None] if init is not None else []
        n = sizes[0] if sizes[0] is not None else len(items)
        if len(items) > n:
            raise KernelTypeError(f"{len(items)} values for an array of {n}", self.loc(dcl))
        if n > MAX_SELECT:
            raise self.unsupported(dcl, f"a local array of more than {MAX_SELECT} elements "
                                        f"(use a LocalTensor)")
        loc = self.loc(dcl)
        arr = Arr([], ct)
        for k in range(n):
            if k < len(items) and getattr(items[k], "data", None) == "brace_list":
                raise self.unsupported(items[k], "a nested brace list in a one-dimensional "
                                                 "array")
            v = self.convert(self.expr(items[k]), ct, loc) if k < len(items) else \
                self.const_e(0, ct, loc)
            py = self.fresh(f"{ident}[{k}]")
            self.emit(A.Assign(loc, (name(py, loc),), v.node))
            arr.elems.append(Var(py, ct))
        self.declare(ident, arr)

    def constant_items(self, init) -> bool:
        """Whether every value of a brace list is a compile-time constant (a ``const`` array
        of run-time values is an array of variables)."""
        saved, self.cur = self.cur, []
        try:
            for a in init.children:
                if a is None:
                    continue
                if getattr(a, "data", None) == "brace_list":
                    if not self.constant_items(a):
                        return False
                elif not self.expr(a).is_const:
                    return False
            return True
        finally:
            self.cur = saved

    def pad(self, value, sizes, ct, t):
        if not sizes:
            return value
        n = sizes[0] if sizes[0] is not None else len(value)
        if not isinstance(value, tuple) or len(value) > n:
            raise KernelTypeError(f"{len(value) if isinstance(value, tuple) else 1} values "
                                  f"for an array of {n}", self.loc(t))
        zero = 0.0 if ct.is_float else 0
        filler = zero if len(sizes) == 1 else self.pad((), sizes[1:], ct, t)
        return tuple(self.pad(v, sizes[1:], ct, t) for v in value) + \
            (filler,) * (n - len(value))

    def array_read(self, arr: Arr, idx: E, t) -> E:
        loc = self.loc(t)
        if idx.is_const:
            if not 0 <= idx.const < len(arr.elems):
                raise KernelTypeError(f"index {idx.const} is outside the array (size "
                                      f"{len(arr.elems)})", loc)
            return self.binding_value(arr.elems[idx.const], t)
        return self.select(idx, [self.binding_value(v, t) for v in arr.elems], t)

    def select(self, idx: E, values: list, t) -> E:
        """``values[idx]`` for a run-time ``idx``: a chain of compares (C leaves an index
        outside the array undefined; here it reads the last element)."""
        loc = self.loc(t)
        if len(values) > MAX_SELECT:
            raise self.unsupported(t, f"indexing an array of more than {MAX_SELECT} elements "
                                      f"with a run-time index")
        idx = self.observed(idx, loc)
        out = values[-1]
        for k in range(len(values) - 2, -1, -1):
            cond = self.binop_e("==", idx, self.const_e(k, C.INT32, loc), loc)
            v = values[k]
            out = E(A.IfExp(loc, cond.node, v.node, out.node), v.ct, v.st or v.ct.name)
        return out

    def array_store(self, ref: ArrRef, idx_t, value: E, t) -> None:
        loc = self.loc(t)
        arr = ref.arr
        idx = self.expr(idx_t)
        value = self.convert(value, arr.ct, loc)
        if idx.is_const:
            if not 0 <= idx.const < len(arr.elems):
                raise KernelTypeError(f"index {idx.const} is outside the array (size "
                                      f"{len(arr.elems)})", loc)
            self.emit(A.Assign(loc, (name(arr.elems[idx.const].py, loc),), value.node))
            return
        if not isinstance(value.node, (A.Name, A.Constant)):    # evaluate the value once
            py = self.fresh("$elem")
            self.emit(A.Assign(loc, (name(py, loc),), value.node))
            value = E(name(py, loc), value.ct, value.st)
        idx = self.observed(idx, loc)
        chain = ()
        for k in range(len(arr.elems) - 1, -1, -1):
            store = (A.Assign(loc, (name(arr.elems[k].py, loc),), value.node),)
            cond = self.binop_e("==", idx, self.const_e(k, C.INT32, loc), loc)
            chain = (A.If(loc, cond.node, store, chain),)
        self.cur.extend(chain)

    # ------------------------------------------------------------------ switch
    def s_switch_stmt(self, s) -> None:
        """``switch`` with C's meaning: execution starts at the matching ``case`` (or
        ``default``) and falls through until a ``break``. A compile-time value picks the
        statements at compile time; a run-time one becomes a one-pass loop (so ``break``
        leaves it) with a flag set from the first matching label on."""
        value_t, *items = s.children
        loc = self.loc(s)
        for it in items:
            for sub in ([it] + list(it.iter_subtrees()) if hasattr(it, "iter_subtrees")
                        else []):
                if sub.data == "return_stmt":
                    raise self.unsupported(sub, "return inside a switch",
                                           "set a variable and return after the switch")
            if hasattr(it, "data") and _continues(it):
                raise self.unsupported(it, "continue inside a switch")
        v = self.expr(value_t)
        if not (v.ct.is_int or v.ct.name == "?"):
            raise KernelTypeError(f"switch needs an integer value, got {v.ct.text()}", loc)
        segs, seen, default = [], {}, None
        for it in items:
            d = getattr(it, "data", None)
            if d in ("case_label", "default_label"):
                if not segs or segs[-1][1]:
                    segs.append(([], []))
                if d == "default_label":
                    if default is not None:
                        raise KernelTypeError("two default labels in one switch",
                                              self.loc(it))
                    default = len(segs) - 1
                    segs[-1][0].append(None)
                    continue
                c = self.expr(it.children[0])
                if not c.is_const or not isinstance(c.const, int):
                    raise self.unsupported(it, "a case label that is not an integer constant")
                if c.const in seen:
                    raise KernelTypeError(f"case {c.const} appears twice in this switch",
                                          self.loc(it))
                seen[c.const] = len(segs) - 1
                segs[-1][0].append(c.const)
            elif segs:            # statements before the first label never run
                segs[-1][1].append(it)
        self.scopes.append({})
        try:
            if v.is_const and self.switch_static(v.const, segs, seen, default):
                return
            self.switch_runtime(v, segs, default, loc)
        finally:
            self.scopes.pop()

    def switch_static(self, value, segs, seen, default) -> bool:
        start = seen.get(value, default)
        if start is None:
            return True
        run = []
        for _, stmts in segs[start:]:
            for st in stmts:
                if getattr(st, "data", None) == "break_stmt":
                    self.stmts(run)
                    return True
                if _breaks_out(st):
                    return False       # a break under a condition: the run-time form
                run.append(st)
        self.stmts(run)
        return True

    def switch_runtime(self, v, segs, default, loc) -> None:
        v = self.observed(v, loc)
        if not isinstance(v.node, (A.Name, A.Constant)):     # evaluate the value once
            py = self.fresh("$switch")
            self.emit(A.Assign(loc, (name(py, loc),), v.node))
            v = E(name(py, loc), v.ct, v.st)
        flag = self.fresh("$matched")
        labels = [x for lab, _ in segs for x in lab if x is not None]
        saved, self.cur = self.cur, [A.Assign(loc, (name(flag, loc),), A.Constant(loc, False))]
        for lab, stmts in segs:
            tests = [self.binop_e("==", v, self.const_e(x, v.ct if v.ct.is_int else C.INT32,
                                                         loc), loc).node
                     for x in lab if x is not None]
            if None in lab:
                others = [self.binop_e("!=", v, self.const_e(x, v.ct if v.ct.is_int else
                                                             C.INT32, loc), loc).node
                          for x in labels]
                tests.append(A.BoolOp(loc, "and", tuple(others)) if len(others) > 1 else
                             others[0] if others else A.Constant(loc, True))
            cond = A.BoolOp(loc, "or", (name(flag, loc),) + tuple(tests))
            body = self.block(stmts)
            self.emit(A.If(loc, cond, (A.Assign(loc, (name(flag, loc),),
                                                A.Constant(loc, True)),) + body, ()))
        inner, self.cur = self.cur, saved
        self.emit(A.While(loc, A.Constant(loc, True), tuple(inner) + (A.Break(loc),), ()))

    # ------------------------------------------------------------------ side effects in expressions
    def side_effect(self, t) -> None:
        self.effect(t)
        self.effects = getattr(self, "effects", 0) + 1

    def x_post_incdec(self, t) -> E:
        """``i++`` as a value: the old value (kept in a variable), then the increment."""
        cur = self.expr(t.children[0])
        loc = self.loc(t)
        if cur.node is not None and cur.ref is None and not cur.is_const:
            py = self.fresh("$old")
            self.emit(A.Assign(loc, (name(py, loc),), cur.node))
            cur = E(name(py, loc), cur.ct, cur.st, wraps=cur.wraps)
        self.side_effect(t)
        return cur

    def x_pre_incdec(self, t) -> E:
        self.side_effect(t)
        return self.expr(t.children[1])

    def x_assignment(self, t) -> E:
        self.side_effect(t)
        return self.expr(t.children[0])

    x_aug_assignment = x_assignment

    def x_comma(self, t) -> E:
        self.effect(t.children[0])
        return self.expr(t.children[1])

    def conditional_operand(self, t) -> E:
        """An operand C evaluates only sometimes (``&&``/``||``'s right, ``?:``'s branches):
        ++ or = inside would run unconditionally here, so it is refused."""
        before = getattr(self, "effects", 0)
        e = self.expr(t)
        if getattr(self, "effects", 0) != before:
            raise self.unsupported(t, "++, -- or = in an operand of &&, || or ?: (C may not "
                                      "evaluate it)")
        return e


def _continues(t) -> bool:
    """A ``continue`` that would leave the switch (not inside a loop of its own)."""
    if t.data == "continue_stmt":
        return True
    if t.data in ("for_stmt", "while_stmt", "do_stmt", "unroll_for"):
        return False
    return any(_continues(c) for c in t.children if hasattr(c, "data"))


def _breaks_out(t) -> bool:
    """A ``break`` that leaves the switch from inside another statement."""
    if not hasattr(t, "data"):
        return False
    if t.data == "break_stmt":
        return True
    if t.data in ("for_stmt", "while_stmt", "do_stmt", "unroll_for", "switch_stmt"):
        return False
    return any(_breaks_out(c) for c in t.children)
