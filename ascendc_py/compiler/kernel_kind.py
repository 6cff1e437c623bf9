"""Which sub-cores a kernel runs on: its ``KernelType``, explicit or inferred from the IR.

Explicit: ``@asc.kernel(kernel_type=asc.KernelType.X)`` (pyasc: ``@asc.jit(kernel_type=...)``).
Inferred (after ``ir.verify``), following pyasc's rule (kernels that use the matmul API are
``MIX_AIC_1_2`` unless ``matmul_cube_only=True``, which makes them ``AIC_ONLY``):

- the kernel calls a matmul op (a registry op named ``matmul_*``): ``MIX_AIC_1_2``, or
  ``AIC_ONLY`` with ``matmul_cube_only=True``;
- it uses cube resources (a local tensor or buffer in L1, L0A, L0B, L0C, BT or FB, or an
  instruction of pipe M, MTE1 or FIX) and vector resources (UB tensors or buffers, or pipe V
  instructions): ``MIX_AIC_1_2``;
- cube resources only: ``AIC_ONLY``;
- otherwise ``AIV_ONLY`` (also for a kernel that uses neither, e.g. scalar GM code).

A kernel that decides its roles at run time with ``asc.ascend_is_aic()`` but whose AIC side
needs no cube resource (scalar or GM-only code) must name its type explicitly.
"""
from __future__ import annotations

from typing import Any, Mapping

from ..dsl.kernel_types import (AIC_MEMORIES, AIV_MEMORIES, KernelType,
                                options_key, parse_kernel_type)  # noqa: F401  (options_key: re-export)
from ..dsl.types import PipeID
from . import ir
from .errors import KernelValueError

CUBE_MEMORIES = AIC_MEMORIES
VECTOR_MEMORIES = AIV_MEMORIES
CUBE_PIPES = frozenset({PipeID.PIPE_M, PipeID.PIPE_MTE1, PipeID.PIPE_FIX})
VECTOR_PIPES = frozenset({PipeID.PIPE_V})
MATMUL_PREFIX = "matmul_"


def resources(fn: ir.Function) -> tuple[bool, bool, bool]:
    """(uses cube resources, uses vector resources, calls a matmul op) of a verified kernel."""
    from .ops import REGISTRY
    cube = vector = matmul = False

    def memory(mem) -> None:
        nonlocal cube, vector
        if mem in CUBE_MEMORIES:
            cube = True
        elif mem in VECTOR_MEMORIES:
            vector = True

    def operand(a) -> None:
        if isinstance(a, ir.LocalRef):
            memory(a.memory)
        elif isinstance(a, tuple):
            for x in a:
                operand(x)

    def walk(stmts) -> None:
        nonlocal cube, vector, matmul
        for s in stmts:
            if isinstance(s, ir.Intrinsic):
                spec = REGISTRY.get(s.op)
                if s.op.startswith(MATMUL_PREFIX):
                    matmul = cube = True
                if spec is not None and spec.pipe in CUBE_PIPES:
                    cube = True
                if spec is not None and spec.pipe in VECTOR_PIPES:
                    vector = True
                for a in s.args:
                    operand(a)
                mem = s.attr("memory")
                if mem is not None:
                    memory(mem)
            for child in ("then", "orelse", "body", "pre"):
                sub = getattr(s, child, None)
                if sub:
                    walk(sub)

    walk(fn.body)
    return cube, vector, matmul


#: The options ``@asc.kernel(...)`` / ``@asc.jit(...)`` accept: pyasc's (its codegen, compile
#: and launch option names). ``kernel_type``, ``matmul_cube_only``, ``insert_sync`` and
#: ``auto_sync`` (automatic synchronisation, ``compiler/insert_sync.py``) change what is
#: compiled here; the others (``opt_level``, ``debug``, …) steer pyasc's own pipeline
#: (bisheng, MLIR passes) and are accepted without effect.
KNOWN_OPTIONS = frozenset((
    "capture_exceptions", "ir_multithreading",                                   # codegen
    "debug", "strip_loc", "verify_sync", "print_ir_before_all", "run_passes", "kernel_type",
    "opt_level", "auto_sync", "auto_sync_log", "bisheng_options", "always_compile",
    "matmul_cube_only", "insert_sync",                                           # compile
    "core_num", "stream"))                                                       # launch


def check_options(options: Mapping[str, Any], loc) -> None:
    """Validate the options of ``@asc.kernel(...)`` (a KernelValueError at the kernel's
    ``def`` line: ``loc``, a SourceLoc or a function returning one): every name must be one of
    :data:`KNOWN_OPTIONS` (as pyasc refuses unknown option names), and ``kernel_type`` valid."""
    unknown = sorted(set(options) - KNOWN_OPTIONS)
    if unknown:
        import difflib
        close = difflib.get_close_matches(unknown[0], KNOWN_OPTIONS, n=1)
        raise KernelValueError(
            f"unknown option{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} "
            f"for @asc.kernel / @asc.jit", loc() if callable(loc) else loc,
            hint=(f"did you mean '{close[0]}'? " if close else "") +
                 f"the options are: {', '.join(sorted(KNOWN_OPTIONS))}")
    try:
        parse_kernel_type(options.get("kernel_type"))
    except ValueError as exc:
        raise KernelValueError(str(exc), loc() if callable(loc) else loc) from None


def kernel_type(fn: ir.Function, options: Mapping[str, Any]) -> str:
    """The KernelType member name of a compiled kernel (explicit option, else inferred)."""
    explicit = parse_kernel_type(options.get("kernel_type"))
    if explicit is not None:
        return explicit.name
    cube, vector, matmul = resources(fn)
    cube_only = bool(options.get("matmul_cube_only", False))
    if matmul:
        return (KernelType.AIC_ONLY if cube_only else KernelType.MIX_AIC_1_2).name
    if cube and vector:
        return KernelType.MIX_AIC_1_2.name
    if cube:
        return KernelType.AIC_ONLY.name
    return KernelType.AIV_ONLY.name


__all__ = ["kernel_type", "resources", "check_options", "options_key", "CUBE_MEMORIES",
           "KNOWN_OPTIONS"]
