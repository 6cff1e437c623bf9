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


@asc.kernel
def binds(x: asc.GlobalAddress, f: float, i: int, n, c: asc.ConstExpr[int], y):
    pass


_RO = np.zeros(8, np.float32)
_RO.flags.writeable = False


@pytest.mark.parametrize("args", [
    (X, 1.0, 2, 3, 4, X), (X, 1, 2, 3.5, 4, np.zeros(3, np.int8)), (X, 1.0, True, False, 7, X),
    (X, 1.0, 2, 2 ** 40, 4, X), (X, 1.0, -2 ** 31, 2 ** 31 - 1, 4, np.zeros(5, np.float16)),
    (X, 1.0, 2, np.int32(3), 4, X), (X, np.float32(1), 2, 3, 4, X), (_RO, 1.0, 2, 3, 4, X),
    (np.zeros((4, 4), np.float32)[:, 1], 1.0, 2, 3, 4, X), (X, 1.0, 2, 3, 4, X[1:]),
    (X, 1.0, 2, 3, 4, np.zeros(0, np.float32)),
])
def test_the_fast_binder_agrees_with_the_general_one(args, monkeypatch):
    """Kernel._bind_fast (positional numpy arrays and Python scalars) binds exactly what the
    general path binds, and leaves everything else (and every error) to it."""
    def bound(fast: bool):
        with monkeypatch.context() as m:
            if not fast:
                m.setattr(type(binds), "_bind_fast", lambda self, a: None)
            try:
                specs, gm, scalars = binds.bind(args, {})
            except Exception as exc:  # noqa: BLE001 - both paths must raise alike
                return type(exc), str(exc)
            return specs, [tuple(g) for g in gm], [(v, d) for v, d in scalars]
    assert bound(True) == bound(False)


def test_the_fast_binder_takes_the_common_call():
    assert binds._bind_fast((X, 1.0, 2, 3, 4, X)) is not None
    assert binds._bind_fast((_RO, 1.0, 2, 3, 4, X)) is None        # read-only: general path


def test_the_fast_binder_agrees_on_torch_tensors(monkeypatch):
    torch = pytest.importorskip("torch")
    cases = [torch.zeros(8), torch.zeros(8, dtype=torch.float16), torch.zeros(4, 4).t(),
             torch.zeros(8, requires_grad=True), torch.zeros(0), torch.zeros(9)[1:],
             torch.zeros(8, dtype=torch.bfloat16), torch.nn.Parameter(torch.zeros(8))]
    for t in cases:
        args = (t, 1.0, 2, 3, 4, X)
        with monkeypatch.context() as m:
            m.setattr(type(binds), "_bind_fast", lambda self, a: None)
            try:
                slow = binds.bind(args, {})
                slow = (slow[0], [tuple(g) for g in slow[1]], slow[2])
            except Exception as exc:  # noqa: BLE001
                slow = (type(exc), str(exc))
        try:
            fast = binds.bind(args, {})
            fast = (fast[0], [tuple(g) for g in fast[1]], fast[2])
        except Exception as exc:  # noqa: BLE001
            fast = (type(exc), str(exc))
        assert fast == slow, t
    assert binds._bind_fast((torch.zeros(8), 1.0, 2, 3, 4, X)) is not None
