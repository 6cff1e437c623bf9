"""Recognising C ``for`` loops that are Python ``range`` loops, and the names a lowered body
assigns (so a loop whose bound or counter the body changes keeps C's while-loop form)."""
from __future__ import annotations

from ..compiler import ast as A
from . import ctypes_c as C


def range_form(lw, init_t, cond_t, incr_t, body_t):
    """(name, C type, start E, stop E, step int) for ``for (T i = a; i < b; i++)`` and its
    variants (``<=``, ``>``, ``>=``, ``i += k``, ``i--``, ``++i``, ``i = i + k``), else None."""
    from .unit import _declarator
    if cond_t is None or incr_t is None or len(init_t.children) != 2:
        return None
    ct = lw.resolve_type(init_t.children[0])
    if not ct.is_int:
        return None
    ident, init = _declarator(init_t.children[1], lw.unsupported)
    if init is None or init.data != "init_assign":
        return None
    step = _step(incr_t, ident, lw)
    if step is None or getattr(cond_t, "data", None) != "binop":
        return None
    left, op, right = cond_t.children
    op = str(op)
    if getattr(left, "data", None) != "name" or str(left.children[0]) != ident:
        return None
    if op not in ("<", "<=", ">", ">=", "!="):
        return None
    if (op in ("<", "<=") and step <= 0) or (op in (">", ">=") and step >= 0) or \
            (op == "!=" and abs(step) != 1):
        return None
    loc = lw.loc(cond_t)
    saved = lw.cur
    lw.cur = []
    start = lw.convert(lw.expr(init.children[0]), ct, loc)
    stop = lw.convert(lw.expr(right), ct, loc)
    extra, lw.cur = lw.cur, saved
    if extra:
        return None
    if op in ("<=", ">="):
        one = lw.const_e(1 if op == "<=" else -1, C.INT32, loc)
        stop = lw.binop_e("+", stop, one, loc)
    return ident, ct, start, stop, step


def _step(t, ident: str, lw):
    d = t.data
    if d in ("pre_incdec", "post_incdec"):
        target = t.children[1] if d == "pre_incdec" else t.children[0]
        op = str(t.children[0] if d == "pre_incdec" else t.children[1])
        if getattr(target, "data", None) == "name" and str(target.children[0]) == ident:
            return 1 if op == "++" else -1
        return None
    if d == "aug_assignment":
        target, op, value = t.children
        if getattr(target, "data", None) != "name" or str(target.children[0]) != ident or \
                str(op) not in ("+=", "-="):
            return None
        saved = lw.cur
        lw.cur = []
        e = lw.expr(value)
        lw.cur = saved
        if not e.is_const or not isinstance(e.const, int) or e.const == 0:
            return None
        return e.const if str(op) == "+=" else -e.const
    return None


def assigned_names(body) -> set:
    """Names assigned anywhere in lowered statements (loop targets included)."""
    out = set()

    def walk(stmts):
        for s in stmts:
            if isinstance(s, A.Assign):
                for tgt in s.targets:
                    if isinstance(tgt, A.Name):
                        out.add(tgt.id)
            elif isinstance(s, A.AugAssign) and isinstance(s.target, A.Name):
                out.add(s.target.id)
            elif isinstance(s, A.For):
                if isinstance(s.target, A.Name):
                    out.add(s.target.id)
                walk(s.body)
            elif isinstance(s, (A.If, A.While)):
                walk(s.body)
                walk(s.orelse)
    walk(body)
    return out


def names_in(node) -> set:
    """Names an expression reads."""
    out = set()

    def walk(n):
        if isinstance(n, A.Name):
            out.add(n.id)
            return
        if isinstance(n, (tuple, list)):
            for x in n:
                walk(x)
            return
        if hasattr(n, "__dataclass_fields__"):
            for f in n.__dataclass_fields__:
                if f != "loc":
                    walk(getattr(n, f))
    walk(node)
    return out
