"""Scalar arithmetic of the kernel language: type promotion, constant folding, IR building.

Rules (documented in the README): Python ``int`` is an int32 scalar (int64 when the value needs
it), ``float`` is float32, comparisons give bool. Mixed int/float arithmetic is float32; int32
with int64 is int64; narrow scalar types (int8/16, uint8/16, float16, bfloat16 values read from
tensors) widen to int32/float32 before arithmetic. ``//`` and ``%`` follow Python's floor
semantics; ``/`` is true division (float32).
"""
from __future__ import annotations

import math
import operator

import numpy as np

from ...dsl.types import (DataType, bool_, float16, float32, float64, int32, int64, uint32,
                          uint64)
from .. import ir
from ..errors import (ConstantRangeError, KernelTypeError, KernelValueError, NotConstantError,
                      OperandKindError, SourceLoc)
from .values import ConstV, EnumV, RtV, SVal, TupleV, WideIntV

INT32_MIN, INT32_MAX = -(2 ** 31), 2 ** 31 - 1
INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1
#: exact compile-time integers may grow to this many bits before folding gives up
WIDE_INT_BITS = 1024

BINOP_NAMES = {"+": "add", "-": "sub", "*": "mul", "/": "truediv", "//": "floordiv",
               "%": "mod", "**": "pow", "<<": "shl", ">>": "shr", "&": "and", "|": "or",
               "^": "xor",
               "c/": "cdiv", "c%": "cmod"}   # C's truncating / and % (the C++ front end)
CMPOP_NAMES = {"<": "lt", "<=": "le", ">": "gt", ">=": "ge", "==": "eq", "!=": "ne"}


def const_of(value, loc: SourceLoc) -> ConstV:
    """A ConstV for a host Python scalar (bool, int, float, numpy scalar)."""
    if isinstance(value, (bool, np.bool_)):
        return ConstV(bool(value), bool_)
    if isinstance(value, (int, np.integer)):
        return int_const(int(value), loc)
    if isinstance(value, (float, np.floating)):
        return ConstV(float(value), float32)
    raise OperandKindError(f"{type(value).__name__} value {value!r} is not a kernel scalar", loc)


def int_const(value: int, loc: SourceLoc, narrow: bool = True) -> SVal:
    """The exact compile-time integer ``value``: int32 when it fits and ``narrow``, else int64,
    uint64 for 2**63..2**64-1 (a full mask word ``2**64 - 1`` keeps its value), else a
    :class:`WideIntV` that only further compile-time arithmetic may use."""
    if narrow and INT32_MIN <= value <= INT32_MAX:
        return ConstV(value, int32)
    if INT64_MIN <= value <= INT64_MAX:
        return ConstV(value, int64)
    if 0 <= value < 2 ** 64:
        return ConstV(value, uint64)
    if value.bit_length() > WIDE_INT_BITS:
        raise ConstantRangeError(f"a compile-time integer grows beyond {WIDE_INT_BITS} bits "
                                 f"({value.bit_length()} bits)", loc)
    return WideIntV(value)


def wide_error(v: WideIntV, loc: SourceLoc, what: str = "") -> ConstantRangeError:
    """The error for a use of an out-of-range compile-time integer other than arithmetic."""
    return ConstantRangeError(f"{what + ' ' if what else ''}{v.describe()}", loc,
                              hint="compile-time integers are exact, but the value used must "
                                   "fit in 64 bits (-2**63..2**64-1)")


def arith_type(t: DataType) -> DataType:
    """The type a scalar of type ``t`` has in arithmetic."""
    if t == bool_:
        return int32
    if t.is_float:
        return float64 if t == float64 else float32
    if t.bits < 32 or t == int32:
        return int32
    if t in (uint32, int64, uint64):
        return int64
    return t


def promote(a: DataType, b: DataType) -> DataType:
    a, b = arith_type(a), arith_type(b)
    if a.is_float or b.is_float:
        return float64 if float64 in (a, b) else float32
    return int64 if int64 in (a, b) else int32


def to_expr(v: SVal, dtype: DataType) -> ir.Expr:
    """The value as an IR expression of ``dtype`` (casting as needed)."""
    if isinstance(v, ConstV):
        return ir.Const(convert_const(v.value, dtype), dtype)
    e = v.expr
    return e if e.dtype == dtype else ir.Cast(e, dtype)


