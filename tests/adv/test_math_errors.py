"""Misuse of the asc.adv math functions: each error names the user's line (the call into the
library, with the chain of inlined calls above it), never a line of the library."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import ascendc_py as asc

import kernels_advmath_errors as E


def _line(kernel) -> int:
    lines, first = inspect.getsourcelines(kernel.fn)
    hits = [i for i, t in enumerate(lines) if t.rstrip().endswith("# <-")]
    assert len(hits) == 1
    return first + hits[0]


def _raises(kernel, cls, words, *args, line_of=None):
    with pytest.raises(cls) as info:
        kernel[1](*args)
    err = info.value
    assert err.loc is not None and err.loc.line == _line(line_of or kernel), str(err)
    assert err.loc.file.endswith("kernels_advmath_errors.py"), str(err)
    assert "advlib" not in str(err).splitlines()[0], str(err)
    for w in words:
        assert w in str(err), str(err)
    return err


X = np.zeros(64, np.float32)


def test_unsupported_dtype_is_a_compile_error_at_the_call():
    _raises(E.wrong_dtype, asc.StaticAssertionError,
            ["asc.adv.tanh: dst and src must both be float16 or both float32"], X)


def test_temp_buffer_must_be_uint8():
    _raises(E.tmp_not_uint8, asc.StaticAssertionError,
            ["asc.adv.sin: temp_buffer must be a uint8 LocalTensor of at least 2560 bytes",
             "get_sin_max_min_tmp_size"], X)


def test_dst_and_src_dtypes_must_match():
    _raises(E.mixed_dtypes, asc.StaticAssertionError, ["asc.adv.erf"], X)


def test_too_small_temp_buffer_stops_the_kernel_at_the_call():
    E.small_tmp[1](1024, 7 * 256)                   # the minimum works
    _raises(E.small_tmp, asc.KernelAssertionError,
            ["asc.adv.tanh: temp_buffer must be a uint8 LocalTensor of at least 1792 bytes"],
            1024, 7 * 256 - 32)


def test_count_beyond_a_tensor_names_the_helper_line_and_the_chain():
    E.count_beyond_in_helper[1](512)
    err = _raises(E.count_beyond_in_helper, asc.KernelAssertionError,
                  ["asc.adv.atan: count must be between 0 and the sizes of src and dst"], 513,
                  line_of=E.apply_atan)
    assert "inlined from count_beyond_in_helper" in str(err), str(err)


def test_negative_count():
    _raises(E.small_tmp, asc.KernelAssertionError, ["asc.adv.tanh: count"], -1, 4096)


def test_taylor_level_range():
    _raises(E.bad_taylor_level, asc.StaticAssertionError, ["taylor_expand_level must be 0..31"],
            X)


def test_xor_needs_int16():
    _raises(E.xor_on_floats, asc.StaticAssertionError, ["all be int16 or all uint16"], X)
