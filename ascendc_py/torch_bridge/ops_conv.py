"""Convolution ops on the simulated cube (README "Convolution"); kernels: ``conv_kernels.py``.

==========================================================  ======================================
``torch.ops.ascendc.conv2d(input, weight, bias=None,        ``torch.nn.functional.conv2d``
stride=1, padding=0, dilation=1, groups=1)``                (aten::conv2d's schema)
``torch.ops.ascendc.conv_bn_relu(input, weight, bias,       ``relu(batch_norm(conv2d(...)))`` in
bn_weight, bn_bias, running_mean, running_var, eps,         inference, ONE launch (BN folded)
stride, padding, dilation)``
``FusedConvBNReLU.from_modules(conv, bn)``                  the nn.Module of the fused op
==========================================================  ======================================

``input`` (N, C, H, W), NCHW or channels_last, float16, bfloat16 or float32; ``weight`` (Cout,
C / groups, Kh, Kw) of the same dtype; ``bias`` any float dtype (added in float32). The input
is rearranged on the host to NC1HWC0 and the weight to FracZ (``asc.host``, what CANN's
TransData does), the kernel computes in the input dtype with float32 accumulation and rounds
once; it writes NHWC, so a channels_last input gets a channels_last result without a copy and
an NCHW input an NCHW one (a host transpose), as aten does. groups > 1 is one launch per group.

Backward of ``conv2d`` (all three products on the cube, through the same kernel): grad_input
is the convolution of the zero-stuffed, padded gradient with the flipped, transposed weight;
grad_weight is the convolution of the input (channels as batch) with the gradient as kernel
(stride and dilation swapped), over pieces of at most ``GRAD_TAPS`` gradient positions
written in float32 and summed in float32 when the gradient is larger; grad_bias a host sum. ``conv_bn_relu`` is inference-only (its
BN uses the running statistics, as ``model.eval()``): a backward through it raises.
"""
from __future__ import annotations

import math
from typing import Optional

import torch
from torch import Tensor

from .. import host_layout as HL
from . import conv_kernels as CK
from . import profile as _profile
from .custom_op import OpDeviceError, OpDtypeError, OpInputError

_DTYPES = (torch.float16, torch.bfloat16, torch.float32)
_LIB = torch.library.Library("ascendc", "FRAGMENT")
_LIB.define("conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, "
            "SymInt[2] padding=0, SymInt[2] dilation=1, SymInt groups=1) -> Tensor")
_LIB.define("conv_bn_relu(Tensor input, Tensor weight, Tensor? bias, Tensor bn_weight, "
            "Tensor bn_bias, Tensor running_mean, Tensor running_var, float eps=1e-05, "
            "SymInt[2] stride=1, SymInt[2] padding=0, SymInt[2] dilation=1) -> Tensor")
#: the reports of the last launches of each op (tests read them)
LAST_REPORTS: dict = {}


def _pair(v, what: str) -> tuple:
    v = tuple(v) if isinstance(v, (list, tuple)) else (v, v)
    if len(v) == 1:
        v = (v[0], v[0])
    if len(v) != 2:
        raise OpInputError(f"ascendc::conv2d: {what} must be an int or two ints, got {v}")
    return tuple(int(i) for i in v)


