"""Lower the kernel IR to LLVM IR with llvmlite's IRBuilder.

The kernel becomes ``i64 <name>(ptr ctx)`` (see ``simulator/abi.py``). Scalar variables are
allocas (promoted to registers by O3); control flow is structured. Intrinsics lower through
``LOWERINGS`` (filled by ``intrinsics.py``). Every run-time check stores an error code and the
id of an error *site* (the IR statement's source location) into ctx and returns; the runtime
turns that into an exception naming the kernel line.
"""
from __future__ import annotations

from dataclasses import field

from ...fieldwise import Fieldwise, fieldwise_dataclass
from typing import Callable, Optional

from llvmlite import ir as L

from ...dsl.types import DataType, bool_, float32, int32, int64
from ...simulator import abi
from .. import ir
from ..errors import InternalCompilerError, Site, SourceLoc
from .types import I1, I8, I32, I64, PTR, F64, ElemBuilder, const, convert, intrinsic, llvm_type

LOWERINGS: dict[str, Callable] = {}


def lowering(*names: str):
    """Register the codegen routine of one or more intrinsics."""
    def deco(fn):
        for n in names:
            LOWERINGS[n] = fn
        return fn
    return deco


@fieldwise_dataclass
class CodegenResult(Fieldwise):
    """A kernel's LLVM module, the name of its entry function and its error sites."""

    module: L.Module
    entry_name: str
    sites: list[Site] = field(default_factory=list)


def counted_loop(b: L.IRBuilder, func: L.Function, n: L.Value, body) -> None:
    """``for i in range(n): body(i)`` (i64 ``n``) at ``b``'s position in ``func``; ``b`` ends
    after the loop. For library functions with any signature (``rtfuncs.counted`` is the same
    for an FnBuilder)."""
    pre = b.block
    head = func.append_basic_block("loop")
    done = func.append_basic_block("loop.end")
    b.cbranch(b.icmp_signed(">", n, L.Constant(I64, 0)), head, done)
    b.position_at_end(head)
    i = b.phi(I64)
    i.add_incoming(L.Constant(I64, 0), pre)
    body(i)
    nxt = b.add(i, L.Constant(I64, 1))
    i.add_incoming(nxt, b.block)
    b.cbranch(b.icmp_signed("<", nxt, n), head, done)
    b.position_at_end(done)


#: branch weights of a branch to an error exit (taken 1 time in 100), as ``if_then``'s
#: ``likely=False`` sets them
_UNLIKELY = (1, 99)


