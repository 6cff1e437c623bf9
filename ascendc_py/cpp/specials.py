"""Ascend C macros and functions the C++ lowering handles itself (``special_<name>``
methods, found before the op registry's builtins): GET_TILING_DATA, REGIST_MATMUL_OBJ,
KERNEL_TASK_TYPE_DEFAULT, ASSERT/assert, min/max (``std::min``)."""
from __future__ import annotations

from ..compiler import ast as A
from ..compiler.errors import KernelTypeError
from . import ctypes_c as C
from .ctypes_c import CT
from .lower_expr import E, asc_attr, call


class SpecialsMixin:
    """Mixed into ``lower.Lowerer``."""

    def special_static_cast(self, targs, args, t) -> E:
        """``static_cast<T>(x)`` and ``reinterpret_cast<__gm__ T *>(x)``: C-style casts."""
        types = [v for v in self.template_values(targs) if isinstance(v, CT)]
        if len(types) != 1 or len(args) != 1:
            raise KernelTypeError("a cast takes one type and one value: cast<T>(x)",
                                  self.loc(t))
        return self.cast_to(types[0], args[0], t)

    special_reinterpret_cast = special_static_cast

    def special_printf(self, targs, args, t) -> E:
        """``printf("fmt", args...)`` (``PRINTF``): the format is the one string literal a
        kernel may hold."""
        import codecs
        loc = self.loc(t)
        if not args or getattr(args[0], "data", None) != "string_lit":
            raise KernelTypeError("printf needs a string literal format first", loc)
        try:
            text = codecs.decode(str(args[0].children[0])[1:-1], "unicode_escape")
        except UnicodeDecodeError as exc:
            raise KernelTypeError(f"bad escape in the printf format: {exc.reason}", loc) \
                from None
        values = [A.Constant(loc, text)] + [self.observed(self.expr(a), loc).node
                                            for a in args[1:]]
        self.emit(A.ExprStmt(loc, call(asc_attr("printf", loc), values, loc)))
        return E(None, CT("void"))

    special_PRINTF = special_printf

    def special_GET_TILING_DATA(self, targs, args, t) -> E:
        from .tiling import get_tiling_data
        return get_tiling_data(self, None, args, t)

    def special_GET_TILING_DATA_WITH_STRUCT(self, targs, args, t) -> E:
        from .tiling import get_tiling_data
        if not args:
            raise KernelTypeError("GET_TILING_DATA_WITH_STRUCT(Struct, name, tiling)",
                                  self.loc(t))
        return get_tiling_data(self, args[0], args[1:], t)

    def special_REGIST_MATMUL_OBJ(self, targs, args, t) -> E:
        from .matmul import regist_matmul_obj
        return regist_matmul_obj(self, args, t)

    def special_ASSERT(self, targs, args, t) -> E:
        """``ASSERT(cond && "message")`` / ``assert(cond)``: a kernel assertion."""
        loc = self.loc(t)
        if len(args) != 1:
            raise KernelTypeError("ASSERT(condition) takes one condition", loc)
        cond_t, msg = args[0], None
        if getattr(cond_t, "data", None) == "binop" and str(cond_t.children[1]) == "&&" and \
                getattr(cond_t.children[2], "data", None) == "string_lit":
            msg = A.Constant(loc, str(cond_t.children[2].children[0])[1:-1])
            cond_t = cond_t.children[0]
        cond = self.truth(self.expr(cond_t), loc)
        self.emit(A.Assert(loc, cond.node, msg))
        return E(None, CT("void"))

    special_assert = special_ASSERT

    def special_KERNEL_TASK_TYPE_DEFAULT(self, targs, args, t) -> E:
        """``KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY)``: the kernel type option."""
        import ascendc_py as asc
        word = str(args[0].children[0]) if len(args) == 1 and \
            getattr(args[0], "data", None) == "name" else ""
        member = word[len("KERNEL_TYPE_"):] if word.startswith("KERNEL_TYPE_") else ""
        if member not in asc.KernelType.__members__:
            raise KernelTypeError("KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_...) takes one of "
                                  + ", ".join("KERNEL_TYPE_" + m for m in
                                              asc.KernelType.__members__), self.loc(t))
        self.options = {"kernel_type": asc.KernelType[member]}
        return E(None, CT("void"))

    def minmax(self, which, args, t) -> E:
        loc = self.loc(t)
        if len(args) != 2:
            raise KernelTypeError(f"{which}() takes two values", loc)
        a, b = (self.observed(self.expr(x), loc) for x in args)
        if a.is_const and b.is_const:
            ct = C.usual(a.ct, b.ct)
            x, y = C.wrap(a.const, ct), C.wrap(b.const, ct)
            return self.const_e(min(x, y) if which == "min" else max(x, y), ct, loc)
        ct = C.usual(a.ct, b.ct)
        return E(call(A.Name(loc, which), [a.node, b.node], loc), ct, ct.name if
                 ct.is_scalar else None)

    def special_min(self, targs, args, t) -> E:
        return self.minmax("min", args, t)

    def special_max(self, targs, args, t) -> E:
        return self.minmax("max", args, t)

    special_Min, special_Max = special_min, special_max

