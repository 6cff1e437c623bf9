"""Which GM arguments a kernel may write, read from its IR.

An instruction writes global memory when its destination is a ``GlobalRef`` (``data_copy``,
``data_copy_pad``, ``set_value``, ``fixpipe``) or when it is a Matmul call whose C matrix is in
GM. Its destination argument is an IR expression; ``ArgumentTargets`` follows it through the
variables it is loaded from (a ``GlobalTensor()`` keeps its argument in a variable that
``set_global_buffer`` assigns) to the argument indices it can hold:

- one index: the instruction writes that argument, known at compile time (a launch that passes
  it read-only is refused before anything runs);
- several indices (a GlobalTensor re-pointed in a branch) or an expression that is not traced:
  the argument is chosen at run time, and the instruction checks it before writing
  (``codegen/lower_readonly.py``).

The runtime uses the result (``CompiledKernel.gm_writes``) to refuse read-only arguments and
torch tensors that require grad, and to bump the autograd version counter of every torch
tensor a launch wrote (``simulator/gm_access.py``).
"""
from __future__ import annotations

from typing import Optional

from ..dsl.types import Memory
from . import ir
from .errors import SourceLoc
from .spec import GmWrites

#: ops whose first operand is their destination (a GlobalRef when they write GM)
DESTINATION_FIRST = frozenset({"data_copy", "data_copy_pad", "set_value", "fixpipe"})
#: Matmul calls: C is written to GM when their ``c_mem`` operand is Memory.GM
MATMUL_WRITES = frozenset({"matmul_iterate_all", "matmul_get_tensor_c"})


def written_argument(s: ir.Intrinsic) -> Optional[ir.Expr]:
    """The expression of the GM argument index instruction ``s`` writes, or None when it
    writes no global memory."""
    if s.op in DESTINATION_FIRST:
        dst = s.args[0] if s.args else None
        return dst.arg if isinstance(dst, ir.GlobalRef) else None
    if s.op in MATMUL_WRITES:
        from .ops.matmul import MATMUL_ARGS
        c_mem = s.args[MATMUL_ARGS.index("c_mem")]
        if isinstance(c_mem, ir.Const) and int(c_mem.value) == int(Memory.GM):
            return s.args[MATMUL_ARGS.index("c_a")]
    return None


class ArgumentTargets:
    """The GM argument indices an expression can hold, following the kernel's variables."""

    def __init__(self, fn: ir.Function):
        self.num_args = len(fn.gm_args)
        assigned: dict[ir.Var, list] = {}

        def collect(s) -> None:
            if isinstance(s, ir.Assign):
                assigned.setdefault(s.var, []).append(s.value)

        _walk(fn.body, collect)
        # the least fixed point: every value each variable can be assigned (None: untraced)
        self.values: dict[ir.Var, Optional[frozenset]] = {v: frozenset() for v in assigned}
        changed = True
        while changed:
            changed = False
            for var, exprs in assigned.items():
                if self.values[var] is None:
                    continue
                found: Optional[frozenset] = frozenset()
                for e in exprs:
                    t = self.of(e)
                    if t is None:
                        found = None
                        break
                    found |= t
                if found != self.values[var]:
                    self.values[var] = found
                    changed = True

    def of(self, e) -> Optional[frozenset]:
        """The argument indices ``e`` can evaluate to, or None when they cannot be traced."""
        if isinstance(e, ir.Const):   # -1: a GlobalTensor before set_global_buffer (faults)
            return frozenset({int(e.value)} if int(e.value) >= 0 else ())
        if isinstance(e, ir.Cast):
            return self.of(e.a)
        if isinstance(e, ir.Select):
            a, b = self.of(e.a), self.of(e.b)
            return None if a is None or b is None else a | b
        if isinstance(e, ir.Load):
            return self.values.get(e.var)    # a variable never assigned: not traced
        return None

    def known(self, e) -> Optional[int]:
        """The one argument ``e`` always names, or None (several, or not traced)."""
        found = self.of(e)
        return next(iter(found)) if found is not None and len(found) == 1 else None


def analyze(fn: ir.Function) -> GmWrites:
    """The ``GmWrites`` of a verified kernel IR function."""
    targets = ArgumentTargets(fn)
    static: dict[int, tuple[str, Optional[SourceLoc]]] = {}
    run_time: set[int] = set()
    untraced = False

    def visit(s) -> None:
        nonlocal untraced
        if not isinstance(s, ir.Intrinsic):
            return
        arg = written_argument(s)
        if arg is None:
            return
        found = targets.of(arg)
        if not found:                 # not traced (or a variable never given an argument)
            untraced = True
        elif len(found) == 1:         # as ArgumentTargets.known: no check at the instruction
            static.setdefault(next(iter(found)), (s.op, s.loc))
        else:
            run_time.update(found)

    _walk(fn.body, visit)
    n = targets.num_args
    return GmWrites(tuple((a, op, loc) for a, (op, loc) in sorted(static.items()) if 0 <= a < n),
                    tuple(sorted(a for a in run_time if 0 <= a < n)), untraced)


def _walk(stmts, visit) -> None:
    for s in stmts:
        visit(s)
        for child in ("then", "orelse", "body", "pre"):
            sub = getattr(s, child, None)
            if sub:
                _walk(sub, visit)


__all__ = ["ArgumentTargets", "GmWrites", "analyze", "written_argument"]
