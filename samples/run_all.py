"""Run every sample: compile, simulate, check against golden values, print the reports.

`make demo` runs this file.
"""
import importlib
import os
import pathlib
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
OUT = HERE.parent / "out"
sys.path.insert(0, str(HERE))
SAMPLES = ["add_tque", "add_flags", "leaky_relu", "sepia", "softmax", "layernorm", "linear",
           "matmul", "mix_pipeline", "matmul_leaky_relu", "swiglu_ffn", "torch_model",
           "autotune_sepia", "autotune_matmul", "resnet_block",
           "cpp.run_cpp"]   # the C++ kernels of samples/cpp (issue 20)


def main() -> int:
    failed = []
    os.environ.setdefault("ASCENDC_PY_TRACE", "1")  # record traces for out/
    OUT.mkdir(exist_ok=True)
    for name in SAMPLES:
        print(f"=== {name} ===")
        t0 = time.perf_counter()
        try:
            report = importlib.import_module(name).main()
            if report is not None:
                print("trace:", report.save_trace(OUT / f"{name}.trace.json"))
                print("timeline:", report.plot(OUT / f"{name}.png"))
        except Exception as exc:  # report and keep going, fail at the end
            failed.append(name)
            print(f"FAILED: {type(exc).__name__}: {exc}")
        print(f"({time.perf_counter() - t0:.2f} s)\n")
    if failed:
        print("failed samples:", ", ".join(failed))
        return 1
    print(f"all {len(SAMPLES)} samples match their golden values")
    return 0


if __name__ == "__main__":
    sys.exit(main())
