"""The specialisation of a kernel launch (one ``ArgSpec`` per kernel parameter) and what a
compiled kernel records about its GM writes (``GmWrites``, computed by ``gm_writes.py``).

Kept in its own small module so that finding and loading a cached kernel never imports the
compiler's front end, IR or semantic analysis.
"""
from __future__ import annotations

from typing import Any, Optional

from ..dsl.types import DataType
from ..fieldwise import FrozenFieldwise, fieldwise_dataclass
from .errors import SourceLoc


@fieldwise_dataclass(frozen=True)   # (its own __eq__ and __hash__, the repr of
class ArgSpec(FrozenFieldwise):     # FrozenFieldwise: no methods compiled at creation)
    """How one kernel argument is specialised: 'gm' (dtype), 'scalar' (dtype) or 'const'.

    Launches build their specs with ``ArgSpec.of`` (one interned object per distinct spec, its
    hash computed once), so finding the compiled code of a launch hashes no dataclass fields.
    """

    name: str
    kind: str
    dtype: Optional[DataType] = None
    value: Any = None

    def __hash__(self) -> int:
        cached = self.__dict__.get("_hash")
        if cached is None:
            cached = hash((self.name, self.kind, self.dtype, type(self.value), self.value))
            object.__setattr__(self, "_hash", cached)
        return cached

    def __eq__(self, other) -> bool:
        if self is other:
            return True
        if type(other) is not ArgSpec:
            return NotImplemented
        return (self.name == other.name and self.kind == other.kind
                and self.dtype == other.dtype and type(self.value) is type(other.value)
                and self.value == other.value)

    def __getstate__(self) -> dict:
        """Pickled (disk cache entries) without the cached hash: string hashes differ between
        processes."""
        state = dict(self.__dict__)
        state.pop("_hash", None)
        return state

    @staticmethod
    def of(name: str, kind: str, dtype: Optional[DataType] = None, value: Any = None
           ) -> "ArgSpec":
        """The interned ArgSpec for these fields (a const value that cannot be hashed gets a
        fresh object)."""
        key = (name, kind, dtype, type(value), value)
        try:
            spec = _INTERNED.get(key)
        except TypeError:        # an unhashable value: no interning
            return ArgSpec(name, kind, dtype, value)
        if spec is None:
            if len(_INTERNED) > _INTERNED_MAX:
                _INTERNED.clear()
            spec = _INTERNED[key] = ArgSpec(name, kind, dtype, value)
        return spec


_INTERNED: dict = {}
_INTERNED_MAX = 65536


@fieldwise_dataclass(frozen=True)   # (repr, eq, hash: FrozenFieldwise's; __init__ compiled when used)
class GmWrites(FrozenFieldwise):
    """The GM arguments a compiled kernel may write.

    ``static``: (argument index, op, location) of the first instruction writing each argument
    it names at compile time. ``run_time``: the argument indices instructions whose argument
    is chosen at run time may write (every argument when ``untraced``); those instructions
    check their argument before writing and record it as written.
    """

    static: tuple[tuple[int, str, Optional[SourceLoc]], ...] = ()
    run_time: tuple[int, ...] = ()
    untraced: bool = False

    @property
    def checks_at_run_time(self) -> bool:
        return bool(self.run_time) or self.untraced
