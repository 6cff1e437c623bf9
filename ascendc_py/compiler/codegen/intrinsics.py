"""Codegen of the DSL intrinsics: vector ops, data_copy, queues, flags, scalar access.

Each lowering checks its operands once per instruction (never per element) and then runs a
tight loop LLVM vectorises. The ``timing`` hook of ``Codegen`` (if any) is told about every
instruction so the timing model can keep its books in the same native code.
"""
from __future__ import annotations

from llvmlite import ir as L

from ...dsl.types import Memory, float16, int32, int64
from ...simulator import abi, timing_params
from .. import ir
from ..ops import REGISTRY, Family
from . import runtime_lib
from .core import Codegen, lowering
from .types import I1, I8, I32, I64, PTR, ElemBuilder, convert, intrinsic, memory_type

E = abi.ErrorCode
ALIGN = 32


# ----------------------------------------------------------------------------- operand helpers
class Local:
    """A LocalRef evaluated to LLVM values: byte address, element count, tag and pointer."""

    def __init__(self, cg: Codegen, ref: ir.LocalRef):
        self.ref = ref
        self.addr = cg.b.sext(cg.expr(ref.addr), I64)
        self.size = cg.expr(ref.size)
        self.tag = cg.expr(ref.tag)
        self.elem_size = ref.dtype.sizeof()
        base = cg.ctx_ptr(abi.MEM_BASE + int(ref.memory))
        self.ptr = cg.b.gep(base, [self.addr], source_etype=I8)

    def check(self, cg: Codegen, nbytes: L.Value, op: str, what: str, aligned=True,
              offset: L.Value | None = None) -> None:
        """Fail unless [addr, addr+nbytes) lies in the memory (and addr is 32-B aligned)."""
        addr = self.addr if offset is None else cg.b.add(self.addr, offset)
        mem = self.ref.memory
        cg.call_rt("check_local", [int(mem), addr, nbytes, int(aligned)], op, (what, mem.name))


class Global:
    """A GlobalRef evaluated to LLVM values: argument index, element offset and pointer."""

    def __init__(self, cg: Codegen, ref: ir.GlobalRef):
        self.ref = ref
        self.arg = cg.b.sext(cg.expr(ref.arg), I64)
        self.offset = cg.expr(ref.offset)
        self.elem_size = ref.dtype.sizeof()
        ptrs = cg.ctx_ptr(abi.GM_PTRS)
        base_int = cg.b.load(cg.b.gep(ptrs, [self.arg], source_etype=I64), typ=I64)
        self.start = cg.b.mul(self.offset, cg.i64(self.elem_size))
        self.ptr = cg.b.gep(cg.b.inttoptr(base_int, PTR), [self.start], source_etype=I8)

    def check(self, cg: Codegen, nbytes: L.Value, op: str, what: str,
              offset: L.Value | None = None) -> None:
        start = self.start if offset is None else cg.b.add(self.start, offset)
        cg.call_rt("check_gm", [self.arg, start, nbytes, self.elem_size], op, (what,))


def elem_ptr(cg: Codegen, base: L.Value, i: L.Value, dtype) -> L.Value:
    return cg.b.gep(base, [i], source_etype=memory_type(dtype))


def counted_loop(cg: Codegen, n: L.Value, body) -> None:
    """Emit ``for i in range(n): body(i)`` with an i64 induction variable."""
    b = cg.b
    pre = b.block
    head = cg.func.append_basic_block("vloop")
    done = cg.func.append_basic_block("vloop.end")
    b.cbranch(b.icmp_signed(">", n, cg.i64(0)), head, done)
    b.position_at_end(head)
    i = b.phi(I64)
    i.add_incoming(cg.i64(0), pre)
    body(i)
    nxt = b.add(i, cg.i64(1))
    i.add_incoming(nxt, b.block)
    b.cbranch(b.icmp_signed("<", nxt, n), head, done)
    b.position_at_end(done)


def check_count(cg: Codegen, count: L.Value, op: str) -> L.Value:
    count = cg.b.sext(count, I64) if count.type.width < 64 else count
    cg.fail_if(cg.b.icmp_signed("<", count, cg.i64(0)), E.NEGATIVE_COUNT, op, count)
    return count


def notify_timing(cg: Codegen, s: ir.Intrinsic, **info) -> None:
    if cg.timing is not None:
        cg.timing.on_intrinsic(cg, s, **info)


