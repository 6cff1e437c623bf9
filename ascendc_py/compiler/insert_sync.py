"""Automatic synchronisation (the ``insert_sync`` pass, after sema, before codegen).

pyasc compiles with synchronisation inserted for the program: its ``insert_sync`` option
(default: on when the kernel uses ``asc.LocalTensorAuto``) and bisheng's ``auto_sync`` (default
on) let a program omit set_flag/wait_flag between the pipes that write and read a buffer. This
pass gives our kernels the same contract, so the timing model sees the synchronised program and
the sanitizer judges it:

- it walks the kernel in program order and keeps, per buffer (a UB/L1/L0 tensor, a GM
  argument), the accesses not yet ordered before each pipe: the pipe, read or write, and the
  pipes the access is known to precede (by a ``wait_flag``, a queue's ``deque``/``alloc_tensor``,
  ``pipe_barrier(PIPE_ALL)``, or a flag this pass inserted; transitively);
- an access on pipe X to a buffer that pipe P wrote (read after write), or a write by X of a
  buffer P read or wrote (write after read/write), with P ≠ X and P not yet ordered before X,
  gets ``set_flag(P_X, id)`` + ``wait_flag(P_X, id)`` right before it (``pipe_barrier(PIPE_ALL)``
  for a pair that has no HardEvent); the inserted statements carry the access's source line
  and the attribute ``insert_sync``, which the report and the trace show;
- loops are analysed to a fixed point, so a dependence carried from one iteration to the next
  (the next tile's copy-in over a buffer the vector unit still reads) is synchronised too.

Instructions of one pipe run in order: no barrier is inserted between them. Tensors are told
apart by where their address comes from: compile-time addresses (LocalTensorAuto, static
LocalTensors) by their byte ranges, queue and TBuf tensors by the variable holding their
address (slices of one tensor alias it); GM by argument (two constant, disjoint ranges do not
alias). The event id of an inserted flag is one the kernel does not name for that event.
"""
from __future__ import annotations

from dataclasses import replace

from ..fieldwise import FrozenFieldwise, fieldwise_dataclass
from typing import Any, Mapping, Optional

from ..dsl.types import EVENT_IDS_PER_EVENT, HardEvent, Memory, PipeID, int32
from . import ir

#: attribute marking a statement this pass inserted
ATTR = "insert_sync"

_EVENTS = {(ev.src_pipe, ev.dst_pipe): ev for ev in HardEvent}


# ----------------------------------------------------------------------------- the switch
def sync_enabled(options: Mapping[str, Any], uses_auto_tensors: bool) -> Optional[str]:
    """Which option turns automatic synchronisation on for a kernel (None: off).

    ``insert_sync``: pyasc's option; its default (None) means "when the kernel uses
    LocalTensorAuto". ``auto_sync``: bisheng's automatic synchronisation, on by default in
    pyasc (``asc.jit`` sets it), off unless given for ``@asc.kernel`` (whose programs
    synchronise themselves; their results and cycles stay as they were)."""
    insert = options.get("insert_sync")
    if insert is None:
        insert = uses_auto_tensors
    if insert:
        return "insert_sync" if "insert_sync" in options else "LocalTensorAuto"
    if options.get("auto_sync", False):
        return "auto_sync"
    return None


# ----------------------------------------------------------------------------- buffers
@fieldwise_dataclass(frozen=True)
class _Key(FrozenFieldwise):
    """A buffer the pass tracks: a memory and what is known of the addresses used in it."""

    memory: Memory
    kind: str            # "range" (compile-time bytes), "queue" (a TQue's buffers), "var"
    #                      (another address variable), "gm", "any"
    ident: Any = None    # the Var uid; the queue ids, the GM arguments it may be
    lo: int = 0
    hi: int = 1 << 62


def _assignments(fn: ir.Function) -> dict:
    """var -> the expressions assigned to it (an Intrinsic result: ``("queue", qid)`` for a
    TQue tensor's address from alloc_tensor/deque, None for any other)."""
    assigned: dict = {}

    def walk(stmts):
        for s in stmts:
            if isinstance(s, ir.Assign):
                assigned.setdefault(s.var, []).append(s.value)
            elif isinstance(s, ir.Intrinsic):
                mark = ("queue", s.attr("queue")) if s.op in ("alloc_tensor", "deque") else None
                for v in s.results:
                    assigned.setdefault(v, []).append(mark)
            elif isinstance(s, ir.ForRange):
                assigned.setdefault(s.var, []).append(None)
            for child in ("then", "orelse", "body", "pre"):
                sub = getattr(s, child, None)
                if sub:
                    walk(sub)
    walk(fn.body)
    return assigned


