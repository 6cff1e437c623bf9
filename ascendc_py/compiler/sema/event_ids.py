"""TPipe's event-id pool: ``alloc_event_id``, ``fetch_event_id``, ``release_event_id``.

Ascend C's TPipe hands out the ids of each HardEvent (0..7 on A2/A3) for ``set_flag`` /
``wait_flag`` pairs the kernel writes by hand: ``AllocEventID<event>()`` takes the lowest free
id, ``ReleaseEventID<event>(id)`` gives it back, ``FetchEventID<event>()`` returns the id that
alloc would take, without taking it. Here the queues' own synchronisation uses no flag ids, so
every id of every event is in the pool.

The pool is one int32 bit mask per HardEvent, a variable of the kernel set to 0 when the
kernel starts (``Analyzer.prologue``), so ids taken in loops and branches are counted at run
time. Taking an id when all are taken, or releasing one that is not taken (or out of range),
stops the kernel with a ``KernelAssertionError`` at the line.
"""
from __future__ import annotations

from ...dsl.types import EVENT_IDS_PER_EVENT, HardEvent, bool_, int32
from .. import ir
from . import scalars as S
from .builtins import bind_args, method, want_enum, want_int
from .values import EnumV, NoneV, PipeV, RtV


def _mask_var(an, event: HardEvent, loc) -> ir.Var:
    masks = an.__dict__.setdefault("event_id_masks", {})
    var = masks.get(event)
    if var is None:
        var = masks[event] = ir.Var(f"tpipe.event_ids.{event.name}", int32)
        an.prologue.append(ir.Assign(var, ir.Const(0, int32), loc))
    return var


def _bit(i: ir.Expr) -> ir.Expr:
    return ir.Bin("shl", ir.Const(1, int32), i, int32)


def _lowest_free(mask: ir.Expr) -> ir.Expr:
    """The index of the lowest zero bit of ``mask`` among 0..7, or 8 when all are set."""
    result: ir.Expr = ir.Const(EVENT_IDS_PER_EVENT, int32)
    for i in reversed(range(EVENT_IDS_PER_EVENT)):
        free = ir.Cmp("eq", ir.Bin("and", mask, ir.Const(1 << i, int32), int32),
                      ir.Const(0, int32))
        result = ir.Select(free, ir.Const(i, int32), result, int32)
    return result


def _event(b, loc) -> HardEvent:
    v = b["event"]
    return want_enum(v, HardEvent, "the event", loc)


@method(PipeV, "alloc_event_id", "fetch_event_id")
def _alloc_event_id(an, pipe, name, args, kwargs, loc):
    b = bind_args(f"{name}()", ("event",), args, kwargs, loc,
                  {"event": EnumV(HardEvent.V_S)})
    event = _event(b, loc)
    var = _mask_var(an, event, loc)
    ident = ir.Var(f"{name}.id", int32)
    an.emit(ir.Assign(ident, _lowest_free(ir.Load(var)), loc))
    ok = ir.Cmp("lt", ir.Load(ident), ir.Const(EVENT_IDS_PER_EVENT, int32))
    an.emit(ir.Intrinsic("kernel_assert", (ok,), (), loc, (
        ("msg", f"TPipe.{name}: all {EVENT_IDS_PER_EVENT} event ids of HardEvent."
                f"{event.name} are allocated (release one with release_event_id)"),)))
    if name == "alloc_event_id":
        an.emit(ir.Assign(var, ir.Bin("or", ir.Load(var), _bit(ir.Load(ident)), int32), loc))
    return RtV(ir.Load(ident))


@method(PipeV, "release_event_id")
def _release_event_id(an, pipe, name, args, kwargs, loc):
    b = bind_args("release_event_id()", ("id", "event"), args, kwargs, loc,
                  {"event": EnumV(HardEvent.V_S)})
    event = _event(b, loc)
    ident = want_int(S.numeric(b["id"]), "the event id", loc, int32)
    var = _mask_var(an, event, loc)
    in_range = ir.Bin("and", ir.Cmp("ge", ident, ir.Const(0, int32)),
                      ir.Cmp("lt", ident, ir.Const(EVENT_IDS_PER_EVENT, int32)), bool_)
    safe = ir.Select(in_range, ident, ir.Const(0, int32), int32)
    taken = ir.Cmp("ne", ir.Bin("and", ir.Load(var), _bit(safe), int32), ir.Const(0, int32))
    ok = ir.Bin("and", in_range, taken, bool_)
    an.emit(ir.Intrinsic("kernel_assert", (ok,), (), loc, (
        ("msg", f"TPipe.release_event_id: the id is not an allocated event id of HardEvent."
                f"{event.name} (0..{EVENT_IDS_PER_EVENT - 1}, from alloc_event_id)"),)))
    an.emit(ir.Assign(var, ir.Bin("and", ir.Load(var), ir.Un("invert", _bit(safe), int32),
                                  int32), loc))
    return NoneV()
