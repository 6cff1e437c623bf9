"""``python -m ascendc_py``: the command line (``ascendc_py/cli.py``)."""
from ascendc_py.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
