"""``__repr__``, ``__eq__`` and ``__hash__`` of a dataclass, written once for all of them.

Python 3.11's ``dataclasses`` writes the source of every generated method of every dataclass and
compiles it with ``exec`` when the class is created (about 60 µs a method, ~0.2 ms for a
class's ``__repr__`` and ``__eq__``), which a process pays when it imports the class. The
dataclasses a cached first launch creates (issue 14) declare ``@dataclass(repr=False,
eq=False)`` and inherit these methods instead: the same results as the generated ones, read
from ``dataclasses.fields`` (compiled once, with this module). ``Fieldwise`` is for mutable
dataclasses (``__eq__`` and no hash, as ``eq=True`` makes them), ``FrozenFieldwise`` for
frozen ones (with the hash ``eq=True, frozen=True`` generates).

- ``__repr__``: ``Name(field=value!r, ...)`` over the fields with ``repr=True``, in order, the
  class's ``__qualname__`` first; ``...`` for an object met again while it is being shown.
- ``__eq__``: for an object of the very same class, the tuples of the ``compare=True`` fields
  compared with ``==``; ``NotImplemented`` otherwise.
- ``__hash__`` (frozen): the hash of the tuple of the fields whose ``hash`` is True, or is None
  and ``compare`` is True.
"""
from __future__ import annotations

import dataclasses
import reprlib

_NAMES: dict = {}      # (class, 'repr' | 'compare' | 'hash') -> the field names, in order


def _names(cls, kind: str) -> tuple:
    names = _NAMES.get((cls, kind))
    if names is None:
        fields = dataclasses.fields(cls)
        if kind == "repr":
            names = tuple(f.name for f in fields if f.repr)
        elif kind == "compare":
            names = tuple(f.name for f in fields if f.compare)
        else:
            names = tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))
        _NAMES[(cls, kind)] = names
    return names


class Fieldwise:
    """``__repr__`` and ``__eq__`` of a mutable dataclass (declared with ``repr=False,
    eq=False``); unhashable, as a generated ``__eq__`` makes it."""

    __slots__ = ()

    @reprlib.recursive_repr()
    def __repr__(self) -> str:
        cls = self.__class__
        return cls.__qualname__ + "(" + ", ".join(
            f"{name}={getattr(self, name)!r}" for name in _names(cls, "repr")) + ")"

    def __eq__(self, other):
        cls = self.__class__
        if other.__class__ is cls:
            names = _names(cls, "compare")
            return tuple(getattr(self, n) for n in names) == \
                tuple(getattr(other, n) for n in names)
        return NotImplemented

    __hash__ = None     # type: ignore[assignment]


class FrozenFieldwise(Fieldwise):
    """``Fieldwise`` plus the field-tuple ``__hash__`` of a frozen dataclass (declared with
    ``frozen=True, repr=False, eq=False``)."""

    __slots__ = ()

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, n) for n in _names(self.__class__, "hash")))


__all__ = ["Fieldwise", "FrozenFieldwise"]
