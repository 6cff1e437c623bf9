"""Constructs pyasc programs use (issue 15, part 5), checked without a pyasc checkout: exact
compile-time integers, two-word bit masks, and the names and statements of the other groups."""
from __future__ import annotations

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler.errors import ConstantRangeError, KernelTypeError

WIDE = 2 ** 70          # a module constant outside 64 bits: only compile-time arithmetic uses it


def _line_of(fn, text: str) -> int:
    import inspect
    lines, start = inspect.getsourcelines(fn.fn if hasattr(fn, "fn") else fn)
    return start + next(i for i, ln in enumerate(lines) if text in ln)


# ----------------------------------------------------------------------------- exact integers
@asc.kernel
def exact_ints(out: asc.GlobalAddress):
    og = asc.GlobalTensor()
    og.set_global_buffer(out, 8)
    full = 2 ** 64 - 1                      # 2**64 itself does not fit; the difference does
    og.set_value(0, full >> 32)             # exact: 0xFFFFFFFF, not (-1) >> 32
    og.set_value(1, 2 ** 64 // 2 ** 60)
    og.set_value(2, WIDE - WIDE + 7)
    og.set_value(3, full & 0xFF)
    og.set_value(4, (WIDE >> 40) + 1)
    og.set_value(5, 1 if WIDE > full else 0)
    og.set_value(6, max(full, 0) >> 63)
    og.set_value(7, -(2 ** 63))


def test_compile_time_integers_are_exact_before_the_range_check():
    out = np.zeros(8, np.int64)
    exact_ints[1](out)
    assert out.tolist() == [0xFFFFFFFF, 16, 7, 0xFF, 2 ** 30 + 1, 1, 1, -(2 ** 63)]


@asc.kernel
def full_word_store(out: asc.GlobalAddress):
    og = asc.GlobalTensor()
    og.set_global_buffer(out, 1)
    og.set_value(0, 2 ** 64 - 1)            # a uint64 constant stored to int64: its bits


def test_a_full_64_bit_word_keeps_its_bits():
    out = np.zeros(1, np.int64)
    full_word_store[1](out)
    assert out.view(np.uint64)[0] == 2 ** 64 - 1


@asc.kernel
def wide_store(out: asc.GlobalAddress):
    og = asc.GlobalTensor()
    og.set_global_buffer(out, 1)
    og.set_value(0, 2 ** 64)


@asc.kernel
def wide_runtime(out: asc.GlobalAddress, n: int):
    og = asc.GlobalTensor()
    og.set_global_buffer(out, 1)
    og.set_value(0, n + WIDE)


@asc.kernel
def wide_mask(x: asc.GlobalAddress):
    t = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, 128)
    asc.adds(t, t, 1.0, mask=[2 ** 64, 0], repeat_times=1, repeat_params=asc.UnaryRepeatParams())


@pytest.mark.parametrize("kernel, args, text, message", [
    (wide_store, (np.zeros(1, np.int64),), "2 ** 64)",
     "argument is an integer constant 18446744073709551616, which does not fit"),
    (wide_runtime, (np.zeros(1, np.int64), 3), "n + WIDE", "run-time value cannot be combined"),
    (wide_mask, (np.zeros(1, np.float16),), "mask=[2 ** 64", "argument is an integer constant 18446744073709551616"),
])
def test_an_integer_outside_64_bits_is_an_error_where_it_is_used(kernel, args, text, message):
    with pytest.raises(ConstantRangeError, match=message) as info:
        kernel[1](*args)
    assert info.value.loc.line == _line_of(kernel, text)


@asc.kernel
def runaway(out: asc.GlobalAddress):
    og = asc.GlobalTensor()
    og.set_global_buffer(out, 1)
    og.set_value(0, (3 ** 64) ** 64 - (3 ** 64) ** 64)


def test_exact_integers_have_a_size_limit():
    with pytest.raises(ConstantRangeError, match="grows beyond 1024 bits"):
        runaway[1](np.zeros(1, np.int64))


