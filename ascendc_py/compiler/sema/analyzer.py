"""Semantic analysis: walk a kernel's AST as an abstract interpreter and emit the kernel IR.

Compile-time values (ConstExpr parameters, module constants, dtypes, enums, queues) are folded;
everything else becomes IR. Calls to other ``@asc.kernel`` functions are inlined. Errors name
the kernel source line (every AST node carries its ``SourceLoc``).
"""
from __future__ import annotations

import builtins as py_builtins
import contextlib
import difflib
import itertools
from dataclasses import replace

from ...fieldwise import Fieldwise, fieldwise_dataclass
from typing import Any, Optional

from ...dsl.types import DataType, bool_, int32, int64
from .. import ast as A
from .. import ir
from ..errors import (ArgumentError, AssignmentTargetError, ConstantRangeError,
                      InternalCompilerError, KernelCompileError, KernelError, KernelNameError,
                      KernelSyntaxError, KernelTypeError, KernelValueError, MaybeUndefinedError,
                      NotConstantError, OperandKindError, RecursiveCallError, ReturnValueError,
                      SourceLoc, StaticAssertionError, UndefinedNameError,
                      UnsupportedConstructError)
from ..spec import ArgSpec  # noqa: F401  (re-exported)
from . import scalars as S
from .scope import (FunctionScope, assigned_names, field_assigned_names, merge_envs, new_slot,
                    python_to_sval, read_slot, runtime_fields, store_slot, user_tagged_names)
from .values import (BoundMethodV, ConstV, DTypeV, EnumV, GmAddrV, GmTensorV, LocalTensorV,
                     NoneV, PyObjV, QueueV, RtV, StrV, StructV, SVal, TupleV, Undefined)

MAX_INLINE_DEPTH = 32
MAX_UNROLL = 4096


@fieldwise_dataclass
class SemaResult(Fieldwise):
    """The analysed kernel: its IR function, the globals it read and its queues' names."""

    function: ir.Function
    globals_read: dict[tuple[str, ...], Any]
    queue_names: list[str]