class FnBuilder:
    """An LLVM function whose first argument is the ctx array (kernels and runtime functions).

    Provides ctx slot access and ``fail_if``: on failure the error code, site and up to three
    values are stored in ctx and the function returns the error code.
    """

    def __init__(self, module: L.Module, func: L.Function):
        self.module = module
        self.func = func
        self.ctx = func.args[0]
        self.ctx.name = "ctx"
        entry = func.append_basic_block("entry")
        self.alloca_builder = L.IRBuilder(entry)
        body = func.append_basic_block("body")
        self.b = L.IRBuilder(body)
        self.fail_block = func.append_basic_block("fail")

    # ------------------------------------------------------------------ ctx access
    def slot_ptr(self, index) -> L.Value:
        idx = index if isinstance(index, L.Value) else L.Constant(I64, index)
        return self.b.gep(self.ctx, [idx], source_etype=I64, inbounds=True)

    def ld(self, index) -> L.Value:
        return self.b.load(self.slot_ptr(index), typ=I64)

    def st(self, index, value: L.Value) -> None:
        self.b.store(self._as_i64(value), self.slot_ptr(index))

    def ctx_ptr(self, index) -> L.Value:
        """A header slot holding an address, as a pointer."""
        return self.b.inttoptr(self.ld(index), PTR)

    def smax(self, x: L.Value, y: L.Value) -> L.Value:
        """The larger of two signed integers."""
        return self.b.select(self.b.icmp_signed(">", x, y), x, y)

    def smin(self, x: L.Value, y: L.Value) -> L.Value:
        """The smaller of two signed integers."""
        return self.b.select(self.b.icmp_signed("<", x, y), x, y)

    def sat_add(self, x: L.Value, y: L.Value) -> L.Value:
        """x + y of i64 values, saturating at the i64 limits instead of wrapping: an extent
        computed this way can only grow past a bound, never wrap back inside it."""
        fn = intrinsic(self.module, "llvm.sadd.sat.i64", I64, [I64, I64])
        return self.b.call(fn, [self._as_i64(x), self._as_i64(y)])

    def sat_mul(self, x: L.Value, y: L.Value) -> L.Value:
        """x * y of i64 values, saturating at the i64 limits (see ``sat_add``)."""
        fn = intrinsic(self.module, "llvm.smul.fix.sat.i64", I64, [I64, I64, I32])
        return self.b.call(fn, [self._as_i64(x), self._as_i64(y), L.Constant(I32, 0)])

    def ceil_div(self, x: L.Value, y: L.Value) -> L.Value:
        """ceil(x / y) of i64 values for x >= 0; a divisor below 1 counts as 1."""
        one = self.i64(1)
        y = self.smax(y, one)
        q = self.b.sdiv(x, y)   # no x + y - 1: it must not overflow for x near 2**63
        return self.b.add(q, self.b.zext(self.b.icmp_signed(">", self.b.srem(x, y),
                                                            self.i64(0)), I64))

    def i64(self, v: int) -> L.Constant:
        return L.Constant(I64, v)

    def _as_i64(self, v) -> L.Value:
        if isinstance(v, int):
            return self.i64(v)
        if v.type == I64:
            return v
        if v.type == I1:
            return self.b.zext(v, I64)
        return self.b.sext(v, I64)

    # ------------------------------------------------------------------ errors
    def fail_with(self, cond: L.Value, code: abi.ErrorCode, site: L.Value, a=None, b=None,
                  c=None) -> None:
        """If ``cond`` holds at run time, record the error and return its code."""
        err = self.func.append_basic_block("err")
        ok = self.func.append_basic_block("ok")
        self.unlikely(self.b.cbranch(cond, err, ok))
        self.b.position_at_end(err)
        self.st(abi.ERR_CODE, self.i64(int(code)))
        self.st(abi.ERR_SITE, site)
        for slot, v in ((abi.ERR_A, a), (abi.ERR_B, b), (abi.ERR_C, c)):
            if v is not None:
                self.st(slot, v)
        self.b.branch(self.fail_block)
        self.b.position_at_end(ok)

    def leave_on_error(self, rc: L.Value) -> None:
        """After a call to a runtime function: leave if it reported an error."""
        ok = self.func.append_basic_block("ok")
        self.unlikely(self.b.cbranch(self.b.icmp_signed("!=", rc, self.i64(0)),
                                     self.fail_block, ok))
        self.b.position_at_end(ok)

    def unlikely(self, branch) -> None:
        """Mark a conditional branch's true edge as taken 1 time in 100 (the metadata node
        ``set_weights`` would make, built once per module instead of once per branch)."""
        md = getattr(self.module, "_asc_unlikely", None)
        if md is None:
            md = self.module._asc_unlikely = self.module.add_metadata(
                [L.MetaDataString(self.module, "branch_weights")] +
                [L.Constant(I32, w) for w in _UNLIKELY])
        branch.set_metadata("prof", md)

    def finish(self) -> None:
        """Terminate the entry and fail blocks (call after the body returned)."""
        self.alloca_builder.branch(self.func.basic_blocks[1])
        fb = L.IRBuilder(self.fail_block)
        fb.ret(fb.load(fb.gep(self.ctx, [self.i64(abi.ERR_CODE)], source_etype=I64), typ=I64))
        for blk in self.func.blocks:
            if not blk.is_terminated:
                L.IRBuilder(blk).unreachable()


