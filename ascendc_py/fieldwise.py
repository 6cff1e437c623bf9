"""Dataclasses whose methods are not compiled when the class is created.

Python 3.11's ``dataclasses`` writes the source of every generated method of every dataclass and
compiles it with ``exec`` when the class is created (about 60 µs a method, ~0.2 ms for a
class's ``__repr__`` and ``__eq__``), which a process pays when it imports the class. The
dataclasses a cached first launch creates (issue 14) are declared with
``fieldwise_dataclass`` (below) and inherit these methods instead: the same results as the
generated ones, read
from ``dataclasses.fields`` (compiled once, with this module). ``Fieldwise`` is for mutable
dataclasses (``__eq__`` and no hash, as ``eq=True`` makes them), ``FrozenFieldwise`` for
frozen ones (with the hash ``eq=True, frozen=True`` generates).

- ``__repr__``: ``Name(field=value!r, ...)`` over the fields with ``repr=True``, in order, the
  class's ``__qualname__`` first; ``...`` for an object met again while it is being shown.
- ``__eq__``: for an object of the very same class, the tuples of the ``compare=True`` fields
  compared with ``==``; ``NotImplemented`` otherwise.
- ``__hash__`` (frozen): the hash of the tuple of the fields whose ``hash`` is True, or is None
  and ``compare`` is True.

The other methods ``dataclasses`` compiles come from ``fieldwise_dataclass``, which these
classes use in place of ``@dataclass`` (it also processes their fields itself, see
``_plain_fields``):

- ``__init__``: the one ``dataclasses`` writes (the same source: parameters, defaults and their
  annotations, default factories, ``object.__setattr__`` for a frozen class, ``__post_init__``),
  compiled when the class's ``__init__`` is looked up on the class (``inspect.signature``) or
  after the class's first ``GENERIC_CALLS`` instances, which one generic function initialises
  as it would (``_LazyInit``): a cached first launch, which makes a few ``ArgSpec``s, one
  ``CacheKey`` and one ``CompiledKernel`` (and no ``Report``: it is built when read),
  compiles none.
- ``__setattr__``/``__delattr__`` of a frozen class: closures with the generated ones'
  behaviour (``FrozenInstanceError`` for a field, or for any name on the class itself), made
  without compiling anything.
"""
from __future__ import annotations

import abc
import dataclasses
import reprlib
import sys
import types

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


def fieldwise_dataclass(cls=None, *, frozen: bool = False):
    """``@dataclass(repr=False, eq=False, frozen=frozen)`` for a ``Fieldwise`` or
    ``FrozenFieldwise`` class, compiling no method when the class is created (see the module
    docstring): the same fields, ``__dataclass_params__`` (``init`` True, ``frozen`` as asked),
    ``__match_args__``, and methods that behave as the generated ones. Fields annotated
    ``ClassVar`` or ``InitVar`` are not supported (TypeError), nor frozen dataclass bases; a
    class without a docstring gets the one ``dataclasses`` writes, which compiles its
    ``__init__`` at once."""
    def wrap(cls):
        documented = bool(getattr(cls, "__doc__"))
        if not _plain_fields(cls):
            cls = dataclasses.dataclass(cls, init=False, repr=False, eq=False)
        params = cls.__dataclass_params__
        params.init = True
        fields = dataclasses.fields(cls)
        if len(fields) != len(cls.__dataclass_fields__):
            raise TypeError(f"fieldwise_dataclass {cls.__qualname__}: ClassVar and InitVar "
                            "annotations are not supported")
        _check_defaults_order(cls, fields)
        if frozen:
            params.frozen = True
            if "__setattr__" in cls.__dict__ or "__delattr__" in cls.__dict__:
                raise TypeError(f"Cannot overwrite attribute __setattr__ or __delattr__ in "
                                f"class {cls.__name__}")
            _frozen_set_del_attr(cls, tuple(f.name for f in fields))
        if "__init__" not in cls.__dict__:
            cls.__init__ = _LazyInit(cls)
        if not documented:              # the docstring dataclasses writes: the signature
            import inspect
            cls.__doc__ = cls.__name__ + str(inspect.signature(cls)).replace(" -> None", "")
        return cls

    return wrap if cls is None else wrap(cls)


