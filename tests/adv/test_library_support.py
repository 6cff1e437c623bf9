"""The two compiler additions the library needs: ``x is None`` answered at compile time for
any value (optional arguments of library functions), and assertions of a library module
(``__asc_library__ = True``) reported at the user's call; other code keeps its own lines."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import ascendc_py as asc


@asc.kernel
def _pick(count=None):
    return 7 if count is None else count


@asc.kernel
def optional_count(z: asc.GlobalAddress, n: int):
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 2)
    zg.set_value(0, _pick())
    zg.set_value(1, _pick(n))           # a run-time int: `is None` is False (was an error)


def test_is_none_of_a_runtime_value_is_known_at_compile_time():
    z = np.zeros(8, np.int32)
    optional_count[1](z, 42)
    assert z[:2].tolist() == [7, 42]


@asc.kernel
def _checked(n):
    assert n < 10, "n must be below 10"   # not a library: reported here


@asc.kernel
def plain_helper_assert(n: int):
    _checked(n)


def test_assertions_of_ordinary_helpers_keep_their_line():
    with pytest.raises(asc.KernelAssertionError) as info:
        plain_helper_assert[1](12)
    lines, first = inspect.getsourcelines(_checked.fn)
    assert info.value.loc.line == first + 2
    assert "inlined from plain_helper_assert" in str(info.value)
