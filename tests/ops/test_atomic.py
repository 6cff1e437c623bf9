"""set_atomic_add/max/min/type/none: UB -> GM copies accumulate in GM (read-modify-write in the
atomic dtype), checked against ``ops/atomic.atomic_reference`` applied block by block in block
order (the order the simulator promises), over every dtype Ascend C allows, every copy form
that writes GM, the mode switches, the compile errors at the line, and the sanitizer's view
(atomic writes of several blocks to the same bytes are not a race; a plain one is)."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler.ops import REGISTRY
from ascendc_py.compiler.ops.atomic import ATOMIC_TYPES, atomic_reference

BLOCKS = 5
ASC = {np.float32: asc.float32, np.float16: asc.float16, np.int32: asc.int32,
       np.int16: asc.int16, np.int8: asc.int8}


@asc.kernel
def accumulate(x: asc.GlobalAddress, z: asc.GlobalAddress, n: asc.ConstExpr[int],
               dt: asc.ConstExpr, MODE: asc.ConstExpr[int], FORM: asc.ConstExpr[int]):
    """Each block adds (MODE 1) / maxes (2) / mins (3) its slice of x into all of z (MODE 0:
    plain stores). FORM 0: data_copy count; 1: DataCopyParams; 2: data_copy_pad."""
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x + asc.get_block_idx() * n, n)
    zg.set_global_buffer(z, n)
    a = asc.LocalTensor(dt, asc.TPosition.VECIN, 0, n)
    asc.data_copy(a, xg, n)
    asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
    if MODE == 1:
        asc.set_atomic_add(dt)
    elif MODE == 2:
        asc.set_atomic_max(dt)
    elif MODE == 3:
        asc.set_atomic_min(dt)
    if FORM == 0:
        asc.data_copy(zg, a, n)
    elif FORM == 1:
        asc.data_copy(zg, a, asc.DataCopyParams(2, n * dt.sizeof() // 64, 0, 0))
    else:
        asc.data_copy_pad(zg, a, asc.DataCopyExtParams(1, n * dt.sizeof(), 0, 0, 0))
    asc.set_atomic_none()


def _data(npd, n, seed):
    rng = np.random.default_rng(seed)
    if np.dtype(npd).kind == "f":
        return (rng.standard_normal(BLOCKS * n) * 100).astype(npd), \
            rng.standard_normal(n).astype(npd)
    info = np.iinfo(npd)
    return rng.integers(info.min, info.max, BLOCKS * n, endpoint=True).astype(npd), \
        rng.integers(info.min, info.max, n, endpoint=True).astype(npd)


def _expected(z0, x, n, mode):
    out = z0.copy()
    for b in range(BLOCKS):     # block order
        out = atomic_reference(out, x[b * n:(b + 1) * n], mode)
    return out


@pytest.mark.parametrize("npd", list(ASC), ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("mode", ["add", "max", "min"])
def test_modes_over_dtypes(npd, mode):
    n = 256
    x, z = _data(npd, n, 7)
    want = _expected(z, x, n, mode)
    accumulate[BLOCKS](x, z, n, ASC[npd], {"add": 1, "max": 2, "min": 3}[mode], 0)
    np.testing.assert_array_equal(z, want)


@pytest.mark.parametrize("form", [1, 2], ids=["DataCopyParams", "data_copy_pad"])
def test_every_gm_writing_copy_accumulates(form):
    n = 128
    x, z = _data(np.float32, n, 3)
    want = _expected(z, x, n, "add")
    accumulate[BLOCKS](x, z, n, asc.float32, 1, form)
    np.testing.assert_array_equal(z, want)


def test_plain_stores_without_a_mode():
    n = 64
    x, z = _data(np.float32, n, 4)
    accumulate[1](x, z, n, asc.float32, 0, 0)
    np.testing.assert_array_equal(z, x[:n])


def test_float_sums_follow_block_order_on_every_run():
    """Float addition does not associate: 1e8 + 1 + ... - 1e8 depends on the order. The
    simulator accumulates in block order, every run."""
    n = 64
    x = np.zeros(BLOCKS * n, np.float32)
    x[0:n], x[n:2 * n], x[2 * n:3 * n], x[3 * n:4 * n], x[4 * n:] = 1e8, 3.0, 3.0, -1e8, 0.5
    results = []
    for _ in range(3):
        z = np.zeros(n, np.float32)
        accumulate[BLOCKS](x, z, n, asc.float32, 1, 0)
        results.append(z.copy())
    want = _expected(np.zeros(n, np.float32), x, n, "add")
    # in block order 1e8 + 3 rounds back to 1e8 (float32 ulp 8), twice: 0.5 in the end; had
    # blocks 1 and 2 met first (3 + 3 = 6), 1e8 + 6 would round to 1e8 + 8 and give 8.5
    assert want[0] == np.float32(0.5)
    for z in results:
        np.testing.assert_array_equal(z, want)


def test_bfloat16_add_with_torch():
    torch = pytest.importorskip("torch")
    n = 256
    x = torch.randn(BLOCKS * n, dtype=torch.bfloat16) * 10
    z = torch.randn(n, dtype=torch.bfloat16)
    want = z.clone()
    for b in range(BLOCKS):   # bfloat16 + bfloat16 computed in float32, rounded once
        want = (want.float() + x[b * n:(b + 1) * n].float()).to(torch.bfloat16)
    accumulate[BLOCKS](x, z, n, asc.bfloat16, 1, 0)
    assert torch.equal(z.view(torch.int16), want.view(torch.int16))


@asc.kernel
def switch_type(x: asc.GlobalAddress, z: asc.GlobalAddress):
    """set_atomic_type changes the dtype and keeps the mode; UB->UB copies never accumulate."""
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)
    zg.set_global_buffer(z, 64)
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 64)
    c = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, 1024, 64)
    asc.set_atomic_add(asc.float16)
    asc.data_copy(a, xg, 64)            # GM -> UB: a plain copy whatever the mode
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(c, a, 64)             # UB -> UB: plain too
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.set_atomic_type(asc.float32)    # still add, now in float32
    asc.data_copy(zg, c, 64)


def test_set_atomic_type_keeps_the_mode_and_only_gm_writes_accumulate():
    x = np.arange(64, dtype=np.float32) + 0.25
    z = np.full(64, 10.0, np.float32)
    switch_type[1](x, z)
    np.testing.assert_array_equal(z, x + 10)


def test_registry_and_order_flag():
    from ascendc_py.compiler.ops.atomic import runs_blocks_in_order
    for name in ("set_atomic_add", "set_atomic_max", "set_atomic_min", "set_atomic_none",
                 "set_atomic_type"):
        assert callable(REGISTRY[name].reference)
    assert {d.name for d in ATOMIC_TYPES} == {"float32", "float16", "bfloat16", "int32",
                                              "int16", "int8"}

    class Site:
        def __init__(self, op):
            self.op = op

    class Compiled:
        def __init__(self, ops):
            self.sites = [Site(o) for o in ops]
    assert runs_blocks_in_order(Compiled(["data_copy", "set_atomic_add"]))
    assert not runs_blocks_in_order(Compiled(["data_copy", "set_atomic_none"]))


# ----------------------------------------------------------------------------- errors
def _line(fn, marker: str) -> int:
    src, first = inspect.getsourcelines(fn.fn)
    return first + next(i for i, s in enumerate(src) if marker in s)


@asc.kernel
def bad_atomic(CASE: asc.ConstExpr[int]):
    if CASE == 0:
        asc.set_atomic_add()  # case-no-dtype
    elif CASE == 1:
        asc.set_atomic_max(asc.uint16)  # case-uint16
    elif CASE == 2:
        asc.set_atomic_none(asc.float32)  # case-none-args


@pytest.mark.parametrize("case,marker,text", [
    (0, "case-no-dtype", "needs the dtype to accumulate in"),
    (1, "case-uint16", "does not support uint16"),
    (2, "case-none-args", "takes no arguments"),
])
def test_errors_name_the_line(case, marker, text):
    with pytest.raises(asc.KernelTypeError, match=text) as info:
        bad_atomic[1](case)
    assert f":{_line(bad_atomic, marker)}:" in str(info.value).splitlines()[0]


# ----------------------------------------------------------------------------- sanitizer
def test_sanitizer_accepts_atomic_writes_of_several_blocks():
    n = 64
    x, z = _data(np.float32, n, 5)
    want = _expected(z, x, n, "add")
    accumulate[BLOCKS](x, z, n, asc.float32, 1, 0, sanitize=True)
    np.testing.assert_array_equal(z, want)
    with pytest.raises(asc.BlockOverlapError):          # the same copies without the mode
        accumulate[BLOCKS](x, z, n, asc.float32, 0, 0, sanitize=True)


@asc.kernel
def mixed_writes(x: asc.GlobalAddress, z: asc.GlobalAddress):
    """Block 0 stores, the others accumulate, into the same bytes: a race."""
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)
    zg.set_global_buffer(z, 64)
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 64)
    asc.data_copy(a, xg, 64)
    asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
    if asc.get_block_idx() > 0:
        asc.set_atomic_add(asc.float32)
    asc.data_copy(zg, a, 64)  # the-write


def test_sanitizer_reports_a_plain_write_among_atomic_ones():
    x = np.ones(64, np.float32)
    z = np.zeros(64, np.float32)
    with pytest.raises(asc.BlockOverlapError) as info:
        mixed_writes[3](x, z, sanitize=True)
    assert f":{_line(mixed_writes, 'the-write')}:" in str(info.value).splitlines()[0]


# ----------------------------------------------------------------------------- store atomic config
@asc.kernel
def store_config(x: asc.GlobalAddress, z: asc.GlobalAddress, info: asc.GlobalAddress):
    """set_store_atomic_config(ATOMIC_F32, ATOMIC_SUM) accumulates like set_atomic_add; the
    getter reports (type, op) after each switch."""
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    ig = asc.GlobalTensor()
    xg.set_global_buffer(x + asc.get_block_idx() * 64, 64)
    zg.set_global_buffer(z, 64)
    ig.set_global_buffer(info + asc.get_block_idx() * 6, 6)
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 64)
    asc.data_copy(a, xg, 64)
    asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.set_store_atomic_config(asc.AtomicDtype.ATOMIC_F32, asc.AtomicOp.ATOMIC_SUM)
    t, o = asc.get_store_atomic_config()
    ig.set_value(0, t)
    ig.set_value(1, o)
    asc.data_copy(zg, a, 64)
    asc.set_atomic_max(asc.float16)
    t, o = asc.get_store_atomic_config()
    ig.set_value(2, t)
    ig.set_value(3, o)
    asc.set_store_atomic_config(asc.AtomicDtype.ATOMIC_NONE, asc.AtomicOp.ATOMIC_SUM)
    t, o = asc.get_store_atomic_config()
    ig.set_value(4, t)
    ig.set_value(5, o)


def test_store_atomic_config_and_its_getter():
    x = np.random.default_rng(9).standard_normal(3 * 64).astype(np.float32)
    z = np.ones(64, np.float32)
    info = np.full(18, -1, np.int32)
    store_config[3](x, z, info)
    np.testing.assert_array_equal(z, _expected_n(np.ones(64, np.float32), x, 64, 3))
    # F32 = 1 with the sum (0); set_atomic_max(half): F16 = 2, op 1 (max); ATOMIC_NONE: (0, 0)
    np.testing.assert_array_equal(info.reshape(3, 6), [[1, 0, 2, 1, 0, 0]] * 3)


def _expected_n(z0, x, n, blocks):
    out = z0.copy()
    for b in range(blocks):
        out = atomic_reference(out, x[b * n:(b + 1) * n], "add")
    return out
