"""Helpers for the C++ front end's tests: the repository's samples folder on sys.path."""
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
CPP = SAMPLES / "cpp"
if str(SAMPLES) not in sys.path:
    sys.path.insert(0, str(SAMPLES))