def _sources(assigned: dict, leaf) -> dict:
    """var -> frozenset of ``leaf(expr)`` over every value that reaches it through
    assignments of other variables (vars some other value reaches are left out)."""
    out: dict = {}

    def values(var, busy=()):
        if var in out:
            return out[var]
        if var in busy or var not in assigned:
            return None
        vals = set()
        for e in assigned[var]:
            if isinstance(e, ir.Load):
                inner = values(e.var, busy + (var,))
                if inner is None:
                    return None
                vals |= inner
            else:
                v = leaf(e)
                if v is None:
                    return None
                vals.add(v)
        out[var] = frozenset(vals)
        return out[var]
    for var in assigned:
        values(var)
    return {v: vals for v, vals in out.items() if vals is not None}


def _constants(fn: ir.Function) -> tuple[dict, dict]:
    """Variables the kernel only ever sets to constants, directly or through other such
    variables (a tensor's address variable, a GlobalTensor's argument index): var ->
    frozenset of those Consts; and the variables holding TQue tensor addresses: var ->
    frozenset of queue ids."""
    assigned = _assignments(fn)
    consts = _sources(assigned, lambda e: e if isinstance(e, ir.Const) else None)
    queues = _sources(assigned, lambda e: e[1] if isinstance(e, tuple) else None)
    return consts, queues


def _resolve(e, consts: dict):
    if isinstance(e, ir.Load) and len(consts.get(e.var, ())) == 1:
        return next(iter(consts[e.var]))
    if isinstance(e, ir.Cast):
        inner = _resolve(e.a, consts)
        return inner if isinstance(inner, ir.Const) else e
    return e


def _root(e):
    while isinstance(e, (ir.Bin, ir.Cast)):
        if isinstance(e, ir.Cast):
            e = e.a
        elif e.op in ("add", "sub"):
            e = e.a
        else:
            break
    return e


def _key(ref, consts: dict, queues: dict) -> _Key:
    if isinstance(ref, ir.GlobalRef):
        if isinstance(ref.arg, ir.Load) and ref.arg.var in consts:   # the arguments it may name
            args = frozenset(int(c.value) for c in consts[ref.arg.var] if int(c.value) >= 0)
        elif isinstance(ref.arg, ir.Const):
            args = frozenset({int(ref.arg.value)})
        else:
            return _Key(Memory.GM, "any")
        ref = replace(ref, offset=_resolve(ref.offset, consts),
                      size=_resolve(ref.size, consts))
        lo, hi = 0, 1 << 62
        if isinstance(ref.offset, ir.Const):
            lo = int(ref.offset.value) * ref.dtype.sizeof()
            if isinstance(ref.size, ir.Const) and int(ref.size.value) >= 0:
                hi = lo + int(ref.size.value) * ref.dtype.sizeof()
        return _Key(Memory.GM, "gm", args, lo, hi)
    ref = replace(ref, addr=_resolve(ref.addr, consts), size=_resolve(ref.size, consts))
    if isinstance(ref.addr, ir.Const):
        lo = int(ref.addr.value)
        hi = lo + int(ref.size.value) * ref.dtype.sizeof() \
            if ref.bounded and isinstance(ref.size, ir.Const) else 1 << 62
        return _Key(ref.memory, "range", None, lo, hi)
    root = _resolve(_root(ref.addr), consts)
    if isinstance(root, ir.Load) and root.var in queues:    # a TQue's buffers (any of them)
        return _Key(ref.memory, "queue", queues[root.var])
    if isinstance(root, ir.Load):
        return _Key(ref.memory, "var", root.var.uid)
    if isinstance(root, ir.Const):       # a slice at a run-time offset of a placed tensor
        return _Key(ref.memory, "range", None, int(root.value), 1 << 62)
    return _Key(ref.memory, "any")


