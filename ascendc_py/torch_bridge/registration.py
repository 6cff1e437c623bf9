"""How an ``AscendOp`` is registered with PyTorch's dispatcher (``register_op``).

The op is what ``torch.library.custom_op`` would make (a schema inferred from the launcher's
annotations, a CPU kernel, a fake implementation, autograd through ``register_autograd``'s
machinery), registered with ``torch.library.Library`` so that the common call skips the Python
layers ``custom_op`` puts on every call (its autograd wrapper, a redispatch, its backend
wrapper, a ``torch._dynamo`` disable wrapper, an aliasing check):

- **CPU** key: the op's implementation, called by the dispatcher directly.
- **Autograd** key: when no input needs a gradient and the tensors carry nothing but the plain
  CPU dispatch keys (no fake tensors, no dispatch or functionalization modes, no conjugate or
  negative views), what lies below autograd is exactly the CPU kernel, so it is called right
  away. Anything else goes to the autograd implementation ``custom_op`` uses (an
  ``autograd.Function`` that redispatches below autograd, calls ``setup_context`` and the
  ``backward``), so gradients, ``torch.compile`` and ``opcheck`` see what they saw before.
- **Fake** (Meta) implementation: ``torch.library.register_fake``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import torch
from torch._library.autograd import make_autograd_impl

_AFTER_AUTOGRAD = torch._C._after_autograd_keyset
_CPU_KEYS = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)
#: what an autograd kernel's keyset holds below autograd for plain dense CPU tensors (the
#: dispatcher passes CPU alone; ADInplaceOrView is accepted too, a fallthrough for our ops)
_PLAIN_CPU_KEYS = (_CPU_KEYS, _CPU_KEYS | torch._C.DispatchKeySet(
    torch._C.DispatchKey.ADInplaceOrView))


@dataclass
class _AutogradInfo:
    """What ``make_autograd_impl`` reads: the backward and the setup_context (or None)."""

    _backward_fn: Optional[Callable]
    _setup_context_fn: Optional[Callable]


def register_op(name: str, impl: Callable, fake: Callable, backward: Optional[Callable],
                setup_context: Optional[Callable]):
    """Define the op ``name`` ("ns::name") with the schema of ``impl``'s signature and register
    ``impl`` (CPU), ``fake`` (fake tensors and meta) and autograd (``backward(ctx, *grads)``,
    ``setup_context(ctx, inputs, output)``; without ``backward``, a backward through the op
    raises). Returns (the ``torch.ops`` overload packet, its default overload, the
    ``torch.library.Library`` that holds the registrations; keep it alive)."""
    ns, short = name.split("::")
    schema = torch.library.infer_schema(impl, mutates_args=())
    library = torch.library.Library(ns, "FRAGMENT")
    library.define(short + schema)
    packet = getattr(getattr(torch.ops, ns), short)
    overload = packet.default
    library.impl(short, impl, "CPU")
    torch.library.register_fake(name, fake, lib=library)
    with_grad = make_autograd_impl(overload, _AutogradInfo(backward, setup_context))
    grad_enabled, any_requires_grad = torch.is_grad_enabled, torch._C._any_requires_grad
    plain_cpu, plain_cpu_inplace = _PLAIN_CPU_KEYS

    def autograd_kernel(keyset, *args, **kwargs):
        below = keyset & _AFTER_AUTOGRAD
        if (below == plain_cpu or below == plain_cpu_inplace) and not (
                grad_enabled() and any_requires_grad(*args, **kwargs)):
            return impl(*args, **kwargs)
        return with_grad(keyset, *args, **kwargs)

    library.impl(short, autograd_kernel, "Autograd", with_keyset=True)
    return packet, overload, library
