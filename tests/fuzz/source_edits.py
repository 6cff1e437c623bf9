"""Malformed kernel sources for the fuzz tests (``malformed_cases()``): 1-3 random edits (token
deletions, duplications, swaps and insertions, numbers made huge or negative, dtypes and enum
members changed, set_flag or wait_flag removed, event ids changed, buffers shrunk, statements
removed, duplicated, swapped or inserted) of the samples' kernels or of a generated kernel,
restricted to kernel bodies and module constants. ``fuzz_runner.run_case()`` runs one.
"""
from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

import ascendc_py as asc

from .fuzz_runner import Arg, Case, Recipe, python_valid, recipe_for
from .kernel_gen import ROOT, kernel_specs, render

SAMPLES = ROOT / "samples"


def _sample_case(file: str, recipe: Recipe) -> tuple[str, str, Recipe]:
    return file, kernel_part(SAMPLES / file), recipe


def kernel_part(path: Path) -> str:
    """A sample's source up to its first top-level function that is not a kernel (its golden,
    main …): imports, constants and kernels."""
    text = path.read_text()
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and not node.decorator_list:
            return "".join(lines[:node.lineno - 1]).rstrip() + "\n"
    return text


def _f32(kind: str, n: int, dist: str = "sym") -> Arg:
    return Arg(kind, "float32", n, dist=dist)


_BASES: list = []


def sample_bases() -> list[tuple[str, str, Recipe]]:
    """(name, source, recipe) of each sample kernel at a small size that runs cleanly."""
    if _BASES:
        return _BASES
    bases = _BASES
    if (SAMPLES / "add_flags.py").exists():
        # 2 blocks of 256 elements: tile_length = 256 // 8 // 2 = 16 (64 B)
        bases.append(_sample_case("add_flags.py", Recipe(
            "add_flags_kernel", 2, (_f32("in", 512), _f32("in", 512), _f32("out", 512),
                                    Arg("scalar", value=256)))))
    if (SAMPLES / "add_tque.py").exists():
        bases.append(_sample_case("add_tque.py", Recipe(
            "add_kernel", 2, (_f32("in", 512), _f32("in", 512), _f32("out", 512),
                              Arg("scalar", value=256), Arg("const", value=32)))))
    if (SAMPLES / "leaky_relu.py").exists():
        bases.append(_sample_case("leaky_relu.py", Recipe(
            "leaky_relu_kernel", 2, (_f32("in", 320), _f32("out", 320),
                                     Arg("scalar", value=320), Arg("scalar", value=0.01),
                                     Arg("const", value=64)))))
    if (SAMPLES / "sepia.py").exists():
        bases.append(_sample_case("sepia.py", Recipe(
            "sepia_kernel", 2, (_f32("in", 3 * 96, "pos"), _f32("out", 3 * 96),
                                Arg("scalar", value=1), Arg("scalar", value=96)))))
    if (SAMPLES / "softmax.py").exists():
        bases.append(_sample_case("softmax.py", Recipe(
            "softmax_kernel", 2, (_f32("in", 4 * 64), _f32("out", 4 * 64),
                                  Arg("scalar", value=4), Arg("scalar", value=64)))))
    if (SAMPLES / "layernorm.py").exists():
        bases.append(_sample_case("layernorm.py", Recipe(
            "layernorm_kernel", 2, (_f32("in", 4 * 64), _f32("in", 64, "pos"), _f32("in", 64),
                                    _f32("out", 4 * 64), Arg("scalar", value=4),
                                    Arg("scalar", value=64), Arg("scalar", value=1e-5)))))
    if (SAMPLES / "mix_pipeline.py").exists():
        # a mix kernel: the AIC feeds its two AIVs through a GM workspace with cross-core flags
        tile = 2048
        bases.append(_sample_case("mix_pipeline.py", Recipe(
            "mix_pipeline", 2, (_f32("in", 2 * 2 * tile), _f32("out", 2 * 2 * tile),
                                _f32("out", 2 * 2 * tile), Arg("scalar", value=2)))))
    cube_kernels = ROOT / "ascendc_py" / "torch_bridge" / "cube_kernels.py"
    if cube_kernels.exists():
        # the low-level cube kernel (Nd2Nz, load_data, mmad with bias, fixpipe): 20x40 @ 40x24
        bases.append(("cube_kernels.py", kernel_part(cube_kernels), Recipe(
            "linear_kernel", 1, (Arg("in", "float16", 20 * 40), Arg("in", "float16", 24 * 40),
                                 _f32("in", 256), _f32("out", 20 * 24), Arg("scalar", value=20),
                                 Arg("scalar", value=24), Arg("scalar", value=40),
                                 Arg("const", value=128), Arg("const", value=256),
                                 Arg("const", value=128), Arg("const", value=0)))))
    return bases