# ----------------------------------------------------------------------------- bit masks
@asc.kernel
def masked_adds(x: asc.GlobalAddress, z: asc.GlobalAddress, lo: asc.ConstExpr[int],
                hi: asc.ConstExpr[int], words: asc.ConstExpr[int]):
    n = 256 // x.dtype.sizeof()
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, n)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, n)
    b = asc.LocalTensor(x.dtype, asc.TPosition.VECOUT, 256, n)
    asc.data_copy(a, xg, n)
    asc.data_copy(b, zg, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if words == 2:
        asc.adds(b, a, 1, mask=[lo, hi], repeat_times=1, repeat_params=asc.UnaryRepeatParams())
    else:
        asc.adds(b, a, 1, mask=[lo], repeat_times=1, repeat_params=asc.UnaryRepeatParams())
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(zg, b, n)


def _lanes(lo: int, hi: int, n: int) -> np.ndarray:
    word = lo | (hi << 64)
    return np.array([(word >> i) & 1 for i in range(n)], bool)


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("lo, hi", [(2 ** 64 - 1, 2 ** 64 - 1), (0xF0F0F0F0F0F0F0F0, 0),
                                    (1, 2 ** 64 - 1)])
def test_two_word_bit_mask_on_32_bit_dtypes_ignores_the_high_word(dtype, lo, hi):
    x = np.arange(64).astype(dtype)
    z = np.full(64, -5, dtype)
    masked_adds[1](x, z, lo, hi, 2)
    on = _lanes(lo, 0, 64)
    np.testing.assert_array_equal(z, np.where(on, x + 1, -5).astype(dtype))
    z1 = np.full(64, -5, dtype)
    masked_adds[1](x, z1, lo, 0, 1)   # the one-word form gives the same
    np.testing.assert_array_equal(z1, z)


def test_two_word_bit_mask_on_16_bit_dtypes_uses_both_words():
    lo, hi = 0x00FF00FF00FF00FF, 2 ** 64 - 1
    x = np.arange(128).astype(np.float16)
    z = np.full(128, -5, np.float16)
    masked_adds[1](x, z, lo, hi, 2)
    np.testing.assert_array_equal(z, np.where(_lanes(lo, hi, 128), x + 1, -5).astype(np.float16))


def test_one_word_bit_mask_on_16_bit_dtypes_is_an_error():
    with pytest.raises(KernelTypeError, match=r"a bit mask for float16 is a list of 2 uint64 "
                                              r"values \(\[low, high\]; 128 lanes\), got 1"):
        masked_adds[1](np.zeros(128, np.float16), np.zeros(128, np.float16), 1, 0, 1)


# ----------------------------------------------------------------------------- small constructs
@asc.kernel
def small_constructs(x: asc.GlobalAddress, z: asc.GlobalAddress):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 64)
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 64)
    asc.data_copy(a, xg, 64)
    asc.pipe_barrier(6)                     # an int pipe id: Ascend C's pipe_t (6 = PIPE_ALL)
    zg.set_value(0, a(3) + xg(5))           # tensor(i): the element, as Ascend C's operator()
    zg.set_value(1, np.float16(2.2))        # a numpy scalar constant keeps its rounding
    zg.set_value(2, np.int8(-7) * 2)
    ...                                     # a placeholder statement


def test_call_syntax_numpy_scalars_int_pipes_and_ellipsis():
    x = np.arange(64, dtype=np.float32)
    z = np.zeros(64, np.float32)
    small_constructs[1](x, z)
    assert z[:3].tolist() == [8.0, float(np.float16(2.2)), -14.0]


@asc.kernel
def bad_pipe():
    asc.pipe_barrier(8)


@asc.kernel
def bad_numpy_constant(z: asc.GlobalAddress):
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 1)
    zg.set_value(0, np.int8(300))


@pytest.mark.parametrize("kernel, args, text, message", [
    (bad_pipe, (), "pipe_barrier(8)", "the pipe 8 is not a pipe of A2/A3"),
    (bad_numpy_constant, (np.zeros(1, np.int32),), "np.int8(300)",
     r"np.int8\(300\): 300 is outside int8 \(-128..127\)"),
])
def test_small_construct_misuse_is_an_error_at_the_line(kernel, args, text, message):
    with pytest.raises(asc.KernelCompileError, match=message) as info:
        kernel[1](*args)
    assert info.value.loc.line == _line_of(kernel, text)