def _geometry(x, w, stride, padding, dilation, groups, op="ascendc::conv2d"):
    """(Ho, Wo) after checking devices, dtypes and shapes (real or fake tensors)."""
    for t, name in ((x, "input"), (w, "weight")):
        if t.device.type not in ("cpu", "meta"):
            raise OpDeviceError(f"{op}: {name} is on {t.device}; the simulated NPU reads CPU "
                                f"tensors")
    if x.dtype not in _DTYPES or w.dtype != x.dtype:
        raise OpDtypeError(f"{op}: input and weight must share one of float16, bfloat16, "
                           f"float32; got {x.dtype} and {w.dtype}")
    if x.dim() != 4 or w.dim() != 4:
        raise OpInputError(f"{op} expects input (N, C, H, W) and weight (Cout, C/groups, Kh, "
                           f"Kw); got {tuple(x.shape)} and {tuple(w.shape)}")
    sh, sw = stride
    ph, pw = padding
    dh, dw = dilation
    n, c, h, wd = x.shape
    cout, cg, kh, kw = w.shape
    if groups < 1 or c != cg * groups or cout % groups:
        raise OpInputError(f"{op}: input has {c} channels, weight {tuple(w.shape)} with "
                           f"groups={groups}: need C = weight.shape[1]·groups and Cout "
                           f"divisible by groups")
    if min(sh, sw, dh, dw) < 1 or min(ph, pw) < 0:
        raise OpInputError(f"{op}: stride and dilation must be >= 1 and padding >= 0; got "
                           f"stride {stride}, padding {padding}, dilation {dilation}")
    if sh > 63 or sw > 63 or max(ph, pw) > 255 or max(dh, dw, kh, kw) > 255:
        raise OpInputError(f"{op}: the cube's img2col takes stride <= 63, padding <= 255, "
                           f"dilation and kernel size <= 255; got stride {stride}, padding "
                           f"{padding}, dilation {dilation}, kernel {kh}x{kw}")
    ho = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    wo = (wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    if ho < 1 or wo < 1:
        raise OpInputError(f"{op}: the {kh}x{kw} kernel (dilation {dilation}) does not fit the "
                           f"padded {h}x{wd} input")
    return ho, wo


def _channels_last(x) -> bool:
    return x.dim() == 4 and not x.is_contiguous() and \
        x.is_contiguous(memory_format=torch.channels_last)


def _empty_out(x, shape):
    fmt = torch.channels_last if _channels_last(x) else torch.contiguous_format
    return torch.empty(shape, dtype=x.dtype, device=x.device, memory_format=fmt)


def _launch(x: Tensor, w: Tensor, bias: Tensor, geom, relu: bool, out_dtype=None) -> Tensor:
    """One conv2d_kernel launch (groups = 1): NHWC result (N, Ho, Wo, Cout) of x's dtype (or
    ``out_dtype`` float32: the L0C sums unrounded)."""
    stride, padding, dilation, (ho, wo) = geom
    n, c, h, wd = x.shape
    cout, _, kh, kw = w.shape
    y = torch.empty((n, ho, wo, cout), dtype=out_dtype or x.dtype)
    if y.numel() == 0:
        return y
    xs = HL.nchw_to_nc1hwc0(x)
    wf = HL.oihw_to_fracz(w)
    c1 = xs.shape[1]
    tm, tn, tk = CK.CONV_TILES[x.element_size()]
    from ..simulator.config import current_platform
    cores = current_platform().aic_cores
    if n * -(-ho * wo // tm) * -(-cout // tn) < cores:    # too few tiles: halve them
        tm = CK.CONV_TM_SMALL
    tm, tn, cb, slab, mode = _l1_plan(h, wd, c1, cout, kh, kw, stride[0], dilation[0], wo, tm,
                                      tn, stride[1], dilation[1])
    b = torch.zeros(-(-cout // tn) * tn, dtype=torch.float32)
    b[:cout] = bias
    from ..dsl.cube_api import QuantModes
    quant = {torch.float16: QuantModes.F322F16, torch.bfloat16: QuantModes.F322BF16,
             torch.float32: QuantModes.NoQuant}[y.dtype]
    m_tiles = ho * -(-wo // tm) if mode == 2 else -(-ho * wo // tm)
    tiles = n * m_tiles * -(-cout // tn)
    blocks = min(tiles, cores)
    report = CK.conv2d_kernel[blocks](
        xs, wf, b, y, n, c1, h, wd, cout, kh, kw, stride[0], stride[1], padding[0],
        padding[1], dilation[0], dilation[1], ho, wo, cb, slab, tm, tn, tk, int(quant), relu,
        mode)
    LAST_REPORTS.setdefault("_pending", []).append(report)
    return y


def _l1_plan(h, wd, c1, cout, kh, kw, sh, dh, wo, tm, tn, sw=1, dw=1):
    """(TM, TN, channel blocks per chunk, input pixels per channel block in L1, MODE) of a
    launch (MODE: ``conv_kernels.conv2d_kernel``'s 0 whole image, 1 rows, 2 columns).

    A chunk (its input and its weight rows, double-buffered) takes at most ``CONV_L1_BUFFER``
    bytes of L1. When one channel block of the whole image and its weights fit, a chunk holds
    whole images (MODE 0: the chunking, so the K order, of the kernel before row tiling);
    otherwise each tile loads only the rows its TM output pixels' windows touch (halo and
    stride included, MODE 1), and the larger of the two halves (TM or TN, down to 16) until
    one channel block does fit. When not even that fits (a wide image), a tile is up to TM
    columns of one output row and loads the rows × columns its windows touch (MODE 2), TM and
    TN halving again from the start; only a kernel window whose own rows × columns of one
    channel block (with 16 output channels of weights) exceed the chunk is an error."""
    if h * wd * 32 + kh * kw * 32 * tn <= CK.CONV_L1_BUFFER:
        cb = max(1, min(c1, CK.CONV_L1_BUFFER // (h * wd * 32 + kh * kw * 32 * tn)))
        return tm, tn, cb, h * wd, 0
    w_rows = -(-cout // 16) * 16
    t_m, t_n = tm, tn
    while True:
        span = -(-(t_m - 1) // wo) + 1                  # output rows TM pixels can touch
        rows = min(h, max((span - 1) * sh + dh * (kh - 1) + 1, sh))
        w_bytes = kh * kw * 32 * min(t_n, w_rows)
        block_bytes = rows * wd * 32 + w_bytes
        if block_bytes <= CK.CONV_L1_BUFFER:
            return (t_m, t_n, max(1, min(c1, CK.CONV_L1_BUFFER // block_bytes)), rows * wd,
                    int(rows < h))
        if t_m == 16 and t_n == 16:
            break
        if t_n > 16 and (t_m == 16 or w_bytes > rows * wd * 32):
            t_n //= 2
        else:
            t_m //= 2
    # one output row's windows (a window past the image's end: up to a stride of rows back)
    rows = min(h, max(dh * (kh - 1) + 1, sh))
    while True:
        cols = min(wd, max((tm - 1) * sw + dw * (kw - 1) + 1, sw))
        w_bytes = kh * kw * 32 * min(tn, w_rows)
        block_bytes = rows * cols * 32 + w_bytes
        if block_bytes <= CK.CONV_L1_BUFFER:
            return tm, tn, max(1, min(c1, CK.CONV_L1_BUFFER // block_bytes)), rows * cols, 2
        if tm == 16 and tn == 16:
            raise OpInputError(
                f"ascendc::conv2d: one channel block of the {rows}x{cols} input window of 16 "
                f"output pixels of a {kh}x{kw} kernel (dilation {dh}x{dw}) and its weights "
                f"({block_bytes} bytes) do not fit the kernel's L1 chunk "
                f"({CK.CONV_L1_BUFFER} bytes)")
        if tn > 16 and (tm == 16 or w_bytes > rows * cols * 32):
            tn //= 2
        else:
            tm //= 2


def _conv_nhwc(x, w, bias, stride, padding, dilation, groups, relu=False,
               out_dtype=None) -> Tensor:
    geom = (stride, padding, dilation, _geometry(x, w, stride, padding, dilation, groups))
    cout = w.shape[0]
    bias = torch.zeros(cout) if bias is None else bias.detach().float()
    x, w = x.detach(), w.detach()
    if groups == 1:
        return _launch(x, w, bias, geom, relu, out_dtype)
    cg, og = x.shape[1] // groups, cout // groups
    parts = [_launch(x[:, g * cg:(g + 1) * cg], w[g * og:(g + 1) * og],
                     bias[g * og:(g + 1) * og], geom, relu, out_dtype) for g in range(groups)]
    return torch.cat(parts, dim=3)


def _finish(x, y_nhwc) -> Tensor:
    y = y_nhwc.permute(0, 3, 1, 2)
    return y if _channels_last(x) else y.contiguous()


def _run(name: str, fn):
    token = _profile.enter_op(name)
    LAST_REPORTS["_pending"] = []
    try:
        out = fn()
    finally:
        _profile.exit_op(token)
    LAST_REPORTS[name] = tuple(LAST_REPORTS.pop("_pending", []))
    return out


# ----------------------------------------------------------------------------- conv2d
@torch.library.impl(_LIB, "conv2d", "CPU")
def _conv2d_cpu(input, weight, bias=None, stride=(1, 1), padding=(0, 0), dilation=(1, 1),
                groups=1):
    stride, padding, dilation = (_pair(v, n) for v, n in ((stride, "stride"),
                                                          (padding, "padding"),
                                                          (dilation, "dilation")))
    return _run("ascendc::conv2d", lambda: _finish(input, _conv_nhwc(
        input, weight, bias, stride, padding, dilation, int(groups))))


@torch.library.register_fake("ascendc::conv2d", lib=_LIB)
def _conv2d_fake(input, weight, bias=None, stride=(1, 1), padding=(0, 0), dilation=(1, 1),
                 groups=1):
    stride, padding, dilation = _pair(stride, "stride"), _pair(padding, "padding"), \
        _pair(dilation, "dilation")
    ho, wo = _geometry(input, weight, stride, padding, dilation, int(groups))
    return _empty_out(input, (input.shape[0], weight.shape[0], ho, wo))


def _conv2d_setup(ctx, inputs, output):
    x, w, b, stride, padding, dilation, groups = inputs
    ctx.save_for_backward(x, w)
    ctx.has_bias = b is not None
    ctx.conf = (_pair(stride, "stride"), _pair(padding, "padding"),
                _pair(dilation, "dilation"), int(groups))


def conv2d_input_grad(g, x_shape, w, stride, padding, dilation, groups):
    """dL/dinput of conv2d: the zero-stuffed, padded gradient convolved (stride 1) with the
    flipped weight whose in/out channels are swapped (per group)."""
    n, c, h, wd = x_shape
    cout, cg, kh, kw = w.shape
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    ho, wo = g.shape[2:]
    z = g.new_zeros((n, cout, (ho - 1) * sh + 1, (wo - 1) * sw + 1))
    z[:, :, ::sh, ::sw] = g
    eh, ew = dh * (kh - 1) - ph, dw * (kw - 1) - pw
    rh = h - ((ho - 1) * sh + dh * (kh - 1) + 1 - 2 * ph)
    rw = wd - ((wo - 1) * sw + dw * (kw - 1) + 1 - 2 * pw)
    z = torch.nn.functional.pad(z, [ew, ew + rw, eh, eh + rh])
    og = cout // groups
    wt = torch.cat([w[i * og:(i + 1) * og].flip(2, 3).transpose(0, 1) for i in range(groups)])
    return conv2d(z.contiguous(), wt.contiguous(), None, 1, 0, list(dilation), groups)


#: gradient positions (taps of the gradient-as-kernel) of one grad_weight launch: their FracZ
#: rows (32 bytes · 16 channels each) must leave L1 room for the input window
GRAD_TAPS = 256


def conv2d_weight_grad(g, x, w_shape, stride, padding, dilation, groups):
    """dL/dweight of conv2d: the input (batch as channels) convolved with the gradient as the
    kernel, stride and dilation swapped, cropped to (Kh, Kw) (per group). A gradient of more
    than ``GRAD_TAPS`` positions is tiled (``_weight_grad_tiled``)."""
    cout, cg, kh, kw = w_shape
    if g.shape[2] * g.shape[3] > GRAD_TAPS:
        return _weight_grad_tiled(g, x, w_shape, stride, padding, dilation, groups)
    og = cout // groups
    parts = []
    for i in range(groups):
        xi = x[:, i * cg:(i + 1) * cg].transpose(0, 1).contiguous()     # (cg, N, H, W)
        gi = g[:, i * og:(i + 1) * og].transpose(0, 1).contiguous()     # (og, N, Ho, Wo)
        r = conv2d(xi, gi, None, list(dilation), list(padding), list(stride), 1)
        parts.append(r[:, :, :kh, :kw].transpose(0, 1))
    return torch.cat(parts).contiguous()


def _weight_grad_tiled(g, x, w_shape, stride, padding, dilation, groups):
    """grad_weight over pieces of at most ``GRAD_TAPS`` gradient positions (rows a .. a + A,
    columns b .. b + B): piece (a, b) is the same convolution of the input window its
    positions read (the input zero-padded on the host, from row a·stride_h, column
    b·stride_w) with that part of the gradient, exactly Kh × Kw outputs; each launch writes
    float32 (the L0C sums, no rounding), the pieces are summed in float32 on the host and
    rounded to the input dtype once."""
    cout, cg, kh, kw = w_shape
    og = cout // groups
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    ho, wo = g.shape[2:]
    bw = min(wo, GRAD_TAPS, 255)                    # load3d's largest kernel side: 255
    bh = min(max(1, GRAD_TAPS // bw), 255)
    xp = torch.nn.functional.pad(x.detach(), [pw, pw, ph, ph])
    acc = torch.zeros((cout, cg, kh, kw), dtype=torch.float32)

    def pieces():
        for a in range(0, ho, bh):
            for b in range(0, wo, bw):
                ah, bb = min(bh, ho - a), min(bw, wo - b)
                xs = xp[:, :, a * sh:a * sh + (ah - 1) * sh + (kh - 1) * dh + 1,
                        b * sw:b * sw + (bb - 1) * sw + (kw - 1) * dw + 1]
                for i in range(groups):
                    xi = xs[:, i * cg:(i + 1) * cg].transpose(0, 1).contiguous()
                    gi = g[:, i * og:(i + 1) * og, a:a + ah, b:b + bb].transpose(0, 1)
                    r = _conv_nhwc(xi, gi.contiguous(), None, (dh, dw), (0, 0), (sh, sw), 1,
                                   out_dtype=torch.float32)        # (cg, Kh, Kw, og)
                    acc[i * og:(i + 1) * og] += r.permute(3, 0, 1, 2)

    _run("ascendc::conv2d", pieces)
    return acc.to(x.dtype)


def _conv2d_backward(ctx, grad):
    x, w = ctx.saved_tensors
    stride, padding, dilation, groups = ctx.conf
    g = grad.contiguous().to(x.dtype)
    gx = conv2d_input_grad(g, x.shape, w, stride, padding, dilation, groups) \
        if ctx.needs_input_grad[0] else None
    gw = conv2d_weight_grad(g, x, w.shape, stride, padding, dilation, groups) \
        if ctx.needs_input_grad[1] else None
    gb = grad.sum((0, 2, 3)) if ctx.has_bias and ctx.needs_input_grad[2] else None
    return gx, gw, gb, None, None, None, None


torch.library.register_autograd("ascendc::conv2d", _conv2d_backward,
                                setup_context=_conv2d_setup, lib=_LIB)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """``torch.ops.ascendc.conv2d`` with ``torch.nn.functional.conv2d``'s signature."""
    return torch.ops.ascendc.conv2d(input, weight, bias, _as_list(stride), _as_list(padding),
                                    _as_list(dilation), groups)


def _as_list(v):
    return list(v) if isinstance(v, (list, tuple)) else [v, v]


# ----------------------------------------------------------------------------- conv_bn_relu
def fold_bn(weight, bias, bn_weight, bn_bias, mean, var, eps):
    """(weight', bias') with conv(x, weight') + bias' = batch_norm(conv(x, weight) + bias) in
    inference: scale = γ / sqrt(var + eps) per output channel (folded in float32; weight' in
    the weight's dtype, bias' float32)."""
    scale = bn_weight.float() / torch.sqrt(var.float() + eps)
    b = torch.zeros_like(scale) if bias is None else bias.float()
    w = (weight.float() * scale[:, None, None, None]).to(weight.dtype)
    return w, (b - mean.float()) * scale + bn_bias.float()


@torch.library.impl(_LIB, "conv_bn_relu", "CPU")
def _conv_bn_relu_cpu(input, weight, bias, bn_weight, bn_bias, running_mean, running_var,
                      eps=1e-5, stride=(1, 1), padding=(0, 0), dilation=(1, 1)):
    stride, padding, dilation = _pair(stride, "stride"), _pair(padding, "padding"), \
        _pair(dilation, "dilation")
    w, b = fold_bn(weight, bias, bn_weight, bn_bias, running_mean, running_var, eps)
    return _run("ascendc::conv_bn_relu", lambda: _finish(input, _conv_nhwc(
        input, w, b, stride, padding, dilation, 1, relu=True)))


@torch.library.register_fake("ascendc::conv_bn_relu", lib=_LIB)
def _conv_bn_relu_fake(input, weight, bias, bn_weight, bn_bias, running_mean, running_var,
                       eps=1e-5, stride=(1, 1), padding=(0, 0), dilation=(1, 1)):
    ho, wo = _geometry(input, weight, _pair(stride, "stride"), _pair(padding, "padding"),
                       _pair(dilation, "dilation"), 1, "ascendc::conv_bn_relu")
    for t, name in ((bn_weight, "bn_weight"), (bn_bias, "bn_bias"),
                    (running_mean, "running_mean"), (running_var, "running_var")):
        if t.shape != (weight.shape[0],):
            raise OpInputError(f"ascendc::conv_bn_relu: {name} must have shape "
                               f"({weight.shape[0]},), got {tuple(t.shape)}")
    return _empty_out(input, (input.shape[0], weight.shape[0], ho, wo))


def _no_backward(ctx, grad):
    raise RuntimeError("ascendc::conv_bn_relu is inference-only (batch norm with running "
                       "statistics folded into the weights); train with conv2d + "
                       "torch.nn.BatchNorm2d + relu")


torch.library.register_autograd("ascendc::conv_bn_relu", _no_backward, lib=_LIB)


def conv_bn_relu(input, weight, bias, bn_weight, bn_bias, running_mean, running_var, eps=1e-5,
                 stride=1, padding=0, dilation=1) -> Tensor:
    """``relu(batch_norm(conv2d(input, weight, bias), running stats))`` in one launch."""
    return torch.ops.ascendc.conv_bn_relu(input, weight, bias, bn_weight, bn_bias,
                                          running_mean, running_var, float(eps),
                                          _as_list(stride), _as_list(padding),
                                          _as_list(dilation))


# ----------------------------------------------------------------------------- the chain
def _vector_blocks(total: int, tile: int) -> int:
    from ..simulator.config import current_platform
    return max(1, min(current_platform().aiv_cores, -(-total // tile)))


def batch_norm_nhwc(y: Tensor, scale: Tensor, shift: Tensor):
    """``y·scale + shift`` per channel of an NHWC tensor (one vector launch, float32 math):
    batch norm in inference as its own launch (the unfused chain). Returns (result, report)."""
    c = y.shape[-1]
    align = 32 // y.element_size()
    unit = c * align // math.gcd(c, align)             # whole pixels, whole 32-byte blocks
    if unit > CK.AFFINE_TILE:
        raise OpInputError(f"batch_norm_nhwc: {c} channels need tiles of {unit} elements, more "
                           f"than the kernel's {CK.AFFINE_TILE}")
    tile = (CK.AFFINE_TILE // unit) * unit
    flat = y.reshape(-1)
    total = -(-flat.numel() // align) * align
    src = torch.zeros(total, dtype=y.dtype)
    src[:flat.numel()] = flat
    out = torch.empty_like(src)
    reps = tile // c
    s, b = scale.float().repeat(reps), shift.float().repeat(reps)
    token = _profile.enter_op("ascendc::batch_norm")
    try:
        report = CK.affine_kernel[_vector_blocks(total, tile)](src, s, b, out, total, tile)
    finally:
        _profile.exit_op(token)
    return out[:flat.numel()].view(y.shape), report


def relu_nhwc(y: Tensor):
    """``max(y, 0)`` (one vector launch). Returns (result, report)."""
    align = 32 // y.element_size()
    flat = y.reshape(-1)
    total = -(-flat.numel() // align) * align
    src = torch.zeros(total, dtype=y.dtype)
    src[:flat.numel()] = flat
    out = torch.empty_like(src)
    tile = 8192
    token = _profile.enter_op("ascendc::relu")
    try:
        report = CK.relu_kernel[_vector_blocks(total, tile)](src, out, total, tile)
    finally:
        _profile.exit_op(token)
    return out[:flat.numel()].view(y.shape), report


def conv_bn_relu_unfused(x, weight, bias, bn_weight, bn_bias, mean, var, eps=1e-5, stride=1,
                         padding=0, dilation=1):
    """The same result as ``conv_bn_relu`` in three launches (conv2d, batch norm, relu), each
    through GM: the chain the fused op replaces. Returns (NCHW-shaped result, [3 reports])."""
    pair = _pair
    stride, padding, dilation = pair(stride, "stride"), pair(padding, "padding"), \
        pair(dilation, "dilation")
    y = _run("ascendc::conv2d", lambda: _conv_nhwc(x, weight, bias, stride, padding, dilation,
                                                   1))
    conv_report = LAST_REPORTS["ascendc::conv2d"][0]
    scale = bn_weight.float() / torch.sqrt(var.float() + eps)
    y, bn_report = batch_norm_nhwc(y, scale, bn_bias.float() - mean.float() * scale)
    y, relu_report = relu_nhwc(y)
    return _finish(x, y), [conv_report, bn_report, relu_report]


# ----------------------------------------------------------------------------- module
class FusedConvBNReLU(torch.nn.Module):
    """``relu(bn(conv(x)))`` of a trained ``Conv2d`` + ``BatchNorm2d`` pair in inference, one
    launch of ``ascendc::conv_bn_relu``: the BN statistics are folded into the weights. The
    parameters are kept in float32; ``compute_dtype`` (float16 by default) is what the cube
    multiplies in (float32 accumulation); input and output are float32 (or the input's dtype)."""

    def __init__(self, weight: Tensor, bias: Optional[Tensor], stride, padding, dilation,
                 compute_dtype=torch.float16):
        super().__init__()
        self.register_buffer("weight", weight.detach().float().clone())
        self.register_buffer("bias", bias.detach().float().clone())
        self.stride, self.padding, self.dilation = stride, padding, dilation
        self.compute_dtype = compute_dtype

    @classmethod
    def from_modules(cls, conv: torch.nn.Conv2d, bn: torch.nn.BatchNorm2d,
                     compute_dtype=torch.float16) -> "FusedConvBNReLU":
        """Fold ``bn``'s running statistics and affine parameters into ``conv``."""
        if conv.groups != 1 or conv.padding_mode != "zeros" or isinstance(conv.padding, str):
            raise ValueError("FusedConvBNReLU needs groups=1, zero padding given as numbers")
        if not bn.track_running_stats or bn.running_mean is None:
            raise ValueError("FusedConvBNReLU needs a BatchNorm2d with running statistics")
        gamma = bn.weight if bn.affine else torch.ones_like(bn.running_mean)
        beta = bn.bias if bn.affine else torch.zeros_like(bn.running_mean)
        scale = gamma.detach().float() / torch.sqrt(bn.running_var.float() + bn.eps)
        w = conv.weight.detach().float() * scale[:, None, None, None]
        b = torch.zeros_like(scale) if conv.bias is None else conv.bias.detach().float()
        b = (b - bn.running_mean.float()) * scale + beta.detach().float()
        return cls(w, b, list(conv.stride), list(conv.padding), list(conv.dilation),
                   compute_dtype)

    def forward(self, x: Tensor) -> Tensor:
        dt = self.compute_dtype
        c = self.weight.shape[0]
        ones, zeros = self.bias.new_ones(c), self.bias.new_zeros(c)
        y = torch.ops.ascendc.conv_bn_relu(x.to(dt), self.weight.to(dt), self.bias, ones, zeros,
                                           zeros, ones, 0.0, self.stride, self.padding,
                                           self.dilation)
        return y.to(x.dtype)


__all__ = ["conv2d", "conv_bn_relu", "conv_bn_relu_unfused", "batch_norm_nhwc", "relu_nhwc",
           "fold_bn", "FusedConvBNReLU", "LAST_REPORTS"]
