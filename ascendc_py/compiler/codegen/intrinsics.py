"""Codegen of the DSL intrinsics: each becomes one call into the runtime library.

The library function checks the operands (once per instruction, never per element), does the
work with an O3-vectorised loop or memmove, and keeps the timing model's books; it returns an
error code, on which the kernel leaves. So a kernel module holds only its scalar control flow
and these calls, and compiles in milliseconds. The exception is a straight run of count-form
vector instructions: ``fusion.py`` makes each one's library call without its element loop,
then runs all their loops as one loop generated in the kernel. Operands are passed as
(memory, a, offset): GM operands as (0, argument index, element offset), local ones as
(memory, byte address, 0).
"""
from __future__ import annotations

from llvmlite import ir as L

from ...dsl.types import Memory
from ...simulator import abi
from ...simulator import timing_params as TP
from .. import ir
from ..ops import REGISTRY
from . import runtime_lib
from .core import Codegen, lowering
from .rtfuncs import WARN_LENIENT_ASSERT, call_rt, rt, warn
from .types import I1, I64, PTR, memory_type

E = abi.ErrorCode


def operand(cg: Codegen, ref) -> tuple:
    """(memory, a, element offset) of a tensor operand, as LLVM i64 values."""
    if isinstance(ref, ir.LocalRef):
        return cg.i64(int(ref.memory)), cg.b.sext(cg.expr(ref.addr), I64), cg.i64(0)
    return cg.i64(int(Memory.GM)), cg.b.sext(cg.expr(ref.arg), I64), cg.expr(ref.offset)


def call_checked(cg: Codegen, fn: L.Function, args: list, op: str, detail: tuple = (),
                 operands: tuple = (), redundant: frozenset = frozenset()) -> None:
    """``rc = fn(ctx, *args, site)``; leave the kernel if rc != 0.

    ``operands``: the instruction's IR arguments (``Intrinsic.args``). Operand ``w`` of the
    library's checks (``check_local``'s ``which``) is ``operands[w]``: each bounded LocalRef
    among them gets its tensor window [addr, addr + size * sizeof) in ctx (``abi.TWIN``), so
    the library checks that the instruction stays inside the tensor it was given, not only
    inside local memory. ``redundant``: (which, write) queue-tensor uses whose check and
    effect an earlier or later instruction of the same fused run makes (``fusion.py``)."""
    from .. import jit
    checked = jit.extent_checks_enabled()     # off only when make bench measures their cost
    tensors = set_windows(cg, operands) if checked else ()
    site = cg.i64(cg.site(op, detail, tensors))
    if checked:
        track_queue_tensors(cg, op, operands, site, redundant)
    cg.leave_on_error(cg.b.call(fn, [cg.ctx] + list(args) + [site]))


#: operand positions an instruction writes, where it is not just operand 0
WRITTEN = {"get_value": (), "reduce_sum": (0, 2), "reduce_max": (0, 2), "reduce_min": (0, 2)}
#: instructions whose operands are not tracked (debug output reads whatever is there)
UNTRACKED = {"dump_tensor"}


def instruction_pipe(op: str, operands) -> "PipeID | None":
    """The pipe that executes an instruction: a copy's DMA path decides for data movement."""
    from ...dsl.types import PipeID
    from ...simulator.config import ASCEND910B2
    refs = [a for a in operands[:2] if isinstance(a, (ir.LocalRef, ir.GlobalRef))]
    if op in ("data_copy", "data_copy_pad", "load_data", "load_data_with_transpose",
              "load_data_2d_v2") and \
            len(refs) == 2:
        dst, src = (r.memory if isinstance(r, ir.LocalRef) else Memory.GM for r in refs)
        try:
            return PipeID["PIPE_" + ASCEND910B2.dma.path(TP.memory_name(src),
                                                         TP.memory_name(dst)).pipe]
        except (KeyError, ValueError):
            return None
    if op == "init_const_value" and refs:
        return PipeID.PIPE_MTE2 if refs[0].memory == Memory.L1 else PipeID.PIPE_MTE1
    spec = REGISTRY.get(op)
    return spec.pipe if spec is not None else None