# ----------------------------------------------------------------------------- source edits
NUMBERS = ["0", "1", "-1", "2", "3", "7", "8", "9", "16", "31", "33", "255", "256", "257",
           "4096", "65536", "-32", "-4096", "2**31 - 1", "2**31", "2**32", "2**63 - 1", "2**63",
           "2**64", "10**12", "10**30", "0.5", "-0.0", "1e30", "1e308", "3.5", "(-7)"]
DTYPE_NAMES = ["float16", "float32", "int16", "int32", "int8", "uint8", "uint16", "bfloat16",
               "int64", "float64", "bool_", "uint32"]
INSERT_TOKENS = ["asc", ".", ",", "(", ")", "[", "]", ":", "+", "-", "*", "//", "%", "=", "0",
                 "1", "-1", "2**40", "None", "True", "not", "and", "or", "if", "else", "lambda",
                 "x", "t", "i", "n", "dtype", "sizeof", "float32", "float16", "int32", "len",
                 "range", "min", "max", "abs", "TILE", "asc.add", "asc.data_copy", "'s'", "1.5",
                 "in", "is", "**", "<<", ">>", "~", "==", "<", "@", "yield", "await", "del"]
STATEMENTS = [
    "asc.pipe_barrier(asc.PipeID.PIPE_ALL)",
    "asc.set_flag(asc.HardEvent.MTE2_V, 0)",
    "asc.wait_flag(asc.HardEvent.MTE2_V, 0)",
    "asc.set_flag(asc.HardEvent.V_MTE3, 7)",
    "asc.wait_flag(asc.HardEvent.V_MTE3, 3)",
    "asc.wait_flag(asc.HardEvent.MTE3_MTE2, 1)",
    "asc.set_flag(asc.HardEvent.S_V, 8)",
    "asc.pipe_barrier(asc.PipeID.PIPE_V)",
    "print(1)",
    "import os",
    "x = lambda: 0",
    "q = [k for k in range(3)]",
    "d = {}",
    "yield 1",
    "global TILE",
    "del t",
    "with open('f') as f: pass",
    "assert False, 'fuzz'",
    "asc.static_assert(False, 'fuzz')",
    "raise ValueError('fuzz')",
    "return 5",
    "while True: pass",
    "for k in range(2**40): pass",
    "x = 1 / 0",
    "x = 1 // 0",
    "k = 0\nwhile k < 10: k = k",
    "asc.duplicate(asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 1, 8), 1.0, 8)",
    "asc.duplicate(asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 196608, 64), 1.0, 64)",
    "asc.duplicate(asc.LocalTensor(asc.float16, asc.TPosition.VECOUT, 0, 16), 1.0, -16)",
    "asc.add(asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 64), "
    "asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 256, 64), "
    "asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 512, 64), 64, 300, "
    "asc.BinaryRepeatParams())",
    "asc.abs(asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, 128), "
    "asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 256, 128), [0, 0], 1, "
    "asc.UnaryRepeatParams())",
    "qq = asc.TQue(asc.TPosition.VECIN, 2)",
    "qq = asc.TQue(asc.TPosition.VECIN, 2)\nqq.deque(asc.float32)",
    "pp = asc.TPipe()\nqq = asc.TQue(asc.TPosition.VECOUT, 1)\npp.init_buffer(qq, 9, 64)",
    "pp = asc.TPipe()\nqq = asc.TQue(asc.TPosition.VECOUT, 1)\npp.init_buffer(qq, 1, 10**9)",
    "asc.static_range(3)",
    "s = 'text' + 1",
    "x = (1, 2)[5]",
    "x = asc.get_block_idx() // 0",
    "x = asc.nosuchthing",
    "x = undefined_name",
    "x = 10**40",
    "x = 2**63 + 1",
    "x = -2**63 - 1",
    "x = 1 << 70",
    "x = 3 % 0",
    "x = 1.0 // 0.0",
    "x: int = 1.5",
    "x = [1, 2, 3]",
    "x = (asc.float32, 1)",
    "x = asc.GlobalTensor()\nx.get_value(0)",
    "async def f(): pass",
    "def f(): pass",
    "class C: pass",
    "try:\n    pass\nexcept Exception:\n    pass",
    "x = 1 if asc.get_block_idx() else 'a'",
]


@dataclass(frozen=True)
class Edit:
    kind: str
    a: int = 0
    b: int = 0
    c: int = 0


