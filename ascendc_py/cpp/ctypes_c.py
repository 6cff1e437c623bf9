"""C types as the C++ lowering sees them, C's usual arithmetic conversions, and compile-time
evaluation of constant expressions with C semantics (integer division truncates toward zero,
unsigned types wrap, results take the type C gives them).

``CT`` is a frozen record: ``name`` is a DSL dtype name for scalars (``'float16'``,
``'uint32'``), ``'GM_ADDR'``, ``'void'``, ``'auto'``, an Ascend C class (``'TQue'``,
``'LocalTensor'`` ...), a class or struct of the file; ``args`` its template arguments (CTs or
compile-time values); ``ptr`` the pointer depth, ``ref`` a reference, ``gm`` ``__gm__``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

INT_BITS = {"bool_": 1, "int8": 8, "uint8": 8, "int16": 16, "uint16": 16, "int32": 32,
            "uint32": 32, "int64": 64, "uint64": 64}
FLOATS = ("float16", "bfloat16", "float32", "float64")


@dataclass(frozen=True)
class CT:
    name: str
    args: tuple = ()
    ptr: int = 0
    ref: bool = False
    gm: bool = False
    const: bool = False
    cls: object = field(default=None, compare=False, hash=False, repr=False)

    @property
    def is_scalar(self) -> bool:
        return self.ptr == 0 and (self.name in INT_BITS or self.name in FLOATS)

    @property
    def is_int(self) -> bool:
        return self.ptr == 0 and self.name in INT_BITS

    @property
    def is_float(self) -> bool:
        return self.ptr == 0 and self.name in FLOATS

    @property
    def unsigned(self) -> bool:
        return self.is_int and self.name.startswith("uint")

    @property
    def bits(self) -> int:
        if self.is_int:
            return INT_BITS[self.name]
        return {"float16": 16, "bfloat16": 16, "float32": 32, "float64": 64}.get(self.name, 0)

    def text(self) -> str:
        """The type as C++ would spell it (for messages)."""
        from .names import C_DTYPES
        c = {v: k for k, v in reversed(list(C_DTYPES.items()))}
        base = {"float16": "half", "float32": "float", "bool_": "bool", "int32": "int32_t",
                "uint32": "uint32_t", "int64": "int64_t", "uint64": "uint64_t"}.get(
            self.name, c.get(self.name, self.name))
        if self.args:
            base += "<" + ", ".join(a.text() if isinstance(a, CT) else str(a)
                                    for a in self.args) + ">"
        return base + "*" * self.ptr + ("&" if self.ref else "")


UNKNOWN = CT("?")
INT32, UINT32, INT64, UINT64 = CT("int32"), CT("uint32"), CT("int64"), CT("uint64")
FLOAT32, FLOAT64, BOOL = CT("float32"), CT("float64"), CT("bool_")


def promote(ct: CT) -> CT:
    """C's integer promotion: bool and types narrower than int become int."""
    if ct.is_int and ct.bits < 32:
        return INT32
    return ct


def usual(a: CT, b: CT) -> CT:
    """C's usual arithmetic conversions (an unknown side gives the other, or unknown)."""
    if not a.is_scalar:
        return b if b.is_scalar else UNKNOWN
    if not b.is_scalar:
        return a
    if a.is_float or b.is_float:
        rank = {"float16": 1, "bfloat16": 1, "float32": 2, "float64": 3}
        fa = rank.get(a.name, 0)
        fb = rank.get(b.name, 0)
        return a if fa >= fb else b
    a, b = promote(a), promote(b)
    if a == b:
        return a
    if a.unsigned == b.unsigned:
        return a if a.bits >= b.bits else b
    u, s = (a, b) if a.unsigned else (b, a)
    if u.bits >= s.bits:
        return u
    return s   # the signed type is wider and holds every value of the unsigned one


def wrap(value, ct: CT):
    """A compile-time value converted to ``ct`` as a C conversion does."""
    if ct.name == "bool_":
        return bool(value)
    if ct.is_float:
        return float(value)
    if ct.is_int:
        if isinstance(value, float):
            if math.isnan(value) or math.isinf(value):
                return 0
            value = int(value)    # truncation toward zero
        bits = ct.bits
        value = int(value) & ((1 << bits) - 1)
        if not ct.unsigned and value >= 1 << (bits - 1):
            value -= 1 << bits
        return value
    return value


class ConstEvalError(Exception):
    """A constant expression C would reject (division by zero ...)."""


def fold(op: str, a, ta: CT, b, tb: CT) -> tuple[object, CT]:
    """``a op b`` on compile-time values with C semantics: (value, type)."""
    if op in ("&&", "||"):
        v = (bool(a) and bool(b)) if op == "&&" else (bool(a) or bool(b))
        return int(v), BOOL
    if op in ("<<", ">>"):
        t = promote(ta)
        if b < 0 or b >= max(t.bits, 32):
            raise ConstEvalError(f"shift count {b} out of range")
        return wrap(a << b if op == "<<" else a >> b, t), t
    t = usual(ta, tb)
    if op in ("==", "!=", "<", ">", "<=", ">="):
        x, y = wrap(a, t), wrap(b, t)
        v = {"==": x == y, "!=": x != y, "<": x < y, ">": x > y, "<=": x <= y,
             ">=": x >= y}[op]
        return int(v), BOOL
    x, y = wrap(a, t), wrap(b, t)
    if op in ("/", "%") and y == 0:
        raise ConstEvalError("division by zero in a constant expression")
    if t.is_float:
        v = {"+": x + y, "-": x - y, "*": x * y, "/": x / y if op == "/" else 0}.get(op)
        if op == "%" or v is None:
            raise ConstEvalError(f"operator '{op}' needs integers")
        return v, t
    if op == "/":
        q = abs(x) // abs(y)
        v = q if (x >= 0) == (y >= 0) else -q
    elif op == "%":
        q = abs(x) // abs(y)
        q = q if (x >= 0) == (y >= 0) else -q
        v = x - q * y
    else:
        v = {"+": lambda: x + y, "-": lambda: x - y, "*": lambda: x * y,
             "&": lambda: x & y, "|": lambda: x | y, "^": lambda: x ^ y}[op]()
    return wrap(v, t), t


def int_literal(text: str) -> tuple[int, CT]:
    """The value and C type of an integer literal (suffixes u, l, ll; decimal literals
    without u take the first signed type that holds them, others may be unsigned)."""
    low = text.lower()
    digits = low.rstrip("ul")
    suffix = low[len(digits):]
    if digits.startswith("0x"):
        value, decimal = int(digits, 16), False
    elif digits.startswith("0b"):
        value, decimal = int(digits, 2), False
    elif len(digits) > 1 and digits.startswith("0"):
        value, decimal = int(digits, 8), False
    else:
        value, decimal = int(digits), True
    unsigned = "u" in suffix
    long_ = "l" in suffix
    order = []
    if not unsigned:
        order += [INT32] if not long_ else []
        order += [] if decimal or long_ else [UINT32]
        order += [INT64]
        order += [] if decimal else [UINT64]
    else:
        order += [UINT32] if not long_ else []
        order += [UINT64]
    for t in order:
        lo, hi = (0, (1 << t.bits) - 1) if t.unsigned else (-(1 << (t.bits - 1)),
                                                            (1 << (t.bits - 1)) - 1)
        if lo <= value <= hi:
            return value, t
    return value & ((1 << 64) - 1), UINT64