def convert_const(value, dtype: DataType):
    """Convert a Python scalar as a store to ``dtype`` would (wrap ints, round floats)."""
    if dtype == bool_:
        return bool(value)
    if dtype.is_float:
        with np.errstate(over="ignore"):   # out of range rounds to ±inf, as a store does
            if dtype == float16:
                return float(np.float16(value))
            if dtype == float32:
                return float(np.float32(value))
        return float(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return 0
        value = int(value)  # C-style truncation toward zero
    bits = dtype.bits
    value = int(value) & ((1 << bits) - 1)
    if dtype.is_signed and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


def _c_div(x: int, y: int) -> int:
    """C's integer division: the quotient truncated toward zero."""
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y >= 0) else -q


def _fold_const(op: str, a, b, dtype: DataType, loc: SourceLoc):
    if dtype.is_float:
        a, b = float(a), float(b)
        if op == "floordiv":
            if b == 0:
                raise ConstantRangeError("division by zero in a compile-time expression", loc)
            return float(math.floor(a / b))
        if op == "mod":
            if b == 0:
                raise ConstantRangeError("modulo by zero in a compile-time expression", loc)
            return math.fmod(a, b) if (a % b == 0) else a % b
    fn = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
          "floordiv": operator.floordiv, "mod": operator.mod, "pow": operator.pow,
          "shl": operator.lshift, "shr": operator.rshift, "and": operator.and_,
          "or": operator.or_, "xor": operator.xor, "min": min, "max": max,
          "cdiv": _c_div, "cmod": lambda x, y: x - _c_div(x, y) * y}[op]
    if op in ("floordiv", "mod", "cdiv", "cmod") and b == 0:
        raise ConstantRangeError("division by zero in a compile-time expression", loc)
    if op in ("shl", "shr") and b < 0:
        raise ConstantRangeError("negative shift count", loc)
    if (op == "pow" and b > 64 and abs(a) > 1) or (op == "shl" and b > 64 and a != 0):
        # the exact value would take unbounded time and memory to compute
        raise ConstantRangeError(f"{a} {'**' if op == 'pow' else '<<'} {b} is far outside the "
                                 f"64-bit integer range in a compile-time expression", loc)
    try:
        value = fn(a, b)
    except (OverflowError, ZeroDivisionError) as exc:   # e.g. 1e300 ** 2.0, 0.0 ** -1
        symbol = next((t for t, name in BINOP_NAMES.items() if name == op), op)
        raise ConstantRangeError(f"compile-time {a!r} {symbol} {b!r} has no finite value "
                                 f"({exc})", loc) from None
    if isinstance(value, complex):                      # e.g. (-8.0) ** 0.5
        raise ConstantRangeError(f"compile-time {a!r} ** {b!r} is not a real number", loc)
    return value


def numeric(v: SVal) -> SVal:
    """An IntEnum member (``asc.TPosition.VECIN``, a ``ConstExpr[asc.RoundMode]``) used as a
    number is its integer value, as in Python; any other value is returned as it is."""
    if isinstance(v, EnumV) and isinstance(v.member, int) and not isinstance(v.member, bool):
        return ConstV(int(v.member), int32)
    return v


def binary(op_text: str, a: SVal, b: SVal, loc: SourceLoc) -> SVal:
    """``a <op> b`` for scalar values."""
    op = BINOP_NAMES.get(op_text, op_text)
    a, b = numeric(a), numeric(b)
    if isinstance(a, TupleV) or isinstance(b, TupleV):
        return _sequence_binary(op_text, a, b, loc)
    if isinstance(a, WideIntV) or isinstance(b, WideIntV):
        return _wide_binary(op_text, op, a, b, loc)
    for v in (a, b):
        if not isinstance(v, (ConstV, RtV)):
            raise OperandKindError(f"operator '{op_text}' needs numbers, got {v.describe()}", loc)
    if op == "truediv":
        dtype = promote(promote(a.dtype, b.dtype), float32)
    else:
        dtype = promote(a.dtype, b.dtype)
    if op in ("shl", "shr", "and", "or", "xor") and dtype.is_float:
        raise OperandKindError(f"operator '{op_text}' needs integers, got "
                              f"{a.dtype.name} and {b.dtype.name}", loc)
    if isinstance(a, ConstV) and isinstance(b, ConstV):
        if op == "truediv":
            if b.value == 0:
                raise ConstantRangeError("division by zero in a compile-time expression", loc)
            return ConstV(convert_const(a.value / b.value, dtype), dtype)
        value = _fold_const(op, a.value, b.value, dtype, loc)
        if dtype.is_int:   # exact, as in Python; the range is checked where the value is used
            return int_const(int(value), loc, narrow=dtype == int32)
        return ConstV(convert_const(value, dtype), dtype)
    if op == "pow":
        return _runtime_pow(a, b, dtype, loc)
    return RtV(ir.Bin(op, to_expr(a, dtype), to_expr(b, dtype), dtype))