EDIT_KINDS = ["delete_token", "dup_token", "swap_tokens", "insert_token", "number", "number",
              "number", "dtype", "dtype", "drop_flag", "drop_flag", "event_id", "event_id",
              "shrink", "shrink", "delete_stmt", "delete_stmt", "dup_stmt", "swap_stmts",
              "insert_stmt", "insert_stmt", "enum", "identifier", "identifier"]


def editable_lines(source: str) -> set[int]:
    """1-based lines edits may touch: kernel bodies and module-level NAME = constant lines."""
    tree = ast.parse(source)
    lines: set[int] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.decorator_list:
            lines.update(range(node.body[0].lineno, node.end_lineno + 1))
        elif isinstance(node, ast.Assign) and isinstance(node.value, (ast.Constant, ast.Tuple)):
            lines.update(range(node.lineno, node.end_lineno + 1))
    return lines


def _tokens(source: str, lines: set[int]) -> list:
    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type in (tokenize.NAME, tokenize.NUMBER, tokenize.OP, tokenize.STRING) \
                    and tok.start[0] in lines:
                out.append(tok)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return out


def _offsets(source: str) -> list[int]:
    starts, pos = [0], 0
    for line in source.splitlines(keepends=True):
        pos += len(line)
        starts.append(pos)
    return starts


def _span(starts, tok) -> tuple[int, int]:
    return starts[tok.start[0] - 1] + tok.start[1], starts[tok.end[0] - 1] + tok.end[1]


def _statements(source: str, lines: set[int]) -> list[ast.stmt]:
    """Simple statements on editable lines (in kernel bodies)."""
    tree = ast.parse(source)
    out = []
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            for s in block if isinstance(block, list) else []:
                if isinstance(s, ast.stmt) and not isinstance(s, (ast.FunctionDef, ast.ClassDef)) \
                        and s.lineno in lines and not isinstance(node, ast.Module):
                    out.append(s)
    out.sort(key=lambda s: (s.lineno, s.col_offset))
    return out


def _stmt_span(starts, s: ast.stmt) -> tuple[int, int]:
    return starts[s.lineno - 1], starts[s.end_lineno]   # whole lines


def _pick(seq, i: int):
    return seq[i % len(seq)] if seq else None


