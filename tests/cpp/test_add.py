"""samples/cpp/add_custom.cpp: golden values over dtypes and sizes, and the same simulated
cycles as the Python sample samples/add_tque.py (the same kernel in both languages)."""
import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py import cpp

from .conftest import CPP

C_TYPES = {np.float16: "half", np.float32: "float"}


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("blocks,tiles", [(8, 16), (4, 2), (1, 1)])
def test_add_golden(dtype, blocks, tiles):
    m = cpp.load(CPP / "add_custom.cpp", defines={"DTYPE_X": C_TYPES[dtype]})
    rng = np.random.default_rng(blocks * 10 + tiles)
    n = blocks * tiles * 1024
    x = rng.random(n, dtype=np.float32).astype(dtype)
    y = rng.random(n, dtype=np.float32).astype(dtype)
    z = np.zeros_like(x)
    m.add_custom[blocks](x, y, z, n // blocks)
    asc.testing.assert_close(z, (x + y).astype(dtype))


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_add_same_cycles_as_python(dtype):
    import add_tque
    m = cpp.load(CPP / "add_custom.cpp", defines={"DTYPE_X": C_TYPES[dtype]})
    rng = np.random.default_rng(0)
    x = rng.random(8 * 2048 * 8, dtype=np.float32).astype(dtype)
    y = rng.random(x.size, dtype=np.float32).astype(dtype)
    z = np.zeros_like(x)
    report = m.add_custom[8](x, y, z, x.size // 8)
    z_py, report_py = add_tque.add(x, y)
    np.testing.assert_array_equal(z, z_py)
    assert report.cycles == report_py.cycles
    assert report.core_cycles == report_py.core_cycles


def test_wrong_dtype_names_the_cast():
    m = cpp.load(CPP / "add_custom.cpp")
    x = np.zeros(8192, np.float32)
    with pytest.raises(asc.KernelTypeError) as info:
        m.add_custom[8](x, x, x.copy(), 1024)
    msg = str(info.value)
    assert "add_custom.cpp:" in msg and "reads it as float16" in msg and "^" in msg


def test_defines_are_part_of_the_cache_key():
    """Regression: the kernel compiled with DTYPE_X=float was served for DTYPE_X=half."""
    x = np.ones(8192, np.float32)
    cpp.load(CPP / "add_custom.cpp", defines={"DTYPE_X": "float"}).add_custom[8](
        x, x, np.zeros_like(x), 1024)
    with pytest.raises(asc.KernelTypeError):
        cpp.load(CPP / "add_custom.cpp").add_custom[8](x, x, np.zeros_like(x), 1024)
