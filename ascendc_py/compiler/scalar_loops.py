"""Which kernel functions keep LLVM's full codegen (``jit.KERNEL_FUNCTION_FAST_CODEGEN``): those
with a loop that does its work in the function itself instead of calling the runtime library."""
from __future__ import annotations

import re

_LABEL = re.compile(r'^(?:([-\w.$]+)|"([^"]*)"):', re.M)
_TARGET = re.compile(r'label %(?:([-\w.$]+)|"([^"]*)")')


def has_scalar_loop(function_text: str) -> bool:
    """Whether a function (LLVM IR text) has a loop that calls no function (intrinsics aside):
    scalar work that FastISel code would slow down (a scalar integer loop ran 31 % slower), so
    its kernel function keeps full codegen. Loops are the natural loops of the back edges a
    depth-first walk of the control-flow graph finds."""
    body = function_text.split("{", 1)[-1]
    starts = [(m.start(), m.group(1) or m.group(2)) for m in _LABEL.finditer(body)]
    texts = {"": body[:starts[0][0]] if starts else body}      # the entry block (unnamed)
    for k, (pos, name) in enumerate(starts):
        texts[name] = body[pos:starts[k + 1][0] if k + 1 < len(starts) else len(body)]
    if starts and not texts[""].strip():                        # the entry block is named
        del texts[""]
    entry = next(iter(texts))
    succ = {b: [m.group(1) or m.group(2) for m in _TARGET.finditer(t)] for b, t in texts.items()}
    pred: dict = {b: [] for b in texts}
    for b, targets in succ.items():
        for t in targets:
            pred.setdefault(t, []).append(b)
    calls = {b: any(("call " in ln or "invoke " in ln) and "@llvm." not in ln
                    for ln in t.splitlines()) for b, t in texts.items()}
    on_stack, done, back = set(), set(), []
    stack = [(entry, iter(succ.get(entry, ())))]
    on_stack.add(entry)
    while stack:                                   # iterative depth-first walk
        block, it = stack[-1]
        nxt = next(it, None)
        if nxt is None:
            stack.pop()
            on_stack.discard(block)
            done.add(block)
        elif nxt in on_stack:
            back.append((block, nxt))
        elif nxt not in done and nxt in texts:
            on_stack.add(nxt)
            stack.append((nxt, iter(succ.get(nxt, ()))))
    for latch, head in back:
        loop, todo = {head, latch}, [latch]
        while todo:
            for p in pred.get(todo.pop(), ()):
                if p not in loop:
                    loop.add(p)
                    todo.append(p)
        if not any(calls.get(b, False) for b in loop):
            return True
    return False