class Analyzer:
    """Analyse one kernel (with everything it inlines) for one argument specialisation."""

    def __init__(self, kernel, specs: tuple[ArgSpec, ...]):
        self.kernel = kernel
        self.specs = specs
        self.blocks: list[list] = [[]]
        self.globals_read: dict[tuple[str, ...], Any] = {}
        self.queues: list[QueueV] = []
        self.inline_stack: list = []
        self.inline_sites: list = []     # (callee, caller, call site) of each active inlining
        self._labels = itertools.count()
        self.scope: FunctionScope = None  # type: ignore[assignment]
        self.prologue: list = []        # statements run first (e.g. the event-id pool's reset)
        from . import builtins as B
        self.builtins = B

    # ------------------------------------------------------------------ driver
    def run(self) -> SemaResult:
        fdef = self.kernel.parsed()
        gm_args, scalar_args, env = [], [], {}
        for spec in self.specs:
            if spec.kind == "gm":
                env[spec.name] = GmAddrV(spec.dtype, ir.Const(len(gm_args), int32),
                                         ir.Const(0, int64), spec.name)
                gm_args.append((spec.name, spec.dtype))
            elif spec.kind == "scalar":
                env[spec.name] = RtV(ir.ScalarArg(len(scalar_args), spec.dtype))
                scalar_args.append((spec.name, spec.dtype))
            elif spec.kind == "struct":  # one int32 scalar argument per field (sema/structs.py)
                from .structs import struct_value
                env[spec.name], fields = struct_value(spec.value, len(scalar_args))
                scalar_args.extend(fields)
            else:
                env[spec.name] = python_to_sval(spec.value, fdef.loc)
        counts = assigned_names(fdef.body)
        for p in fdef.params:
            counts[p.name] = counts.get(p.name, 0) + 1
        self.scope = FunctionScope(fdef.name, self.kernel.namespace(), {},
                                   {n for n, c in counts.items() if c > 1})
        self.scope.mutable_structs = field_assigned_names(fdef.body)
        self.scope.user_tagged = user_tagged_names(fdef.body)
        self.inline_stack.append(self.kernel)
        label = self.new_label("return")
        self.scope.return_label = label
        self.kernel_return_label = label  # for code that ends the whole kernel (sema/adv.py)
        with self.capture() as body:
            for name, value in env.items():
                self.bind(name, value, fdef.loc)
            self.stmts(fdef.body)
        body = self.prologue + body
        fn = ir.Function(fdef.name, (ir.Block(label, tuple(body), fdef.loc),), fdef.loc,
                         tuple(gm_args), tuple(scalar_args), len(self.queues))
        return SemaResult(fn, self.globals_read, [q.name for q in self.queues])

    # ------------------------------------------------------------------ emission helpers
    def emit(self, stmt) -> None:
        if self.inline_sites and not stmt.loc.inlined_from:
            stmt = replace(stmt, loc=self.chained(stmt.loc))
        self.blocks[-1].append(stmt)

    def chained(self, loc: SourceLoc) -> SourceLoc:
        """``loc`` (in the function being inlined) with the chain of calls that inlined it."""
        return replace(loc, inlined_from=tuple(reversed(self.inline_sites)))

    @contextlib.contextmanager
    def capture(self):
        self.blocks.append([])
        try:
            yield self.blocks[-1]
        finally:
            self.blocks.pop()

    def new_label(self, what: str) -> str:
        return f"{what}{next(self._labels)}"

    def temp(self, value: SVal, name: str, loc: SourceLoc) -> SVal:
        """Materialise a runtime value into fresh variables (a snapshot)."""
        fields = runtime_fields(value)
        if fields is None or isinstance(value, ConstV):
            return value
        slot = new_slot(name, value)
        for a in store_slot(slot, name, value, loc):
            self.emit(a)
        return read_slot(slot)

    def result_var(self, name: str, dtype: DataType) -> ir.Var:
        return ir.Var(name, dtype)

    # ------------------------------------------------------------------ names
    def bind(self, name: str, value: SVal, loc: SourceLoc) -> None:
        scope = self.scope
        if isinstance(value, Undefined):
            scope.env[name] = value
            return
        if name in scope.user_tagged and isinstance(value, LocalTensorV) and \
                value.user_tag is None:   # its tag is a variable from here on (0 until set)
            value = replace(value, user_tag=ir.Const(0, int32))
        if name in scope.mutable_structs and isinstance(value, StructV):
            from .structs import struct_storage   # its fields become variables (assignable)
            scope.env[name] = struct_storage(self, name, value, loc)
            return
        fields = runtime_fields(value)
        if name in scope.reassigned and fields is not None:
            slot = scope.slots.get(name)
            if slot is None:
                slot = scope.slots[name] = new_slot(name, value)
            for a in store_slot(slot, name, value, loc):
                self.emit(a)
            scope.env[name] = read_slot(slot)
        elif fields is not None and not isinstance(value, ConstV):
            scope.env[name] = self.temp(value, name, loc)
        else:
            scope.env[name] = value

    def lookup(self, name: str, loc: SourceLoc) -> SVal:
        scope = self.scope
        if name in scope.env:
            value = scope.env[name]
            if isinstance(value, Undefined):
                raise MaybeUndefinedError(value.reason, loc,
                                      hint=f"assign '{name}' before the branch or loop")
            return value
        if name in scope.globals:
            obj = scope.globals[name]
            value = python_to_sval(obj, loc)
            if not isinstance(value, PyObjV) or isinstance(obj, tuple):
                self.globals_read[(self._global_owner(), name)] = obj
            return value
        if hasattr(py_builtins, name) and name in PY_BUILTINS:
            return PyObjV(getattr(py_builtins, name))
        candidates = list(scope.env) + [k for k in scope.globals if not k.startswith("__")]
        close = difflib.get_close_matches(name, candidates, n=1)
        hint = f"did you mean '{close[0]}'?" if close else \
            "define it in the kernel, pass it as an argument, or make it a module constant"
        raise UndefinedNameError(f"name '{name}' is not defined", loc, hint=hint)

    def _global_owner(self) -> str:
        fn = self.inline_stack[-1].fn
        return f"{fn.__module__}.{fn.__qualname__}"

    # ------------------------------------------------------------------ statements
    def stmts(self, body) -> None:
        for s in body:
            self.stmt(s)

    def stmt(self, s) -> None:
        handler = STMT_HANDLERS.get(type(s))
        if handler is None:
            raise UnsupportedConstructError(f"{type(s).__name__} statements are not supported in kernels",
                                    s.loc)
        try:
            handler(self, s)
        except KernelError:
            raise
        except RecursionError:
            raise RecursiveCallError("kernel is nested too deeply to compile", s.loc) from None
        except Exception as exc:  # noqa: BLE001 - internal bug: report with the user's line
            raise InternalCompilerError(f"internal compiler error: {type(exc).__name__}: {exc}",
                                        s.loc) from exc

    def s_expr(self, s: A.ExprStmt) -> None:
        if isinstance(s.value, A.Constant) and isinstance(s.value.value, str):
            return  # a stray string (docstring-like) is a no-op
        self.expr(s.value)

    def s_pass(self, s) -> None:
        pass

    def s_assign(self, s: A.Assign) -> None:
        value = self.expr(s.value)
        for target in s.targets:
            self.assign_to(target, value, s.loc)

    def s_annassign(self, s: A.AnnAssign) -> None:
        if s.value is None:
            return
        value = self.expr(s.value)
        self.assign_to(s.target, value, s.loc)

    def s_augassign(self, s: A.AugAssign) -> None:
        if isinstance(s.target, A.Attribute):   # `tiling.m += 16`: a struct field
            value = self.binop(s.op, self.expr(s.target), self.expr(s.value), s.loc)
            self.assign_to(s.target, value, s.loc)
            return
        if not isinstance(s.target, A.Name):
            raise AssignmentTargetError("augmented assignment needs a plain variable name",
                                    s.target.loc)
        current = self.lookup(s.target.id, s.target.loc)
        value = self.binop(s.op, current, self.expr(s.value), s.loc)
        self.assign_to(s.target, value, s.loc)

    def assign_to(self, target, value: SVal, loc: SourceLoc) -> None:
        if isinstance(target, A.Name):
            self.bind(target.id, value, target.loc)
        elif isinstance(target, (A.Tuple, A.List)):
            if not isinstance(value, TupleV) or len(value.items) != len(target.elts):
                raise OperandKindError(f"cannot unpack {value.describe()} into "
                                      f"{len(target.elts)} names", loc)
            # evaluate the whole right-hand side before binding any name (`a, b = b, a`)
            value = self._snapshot(value, loc)
            for t, v in zip(target.elts, value.items):
                self.assign_to(t, v, loc)
        elif isinstance(target, A.Attribute):
            from .structs import assign_field   # `tiling.share_l1_size = …`
            assign_field(self, target, value, loc)
        else:
            raise AssignmentTargetError("only plain names and struct fields can be assigned in "
                                        "kernels", target.loc,
                                        hint="to write a tensor element use t.set_value(i, v)")

    def _snapshot(self, value: SVal, loc: SourceLoc) -> SVal:
        """The value with every runtime part copied into fresh variables (tuples recursively)."""
        if isinstance(value, TupleV):
            return TupleV(tuple(self._snapshot(v, loc) for v in value.items))
        return self.temp(value, "unpack", loc)

    def s_if(self, s: A.If) -> None:
        cond = S.truth(self.expr(s.test), s.test.loc)
        if isinstance(cond, ConstV):
            self.stmts(s.body if cond.value else s.orelse)
            return
        base = dict(self.scope.env)
        with self.capture() as then_body:
            self.stmts(s.body)
        then_env, self.scope.env = self.scope.env, dict(base)
        with self.capture() as else_body:
            self.stmts(s.orelse)
        else_env = self.scope.env
        self.scope.env = merge_envs(base, [then_env, else_env], "if statement")
        self.emit(ir.If(cond.expr, tuple(then_body), tuple(else_body), s.loc))

    def _loop_env_after(self, base: dict, body_env: dict) -> dict:
        merged = dict(body_env)
        for name, before in base.items():
            after = body_env.get(name)
            if after is not before and not (after is not None and _eq(after, before)):
                merged[name] = Undefined(f"'{name}' changes kind inside the loop")
        return merged

    def s_for(self, s: A.For) -> None:
        if s.orelse:
            raise UnsupportedConstructError("`for ... else` is not supported in kernels", s.loc)
        it = s.iter
        if not isinstance(it, A.Call):
            raise UnsupportedConstructError("kernels can only loop over range(...) or "
                                    "asc.static_range(...)", it.loc)
        func = self.expr(it.func)
        kind = None
        if isinstance(func, PyObjV):
            if func.obj is range:
                kind = "range"
            else:
                kind = {"static_range": "static", "range": "range"}.get(
                    getattr(func.obj, "asc_name", None))
        if kind is None:
            raise UnsupportedConstructError("kernels can only loop over range(...) or "
                                    "asc.static_range(...)", it.loc)
        if it.keywords or not 1 <= len(it.args) <= 3:
            raise ArgumentError("range takes 1 to 3 positional arguments", it.loc)
        bounds = [self.expr(a) for a in it.args]
        for b, node in zip(bounds, it.args):
            if not isinstance(b, (ConstV, RtV)) or b.dtype.is_float or b.dtype == bool_:
                raise OperandKindError(f"range bounds must be integers, got {b.describe()}",
                                      node.loc)
        if len(bounds) == 1:
            bounds = [ConstV(0, int32), bounds[0]]
        if len(bounds) == 2:
            bounds.append(ConstV(1, int32))
        if not isinstance(s.target, A.Name):
            raise KernelSyntaxError("the loop variable must be a single name", s.target.loc)
        if kind == "static":
            self._static_for(s, bounds)
            return
        if isinstance(bounds[2], ConstV) and bounds[2].value == 0:
            raise ConstantRangeError("range() step must not be zero", it.loc)
        dtype = S.promote(S.promote(bounds[0].dtype, bounds[1].dtype), bounds[2].dtype)
        var = ir.Var(s.target.id, dtype)
        base = dict(self.scope.env)
        self.scope.loop_depth += 1
        saved = getattr(self, "_static_labels", None)
        self._static_labels = None  # break/continue here belong to this loop, not an outer one
        with self.capture() as body:
            self.bind(s.target.id, RtV(ir.Load(var)), s.target.loc)
            self.stmts(s.body)
        self._static_labels = saved
        self.scope.loop_depth -= 1
        self.scope.env = self._loop_env_after(base, self.scope.env)
        self.emit(ir.ForRange(var, *(S.to_expr(b, dtype) for b in bounds), tuple(body), s.loc))

    def _static_for(self, s: A.For, bounds) -> None:
        args = s.iter.args  # bounds are (start, stop, step) after padding; map back to args
        nodes = tuple(args) + (args[-1],) * (3 - len(args)) if len(args) > 1 else args * 3
        for b, node in zip(bounds, nodes):
            if not isinstance(b, ConstV):
                raise NotConstantError("static_range bounds must be compile-time values",
                                       node.loc, hint="use range(...) for runtime bounds")
        values = range(*(int(b.value) for b in bounds))
        if len(values) > MAX_UNROLL:
            raise ConstantRangeError(f"static_range would unroll {len(values)} iterations "
                                   f"(limit {MAX_UNROLL})", s.iter.loc)
        brk = self.new_label("static_break")
        self.scope.loop_depth += 1
        saved = getattr(self, "_static_labels", None)
        with self.capture() as outer:
            for v in values:
                cont = self.new_label("static_continue")
                self._static_labels = (brk, cont)
                with self.capture() as body:
                    self.scope.env[s.target.id] = ConstV(v, int32)  # a constant per copy
                    self.stmts(s.body)
                self.emit(ir.Block(cont, tuple(body), s.loc))
        self._static_labels = saved
        self.scope.loop_depth -= 1
        self.emit(ir.Block(brk, tuple(outer), s.loc))

    def s_while(self, s: A.While) -> None:
        if s.orelse:
            raise UnsupportedConstructError("`while ... else` is not supported in kernels", s.loc)
        base = dict(self.scope.env)
        with self.capture() as pre:
            cond = S.truth(self.expr(s.test), s.test.loc)
        if isinstance(cond, ConstV) and not cond.value:
            return
        self.scope.loop_depth += 1
        saved = getattr(self, "_static_labels", None)
        self._static_labels = None
        with self.capture() as body:
            self.stmts(s.body)
        self._static_labels = saved
        self.scope.loop_depth -= 1
        self.scope.env = self._loop_env_after(base, self.scope.env)
        cexpr = cond.expr() if isinstance(cond, ConstV) else cond.expr
        self.emit(ir.While(tuple(pre), cexpr, tuple(body), s.loc))

    def s_with(self, s: A.With) -> None:
        from .adv import with_statement  # `with matmul.iterate() as count:` (the only form)
        with_statement(self, s)

    def s_break(self, s) -> None:
        self._loop_jump(s, break_=True)

    def s_continue(self, s) -> None:
        self._loop_jump(s, break_=False)

    def _loop_jump(self, s, break_: bool) -> None:
        if self.scope.loop_depth == 0:
            raise KernelSyntaxError(f"'{'break' if break_ else 'continue'}' outside a loop",
                                    s.loc)
        labels = getattr(self, "_static_labels", None)
        if labels is not None:
            self.emit(ir.Exit(labels[0] if break_ else labels[1], s.loc))
        else:
            self.emit(ir.Break(s.loc) if break_ else ir.Continue(s.loc))

    def s_return(self, s: A.Return) -> None:
        scope = self.scope
        value = self.expr(s.value) if s.value is not None else NoneV()
        if not isinstance(value, NoneV):
            if len(self.inline_stack) == 1:
                raise ReturnValueError("a kernel cannot return a value", s.loc,
                                      hint="write results to a GlobalTensor instead")
            if not scope.simple_return and runtime_fields(value) is not None:
                if scope.return_slot is None:
                    scope.return_slot = new_slot(f"{scope.name}.ret", value)
                for a in store_slot(scope.return_slot, "return value", value, s.loc):
                    self.emit(a)
                value = read_slot(scope.return_slot)
            elif not scope.simple_return:
                raise ReturnValueError(f"{value.describe()} can only be returned by a single "
                                      f"`return` at the end of the function", s.loc)
        scope.returned.append(value)
        if not scope.simple_return:
            self.emit(ir.Exit(scope.return_label, s.loc))

    def s_assert(self, s: A.Assert) -> None:
        cond = S.truth(self.expr(s.test), s.test.loc)
        msg = ""
        if s.msg is not None:
            m = self.expr(s.msg)
            msg = m.value if isinstance(m, StrV) else ""
        site = self.library_site()
        if isinstance(cond, ConstV):
            if not cond.value:
                exc = StaticAssertionError(f"assertion failed{': ' + msg if msg else ''}",
                                           site or s.loc)
                exc.at_user_site = site is not None
                raise exc
            return
        stmt = ir.Intrinsic("kernel_assert", (cond.expr,), (), site or s.loc, (("msg", msg),))
        if site is None:
            self.emit(stmt)
        else:
            self.blocks[-1].append(stmt)   # already the user's line, with its own chain

    def library_site(self) -> Optional[SourceLoc]:
        """Inside a library function (its module sets ``__asc_library__ = True``, as asc.adv's
        math does): where the user's code called into the library, with the calls above it;
        an assertion of the library (a too-small temporary buffer, a count beyond a tensor)
        is reported there. None outside library code."""
        for i in range(1, len(self.inline_stack)):
            fn = getattr(self.inline_stack[i], "fn", None)
            if getattr(fn, "__globals__", {}).get("__asc_library__"):
                site = self.inline_sites[i - 1][2]
                return replace(site, inlined_from=tuple(reversed(self.inline_sites[:i - 1])))
        return None

    # ------------------------------------------------------------------ expressions
    def expr(self, e) -> SVal:
        handler = EXPR_HANDLERS.get(type(e))
        if handler is None:
            raise UnsupportedConstructError(f"{type(e).__name__} expressions are not supported in "
                                    f"kernels", e.loc)
        return handler(self, e)

    def e_name(self, e: A.Name) -> SVal:
        return self.lookup(e.id, e.loc)

    def e_const(self, e: A.Constant) -> SVal:
        if isinstance(e.value, str):
            return StrV(e.value)
        if e.value is None:
            return NoneV()
        return S.const_of(e.value, e.loc)

    def e_binop(self, e: A.BinOp) -> SVal:
        return self.binop(e.op, self.expr(e.left), self.expr(e.right), e.loc)

    def binop(self, op: str, a: SVal, b: SVal, loc: SourceLoc) -> SVal:
        if isinstance(a, GmAddrV) and op in "+-" and isinstance(b, (ConstV, RtV)):
            off = S.to_expr(b, int64)
            if op == "-":
                off = ir.Un("neg", off, int64)
            return GmAddrV(a.dtype, a.arg, ir.Bin("add", a.offset, off, int64), a.arg_name)
        if isinstance(b, GmAddrV) and op == "+" and isinstance(a, (ConstV, RtV)):
            return self.binop("+", b, a, loc)
        return S.binary(op, a, b, loc)

    def e_unary(self, e: A.UnaryOp) -> SVal:
        return S.unary(e.op, self.expr(e.operand), e.loc)

    def e_boolop(self, e: A.BoolOp) -> SVal:
        return self.short_circuit(e.op, [lambda v=v: self.expr(v) for v in e.values], e.loc)

    def e_compare(self, e: A.Compare) -> SVal:
        left = [self.expr(e.left)]

        def part(op, node):
            def evaluate():
                right = self.expr(node)
                result = self.compare(op, left[0], right, e.loc)
                left[0] = right
                return result
            return evaluate

        parts = [part(op, node) for op, node in zip(e.ops, e.comparators)]
        return parts[0]() if len(parts) == 1 else self.short_circuit("and", parts, e.loc)

    def short_circuit(self, op: str, operands, loc: SourceLoc) -> SVal:
        """Python's ``and``/``or`` (as a bool): each operand (a callable that analyses it) runs
        only while the result is still open, so ``i < n and t.get_value(i) > 0`` never reads
        ``t[n]`` and ``b != 0 and a // b > 1`` never divides by zero."""
        result = S.truth(operands[0](), loc)
        for evaluate in operands[1:]:
            if isinstance(result, ConstV):
                if result.value == (op == "or"):
                    return result
                result = S.truth(evaluate(), loc)
                continue
            with self.capture() as stmts:
                right = S.truth(evaluate(), loc)
            if not stmts and not _may_fault(right):
                result = S.boolop(op, [result, right], loc)
                continue
            var = ir.Var(op, bool_)
            self.emit(ir.Assign(var, result.expr, loc))
            test = ir.Load(var) if op == "and" else ir.Un("not", ir.Load(var), bool_)
            body = tuple(stmts) + (ir.Assign(var, S.to_expr(right, bool_), loc),)
            self.emit(ir.If(test, body, (), loc))
            result = RtV(ir.Load(var))
        return result

    def compare(self, op: str, a: SVal, b: SVal, loc: SourceLoc) -> SVal:
        if isinstance(a, EnumV) != isinstance(b, EnumV):   # an IntEnum against a number
            a, b = S.numeric(a), S.numeric(b)
        if op in ("is", "is not") and (isinstance(a, NoneV) or isinstance(b, NoneV)):
            # `x is None`: known at compile time for every value (an optional argument)
            same = isinstance(a, NoneV) and isinstance(b, NoneV)
            return ConstV(same if op == "is" else not same, bool_)
        if op in ("is", "is not", "==", "!=") and not isinstance(a, (ConstV, RtV)):
            same = _eq(a, b)
            return ConstV(same if op in ("is", "==") else not same, bool_)
        if op in ("in", "not in"):
            if not isinstance(b, TupleV):
                raise OperandKindError("'in' needs a tuple or list of values", loc)
            hits = [self.compare("==", a, item, loc) for item in b.items]
            result = S.boolop("or", hits, loc) if hits else ConstV(False, bool_)
            return result if op == "in" else S.unary("not", result, loc)
        if op in ("is", "is not"):
            op = "==" if op == "is" else "!="
        return S.compare(op, a, b, loc)

    def e_ifexp(self, e: A.IfExp) -> SVal:
        cond = S.truth(self.expr(e.test), e.test.loc)
        if isinstance(cond, ConstV):
            return self.expr(e.body if cond.value else e.orelse)
        with self.capture() as then_stmts:
            a = self.expr(e.body)
        with self.capture() as else_stmts:
            b = self.expr(e.orelse)
        numbers = all(isinstance(v, (ConstV, RtV)) for v in (a, b))
        if not numbers or not (then_stmts or else_stmts or _may_fault(a) or _may_fault(b)):
            return S.select(cond, a, b, e.loc)
        # only the chosen arm runs (it may read memory or divide), as in Python
        dtype = S.promote(a.dtype, b.dtype)
        var = ir.Var("ifexp", dtype)
        self.emit(ir.If(cond.expr,
                        tuple(then_stmts) + (ir.Assign(var, S.to_expr(a, dtype), e.loc),),
                        tuple(else_stmts) + (ir.Assign(var, S.to_expr(b, dtype), e.loc),),
                        e.loc))
        return RtV(ir.Load(var))

    def e_tuple(self, e) -> SVal:
        return TupleV(tuple(self.expr(x) for x in e.elts))

    def e_attribute(self, e: A.Attribute) -> SVal:
        base = self.expr(e.value)
        return self.builtins.get_attribute(self, base, e.attr, e.loc)

    def e_subscript(self, e: A.Subscript) -> SVal:
        base = self.expr(e.value)
        return self.builtins.subscript(self, base, e.index, e.loc)

    def e_call(self, e: A.Call) -> SVal:
        func = self.expr(e.func)
        if isinstance(func, BoundMethodV) and isinstance(e.func, A.Attribute):
            func = replace(func, self_val=_named(func.self_val, e.func.value))
        args = [_named(self.expr(a), a) for a in e.args]
        kwargs = {k.name: _named(self.expr(k.value), k.value) for k in e.keywords}
        self.receiver = e.func.value if isinstance(func, BoundMethodV) and isinstance(
            e.func, A.Attribute) else None
        self.call_node = e
        return self.builtins.call(self, func, args, kwargs, e)

    def rebind_argument(self, position: int, keyword: str, value: SVal, what: str,
                        loc: SourceLoc) -> None:
        """Assign ``value`` to the variable passed as argument ``position`` (or ``keyword``)
        of the call being analysed: Ascend C's in-place forms fill a tensor passed by
        reference (``que.alloc_tensor(t)``)."""
        node = getattr(self, "call_node", None)
        arg = None
        if node is not None:
            if len(node.args) > position:
                arg = node.args[position]
            else:
                arg = next((k.value for k in node.keywords if k.name == keyword), None)
        if not isinstance(arg, A.Name):
            raise AssignmentTargetError(f"{what} fills the tensor passed to it: pass a "
                                        f"variable", loc)
        self.assign_to(arg, value, loc)

    def rebind_receiver(self, value: SVal, what: str, loc: SourceLoc) -> None:
        """Assign ``value`` to the variable a mutating method was called on (``t.set_size(n)``
        changes ``t``)."""
        node = getattr(self, "receiver", None)
        if not isinstance(node, A.Name):
            raise AssignmentTargetError(f"{what} changes the tensor it is called on: call it on "
                                        f"a variable (t.{what}(...))", loc)
        self.assign_to(node, value, loc)

    # ------------------------------------------------------------------ inlining
    def inline_call(self, callee, args: list[SVal], kwargs: dict[str, SVal], node) -> SVal:
        if callee in self.inline_stack:
            raise RecursiveCallError(f"recursive call of kernel function '{callee.__name__}' "
                                     f"is not supported", node.loc)
        if len(self.inline_stack) >= MAX_INLINE_DEPTH:
            raise RecursiveCallError("kernel functions are nested too deeply", node.loc)
        fdef = callee.parsed()
        params = fdef.params
        if len(args) > len(params):
            raise ArgumentError(f"{fdef.name}() takes {len(params)} arguments but "
                                  f"{len(args)} were given", node.loc)
        bound: dict[str, SVal] = {}
        for p, v in zip(params, args):
            bound[p.name] = v
        names = {p.name for p in params}
        for k, v in kwargs.items():
            if k not in names:
                raise ArgumentError(f"{fdef.name}() got an unexpected keyword argument '{k}'",
                                      node.loc)
            if k in bound:
                raise ArgumentError(f"{fdef.name}() got multiple values for '{k}'", node.loc)
            bound[k] = v
        defaults = callee.defaults()
        for p in params:
            if p.name not in bound:
                if p.name not in defaults:
                    raise ArgumentError(f"{fdef.name}() missing argument '{p.name}'", node.loc)
                bound[p.name] = python_to_sval(defaults[p.name], node.loc)
        counts = assigned_names(fdef.body)
        for p in params:
            counts[p.name] = counts.get(p.name, 0) + 1
        outer = self.scope
        self.scope = FunctionScope(fdef.name, callee.namespace(), {},
                                   {n for n, c in counts.items() if c > 1})
        self.scope.mutable_structs = field_assigned_names(fdef.body)
        self.scope.user_tagged = user_tagged_names(fdef.body)
        self.scope.return_label = self.new_label(f"ret_{fdef.name}_")
        self.scope.simple_return = _returns_only_at_end(fdef.body)
        saved_static = getattr(self, "_static_labels", None)
        self._static_labels = None
        self.inline_stack.append(callee)
        self.inline_sites.append((fdef.name, outer.name, node.loc))
        try:
            for name, value in bound.items():
                self.bind(name, value, node.loc)
            with self.capture() as body:
                try:
                    self.stmts(fdef.body)
                except KernelError as exc:   # raised inside the callee: name the chain
                    if exc.loc is not None and not exc.loc.inlined_from \
                            and not getattr(exc, "at_user_site", False):
                        exc.relocated(self.chained(exc.loc))
                    raise
            returned = self.scope.returned
        finally:
            self.inline_sites.pop()
            self.inline_stack.pop()
            self.scope, inner = outer, self.scope
            self._static_labels = saved_static
        self.emit(ir.Block(inner.return_label, tuple(body), node.loc))
        values = [v for v in returned if not isinstance(v, NoneV)]
        if not values:
            return NoneV()
        return values[-1] if inner.return_slot is None else read_slot(inner.return_slot)


