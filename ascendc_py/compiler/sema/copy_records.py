"""Constructors of the parameter records of ``ops/copy_records.py`` (field checks at the line)."""
from __future__ import annotations

import enum

from ...dsl.types import bool_, int32, int64
from ..errors import ConstantRangeError
from ..ops.copy_records import BOOL, RECORDS
from . import scalars as S
from .builtins import bind_args, function, want_enum, want_int
from .values import ConstV, EnumV, StructV


def _default(value):
    if isinstance(value, enum.Enum):
        return EnumV(value)
    return ConstV(value, bool_ if isinstance(value, bool) else int32)


def _record(kind: str):
    spec = RECORDS[kind]
    names = tuple(n for n, _, _ in spec)

    def construct(an, args, kwargs, loc):
        defaults = {n: _default(d) for n, d, _ in spec if d is not None}
        b = bind_args(f"asc.{kind}()", names, args, kwargs, loc, defaults)
        fields = []
        for n, _, check in spec:
            v = b[n]
            what = f"{kind}.{n}"
            if check == BOOL:
                v = S.truth(v, loc)
            elif isinstance(check, type) and issubclass(check, enum.Enum):
                if isinstance(v, ConstV) and int(v.value) in check._value2member_map_:
                    v = EnumV(check(int(v.value)))   # pyasc also takes the enum's integer
                v = EnumV(want_enum(v, check, what, loc))
            else:
                want_int(v, what, loc, int64)
                lo, hi = check
                if isinstance(v, ConstV) and not lo <= int(v.value) <= hi:
                    raise ConstantRangeError(f"{what} is {int(v.value)}; the field holds "
                                             f"{lo}..{hi}", loc)
            fields.append((n, v))
        return StructV(kind, tuple(fields))
    construct.__name__ = f"_{kind}"
    return construct


for _kind in RECORDS:
    function(_kind)(_record(_kind))
