"""``python -m ascendc_py.pyasc_compat [--lenient] [--npu-as-model] PROGRAM.py [ARGS ...]``:
run a pyasc program."""
import sys

from . import main

if __name__ == "__main__":
    sys.exit(main())