def _sequence_binary(op_text: str, a: SVal, b: SVal, loc: SourceLoc) -> SVal:
    """Python's list operators on compile-time lists: ``[x] * n``, ``n * [x]``, ``l1 + l2``
    (pyasc programs build parameter lists this way: ``[1.0] * 16``)."""
    if op_text == "+" and isinstance(a, TupleV) and isinstance(b, TupleV):
        return TupleV(a.items + b.items)
    if op_text == "*":
        seq, n = (a, b) if isinstance(a, TupleV) else (b, a)
        if isinstance(n, ConstV) and n.dtype.is_int and isinstance(seq, TupleV):
            return TupleV(seq.items * max(int(n.value), 0))
    raise OperandKindError(f"operator '{op_text}' on a list takes another list (+) or a "
                           f"constant integer (*)", loc)


def _const_operand(v: SVal, wide: WideIntV, loc: SourceLoc):
    """The Python number of a compile-time operand next to a wide integer."""
    if isinstance(v, WideIntV):
        return v.value
    if isinstance(v, ConstV) and v.dtype != bool_:
        return v.value
    if isinstance(v, ConstV):
        return int(v.value)
    if isinstance(v, RtV):
        raise wide_error(wide, loc, "a run-time value cannot be combined with the")
    raise OperandKindError(f"{wide.describe()} needs a number, got {v.describe()}", loc)


def _wide_binary(op_text: str, op: str, a: SVal, b: SVal, loc: SourceLoc) -> SVal:
    """Compile-time arithmetic with an operand outside the 64-bit range (exact for ints)."""
    wide = a if isinstance(a, WideIntV) else b
    x, y = _const_operand(a, wide, loc), _const_operand(b, wide, loc)
    if isinstance(x, float) or isinstance(y, float) or op == "truediv":
        if op in ("shl", "shr", "and", "or", "xor"):
            raise OperandKindError(f"operator '{op_text}' needs integers", loc)
        if op == "truediv":
            if y == 0:
                raise ConstantRangeError("division by zero in a compile-time expression", loc)
            return ConstV(convert_const(x / y, float32), float32)
        value = _fold_const(op, x, y, float32, loc)
        return ConstV(convert_const(value, float32), float32)
    return int_const(int(_fold_const(op, x, y, int64, loc)), loc)


def _runtime_pow(a: SVal, b: SVal, dtype: DataType, loc: SourceLoc) -> SVal:
    if isinstance(b, ConstV) and dtype.is_int:
        if not 0 <= b.value <= 64:
            raise ConstantRangeError("integer ** needs a compile-time exponent in 0..64", loc)
        result: SVal = ConstV(1, dtype)
        for _ in range(int(b.value)):
            result = binary("*", result, a, loc)
        return result
    if dtype.is_int:
        raise NotConstantError("integer ** needs a compile-time exponent", loc)
    return RtV(ir.Bin("pow", to_expr(a, dtype), to_expr(b, dtype), dtype))


def compare(op_text: str, a: SVal, b: SVal, loc: SourceLoc) -> SVal:
    op = CMPOP_NAMES[op_text]
    a, b = numeric(a), numeric(b)
    if isinstance(a, WideIntV) or isinstance(b, WideIntV):
        wide = a if isinstance(a, WideIntV) else b
        x, y = _const_operand(a, wide, loc), _const_operand(b, wide, loc)
        return ConstV(bool(_CMP_FUNCS[op](x, y)), bool_)
    for v in (a, b):
        if not isinstance(v, (ConstV, RtV)):
            raise OperandKindError(f"cannot compare {a.describe()} with {b.describe()}", loc)
    dtype = promote(a.dtype, b.dtype)
    if isinstance(a, ConstV) and isinstance(b, ConstV):
        return ConstV(bool(_CMP_FUNCS[op](a.value, b.value)), bool_)
    return RtV(ir.Cmp(op, to_expr(a, dtype), to_expr(b, dtype)))


_CMP_FUNCS = {"lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge,
              "eq": operator.eq, "ne": operator.ne}


def truth(v: SVal, loc: SourceLoc) -> SVal:
    """The value as a bool (Python truthiness for numbers)."""
    v = numeric(v)
    if isinstance(v, (ConstV, WideIntV)):
        return ConstV(bool(v.value), bool_)
    if isinstance(v, RtV):
        if v.dtype == bool_:
            return v
        zero = ir.Const(0.0 if v.dtype.is_float else 0, v.dtype)
        return RtV(ir.Cmp("ne", v.expr, zero))
    raise OperandKindError(f"{v.describe()} cannot be used as a condition", loc)


