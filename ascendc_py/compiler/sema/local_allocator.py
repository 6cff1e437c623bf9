"""Semantic analysis of LocalMemAllocator (Ascend C's allocator of the static-tensor style,
pyasc ``asc.LocalMemAllocator``).

``LocalMemAllocator(hard=Hardware.UB)`` hands out LocalTensors of one memory from address 0
upwards: ``alloc(pos, data_type, tile_size)`` places ``tile_size`` elements at the current
address (``get_cur_addr()``, bytes) and moves it past them, rounded up to the memory's
alignment (32 B for UB/L1, 512 B for L0A/L0B, 64 B for L0C/BT/FB: our choice, so every tensor
starts aligned; the documentation does not say). The current address is a run-time value, so
``tile_size`` may be one (and allocations may sit in branches). A tensor that does not fit in
the memory stops the kernel at the line (the same check as ``asc.LocalTensor(dtype, pos, addr,
size)``), and ``pos`` must be a position of the allocator's memory. Ascend C forbids mixing it
with TPipe: a kernel that makes both is a compile error at the second one.
"""
from __future__ import annotations


from ...dsl.hardware import Hardware
from ...dsl.types import Memory, TPosition, int32
from .. import ir
from ..errors import KernelTypeError, UnsupportedConstructError
from .builtins import bind_args, function, method, want_dtype, want_enum, want_int
from .values import FieldwiseRepr, identity_value, EnumV, LocalTensorV, RtV, SVal


@identity_value
class AllocatorV(SVal, FieldwiseRepr):
    memory: Memory
    cur: ir.Var

    def describe(self) -> str:
        return f"LocalMemAllocator({self.memory.name})"


def _alignment(memory: Memory) -> int:
    from ..ops.cube import local_alignment
    return max(local_alignment().get(memory, 32), 32)


def forbid_with_tpipe(an, what: str, loc) -> None:
    """Ascend C: LocalMemAllocator is not to be mixed with TPipe."""
    other = "asc.TPipe()" if what == "LocalMemAllocator" else "asc.LocalMemAllocator()"
    made = getattr(an, "tpipe_made", False) if what == "LocalMemAllocator" else getattr(
        an, "local_allocator_made", False)
    if made:
        raise UnsupportedConstructError(f"asc.{what}() in a kernel that uses {other}: Ascend C "
                                        f"does not allow mixing them (their buffers would "
                                        f"overlap)", loc)


@function("LocalMemAllocator")
def _allocator(an, args, kwargs, loc):
    b = bind_args("asc.LocalMemAllocator()", ("hard",), args, kwargs, loc,
                  {"hard": EnumV(Hardware.UB)})
    hard = want_enum(b["hard"], Hardware, "hard", loc)
    if hard in (Hardware.GM, Hardware.MAX):
        raise KernelTypeError(f"LocalMemAllocator hands out local memory; Hardware.{hard.name} "
                              f"is not one", loc)
    forbid_with_tpipe(an, "LocalMemAllocator", loc)
    an.local_allocator_made = True
    cur = ir.Var(f"allocator{an.new_label('alloc')}.cur", int32)
    an.emit(ir.Assign(cur, ir.Const(0, int32), loc))
    return AllocatorV(hard.memory, cur)


@method(AllocatorV, "get_cur_addr")
def _get_cur_addr(an, a: AllocatorV, name, args, kwargs, loc):
    bind_args("get_cur_addr()", (), args, kwargs, loc)
    return RtV(ir.Load(a.cur))


@method(AllocatorV, "alloc")
def _alloc(an, a: AllocatorV, name, args, kwargs, loc):
    b = bind_args("alloc()", ("pos", "data_type", "tile_size"), args, kwargs, loc)
    pos = want_enum(b["pos"], TPosition, "pos", loc)
    if pos.memory != a.memory:
        raise KernelTypeError(f"LocalMemAllocator.alloc: {pos.name} is in {pos.memory.name}, "
                              f"but this allocator hands out {a.memory.name}", loc)
    dtype = want_dtype(b["data_type"], "data_type", loc)
    size = want_int(b["tile_size"], "tile_size", loc)
    addr = ir.Var("alloc.addr", int32)
    an.emit(ir.Assign(addr, ir.Load(a.cur), loc))
    t = LocalTensorV(dtype, pos, ir.Load(addr), size, ir.Const(-1, int32), bounded=True,
                     origin=loc, made_by="LocalMemAllocator.alloc")
    an.emit(ir.Intrinsic("check_local", (t.ref(),), (), loc))
    align = _alignment(a.memory)
    nbytes = ir.Bin("mul", size, ir.Const(dtype.sizeof(), int32), int32)
    rounded = ir.Bin("mul", ir.Bin("floordiv", ir.Bin("add", nbytes, ir.Const(align - 1, int32),
                                                      int32), ir.Const(align, int32), int32),
                     ir.Const(align, int32), int32)
    an.emit(ir.Assign(a.cur, ir.Bin("add", ir.Load(addr), rounded, int32), loc))
    return t
