"""Kernels as real PyTorch operators: declare them, use the shipped ones, profile them.

- ``custom_op("ns::name", launcher, shape_rule=..., backward=...)`` declares a PyTorch
  operator backed by kernels (``custom_op.py``; its registration: ``registration.py``).
- ``import ascendc_py.torch_bridge.ops`` registers ``torch.ops.ascendc.add``, ``leaky_relu``,
  ``sepia`` and ``swiglu`` (with their backward ops).
- ``SepiaFilter`` and ``SwiGLU`` are ``nn.Module``s built on them (``modules.py``).
- ``profile()`` (also ``asc.profile()``) collects every kernel launch in a ``with`` block.

Names load on first use: ``import ascendc_py.torch_bridge.profile`` does not import torch.
"""
import importlib

_EXPORTS = {
    "custom_op": "custom_op", "AscendOp": "custom_op", "same_shape": "custom_op",
    "elementwise_tiling": "custom_op", "Tiling": "custom_op", "OpInputError": "custom_op",
    "OpDtypeError": "custom_op", "OpDeviceError": "custom_op", "FLOAT_DTYPES": "custom_op",
    "BF16_VIA_FLOAT32": "custom_op",
    "SepiaFilter": "modules", "SwiGLU": "modules",
    "profile": "profile",
    "FusedConvBNReLU": "ops_conv",
}

__all__ = sorted(_EXPORTS) + ["ops", "kernels"]


def __getattr__(name):
    if name in _EXPORTS:
        module = importlib.import_module(f"{__name__}.{_EXPORTS[name]}")
        return getattr(module, name)
    if name in ("ops", "kernels", "modules"):
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module '{__name__}' has no attribute '{name}'")


def __dir__():
    return __all__
