"""Declare a PyTorch operator backed by an ascendc_py kernel.

    from torch import Tensor
    from ascendc_py import torch_bridge as tb

    def launch_add(x: Tensor, y: Tensor, *, out: Tensor):
        t = tb.elementwise_tiling(x.numel(), x.dtype, ub_tiles=6)
        return add_kernel[t.block_dim](x, y, out, x.numel(), t.share, t.tile)

    add = tb.custom_op("mylib::add", launch_add, shape_rule=tb.same_shape(), kernel=add_kernel,
                       backward=lambda ctx, g: (g, g))
    add(x, y)                      # or torch.ops.mylib.add(x, y)

``custom_op`` registers a real PyTorch operator, what ``torch.library.custom_op`` would make
(``torch.ops.<ns>.<name>`` with the schema inferred from the launcher's annotations), a fake
(meta) implementation derived from the shape rule (``register_fake``: ``torch.compile`` and
``opcheck`` work) and autograd with the given backward, through ``torch.library.Library`` so
that the common call skips ``custom_op``'s per-call Python layers (``registration.py``). What
each call does, in order:

1. **Check the inputs** (in the real and in the fake implementation, so ``torch.compile`` reports
   them too): every tensor argument must be on the CPU (the simulated NPU reads host memory),
   have one of the accepted ``dtypes``, and all tensor arguments share one dtype. Then the shape
   rule runs; it raises ``OpInputError`` for shapes the op does not accept. Every message names
   the op and what it accepts.
2. **Contiguity**: non-contiguous inputs are copied to contiguous ones (the kernels read flat
   memory); contiguous inputs go to the kernel zero-copy. Results are the same either way, and
   inputs are never written.
3. **Host casts**: a dtype the kernels do not compute in (by default bfloat16) is widened on the
   host (``host_casts``, default bfloat16 → float32), the kernel runs in the wide type and the
   outputs are rounded back. This is a stop-gap until the kernel language has a bfloat16 cast.
   (The common call, every argument by position and every tensor a contiguous CPU tensor of
   one accepted dtype without a host cast, goes through these steps in a shorter path,
   ``AscendOp._run_plain``, with the same outcome.)
4. **Outputs** are allocated (contiguous, shapes from the shape rule, dtype of the first tensor
   argument unless ``out_dtype`` says otherwise) and the launcher is called as
   ``launcher(*args, out=outputs)`` (outputs of 4 MiB and more advised onto huge pages first,
   ``hostmem.py``); it picks ``block_dim`` and tiling from its inputs (see
   ``elementwise_tiling``), launches the kernel(s) and returns their ``Report``(s). When every
   output is empty, nothing is launched.
"""
from __future__ import annotations

import functools
import inspect
import math
import sys
import types
import typing
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

import torch

from ..compiler.errors import user_boundary
from ..simulator import config
from . import profile as _profile
from .hostmem import MIN_BYTES, advise_huge_pages
from .registration import register_op

_CURRENT_OP = _profile._current_op     # the op the launches are attributed to (profile.py)

FLOAT_DTYPES = (torch.float32, torch.float16, torch.bfloat16)
#: the default ``host_casts``: bfloat16 is computed in float32 (no bfloat16 cast in kernels yet)
BF16_VIA_FLOAT32 = {torch.bfloat16: torch.float32}
UB_BUDGET_BYTES = 160 * 1024   # of the 192 KB Unified Buffer: leaves room for a kernel's extras


class OpInputError(ValueError):
    """An op was called with inputs it does not accept (shape, dtype or device)."""

    user_facing = True   # shown without ascendc_py's frames (compiler.errors.user_boundary)


class OpDtypeError(OpInputError, TypeError):
    """A tensor argument has a dtype the op does not accept."""


class OpDeviceError(OpInputError):
    """A tensor argument is not on the CPU."""


# ----------------------------------------------------------------------------- tiling helpers
@dataclass(frozen=True)
class Tiling:
    """How a flat range of ``n`` elements is spread over blocks and tiles.

    ``block_dim`` blocks each take ``share`` consecutive elements (a multiple of 16, so every
    block starts on a 32-byte boundary; the last block takes what is left) and walk them in
    tiles of ``tile`` elements.
    """

    block_dim: int
    share: int
    tile: int


