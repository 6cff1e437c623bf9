"""Host-side tensor layouts of the cube's convolution (``asc.host``): NCHW/NHWC ↔ NC1HWC0 for
feature maps and FracZ for weights, as CANN stores them.

- **NC1HWC0** (``N, C1, H, W, C0``): the channels cut into ``C1 = ceil(C / C0)`` blocks of
  ``C0`` (32 bytes of elements: 16 for float16/bfloat16, 8 for float32, 32 for int8), the last
  block zero-padded; one image is what ``load_data`` with ``LoadData3DParamsV2`` reads from L1.
- **FracZ** (``C1·Kh·Kw, N1, 16, C0``) of an ``(Cout, Cin, Kh, Kw)`` weight: row
  ``(c1·Kh + kh)·Kw + kw``, column block ``n1`` of 16 output channels, element
  ``[n0, c0] = w[n1·16 + n0, c1·C0 + c0, kh, kw]`` (Cout padded to 16, Cin to C0 with zeros).
  Flattened it is exactly the L0B (ZN) layout of the K × Cout right matrix whose K order matches
  the img2col columns (c1, kh, kw, c0), so ``load_data`` (2D) moves it to L0B as it is.

Every function takes numpy arrays or torch tensors (any dtype, bfloat16 included) and returns
the same kind; ``c0`` defaults to 32 bytes / element size.
"""
from __future__ import annotations

__all__ = ["c0_for", "nchw_to_nc1hwc0", "nhwc_to_nc1hwc0", "nc1hwc0_to_nchw", "nc1hwc0_to_nhwc",
           "oihw_to_fracz", "fracz_to_oihw"]


def c0_for(x) -> int:
    """C0 for the element type of ``x``: 32 bytes / element size."""
    size = x.element_size() if hasattr(x, "element_size") else x.itemsize
    return 32 // size


def _zeros(x, shape):
    if hasattr(x, "new_zeros"):
        return x.new_zeros(shape)
    import numpy as np
    return np.zeros(shape, x.dtype)


def _perm(x, axes):
    return x.permute(*axes) if hasattr(x, "permute") else x.transpose(axes)


def _check(x, ndim: int, what: str):
    if len(x.shape) != ndim:
        raise ValueError(f"{what} expects a {ndim}-dimensional array, got shape "
                         f"{tuple(x.shape)}")


def nhwc_to_nc1hwc0(x, c0: int | None = None):
    """(N, H, W, C) → (N, C1, H, W, C0), channels zero-padded to a multiple of C0."""
    _check(x, 4, "nhwc_to_nc1hwc0")
    c0 = c0 or c0_for(x)
    n, h, w, c = x.shape
    c1 = -(-c // c0)
    out = _zeros(x, (n, h, w, c1 * c0))
    out[..., :c] = x
    out = _perm(out.reshape(n, h, w, c1, c0), (0, 3, 1, 2, 4))
    return out.contiguous() if hasattr(out, "contiguous") else out.copy()


def nchw_to_nc1hwc0(x, c0: int | None = None):
    """(N, C, H, W) → (N, C1, H, W, C0), channels zero-padded to a multiple of C0."""
    _check(x, 4, "nchw_to_nc1hwc0")
    return nhwc_to_nc1hwc0(_perm(x, (0, 2, 3, 1)), c0)


def nc1hwc0_to_nhwc(y, c: int):
    """(N, C1, H, W, C0) → (N, H, W, C): the first ``c`` channels."""
    _check(y, 5, "nc1hwc0_to_nhwc")
    n, c1, h, w, c0 = y.shape
    if not 0 <= c <= c1 * c0:
        raise ValueError(f"nc1hwc0_to_nhwc: c = {c} channels, but the array holds {c1 * c0}")
    return _perm(y, (0, 2, 3, 1, 4)).reshape(n, h, w, c1 * c0)[..., :c]


def nc1hwc0_to_nchw(y, c: int):
    """(N, C1, H, W, C0) → (N, C, H, W): the first ``c`` channels."""
    return _perm(nc1hwc0_to_nhwc(y, c), (0, 3, 1, 2))


def oihw_to_fracz(w, c0: int | None = None):
    """An (Cout, Cin, Kh, Kw) weight → FracZ (C1·Kh·Kw, N1, 16, C0), zero-padded."""
    _check(w, 4, "oihw_to_fracz")
    c0 = c0 or c0_for(w)
    cout, cin, kh, kw = w.shape
    c1, n1 = -(-cin // c0), -(-cout // 16)
    full = _zeros(w, (n1 * 16, c1 * c0, kh, kw))
    full[:cout, :cin] = w
    # (n1, n0, c1, c0, kh, kw) -> (c1, kh, kw, n1, n0, c0)
    out = _perm(full.reshape(n1, 16, c1, c0, kh, kw), (2, 4, 5, 0, 1, 3))
    out = out.contiguous() if hasattr(out, "contiguous") else out.copy()
    return out.reshape(c1 * kh * kw, n1, 16, c0)


def fracz_to_oihw(f, cout: int, cin: int, kh: int, kw: int):
    """FracZ (C1·Kh·Kw, N1, 16, C0) → the (Cout, Cin, Kh, Kw) weight."""
    _check(f, 4, "fracz_to_oihw")
    rows, n1, _, c0 = f.shape
    c1 = rows // (kh * kw)
    if c1 * kh * kw != rows or c1 * c0 < cin or n1 * 16 < cout:
        raise ValueError(f"fracz_to_oihw: shape {tuple(f.shape)} does not hold a "
                         f"({cout}, {cin}, {kh}, {kw}) weight")
    full = _perm(f.reshape(c1, kh, kw, n1, 16, c0), (3, 4, 0, 5, 1, 2))
    return full.reshape(n1 * 16, c1 * c0, kh, kw)[:cout, :cin]
