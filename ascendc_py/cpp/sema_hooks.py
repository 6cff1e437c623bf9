"""The two kernel builtins the C++ front end needs beyond the Python DSL's, registered with
the type checker's ``@function`` table (no compiler file changes):

* ``(__gm__ T *)x``: a GM_ADDR argument read as elements of T. The launch passes arrays with
  their own dtype; the cast must name that dtype (an error at the cast otherwise).
* a C conversion of a scalar to a C type: ``(uint32_t)x``, a store into a ``uint32_t``
  variable (truncates and wraps like C; a compile-time value is converted at compile time).
"""
from __future__ import annotations

from ..compiler.errors import KernelTypeError
from ..compiler.sema import builtins as B
from ..compiler.sema import scalars as S
from ..compiler.sema.values import ConstV, DTypeV, GmAddrV, RtV, WideIntV


class _Hook:
    """A namespace object the type checker dispatches by ``asc_name``."""

    def __init__(self, asc_name: str):
        self.asc_name = asc_name
        self.__name__ = asc_name

    def __repr__(self):
        return f"<C++ front end builtin {self.asc_name}>"


GM_CAST = _Hook("cpp_gm_cast")
CONVERT = _Hook("cpp_convert")


@B.function("cpp_gm_cast")
def _gm_cast(an, args, kwargs, loc):
    value, dtype = args
    if not isinstance(value, GmAddrV):
        raise KernelTypeError(f"a (__gm__ T *) cast needs a GM_ADDR kernel argument, got "
                              f"{value.describe()}", loc)
    want = dtype.dtype
    if value.dtype != want:
        raise KernelTypeError(
            f"argument '{value.arg_name}' holds {value.dtype.name} elements but the kernel "
            f"reads it as {want.name}", loc,
            hint=f"pass a {want.name} array for '{value.arg_name}' (or load the kernel "
                 f"with the element type the array has)")
    return value


@B.function("cpp_convert")
def _convert(an, args, kwargs, loc):
    value, dtype = args
    assert isinstance(dtype, DTypeV)
    value = S.numeric(value)
    if isinstance(value, WideIntV):
        value = ConstV(value.value, dtype.dtype)
    if isinstance(value, ConstV):
        return ConstV(S.convert_const(value.value, dtype.dtype), dtype.dtype)
    if isinstance(value, RtV):
        return S.cast(value, dtype.dtype, loc)
    raise KernelTypeError(f"cannot convert {value.describe()} to {dtype.dtype.name}", loc)
