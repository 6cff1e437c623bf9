"""``Backend.NPU`` / ``device="npu"`` as the simulator, for pyasc programs that hard-code them.

pyasc's generalization tests run only on an NPU: they launch with ``config.Backend.NPU`` and make
their torch tensors with ``device="npu"`` (torch_npu's device). :func:`npu_as_model` maps both
onto this machine for the duration of a ``with`` block:

* ``config.set_platform(Backend.NPU)`` selects the simulator, as ``Backend.Model`` does
  (through :data:`~ascendc_py.pyasc_compat.shim.NPU_AS_MODEL_ENV`);
* torch calls given ``device="npu"`` / ``"npu:0"`` / ``torch.device``-like strings naming npu
  make CPU tensors instead (a ``torch.overrides.TorchFunctionMode``, which sees factory
  functions such as ``torch.randn(..., device="npu")`` and ``tensor.to("npu")``).

The simulator runs kernels on host memory, so a CPU tensor is what a kernel launch takes.
Nothing else about the program changes. This is opt-in and named where it is used: the pytest
plugin's ``--pyasc-npu-as-model`` and the runner's ``--npu-as-model``.
"""
from __future__ import annotations

import contextlib
import os
from typing import Iterator

from .shim import NPU_AS_MODEL_ENV

__all__ = ["npu_as_model", "is_npu_device"]


def is_npu_device(device) -> bool:
    """``"npu"``, ``"npu:0"`` (a string; torch cannot parse these without torch_npu)."""
    return isinstance(device, str) and (device == "npu" or device.startswith("npu:"))


def _torch_mode():
    try:
        import torch
        from torch.overrides import TorchFunctionMode
    except ImportError:  # a program without torch has no npu tensors to map
        return contextlib.nullcontext()

    class _NpuAsCpu(TorchFunctionMode):
        """Every torch call that names the npu device gets the CPU instead."""

        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if is_npu_device(kwargs.get("device")):
                kwargs = dict(kwargs, device="cpu")
            if func in _TO_METHODS and len(args) > 1 and is_npu_device(args[1]):
                args = (args[0], "cpu", *args[2:])
            return func(*args, **kwargs)

    _TO_METHODS = {torch.Tensor.to}
    return _NpuAsCpu()


@contextlib.contextmanager
def npu_as_model() -> Iterator[None]:
    """Inside the block, pyasc's ``Backend.NPU`` is the simulator and torch's ``"npu"`` device
    is the CPU (see the module docstring); both are put back afterwards."""
    saved = os.environ.get(NPU_AS_MODEL_ENV)
    os.environ[NPU_AS_MODEL_ENV] = "1"
    try:
        with _torch_mode():
            yield
    finally:
        if saved is None:
            os.environ.pop(NPU_AS_MODEL_ENV, None)
        else:
            os.environ[NPU_AS_MODEL_ENV] = saved
