"""The ops shipped with ascendc_py; importing this module registers them under ``ascendc::``.

==============================================  =============================================
``torch.ops.ascendc.add(x, y)``                 x + y (same shapes, no broadcasting)
``torch.ops.ascendc.leaky_relu(x, s=0.01)``     x if x >= 0 else s * x
``torch.ops.ascendc.sepia(x)``                  the sepia colour matrix over NCHW images, C = 3
``torch.ops.ascendc.swiglu(a, b)``              silu(a) * b = a * b / (1 + exp(-a))
``torch.ops.ascendc.linear(x, w, b)``           x @ w.T + b on the cube unit (``ops_cube.py``)
``torch.ops.ascendc.swiglu_ffn(x, wg, wu)``     silu(x @ wg) * (x @ wu), one mix kernel
==============================================  =============================================

All take float32, float16 or bfloat16 CPU tensors of any shape and size (empty too), are
differentiable and work under ``torch.compile``. Their backward passes are ops too:
``leaky_relu_backward(grad, x, s)``, ``sepia_backward(grad)`` (the transposed colour matrix) and
``swiglu_backward(grad, a, b) -> (grad_a, grad_b)``; every forward and backward is a kernel
(``kernels.py``). float16 is computed in float16 on the vector unit (rounded after every
operation, as the hardware does); bfloat16 is widened to float32 on the host, computed in
float32 and rounded back (until the kernel language has a bfloat16 cast).
"""
import functools

import torch
from torch import Tensor

from . import autotiling
from . import kernels as K
from .custom_op import OpInputError, custom_op, same_shape

#: the sepia colour matrix (rows: output R', G', B'; columns: input R, G, B)
SEPIA = ((0.393, 0.769, 0.189),
         (0.349, 0.686, 0.168),
         (0.272, 0.534, 0.131))
SEPIA_T = tuple(zip(*SEPIA))
#: the matrices' nine coefficients in the order color_matrix_kernel takes them (row by row)
_SEPIA_COEFS = tuple(c for row in SEPIA for c in row)
_SEPIA_T_COEFS = tuple(c for row in SEPIA_T for c in row)


def _on(kernel, block_dim: int):
    """``kernel[block_dim]``, made once per (kernel, block_dim): the launchers run per call
    (their tile comes from the shipped table of autotuned choices, ``autotiling.elementwise``;
    with ``ASCENDC_PY_TORCH_AUTOTUNE=1``, from ``asc.autotune`` on the call's own shapes)."""
    if autotiling.enabled():
        return autotiling.launcher(kernel, block_dim)
    return _plain_launcher(kernel, block_dim)


@functools.lru_cache(maxsize=256)
def _plain_launcher(kernel, block_dim: int):
    return kernel[block_dim]


#: leaky_relu_backward builds the step [x > 0] as clamp(x * scale**3, 0, 1): scale per dtype
_STEP_SCALE = {torch.float32: 2.0 ** 63, torch.float16: 2.0 ** 12}


# ----------------------------------------------------------------------------- add
def _launch_add(x: Tensor, y: Tensor, *, out: Tensor):
    """x + y, element-wise (same shape and dtype; no broadcasting)."""
    t = autotiling.elementwise(K.add_kernel, x.numel(), x.dtype, K.ADD_UB_TILES)
    return _on(K.add_kernel, t.block_dim)(x, y, out, x.numel(), t.share, t.tile)


add = custom_op("ascendc::add", _launch_add, shape_rule=same_shape(), kernel=K.add_kernel,
                backward=lambda ctx, grad: (grad, grad))


# ----------------------------------------------------------------------------- leaky_relu
def _launch_leaky_relu_backward(grad: Tensor, x: Tensor, negative_slope: float, *, out: Tensor):
    """grad if x > 0 else negative_slope * grad (the gradient of leaky_relu)."""
    t = autotiling.elementwise(K.leaky_relu_backward_kernel, x.numel(), x.dtype,
                               K.LEAKY_RELU_BACKWARD_UB_TILES)
    return _on(K.leaky_relu_backward_kernel, t.block_dim)(
        grad, x, out, x.numel(), t.share, negative_slope, _STEP_SCALE[x.dtype], t.tile)


leaky_relu_backward = custom_op("ascendc::leaky_relu_backward", _launch_leaky_relu_backward,
                                shape_rule=same_shape(), kernel=K.leaky_relu_backward_kernel)


def _launch_leaky_relu(x: Tensor, negative_slope: float = 0.01, *, out: Tensor):
    """x if x >= 0 else negative_slope * x, element-wise."""
    t = autotiling.elementwise(K.leaky_relu_kernel, x.numel(), x.dtype,
                               K.LEAKY_RELU_UB_TILES)
    return _on(K.leaky_relu_kernel, t.block_dim)(x, out, x.numel(), t.share, negative_slope, t.tile)