def _returns_only_at_end(body) -> bool:
    """True if the only `return` is the last top-level statement (or there is none)."""
    def count(stmts) -> int:
        n = 0
        for st in stmts:
            if isinstance(st, A.Return):
                n += 1
            elif isinstance(st, (A.If, A.For, A.While)):
                n += count(st.body) + count(st.orelse)
            elif isinstance(st, A.With):
                n += count(st.body)
        return n
    total = count(body)
    return total == 0 or (total == 1 and bool(body) and isinstance(body[-1], A.Return))


def _may_fault(v: SVal) -> bool:
    """True if evaluating the value can fail at run time (integer // or % by zero)."""
    def walk(x) -> bool:
        if isinstance(x, ir.Bin) and x.op in ("floordiv", "mod", "cdiv", "cmod") and \
                not x.dtype.is_float:
            return True
        return any(walk(getattr(x, f)) for f in ("a", "b", "cond")
                   if isinstance(getattr(x, f, None), (ir.Bin, ir.Cmp, ir.Un, ir.Cast,
                                                       ir.Select)))
    return isinstance(v, RtV) and walk(v.expr)


def _eq(a: SVal, b: SVal) -> bool:
    if a is b:
        return True
    try:
        return type(a) is type(b) and a == b
    except Exception:  # noqa: BLE001
        return False


