"""Semantic analysis of TQueBind (pyasc ``asc.language.fwk.tpipe.TQueBind``, Ascend C TQueBind).

``TQueBind(src=VECIN, dst=VECIN, depth=0, mask=0)``: a queue bound to a data path. TQue(pos) is
its simple form; the data paths Ascend C documents for TQueBind (its "TQueBind and TQue" table)
are accepted, each mapped onto the queue model of TQue (``sema/objects.py``):

* ``(GM, X)``, ``(X, GM)``, ``(X, X)``: the same as ``TQue(X)`` (its memory, and its producer
  and consumer pipes: VECIN MTE2→V, VECOUT V→MTE3, A1/B1/C1 MTE2→MTE1, …);
* ``(A1, A2)``, ``(B1, B2)``, ``(C1, C2)``: ``TQue(A2)``/``TQue(B2)``/``TQue(C2)``;
  ``(CO1, CO2)``: ``TQue(CO1)``; as the table gives them;
* ``(VECIN, VECOUT)``: a UB buffer filled by MTE2 and drained by MTE3 (a copy through UB with no
  vector work): enque hands MTE2's writes to MTE3.

Other pairs (``VECOUT→A1/B1/C1``, ``CO2→VECIN``, positions of different memories) are a
compile error: where their buffer lives is not documented. ``mask`` (ND/NZ conversion on A1/B1/CO2, not done
by A2/A3's queues) must be 0 here. Depth 0 is Ascend C's in-place queue (also ``TQue(pos,
0)``): it has only the in-place forms ``alloc_tensor(t)`` / ``deque(t)``, which fill the
LocalTensor variable ``t`` (its dtype gives the tensor's), and a queue of depth 1.. has only
the forms returning a tensor, as the documentation requires; a depth-0 queue holds one
enqueued tensor at a time. ``enque(tensor, src_user_pos, dst_user_pos)`` and
``deque(dtype, src_user_pos, dst_user_pos)`` hand the tensor over between the pipes of that
path instead of the queue's own (the same rule). Every other method is TQue's.
"""
from __future__ import annotations


from ...dsl.types import TPosition, int32
from .. import ir
from ..errors import ConstantRangeError, KernelTypeError, UnsupportedConstructError
from .builtins import (METHODS, bind_args, function, method, want_const_int, want_dtype,
                       want_enum)
from .objects import MAX_QUEUE_BUFFERS, _new_queue, _queue_attrs
from .values import identity_value, ConstV, EnumV, LocalTensorV, NoneV, QueueV

P = TPosition
#: the documented two-position paths and the TQue position each acts as
PATHS = {(P.A1, P.A2): P.A2, (P.B1, P.B2): P.B2, (P.C1, P.C2): P.C2, (P.CO1, P.CO2): P.CO1,
         (P.VECIN, P.VECOUT): P.VECIN}
QUEUE_POSITIONS = (P.VECIN, P.VECOUT, P.VECCALC, P.A1, P.A2, P.B1, P.B2, P.C1, P.C2, P.CO1,
                   P.CO2)


@identity_value
class BoundQueueV(QueueV):
    """A TQueBind: a TQue whose hand-over pipes come from its (src, dst) path."""

    src: TPosition = P.VECIN
    dst: TPosition = P.VECIN
    in_place: bool = False     # declared with depth 0: only the in-place forms

    def describe(self) -> str:
        if self.src == self.dst:
            return f"TQue({self.src.name}, depth 0)"
        return f"TQueBind({self.src.name}, {self.dst.name})"


def path_position(src: TPosition, dst: TPosition, what: str, loc) -> TPosition:
    """The TQue position a (src, dst) path acts as; an error for undocumented paths."""
    if src == P.GM and dst == P.GM:
        raise ConstantRangeError(f"{what}: src and dst are both GM; a queue needs a local "
                                 f"position", loc)
    if P.GM in (src, dst) or src == dst:
        pos = dst if src == P.GM else src
        if pos not in QUEUE_POSITIONS:
            raise ConstantRangeError(f"{what}: {pos.name} is not a queue position", loc)
        return pos
    if (src, dst) in PATHS:
        return PATHS[(src, dst)]
    raise UnsupportedConstructError(
        f"{what}: the path {src.name} -> {dst.name} is not supported here (Ascend C documents "
        f"GM->X, X->GM, VECIN->VECOUT, A1->A2, B1->B2, C1->C2, CO1->CO2 as simulated; "
        f"VECOUT->A1/B1/C1 and CO2->VECIN do not say where the buffer lives)", loc)


def _position(v, what, loc) -> TPosition:
    return want_enum(v, TPosition, what, loc)


@function("TQueBind")
def _tquebind(an, args, kwargs, loc):
    b = bind_args("asc.TQueBind()", ("src", "dst", "depth", "mask"), args, kwargs, loc,
                  {"src": EnumV(P.VECIN), "dst": EnumV(P.VECIN), "depth": ConstV(0, int32),
                   "mask": ConstV(0, int32)})
    src, dst = _position(b["src"], "src", loc), _position(b["dst"], "dst", loc)
    path_position(src, dst, "asc.TQueBind", loc)
    depth = want_const_int(b["depth"], "depth", loc)
    if not 0 <= depth <= MAX_QUEUE_BUFFERS:
        raise ConstantRangeError(f"TQueBind depth must be 0..{MAX_QUEUE_BUFFERS}, got {depth}",
                                 loc)
    if want_const_int(b["mask"], "mask", loc) != 0:
        raise UnsupportedConstructError("TQueBind mask (ND/NZ conversion on the queue) is not "
                                        "done by A2/A3 queues; use 0", loc)
    return new_bound_queue(an, src, dst, depth, loc, "TQueBind")


