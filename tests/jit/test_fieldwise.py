"""``fieldwise.Fieldwise``/``FrozenFieldwise`` give a dataclass the ``__repr__``, ``__eq__`` and
``__hash__`` ``dataclasses`` would generate for it: checked against stock dataclasses with the
same fields, for made-up classes (every field flag) and for each launch-path class that uses
them (``CacheKey``, ``CompiledKernel``, ``ArgSpec``'s repr, ``GmWrites``, ``Report``,
``LaunchResult``), whose reprs also make the disk cache's keys (``CacheKey.digest``)."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import pytest

from ascendc_py.compiler import jit
from ascendc_py.compiler.errors import SourceLoc
from ascendc_py.compiler.spec import ArgSpec, GmWrites
from ascendc_py.dsl.types import float16, float32
from ascendc_py.fieldwise import Fieldwise, FrozenFieldwise
from ascendc_py.simulator.report import Report
from ascendc_py.simulator.runtime import LaunchResult


def stock_twin(cls):
    """A plain @dataclass with ``cls``'s name, fields and frozenness (methods generated)."""
    ns: dict = {"__annotations__": {}, "__qualname__": cls.__qualname__,
                "__module__": cls.__module__}
    for f in dataclasses.fields(cls):
        ns["__annotations__"][f.name] = f.type
        ns[f.name] = field(default=f.default, default_factory=f.default_factory, repr=f.repr,
                           compare=f.compare, hash=f.hash, kw_only=f.kw_only)
    frozen = cls.__dataclass_params__.frozen
    return dataclass(frozen=frozen)(type(cls.__name__, (), ns))


def assert_same(ours, theirs, ours2, theirs2) -> None:
    assert repr(ours) == repr(theirs)
    assert (ours == ours2) == (theirs == theirs2)
    assert (ours != ours2) == (theirs != theirs2)
    assert (ours == 5) == (theirs == 5)
    hashable = theirs.__class__.__hash__ is not None
    assert (ours.__class__.__hash__ is not None) == hashable
    if hashable:
        assert hash(ours) == hash(theirs)


@dataclass(repr=False, eq=False)
class Mutable(Fieldwise):
    a: int
    b: Any = None
    hidden: int = field(default=7, repr=False)
    ignored: int = field(default=0, compare=False)


@dataclass(frozen=True, repr=False, eq=False)
class Frozen(FrozenFieldwise):
    a: int
    b: tuple = ()
    not_hashed: int = field(default=1, hash=False)
    hashed_only: int = field(default=2, compare=False, hash=True)
    neither: int = field(default=3, compare=False)


@pytest.mark.parametrize("cls", [Mutable, Frozen])
@pytest.mark.parametrize("values, other", [
    ((1, "x"), (1, "x")), ((1, "x"), (2, "x")), ((1, (2, 3.5)), (1, (2, 3.5))),
])
def test_made_up_dataclasses_match_stock_ones(cls, values, other):
    twin = stock_twin(cls)
    kwargs = [{"a": v[0], "b": v[1]} for v in (values, other)]
    assert_same(cls(**kwargs[0]), twin(**kwargs[0]), cls(**kwargs[1]), twin(**kwargs[1]))
    # the fields that do not take part differ: still equal, as generated
    extra = {"ignored": 9} if cls is Mutable else {"hashed_only": 5, "neither": 6}
    assert_same(cls(**kwargs[0]), twin(**kwargs[0]), cls(**kwargs[0], **extra),
                twin(**kwargs[0], **extra))


def test_a_recursive_repr_shows_dots_as_generated():
    ours, theirs = Mutable(1), stock_twin(Mutable)(1)
    ours.b, theirs.b = [ours], [theirs]
    assert repr(ours) == repr(theirs) == "Mutable(a=1, b=[...], ignored=0)"


def test_frozen_stays_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        Frozen(1).a = 2


def _key(kernel: str) -> jit.CacheKey:
    specs = (ArgSpec.of("x", "gm", dtype=float32), ArgSpec.of("n", "scalar", dtype=float16),
             ArgSpec.of("k", "const", value=3))
    return jit.CacheKey(kernel, (("m.k", "ab12"),), specs, (("m.k:T", "3"),), "timed",
                        "0123456789abcdef", "x86_64|cpu|00")


def test_launch_path_classes_match_stock_dataclasses():
    loc = SourceLoc("k.py", 3, 5)
    writes = GmWrites(((1, "data_copy", loc),), (2,), False)
    cases = [
        (_key("m.k"), _key("m.k"), _key("m.other")),
        (writes, GmWrites(((1, "data_copy", loc),), (2,), False), GmWrites()),
        (LaunchResult(4, 0.5, [1, 2], "out"), LaunchResult(4, 0.5, [1, 2], "out"),
         LaunchResult(4, 0.5)),
        (Report("k", 8, "Ascend910B2", cycles=10, stalls={"flag wait": 3}),
         Report("k", 8, "Ascend910B2", cycles=10, stalls={"flag wait": 3}),
         Report("k", 8, "Ascend910B2", cycles=11)),
    ]
    for ours, same, other in cases:
        twin = stock_twin(type(ours))
        values = {f.name: getattr(ours, f.name) for f in dataclasses.fields(ours)}
        theirs = twin(**values)
        assert_same(ours, theirs, same, twin(**{f.name: getattr(same, f.name)
                                               for f in dataclasses.fields(same)}))
        assert_same(ours, theirs, other, twin(**{f.name: getattr(other, f.name)
                                                for f in dataclasses.fields(other)}))


def test_compiled_kernel_and_arg_spec_reprs_match_stock_dataclasses():
    compiled = jit.CompiledKernel("k", "asc_k", 0, [], (), (), 0, [], {})
    twin = stock_twin(jit.CompiledKernel)
    theirs = twin(**{f.name: getattr(compiled, f.name) for f in dataclasses.fields(compiled)})
    assert repr(compiled) == repr(theirs)
    assert compiled == jit.CompiledKernel("k", "asc_k", 0, [], (), (), 0, [], {})
    assert jit.CompiledKernel.__hash__ is None
    spec = ArgSpec.of("x", "gm", dtype=float32)
    assert repr(spec) == repr(stock_twin(ArgSpec)("x", "gm", float32, None))
    # the disk cache's key is the key's repr: the same text as a generated repr makes
    key = _key("m.k")
    assert repr(key) == repr(stock_twin(jit.CacheKey)(
        **{f.name: getattr(key, f.name) for f in dataclasses.fields(key)}))
    assert key.digest() == _key("m.k").digest() != _key("m.other").digest()
