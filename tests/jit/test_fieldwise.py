"""``fieldwise.Fieldwise``/``FrozenFieldwise`` give a dataclass the ``__repr__``, ``__eq__`` and
``__hash__`` ``dataclasses`` would generate for it: checked against stock dataclasses with the
same fields, for made-up classes (every field flag) and for each launch-path class that uses
them (``CacheKey``, ``CompiledKernel``, ``ArgSpec``'s repr, ``GmWrites``, ``Report``,
``LaunchResult``), whose reprs also make the disk cache's keys (``CacheKey.digest``).
``fieldwise_dataclass`` gives them the ``__init__`` (signature, annotations, defaults, default
factories, ``__post_init__``, error messages), the frozen ``__setattr__``/``__delattr__`` and the
``__dataclass_params__`` a stock ``@dataclass`` would, compiling nothing when the class is
created."""
from __future__ import annotations

import dataclasses
import inspect
import json
import os
import pickle
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest

from ascendc_py.compiler import jit
from ascendc_py.compiler.errors import SourceLoc
from ascendc_py.compiler.spec import ArgSpec, GmWrites
from ascendc_py.dsl.types import float16, float32
from ascendc_py import fieldwise
from ascendc_py.fieldwise import Fieldwise, FrozenFieldwise, fieldwise_dataclass
from ascendc_py.simulator.report import Report
from ascendc_py.simulator.runtime import LaunchResult


def stock_twin(cls):
    """A plain @dataclass with ``cls``'s name, fields and frozenness (methods generated)."""
    ns: dict = {"__annotations__": {}, "__qualname__": cls.__qualname__,
                "__module__": cls.__module__}
    for f in dataclasses.fields(cls):
        ns["__annotations__"][f.name] = f.type
        ns[f.name] = field(default=f.default, default_factory=f.default_factory, repr=f.repr,
                           compare=f.compare, hash=f.hash, kw_only=f.kw_only, init=f.init)
    if "__post_init__" in cls.__dict__:
        ns["__post_init__"] = cls.__dict__["__post_init__"]
    frozen = cls.__dataclass_params__.frozen
    return dataclass(frozen=frozen)(type(cls.__name__, (), ns))


def assert_same(ours, theirs, ours2, theirs2) -> None:
    # Fieldwise's repr (Report overrides __repr__ with a summary for people; its fieldwise
    # repr must still be the generated one)
    assert Fieldwise.__repr__(ours) == repr(theirs)
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


# ----------------------------------------------------------------------------- fieldwise_dataclass
@fieldwise_dataclass
class Lazy(Fieldwise):
    """Every kind of field ``__init__`` treats differently."""

    a: int
    b: list = field(default_factory=list)
    c: str = "c"
    hidden: dict = field(default_factory=dict, init=False)
    fixed: int = field(default=4, init=False)
    k: int = field(default=5, kw_only=True)
    kk: Any = field(kw_only=True, default_factory=lambda: [1])

    def __post_init__(self):
        self.seen = (self.a, self.c)


@fieldwise_dataclass(frozen=True)
class FrozenLazy(FrozenFieldwise):
    """Frozen, with a field called ``self``."""

    self: int
    b: tuple = ()
    d: dict = field(default_factory=dict, compare=False)


@fieldwise_dataclass
class Undocumented(Fieldwise):
    a: int
    b: int = 2


FIELDWISE_CLASSES = [Lazy, FrozenLazy, Undocumented, jit.CacheKey, jit.CompiledKernel,
                     ArgSpec, GmWrites, Report, LaunchResult]


def init_error(cls, *args, **kwargs) -> str:
    """The TypeError message of ``cls(*args, **kwargs)``, or 'ok'."""
    try:
        cls(*args, **kwargs)
    except TypeError as exc:
        return str(exc)
    return "ok"


