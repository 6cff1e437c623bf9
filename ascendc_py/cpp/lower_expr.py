"""Lowering C++ expressions to the kernel AST (``compiler/ast.py``).

Each expression becomes an ``E``: the AST node, its C type, the dtype the type checker will
give it (``st``; C computes ``uint32_t`` arithmetic modulo 2**32, the type checker in 64 bits,
so a value is wrapped where C would observe the difference), and its value when C can compute
it at compile time. Calls of the file's own functions and methods are inlined by the statement
lowering (``lower.py``), which this mixin calls back through ``inline_call``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from ..compiler import ast as A
from ..compiler.ast import Name
from ..compiler.errors import KernelSyntaxError, KernelTypeError
from . import ctypes_c as C
from .ctypes_c import CT, UNKNOWN
from .names import (ADV_CLASSES, ASC_CLASSES, ENUM_ALIASES, TRAILING_TEMPLATE_ARGS,
                    builtin_function, snake)

_NO = object()
ASC, NP, GM_CAST, CONVERT, MINMAX = "$asc", "$np", "$gm_cast", "$convert", "$builtins"

#: the type checker's dtype of an arithmetic result on operands of these dtypes
_ARITH = {"bool_": "int32", "int8": "int32", "uint8": "int32", "int16": "int32",
          "uint16": "int32", "int32": "int32", "uint32": "int64", "int64": "int64",
          "uint64": "int64", "float16": "float32", "bfloat16": "float32",
          "float32": "float32", "float64": "float64"}
#: methods whose template type argument is the DSL method's leading dtype argument
METHOD_TYPE_ARGS = {"alloc_tensor", "deque", "get", "get_with_offset", "reinterpret_cast"}
_RETURNS = {"get_block_idx": C.INT64, "get_block_num": C.INT64,
            "get_sub_block_idx": C.INT64, "get_sub_block_num": C.INT64}
_COMPARE = {"==", "!=", "<", ">", "<=", ">="}
_WRAP_OPS = {"+", "-", "*", "<<", "neg", "~"}


@dataclass
class E:
    node: Any
    ct: CT
    st: Optional[str] = None       # the type checker's dtype name, when known
    const: Any = _NO               # the compile-time value, when C knows it
    wraps: bool = False            # computed exactly; C would wrap it to ct
    ref: Any = None                # a pointer's target (cpp/pointers.py), when it has one

    @property
    def is_const(self) -> bool:
        return self.const is not _NO


@dataclass
class Var:
    py: str
    ct: CT
    st: Optional[str] = None     # the type checker's dtype when it is not ct's


@dataclass
class Const:
    value: Any
    ct: CT


@dataclass
class TypeB:
    ct: CT


@dataclass
class Obj:
    """An instance of a class of the file: its members' bindings."""
    cls: Any
    members: dict
    tenv: dict
    py: str


@dataclass
class Funcs:
    funcs: list
    this: Optional[Obj]


def name(py: str, loc) -> A.Name:
    return A.Name(loc, py)


def attr(value, a: str, loc) -> A.Attribute:
    return A.Attribute(loc, value, a)


def asc_attr(path: str, loc):
    node = name(ASC, loc)
    for part in path.split("."):
        node = attr(node, part, loc)
    return node


def call(func, args, loc, keywords=()) -> A.Call:
    return A.Call(loc, func, tuple(args), tuple(keywords))


def const_node(value, loc) -> A.Constant:
    return A.Constant(loc, value)


def dtype_node(ct: CT, loc):
    if not ct.is_scalar:
        raise KernelTypeError(f"{ct.text()} is not an element type", loc)
    return asc_attr(ct.name, loc)