def elementwise_tiling(n: int, dtype, ub_tiles: int, *, min_per_block: int = 16384,
                       max_tile: int = 16384, ub_budget: int = UB_BUDGET_BYTES,
                       max_blocks: Optional[int] = None) -> Tiling:
    """Tiling for an element-wise kernel over ``n`` elements of ``dtype``.

    ``ub_tiles`` is how many tile-sized buffers the kernel keeps in the Unified Buffer (e.g. 6
    for two double-buffered inputs and one double-buffered output); the tile is the largest
    multiple of 256 elements for which they fit in ``ub_budget`` bytes (at most ``max_tile``).
    Blocks: one per ``min_per_block`` elements, at most ``max_blocks`` (default: the vector
    cores of the current platform, 48 on the 910B2), at least 1: tensors from 786 K elements up
    use every core. On the modeled chip more blocks are faster until HBM bandwidth is shared
    out; on the host a block costs a few µs of fixed work (the native block loop), so the
    choice is about the modeled chip, and the shipped ops keep 16384 so that their reports stay
    comparable across releases. Tilings are cached per arguments and core count (an op's
    launcher asks on every call).
    """
    if max_blocks is None:
        max_blocks = config.current_platform().aiv_cores
    try:
        return _tiling(n, dtype, ub_tiles, min_per_block, max_tile, ub_budget, max_blocks)
    except TypeError:      # an argument that is not hashable (a symbolic size): not cached
        return _tiling.__wrapped__(n, dtype, ub_tiles, min_per_block, max_tile, ub_budget,
                                   max_blocks)


