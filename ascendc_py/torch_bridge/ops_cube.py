"""The matrix ops shipped with ascendc_py (registered under ``ascendc::`` by ``ops.py``).

=================================================  ==========================================
``torch.ops.ascendc.linear(x, w, b)``               ``x @ w.T + b`` (``torch.nn.functional.linear``)
=================================================  ==========================================

``x`` is ``(..., K)``, ``w`` ``(N, K)`` (as ``nn.Linear`` keeps its weight), ``b`` ``(N,)``; all
float16, bfloat16 or float32 CPU tensors of one dtype; the result is ``(..., N)`` in that dtype.
The cube unit multiplies in the input dtype with float32 accumulation and rounds once at the end
(``fixpipe``), as a 910B does; the bias is added in float32 (it is widened on the host, a vector
of N numbers, and loaded into the BiasTable). Backward: three more ``linear`` launches
(``grad_x = grad @ w``, ``grad_w = grad.T @ x``, ``grad_b = ones @ grad``).
"""
from __future__ import annotations

import math

import torch
from torch import Tensor

from . import cube_kernels as CK
from .custom_op import OpInputError, custom_op



def _quant(dtype) -> int:
    from ..dsl.cube_api import QuantModes
    return int({torch.float16: QuantModes.F322F16, torch.bfloat16: QuantModes.F322BF16,
                torch.float32: QuantModes.NoQuant}[dtype])


def _linear_shape(x, w, b):
    if x.dim() < 1 or w.dim() != 2 or b.dim() != 1:
        raise OpInputError(f"linear expects x (..., K), w (N, K) and b (N,); got x "
                           f"{tuple(x.shape)}, w {tuple(w.shape)}, b {tuple(b.shape)}")
    if x.shape[-1] != w.shape[1] or b.shape[0] != w.shape[0]:
        raise OpInputError(f"linear: x's last dimension ({x.shape[-1]}) must equal w.shape[1] "
                           f"({w.shape[1]}) and b's length ({b.shape[0]}) w.shape[0] "
                           f"({w.shape[0]}); got x {tuple(x.shape)}, w {tuple(w.shape)}, "
                           f"b {tuple(b.shape)}")
    return (*x.shape[:-1], w.shape[0])


def launch_linear(x: Tensor, w: Tensor, b: Tensor, out: Tensor):
    """Launch ``linear_kernel`` for ``out = x @ w.T + b`` (contiguous CPU tensors)."""
    n, k = w.shape
    m = math.prod(x.shape[:-1])
    x2 = x.reshape(m, k)
    tm, tn, tk = CK.LINEAR_TILES[x.element_size()]
    if m == 0 or n == 0:
        return None
    if k == 0:
        out.copy_(b.expand(out.shape))
        return None
    bias = torch.zeros(-(-n // tn) * tn, dtype=torch.float32)  # whole 16-column groups
    bias[:n] = b
    blocks = -(-m // tm) * -(-n // tn)
    return CK.linear_kernel[blocks](x2, w, bias, out.view(m, n), m, n, k, tm, tn, tk,
                                    _quant(x.dtype))


def _launch_linear(x: Tensor, w: Tensor, b: Tensor, *, out: Tensor):
    """x @ w.T + b on the cube unit (x (..., K), w (N, K), b (N,))."""
    return launch_linear(x, w, b, out)


def _linear_setup(ctx, inputs, output):
    x, w, _ = inputs
    ctx.save_for_backward(x, w)


def _linear_grad(ctx, grad):
    x, w = ctx.saved_tensors
    n, k = w.shape
    m = math.prod(x.shape[:-1])
    g2 = grad.reshape(m, n)
    x2 = x.reshape(m, k)
    zeros_k = grad.new_zeros(k)
    grad_x = linear(g2, w.t(), zeros_k).reshape(x.shape)
    grad_w = linear(g2.t(), x2.t(), zeros_k)
    grad_b = linear(grad.new_ones(1, m), g2.t(), grad.new_zeros(n)).reshape(n)
    return grad_x, grad_w, grad_b


linear = custom_op("ascendc::linear", _launch_linear, shape_rule=_linear_shape,
                   kernel=CK.linear_kernel, host_casts={}, backward=_linear_grad,
                   setup_context=_linear_setup)

OPS = {op.name: op for op in (linear,)}
__all__ = ["linear", "launch_linear", "OPS"]