def _leaky_relu_setup(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])
    ctx.negative_slope = inputs[1]


def _leaky_relu_grad(ctx, grad):
    (x,) = ctx.saved_tensors
    return leaky_relu_backward(grad, x, ctx.negative_slope), None


leaky_relu = custom_op("ascendc::leaky_relu", _launch_leaky_relu, shape_rule=same_shape(),
                       kernel=K.leaky_relu_kernel, backward=_leaky_relu_grad,
                       setup_context=_leaky_relu_setup)


# ----------------------------------------------------------------------------- sepia
def _image_shape(x):
    if x.dim() != 4 or x.shape[1] != 3:
        raise OpInputError(f"expects a batch of RGB images in NCHW layout, shape (N, 3, H, W); "
                           f"got shape ({', '.join(str(s) for s in x.shape)})")
    return x.shape


def _launch_color_matrix(x, out, coefs):
    """color_matrix_kernel over NCHW images; ``coefs``: the 3x3 matrix's nine coefficients, row
    by row."""
    n, _, h, w = x.shape
    total = n * h * w
    # blocks of >= 16384 pixels: about the host work that pays for a block's ~40 us of setup
    t = autotiling.elementwise(K.color_matrix_kernel, total, x.dtype, K.COLOR_UB_TILES,
                               min_per_block=16384)
    return _on(K.color_matrix_kernel, t.block_dim)(x, out, h * w, total, t.share, *coefs, t.tile)


def _launch_sepia_backward(grad: Tensor, *, out: Tensor):
    """The gradient of sepia: the transposed sepia matrix applied to ``grad``."""
    return _launch_color_matrix(grad, out, _SEPIA_T_COEFS)


sepia_backward = custom_op("ascendc::sepia_backward", _launch_sepia_backward,
                           shape_rule=_image_shape, kernel=K.color_matrix_kernel)


def _launch_sepia(x: Tensor, *, out: Tensor):
    """The sepia filter over NCHW images: (R', G', B') = SEPIA @ (R, G, B) per pixel."""
    return _launch_color_matrix(x, out, _SEPIA_COEFS)


sepia = custom_op("ascendc::sepia", _launch_sepia, shape_rule=_image_shape,
                  kernel=K.color_matrix_kernel,
                  backward=lambda ctx, grad: sepia_backward(grad))


# ----------------------------------------------------------------------------- swiglu
def _launch_swiglu_backward(grad: Tensor, a: Tensor, b: Tensor, *,
                            out: tuple[Tensor, Tensor]):
    """(grad_a, grad_b) of silu(a) * b."""
    t = autotiling.elementwise(K.swiglu_backward_kernel, a.numel(), a.dtype,
                               K.SWIGLU_BACKWARD_UB_TILES)
    return _on(K.swiglu_backward_kernel, t.block_dim)(grad, a, b, out[0], out[1], a.numel(),
                                                      t.share, t.tile)


swiglu_backward = custom_op("ascendc::swiglu_backward", _launch_swiglu_backward,
                            shape_rule=same_shape(outputs=2), kernel=K.swiglu_backward_kernel)


def _launch_swiglu(a: Tensor, b: Tensor, *, out: Tensor):
    """silu(a) * b = a * b / (1 + exp(-a)), element-wise (same shape; no broadcasting)."""
    t = autotiling.elementwise(K.swiglu_kernel, a.numel(), a.dtype, K.SWIGLU_UB_TILES)
    return _on(K.swiglu_kernel, t.block_dim)(a, b, out, a.numel(), t.share, t.tile)


def _swiglu_setup(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


def _swiglu_grad(ctx, grad):
    a, b = ctx.saved_tensors
    return swiglu_backward(grad, a, b)


swiglu = custom_op("ascendc::swiglu", _launch_swiglu, shape_rule=same_shape(),
                   kernel=K.swiglu_kernel, backward=_swiglu_grad, setup_context=_swiglu_setup)

from .ops_cube import OPS as _CUBE_OPS, linear, swiglu_ffn  # noqa: E402  (matrix ops: cube unit)

#: every op this module registers, by name
OPS = {op.name: op for op in (add, leaky_relu, leaky_relu_backward, sepia, sepia_backward,
                              swiglu, swiglu_backward)}
OPS.update(_CUBE_OPS)

__all__ = ["add", "leaky_relu", "leaky_relu_backward", "sepia", "sepia_backward", "swiglu",
           "swiglu_backward", "linear", "swiglu_ffn", "OPS", "SEPIA"]

# convolution on the cube (conv19): torch.ops.ascendc.conv2d, conv_bn_relu (ops_conv.py)
from .ops_conv import conv2d, conv_bn_relu  # noqa: E402,F401
__all__ += ["conv2d", "conv_bn_relu"]