class Codegen(FnBuilder):
    def __init__(self, fn: ir.Function, timing=None):
        self.fn = fn
        module = L.Module(name=fn.name)
        self.sites: list[Site] = []
        self.entry_name = "asc_kernel_" + "".join(c if c.isalnum() else "_" for c in fn.name)
        func = L.Function(module, L.FunctionType(I64, [PTR]), name=self.entry_name)
        super().__init__(module, func)
        self.ctx.add_attribute("noalias")
        self.vars: dict[ir.Var, L.AllocaInstr] = {}
        self.loops: list[tuple[L.Block, L.Block]] = []
        self.labels: dict[str, L.Block] = {}
        self.timing = timing
        self.nq = fn.num_queues
        self.cur_loc: Optional[SourceLoc] = None
        self.pending_scalar = 0
        self.slots: dict[int, L.Value] = {}
        self.ssa = single_assignments(fn.body)
        self.values: dict[ir.Var, L.Value] = {}

    def slot_ptr(self, index) -> L.Value:
        """A ctx slot's address: one GEP in the entry block per constant slot of the kernel
        function (a few hundred fewer instructions to build, print and parse; LLVM folds the
        offsets into the accesses either way)."""
        if not isinstance(index, int) or self.b.function is not self.func:
            return super().slot_ptr(index)
        ptr = self.slots.get(index)
        if ptr is None:
            ptr = self.slots[index] = self.alloca_builder.gep(
                self.ctx, [L.Constant(I64, index)], source_etype=I64, inbounds=True)
        return ptr

    def site(self, op: str, detail: tuple = (), tensors: tuple = ()) -> int:
        """Record a place that can fail (the current statement's location) and its id;
        ``tensors``: ``TensorInfo`` (or None) per operand position, for messages."""
        self.sites.append(Site(self.cur_loc, op, detail, tensors))
        return len(self.sites) - 1

    def fail_if(self, cond: L.Value, code: abi.ErrorCode, op: str, a=None, b=None, c=None,
                detail: tuple = ()) -> None:
        """If ``cond`` holds at run time, record the error at this statement and leave."""
        self.fail_with(cond, code, self.i64(self.site(op, detail)), a, b, c)

    # ------------------------------------------------------------------ driver
    def run(self) -> CodegenResult:
        self.st(abi.ERR_CODE, self.i64(0))
        self.block(self.fn.body)
        self.flush_scalar()
        LOWERINGS["__kernel_end__"](self, None)
        self.b.ret(self.i64(0))
        self.finish()
        return CodegenResult(self.module, self.entry_name, self.sites)

    def var(self, v: ir.Var) -> L.AllocaInstr:
        slot = self.vars.get(v)
        if slot is None:
            slot = self.alloca_builder.alloca(llvm_type(v.dtype), name=v.name)
            self.vars[v] = slot
        return slot

    # ------------------------------------------------------------------ statements
    def block(self, stmts) -> None:
        from . import fusion
        stmts, k = tuple(stmts), 0
        while k < len(stmts):
            s = stmts[k]
            if self.b.block.is_terminated:
                self.b.position_at_end(self.func.append_basic_block("unreachable"))
            self.cur_loc = s.loc
            if type(s) is not ir.Assign:
                self.flush_scalar()
            run = fusion.run_at(stmts, k)
            if run is not None:   # vector instructions whose element loops run as one
                fusion.lower_run(self, run)
                k += len(run)
                continue
            STMT_LOWER[type(s)](self, s)
            k += 1
        self.flush_scalar()

    def scalar_cost(self, ops: int) -> None:
        """Charge ``ops`` scalar ALU operations (emitted in bulk by ``flush_scalar``)."""
        self.pending_scalar += ops

    def flush_scalar(self) -> None:
        """Add the pending scalar work to the timing model's scalar clock (one update per
        straight-line stretch of code: before calls, branches and block ends)."""
        if self.pending_scalar and self.timing is not None and not self.b.block.is_terminated:
            self.timing.scalar(self, self.pending_scalar)
        self.pending_scalar = 0

    def s_assign(self, s: ir.Assign) -> None:
        self.scalar_cost(count_ops(s.value))
        value = self.expr(s.value)
        if s.var in self.ssa:          # its value dominates every read: no alloca
            self.values[s.var] = value
        else:
            self.b.store(value, self.var(s.var))

    def s_if(self, s: ir.If) -> None:
        self.scalar_cost(1 + count_ops(s.cond))
        cond = self.expr(s.cond)
        then_bb = self.func.append_basic_block("then")
        else_bb = self.func.append_basic_block("else")
        join = self.func.append_basic_block("endif")
        self.b.cbranch(cond, then_bb, else_bb)
        for bb, body in ((then_bb, s.then), (else_bb, s.orelse)):
            self.b.position_at_end(bb)
            self.block(body)
            if not self.b.block.is_terminated:
                self.b.branch(join)
        self.b.position_at_end(join)

    def s_for(self, s: ir.ForRange) -> None:
        t = llvm_type(s.var.dtype)
        start, stop, step = (self.expr(e) for e in (s.start, s.stop, s.step))
        if isinstance(s.step, ir.Const):
            up = L.Constant(I1, int(s.step.value > 0))
        else:
            self.fail_if(self.b.icmp_signed("==", step, L.Constant(t, 0)), abi.ErrorCode.ZERO_STEP,
                         "range")
            up = self.b.icmp_signed(">", step, L.Constant(t, 0))
        counter = self.alloca_builder.alloca(t, name=f"{s.var.name}.ctr")
        self.b.store(start, counter)
        head = self.func.append_basic_block("for.head")
        body = self.func.append_basic_block("for.body")
        latch = self.func.append_basic_block("for.latch")
        done = self.func.append_basic_block("for.end")
        self.b.branch(head)
        self.b.position_at_end(head)
        i = self.b.load(counter, typ=t)
        lt = self.b.icmp_signed("<", i, stop)
        gt = self.b.icmp_signed(">", i, stop)
        self.b.cbranch(self.b.select(up, lt, gt), body, done)
        self.b.position_at_end(body)
        self.spend_iteration("for")
        self.scalar_cost(2)  # increment, compare and branch
        self.b.store(i, self.var(s.var))
        self.loops.append((latch, done))
        self.block(s.body)
        self.loops.pop()
        if not self.b.block.is_terminated:
            self.b.branch(latch)
        self.b.position_at_end(latch)
        self.b.store(self.b.add(self.b.load(counter, typ=t), step), counter)
        self.b.branch(head)
        self.b.position_at_end(done)

    def spend_iteration(self, kind: str) -> None:
        """Take one iteration from the block's loop budget (shared by all its loops); an
        exhausted budget is a LoopLimitError, so a loop that never ends cannot hang a launch."""
        # an atomic (monotonic) load: the budget is never kept in a register, so a stop
        # written by another thread (the watchdog, Ctrl-C; both repeat it until the launch
        # ends, in case this store overwrites one) is seen at the next iteration
        slot = self.slot_ptr(abi.LOOP_BUDGET)
        left = self.b.sub(self.b.load_atomic(slot, "monotonic", 8, typ=I64), self.i64(1))
        self.b.store(left, slot)
        self.fail_if(self.b.icmp_signed("<", left, self.i64(0)), abi.ErrorCode.LOOP_LIMIT, kind)

    def s_while(self, s: ir.While) -> None:
        head = self.func.append_basic_block("while.head")
        body = self.func.append_basic_block("while.body")
        done = self.func.append_basic_block("while.end")
        self.b.branch(head)
        self.b.position_at_end(head)
        self.cur_loc = s.loc
        self.spend_iteration("while")
        self.block(s.pre)
        self.scalar_cost(1 + count_ops(s.cond))
        self.b.cbranch(self.expr(s.cond), body, done)
        self.b.position_at_end(body)
        self.loops.append((head, done))
        self.block(s.body)
        self.loops.pop()
        if not self.b.block.is_terminated:
            self.b.branch(head)
        self.b.position_at_end(done)

    def s_break(self, s) -> None:
        self.b.branch(self.loops[-1][1])

    def s_continue(self, s) -> None:
        self.b.branch(self.loops[-1][0])

    def s_block(self, s: ir.Block) -> None:
        end = self.func.append_basic_block(f"{s.label}.end")
        self.labels[s.label] = end
        saved_loops = self.loops
        self.block(s.body)
        self.loops = saved_loops
        if not self.b.block.is_terminated:
            self.b.branch(end)
        self.b.position_at_end(end)

    def s_exit(self, s: ir.Exit) -> None:
        self.b.branch(self.labels[s.label])

    def s_intrinsic(self, s: ir.Intrinsic) -> None:
        fn = LOWERINGS.get(s.op)
        if fn is None:
            raise InternalCompilerError(f"no lowering for intrinsic '{s.op}'", s.loc)
        guard_gm_write(self, s)   # a GM write whose argument is chosen at run time: check it
        fn(self, s)

    # ------------------------------------------------------------------ expressions
    def expr(self, e) -> L.Value:
        return EXPR_LOWER[type(e)](self, e)

    def e_const(self, e: ir.Const) -> L.Value:
        return const(e.dtype, e.value)

    def e_load(self, e: ir.Load) -> L.Value:
        value = self.values.get(e.var)
        if value is not None:
            return value
        return self.b.load(self.var(e.var), typ=llvm_type(e.var.dtype))

    def e_special(self, e: ir.Special) -> L.Value:
        slot = {"block_idx": abi.BLOCK_IDX, "block_num": abi.BLOCK_NUM,
                "sub_block_idx": abi.SUB_BLOCK_IDX, "sub_block_num": abi.SUB_BLOCK_NUM,
                "core_type": abi.CORE_TYPE, "system_cycle": abi.T_SCALAR}[e.name]
        return self.ld(slot)

    def e_scalar_arg(self, e: ir.ScalarArg) -> L.Value:
        base = self.ctx_ptr(abi.SCALARS)
        raw = self.b.load(self.b.gep(base, [self.i64(e.index)], source_etype=I64), typ=I64)
        if e.dtype.is_float:
            return convert(self.b, self.b.bitcast(raw, F64), DataType("float64", 64, "float"),
                           e.dtype)
        if e.dtype == bool_:
            return self.b.icmp_signed("!=", raw, self.i64(0))
        return convert(self.b, raw, int64, e.dtype)

    def e_cast(self, e: ir.Cast) -> L.Value:
        value = self.expr(e.a)
        if e.checked:   # a narrowing that must not wrap: stop the kernel if it does not fit
            wide = self._as_i64(value) if e.a.dtype.is_signed or e.a.dtype.bits == 64 \
                else self.b.zext(value, I64)
            lo, hi = _int_range(e.dtype)
            outside = self.b.or_(self.b.icmp_signed("<", wide, self.i64(lo)),
                                 self.b.icmp_signed(">", wide, self.i64(hi)))
            if not e.a.dtype.is_signed and e.a.dtype.bits == 64:   # uint64 above 2**63
                outside = self.b.or_(outside, self.b.icmp_signed("<", wide, self.i64(0)))
            self.fail_if(outside, abi.ErrorCode.VALUE_RANGE, "value", wide, self.i64(lo),
                         self.i64(hi), (e.what or "a value",))
        return convert(self.b, value, e.a.dtype, e.dtype)

    def e_select(self, e: ir.Select) -> L.Value:
        return self.b.select(self.expr(e.cond), self.expr(e.a), self.expr(e.b))

    def e_cmp(self, e: ir.Cmp) -> L.Value:
        a, c = self.expr(e.a), self.expr(e.b)
        op = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}[e.op]
        if e.a.dtype.is_float:
            if op == "!=":
                return self.b.fcmp_unordered(op, a, c)
            return self.b.fcmp_ordered(op, a, c)
        if e.a.dtype.is_signed or e.a.dtype == bool_:
            return self.b.icmp_signed(op, a, c) if e.a.dtype != bool_ else \
                self.b.icmp_unsigned(op, a, c)
        return self.b.icmp_unsigned(op, a, c)

    def e_un(self, e: ir.Un) -> L.Value:
        a = self.expr(e.a)
        t = llvm_type(e.dtype)
        if e.op == "not":
            return self.b.xor(a, L.Constant(I1, 1))
        if e.op == "invert":
            return self.b.xor(a, L.Constant(t, -1))
        if e.op == "neg":
            return self.b.fneg(a) if e.dtype.is_float else self.b.neg(a)
        eb = ElemBuilder(self.b, self.module, e.dtype)
        return eb.abs(a)

    def e_bin(self, e: ir.Bin) -> L.Value:
        a, c = self.expr(e.a), self.expr(e.b)
        if e.op in _FOLDED and isinstance(a, L.Constant) and isinstance(c, L.Constant) \
                and isinstance(a.constant, int) and isinstance(c.constant, int) \
                and not e.dtype.is_float and e.dtype.bits >= 8:
            # two integer constants (static_range offsets times sizes): the wrapped result
            return L.Constant(a.type, _wrap(_FOLDED[e.op](a.constant, c.constant),
                                            e.dtype.bits))
        return _BIN_LOWER[(e.op, e.dtype.is_float)](self, a, c, e.dtype)


