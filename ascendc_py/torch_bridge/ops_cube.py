"""The matrix ops shipped with ascendc_py (registered under ``ascendc::`` by ``ops.py``).

=================================================  ==========================================
``torch.ops.ascendc.linear(x, w, b)``               ``x @ w.T + b`` (``torch.nn.functional.linear``)
``torch.ops.ascendc.swiglu_ffn(x, wg, wu)``         ``silu(x @ wg) * (x @ wu)``, one mix kernel
=================================================  ==========================================

``x`` is ``(..., K)``, ``w`` ``(N, K)`` (as ``nn.Linear`` keeps its weight), ``b`` ``(N,)``; all
float16, bfloat16 or float32 CPU tensors of one dtype; the result is ``(..., N)`` in that dtype.
The cube unit multiplies in the input dtype with float32 accumulation and rounds once at the end
(``fixpipe``), as a 910B does; the bias is added in float32 (it is widened on the host, a vector
of N numbers, and loaded into the BiasTable). Backward: three more ``linear`` launches
(``grad_x = grad @ w``, ``grad_w = grad.T @ x``, ``grad_b = ones @ grad``).

``x`` is ``(..., K)``, ``wg`` and ``wu`` ``(K, N)`` for ``swiglu_ffn``: the seed article's fused
SwiGLU. One mix launch (1 AIC : 2 AIV per AI Core): the cube computes both projections (Matmul
API, float32 accumulation) into a float32 GM workspace, the vector cores compute
``silu(g) * u`` in float32 and round once to the input dtype. Backward: both projections are
recomputed with ``linear``, ``swiglu_backward`` gives their gradients, four ``linear`` launches
the weight and input gradients.

Tilings: linear's TM × TN and the FFN's Matmul base_m × base_n come from the shipped table of
autotuned choices per shape class (``autotiling.py``; the same bits whichever is chosen: an FFN
base is used only where the Matmul tiling helper keeps its own split of the shape, else, and
where the table has no choice, the helper's own fit runs); with
``ASCENDC_PY_TORCH_AUTOTUNE=1``, both from ``asc.autotune`` on the call's own shapes.
"""
from __future__ import annotations

import math

import torch
from torch import Tensor

from . import autotiling
from . import cube_kernels as CK
from .custom_op import OpInputError, custom_op



def _host_types():
    from ..host import DataType
    return {torch.float16: DataType.DT_FLOAT16, torch.bfloat16: DataType.DT_BF16,
            torch.float32: DataType.DT_FLOAT}


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


def _launch_linear(x: Tensor, w: Tensor, b: Tensor, *, out: Tensor):
    """x @ w.T + b on the cube unit (x (..., K), w (N, K), b (N,)): ``linear_kernel``."""
    n, k = w.shape
    m = math.prod(x.shape[:-1])
    x2 = x.reshape(m, k)
    if m == 0 or n == 0:
        return None
    if k == 0:
        out.copy_(b.expand(out.shape))
        return None
    if autotiling.enabled():          # tune TM x TN on this call's shapes (autotiling.py)
        bias = torch.zeros(autotiling.linear_bias_pad(n), dtype=torch.float32)
        bias[:n] = b
        return autotiling.linear_tuner(x.element_size())[autotiling.linear_blocks(m, n)](
            x2, w, bias, out.view(m, n), m, n, k, _quant(x.dtype))
    tm, tn, tk = autotiling.linear_tiles(m, n, k, x.element_size())   # the shipped choice
    bias = torch.zeros(-(-n // tn) * tn, dtype=torch.float32)  # whole 16-column groups
    bias[:n] = b
    blocks = -(-m // tm) * -(-n // tn)
    return CK.linear_kernel[blocks](x2, w, bias, out.view(m, n), m, n, k, tm, tn, tk,
                                    _quant(x.dtype))


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


# ----------------------------------------------------------------------------- swiglu_ffn
def _swiglu_ffn_shape(x, wg, wu):
    if x.dim() < 1 or wg.dim() != 2 or wu.shape != wg.shape:
        raise OpInputError(f"swiglu_ffn expects x (..., K) and wg, wu (K, N) of one shape; got "
                           f"x {tuple(x.shape)}, wg {tuple(wg.shape)}, wu {tuple(wu.shape)}")
    if x.shape[-1] != wg.shape[0]:
        raise OpInputError(f"swiglu_ffn: x's last dimension ({x.shape[-1]}) must equal "
                           f"wg.shape[0] ({wg.shape[0]}); got x {tuple(x.shape)}, wg "
                           f"{tuple(wg.shape)}")
    return (*x.shape[:-1], wg.shape[1])


def _launch_swiglu_ffn(x: Tensor, wg: Tensor, wu: Tensor, *, out: Tensor):
    """silu(x @ wg) * (x @ wu) in one mix kernel (x (..., K), wg and wu (K, N)):
    ``swiglu_ffn_kernel``."""
    k, n = wg.shape
    m = math.prod(x.shape[:-1])
    if m == 0 or n == 0:
        return None
    if k == 0:
        out.zero_()                 # silu(0) * 0
        return None
    in_type = _host_types()[x.dtype]
    workspace = torch.empty(2 * m * n, dtype=torch.float32)
    if autotiling.enabled():          # tune base_m x base_n on this call's shapes
        return autotiling.ffn_tuner()[autotiling.ffn_blocks(m, n, k, in_type)](
            x.reshape(m, k), wg, wu, out.view(m, n), workspace, None)
    base = autotiling.ffn_base(m, n, k, in_type, x.element_size())   # the shipped choice
    tiling = CK.swiglu_ffn_tiling(m, n, k, in_type, None if base == (0, 0) else base)
    return CK.swiglu_ffn_kernel[-(-tiling.used_core_num // 2)](
        x.reshape(m, k), wg, wu, out.view(m, n), workspace, tiling)


def _swiglu_ffn_setup(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


def _swiglu_ffn_grad(ctx, grad):
    from .ops import swiglu_backward
    x, wg, wu = ctx.saved_tensors
    k, n = wg.shape
    m = math.prod(x.shape[:-1])
    x2 = x.reshape(m, k)
    g2 = grad.reshape(m, n)
    zeros_n, zeros_k = grad.new_zeros(n), grad.new_zeros(k)
    gate = linear(x2, wg.t(), zeros_n)           # x @ wg, recomputed on the cube
    up = linear(x2, wu.t(), zeros_n)
    d_gate, d_up = swiglu_backward(g2, gate, up)
    grad_x = (linear(d_gate, wg, zeros_k) + linear(d_up, wu, zeros_k)).reshape(x.shape)
    grad_wg = linear(x2.t(), d_gate.t(), zeros_n)
    grad_wu = linear(x2.t(), d_up.t(), zeros_n)
    return grad_x, grad_wg, grad_wu


swiglu_ffn = custom_op("ascendc::swiglu_ffn", _launch_swiglu_ffn, shape_rule=_swiglu_ffn_shape,
                       kernel=CK.swiglu_ffn_kernel, host_casts={}, backward=_swiglu_ffn_grad,
                       setup_context=_swiglu_ffn_setup)

OPS = {op.name: op for op in (linear, swiglu_ffn)}
__all__ = ["linear", "swiglu_ffn", "OPS"]