def test_unknown_kernel_option_is_refused_at_the_def_line():
    def k():
        pass
    with pytest.raises(asc.KernelCompileError, match="unknown option 'opt_levle'") as info:
        asc.jit(opt_levle=3)(k)
    assert "did you mean 'opt_level'" in str(info.value)
    asc.jit(opt_level=3, debug=True, auto_sync=False)(k)   # pyasc's options are accepted


# ----------------------------------------------------------------------------- struct fields
@asc.kernel
def tiling_fields(out: asc.GlobalAddress, tiling: asc.adv.TCubeTiling, flag: int):
    og = asc.GlobalTensor()
    og.set_global_buffer(out, 8)
    before = tiling.share_l1_size
    tiling.share_l1_size = 512 * 1024
    if flag > 0:                                 # assigned on one path only
        tiling.base_m = tiling.base_m * 2
    for i in range(3):
        tiling.step_m += i                       # augmented, in a loop
    og.set_value(0, before)
    og.set_value(1, tiling.share_l1_size)
    og.set_value(2, tiling.base_m)
    og.set_value(3, tiling.step_m)
    local = asc.adv.TCubeTiling(m=flag + 1, base_n=64, step_ka=3)   # constructed in the kernel
    local.n = local.m * 10
    og.set_value(4, local.m)
    og.set_value(5, local.n)
    og.set_value(6, local.base_n + local.step_k_a)
    og.set_value(7, local.k_a)                  # a field not given is 0


@pytest.mark.parametrize("flag", [0, 5])
def test_struct_fields_can_be_assigned_and_constructed_in_a_kernel(flag):
    tiling = asc.adv.TCubeTiling(share_l1_size=7, base_m=16, step_m=1)
    out = np.zeros(8, np.int32)
    tiling_fields[1](out, tiling, flag)
    assert out.tolist() == [7, 512 * 1024, 32 if flag else 16, 4, flag + 1, 10 * (flag + 1),
                            67, 0]
    assert tiling.share_l1_size == 7             # the host object is not changed (by value)


@asc.kernel
def bad_field_name(tiling: asc.adv.TCubeTiling):
    tiling.share_l1 = 1


@asc.kernel
def bad_field_value(tiling: asc.adv.TCubeTiling):
    tiling.base_m = 2 ** 40


@asc.kernel
def bad_field_float(tiling: asc.adv.TCubeTiling):
    tiling.base_m = 1.5


@asc.kernel
def bad_field_owner(x: asc.GlobalAddress):
    xg = asc.GlobalTensor()
    xg.size = 3


@asc.kernel
def bad_constructor_field():
    t = asc.adv.TCubeTiling(base=3)


@pytest.mark.parametrize("kernel, args, text, message", [
    (bad_field_name, (asc.adv.TCubeTiling(),), "share_l1 = 1",
     "TCubeTiling has no field 'share_l1'"),
    (bad_field_value, (asc.adv.TCubeTiling(),), "2 ** 40", "TCubeTiling.base_m is 1099511627776"),
    (bad_field_float, (asc.adv.TCubeTiling(),), "1.5", "integer field"),
    (bad_field_owner, (np.zeros(4, np.float32),), "xg.size", "only struct fields"),
    (bad_constructor_field, (), "TCubeTiling(base=3)", "TCubeTiling has no field 'base'"),
])
def test_struct_field_misuse_is_an_error_at_the_line(kernel, args, text, message):
    with pytest.raises(asc.KernelCompileError, match=message) as info:
        kernel[1](*args)
    assert info.value.loc.line == _line_of(kernel, text)


# ----------------------------------------------------------------------------- lifecycle names
@asc.kernel
def tbuf_alloc(x: asc.GlobalAddress, z: asc.GlobalAddress):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 64)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, 256)
    t = buf.alloc_tensor(asc.float32)           # TBuf inherits TQueBind's alloc_tensor
    asc.data_copy(t, xg, 64)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.adds(t, t, 1.0, t.get_size())
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, t, 64)
    buf.free_tensor(t)


def test_tbuf_alloc_tensor_is_its_whole_buffer():
    x = np.arange(64, dtype=np.float32)
    z = np.zeros(64, np.float32)
    tbuf_alloc[1](x, z)
    np.testing.assert_array_equal(z, x + 1)


