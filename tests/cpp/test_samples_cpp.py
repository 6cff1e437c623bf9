"""samples/cpp/leaky_relu_custom.cpp (tiling struct) and sepia_custom.cpp: golden values over
dtypes and shapes, and the same simulated cycles as samples/leaky_relu.py and sepia.py."""
import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py import cpp

from .conftest import CPP

C_TYPES = {np.float16: "half", np.float32: "float"}


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("n,blocks", [(8 * 10_016, 8), (4 * 4096 + 64, 4), (1024, 1)])
def test_leaky_relu_golden(dtype, n, blocks):
    import leaky_relu
    m = cpp.load(CPP / "leaky_relu_custom.cpp", defines={"DTYPE_X": C_TYPES[dtype]})
    x = np.random.default_rng(n).standard_normal(n).astype(dtype)
    y = np.zeros_like(x)
    m.leaky_relu_custom[blocks](x, y, m.LeakyReluTilingData(totalLength=n, slope=0.2))
    asc.testing.assert_close(y, leaky_relu.golden(x, 0.2))


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_leaky_relu_same_cycles_as_python(dtype):
    import leaky_relu
    m = cpp.load(CPP / "leaky_relu_custom.cpp", defines={"DTYPE_X": C_TYPES[dtype]})
    x = np.random.default_rng(2).standard_normal(8 * 10_016).astype(dtype)
    y, y_py = np.zeros_like(x), np.zeros_like(x)
    report = m.leaky_relu_custom[8](x, y, {"totalLength": x.size, "slope": 0.01})
    report_py = leaky_relu.leaky_relu_kernel[8](x, y_py, x.size, 0.01, 4096)
    np.testing.assert_array_equal(y, y_py)
    assert report.cycles == report_py.cycles


def test_tiling_as_numpy_structured_scalar():
    m = cpp.load(CPP / "leaky_relu_custom.cpp", defines={"DTYPE_X": "float"})
    x = np.linspace(-1, 1, 2048, dtype=np.float32)
    y = np.zeros_like(x)
    tiling = np.array([(x.size, 0.5)], dtype=[("totalLength", np.int32), ("slope", np.float32)])
    m.leaky_relu_custom[2](x, y, tiling[0])
    np.testing.assert_allclose(y, np.where(x >= 0, x, 0.5 * x), rtol=1e-6)


def test_tiling_wrong_field_is_a_launch_error():
    m = cpp.load(CPP / "leaky_relu_custom.cpp")
    x = np.zeros(1024, np.float16)
    with pytest.raises(asc.KernelLaunchError, match="no field 'total'"):
        m.leaky_relu_custom[1](x, x.copy(), {"total": 1024, "slope": 0.1})


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("shape", [(2, 3, 64, 100), (1, 3, 16, 16)])
def test_sepia_golden_and_cycles(dtype, shape):
    import sepia
    m = cpp.load(CPP / "sepia_custom.cpp", defines={"DTYPE_X": C_TYPES[dtype]})
    img = np.random.default_rng(3).random(shape, dtype=np.float32).astype(dtype)
    out = np.empty_like(img)
    report = m.sepia_custom[8](img, out, shape[0], shape[2] * shape[3])
    asc.testing.assert_close(out, sepia.golden(img))
    out_py, report_py = sepia.sepia(img)
    np.testing.assert_array_equal(out, out_py)
    assert report.cycles == report_py.cycles


@pytest.mark.parametrize("out_dtype,with_bias", [(np.float32, False), (np.float16, True)])
def test_matmul_api_golden_and_cycles(out_dtype, with_bias):
    import matmul
    from ascendc_py.compiler.ops.matmul import matmul_reference
    rng = np.random.default_rng(7)
    m_, n_, k_ = 200, 300, 120
    a = rng.uniform(-1, 1, (m_, k_)).astype(np.float16)
    b = rng.uniform(-1, 1, (k_, n_)).astype(np.float16)
    bias = rng.uniform(-1, 1, n_).astype(np.float32)
    mod = cpp.load(CPP / "matmul_custom.cpp",
                   defines={"C_TYPE": "float" if out_dtype == np.float32 else "half"})
    tiling = matmul.make_tiling(m_, n_, k_, np.float16, out_dtype, with_bias)
    c = np.zeros((m_, n_), out_dtype)
    report = mod.matmul_custom[tiling.used_core_num](
        a, b, c, bias if with_bias else np.zeros(n_, np.float32), tiling)
    golden = matmul_reference(a, b, bias if with_bias else None, out_dtype)
    asc.testing.assert_close(c, golden, **matmul.TOLERANCE)
    c_py, report_py, _ = matmul.matmul(a, b, bias if with_bias else None, out_dtype)
    np.testing.assert_array_equal(c, c_py)
    assert report.cycles == report_py.cycles
    assert mod.matmul_custom.options["kernel_type"] == asc.KernelType.AIC_ONLY


def test_matmul_tiling_inside_an_operator_tiling_struct():
    """GET_TILING_DATA of a struct (declared in a header not given) whose cubeTilingData field
    is the TCubeTiling: passed from Python as a dict."""
    import matmul
    from ascendc_py.compiler.ops.matmul import matmul_reference
    rng = np.random.default_rng(8)
    m_, n_, k_ = 96, 130, 64
    a = rng.uniform(-1, 1, (m_, k_)).astype(np.float16)
    b = rng.uniform(-1, 1, (k_, n_)).astype(np.float16)
    mod = cpp.load(CPP.parent.parent / "tests" / "cpp" / "kernels" / "matmul_opproj.cpp")
    tiling = matmul.make_tiling(m_, n_, k_, np.float16, np.float32, False)
    c = np.zeros((m_, n_), np.float32)
    mod.matmul_custom[tiling.used_core_num](a, b, c, None, {"cubeTilingData": tiling})
    asc.testing.assert_close(c, matmul_reference(a, b, None, np.float32), **matmul.TOLERANCE)


def test_tiling_missing_field_is_a_launch_error():
    m = cpp.load(CPP / "leaky_relu_custom.cpp")
    x = np.zeros(1024, np.float16)
    with pytest.raises(asc.KernelLaunchError, match="slope"):
        m.leaky_relu_custom[1](x, x.copy(), {"totalLength": 1024})


def test_matmul_api_in_a_kernel_class():
    import matmul
    from ascendc_py.compiler.ops.matmul import matmul_reference
    rng = np.random.default_rng(9)
    m_, n_, k_ = 150, 70, 48
    a = rng.uniform(-1, 1, (m_, k_)).astype(np.float16)
    b = rng.uniform(-1, 1, (k_, n_)).astype(np.float16)
    mod = cpp.load(CPP.parent.parent / "tests" / "cpp" / "kernels" / "matmul_class.cpp")
    tiling = matmul.make_tiling(m_, n_, k_, np.float16, np.float32, False)
    c = np.zeros((m_, n_), np.float32)
    mod.matmul_class[tiling.used_core_num](a, b, c, tiling)
    asc.testing.assert_close(c, matmul_reference(a, b, None, np.float32), **matmul.TOLERANCE)
