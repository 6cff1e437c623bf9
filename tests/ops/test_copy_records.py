"""The parameter records of ``ops/copy_records.py``: defaults, field reads, range and enum checks
at the line, and the data_copy overloads that would take them (not implemented: an error)."""
from __future__ import annotations

import linecache

import numpy as np
import pytest

import ascendc_py as asc


@asc.kernel
def fields(o: asc.GlobalAddress, v: int):
    og = asc.GlobalTensor()
    og.set_global_buffer(o, 16)
    s = asc.SliceInfo()
    og.set_value(0, s.end_index)
    og.set_value(1, s.burst_len)
    e = asc.DataCopyEnhancedParams(asc.BlockMode.BLOCK_MODE_VECTOR, asc.DeqScale.DEQ8, v, 3,
                                   True, asc.pad_t.PAD_MODE2, 7)
    og.set_value(2, e.deq_value_in)
    og.set_value(3, e.sid_store_mode_in)
    og.set_value(4, e.pad_value_in)
    n = asc.Nz2NdParamsFull(1, 32, 16, 0, 32, 16, v)
    og.set_value(5, n.d_value)
    og.set_value(6, n.dst_nd_matrix_stride)
    c = asc.DataCopyCO12DstParams(16, 32, 16, 32, asc.QuantModes.F322F16, 0, False, True)
    og.set_value(7, c.m_size)
    if c.nz2nd_en and e.is_relu_in:
        og.set_value(8, 1)


def test_defaults_and_fields_read_back():
    o = np.zeros(16, np.int64)
    fields[1](o, 5)
    assert list(o[:9]) == [31, 32, 5, 3, 7, 16, 5, 32, 1]


def _compile_error(body: str, cls):
    src = "def k(x: asc.GlobalAddress, v: int):\n    xl = asc.LocalTensor(asc.float16, " \
          "asc.TPosition.VECIN, 0, 512)\n" + f"    {body}\n"
    name = f"<records-test-{abs(hash(body))}>"
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)
    ns = {"asc": asc}
    exec(compile(src, name, "exec"), ns)
    with pytest.raises(cls) as info:
        asc.kernel(ns["k"])[1](np.zeros(8, np.float16), 3)
    assert ":3:" in str(info.value), str(info.value)
    return str(info.value)


@pytest.mark.parametrize("body,cls,message", [
    ("p = asc.Nz2NdParamsFull(1, 70000, 1, 1, 1, 1, 1)", asc.ConstantRangeError,
     "n_value is 70000; the field holds 0..65535"),
    ("p = asc.Nz2NdParamsFull(1, 1, 1, 1, 1, 1, 1, 1)", asc.KernelTypeError,
     "takes at most 7 arguments"),
    ("p = asc.Nz2NdParamsFull(1, 1)", asc.KernelTypeError, "missing"),
    ("p = asc.SliceInfo(-1)", asc.ConstantRangeError, "start_index"),
    ("p = asc.DataCopyEnhancedParams(asc.DeqScale.DEQ)", asc.KernelTypeError, "BlockMode"),
    ("p = asc.DataCopyEnhancedParams(sid_store_mode_in=256)", asc.ConstantRangeError,
     "sid_store_mode_in"),
    ("p = asc.DataCopyCO12DstParams(1, 1, 1, 1, quant_pre=asc.pad_t.PAD_NONE)",
     asc.KernelTypeError, "QuantModes"),
    ("p = asc.SliceInfo(); p.nope", asc.UnknownAttributeError, "no field 'nope'"),
])
def test_errors_name_the_line(body, cls, message):
    assert message in _compile_error(body, cls)


def test_a_data_copy_taking_one_is_refused_at_the_line():
    body = ("xg = asc.GlobalTensor(); xg.set_global_buffer(x); asc.data_copy(xg, xl, "
            "intri_params=asc.Nz2NdParamsFull(1, 32, 32, 1, 32, 32, 1))")
    assert "got Nz2NdParamsFull" in _compile_error(body, asc.KernelTypeError)