@asc.kernel
def tbuf_free_foreign(x: asc.GlobalAddress):
    buf = asc.TBuf(asc.TPosition.VECCALC)
    buf.free_tensor(x)


def test_tbuf_free_tensor_needs_a_local_tensor():
    with pytest.raises(asc.KernelCompileError, match="TBuf.free_tensor needs a LocalTensor") \
            as info:
        tbuf_free_foreign[1](np.zeros(4, np.float32))
    assert info.value.loc.line == _line_of(tbuf_free_foreign, "buf.free_tensor(x)")


# ----------------------------------------------------------------------------- user structs
class Tile(asc.Struct):
    length = asc.Field(dtype=asc.KnownTypes.int32, default=0)
    scale = asc.Field(dtype=asc.float32, default=1.0)
    flags = asc.Field(dtype=asc.uint32, default=0)


class Config(asc.Struct):
    tile = asc.StructField(Tile)
    offset = asc.Field(dtype=asc.int16)          # no default: must be given


@asc.kernel
def user_struct(out: asc.GlobalAddress, cfg: Config):
    og = asc.GlobalTensor()
    og.set_global_buffer(out, 6)
    og.set_value(0, cfg.tile.length + cfg.offset)
    og.set_value(1, cfg.tile.scale * 2.0)
    og.set_value(2, cfg.tile.flags >> 28)
    cfg.tile.length = cfg.tile.length * 3        # the kernel's copy
    og.set_value(3, cfg.tile.length)


def test_user_struct_parameter_fields_keep_their_dtypes():
    cfg = Config(tile=Tile(length=40, scale=1.25), offset=-2)
    cfg.tile.flags = 2 ** 32 - 1
    out = np.zeros(6, np.float64)
    user_struct[1](out, cfg)
    assert out[:4].tolist() == [38.0, 2.5, 15.0, 120.0]
    assert cfg.tile.length == 40


def test_user_struct_host_checks():
    with pytest.raises(TypeError, match="field 'offset' has no default"):
        Config()
    with pytest.raises(ValueError, match=r"Config.offset = 40000 does not fit int16"):
        Config(offset=40000)
    with pytest.raises(AttributeError, match="Tile has no field 'size'"):
        Tile(size=3)
    with pytest.raises(asc.KernelLaunchError, match="argument 'cfg' must be a Config"):
        user_struct[1](np.zeros(6), Tile())


def test_pyasc_struct_module_names_are_the_real_objects():
    from ascendc_py import pyasc_compat
    with pyasc_compat.install():
        from asc.language.core.struct import Field, Struct, StructField   # noqa: F401
        from asc.language.core.dtype import KnownTypes
        assert Struct is asc.Struct and Field is asc.Field and StructField is asc.StructField
        assert KnownTypes.int32 is asc.int32
        with pytest.raises(ImportError):
            from asc.language.core.struct import NoSuchName   # noqa: F401
        with pytest.raises(ImportError):   # one of our modules, not a name of pyasc's module
            from asc.language.basic import adv   # noqa: F401
        with pytest.raises(ImportError):
            from asc.language import dsl   # noqa: F401
        from asc.language import adv as language_adv      # pyasc has asc.language.adv
        assert language_adv is asc.adv


@asc.kernel
def queue_lifecycle(z: asc.GlobalAddress):
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 16)
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 2)
    zg.set_value(0, q.vacant_in_que())           # not initialised: no buffer, not vacant
    zg.set_value(1, q.has_idle_buffer())
    pipe.init_buffer(q, 2, 256)
    zg.set_value(2, q.vacant_in_que())
    zg.set_value(3, q.has_idle_buffer())
    a = q.alloc_tensor(asc.float32)
    b = q.alloc_tensor(asc.float32)
    zg.set_value(4, q.has_idle_buffer())
    q.enque(a)
    zg.set_value(5, q.get_tensor_count_in_que())
    zg.set_value(6, q.has_tensor_in_que())
    q.enque(b)
    zg.set_value(7, q.vacant_in_que())           # depth 2 reached
    zg.set_value(8, q.get_tensor_count_in_que())
    c = q.deque(asc.float32)
    d = q.deque(asc.float32)
    q.free_tensor(c)
    q.free_tensor(d)
    zg.set_value(9, q.has_tensor_in_que())
    asc.get_tpipe_ptr().destroy()                # every buffer released
    pipe.init()
    zg.set_value(10, q.has_idle_buffer())
    pipe.init_buffer(q, 1, 512)                  # a queue can be given buffers again
    e = q.alloc_tensor(asc.float32)
    zg.set_value(11, e.get_size())
    q.free_tensor(e)
    pipe.reset()
    pipe.init_buffer(q, 2, 128)
    zg.set_value(12, q.has_idle_buffer())


