"""What a launch may write, on the host side: read-only arguments and autograd.

A compiled kernel records the GM arguments it may write (``CompiledKernel.gm_writes``, from
``compiler/gm_writes.py``). Around every launch (``runtime.run_blocks``):

- ``before_launch`` refuses an argument an instruction writes by name when it was passed
  read-only (``ReadOnlyArgumentError``: a numpy array with ``writeable=False``, e.g. over a
  ``bytes`` object or a read-only ``np.memmap``) or is a torch tensor that requires grad while
  grad mode is on (``RequiresGradArgumentError``): nothing runs. For kernels with instructions
  whose destination is chosen at run time it returns the access array (``abi.GM_ACCESS``): such
  an instruction faults before writing a marked argument (``ReadOnlyWriteError`` at its line)
  and marks what it writes.
- ``after_launch`` bumps the autograd version counter of every torch tensor the launch wrote
  (or may have written, when it stopped early), so autograd detects a tensor it saved for
  backward that a kernel overwrote, as it does for torch's own in-place ops.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..compiler import errors as err
from . import abi


def read_only_reason(array: np.ndarray) -> str:
    """Why a numpy array may not be written ('' when it may): its flag, and what it views."""
    if array.flags.writeable:
        return ""
    base = array
    while isinstance(base, np.ndarray) and base.base is not None:
        base = base.base
    import mmap      # (only read-only arrays get here: not imported on the launch path)
    if isinstance(array, np.memmap) or isinstance(base, mmap.mmap):
        return "a read-only np.memmap"
    if isinstance(base, bytes):
        return "a view of an immutable bytes object (np.frombuffer)"
    return "a numpy array with writeable=False"


def torch_requires_grad(tensor) -> bool:
    """A torch tensor autograd tracks now: requires_grad with grad mode on (torch.no_grad()
    lets a launch write it, as torch's in-place ops may)."""
    if not tensor.requires_grad:
        return False
    import torch
    return torch.is_grad_enabled()


def before_launch(compiled, gm_args) -> Optional[np.ndarray]:
    """Refuse a launch that writes an argument it may not; the access array for kernels that
    choose written arguments at run time (else None)."""
    writes = compiled.gm_writes
    for arg, op, loc in writes.static:
        a = gm_args[arg]
        if a.read_only:
            raise err.ReadOnlyArgumentError(
                f"{compiled.name}: argument '{a.name}' is {a.read_only}, but the kernel writes "
                f"it ({op}); nothing was run", loc,
                hint=f"pass a writable array (np.array({a.name}) is a writable copy), or write "
                     f"the result into another argument")
        if a.requires_grad:
            raise _requires_grad(compiled, a, op, loc)
    if not writes.checks_at_run_time:
        return None
    access = np.zeros(1 + len(gm_args), np.int64)     # abi.GM_ACCESS: count, then flags
    access[0] = len(gm_args)
    for i, a in enumerate(gm_args):
        access[1 + i] = (abi.GM_READ_ONLY if a.read_only else 0) | \
                        (abi.GM_REQUIRES_GRAD if a.requires_grad else 0)
    return access


def _requires_grad(compiled, a, op, loc) -> err.RequiresGradArgumentError:
    leaf = getattr(a.owner, "is_leaf", False)
    return err.RequiresGradArgumentError(
        f"{compiled.name}: argument '{a.name}' is a torch tensor that requires grad"
        f"{' (a leaf)' if leaf else ''}, and the kernel writes it ({op}): autograd would not "
        f"see the write and gradients through '{a.name}' would be wrong; nothing was run", loc,
        hint=f"launch under torch.no_grad() to update it in place (as an optimizer step does), "
             f"or write into a tensor that does not require grad (torch.empty_like"
             f"({a.name})); for gradients through a kernel, make it an op with "
             f"asc.torch_bridge.custom_op(..., backward=...)")


def after_launch(compiled, gm_args, access: Optional[np.ndarray]) -> None:
    """Bump the autograd version counter of each torch tensor the launch wrote."""
    writes = compiled.gm_writes
    written = [gm_args[arg].owner for arg, _, _ in writes.static]
    if access is not None:
        written += [a.owner for i, a in enumerate(gm_args) if access[1 + i] & abi.GM_WRITTEN]
    tensors = [t for t in written if type(t).__module__.startswith("torch")]
    if tensors:
        import torch
        torch.autograd.graph.increment_version(tensors)


def read_only_write(op: str, name: str, refused: int, where: str, loc) -> err.ReadOnlyWriteError:
    """The fault of an instruction that was about to write argument ``name`` (``refused``:
    the access bits that forbid it)."""
    if refused & abi.GM_READ_ONLY:
        why = "which was passed read-only"
        hint = ("the array is read-only (writeable=False, np.frombuffer of bytes, or a "
                f"read-only np.memmap): pass a writable copy (np.array({name})), or point the "
                f"GlobalTensor at another argument on this path")
    else:
        why = "a torch tensor that requires grad, and autograd would not see the write"
        hint = (f"launch under torch.no_grad() to update '{name}' in place, or write into a "
                f"tensor that does not require grad")
    return err.ReadOnlyWriteError(f"{op} would write global argument '{name}', {why}; it "
                                  f"stopped before writing{where}", loc, hint=hint)


__all__ = ["after_launch", "before_launch", "read_only_reason", "read_only_write"]
