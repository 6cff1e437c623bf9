"""Lowering a C++ kernel file to the kernel AST: one ``FunctionDef`` per ``__global__`` entry.

Everything C++ resolves at compile time is resolved here: templates are instantiated, ``constexpr``
values and ``sizeof`` folded with C semantics, objects of the file's classes become one kernel
variable per member (``op.xGm``), and the file's functions and methods are inlined at their
calls (a method's ``return`` before its end becomes the rest of the body placed in the branch
that does not return). The AST nodes carry the ``.cpp`` file's lines and columns, so the type
checker, IR, codegen, timing, sanitizer and cache are the Python DSL's.
"""
from __future__ import annotations

from ..compiler import ast as A
from ..compiler.errors import KernelSyntaxError, KernelTypeError, SourceLoc, UndefinedNameError
from . import ctypes_c as C
from .ctypes_c import CT, UNKNOWN
from .lexer import unsupported as _unsupported
from .lower_expr import E, Const, ExprMixin, Funcs, Obj, TypeB, Var, asc_attr, call, name
from .names import ADV_CLASSES, ASC_CLASSES, C_DTYPES
from .control import ControlMixin
from .specials import SpecialsMixin
from .unit import ClassInfo, FuncInfo, Unit, loc_of

#: Ascend C classes a declaration default-constructs (``TPipe pipe;``)
_CONSTRUCTED = {"TPipe", "TQue", "TQueBind", "TBuf", "GlobalTensor", "TBufPool"}
#: the type checker's dtype of a range() loop variable over bounds of a C type
_ARITH_ST = {"int8": "int32", "int16": "int32", "int32": "int32", "uint8": "int32",
             "uint16": "int32", "uint32": "int64", "int64": "int64", "uint64": "int64"}


class Frame:
    def __init__(self, func, ret_py, ret_ct):
        self.func, self.ret_py, self.ret_ct = func, ret_py, ret_ct