def unary(op: str, v: SVal, loc: SourceLoc) -> SVal:
    if op == "not":
        t = truth(v, loc)
        if isinstance(t, ConstV):
            return ConstV(not t.value, bool_)
        return RtV(ir.Un("not", t.expr, bool_))
    v = numeric(v)
    if isinstance(v, WideIntV):
        return int_const({"-": -v.value, "+": v.value, "~": ~v.value}[op], loc)
    if not isinstance(v, (ConstV, RtV)):
        raise OperandKindError(f"unary '{op}' needs a number, got {v.describe()}", loc)
    dtype = arith_type(v.dtype)
    if op == "+":
        return v if isinstance(v, ConstV) else RtV(to_expr(v, dtype))
    if op == "~" and dtype.is_float:
        raise OperandKindError("'~' needs an integer", loc)
    if isinstance(v, ConstV):
        value = -v.value if op == "-" else ~int(v.value)
        return const_of(value, loc) if dtype.is_int else ConstV(value, dtype)
    return RtV(ir.Un("neg" if op == "-" else "invert", to_expr(v, dtype), dtype))


def boolop(op: str, values: list[SVal], loc: SourceLoc) -> SVal:
    parts = [truth(v, loc) for v in values]
    consts = [p for p in parts if isinstance(p, ConstV)]
    runtime = [p for p in parts if isinstance(p, RtV)]
    if op == "and":
        if any(not c.value for c in consts):
            return ConstV(False, bool_)
        if not runtime:
            return ConstV(True, bool_)
    else:
        if any(c.value for c in consts):
            return ConstV(True, bool_)
        if not runtime:
            return ConstV(False, bool_)
    expr = runtime[0].expr
    for p in runtime[1:]:
        expr = ir.Bin("and" if op == "and" else "or", expr, p.expr, bool_)
    return RtV(expr)


def select(cond: SVal, a: SVal, b: SVal, loc: SourceLoc) -> SVal:
    c = truth(cond, loc)
    if isinstance(c, ConstV):
        return a if c.value else b
    for v in (a, b):
        if not isinstance(v, (ConstV, RtV)):
            raise OperandKindError("a runtime `x if cond else y` needs numbers on both sides; "
                                  f"got {v.describe()}", loc,
                                  hint="use an if statement, or make the condition a "
                                       "compile-time value")
    dtype = promote(a.dtype, b.dtype)
    return RtV(ir.Select(c.expr, to_expr(a, dtype), to_expr(b, dtype), dtype))


def cast(v: SVal, dtype: DataType, loc: SourceLoc) -> SVal:
    v = numeric(v)
    if isinstance(v, WideIntV):
        if dtype.is_float:
            return ConstV(convert_const(float(v.value), dtype), dtype)
        raise wide_error(v, loc, f"cannot convert to {dtype.name}:")
    if isinstance(v, ConstV):
        return ConstV(convert_const(v.value, dtype), dtype)
    if isinstance(v, RtV):
        return RtV(to_expr(v, dtype))
    raise OperandKindError(f"cannot convert {v.describe()} to {dtype.name}", loc)


def min_max(name: str, values: list[SVal], loc: SourceLoc) -> SVal:
    values = [numeric(v) for v in values]
    result = values[0]
    for v in values[1:]:
        if isinstance(v, WideIntV) or isinstance(result, WideIntV):
            wide = v if isinstance(v, WideIntV) else result
            x, y = _const_operand(result, wide, loc), _const_operand(v, wide, loc)
            value = (min if name == "min" else max)(x, y)
            result = int_const(value, loc) if isinstance(value, int) else \
                ConstV(convert_const(value, float32), float32)
            continue
        if not isinstance(v, (ConstV, RtV)) or not isinstance(result, (ConstV, RtV)):
            raise OperandKindError(f"{name}() needs numbers", loc)
        dtype = promote(result.dtype, v.dtype)
        if isinstance(result, ConstV) and isinstance(v, ConstV):
            value = (min if name == "min" else max)(result.value, v.value)
            result = int_const(int(value), loc, narrow=dtype == int32) if dtype.is_int else \
                ConstV(convert_const(value, dtype), dtype)
        else:
            result = RtV(ir.Bin(name, to_expr(result, dtype), to_expr(v, dtype), dtype))
    return result
