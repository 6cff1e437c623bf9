"""The syntax nodes, IR classes and sema values declared with ``fieldwise_dataclass`` (issue
14: no methods compiled at import) behave as the ``@dataclass(frozen=True)`` they replaced."""
from __future__ import annotations

import dataclasses

import pytest

from ascendc_py.compiler import ast as A
from ascendc_py.compiler import ir
from ascendc_py.compiler.sema import values as V
from ascendc_py.fieldwise import FrozenFieldwise


def _classes():
    for module in (A, ir, V):
        for obj in vars(module).values():
            if isinstance(obj, type) and obj.__module__ == module.__name__ and \
                    issubclass(obj, FrozenFieldwise) and dataclasses.is_dataclass(obj):
                yield obj


CLASSES = list(_classes())


def test_every_node_ir_and_value_class_is_covered():
    assert len([c for c in CLASSES if c.__module__ == A.__name__]) == 29
    assert len([c for c in CLASSES if c.__module__ == ir.__name__]) == 21
    assert len([c for c in CLASSES if c.__module__ == V.__name__]) == 14


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: f"{c.__module__}.{c.__name__}")
def test_behaves_as_the_generated_frozen_dataclass(cls):
    fields = dataclasses.fields(cls)
    if cls.__module__ == A.__name__:
        assert fields[0].name == "loc"
    # the dataclass @dataclass(frozen=True) makes of the same fields
    ref = dataclasses.make_dataclass(
        cls.__name__, [(f.name, f.type, dataclasses.field(
            default=f.default, default_factory=f.default_factory, compare=f.compare,
            hash=f.hash, repr=f.repr)) for f in fields], frozen=True)
    ref.__qualname__ = cls.__qualname__
    values = {f.name: (i, str(i)) for i, f in enumerate(fields)}
    other = dict(values, **{f.name: "x" for f in fields[-1:]})
    a, b, c, r = cls(**values), cls(**values), cls(**other), ref(**values)
    assert repr(a) == repr(r)
    assert a == b and hash(a) == hash(b) == hash(r)
    assert (a == c) == (r == ref(**other))
    assert a != r                      # another class: never equal, as generated
    assert dataclasses.replace(a) == a and dataclasses.astuple(a) == dataclasses.astuple(r)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.__setattr__(fields[0].name, 1) if fields else setattr(a, "x", 1)
