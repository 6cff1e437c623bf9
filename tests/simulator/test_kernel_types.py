"""Kernel types: the explicit ``kernel_type=`` option, inference from the IR, the sub-core each
block runs on (get_block_idx / get_sub_block_idx / get_sub_block_num / ascend_is_aic per
sub-core) and the memories each sub-core has."""
from __future__ import annotations

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler import ir, kernel_kind
from ascendc_py.compiler.errors import SourceLoc
from ascendc_py.dsl.kernel_types import KernelType, layout, parse_kernel_type
from ascendc_py.dsl.types import Memory, float32, int32
from kernels_for_tests import assert_still_works

N = 64


# ----------------------------------------------------------------------------- kernels
@asc.kernel
def k_vector(x: asc.GlobalAddress, y: asc.GlobalAddress):
    xg = asc.GlobalTensor(); xg.set_global_buffer(x, N)
    yg = asc.GlobalTensor(); yg.set_global_buffer(y, N)
    pipe = asc.TPipe(); q = asc.TQue(asc.TPosition.VECIN, 1)
    pipe.init_buffer(q, 1, N * 4)
    t = q.alloc_tensor(asc.float32); asc.data_copy(t, xg, N); q.enque(t)
    t = q.deque(asc.float32); asc.data_copy(yg, t, N); q.free_tensor(t)


@asc.kernel
def k_cube(x: asc.GlobalAddress, y: asc.GlobalAddress):
    """GM -> L1 -> GM: only cube-core memory."""
    b = asc.get_block_idx()
    xg = asc.GlobalTensor(); xg.set_global_buffer(x + b * N, N)
    yg = asc.GlobalTensor(); yg.set_global_buffer(y + b * N, N)
    pipe = asc.TPipe(); q = asc.TQue(asc.TPosition.A1, 1)
    pipe.init_buffer(q, 1, N * 2)
    t = q.alloc_tensor(asc.float16); asc.data_copy(t, xg, N); q.enque(t)
    t = q.deque(asc.float16); asc.data_copy(yg, t, N); q.free_tensor(t)


@asc.kernel
def k_both(x: asc.GlobalAddress, y: asc.GlobalAddress):
    """L1 on the AIC, UB on the AIVs: inferred as a mix kernel."""
    b = asc.get_block_idx()
    xg = asc.GlobalTensor(); xg.set_global_buffer(x, N)
    pipe = asc.TPipe()
    if asc.ascend_is_aic():
        yg = asc.GlobalTensor(); yg.set_global_buffer(y + b * 3 * N, N)
        q1 = asc.TQue(asc.TPosition.B1, 1)
        pipe.init_buffer(q1, 1, N * 4)
        a = q1.alloc_tensor(asc.float32); asc.data_copy(a, xg, N); q1.enque(a)
        a = q1.deque(asc.float32); asc.data_copy(yg, a, N); q1.free_tensor(a)
    else:
        blk = b // asc.get_sub_block_num()
        yg = asc.GlobalTensor()
        yg.set_global_buffer(y + blk * 3 * N + (1 + asc.get_sub_block_idx()) * N, N)
        q = asc.TQue(asc.TPosition.VECIN, 1)
        pipe.init_buffer(q, 1, N * 4)
        t = q.alloc_tensor(asc.float32); asc.data_copy(t, xg, N); q.enque(t)
        t = q.deque(asc.float32); asc.adds(t, t, 1.0, N)
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)   # V's result before MTE3 copies it out
        asc.data_copy(yg, t, N)
        q.free_tensor(t)


def _ids_kernel(kernel_type):
    @asc.kernel(kernel_type=kernel_type)
    def k_ids(out: asc.GlobalAddress):
        """Each sub-core writes (core type, block idx, block num, sub idx, sub num) into its
        own row: rows [block * 3 + slot], slot 0 for the AIC, 1 + sub for the AIVs."""
        og = asc.GlobalTensor(); og.set_global_buffer(out, 1024)
        idx = asc.get_block_idx()
        slot = 0
        blk = idx
        if asc.ascend_is_aiv():
            slot = 1 + asc.get_sub_block_idx()
            blk = idx // asc.get_sub_block_num()
        row = (blk * 3 + slot) * 8
        og.set_value(row, 1 if asc.ascend_is_aic() else 0)
        og.set_value(row + 1, idx)
        og.set_value(row + 2, asc.get_block_num())
        og.set_value(row + 3, asc.get_sub_block_idx())
        og.set_value(row + 4, asc.get_sub_block_num())
        og.set_value(row + 5, 7)
        og.set_value(row + 6, asc.get_task_ratio())
    return k_ids


