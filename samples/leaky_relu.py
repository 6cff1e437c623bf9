"""LeakyReLU, y = x if x >= 0 else slope * x, with a TQue pipeline and a tail tile.

Run: python samples/leaky_relu.py
"""
import numpy as np

import ascendc_py as asc

BUFFER_NUM = 2


@asc.kernel
def leaky_relu_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, total: int, slope: float,
                      TILE: asc.ConstExpr[int]):
    # each block takes an equal share; the last block also takes the remainder
    blocks = asc.get_block_num()
    share = total // blocks
    start = asc.get_block_idx() * share
    length = share
    if asc.get_block_idx() == blocks - 1:
        length = total - start
    x_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x + start, length)
    y_gm.set_global_buffer(y + start, length)
    pipe = asc.TPipe()
    q_in = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    q_out = asc.TQue(asc.TPosition.VECOUT, BUFFER_NUM)
    pipe.init_buffer(q_in, BUFFER_NUM, TILE * x.dtype.sizeof())
    pipe.init_buffer(q_out, BUFFER_NUM, TILE * x.dtype.sizeof())
    done = 0
    while done < length:
        n = min(TILE, length - done)
        src = q_in.alloc_tensor(x.dtype)
        asc.data_copy(src, x_gm[done:], n)
        q_in.enque(src)
        src = q_in.deque(x.dtype)
        dst = q_out.alloc_tensor(x.dtype)
        asc.leaky_relu(dst, src, slope, n)
        q_out.enque(dst)
        q_in.free_tensor(src)
        dst = q_out.deque(x.dtype)
        asc.data_copy(y_gm[done:], dst, n)
        q_out.free_tensor(dst)
        done += n


def golden(x, slope):
    xf = x.astype(np.float32)
    return np.where(xf >= 0, xf, xf * np.float32(slope).astype(x.dtype)).astype(x.dtype)


def main():
    rng = np.random.default_rng(2)
    slope = 0.01
    for dtype in (np.float32, np.float16):
        # 8 blocks; sizes keep every block's share a multiple of 32 bytes
        x = rng.standard_normal(8 * 10_016).astype(dtype)
        y = np.zeros_like(x)
        report = leaky_relu_kernel[8](x, y, x.size, slope, 4096)
        asc.testing.assert_close(y, golden(x, slope))
        print(f"leaky_relu {np.dtype(dtype).name}: matches golden")
        print(report)
    return report


if __name__ == "__main__":
    main()