def _alias(a: _Key, b: _Key) -> bool:
    if a.memory != b.memory:
        return False
    if a.kind == "any" or b.kind == "any":
        return True
    if a.kind != b.kind:
        return False
    if a.kind == "var":
        return a.ident == b.ident
    if a.kind in ("gm", "queue") and not a.ident & b.ident:
        return False
    if a.kind == "queue":
        return True
    return a.lo < b.hi and b.lo < a.hi


# ----------------------------------------------------------------------------- state
@fieldwise_dataclass(frozen=True)
class _Access(FrozenFieldwise):
    """An access of a buffer by a pipe, and the pipes it is ordered before."""

    pipe: PipeID
    write: bool
    before: frozenset    # pipes this access is ordered before


State = dict   # _Key -> frozenset[_Access]


def _order(state: State, src: PipeID, dst: PipeID, queue: Optional[int] = None) -> State:
    """Everything issued so far on ``src`` (or ordered before it) is ordered before ``dst``.
    ``queue``: the hand-over of a TQue's deque/alloc_tensor, which orders the buffers of other
    queues only as far as the runtime's hand-over check (README "Sanitize mode") sees it: not
    at all (a flag, a barrier, or that queue's own hand-over does)."""
    out = {}
    for k, accs in state.items():
        if queue is not None and k.kind == "queue" and queue not in k.ident:
            out[k] = accs
            continue
        out[k] = frozenset(replace(a, before=a.before | {dst})
                           if (a.pipe == src or src in a.before) and dst not in a.before else a
                           for a in accs)
    return out


def _join(a: State, b: State) -> State:
    out = dict(a)
    for k, accs in b.items():
        out[k] = out.get(k, frozenset()) | accs
    # one record per (pipe, write): ordered before the pipes both paths ordered it before
    for k, accs in out.items():
        merged: dict = {}
        for x in accs:
            y = merged.get((x.pipe, x.write))
            merged[(x.pipe, x.write)] = x if y is None else replace(y, before=y.before & x.before)
        out[k] = frozenset(merged.values())
    return out


