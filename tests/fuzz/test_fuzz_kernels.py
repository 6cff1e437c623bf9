"""Fuzzing with random well-formed kernels, checked against a NumPy model (kernel_gen.py).

Each example is one generated kernel (a real module file), launched with one or two block counts
on random inputs; every element of the output and scratch tensors must match the model (exactly,
or within the bound the documented ulp tolerances of exp/ln/sqrt/div/reciprocal/rsqrt propagate
to), and the launch must raise nothing and warn nothing. ``make test`` runs a bounded number of
examples (the default profile); ``make fuzz`` (profile ``long``) runs 10,000.

A failure prints the kernel's source and its ``KernelSpec``; paste the spec into an
``@example(spec=...)`` below (with ``.xfail(reason="BUG: ...")`` until the owner fixes it).
"""
from __future__ import annotations

import warnings

import pytest
from hypothesis import HealthCheck, event, example, given, settings

import ascendc_py as asc

from . import fuzz_runner as runner
from . import kernel_gen as kg
from .kernel_gen import KernelSpec, Masked, Op, Operand, Scalar

PROFILE = settings.get_current_profile_name()


def examples(bounded: int) -> int:
    """``bounded`` under the default profile (make test); the profile's count otherwise."""
    return bounded if PROFILE == "default" else settings().max_examples


FUZZ_SETTINGS = dict(deadline=None, suppress_health_check=list(HealthCheck), print_blob=True)
SANITIZE = hasattr(asc, "set_sanitizer")  # sanitize mode, once it exists: no false positives


@pytest.fixture(scope="module", autouse=True)
def _runtime_library():
    """Build/load the runtime library once, outside the per-case time limit."""
    from ascendc_py.compiler.codegen.runtime_lib import ensure_loaded
    ensure_loaded()


def describe(spec: KernelSpec, source: str, blocks: int) -> str:
    return (f"\n--- kernel source (launched with {blocks} block(s)) ---\n{source}"
            f"--- spec (for @example(spec=...)) ---\n{spec!r}\n")


def run_and_check(spec: KernelSpec) -> None:
    source = kg.render(spec)
    with runner.breadcrumb(f"{spec!r}\n{source}"):
        _run_and_check(spec, source)


def _run_and_check(spec: KernelSpec, source: str) -> None:
    kern = runner.load_kernel(source, fresh=True)   # compiled anew when hypothesis replays it
    for blocks in spec.blocks:
        args, z = kg.make_launch(spec, blocks)
        sanitize = SANITIZE and spec.seed % 4 == 0
        caught: list = []

        def launch():
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                try:
                    kw = {"sanitize": True} if sanitize else {}
                    return kern[blocks](*args, **kw)
                finally:
                    caught.extend(w)

        try:
            runner.call_with_timeout(launch)
        except Exception as exc:  # noqa: BLE001 - a well-formed kernel must not raise
            pytest.fail(f"{type(exc).__name__}: {exc}{describe(spec, source, blocks)}")
        ours = [w for w in caught if issubclass(w.category, (asc.KernelWarning,))
                or "ascendc_py" in str(w.filename) or "fz_" in str(w.filename)]
        if ours:
            pytest.fail("a well-formed kernel warned: " + "; ".join(
                f"{w.category.__name__}: {w.message}" for w in ours)
                + describe(spec, source, blocks))
        exp, err = kg.model(spec, args, blocks)
        msg = kg.check(spec, z, exp, err)
        if msg:
            pytest.fail(msg + describe(spec, source, blocks))


# Fixed bugs keep their minimal repro as an example. BUG-4: float16 axpy rounded src * scalar to
# float16 before adding dst (two roundings); it now computes in float32 and rounds once, as
# REGISTRY['axpy'].reference does (254.8 for dst = -2.625, src = -98.06, scalar = -2.625).
BUG4_SPEC = KernelSpec(
    dtype="float16", n_in=1, n_tmp=0, units=1, tiles=1, style="static",
    ops=(Op("axpy", Operand(1, 0), (Operand(0, 0),), 0, 16),),
    scalars=(Scalar(-2.625, literal=True),), init=(0,), inputs=("wide",), seed=0, strict=True)


@pytest.mark.fuzz
@settings(max_examples=examples(30), **FUZZ_SETTINGS)
@given(spec=kg.kernel_specs())
@example(spec=BUG4_SPEC)
def test_generated_kernel_matches_numpy(spec):
    event(f"{spec.style}/{spec.dtype}")
    run_and_check(spec)


def test_model_of_a_hand_written_spec():
    """The renderer and the model agree on a fixed kernel using every feature once."""
    spec = KernelSpec(
        dtype="float16", n_in=2, n_tmp=1, units=16, tiles=2, style="static",
        ops=(Op("add", Operand(2, 0), (Operand(0, 0), Operand(1, 0)), None, 200),
             Op("muls", Operand(3, 0), (Operand(0, 0),), 0, None,
                Masked((0xF0F0F0F0F0F0F0F0, 1), 2, (1, 1, 1), (8, 8, 8))),
             Op("exp", Operand(2, 8), (Operand(1, 0),), None, None,
                Masked(100, 1, (1, 2, 1), (8, 8, 8), True)),
             Op("duplicate", Operand(3, 0), (), 1, None, Masked(3, 2, (2, 1, 1), (1, 8, 8)))),
        scalars=(Scalar(1.5), Scalar(-0.25, literal=True)), init=(0, 1),
        inputs=("sym", "sym"), blocks=(2,), seed=7, preset=True, pingpong=True,
        events=(2, 6, 4), gaps=(0, 1, 0, 3))
    run_and_check(spec)
    args, _ = kg.make_launch(spec, 2)
    exp, err = kg.model(spec, args, 2)
    assert (err[:spec.per_block * 2] == 0).sum() > 0   # the exact part is checked exactly