def queue_uses(op: str, operands) -> tuple:
    """(pipe, [(which, LocalRef, write), ...]): the queue-tensor uses ``track_queue_tensors``
    checks for an instruction, in the order it checks them; (None, []) for none."""
    if op in UNTRACKED:
        return None, []
    pipe = instruction_pipe(op, operands)
    if pipe is None:
        return None, []
    written = WRITTEN.get(op, (0,))
    tracked = [(which, ref) for which, ref in enumerate(operands[:abi.MAX_WINDOWS])
               if isinstance(ref, ir.LocalRef) and not (isinstance(ref.tag, ir.Const)
                                                        and ref.tag.value < 0)]
    # the reads first: an in-place op (add(a, a, b)) reads what other pipes wrote before it
    return pipe, [(which, ref, which in written)
                  for which, ref in sorted(tracked, key=lambda t: t[0] in written)]


def track_queue_tensors(cg: Codegen, op: str, operands, site,
                        redundant: frozenset = frozenset()) -> None:
    """Default-mode checks of TQue tensors, once per operand (``rtfuncs.tensor_use``): not
    used after free_tensor, and another pipe's write handed over before this pipe uses it.
    The uses in ``redundant`` ((which, write) pairs) are left out."""
    pipe, tracked = queue_uses(op, operands)
    uses = [(cg._as_i64(cg.expr(ref.tag)), int(write), which) for which, ref, write in tracked
            if (which, write) not in redundant]
    while uses:
        group, uses = uses[:TENSOR_USES], uses[TENSOR_USES:]
        if len(group) == 1:
            (tag, write, which), = group
            call = [cg.ctx, tag, cg.i64(int(pipe)), cg.i64(write), cg.i64(which), site]
            fn = runtime_lib.declare_rt(cg.module, "tensor_use")
        else:   # one call for the operands of an instruction: fewer calls and branches
            group += [(cg.i64(-1), 0, 0)] * (TENSOR_USES - len(group))
            call = [cg.ctx, cg.i64(int(pipe))]
            for tag, write, which in group:
                call += [tag, cg.i64(2 * which + write)]
            call.append(site)
            fn = runtime_lib.declare_rt(cg.module, "tensor_uses")
        cg.leave_on_error(cg.b.call(fn, call))


#: operands ``tensor_uses`` checks in one call
TENSOR_USES = 3


@rt("pipe", "tag0", "use0", "tag1", "use1", "tag2", "use2")
def tensor_uses(fb, pipe, tag0, use0, tag1, use1, tag2, use2, site):
    """``tensor_use`` of up to three operands of one instruction, in turn (``use``: 2 * which
    + write; tag -1: no operand): the kernel makes one call instead of one per operand."""
    b = fb.b
    for tag, use in ((tag0, use0), (tag1, use1), (tag2, use2)):
        with b.if_then(b.icmp_signed(">=", tag, fb.i64(0))):
            call_rt(fb, "tensor_use", tag, pipe, b.and_(use, fb.i64(1)),
                    b.ashr(use, fb.i64(1)), site)


def set_windows(cg: Codegen, operands) -> tuple:
    """Store the tensor windows of ``operands`` (and the mask of which are set) in ctx; return
    the operands' ``TensorInfo`` for the error site."""
    mask, infos = 0, []
    for which, ref in enumerate(operands[:abi.MAX_WINDOWS]):
        if not isinstance(ref, ir.LocalRef):
            infos.append(None)
            continue
        infos.append(ref.info)
        if not ref.bounded:
            continue
        lo = cg._as_i64(cg.expr(ref.addr))
        size = cg._as_i64(cg.expr(ref.size))
        size = cg.b.select(cg.b.icmp_signed("<", size, cg.i64(0)), cg.i64(0), size)
        cg.st(abi.TWIN + 2 * which, lo)
        cg.st(abi.TWIN + 2 * which + 1, cg.b.add(lo, cg.b.mul(size, cg.i64(ref.dtype.sizeof()))))
        mask |= 1 << which
    cg.st(abi.TWIN_MASK, cg.i64(mask))
    return tuple(infos) if any(i is not None for i in infos) else ()


