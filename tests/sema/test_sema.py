"""Semantic analysis: the kernel IR it emits (types, folding, inlining, unrolling, locations)
and behaviour that depends on it, checked by running the kernels."""
from __future__ import annotations

import numpy as np
import pytest

import ascendc_py as asc
from ascendc_py.compiler import ir
from ascendc_py.compiler.sema.analyzer import analyze
from ascendc_py.dsl.types import bool_, float16, float32, int32, int64

SCALE = 3
UNUSED = 99
PAIRS = ((1, 2), (3, 4), (5, 6))


def sema(kernel, *args):
    """Specialise ``kernel`` for ``args`` and return the verified SemaResult."""
    specs, _, _ = kernel.bind(args, {})
    result = analyze(kernel, specs)
    ir.verify(result.function)
    return result


def walk(stmts):
    """Every statement, depth first."""
    for s in stmts:
        yield s
        for child in ("then", "orelse", "body", "pre"):
            yield from walk(getattr(s, child, ()) or ())


def exprs(e):
    """Every sub-expression of an IR expression."""
    yield e
    for child in ("a", "b", "cond"):
        sub = getattr(e, child, None)
        if sub is not None and not isinstance(sub, str):
            yield from exprs(sub)


def of_type(result, cls):
    return [s for s in walk(result.function.body) if isinstance(s, cls)]


# ----------------------------------------------------------------------------- tuple assignment
@asc.kernel
def swap_kernel(out: asc.GlobalAddress, a: int, b: int):
    og = asc.GlobalTensor()
    og.set_global_buffer(out, 8)
    for i in range(3):
        a, b = b, a
    og.set_value(0, a)
    og.set_value(1, b)
    c = a
    d = b
    c, d = d, c
    og.set_value(2, c)
    og.set_value(3, d)
    x, (y, z) = d, (c + 1, d + 1)
    og.set_value(4, x * 100 + y * 10 + z)


def test_tuple_assignment_evaluates_the_right_side_first():
    out = np.zeros(8, np.int32)
    swap_kernel[1](out, 1, 2)
    # three swaps: a=2, b=1; c, d = 2, 1 swapped → 1, 2; x=2, y=2, z=3
    assert out[:5].tolist() == [2, 1, 1, 2, 223]


@asc.kernel
def len_kernel(out: asc.GlobalAddress):
    og = asc.GlobalTensor()
    og.set_global_buffer(out, 8)
    og.set_value(0, len(PAIRS))
    for i in asc.static_range(len(PAIRS)):
        og.set_value(i + 1, PAIRS[i][0] * 10 + PAIRS[i][1])


def test_len_and_indexing_of_a_module_tuple():
    out = np.zeros(8, np.int32)
    len_kernel[1](out)
    assert out[:4].tolist() == [3, 12, 34, 56]


# ----------------------------------------------------------------------------- types
@asc.kernel
def typed(out: asc.GlobalAddress, n: int, big: int, f: float, h: asc.GlobalAddress):
    og = asc.GlobalTensor()
    og.set_global_buffer(out, 8)
    a = n + 1          # int32
    b = n + f          # float32
    c = n / 2          # true division: float32
    d = big + n        # int64
    e = n < 3          # bool
    og.set_value(0, a)
    og.set_value(1, b)
    og.set_value(2, c)
    og.set_value(3, d)
    og.set_value(4, e)


def test_scalar_types_and_promotion():
    out = np.zeros(8, np.float32)
    h = np.zeros(16, np.float16)
    res = sema(typed, out, 5, 2**40, 1.5, h)
    fn = res.function
    assert fn.gm_args == (("out", float32), ("h", float16))
    assert fn.scalar_args == (("n", int32), ("big", int64), ("f", float32))
    values = {s.var.name: s.value.dtype for s in of_type(res, ir.Assign)
              if s.var.name in "abcde"}
    assert values == {"a": int32, "b": float32, "c": float32, "d": int64, "e": bool_}


# ----------------------------------------------------------------------------- folding
@asc.kernel
def folding(out: asc.GlobalAddress, n: int, FLAG: asc.ConstExpr[bool], K: asc.ConstExpr[int]):
    og = asc.GlobalTensor()
    og.set_global_buffer(out, 64)
    if FLAG:
        og.set_value(0, K * SCALE)
    else:
        og.set_value(0, -1)
    if n > 0:
        og.set_value(1, n)
    for i in asc.static_range(4):
        og.set_value(2 + i, i * K)
    for j in range(n):
        og.set_value(10, j)


