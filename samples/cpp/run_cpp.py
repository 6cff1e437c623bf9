"""The C++ kernels of samples/cpp/: each run on the simulator, checked against its golden
values and against the cycles of the same kernel written in Python (samples/*.py).

Run: python samples/cpp/run_cpp.py (``make demo`` runs it through samples/run_all.py).
"""
import pathlib
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import ascendc_py as asc  # noqa: E402
from ascendc_py import cpp  # noqa: E402

C_TYPES = {np.float16: "half", np.float32: "float"}


def _same(name, dtype, report, report_py):
    if report.cycles != report_py.cycles:
        raise AssertionError(f"{name} {np.dtype(dtype).name}: C++ {report.cycles} cycles, "
                             f"Python {report_py.cycles}")
    print(f"{name} {np.dtype(dtype).name}: matches golden; {report.cycles:,} cycles, "
          f"as the Python kernel")


def run_add(dtype):
    import add_tque
    m = cpp.load(HERE / "add_custom.cpp", defines={"DTYPE_X": C_TYPES[dtype]})
    rng = np.random.default_rng(0)
    x = rng.random(8 * 2048 * 8, dtype=np.float32).astype(dtype)
    y = rng.random(x.size, dtype=np.float32).astype(dtype)
    z = np.zeros_like(x)
    report = m.add_custom[8](x, y, z, x.size // 8)
    asc.testing.assert_close(z, (x + y).astype(dtype))
    _same("add_custom.cpp", dtype, report, add_tque.add(x, y)[1])
    return report


def run_leaky_relu(dtype):
    import leaky_relu
    m = cpp.load(HERE / "leaky_relu_custom.cpp", defines={"DTYPE_X": C_TYPES[dtype]})
    x = np.random.default_rng(2).standard_normal(8 * 10_016).astype(dtype)
    y, y_py = np.zeros_like(x), np.zeros_like(x)
    report = m.leaky_relu_custom[8](x, y, m.LeakyReluTilingData(totalLength=x.size, slope=0.01))
    asc.testing.assert_close(y, leaky_relu.golden(x, 0.01))
    _same("leaky_relu_custom.cpp", dtype, report,
          leaky_relu.leaky_relu_kernel[8](x, y_py, x.size, 0.01, 4096))
    return report


def run_sepia(dtype):
    import sepia
    m = cpp.load(HERE / "sepia_custom.cpp", defines={"DTYPE_X": C_TYPES[dtype]})
    img = np.random.default_rng(3).random((2, 3, 64, 100), dtype=np.float32).astype(dtype)
    out = np.empty_like(img)
    report = m.sepia_custom[8](img, out, 2, 64 * 100)
    asc.testing.assert_close(out, sepia.golden(img))
    _same("sepia_custom.cpp", dtype, report, sepia.sepia(img)[1])
    return report


def run_matmul(out_dtype):
    import matmul
    from ascendc_py.compiler.ops.matmul import matmul_reference
    rng = np.random.default_rng(7)
    m_, n_, k_ = 1000, 1200, 700
    a = rng.uniform(-1, 1, (m_, k_)).astype(np.float16)
    b = rng.uniform(-1, 1, (k_, n_)).astype(np.float16)
    bias = rng.uniform(-1, 1, n_).astype(np.float32)
    mod = cpp.load(HERE / "matmul_custom.cpp", defines={"C_TYPE": C_TYPES[out_dtype]})
    tiling = matmul.make_tiling(m_, n_, k_, np.float16, out_dtype, True)
    c = np.zeros((m_, n_), out_dtype)
    report = mod.matmul_custom[tiling.used_core_num](a, b, c, bias, tiling)
    asc.testing.assert_close(c, matmul_reference(a, b, bias, out_dtype), **matmul.TOLERANCE)
    _same("matmul_custom.cpp", out_dtype, report, matmul.matmul(a, b, bias, out_dtype)[1])
    return report


def main():
    report = None
    for dtype in (np.float16, np.float32):
        run_add(dtype)
        run_leaky_relu(dtype)
        report = run_sepia(dtype)
        run_matmul(dtype)
    print(report)
    return report


if __name__ == "__main__":
    main()