# ----------------------------------------------------------------------------- inference
def test_inference_from_resources():
    x = np.arange(N, dtype=np.float32)
    y = np.zeros(N, np.float32)
    assert k_vector[1](x, y).kernel_type == "AIV_ONLY"
    np.testing.assert_array_equal(y, x)
    x16 = np.arange(4 * N, dtype=np.float16)
    y16 = np.zeros_like(x16)
    r = k_cube[4](x16, y16)
    assert r.kernel_type == "AIC_ONLY"
    np.testing.assert_array_equal(y16, x16)
    y3 = np.zeros(2 * 3 * N, np.float32)
    r = k_both[2](x, y3)
    assert r.kernel_type == "MIX_AIC_1_2"
    rows = y3.reshape(2, 3, N)
    np.testing.assert_array_equal(rows[:, 0], np.broadcast_to(x, (2, N)))
    np.testing.assert_array_equal(rows[:, 1:], np.broadcast_to(x + 1, (2, 2, N)))


def _fn(*stmts) -> ir.Function:
    return ir.Function("f", tuple(stmts), SourceLoc("f.py", 1, 1), (), ())


def _intr(op, *args, **attrs):
    return ir.Intrinsic(op, tuple(args), (), SourceLoc("f.py", 2, 1), tuple(attrs.items()))


def _local(mem):
    c = ir.Const(0, int32)
    return ir.LocalRef(mem, float32, c, c, c)


@pytest.mark.parametrize("stmts, options, expected", [
    ((), {}, "AIV_ONLY"),
    ((_intr("adds", _local(Memory.UB)),), {}, "AIV_ONLY"),
    ((_intr("init_buffer", memory=Memory.L0C),), {}, "AIC_ONLY"),
    ((_intr("data_copy", _local(Memory.L1)), _intr("init_buffer", memory=Memory.UB)), {},
     "MIX_AIC_1_2"),
    ((_intr("matmul_iterate_all"),), {}, "MIX_AIC_1_2"),            # pyasc: matmul API -> mix
    ((_intr("matmul_iterate_all"),), {"matmul_cube_only": True}, "AIC_ONLY"),
    ((_intr("adds", _local(Memory.UB)),), {"kernel_type": KernelType.MIX_AIC_1_1},
     "MIX_AIC_1_1"),
    ((_intr("data_copy", _local(Memory.L1)),), {"kernel_type": "AIV_ONLY"}, "AIV_ONLY"),
])
def test_inference_rules(stmts, options, expected):
    assert kernel_kind.kernel_type(_fn(*stmts), options) == expected


def test_inference_walks_nested_control_flow():
    inner = ir.If(ir.Const(True, asc.bool_), (_intr("data_copy", _local(Memory.L0A)),),
                  (_intr("adds", _local(Memory.UB)),), SourceLoc("f.py", 3, 1))
    assert kernel_kind.resources(_fn(inner)) == (True, True, False)


@pytest.mark.parametrize("value, name", [
    (KernelType.MIX_AIC_1_2, "MIX_AIC_1_2"), ("MIX_AIC_1_1", "MIX_AIC_1_1"),
    ("KERNEL_TYPE_AIC_ONLY", "AIC_ONLY"), (7, "MIX_AIC_1_2"), (None, None)])
def test_parse_kernel_type(value, name):
    kt = parse_kernel_type(value)
    assert (kt.name if kt is not None else None) == name


def test_pyasc_kernel_type_is_ours():
    from ascendc_py.pyasc_compat.shim import KernelType as PyascKernelType
    assert PyascKernelType is asc.KernelType
    assert [k.value for k in asc.KernelType] == list(range(8))


def test_bad_kernel_type_names_the_def_line():
    with pytest.raises(asc.KernelValueError, match="kernel_type='MIX_AIC_1_3' is not a kernel "
                                                   "type") as info:
        @asc.kernel(kernel_type="MIX_AIC_1_3")
        def k(x: asc.GlobalAddress):
            pass
    assert info.value.loc.line > 0


def test_option_is_part_of_the_cache_key():
    """The same function as a vector and as a mix kernel: two compilations, two types."""
    def body(out: asc.GlobalAddress):
        og = asc.GlobalTensor(); og.set_global_buffer(out, 8)
        if asc.ascend_is_aic():
            og.set_value(0, 1.0)
    plain = asc.kernel(body)
    mixed = asc.kernel(kernel_type=asc.KernelType.MIX_AIC_1_2)(body)
    out = np.zeros(8, np.float32)
    assert plain[1](out).kernel_type == "AIV_ONLY"
    assert out[0] == 0
    assert mixed[1](out).kernel_type == "MIX_AIC_1_2"
    assert out[0] == 1