class Lowerer(ControlMixin, SpecialsMixin, ExprMixin):
    """Lowers the entries of one Unit (a fresh Lowerer per entry)."""

    def __init__(self, unit: Unit):
        self.unit = unit
        self.file = unit.file
        self.scopes: list[dict] = [{}]
        self.this = None
        self.tenv: dict = {}
        self.frames: list[Frame] = []
        self.cur: list = []
        self.used: dict[str, int] = {}
        self.struct_params: dict[str, ClassInfo] = {}
        self.adv_fields: dict[str, tuple] = {}   # 'tiling.cube' -> ('tiling', 'cube')
        self.const_cache: dict = {}
        self.evaluating: set = set()
        self.rt_depth = 0                          # run-time loops/branches being lowered
        self.adv_params: set = set()               # GM_ADDRs copied into a TCubeTiling
        self.cube_copies: dict = {}                # TCubeTiling var -> words copied

    # ------------------------------------------------------------------ errors, places
    def loc(self, t):
        if isinstance(t, SourceLoc):
            return t
        return loc_of(self.file, t)

    def struct_view(self, e, ct, loc):
        """``(__gm__ Struct *)tiling``: the GM_ADDR parameter read as a tiling struct."""
        from .tiling import bind_struct_param
        return bind_struct_param(self, e, ct.cls, loc)

    def unsupported(self, t, what: str, hint: str = ""):
        loc = self.loc(t)
        err = _unsupported(self.file, (loc.line, loc.col), what, hint)
        err.loc = loc
        return err.relocated(loc)

    def unsupported_at(self, loc, what: str):
        return KernelSyntaxError(f"not supported: {what}", loc)

    # ------------------------------------------------------------------ names
    def fresh(self, cname: str) -> str:
        n = self.used.get(cname, 0)
        self.used[cname] = n + 1
        return cname if n == 0 else f"{cname}#{n}"

    def declare(self, cname: str, binding) -> None:
        self.scopes[-1][cname] = binding

    def lookup_soft(self, ident: str):
        for scope in reversed(self.scopes):
            if ident in scope:
                return scope[ident]
        if self.this is not None:
            b = self.this_member_soft(ident)
            if b is not None:
                return b
        if ident in self.tenv:
            v = self.tenv[ident]
            return TypeB(v) if isinstance(v, CT) else v
        u = self.unit
        if ident in u.consts:
            return self.global_const(ident)
        if ident in u.funcs:
            return Funcs(u.funcs[ident], None)
        if ident in u.classes:
            return TypeB(CT(ident, cls=u.classes[ident]))
        if ident in u.aliases:
            return TypeB(self.resolve_type(u.aliases[ident], {}))
        if ident in C_DTYPES:
            return TypeB(CT(C_DTYPES[ident]))
        from .names import CONSTANT_CALLS
        if ident in CONSTANT_CALLS:
            return E(call(asc_attr(CONSTANT_CALLS[ident], None), [], None), UNKNOWN)
        if ident.startswith("EVENT_ID") and ident[8:].isdigit():     # EVENT_ID0 ... EVENT_ID7
            return Const(int(ident[8:]), C.INT32)
        if ident.startswith("PIPE_"):
            import ascendc_py as asc
            if hasattr(asc.PipeID, ident):
                return E(asc_attr(f"PipeID.{ident}", None), UNKNOWN)
        return None

    def lookup(self, ident: str, t):
        b = self.lookup_soft(ident)
        if b is None:
            hint = (f"CANN defines {ident} from the operator's types; give it: "
                    f"asc.cpp.load(..., defines={{'{ident}': 'half'}})"
                    if ident.startswith(("DTYPE_", "ORIG_DTYPE_")) else "")
            raise UndefinedNameError(f"'{ident}' is not declared", self.loc(t), hint=hint)
        if isinstance(b, E) and b.node is not None and getattr(b.node, "loc", 1) is None:
            from .names import CONSTANT_CALLS
            loc = self.loc(t)
            b = E(call(asc_attr(CONSTANT_CALLS[ident], loc), [], loc), UNKNOWN) \
                if ident in CONSTANT_CALLS else E(asc_attr(f"PipeID.{ident}", loc), UNKNOWN)
        return b

    def this_member_soft(self, ident: str):
        obj = self.this
        if obj is None:
            return None
        if ident in obj.members:
            return obj.members[ident]
        if ident in obj.cls.methods:
            return Funcs(obj.cls.methods[ident], obj)
        return None

    def this_member(self, ident: str, t):
        b = self.this_member_soft(ident)
        if b is None:
            raise UndefinedNameError(f"this has no member '{ident}'", self.loc(t))
        return b

    def global_const(self, ident: str):
        if ident in self.const_cache:
            return self.const_cache[ident]
        type_tree, init, tree = self.unit.consts[ident]
        if type_tree == "enum":
            b = Const(init, C.INT32)
            self.const_cache[ident] = b
            return b
        if ident in self.evaluating:
            raise KernelTypeError(f"constant '{ident}' depends on itself", self.loc(tree))
        self.evaluating.add(ident)
        saved = (self.scopes, self.this, self.tenv, self.cur)
        self.scopes, self.this, self.tenv, self.cur = [{}], None, {}, []
        try:
            ct = self.resolve_type(type_tree, {})
            from .unit import _declarator
            dims = _declarator(tree, self.unsupported, arrays=True)[2]
            self._array_init = bool(dims)
            try:
                e = self.init_value(init, ct, tree)
            finally:
                self._array_init = False
            if ct.name == "auto":
                ct = e.ct
            if not e.is_const or self.cur:
                raise self.unsupported(tree, f"global '{ident}' whose value is not a "
                                             f"compile-time constant")
        finally:
            self.scopes, self.this, self.tenv, self.cur = saved
            self.evaluating.discard(ident)
        if isinstance(e.const, tuple):
            b = Const(e.const, ct)
        else:
            b = Const(C.wrap(e.const, ct) if ct.is_scalar else e.const,
                      ct if ct.is_scalar else e.ct)
        self.const_cache[ident] = b
        return b

    def init_value(self, init, ct: CT, tree) -> E:
        if init.data == "init_assign" and getattr(init.children[0], "data", "") == \
                "brace_list":
            init = init.children[0]
        if init.data == "init_assign":
            e = self.expr(init.children[0])
        elif init.data == "brace_list":
            args = [a for a in init.children if a is not None]
            if any(getattr(a, "data", "") == "brace_list" for a in args) or \
                    getattr(self, "_array_init", False):
                return self.array_value(init, ct)
            if ct.is_scalar and len(args) == 1:
                e = self.expr(args[0])
            else:
                return self.construct(ct, args, tree)
        else:
            e = self.expr(init)
        return self.convert(e, ct, self.loc(tree)) if ct.is_scalar else e

    def array_value(self, t, ct: CT) -> E:
        """A constexpr array's brace list as nested tuples of values of ``ct``."""
        items = []
        for a in t.children:
            if a is None:
                continue
            if getattr(a, "data", "") == "brace_list":
                items.append(self.array_value(a, ct).const)
            else:
                e = self.expr(a)
                if not e.is_const:
                    raise self.unsupported(a, "an array element that is not a compile-time "
                                              "constant")
                items.append(C.wrap(e.const, ct) if ct.is_scalar else e.const)
        return E(None, ct, None, tuple(items))

    # ------------------------------------------------------------------ types
    def resolve_type(self, tree, tenv=None) -> CT:
        saved = self.tenv
        if tenv is not None:
            self.tenv = tenv
        try:
            base = None
            ptr, gm, const = 0, False, False
            ref = False
            for c in tree.children:
                if hasattr(c, "data"):
                    if c.data == "spec":
                        word = str(c.children[0])
                        gm = gm or word == "__gm__"
                        const = const or word in ("const", "constexpr")
                    elif c.data == "ptr":
                        kind = str(c.children[0])
                        if kind == "*":
                            ptr += 1
                        else:
                            ref = True
                    else:
                        base = self.resolve_base(c)
                else:
                    gm = gm or str(c) == "__gm__"
                    const = const or str(c) == "const"
            if ptr > 1:
                raise self.unsupported(tree, "pointer to pointer")
            return CT(base.name, base.args, ptr + base.ptr, ref, gm, const, base.cls)
        finally:
            self.tenv = saved

    def resolve_base(self, t) -> CT:
        d = t.data
        if d == "void_type":
            return CT("void")
        if d == "auto_type":
            return CT("auto")
        if d == "sign_type":
            word, rest = str(t.children[0]), t.children[1]
            key = word + (" " + str(rest) if rest is not None else "")
            if key not in C_DTYPES:
                raise self.unsupported(t, f"type '{key}'")
            return CT(C_DTYPES[key])
        if d == "elaborated_type":
            return self.named(str(t.children[0]), None, t)
        kids = t.children
        if len(kids) > 2:
            raise self.unsupported(t, "nested type name (A::B)")
        return self.named(str(kids[0]), kids[1], t)

    def named(self, ident: str, targs, t) -> CT:
        if ident in self.tenv:
            v = self.tenv[ident]
            if not isinstance(v, CT):
                raise KernelTypeError(f"'{ident}' is a value, not a type", self.loc(t))
            return v
        if ident in C_DTYPES:
            return CT(C_DTYPES[ident])
        if ident == "GM_ADDR":
            return CT("GM_ADDR")
        if ident == "void":
            return CT("void")
        if ident in self.unit.aliases and targs is None:
            return self.resolve_type(self.unit.aliases[ident], {})
        args = tuple(self.template_values(targs))
        if ident in self.unit.classes:
            return CT(ident, args, cls=self.unit.classes[ident])
        if ident in ASC_CLASSES or ident in ADV_CLASSES:
            return CT(ident, args)
        hint = (f"CANN defines {ident} from the operator's types; give it: "
                f"asc.cpp.load(..., defines={{'{ident}': 'half'}})"
                if ident.startswith(("DTYPE_", "ORIG_DTYPE_")) else "")
        raise UndefinedNameError(f"unknown type '{ident}'", self.loc(t), hint=hint)

    # ------------------------------------------------------------------ statements
    def stmts(self, items) -> None:
        """Lower a statement list into ``self.cur`` (a return inside ends it, see module)."""
        items = [s for s in items if s is not None]
        for i, s in enumerate(items):
            if self.has_return(s):
                self.returning(s, items[i + 1:])
                return
            self.stmt(s)

    def has_return(self, s, in_loop=False) -> bool:
        d = getattr(s, "data", None)
        if d == "return_stmt":
            if in_loop:
                raise self.unsupported(s, "return inside a loop",
                                       "set a flag and break, or restructure the loop")
            return True
        if d in ("for_stmt", "while_stmt", "do_stmt"):
            return any(self.has_return(c, True) for c in s.children if hasattr(c, "data"))
        if d in ("block", "if_stmt"):
            return any(self.has_return(c, in_loop) for c in s.children if hasattr(c, "data"))
        return False

    def always_returns(self, s) -> bool:
        d = getattr(s, "data", None)
        if d == "return_stmt":
            return True
        if d == "block":
            return any(self.always_returns(c) for c in s.children)
        if d == "if_stmt":
            return s.children[3] is not None and self.always_returns(s.children[2]) and \
                self.always_returns(s.children[3])
        return False

    def returning(self, s, rest) -> None:
        d = s.data
        if d == "return_stmt":
            self.s_return(s)
            return
        if d == "block":
            self.scopes.append({})
            self.stmts(list(s.children) + list(rest))
            self.scopes.pop()
            return
        _, cond_t, then_t, else_t = s.children
        loc = self.loc(s)
        cond = self.truth(self.expr(cond_t), loc)
        branches = []
        for b in (then_t, else_t):
            items = [] if b is None else (list(b.children) if b.data == "block" else [b])
            if b is None or not self.always_returns(b):
                items += list(rest)
            branches.append(items)
        if cond.is_const:
            self.scopes.append({})
            self.stmts(branches[0] if cond.const else branches[1])
            self.scopes.pop()
            return
        body, orelse = self.block(branches[0]), self.block(branches[1])
        self.emit(A.If(loc, cond.node, body or (A.Pass(loc),), orelse))

    def block(self, items) -> tuple:
        saved = self.cur
        self.cur = []
        self.scopes.append({})
        self.rt_depth += 1
        try:
            self.stmts(items)
            return tuple(self.cur)
        finally:
            self.rt_depth -= 1
            self.scopes.pop()
            self.cur = saved

    def body_of(self, s) -> tuple:
        return self.block(list(s.children) if s.data == "block" else [s])

    def emit(self, stmt) -> None:
        self.cur.append(stmt)

    def stmt(self, s) -> None:
        handler = getattr(self, "s_" + s.data, None)
        if handler is None:
            raise self.unsupported(s, s.data.replace("_", " "))
        handler(s)

    def s_empty(self, s) -> None:
        pass

    def s_using_ns(self, s) -> None:
        pass

    def s_class_def(self, s):
        raise self.unsupported(s, "class defined inside a function")

    def s_using_alias(self, s):
        raise self.unsupported(s, "type alias inside a function")

    s_typedef = s_using_alias

    def s_block(self, s) -> None:
        self.scopes.append({})
        self.stmts(s.children)
        self.scopes.pop()

    def s_return(self, s) -> None:
        frame = self.frames[-1]
        value = s.children[0]
        if value is None:
            if frame.ret_py is not None:
                raise KernelTypeError(f"{frame.func.name} must return a value", self.loc(s))
            return
        if frame.ret_py is None:
            raise KernelTypeError(f"{frame.func.name} returns void", self.loc(s))
        e = self.expr(value)
        if frame.ret_ct.is_scalar:
            e = self.convert(e, frame.ret_ct, self.loc(s))
        self.emit(A.Assign(self.loc(s), (name(frame.ret_py, self.loc(s)),), e.node))

    s_return_stmt = s_return

    def s_break_stmt(self, s) -> None:
        self.emit(A.Break(self.loc(s)))

    def s_continue_stmt(self, s) -> None:
        incr = getattr(self, "_incr", None)
        if incr:
            for st in incr:
                self.emit(st)
        self.emit(A.Continue(self.loc(s)))

    def s_expr_stmt(self, s) -> None:
        self.effect(s.children[0])

    def effect(self, t) -> None:
        """An expression evaluated for its effect (assignments, ++, calls)."""
        d = t.data
        loc = self.loc(t)
        if d == "comma":
            self.effect(t.children[0])
            self.effect(t.children[1])
            return
        if d == "paren":
            self.effect(t.children[0])
            return
        if d == "assignment":
            from .pointers import word_target
            saved, self.word_store = getattr(self, "word_store", False), \
                word_target(self, t.children[0])
            try:
                value = self.expr(t.children[1])
            finally:
                self.word_store = saved
            self.assign(t.children[0], value, loc)
            return
        if d == "aug_assignment":
            lhs, op, rhs = t.children
            cur = self.expr(lhs)
            self.assign(lhs, self.binop_e(str(op)[:-1], cur, self.expr(rhs), loc), loc)
            return
        if d in ("pre_incdec", "post_incdec"):
            target = t.children[1] if d == "pre_incdec" else t.children[0]
            op = str(t.children[0] if d == "pre_incdec" else t.children[1])
            cur = self.expr(target)
            one = self.const_e(1, C.INT32, loc)
            self.assign(target, self.binop_e("+" if op == "++" else "-", cur, one, loc), loc)
            return
        e = self.expr(t)
        if e.node is not None and not (isinstance(e.node, (A.Name, A.Constant))):
            self.emit(A.ExprStmt(loc, e.node))

    def assign(self, target, value: E, loc) -> None:
        d = target.data
        if d == "paren":
            return self.assign(target.children[0], value, loc)
        if d == "name":
            b = self.lookup(str(target.children[0]), target)
            from .pointers import CtVar, PtrVar, assign_binding
            if isinstance(b, (CtVar, PtrVar)):
                return assign_binding(self, b, value, target, loc)
        elif d in ("deref", "index"):
            from .pointers import store
            if d == "deref":
                ptr = self.expr(target.children[-1])
            else:
                ptr = self.expr(target.children[0])
                from .control import ArrRef
                if isinstance(ptr.ref, ArrRef):
                    return self.array_store(ptr.ref, target.children[1], value, target)
                if ptr.ref is not None:
                    ptr = self.binop_e("+", ptr, self.expr(target.children[1]), loc)
            if ptr.ref is None:
                raise self.unsupported(target, "pointer dereference (*p)" if d == "deref" else
                                       "assigning a tensor element (use SetValue)")
            return store(self, ptr, value, target)
        elif d == "arrow" and getattr(target.children[0], "data", None) == "this":
            b = self.this_member(str(target.children[1]), target)
        elif d in ("member", "arrow"):
            base = self.expr(target.children[0])
            if isinstance(base.const, Obj):
                b = base.const.members.get(str(target.children[1]))
                if b is None:
                    raise KernelSyntaxError(f"class {base.const.cls.name} has no member "
                                            f"'{target.children[1]}'", loc)
            else:
                field = self.member_of(base, str(target.children[1]), target)
                v = self.convert(value, field.ct, loc) if field.ct.is_scalar else value
                self.emit(A.Assign(loc, (field.node,), v.node))
                return
        else:
            raise self.unsupported(target, "assignment to this expression")
        if isinstance(b, Obj) and b.cls.is_struct:      # a struct copied field by field
            return self.assign_struct(b, value, target)
        if not isinstance(b, Var):
            what = "a constant" if isinstance(b, (Const, E)) else "this name"
            raise KernelTypeError(f"cannot assign to {what}", loc)
        v = self.convert(value, b.ct, loc) if b.ct.is_scalar else value
        if v.node is None:
            raise self.unsupported(target, "assigning an object")
        self.emit(A.Assign(loc, (name(b.py, loc),), v.node))

    def s_if_stmt(self, s) -> None:
        _, cond_t, then_t, else_t = s.children
        loc = self.loc(s)
        cond = self.truth(self.expr(cond_t), loc)
        if cond.is_const:
            chosen = then_t if cond.const else else_t
            if chosen is not None:
                self.scopes.append({})
                self.stmts([chosen])
                self.scopes.pop()
            return
        body = self.body_of(then_t)
        orelse = self.body_of(else_t) if else_t is not None else ()
        self.emit(A.If(loc, cond.node, body or (A.Pass(loc),), orelse))

    def s_while_stmt(self, s) -> None:
        cond_t, body_t = s.children
        self.loop(None, cond_t, None, body_t, s)

    def s_for_stmt(self, s) -> None:
        init_t, cond_t, incr_t, body_t = s.children
        from .pointers import names_pointer, unrolled_for
        if names_pointer(self, s.children):     # a loop that moves a pointer: unrolled
            return unrolled_for(self, s)
        self.scopes.append({})
        try:
            if init_t is not None and init_t.data != "empty":
                if init_t.data == "var_decl":
                    if self.range_loop(init_t, cond_t, incr_t, body_t, s):
                        return
                self.stmt(init_t)
            self.loop(None, cond_t, incr_t, body_t, s)
        finally:
            self.scopes.pop()

    def loop(self, _, cond_t, incr_t, body_t, s) -> None:
        loc = self.loc(s)
        saved = self.cur
        self.cur = []
        cond = self.truth(self.expr(cond_t), loc) if cond_t is not None else \
            self.const_e(1, C.BOOL, loc)
        pre, self.cur = self.cur, []
        incr = []
        if incr_t is not None:
            self.effect(incr_t)
            incr = self.cur
        self.cur = saved
        saved_incr = getattr(self, "_incr", None)
        self._incr = incr
        body = self.body_of(body_t)
        self._incr = saved_incr
        if pre:   # the condition needs statements (an inlined call): test inside the loop
            test = A.If(loc, A.UnaryOp(loc, "not", cond.node), (A.Break(loc),), ())
            self.emit(A.While(loc, A.Constant(loc, True), tuple(pre) + (test,) + body +
                              tuple(incr), ()))
            return
        self.emit(A.While(loc, cond.node, body + tuple(incr), ()))

    def range_loop(self, init_t, cond_t, incr_t, body_t, s) -> bool:
        """``for (int i = a; i < b; i++)`` as ``for i in range(a, b)`` when the body assigns
        neither ``i`` nor anything ``b`` reads (C re-reads ``b`` every iteration)."""
        from .loops import range_form
        form = range_form(self, init_t, cond_t, incr_t, body_t)
        if form is None:
            return False
        var_name, ct, start, stop, step = form
        loc = self.loc(s)
        py = self.fresh(var_name)
        self.declare(var_name, Var(py, ct, _ARITH_ST.get(ct.name)))
        saved_incr = getattr(self, "_incr", None)
        self._incr = None
        body = self.body_of(body_t)
        self._incr = saved_incr
        from .loops import assigned_names, names_in
        if py in assigned_names(body) or names_in(stop.node) & assigned_names(body):
            return self.undo_range(var_name)
        args = [start.node, stop.node] + ([step] if step != 1 else [])
        args = [a if not isinstance(a, int) else A.Constant(loc, a) for a in args]
        self.emit(A.For(loc, name(py, loc), call(A.Name(loc, "range"), args, loc),
                        body or (A.Pass(loc),), ()))
        return True

    def undo_range(self, var_name) -> bool:
        self.scopes[-1].pop(var_name, None)
        return False

    def s_var_decl(self, s) -> None:
        type_tree = s.children[0]
        ct = self.resolve_type(type_tree)
        specs = {str(c.children[0]) for c in type_tree.children
                 if hasattr(c, "data") and c.data == "spec"}
        if "static" in specs:
            raise self.unsupported(s, "static local variable")
        from .unit import _declarator
        for dcl in s.children[1:]:
            ident, init, dims = _declarator(dcl, self.unsupported, arrays=True)
            if dims:      # a local array (cpp/control.py)
                self.declare_array(ident, ct, dcl, "constexpr" in specs or ct.const)
                continue
            self.declare_var(ident, ct, init, dcl, const="constexpr" in specs or ct.const)

    def declare_var(self, ident: str, ct: CT, init, t, const=False) -> None:
        loc = self.loc(t)
        if ct.cls is not None and not ct.cls.is_struct and ct.ptr == 0:
            if init is not None and init.data != "brace_list":
                raise self.unsupported(t, "initialising an object of a class from a value")
            args = [a for a in init.children if a is not None] if init is not None else None
            self.declare(ident, self.make_object(ct, ident, t, args))
            return
        if init is None:
            if ct.name in _CONSTRUCTED or ct.name == "Matmul":
                py = self.fresh(ident)
                self.emit(A.Assign(loc, (name(py, loc),), self.default_construct(ct, t)))
                self.declare(ident, Var(py, ct))
                return
            if ct.name == "auto":
                raise KernelTypeError("an auto variable needs a value", loc)
            if ct.cls is not None and ct.cls.is_struct and ct.ptr == 0:
                self.declare(ident, self.local_struct(ct, ident, t))
                return
            self.declare(ident, Var(self.fresh(ident), ct))
            return
        e = self.init_value(init, ct, t) if ct.name != "auto" else self.init_value(
            init, UNKNOWN, t)
        if ct.name == "auto":
            ct = e.ct
        if e.ref is not None and ct.ptr:        # a pointer variable (cpp/pointers.py)
            from .pointers import PtrVar
            self.declare(ident, PtrVar(e, self.rt_depth))
            return
        if isinstance(e.const, Obj):
            raise self.unsupported(t, "copying an object of a class")
        if const and e.is_const and ct.is_scalar:
            self.declare(ident, Const(C.wrap(e.const, ct), ct))
            return
        if ct.ptr and (ct.cls is not None or e.ct.cls is not None):   # a tiling pointer
            self.declare(ident, e)
            return
        if e.node is None:
            raise self.unsupported(t, f"a variable of type {ct.text()}")
        py = self.fresh(ident)
        self.emit(A.Assign(loc, (name(py, loc),), e.node))
        self.declare(ident, Var(py, ct if ct.name != "?" else e.ct))

    def default_construct(self, ct: CT, t):
        loc = self.loc(t)
        if ct.name == "Matmul":
            from .matmul import matmul_object
            return matmul_object(self, ct, loc)
        args = [self.targ_node(a, loc) for a in ct.args]
        if ct.name == "GlobalTensor":
            args = []
        return call(asc_attr(ct.name, loc), args, loc)

    def make_object(self, ct: CT, cname: str, t, args=None) -> Obj:
        cls = ct.cls
        tenv = {}
        if len(ct.args) > len(cls.tparams):
            raise KernelTypeError(f"{cls.name} takes {len(cls.tparams)} template arguments",
                                  self.loc(t))
        for i, p in enumerate(cls.tparams):
            if i < len(ct.args):
                v = ct.args[i]
            elif p[2] is not None:
                v = self.resolve_type(p[2], tenv) if p[0] == "type" else self.expr(p[2])
            else:
                raise KernelTypeError(f"{cls.name} needs template argument '{p[1]}'",
                                      self.loc(t))
            if p[0] == "type" and not isinstance(v, CT):
                raise KernelTypeError(f"template argument '{p[1]}' of {cls.name} is a type",
                                      self.loc(t))
            if p[0] == "value":
                if isinstance(v, CT) or not v.is_const:
                    raise KernelTypeError(f"template argument '{p[1]}' of {cls.name} must be "
                                          f"a compile-time value", self.loc(t))
                v = Const(v.const, v.ct)
            tenv[p[1]] = v
        obj = Obj(cls, {}, tenv, cname)
        saved = (self.this, self.tenv)
        self.this, self.tenv = obj, tenv
        try:
            for sname, (type_tree, init, tree) in cls.statics.items():
                sct = self.resolve_type(type_tree)
                e = self.init_value(init, sct, tree)
                if not e.is_const:
                    raise self.unsupported(tree, "a static member whose value is not a "
                                                 "compile-time constant")
                obj.members[sname] = Const(C.wrap(e.const, sct) if sct.is_scalar else e.const,
                                           sct)
            for type_tree, mname, init, tree in cls.members:
                mct = self.resolve_type(type_tree)
                full = f"{cname}.{mname}"
                if mct.cls is not None and not mct.cls.is_struct and mct.ptr == 0:
                    obj.members[mname] = self.make_object(mct, full, tree)
                    continue
                if mct.cls is not None and mct.cls.is_struct and mct.ptr == 0 and \
                        init is None and not mct.cls.inferred:     # a struct member
                    obj.members[mname] = self.local_struct(mct, full, tree)
                    continue
                py = self.fresh(full)
                if mct.name in _CONSTRUCTED or mct.name == "Matmul":
                    self.emit(A.Assign(self.loc(tree), (name(py, self.loc(tree)),),
                                       self.default_construct(mct, tree)))
                elif init is not None:
                    e = self.init_value(init, mct, tree)
                    self.emit(A.Assign(self.loc(tree), (name(py, self.loc(tree)),), e.node))
                obj.members[mname] = Var(py, mct)
        finally:
            self.this, self.tenv = saved
        if cls.ctors:     # the constructor that takes these arguments, its initialisers first
            self.inline_call(cls.ctors, obj, None, list(args or ()), t)
        else:             # an implicit constructor: the bases' default constructors
            from .inline import construct_bases
            construct_bases(self, obj, cls, [], t)
        return obj

    def assign_member(self, obj: Obj, ident: str, value: E, t) -> None:
        b = obj.members.get(ident)
        if not isinstance(b, Var):
            raise KernelSyntaxError(f"class {obj.cls.name} has no member '{ident}'", self.loc(t))
        v = self.convert(value, b.ct, self.loc(t)) if b.ct.is_scalar else value
        self.emit(A.Assign(self.loc(t), (name(b.py, self.loc(t)),), v.node))

    # ------------------------------------------------------------------ calls of the file's functions
    def inline_call(self, funcs, this, targs, args, t) -> E:
        from .inline import inline_call
        return inline_call(self, funcs, this, targs, args, t)

    # ------------------------------------------------------------------ entries
    def entry(self, f: FuncInfo):
        from .entry import lower_entry
        return lower_entry(self, f)



__all__ = ["Lowerer", "Frame"]