def apply_edit(source: str, e: Edit) -> str:
    """One edit (arguments are taken modulo the number of candidates); the source unchanged if
    the edit has no candidate or the source is not valid Python any more."""
    try:
        lines = editable_lines(source)
    except SyntaxError:
        return source
    starts = _offsets(source)
    toks = _tokens(source, lines)
    k = e.kind

    def splice(a: int, b: int, text: str) -> str:
        return source[:a] + text + source[b:]

    if k in ("delete_token", "dup_token", "insert_token") and toks:
        t = _pick(toks, e.a)
        a, b = _span(starts, t)
        if k == "delete_token":
            return splice(a, b, "")
        if k == "dup_token":
            return splice(b, b, " " + t.string)
        return splice(a, a, _pick(INSERT_TOKENS, e.b) + " ")
    if k == "swap_tokens" and len(toks) > 1:
        i = e.a % len(toks)
        j = (i + 1 + e.b % 3) % len(toks) if e.c % 2 else e.b % len(toks)
        i, j = sorted((i, j))
        if i == j:
            return source
        (a1, b1), (a2, b2) = _span(starts, toks[i]), _span(starts, toks[j])
        return source[:a1] + toks[j].string + source[b1:a2] + toks[i].string + source[b2:]
    if k == "number":
        nums = [t for t in toks if t.type == tokenize.NUMBER]
        t = _pick(nums, e.a)
        if t is None:
            return source
        a, b = _span(starts, t)
        return splice(a, b, "(" + _pick(NUMBERS, e.b) + ")")
    if k == "dtype":
        cands = [t for t in toks if t.type == tokenize.NAME and
                 (t.string in DTYPE_NAMES or t.string == "dtype")]
        t = _pick(cands, e.a)
        if t is None:
            return source
        a, b = _span(starts, t)
        new = _pick(DTYPE_NAMES, e.b)
        if t.string == "dtype":       # x.dtype -> x.dtype of another tensor or a literal dtype
            return splice(a, b, "dtype" if e.c % 2 else new)
        return splice(a, b, new)
    if k == "enum":
        cands = [i for i, t in enumerate(toks[:-2]) if t.string in
                 ("HardEvent", "TPosition", "PipeID") and toks[i + 1].string == "."]
        i = _pick(cands, e.a)
        if i is None:
            return source
        enum_cls = {"HardEvent": asc.HardEvent, "TPosition": asc.TPosition,
                    "PipeID": asc.PipeID}[toks[i].string]
        members = [m.name for m in enum_cls] + ["NOPE"]
        a, b = _span(starts, toks[i + 2])
        return splice(a, b, _pick(members, e.b))
    if k == "identifier":
        names = [t for t in toks if t.type == tokenize.NAME and t.string not in
                 ("asc", "def", "for", "in", "if", "else", "elif", "while", "return", "and",
                  "or", "not", "pass", "True", "False", "None")]
        t = _pick(names, e.a)
        if t is None:
            return source
        pool = sorted({x.string for x in names})
        a, b = _span(starts, t)
        return splice(a, b, _pick(pool, e.b))
    stmts = _statements(source, lines)
    if k in ("drop_flag", "event_id"):
        flagged = [s for s in stmts if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
                   and re.search(r"\b(set_flag|wait_flag)\b", ast.unparse(s.value.func))]
        s = _pick(flagged, e.a)
        if s is None:
            return source
        a, b = _stmt_span(starts, s)
        indent = " " * s.col_offset
        if k == "drop_flag":
            return splice(a, b, indent + "pass\n")
        call = s.value
        if len(call.args) < 2:
            return source
        ids = ["-1", "0", "1", "2", "3", "4", "5", "6", "7", "8", "100", "2**40", "t",
               "asc.get_block_idx()", "1.5"]
        new = ast.Call(call.func, [call.args[0], ast.Name(_pick(ids, e.b))], call.keywords)
        return splice(a, b, indent + ast.unparse(new) + "\n")
    if k == "shrink":
        sized = []
        for s in stmts:
            for node in ast.walk(s):
                if isinstance(node, ast.Call) and node.args:
                    f = ast.unparse(node.func)
                    if f.endswith(("init_buffer", "LocalTensor", ".get", "set_global_buffer",
                                   "data_copy")):
                        sized.append((s, node))
        got = _pick(sized, e.a)
        if got is None:
            return source
        s, call = got
        last = call.args[-1]
        expr = ast.unparse(last)
        new_arg = _pick([f"({expr}) // 2", f"({expr}) - 32", "32", "0", "1", f"({expr}) - 1",
                         f"({expr}) * 1000"], e.b)
        text = source[starts[last.lineno - 1] + last.col_offset:
                      starts[last.end_lineno - 1] + last.end_col_offset]
        a = starts[last.lineno - 1] + last.col_offset
        return splice(a, a + len(text), new_arg)
    if k == "delete_stmt":
        s = _pick(stmts, e.a)
        if s is None:
            return source
        a, b = _stmt_span(starts, s)
        return splice(a, b, " " * s.col_offset + "pass\n")
    if k == "dup_stmt":
        s = _pick(stmts, e.a)
        if s is None:
            return source
        a, b = _stmt_span(starts, s)
        return splice(b, b, source[a:b])
    if k == "swap_stmts" and len(stmts) > 1:
        s1, s2 = _pick(stmts, e.a), _pick(stmts, e.b)
        (a1, b1), (a2, b2) = sorted([_stmt_span(starts, s1), _stmt_span(starts, s2)])
        if a2 < b1 or s1.col_offset != s2.col_offset:
            return source
        return source[:a1] + source[a2:b2] + source[b1:a2] + source[a1:b1] + source[b2:]
    if k == "insert_stmt":
        s = _pick(stmts, e.a)
        if s is None:
            return source
        a, _ = _stmt_span(starts, s)
        indent = " " * s.col_offset
        text = "".join(indent + line + "\n" for line in _pick(STATEMENTS, e.b).split("\n"))
        # an inserted multi-line block keeps its own relative indentation
        return splice(a, a, text)
    return source


def apply_edits(source: str, edits) -> str:
    for e in edits:
        new = apply_edit(source, e)
        if python_valid(new):
            source = new
    return source


EDITS = st.builds(Edit, st.sampled_from(EDIT_KINDS), st.integers(0, 10**6),
                  st.integers(0, 10**6), st.integers(0, 10**6))


@st.composite
def malformed_cases(draw, generated_weight: int = 1):
    """A sample kernel or a generated one, with 1-3 edits."""
    bases = sample_bases()
    if draw(st.integers(0, len(bases) + generated_weight - 1)) < len(bases):
        name, src, recipe = draw(st.sampled_from(bases))
    else:
        spec = draw(kernel_specs(max_ops=3))
        name, src, recipe = "generated", render(spec), recipe_for(spec)
    edits = tuple(draw(st.lists(EDITS, min_size=1, max_size=3)))
    return Case(apply_edits(src, edits), recipe, name, edits)