PY_BUILTINS = {"range", "min", "max", "abs", "int", "float", "bool", "len", "print"}

STMT_HANDLERS = {
    A.ExprStmt: Analyzer.s_expr, A.Assign: Analyzer.s_assign, A.AnnAssign: Analyzer.s_annassign,
    A.AugAssign: Analyzer.s_augassign, A.If: Analyzer.s_if, A.For: Analyzer.s_for,
    A.While: Analyzer.s_while, A.Break: Analyzer.s_break, A.Continue: Analyzer.s_continue,
    A.Pass: Analyzer.s_pass, A.Return: Analyzer.s_return, A.Assert: Analyzer.s_assert,
    A.With: Analyzer.s_with,
}
EXPR_HANDLERS = {
    A.Name: Analyzer.e_name, A.Constant: Analyzer.e_const, A.BinOp: Analyzer.e_binop,
    A.UnaryOp: Analyzer.e_unary, A.BoolOp: Analyzer.e_boolop, A.Compare: Analyzer.e_compare,
    A.IfExp: Analyzer.e_ifexp, A.Tuple: Analyzer.e_tuple, A.List: Analyzer.e_tuple,
    A.Attribute: Analyzer.e_attribute, A.Subscript: Analyzer.e_subscript,
    A.Call: Analyzer.e_call,
}


def analyze(kernel, specs: tuple[ArgSpec, ...]) -> SemaResult:
    """Analyse ``kernel`` for the given argument specialisation and return verified-ready IR."""
    return Analyzer(kernel, specs).run()


def _named(value: SVal, node) -> SVal:
    """A LocalTensor argument carries the source text the user wrote for it (``c``,
    ``buf[i * 64:]``), so a run-time error can name the operand."""
    if not isinstance(value, LocalTensorV):
        return value
    loc = node.loc
    text = ""
    if loc.end_line == loc.line and loc.end_col > loc.col:
        text = loc.source_line()[loc.col - 1:loc.end_col - 1].strip()
    if not text and isinstance(node, A.Name):
        text = node.id
    return replace(value, name=text) if text else value