def _plain_fields(cls) -> bool:
    """What ``dataclasses.dataclass(cls, init=False, repr=False, eq=False)`` does, done here
    for a class whose annotations are all strings naming no ``ClassVar``, ``InitVar`` or
    ``KW_ONLY`` and which has no dataclass base (True); False, having done nothing, for any
    other class (the caller lets ``dataclasses`` do it). ``dataclasses`` looks every string
    annotation up three times in the module's namespace (~3 µs a field); this makes the same
    ``Field`` objects (name, type, the default or ``field()`` given, ``kw_only`` False unless
    given), the same class attributes (a field's default, none for a ``field()`` without one),
    the same errors for a mutable default or a ``field()`` without annotation, the same
    ``__dataclass_params__`` and ``__match_args__``."""
    kinds = _FIELD_KINDS
    if kinds is None or any(hasattr(base, "__dataclass_fields__") for base in cls.__mro__[1:]):
        return False
    annotations = cls.__dict__.get("__annotations__", {})
    for annotation in annotations.values():
        if not isinstance(annotation, str) or any(w in annotation for w in _SPECIAL_NAMES):
            return False
    params = object.__new__(_PARAMS_TYPE)
    for name in _PARAMS_SLOTS:
        setattr(params, name, getattr(_TEMPLATE_PARAMS, name))
    cls.__dataclass_params__ = params
    fields = {}
    for name, annotation in annotations.items():
        default = getattr(cls, name, _MISSING)
        if isinstance(default, dataclasses.Field):
            f = default
        else:
            if isinstance(default, types.MemberDescriptorType):
                default = _MISSING
            f = dataclasses.field(default=default)
        f.name, f.type, f._field_type = name, annotation, kinds
        if f.kw_only is _MISSING:
            f.kw_only = False
        if f.default.__class__.__hash__ is None:
            raise ValueError(f"mutable default {type(f.default)} for field {f.name} is not "
                             "allowed: use default_factory")
        fields[name] = f
    for f in fields.values():
        if isinstance(getattr(cls, f.name, None), dataclasses.Field):
            if f.default is _MISSING:
                delattr(cls, f.name)
            else:
                setattr(cls, f.name, f.default)
    for name, value in cls.__dict__.items():
        if isinstance(value, dataclasses.Field) and name not in annotations:
            raise TypeError(f"{name!r} is a field but has no type annotation")
    cls.__dataclass_fields__ = fields
    if "__match_args__" not in cls.__dict__:
        cls.__match_args__ = tuple(f.name for f in fields.values() if f.init and not f.kw_only)
    abc.update_abstractmethods(cls)
    return True


_SPECIAL_NAMES = ("ClassVar", "InitVar", "KW_ONLY")
# what dataclasses marks a field (not a ClassVar or InitVar pseudo-field) with, and its
# parameters record: taken from dataclasses, or None (then dataclasses processes every class)
_FIELD_KINDS = getattr(dataclasses, "_FIELD", None)
_TEMPLATE_PARAMS = dataclasses.dataclass(     # (documented: no signature computed for it)
    type("_Template", (), {"__doc__": "params"}), init=False, repr=False,
    eq=False).__dataclass_params__
_PARAMS_TYPE = type(_TEMPLATE_PARAMS)
_PARAMS_SLOTS = getattr(_PARAMS_TYPE, "__slots__", None)
if not _PARAMS_SLOTS or hasattr(_TEMPLATE_PARAMS, "__dict__"):   # pragma: no cover
    _FIELD_KINDS = None


def _check_defaults_order(cls, fields) -> None:
    seen_default = False
    for f in fields:
        if f.init and not f.kw_only:
            if f.default is not dataclasses.MISSING or \
                    f.default_factory is not dataclasses.MISSING:
                seen_default = True
            elif seen_default:
                raise TypeError(f"non-default argument {f.name!r} follows default argument")