def test_layouts():
    assert layout("MIX_AIC_1_2").units() == [(1, 0), (0, 0), (0, 1)]
    assert layout("MIX_AIC_1_1").per_block == 2
    assert layout("AIC_ONLY").kind == "cube" and layout("MIX_AIV_1_0").kind == "vector"


# ----------------------------------------------------------------------------- identities
def test_subcore_identities_mix_1_2():
    """Ascend C: on an AIV of a 1:2 mix kernel GetBlockIdx is block * 2 + sub-block index
    (range [0, 2 * block_dim)); GetBlockNum is block_dim on both sub-core types; GetSubBlockNum
    is 2 on an AIV and 1 on the AIC."""
    out = np.zeros(1024, np.int32)
    blocks = 3
    r = _ids_kernel(asc.KernelType.MIX_AIC_1_2)[blocks](out)
    assert r.kernel_type == "MIX_AIC_1_2"
    rows = out.reshape(-1, 8)[:blocks * 3]
    for b in range(blocks):
        aic, aiv0, aiv1 = rows[b * 3:b * 3 + 3]
        assert list(aic[:7]) == [1, b, blocks, 0, 1, 7, 1]
        assert list(aiv0[:7]) == [0, 2 * b, blocks, 0, 2, 7, 2]
        assert list(aiv1[:7]) == [0, 2 * b + 1, blocks, 1, 2, 7, 2]


def test_subcore_identities_mix_1_1_and_cube():
    out = np.zeros(1024, np.int32)
    _ids_kernel(asc.KernelType.MIX_AIC_1_1)[2](out)
    rows = out.reshape(-1, 8)
    for b in range(2):
        assert list(rows[b * 3][:6]) == [1, b, 2, 0, 1, 7]
        assert list(rows[b * 3 + 1][:6]) == [0, b, 2, 0, 1, 7]
        assert rows[b * 3 + 2][5] == 0                    # no second AIV
    out[:] = 0
    _ids_kernel(asc.KernelType.AIC_ONLY)[2](out)
    rows = out.reshape(-1, 8)
    assert list(rows[0][:6]) == [1, 0, 2, 0, 1, 7] and list(rows[3][:6]) == [1, 1, 2, 0, 1, 7]
    assert rows[1][5] == 0 and rows[2][5] == 0


def test_cube_kernel_runs_in_waves():
    """More blocks than AI Cores: later blocks run on the cores again (chip time adds up)."""
    n_blocks = asc.get_platform("Ascend910B2").aic_cores + 3
    x = np.random.default_rng(0).random(n_blocks * N).astype(np.float16)
    y = np.zeros_like(x)
    r = k_cube[n_blocks](x, y)
    np.testing.assert_array_equal(y, x)
    assert r.waves == 2 and r.cores_used == asc.get_platform("Ascend910B2").aic_cores
    cores = r.cores_used
    first = [t.cycles for t in r._blocks if t.block % cores == 0]
    assert len(first) == 2 and r.core_cycles[0] == sum(first) == r.kernel_cycles


# ----------------------------------------------------------------------------- memories
@asc.kernel(kernel_type=asc.KernelType.MIX_AIC_1_2)
def k_l1_on_aiv(x: asc.GlobalAddress):
    xg = asc.GlobalTensor(); xg.set_global_buffer(x, N)
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.A1, 1)
    pipe.init_buffer(q, 1, N * 4)            # bookkeeping: fine on every sub-core
    t = q.alloc_tensor(asc.float32)
    if asc.ascend_is_aiv():
        asc.data_copy(t, xg, N)
    q.free_tensor(t)


@asc.kernel(kernel_type=asc.KernelType.MIX_AIC_1_2)
def k_guarded(x: asc.GlobalAddress, y: asc.GlobalAddress):
    """pyasc's mix tutorials call init_buffer (and alloc_tensor) for UB queues unguarded; only
    touching the memory needs the guard."""
    xg = asc.GlobalTensor(); xg.set_global_buffer(x, N)
    yg = asc.GlobalTensor(); yg.set_global_buffer(y, N)
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(q, 1, N * 4)
    static = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 1024, N)
    t = q.alloc_tensor(asc.float32)
    if asc.ascend_is_aiv():
        if asc.get_sub_block_idx() == 0:
            asc.data_copy(static, xg, N)
            asc.muls(t, static, 3.0, N)
            asc.pipe_barrier(asc.PipeID.PIPE_ALL)
            asc.data_copy(yg, t, N)
    q.free_tensor(t)


