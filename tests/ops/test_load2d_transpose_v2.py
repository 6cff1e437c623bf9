"""LoadData2dTransposeParamsV2: the record is built and range-checked like its V1 sibling, and
load_data_with_transpose refuses it at the line, because Ascend C documents that overload for
Ascend 950PR/950DT only (this simulator models Ascend 910B, Atlas A2/A3)."""
from __future__ import annotations

import pytest

import ascendc_py as asc

AIC = asc.KernelType.AIC_ONLY


def test_v2_overload_is_refused_on_a2_at_the_line():
    @asc.kernel(kernel_type=AIC)
    def k():
        a1 = asc.LocalTensor(dtype=asc.float16, pos=asc.TPosition.A1, addr=0, tile_size=512)
        a2 = asc.LocalTensor(dtype=asc.float16, pos=asc.TPosition.A2, addr=0, tile_size=512)
        p = asc.LoadData2dTransposeParamsV2(0, 2, 1, 0, 0, 0, 0)
        asc.load_data_with_transpose(a2, a1, p)

    with pytest.raises(asc.KernelTypeError, match="950PR/950DT only") as info:
        k[1]()
    assert "asc.load_data_with_transpose(a2, a1, p)" in str(info.value)
    assert "LoadData2dTransposeParams(start_index" in str(info.value)


@pytest.mark.parametrize("field,value", [("repeat_times", 256), ("src_frac_gap", 65536),
                                         ("addr_mode", 2), ("dst_frac_gap", -1)])
def test_v2_record_fields_are_range_checked(tmp_path, field, value):
    import importlib.util
    src = tmp_path / f"kv2_{field}.py"
    src.write_text("import ascendc_py as asc\n\n"
                   "@asc.kernel(kernel_type=asc.KernelType.AIC_ONLY)\n"
                   "def kv2():\n"
                   f"    asc.LoadData2dTransposeParamsV2({field}={value})\n")
    spec = importlib.util.spec_from_file_location(src.stem, src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with pytest.raises(asc.KernelValueError, match=f"LoadData2dTransposeParamsV2.{field}") as info:
        mod.kv2[1]()
    assert f"{src.name}:5" in str(info.value)


def test_v1_still_loads():
    """The A2 overload is unchanged (its numerics are tested in test_cube.py)."""
    @asc.kernel(kernel_type=AIC)
    def k():
        a1 = asc.LocalTensor(dtype=asc.float16, pos=asc.TPosition.A1, addr=0, tile_size=512)
        a2 = asc.LocalTensor(dtype=asc.float16, pos=asc.TPosition.A2, addr=0, tile_size=512)
        asc.load_data_with_transpose(a2, a1, asc.LoadData2dTransposeParams(0, 2, 1, 0, 0, 0))

    r = k[1]()
    assert r.instructions["load_data_with_transpose"] == 1
