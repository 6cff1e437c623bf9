"""Messages of the cube unit's run-time errors (codes CUBE_PARAM_RANGE, CUBE_MISALIGNED).

The failing site's detail carries ``(record name, (field, lowest, highest), ...)`` as a tuple;
the library reports (value, highest, field index) or (address, alignment, operand index)."""
from __future__ import annotations

from ..compiler import errors as err
from ..dsl.types import Memory
from .abi import ErrorCode as E


def _record(detail) -> tuple:
    for d in detail:
        if isinstance(d, tuple) and d and isinstance(d[0], str):
            return d
    return ("params",)


def cube_fault(code, op: str, detail, a: int, b: int, c: int, where: str, loc):
    names = [d for d in detail if isinstance(d, str)]
    if code == E.CUBE_MISALIGNED:
        which, mem = c % 256, c // 256
        what = names[which] if which < len(names) else "operand"
        mem_name = Memory(mem).name if mem in Memory._value2member_map_ else "local memory"
        return err.MisalignedAddressError(
            f"{op} {what} starts at {mem_name} byte address {a}, which is not {b}-byte "
            f"aligned{where}", loc,
            hint=f"{mem_name} operands of the cube must start on a {b}-byte boundary (a "
                 f"fractal); offset tensors by whole fractals")
    rec = _record(detail)
    kind, fields = rec[0], rec[1:]
    if 0 <= c < len(fields):
        field, lo, hi = fields[c]
        if field == "if_transpose":
            return err.CubeParamError(
                f"{op}: {kind}.if_transpose = {a} needs a 16-bit dtype (it transposes 16×16 "
                f"fractals){where}", loc)
        if field.startswith("rule:"):   # ("rule:<what>:<what it must be>", 0, 0)
            _, what, must = field.split(":", 2)
            return err.CubeParamError(f"{op}: {kind} {what} = {a} must be {must}{where}", loc)
        if field.startswith("extent:"):
            return err.CubeParamError(
                f"{op}: {field[7:]} needs {a} bytes but only {b} fit{where}", loc,
                hint="the operand runs past its buffer; check m/n/k against the tensor sizes")
        return err.CubeParamError(f"{op}: {kind}.{field} = {a} is out of range {lo}..{hi}"
                                  f"{where}", loc)
    return err.CubeParamError(f"{op}: a parameter is out of range ({a}){where}", loc)
