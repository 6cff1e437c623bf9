"""The runtime library's argument binder: a planned launch's arguments in one native call.

``asc_bind_args(spec, job, args)`` is what ``simulator/fast_launch.py`` calls (through ctypes,
with the GIL held) for a launch whose argument types it has seen before: it checks the
argument tuple against the spec (``abi.BIND_*``) the way ``dsl/launcher.plan_key`` checks it in
Python, and writes what the launch binds into the job record: each array's data pointer and
size, each scalar's word, and the SIGINT counter's value. It reads the interpreter's objects
at offsets the spec gives (found and checked at run time, never assumed here) and calls the
C API only for an int's value, a float's and a constant's comparison.

An array is taken when it is exactly a ``numpy.ndarray`` of the spec's dtype object, writeable
and C-contiguous, with a nonzero size and a data pointer aligned to its itemsize; an int32
scalar when it is exactly an ``int`` in range; a float or bool when exactly of that type; a
constant when it has the type and equals the value of the specialisation. Anything else
returns 1 + the index of the argument (the caller takes the Python path, which binds it or
says why it cannot); so does a launch on a thread whose SIGINT handler is not ``asc_sigint``
(``abi.BIND_NO_HANDLER``: the Python path puts it back first).
"""
from __future__ import annotations

from llvmlite import ir as L

from ...simulator import abi
from . import runtime_lib
from .runtime_loader import BIND_ARGS
from .types import F64, I8, I32, I64, PTR

#: Py_EQ of PyObject_RichCompareBool
_PY_EQ = 2


def _i(value: int) -> L.Constant:
    return L.Constant(I64, value)