# ----------------------------------------------------------------------------- the pass
class _Inserter:
    def __init__(self, fn: ir.Function):
        from .codegen.intrinsics import WRITTEN, instruction_pipe
        from .codegen.timing import POSITION_PIPES
        self.written, self.pipe_of, self.position_pipes = WRITTEN, instruction_pipe, \
            POSITION_PIPES
        self.ids = _free_ids(fn)
        self.consts, self.queues = _constants(fn)
        # a kernel with cube work runs on sub-cores that share only GM, where ordering is the
        # program's cross-core flags' business: its GM accesses are left alone
        from .kernel_kind import resources
        self.track_gm = not resources(fn)[0]
        self.inserted = 0
        self.loops: list = []      # per enclosing loop: states at its break / continue
        self.exits: dict = {}      # Block label -> states at an Exit to it

    # -- statements
    def block(self, stmts, state: State, emit: bool):
        out = []
        for s in stmts:
            new, state = self.stmt(s, state, emit)
            out.extend(new)
        return tuple(out), state

    def stmt(self, s, state: State, emit: bool):
        if isinstance(s, ir.Intrinsic):
            return self.intrinsic(s, state, emit)
        if isinstance(s, ir.If):
            then, st1 = self.block(s.then, state, emit)
            orelse, st2 = self.block(s.orelse, state, emit)
            return [replace(s, then=then, orelse=orelse)], _join(st1, st2)
        if isinstance(s, ir.ForRange):
            body, after = self.loop(s.body, state, emit)
            return [replace(s, body=body)], after
        if isinstance(s, ir.While):      # pre runs before every test, body after it
            entry = self.fixpoint(s.pre + s.body, state)
            pre, st = self.block(s.pre, entry, emit)
            body, _, breaks = self.iteration(s.body, st, emit)
            for other in breaks:
                st = _join(st, other)
            return [replace(s, pre=pre, body=body)], st
        if isinstance(s, ir.Block):
            self.exits[s.label] = []
            body, st = self.block(s.body, state, emit)
            for other in self.exits.pop(s.label):
                st = _join(st, other)
            return [replace(s, body=body)], st
        if isinstance(s, (ir.Break, ir.Continue)) and self.loops:
            self.loops[-1][isinstance(s, ir.Continue)].append(state)
        elif isinstance(s, ir.Exit) and s.label in self.exits:
            self.exits[s.label].append(state)
        return [s], state

    def iteration(self, body, entry: State, emit: bool):
        """One pass over a loop body: its statements, the state at the end of the iteration
        (continues included) and the states at its breaks."""
        self.loops.append(([], []))
        out, end = self.block(body, entry, emit)
        breaks, continues = self.loops.pop()
        for other in continues:
            end = _join(end, other)
        return out, end, breaks

    def fixpoint(self, body, state: State) -> State:
        """The state at the head of a loop: the entry's joined with every iteration's end."""
        entry = state
        for _ in range(16):
            _, end, _ = self.iteration(body, entry, False)
            new = _join(state, end)
            if new == entry:
                break
            entry = new
        return entry

    def loop(self, body, state: State, emit: bool):
        out, end, breaks = self.iteration(body, self.fixpoint(body, state), emit)
        after = _join(state, end)
        for other in breaks:
            after = _join(after, other)
        return out, after

    # -- one instruction
    def intrinsic(self, s: ir.Intrinsic, state: State, emit: bool):
        op = s.op
        if op == "wait_flag" and isinstance(s.args[0], int):
            ev = HardEvent(s.args[0])
            return [s], _order(state, ev.src_pipe, ev.dst_pipe)
        if op == "pipe_barrier":
            if s.args[0] == int(PipeID.PIPE_ALL):
                return [s], {}
            return [s], state
        if op in ("deque", "alloc_tensor"):
            producer, consumer = self.position_pipes.get(s.attr("position"),
                                                         (PipeID.PIPE_V, PipeID.PIPE_V))
            if producer != consumer:
                q = s.attr("queue")
                state = _order(state, producer, consumer, q) if op == "deque" else \
                    _order(state, consumer, producer, q)
            return [s], state
        refs = [(w, a) for w, a in enumerate(s.args) if isinstance(a, (ir.LocalRef, ir.GlobalRef))]
        if not refs or s.attr(ATTR):
            return [s], state
        pipe = self.pipe_of(op, s.args)
        if pipe is None or pipe == PipeID.PIPE_ALL:
            return [s], state
        written = self.written.get(op, (0,))
        accesses = [(_key(r, self.consts, self.queues), w in written)
                    for w, r in refs if self.track_gm or isinstance(r, ir.LocalRef)]
        need: set = set()
        for key, write in accesses:
            for k, accs in state.items():
                if not _alias(k, key):
                    continue
                for a in accs:
                    if a.pipe != pipe and pipe not in a.before and (a.write or write):
                        need.add(a.pipe)
        pre = []
        for src in sorted(need, key=int):
            pre.extend(self.sync(src, pipe, s.loc))
            state = _order(state, src, pipe) if (src, pipe) in _EVENTS else {}
        if emit:
            self.inserted += sum(1 for p in pre if p.op == "set_flag") + \
                sum(1 for p in pre if p.op == "pipe_barrier")
        state = dict(state)
        for key, write in accesses:
            acc = _Access(pipe, write, frozenset())
            if write:
                # every earlier access of these bytes is now ordered before this write
                state[key] = frozenset({acc})
            else:
                state[key] = state.get(key, frozenset()) | {acc}
        return pre + [s], state

    def sync(self, src: PipeID, dst: PipeID, loc) -> list:
        ev = _EVENTS.get((src, dst))
        attrs = ((ATTR, f"{src.name[5:]}->{dst.name[5:]}"),)
        if ev is None:
            return [ir.Intrinsic("pipe_barrier", (int(PipeID.PIPE_ALL),), (), loc, attrs)]
        eid = ir.Const(self.ids.get(ev, EVENT_IDS_PER_EVENT - 1), int32)
        return [ir.Intrinsic("set_flag", (int(ev), eid), (), loc, attrs),
                ir.Intrinsic("wait_flag", (int(ev), eid), (), loc, attrs)]


def _free_ids(fn: ir.Function) -> dict:
    """Per HardEvent, the highest event id the kernel's own flags do not name as a constant."""
    used: dict = {}

    def walk(stmts):
        for s in stmts:
            if isinstance(s, ir.Intrinsic) and s.op in ("set_flag", "wait_flag") \
                    and isinstance(s.args[1], ir.Const):
                used.setdefault(s.args[0], set()).add(int(s.args[1].value))
            for child in ("then", "orelse", "body", "pre"):
                sub = getattr(s, child, None)
                if sub:
                    walk(sub)
    walk(fn.body)
    out = {}
    for ev in HardEvent:
        free = [i for i in range(EVENT_IDS_PER_EVENT) if i not in used.get(int(ev), ())]
        out[ev] = free[-1] if free else EVENT_IDS_PER_EVENT - 1
    return out