def test_tque_queries_and_tpipe_destroy_reset():
    z = np.full(16, -1, np.int32)
    queue_lifecycle[1](z)
    assert z[:13].tolist() == [0, 0, 1, 1, 0, 1, 1, 0, 2, 0, 0, 128, 1]


@asc.kernel
def stale_after_destroy(z: asc.GlobalAddress):
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 1)
    pipe.init_buffer(q, 1, 256)
    a = q.alloc_tensor(asc.float32)
    pipe.destroy()
    pipe.init_buffer(q, 1, 256)
    q.free_tensor(a)                             # a tensor of the released buffer


@asc.kernel
def tpipe_ptr_first():
    p = asc.get_tpipe_ptr()


def test_tpipe_lifecycle_misuse_is_an_error_at_the_line():
    with pytest.raises(asc.KernelRuntimeError) as info:
        stale_after_destroy[1](np.zeros(1, np.float32))
    assert info.value.loc.line == _line_of(stale_after_destroy, "q.free_tensor(a)")
    assert f"line {_line_of(stale_after_destroy, 'pipe.destroy()')}" in str(info.value)
    with pytest.raises(asc.KernelCompileError, match=r"get_tpipe_ptr\(\) before any "
                                                     r"asc.TPipe\(\)"):
        tpipe_ptr_first[1]()


@asc.kernel
def gm_phy_addr(x: asc.GlobalAddress, z: asc.GlobalAddress):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x + 8, 56)
    tail = asc.GlobalTensor()
    tail.set_global_buffer(xg.get_phy_addr(4), 8)     # x[12:20]
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 4)
    dt = asc.DataType("float32")
    t = asc.LocalTensor(dt, asc.TPosition.VECIN, 0, 8)
    asc.data_copy(t, tail, 8)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    zg.set_value(0, t(0) + t(3))


def test_global_tensor_phy_addr_and_datatype_by_name():
    x = np.arange(64, dtype=np.float32)
    z = np.zeros(4, np.float32)
    gm_phy_addr[1](x, z)
    assert z[0] == 12 + 15


@asc.kernel
def event_ids(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 16)
    pipe = asc.TPipe()
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 64)
    first = pipe.alloc_event_id(asc.HardEvent.MTE2_V)
    second = asc.get_tpipe_ptr().alloc_event_id(event=asc.HardEvent.MTE2_V)
    other = pipe.alloc_event_id(asc.HardEvent.V_MTE3)          # each event has its own ids
    zg.set_value(0, first)
    zg.set_value(1, second)
    zg.set_value(2, other)
    zg.set_value(3, pipe.fetch_event_id(asc.HardEvent.MTE2_V))  # not taken
    pipe.release_event_id(first, asc.HardEvent.MTE2_V)
    zg.set_value(4, pipe.fetch_event_id(event=asc.HardEvent.MTE2_V))
    asc.data_copy(a, xg, 64)
    asc.set_flag(asc.HardEvent.MTE2_V, second)
    asc.wait_flag(asc.HardEvent.MTE2_V, second)
    for i in range(n):                                         # ids taken at run time
        pipe.alloc_event_id(asc.HardEvent.S_V)
    zg.set_value(5, a(7))


def test_tpipe_event_id_pool():
    x = np.arange(64, dtype=np.float32)
    z = np.full(16, -1, np.float32)
    event_ids[1](x, z, 8)
    assert z[:6].tolist() == [0, 1, 0, 2, 0, 7]
    with pytest.raises(asc.KernelRuntimeError, match="all 8 event ids of HardEvent.S_V are "
                                                      "allocated") as info:
        event_ids[1](x, z, 9)
    assert info.value.loc.line == _line_of(event_ids, "pipe.alloc_event_id(asc.HardEvent.S_V)")


