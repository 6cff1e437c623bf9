"""Matmul and struct-parameter mistakes: compile errors at their line with a clear message;
run-time faults (GM bounds, a missing operand) naming the operand and the line; launch errors
for a wrong struct argument."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py import host

import kernels_errors as E


def _line(kernel) -> int:
    lines, first = inspect.getsourcelines(kernel.fn)
    hits = [i for i, t in enumerate(lines) if t.rstrip().endswith("# <-")]
    assert len(hits) == 1
    return first + hits[0]


def _tiling(m=32, n=32, k=32, dim=1):
    t = host.MultiCoreMatmulTiling()
    t.set_dim(dim)
    t.set_shape(m, n, k)
    tiling = asc.adv.TCubeTiling()
    t.get_tiling(tiling)
    return tiling


def _raises(kernel, cls, words, *args):
    with pytest.raises(cls) as info:
        kernel[1](*args)
    err = info.value
    assert err.loc is not None and err.loc.line == _line(kernel), str(err)
    for w in words:
        assert w in str(err), str(err)
    return err


F16 = np.zeros((32, 32), np.float16)
F32 = np.zeros((32, 32), np.float32)


def test_unknown_tiling_field_names_the_fields():
    _raises(E.unknown_field, asc.UnknownAttributeError,
            ["TCubeTiling has no field 'base_q'", "base_m", "single_core_n"], F16, _tiling())


def test_iterate_all_before_set_tensor_a():
    _raises(E.iterate_before_set_a, asc.KernelValueError,
            ["before Matmul.set_tensor_a"], F16, F16, F32, _tiling())


def test_iterate_all_before_register_matmul():
    _raises(E.iterate_before_register, asc.KernelValueError, ["register_matmul"], F16, F32,
            _tiling())


def test_wrong_operand_dtype():
    _raises(E.wrong_a_dtype, asc.DtypeError, ["float32", "float16"], F32, _tiling())


def test_unsupported_output_dtype():
    _raises(E.unsupported_c_dtype, asc.DtypeError, ["c int32", "float32, float16"], F16)


def test_operand_not_in_gm():
    _raises(E.a_in_l1, asc.UnsupportedConstructError, ["A1", "TPosition.GM"], F16)


def test_iterate_all_needs_a_gm_c_type():
    _raises(E.iterate_all_to_ub_type, asc.KernelTypeError, ["VECCALC", "get_tensor_c"],
            F16, F32, _tiling())


def test_get_tensor_c_outside_iterate_without_pending_tiles():
    """Outside `with mm.iterate()` get_tensor_c takes the next tile of a bare mm.iterate()
    call (tests/adv/test_matmul_layout.py); with none pending it stops at its line."""
    _raises(E.get_tensor_c_outside, asc.KernelAssertionError, ["mm.iterate()",
                                                               "none is pending"], F16, F32,
            _tiling())


def test_with_needs_matmul_iterate():
    _raises(E.with_not_iterate, asc.UnsupportedConstructError, ["matmul.iterate()"], F16)


def test_register_matmul_needs_a_tiling_struct():
    _raises(E.register_without_tiling_struct, asc.KernelTypeError, ["TCubeTiling"], F16, 3)


def test_set_bias_without_a_bias_type():
    _raises(E.set_bias_without_type, asc.KernelTypeError, ["without a bias type",
                                                            "C's float16"], F16, F16)


def test_c_out_of_bounds_names_c_and_the_line():
    err = _raises(E.c_too_small, asc.GMOutOfBoundsError, ["matmul_iterate_all c", "'c'"],
                  F16, F16, np.zeros((16, 32), np.float32), _tiling())
    assert "block 0" in str(err)


def test_a_out_of_bounds_names_a():
    _raises(E.c_too_small, asc.GMOutOfBoundsError, ["matmul_iterate_all a", "'a'"],
            np.zeros((31, 32), np.float16), F16, F32, _tiling())


def test_struct_argument_must_be_the_struct():
    with pytest.raises(asc.LaunchArgumentError, match="must be an asc.adv.TCubeTiling"):
        E.unknown_field[1](F16, {"m": 1})


def test_unfilled_tiling_is_an_error_at_the_call():
    _raises(E.c_too_small, asc.MatmulStateError, ["base_m/base_n/base_k", "unfilled"],
            F16, F16, F32, asc.adv.TCubeTiling())


@pytest.mark.parametrize("kernel", [E.matmul_in_aiv_only, E.matmul_in_mix_aiv_1_0])
def test_matmul_in_a_vector_kernel_is_an_error_at_the_call(kernel):
    """A vector kernel has no cube and no matmul server (a hang on hardware): a
    CoreMemoryError at the Matmul call naming the kernel type and the fix."""
    err = _raises(kernel, asc.CoreMemoryError,
                  ["matmul_iterate_all", "needs the cube unit", "is a vector kernel",
                   "AIV (block 0)", "MIX_AIC_1_2", "AIC_ONLY"], F16, F16, F32, _tiling())
    assert kernel.options["kernel_type"].name in str(err)


def test_block_larger_than_the_matrix_says_to_call_set_tail():
    """Issue 12 item 10: M, N not multiples of 16 and no set_tail. CANN's tiling rounds
    single_core_m/n up and requires set_tail at the edge (the hardware would read and write
    past A and C); with exactly sized operands the error says so, at the call."""
    m, n, k = 100, 70, 32
    t = host.MultiCoreMatmulTiling()
    t.set_dim(1)
    t.set_shape(m, n, k)
    tiling = asc.adv.TCubeTiling()
    t.get_tiling(tiling)
    assert (tiling.single_core_m, tiling.single_core_n) == (112, 80)
    err = _raises(E.c_too_small, asc.MatmulStateError,
                  ["computes a 112 x 80 block of C", "the matrix is 100 x 70", "set_tail"],
                  np.zeros((m, k), np.float16), np.zeros((k, n), np.float16),
                  np.zeros((m, n), np.float32), tiling)
    assert "set_tail(tail_m, tail_n)" in str(err)
