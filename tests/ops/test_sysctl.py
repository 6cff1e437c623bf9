"""The system control, cache and profiling calls (``ops/sysctl.py``): what they do on the
simulator (checks, cost, constants, trap, time stamps, checkpoints, address registers) and
their errors."""
from __future__ import annotations

import linecache
import re

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler.ops.sysctl import ARCH_VERSION, HINT_COST


def _line_of(text: str) -> int:
    """The line of this file holding ``text``."""
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, 1) if line.rstrip().endswith(text))


@asc.kernel
def hints(x: asc.GlobalAddress, o: asc.GlobalAddress, bind: int, OFF: asc.ConstExpr[int]):
    xg = asc.GlobalTensor()
    og = asc.GlobalTensor()
    og.set_global_buffer(o, 8)
    if bind:        # at run time: an unbound GlobalTensor faults at its first use
        xg.set_global_buffer(x, 64)
    if OFF:
        asc.data_cache_clean_and_invalid(asc.CacheLine.SINGLE_CACHE_LINE,
                                         asc.DcciDst.CACHELINE_OUT, xg[OFF:])
    else:
        asc.data_cache_clean_and_invalid(asc.CacheLine.SINGLE_CACHE_LINE,
                                         asc.DcciDst.CACHELINE_OUT, xg)
    asc.data_cache_clean_and_invalid(entire_type=asc.CacheLine.ENTIRE_DATA_CACHE, dst=xg)
    asc.data_cache_preload(xg, 1024)
    xg.set_l2_cache_hint(asc.CacheMode.CACHE_MODE_LAST, asc.CacheRwMode.READ)
    asc.icache_preload(2)
    asc.data_sync_barrier(asc.MemDsbT.DDR)
    asc.metrics_prof_start()
    asc.init_soc_state()
    asc.set_mm_layout_transform(True)
    asc.check_local_memory_ia(asc.CheckLocalMemoryIAParam(1, 0, 256, is_vector_write=True))
    asc.metrics_prof_stop()
    og.set_value(0, asc.get_icache_preload_status())
    og.set_value(1, asc.get_data_block_size_in_bytes())
    og.set_value(2, asc.get_arch_version(0))
    og.set_value(3, asc.get_program_counter())
    og.set_value(4, xg.get_value(0))


def test_hints_leave_memory_alone_and_the_queries_answer():
    x = np.arange(64, dtype=np.int64)
    o = np.full(8, -5, np.int64)
    hints[1](x, o, 1, 0)
    line = _line_of("og.set_value(3, asc.get_program_counter())")
    assert list(o[:5]) == [0, 32, ARCH_VERSION, line, 0]
    assert list(x) == list(range(64))


def test_an_unbound_or_out_of_range_operand_faults_at_its_line():
    with pytest.raises(asc.GlobalTensorUnsetError) as info:
        hints[1](np.zeros(64, np.int64), np.zeros(8, np.int64), 0, 0)
    assert "data_cache_clean_and_invalid" in str(info.value)
    with pytest.raises(asc.GMOutOfBoundsError):
        hints[1](np.zeros(64, np.int64), np.zeros(8, np.int64), 1, 64)


@asc.kernel
def costed(o: asc.GlobalAddress, KIND: asc.ConstExpr[int]):
    og = asc.GlobalTensor()
    og.set_global_buffer(o, 8)
    for i in asc.static_range(50):
        if KIND == 1:
            asc.data_sync_barrier(asc.MemDsbT.ALL)
        elif KIND == 2:
            asc.metrics_prof_start()
        elif KIND == 3:
            asc.icache_preload(1)
    og.set_value(0, 1)


def test_cost_is_the_documented_scalar_issue():
    o = np.zeros(8, np.int64)
    base = costed[1](o, 0).cycles
    assert HINT_COST["metrics_prof_start"] == 0 and costed[1](o, 2).cycles == base
    assert HINT_COST["data_sync_barrier"] == 1 == HINT_COST["icache_preload"]
    barrier = costed[1](o, 1).cycles
    assert barrier > base and costed[1](o, 3).cycles == barrier


@asc.kernel
def trapping(o: asc.GlobalAddress, n: int):
    og = asc.GlobalTensor()
    og.set_global_buffer(o, 8)
    og.set_value(0, 1)
    if n > 3:
        asc.trap()
    og.set_value(1, 2)


def test_trap_stops_the_kernel_at_its_line():
    o = np.zeros(8, np.int32)
    trapping[1](o, 3)
    assert list(o[:2]) == [1, 2]
    o[:] = 0
    with pytest.raises(asc.KernelAssertionError) as info:
        trapping[1](o, 4)
    assert "asc.trap()" in str(info.value)
    assert f":{_line_of('        asc.trap()')}" in str(info.value)
    assert list(o[:2]) == [1, 0]


