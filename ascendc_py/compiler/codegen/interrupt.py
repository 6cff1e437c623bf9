"""The runtime library's SIGINT handler: Ctrl-C reaches blocks running in native code.

While a block runs on the launching thread (the fast path of ``simulator/runtime.py``), Python
cannot act on Ctrl-C until the native call returns. ``asc_sigint`` is installed in front of the
process's SIGINT handler (``simulator/interrupts.py``): it writes ``abi.INTERRUPT_BUDGET`` into
the loop budget of every simulated core's ctx listed in its table — each block then leaves at
its next loop iteration, cross-core wait or Matmul row chunk — and calls the handler it
replaced (Python's, which raises KeyboardInterrupt once the native call has returned). A
SIGINT the process ignores stops nothing; under the default action the process still ends.
Everything it does is async-signal-safe: stores, and ``signal``/``raise`` for the default.
"""
from __future__ import annotations

from llvmlite import ir as L

from ...simulator import abi
from . import runtime_lib
from .runtime_loader import INT_FIRED as FIRED
from .runtime_loader import INT_GLOBALS as GLOBALS
from .runtime_loader import INT_HANDLER as HANDLER
from .runtime_loader import INT_INSTALLED as INSTALLED
from .runtime_loader import INT_LENGTH as LENGTH
from .runtime_loader import INT_PREVIOUS as PREVIOUS
from .runtime_loader import INT_PREVIOUS_FLAGS as PREVIOUS_FLAGS
from .runtime_loader import INT_TABLE as TABLE
from .types import I32, I64, PTR
SIG_DFL, SIG_IGN = 0, 1
SA_SIGINFO = 4


@runtime_lib.library_definer(provides=(HANDLER, INSTALLED, *GLOBALS))
def define(module: L.Module) -> list[str]:
    cells = {}
    for name in GLOBALS:
        g = L.GlobalVariable(module, I64, name=name)
        g.initializer = L.Constant(I64, 0)
        cells[name] = g
    handler = L.Function(module, L.FunctionType(L.VoidType(), [I32, PTR, PTR]), name=HANDLER)
    handler.attributes.add("nounwind")
    sig, info, uctx = handler.args
    b = L.IRBuilder(handler.append_basic_block("entry"))

    def load(name):
        return b.load_atomic(cells[name], "monotonic", 8, typ=I64)

    prev = load(PREVIOUS)
    done = handler.append_basic_block("done")
    act = handler.append_basic_block("act")
    b.cbranch(b.icmp_signed("==", prev, L.Constant(I64, SIG_IGN)), done, act)
    b.position_at_end(act)
    table = b.inttoptr(load(TABLE), PTR)
    n = load(LENGTH)
    head = handler.append_basic_block("stop.head")
    body = handler.append_basic_block("stop.body")
    chain = handler.append_basic_block("chain")
    pre = b.block
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(I64)
    i.add_incoming(L.Constant(I64, 0), pre)
    b.cbranch(b.icmp_signed("<", i, n), body, chain)
    b.position_at_end(body)
    ctx = b.load(b.gep(table, [i], source_etype=I64), typ=I64)
    with b.if_then(b.icmp_signed("!=", ctx, L.Constant(I64, 0))):
        slot = b.gep(b.inttoptr(ctx, PTR), [L.Constant(I64, abi.LOOP_BUDGET)], source_etype=I64)
        b.store(L.Constant(I64, abi.INTERRUPT_BUDGET), slot)
    nxt = b.add(i, L.Constant(I64, 1))
    i.add_incoming(nxt, b.block)
    b.branch(head)
    b.position_at_end(chain)
    b.atomic_rmw("add", cells[FIRED], L.Constant(I64, 1), "monotonic")
    default = handler.append_basic_block("default")
    call = handler.append_basic_block("call")
    b.cbranch(b.icmp_signed("==", prev, L.Constant(I64, SIG_DFL)), default, call)
    b.position_at_end(default)   # the default action (end the process), as before us
    signal_fn = L.Function(module, L.FunctionType(I64, [I32, I64]), name="signal")
    raise_fn = L.Function(module, L.FunctionType(I32, [I32]), name="raise")
    b.call(signal_fn, [sig, L.Constant(I64, SIG_DFL)])
    b.call(raise_fn, [sig])
    b.branch(done)
    b.position_at_end(call)      # the handler we replaced (Python's): one or three arguments
    three = b.icmp_signed("!=", b.and_(load(PREVIOUS_FLAGS), L.Constant(I64, SA_SIGINFO)),
                          L.Constant(I64, 0))
    fn3 = b.inttoptr(prev, L.FunctionType(L.VoidType(), [I32, PTR, PTR]).as_pointer())
    fn1 = b.inttoptr(prev, L.FunctionType(L.VoidType(), [I32]).as_pointer())
    with b.if_else(three) as (with_info, plain):
        with with_info:
            b.call(fn3, [sig, info, uctx])
        with plain:
            b.call(fn1, [sig])
    b.branch(done)
    b.position_at_end(done)
    b.ret_void()
    _define_installed(module, handler)
    return [HANDLER, INSTALLED, *GLOBALS]


#: bytes of glibc's struct sigaction on Linux (x86-64, AArch64); the handler is its first word
SIGACTION_BYTES = 152


def _define_installed(module: L.Module, handler: L.Function) -> None:
    """``asc_sigint_installed()``: 1 when the process's SIGINT handler is ``asc_sigint`` (a
    ``sigaction`` query; the check before every launch that runs blocks on the launching
    thread, ``simulator/interrupts.py``), else 0."""
    fn = L.Function(module, L.FunctionType(I64, []), name=INSTALLED)
    fn.attributes.add("nounwind")
    sigaction = module.globals.get("sigaction") or L.Function(
        module, L.FunctionType(I32, [I32, PTR, PTR]), name="sigaction")
    b = L.IRBuilder(fn.append_basic_block("entry"))
    current = b.alloca(L.ArrayType(I64, SIGACTION_BYTES // 8))
    rc = b.call(sigaction, [L.Constant(I32, 2), L.Constant(PTR, None), current])
    ours = b.icmp_unsigned("==", b.load(current, typ=I64), b.ptrtoint(handler, I64))
    ok = b.and_(ours, b.icmp_signed("==", rc, L.Constant(I32, 0)))
    b.ret(b.zext(ok, I64))