# ----------------------------------------------------------------------------- scalar binary ops
def _int_div_parts(cg: Codegen, a, c, dt: DataType, want_mod: bool):
    t = llvm_type(dt)
    zero, one, minus1 = (L.Constant(t, v) for v in (0, 1, -1))
    if isinstance(c, L.Constant) and isinstance(c.constant, int) and c.constant > 0:
        # a positive constant divisor (sizeof, tile lengths): no zero or -1 case, and the
        # remainder has the divisor's sign exactly when it is negative. The site the zero
        # check would have had is still taken, so later sites keep their numbers.
        cg.site("%" if want_mod else "//")
        q, r = cg.b.sdiv(a, c), cg.b.srem(a, c)
        negative = cg.b.icmp_signed("<", r, zero)
        return cg.b.select(negative, cg.b.add(r, c), r) if want_mod else \
            cg.b.select(negative, cg.b.sub(q, one), q)
    cg.fail_if(cg.b.icmp_signed("==", c, zero), abi.ErrorCode.DIVISION_BY_ZERO,
               "%" if want_mod else "//")
    is_m1 = cg.b.icmp_signed("==", c, minus1)
    safe = cg.b.select(is_m1, one, c)  # avoid the INT_MIN / -1 trap
    q = cg.b.sdiv(a, safe)
    r = cg.b.srem(a, safe)
    adjust = cg.b.and_(cg.b.icmp_signed("!=", r, zero),
                       cg.b.icmp_signed("!=", cg.b.icmp_signed("<", r, zero),
                                        cg.b.icmp_signed("<", c, zero)))
    if want_mod:
        res = cg.b.select(adjust, cg.b.add(r, c), r)
        return cg.b.select(is_m1, zero, res)
    res = cg.b.select(adjust, cg.b.sub(q, one), q)
    return cg.b.select(is_m1, cg.b.neg(a), res)


