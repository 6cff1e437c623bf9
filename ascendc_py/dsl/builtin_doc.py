"""Signatures and docstrings of the kernel builtins, generated from the op registry.

``inspect.signature(asc.add)`` is the op's first (count) form, ``help(asc.add)`` and a
notebook's Shift-Tab show every form, the dtypes the op accepts, its pipe and an example call.
Builtins that are not registry ops (parameter records such as ``DataCopyParams``, system
functions) take their signature from the ``name(...)`` their one-line description starts with,
when it is valid Python.
"""
from __future__ import annotations

import ast
import inspect
from typing import Optional

#: defaults the compiler applies when a parameter is left out (compiler/sema/builtins.py)
_DEFAULTS = {"is_set_mask": True}

#: example arguments by parameter name (for the generated example call)
_EXAMPLE = {"dst": "z", "src0": "x", "src1": "y", "src": "x", "scalar": "2.0", "count": "256",
            "round_mode": "asc.RoundMode.CAST_NONE", "cmp_mode": "asc.CmpMode.LT",
            "event": "asc.HardEvent.MTE2_V", "event_id": "0", "pipe": "asc.PipeID.PIPE_V",
            "shared_tmp_buffer": "tmp", "mask": "64", "repeat_times": "4",
            "repeat_params": "asc.BinaryRepeatParams()", "value": "0.0"}

_PIPES = {"PIPE_V": "V (vector unit)", "PIPE_M": "M (cube unit)", "PIPE_S": "S (scalar unit)",
          "PIPE_MTE1": "MTE1 (L1 -> L0 copies)", "PIPE_MTE2": "MTE2 (copies into the core)",
          "PIPE_MTE3": "MTE3 (copies out of the core)", "PIPE_FIX": "FIX (L0C -> GM/L1)"}


def _parameters(form) -> list[inspect.Parameter]:
    out = []
    for p in form:
        if p.startswith("**"):
            out.append(inspect.Parameter(p[2:], inspect.Parameter.VAR_KEYWORD))
        elif p.startswith("*"):
            out.append(inspect.Parameter(p[1:], inspect.Parameter.VAR_POSITIONAL))
        else:
            kind = inspect.Parameter.KEYWORD_ONLY if out and out[-1].kind in (
                inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.KEYWORD_ONLY) \
                else inspect.Parameter.POSITIONAL_OR_KEYWORD
            out.append(inspect.Parameter(p, kind,
                                         default=_DEFAULTS.get(p, inspect.Parameter.empty)))
    return out


def _sig_text(name: str, form) -> str:
    try:
        return f"asc.{name}{inspect.Signature(_parameters(form))}"
    except ValueError:
        return f"asc.{name}({', '.join(form)})"


def registry_signature(spec) -> Optional[inspect.Signature]:
    """The signature of a registry op: its first form (the count form of a vector op)."""
    if not spec.forms:
        return inspect.Signature([])
    try:
        return inspect.Signature(_parameters(spec.forms[0]))
    except ValueError:      # not a Python signature (a name that is no identifier, ...)
        return None


def registry_doc(name: str, spec) -> str:
    """``help(asc.<op>)``: what it computes, its forms, dtypes, pipe and an example."""
    lines = [f"asc.{name}: {spec.doc}" if spec.doc else f"asc.{name}", ""]
    if spec.forms:
        lines.append("Forms:")
        lines += [f"    {_sig_text(name, form)}" for form in spec.forms]
    if spec.dtypes:
        lines.append("dtypes: " + ", ".join(d.name for d in spec.dtypes))
    if spec.mixed:
        lines.append("mixed dtypes (dst, src): " + ", ".join(
            f"({a.name}, {b.name})" for a, b in spec.mixed))
    if spec.pipe is not None:
        pipe = getattr(spec.pipe, "name", str(spec.pipe))
        lines.append(f"pipe: {_PIPES.get(pipe, pipe)}")
    if spec.forms:
        args = ", ".join(_EXAMPLE.get(p, p) for p in spec.forms[0] if p not in _DEFAULTS)
        lines += ["", "Example (inside an @asc.kernel function; x, y, z are LocalTensors):",
                  f"    asc.{name}({args})"]
    lines += ["", "A kernel builtin: only callable inside an @asc.kernel function."]
    return "\n".join(lines)


def parsed_signature(name: str, doc: str) -> Optional[inspect.Signature]:
    """The signature a description starts with (``Name(a=1, b=0): ...``), or None."""
    if not doc.startswith(name + "("):
        return None
    depth = 0
    for end, ch in enumerate(doc):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and ch == ")":
            break
    else:
        return None
    try:
        tree = ast.parse(f"def _{doc[len(name):end + 1]}: pass")
    except SyntaxError:
        return None
    fn = tree.body[0]
    if not isinstance(fn, ast.FunctionDef):
        return None
    a = fn.args
    params = [inspect.Parameter(p.arg, inspect.Parameter.POSITIONAL_OR_KEYWORD)
              for p in a.posonlyargs + a.args]
    try:
        defaults = [ast.literal_eval(d) for d in a.defaults]
    except ValueError:
        defaults = [ast.unparse(d) for d in a.defaults]
    for i, d in enumerate(defaults, len(params) - len(defaults)):
        params[i] = params[i].replace(default=d)
    if a.vararg:
        params.append(inspect.Parameter(a.vararg.arg, inspect.Parameter.VAR_POSITIONAL))
    try:
        return inspect.Signature(params)
    except ValueError:
        return None


#: builtins without parameters that are not registry ops
_NO_ARGS = {"get_block_idx", "get_block_num", "get_sub_block_idx", "get_sub_block_num",
            "get_task_ratio", "ascend_is_aic", "ascend_is_aiv", "get_system_cycle"}


def describe(name: str, doc: str) -> tuple[Optional[inspect.Signature], str]:
    """(signature or None, docstring) of the builtin ``name`` with description ``doc``."""
    from ..compiler.ops import REGISTRY
    spec = REGISTRY.get(name)
    if spec is not None and spec.forms:
        return registry_signature(spec), registry_doc(name, spec)
    text = (f"asc.{name}: {doc}" if doc else f"asc.{name}") + \
        "\n\nA kernel builtin: only callable inside an @asc.kernel function."
    if name in _NO_ARGS:
        return inspect.Signature([]), text
    return parsed_signature(name, doc or ""), text
