"""The tier-1 list of ../shared/API.md and the language agree.

API.md (beside the repository, as in CI) is parsed at test time: every name in backticks in its
"Tier 1" section must exist as ``asc.<name>`` (methods of the kernel objects as registered sema
methods; enum members as members of an ``asc`` enum), and every op named in the "Vector compute"
and "Data movement" bullets must have a registry entry with a NumPy reference. Skipped only when
API.md is absent.
"""
from __future__ import annotations

import enum
import keyword
import re
from pathlib import Path

import pytest

import ascendc_py as asc
from ascendc_py.compiler.ops import REGISTRY
from ascendc_py.compiler.sema import builtins as sema_builtins

API_MD = Path(__file__).resolve().parents[1].parent / "shared" / "API.md"

#: Python syntax and builtins the list mentions (for, range, int …): not asc names
PYTHON_NAMES = set(keyword.kwlist) | {"range", "int", "float", "bool", "elif"}
#: placeholders in signatures (`op(dst, src…, count)`, `x + offset`, `t[off:]`)
PLACEHOLDERS = {"op", "dst", "src", "count", "mask", "repeat_times", "repeat_params", "x",
                "offset", "t", "dtype", "fmt", "desc", "id", "i", "v", "len", "num", "que",
                "buf", "depth", "addr", "size", "block_dim", "stream", "off"}
#: methods of GlobalTensor / LocalTensor / TPipe / TQue / TBuf
METHOD_NAMES = {"set_global_buffer", "get_value", "set_value", "get_size", "reinterpret_cast",
                "init_buffer", "alloc_tensor", "enque", "deque", "free_tensor", "get"}
#: mask-register functions listed with the vector ops: builtins, but they compute no data
MASK_STATE = {"set_vector_mask", "reset_mask", "set_mask_count", "set_mask_norm"}
OP_BULLETS = ("Vector compute", "Data movement")


def _expand(word: str) -> list[str]:
    """``whole_reduce_sum/max/min`` → whole_reduce_sum, whole_reduce_max, whole_reduce_min;
    ``if/elif/else`` → if, elif, else."""
    first, *rest = word.split("/")
    prefix = first[:first.rfind("_") + 1] if rest else ""
    return [first] + [prefix + r for r in rest]


def _span_names(span: str) -> list[str]:
    if re.search(r"\w[(\[.]", span):   # a call, subscript or attribute: its head and calls
        head = re.match(r"\s*([A-Za-z_]\w*)", span)
        names = [head.group(1)] if head else []
        names += re.findall(r"(?<![.\w])([A-Za-z_]\w*)\(", span)
        return list(dict.fromkeys(names))
    names = []
    for word in re.findall(r"[A-Za-z_][\w/]*", span):
        names += _expand(word)
    return names


def tier1_names() -> list[tuple[str, str]]:
    """(name, kind) for the Tier 1 section; kind: 'op', 'name', 'method' or 'member'."""
    text = API_MD.read_text(encoding="utf-8")
    section = text.split("## Tier 1", 1)[1].split("\n## ", 1)[0]
    bullets = re.split(r"\n- ", "\n" + section)[1:]
    found: dict[str, str] = {}
    for bullet in bullets:
        is_ops = bullet.startswith(OP_BULLETS)
        # enum members listed in parentheses after the enum: `TPosition` (GM, A1, …)
        for members in re.findall(r"`[A-Z]\w*` \(([^)]*)\)", bullet):
            for m in re.findall(r"[A-Z][A-Z0-9_]+", members):
                found.setdefault(m, "member")
        for span in re.findall(r"`([^`]+)`", bullet):
            for name in _span_names(span):
                if name in PYTHON_NAMES or name in PLACEHOLDERS:
                    continue
                if name in METHOD_NAMES:
                    kind = "method"
                elif re.fullmatch(r"[A-Z][A-Z0-9]*_[A-Z0-9_]+", name):
                    kind = "member"                      # MTE2_V, PIPE_S …
                elif is_ops and name[0].islower() and name not in MASK_STATE:
                    kind = "op"
                else:
                    kind = "name"
                if found.get(name) != "op":
                    found[name] = kind
    return sorted(found.items())


NAMES = tier1_names() if API_MD.exists() else []
ENUMS = [v for v in vars(asc).values() if isinstance(v, type) and issubclass(v, enum.Enum)]


@pytest.mark.skipif(not API_MD.exists(), reason=f"{API_MD} is absent")
def test_the_list_is_parsed():
    names = dict(NAMES)
    assert names["data_copy_pad"] == "op" and names["add"] == "op"
    assert names["whole_reduce_max"] == "op" and names["pair_reduce_sum"] == "op"
    assert names["DataCopyPadExtParams"] == "name" and names["printf"] == "name"
    assert names["init_buffer"] == "method" and names["MTE2_V"] == "member"
    assert names["VECCALC"] == "member" and names["half"] == "name"
    assert "op" not in names and "range" not in names
    assert len(NAMES) > 100


@pytest.mark.skipif(not API_MD.exists(), reason=f"{API_MD} is absent")
@pytest.mark.parametrize("name,kind", NAMES, ids=[n for n, _ in NAMES])
def test_tier1_name_exists(name, kind):
    if kind == "method":
        assert any(m == name for _, m in sema_builtins.METHODS), \
            f"no kernel object has a method '{name}'"
    elif kind == "member":
        assert any(name in e.__members__ for e in ENUMS), f"no asc enum has a member '{name}'"
    else:
        assert hasattr(asc, name), f"asc.{name} is missing"
    if kind == "op":
        assert name in REGISTRY, f"'{name}' has no op registry entry"
        assert callable(REGISTRY[name].reference), f"'{name}' has no NumPy reference"


def test_dtype_sizeof():
    assert asc.float16.sizeof() == 2 and asc.int64.sizeof() == 8