def _frozen_set_del_attr(cls, names: tuple) -> None:
    """A frozen dataclass's ``__setattr__`` and ``__delattr__``, as generated, without
    ``exec``."""
    error = dataclasses.FrozenInstanceError

    def __setattr__(self, name, value):
        if type(self) is cls or name in names:
            raise error(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self, name):
        if type(self) is cls or name in names:
            raise error(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    for fn in (__setattr__, __delattr__):
        fn.__qualname__ = f"{cls.__qualname__}.{fn.__name__}"
        setattr(cls, fn.__name__, fn)


class _LazyInit:
    """A fieldwise dataclass's ``__init__`` until it is compiled.

    Looked up on the class (``inspect.signature``, ``cls.__init__``), or after
    ``GENERIC_CALLS`` instances, it compiles the generated ``__init__`` (``init_function``) and
    puts it on the class in its place. Until then an instance is initialised by ``_call``,
    which does what the generated ``__init__`` does for a call that binds (the same fields
    assigned in the same order, defaults, default factories called in field order,
    ``object.__setattr__`` when frozen, ``__post_init__``); a call that does not bind (a missing,
    unknown or repeated argument, too many) is handed to the compiled one, which raises
    Python's own error. A cached first launch makes a few instances of three such classes
    and so compiles nothing."""

    __slots__ = ("cls", "calls", "plan")

    def __init__(self, cls):
        self.cls = cls
        self.calls = 0
        self.plan = None

    def __get__(self, obj, owner=None):
        if obj is None:
            return self.compiled()
        return types.MethodType(self._call, obj)

    def compiled(self):
        """The generated ``__init__``, compiled and put on the class (once)."""
        cls = self.cls
        init = cls.__dict__.get("__init__")
        if init is self:
            init = init_function(cls)
            type.__setattr__(cls, "__init__", init)
        return init

    def _call(self, obj, /, *args, **kwargs):   # positional-only: fields may be named self or obj
        self.calls += 1
        plan = self.plan
        if plan is None:
            plan = self.plan = _init_plan(self.cls)
        positional, names, steps, setter, post_init = plan
        if self.calls > GENERIC_CALLS or len(args) > len(positional):
            return self.compiled()(obj, *args, **kwargs)
        values = dict(zip(positional, args))
        for name, value in kwargs.items():
            if name not in names or name in values:
                return self.compiled()(obj, *args, **kwargs)
            values[name] = value
        for name, required in names.items():
            if required and name not in values:
                return self.compiled()(obj, *args, **kwargs)
        for name, init, default, factory in steps:
            if factory is not _MISSING:
                value = values.get(name, _HAS_DEFAULT_FACTORY) if init else \
                    _HAS_DEFAULT_FACTORY
                if value is _HAS_DEFAULT_FACTORY:
                    value = factory()
            else:
                value = values.get(name, default)
            setter(obj, name, value)
        if post_init:
            obj.__post_init__()


#: instances a fieldwise dataclass initialises without its compiled ``__init__`` (each costs a
#: few microseconds more than a compiled one would; compiling one costs about 60-500)
GENERIC_CALLS = 16
_MISSING = dataclasses.MISSING


def _init_plan(cls) -> tuple:
    """What ``_LazyInit._call`` needs: (the positional parameters' names, {parameter name:
    required}, (name, init, default, default factory) of each field the body assigns, the
    setter, whether ``__post_init__`` is called)."""
    positional, names, steps = [], {}, []
    for f in dataclasses.fields(cls):
        if f.init:
            if not f.kw_only:
                positional.append(f.name)
            names[f.name] = f.default is _MISSING and f.default_factory is _MISSING
        if f.init or f.default_factory is not _MISSING:
            steps.append((f.name, f.init, f.default, f.default_factory))
    setter = object.__setattr__ if cls.__dataclass_params__.frozen else setattr
    return (tuple(positional), names, tuple(steps), setter, hasattr(cls, "__post_init__"))


def init_function(cls):
    """The ``__init__`` ``dataclasses`` generates for the dataclass ``cls`` (Python 3.10-3.13's
    source, compiled now): the fields with ``init`` are its parameters in order (keyword-only
    ones after ``*``), each with its annotation and default (``_HAS_DEFAULT_FACTORY`` for a
    default factory); the body assigns every field with ``init`` or a default factory
    (``object.__setattr__`` when frozen), then calls ``__post_init__`` if the class has one."""
    fields = dataclasses.fields(cls)
    frozen = cls.__dataclass_params__.frozen
    self_name = "__dataclass_self__" if "self" in {f.name for f in fields} else "self"
    missing, factory_marker = dataclasses.MISSING, _HAS_DEFAULT_FACTORY
    local = {f"_type_{f.name}": f.type for f in fields}
    local.update(MISSING=missing, _HAS_DEFAULT_FACTORY=factory_marker,
                 __dataclass_builtins_object__=object, _return_type=None)
    params, kw_params, body = [], [], []
    for f in fields:
        dflt = f"_dflt_{f.name}"
        if f.default_factory is not missing:
            local[dflt] = f.default_factory
            value = (f"{dflt}() if {f.name} is _HAS_DEFAULT_FACTORY else {f.name}" if f.init
                     else f"{dflt}()")
        elif f.init:
            if f.default is not missing:
                local[dflt] = f.default
            value = f.name
        else:
            value = None                # the class attribute holds the default
        if value is not None:
            body.append(f"__dataclass_builtins_object__.__setattr__({self_name},{f.name!r},"
                        f"{value})" if frozen else f"{self_name}.{f.name}={value}")
        if f.init:
            if f.default_factory is not missing:
                default = "=_HAS_DEFAULT_FACTORY"
            elif f.default is not missing:
                default = f"={dflt}"
            else:
                default = ""
            (kw_params if f.kw_only else params).append(f"{f.name}:_type_{f.name}{default}")
    if hasattr(cls, "__post_init__"):
        body.append(f"{self_name}.__post_init__()")
    args = ",".join([self_name] + params + (["*"] + kw_params if kw_params else []))
    inner = "\n".join(f"  {line}" for line in body or ["pass"])
    names = ", ".join(local)
    text = (f"def __create_fn__({names}):\n"
            f" def __init__({args})->_return_type:\n{inner}\n"
            f" return __init__")
    namespace: dict = {}
    module = sys.modules.get(cls.__module__)
    # compiled without this module's ``from __future__ import annotations``, as dataclasses
    # compiles it: the annotations are the fields' types, not their names' strings
    code = compile(text, "<string>", "exec", dont_inherit=True)
    exec(code, module.__dict__ if module is not None else {}, namespace)
    fn = namespace["__create_fn__"](**local)
    fn.__qualname__ = f"{cls.__qualname__}.__init__"
    return fn


_HAS_DEFAULT_FACTORY = getattr(dataclasses, "_HAS_DEFAULT_FACTORY", None)
if _HAS_DEFAULT_FACTORY is None:        # pragma: no cover - every supported Python has it
    class _HasDefaultFactory:
        def __repr__(self):
            return "<factory>"
    _HAS_DEFAULT_FACTORY = _HasDefaultFactory()


__all__ = ["Fieldwise", "FrozenFieldwise", "fieldwise_dataclass", "init_function"]