@functools.lru_cache(maxsize=1024)
def _tiling(n, dtype, ub_tiles, min_per_block, max_tile, ub_budget, max_blocks) -> Tiling:
    esize = _itemsize(dtype)
    tile = min(max_tile, ub_budget // (ub_tiles * esize)) // 256 * 256
    if tile < 256:
        raise ValueError(f"{ub_tiles} tiles do not fit in {ub_budget} bytes of UB")
    n = max(int(n), 1)
    blocks = max(1, min(max_blocks, math.ceil(n / min_per_block)))
    share = math.ceil(math.ceil(n / blocks) / 16) * 16
    return Tiling(math.ceil(n / share), share, tile)


def _itemsize(dtype) -> int:
    if isinstance(dtype, torch.dtype):
        return dtype.itemsize
    return dtype.sizeof() if hasattr(dtype, "sizeof") else int(dtype)


# ----------------------------------------------------------------------------- shape rules
class same_shape:
    """Shape rule of an element-wise op: every tensor argument must have the same shape (no
    broadcasting); each of the ``outputs`` outputs has that shape."""

    def __init__(self, outputs: int = 1, _signature: Optional[inspect.Signature] = None):
        self.outputs = outputs
        self.signature = _signature

    def for_signature(self, signature: inspect.Signature) -> "same_shape":
        """The same rule, naming the arguments of ``signature`` in its messages."""
        return same_shape(self.outputs, signature)

    def __call__(self, *args, **kwargs):
        if not kwargs:       # the common call: equal shapes, nothing to name
            shape = None
            for a in args:
                if isinstance(a, torch.Tensor):
                    if shape is None:
                        shape = a.shape
                    elif a.shape != shape:
                        break
            else:
                if shape is not None:
                    return shape if self.outputs == 1 else (shape,) * self.outputs
        if self.signature is None:
            named = [(f"argument {i}", a) for i, a in enumerate(args)
                     if isinstance(a, torch.Tensor)]
        else:
            bound = self.signature.bind(*args, **kwargs)
            named = [(f"'{k}'", v) for k, v in bound.arguments.items()
                     if isinstance(v, torch.Tensor)]
        first_name, first = named[0]
        for name, t in named[1:]:
            if t.shape != first.shape:
                raise OpInputError(f"shapes must be equal (no broadcasting): {first_name} is "
                                   f"{_shape(first)} but {name} is {_shape(t)}")
        return first.shape if self.outputs == 1 else (first.shape,) * self.outputs


def _shape(t) -> str:
    return "(" + ", ".join(str(s) for s in t.shape) + ("," if t.dim() == 1 else "") + ")"


# ----------------------------------------------------------------------------- the op
class AscendOp:
    """A torch operator backed by ascendc_py kernels; made by ``custom_op``.

    Call it like the op (``op(x, y)`` is ``torch.ops.<ns>.<name>(x, y)``). Attributes: ``name``
    ("ns::name"), ``op`` (the ``torch.ops`` overload packet), ``overload`` (its ``.default``
    ``OpOverload``), ``library`` (the ``torch.library.Library`` holding its registrations),
    ``kernels``, ``dtypes``, ``signature`` and ``last_reports`` (the
    ``Report``s of the most recent launch of this op, for a quick look; use ``asc.profile()``
    to collect them all).
    """

    def __init__(self, name: str, launcher: Callable, *, shape_rule: Callable,
                 kernel=None, dtypes: Sequence[torch.dtype] = FLOAT_DTYPES,
                 host_casts: Optional[dict] = None, out_dtype: Optional[Callable] = None,
                 backward: Optional[Callable] = None, setup_context: Optional[Callable] = None,
                 doc: Optional[str] = None):
        if not isinstance(name, str) or name.count("::") != 1 or not all(name.split("::")):
            raise ValueError(f"op name must be 'namespace::name', got {name!r}")
        if backward is None and setup_context is not None:
            raise ValueError(f"{name}: setup_context is only used together with backward")
        self.name = name
        self.launcher = launcher
        self.shape_rule = shape_rule
        self.kernels = tuple(kernel) if isinstance(kernel, (tuple, list)) else \
            ((kernel,) if kernel is not None else ())
        self.dtypes = tuple(dtypes)
        self.host_casts = dict(BF16_VIA_FLOAT32 if host_casts is None else host_casts)
        self.out_dtype = out_dtype
        self.last_reports: tuple = ()
        self.signature, self.num_outputs = _op_signature(name, launcher)
        params = self.signature.parameters.values()
        #: the parameter names when every parameter may be given by position (the fast bind)
        self._positional = tuple(p.name for p in params) if all(
            p.kind is p.POSITIONAL_OR_KEYWORD for p in params) else None
        if isinstance(shape_rule, same_shape):
            self.shape_rule = shape_rule.for_signature(self.signature)
        #: for the fast call (``_run_plain``): where the tensor parameters are, the defaults of
        #: the trailing parameters (the dispatcher leaves out arguments equal to their
        #: default), and the dtypes the kernels take as they are (no host cast)
        self._tensor_positions = tuple(i for i, p in enumerate(params)
                                       if p.annotation is torch.Tensor)
        self._defaults = tuple(p.default for p in params)
        self._other_positions = tuple(i for i in range(len(self._defaults))
                                      if i not in self._tensor_positions)
        self._plain_plans: dict = {}
        self._plain_dtypes = frozenset(d for d in self.dtypes if d not in self.host_casts)

        @user_boundary
        def impl(*args, **kwargs):
            return self._run(args, kwargs)

        @user_boundary
        def fake(*args, **kwargs):
            # fake tensors (torch.compile) are CPU tensors; meta tensors infer shapes
            bound, shapes, dtype = self._check(args, kwargs, devices=("cpu", "meta"))
            like = next((v for v in bound.arguments.values() if isinstance(v, torch.Tensor)),
                        torch.empty(0))
            outs = tuple(like.new_empty(s, dtype=dtype) for s in shapes)
            return outs[0] if self.num_outputs is None else outs

        impl.__signature__ = self.signature
        impl.__doc__ = doc or launcher.__doc__
        impl.__name__ = impl.__qualname__ = name.split("::")[1]
        impl.__module__ = getattr(launcher, "__module__", __name__)
        self.op, self.overload, self.library = register_op(name, impl, fake, backward,
                                                           setup_context)
        self.__doc__ = impl.__doc__

    def __call__(self, *args, **kwargs):
        return self.overload(*args, **kwargs)

    def __repr__(self) -> str:
        kernels = ", ".join(getattr(k, "__name__", repr(k)) for k in self.kernels)
        return f"<ascendc op {self.name}{self.signature} kernels=[{kernels}]>"

    # ------------------------------------------------------------------ checks
    def _bind(self, args, kwargs):
        """The arguments bound to the signature, defaults applied (``inspect.BoundArguments``
        or, for the common call with every argument by position, a ``_Positional``)."""
        if not kwargs and self._positional is not None and len(args) == len(self._positional):
            return _Positional(self._positional, args)
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{self.name}{self.signature}: {e}") from None
        bound.apply_defaults()
        return bound

    def _check(self, args, kwargs, devices=("cpu",)):
        """Bind and check the arguments; (bound arguments, output shapes, output dtype).
        ``devices``: the device types accepted (the fake implementation accepts meta tensors
        too: shapes only, nothing runs)."""
        bound = self._bind(args, kwargs)
        tensors = [(k, v) for k, v in bound.arguments.items() if isinstance(v, torch.Tensor)]
        accepted = ", ".join(str(d).replace("torch.", "") for d in self.dtypes)
        if "meta" in devices and any(t.device.type == "meta" for _, t in tensors):
            devices = ("meta",)     # shape inference: every tensor on meta, none on the CPU
        for arg, t in tensors:
            if t.device.type not in devices:
                raise OpDeviceError(f"{self.name}: argument '{arg}' is on device '{t.device}'; "
                                    f"{self.name} runs on the simulated Ascend AI Core and "
                                    f"accepts CPU tensors only (use {arg}.cpu())")
            if t.dtype not in self.dtypes:
                raise OpDtypeError(f"{self.name}: argument '{arg}' has dtype "
                                   f"{str(t.dtype).replace('torch.', '')}; {self.name} accepts "
                                   f"{accepted}" + (_FLOAT64_HINT if t.dtype == torch.float64
                                                    else ""))
        for arg, t in tensors[1:]:
            if t.dtype != tensors[0][1].dtype:
                raise OpDtypeError(f"{self.name}: all tensor arguments must have one dtype: "
                                   f"'{tensors[0][0]}' is {str(tensors[0][1].dtype)[6:]} but "
                                   f"'{arg}' is {str(t.dtype)[6:]}")
        shapes = self._shapes(*bound.args, **bound.kwargs)
        if self.num_outputs is not None and len(shapes) != self.num_outputs:
            raise RuntimeError(f"{self.name}: the shape rule gave {len(shapes)} shapes for "
                               f"{self.num_outputs} outputs")
        dtype = (self.out_dtype(*bound.args, **bound.kwargs) if self.out_dtype is not None
                 else tensors[0][1].dtype if tensors else torch.float32)
        return bound, shapes, dtype

    def _shapes(self, *args, **kwargs) -> tuple:
        """The output shapes (a tuple, one per output) from the shape rule; its OpInputError
        names the op."""
        try:
            shapes = self.shape_rule(*args, **kwargs)
        except OpInputError as e:
            msg = str(e)
            raise type(e)(msg if msg.startswith(self.name) else f"{self.name}: {msg}") from None
        return (shapes,) if self.num_outputs is None else tuple(shapes)

    # ------------------------------------------------------------------ the real implementation
    def _run(self, args, kwargs):
        """The op on real tensors: ``_run_plain`` for the common call, else checks, casts and
        copies as the module docstring describes."""
        if not kwargs and self._positional is not None:
            done, result = self._run_plain(args)
            if done:
                return result
        bound, shapes, dtype = self._check(args, kwargs)
        call_args = {}
        for k, v in bound.arguments.items():
            if isinstance(v, torch.Tensor):
                cast = self.host_casts.get(v.dtype)
                if cast is not None:
                    v = v.to(cast)
                if not v.is_contiguous():
                    v = v.contiguous()
            call_args[k] = v
        wide = self.host_casts.get(dtype)
        outs = tuple(torch.empty(tuple(s), dtype=wide or dtype) for s in shapes)
        if any(o.numel() for o in outs):
            arranged = _Positional(self._positional, tuple(call_args.values())) \
                if isinstance(bound, _Positional) else self.signature.bind(**call_args)
            self._launch(arranged.args, arranged.kwargs,
                         outs[0] if self.num_outputs is None else outs)
        if wide is not None:
            outs = tuple(o.to(dtype) for o in outs)
        return outs[0] if self.num_outputs is None else outs

    def _launch(self, args, kwargs, out) -> None:
        """Call the launcher with the launches attributed to this op; keep its reports."""
        advise_huge_pages(out if isinstance(out, tuple) else (out,))
        token = _profile.enter_op(self.name)
        try:
            reports = self.launcher(*args, **kwargs, out=out)
        finally:
            _profile.exit_op(token)
        self.last_reports = tuple(reports) if isinstance(reports, (tuple, list)) else \
            ((reports,) if reports is not None else ())

    def _run_plain(self, args):
        """The common call in few steps: every argument by position (trailing defaults filled
        in), every tensor argument a contiguous CPU tensor of one accepted dtype that needs no
        host cast. (False, None) for anything else, which ``_run`` handles in full (and whose
        errors it raises); the outcome is the same either way. What the shape rule and
        ``out_dtype`` give is kept per (dtype, shapes, other arguments) (``_plain_plan``)."""
        n = len(self._positional)
        if len(args) < n:
            args = tuple(args) + self._defaults[len(args):]
            if inspect.Parameter.empty in args:
                return False, None
        elif len(args) > n:
            return False, None
        dtype = first = None
        key = []
        for i in self._tensor_positions:
            t = args[i]
            if type(t) is not torch.Tensor or not t.is_cpu or not t.is_contiguous():
                return False, None
            if dtype is None:
                first, dtype = t, t.dtype
                if dtype not in self._plain_dtypes:
                    return False, None
            elif t.dtype != dtype:
                return False, None
            key.append(t.shape)
        if dtype is None:
            return False, None
        for i in self._other_positions:
            v = args[i]
            # (a float by its bits: -0.0 and 0.0 are equal keys otherwise; NaN never hits)
            key.append((v, v.hex()) if type(v) is float else v)
        key.append(dtype)
        key = tuple(key)
        try:
            plan = self._plain_plans.get(key)
        except TypeError:        # an argument that is not hashable: nothing kept
            key = plan = None
        if plan is None:
            plan = self._plain_plan(args, first, dtype)
            if plan is None:
                return False, None
            if key is not None:
                if len(self._plain_plans) > 256:
                    self._plain_plans.clear()
                self._plain_plans[key] = plan
        return True, self._plain_call(args, first, plan)

    def _plain_plan(self, args, first, dtype):
        """What ``_run_plain`` needs of the shape rule and ``out_dtype`` for ``args``:
        (output shapes, dtype computed in, dtype returned, whether the output is shaped like
        the first tensor, whether anything is launched, whether an output is large enough
        for huge-page advice); None when the full path must run (it raises the error)."""
        shapes = self._shapes(*args)
        single = self.num_outputs is None
        if not single and len(shapes) != self.num_outputs:
            return None      # the full path raises the error
        if self.out_dtype is not None:
            dtype = self.out_dtype(*args)
        wide = self.host_casts.get(dtype)
        computed = wide or dtype
        like = single and wide is None and dtype == first.dtype and shapes[0] == first.shape
        sizes = [math.prod(s) for s in shapes]
        big = any(k * computed.itemsize >= MIN_BYTES for k in sizes)
        return shapes, computed, dtype, like, any(sizes), big

    def _plain_call(self, args, first, plan):
        """Allocate the outputs ``plan`` (``_plain_plan``) describes, launch, round back."""
        shapes, computed, dtype, like, launch, big = plan
        if like:
            out = torch.empty_like(first, memory_format=torch.contiguous_format)
            outs = (out,)
        elif self.num_outputs is None:
            outs = (out := torch.empty(shapes[0], dtype=computed),)
        else:
            outs = out = tuple(torch.empty(s, dtype=computed) for s in shapes)
        if launch:
            if big:
                advise_huge_pages(outs)
            token = _CURRENT_OP.set(self.name)      # (_profile.enter_op, inline)
            try:
                reports = self.launcher(*args, out=out)
            finally:
                _CURRENT_OP.reset(token)
            self.last_reports = tuple(reports) if isinstance(reports, (tuple, list)) else \
                ((reports,) if reports is not None else ())
        if computed is not dtype:
            outs = tuple(o.to(dtype) for o in outs)
        return outs[0] if self.num_outputs is None else outs


class _Positional:
    """Arguments all given by position, one per parameter: what ``AscendOp._bind`` needs of an
    ``inspect.BoundArguments`` (``arguments``, ``args``, ``kwargs``) without binding."""

    __slots__ = ("arguments", "args")
    kwargs: dict = {}

    def __init__(self, names: tuple, args: tuple):
        self.arguments = dict(zip(names, args))
        self.args = tuple(args)


def _op_signature(name: str, launcher: Callable):
    """The op's signature: the launcher's minus its keyword-only ``out``; the annotation of
    ``out`` (Tensor or tuple[Tensor, ...]) is the op's return type."""
    if not callable(launcher):
        raise TypeError(f"{name}: launcher must be a function, got {type(launcher).__name__}")
    sig = inspect.signature(launcher)
    out = sig.parameters.get("out")
    if out is None or out.kind is not inspect.Parameter.KEYWORD_ONLY:
        raise TypeError(f"{name}: the launcher must take the outputs as a keyword-only "
                        f"parameter 'out' (def launch(x: Tensor, *, out: Tensor))")
    hints = typing.get_type_hints(launcher)
    params = []
    for p in sig.parameters.values():
        if p.name == "out":
            continue
        if p.name not in hints:
            raise TypeError(f"{name}: launcher parameter '{p.name}' needs a type annotation "
                            f"(torch.Tensor, float, int, bool …) to derive the op's schema")
        params.append(p.replace(annotation=hints[p.name]))
    ret = hints.get("out", torch.Tensor)
    if typing.get_origin(ret) is tuple:
        num_outputs = len(typing.get_args(ret))
    elif ret is torch.Tensor:
        num_outputs = None
    else:
        raise TypeError(f"{name}: annotate 'out' as torch.Tensor or tuple[torch.Tensor, ...], "
                        f"got {ret!r}")
    return inspect.Signature(params, return_annotation=ret), num_outputs


#: why float64 is refused, and how to check gradients instead (README "Torch bridge")
_FLOAT64_HINT = (" (the vector and cube units have no float64 arithmetic, and computing a float64"
                 " op in float32 would give gradcheck's float64 finite differences float32 "
                 "noise; to check gradients, run torch.autograd.gradcheck on float32 inputs with "
                 "eps=1e-3, atol=1e-2, rtol=1e-2, or compare the op's gradients with a float64 "
                 "torch reference)")


def custom_op(name: str, launcher: Optional[Callable] = None, *, shape_rule: Callable,
              kernel=None, dtypes: Sequence[torch.dtype] = FLOAT_DTYPES,
              host_casts: Optional[dict] = None, out_dtype: Optional[Callable] = None,
              backward: Optional[Callable] = None, setup_context: Optional[Callable] = None,
              doc: Optional[str] = None) -> Any:
    """Declare the torch op ``name`` ("namespace::name") backed by kernels; returns an
    ``AscendOp``. Usable as ``custom_op(name, launcher, ...)`` or as a decorator
    ``@custom_op(name, ...)`` on the launcher.

    - ``launcher(*args, out=outputs)``: the host side. Its annotated parameters (before the
      keyword-only ``out``) are the op's schema (``torch.Tensor``, ``float``, ``int``, ``bool``,
      with defaults); ``out``'s annotation (``torch.Tensor`` or ``tuple[torch.Tensor, ...]``) is
      the return type. It receives contiguous CPU tensors of one dtype (after host casts) and
      preallocated contiguous outputs, chooses ``block_dim`` and tiling, launches the kernel(s)
      and returns their Report(s) (or nothing).
    - ``shape_rule(*args)``: the output shape (or a tuple of shapes for several outputs) from
      the arguments, which are real or fake tensors; raise ``OpInputError`` for a shape the op
      does not accept. ``same_shape()`` covers element-wise ops. It is the fake implementation.
    - ``kernel``: the kernel (or kernels) the launcher starts; recorded in ``op.kernels``.
    - ``dtypes``: accepted dtypes (default float32, float16, bfloat16); ``host_casts`` (default
      bfloat16 → float32) and ``out_dtype(*args)`` as described in the module docstring.
    - ``backward(ctx, *grads)`` and ``setup_context(ctx, inputs, output)``: passed to
      ``register_autograd`` (PyTorch's conventions; return one gradient per argument, None for
      non-tensors). To stay traceable by ``torch.compile``, use torch ops (e.g. other ascendc
      ops) in it.
    """
    def make(fn):
        return AscendOp(name, fn, shape_rule=shape_rule, kernel=kernel, dtypes=dtypes,
                        host_casts=host_casts, out_dtype=out_dtype, backward=backward,
                        setup_context=setup_context, doc=doc)

    return make if launcher is None else make(launcher)


class _CallableModule(types.ModuleType):
    """This module shares its name with the function ``custom_op``; once the module is imported,
    Python makes ``ascendc_py.torch_bridge.custom_op`` the module itself. Calling the module
    calls the function, so ``torch_bridge.custom_op("ns::name", ...)`` always works."""

    def __call__(self, *args, **kwargs):
        return custom_op(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