def insert_sync(fn: ir.Function) -> tuple[ir.Function, int]:
    """``fn`` with the synchronisation it needs between pipes inserted; and how many
    set_flag/wait_flag pairs and barriers were inserted (as written in the code)."""
    ins = _Inserter(fn)
    body, _ = ins.block(fn.body, {}, True)
    return replace(fn, body=body), ins.inserted


# ----------------------------------------------------------------------------- LocalTensorAuto
def _at_start(e, assigned: dict, loc):
    """``e`` rewritten to be evaluated before the kernel's first statement: variables set
    once, from such values (its scalar parameters), replaced by their value."""
    if isinstance(e, (ir.Const, ir.ScalarArg, ir.Special)):
        return e
    if isinstance(e, ir.Load):
        values = assigned.get(e.var, ())
        if len(values) == 1 and values[0] is not None and not isinstance(values[0], tuple):
            return _at_start(values[0], assigned, loc)
    elif isinstance(e, (ir.Bin, ir.Cmp)):
        return replace(e, a=_at_start(e.a, assigned, loc), b=_at_start(e.b, assigned, loc))
    elif isinstance(e, (ir.Cast, ir.Un)):
        return replace(e, a=_at_start(e.a, assigned, loc))
    from .errors import KernelValueError
    raise KernelValueError(
        "asc.LocalTensorAuto needs a shape known when the kernel starts", loc,
        hint="use ConstExpr values and scalar kernel parameters (and arithmetic on them): the "
             "compiler reserves the tensors' UB before the kernel's first statement")


def reserve_auto_tensors(fn: ir.Function, queue_names: list) -> tuple[ir.Function, list, bool]:
    """Reserve the UB region of the kernel's LocalTensorAuto buffers before its first
    statement (a hidden TBuf initialised first, so it starts at UB byte 0 and later
    ``init_buffer`` calls are placed after it; too large a region is the usual capacity
    error). Returns the function, the queue names, and whether it has any."""
    from .sema.auto_tensor import AUTO_ATTR
    sites = []

    def walk(stmts):
        for s in stmts:
            if isinstance(s, ir.Intrinsic) and s.op == "check_local" and s.attr(AUTO_ATTR):
                sites.append((s.attr(AUTO_ATTR), s.loc))
            for child in ("then", "orelse", "body", "pre"):
                sub = getattr(s, child, None)
                if sub:
                    walk(sub)
    walk(fn.body)
    if not sites:
        return fn, queue_names, False
    assigned = _assignments(fn)
    end = None
    for (off, nbytes), loc in sites:
        e = _at_start(ir.Bin("add", off, nbytes, int32), assigned, loc)
        if isinstance(e.a, ir.Const) and isinstance(e.b, ir.Const):
            e = ir.Const(int(e.a.value) + int(e.b.value), int32)
        if end is None:
            end = e
        elif isinstance(end, ir.Const) and isinstance(e, ir.Const):
            end = ir.Const(max(int(end.value), int(e.value)), int32)
        else:
            end = ir.Bin("max", end, e, int32)
    from ..dsl.types import TPosition
    qid = fn.num_queues
    init = ir.Intrinsic("init_buffer", (ir.Const(1, int32), end), (), sites[0][1],
                        (("queue", qid), ("memory", Memory.UB), ("position", TPosition.VECCALC),
                         ("auto_tensors", True)))
    fn = replace(fn, body=(init,) + fn.body, num_queues=qid + 1)
    return fn, list(queue_names) + ["LocalTensorAuto buffers"], True


def run(result, kernel):
    """The pass as the compile pipeline calls it: a SemaResult in, a SemaResult out."""
    fn, names, auto = reserve_auto_tensors(result.function, result.queue_names)
    if sync_enabled(getattr(kernel, "options", None) or {}, auto):
        fn, _ = insert_sync(fn)
    if fn is result.function:
        return result
    return replace(result, function=fn, queue_names=names)