def new_bound_queue(an, src: TPosition, dst: TPosition, depth: int, loc, kind: str):
    """A queue on the path (src, dst); depth 0 makes Ascend C's in-place queue (it runs as
    depth 1: its tensors come from alloc_tensor(t)/deque(t) filling the variable t)."""
    pos = path_position(src, dst, f"asc.{kind}", loc)
    q = _new_queue(an, pos, max(depth, 1), loc, False)
    bq = BoundQueueV(q.qid, q.position, q.depth, f"{kind}@{loc.line}", False, src, dst,
                     depth == 0)
    an.queues[q.qid] = bq
    return bq


def bind_attrs(q: QueueV, path=None) -> tuple:
    """The queue attrs of an instruction, with the (src, dst) path that sets its pipes."""
    attrs = _queue_attrs(q)
    if path is None and isinstance(q, BoundQueueV):
        path = (q.src, q.dst)
    return attrs + ((("bind", tuple(int(p) for p in path)),) if path is not None else ())


def _user_path(b, loc):
    if b.get("src_user_pos") is None:
        return None
    src = _position(b["src_user_pos"], "src_user_pos", loc)
    dst = _position(b["dst_user_pos"], "dst_user_pos", loc)
    path_position(src, dst, "the user positions", loc)
    return (src, dst)


def _form(q: BoundQueueV, v, name, loc):
    """The dtype of an alloc_tensor/deque call, and whether it is the in-place form (a
    LocalTensor argument): Ascend C allows that form exactly on depth-0 queues."""
    if isinstance(v, LocalTensorV):
        if not q.in_place:
            raise UnsupportedConstructError(
                f"{name}(tensor), the in-place form, needs a queue declared with depth 0 "
                f"(Ascend C); this one has depth {q.depth}: use t = que.{name}(dtype)", loc)
        return v.dtype, True
    if q.in_place:
        raise UnsupportedConstructError(
            f"a depth-0 (in-place) queue has only the in-place form: que.{name}(t) fills "
            f"the LocalTensor variable t", loc)
    return want_dtype(v, "dtype", loc), False


def _result(an, t, in_place, name, loc):
    if in_place:
        an.rebind_argument(0, "tensor", t, f"{name}(tensor)", loc)
        return NoneV()
    return t


def _tensor_kw(kwargs):
    kw = dict(kwargs)
    if "tensor" in kw:
        kw["dtype"] = kw.pop("tensor")
    return kw


@method(BoundQueueV, "alloc_tensor")
def _alloc(an, q, name, args, kwargs, loc):
    b = bind_args("alloc_tensor()", ("dtype",), args, _tensor_kw(kwargs), loc)
    dtype, in_place = _form(q, b["dtype"], name, loc)
    return _result(an, _take(an, "alloc_tensor", q, dtype, None, loc), in_place, name, loc)


@method(BoundQueueV, "deque")
def _deque(an, q, name, args, kwargs, loc):
    b = bind_args("deque()", ("dtype", "src_user_pos", "dst_user_pos"), args,
                  _tensor_kw(kwargs), loc, {"src_user_pos": None, "dst_user_pos": None})
    dtype, in_place = _form(q, b["dtype"], name, loc)
    path = _user_path(b, loc)
    return _result(an, _take(an, "deque", q, dtype, path, loc), in_place, name, loc)


def _take(an, op, q, dtype, path, loc):
    addr, nbytes, tag = (ir.Var(f"{op}.addr", int32), ir.Var(f"{op}.bytes", int32),
                         ir.Var(f"{op}.tag", int32))
    an.emit(ir.Intrinsic(op, (), (addr, nbytes, tag), loc, bind_attrs(q, path)))
    size = ir.Bin("floordiv", ir.Load(nbytes), ir.Const(dtype.sizeof(), int32), int32)
    return LocalTensorV(dtype, q.position, ir.Load(addr), size, ir.Load(tag), origin=loc,
                        made_by=op)


@method(BoundQueueV, "enque", "free_tensor")
def _give(an, q, name, args, kwargs, loc):
    params = ("tensor", "src_user_pos", "dst_user_pos") if name == "enque" else ("tensor",)
    b = bind_args(f"{name}()", params, args, kwargs, loc,
                  {"src_user_pos": None, "dst_user_pos": None})
    t = b["tensor"]
    if not isinstance(t, LocalTensorV):
        raise KernelTypeError(f"{name} needs a LocalTensor, got {t.describe()}", loc)
    path = _user_path(b, loc) if name == "enque" else None
    an.emit(ir.Intrinsic(name, (t.ref(),), (), loc, bind_attrs(q, path)))
    return NoneV()


@method(BoundQueueV, "free_all_event")
def _free_all_event(an, q, name, args, kwargs, loc):
    """Ascend C FreeAllEvent: release the queue's synchronisation events. The simulated queue
    keeps no events beyond its buffers' states, so there is nothing to release."""
    bind_args("free_all_event()", (), args, kwargs, loc)
    return NoneV()


def _delegate(name):
    handler = METHODS[(QueueV, name)]
    method(BoundQueueV, name)(handler)


for _name in ("get_tensor_count_in_que", "has_tensor_in_que", "has_idle_buffer",
              "vacant_in_que"):
    _delegate(_name)