def _int_trunc_parts(cg: Codegen, a, c, dt: DataType, want_mod: bool):
    """C's ``/`` and ``%`` (truncating; the C++ front end): the error for a zero divisor as
    ``//`` reports it, INT_MIN / -1 without a trap."""
    t = llvm_type(dt)
    zero, one, minus1 = (L.Constant(t, v) for v in (0, 1, -1))
    if isinstance(c, L.Constant) and isinstance(c.constant, int) and c.constant > 0:
        cg.site("%" if want_mod else "/")
        return cg.b.srem(a, c) if want_mod else cg.b.sdiv(a, c)
    cg.fail_if(cg.b.icmp_signed("==", c, zero), abi.ErrorCode.DIVISION_BY_ZERO,
               "%" if want_mod else "/")
    is_m1 = cg.b.icmp_signed("==", c, minus1)
    safe = cg.b.select(is_m1, one, c)
    if want_mod:
        return cg.b.select(is_m1, zero, cg.b.srem(a, safe))
    return cg.b.select(is_m1, cg.b.neg(a), cg.b.sdiv(a, safe))


def _shift(cg: Codegen, a, c, dt: DataType, left: bool):
    t = a.type
    c = cg.b.trunc(c, t) if c.type.width > t.width else (
        cg.b.sext(c, t) if c.type.width < t.width else c)
    width = L.Constant(t, t.width)
    big = cg.b.icmp_unsigned(">=", c, width)  # also catches negative counts
    safe = cg.b.select(big, L.Constant(t, 0), c)
    if left:
        return cg.b.select(big, L.Constant(t, 0), cg.b.shl(a, safe))
    sign = cg.b.ashr(a, L.Constant(t, t.width - 1))
    return cg.b.select(big, sign, cg.b.ashr(a, safe))


