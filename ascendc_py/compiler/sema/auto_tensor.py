"""``asc.LocalTensorAuto(dtype, shape)``: a UB tensor whose buffer and synchronisation the
compiler manages (pyasc's contract: the program neither allocates it from a queue nor puts
set_flag/wait_flag around its uses).

Each constructor *site* (a source location, with the calls it was inlined through) gets one
buffer, placed at a compile-time byte offset of a region the compiler reserves in UB before
the kernel's first statement (``compiler/insert_sync.reserve_auto_tensors``): constructing it
again, in a loop, hands out the same buffer, as pyasc hoists these allocations to the kernel's
entry. A shape known only at run time must be computable when the kernel starts (from
ConstExpr values and scalar parameters). Using one makes the kernel compile with automatic synchronisation (pyasc's
``insert_sync`` option defaults to "on when the kernel uses LocalTensorAuto").
"""
from __future__ import annotations

from ...dsl.types import TPosition, int32
from .. import ir
from ..errors import KernelValueError
from .builtins import bind_args, function, want_dtype, want_int
from .values import LocalTensorV

#: attribute of the ``check_local`` statement each LocalTensorAuto emits: its buffer's
#: (offset, bytes) in the reserved region, int32 expressions (the pass sizes the region)
AUTO_ATTR = "auto_tensor"
#: UB granule the buffers are aligned to
ALIGN = 32


def _add(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    if isinstance(a, ir.Const) and isinstance(b, ir.Const):
        return ir.Const(int(a.value) + int(b.value), int32)
    return ir.Bin("add", a, b, int32)


def _numel(shape, loc) -> ir.Expr:
    """The element count of ``shape`` (an int or a tuple/list of them): a Const when every
    dimension is known at compile time, else an int32 expression."""
    items = getattr(shape, "items", None)
    n: ir.Expr = ir.Const(1, int32)
    for d in (list(items) if items is not None else [shape]):
        e = want_int(d, "a LocalTensorAuto dimension", loc)
        if isinstance(e, ir.Const) and int(e.value) <= 0:
            raise KernelValueError(f"a LocalTensorAuto dimension must be positive, got "
                                   f"{int(e.value)}", loc)
        n = ir.Const(int(n.value) * int(e.value), int32) \
            if isinstance(n, ir.Const) and isinstance(e, ir.Const) else ir.Bin("mul", n, e, int32)
    return n


def _bytes(n: ir.Expr, esize: int) -> ir.Expr:
    """``n`` elements of ``esize`` bytes, rounded up to the granule."""
    if isinstance(n, ir.Const):
        return ir.Const(-(-int(n.value) * esize // ALIGN) * ALIGN, int32)
    raw = ir.Bin("add", ir.Bin("mul", n, ir.Const(esize, int32), int32),
                 ir.Const(ALIGN - 1, int32), int32)
    return ir.Bin("mul", ir.Bin("floordiv", raw, ir.Const(ALIGN, int32), int32),
                  ir.Const(ALIGN, int32), int32)


@function("LocalTensorAuto")
def _local_tensor_auto(an, args, kwargs, loc):
    b = bind_args("asc.LocalTensorAuto()", ("dtype", "shape"), args, kwargs, loc)
    dtype = want_dtype(b["dtype"], "dtype", loc)
    n = _numel(b["shape"], loc)
    nbytes = _bytes(n, dtype.sizeof())
    # one buffer per site (with its inlining chain): (site, dtype, elements) -> offset; the
    # buffers follow each other in the order their sites are first reached
    sites = an.__dict__.setdefault("_auto_tensor_sites", {})
    key = (an.chained(loc) if an.inline_sites else loc, dtype, n)
    offset = sites.get(key)
    if offset is None:
        offset = an.__dict__.get("_auto_tensor_end", ir.Const(0, int32))
        an.__dict__["_auto_tensor_end"] = _add(offset, nbytes)
        sites[key] = offset
    t = LocalTensorV(dtype, TPosition.VECCALC, offset, n, ir.Const(-1, int32), bounded=True,
                     origin=loc, made_by="LocalTensorAuto(...)")
    an.emit(ir.Intrinsic("check_local", (t.ref(),), (), loc,
                         attrs=((AUTO_ATTR, (offset, nbytes)),)))
    return t
