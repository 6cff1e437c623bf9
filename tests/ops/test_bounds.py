"""No run-time value makes an instruction touch memory outside the tensor it was given, its
memory, or its GM argument (issue 11 §2, issue 12 items 1 and 2).

The reproducers of the issues run in fresh processes (``kernels_bounds.py``): without the checks
several of them crashed the interpreter (glibc "double free", SIGSEGV) or wrote into the next
buffer. Each must end in its documented error with the GM guard bytes intact."""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ascendc_py as asc
import kernels_bounds as kb

HERE = pathlib.Path(__file__).resolve().parent

EXPECTED = {
    "masked_negative_rep": "StrideRangeError",
    "masked_negative_blk": "StrideRangeError",
    "masked_huge_blk": "StrideRangeError",
    "masked_huge_rep": "StrideRangeError",
    "block_reduce_negative_rep": "StrideRangeError",
    "whole_reduce_huge_blk": "StrideRangeError",
    "pair_reduce_negative_blk": "StrideRangeError",
    "reduce_sum_count_2_62": "TensorExtentError",
    "int8_copy_2_63": "TensorExtentError",
    "dump_tensor_huge": "TensorExtentError",
    "set_value_2_62_plus_3": "TensorExtentError",
    "get_value_minus_2_63_plus_5": "TensorExtentError",
    "gm_set_value_2_62_plus_3": "GMOutOfBoundsError",
    "static_addr_2_32": "ValueRangeError",
    "duplicate_2_32_plus_8": "ValueRangeError",
    "counter_mode_huge": "TensorExtentError",
    "next_buffer": "TensorExtentError",
}


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_bad_value_is_an_error_in_a_fresh_process(case):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(HERE), str(HERE.parents[1]), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, str(HERE / "kernels_bounds.py"), case], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"crashed (rc {proc.returncode}):\n{proc.stderr[-2000:]}"
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result == {"outcome": EXPECTED[case], "guards": True}


def test_count_past_the_tensor_names_operand_length_and_origin():
    z = np.zeros(2 * kb.TILE, np.float32)
    with pytest.raises(asc.TensorExtentError) as info:
        kb.next_buffer[1](z, 2 * kb.TILE)
    text = str(info.value)
    line = kb.next_buffer.fn.__code__.co_firstlineno
    assert "duplicate dst 'a' would use elements [0, 512) but the tensor has 256 elements" in text
    assert "(alloc_tensor at line" in text and "in UB" in text
    assert "asc.duplicate(a, 7.0, n)" in text
    assert isinstance(info.value, asc.LocalOutOfRangeError)   # the family it refines
    assert z[:kb.TILE].tolist() == [0.0] * kb.TILE and line > 0
    kb.next_buffer[1](z, kb.TILE)                             # the right count runs
    assert set(z[:kb.TILE]) == {7.0} and set(z[kb.TILE:]) == {8.0}


def test_count_in_bytes_is_an_error_not_a_passing_golden_test():
    x = np.arange(kb.TILE, dtype=np.float32)
    z = np.zeros(kb.TILE, np.float32)
    with pytest.raises(asc.TensorExtentError, match=r"add dst 'c' would use elements "
                                                    r"\[0, 1024\) but the tensor has 256"):
        kb.count_in_bytes[1](x, x, z)


def test_constant_values_that_do_not_fit_are_compile_errors():
    @asc.kernel
    def k(x: asc.GlobalAddress):
        a = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 2 ** 32, 64)

    with pytest.raises(asc.ConstantRangeError, match="does not fit in int32"):
        k[1](np.zeros(4, np.float32))

    @asc.kernel
    def neg(x: asc.GlobalAddress):
        a = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, 64)
        asc.duplicate(a[-8:], 1.0, 8)

    with pytest.raises(asc.ConstantRangeError, match="LocalTensor offset -8"):
        neg[1](np.zeros(4, np.float32))


@asc.kernel
def masked_any(x: asc.GlobalAddress, mask: int, repeat: int, blk: int, rep: int,
               size: asc.ConstExpr[int]):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, size)
    after = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, size * 4, 64)
    asc.duplicate(after, 5.0, 64)
    asc.pipe_barrier(asc.PipeID.PIPE_V)
    asc.adds(a, a, 1.0, mask, repeat, asc.UnaryRepeatParams(blk, blk, rep, rep))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(xg, after, 64)


EDGES = [-(1 << 63), -(1 << 31) - 1, -(1 << 31), -1, 0, 1, 7, 8, 255, 256, 65535, 65536,
         (1 << 31) - 1, 1 << 31, (1 << 32) - 1, 1 << 32, 1 << 62, (1 << 63) - 1]


@settings(max_examples=40, deadline=None)
@given(mask=st.sampled_from([1, 8, 9, 64, 65, 0, -1]), repeat=st.sampled_from(EDGES[3:10]),
       blk=st.sampled_from(EDGES), rep=st.sampled_from(EDGES),
       size=st.sampled_from([8, 64, 1024]))
def test_masked_form_never_leaves_its_tensor(mask, repeat, blk, rep, size):
    """Any mask, repeat and strides: a documented error, or the instruction ran and the UB
    right after the tensor (another tensor's data) is unchanged; the GM guards are intact."""
    whole, inner = kb.guarded(64)
    try:
        masked_any[1](inner, mask, repeat, blk, rep, size)
    except (asc.StrideRangeError, asc.MaskRangeError, asc.RepeatRangeError,
            asc.TensorExtentError) as exc:
        assert "adds" in str(exc)
    else:
        assert (inner == 5.0).all()
    assert kb.guards_intact(whole)