@pytest.mark.parametrize("cls", FIELDWISE_CLASSES, ids=lambda c: c.__name__)
def test_init_params_and_flags_match_stock_dataclasses(cls):
    twin = stock_twin(cls)
    assert inspect.signature(cls) == inspect.signature(twin)
    assert str(inspect.signature(cls)) == str(inspect.signature(twin))
    assert cls.__init__.__annotations__ == twin.__init__.__annotations__
    assert cls.__init__.__qualname__ == twin.__init__.__qualname__ == \
        f"{cls.__qualname__}.__init__"
    assert cls.__init__.__defaults__ == twin.__init__.__defaults__
    assert cls.__init__.__kwdefaults__ == twin.__init__.__kwdefaults__
    assert cls.__match_args__ == twin.__match_args__
    for flag in ("init", "repr", "eq", "order", "unsafe_hash", "frozen"):
        stock = getattr(twin.__dataclass_params__, flag)
        if flag in ("repr", "eq"):
            stock = False               # Fieldwise's methods, not generated ones
        assert getattr(cls.__dataclass_params__, flag) == stock, flag
    assert init_error(cls) == init_error(twin) != "ok" or not any(
        f.default is f.default_factory is dataclasses.MISSING for f in dataclasses.fields(cls))
    assert init_error(cls, *range(60)) == init_error(twin, *range(60))
    assert init_error(cls, nope=1) == init_error(twin, nope=1)


FIELD_ATTRIBUTES = ("name", "type", "default", "default_factory", "init", "repr", "hash",
                    "compare", "metadata", "kw_only", "_field_type")


@pytest.mark.parametrize("cls", FIELDWISE_CLASSES, ids=lambda c: c.__name__)
def test_fields_and_class_attributes_match_stock_dataclasses(cls):
    twin = stock_twin(cls)
    ours, theirs = dataclasses.fields(cls), dataclasses.fields(twin)
    assert [[getattr(f, a) for a in FIELD_ATTRIBUTES] for f in ours] == \
        [[getattr(f, a) for a in FIELD_ATTRIBUTES] for f in theirs]
    assert list(cls.__dataclass_fields__) == list(twin.__dataclass_fields__)
    assert dataclasses.is_dataclass(cls) and dataclasses.is_dataclass(cls(
        *[0] * sum(f.init and f.default is f.default_factory is dataclasses.MISSING
                   and not f.kw_only for f in ours)))
    if cls is not Report:           # (Report deletes its defaults from the class on purpose)
        for f in ours:
            assert cls.__dict__.get(f.name, "absent") == twin.__dict__.get(f.name, "absent")


def test_declarations_fieldwise_does_not_process_itself_are_left_to_dataclasses():
    with pytest.raises(TypeError, match="ClassVar and InitVar"):     # seen by dataclasses
        @fieldwise_dataclass
        class WithClassVar(Fieldwise):
            """A ClassVar is not a field."""

            a: int
            counter: ClassVar[int] = 0

    @fieldwise_dataclass
    class Sub(Lazy):
        """A dataclass base's fields come first."""

        extra: int = 0

    assert [f.name for f in dataclasses.fields(Sub)] == \
        [f.name for f in dataclasses.fields(Lazy)] + ["extra"]
    assert Sub(1, extra=2).extra == 2 and Sub(1).seen == (1, "c")


def test_mutable_defaults_and_unannotated_fields_fail_as_in_dataclasses():
    with pytest.raises(ValueError, match="mutable default <class 'list'> for field a"):
        @fieldwise_dataclass
        class MutableDefault(Fieldwise):
            a: list = []
    with pytest.raises(TypeError, match="'b' is a field but has no type annotation"):
        @fieldwise_dataclass
        class Unannotated(Fieldwise):
            a: int
            b = field(default=1)


def test_undocumented_classes_get_the_stock_docstring():
    assert Undocumented.__doc__ == stock_twin(Undocumented).__doc__ == "Undocumented(a: 'int', b: 'int' = 2)"


def test_init_sets_fields_and_runs_post_init_as_generated():
    twin = stock_twin(Lazy)
    for args, kwargs in [((1,), {}), ((1, [2], "x"), {"k": 7, "kk": None}),
                         ((), {"a": 3, "c": "y"})]:
        ours, theirs = Lazy(*args, **kwargs), twin(*args, **kwargs)
        assert vars(ours) == vars(theirs)
        assert ours.seen == theirs.seen
        assert ours.fixed == theirs.fixed == 4
    first, second = Lazy(1), Lazy(1)
    assert first.b is not second.b and first.hidden is not second.hidden     # one per object
    assert FrozenLazy(self=1, b=(2,)).self == 1
    assert vars(FrozenLazy(1, (2,))) == vars(stock_twin(FrozenLazy)(1, (2,)))


