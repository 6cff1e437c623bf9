"""``nn.Module``s built on the shipped ops: ``SepiaFilter`` and ``SwiGLU``."""
import math

import torch
from torch import nn

from . import ops


class SepiaFilter(nn.Module):
    """The sepia colour filter over NCHW RGB images (``torch.ops.ascendc.sepia``).

    Input ``(N, 3, H, W)`` float32/float16/bfloat16 CPU tensor, output the same shape: per pixel
    (R', G', B') = ``ops.SEPIA`` @ (R, G, B), not clamped. Differentiable (its backward is the
    transposed matrix, itself a kernel); no parameters.
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.ops.ascendc.sepia(x)


class SwiGLU(nn.Module):
    """The SwiGLU gate of a transformer MLP: ``silu(x @ gate_weight) * (x @ up_weight)``.

    ``gate_weight`` and ``up_weight`` are ``(hidden, intermediate)`` parameters, initialised
    like ``nn.Linear`` (uniform in ±1/sqrt(hidden)). The forward pass is one fused mix kernel,
    ``torch.ops.ascendc.swiglu_ffn``: the cube computes both projections, the vector cores the
    gate (its backward recomputes the projections on the cube and uses the ``swiglu_backward``
    kernel). Input ``(..., hidden)``, output ``(..., intermediate)``.
    """

    def __init__(self, hidden: int, intermediate: int, *, device=None, dtype=None):
        super().__init__()
        self.hidden = hidden
        self.intermediate = intermediate
        kw = {"device": device, "dtype": dtype}
        self.gate_weight = nn.Parameter(torch.empty(hidden, intermediate, **kw))
        self.up_weight = nn.Parameter(torch.empty(hidden, intermediate, **kw))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1.0 / math.sqrt(self.hidden) if self.hidden else 0.0
        nn.init.uniform_(self.gate_weight, -bound, bound)
        nn.init.uniform_(self.up_weight, -bound, bound)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ops.swiglu_ffn(x, self.gate_weight, self.up_weight)

    def reference(self, x: torch.Tensor) -> torch.Tensor:
        """The same computation in plain torch (for checking)."""
        return nn.functional.silu(x @ self.gate_weight) * (x @ self.up_weight)

    def extra_repr(self) -> str:
        return f"hidden={self.hidden}, intermediate={self.intermediate}"
