"""Bad launch arguments are LaunchArgumentErrors naming the argument, never a builtin
exception (issue 12 item 12)."""
from __future__ import annotations

import numpy as np
import pytest

import ascendc_py as asc


@asc.kernel
def takes(x: asc.GlobalAddress, f: float, i: int, n):
    pass


X = np.zeros(8, np.float32)


@pytest.mark.parametrize("args,words", [
    ((10 ** 400, 1, 1), ["'f'", "401 digits", "too large for a float"]),
    ((1.0, 2 ** 70, 1), ["'i'", "does not fit in 64 bits"]),
    ((1.0, 1, 2 ** 64), ["'n'", "does not fit in 64 bits"]),
    ((1.0, 1.5, 1), ["'i' is declared int"]),
    ((1.0, 1, "3"), ["'n'", "must be an int, float or bool"]),
])
def test_scalar_arguments(args, words):
    with pytest.raises(asc.LaunchArgumentError) as info:
        takes[1](X, *args)
    for w in words:
        assert w in str(info.value), str(info.value)


def test_struct_field_out_of_range():
    """TCubeTiling refuses such a value when it is set; a struct filled behind its back (or a
    float field) is still refused at the launch, before it could be truncated."""
    tiling = asc.adv.TCubeTiling()
    with pytest.raises(ValueError, match="does not fit int32"):
        tiling.m = 2 ** 40
    object.__setattr__(tiling, "m", 2 ** 40)

    @asc.kernel
    def k(x: asc.GlobalAddress, t: asc.adv.TCubeTiling):
        pass

    with pytest.raises(asc.LaunchArgumentError, match="field 'm' of argument 't'"):
        k[1](X, tiling)