@pytest.mark.parametrize("cls, args", [(FrozenLazy, (1,)), (GmWrites, ()),
                                       (ArgSpec, ("x", "gm")), (jit.CacheKey, tuple(range(7)))])
def test_frozen_classes_refuse_assignment_and_deletion_as_generated(cls, args):
    ours, theirs = cls(*args), stock_twin(cls)(*args)
    name = dataclasses.fields(cls)[0].name
    for obj in (ours, theirs):
        for do in (lambda o: setattr(o, name, 9), lambda o: setattr(o, "other", 9),
                   lambda o: delattr(o, name), lambda o: delattr(o, "other")):
            with pytest.raises(dataclasses.FrozenInstanceError) as info:
                do(obj)
            assert str(info.value).replace(name, "F").replace("other", "O") in (
                "cannot assign to field 'F'", "cannot assign to field 'O'",
                "cannot delete field 'F'", "cannot delete field 'O'")
    assert cls.__setattr__.__qualname__ == f"{cls.__qualname__}.__setattr__"
    assert cls.__delattr__.__qualname__ == f"{cls.__qualname__}.__delattr__"
    assert dataclasses.replace(ours) == ours


def test_a_subclass_of_a_frozen_fieldwise_class_may_set_new_names():
    class Sub(FrozenLazy):
        pass

    obj = Sub(1)
    obj.extra = 2                       # not the dataclass itself, not a field: allowed
    assert obj.extra == 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        obj.self = 3


def test_frozen_fieldwise_objects_pickle_and_copy():
    key = _key("m.k")
    assert pickle.loads(pickle.dumps(key)) == key
    assert pickle.loads(pickle.dumps(FrozenLazy(1, (2,)))) == FrozenLazy(1, (2,))
    assert dataclasses.asdict(GmWrites((), (1,), True)) == \
        {"static": (), "run_time": (1,), "untraced": True}


def test_misdeclared_classes_fail_as_stock_dataclasses_do():
    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):
        @fieldwise_dataclass
        class Bad(Fieldwise):
            a: int = 1
            b: int
    with pytest.raises(TypeError, match="ClassVar and InitVar"):
        @fieldwise_dataclass
        class WithInitVar(Fieldwise):
            a: dataclasses.InitVar[int]
    with pytest.raises(TypeError, match="Cannot overwrite attribute __setattr__"):
        @fieldwise_dataclass(frozen=True)
        class Setter(FrozenFieldwise):
            a: int

            def __setattr__(self, name, value):
                pass


def make_lazy_pair():
    """A new fieldwise class shaped as ``Lazy`` (its ``__init__`` not compiled yet) and its
    stock twin."""
    @fieldwise_dataclass
    class Fresh(Fieldwise):
        """Made here."""

        a: int
        b: list = field(default_factory=list)
        c: str = "c"
        hidden: dict = field(default_factory=dict, init=False)
        fixed: int = field(default=4, init=False)
        k: int = field(default=5, kw_only=True)
        kk: Any = field(kw_only=True, default_factory=lambda: [1])

        def __post_init__(self):
            self.seen = (self.a, self.c)

    return Fresh, stock_twin(Fresh)


CALLS = [((1,), {}), ((1, [2], "x"), {"k": 7, "kk": None}), ((), {"a": 3, "c": "y"}),
         ((1,), {"b": fieldwise._HAS_DEFAULT_FACTORY}),
         # calls that do not bind: the compiled __init__ raises Python's error
         ((), {}), ((1, 2, 3, 4), {}), ((1,), {"a": 2}), ((1,), {"nope": 0}),
         ((1,), {"hidden": {}}), ((1,), {"fixed": 3}), ((1, [], "c", 9), {})]


@pytest.mark.parametrize("args, kwargs", CALLS)
def test_the_generic_init_does_what_the_generated_one_does(args, kwargs):
    ours, twin = make_lazy_pair()
    try:
        theirs = twin(*args, **kwargs)
    except TypeError as exc:
        with pytest.raises(TypeError) as info:
            ours(*args, **kwargs)
        assert str(info.value) == str(exc)
        return
    obj = ours(*args, **kwargs)
    assert isinstance(ours.__dict__["__init__"], fieldwise._LazyInit)    # nothing compiled
    assert vars(obj) == vars(theirs)


