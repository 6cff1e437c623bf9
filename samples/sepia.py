"""Sepia filter over NCHW images (the seed article's coefficients), float32 and float16.

    R' = .393 R + .769 G + .189 B
    G' = .349 R + .686 G + .168 B
    B' = .272 R + .534 G + .131 B

Blocks split the pixels of every image; each tile loads the three colour planes, computes the
three outputs with muls/add on the vector unit and stores them. Run: python samples/sepia.py
"""
import numpy as np

import ascendc_py as asc

SEPIA = ((0.393, 0.769, 0.189),
         (0.349, 0.686, 0.168),
         (0.272, 0.534, 0.131))
TILE = 2048


@asc.kernel
def mix(dst: asc.LocalTensor, r: asc.LocalTensor, g: asc.LocalTensor, b: asc.LocalTensor,
        tmp: asc.LocalTensor, cr: float, cg: float, cb: float, n: int):
    asc.muls(dst, r, cr, n)
    asc.muls(tmp, g, cg, n)
    asc.add(dst, dst, tmp, n)
    asc.muls(tmp, b, cb, n)
    asc.add(dst, dst, tmp, n)


@asc.kernel
def sepia_kernel(img: asc.GlobalAddress, out: asc.GlobalAddress, images: int, hw: int):
    # the pixel range [start, end) of every image belongs to this block
    share = asc.ceildiv(asc.ceildiv(hw, asc.get_block_num()), 16) * 16
    start = min(asc.get_block_idx() * share, hw)
    end = min(start + share, hw)
    src = asc.GlobalTensor()
    dst = asc.GlobalTensor()
    src.set_global_buffer(img)
    dst.set_global_buffer(out)
    pipe = asc.TPipe()
    q_in = asc.TQue(asc.TPosition.VECIN, 2)
    q_out = asc.TQue(asc.TPosition.VECOUT, 2)
    calc = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(q_in, 2, 3 * TILE * img.dtype.sizeof())
    pipe.init_buffer(q_out, 2, 3 * TILE * img.dtype.sizeof())
    pipe.init_buffer(calc, TILE * img.dtype.sizeof())
    tmp = calc.get(img.dtype)
    for n in range(images):
        base = n * 3 * hw
        p = start
        while p < end:
            count = min(TILE, end - p)
            rgb = q_in.alloc_tensor(img.dtype)
            for c in asc.static_range(3):
                asc.data_copy(rgb[c * TILE:], src[base + c * hw + p:], count)
            q_in.enque(rgb)
            rgb = q_in.deque(img.dtype)
            res = q_out.alloc_tensor(img.dtype)
            for c in asc.static_range(3):
                mix(res[c * TILE:], rgb, rgb[TILE:], rgb[2 * TILE:], tmp,
                    SEPIA[c][0], SEPIA[c][1], SEPIA[c][2], count)
            q_out.enque(res)
            q_in.free_tensor(rgb)
            res = q_out.deque(img.dtype)
            for c in asc.static_range(3):
                asc.data_copy(dst[base + c * hw + p:], res[c * TILE:], count)
            q_out.free_tensor(res)
            p += count


def golden(img):
    """The same arithmetic as the kernel, rounding to the image dtype after every operation."""
    dt = img.dtype
    r, g, b = img[:, 0], img[:, 1], img[:, 2]
    outs = []
    for cr, cg, cb in SEPIA:
        acc = (r * dt.type(cr)).astype(dt)
        acc = (acc + (g * dt.type(cg)).astype(dt)).astype(dt)
        acc = (acc + (b * dt.type(cb)).astype(dt)).astype(dt)
        outs.append(acc)
    return np.stack(outs, axis=1)


def sepia(img, cores=8):
    out = np.empty_like(img) if isinstance(img, np.ndarray) else img.new_empty(img.shape)
    n, c, h, w = img.shape
    assert c == 3, "sepia needs 3 channels"
    report = sepia_kernel[cores](img, out, n, h * w)
    return out, report


def main():
    rng = np.random.default_rng(3)
    for dtype in (np.float32, np.float16):
        img = rng.random((4, 3, 224, 224), dtype=np.float32).astype(dtype)
        out, report = sepia(img)
        asc.testing.assert_close(out, golden(img))
        print(f"sepia {np.dtype(dtype).name} (4,3,224,224): matches golden")
        print(report)
    return report


if __name__ == "__main__":
    main()
