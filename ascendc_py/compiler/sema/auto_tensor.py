"""``asc.LocalTensorAuto(dtype, shape)``: a UB tensor whose buffer and synchronisation the
compiler manages (pyasc's contract: the program neither allocates it from a queue nor puts
set_flag/wait_flag around its uses).

Each constructor *site* (a source location, with the calls it was inlined through) gets one
buffer, placed at a compile-time byte offset of a region the compiler reserves in UB before
the kernel's first statement (``compiler/insert_sync.reserve_auto_tensors``): constructing it
again, in a loop, hands out the same buffer, as pyasc hoists these allocations to the kernel's
entry. Using one makes the kernel compile with automatic synchronisation (pyasc's
``insert_sync`` option defaults to "on when the kernel uses LocalTensorAuto").
"""
from __future__ import annotations

from ...dsl.types import TPosition, int32
from .. import ir
from ..errors import KernelValueError
from .builtins import bind_args, function, want_dtype, want_int
from .values import LocalTensorV

#: attribute of the ``check_local`` statement each LocalTensorAuto emits: its buffer's
#: (offset, bytes) in the reserved region (the pass sizes the region from these)
AUTO_ATTR = "auto_tensor"
#: UB granule the buffers are aligned to
ALIGN = 32


def _numel(shape, loc) -> int:
    items = getattr(shape, "items", None)
    dims = list(items) if items is not None else [shape]
    n = 1
    for d in dims:
        e = want_int(d, "a LocalTensorAuto dimension", loc)
        if not isinstance(e, ir.Const):
            raise KernelValueError(
                "asc.LocalTensorAuto needs a shape known at compile time here", loc,
                hint="make the length a ConstExpr parameter or a constant: the compiler "
                     "reserves the tensor's UB buffer before the kernel starts")
        if int(e.value) <= 0:
            raise KernelValueError(f"a LocalTensorAuto dimension must be positive, got "
                                   f"{int(e.value)}", loc)
        n *= int(e.value)
    return n


@function("LocalTensorAuto")
def _local_tensor_auto(an, args, kwargs, loc):
    b = bind_args("asc.LocalTensorAuto()", ("dtype", "shape"), args, kwargs, loc)
    dtype = want_dtype(b["dtype"], "dtype", loc)
    n = _numel(b["shape"], loc)
    nbytes = -(-n * dtype.sizeof() // ALIGN) * ALIGN
    # one buffer per site (with its inlining chain): (site, dtype, elements) -> offset
    sites = an.__dict__.setdefault("_auto_tensor_sites", {})
    key = (an.chained(loc) if an.inline_sites else loc, dtype, n)
    offset = sites.get(key)
    if offset is None:
        offset = sum(-(-k[2] * k[1].sizeof() // ALIGN) * ALIGN for k in sites)
        sites[key] = offset
    t = LocalTensorV(dtype, TPosition.VECCALC, ir.Const(offset, int32), ir.Const(n, int32),
                     ir.Const(-1, int32), bounded=True, origin=loc, made_by="LocalTensorAuto(...)")
    an.emit(ir.Intrinsic("check_local", (t.ref(),), (), loc,
                         attrs=((AUTO_ATTR, (offset, nbytes)),)))
    return t