# ----------------------------------------------------------------------------- vector ops
def lower_elementwise(cg: Codegen, s: ir.Intrinsic) -> None:
    spec = REGISTRY[s.op]
    dtype = s.attr("dtype")
    if s.attr("form") == "masked":
        lower_masked(cg, s, spec, dtype)
        return
    addrs, scalars = [], []
    for a in s.args[:-1]:
        if isinstance(a, ir.LocalRef):
            addrs.append(cg.b.sext(cg.expr(a.addr), I64))
        else:
            scalars.append(cg.expr(a))
    count = cg._as_i64(cg.expr(s.args[-1]))
    fn = runtime_lib.declare_op(cg.module, spec, dtype, s.attr("src_dtype"))
    call_checked(cg, fn, addrs + scalars + [count], s.op, tuple(spec.forms[0]),
                 operands=s.args)


def lower_masked(cg: Codegen, s: ir.Intrinsic, spec, dtype) -> None:
    """args: dst, src0|None, src1|None, scalar|None, is_set, kind, lo, hi, repeat, 6 strides."""
    dst, src0, src1, scalar = s.args[:4]
    addrs = [cg.b.sext(cg.expr(r.addr), I64) if r is not None else cg.i64(-1)
             for r in (dst, src0, src1)]
    src_dtype = s.attr("src_dtype")
    sval = cg.expr(scalar) if scalar is not None else L.Constant(memory_type(src_dtype or dtype),
                                                                0)
    rest = [cg._as_i64(cg.expr(e)) for e in s.args[4:]]
    fn = runtime_lib.declare_masked_op(cg.module, spec, dtype, src_dtype)
    call_checked(cg, fn, addrs + [sval] + rest, s.op, ("dst", "src0", "src1"),
                 operands=s.args[:3])


for _spec in REGISTRY.values():
    if _spec.elem is not None:
        lowering(_spec.name)(lower_elementwise)


@lowering("set_vector_mask")
def lower_set_vector_mask(cg: Codegen, s: ir.Intrinsic) -> None:
    kind, lo, hi = (cg._as_i64(cg.expr(e)) for e in s.args)
    lanes = 256 // s.attr("dtype").sizeof()
    call_checked(cg, runtime_lib.declare_rt(cg.module, "set_vector_mask"),
                 [kind, lo, hi, cg.i64(lanes)], "set_vector_mask")


@lowering("reset_mask", "set_mask_count", "set_mask_norm")
def lower_mask_state(cg: Codegen, s: ir.Intrinsic) -> None:
    if s.op == "reset_mask":
        cg.st(abi.MASK_LO, cg.i64(-1))
        cg.st(abi.MASK_HI, cg.i64(-1))
    else:
        cg.st(abi.MASK_MODE, cg.i64(int(s.op == "set_mask_count")))
    cg.scalar_cost(1)


# ----------------------------------------------------------------------------- scalar access
def _scalar_pointer(cg: Codegen, s: ir.Intrinsic, store: bool) -> L.Value:
    ref, index = s.args[0], s.args[1]
    mem, a, off = operand(cg, ref)
    idx = cg.b.add(off, cg._as_i64(cg.expr(index)))
    args = [mem, a, idx, cg.i64(ref.dtype.sizeof()), cg.i64(int(store)),
            cg.i64(TP.OP_INDEX[s.op])]
    call_checked(cg, runtime_lib.declare_rt(cg.module, "scalar_access"), args, s.op,
                 ("element",), operands=s.args[:1])
    return cg.b.inttoptr(cg.ld(abi.RES0), PTR)


@lowering("get_value")
def lower_get_value(cg: Codegen, s: ir.Intrinsic) -> None:
    ptr = _scalar_pointer(cg, s, store=False)
    (res,) = s.results
    cg.b.store(cg.b.load(ptr, typ=memory_type(s.args[0].dtype)), cg.var(res))