def _float_floordiv(cg, a, c, dt):
    return cg.b.call(intrinsic(cg.module, f"llvm.floor.{_fs(a)}", a.type, [a.type]),
                     [cg.b.fdiv(a, c)])


def _float_mod(cg, a, c, dt):
    q = _float_floordiv(cg, a, c, dt)
    return cg.b.fsub(a, cg.b.fmul(q, c))


def _fs(v) -> str:
    return {L.HalfType(): "f16", L.FloatType(): "f32", L.DoubleType(): "f64"}[v.type]


def _minmax(cg, a, c, dt, name):
    eb = ElemBuilder(cg.b, cg.module, dt)
    if dt.is_float:  # Python's min/max: the first argument unless the second is "better"
        cmp = cg.b.fcmp_ordered("<" if name == "min" else ">", c, a)
        return cg.b.select(cmp, c, a)
    return eb.min(a, c) if name == "min" else eb.max(a, c)


#: integer operations on two constants computed while lowering (two's complement wrap)
_FOLDED = {"add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y}


def _wrap(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


_BIN_LOWER = {
    ("add", False): lambda cg, a, c, dt: cg.b.add(a, c),
    ("add", True): lambda cg, a, c, dt: cg.b.fadd(a, c),
    ("sub", False): lambda cg, a, c, dt: cg.b.sub(a, c),
    ("sub", True): lambda cg, a, c, dt: cg.b.fsub(a, c),
    ("mul", False): lambda cg, a, c, dt: cg.b.mul(a, c),
    ("mul", True): lambda cg, a, c, dt: cg.b.fmul(a, c),
    ("truediv", True): lambda cg, a, c, dt: cg.b.fdiv(a, c),
    ("floordiv", False): lambda cg, a, c, dt: _int_div_parts(cg, a, c, dt, False),
    ("floordiv", True): _float_floordiv,
    ("mod", False): lambda cg, a, c, dt: _int_div_parts(cg, a, c, dt, True),
    ("mod", True): _float_mod,
    ("cdiv", False): lambda cg, a, c, dt: _int_trunc_parts(cg, a, c, dt, False),
    ("cmod", False): lambda cg, a, c, dt: _int_trunc_parts(cg, a, c, dt, True),
    ("pow", True): lambda cg, a, c, dt: cg.b.call(
        intrinsic(cg.module, f"llvm.pow.{_fs(a)}", a.type, [a.type, a.type]), [a, c]),
    ("shl", False): lambda cg, a, c, dt: _shift(cg, a, c, dt, True),
    ("shr", False): lambda cg, a, c, dt: _shift(cg, a, c, dt, False),
    ("and", False): lambda cg, a, c, dt: cg.b.and_(a, c),
    ("or", False): lambda cg, a, c, dt: cg.b.or_(a, c),
    ("xor", False): lambda cg, a, c, dt: cg.b.xor(a, c),
    ("min", False): lambda cg, a, c, dt: _minmax(cg, a, c, dt, "min"),
    ("min", True): lambda cg, a, c, dt: _minmax(cg, a, c, dt, "min"),
    ("max", False): lambda cg, a, c, dt: _minmax(cg, a, c, dt, "max"),
    ("max", True): lambda cg, a, c, dt: _minmax(cg, a, c, dt, "max"),
}

STMT_LOWER = {
    ir.Assign: Codegen.s_assign, ir.If: Codegen.s_if, ir.ForRange: Codegen.s_for,
    ir.While: Codegen.s_while, ir.Break: Codegen.s_break, ir.Continue: Codegen.s_continue,
    ir.Block: Codegen.s_block, ir.Exit: Codegen.s_exit, ir.Intrinsic: Codegen.s_intrinsic,
}
EXPR_LOWER = {
    ir.Const: Codegen.e_const, ir.Load: Codegen.e_load, ir.Special: Codegen.e_special,
    ir.ScalarArg: Codegen.e_scalar_arg, ir.Cast: Codegen.e_cast, ir.Select: Codegen.e_select,
    ir.Cmp: Codegen.e_cmp, ir.Un: Codegen.e_un, ir.Bin: Codegen.e_bin,
}


def _int_range(dtype: DataType) -> tuple[int, int]:
    if dtype.is_signed:
        return -(1 << (dtype.bits - 1)), (1 << (dtype.bits - 1)) - 1
    return 0, min((1 << dtype.bits) - 1, (1 << 63) - 1)


def single_assignments(body) -> set:
    """The variables of a kernel body written once, by an ``Assign``, and read only by the
    statements after it in the same statement list (at any depth): the assigned value
    dominates every read, so codegen keeps it as an SSA value instead of an alloca (the code
    LLVM's SROA would make of the alloca). Loop variables and intrinsic results never are."""
    writes: dict = {}
    assigned: dict = {}
    reads: list = []

    def read(x, chain) -> None:
        if isinstance(x, ir.Load):
            reads.append((x.var, chain))
        elif isinstance(x, (ir.Bin, ir.Cmp)):
            read(x.a, chain)
            read(x.b, chain)
        elif isinstance(x, (ir.Un, ir.Cast)):
            read(x.a, chain)
        elif isinstance(x, ir.Select):
            read(x.cond, chain)
            read(x.a, chain)
            read(x.b, chain)
        elif isinstance(x, ir.LocalRef):
            read(x.addr, chain)
            read(x.size, chain)
            read(x.tag, chain)
        elif isinstance(x, ir.GlobalRef):
            read(x.arg, chain)
            read(x.offset, chain)
            read(x.size, chain)
        elif isinstance(x, (tuple, list)):
            for item in x:
                read(item, chain)

    def walk(stmts, chain) -> None:
        for i, st in enumerate(stmts):
            here = chain + ((id(stmts), i),)
            if isinstance(st, ir.Assign):
                writes[st.var] = writes.get(st.var, 0) + 1
                assigned[st.var] = here
                read(st.value, here)
            elif isinstance(st, ir.If):
                read(st.cond, here)
                walk(st.then, here)
                walk(st.orelse, here)
            elif isinstance(st, ir.ForRange):
                writes[st.var] = 2
                read((st.start, st.stop, st.step), here)
                walk(st.body, here)
            elif isinstance(st, ir.While):
                walk(st.pre, here)
                read(st.cond, here)
                walk(st.body, here)
            elif isinstance(st, ir.Block):
                walk(st.body, here)
            elif isinstance(st, ir.Intrinsic):
                for r in st.results:
                    writes[r] = 2
                read(st.args, here)
                read(tuple(value for _, value in st.attrs), here)

    walk(body, ())
    found = {v for v, n in writes.items() if n == 1 and v in assigned}
    for var, chain in reads:
        if var in found:
            at = assigned[var]
            k = len(at) - 1
            if not (len(chain) > k and chain[:k] == at[:k] and chain[k][0] == at[k][0]
                    and chain[k][1] > at[k][1]):
                found.discard(var)
    return found


def count_ops(e) -> int:
    """Scalar ALU operations in an expression (the timing model's scalar cost)."""
    if isinstance(e, (ir.Bin, ir.Cmp)):
        return 1 + count_ops(e.a) + count_ops(e.b)
    if isinstance(e, (ir.Un, ir.Cast)):
        return 1 + count_ops(e.a)
    if isinstance(e, ir.Select):
        return 1 + count_ops(e.cond) + count_ops(e.a) + count_ops(e.b)
    return 0


def generate(fn: ir.Function, timing=None) -> CodegenResult:
    """Lower a verified kernel IR function to an LLVM module."""
    from . import intrinsics  # noqa: F401  (registers LOWERINGS)
    return Codegen(fn, timing).run()


from .lower_readonly import guard_gm_write  # noqa: E402  (it builds on Codegen)
