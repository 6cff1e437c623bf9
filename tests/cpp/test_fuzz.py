"""Fuzzing the C++ front end: sample kernels mutated by hypothesis (spans deleted, duplicated
or replaced by C++ tokens) load or fail with a KernelError naming a place in the file; never
another exception, an internal compiler error, or a hang."""
import pathlib
import signal

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402

import ascendc_py as asc  # noqa: E402
from ascendc_py import cpp  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
SOURCES = [p.read_text() for p in sorted((HERE.parents[1] / "samples" / "cpp").glob("*.cpp")) +
           sorted((HERE / "kernels").glob("*.cpp"))]
TOKENS = ["{", "}", "(", ")", "[", "]", ";", ",", "<", ">", "<<", ">>", "::", "->", ".", "*",
          "&", "=", "+=", "++", "--", "!", "~", "?", ":", "/", "%", "0", "1", "-1", "1.5f",
          "x", "T", "half", "int32_t", "uint32_t", "auto", "const", "constexpr", "if", "else",
          "for", "while", "do", "return", "break", "continue", "class", "struct", "template",
          "typename", "sizeof", "this", "__aicore__", "__gm__", "#define Z 1\n", "\n#if\n",
          "#pragma unroll\n", "GM_ADDR", "LocalTensor<T>", "DataCopy", "TQue", "static",
          "new", "switch", "'c'", '"s"', "0x7fffffff", "4294967295u", "GET_TILING_DATA",
          "case 1:", "default:", "[2]", "= {1, 2}", "ptr++", "*ptr", "&", "uint32_t *",
          "reinterpret_cast<uint32_t *>", ": public KernelBase", "K::K("]


@st.composite
def mutated(draw):
    text = draw(st.sampled_from(SOURCES))
    for _ in range(draw(st.integers(1, 4))):
        n = len(text)
        a = draw(st.integers(0, n))
        b = min(n, a + draw(st.integers(0, 40)))
        kind = draw(st.sampled_from(["delete", "duplicate", "replace", "insert"]))
        if kind == "delete":
            text = text[:a] + text[b:]
        elif kind == "duplicate":
            text = text[:b] + text[a:b] + text[b:]
        else:
            tok = draw(st.sampled_from(TOKENS))
            text = text[:a] + " " + tok + " " + (text[b:] if kind == "replace" else text[a:])
    return text


class _Hang(Exception):
    pass


def _alarm(signum, frame):
    raise _Hang()


@settings(max_examples=150, deadline=None)
@given(mutated())
def test_mutated_sources_never_crash(text):
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(20)
    try:
        cpp.load(text, name="fuzz.cpp")
    except asc.compiler.errors.InternalCompilerError as exc:   # a front-end bug
        raise AssertionError(f"internal error: {exc}") from exc
    except asc.KernelError as exc:
        assert exc.loc is None or exc.loc.file == "fuzz.cpp"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