class ExprMixin:
    """Expression lowering; ``self`` is a ``lower.Lowerer``."""

    # ------------------------------------------------------------------ helpers
    def const_e(self, value, ct: CT, loc) -> E:
        if ct.is_float:
            value = float(value)
        elif ct.is_int:
            value = int(value)
        st = "float32" if ct.is_float else ("int32" if -2**31 <= value < 2**31 else "int64")
        if ct.name == "bool_":
            return E(const_node(bool(value), loc), ct, "bool_", bool(value))
        return E(const_node(value, loc), ct, st, value)

    def convert(self, e: E, ct: CT, loc) -> E:
        """``e`` as a value of the scalar type ``ct`` (C's conversion on a store/argument)."""
        if not ct.is_scalar or not (e.ct.is_scalar or e.st):
            return e
        if e.is_const:
            return self.const_e(C.wrap(e.const, ct), ct, loc)
        if e.st == ct.name and not e.wraps:
            return E(e.node, ct, ct.name)
        node = call(name(CONVERT, loc), [e.node, dtype_node(ct, loc)], loc)
        return E(node, ct, ct.name)

    def observed(self, e: E, loc) -> E:
        """``e`` wrapped to its C type where C's wrap-around would be visible."""
        if e.wraps and e.ct.is_int:
            return self.convert(E(e.node, e.ct, None), e.ct, loc)
        return e

    def truth(self, e: E, loc) -> E:
        return self.observed(e, loc)

    # ------------------------------------------------------------------ dispatch
    def expr(self, t) -> E:
        handler = getattr(self, "x_" + t.data, None) if hasattr(t, "data") else None
        if handler is None:
            what = getattr(t, "data", getattr(t, "type", "expression"))
            raise self.unsupported(t, f"expression '{what}'")
        return handler(t)

    def x_paren(self, t) -> E:
        return self.expr(t.children[0])

    def x_int_lit(self, t) -> E:
        value, ct = C.int_literal(str(t.children[0]))
        return self.const_e(value, ct, self.loc(t))

    def x_float_lit(self, t) -> E:
        text = str(t.children[0])
        single = text[-1] in "fF"
        value = float(text.rstrip("fFlL"))
        return self.const_e(value, C.FLOAT32 if single else C.FLOAT64, self.loc(t))

    def x_true_lit(self, t) -> E:
        return self.const_e(1, C.BOOL, self.loc(t))

    def x_false_lit(self, t) -> E:
        return self.const_e(0, C.BOOL, self.loc(t))

    def x_char_lit(self, t) -> E:
        raise self.unsupported(t, "character literal")

    def x_string_lit(self, t) -> E:
        raise self.unsupported(t, "string literal in a kernel")

    def x_null_lit(self, t) -> E:
        raise self.unsupported(t, "nullptr")

    def x_this(self, t) -> E:
        raise self.unsupported(t, "'this' used as a value (write this->member)")

    def x_deref(self, t) -> E:
        e = self.expr(t.children[-1])
        if e.ref is None and not (e.ct.ptr and e.ct.gm and e.node is not None):
            raise self.unsupported(t, "pointer dereference (*p)",
                                   "only local pointers over a struct and GM pointers in a "
                                   "tiling copy are modelled")
        from .pointers import deref
        return deref(self, e, t)

    def x_addr_of(self, t) -> E:
        """``&pipe``: a reference to an Ascend C object (TPipe, queues, tensors) is the
        object itself; any other address is outside the subset."""
        inner = t.children[-1]
        e = self.expr(inner)
        if isinstance(e.const, Obj) and e.const.cls.is_struct:   # &localStruct
            return e
        if e.ct.name == "TCubeTiling":      # &tiling, &this->tiling: a word copy's target
            d = getattr(inner, "data", None)
            b = self.lookup_soft(str(inner.children[0])) if d == "name" else \
                self.this_member_soft(str(inner.children[1])) if d == "arrow" and \
                getattr(inner.children[0], "data", None) == "this" else None
            if isinstance(b, Var):
                return E(e.node, CT(e.ct.name, ptr=1), ref=b)
        if e.node is not None and (e.ct.name in ASC_CLASSES or e.ct.name in ADV_CLASSES):
            return E(e.node, CT(e.ct.name, e.ct.args, ptr=1))
        raise self.unsupported(t, "address-of operator (&x)")

    def x_brace_list(self, t) -> E:
        raise self.unsupported(t, "brace initializer list")

    # ------------------------------------------------------------------ names
    def x_name(self, t) -> E:
        ident, targs = t.children
        if targs is not None:
            raise self.unsupported(t, f"template arguments on '{ident}' outside a call")
        return self.binding_value(self.lookup(str(ident), t), t)

    def binding_value(self, b, t) -> E:
        loc = self.loc(t)
        if isinstance(b, Var):
            st = b.st or (b.ct.name if b.ct.is_scalar else None)
            return E(name(b.py, loc), b.ct, st)
        if isinstance(b, Const):
            if isinstance(b.value, tuple):
                return E(None, b.ct, None, b.value)
            return self.const_e(b.value, b.ct, loc)
        if isinstance(b, E):
            return b
        if isinstance(b, TypeB):
            raise KernelTypeError(f"'{b.ct.text()}' is a type, not a value", loc)
        if isinstance(b, Obj):
            return E(None, CT(b.cls.name, cls=b.cls), None, b)
        if isinstance(b, Funcs):
            raise self.unsupported(t, "a function used as a value")
        from .pointers import binding_value
        e = binding_value(self, b, t)
        if e is not None:
            return e
        raise KernelTypeError(f"cannot use {b!r} here", loc)

    def x_scoped(self, t) -> E:
        scope, member = str(t.children[0]), str(t.children[1])
        loc = self.loc(t)
        cls = self.unit.classes.get(scope)
        if cls is not None and member in cls.statics:     # Class::CONSTANT
            type_tree, init, tree = cls.statics[member]
            saved = (self.this, self.tenv)
            self.this, self.tenv = None, {}
            try:
                sct = self.resolve_type(type_tree)
                e = self.init_value(init, sct, tree)
            finally:
                self.this, self.tenv = saved
            if e.is_const:
                return self.const_e(C.wrap(e.const, sct), sct, loc)
        enum = self.unit.enums.get(scope)
        if enum is not None:
            if member not in enum:
                raise KernelSyntaxError(f"enum {scope} has no member {member}", loc)
            return self.const_e(enum[member], C.INT32, loc)
        import ascendc_py as asc
        scope = ENUM_ALIASES.get(scope, scope)
        holder = getattr(asc, scope, None)
        if holder is None or not hasattr(holder, member):
            raise KernelSyntaxError(f"unknown name {scope}::{member}", loc,
                                    hint="enumerations of Ascend C (TPosition, QuePosition, "
                                         "HardEvent, RoundMode, PipeID ...) are supported")
        return E(asc_attr(f"{scope}.{member}", loc), UNKNOWN)

    # ------------------------------------------------------------------ operators
    def x_unop(self, t) -> E:
        op, operand = str(t.children[0]), self.expr(t.children[1])
        loc = self.loc(t)
        if operand.is_const and operand.ct.is_scalar:
            v = operand.const
            ct = C.promote(operand.ct)
            if op == "-":
                return self.const_e(C.wrap(-v, ct), ct, loc)
            if op == "+":
                return self.const_e(v, ct, loc)
            if op == "!":
                return self.const_e(int(not v), C.BOOL, loc)
            if op == "~":
                return self.const_e(C.wrap(~int(v), ct), ct, loc)
        if op == "!":
            o = self.truth(operand, loc)
            return E(A.UnaryOp(loc, "not", o.node), C.BOOL, "bool_")
        ct = C.promote(operand.ct) if operand.ct.is_scalar else UNKNOWN
        if op == "+":
            return operand
        node = A.UnaryOp(loc, "-" if op == "-" else "~", operand.node)
        return E(node, ct, _ARITH.get(operand.st or "", None),
                 wraps=ct.unsigned or operand.wraps)

    def x_binop(self, t) -> E:
        left, op_tok, right = t.children
        a = self.expr(left)
        b = self.conditional_operand(right) if str(op_tok) in ("&&", "||") else \
            self.expr(right)
        return self.binop_e(str(op_tok), a, b, self.loc(t))

    def binop_e(self, op: str, a: E, b: E, loc) -> E:
        """``a op b`` with C's types and semantics."""
        if a.is_const and b.is_const and a.ct.is_scalar and b.ct.is_scalar:
            try:
                value, ct = C.fold(op, a.const, a.ct, b.const, b.ct)
            except C.ConstEvalError as exc:
                raise KernelTypeError(str(exc), loc) from None
            return self.const_e(value, ct, loc)
        if a.ref is not None or b.ref is not None:
            from .pointers import arith
            r = arith(self, op, a, b, loc)
            if r is not None:
                return r
        for side in (a, b):
            if side.node is None:
                raise KernelTypeError(f"operator '{op}' needs values, got an object of class "
                                      f"{side.ct.name}", loc)
        pointer = next((x for x in (a, b) if x.ct.ptr or x.ct.name == "GM_ADDR"), None)
        if pointer is not None and op in ("+", "-"):     # GM pointer arithmetic
            other = b if pointer is a else a
            other = self.observed(other, loc)
            node = A.BinOp(loc, op, a.node if pointer is a else a.node,
                           other.node if pointer is a else b.node)
            return E(node, pointer.ct)
        if op in ("&&", "||"):
            a, b = self.truth(a, loc), self.truth(b, loc)
            return E(A.BoolOp(loc, "and" if op == "&&" else "or", (a.node, b.node)), C.BOOL,
                     "bool_")
        ct = C.usual(a.ct, b.ct) if op not in ("<<", ">>") else C.promote(a.ct)
        if op in _COMPARE:
            a, b = self.observed(a, loc), self.observed(b, loc)
            if ct.unsigned and not (a.ct.unsigned and b.ct.unsigned):
                # C compares in the unsigned type: -1 < 1u is false
                a, b = self.convert(a, ct, loc), self.convert(b, ct, loc)
            return E(A.Compare(loc, a.node, (op,), (b.node,)), C.BOOL, "bool_")
        st = None
        if a.st and b.st and op not in ("<<", ">>"):
            sa, sb = _ARITH.get(a.st), _ARITH.get(b.st)
            if sa and sb:
                st = "float32" if "float32" in (sa, sb) else (
                    "int64" if "int64" in (sa, sb) else sa)
                if "float64" in (sa, sb) and ct.is_float:
                    st = "float32"
        elif a.st and op in ("<<", ">>"):
            st = _ARITH.get(a.st)
        if op in ("/", "%", ">>"):
            a, b = self.observed(a, loc), self.observed(b, loc)
        py = op
        if op == "/" and ct.is_int:
            py = "//"
            if not ct.unsigned:   # C truncates toward zero; the DSL's // floors
                return self.trunc_div(a, b, ct, st, loc, False)
        if op == "%" and ct.is_int and not ct.unsigned:
            return self.trunc_div(a, b, ct, st, loc, True)
        node = A.BinOp(loc, py, a.node, b.node)
        wraps = ct.is_int and (op in _WRAP_OPS and (ct.unsigned or st != ct.name)
                               or a.wraps or b.wraps)
        return E(node, ct, st, wraps=bool(wraps))

    def trunc_div(self, a: E, b: E, ct: CT, st, loc, mod: bool) -> E:
        """Signed C division/remainder: truncating (the IR's ``cdiv``/``cmod``)."""
        return E(A.BinOp(loc, "c%" if mod else "c/", a.node, b.node), ct, st)

    def x_ternary(self, t) -> E:
        c = self.expr(t.children[0])
        x, y = (self.conditional_operand(k) for k in t.children[1:])
        loc = self.loc(t)
        c = self.truth(c, loc)
        if c.is_const:
            return x if c.const else y
        ct = C.usual(x.ct, y.ct)
        x, y = self.observed(x, loc), self.observed(y, loc)
        st = x.st if x.st == y.st else None
        return E(A.IfExp(loc, c.node, x.node, y.node), ct, st)

    def x_cast(self, t) -> E:
        type_tree, operand = t.children
        return self.cast_to(self.resolve_type(type_tree), operand, t)

    def cast_to(self, ct: CT, operand, t) -> E:
        """``(T)x``, ``static_cast<T>(x)``, ``reinterpret_cast<__gm__ T *>(x)``."""
        loc = self.loc(t)
        if ct.ptr and ct.gm or ct.ptr == 1 and ct.name != "GM_ADDR":
            return self.pointer_cast(ct, operand, loc)
        e = self.expr(operand)
        if ct.name == "GM_ADDR" and (e.ct.name == "GM_ADDR" or e.ct.ptr):
            return E(e.node, CT("GM_ADDR"))
        if ct.is_scalar:
            return self.convert(e, ct, loc)
        raise self.unsupported(t, f"cast to {ct.text()}")

    def pointer_cast(self, ct: CT, operand, loc) -> E:
        e = self.expr(operand)
        from .pointers import cast, gm_ref
        r = cast(self, ct, e, loc)
        if r is not None:
            return r
        if ct.cls is not None and ct.cls.is_struct:      # (__gm__ TilingData *)tiling
            return self.struct_view(e, ct, loc)
        if not ct.is_scalar and ct.name not in C.INT_BITS and ct.name not in C.FLOATS:
            raise self.unsupported_at(loc, f"cast to {ct.text()}")
        if e.ct.name != "GM_ADDR" and not (e.ct.ptr and e.ct.gm):
            raise KernelTypeError(f"a (__gm__ {ct.text()}) cast needs a GM_ADDR argument, "
                                  f"got {e.ct.text()}", loc)
        elem = CT(ct.name)
        node = call(name(GM_CAST, loc), [e.node, dtype_node(elem, loc)], loc)
        return E(node, CT(ct.name, ptr=1, gm=True), ref=gm_ref(self, ct, e))

    def x_sizeof_type(self, t) -> E:
        ct = self.resolve_type(t.children[0])
        loc = self.loc(t)
        if ct.ptr:
            return self.const_e(8, C.UINT64, loc)
        if ct.name == "TCubeTiling" or ct.cls is not None and ct.cls.is_struct:
            from .pointers import sizeof_struct
            return self.const_e(sizeof_struct(self, ct, t), C.UINT64, loc)
        if not ct.is_scalar:
            raise self.unsupported(t, f"sizeof({ct.text()})")
        return self.const_e(max(ct.bits // 8, 1), C.UINT64, loc)

    def x_sizeof_expr(self, t) -> E:
        inner = t.children[0]
        if getattr(inner, "data", None) == "name":   # sizeof(T) with T parsed as a name
            b = self.lookup(str(inner.children[0]), inner)
            from .control import Arr
            count = 1
            if isinstance(b, Const) and isinstance(b.value, tuple):    # sizeof(array)
                count, v = len(b.value), b.value
                while v and isinstance(v[0], tuple):
                    count, v = count * len(v[0]), v[0]
            elif isinstance(b, Arr):
                count = len(b.elems)
            if count != 1 and b.ct.is_scalar:
                return self.const_e(count * max(b.ct.bits // 8, 1), C.UINT64, self.loc(t))
            if isinstance(b, TypeB) and (b.ct.name == "TCubeTiling" or b.ct.cls is not None
                                         and b.ct.cls.is_struct):
                from .pointers import sizeof_struct
                return self.const_e(sizeof_struct(self, b.ct, t), C.UINT64, self.loc(t))
            ct = b.ct if isinstance(b, (TypeB, Var, Const, Arr)) else UNKNOWN
        else:
            ct = self.expr(inner).ct
        if not ct.is_scalar:
            raise self.unsupported(t, "sizeof of an expression that is not a scalar")
        return self.const_e(max(ct.bits // 8, 1), C.UINT64, self.loc(t))

    # ------------------------------------------------------------------ postfix
    def x_index(self, t) -> E:
        base, idx = self.expr(t.children[0]), self.expr(t.children[1])
        loc = self.loc(t)
        from .control import ArrRef
        if isinstance(base.ref, ArrRef):      # a local array
            return self.array_read(base.ref.arr, idx, t)
        if base.ref is not None:     # p[i] is *(p + i)
            from .pointers import deref
            return deref(self, self.binop_e("+", base, idx, loc), t)
        if isinstance(base.const, tuple):       # a constexpr array
            if not idx.is_const and all(not isinstance(v, tuple) for v in base.const):
                return self.select(idx, [self.const_e(v, base.ct, loc) for v in base.const],
                                   t)
            if not idx.is_const:
                raise self.unsupported(t, "indexing a constexpr array of arrays with a "
                                          "run-time index",
                                       "put #pragma unroll before the loop, or pass the "
                                       "values as arguments")
            if not 0 <= idx.const < len(base.const):
                raise KernelTypeError(f"index {idx.const} is outside the array (size "
                                      f"{len(base.const)})", loc)
            v = base.const[idx.const]
            return E(None, base.ct, None, v) if isinstance(v, tuple) else \
                self.const_e(v, base.ct, loc)
        if base.ct.ptr and base.ct.gm and base.node is not None:    # a __gm__ T * read
            from .pointers import gm_read
            return gm_read(self, base.node, CT(base.ct.name), self.observed(idx, loc).node,
                           loc)
        if base.ct.name not in ("LocalTensor", "GlobalTensor", "?") or base.node is None:
            raise self.unsupported(t, f"indexing a {base.ct.text()} (arrays and pointers)")
        idx = self.observed(idx, loc)
        return E(A.Subscript(loc, base.node, A.Slice(loc, idx.node, None, None)), base.ct)

    def x_member(self, t) -> E:
        base_t, field, targs = t.children
        if targs is not None:
            raise self.unsupported(t, "template arguments on a member outside a call")
        base = self.expr(base_t)
        return self.member_of(base, str(field), t)

    def x_arrow(self, t) -> E:
        base_t, field, targs = t.children
        if targs is not None:
            raise self.unsupported(t, "template arguments on a member outside a call")
        if getattr(base_t, "data", None) == "this":
            return self.binding_value(self.this_member(str(field), t), t)
        base = self.expr(base_t)
        return self.member_of(base, str(field), t)

    def member_of(self, base: E, field: str, t) -> E:
        loc = self.loc(t)
        if isinstance(base.const, Obj):
            obj = base.const
            if field not in obj.members:
                raise KernelSyntaxError(f"class {obj.cls.name} has no member '{field}'", loc)
            return self.binding_value(obj.members[field], t)
        if base.ct.name == "TCubeTiling" and base.node is not None:
            from .matmul import tiling_field
            return E(attr(base.node, tiling_field(field), loc), C.INT32, "int32")
        cls = base.ct.cls
        if cls is not None and cls.is_struct:
            if cls.inferred and field not in cls.field_types(self):
                # CANN's tiling fields are uint32_t; a field named *Tiling* is the TCubeTiling
                # of a matmul (TILING_DATA_FIELD_DEF_STRUCT(TCubeTiling, cubeTilingData))
                cls._fields[field] = CT("TCubeTiling") if "tiling" in field.lower() \
                    else C.UINT32
            ft = cls.field_types(self).get(field)
            if ft is None:
                raise KernelSyntaxError(f"struct {cls.name} has no field '{field}'", loc,
                                        hint="fields: " + ", ".join(cls.field_types(self)))
            if ft.name == "TCubeTiling" and isinstance(base.node, Name):
                # a TCubeTiling inside the tiling struct: a kernel parameter of its own
                py = f"{base.node.id}.{field}"
                self.adv_fields[py] = (base.node.id, field)
                return E(name(py, loc), ft)
            return E(attr(base.node, field, loc), ft, ft.name)
        raise self.unsupported(t, f"member '{field}' of {base.ct.text()}")

    def x_call(self, t) -> E:
        callee, args_t = t.children
        args = list(args_t.children) if args_t is not None else []
        loc = self.loc(t)
        kind = getattr(callee, "data", None)
        if kind == "name":
            ident, targs = str(callee.children[0]), callee.children[1]
            return self.call_name(ident, targs, args, t)
        if kind in ("member", "arrow"):
            base_t, meth, targs = callee.children
            meth = str(meth)
            if getattr(base_t, "data", None) == "this":
                return self.call_name(meth, targs, args, t, this_only=True)
            base = self.expr(base_t)
            if isinstance(base.const, Obj):
                fs = base.const.cls.methods.get(meth)
                if not fs:
                    raise KernelSyntaxError(f"class {base.const.cls.name} has no method "
                                            f"'{meth}'", loc)
                return self.inline_call(fs, base.const, targs, args, t)
            return self.method_call(base, meth, targs, args, t)
        if kind == "scoped":
            raise self.unsupported(t, "calling a qualified name (Class::function)")
        raise self.unsupported(t, "calling this expression")

    def template_values(self, targs) -> list:
        """Template arguments: CTs for types, E for values."""
        if targs is None:
            return []
        out = []
        for a in targs.children:
            if a is None:
                continue
            if getattr(a, "data", None) == "type":
                out.append(self.resolve_type(a))
            elif getattr(a, "data", None) == "name" and \
                    isinstance(self.lookup_soft(str(a.children[0])), TypeB):
                out.append(self.lookup_soft(str(a.children[0])).ct)
            else:
                out.append(self.expr(a))
        return out

    def call_name(self, ident: str, targs, args, t, this_only=False) -> E:
        loc = self.loc(t)
        b = self.this_member_soft(ident) if this_only else self.lookup_soft(ident)
        if isinstance(b, Funcs):
            return self.inline_call(b.funcs, b.this, targs, args, t)
        if b is not None and not isinstance(b, Funcs):
            if isinstance(b, TypeB):
                return self.construct(b.ct, args, t)
            raise KernelTypeError(f"'{ident}' is not a function", loc)
        special = getattr(self, "special_" + ident, None)
        if special is not None:
            return special(targs, args, t)
        py = builtin_function(ident)
        if py is None:
            raise KernelSyntaxError(f"unknown function '{ident}'", loc,
                                    hint="Ascend C API functions map to ascendc_py builtins "
                                         "by name (DataCopy -> asc.data_copy); this one has "
                                         "no counterpart, and the file defines no such "
                                         "function")
        lead = [self.targ_node(v, loc) for v in self.template_values(targs)
                if not isinstance(v, CT)]
        values = [self.observed(self.expr(a), loc).node for a in args]
        if py in TRAILING_TEMPLATE_ARGS:
            values, lead = values + lead, []
        node = call(asc_attr(py, loc), lead + values, loc)
        return E(node, _RETURNS.get(py, UNKNOWN), "int64" if py in _RETURNS else None)

    def targ_node(self, v, loc):
        if isinstance(v, CT):
            return dtype_node(v, loc)
        return v.node

    def method_call(self, base: E, meth: str, targs, args, t) -> E:
        loc = self.loc(t)
        if base.node is None:
            raise self.unsupported(t, f"method {meth} here")
        py = snake(meth)
        lead = []
        for v in self.template_values(targs):
            if isinstance(v, CT):
                if py in METHOD_TYPE_ARGS:
                    lead.append(dtype_node(v, loc))
            else:
                lead.append(v.node)
        values = [self.observed(self.expr(a), loc).node for a in args]
        node = call(attr(base.node, py, loc), lead + values, loc)
        ct = UNKNOWN
        tv = [v for v in self.template_values(targs) if isinstance(v, CT)]
        if py in METHOD_TYPE_ARGS and tv:
            ct = CT("LocalTensor", (tv[0],))
        elif py in ("get_value",) and base.ct.args and isinstance(base.ct.args[0], CT):
            ct = base.ct.args[0]
            return E(node, ct, ct.name)
        elif py in ("get_size", "get_length"):
            return E(node, C.INT32, "int32")
        return E(node, ct)

    def x_construct(self, t) -> E:
        base_t, args_t = t.children
        ct = self.resolve_base(base_t)
        args = list(args_t.children) if args_t is not None else []
        return self.construct(ct, args, t)

    def construct(self, ct: CT, args, t) -> E:
        """``T(x)`` (a functional cast) or ``DataCopyParams{...}`` (an Ascend C record)."""
        loc = self.loc(t)
        if ct.is_scalar:
            if len(args) != 1:
                raise KernelTypeError(f"{ct.text()}(...) takes one value", loc)
            return self.convert(self.expr(args[0]), ct, loc)
        if ct.name in ASC_CLASSES or ct.name in ADV_CLASSES:
            values = [self.observed(self.expr(a), loc).node for a in args]
            path = ct.name if ct.name in ASC_CLASSES else "adv." + ct.name
            return E(call(asc_attr(path, loc), values, loc), ct)
        raise self.unsupported(t, f"constructing a {ct.text()} in an expression")