def test_constexpr_branches_fold_and_static_range_unrolls():
    res = sema(folding, np.zeros(64, np.int32), 3, True, 7)
    ifs = of_type(res, ir.If)
    assert len(ifs) == 1                       # only the runtime `if n > 0`
    assert len(of_type(res, ir.ForRange)) == 1  # the static_range is unrolled
    sets = [s for s in of_type(res, ir.Intrinsic) if s.op == "set_value"]
    assert len(sets) == 1 + 1 + 4 + 1
    consts = [s.args[2] for s in sets if isinstance(s.args[2], ir.Const)]
    assert [c.value for c in consts] == [21, 0, 7, 14, 21]
    # module constants read are recorded (the cache key and the launch check use them)
    names = {name for (_, name) in res.globals_read}
    assert "SCALE" in names and "UNUSED" not in names


def test_false_constexpr_drops_the_branch():
    res = sema(folding, np.zeros(64, np.int32), 3, False, 7)
    sets = [s for s in of_type(res, ir.Intrinsic) if s.op == "set_value"]
    assert isinstance(sets[0].args[2], ir.Const) and sets[0].args[2].value == -1


# ----------------------------------------------------------------------------- inlining
@asc.kernel
def helper_add(t, i, v=1):
    t.set_value(i, t.get_value(i) + v)
    return v * 2


@asc.kernel
def caller(out: asc.GlobalAddress):
    og = asc.GlobalTensor()
    og.set_global_buffer(out, 8)
    r = helper_add(og, 0)
    r2 = helper_add(og, i=1, v=r + 3)
    og.set_value(2, r + r2)


def test_device_functions_are_inlined_as_blocks():
    res = sema(caller, np.zeros(8, np.int32))
    blocks = [s for s in of_type(res, ir.Block) if s.label.startswith("ret_helper_add")]
    assert len(blocks) == 2
    ops = [s.op for s in of_type(res, ir.Intrinsic)]
    assert ops.count("get_value") == 2 and ops.count("set_value") == 3
    out = np.array([10, 20, 0, 0, 0, 0, 0, 0], np.int32)
    caller[1](out)
    assert out[:3].tolist() == [11, 25, 2 + 10]


# ----------------------------------------------------------------------------- operands
@asc.kernel
def operands(x: asc.GlobalAddress, z: asc.GlobalAddress):
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)
    zg.set_global_buffer(z, 64)
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 2)
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(q, 2, 256)
    pipe.init_buffer(buf, 256)
    a = q.alloc_tensor(asc.float32)
    b = buf.get(asc.float32)
    asc.data_copy(a, xg, 64)
    asc.data_copy(b, a, 64)
    asc.exp(b, b, 64)
    asc.data_copy(zg, b, 64)
    q.free_tensor(a)


def test_intrinsic_operands_and_attributes():
    x = np.zeros(64, np.float32)
    res = sema(operands, x, x.copy())
    fn = res.function
    assert fn.num_queues == 2 and len(res.queue_names) == 2
    intr = of_type(res, ir.Intrinsic)
    copies = [s for s in intr if s.op == "data_copy"]
    assert [s.attr("direction") for s in copies] == ["gm_to_local", "local_to_local",
                                                      "local_to_gm"]
    assert all(s.attr("dtype") == float32 for s in copies)
    (exp,) = [s for s in intr if s.op == "exp"]
    assert isinstance(exp.args[0], ir.LocalRef) and isinstance(exp.args[1], ir.LocalRef)
    assert exp.attr("dtype") == float32
    assert isinstance(copies[0].args[1], ir.GlobalRef)
    inits = [s for s in intr if s.op == "init_buffer"]
    assert [s.attr("tbuf") for s in inits] == [False, True]
    assert inits[0].attr("depth") == 2


# ----------------------------------------------------------------------------- locations
def test_every_statement_points_at_its_kernel_line():
    res = sema(operands, np.zeros(64, np.float32), np.zeros(64, np.float32))
    lines, first = __import__("inspect").getsourcelines(operands.fn)
    last = first + len(lines) - 1
    for s in walk(res.function.body):
        assert s.loc.file == __file__
        assert first <= s.loc.line <= last, s
    (exp,) = [s for s in of_type(res, ir.Intrinsic) if s.op == "exp"]
    assert exp.loc.source_line().strip() == "asc.exp(b, b, 64)"
    assert exp.loc.col == lines[exp.loc.line - first].index("asc.exp") + 1


def test_sema_is_deterministic_per_specialisation():
    a = sema(folding, np.zeros(64, np.int32), 3, True, 7).function
    b = sema(folding, np.zeros(64, np.int32), 3, True, 7).function
    strip = lambda f: [type(s).__name__ for s in walk(f.body)]  # noqa: E731
    assert strip(a) == strip(b)


@asc.kernel
def untyped(out: asc.GlobalAddress, v):
    og = asc.GlobalTensor()
    og.set_global_buffer(out, 8)
    og.set_value(0, v)


@pytest.mark.parametrize("value,dtype", [(1, int32), (2**31 - 1, int32), (2**31, int64),
                                         (-(2**31), int32), (-(2**31) - 1, int64),
                                         (1.5, float32), (np.float64(2.5), float32),
                                         (True, bool_)])