@runtime_lib.library_definer
def define(module: L.Module) -> list[str]:
    """``asc_bind_args`` (see the module docstring)."""
    fn = L.Function(module, L.FunctionType(I64, [PTR, PTR, PTR]), name=BIND_ARGS)
    spec_p, job_p, args = fn.args
    entry, count_ok, bind, head, body, next_, refuse, done = (
        fn.append_basic_block(n) for n in ("entry", "count_ok", "bind", "head", "body", "next",
                                           "refuse", "done"))
    b = L.IRBuilder(entry)
    rc = b.alloca(I64)
    overflow = b.alloca(I32)
    b.store(_i(0), rc)

    def word(base, index):
        return b.gep(base, [index if isinstance(index, L.Value) else _i(index)],
                     source_etype=I64)

    def spec(index) -> L.Value:
        return b.load(word(spec_p, index), typ=I64)

    def field(obj, offset, typ=I64) -> L.Value:
        return b.load(b.gep(obj, [offset], source_etype=I8), typ=typ)

    def fail(code) -> None:
        b.store(code, rc)
        b.branch(done)

    n = spec(abi.BIND_COUNT)
    with b.if_then(b.icmp_signed("!=", field(args, spec(abi.BIND_TUPLE_SIZE)), n)):
        fail(_i(abi.BIND_WRONG_COUNT))
    b.branch(count_ok)

    b.position_at_end(count_ok)
    installed = spec(abi.BIND_SIGINT)
    with b.if_then(b.icmp_signed("!=", installed, _i(0))):
        check = b.inttoptr(installed, L.FunctionType(I64, []).as_pointer())
        with b.if_then(b.icmp_signed("==", b.call(check, []), _i(0))):
            fail(_i(abi.BIND_NO_HANDLER))
    fired = spec(abi.BIND_FIRED)
    with b.if_then(b.icmp_signed("!=", fired, _i(0))):
        b.store(b.load(b.inttoptr(fired, PTR), typ=I64), word(job_p, abi.JOB_FIRED_AT))
    b.branch(bind)

    b.position_at_end(bind)
    items = spec(abi.BIND_TUPLE_ITEMS)
    type_at = spec(abi.BIND_OB_TYPE)
    b.branch(head)

    b.position_at_end(head)
    i = b.phi(I64)
    i.add_incoming(_i(0), bind)
    b.cbranch(b.icmp_signed("<", i, n), body, done)

    b.position_at_end(body)
    obj = b.load(b.gep(args, [b.add(items, b.mul(i, _i(8)))], source_etype=I8), typ=PTR)
    typ = field(obj, type_at)
    e = b.add(_i(abi.BIND_ENTRIES), b.mul(i, _i(abi.BIND_ENTRY)))

    def entry_word(k: int) -> L.Value:
        return spec(b.add(e, _i(k)))

    def store_job(slot_word: int, value) -> None:
        b.store(value, word(job_p, entry_word(slot_word)))

    kinds = {kind: fn.append_basic_block(f"kind{kind}") for kind in (
        abi.BIND_ARRAY, abi.BIND_INT32, abi.BIND_FLOAT64, abi.BIND_BOOL_, abi.BIND_CONST)}
    switch = b.switch(entry_word(0), refuse)
    for kind, block in kinds.items():
        switch.add_case(_i(kind), block)

    def accept_if(ok, then) -> None:
        """Continue with ``then()`` (which stores) when ``ok``, else refuse the argument."""
        yes = fn.append_basic_block("take")
        b.cbranch(ok, yes, refuse)
        b.position_at_end(yes)
        then()
        b.branch(next_)

    # an array: exactly an ndarray, of the dtype object, flags, nonzero size, aligned data
    b.position_at_end(kinds[abi.BIND_ARRAY])
    is_array = fn.append_basic_block("is_array")
    b.cbranch(b.icmp_unsigned("==", typ, spec(abi.BIND_NDARRAY)), is_array, refuse)
    b.position_at_end(is_array)
    itemsize = entry_word(2)
    need = spec(abi.BIND_FLAGS_NEEDED)
    flags = b.sext(field(obj, spec(abi.BIND_FLAGS), I32), I64)
    ndim = b.sext(field(obj, spec(abi.BIND_NDIM), I32), I64)
    shape = field(obj, spec(abi.BIND_SHAPE), PTR)
    data = field(obj, spec(abi.BIND_DATA))
    dims_head, dims_body, dims_done = (fn.append_basic_block(n) for n in (
        "dims_head", "dims_body", "dims_done"))
    before = b.block
    b.branch(dims_head)
    b.position_at_end(dims_head)
    d = b.phi(I64)
    elements = b.phi(I64)
    d.add_incoming(_i(0), before)
    elements.add_incoming(_i(1), before)
    b.cbranch(b.icmp_signed("<", d, ndim), dims_body, dims_done)
    b.position_at_end(dims_body)
    extent = b.load(b.gep(shape, [d], source_etype=I64), typ=I64)
    d.add_incoming(b.add(d, _i(1)), dims_body)
    elements.add_incoming(b.mul(elements, extent), dims_body)
    b.branch(dims_head)
    b.position_at_end(dims_done)
    nbytes = b.mul(elements, itemsize)
    ok = b.and_(b.icmp_unsigned("==", b.and_(flags, need), need),
                b.icmp_unsigned("==", field(obj, spec(abi.BIND_DESCR)), entry_word(1)))
    ok = b.and_(ok, b.icmp_signed(">", nbytes, _i(0)))
    ok = b.and_(ok, b.icmp_signed(">", itemsize, _i(0)))
    safe_itemsize = b.select(b.icmp_signed(">", itemsize, _i(0)), itemsize, _i(1))
    ok = b.and_(ok, b.icmp_unsigned("==", b.urem(data, safe_itemsize), _i(0)))
    accept_if(ok, lambda: (store_job(3, data), store_job(4, nbytes)))

    # an int32 scalar: exactly an int, in range
    b.position_at_end(kinds[abi.BIND_INT32])
    is_int = fn.append_basic_block("is_int")
    b.cbranch(b.icmp_unsigned("==", typ, spec(abi.BIND_INT)), is_int, refuse)
    b.position_at_end(is_int)
    as_long = b.inttoptr(spec(abi.BIND_AS_LONG), L.FunctionType(I64, [PTR, PTR]).as_pointer())
    b.store(L.Constant(I32, 0), overflow)
    value = b.call(as_long, [obj, overflow])
    ok = b.and_(b.icmp_signed("==", b.load(overflow, typ=I32), L.Constant(I32, 0)),
                b.icmp_signed(">=", value, _i(-2 ** 31)))
    ok = b.and_(ok, b.icmp_signed("<=", value, _i(2 ** 31 - 1)))
    accept_if(ok, lambda: store_job(3, value))

    # a float scalar: exactly a float (its float64 bits)
    b.position_at_end(kinds[abi.BIND_FLOAT64])
    is_float = fn.append_basic_block("is_float")
    b.cbranch(b.icmp_unsigned("==", typ, spec(abi.BIND_FLOAT)), is_float, refuse)
    b.position_at_end(is_float)
    as_double = b.inttoptr(spec(abi.BIND_AS_DOUBLE), L.FunctionType(F64, [PTR]).as_pointer())
    bits = b.bitcast(b.call(as_double, [obj]), I64)
    store_job(3, bits)
    b.branch(next_)

    # a bool scalar: exactly a bool (0 or 1)
    b.position_at_end(kinds[abi.BIND_BOOL_])
    is_bool = fn.append_basic_block("is_bool")
    b.cbranch(b.icmp_unsigned("==", typ, spec(abi.BIND_BOOL)), is_bool, refuse)
    b.position_at_end(is_bool)
    store_job(3, b.zext(b.icmp_unsigned("==", b.ptrtoint(obj, I64), spec(abi.BIND_TRUE)), I64))
    b.branch(next_)

    # a constant of the specialisation: its type, and equal to its value
    b.position_at_end(kinds[abi.BIND_CONST])
    is_type = fn.append_basic_block("is_type")
    b.cbranch(b.icmp_unsigned("==", typ, entry_word(1)), is_type, refuse)
    b.position_at_end(is_type)
    compare = b.inttoptr(spec(abi.BIND_COMPARE),
                         L.FunctionType(I32, [PTR, PTR, I32]).as_pointer())
    same = b.call(compare, [obj, b.inttoptr(entry_word(2), PTR), L.Constant(I32, _PY_EQ)])
    with b.if_then(b.icmp_signed("<", same, L.Constant(I32, 0))):   # (an error: not equal)
        clear = b.inttoptr(spec(abi.BIND_CLEAR), L.FunctionType(L.VoidType(), []).as_pointer())
        b.call(clear, [])
    accept_if(b.icmp_signed("==", same, L.Constant(I32, 1)), lambda: None)

    b.position_at_end(next_)
    i.add_incoming(b.add(i, _i(1)), next_)
    b.branch(head)

    b.position_at_end(refuse)
    fail(b.add(i, _i(1)))

    b.position_at_end(done)
    b.ret(b.load(rc, typ=I64))
    return [BIND_ARGS]
