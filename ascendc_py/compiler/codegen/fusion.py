"""Elementwise fusion: a straight run of count-form vector instructions runs as one native loop.

A run is two or more element-wise vector instructions in their count form (``add(dst, a, b,
n)``), all of one dtype (no mixed precision) and one count, with nothing between them but
scalar assignments and the boundaries of ``Block`` statements that nothing leaves early (an
inlined kernel function binding its parameters, an unrolled ``static_range`` body: samples/
sepia.py's three ``mix`` calls are one run of 15). Nothing runs between the instructions but
their own bookkeeping and those assignments (lowered where they were, the scalar clock
advanced where it was), so for such a run the kernel

1. makes each instruction's library call as today, but to its loop-less variant
   (``asc_opd_*``: the same checks, tensor windows, queue-tensor checks, sanitizer records,
   mask reset and timing accounting, in the same order, with the same error sites), leaving on
   the first error as before;
2. then runs all the element loops as one: a loop generated here that, per element, loads
   each operand once, applies every instruction's element function in order (its own ``elem``
   from the op registry, so float16 is rounded after every operation exactly as in the
   instruction's own loop) and stores each written operand's last value.

Step 2 equals running the loops one after the other only if an element of one operand never
aliases a different element of another: operands are either the same tensor (the same
*canonical* address expression, ``_Scan``: the same address at run time) or, checked at run
time, disjoint byte ranges. When the check fails the instructions' own loops run one after the
other, as unfused.
The element loops only read and write the operands' data, which the bookkeeping of step 1
never reads, so results and every report figure are those of the unfused instructions; only
the host work changes (one pass over the data instead of one per instruction).

``set_enabled(False)`` turns fusion off (its kernels are a separate cache entry): tests compare
the two paths.
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from llvmlite import ir as L

from ...dsl.types import Memory
from ...simulator import abi
from .. import ir, jit
from ..ops import REGISTRY, Family
from .types import I1, I64, PTR, ElemBuilder, counted_loop, memory_type, tune_fused_loop

FUSIBLE_FAMILIES = (Family.BINARY, Family.UNARY, Family.SCALAR, Family.DUPLICATE, Family.AXPY)

def set_enabled(enabled: bool) -> None:
    """Fuse runs of vector instructions (default) or lower every instruction on its own (the
    switch lives in jit.py, which reads it on every launch without importing codegen)."""
    jit.set_fusion(enabled)


def enabled() -> bool:
    return jit.fusion_enabled()


def _fusible(s) -> bool:
    """A count-form element-wise vector instruction of one dtype, lowered the usual way."""
    if type(s) is not ir.Intrinsic:
        return False
    spec = REGISTRY.get(s.op)
    if spec is None or spec.elem is None or spec.family not in FUSIBLE_FAMILIES:
        return False
    if s.attr("form") == "masked" or s.attr("src_dtype") not in (None, s.attr("dtype")):
        return False
    from .core import LOWERINGS
    from .intrinsics import lower_elementwise
    if LOWERINGS.get(s.op) is not lower_elementwise:
        return False
    refs = [a for a in s.args[:-1] if isinstance(a, ir.LocalRef)]
    return all(r.memory == Memory.UB and r.dtype == s.attr("dtype") for r in refs)


def run_at(stmts, k: int) -> Optional[list]:
    """The run starting at ``stmts[k]``, else None: the statements from ``stmts[k]`` up to
    and including the last one that holds a fusible instruction, where every statement is an
    ``Assign``, a fusible instruction or a ``Block`` made only of such statements (an inlined
    kernel function or an unrolled ``static_range``: nothing leaves it early), with two or more
    instructions in all, of one dtype and one count (``_Scan``). A run may start with the
    assignments before its first instruction (a call binding its parameters: then the first
    call's count is the caller's, as the later calls' are); a sequence of assignments is
    scanned once, from its first."""
    first = stmts[k]
    if not jit.fusion_enabled():
        return None
    if type(first) is ir.Assign:
        if k and type(stmts[k - 1]) is ir.Assign:
            return None
    elif type(first) is not ir.Block and not _fusible(first):
        return None
    scan = _Scan()
    run: list = []
    end = 0
    for s in stmts[k:]:
        before = len(scan.instructions)
        if not scan.take(s):
            break
        run.append(s)
        if len(scan.instructions) > before:
            end = len(run)
    return run[:end] if len(scan.instructions) >= 2 else None


class _Scan:
    """The instructions of a run and their operands as *canonical* expressions: each load of
    a variable that a statement of the run assigned is replaced by the value assigned (itself
    canonical), so that an expression means the same value wherever it appears in the run (the
    other variables keep their values throughout). Two operands with equal canonical address
    expressions are then the same tensor at run time."""

    def __init__(self):
        self.env: dict = {}              # Var -> canonical expression of its current value
        self.instructions: list = []     # (Intrinsic, canonical address of each LocalRef)
        self.tags: list = []             # per instruction: {operand position: canonical tag}
        self.dtype = self.count = None

    def take(self, s) -> bool:
        """Add statement ``s`` to the run (False, and nothing added: it cannot join)."""
        if type(s) is ir.Assign:
            self.env[s.var] = self.canonical(s.value)
            return True
        if type(s) is ir.Block:
            saved = (dict(self.env), list(self.instructions), list(self.tags), self.dtype,
                     self.count)
            if all(self.take(t) for t in s.body):
                return True
            self.env, self.instructions, self.tags, self.dtype, self.count = saved
            return False
        if not _fusible(s):
            return False
        count = _count_value(self.canonical(s.args[-1]))
        if self.instructions and (s.attr("dtype") != self.dtype or count != self.count):
            return False
        self.dtype, self.count = s.attr("dtype"), count
        refs, _ = _operands(s)
        self.instructions.append((s, [self.canonical(r.addr) for r in refs]))
        self.tags.append({which: self.canonical(a.tag) for which, a in enumerate(s.args)
                          if isinstance(a, ir.LocalRef)})
        return True

    def canonical(self, e):
        if type(e) is ir.Load:
            return self.env.get(e.var, e)
        if type(e) in (ir.Bin, ir.Cmp, ir.Un, ir.Cast, ir.Select):
            return dataclasses.replace(e, **{f.name: self.canonical(getattr(e, f.name))
                                             for f in dataclasses.fields(e)
                                             if f.name in ("a", "b", "cond")})
        return e


def _count_value(e):
    """A count expression without what only its error message would name (a checked cast's
    ``what``): two counts equal by this have the same value."""
    if isinstance(e, ir.Cast) and getattr(e, "what", None):
        return dataclasses.replace(e, what="")
    return e


def _operands(s: ir.Intrinsic) -> tuple[list, list]:
    """(LocalRef operands, dst first; scalar operands) of an element-wise instruction."""
    refs = [a for a in s.args[:-1] if isinstance(a, ir.LocalRef)]
    scalars = [a for a in s.args[:-1] if not isinstance(a, ir.LocalRef)]
    return refs, scalars


def _shape(instructions) -> tuple[tuple, list]:
    """The run's structure (op names and which operand is which tensor), the key of its fused
    loop, and the tensors' canonical address expressions in order of first use."""
    keys: list = []
    ops = []
    for s, addrs in instructions:
        slots = []
        for a in addrs:
            if a not in keys:
                keys.append(a)
            slots.append(keys.index(a))
        ops.append((s.op, tuple(slots), len(_operands(s)[1])))
    return (instructions[0][0].attr("dtype").name, tuple(ops)), keys


def redundant_uses(scan: _Scan) -> list:
    """Per instruction of a run, the (which, write) queue-tensor uses whose check and effect
    (``rtfuncs.tensor_use``) other instructions of the run make, so their calls are left out.

    Inside a run only its own pipe's instructions run (and scalar assignments), so a queue
    tensor's state (freed or not, its generation, the other pipes' pending writes) is the same
    at every instruction: the first use of a tensor (equal canonical tags are the same tensor)
    checks that it was not freed, and its first read that no other pipe's write is pending;
    later reads check the same again. A write records the pipe as a writer (the first write
    does) and its site, which a hand-over error names: the site the first read can see (the
    last write before it, or in its instruction, whose reads come first) and the last write's,
    which the run leaves behind. So a read after a read of the same tensor is left out, and a
    write that is not the tensor's first use and whose site no kept check or later
    instruction sees. Every error is raised by the instruction and names the sites it did
    before, and the state after the run is the same."""
    from .intrinsics import queue_uses
    uses = []
    writes: dict = {}         # key -> the instructions that write it, in order
    first_read: dict = {}     # key -> the first instruction that reads it
    for i, ((s, _), tags) in enumerate(zip(scan.instructions, scan.tags)):
        pipe, tracked = queue_uses(s.op, s.args)
        uses.append([((tags[which], pipe), which, write) for which, _, write in tracked])
        for key, _, write in uses[-1]:
            if write:
                writes.setdefault(key, []).append(i)
            else:
                first_read.setdefault(key, i)

    def site_seen(key, i) -> bool:
        """Whether the site of instruction i's write of key is read: by the first read (before
        the next write, or in the next write's instruction) or after the run."""
        later = [j for j in writes[key] if j > i]
        if not later:
            return True
        return i < first_read.get(key, -1) <= later[0]

    used, read = set(), set()
    redundant = []
    for i, instruction_uses in enumerate(uses):
        skip = set()
        for key, which, write in instruction_uses:
            if (key in read) if not write else (key in used and not site_seen(key, i)):
                skip.add((which, write))
            used.add(key)
            if not write:
                read.add(key)
        redundant.append(frozenset(skip))
    return redundant


def lower_run(cg, run) -> None:
    """Lower a run found by ``run_at``: its statements in order, each instruction as its
    loop-less library call (the assignments and the scalar clock's updates exactly where
    ``Codegen.block`` makes them), then one fused loop."""
    from .intrinsics import call_checked
    from .lower_readonly import guard_gm_write
    from .vector_ops import deferred_op_name, op_signature
    scan = _Scan()
    for s in run:
        scan.take(s)
    dtype = scan.dtype
    shape, keys = _shape(scan.instructions)
    tensor_addr: dict = {}      # canonical address -> its value where the run first names it
    per_op = []
    redundant = iter(redundant_uses(scan))

    def instruction(s, canonical):
        guard_gm_write(cg, s)
        spec = REGISTRY[s.op]
        refs, scalar_exprs = _operands(s)
        addrs = [cg.b.sext(cg.expr(r.addr), I64) for r in refs]
        for key, a in zip(canonical, addrs):
            tensor_addr.setdefault(key, a)
        scalars = [cg.expr(e) for e in scalar_exprs]
        count = cg._as_i64(cg.expr(s.args[-1]))
        name = deferred_op_name(spec, dtype)
        fn = cg.module.globals.get(name) or L.Function(cg.module, op_signature(spec, dtype),
                                                       name=name)
        call_checked(cg, fn, addrs + scalars + [count], s.op, tuple(spec.forms[0]),
                     operands=s.args, redundant=next(redundant))
        per_op.append((scalars, count))

    canonical = iter(addrs for _, addrs in scan.instructions)

    def statements(stmts):      # as Codegen.block lowers them
        for s in stmts:
            if cg.b.block.is_terminated:
                cg.b.position_at_end(cg.func.append_basic_block("unreachable"))
            cg.cur_loc = s.loc
            if type(s) is ir.Assign:
                cg.s_assign(s)
                continue
            cg.flush_scalar()
            if type(s) is ir.Block:     # nothing in it leaves early: no label, no end block
                statements(s.body)
                cg.flush_scalar()
            else:
                instruction(s, next(canonical))
    statements(run)
    b = cg.b
    base = cg.ld(abi.MEM_BASE + int(Memory.UB))
    ptrs = [b.inttoptr(b.add(base, tensor_addr[k]), PTR) for k in keys]
    b.call(fused_run(cg.module, shape), ptrs + [v for sc, _ in per_op for v in sc]
           + [per_op[-1][1]])


def _name(shape) -> str:
    import hashlib
    return f"asc_fused_{hashlib.sha256(repr(shape).encode()).hexdigest()[:12]}"


def _signature(shape) -> tuple[L.FunctionType, int]:
    """``void (ptr tensor…, scalars…, i64 n)`` of a run's shape, and its tensor count."""
    dtype_name, ops = shape
    n_tensors = 1 + max(slot for _, slots, _ in ops for slot in slots)
    n_scalars = sum(k for _, _, k in ops)
    mt = memory_type(_dtype(dtype_name))
    return L.FunctionType(L.VoidType(), [PTR] * n_tensors + [mt] * n_scalars + [I64]), n_tensors


def fused_run(module: L.Module, shape) -> L.Function:
    """The element loops of a run of ``shape`` (one function per shape in a module, not
    inlined: it is vectorised once): the fused loop when the tensors are pairwise disjoint
    over the count, else each instruction's own (overlap-safe) library loop in turn."""
    from . import runtime_lib
    name = _name(shape)
    fn = module.globals.get(name)
    if fn is not None:
        return fn
    dtype_name, ops = shape
    dtype = _dtype(dtype_name)
    fnty, n_tensors = _signature(shape)
    fn = L.Function(module, fnty, name=name)
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    # optnone: a few compares and calls, run once per run; optimised, this function alone
    # took 8 ms of LLVM's time (measured), the fused loop it calls is optimised on its own
    fn.attributes.add("noinline")
    fn.attributes.add("optnone")
    args = list(fn.args)
    tensors, scalar_args, n = args[:n_tensors], args[n_tensors:-1], args[-1]
    b = L.IRBuilder(fn.append_basic_block("entry"))
    nbytes = b.mul(n, L.Constant(I64, dtype.sizeof()))
    addrs = [b.ptrtoint(t, I64) for t in tensors]
    disjoint = L.Constant(I1, 1)
    for i in range(n_tensors):
        for j in range(i + 1, n_tensors):
            x, y = addrs[i], addrs[j]
            disjoint = b.and_(disjoint, b.or_(b.icmp_signed("<=", b.add(x, nbytes), y),
                                              b.icmp_signed("<=", b.add(y, nbytes), x)))
    with b.if_else(disjoint) as (fused, separate):
        with fused:
            b.call(fused_loop(module, shape), args)
        with separate:
            scalars = iter(scalar_args)
            for op, slots, n_scalar in ops:
                spec = REGISTRY[op]
                loop_name = runtime_lib.function_name(spec.name, dtype)
                loop = module.globals.get(loop_name) or L.Function(
                    module, runtime_lib.signature(spec, dtype), name=loop_name)
                b.call(loop, [tensors[k] for k in slots] + [next(scalars) for _ in
                                                             range(n_scalar)] + [n])
    b.ret_void()
    return fn


def fused_loop(module: L.Module, shape) -> L.Function:
    """``void (ptr tensor…, scalars…, i64 n)``: the fused element loop of a run's ``shape``
    (called by ``fused_run`` when the tensors are pairwise disjoint, hence ``noalias``)."""
    dtype_name, ops = shape
    dtype = _dtype(dtype_name)
    name = _name(shape) + "_loop"
    existing = module.globals.get(name)
    if existing is not None:
        return existing
    mt = memory_type(dtype)
    fnty, n_tensors = _signature(shape)
    fn = L.Function(module, fnty, name=name)
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    fn.attributes.add("noinline")   # compiled with its own attributes, not its caller's
    tune_fused_loop(fn)             # vector width (and optsize on AMD hosts): types.py
    args = list(fn.args)
    for a in args[:n_tensors]:
        a.add_attribute("noalias")
    tensors, scalar_args, n = args[:n_tensors], args[n_tensors:-1], args[-1]
    b = L.IRBuilder(fn.append_basic_block("entry"))
    eb = ElemBuilder(b, module, dtype)

    def element(i):
        current: dict = {}      # tensor slot -> its element's value so far
        written: list = []

        def value(slot):
            if slot not in current:
                current[slot] = b.load(b.gep(tensors[slot], [i], source_etype=mt), typ=mt)
            return current[slot]

        scalar_iter = iter(scalar_args)
        for op, slots, n_scalar in ops:
            spec = REGISTRY[op]
            dst, srcs = slots[0], slots[1:]
            vals = [value(dst)] if spec.family == Family.AXPY else []
            vals += [value(s_) for s_ in srcs]
            vals += [next(scalar_iter) for _ in range(n_scalar)]
            current[dst] = spec.elem(eb, *vals)
            if dst not in written:
                written.append(dst)
        for slot in written:
            b.store(current[slot], b.gep(tensors[slot], [i], source_etype=mt))
    counted_loop(b, n, element)
    b.ret_void()
    return fn


def _dtype(name: str):
    from ...dsl import types as T
    return next(v for v in vars(T).values() if isinstance(v, T.DataType) and v.name == name)