@asc.kernel
def release_unallocated():
    pipe = asc.TPipe()
    pipe.release_event_id(3, asc.HardEvent.V_S)


def test_releasing_an_id_not_taken_is_an_error():
    with pytest.raises(asc.KernelRuntimeError, match="not an allocated event id of "
                                                      "HardEvent.V_S") as info:
        release_unallocated[1]()
    assert info.value.loc.line == _line_of(release_unallocated, "release_event_id(3")


@asc.kernel
def tensor_setters(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int, grow: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 16)
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 1)
    pipe.init_buffer(q, 1, 256)
    t = q.alloc_tensor(asc.float32)
    asc.data_copy(t, xg, 64)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    t.set_buffer_len(128)                         # 32 float32 elements
    zg.set_value(0, t.get_size())
    if n > 0:
        t.set_size(n)
    zg.set_value(1, t.get_size())
    view = t.reinterpret_cast(asc.int32)
    view.set_addr_with_offset(t, 10)              # 10 float32 elements into t
    zg.set_value(2, view.get_size())
    zg.set_value(3, view.reinterpret_cast(asc.float32)(0))
    if grow > 0:
        t.set_size(grow)
    q.free_tensor(t)


def test_local_tensor_setters():
    x = np.arange(64, dtype=np.float32)
    z = np.full(16, -1, np.float32)
    tensor_setters[1](x, z, 20, 0)
    assert z[:4].tolist() == [32, 20, 10, 10.0]
    tensor_setters[1](x, z, 0, 0)
    assert z[:4].tolist() == [32, 32, 22, 10.0]
    with pytest.raises(asc.KernelRuntimeError, match="can only be made shorter") as info:
        tensor_setters[1](x, z, 20, 30)
    assert info.value.loc.line == _line_of(tensor_setters, "t.set_size(grow)")


@asc.kernel
def tbuf_offset(x: asc.GlobalAddress, z: asc.GlobalAddress, off: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 8)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, 256)
    whole = buf.get(asc.float32)
    asc.data_copy(whole, xg, 64)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    part = buf.get_with_offset(size=8, buf_offset=off, dtype=asc.float32)
    zg.set_value(0, part(0))
    zg.set_value(1, part.get_size())


def test_tbuf_get_with_offset():
    x = np.arange(64, dtype=np.float32)
    z = np.zeros(8, np.float32)
    tbuf_offset[1](x, z, 64)
    assert z[:2].tolist() == [16.0, 8.0]
    for bad in (16, 256):             # not 32-byte aligned / past the end of the buffer
        with pytest.raises(asc.KernelRuntimeError, match="get_with_offset") as info:
            tbuf_offset[1](x, z, bad)
        assert info.value.loc.line == _line_of(tbuf_offset, "buf.get_with_offset(")


@asc.kernel
def user_tags(z: asc.GlobalAddress, n: int):
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 8)
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 1)
    pipe.init_buffer(q, 1, 256)
    t = q.alloc_tensor(asc.float32)
    zg.set_value(0, t.get_user_tag())          # 0 until set
    t.set_user_tag(13)
    if n > 0:
        t.set_user_tag(n)
    zg.set_value(1, t.get_user_tag())
    rest = t[8:]                               # a part of the tensor keeps its tag
    zg.set_value(2, rest.get_user_tag())
    q.free_tensor(t)


@asc.kernel
def untagged(z: asc.GlobalAddress):
    t = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 8)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 1)
    zg.set_value(0, t.get_user_tag())


def test_local_tensor_user_tags():
    z = np.full(8, -1, np.int32)
    user_tags[1](z, 0)
    assert z[:3].tolist() == [0, 13, 13]
    user_tags[1](z, 7)
    assert z[:3].tolist() == [0, 7, 7]
    with pytest.raises(asc.KernelCompileError, match="user tag was never set") as info:
        untagged[1](np.zeros(1, np.int32))
    assert info.value.loc.line == _line_of(untagged, "t.get_user_tag()")