@lowering("set_value")
def lower_set_value(cg: Codegen, s: ir.Intrinsic) -> None:
    ptr = _scalar_pointer(cg, s, store=True)
    cg.b.store(cg.expr(s.args[2]), ptr)


@lowering("check_local")
def lower_check_local(cg: Codegen, s: ir.Intrinsic) -> None:
    (ref,) = s.args
    addr = cg.b.sext(cg.expr(ref.addr), I64)
    nbytes = cg.b.mul(cg.b.sext(cg.expr(ref.size), I64), cg.i64(ref.dtype.sizeof()))
    call_checked(cg, runtime_lib.declare_rt(cg.module, "check_local"),
                 [cg.i64(int(ref.memory)), addr, nbytes, cg.i64(2), cg.i64(0)], "LocalTensor",
                 ("tensor",))


@lowering("check_offset")
def lower_check_offset(cg: Codegen, s: ir.Intrinsic) -> None:
    """``t[off:]`` with a run-time offset: 0 <= off and addr + off * sizeof < 2**31."""
    off, addr = (cg._as_i64(cg.expr(e)) for e in s.args)
    end = cg.b.add(addr, cg.b.mul(off, cg.i64(s.attr("esize"))))
    bad = cg.b.or_(cg.b.icmp_signed("<", off, cg.i64(0)),
                   cg.b.icmp_signed(">", end, cg.i64((1 << 31) - 1)))
    cg.fail_if(bad, E.VALUE_RANGE, "value", off, cg.i64(0),
               cg.b.sdiv(cg.b.sub(cg.i64((1 << 31) - 1), addr), cg.i64(s.attr("esize"))),
               ("the LocalTensor offset",))


@lowering("kernel_assert")
def lower_assert(cg: Codegen, s: ir.Intrinsic) -> None:
    """A failed assertion stops the kernel; one marked ``lenient`` (metadata the device does
    not check, e.g. LocalTensor.set_buffer_len past its buffer) is a warning in lenient mode."""
    failed = cg.b.xor(cg.expr(s.args[0]), L.Constant(I1, 1))
    if not s.attr("lenient", False):
        cg.fail_if(failed, E.ASSERTION, "assert", None, None, None, (s.attr("msg", ""),))
        return
    site = cg.i64(cg.site("assert", (s.attr("msg", ""),)))
    lenient = cg.b.icmp_signed("!=", cg.ld(abi.LENIENT), cg.i64(0))
    with cg.b.if_then(cg.b.and_(failed, lenient)):
        warn(cg, WARN_LENIENT_ASSERT, site, cg.i64(0))
    cg.fail_with(cg.b.and_(failed, cg.b.xor(lenient, L.Constant(I1, 1))), E.ASSERTION, site)


from . import queues  # noqa: E402,F401  (queue, flag and end-of-kernel lowerings)
from . import lower_convert, lower_reduce, lower_movement, lower_debug, blas  # noqa: E402,F401
from . import lower_gather, lower_reduce_repeat, lower_buf_pool, lower_scalar_bits, lower_deq, lower_gather_mask  # noqa: E402,F401,E501
from . import lower_cube, lower_cube_init, lower_matmul, lower_crosscore  # noqa: E402,F401
from . import interrupt, block_loop, bind_args  # noqa: E402,F401  (SIGINT handler, native
# block loop, argument binder)
from . import lower_atomic, lower_fused_cast, lower_transpose, lower_sort, lower_bilinear  # noqa: E402,F401  (issue 15)
from . import lower_aipp  # noqa: E402,F401  (AIPP)
from . import lower_sysctl  # noqa: E402,F401  (pyasc-lang: cache/profiling/system calls)
from . import lower_cmpmask  # noqa: E402,F401  (pyasc-lang: the CMPMASK register)
from . import lower_add_deq  # noqa: E402,F401  (pyasc-lang: add_deq_relu)
from . import lower_load3d  # noqa: E402,F401  (conv19: img2col load_data)
from . import lower_ib_sync  # noqa: E402,F401  (pyasc-sync: GM-flag inter-block sync)
from . import lower_cube_sparse  # noqa: E402,F401  (pyasc15: sparse cube, Load2Dv2, cube registers)
