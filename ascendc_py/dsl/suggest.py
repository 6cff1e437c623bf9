""""Did you mean" for names a kernel author gets wrong: attributes of the ``asc`` module and of
kernel objects, in kernels (compile errors at the line) and on the Python module.

Three kinds of slip are recognised, in this order:

* Ascend C's CamelCase spelling of a name this package spells in snake case: the CamelCase
  name, lower-cased, equals a known name with its underscores removed (``SetGlobalBuffer`` →
  ``set_global_buffer``, ``EnQue`` → ``enque``, ``AllocTensor`` → ``alloc_tensor``,
  ``GetBlockIdx`` → ``get_block_idx``); so every Ascend C name whose pyasc spelling exists maps
  to it, with no table to keep;
* a near spelling (``difflib``; ``q.enqueue`` → ``enque``);
* on the ``asc`` module, a math function that is not a basic vector op: the high-level API of
  that name in ``asc.adv`` when there is one (``asc.tanh`` → ``asc.adv.tanh``), and the vector
  ops of the family that would hold it (the unary ops are exp, ln, abs, ...).
"""
from __future__ import annotations

import difflib
import re
from typing import Iterable

#: names a user may expect that are not ops: the vector family they would belong to
_UNARY_LIKE = {"tanh", "sin", "cos", "tan", "sigmoid", "log", "log2", "log10", "exp2", "erf",
               "erfc", "gelu", "silu", "sign", "floor", "ceil", "round", "trunc", "neg",
               "negative", "square", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh",
               "atanh", "softmax", "softplus", "swish", "mish", "frac", "digamma", "lgamma"}
_BINARY_LIKE = {"pow", "power", "maximum", "minimum", "fmod", "mod", "remainder", "atan2",
                "hypot", "xor", "bitwise_xor", "floor_divide", "true_divide", "divide",
                "multiply", "subtract"}

_CAMEL = re.compile(r"[A-Z]")


def camel_match(name: str, known: Iterable[str]) -> str | None:
    """The known snake_case name that is ``name``'s Ascend C CamelCase spelling, or None."""
    if not _CAMEL.search(name) or "_" in name:
        return None
    flat = name.lower()
    for k in known:
        if k != name and k.replace("_", "") == flat and k.islower():
            return k
    return None


def hint(name: str, known: Iterable[str], *, owner: str = "") -> str:
    """A hint for the unknown attribute ``name`` of an object whose attributes are ``known``
    (``owner``: how to name the object, for example ``asc``); '' when there is none."""
    known = [k for k in known if not k.startswith("_")]
    camel = camel_match(name, known)
    if camel:
        return f"Ascend C's {name} is spelled {camel} here"
    if owner == "asc":
        methods = kernel_methods()
        camel = camel_match(name, methods)
        if camel:
            return (f"Ascend C's {name} is spelled {camel} here, a method of "
                    f"{' and '.join(methods[camel])}")
    # a name the unknown one begins, whatever the case (asc.PIPE -> PipeID), else difflib's
    prefixed = sorted((k for k in known if len(name) >= 3 and k != name
                       and k.lower().startswith(name.lower())), key=len)
    close = prefixed[:1] or difflib.get_close_matches(name, known, n=1)
    if owner == "asc":
        family = op_family_hint(name)
        if family:
            return (f"did you mean '{close[0]}'? " if close and name.lower() not in
                    _UNARY_LIKE | _BINARY_LIKE else "") + family
    return f"did you mean '{close[0]}'?" if close else ""


def kernel_methods() -> dict[str, list[str]]:
    """Method name -> the kernel objects that have it (GlobalTensor, TQue, ...)."""
    from ..compiler.sema.builtins import METHODS
    from ..compiler.sema import values
    names = {values.GmTensorV: "GlobalTensor", values.LocalTensorV: "LocalTensor",
             values.QueueV: "TQue/TBuf", values.PipeV: "TPipe"}
    out: dict[str, list[str]] = {}
    for kind, method in METHODS:
        label = names.get(kind, kind.__name__.removesuffix("V"))
        if label not in out.setdefault(method, []):
            out[method].append(label)
    return out


def _ops_of(family: str) -> list[str]:
    from ..compiler.ops import REGISTRY, Family
    from .api import BUILTINS
    return [n for n, s in REGISTRY.items()
            if s.family == Family[family] and n in BUILTINS and s.elem is not None]


def op_family_hint(name: str) -> str:
    """For a math-function name that is not an op of this release: where it is, and the ops
    of its family."""
    low = name.lower()
    if low not in _UNARY_LIKE and low not in _BINARY_LIKE:
        return ""
    from .. import adv
    text = f"asc.{name} is not a vector op of this release"
    if callable(getattr(adv, low, None)):
        text += (f"; the high-level API asc.adv.{low} computes it (README \"High-level math "
                 f"APIs\")")
    if low in _UNARY_LIKE:
        return text + "; the unary ops are " + " ".join(_ops_of("UNARY"))
    return text + "; the binary ops are " + " ".join(_ops_of("BINARY"))


class _HintedAttributeError(AttributeError):
    """An AttributeError whose hint is worked out when its message is first read: ``from
    ascendc_py import profiler`` and ``hasattr`` ask the module's ``__getattr__`` first and
    drop the error, and the hint imports the type checker's method table."""

    def __init__(self, module: str, name: str, known: list[str]):
        super().__init__(f"module '{module}' has no attribute '{name}'")
        self.name, self._module, self._known, self._text = name, module, known, None

    def __str__(self) -> str:
        if self._text is None:
            base = super().__str__()
            h = hint(self.name, self._known, owner="asc" if self._module == "ascendc_py" else "")
            self._text = f"{base}: {h}" if h else base
        return self._text


def module_attribute_error(module: str, name: str, known: Iterable[str]) -> AttributeError:
    """The AttributeError of ``module.name``, with the hint (computed when the message is
    read) when there is one."""
    return _HintedAttributeError(module, name, list(known))