def test_frozen_generic_init_and_factories_per_object():
    @fieldwise_dataclass(frozen=True)
    class FrozenFresh(FrozenFieldwise):
        """Made here."""

        a: int
        d: dict = field(default_factory=dict)

    first, second = FrozenFresh(1), FrozenFresh(a=1)
    assert first == second and first.d is not second.d
    assert vars(first) == vars(stock_twin(FrozenFresh)(1))
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.a = 2
    assert isinstance(FrozenFresh.__dict__["__init__"], fieldwise._LazyInit)


def test_init_is_compiled_when_looked_up_or_after_the_generic_calls():
    ours, twin = make_lazy_pair()
    assert isinstance(ours.__dict__["__init__"], fieldwise._LazyInit)
    for n in range(fieldwise.GENERIC_CALLS):
        assert vars(ours(n)) == vars(twin(n))
    assert isinstance(ours.__dict__["__init__"], fieldwise._LazyInit)
    assert vars(ours(99)) == vars(twin(99))
    assert inspect.isfunction(ours.__dict__["__init__"])        # compiled and in its place
    looked_up, _ = make_lazy_pair()
    assert inspect.signature(looked_up) == inspect.signature(twin)
    assert inspect.isfunction(looked_up.__dict__["__init__"])
    assert vars(looked_up(5)) == vars(twin(5))


FIRST_LAUNCH = """
import builtins, json, sys
import numpy as np
import kernels_for_tests as k
from ascendc_py import fieldwise
generated, inits = [], []
real_exec, real_init_function = builtins.exec, fieldwise.init_function
def counting_exec(src, *args):
    if isinstance(src, str) and src.startswith("def __create_fn__("):
        generated.append(src.split("def ", 2)[2].split("(", 1)[0])
    return real_exec(src, *args)
def counting_init_function(cls):
    inits.append(cls.__name__)
    return real_init_function(cls)
builtins.exec, fieldwise.init_function = counting_exec, counting_init_function
x = np.arange(4 * 512, dtype=np.float32)
y = np.full(x.size, 0.5, np.float32)
z = np.zeros_like(x)
r = k.vadd_kernel[4](x, y, z, 512)        # the launch test_cached_first_launch.run makes
builtins.exec = real_exec
from ascendc_py.compiler import jit, spec
from ascendc_py.simulator import report, runtime
lazy = sorted(c.__name__ for c in (jit.CacheKey, jit.CompiledKernel, spec.ArgSpec,
                                    spec.GmWrites, report.Report, runtime.LaunchResult)
              if isinstance(c.__dict__["__init__"], fieldwise._LazyInit))
print(json.dumps({"generated": generated, "inits": sorted(inits), "lazy": lazy,
                  "origin": r.code_origin}))
"""


def test_a_cached_first_launch_compiles_no_dataclass_method(tmp_path):
    """No method of a dataclass is compiled by a cached first launch: the few ``ArgSpec``s,
    the ``CacheKey`` and the ``CompiledKernel`` it makes are initialised by the generic
    ``__init__``, and the report (``Report``'s 40-parameter one) is built when read."""
    from test_cached_first_launch import run as run_launch
    env_cache = tmp_path / "cache"
    run_launch(env_cache)                                   # compiles into the cache
    env = {k: v for k, v in os.environ.items() if k != "ASCENDC_PY_CACHE_DIR"}
    tests = Path(__file__).resolve().parents[1]
    env.update(PYTHONPATH=os.pathsep.join([str(tests.parent), str(tests)]),
               ASCENDC_PY_CACHE_DIR=str(env_cache))
    proc = subprocess.run([sys.executable, "-c", FIRST_LAUNCH], env=env, capture_output=True,
                          text=True, timeout=300, cwd=tests.parent)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out == {"generated": [], "inits": [],
                   "lazy": ["ArgSpec", "CacheKey", "CompiledKernel", "GmWrites", "LaunchResult",
                            "Report"], "origin": "disk"}
