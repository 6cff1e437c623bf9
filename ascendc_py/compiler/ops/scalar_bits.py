"""The scalar-unit functions (declarations): bit counts and ScalarCast (Ascend C "标量计算").

* ``scalar_get_sff_value(value_in, count_value)``: the position (from the least significant
  bit, 0-based) of the first bit equal to ``count_value`` (0 or 1, a compile-time constant) in
  the 64-bit ``value_in``; -1 when there is none.
* ``scalar_get_count_of_value(value_in, count_value)``: how many of the 64 bits equal
  ``count_value`` (0 or 1, a compile-time constant).
* ``scalar_count_leading_zero(value_in)``: leading zero bits of the 64-bit value (64 for 0).
* ``count_bits_cnt_same_as_sign_bit(value_in)``: how many bits after the sign bit of the
  int64 value equal it, counted from the top; -1 for 0 and -1 (the docs).
* ``scalar_cast(value_in, dtype, round_mode)``: a float32 value to int32 (CAST_RINT, CAST_FLOOR,
  CAST_CEIL, CAST_ROUND) or to float16 (CAST_ODD), the modes the docs allow; the rules are
  ``asc.cast``'s (``ops/convert.py``: integers saturate, NaN gives 0).

All are integer/float expressions of the scalar unit: constant arguments fold at compile time,
run-time ones cost one scalar ALU operation each. ``value_in`` is taken as 64 bits (an int64 or
an unsigned constant up to 2**64 - 1).
"""
from __future__ import annotations

from ...dsl.types import PipeID
from . import CostClass, Family, OpSpec, register

MASK64 = (1 << 64) - 1


def sff_ref(value: int, count_value: int) -> int:
    v = int(value) & MASK64
    if count_value == 0:
        v = ~v & MASK64
    return (v & -v).bit_length() - 1 if v else -1


def count_of_value_ref(value: int, count_value: int) -> int:
    ones = bin(int(value) & MASK64).count("1")
    return ones if count_value else 64 - ones


def clz_ref(value: int) -> int:
    return 64 - (int(value) & MASK64).bit_length()


def same_as_sign_ref(value: int) -> int:
    v = int(value) & MASK64
    if v in (0, MASK64):
        return -1
    x = v ^ (MASK64 if v >> 63 else 0)        # bits equal to the sign become 0
    return clz_ref(x) - 1


KINDS = {"scalar_get_sff_value": sff_ref, "scalar_get_count_of_value": count_of_value_ref,
         "scalar_count_leading_zero": clz_ref,
         "count_bits_cnt_same_as_sign_bit": same_as_sign_ref}

register(OpSpec("scalar_bits", Family.SYSTEM, PipeID.PIPE_S, CostClass.SCALAR, (),
                (("value_in", "count_value"),), None, None,
                "scalar_get_sff_value / scalar_get_count_of_value / scalar_count_leading_zero / "
                "count_bits_cnt_same_as_sign_bit on a 64-bit value (attr kind)",
                flops_per_elem=0))
register(OpSpec("scalar_cast", Family.SYSTEM, PipeID.PIPE_S, CostClass.SCALAR, (),
                (("value_in", "dtype", "round_mode"),), None, None,
                "scalar_cast(value_in, dtype, round_mode): float32 to int32 (RINT, FLOOR, CEIL, "
                "ROUND) or float16 (ODD), asc.cast's rules", flops_per_elem=0))