def test_memory_absent_on_the_sub_core_faults():
    with pytest.raises(asc.CoreMemoryError) as info:
        k_l1_on_aiv[2](np.zeros(N, np.float32))
    text = str(info.value)
    assert "L1 is not on the vector core (AIV)" in text
    assert "AIV0 of block 0" in text and "asc.data_copy(t, xg, N)" in text
    assert isinstance(info.value, asc.LocalMemoryError)
    assert_still_works()


def test_unguarded_bookkeeping_is_fine():
    x = np.arange(N, dtype=np.float32)
    y = np.zeros(N, np.float32)
    k_guarded[1](x, y)
    np.testing.assert_array_equal(y, 3 * x)


@asc.kernel(kernel_type=asc.KernelType.MIX_AIC_1_2)
def k_print(x: asc.GlobalAddress):
    if asc.ascend_is_aic():
        asc.printf("AIC %d\n", asc.get_block_idx())
    else:
        asc.printf("AIV %d of %d\n", asc.get_block_idx(), asc.get_block_num())


def test_printf_in_block_then_sub_core_order(capsys):
    r = k_print[2](np.zeros(8, np.float32))
    assert r.output == "AIC 0\nAIV 0 of 2\nAIV 1 of 2\nAIC 1\nAIV 2 of 2\nAIV 3 of 2\n"
    assert capsys.readouterr().out == r.output


@asc.kernel
def k_soft_sync(x: asc.GlobalAddress, out: asc.GlobalAddress):
    """pyasc's soft sync_all(gm_workspace, ub_workspace): the same barrier here."""
    wg = asc.GlobalTensor(); wg.set_global_buffer(x, 256)
    og = asc.GlobalTensor(); og.set_global_buffer(out, 64)
    ub = asc.LocalTensor(asc.int32, asc.TPosition.VECIN, 0, 64)
    og.set_value(asc.get_block_idx(), 1)
    asc.sync_all(wg, ub)
    s = 0
    for i in range(asc.get_block_num()):
        s += og.get_value(i)
    og.set_value(32 + asc.get_block_idx(), s)


def test_soft_sync_all():
    out = np.zeros(64, np.int32)
    k_soft_sync[6](np.zeros(256, np.int32), out)
    np.testing.assert_array_equal(out[32:38], 6)


@asc.kernel(kernel_type=asc.KernelType.MIX_AIC_1_2)
def k_same_half(x: asc.GlobalAddress, y: asc.GlobalAddress):
    """Both AIVs write the same output slice (the sub-block offset is forgotten)."""
    if asc.ascend_is_aiv():
        b = asc.get_block_idx() // asc.get_sub_block_num()
        xg = asc.GlobalTensor(); xg.set_global_buffer(x + b * N, N)
        yg = asc.GlobalTensor(); yg.set_global_buffer(y + b * N, N)
        pipe = asc.TPipe(); buf = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf, N * 4)
        t = buf.get(asc.float32)
        asc.data_copy(t, xg, N)
        asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.data_copy(yg, t, N)


def test_sanitizer_finds_two_aivs_writing_the_same_bytes():
    x = np.arange(2 * N, dtype=np.float32)
    y = np.zeros_like(x)
    k_same_half[2](x, y)                                   # not checked without sanitize
    with pytest.raises(asc.BlockOverlapError, match=r"block 0 \(AIV0\) and block 0 \(AIV1\) "
                                                    r"both write bytes \[0, 256\) of global "
                                                    r"argument 'y'"):
        k_same_half[2](x, y, sanitize=True)


@asc.kernel(kernel_type=asc.KernelType.AIV_ONLY)
def k_l1_vector_only(x: asc.GlobalAddress, y: asc.GlobalAddress):
    """Declared a vector kernel, but stages through L1, which vector cores do not have."""
    xg = asc.GlobalTensor(); xg.set_global_buffer(x, N)
    pipe = asc.TPipe(); q = asc.TQue(asc.TPosition.A1, 1)
    pipe.init_buffer(q, 1, N * 4)
    t = q.alloc_tensor(asc.float32)
    asc.data_copy(t, xg, N)
    q.free_tensor(t)


def test_explicit_vector_kernel_has_no_l1():
    with pytest.raises(asc.CoreMemoryError, match=r"L1 is not on the vector core \(AIV\): this "
                                                  r"instruction ran on the AIV of block 0"):
        k_l1_vector_only[2](np.zeros(N, np.float32), np.zeros(N, np.float32))
