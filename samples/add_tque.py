"""Vector add with the TPipe/TQue framework: CopyIn / Compute / CopyOut, double buffering.

Run: python samples/add_tque.py
"""
import numpy as np

import ascendc_py as asc

BUFFER_NUM = 2      # double buffering: copy-in of tile i+1 overlaps compute of tile i
USE_CORE_NUM = 8
TILE_NUM = 8


@asc.kernel
def copy_in(i: int, x_gm: asc.GlobalTensor, y_gm: asc.GlobalTensor, in_x: asc.TQue,
            in_y: asc.TQue, tile_length: asc.ConstExpr[int]):
    x_local = in_x.alloc_tensor(x_gm.dtype)
    y_local = in_y.alloc_tensor(y_gm.dtype)
    asc.data_copy(x_local, x_gm[i * tile_length:], tile_length)
    asc.data_copy(y_local, y_gm[i * tile_length:], tile_length)
    in_x.enque(x_local)
    in_y.enque(y_local)


@asc.kernel
def compute(dtype, in_x: asc.TQue, in_y: asc.TQue, out_z: asc.TQue,
            tile_length: asc.ConstExpr[int]):
    x_local = in_x.deque(dtype)
    y_local = in_y.deque(dtype)
    z_local = out_z.alloc_tensor(dtype)
    asc.add(z_local, x_local, y_local, tile_length)
    out_z.enque(z_local)
    in_x.free_tensor(x_local)
    in_y.free_tensor(y_local)


@asc.kernel
def copy_out(i: int, z_gm: asc.GlobalTensor, out_z: asc.TQue, tile_length: asc.ConstExpr[int]):
    z_local = out_z.deque(z_gm.dtype)
    asc.data_copy(z_gm[i * tile_length:], z_local, tile_length)
    out_z.free_tensor(z_local)


@asc.kernel
def add_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress,
               block_length: int, tile_length: asc.ConstExpr[int]):
    offset = asc.get_block_idx() * block_length
    x_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x + offset, block_length)
    y_gm.set_global_buffer(y + offset, block_length)
    z_gm.set_global_buffer(z + offset, block_length)
    pipe = asc.TPipe()
    in_x = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    in_y = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    out_z = asc.TQue(asc.TPosition.VECOUT, BUFFER_NUM)
    pipe.init_buffer(que=in_x, num=BUFFER_NUM, len=tile_length * x.dtype.sizeof())
    pipe.init_buffer(que=in_y, num=BUFFER_NUM, len=tile_length * y.dtype.sizeof())
    pipe.init_buffer(que=out_z, num=BUFFER_NUM, len=tile_length * z.dtype.sizeof())
    for i in range(block_length // tile_length):
        copy_in(i, x_gm, y_gm, in_x, in_y, tile_length)
        compute(x.dtype, in_x, in_y, out_z, tile_length)
        copy_out(i, z_gm, out_z, tile_length)


def add(x, y, cores=USE_CORE_NUM, tile_length=None):
    """Launch add_kernel on numpy arrays or torch CPU tensors; returns (z, report)."""
    z = np.zeros_like(x) if isinstance(x, np.ndarray) else x.new_zeros(x.shape)
    n = x.size if isinstance(x, np.ndarray) else x.numel()
    block_length = n // cores
    if tile_length is None:
        tile_length = block_length // TILE_NUM // BUFFER_NUM
    report = add_kernel[cores](x, y, z, block_length, tile_length)
    return z, report


def main():
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float16):
        x = rng.random(8 * 2048 * 8, dtype=np.float32).astype(dtype)
        y = rng.random(x.size, dtype=np.float32).astype(dtype)
        z, report = add(x, y)
        asc.testing.assert_close(z, (x + y).astype(dtype))
        print(f"add_tque {np.dtype(dtype).name}: matches golden")
        print(report)
    return report


if __name__ == "__main__":
    main()
