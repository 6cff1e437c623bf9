"""Vector add with static LocalTensors and manual set_flag/wait_flag (pyasc's first tutorial style).

Run: python samples/add_flags.py
"""
import numpy as np

import ascendc_py as asc

USE_CORE_NUM = 8
BUFFER_NUM = 2
TILE_NUM = 8


@asc.kernel
def add_flags_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress,
                     block_length: int):
    offset = asc.get_block_idx() * block_length
    x_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x + offset, block_length)
    y_gm.set_global_buffer(y + offset, block_length)
    z_gm.set_global_buffer(z + offset, block_length)
    tile_length = block_length // TILE_NUM // BUFFER_NUM
    dtype = x.dtype
    buffer_size = tile_length * BUFFER_NUM * dtype.sizeof()
    x_local = asc.LocalTensor(dtype, asc.TPosition.VECIN, 0, tile_length * BUFFER_NUM)
    y_local = asc.LocalTensor(dtype, asc.TPosition.VECIN, buffer_size, tile_length * BUFFER_NUM)
    z_local = asc.LocalTensor(dtype, asc.TPosition.VECOUT, 2 * buffer_size,
                              tile_length * BUFFER_NUM)
    for i in range(TILE_NUM * BUFFER_NUM):
        buf = i % BUFFER_NUM
        asc.data_copy(x_local[buf * tile_length:], x_gm[i * tile_length:], tile_length)
        asc.data_copy(y_local[buf * tile_length:], y_gm[i * tile_length:], tile_length)
        asc.set_flag(asc.HardEvent.MTE2_V, buf)
        asc.wait_flag(asc.HardEvent.MTE2_V, buf)
        asc.add(z_local[buf * tile_length:], x_local[buf * tile_length:],
                y_local[buf * tile_length:], tile_length)
        asc.set_flag(asc.HardEvent.V_MTE3, buf)
        asc.wait_flag(asc.HardEvent.V_MTE3, buf)
        asc.data_copy(z_gm[i * tile_length:], z_local[buf * tile_length:], tile_length)
        asc.set_flag(asc.HardEvent.MTE3_MTE2, buf)
        asc.wait_flag(asc.HardEvent.MTE3_MTE2, buf)


def main():
    rng = np.random.default_rng(1)
    for dtype in (np.float32, np.float16):
        x = rng.random(USE_CORE_NUM * 2048 * 2, dtype=np.float32).astype(dtype)
        y = rng.random(x.size, dtype=np.float32).astype(dtype)
        z = np.zeros_like(x)
        report = add_flags_kernel[USE_CORE_NUM](x, y, z, x.size // USE_CORE_NUM)
        asc.testing.assert_close(z, (x + y).astype(dtype))
        print(f"add_flags {np.dtype(dtype).name}: matches golden")
        print(report)
    return report


if __name__ == "__main__":
    main()