@asc.kernel
def stamped(x: asc.GlobalAddress, d: int):
    xl = asc.LocalTensor(dtype=asc.float16, pos=asc.TPosition.VECIN, addr=0, tile_size=64)
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)
    asc.data_copy(xl, xg, 64)
    asc.set_flag(asc.HardEvent.MTE2_S, 0)
    asc.wait_flag(asc.HardEvent.MTE2_S, 0)
    asc.print_time_stamp(d)
    asc.dump_acc_chk_point(xl, 7, 3, 4)
    asc.dump_acc_chk_point(tensor=xg, index=8, count_off=60, dump_size=2)
    asc.dump_tensor(xl[3:], 7, 4)
    asc.print_time_stamp(2**32 - 1)


def test_time_stamps_and_checkpoints_print():
    x = np.arange(64, dtype=np.float16)
    out = stamped[1](x, 5).output
    stamps = re.findall(r"TimeStamp: desc_id=(\d+), cycle=(\d+)\n", out)
    assert [int(d) for d, _ in stamps] == [5, 2**32 - 1]
    assert int(stamps[0][1]) > 0 and int(stamps[1][1]) >= int(stamps[0][1])
    dumps = re.findall(r"DumpTensor: desc=(\d+), addr=(\d+), .*position=(\w+), "
                       r"dump_size=(\d+)\n\[([^\]]*)\]", out)
    assert dumps[0] == ("7", "6", "UB", "4", "3.000000, 4.000000, 5.000000, 6.000000")
    assert dumps[1] == ("8", "120", "GM", "2", "60.000000, 61.000000")
    assert dumps[2] == dumps[0]                      # dump_tensor of the same slice


@asc.kernel
def registers(x: asc.GlobalAddress, o: asc.GlobalAddress, SET: asc.ConstExpr[int]):
    og = asc.GlobalTensor()
    og.set_global_buffer(o, 8)
    if SET:
        asc.set_sys_workspace(x + 2)
        asc.set_hccl_context(1, o)
    ws = asc.GlobalTensor()
    ws.set_global_buffer(asc.get_sys_workspace())
    og.set_value(0, ws.get_value(0) + ws.get_value(1))     # bytes 8, 9 of x (int32 elements)
    ctx = asc.GlobalTensor()
    ctx.set_global_buffer(asc.get_hccl_context(1))
    ctx.set_value(40, 99)                                  # byte 40 of o: o[5]


def test_workspace_and_hccl_registers_hold_addresses():
    x = np.arange(16, dtype=np.int32)
    o = np.zeros(8, np.int64)
    registers[1](x, o, 1)
    assert o[0] == 2 and o[5] == 99


def test_an_address_never_set_faults_when_used():
    with pytest.raises(asc.GlobalTensorUnsetError):
        registers[1](np.arange(16, dtype=np.int32), np.zeros(8, np.int64), 0)


def _compile_error(body: str, cls):
    src = "def k(x: asc.GlobalAddress, v: int):\n    xg = asc.GlobalTensor()\n" + \
          f"    {body}\n"
    name = f"<sysctl-test-{abs(hash(body))}>"
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)
    ns = {"asc": asc}
    exec(compile(src, name, "exec"), ns)
    with pytest.raises(cls) as info:
        asc.kernel(ns["k"])[1](np.zeros(8, np.float32), 3)
    assert ":3:" in str(info.value), str(info.value)
    return str(info.value)


@pytest.mark.parametrize("body,cls,message", [
    ("asc.data_cache_clean_and_invalid(asc.CacheLine.SINGLE_CACHE_LINE, xg)",
     asc.OperandKindError, "set_global_buffer"),
    ("asc.data_cache_clean_and_invalid(0, x)", asc.KernelTypeError, "CacheLine"),
    ("xg.set_global_buffer(x); asc.data_cache_preload(xg, 40000)", asc.ConstantRangeError,
     "-32768..32767"),
    ("asc.data_sync_barrier(asc.CacheLine.SINGLE_CACHE_LINE)", asc.KernelTypeError, "MemDsbT"),
    ("asc.icache_preload(-1)", asc.ConstantRangeError, "pre_fetch_len"),
    ("asc.metrics_prof_start(1)", asc.KernelTypeError, "takes no arguments"),
    ("asc.check_local_memory_ia(3)", asc.KernelTypeError, "CheckLocalMemoryIAParam"),
    ("asc.check_local_memory_ia(asc.CheckLocalMemoryIAParam(enable_bit=256))",
     asc.ConstantRangeError, "enable_bit"),
    ("asc.set_hccl_context(2, x)", asc.ConstantRangeError, "0 or 1"),
    ("asc.set_hccl_context(v, x)", asc.KernelTypeError, "compile-time integer"),
    ("asc.set_sys_workspace(xg)", asc.OperandKindError, "GlobalAddress"),
    ("asc.print_time_stamp(-1)", asc.ConstantRangeError, "desc_id"),
    ("asc.dump_acc_chk_point(x, 0, 0, 4)", asc.KernelTypeError, "LocalTensor or GlobalTensor"),
    ("xg.set_l2_cache_hint(asc.CacheRwMode.RW)", asc.KernelTypeError, "CacheMode"),
])
def test_errors_name_the_line(body, cls, message):
    assert message in _compile_error(body, cls)