# ----------------------------------------------------------------------------- vector ops
def lower_elementwise(cg: Codegen, s: ir.Intrinsic) -> None:
    spec = REGISTRY[s.op]
    dtype = s.attr("dtype")
    count = check_count(cg, cg.expr(s.args[-1]), s.op)
    nbytes = cg.b.mul(count, cg.i64(dtype.sizeof()))
    pointers, scalars, addrs = [], [], []
    for i, a in enumerate(s.args[:-1]):
        if isinstance(a, ir.LocalRef):
            t = Local(cg, a)
            t.check(cg, nbytes, s.op, "dst" if i == 0 else f"src{i - 1}")
            pointers.append(t.ptr)
            addrs.append(t.addr)
        else:
            scalars.append(cg.expr(a))
    cg.b.call(runtime_lib.declare(cg.module, spec, dtype), pointers + scalars + [count])
    notify_timing(cg, s, count=count, nbytes=nbytes, addrs=addrs)


for _spec in REGISTRY.values():
    if _spec.elem is not None:
        lowering(_spec.name)(lower_elementwise)


# ----------------------------------------------------------------------------- data movement
@lowering("data_copy")
def lower_data_copy(cg: Codegen, s: ir.Intrinsic) -> None:
    dst_ref, src_ref, count_e = s.args
    dtype = s.attr("dtype")
    count = check_count(cg, cg.expr(count_e), "data_copy")
    requested = cg.b.mul(count, cg.i64(dtype.sizeof()))
    # hardware copies whole 32-byte blocks: an unaligned length is truncated down
    nbytes = cg.b.and_(requested, cg.i64(~(ALIGN - 1)))
    ops = []
    for ref, what in ((dst_ref, "dst"), (src_ref, "src")):
        if isinstance(ref, ir.LocalRef):
            t = Local(cg, ref)
            t.check(cg, nbytes, "data_copy", what)
        else:
            t = Global(cg, ref)
            t.check(cg, nbytes, "data_copy", what)
        ops.append(t)
    dst, src = ops
    same_memory = isinstance(dst_ref, ir.LocalRef) and isinstance(src_ref, ir.LocalRef)
    name = "llvm.memmove.p0.p0.i64" if same_memory else "llvm.memcpy.p0.p0.i64"
    fn = intrinsic(cg.module, name, L.VoidType(), [PTR, PTR, I64, I1])
    cg.b.call(fn, [dst.ptr, src.ptr, nbytes, L.Constant(I1, 0)])
    mems = [r.memory if isinstance(r, ir.LocalRef) else Memory.GM for r in (src_ref, dst_ref)]
    notify_timing(cg, s, nbytes=nbytes, path=timing_params.path_index(*mems))


# ----------------------------------------------------------------------------- scalar access
def _scalar_target(cg: Codegen, ref, index: L.Value, op: str):
    size = cg.i64(ref.dtype.sizeof())
    off = cg.b.mul(index, size)
    t = Local(cg, ref) if isinstance(ref, ir.LocalRef) else Global(cg, ref)
    if isinstance(t, Local):
        t.check(cg, size, op, "element", aligned=False, offset=off)
    else:
        t.check(cg, size, op, "element", offset=off)
    return cg.b.gep(t.ptr, [off], source_etype=I8)


@lowering("get_value")
def lower_get_value(cg: Codegen, s: ir.Intrinsic) -> None:
    ref, index = s.args
    ptr = _scalar_target(cg, ref, cg.expr(index), "get_value")
    (res,) = s.results
    v = cg.b.load(ptr, typ=memory_type(ref.dtype))
    cg.b.store(v, cg.var(res))
    notify_timing(cg, s)


@lowering("set_value")
def lower_set_value(cg: Codegen, s: ir.Intrinsic) -> None:
    ref, index, value = s.args
    ptr = _scalar_target(cg, ref, cg.expr(index), "set_value")
    cg.b.store(cg.expr(value), ptr)
    notify_timing(cg, s)


@lowering("check_local")
def lower_check_local(cg: Codegen, s: ir.Intrinsic) -> None:
    (ref,) = s.args
    t = Local(cg, ref)
    nbytes = cg.b.mul(cg.b.sext(t.size, I64), cg.i64(ref.dtype.sizeof()))
    t.check(cg, nbytes, "LocalTensor", "tensor")


@lowering("kernel_assert")
def lower_assert(cg: Codegen, s: ir.Intrinsic) -> None:
    cond = cg.expr(s.args[0])
    cg.fail_if(cg.b.xor(cond, L.Constant(I1, 1)), E.ASSERTION, "assert", None, None, None,
               (s.attr("msg", ""),))


from . import queues  # noqa: E402,F401  (queue, flag and end-of-kernel lowerings)