def test_scalar_argument_dtypes(value, dtype):
    out = np.zeros(8, np.float64)
    specs, _, scalars = untyped.bind((out, value), {})
    assert specs[1].dtype == dtype and scalars[0] == (value, dtype)
    untyped[1](out, value)
    assert out[0] == float(np.asarray(value).astype(dtype.numpy))


def test_int_annotation_rejects_a_float():
    with pytest.raises(asc.KernelLaunchError, match="declared int"):
        typed.bind((np.zeros(8, np.float32), 1.5, 0, 0.0, np.zeros(8, np.float16)), {})


# ----------------------------------------------------------------------------- static_range loops
@asc.kernel
def loops_in_static(out: asc.GlobalAddress, n: int):
    og = asc.GlobalTensor()
    og.set_global_buffer(out, 8)
    acc = 0
    for i in asc.static_range(3):
        for j in range(n):
            if j == 2:
                break            # leaves the inner loop only
            acc += 1
    og.set_value(0, acc)
    acc2 = 0
    for i in asc.static_range(3):
        for j in range(n):
            if j % 2 == 0:
                continue         # next j, not the next static iteration
            acc2 += 1
    og.set_value(1, acc2)
    acc3 = 0
    for j in range(n):
        for i in asc.static_range(4):
            if i == 2:
                break            # leaves the unrolled loop only
            acc3 += 1
    og.set_value(2, acc3)


def loops_in_static_reference(n):
    return [3 * min(n, 2), 3 * (n // 2), 2 * n]


def test_break_continue_in_a_runtime_loop_inside_static_range_ir():
    res = sema(loops_in_static, np.zeros(8, np.int32), 10)
    jumps = [s for s in walk(res.function.body) if isinstance(s, (ir.Break, ir.Continue))]
    assert len(jumps) == 6  # 3 unrolled copies x (break, continue) stay loop jumps
    exits = [s for s in walk(res.function.body) if isinstance(s, ir.Exit)]
    assert all(e.label.startswith("static_break") for e in exits)


@pytest.mark.parametrize("n", [0, 1, 5, 10])
def test_break_continue_in_a_runtime_loop_inside_static_range_runs(n):
    out = np.zeros(8, np.int32)
    loops_in_static[1](out, n)
    assert out[:3].tolist() == loops_in_static_reference(n)


# ----------------------------------------------------------------------------- short circuit
@asc.kernel
def short_circuit(x: asc.GlobalAddress, out: asc.GlobalAddress, n: int, a: int, b: int):
    xg = asc.GlobalTensor()
    og = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    og.set_global_buffer(out, 8)
    j = 0
    while j < n and xg.get_value(j) != 0:       # never reads x[n]
        j += 1
    og.set_value(0, j)
    og.set_value(1, 1 if n < 8 or xg.get_value(7) == 5 else 2)
    og.set_value(2, 1 if b != 0 and a // b > 1 else 0)       # never divides by zero
    og.set_value(3, a // b if b != 0 else -1)                # only the chosen arm runs
    og.set_value(4, 1 if b == 0 or a % b == 0 else 0)
    og.set_value(5, 1 if 0 < b < a // b else 0)              # chained comparison too
    og.set_value(6, xg.get_value(n - 1) if n > 0 else -7)


def short_circuit_reference(x, n, a, b):
    j = 0
    while j < n and x[j] != 0:
        j += 1
    return [j, 1 if n < 8 or x[7] == 5 else 2, 1 if b != 0 and a // b > 1 else 0,
            a // b if b != 0 else -1, 1 if b == 0 or a % b == 0 else 0,
            1 if 0 < b < a // b else 0, int(x[n - 1]) if n > 0 else -7]


@pytest.mark.parametrize("data,a,b", [
    ([1] * 8, 7, 0), ([1] * 4, 7, 2), ([1, 1, 0, 1, 1, 1, 1, 5], -9, 3), ([], 9, 0),
    ([3, 0], 100, 7)])
def test_and_or_ternary_and_chains_short_circuit(data, a, b):
    x = np.array(data + [0] * (8 - len(data)), np.int32)[:max(len(data), 1)]
    n = len(data)
    out = np.zeros(8, np.int32)
    short_circuit[1](x, out, n, a, b)
    assert out[:7].tolist() == short_circuit_reference(list(x), n, a, b)


def test_pure_conditions_stay_branch_free():
    """Without side effects or faults, and/or/ternary remain plain expressions (no If)."""
    res = sema(typed, np.zeros(8, np.float32), 5, 2**40, 1.5, np.zeros(8, np.float16))
    assert not of_type(res, ir.If)
    res = sema(short_circuit, np.zeros(8, np.int32), np.zeros(8, np.int32), 8, 1, 2)
    assert len(of_type(res, ir.If)) >= 5
